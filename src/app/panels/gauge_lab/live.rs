//! Live runs: a few rules trained on one problem instance, each with its gauge twin and its
//! noise twin, streaming loss, recovery and the twins' drift; the singular values at the end. The runs are the
//! library's ([`crate::sensing::live`]) on the live driver; the tab starts, drains and draws.

use eframe::egui::{self, Color32, RichText};
use serde::{Deserialize, Serialize};

use super::rule_color;
use crate::app::lab::Lab;
use crate::app::panel::{Panel, Status, from_ron, link_count, to_ron};
use crate::app::widgets::colors::text_color;
use crate::app::widgets::figure_plot;
use crate::app::widgets::plots::{Swatch, earlier_runs, legend_row, plot_header, save_figure};
use crate::app::widgets::reflow::{self, Cells, PLOT_MIN_W};
use crate::figure::{Earlier, rule_title};
use crate::history::{MinMaxSeries, Scale};
use crate::live::Live;
use crate::optim::class_word;
use crate::sensing::SensingConfig;
use crate::sensing::live::{
    Command, GaugeLive, LivePlot, MAX_PAST_LIVE, PastLive, RuleCurves, Update, live_figure,
    past_live_marks,
};
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
    /// Earlier sets of runs, newest first, drawn faded.
    past: Vec<Earlier<PastLive>>,
    /// The settings the runs on screen started from (to name what the next start changed).
    started: Option<Settings>,
    /// Chains offered beside the registered rules ([`LiveRuns::add_rule`]), kept while
    /// unticked (not saved: a saved chain that is ticked is in `settings.rules`).
    chains: Vec<Rule>,
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

impl Settings {
    /// The chosen rules in the registry's order, then the chosen chains in the order they
    /// were added (the order of the runs and their plots).
    fn chosen(&self) -> Vec<Rule> {
        let mut chosen: Vec<Rule> = (Rule::all().into_iter())
            .filter(|r| self.rules.contains(r))
            .collect();
        for &r in &self.rules {
            if r.chain_text().is_some() && !chosen.contains(&r) {
                chosen.push(r);
            }
        }
        chosen
    }

    /// What these settings have that `new` does not (`seed 0`, `budget 2000`, `rules GD,
    /// Adam`), or `same settings`.
    fn difference(&self, new: &Settings) -> String {
        let mut parts = Vec::new();
        if self.rules != new.rules {
            let names: Vec<String> = self
                .chosen()
                .iter()
                .map(|r| rule_title(&r.name()))
                .collect();
            parts.push(format!("rules {}", names.join(", ")));
        }
        if self.budget != new.budget {
            parts.push(format!("budget {}", self.budget));
        }
        if self.seed != new.seed {
            parts.push(format!("seed {}", self.seed));
        }
        if parts.is_empty() {
            "same settings".into()
        } else {
            parts.join(", ")
        }
    }
}

impl LiveRuns {
    /// Ticks `rule` (a chain the optimizer workbench hands over) for the next Run live, and
    /// offers it beside the registered rules.
    pub fn add_rule(&mut self, rule: Rule) {
        if rule.chain_text().is_some() && !self.chains.contains(&rule) {
            self.chains.push(rule);
        }
        if !self.settings.rules.contains(&rule) {
            self.settings.rules.push(rule);
        }
    }

    /// Every rule the tab offers a checkbox for: the registered ones, then the chains it was
    /// handed or its settings name.
    fn offered(&self) -> Vec<Rule> {
        let mut all = Rule::all();
        for &r in self.chains.iter().chain(&self.settings.rules) {
            if !all.contains(&r) {
                all.push(r);
            }
        }
        all
    }

    /// Live plot `plot` as the tab draws and saves it: the runs on screen over the shown
    /// earlier ones, faded.
    pub fn figure(&self, plot: LivePlot) -> crate::figure::Figure {
        let curves: Vec<RuleCurves> = self.series.iter().map(LiveSeries::curves).collect();
        let mut f = live_figure(&self.rules, &curves, &self.target, plot);
        if let crate::figure::Body::Plot { marks, .. } = &mut f.body {
            marks.splice(0..0, past_live_marks(&self.past, plot));
        }
        f
    }

    /// The final summary of each live run, in rule order (`None` while it runs).
    pub fn summaries(&self) -> Vec<Option<RunResult>> {
        self.series.iter().map(|s| s.summary.clone()).collect()
    }
}

/// What the tab keeps of one run.
struct LiveSeries {
    loss: MinMaxSeries,
    recovery: MinMaxSeries,
    drift: MinMaxSeries,
    factor_drift: MinMaxSeries,
    noise_drift: MinMaxSeries,
    spectrum: Option<Vec<f64>>,
    summary: Option<RunResult>,
    /// The noise twin's drift at the end.
    noise_end: Option<f64>,
}

