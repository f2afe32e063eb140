//! Live runs: a few rules trained on one problem instance, each with its gauge twin, streaming
//! loss, recovery and the twins' drift; the singular values at the end. The runs are the
//! library's ([`crate::sensing::live`]) on the live driver; the tab starts, drains and draws.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{HLine, Line, LineStyle, Plot, PlotPoints};
use serde::{Deserialize, Serialize};

use super::{class_color, rule_color};
use crate::app::history::{MinMaxSeries, Scale};
use crate::app::lab::Lab;
use crate::app::panel::{Panel, from_ron, to_ron};
use crate::app::widgets::plots::{Swatch, legend_row, log_plot, plot_header, save_figure};
use crate::app::widgets::reflow::{self, Cells, PLOT_MIN_W};
use crate::figure::GREY;
use crate::figure::{Axis, Body, Dash, Figure, Mark};
use crate::live::Live;
use crate::optim::optimizer_rgb;
use crate::sensing::SensingConfig;
use crate::sensing::live::{GaugeLive, LiveCommand, LiveUpdate};
use crate::sensing::zoo::{Rule, RunResult};
use crate::validate::check_count;

/// The live-runs tab: its settings, the job and the series it streamed.
#[derive(Default)]
pub struct LiveRuns {
    /// What to run (saved).
    pub settings: Settings,
    job: Option<Live<GaugeLive>>,
    /// The rules of the runs on screen, in display order, with their rates.
    rules: Vec<(Rule, f64)>,
    /// Singular values of the runs' target X*.
    target: Vec<f64>,
    series: Vec<LiveSeries>,
}

/// The range of a live run's step budget.
const BUDGET: std::ops::RangeInclusive<usize> = 200..=100_000;

/// The live runs' settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The rules to run.
    pub rules: Vec<Rule>,
    /// Step budget of each run.
    pub budget: usize,
    /// Seed of the problem instance.
    pub seed: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            rules: ["gd", "adam", "muon", "scalar_adam"]
                .iter()
                .filter_map(|n| Rule::named(n))
                .collect(),
            budget: 20_000,
            seed: 0,
        }
    }
}

impl LiveRuns {
    /// The final summary of each live run, in rule order (`None` while it runs).
    pub fn summaries(&self) -> Vec<Option<RunResult>> {
        self.series.iter().map(|s| s.summary.clone()).collect()
    }
}

const DRIFT_TITLE: &str =
    "gauge twins: product ‖U′V′ᵀ − UVᵀ‖F/‖UVᵀ‖F (solid), factors ‖U′ − UQ‖F/‖UQ‖F (dashed)";
const SPECTRUM_TITLE: &str = "singular values of UVᵀ at the end vs X* (grey, dashed)";
const PANELS: [(&str, &str); 2] = [
    ("training loss (log)", "loss (log scale)"),
    ("recovery ‖UVᵀ − X*‖F/‖X*‖F (log)", "recovery (log scale)"),
];
/// Singular values below this are drawn at it (a rank-3 target's tail is exactly 0).
const SPECTRUM_FLOOR: f64 = 1e-12;

/// Live plot `pick` (0 loss, 1 recovery, 2 twin drift, 3 spectrum) as a figure, and its file
/// name stem.
fn live_figure(
    rules: &[(Rule, f64)],
    series: &[LiveSeries],
    target: &[f64],
    pick: usize,
) -> (&'static str, Figure) {
    let rgb = |r: &Rule, i: usize| optimizer_rgb(r.info().name, i);
    let mut marks = Vec::new();
    for (i, ((r, _), s)) in rules.iter().zip(series).enumerate() {
        match pick {
            0 | 1 => {
                let data = if pick == 0 { &s.loss } else { &s.recovery };
                marks.push(Mark::line(
                    r.name(),
                    rgb(r, i),
                    data.raw_points(),
                    2.0,
                    Dash::Solid,
                ));
            }
            2 => {
                marks.push(Mark::line(
                    r.name(),
                    rgb(r, i),
                    s.drift.raw_points(),
                    2.0,
                    Dash::Solid,
                ));
                marks.push(Mark::line(
                    format!("{} factors", r.name()),
                    rgb(r, i),
                    s.factor_drift.raw_points(),
                    1.5,
                    Dash::Dashed,
                ));
            }
            _ => {
                if let Some(sp) = &s.spectrum {
                    let pts = sp
                        .iter()
                        .enumerate()
                        .map(|(k, v)| [(k + 1) as f64, v.max(SPECTRUM_FLOOR)])
                        .collect();
                    marks.push(Mark::line(r.name(), rgb(r, i), pts, 2.0, Dash::Solid));
                }
            }
        }
    }
    let step = || Axis::linear("training step").including(0.0);
    let (stem, title, x, y) = match pick {
        0 | 1 => (
            ["gauge_live_loss", "gauge_live_recovery"][pick],
            PANELS[pick].0,
            step(),
            Axis::log(PANELS[pick].1),
        ),
        2 => (
            "gauge_live_drift",
            DRIFT_TITLE,
            step(),
            Axis::log("twin drift"),
        ),
        _ => {
            let pts = target
                .iter()
                .enumerate()
                .map(|(k, v)| [(k + 1) as f64, v.max(SPECTRUM_FLOOR)])
                .collect();
            marks.insert(0, Mark::line("X*", GREY, pts, 2.0, Dash::Dashed));
            marks.push(Mark::hline(
                "floor 1e-12",
                GREY,
                SPECTRUM_FLOOR,
                Dash::Dotted,
            ));
            (
                "gauge_live_spectrum",
                SPECTRUM_TITLE,
                Axis::linear("index"),
                Axis::log("σ"),
            )
        }
    };
    let fig = Figure {
        title: title.into(),
        body: Body::Plot { x, y, marks },
    };
    (stem, fig)
}

