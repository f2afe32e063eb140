//! The gauge lab: factored matrix sensing `W = U Vᵀ`, the nine-rule zoo split by class, the
//! anisotropy dial, the spectral tail, and live runs with their gauge twins.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Bar, BarChart, FilledArea, HLine, Line, LineStyle, Plot, PlotPoints, Points};
use serde::{Deserialize, Serialize};

use crate::app::gauge_job::{LiveJob, LiveUpdate, start_zoo};
use crate::app::history::{MinMaxSeries, Scale};
use crate::app::job::Job;
use crate::app::state::{AppState, Notice};
use crate::app::widgets::colors::optimizer_color;
use crate::app::widgets::plots::{Swatch, category_axis, legend_row, log_plot};
use crate::sensing::zoo::{
    PAPER_DIAL, PAPER_TAIL, Rule, RunResult, ZooPreset, bundled_zoo, class_gap, fmt4, summarise,
};

/// Colour of the equivariant class (the paper's blue).
pub const EQUIVARIANT: Color32 = Color32::from_rgb(0, 114, 178);
/// Colour of the coordinate-wise class (the paper's vermilion).
pub const COORDINATEWISE: Color32 = Color32::from_rgb(213, 94, 0);

/// Which view of the gauge lab is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum GaugeTab {
    /// The nine-rule zoo.
    #[default]
    Zoo,
    /// The anisotropy dial.
    Dial,
    /// The spectral tail.
    Tail,
    /// Live runs with gauge twins.
    Live,
}

/// A finished sweep kept for display (and across restarts).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CachedSweep {
    /// What ran.
    pub preset: ZooPreset,
    /// Every run.
    pub runs: Vec<RunResult>,
}

/// The gauge lab's persisted settings and last results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GaugeSettings {
    /// Tab shown.
    pub tab: GaugeTab,
    /// Seeds per cell for the sweeps.
    pub seeds: usize,
    /// Rules of the live run.
    pub live_rules: Vec<Rule>,
    /// Step budget of the live run.
    pub live_budget: usize,
    /// Problem seed of the live run.
    pub live_seed: u64,
    /// Last zoo sweep.
    pub zoo: Option<CachedSweep>,
    /// Last dial sweep.
    pub dial: Option<CachedSweep>,
    /// Last tail sweep.
    pub tail: Option<CachedSweep>,
}

impl Default for GaugeSettings {
    fn default() -> Self {
        Self {
            tab: GaugeTab::Zoo,
            seeds: 3,
            live_rules: vec![Rule::Gd, Rule::Adam, Rule::Muon, Rule::ScalarAdam],
            live_budget: 20_000,
            live_seed: 0,
            zoo: None,
            dial: None,
            tail: None,
        }
    }
}

/// Runtime state of the panel (jobs and live series), not persisted.
#[derive(Default)]
pub struct GaugeRuntime {
    job: Option<(GaugeTab, ZooPreset, Job<Vec<RunResult>>)>,
    live: Option<LiveJob>,
    series: Vec<LiveSeries>,
}

impl GaugeRuntime {
    /// The final summary of each live run, in rule order (`None` while it runs).
    pub fn live_summaries(&self) -> Vec<Option<RunResult>> {
        self.series.iter().map(|s| s.summary.clone()).collect()
    }
}

struct LiveSeries {
    loss: MinMaxSeries,
    recovery: MinMaxSeries,
    drift: MinMaxSeries,
    factor_drift: MinMaxSeries,
    spectrum: Option<Vec<f64>>,
    summary: Option<RunResult>,
}

fn class_color(equivariant: bool) -> Color32 {
    if equivariant {
        EQUIVARIANT
    } else {
        COORDINATEWISE
    }
}