impl Default for LiveSeries {
    fn default() -> Self {
        Self {
            loss: MinMaxSeries::new(Scale::Log),
            recovery: MinMaxSeries::new(Scale::Log),
            drift: MinMaxSeries::new(Scale::Log),
            factor_drift: MinMaxSeries::new(Scale::Log),
            noise_drift: MinMaxSeries::new(Scale::Log),
            spectrum: None,
            summary: None,
            noise_end: None,
        }
    }
}

impl LiveSeries {
    /// The run's series as the library's figures take them.
    fn curves(&self) -> RuleCurves {
        RuleCurves {
            loss: self.loss.raw_points(),
            recovery: self.recovery.raw_points(),
            drift: self.drift.raw_points(),
            factor_drift: self.factor_drift.raw_points(),
            noise_drift: self.noise_drift.raw_points(),
            spectrum: self.spectrum.clone(),
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
                Update::Crashed(message) => {
                    lab.error(format!(
                        "The live runs stopped on an internal error: {message}. Please report \
                         it with the settings; Run live starts them again."
                    ));
                }
                Update::Sample(s) => {
                    if let Some(series) = self.series.get_mut(s.rule) {
                        series.loss.push(s.step, s.loss);
                        series.recovery.push(s.step, s.recovery);
                        series.drift.push(s.step, s.twin_drift);
                        series.factor_drift.push(s.step, s.factor_drift);
                        series.noise_drift.push(s.step, s.noise_drift);
                    }
                }
                Update::Done {
                    rule,
                    spectrum,
                    summary,
                    noise_drift,
                } => {
                    if let Some(series) = self.series.get_mut(rule) {
                        series.spectrum = Some(spectrum);
                        series.summary = Some(summary);
                        series.noise_end = Some(noise_drift);
                    }
                }
            }
        }
    }

    /// Starts the live runs of the chosen rules (nothing if none is chosen).
    fn start(&mut self, lab: &mut Lab) -> bool {
        let rules: Vec<(Rule, f64)> = (self.settings.chosen().into_iter())
            .map(|r| (r, r.default_lr()))
            .collect();
        if rules.is_empty() {
            return true;
        }
        // The runs on screen stay, faded, named by what this start changes.
        if let Some(before) = self.started.take()
            && self.series.iter().any(|s| !s.loss.is_empty())
        {
            let run = PastLive {
                rules: std::mem::take(&mut self.rules),
                curves: self.series.iter().map(LiveSeries::curves).collect(),
            };
            let label = before.difference(&self.settings);
            Earlier::keep(&mut self.past, label, run, MAX_PAST_LIVE);
        }
        self.started = Some(self.settings.clone());
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
        true
    }

    /// Busy while its runs go on; its live step is the furthest step any run has sampled.
    fn status(&self, _lab: &Lab) -> Status {
        Status {
            busy: self.job.as_ref().is_some_and(|j| !j.is_finished()),
            awaits_run: self.job.is_none(),
            live_step: (self.series.iter())
                .filter_map(|s| s.loss.last())
                .map(|[step, _]| step as usize)
                .max(),
        }
    }

    fn link_settings(&self) -> Vec<(&'static str, String)> {
        let rules: Vec<String> = self.settings.chosen().iter().map(|r| r.name()).collect();
        vec![
            ("rules", rules.join(",")),
            ("budget", self.settings.budget.to_string()),
            ("seed", self.settings.seed.to_string()),
        ]
    }

    /// `rules` (comma-separated names, at their default arguments, and chains, whose commas
    /// stand inside parentheses: `gd,clip(max=1) | scale_by_adam(b1=0.8, b2=0.99)`),
    /// `budget` (steps per run) and `seed` (of the problem instance).
    fn set_from_link(&mut self, name: &str, value: &str, _lab: &mut Lab) -> Result<bool, String> {
        match name {
            "rules" => {
                let all = Rule::all();
                let rules: Vec<Rule> = (split_rules(value).into_iter())
                    .filter(|n| !n.is_empty())
                    .map(|n| {
                        if let Some(r) = all.iter().copied().find(|r| r.name() == n) {
                            return Ok(r);
                        }
                        // A bare name may be a chain of one transform (`normalize`); text with
                        // a chain's punctuation gets the chain's own error.
                        match Rule::chain(n) {
                            Ok(r) => return Ok(r),
                            Err(e) if n.contains(['(', '|']) => {
                                return Err(format!("`rules`: chain `{n}`: {}", e.message));
                            }
                            Err(_) => {}
                        }
                        let names: Vec<String> = all.iter().map(|r| r.name()).collect();
                        Err(format!(
                            "`rules`: no rule `{n}` (rules: {}; or a chain of transforms)",
                            names.join(", ")
                        ))
                    })
                    .collect::<Result<_, _>>()?;
                if rules.is_empty() {
                    return Err("`rules` is empty: name at least one rule".into());
                }
                self.settings.rules = rules;
            }
            "budget" => self.settings.budget = link_count(name, value, BUDGET)?,
            "seed" => {
                self.settings.seed = (value.trim().parse())
                    .map_err(|_| format!("`seed={value}` is not a whole number"))?;
            }
            _ => return Ok(false),
        }
        Ok(true)
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
        let start =
            reflow::fold_when_presenting(ui, "What the twins show, rules and steps", |ui| {
                self.settings_ui(ui)
            });
        if start == Some(true) {
            self.start(lab);
        }
        if self.job.is_none() {
            // In presentation mode, where the rules are folded away, the bar's "Run it" starts
            // the runs (Status::awaits_run).
            ui.label(RichText::new("Pick rules and press Run live.").weak());
            return;
        }
        self.plots_ui(ui, lab);
    }
}

