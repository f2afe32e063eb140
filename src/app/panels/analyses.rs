//! The full argument beside the live run (issue 5): the memory's activations over training, the
//! ε sweep, matched budget against matched loss, and the d_k sweep. The sweeps run in the
//! background through the same library calls as `basis-lab eps-sweep`, `matched` and `dk-sweep`,
//! so the GUI and the command line print the same numbers.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{FilledArea, HLine, Line, LineStyle, Plot, PlotPoints};
use serde::{Deserialize, Serialize};

use crate::app::history::{BandSeries, LOG_FLOOR};
use crate::app::job::Job;
use crate::app::panels::controlled_test::{arm_legend, band_area, band_arm_picker};
use crate::app::state::{AppState, Notice};
use crate::app::widgets::colors::{faded, optimizer_color};
use crate::app::widgets::plots::{Swatch, legend_row, linear_plot, log_grid, log_tick};
use crate::experiment::matched::{MatchedReport, matched_report};
use crate::experiment::{
    ArmAggregate, DkPoint, EpsPoint, SweepError, SweepResult, dk_sweep, eps_sweep, scaled_to_dk,
    with_adam_eps,
};
use crate::preset::Preset;
use crate::shard::Job as SweepJob;

/// Settings and last results of the analyses, persisted with the app.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AnalysisSettings {
    /// Seeds per point of the ε and d_k sweeps.
    pub seeds: usize,
    /// Adam's ε values, comma-separated.
    pub eps_text: String,
    /// Key dimensions, comma-separated.
    pub dk_text: String,
    /// Loss levels of the matched comparison.
    pub levels: usize,
    /// The last finished ε sweep.
    pub eps: Option<Vec<EpsPoint>>,
    /// The last matched comparison and the preset it ran.
    pub matched: Option<(Preset, MatchedReport)>,
    /// The last finished d_k sweep.
    pub dk: Option<Vec<DkPoint>>,
}

impl Default for AnalysisSettings {
    fn default() -> Self {
        Self {
            seeds: 4,
            eps_text: "1e-12, 1e-8, 1e-6, 1e-4, 1e-2, 1".into(),
            dk_text: "4, 8, 16, 32".into(),
            levels: 6,
            eps: None,
            matched: None,
            dk: None,
        }
    }
}

/// The analyses' background jobs (not persisted).
#[derive(Default)]
pub struct AnalysisRuntime {
    eps: Option<Job<Result<Vec<EpsPoint>, SweepError>>>,
    matched: Option<(Preset, Job<Result<MatchedReport, String>>)>,
    dk: Option<Job<Result<Vec<DkPoint>, SweepError>>>,
}

impl AnalysisRuntime {
    /// Whether any analysis is still running.
    pub fn busy(&self) -> bool {
        self.eps.is_some() || self.matched.is_some() || self.dk.is_some()
    }
}

/// Parses a comma-separated list; errors name the offending entry.
fn parse_list<T: std::str::FromStr>(text: &str) -> Result<Vec<T>, String> {
    let out: Vec<T> = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("“{s}” is not a number")))
        .collect::<Result<_, _>>()?;
    if out.is_empty() {
        return Err("the list is empty".into());
    }
    Ok(out)
}

/// Starts the ε sweep of the current preset; a list that does not parse or a sweep the
/// command line would refuse ([`SweepJob::validate`]) becomes an error notice instead.
pub fn start_eps(state: &mut AppState) {
    let a = &state.settings.analyses;
    let eps = match parse_list(&a.eps_text) {
        Ok(e) => e,
        Err(e) => return bad_input(state, "Adam's ε", e),
    };
    let (preset, seeds) = (state.settings.preset.clone(), a.seeds.max(2));
    let job = SweepJob::EpsSweep {
        preset: preset.clone(),
        eps: eps.clone(),
        seeds,
    };
    if let Err((field, msg)) = job.validate() {
        return bad_input(state, "ε sweep", format!("field `{field}`: {msg}"));
    }
    state.analyses.eps = Some(Job::spawn(
        "basis-lab eps sweep",
        eps.len() * seeds,
        state.repaint_handle(),
        move |progress, cancel| eps_sweep(&preset, &eps, seeds, progress, cancel),
    ));
}

