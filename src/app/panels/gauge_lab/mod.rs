//! The gauge lab: factored matrix sensing `W = U Vᵀ`, the optimizer zoo split by class, the
//! anisotropy dial, the spectral tail, and live runs with their gauge twins. A tab is one file
//! here plus one line in [`GaugeLab::default`].

mod dial;
mod hsi;
mod live;
mod tail;
mod zoo;

pub use hsi::HsiTab;
pub use live::LiveRuns;

use eframe::egui::{self, Color32, RichText};
use serde::{Deserialize, Serialize};

use crate::app::analysis::{Analysis, threads};
use crate::app::lab::Lab;
use crate::app::panel::{Panel, Status, Table, Tabs, from_ron, to_ron};
use crate::app::widgets::colors::optimizer_color;
use crate::app::widgets::figure_plot;
use crate::app::widgets::plots::{export_button, export_table, figure_menu, save_figure};
use crate::app::widgets::reflow;
use crate::app::widgets::status::{before_results, progress_row};
use crate::figure::Figure;
use crate::sensing::zoo::{
    Rule, RunResult, ZooPreset, ZooTask, ZooTrial, bundled_zoo, csv_bytes, is_reference, summarise,
};
use crate::validate::check_count;

/// The section's id (its path, for [`Lab::handed`]: a chain handed here joins the zoo tab's
/// preset and the live runs).
pub const ID: &str = "gauge";

/// The gauge-lab section and its tabs.
pub struct GaugeLab {
    tabs: Tabs,
}

impl Default for GaugeLab {
    fn default() -> Self {
        let tabs = Tabs::new(vec![
            Box::new(zoo::tab()),
            Box::new(dial::tab()),
            Box::new(tail::tab()),
            Box::new(HsiTab::default()),
            Box::new(LiveRuns::default()),
        ]);
        Self { tabs }
    }
}

impl Panel for GaugeLab {
    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "Gauge lab"
    }

    fn separated(&self) -> bool {
        true
    }

    fn logic(&mut self, lab: &mut Lab) {
        for text in lab.take_handed(ID) {
            self.add_chain(&text, lab);
        }
        self.tabs.logic(lab);
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        // Presentation mode's bar names the section already.
        if !reflow::presenting(ui.ctx()) {
            reflow::heading_row(
                ui,
                "Gauge lab",
                "W = U Vᵀ on matrix sensing: the loss cannot see (U, V) → (UQ, VQ)",
            );
        }
        self.tabs.bar(ui);
        ui.separator();
        self.tabs.open_mut().ui(ui, lab);
    }

    fn start(&mut self, lab: &mut Lab) -> bool {
        self.tabs.open_mut().start(lab)
    }

    fn status(&self, lab: &Lab) -> Status {
        self.tabs.open().status(lab)
    }

    fn tabs(&self) -> Option<&Tabs> {
        Some(&self.tabs)
    }

    fn tabs_mut(&mut self) -> Option<&mut Tabs> {
        Some(&mut self.tabs)
    }

    fn save(&self) -> Option<String> {
        to_ron(&self.tabs.open().id())
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let tab: String = from_ron(ron)?;
        self.tabs.select(&tab);
        Ok(Vec::new())
    }
}

impl GaugeLab {
    /// Adds chain `text` as a rule to the zoo tab's preset and to the live runs' rules; one
    /// notice says where it went, or why it did not.
    fn add_chain(&mut self, text: &str, lab: &mut Lab) {
        let rule = match Rule::chain(text) {
            Ok(r) => r,
            Err(e) => {
                lab.error(format!(
                    "The chain was not added to the gauge lab: {}",
                    e.message
                ));
                return;
            }
        };
        let zoo = (self.tabs.find_mut("zoo"))
            .and_then(|t| (t as &mut dyn std::any::Any).downcast_mut::<SweepTab>())
            .map(|t| t.add_rule(rule));
        let live = (self.tabs.find_mut("live"))
            .and_then(|t| (t as &mut dyn std::any::Any).downcast_mut::<LiveRuns>())
            .map(|t| t.add_rule(rule));
        match (zoo, live) {
            (Some(Ok(preset)), Some(())) => lab.inform(format!(
                "Added your chain to the gauge lab at lr {:e}: to the zoo's preset `{preset}` \
                 (Optimizer zoo, Run) and to the live runs (Live runs and twins, Run live).",
                rule.default_lr()
            )),
            (Some(Err(e)), _) => lab.error(format!(
                "The chain was not added to the gauge lab's zoo: {e}"
            )),
            _ => lab.error("The gauge lab has no zoo or live tab to take the chain"),
        }
    }
}

/// The range of a sweep tab's seeds per cell.
const SEEDS: std::ops::RangeInclusive<usize> = 1..=50;

