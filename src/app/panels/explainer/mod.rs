//! The explainer's sections 1–4, 6 and 7: prose, and beside the first three a demo (drag the
//! keys, rotate everything, rotate the gradient). The demos' state lives in the preset's
//! `demos`, so a configuration can be saved and reopened; changing it never restarts the
//! paired run.

mod canvas;
mod keys_demo;
mod rotate_demo;
mod step_demo;
pub mod text;

use eframe::egui::{self, RichText};

use crate::app::lab::Lab;
use crate::app::panel::Panel;
use crate::app::widgets::math;
use crate::explainer::DemoSettings;

/// A demo: draws into the ui and edits the demo state; the flag says whether plots show hover
/// labels.
type Demo = fn(&mut DemoSettings, &mut egui::Ui, bool);

/// One section of the explainer: its text and, for sections 1–3, its demo.
pub struct Chapter {
    id: &'static str,
    title: &'static str,
    demo: Option<Demo>,
}

impl Chapter {
    /// §1 The model in one screen, with Demo 1.
    pub fn model() -> Self {
        Self::new("model", "1  The model", Some(keys_demo::ui))
    }

    /// §2 The model has no favourite axes, with Demo 2.
    pub fn axes() -> Self {
        Self::new("axes", "2  No favourite axes", Some(rotate_demo::ui))
    }

    /// §3 What a step looks like, GD against Adam, with Demo 3.
    pub fn step() -> Self {
        Self::new("step", "3  GD vs Adam: one step", Some(step_demo::ui))
    }

    /// §4 Why coordinate-wise steps can prefer axes.
    pub fn why() -> Self {
        Self::new("why", "4  Why coordinate-wise steps prefer axes", None)
    }

    /// §6 Reading results honestly.
    pub fn reading() -> Self {
        Self::new("reading", "6  Reading results honestly", None)
    }

    /// §7 Blind spots and the wider map.
    pub fn blind_spots() -> Self {
        Self::new("blind-spots", "7  Blind spots", None)
    }

    fn new(id: &'static str, title: &'static str, demo: Option<Demo>) -> Self {
        Self { id, title, demo }
    }
}

impl Panel for Chapter {
    fn id(&self) -> &'static str {
        self.id
    }

    fn title(&self) -> &'static str {
        self.title
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        let mut demos = lab.preset.demos.clone();
        ui.add_space(6.0);
        ui.heading(self.title);
        ui.add_space(6.0);
        let text_w = if self.demo.is_some() {
            (ui.available_width() * 0.38).clamp(360.0, 640.0)
        } else {
            ui.available_width().min(920.0)
        };
        ui.horizontal_top(|ui| {
            ui.vertical(|ui| {
                ui.set_width(text_w);
                egui::ScrollArea::vertical()
                    .id_salt("text")
                    .show(ui, |ui| text(ui, self.id));
            });
            if let Some(demo) = self.demo {
                ui.separator();
                ui.vertical(|ui| {
                    egui::ScrollArea::vertical()
                        .id_salt("demo")
                        .show(ui, |ui| demo(&mut demos, ui, lab.hover));
                });
            }
        });
        if demos != lab.preset.demos {
            let mut p = lab.preset.clone();
            p.demos = demos;
            lab.apply_preset(p);
        }
    }
}

/// The paragraphs of the section called `id`, with `## ` lines as subheadings and indented
/// lines as displayed formulas.
pub fn text(ui: &mut egui::Ui, id: &str) {
    for p in text::paragraphs(id) {
        if let Some(h) = p.strip_prefix("## ") {
            ui.add_space(6.0);
            ui.label(RichText::new(h).strong().size(19.0));
        } else if let Some(formula) = p.strip_prefix("    ") {
            ui.add_space(2.0);
            ui.horizontal(|ui| {
                ui.add_space(24.0);
                math::paragraph(ui, formula);
            });
            ui.add_space(2.0);
        } else {
            math::paragraph(ui, p);
        }
        ui.add_space(6.0);
    }
}