/// Starts the d_k sweep of the current preset; a list that does not parse or a sweep the
/// command line would refuse (every scaled preset is checked first) becomes an error notice.
pub fn start_dk(state: &mut AppState) {
    let a = &state.settings.analyses;
    let dks = match parse_list(&a.dk_text) {
        Ok(d) => d,
        Err(e) => return bad_input(state, "d_k", e),
    };
    let (preset, seeds) = (state.settings.preset.clone(), a.seeds.max(2));
    let job = SweepJob::DkSweep {
        preset: preset.clone(),
        dks: dks.clone(),
        seeds,
    };
    if let Err((field, msg)) = job.validate() {
        return bad_input(state, "d_k sweep", format!("field `{field}`: {msg}"));
    }
    state.analyses.dk = Some(Job::spawn(
        "basis-lab dk sweep",
        dks.len() * seeds,
        state.repaint_handle(),
        move |progress, cancel| dk_sweep(&preset, &dks, seeds, progress, cancel),
    ));
}

/// Starts the matched-budget / matched-loss comparison of the current preset.
pub fn start_matched(state: &mut AppState) {
    let (preset, levels) = (
        state.settings.preset.clone(),
        state.settings.analyses.levels,
    );
    let p = preset.clone();
    let job = Job::spawn(
        "basis-lab matched",
        1,
        state.repaint_handle(),
        move |progress, _cancel| {
            let r = matched_report(&p, levels);
            progress();
            r
        },
    );
    state.analyses.matched = Some((preset, job));
}

fn bad_input(state: &mut AppState, what: &str, msg: String) {
    state.notice = Some(Notice {
        text: format!("{what}: {msg}"),
        error: true,
    });
}

/// Collects finished jobs into the settings (or a notice).
pub fn poll(state: &mut AppState) {
    let sweep_error = |e: SweepError| Notice {
        error: !matches!(e, SweepError::Cancelled),
        text: format!("Sweep stopped: {e}; the previous results stay."),
    };
    let panicked = |p: String| Notice {
        text: format!("The analysis stopped: {p}"),
        error: true,
    };
    if let Some(job) = &mut state.analyses.eps
        && let Some(r) = job.take_result()
    {
        match r {
            Ok(Ok(points)) => state.settings.analyses.eps = Some(points),
            Ok(Err(e)) => state.notice = Some(sweep_error(e)),
            Err(p) => state.notice = Some(panicked(p)),
        }
        state.analyses.eps = None;
    }
    if let Some(job) = &mut state.analyses.dk
        && let Some(r) = job.take_result()
    {
        match r {
            Ok(Ok(points)) => state.settings.analyses.dk = Some(points),
            Ok(Err(e)) => state.notice = Some(sweep_error(e)),
            Err(p) => state.notice = Some(panicked(p)),
        }
        state.analyses.dk = None;
    }
    if let Some((preset, job)) = &mut state.analyses.matched
        && let Some(r) = job.take_result()
    {
        match r {
            Ok(Ok(report)) => state.settings.analyses.matched = Some((preset.clone(), report)),
            Ok(Err(e)) => {
                state.notice = Some(Notice {
                    text: format!("Matched comparison: {e}"),
                    error: true,
                })
            }
            Err(p) => state.notice = Some(panicked(p)),
        }
        state.analyses.matched = None;
    }
}

/// A progress bar with a cancel button for `job`, or a start button.
fn job_row<T: Send + 'static>(
    ui: &mut egui::Ui,
    job: &Option<Job<T>>,
    unit: &str,
    start_label: &str,
    cancellable: bool,
) -> bool {
    match job {
        None => ui.button(RichText::new(start_label).strong()).clicked(),
        Some(job) => {
            let frac = job.done() as f32 / job.total.max(1) as f32;
            ui.add(
                egui::ProgressBar::new(frac)
                    .desired_width(260.0)
                    .animate(true)
                    .text(format!("{} / {} {unit}", job.done(), job.total)),
            );
            if job.is_cancelling() {
                ui.label("cancelling…");
            } else if cancellable && ui.button("Cancel").clicked() {
                job.cancel();
            }
            false
        }
    }
}

fn stale_note(ui: &mut egui::Ui, state: &AppState, ran: &Preset) {
    if !ran.same_experiment(&state.settings.preset) {
        ui.label(
            RichText::new(format!(
                "These results are from other settings (preset “{}”, seed {}) than the current \
                 ones; run again to update them.",
                ran.name, ran.seed
            ))
            .color(state.notice_color(true)),
        );
    }
}

