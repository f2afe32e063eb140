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
use crate::app::widgets::{math, reflow};
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

/// Narrowest a demo column may be beside the text (its canvas shrinks down to this).
const DEMO_MIN_W: f32 = 520.0;

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
        let avail = ui.available_width();
        match self.demo {
            // Text and demo side by side, each scrolling in its column, when both fit; else
            // the demo comes first (a projector at 1024 px must not open on a screen of
            // text) and the central area scrolls.
            Some(demo) => {
                let text_w = (avail * 0.38).clamp(340.0, 640.0);
                reflow::pair(ui, [text_w, DEMO_MIN_W], |ui, part, beside| {
                    let is_text = (part == 0) == beside;
                    let id = if is_text { "text" } else { "demo" };
                    let mut draw = |ui: &mut egui::Ui| {
                        if is_text {
                            text(ui, self.id);
                        } else {
                            demo(&mut demos, ui, lab.hover);
                        }
                    };
                    if beside {
                        egui::ScrollArea::vertical().id_salt(id).show(ui, draw);
                    } else {
                        draw(ui);
                    }
                });
            }
            None => {
                ui.vertical(|ui| {
                    ui.set_max_width(avail.min(920.0));
                    text(ui, self.id);
                });
            }
        }
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
