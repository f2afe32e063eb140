//! The seed sweep: the current settings over several seeds, each arm's final excess A(K)
//! against the spread random rotations of the same keys give (the library call of
//! `basis-lab sweep`).

use eframe::egui::{self, RichText};
use serde::{Deserialize, Serialize};

use crate::app::analysis::{Analysis, paired_work, threads};
use crate::app::lab::Lab;
use crate::app::panel::{Panel, Status, Table, from_ron, link_count, to_ron};
use crate::app::widgets::colors::{optimizer_color, text_color};
use crate::app::widgets::figure_plot;
use crate::app::widgets::plots::{export_button, export_table, figure_menu, save_figure};
use crate::app::widgets::reflow;
use crate::app::widgets::status::{before_results, progress_row, stale_note};
use crate::experiment::figures;
use crate::experiment::{SweepResult, SweepTask, report};
use crate::live::TRIAL_STEPS;
use crate::preset::Preset;
use crate::validate::check_count;

/// The seed count's range.
const SEEDS: std::ops::RangeInclusive<usize> = 2..=256;

/// The seed-sweep tab: its seed count and its last sweep.
#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct SeedSweep {
    /// Seeds in a sweep.
    pub seeds: usize,
    /// The sweep and the preset it ran.
    pub analysis: Analysis<Preset, SweepResult>,
}

impl Default for SeedSweep {
    fn default() -> Self {
        Self {
            seeds: 8,
            analysis: Analysis::default(),
        }
    }
}

impl Panel for SeedSweep {
    fn id(&self) -> &'static str {
        "sweep"
    }

    fn title(&self) -> &'static str {
        "Seed sweep"
    }

    fn logic(&mut self, lab: &mut Lab) {
        self.analysis.poll("Sweep", lab);
    }

    /// Starts a seed sweep of the current preset.
    fn start(&mut self, lab: &mut Lab) -> bool {
        let (preset, seeds) = (lab.preset.clone(), self.seeds.max(1));
        let task = SweepTask::new(preset.clone(), seeds);
        let work = paired_work(&preset, seeds);
        self.analysis
            .start(preset, seeds, work, lab.repaint_handle(), task);
        true
    }

    fn table(&self) -> Option<Table> {
        let last = self.analysis.last.as_ref()?;
        Some(("sweep.csv".into(), report::sweep_csv(&last.result)))
    }

    fn link_settings(&self) -> Vec<(&'static str, String)> {
        vec![("seeds", self.seeds.to_string())]
    }

    /// `seeds`: seeds in the sweep.
    fn set_from_link(&mut self, name: &str, value: &str, _lab: &mut Lab) -> Result<bool, String> {
        match name {
            "seeds" => self.seeds = link_count(name, value, SEEDS)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn status(&self, _lab: &Lab) -> Status {
        self.analysis.status()
    }

    fn save(&self) -> Option<String> {
        to_ron(self)
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let mut s: SeedSweep = from_ron(ron)?;
        let mut notes = Vec::new();
        check_count(
            &mut notes,
            "seeds",
            &mut s.seeds,
            SEEDS,
            Self::default().seeds,
        );
        notes.extend(s.analysis.check_saved("seed sweep", |mut f| {
            f.result = f.result.checked()?;
            Ok(f)
        }));
        *self = s;
        Ok(notes)
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        ui.add_space(4.0);
        ui.label(
            "One seed proves nothing about A(K). The sweep repeats the current settings over several \
             seeds (in parallel) and compares each arm's final excess A(K) − baseline mean with the \
             spread that random rotations of the same keys produce.",
        );
        let mut start = false;
        let mut export = false;
        let mut figure = None;
        reflow::controls_row(ui, |ui| {
            let l = ui.label("seeds");
            ui.add(egui::DragValue::new(&mut self.seeds).range(SEEDS))
                .labelled_by(l.id);
            ui.label(
                RichText::new(format!(
                    "starting at seed {}, {} steps each",
                    lab.preset.seed, lab.preset.steps
                ))
                .weak(),
            );
            let parallel = threads().min(self.seeds.max(1));
            self.analysis.calibrate(&lab.preset, || {
                crate::experiment::sweep::trial_pace(&lab.preset, TRIAL_STEPS)
            });
            let estimate = self
                .analysis
                .estimate(paired_work(&lab.preset, self.seeds.max(1)), parallel);
            start = progress_row(
                ui,
                self.analysis.job(),
                "seeds",
                "Run sweep",
                true,
                estimate,
            );
            if self.analysis.last.is_some() {
                export = export_button(ui, "Save the sweep's table (sweep.csv)");
                figure = figure_menu(ui);
            }
        });
        if start {
            self.start(lab);
        }
        let Some(last) = &self.analysis.last else {
            before_results(ui, self.analysis.is_running(), "No sweep yet.");
            return;
        };
        let result = &last.result;
        if export && let Some((name, bytes)) = self.table() {
            export_table(lab, &name, "The sweep is still here", || bytes);
        }
        if let Some(format) = figure {
            let size = egui::vec2(ui.available_width().min(900.0), 480.0);
            save_figure(lab, ui.ctx(), format, "sweep", size, || {
                figures::sweep_figure(result)
            });
        }
        if self.analysis.is_running() {
            ui.label(
                RichText::new("A new sweep is running; below are the previous results.").weak(),
            );
        }
        if !result.preset.same_experiment(&lab.preset) {
            let p = &result.preset;
            stale_note(
                ui,
                lab,
                format!(
                    "preset “{}”, seed {}, {} arms",
                    p.name,
                    p.seed,
                    p.arms.len()
                ),
            );
        }
        let n_arms = result.aggregate.len();
        let h = (ui.available_height() - 40.0 * n_arms as f32 - 60.0).max(reflow::PLOT_MIN_H);
        figure_plot::show(
            ui,
            "sweep",
            &figures::sweep_figure(result),
            [None, Some(h)],
            lab.hover,
        );
        ui.add_space(4.0);
        for (i, a) in result.aggregate.iter().enumerate() {
            let optimizer = result
                .preset
                .arms
                .get(i)
                .map_or(a.arm.as_str(), |s| s.optimizer.as_str());
            if a.seeds_ok < 2 {
                ui.label(
                    RichText::new(format!(
                        "{}: only {} of {} seeds finished without diverging — too few for a verdict",
                        a.arm,
                        a.seeds_ok,
                        result.seeds.len()
                    ))
                    .color(text_color(optimizer_color(optimizer, i), ui.visuals())),
                );
                continue;
            }
            let verdict = a.verdict().explained();
            ui.label(
                RichText::new(format!(
                    "{}: mean excess {:+.2e} ± {:.2e} over {} seeds; baseline sd {:.2e}; {} of {} seeds outside the 5–95% band; twin divergence {:.1e} → {verdict}",
                    a.arm,
                    a.excess_mean,
                    a.excess_sd,
                    a.seeds_ok,
                    a.baseline_sd_mean,
                    a.outside_band,
                    a.seeds_ok,
                    a.orientation_div_mean,
                ))
                .color(text_color(optimizer_color(optimizer, i), ui.visuals())),
            );
        }
    }
}
