//! What the shell draws each frame: the menu bar, the navigation, the open section with its
//! side column, presentation mode's bar, the notice row and the paste window. Drawing reads the
//! state and calls the shell's commands ([`super::commands`]); it changes nothing else.

use eframe::egui::{self, RichText};

use super::AppState;
use crate::app::lab::Lab;
use crate::app::panels;
use crate::app::saved::ZOOM_STEP;
use crate::app::widgets::paste::paste_window;
use crate::app::widgets::reflow;
use crate::preset::{BUNDLED, Preset};
use crate::share;

impl AppState {
    /// Draws the whole app into `ui` and handles its keyboard shortcuts. The section list and
    /// the side column fold by the width the window gives (see [`reflow`]); the central area
    /// scrolls only vertically, its panels reflowing to its width.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::S)) {
            self.request_screenshot(&ctx, None);
        }
        if self.section().id() == panels::controlled_test::ID {
            panels::controlled_test::run_keys(&ctx, &mut self.lab);
        }
        self.presentation_keys(&ctx);
        self.zoom_keys(&ctx);
        reflow::set_presenting(&ctx, self.presenting);
        if self.presenting {
            egui::Panel::top("present bar").show(ui, |ui| self.presentation_bar(ui));
            self.central(ui, false);
            return;
        }
        let width = ui.available_width();
        self.fit_width(width);
        let nav_folded = self.nav_folded;
        let side_pinned = width >= reflow::SIDE_FOLD;
        let has_side = self.section().has_side();
        if has_side
            && !side_pinned
            && ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::F9))
        {
            self.drawer_open = !self.drawer_open;
        }
        egui::Panel::top("menu").show(ui, |ui| {
            self.menu_bar(ui, nav_folded, has_side && !side_pinned)
        });
        if !nav_folded {
            egui::Panel::left("nav")
                .resizable(false)
                .exact_size(230.0)
                .show(ui, |ui| self.nav(ui, false));
        }
        self.central(ui, has_side && (side_pinned || self.drawer_open));
        self.paste_window(ui);
    }

    /// The open section in the central area (which scrolls only vertically and starts a new
    /// view at its top), with its side column when `side`.
    pub(super) fn central(&mut self, ui: &mut egui::Ui, side: bool) {
        let view = (self.open, self.section().tabs().map(|t| t.open().id()));
        let new_view = self.shown != Some(view);
        self.shown = Some(view);
        let (lab, section) = (&mut self.lab, self.sections[self.open].as_mut());
        if side {
            egui::Panel::right("settings")
                .resizable(true)
                .default_size(340.0)
                .size_range(280.0..=480.0)
                .show(ui, |ui| section.side_ui(ui, lab));
        }
        let central = egui::CentralPanel::default().show(ui, |ui| {
            let mut area = egui::ScrollArea::vertical()
                .id_salt("central")
                .auto_shrink([false, false]);
            if new_view {
                area = area.vertical_scroll_offset(0.0);
            }
            area.show(ui, |ui| {
                notice_row(ui, lab);
                section.ui(ui, lab);
            })
        });
        let area = central.inner;
        self.central_overflow = (area.content_size.x - area.inner_rect.width()).max(0.0);
    }

    /// The slim bar of presentation mode: where we are, the arrows, and the way out.
    pub(super) fn presentation_bar(&mut self, ui: &mut egui::Ui) {
        reflow::controls_row(ui, |ui| {
            if ui
                .button("Previous")
                .on_hover_text("Page Up / ←: previous")
                .clicked()
            {
                self.step_view(-1);
            }
            if ui
                .button("Next")
                .on_hover_text("Page Down / →: next")
                .clicked()
            {
                self.step_view(1);
            }
            let s = self.section();
            let tab = s.tabs().map(|t| t.open().title());
            let here = match tab {
                Some(t) => format!("{} · {t}", s.title()),
                None => s.title().to_string(),
            };
            ui.label(RichText::new(here).strong());
            // An empty analysis view would otherwise show the class a blank plot.
            if self.section().status(&self.lab).awaits_run {
                ui.label("has not run yet:");
                if ui
                    .button("Run it")
                    .on_hover_text("Start this view's analysis")
                    .clicked()
                {
                    self.start_open();
                }
                if ui
                    .button("Skip it")
                    .on_hover_text("Go on to the next view")
                    .clicked()
                {
                    self.step_view(1);
                }
            }
            if ui.button("Leave presentation (Esc)").clicked() {
                let ctx = ui.ctx().clone();
                self.set_presenting(&ctx, false);
            }
        });
    }

    /// The menu bar; with `nav_folded` it starts with the section list as a menu, with
    /// `drawer` it has the side column's drawer button.
    pub(super) fn menu_bar(&mut self, ui: &mut egui::Ui, nav_folded: bool, drawer: bool) {
        egui::MenuBar::new().ui(ui, |ui| {
            if nav_folded {
                ui.menu_button(format!("☰ {}", self.section().title()), |ui| {
                    self.nav(ui, true);
                });
            }
            ui.menu_button("File", |ui| {
                if ui.button("Open preset…").clicked() {
                    ui.close();
                    self.open_preset();
                }
                if ui.button("Save preset…").clicked() {
                    ui.close();
                    let name = format!("{}.ron", self.lab.preset.name);
                    match crate::app::files::save_dialog("RON preset", "ron", &name) {
                        Some(path) => {
                            self.lab.save_preset_file(&path);
                        }
                        None => self.no_file_chosen(),
                    }
                }
                ui.separator();
                if ui
                    .button("Copy preset")
                    .on_hover_text(
                        "One line with only what differs from a bundled preset (bl1:…), for a \
                         chat message or a link; Paste preset… reads it back exactly",
                    )
                    .clicked()
                {
                    let line = share::encode(&self.lab.preset);
                    self.lab.inform(format!(
                        "Preset copied to the clipboard as its share string: {line}"
                    ));
                    ui.ctx().copy_text(line);
                    ui.close();
                }
                #[cfg(target_arch = "wasm32")]
                if ui
                    .button("Copy link")
                    .on_hover_text(
                        "A link to this page that opens this preset in this view (and plays the \
                         run if it is playing): one link for a room of students",
                    )
                    .clicked()
                {
                    self.copy_link(ui.ctx());
                    ui.close();
                }
                if ui.button("Copy preset as RON").clicked() {
                    ui.ctx().copy_text(self.lab.preset.to_ron());
                    self.lab
                        .inform("Preset copied to the clipboard as RON text.");
                    ui.close();
                }
                if ui.button("Paste preset…").clicked() {
                    self.paste_text = Some(String::new());
                    ui.close();
                }
                ui.separator();
                if ui.button("Screenshot (Ctrl+S)").clicked() {
                    ui.close();
                    self.request_screenshot(ui.ctx(), None);
                }
            });
            ui.menu_button("Presets", |ui| {
                for (name, text) in BUNDLED {
                    let desc = Preset::from_ron(text, name)
                        .map(|p| p.description)
                        .unwrap_or_default();
                    if ui.button(*name).on_hover_text(desc).clicked() {
                        self.lab.load_bundled(name, text);
                        ui.close();
                    }
                }
            });
            ui.menu_button("View", |ui| {
                if ui.checkbox(&mut self.lab.dark, "Dark theme").changed() {
                    ui.close();
                }
                ui.separator();
                let ctx = ui.ctx().clone();
                for (label, zoom) in [
                    ("Zoom in (Ctrl + =)", self.zoom + ZOOM_STEP),
                    ("Zoom out (Ctrl + −)", self.zoom - ZOOM_STEP),
                    ("Reset zoom (Ctrl + 0)", 1.0),
                ] {
                    if ui.button(label).clicked() {
                        self.set_zoom(&ctx, zoom);
                    }
                }
                ui.label(format!("Zoom {:.0}%", self.zoom * 100.0));
            });
            ui.separator();
            if ui
                .button("Present")
                .on_hover_text(
                    "F11: presentation mode — full screen, larger type, no side panels; Esc leaves",
                )
                .clicked()
            {
                let ctx = ui.ctx().clone();
                self.set_presenting(&ctx, true);
            }
            if drawer {
                ui.separator();
                let label = if self.drawer_open {
                    "⚙ Hide settings"
                } else {
                    "⚙ Settings"
                };
                if ui
                    .selectable_label(self.drawer_open, label)
                    .on_hover_text("F9: open or close the settings column")
                    .clicked()
                {
                    self.drawer_open = !self.drawer_open;
                }
            }
            if !nav_folded {
                ui.separator();
                ui.label(RichText::new("basis-lab").strong());
                ui.label(
                    RichText::new("does the optimizer leave fingerprints in the basis?").weak(),
                );
            }
        });
    }

    /// The section list; `in_menu` when drawn inside the folded menu.
    pub(super) fn nav(&mut self, ui: &mut egui::Ui, in_menu: bool) {
        if !in_menu {
            ui.add_space(8.0);
            ui.label(RichText::new("Sections").heading());
            ui.add_space(6.0);
        }
        for (i, s) in self.sections.iter().enumerate() {
            if s.separated() {
                ui.add_space(6.0);
                ui.separator();
            }
            if ui.selectable_label(self.open == i, s.title()).clicked() {
                self.open = i;
                if in_menu {
                    ui.close();
                }
            }
        }
    }

    pub(super) fn paste_window(&mut self, ui: &mut egui::Ui) {
        let lab = &mut self.lab;
        paste_window(ui.ctx(), &mut self.paste_text, "preset", |text| {
            lab.load_preset_text(text, "pasted text")
        });
    }
}

/// The notice under the menu, with its dismiss button.
pub(super) fn notice_row(ui: &mut egui::Ui, lab: &mut Lab) {
    let Some(n) = lab.notice.clone() else {
        return;
    };
    ui.horizontal_top(|ui| {
        if ui.small_button("dismiss").clicked() {
            lab.notice = None;
        }
        if n.undo.is_some() && ui.small_button("Undo").clicked() {
            lab.undo();
        }
        ui.add(egui::Label::new(RichText::new(&n.text).color(lab.notice_color(n.error))).wrap());
    });
}