/// What the tab keeps of one run.
struct LiveSeries {
    loss: MinMaxSeries,
    recovery: MinMaxSeries,
    drift: MinMaxSeries,
    factor_drift: MinMaxSeries,
    spectrum: Option<Vec<f64>>,
    summary: Option<RunResult>,
}

impl Default for LiveSeries {
    fn default() -> Self {
        Self {
            loss: MinMaxSeries::new(Scale::Log),
            recovery: MinMaxSeries::new(Scale::Log),
            drift: MinMaxSeries::new(Scale::Log),
            factor_drift: MinMaxSeries::new(Scale::Log),
            spectrum: None,
            summary: None,
        }
    }
}

impl Panel for LiveRuns {
    fn id(&self) -> &'static str {
        "live"
    }

    fn title(&self) -> &'static str {
        "Live runs and twins"
    }

    /// Files the samples that arrived (in the web build, after stepping the runs).
    fn logic(&mut self, lab: &mut Lab) {
        let Some(job) = &self.job else {
            return;
        };
        for u in job.drain() {
            match u {
                LiveUpdate::Crashed(message) => {
                    lab.error(format!(
                        "The live runs stopped on an internal error: {message}. Please report \
                         it with the settings; Run live starts them again."
                    ));
                }
                LiveUpdate::Sample(s) => {
                    if let Some(series) = self.series.get_mut(s.rule) {
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
                    if let Some(series) = self.series.get_mut(rule) {
                        series.spectrum = Some(spectrum);
                        series.summary = Some(summary);
                    }
                }
            }
        }
    }

    /// Starts the live runs of the chosen rules (nothing if none is chosen).
    fn start(&mut self, lab: &mut Lab) {
        let rules: Vec<(Rule, f64)> = Rule::all()
            .into_iter()
            .filter(|r| self.settings.rules.contains(r))
            .map(|r| (r, r.default_lr()))
            .collect();
        if rules.is_empty() {
            return;
        }
        self.series = rules.iter().map(|_| LiveSeries::default()).collect();
        let runs = GaugeLive::new(
            &SensingConfig::default(),
            &rules,
            self.settings.seed,
            self.settings.budget,
        );
        self.target = runs.target_spectrum().to_vec();
        self.rules = rules;
        self.job = Some(Live::start(
            "basis-lab gauge live",
            move || Ok(runs),
            lab.repaint_handle(),
        ));
    }

    fn busy(&self, _lab: &Lab) -> bool {
        self.job.as_ref().is_some_and(|j| !j.is_finished())
    }

    fn save(&self) -> Option<String> {
        to_ron(&self.settings)
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let mut s: Settings = from_ron(ron)?;
        let mut notes = Vec::new();
        check_count(
            &mut notes,
            "budget",
            &mut s.budget,
            BUDGET,
            Settings::default().budget,
        );
        let before = s.rules.len();
        s.rules.retain(|r| {
            let arg = r.info().zoo_arg.zip(r.arg());
            arg.is_none_or(|(h, x)| h.range().is_none_or(|range| range.contains(x)))
        });
        if s.rules.len() != before {
            notes.push("a rule whose argument is out of its range was removed".into());
        }
        self.settings = s;
        Ok(notes)
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        ui.label(
            "Each rule trained on one problem instance from (U, V) and, as its gauge twin, from (UQ, VQ). \
             Equivariant rules keep the twins' products at rounding noise; coordinate-wise ones split them.",
        );
        reflow::controls_row(ui, |ui| {
            for rule in Rule::all() {
                let mut on = self.settings.rules.contains(&rule);
                if ui.checkbox(&mut on, rule.name()).changed() {
                    if on {
                        self.settings.rules.push(rule);
                    } else {
                        self.settings.rules.retain(|r| *r != rule);
                    }
                }
            }
        });
        let mut start = false;
        reflow::controls_row(ui, |ui| {
            let l = ui.label("steps");
            ui.add(
                egui::DragValue::new(&mut self.settings.budget)
                    .range(BUDGET)
                    .update_while_editing(false),
            )
            .labelled_by(l.id);
            let l = ui.label("problem seed");
            ui.add(egui::DragValue::new(&mut self.settings.seed).update_while_editing(false))
                .labelled_by(l.id);
            let running = self.job.as_ref().is_some_and(|j| !j.is_finished());
            if running {
                if ui.button("Stop").clicked()
                    && let Some(j) = &self.job
                {
                    j.send(LiveCommand::Cancel);
                }
            } else if ui.button(RichText::new("Run live").strong()).clicked() {
                start = true;
            }
        });
        if start {
            self.start(lab);
        }
        if self.job.is_none() {
            ui.label(RichText::new("Pick rules and press Run live.").weak());
            return;
        }
        let rules = self.rules.clone();
        let target = self.target.clone();
        let hover = lab.hover;
        let items: Vec<(Color32, String, Swatch)> = rules
            .iter()
            .enumerate()
            .map(|(i, (r, _))| (rule_color(*r, i), r.name(), Swatch::Thick))
            .collect();
        legend_row(ui, &items);
        let cells = Cells::fit(ui, "live grid", 4, PLOT_MIN_W, 2);
        let (w, h) = (cells.w, cells.height(ui.available_height(), 60.0, 420.0));
        let series = &mut self.series;
        let mut figure = None;
        let panels = [
            ("training loss (log)", "gauge loss", "loss (log scale)"),
            (
                "recovery ‖UVᵀ − X*‖F/‖X*‖F (log)",
                "gauge recovery",
                "recovery (log scale)",
            ),
        ];
        reflow::grid(ui, 4, cells, |ui, pick| match pick {
            0 | 1 => {
                let (title, id, y_label) = panels[pick];
                ui.vertical(|ui| {
                    if let Some(f) = plot_header(ui, title, None, true).figure {
                        figure = Some((pick, f));
                    }
                    log_plot(id, y_label)
                        .width(w)
                        .height(h)
                        .show_x(hover)
                        .show_y(hover)
                        .show(ui, |plot| {
                            for (i, ((r, _), s)) in rules.iter().zip(series.iter_mut()).enumerate()
                            {
                                let data = if pick == 0 {
                                    &mut s.loss
                                } else {
                                    &mut s.recovery
                                };
                                plot.line(
                                    Line::new(r.name(), PlotPoints::Borrowed(data.points()))
                                        .color(rule_color(*r, i))
                                        .width(reflow::line_width(plot.ctx(), 2.0)),
                                );
                            }
                        });
                });
            }
            2 => {
                ui.vertical(|ui| {
                    if let Some(f) = plot_header(ui, DRIFT_TITLE, None, true).figure {
                        figure = Some((2, f));
                    }
                    log_plot("gauge drift", "twin drift")
                        .width(w)
                        .height(h)
                        .show_x(hover)
                        .show_y(hover)
                        .show(ui, |plot| {
                            for (i, ((r, _), s)) in rules.iter().zip(series.iter_mut()).enumerate()
                            {
                                let c = rule_color(*r, i);
                                plot.line(
                                    Line::new(r.name(), PlotPoints::Borrowed(s.drift.points()))
                                        .color(c)
                                        .width(reflow::line_width(plot.ctx(), 2.0)),
                                );
                                plot.line(
                                    Line::new(
                                        format!("{} factors", r.name()),
                                        PlotPoints::Borrowed(s.factor_drift.points()),
                                    )
                                    .color(c)
                                    .style(LineStyle::dashed_loose())
                                    .width(reflow::line_width(plot.ctx(), 1.5)),
                                );
                            }
                        });
                });
            }
            _ => {
                ui.vertical(|ui| {
                    if let Some(f) = plot_header(ui, SPECTRUM_TITLE, None, true).figure {
                        figure = Some((3, f));
                    }
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
                            let floor = SPECTRUM_FLOOR;
                            let tl: Vec<[f64; 2]> = target
                                .iter()
                                .enumerate()
                                .map(|(k, s)| [(k + 1) as f64, s.max(floor).log10()])
                                .collect();
                            plot.line(
                                Line::new("X*", tl)
                                    .color(Color32::GRAY)
                                    .style(LineStyle::dashed_loose())
                                    .width(reflow::line_width(plot.ctx(), 2.0)),
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
                                    plot.line(
                                        Line::new(r.name(), pts)
                                            .color(rule_color(*r, i))
                                            .width(reflow::line_width(plot.ctx(), 2.0)),
                                    );
                                }
                            }
                        });
                });
            }
        });
        if let Some((pick, format)) = figure {
            let (stem, fig) = live_figure(&rules, &self.series, &target, pick);
            save_figure(lab, ui.ctx(), format, stem, egui::vec2(w, h), || fig);
        }
        for ((r, lr), s) in rules.iter().zip(self.series.iter()) {
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
}