/// The memory `S` and its reads over training, each against its random-rotation baseline.
pub fn activations(state: &mut AppState, ui: &mut egui::Ui) {
    ui.label(
        "In this model the analogue of a hidden activation is the memory S after an episode and \
         the read S·k (measured on 64 held-out episodes with each snapshot of the keys). The rows of S live in key space, which the loss cannot see: any axis \
         structure there comes from the optimizer. The reads live in value space, whose axes the \
         one-hot targets single out, so every arm's reads are heavy-tailed: that panel is the \
         task's own privileged basis, a reference for the other two.",
    );
    let Some(preset) = state.history.preset.clone() else {
        ui.label("Starting…");
        return;
    };
    let arms = &state.history.arms;
    let band_arm = state.settings.band_arm.min(arms.len().saturating_sub(1));
    let mut items = arm_legend(arms, " (run from W0)");
    if let Some(a) = arms.get(band_arm) {
        items.push((
            Color32::GRAY,
            format!(
                "rotation baseline of {}: mean (dashed), 5–95% (shaded)",
                a.label.name
            ),
            Swatch::Dashed,
        ));
    }
    ui.horizontal(|ui| {
        legend_row(ui, &items);
        band_arm_picker(
            ui,
            "activation band arm",
            "baseline shown for",
            arms,
            &mut state.settings.band_arm,
        );
    });
    let titles = [
        (
            "Excess kurtosis of the rows of S (key space)",
            "mean excess kurtosis",
        ),
        (
            "Axis concentration A of the rows of S (key space)",
            "A(S rows)",
        ),
        (
            "Excess kurtosis of the reads S·k (value space)",
            "mean excess kurtosis",
        ),
    ];
    let avail = ui.available_size();
    let w = (avail.x - 24.0) / 3.0;
    let h = (avail.y - 120.0).clamp(240.0, 640.0);
    let hover = state.hover;
    ui.horizontal_top(|ui| {
        for (k, (title, y_label)) in titles.iter().enumerate() {
            ui.vertical(|ui| {
                ui.set_width(w);
                ui.label(RichText::new(*title).strong());
                linear_plot(title, y_label)
                    .width(w)
                    .height(h)
                    .show_x(hover)
                    .show_y(hover)
                    .show(ui, |plot| {
                        let arms = &state.history.arms;
                        if let Some(a) = arms.get(band_arm) {
                            band(plot, &a.activations[k], &a.label.name);
                        }
                        if k == 1 {
                            plot.hline(
                                HLine::new(
                                    "3/(d_k+2), random directions",
                                    crate::metrics::isotropic_axis_concentration(preset.d_k),
                                )
                                .color(Color32::GRAY)
                                .style(LineStyle::dotted_loose()),
                            );
                        }
                        for (i, a) in arms.iter().enumerate() {
                            let c = optimizer_color(&a.label.optimizer, i);
                            let pts: Vec<[f64; 2]> = a.activations[k]
                                .finite_points()
                                .map(|p| [p[0], p[1]])
                                .collect();
                            plot.line(
                                Line::new(a.label.name.clone(), PlotPoints::from(pts))
                                    .color(c)
                                    .width(2.5),
                            );
                        }
                    });
            });
        }
    });
    latest_table(state, ui);
}

fn band(plot: &mut egui_plot::PlotUi, s: &BandSeries, name: &str) {
    let area = band_area(
        s,
        format!("{name} rotation baseline 5–95%"),
        faded(Color32::GRAY, 50),
    );
    let Some(area) = area else { return };
    plot.add(area);
    let mean: Vec<[f64; 2]> = s.finite_points().map(|p| [p[0], p[3]]).collect();
    plot.line(
        Line::new(
            format!("{name} rotation baseline mean"),
            PlotPoints::from(mean),
        )
        .color(Color32::GRAY)
        .style(LineStyle::dashed_loose())
        .width(1.5),
    );
}

fn latest_table(state: &AppState, ui: &mut egui::Ui) {
    let Some(snap) = &state.history.snapshot else {
        return;
    };
    ui.add_space(4.0);
    ui.label(
        RichText::new(format!(
            "At step {} (value, baseline mean ± sd, z):",
            snap.step
        ))
        .strong(),
    );
    egui::Grid::new("activation table")
        .striped(true)
        .num_columns(4)
        .spacing([24.0, 4.0])
        .show(ui, |ui| {
            for h in [
                "arm",
                "kurtosis of S rows",
                "A(S rows)",
                "kurtosis of reads",
            ] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for (i, (a, act)) in state.history.arms.iter().zip(&snap.activations).enumerate() {
                ui.label(
                    RichText::new(&a.label.name).color(optimizer_color(&a.label.optimizer, i)),
                );
                match act {
                    Some(act) => {
                        for b in [&act.s_kurtosis, &act.s_axis, &act.read_kurtosis] {
                            ui.monospace(format!(
                                "{:>7.3}  {:>7.3} ± {:<6.3} z {:>+6.1}",
                                b.value, b.mean, b.sd, b.z
                            ));
                        }
                    }
                    None => {
                        ui.label("diverged");
                    }
                }
                ui.end_row();
            }
        });
}