/// Draws the panel.
pub fn ui(state: &mut AppState, ui: &mut egui::Ui) {
    poll(state);
    ui.horizontal(|ui| {
        ui.heading("Gauge lab");
        ui.label(
            RichText::new("W = U Vᵀ on matrix sensing: the loss cannot see (U, V) → (UQ, VQ)")
                .weak(),
        );
    });
    ui.horizontal(|ui| {
        legend_row(
            ui,
            &[
                (EQUIVARIANT, "gauge-equivariant rules".into(), Swatch::Thick),
                (
                    COORDINATEWISE,
                    "coordinate-wise rules".into(),
                    Swatch::Thick,
                ),
            ],
        );
    });
    let g = &mut state.settings.gauge;
    ui.horizontal(|ui| {
        ui.selectable_value(&mut g.tab, GaugeTab::Zoo, "Optimizer zoo");
        ui.selectable_value(&mut g.tab, GaugeTab::Dial, "Anisotropy dial");
        ui.selectable_value(&mut g.tab, GaugeTab::Tail, "Spectral tail");
        ui.selectable_value(&mut g.tab, GaugeTab::Live, "Live runs and twins");
    });
    ui.separator();
    match state.settings.gauge.tab {
        GaugeTab::Live => live(state, ui),
        tab => sweep_view(state, ui, tab),
    }
}

fn poll(state: &mut AppState) {
    if let Some((tab, preset, job)) = &mut state.gauge.job
        && let Some(result) = job.take_result()
    {
        let cancelled = |runs: &[RunResult]| {
            runs.iter()
                .any(|r| r.outcome == crate::sensing::zoo::Outcome::Cancelled)
        };
        match result {
            Err(panic) => {
                state.notice = Some(Notice {
                    text: format!("The gauge sweep stopped: {panic}"),
                    error: true,
                })
            }
            Ok(runs) if cancelled(&runs) => {
                state.notice = Some(Notice {
                    text: "Gauge sweep cancelled; the previous results stay.".into(),
                    error: false,
                })
            }
            Ok(runs) => {
                let cached = Some(CachedSweep {
                    preset: preset.clone(),
                    runs,
                });
                match tab {
                    GaugeTab::Zoo => state.settings.gauge.zoo = cached,
                    GaugeTab::Dial => state.settings.gauge.dial = cached,
                    GaugeTab::Tail => state.settings.gauge.tail = cached,
                    GaugeTab::Live => {}
                }
            }
        }
        state.gauge.job = None;
    }
    if let Some(job) = &state.gauge.live {
        for u in job.drain() {
            match u {
                LiveUpdate::Sample(s) => {
                    if let Some(series) = state.gauge.series.get_mut(s.rule) {
                        series.loss.push(s.step, s.loss);
                        series.recovery.push(s.step, s.recovery);
                        series.drift.push(s.step, s.twin_drift);
                        series.factor_drift.push(s.step, s.factor_drift);
                    }
                }
                LiveUpdate::Done {
                    rule,
                    spectrum,
                    summary,
                } => {
                    if let Some(series) = state.gauge.series.get_mut(rule) {
                        series.spectrum = Some(spectrum);
                        series.summary = Some(summary);
                    }
                }
            }
        }
    }
}

/// Starts the sweep of `tab` (zoo, dial or tail) in the background, unless one is running.
pub fn start_sweep(state: &mut AppState, tab: GaugeTab) {
    if state.gauge.job.is_none() {
        let preset = preset_for(tab, state.settings.gauge.seeds);
        let job = start_zoo(preset.clone(), state.repaint_handle());
        state.gauge.job = Some((tab, preset, job));
    }
}

/// Whether a gauge sweep is running.
pub fn sweep_running(state: &AppState) -> bool {
    state.gauge.job.is_some()
}

/// The preset a sweep tab runs: the bundled one, with the panel's seed count.
fn preset_for(tab: GaugeTab, seeds: usize) -> ZooPreset {
    let mut p = match tab {
        GaugeTab::Dial => bundled_zoo("dial"),
        GaugeTab::Tail => bundled_zoo("tail"),
        _ => bundled_zoo("zoo-paper"),
    };
    p.seeds = seeds;
    p
}

