//! §5 The controlled test: every arm trained from W0 and from Q·W0 on one episode stream, live
//! (the explainer's Demo 4), and the analyses of the full argument in tabs: the memory and its
//! reads, the seed sweep, the ε sweep, matched loss and the d_k sweep. A tab is one file here
//! plus one line in [`ControlledTest::default`].

mod activations;
mod live;
mod matched;
mod points;
mod seed_sweep;
mod settings;

pub use activations::Activations;
pub use live::{Export, Live, Settings as LiveSettings, export_csv_to, live_figure, plot_csv};
pub use matched::Matched;
pub use points::{DkSweep, EpsSweep, PointsTab, TabAxis};
pub use seed_sweep::SeedSweep;

use eframe::egui::{self, Color32, RichText};
use serde::{Deserialize, Serialize};

use crate::app::lab::Lab;
use crate::app::panel::{Panel, Status, Tabs, from_ron, to_ron};
use crate::app::widgets::colors::optimizer_color;
use crate::app::widgets::plots::Swatch;
use crate::app::widgets::reflow;
use crate::experiment::live::Command;
use crate::history::ArmHistory;
use crate::validate::check_count;

/// The controlled-test section: toolbar, tabs and the settings column.
pub struct ControlledTest {
    tabs: Tabs,
    /// Steps taken by "Step N".
    step_n: usize,
    about_open: bool,
}

impl Default for ControlledTest {
    fn default() -> Self {
        Self {
            tabs: Tabs::new(vec![
                Box::new(Live::default()),
                Box::new(Activations::default()),
                Box::new(SeedSweep::default()),
                Box::new(EpsSweep::default()),
                Box::new(Matched::default()),
                Box::new(DkSweep::default()),
            ]),
            step_n: 100,
            about_open: false,
        }
    }
}

/// The range of "Step N".
const STEP_N: std::ops::RangeInclusive<usize> = 1..=1_000_000;

/// What the section saves besides its tabs.
#[derive(Serialize, Deserialize)]
#[serde(default)]
struct Saved {
    tab: String,
    step_n: usize,
}

impl Default for Saved {
    fn default() -> Self {
        Self {
            tab: "live".into(),
            step_n: 100,
        }
    }
}

impl Panel for ControlledTest {
    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "5  The controlled test"
    }

    fn logic(&mut self, lab: &mut Lab) {
        self.tabs.logic(lab);
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        self.content(ui, lab);
    }

    fn has_side(&self) -> bool {
        true
    }

    fn side_ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        settings::ui(ui, lab);
    }

    fn start(&mut self, lab: &mut Lab) -> bool {
        self.tabs.open_mut().start(lab)
    }

    /// The open tab's, busy also until the live run reaches its stop.
    fn status(&self, lab: &Lab) -> Status {
        let h = &lab.history;
        let target = lab.stop.at_step.unwrap_or(lab.preset.steps);
        let tab = self.tabs.open().status(lab);
        Status {
            busy: h.running || h.step < target || tab.busy,
            ..tab
        }
    }

    fn tabs(&self) -> Option<&Tabs> {
        Some(&self.tabs)
    }

    fn tabs_mut(&mut self) -> Option<&mut Tabs> {
        Some(&mut self.tabs)
    }

    fn save(&self) -> Option<String> {
        to_ron(&Saved {
            tab: self.tabs.open().id().into(),
            step_n: self.step_n,
        })
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let mut s: Saved = from_ron(ron)?;
        let mut notes = Vec::new();
        check_count(
            &mut notes,
            "step_n",
            &mut s.step_n,
            STEP_N,
            Saved::default().step_n,
        );
        self.tabs.select(&s.tab);
        self.step_n = s.step_n;
        Ok(notes)
    }
}

impl ControlledTest {
    fn content(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        let mut about = self.about_open;
        // Presentation mode's bar names the section: the heading and the preset's
        // description fold away so the plots keep a projector's height.
        reflow::fold_when_presenting(ui, "About this run", |ui| {
            reflow::heading_row(
                ui,
                "5 · The controlled test",
                "every arm trained twice — from W0 and from Q·W0 — on the same episodes",
            );
            ui.horizontal_wrapped(|ui| {
                if ui
                    .selectable_label(about, "What am I looking at?")
                    .on_hover_text("How to read the four plots and the table")
                    .clicked()
                {
                    about = !about;
                }
                let p = &lab.preset;
                ui.label(RichText::new(format!("preset “{}”: {}", p.name, p.description)).weak());
            });
        });
        egui::Window::new("What am I looking at?")
            .open(&mut about)
            .default_width(640.0)
            .default_height(520.0)
            .vscroll(true)
            .show(ui.ctx(), |ui| super::explainer::text(ui, "test"));
        self.about_open = about;
        crash_banner(ui, lab);
        self.toolbar(ui, lab);
        ui.separator();
        self.tabs.bar(ui);
        self.tabs.open_mut().ui(ui, lab);
    }