/// How a sweep's x values are drawn: both on a log axis.
#[derive(Clone, Copy)]
enum XAxis {
    /// log10 ε, ticks `1e-8`.
    Eps,
    /// log2 d_k, ticks `16`.
    Dk,
}

impl XAxis {
    fn name(self) -> &'static str {
        match self {
            XAxis::Eps => "eps",
            XAxis::Dk => "dk",
        }
    }

    fn position(self, x: f64) -> Option<f64> {
        let p = match self {
            XAxis::Eps => x.log10(),
            XAxis::Dk => x.log2(),
        };
        p.is_finite().then_some(p)
    }
}

/// One arm's (x, mean, sd) points.
struct ArmPoints {
    name: String,
    color: Color32,
    emphasised: bool,
    points: Vec<(f64, f64, f64)>,
}

/// One plot of a sweep tab: which aggregate it shows and how.
struct Metric {
    id: &'static str,
    title: &'static str,
    y_label: &'static str,
    log_y: bool,
    /// (mean, sd) over seeds of one arm at one point.
    value: fn(&ArmAggregate) -> (f64, f64),
}

const EXCESS: Metric = Metric {
    id: "excess",
    title: "A(K) excess over the rotation baseline (shaded: ± the baseline's sd)",
    y_label: "excess A(K) − baseline mean",
    log_y: false,
    value: |a| (a.excess_mean, a.excess_sd),
};
const ORIENTATION: Metric = Metric {
    id: "orientation",
    title: "Twin orientation divergence ‖W′ − QW‖F / ‖W‖F",
    y_label: "orientation divergence",
    log_y: true,
    value: |a| (a.orientation_div_mean, a.orientation_div_sd),
};
const GRAM: Metric = Metric {
    id: "gram",
    title: "Twin Gram divergence ‖K′ᵀK′ − KᵀK‖F",
    y_label: "Gram divergence",
    log_y: true,
    value: |a| (a.gram_div_mean, a.gram_div_sd),
};
const ACCURACY: Metric = Metric {
    id: "accuracy",
    title: "Held-out accuracy (run from W0)",
    y_label: "accuracy",
    log_y: false,
    value: |a| (a.heldout_accuracy_mean, a.heldout_accuracy_sd),
};

/// The finished points of one sweep tab and how to draw them.
struct SweepView<'a> {
    axis: XAxis,
    /// (x, sweep) per point.
    sweeps: Vec<(f64, &'a SweepResult)>,
    /// Arms drawn thick (the others dashed, as references).
    emphasise: fn(&str) -> bool,
    size: (f32, f32),
    hover: bool,
}

impl SweepView<'_> {
    fn arms(&self, m: &Metric) -> Vec<ArmPoints> {
        arm_points(&self.sweeps, m.value, self.emphasise)
    }

    fn plot(&self, ui: &mut egui::Ui, m: &Metric, zero_band: Option<&[(f64, f64)]>) {
        let id = format!("{} {}", self.axis.name(), m.id);
        sweep_plot(
            ui,
            &id,
            m,
            self.axis,
            &self.arms(m),
            zero_band,
            self.size,
            self.hover,
        );
    }
}

/// The arms of `sweeps` (one per x) with `value(aggregate) → (mean, sd)`.
fn arm_points(
    sweeps: &[(f64, &SweepResult)],
    value: impl Fn(&ArmAggregate) -> (f64, f64),
    emphasise: impl Fn(&str) -> bool,
) -> Vec<ArmPoints> {
    let Some((_, first)) = sweeps.first() else {
        return Vec::new();
    };
    first
        .aggregate
        .iter()
        .enumerate()
        .map(|(i, agg)| {
            let optimizer = first
                .preset
                .arms
                .get(i)
                .map_or(agg.arm.as_str(), |a| a.optimizer.as_str());
            ArmPoints {
                name: agg.arm.clone(),
                color: optimizer_color(optimizer, i),
                emphasised: emphasise(optimizer),
                points: sweeps
                    .iter()
                    .filter_map(|(x, s)| {
                        let a = s.aggregate.iter().find(|a| a.arm == agg.arm)?;
                        (a.seeds_ok > 0).then(|| {
                            let (m, sd) = value(a);
                            (*x, m, sd)
                        })
                    })
                    .collect(),
            }
        })
        .collect()
}