fn sweep_view(state: &mut AppState, ui: &mut egui::Ui, tab: GaugeTab) {
    let about = match tab {
        GaugeTab::Dial => {
            "Adam's denominator turned from per-coordinate (p = 1, Adam) to one shared scale (p = 0, scalar-Adam), 3·10⁴ steps at the dial's rate 1e-3."
        }
        GaugeTab::Tail => {
            "Targets with τ² of their energy outside rank 3; GD, Adam, Muon and Shampoo at their Table 2 rates."
        }
        _ => {
            "The nine rules of the paper's Table 2 at its selected rates: n = 40, rank 3, m = 2·dof, init 1e-3, up to 2·10⁴ steps, run until the training loss interpolates."
        }
    };
    ui.label(about);
    let preset = preset_for(tab, state.settings.gauge.seeds);
    ui.horizontal(|ui| {
        let l = ui.label("seeds");
        ui.add(
            egui::DragValue::new(&mut state.settings.gauge.seeds)
                .range(1..=50)
                .update_while_editing(false),
        )
        .labelled_by(l.id);
        ui.label(RichText::new(format!("{} runs", preset.cells().len())).weak());
        match &state.gauge.job {
            None => {
                if ui.button(RichText::new("Run").strong()).clicked() {
                    start_sweep(state, tab);
                }
            }
            Some((running, _, job)) => {
                let frac = job.done() as f32 / job.total.max(1) as f32;
                ui.add(
                    egui::ProgressBar::new(frac)
                        .desired_width(260.0)
                        .text(format!(
                            "{:?}: {} / {} runs",
                            running,
                            job.done(),
                            job.total
                        )),
                );
                if job.is_cancelling() {
                    ui.label("cancelling…");
                } else if ui.button("Cancel").clicked() {
                    job.cancel();
                }
            }
        }
    });
    let cached = match tab {
        GaugeTab::Dial => state.settings.gauge.dial.clone(),
        GaugeTab::Tail => state.settings.gauge.tail.clone(),
        _ => state.settings.gauge.zoo.clone(),
    };
    let Some(c) = cached else {
        ui.label(RichText::new("No results yet: press Run.").weak());
        return;
    };
    ui.label(
        RichText::new(format!(
            "Last sweep: {} seeds × {} steps; {} runs.",
            c.preset.seeds,
            c.preset.budget,
            c.runs.len()
        ))
        .weak(),
    );
    let hover = state.hover;
    match tab {
        GaugeTab::Dial => dial_plot(ui, &c, hover),
        GaugeTab::Tail => tail_plot(ui, &c, hover),
        _ => zoo_plot(ui, &c, hover),
    }
}