    fn toolbar(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        let running = lab.history.running;
        let budget = lab.stop.at_step.unwrap_or(lab.preset.steps);
        // One row on a projector: Play, Step, Reset and where the run is.
        let compact = reflow::presenting(ui.ctx());
        reflow::controls_row(ui, |ui| {
            let play = if running { "❚❚ Pause" } else { "▶ Play" };
            if ui
                .button(RichText::new(play).strong())
                .on_hover_text("Space")
                .clicked()
            {
                lab.toggle_play();
            }
            if ui.button("Step").on_hover_text("Period (.)").clicked() {
                lab.send(Command::Step(1));
            }
            if !compact {
                if ui.button(format!("Step {}", self.step_n)).clicked() {
                    lab.send(Command::Step(self.step_n));
                }
                let n_label = ui.label("N");
                ui.add(egui::DragValue::new(&mut self.step_n).range(STEP_N))
                    .labelled_by(n_label.id);
            }
            if ui
                .button("⟲ Reset")
                .on_hover_text("R — back to step 0 with the same W0, Q and episodes")
                .clicked()
            {
                lab.send(Command::Reset);
            }
            if !compact
                && ui
                    .button("New seed")
                    .on_hover_text("New W0, Q and episodes (seed + 1); restarts")
                    .clicked()
            {
                let mut p = lab.preset.clone();
                p.seed = p.seed.wrapping_add(1);
                lab.apply_preset(p);
            }
            ui.separator();
            let h = &lab.history;
            ui.label(
                RichText::new(format!("step {} / {budget}", h.step))
                    .monospace()
                    .strong(),
            );
            if running {
                ui.label(RichText::new(format!("{:.0} steps/s", h.steps_per_sec)).weak());
            } else if compact {
                ui.label(RichText::new("paused").weak());
            } else if let Some(why) = &h.stopped {
                ui.label(RichText::new(format!("paused: {why}")).weak());
            } else {
                ui.label(RichText::new("paused").weak());
            }
            if !compact {
                ui.label(RichText::new(format!("seed {}", lab.preset.seed)).weak());
            }
        });
    }
}

/// Whether the keys and statistics on screen lag the run's current step.
fn snapshot_behind(lab: &Lab) -> bool {
    let h = &lab.history;
    h.snapshot.as_ref().is_none_or(|s| s.step != h.step)
}

/// The section's id, for the shell's [`run_keys`].
pub const ID: &str = "test";

/// The run's keys while this section is open: Space plays or pauses, `.` takes one step, R
/// resets, wherever the keyboard focus is (the section list, a button) unless it is in a text
/// field. The shell calls this before it draws anything, so a focused button or section entry
/// never takes Space as a click.
pub fn run_keys(ctx: &egui::Context, lab: &mut Lab) {
    if ctx.text_edit_focused() {
        return;
    }
    let (space, period, r) = ctx.input_mut(|i| {
        (
            i.consume_key(egui::Modifiers::NONE, egui::Key::Space),
            i.consume_key(egui::Modifiers::NONE, egui::Key::Period),
            i.consume_key(egui::Modifiers::NONE, egui::Key::R),
        )
    });
    if space {
        lab.toggle_play();
    }
    if period {
        lab.send(Command::Step(1));
    }
    if r {
        lab.send(Command::Reset);
    }
}

/// The red banner of a crashed trainer, with its restart button.
fn crash_banner(ui: &mut egui::Ui, lab: &mut Lab) {
    let Some(msg) = lab.crashed.clone() else {
        return;
    };
    egui::Frame::new()
        .fill(Color32::from_rgb(150, 20, 20))
        .inner_margin(8.0)
        .corner_radius(4.0)
        .show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label(
                    RichText::new(format!("The training worker crashed: {msg}"))
                        .color(Color32::WHITE)
                        .strong(),
                );
                if ui.button("Restart worker").clicked() {
                    lab.restart_worker();
                }
            });
        });
}

/// One thick legend entry per arm in its colour, named `<arm><suffix>` with the arm's display
/// name ([`crate::experiment::figures::arm_title`], as the saved figure prints it).
fn arm_legend(arms: &[ArmHistory], suffix: &str) -> Vec<(Color32, String, Swatch)> {
    arms.iter()
        .enumerate()
        .map(|(i, a)| {
            (
                optimizer_color(&a.label.optimizer, i),
                format!(
                    "{}{suffix}",
                    crate::experiment::figures::arm_title(&a.name())
                ),
                Swatch::Thick,
            )
        })
        .collect()
}

/// A labelled drop-down choosing the arm whose random-rotation baseline is shaded; `label`
/// says what the band is.
fn band_arm_picker(
    ui: &mut egui::Ui,
    id: &str,
    label: &str,
    arms: &[ArmHistory],
    band_arm: &mut usize,
) {
    let l = ui.label(RichText::new(label).small());
    egui::ComboBox::from_id_salt(id)
        .selected_text(
            arms.get(*band_arm)
                .map_or(String::new(), |a| a.label.name.clone()),
        )
        .show_ui(ui, |ui| {
            for (i, a) in arms.iter().enumerate() {
                ui.selectable_value(band_arm, i, &a.label.name);
            }
        })
        .response
        .labelled_by(l.id);
}

/// `x` as `1.23e-4`, or a dash when not finite.
fn sci(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2e}")
    } else {
        "—".into()
    }
}
