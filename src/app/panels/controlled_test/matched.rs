//! Matched budget against matched loss: every arm measured at the step the reference arm
//! crosses each rung of a ladder of held-out loss levels, and at the step it crosses it itself
//! (the library call of `basis-lab matched`), as a table with verdicts.

use eframe::egui::{self, Color32, RichText};
use serde::{Deserialize, Serialize};

use crate::app::analysis::{Analysis, paired_work};
use crate::app::lab::Lab;
use crate::app::panel::{Panel, Status, Table, from_ron, link_count, to_ron};
use crate::app::widgets::colors::{optimizer_color, text_color};
use crate::app::widgets::plots::{export_button, export_table};
use crate::app::widgets::reflow;
use crate::app::widgets::status::{before_results, progress_row, stale_note};
use crate::experiment::matched::{MatchedReport, MatchedTask};
use crate::experiment::report;
use crate::live::TRIAL_STEPS;
use crate::preset::Preset;
use crate::validate::check_count;

/// The range of the number of loss levels.
const LEVELS: std::ops::RangeInclusive<usize> = 1..=50;

/// The matched-loss tab: its setting and its last comparison.
#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct Matched {
    /// Loss levels of the ladder.
    pub levels: usize,
    /// The comparison and the preset it ran.
    pub analysis: Analysis<Preset, MatchedReport>,
}

impl Default for Matched {
    fn default() -> Self {
        Self {
            levels: 6,
            analysis: Analysis::default(),
        }
    }
}

impl Panel for Matched {
    fn id(&self) -> &'static str {
        "matched"
    }

    fn title(&self) -> &'static str {
        "Matched loss"
    }

    fn logic(&mut self, lab: &mut Lab) {
        self.analysis.poll("Matched comparison", lab);
    }

    /// Starts the comparison of the current preset.
    fn start(&mut self, lab: &mut Lab) -> bool {
        let (preset, levels) = (lab.preset.clone(), self.levels);
        let task = MatchedTask {
            preset: preset.clone(),
            levels,
        };
        let (work, arms) = (paired_work(&preset, 1), preset.arms.len());
        self.analysis
            .start(preset, arms, work, lab.repaint_handle(), task);
        true
    }

    fn table(&self) -> Option<Table> {
        let last = self.analysis.last.as_ref()?;
        Some(("matched.csv".into(), report::matched_csv(&last.result)))
    }

    fn link_settings(&self) -> Vec<(&'static str, String)> {
        vec![("levels", self.levels.to_string())]
    }

    /// `levels`: loss levels of the ladder.
    fn set_from_link(&mut self, name: &str, value: &str, _lab: &mut Lab) -> Result<bool, String> {
        match name {
            "levels" => self.levels = link_count(name, value, LEVELS)?,
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
        let mut s: Matched = from_ron(ron)?;
        let mut notes = Vec::new();
        check_count(
            &mut notes,
            "levels",
            &mut s.levels,
            LEVELS,
            Self::default().levels,
        );
        notes.extend(s.analysis.check_saved("matched comparison", |f| {
            f.result.check(&f.inputs)?;
            Ok(f)
        }));
        *self = s;
        Ok(notes)
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        ui.label(
            "Comparing arms at the same step rewards whichever learns fastest. Here every arm is also \
             measured at the first evaluation where its held-out loss crosses each rung of a ladder \
             of levels (from the initial loss down to the best loss every arm reaches). An effect that \
             survives at matched loss belongs to the representation; one that vanishes was speed.",
        );
        let mut start = false;
        let mut export = false;
        reflow::controls_row(ui, |ui| {
            let l = ui.label("loss levels");
            ui.add(
                egui::DragValue::new(&mut self.levels)
                    .range(LEVELS)
                    .update_while_editing(false),
            )
            .labelled_by(l.id);
            ui.label(
                RichText::new(format!(
                    "reference arm: the preset's first; {} steps",
                    lab.preset.steps
                ))
                .weak(),
            );
            self.analysis.calibrate(&lab.preset, || {
                crate::experiment::sweep::trial_pace(&lab.preset, TRIAL_STEPS)
            });
            let estimate = self.analysis.estimate(paired_work(&lab.preset, 1), 1);
            start = progress_row(
                ui,
                self.analysis.job(),
                "runs",
                "Run comparison",
                false,
                estimate,
            );
            if self.analysis.is_running() {
                ui.label("running the preset twice (the second pass replays it to measure)…");
            } else if self.analysis.last.is_some() {
                export = export_button(ui, "Save the comparison's table (matched.csv)");
            }
        });
        if start {
            self.start(lab);
        }
        let Some(last) = &self.analysis.last else {
            before_results(ui, self.analysis.is_running(), "No comparison yet.");
            return;
        };
        let (ran, report) = (&last.inputs, &last.result);
        if export && let Some((name, bytes)) = self.table() {
            export_table(lab, &name, "The comparison is still here", || bytes);
        }
        if !ran.same_experiment(&lab.preset) {
            stale_note(ui, lab, format!("preset “{}”, seed {}", ran.name, ran.seed));
        }
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
                .color(text_color(color(&v.arm), ui.visuals()))
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
        reflow::table(
            ui,
            "matched table",
            |ui| {
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
            },
            |ui| {
                for &level in &report.levels {
                    let arms: Vec<&str> = report
                        .rows
                        .iter()
                        .filter(|r| r.level == level && r.kind == "budget")
                        .map(|r| r.arm.as_str())
                        .collect();
                    for arm in arms {
                        let find = |kind: &str| {
                            report
                                .rows
                                .iter()
                                .find(|r| r.level == level && r.kind == kind && r.arm == arm)
                        };
                        let (Some(b), Some(l)) = (find("budget"), find("loss")) else {
                            continue;
                        };
                        ui.monospace(format!("{level:.4}"));
                        ui.label(RichText::new(arm).color(text_color(color(arm), ui.visuals())));
                        let step = |s: Option<usize>| s.map_or("never".into(), |s| s.to_string());
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
            },
        );
    }
}