fn zoo_plot(ui: &mut egui::Ui, c: &CachedSweep, hover: bool) {
    let summaries = summarise(&c.runs);
    let gap = class_gap(&summaries);
    let mut items = vec![(Color32::GRAY, "one seed".to_string(), Swatch::Dot)];
    match gap {
        Some((top, bottom)) if top < bottom => items.push((
            Color32::from_rgb(0, 158, 115),
            format!("the empty gap between the classes ({top:.3} … {bottom:.3})"),
            Swatch::Thick,
        )),
        _ => {}
    }
    legend_row(ui, &items);
    if let Some((top, bottom)) = gap
        && top >= bottom
    {
        ui.label(format!(
            "No gap between the classes: the worst equivariant seed ({top:.3}) lies above the best \
             coordinate-wise seed ({bottom:.3})."
        ));
    }
    let names: Vec<String> = summaries.iter().map(|s| s.rule.clone()).collect();
    let h = (ui.available_height() - 40.0 * summaries.len() as f32 - 60.0).clamp(240.0, 520.0);
    Plot::new("zoo bars")
        .height(h)
        .x_axis_label("update rule (at its selected learning rate)")
        .y_axis_label("recovery ‖UVᵀ − X*‖F / ‖X*‖F")
        .include_y(0.0)
        .show_x(hover)
        .show_y(hover)
        .x_axis_formatter(category_axis(names))
        .show(ui, |plot| {
            if let Some((top, bottom)) = gap
                && top < bottom
            {
                let n = summaries.len() as f64;
                plot.add(
                    FilledArea::new("gap", &[-0.5, n - 0.5], &[top, top], &[bottom, bottom])
                        .fill_color(Color32::from_rgba_unmultiplied(0, 158, 115, 40)),
                );
            }
            let bars: Vec<Bar> = summaries
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    Bar::new(i as f64, s.recovery[0])
                        .width(0.6)
                        .fill(class_color(s.equivariant).gamma_multiply(0.55))
                        .name(format!("{} (lr {})", s.rule, s.lr))
                })
                .collect();
            plot.bar_chart(BarChart::new("mean recovery", bars));
            for (i, s) in summaries.iter().enumerate() {
                let dots: Vec<[f64; 2]> = c
                    .runs
                    .iter()
                    .filter(|r| r.rule == s.rule && r.lr.to_bits() == s.lr.to_bits())
                    .enumerate()
                    .map(|(k, r)| {
                        let jitter = (k as f64 / s.seeds.max(1) as f64 - 0.5) * 0.3;
                        [i as f64 + jitter, r.recovery]
                    })
                    .collect();
                plot.points(
                    Points::new(format!("{} seeds", s.rule), dots)
                        .color(class_color(s.equivariant))
                        .radius(3.5)
                        .filled(true),
                );
            }
        });
    egui::Grid::new("zoo table")
        .striped(true)
        .spacing([14.0, 3.0])
        .show(ui, |ui| {
            for h in [
                "rule",
                "class",
                "lr",
                "recovery mean ± sd",
                "range",
                "erank",
                "balancedness",
                "interpolated",
                "paper (rec / erank / bal)",
            ] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for s in &summaries {
                ui.label(
                    RichText::new(&s.rule)
                        .color(class_color(s.equivariant))
                        .strong(),
                );
                ui.label(if s.equivariant {
                    "equivariant"
                } else {
                    "coordinate-wise"
                });
                ui.label(format!("{}", s.lr));
                ui.label(
                    RichText::new(format!("{} ± {}", fmt4(s.recovery[0]), fmt4(s.recovery[1])))
                        .monospace(),
                );
                ui.label(
                    RichText::new(format!("{} … {}", fmt4(s.recovery[2]), fmt4(s.recovery[3])))
                        .monospace(),
                );
                ui.label(RichText::new(format!("{:.2}", s.erank[0])).monospace());
                ui.label(RichText::new(format!("{:.2}", s.balancedness[0])).monospace());
                ui.label(if s.all_interpolated {
                    "all seeds"
                } else {
                    "not all"
                });
                let paper = Rule::ZOO
                    .iter()
                    .find(|z| z.name() == s.rule)
                    .and_then(|z| z.paper_table2())
                    .map_or("—".into(), |(a, b, c)| {
                        format!("{a:.4} / {b:.2} / {c:.2}")
                    });
                ui.label(RichText::new(paper).weak());
                ui.end_row();
            }
        });
}