/// A mean ± sd plot of `m` over a log x axis (and a log y axis when `m.log_y`).
#[allow(clippy::too_many_arguments)]
fn sweep_plot(
    ui: &mut egui::Ui,
    id: &str,
    m: &Metric,
    axis: XAxis,
    arms: &[ArmPoints],
    zero_band: Option<&[(f64, f64)]>,
    size: (f32, f32),
    hover: bool,
) {
    let (y_label, log_y) = (m.y_label, m.log_y);
    ui.vertical(|ui| {
        ui.set_width(size.0);
        ui.label(RichText::new(m.title).strong());
        let x_label = match axis {
            XAxis::Eps => "Adam's ε (log scale)",
            XAxis::Dk => "key dimension d_k (log scale)",
        };
        let xs = arms
            .iter()
            .flat_map(|a| a.points.iter().filter_map(|p| axis.position(p.0)));
        let (x_lo, x_hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
        let mut plot = Plot::new(id)
            .width(size.0)
            .height(size.1)
            .x_axis_label(x_label)
            .y_axis_label(y_label)
            .x_grid_spacer(match axis {
                XAxis::Eps => Box::new(log_grid) as Box<dyn Fn(_) -> _>,
                XAxis::Dk => Box::new(|input: egui_plot::GridInput| {
                    let (lo, hi) = input.bounds;
                    if !(lo.is_finite() && hi.is_finite()) || hi - lo > 64.0 {
                        return Vec::new();
                    }
                    (lo.ceil() as i64..=hi.floor() as i64)
                        .map(|e| egui_plot::GridMark {
                            value: e as f64,
                            step_size: 1.0,
                        })
                        .collect()
                }),
            })
            .x_axis_formatter(move |mark, range| {
                // Ticks beyond the data would spill past the plot's corners.
                if mark.value < x_lo - 1e-9 || mark.value > x_hi + 1e-9 {
                    return String::new();
                }
                match axis {
                    XAxis::Eps => log_tick(mark, range),
                    XAxis::Dk => format!("{}", 2f64.powf(mark.value).round()),
                }
            })
            .show_x(hover)
            .show_y(hover);
        let y = |v: f64| {
            if log_y { v.max(LOG_FLOOR).log10() } else { v }
        };
        if log_y {
            // As on x: decade labels beyond the whiskers would sit on the title or the x axis.
            let ys = arms.iter().flat_map(|a| {
                a.points
                    .iter()
                    .flat_map(|p| [y(p.1 - p.2), y(p.1 + p.2), y(p.1)])
            });
            let (lo, hi) = ys
                .filter(|v| v.is_finite())
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
            // Within a decade no mark would be labelled: widen to the decades around it.
            let (lo, hi) = if hi - lo < 1.0 {
                (lo.floor(), hi.ceil())
            } else {
                (lo, hi)
            };
            plot = plot
                .y_grid_spacer(log_grid)
                .y_axis_formatter(move |mark, range| {
                    if mark.value < lo - 1e-9 || mark.value > hi + 1e-9 {
                        String::new()
                    } else {
                        log_tick(mark, range)
                    }
                });
        }
        plot.show(ui, |plot| {
            if let Some(band) = zero_band {
                let pts: Vec<(f64, f64)> = band
                    .iter()
                    .filter_map(|(x, sd)| Some((axis.position(*x)?, *sd)))
                    .filter(|p| p.1.is_finite())
                    .collect();
                if pts.len() >= 2 {
                    let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
                    let lo: Vec<f64> = pts.iter().map(|p| -p.1).collect();
                    let hi: Vec<f64> = pts.iter().map(|p| p.1).collect();
                    plot.add(
                        FilledArea::new("± the baseline's sd", &xs, &lo, &hi)
                            .fill_color(faded(Color32::GRAY, 55)),
                    );
                }
                plot.hline(HLine::new("zero excess", 0.0).color(Color32::GRAY));
            }
            for (i, a) in arms.iter().enumerate() {
                // Each arm's bars sit slightly apart (in log-x units) so none hides another.
                let nudge = (i as f64 - (arms.len() as f64 - 1.0) / 2.0) * 0.05;
                let pts: Vec<(f64, f64, f64)> = a
                    .points
                    .iter()
                    .filter_map(|&(x, m, sd)| Some((axis.position(x)?, m, sd)))
                    .filter(|p| p.1.is_finite())
                    .collect();
                let width = if a.emphasised { 3.0 } else { 1.5 };
                let style = if a.emphasised {
                    LineStyle::Solid
                } else {
                    LineStyle::dashed_loose()
                };
                let means: Vec<[f64; 2]> = pts.iter().map(|p| [p.0, y(p.1)]).collect();
                plot.line(
                    Line::new(a.name.clone(), PlotPoints::from(means))
                        .color(a.color)
                        .width(width)
                        .style(style),
                );
                for &(x, m, sd) in &pts {
                    if !sd.is_finite() || sd == 0.0 {
                        continue;
                    }
                    plot.line(
                        Line::new(
                            format!("{} ± sd over seeds", a.name),
                            vec![[x + nudge, y(m - sd)], [x + nudge, y(m + sd)]],
                        )
                        .color(a.color)
                        .width(width),
                    );
                }
            }
        });
    });
}

fn sweep_legend(ui: &mut egui::Ui, arms: &[ArmPoints], emphasis_note: &str) {
    let mut items: Vec<(Color32, String, Swatch)> = arms
        .iter()
        .map(|a| {
            let swatch = if a.emphasised {
                Swatch::Thick
            } else {
                Swatch::Dashed
            };
            (a.color, a.name.clone(), swatch)
        })
        .collect();
    items.push((Color32::GRAY, "bars: ± sd over seeds".into(), Swatch::Thin));
    ui.horizontal(|ui| {
        legend_row(ui, &items);
        ui.label(RichText::new(emphasis_note).small().weak());
    });
}

fn seeds_row(state: &mut AppState, ui: &mut egui::Ui) {
    let l = ui.label("seeds per point");
    ui.add(
        egui::DragValue::new(&mut state.settings.analyses.seeds)
            .range(2..=64)
            .update_while_editing(false),
    )
    .labelled_by(l.id);
}

/// The ε sweep: Adam's axis excess, twin divergences and accuracy against ε.
pub fn eps(state: &mut AppState, ui: &mut egui::Ui) {
    ui.label(
        "Adam divides each coordinate of its step by √v + ε. If its fingerprint comes from that \
         per-coordinate normalisation, it should fade as ε grows past √v and Adam turns into \
         momentum SGD. Each point is a seed sweep of the current settings with every Adam arm's ε \
         set to that value; the other arms do not read ε and serve as references (dashed).",
    );
    let mut start = false;
    ui.horizontal(|ui| {
        let l = ui.label("Adam's ε");
        ui.add(
            egui::TextEdit::singleline(&mut state.settings.analyses.eps_text).desired_width(300.0),
        )
        .labelled_by(l.id);
        seeds_row(state, ui);
        ui.label(RichText::new(format!("{} steps each", state.settings.preset.steps)).weak());
        start = job_row(ui, &state.analyses.eps, "seeds", "Run ε sweep", true);
    });
    if start {
        start_eps(state);
    }
    let Some(points) = &state.settings.analyses.eps else {
        ui.label(RichText::new("No ε sweep yet.").weak());
        return;
    };
    // Every point must be what the current settings give at its ε.
    if let Some(p) = points
        .iter()
        .find(|p| !with_adam_eps(&state.settings.preset, p.eps).same_experiment(&p.sweep.preset))
    {
        stale_note(ui, state, &p.sweep.preset);
    }
    if points.iter().any(|p| p.eps <= 0.0) {
        ui.label(RichText::new("ε = 0 has no place on a log axis; its numbers are in the CSV of `basis-lab eps-sweep`.").weak());
    }
    let avail = ui.available_size();
    let view = SweepView {
        axis: XAxis::Eps,
        sweeps: points.iter().map(|p| (p.eps, &p.sweep)).collect(),
        emphasise: |o| o == "adam",
        size: (
            (avail.x - 16.0) / 2.0,
            ((avail.y - 80.0) / 2.0).clamp(200.0, 520.0),
        ),
        hover: state.hover,
    };
    // The spread chance gives Adam's keys (the first arm's if there is no Adam arm).
    let band: Vec<(f64, f64)> = points
        .iter()
        .map(|p| {
            let arms = || p.sweep.aggregate.iter().zip(&p.sweep.preset.arms);
            let adam = arms()
                .find(|(_, s)| s.optimizer == "adam")
                .or_else(|| arms().next());
            (p.eps, adam.map_or(f64::NAN, |(a, _)| a.baseline_sd_mean))
        })
        .collect();
    sweep_legend(
        ui,
        &view.arms(&EXCESS),
        "thick: Adam arms (read ε); dashed: references",
    );
    egui::Grid::new("eps plots")
        .num_columns(2)
        .spacing([12.0, 8.0])
        .show(ui, |ui| {
            view.plot(ui, &EXCESS, Some(&band));
            view.plot(ui, &ORIENTATION, None);
            ui.end_row();
            view.plot(ui, &GRAM, None);
            view.plot(ui, &ACCURACY, None);
            ui.end_row();
        });
}

/// The d_k sweep: the axis excess against its baseline's spread as the key dimension grows.
pub fn dk(state: &mut AppState, ui: &mut egui::Ui) {
    ui.label(
        "A(K) is a coarse instrument at small d_k: random keys already sit near the axes, so \
         chance alone spreads A widely. Each point is a seed sweep of the current settings moved \
         to that d_k (keys and pairs per episode scaled along). Watch the shaded spread shrink: an \
         effect is only visible once it rises above it.",
    );
    let mut start = false;
    ui.horizontal(|ui| {
        let l = ui.label("d_k values");
        ui.add(
            egui::TextEdit::singleline(&mut state.settings.analyses.dk_text).desired_width(200.0),
        )
        .labelled_by(l.id);
        seeds_row(state, ui);
        ui.label(RichText::new("d_k = 64 takes minutes per seed on a laptop").weak());
        start = job_row(ui, &state.analyses.dk, "seeds", "Run d_k sweep", true);
    });
    if start {
        start_dk(state);
    }
    let Some(points) = &state.settings.analyses.dk else {
        ui.label(RichText::new("No d_k sweep yet.").weak());
        return;
    };
    // Every point must be what the current settings scale to.
    if let Some(p) = points
        .iter()
        .find(|p| !scaled_to_dk(&state.settings.preset, p.d_k).same_experiment(&p.sweep.preset))
    {
        stale_note(ui, state, &p.sweep.preset);
    }
    let avail = ui.available_size();
    let view = SweepView {
        axis: XAxis::Dk,
        sweeps: points.iter().map(|p| (p.d_k as f64, &p.sweep)).collect(),
        emphasise: |_| true,
        size: (
            (avail.x - 16.0) / 2.0,
            (avail.y - 140.0).clamp(240.0, 640.0),
        ),
        hover: state.hover,
    };
    // The spread chance gives, averaged over the arms.
    let band: Vec<(f64, f64)> = points
        .iter()
        .map(|p| {
            let sds: Vec<f64> = p
                .sweep
                .aggregate
                .iter()
                .map(|a| a.baseline_sd_mean)
                .filter(|x| x.is_finite())
                .collect();
            (p.d_k as f64, sds.iter().sum::<f64>() / sds.len() as f64)
        })
        .collect();
    sweep_legend(ui, &view.arms(&EXCESS), "");
    ui.horizontal_top(|ui| {
        view.plot(ui, &EXCESS, Some(&band));
        view.plot(ui, &ORIENTATION, None);
    });
    ui.add_space(4.0);
    for (d, (_, s)) in points.iter().zip(&view.sweeps) {
        let spread = s
            .aggregate
            .iter()
            .map(|a| a.baseline_sd_mean)
            .fold(f64::NAN, f64::max);
        let beyond: Vec<&str> = s
            .aggregate
            .iter()
            .filter(|a| a.excess_is_outside_baseline())
            .map(|a| a.arm.as_str())
            .collect();
        ui.label(format!(
            "d_k {:>3} ({} keys, {} pairs): baseline sd up to {:.4}; {}",
            d.d_k,
            s.preset.n_keys,
            s.preset.pairs_per_episode,
            spread,
            if beyond.is_empty() {
                "every arm within the spread".to_string()
            } else {
                format!("outside the spread: {}", beyond.join(", "))
            }
        ));
    }
}

/// The matched comparison as a table with verdicts.
pub fn matched(state: &mut AppState, ui: &mut egui::Ui) {
    ui.label(
        "Comparing arms at the same step rewards whichever learns fastest. Here every arm is also \
         measured at the first evaluation where its held-out loss crosses each rung of a ladder \
         of levels (from the initial loss down to the best loss every arm reaches). An effect that \
         survives at matched loss belongs to the representation; one that vanishes was speed.",
    );
    let mut start = false;
    ui.horizontal(|ui| {
        let l = ui.label("loss levels");
        ui.add(
            egui::DragValue::new(&mut state.settings.analyses.levels)
                .range(1..=50)
                .update_while_editing(false),
        )
        .labelled_by(l.id);
        ui.label(
            RichText::new(format!(
                "reference arm: the preset's first; {} steps",
                state.settings.preset.steps
            ))
            .weak(),
        );
        let job = state.analyses.matched.as_ref().map(|(_, j)| j);
        start = match job {
            None => ui
                .button(RichText::new("Run comparison").strong())
                .clicked(),
            Some(_) => {
                ui.add(egui::Spinner::new());
                ui.label("running the preset twice (the second pass replays it to measure)…");
                false
            }
        };
    });
    if start {
        start_matched(state);
    }
    let Some((ran, report)) = &state.settings.analyses.matched else {
        ui.label(RichText::new("No comparison yet.").weak());
        return;
    };
    stale_note(ui, state, ran);
    let color = |arm: &str| {
        ran.arms
            .iter()
            .enumerate()
            .find(|(_, a)| a.label.as_deref().unwrap_or(&a.optimizer) == arm)
            .map_or(Color32::GRAY, |(i, a)| optimizer_color(&a.optimizer, i))
    };
    ui.add_space(4.0);
    for v in &report.verdicts {
        ui.label(
            RichText::new(format!(
                "{} vs {}: excess difference {:+.4} at matched budget, {:+.4} at matched loss, \
                 against a baseline sd of {:.4} → {}",
                v.arm, report.reference, v.diff_budget, v.diff_loss, v.yardstick, v.label
            ))
            .color(color(&v.arm))
            .strong(),
        );
    }
    ui.label(
        RichText::new(
            "One seed: treat the labels as a first look and repeat with other seeds (New seed) \
             before trusting one. Levels first crossed at the same evaluation give identical \
             rows; a smaller “held-out every” resolves them.",
        )
        .weak(),
    );
    ui.add_space(6.0);
    let fmt = |x: f64, digits: usize| {
        // Round first, then `+ 0.0` turns −0 into 0: a tiny negative never prints as "-0.0000".
        let scale = 10f64.powi(digits as i32);
        let x = (x * scale).round() / scale + 0.0;
        if x.is_finite() {
            format!("{x:.digits$}")
        } else {
            "—".into()
        }
    };
    let sci = |x: f64| {
        if x.is_finite() {
            format!("{x:.2e}")
        } else {
            "—".into()
        }
    };
    egui::ScrollArea::vertical()
        .id_salt("matched scroll")
        .show(ui, |ui| {
            egui::Grid::new("matched table")
                .striped(true)
                .num_columns(12)
                .spacing([18.0, 3.0])
                .show(ui, |ui| {
                    for h in [
                        "loss level",
                        "arm",
                        "budget: step",
                        "held-out loss",
                        "excess A",
                        "twin div",
                        "Gram div",
                        "loss: step",
                        "held-out loss",
                        "excess A",
                        "twin div",
                        "Gram div",
                    ] {
                        ui.label(RichText::new(h).strong());
                    }
                    ui.end_row();
                    for &level in &report.levels {
                        let arms: Vec<&str> = report
                            .rows
                            .iter()
                            .filter(|r| r.level.to_bits() == level.to_bits() && r.kind == "budget")
                            .map(|r| r.arm.as_str())
                            .collect();
                        for arm in arms {
                            let find = |kind: &str| {
                                report.rows.iter().find(|r| {
                                    r.level.to_bits() == level.to_bits()
                                        && r.kind == kind
                                        && r.arm == arm
                                })
                            };
                            let (Some(b), Some(l)) = (find("budget"), find("loss")) else {
                                continue;
                            };
                            ui.monospace(format!("{level:.4}"));
                            ui.label(RichText::new(arm).color(color(arm)));
                            let step =
                                |s: Option<usize>| s.map_or("never".into(), |s| s.to_string());
                            ui.monospace(step(b.step));
                            ui.monospace(fmt(b.heldout_loss, 4));
                            ui.monospace(fmt(b.excess, 4));
                            ui.monospace(sci(b.orientation_div));
                            ui.monospace(sci(b.gram_div));
                            ui.monospace(step(l.step));
                            ui.monospace(fmt(l.heldout_loss, 4));
                            ui.monospace(fmt(l.excess, 4));
                            ui.monospace(sci(l.orientation_div));
                            ui.monospace(sci(l.gram_div));
                            ui.end_row();
                        }
                    }
                });
        });
}