/// A tab that runs a bundled zoo preset (at its own seed count) in the background and plots the
/// result: the zoo, the dial and the tail.
pub struct SweepTab {
    id: &'static str,
    title: &'static str,
    /// The bundled zoo preset it runs.
    bundled: &'static str,
    about: &'static str,
    /// The plot, drawn on screen and saved by "Save figure…".
    figure: FigureFn,
    /// What the tab shows below the plot (the zoo's table), if anything.
    below: Option<BelowFn>,
    /// Seeds per cell.
    pub seeds: usize,
    /// The last sweep and the preset it ran.
    pub analysis: Analysis<ZooPreset, Vec<RunResult>>,
    /// A page link's zoo preset, or the bundled one with rules the optimizer workbench added,
    /// run in place of the bundled one (not saved).
    linked: Option<ZooPreset>,
}

/// What a sweep tab saves.
#[derive(Serialize, Deserialize)]
#[serde(default)]
struct Saved {
    seeds: usize,
    analysis: Analysis<ZooPreset, Vec<RunResult>>,
}

impl Default for Saved {
    fn default() -> Self {
        Self {
            seeds: 3,
            analysis: Analysis::default(),
        }
    }
}

/// The work of a zoo preset for [`Analysis::start`]: its runs' gradient evaluations at most
/// ([`ZooPreset::work`]; a run that converges early takes less, so the estimate leans long).
fn zoo_work(preset: &ZooPreset) -> f64 {
    preset.work()
}

/// A sweep tab's plot as a figure, from its preset and runs.
type FigureFn = fn(&ZooPreset, &[RunResult]) -> Figure;
/// Draws what a sweep tab shows below its plot, from its runs.
type BelowFn = fn(&mut egui::Ui, &[RunResult]);

impl SweepTab {
    fn new(
        (id, title): (&'static str, &'static str),
        bundled: &'static str,
        about: &'static str,
        (figure, below): (FigureFn, Option<BelowFn>),
    ) -> Self {
        Self {
            id,
            title,
            bundled,
            about,
            figure,
            below,
            seeds: 3,
            analysis: Analysis::default(),
            linked: None,
        }
    }

    /// The preset it runs: a link's (or the workbench's edit), else the bundled one, with the
    /// tab's seed count.
    pub fn preset(&self) -> ZooPreset {
        let base = (self.linked.clone()).unwrap_or_else(|| bundled_zoo(self.bundled));
        ZooPreset {
            seeds: self.seeds,
            ..base
        }
    }

    /// Adds `rule` to the preset the tab runs (which then replaces the bundled one, as a
    /// link's does) at the rule's own rate; returns the preset's name. Nothing changes when
    /// it is there already. Errors (nothing changes): the preset would be invalid (more than
    /// [`crate::sensing::zoo::MAX_RULES`] rules or [`crate::sensing::zoo::MAX_CELLS`] runs).
    pub fn add_rule(&mut self, rule: Rule) -> Result<String, String> {
        let mut p = self.preset();
        if p.rules.contains(&rule) {
            return Ok(p.name);
        }
        p.rules.push(rule);
        // A preset-wide `rates` or `grid` would run it elsewhere than its own rate.
        if p.rates_for(rule) != [rule.default_lr()] {
            p.rule_rates.0.push((rule, vec![rule.default_lr()]));
        }
        p.validate().map_err(|e| e.to_string())?;
        let name = p.name.clone();
        self.linked = Some(p);
        Ok(name)
    }
}