fn dial_plot(ui: &mut egui::Ui, c: &CachedSweep, hover: bool) {
    let summaries = summarise(&c.runs);
    let pts: Vec<(f64, f64, f64)> = c
        .preset
        .rules
        .iter()
        .filter_map(|r| {
            let Rule::Dial(p) = *r else { return None };
            let s = summaries.iter().find(|s| s.rule == r.name())?;
            Some((p, s.recovery[0], s.recovery[1]))
        })
        .collect();
    legend_row(
        ui,
        &[
            (
                COORDINATEWISE,
                "ours: mean ± sd over seeds".into(),
                Swatch::Thick,
            ),
            (
                Color32::GRAY,
                "the paper's envelope (3 seeds, float32)".into(),
                Swatch::Dashed,
            ),
        ],
    );
    let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let lo: Vec<f64> = pts.iter().map(|p| p.1 - p.2).collect();
    let hi: Vec<f64> = pts.iter().map(|p| p.1 + p.2).collect();
    let mut sorted: Vec<(f64, f64, f64)> = pts.clone();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    Plot::new("dial")
        .height(360.0)
        .x_axis_label("anisotropy p (0 = scalar-Adam, 1 = Adam)")
        .y_axis_label("recovery")
        .include_y(0.0)
        .show_x(hover)
        .show_y(hover)
        .show(ui, |plot| {
            if xs.len() >= 2 {
                let mut order: Vec<usize> = (0..xs.len()).collect();
                order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
                let x: Vec<f64> = order.iter().map(|&i| xs[i]).collect();
                let l: Vec<f64> = order.iter().map(|&i| lo[i]).collect();
                let h: Vec<f64> = order.iter().map(|&i| hi[i]).collect();
                plot.add(
                    FilledArea::new("± sd", &x, &l, &h)
                        .fill_color(COORDINATEWISE.gamma_multiply(0.2)),
                );
            }
            let line: Vec<[f64; 2]> = sorted.iter().map(|p| [p.0, p.1]).collect();
            plot.line(
                Line::new("ours", line.clone())
                    .color(COORDINATEWISE)
                    .width(2.5),
            );
            plot.points(Points::new("ours", line).color(COORDINATEWISE).radius(4.0));
            let paper: Vec<[f64; 2]> = PAPER_DIAL.iter().rev().map(|p| [p.0, p.1]).collect();
            plot.line(
                Line::new("paper", paper)
                    .color(Color32::GRAY)
                    .style(LineStyle::dashed_loose())
                    .width(1.5),
            );
        });
}

fn tail_plot(ui: &mut egui::Ui, c: &CachedSweep, hover: bool) {
    let summaries = summarise(&c.runs);
    let mut items: Vec<(Color32, String, Swatch)> = c
        .preset
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| (rule_color(*r, i), r.name(), Swatch::Thick))
        .collect();
    items.push((
        Color32::GRAY,
        "the paper (dashed, same colours)".into(),
        Swatch::Dashed,
    ));
    legend_row(ui, &items);
    Plot::new("tail")
        .height(380.0)
        .x_axis_label("tail amplitude τ (τ² of the target's energy lies outside rank 3)")
        .y_axis_label("recovery")
        .include_y(0.0)
        .show_x(hover)
        .show_y(hover)
        .show(ui, |plot| {
            for (i, r) in c.preset.rules.iter().enumerate() {
                let col = rule_color(*r, i);
                let mut pts: Vec<(f64, f64, f64)> = summaries
                    .iter()
                    .filter(|s| s.rule == r.name())
                    .map(|s| (s.tau, s.recovery[0], s.recovery[1]))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                if pts.len() >= 2 {
                    let x: Vec<f64> = pts.iter().map(|p| p.0).collect();
                    let l: Vec<f64> = pts.iter().map(|p| p.1 - p.2).collect();
                    let h: Vec<f64> = pts.iter().map(|p| p.1 + p.2).collect();
                    plot.add(
                        FilledArea::new(r.name(), &x, &l, &h).fill_color(col.gamma_multiply(0.18)),
                    );
                }
                let line: Vec<[f64; 2]> = pts.iter().map(|p| [p.0, p.1]).collect();
                plot.line(Line::new(r.name(), line).color(col).width(2.5));
                let column = match r {
                    Rule::Gd => Some(1),
                    Rule::Adam => Some(2),
                    Rule::Muon => Some(3),
                    Rule::Shampoo => Some(4),
                    _ => None,
                };
                if let Some(k) = column {
                    let paper: Vec<[f64; 2]> = PAPER_TAIL
                        .iter()
                        .map(|row| [row.0, [row.1, row.2, row.3, row.4][k - 1]])
                        .collect();
                    plot.line(
                        Line::new(format!("{} (paper)", r.name()), paper)
                            .color(col.gamma_multiply(0.7))
                            .style(LineStyle::dashed_loose())
                            .width(1.2),
                    );
                }
            }
        });
}