impl LiveRuns {
    /// The caption, the rule checkboxes and the run row; true when Run live was pressed.
    fn settings_ui(&mut self, ui: &mut egui::Ui) -> bool {
        ui.label(
            "Each rule trains on one problem instance from (U, V), at the rate and schedule the zoo \
             runs it with; its gauge twin starts from (UQ, VQ), its noise twin from (U, V) moved by \
             one part in 10¹⁴ in the same basis. An equivariant rule keeps its gauge twin at \
             rounding noise until its own dynamics amplify that noise, and then its noise twin \
             rises with it; a coordinate-wise rule splits its gauge twin far beyond its noise twin. Drift: ‖U′V′ᵀ − UVᵀ‖F/‖UVᵀ‖F \
             for a twin's product, ‖U′ − UQ‖F/‖UQ‖F for the gauge twin's factors.",
        );
        reflow::controls_row(ui, |ui| {
            for rule in self.offered() {
                let mut on = self.settings.rules.contains(&rule);
                if ui.checkbox(&mut on, rule_title(&rule.name())).changed() {
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
                    j.send(Command::Cancel);
                }
            } else if ui.button(RichText::new("Run live").strong()).clicked() {
                start = true;
            }
        });
        start
    }

    /// The legend and the plots of the running or finished live runs.
    fn plots_ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        earlier_runs(
            ui,
            &mut self.past,
            "Run live keeps the runs it replaces (the last 3), named by what the next start changed",
            |_| String::new(),
        );
        let rules = &self.rules;
        let hover = lab.hover;
        let items: Vec<(Color32, String, Swatch)> = rules
            .iter()
            .enumerate()
            .map(|(i, (r, _))| (rule_color(*r, i), rule_title(&r.name()), Swatch::Thick))
            .collect();
        legend_row(ui, &items);
        let cells = Cells::fit(ui, "live grid", 4, PLOT_MIN_W, 2);
        let (w, h) = (cells.w, cells.height(ui.available_height(), 60.0, 420.0));
        let figure_of = |plot| self.figure(plot);
        let mut figure = None;
        reflow::grid(ui, 4, cells, |ui, i| {
            let plot = LivePlot::ALL[i];
            ui.vertical(|ui| {
                if let Some(f) = plot_header(ui, plot.title(), None, true).figure {
                    figure = Some((plot, f));
                }
                let id = [
                    "gauge loss",
                    "gauge recovery",
                    "gauge drift",
                    "gauge spectrum",
                ][i];
                figure_plot::plot(ui, id, &figure_of(plot), [Some(w), Some(h)], hover);
            });
        });
        if let Some((plot, format)) = figure {
            let fig = figure_of(plot);
            save_figure(lab, ui.ctx(), format, plot.stem(), egui::vec2(w, h), || fig);
        }
        for (i, ((r, lr), s)) in rules.iter().zip(self.series.iter()).enumerate() {
            if let Some(sum) = &s.summary {
                ui.label(
                    RichText::new(format!(
                        "{} ({}, lr {lr}): {:?} after {} steps; recovery {:.2e}, effective rank {:.2}, \
                         drift of the gauge twin {:.1e}, of the noise twin {:.1e}",
                        rule_title(&r.name()),
                        class_word(r.chain_text().is_some(), r.equivariant()),
                        sum.outcome,
                        sum.steps,
                        sum.recovery,
                        sum.erank,
                        sum.twin_drift.unwrap_or(f64::NAN),
                        s.noise_end.unwrap_or(f64::NAN),
                    ))
                    .color(text_color(rule_color(*r, i), ui.visuals())),
                );
            }
        }
    }
}

/// A `rules` link value split at its commas outside parentheses (a chain's arguments keep
/// theirs), each piece trimmed.
fn split_rules(value: &str) -> Vec<&str> {
    let (mut pieces, mut depth, mut from) = (Vec::new(), 0usize, 0);
    for (i, c) in value.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                pieces.push(value[from..i].trim());
                from = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(value[from..].trim());
    pieces
}