impl Panel for SweepTab {
    fn id(&self) -> &'static str {
        self.id
    }

    fn title(&self) -> &'static str {
        self.title
    }

    fn logic(&mut self, lab: &mut Lab) {
        self.analysis.poll("Gauge sweep", lab);
    }

    /// Starts the sweep in the background, unless one is running.
    fn start(&mut self, lab: &mut Lab) -> bool {
        if self.analysis.is_running() {
            return true;
        }
        let preset = self.preset();
        let total = preset.units();
        let work = zoo_work(&preset);
        let task = ZooTask::new(preset.clone());
        self.analysis
            .start(preset, total, work, lab.repaint_handle(), task);
        true
    }

    fn table(&self) -> Option<Table> {
        let runs = &self.analysis.last.as_ref()?.result;
        Some(("zoo.csv".into(), csv_bytes(runs, &summarise(runs))))
    }

    fn status(&self, _lab: &Lab) -> Status {
        self.analysis.status()
    }

    fn save(&self) -> Option<String> {
        /// [`Saved`], borrowed.
        #[derive(Serialize)]
        struct SavedRef<'a> {
            seeds: usize,
            analysis: &'a Analysis<ZooPreset, Vec<RunResult>>,
        }
        to_ron(&SavedRef {
            seeds: self.seeds,
            analysis: &self.analysis,
        })
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let mut s: Saved = from_ron(ron)?;
        let mut notes = Vec::new();
        check_count(
            &mut notes,
            "seeds",
            &mut s.seeds,
            SEEDS,
            Saved::default().seeds,
        );
        let what = format!("gauge-lab {} sweep", self.id);
        notes.extend(s.analysis.check_saved(&what, |f| {
            f.inputs.check_runs(&f.result)?;
            Ok(f)
        }));
        (self.seeds, self.analysis) = (s.seeds, s.analysis);
        Ok(notes)
    }

    /// The preset it runs, seeds included, as a link carries it.
    fn share(&self) -> Option<String> {
        Some(crate::share::encode(&self.preset()))
    }

    /// A zoo preset's share string (`bz1:…`) replaces the bundled preset, its seeds included.
    fn open_shared(&mut self, text: &str) -> Option<Result<String, String>> {
        let prefix = format!("{}:", <ZooPreset as crate::share::Shareable>::PREFIX);
        if !text.starts_with(&prefix) {
            return None;
        }
        let preset = crate::share::decode::<ZooPreset>(text).map_err(|e| e.to_string());
        Some(preset.and_then(|p| {
            if !SEEDS.contains(&p.seeds) {
                return Err(format!("seeds {} outside {SEEDS:?}", p.seeds));
            }
            let name = p.name.clone();
            self.seeds = p.seeds;
            self.linked = Some(p);
            Ok(name)
        }))
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        ui.label(self.about);
        if let Some(p) = &self.linked {
            let added: Vec<&str> = p.rules.iter().filter_map(|r| r.chain_text()).collect();
            let text = if added.is_empty() {
                format!("Runs the link's preset `{}`: {}", p.name, p.description)
            } else {
                format!(
                    "Runs the preset `{}` with the chain{} {}: {}",
                    p.name,
                    if added.len() == 1 { "" } else { "s" },
                    added
                        .iter()
                        .map(|t| format!("`{t}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    p.description
                )
            };
            ui.label(RichText::new(text).weak());
        }
        let mut start = false;
        let mut export = false;
        let mut figure = None;
        reflow::controls_row(ui, |ui| {
            let l = ui.label("seeds");
            ui.add(
                egui::DragValue::new(&mut self.seeds)
                    .range(SEEDS)
                    .update_while_editing(false),
            )
            .labelled_by(l.id);
            // One preset per frame for the count and the estimate (it is built, not kept).
            let preset = self.preset();
            ui.label(RichText::new(format!("{} runs", preset.units())).weak());
            // The pace does not depend on the seed count: dragging it tries nothing new.
            let key = ZooPreset {
                seeds: 1,
                ..preset.clone()
            };
            self.analysis
                .calibrate_in_background(&key, &lab.repaint_handle(), || ZooTrial(key.clone()));
            let parallel = threads().min(preset.units());
            let estimate = self.analysis.estimate(zoo_work(&preset), parallel);
            start = progress_row(ui, self.analysis.job(), "runs", "Run", true, estimate);
            if self.analysis.last.is_some() {
                export = export_button(ui, "Save every run of the sweep (zoo.csv)");
                figure = figure_menu(ui);
            }
        });
        if start {
            self.start(lab);
        }
        let Some(last) = &self.analysis.last else {
            before_results(ui, self.analysis.is_running(), "No results yet: press Run.");
            return;
        };
        let (preset, runs) = (&last.inputs, &last.result);
        if export && let Some((name, bytes)) = self.table() {
            export_table(lab, &name, "The sweep is still here", || bytes);
        }
        let fig = (self.figure)(preset, runs);
        if let Some(format) = figure {
            let stem = format!("gauge_{}", self.id);
            let size = egui::vec2(ui.available_width().min(900.0), 480.0);
            save_figure(lab, ui.ctx(), format, &stem, size, || fig.clone());
        }
        let own: String = preset
            .rule_budgets
            .0
            .iter()
            .map(|(r, b)| format!(", {} {b}", crate::figure::rule_title(&r.name())))
            .collect();
        ui.label(
            RichText::new(format!(
                "Last sweep: {} seeds × {} steps{own}; {} runs.",
                preset.seeds,
                preset.budget,
                runs.len()
            ))
            .weak(),
        );
        // Leave room for a table below (a row per rule, and the convex reference's) when there
        // is one.
        let rows = summarise(runs).len() + runs.iter().any(is_reference) as usize;
        let below = match self.below {
            Some(_) => 40.0 * rows as f32 + 60.0,
            None => 20.0,
        };
        let h = (ui.available_height() - below).clamp(240.0, 520.0);
        figure_plot::show(ui, self.id, &fig, [None, Some(h)], lab.hover);
        if let Some(below) = self.below {
            below(ui, runs);
        }
    }
}

/// A rule's colour: the optimizer colour it shares with the key lab, the figures and the page.
fn rule_color(rule: Rule, i: usize) -> Color32 {
    optimizer_color(rule.info().name, i)
}

/// The colour of the rule a zoo table names `name` ([`crate::figure::rule_rgb`], the
/// figures' map: `dial_p0.3` takes the dial's colour; an unknown name the palette's number `i`).
fn named_rule_color(name: &str, i: usize) -> Color32 {
    let [r, g, b] = crate::figure::rule_rgb(name, i);
    Color32::from_rgb(r, g, b)
}