fn live(state: &mut AppState, ui: &mut egui::Ui) {
    ui.label(
        "Each rule trained on one problem instance from (U, V) and, as its gauge twin, from (UQ, VQ). \
         Equivariant rules keep the twins' products at rounding noise; coordinate-wise ones split them.",
    );
    ui.horizontal_wrapped(|ui| {
        for rule in Rule::ZOO {
            let mut on = state.settings.gauge.live_rules.contains(&rule);
            if ui.checkbox(&mut on, rule.name()).changed() {
                if on {
                    state.settings.gauge.live_rules.push(rule);
                } else {
                    state.settings.gauge.live_rules.retain(|r| *r != rule);
                }
            }
        }
    });
    ui.horizontal(|ui| {
        let l = ui.label("steps");
        ui.add(
            egui::DragValue::new(&mut state.settings.gauge.live_budget)
                .range(200..=100_000)
                .update_while_editing(false),
        )
        .labelled_by(l.id);
        let l = ui.label("problem seed");
        ui.add(
            egui::DragValue::new(&mut state.settings.gauge.live_seed).update_while_editing(false),
        )
        .labelled_by(l.id);
        let running = state.gauge.live.as_ref().is_some_and(|j| !j.is_finished());
        if running {
            if ui.button("Stop").clicked()
                && let Some(j) = &state.gauge.live
            {
                j.cancel();
            }
        } else if ui.button(RichText::new("Run live").strong()).clicked()
            && !state.settings.gauge.live_rules.is_empty()
        {
            let rules: Vec<(Rule, f64)> = Rule::ZOO
                .iter()
                .filter(|r| state.settings.gauge.live_rules.contains(r))
                .map(|&r| (r, r.paper_lr()))
                .collect();
            state.gauge.series = rules
                .iter()
                .map(|_| LiveSeries {
                    loss: MinMaxSeries::new(Scale::Log),
                    recovery: MinMaxSeries::new(Scale::Log),
                    drift: MinMaxSeries::new(Scale::Log),
                    factor_drift: MinMaxSeries::new(Scale::Log),
                    spectrum: None,
                    summary: None,
                })
                .collect();
            state.gauge.live = Some(LiveJob::start(
                crate::sensing::SensingConfig::default(),
                rules,
                state.settings.gauge.live_seed,
                state.settings.gauge.live_budget,
                state.repaint_handle(),
            ));
        }
    });
    let Some(job) = &state.gauge.live else {
        ui.label(RichText::new("Pick rules and press Run live.").weak());
        return;
    };
    let rules = job.rules.clone();
    let target = job.target_spectrum.clone();
    let hover = state.hover;
    let items: Vec<(Color32, String, Swatch)> = rules
        .iter()
        .enumerate()
        .map(|(i, (r, _))| (rule_color(*r, i), r.name(), Swatch::Thick))
        .collect();
    legend_row(ui, &items);
    let w = (ui.available_width() - 16.0) / 2.0;
    let h = ((ui.available_height() - 60.0) / 2.0).clamp(180.0, 420.0);
    let series = &mut state.gauge.series;
    egui::Grid::new("live grid").num_columns(2).show(ui, |ui| {
        for (title, id, pick) in [
            ("training loss (log)", "gauge loss", 0usize),
            ("recovery ‖UVᵀ − X*‖F/‖X*‖F (log)", "gauge recovery", 1),
        ] {
            ui.vertical(|ui| {
                ui.label(RichText::new(title).strong());
                log_plot(id, title)
                    .width(w)
                    .height(h)
                    .show_x(hover)
                    .show_y(hover)
                    .show(ui, |plot| {
                        for (i, ((r, _), s)) in rules.iter().zip(series.iter_mut()).enumerate() {
                            let data = if pick == 0 {
                                &mut s.loss
                            } else {
                                &mut s.recovery
                            };
                            plot.line(
                                Line::new(r.name(), PlotPoints::Borrowed(data.points()))
                                    .color(rule_color(*r, i))
                                    .width(2.0),
                            );
                        }
                    });
            });
        }
        ui.end_row();
        ui.vertical(|ui| {
            ui.label(
                RichText::new(
                    "gauge twins: product ‖U′V′ᵀ − UVᵀ‖F/‖UVᵀ‖F (solid), factors ‖U′ − UQ‖F/‖UQ‖F (dashed)",
                )
                .strong(),
            );
            log_plot("gauge drift", "twin drift")
                .width(w)
                .height(h)
                .show_x(hover)
                .show_y(hover)
                .show(ui, |plot| {
                    for (i, ((r, _), s)) in rules.iter().zip(series.iter_mut()).enumerate() {
                        let c = rule_color(*r, i);
                        plot.line(
                            Line::new(r.name(), PlotPoints::Borrowed(s.drift.points()))
                                .color(c)
                                .width(2.0),
                        );
                        plot.line(
                            Line::new(
                                format!("{} factors", r.name()),
                                PlotPoints::Borrowed(s.factor_drift.points()),
                            )
                            .color(c)
                            .style(LineStyle::dashed_loose())
                            .width(1.5),
                        );
                    }
                });
        });
        ui.vertical(|ui| {
            ui.label(
                RichText::new("singular values of UVᵀ at the end vs X* (grey, dashed)").strong(),
            );
            Plot::new("gauge spectrum")
                .width(w)
                .height(h)
                .x_axis_label("index")
                .y_axis_label("σ (log scale)")
                .y_grid_spacer(crate::app::widgets::plots::log_grid)
                .y_axis_formatter(crate::app::widgets::plots::log_tick)
                .show_x(hover)
                .show_y(hover)
                .show(ui, |plot| {
                    let floor = 1e-12f64;
                    let tl: Vec<[f64; 2]> = target
                        .iter()
                        .enumerate()
                        .map(|(k, s)| [(k + 1) as f64, s.max(floor).log10()])
                        .collect();
                    plot.line(
                        Line::new("X*", tl)
                            .color(Color32::GRAY)
                            .style(LineStyle::dashed_loose())
                            .width(2.0),
                    );
                    plot.hline(
                        HLine::new("floor 1e-12", floor.log10())
                            .color(Color32::GRAY)
                            .style(LineStyle::dotted_loose()),
                    );
                    for (i, ((r, _), s)) in rules.iter().zip(series.iter()).enumerate() {
                        if let Some(sp) = &s.spectrum {
                            let pts: Vec<[f64; 2]> = sp
                                .iter()
                                .enumerate()
                                .map(|(k, v)| [(k + 1) as f64, v.max(floor).log10()])
                                .collect();
                            plot.line(Line::new(r.name(), pts).color(rule_color(*r, i)).width(2.0));
                        }
                    }
                });
        });
        ui.end_row();
    });
    for ((r, lr), s) in rules.iter().zip(series.iter()) {
        if let Some(sum) = &s.summary {
            ui.label(
                RichText::new(format!(
                    "{} (lr {lr}): {:?} after {} steps; recovery {:.2e}, effective rank {:.2}, twin drift {:.1e}",
                    r.name(),
                    sum.outcome,
                    sum.steps,
                    sum.recovery,
                    sum.erank,
                    sum.twin_drift.unwrap_or(f64::NAN)
                ))
                .color(class_color(r.equivariant())),
            );
        }
    }
}

/// A rule's colour: the optimizer colour it shares with the key lab (class shows in the text).
fn rule_color(rule: Rule, i: usize) -> Color32 {
    optimizer_color(&rule.name(), i)
}
