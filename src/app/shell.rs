//! The thin shell around the panels, shared by the eframe app and the kittest tests: the menu,
//! the navigation, the notice row, the paste window and screenshots. It holds the sections
//! ([`super::panels::sections`]) and the shared [`Lab`]; what a section shows is the section's.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use eframe::egui::{self, RichText};

use super::lab::Lab;
use super::panel::Panel;
use super::panels;
use super::widgets::paste::paste_window;
use super::widgets::reflow;
use crate::preset::{BUNDLED, Preset};
use crate::share;

pub use super::saved::{Settings, ZOOM_RANGE, ZOOM_STEP};

/// The application: the shared lab, the sections, and the shell's own windows.
pub struct AppState {
    /// What the panels share.
    pub lab: Lab,
    /// The sections, in navigation order.
    pub sections: Vec<Box<dyn Panel>>,
    /// Index of the section shown.
    pub open: usize,
    /// Text of the "Paste preset" window, when open.
    pub paste_text: Option<String>,
    /// Where Ctrl+S screenshots go.
    pub screenshot_dir: PathBuf,
    /// By how many points the last frame's central content was wider than the central area
    /// (which scrolls only vertically, so anything wider is cut off); the layout tests check it
    /// stays 0.
    pub central_overflow: f32,
    /// The view (section index, open tab) drawn last frame: a new view starts scrolled to
    /// its top.
    shown: Option<(usize, Option<&'static str>)>,
    /// Presentation mode: full screen, no side panels, everything larger (see
    /// [`AppState::set_presenting`]).
    pub presenting: bool,
    /// The user's zoom (Ctrl + = / − / 0, saved in [`Settings::zoom`]); the UI is drawn at
    /// `zoom_base × zoom`, and 1.4× that in presentation mode.
    pub zoom: f32,
    /// The zoom under the user's: screenshot mode's pixels per point (`--scale`), else 1.
    zoom_base: f32,
    /// Whether presentation mode may switch the window to full screen (not in screenshot mode,
    /// which photographs a window of a given size).
    pub fullscreen_allowed: bool,
    /// Whether the side column's drawer is open (on windows too narrow to pin it, see
    /// [`reflow::SIDE_FOLD`]).
    pub drawer_open: bool,
    /// Whether the section list is folded into the menu bar's ☰ menu (see
    /// [`AppState::fit_width`]).
    nav_folded: bool,
    /// The notice of the last screenshot: what was saved, or why not.
    screenshot_outcome: Arc<Mutex<Option<Result<String, String>>>>,
    /// The preset file being chosen in the browser (web build: opening is an upload).
    #[cfg(target_arch = "wasm32")]
    upload: Option<super::files::Upload>,
}

impl AppState {
    /// Builds the sections, restores their saved settings and starts the trainer on
    /// `settings.preset`. Saved values that fail their checks ([`super::saved::sanitize`], each
    /// panel's [`Panel::load`]) are reset or dropped, and a notice lists them. `ctx` is woken by
    /// background work.
    pub fn new(ctx: &egui::Context, mut settings: Settings) -> Self {
        super::style::apply_style(ctx);
        let mut problems = super::saved::sanitize(&mut settings);
        let ctx2 = ctx.clone();
        let repaint: Arc<dyn Fn() + Send + Sync> = Arc::new(move || ctx2.request_repaint());
        let lab = Lab::new(
            settings.preset,
            settings.dark,
            settings.speed,
            settings.stop,
            repaint,
        );
        let mut state = Self {
            lab,
            sections: panels::sections(),
            open: 0,
            paste_text: None,
            drawer_open: false,
            nav_folded: false,
            presenting: false,
            zoom: settings.zoom,
            zoom_base: 1.0,
            fullscreen_allowed: true,
            central_overflow: 0.0,
            shown: None,
            screenshot_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            screenshot_outcome: Arc::new(Mutex::new(None)),
            #[cfg(target_arch = "wasm32")]
            upload: None,
        };
        problems.extend(load_panels(&mut state.sections, &settings.panels));
        if !problems.is_empty() {
            state.lab.error(format!(
                "Some saved settings could not be used and were reset: {}.",
                problems.join("; ")
            ));
        }
        if !state.open_section(&settings.open) {
            state.open_section("test");
        }
        // The shell handles egui's zoom keys itself, so that they compose with presentation
        // mode's zoom and are saved.
        ctx.options_mut(|o| o.zoom_with_keyboard = false);
        state.apply_zoom(ctx);
        state
    }

    /// What to save for the next start.
    pub fn settings(&self) -> Settings {
        Settings {
            preset: self.lab.preset.clone(),
            open: self.section().id().into(),
            dark: self.lab.dark,
            speed: self.lab.speed,
            stop: self.lab.stop,
            panels: save_panels(&self.sections),
            zoom: self.zoom,
        }
    }

    /// Sets the user's zoom to `zoom` (rounded to a tenth, clamped to [`ZOOM_RANGE`]) and
    /// Sets egui's theme to the lab's (dark or light) when it differs from `applied`, the one
    /// last set.
    pub fn sync_theme(&self, ctx: &egui::Context, applied: &mut Option<bool>) {
        if *applied != Some(self.lab.dark) {
            *applied = Some(self.lab.dark);
            ctx.set_theme(if self.lab.dark {
                egui::Theme::Dark
            } else {
                egui::Theme::Light
            });
        }
    }

    /// The open view as `section` or `section/tab` (what a page link's `view` names).
    pub fn view_path(&self) -> String {
        let s = self.section();
        match s.tabs() {
            Some(t) => format!("{}/{}", s.id(), t.open().id()),
            None => s.id().to_string(),
        }
    }

    /// The open view's name for a window or browser tab: `basis-lab · SECTION` or
    /// `basis-lab · SECTION · TAB`, with the navigation's titles.
    pub fn view_title(&self) -> String {
        let s = self.section();
        let section = s.title().split_whitespace().collect::<Vec<_>>().join(" ");
        match s.tabs() {
            Some(t) => format!("basis-lab · {section} · {}", t.open().title()),
            None => format!("basis-lab · {section}"),
        }
    }

    /// applies it, times presentation mode's zoom when presenting.
    pub fn set_zoom(&mut self, ctx: &egui::Context, zoom: f32) {
        let zoom = if zoom.is_finite() { zoom } else { 1.0 };
        self.zoom = ((zoom * 10.0).round() / 10.0).clamp(*ZOOM_RANGE.start(), *ZOOM_RANGE.end());
        self.apply_zoom(ctx);
    }

    /// Draws everything `base` times larger under the user's zoom (screenshot mode's
    /// `--scale`, which emulates a HiDPI screen).
    pub fn set_zoom_base(&mut self, ctx: &egui::Context, base: f32) {
        self.zoom_base = base;
        self.apply_zoom(ctx);
    }

    fn apply_zoom(&self, ctx: &egui::Context) {
        let present = if self.presenting {
            reflow::PRESENT_ZOOM
        } else {
            1.0
        };
        ctx.set_zoom_factor(self.zoom_base * self.zoom * present);
    }

    /// Ctrl + = (or +) zooms in, Ctrl + − out, Ctrl + 0 back to 1, as in a browser.
    fn zoom_keys(&mut self, ctx: &egui::Context) {
        use egui::gui_zoom::kb_shortcuts as keys;
        let (reset, zoom_in, zoom_out) = ctx.input_mut(|i| {
            (
                i.consume_shortcut(&keys::ZOOM_RESET),
                i.consume_shortcut(&keys::ZOOM_IN) | i.consume_shortcut(&keys::ZOOM_IN_SECONDARY),
                i.consume_shortcut(&keys::ZOOM_OUT),
            )
        });
        if reset {
            self.set_zoom(ctx, 1.0);
        } else if zoom_in {
            self.set_zoom(ctx, self.zoom + ZOOM_STEP);
        } else if zoom_out {
            self.set_zoom(ctx, self.zoom - ZOOM_STEP);
        }
    }

    /// The section shown.
    pub fn section(&self) -> &dyn Panel {
        self.sections[self.open].as_ref()
    }

    /// The section shown, to change.
    pub fn section_mut(&mut self) -> &mut dyn Panel {
        self.sections[self.open].as_mut()
    }

    /// The view shown: the open section, or its open tab if it has tabs.
    pub fn view(&self) -> &dyn Panel {
        let s = self.section();
        s.tabs().map_or(s, |t| t.open())
    }

    /// The view shown, to change.
    pub fn view_mut(&mut self) -> &mut dyn Panel {
        let s = self.sections[self.open].as_mut();
        if s.tabs().is_some() {
            s.tabs_mut().expect("checked above").open_mut()
        } else {
            s
        }
    }

    /// Applies a link's setting `name=value` to the view shown ([`Panel::set_from_link`]):
    /// whether the view has such a setting.
    ///
    /// # Errors
    /// The view's: a value it does not take.
    pub fn set_from_link(&mut self, name: &str, value: &str) -> Result<bool, String> {
        let s = self.sections[self.open].as_mut();
        let view = if s.tabs().is_some() {
            s.tabs_mut().expect("checked above").open_mut()
        } else {
            s
        };
        view.set_from_link(name, value, &mut self.lab)
    }

    /// Whether the view shown still works on something it started (its own analysis; for the
    /// key lab's section itself, also the live run).
    pub fn view_busy(&self) -> bool {
        self.view().busy(&self.lab)
    }

    /// Folds the section list into the ☰ menu if the window, `width` points wide, is narrower
    /// than [`reflow::NAV_FOLD`]. Every frame calls it; the page also calls it before its first
    /// frame, so that what it says of its link names the sections where they are.
    pub fn fit_width(&mut self, width: f32) {
        self.nav_folded = width < reflow::NAV_FOLD;
    }

    /// Whether the section list is folded into the ☰ menu (as of the last
    /// [`AppState::fit_width`]).
    pub fn nav_folded(&self) -> bool {
        self.nav_folded
    }

    /// Shows the section called `id`; false (and nothing changes) if there is none.
    pub fn open_section(&mut self, id: &str) -> bool {
        match self.sections.iter().position(|s| s.id() == id) {
            Some(i) => {
                self.open = i;
                true
            }
            None => false,
        }
    }

    /// Starts the open section's analysis (the open tab's, for a section with tabs), as its
    /// main button does: a link's `play` and screenshot mode use it. Returns whether the view
    /// has an analysis of its own ([`Panel::start`]).
    pub fn start_open(&mut self) -> bool {
        self.sections[self.open].start(&mut self.lab)
    }

    /// Shows tab `tab` of section `section`; false if either is unknown.
    pub fn open_tab(&mut self, section: &str, tab: &str) -> bool {
        self.open_section(section) && self.section_mut().tabs_mut().is_some_and(|t| t.select(tab))
    }

    /// The panel of type `P` at `path`: a section's id (`test`), or a section's and a tab's
    /// (`gauge/live`).
    pub fn panel<P: Panel>(&self, path: &str) -> Option<&P> {
        find_panel(&self.sections, path)
    }

    /// The same, to change, with the lab beside it (for starting its analysis, say).
    pub fn panel_mut<P: Panel>(&mut self, path: &str) -> Option<(&mut P, &mut Lab)> {
        Some((find_panel_mut(&mut self.sections, path)?, &mut self.lab))
    }

    /// One frame of work that runs whether or not the window is drawn: trainer updates,
    /// every panel's background work, screenshot outcomes.
    pub fn logic(&mut self) {
        self.lab.poll();
        #[cfg(target_arch = "wasm32")]
        self.collect_upload();
        for s in &mut self.sections {
            s.logic(&mut self.lab);
        }
        if let Some(outcome) = self.screenshot_outcome.lock().expect("lock").take() {
            match outcome {
                Ok(done) => self.lab.inform(format!("Screenshot: {done}")),
                Err(e) => self.lab.error(format!("Screenshot failed: {e}")),
            }
        }
    }

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
    fn central(&mut self, ui: &mut egui::Ui, side: bool) {
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

    /// Enters or leaves presentation mode: full screen (where allowed), side panels hidden, the
    /// whole UI enlarged by [`reflow::PRESENT_ZOOM`] and plot lines drawn twice as thick.
    pub fn set_presenting(&mut self, ctx: &egui::Context, on: bool) {
        if on == self.presenting {
            return;
        }
        self.presenting = on;
        self.apply_zoom(ctx);
        if self.fullscreen_allowed {
            ctx.send_viewport_cmd(egui::ViewportCommand::Fullscreen(on));
        }
        reflow::set_presenting(ctx, on);
    }

    /// Every view in navigation order: each section, or each tab of a section that has them,
    /// as (section index, tab id).
    pub fn views(&self) -> Vec<(usize, Option<&'static str>)> {
        let mut out = Vec::new();
        for (i, s) in self.sections.iter().enumerate() {
            match s.tabs() {
                Some(tabs) => out.extend(tabs.iter().map(|t| (i, Some(t.id())))),
                None => out.push((i, None)),
            }
        }
        out
    }

    /// Moves `by` views forward (negative: back) in [`AppState::views`], stopping at the ends.
    pub fn step_view(&mut self, by: isize) {
        let views = self.views();
        let here = (self.open, self.section().tabs().map(|t| t.open().id()));
        let i = views.iter().position(|v| *v == here).unwrap_or(0);
        let j = (i as isize + by).clamp(0, views.len() as isize - 1) as usize;
        let (section, tab) = views[j];
        self.open = section;
        if let (Some(tab), Some(tabs)) = (tab, self.section_mut().tabs_mut()) {
            tabs.select(tab);
        }
    }

    /// Presentation mode's keys: F11 toggles it, Esc leaves it, Page Up/Down and the arrow
    /// keys step through the views (unless a widget has the keyboard).
    fn presentation_keys(&mut self, ctx: &egui::Context) {
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::F11)) {
            self.set_presenting(ctx, !self.presenting);
        }
        if !self.presenting || ctx.memory(|m| m.focused().is_some()) {
            return;
        }
        let any_popup = egui::Popup::is_any_open(ctx);
        let (esc, back, forward) = ctx.input_mut(|i| {
            let mut key = |k| i.consume_key(egui::Modifiers::NONE, k);
            (
                !any_popup && key(egui::Key::Escape),
                key(egui::Key::PageUp) | key(egui::Key::ArrowLeft) | key(egui::Key::ArrowUp),
                key(egui::Key::PageDown) | key(egui::Key::ArrowRight) | key(egui::Key::ArrowDown),
            )
        });
        if esc {
            self.set_presenting(ctx, false);
        }
        if back {
            self.step_view(-1);
        }
        if forward {
            self.step_view(1);
        }
    }

    /// The slim bar of presentation mode: where we are, the arrows, and the way out.
    fn presentation_bar(&mut self, ui: &mut egui::Ui) {
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
            if self.section().awaits_run() {
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

    /// Asks for a PNG of the next frame, saved into `path` (or a time-stamped file in
    /// [`AppState::screenshot_dir`]); the outcome arrives as a notice.
    pub fn request_screenshot(&self, ctx: &egui::Context, path: Option<PathBuf>) {
        let path = path.unwrap_or_else(|| {
            let secs = web_time::SystemTime::now()
                .duration_since(web_time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            self.screenshot_dir.join(format!("basis-lab-{secs}.png"))
        });
        let outcome = self.screenshot_outcome.clone();
        let ctx2 = ctx.clone();
        ctx.request_screenshot(move |img| {
            let save = move || {
                let r = save_png(&img, &path);
                *outcome.lock().expect("lock") = Some(r);
                ctx2.request_repaint();
            };
            // Encoding a full-window PNG takes a while: keep it off the UI thread.
            crate::live::detach(save);
        });
    }

    /// File → Open preset…: the desktop's open dialog, or the browser's file picker (whose
    /// file arrives in a later frame, see [`AppState::logic`]).
    fn open_preset(&mut self) {
        #[cfg(not(target_arch = "wasm32"))]
        match super::files::pick_file("RON preset", "ron") {
            Some(path) => {
                self.lab.load_preset_file(&path);
            }
            None => self.no_file_chosen(),
        }
        #[cfg(target_arch = "wasm32")]
        {
            let repaint = self.lab.repaint_handle();
            self.upload = Some(super::files::Upload::start("RON preset", "ron", repaint));
        }
    }

    /// Loads the preset file the browser's picker delivered, if it has.
    #[cfg(target_arch = "wasm32")]
    fn collect_upload(&mut self) {
        if let Some((name, bytes)) = self.lab.collect_upload(&mut self.upload) {
            let text = String::from_utf8_lossy(&bytes);
            self.lab.load_preset_text(&text, &name);
        }
    }

    /// File → Copy link (web build): the page's link to this view with its settings and
    /// its preset (the view's own, else the key lab's).
    #[cfg(target_arch = "wasm32")]
    fn copy_link(&mut self, ctx: &egui::Context) {
        let view = self.view();
        let share = view
            .share()
            .unwrap_or_else(|| share::encode(&self.lab.preset));
        let link = crate::link::page_link(
            &crate::app::page::page_url(),
            &self.view_path(),
            self.lab.history.running,
            &view.link_settings(),
            &share,
        );
        self.lab
            .inform(format!("Link copied to the clipboard: {link}"));
        ctx.copy_text(link);
    }

    fn no_file_chosen(&mut self) {
        self.lab.inform(
            "No file chosen. (If no dialog appeared, this desktop offers no file-dialog service; \
             File → Copy preset and Paste preset… work without one.)",
        );
    }

    /// The menu bar; with `nav_folded` it starts with the section list as a menu, with
    /// `drawer` it has the side column's drawer button.
    fn menu_bar(&mut self, ui: &mut egui::Ui, nav_folded: bool, drawer: bool) {
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
                    match super::files::save_dialog("RON preset", "ron", &name) {
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
    fn nav(&mut self, ui: &mut egui::Ui, in_menu: bool) {
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

    fn paste_window(&mut self, ui: &mut egui::Ui) {
        let lab = &mut self.lab;
        paste_window(ui.ctx(), &mut self.paste_text, "preset", |text| {
            lab.load_preset_text(text, "pasted text")
        });
    }
}

/// `section/tab` split at the slash.
fn split_path(path: &str) -> (&str, Option<&str>) {
    match path.split_once('/') {
        Some((s, t)) => (s, Some(t)),
        None => (path, None),
    }
}

/// The panel of type `P` at `path` among `sections`: a section's id (`test`), or a section's
/// and a tab's (`gauge/live`).
pub fn find_panel<'a, P: Panel>(sections: &'a [Box<dyn Panel>], path: &str) -> Option<&'a P> {
    let (section, tab) = split_path(path);
    let s = sections.iter().find(|s| s.id() == section)?;
    let panel: &dyn Panel = match tab {
        Some(t) => s.tabs()?.iter().find(|p| p.id() == t)?,
        None => s.as_ref(),
    };
    (panel as &dyn std::any::Any).downcast_ref::<P>()
}

/// The same, to change.
pub fn find_panel_mut<'a, P: Panel>(
    sections: &'a mut [Box<dyn Panel>],
    path: &str,
) -> Option<&'a mut P> {
    let (section, tab) = split_path(path);
    let s = sections.iter_mut().find(|s| s.id() == section)?;
    let panel: &mut dyn Panel = match tab {
        Some(t) => s.tabs_mut()?.find_mut(t)?,
        None => s.as_mut(),
    };
    (panel as &mut dyn std::any::Any).downcast_mut::<P>()
}

/// Restores every panel and tab of `sections` from `saved` (their settings by path, as
/// [`save_panels`] wrote them), each checked by its [`Panel::load`]. Returns one line per
/// problem, naming the panel's path: a value reset, a kept result dropped, or text that does
/// not parse (that panel starts afresh).
pub fn load_panels(
    sections: &mut [Box<dyn Panel>],
    saved: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut problems = Vec::new();
    visit(sections, "", &mut |path, p| {
        if let Some(text) = saved.get(path) {
            match p.load(text) {
                Ok(notes) => problems.extend(notes.into_iter().map(|n| format!("{path}: {n}"))),
                Err(e) => problems.push(format!(
                    "{path}: the saved settings do not parse (from an older version?) and start \
                     afresh ({e})"
                )),
            }
        }
    });
    problems
}

/// What every panel and tab of `sections` saves, by path (`test`, `test/eps`).
pub fn save_panels(sections: &[Box<dyn Panel>]) -> BTreeMap<String, String> {
    let mut saved = BTreeMap::new();
    for s in sections {
        save_into(s.as_ref(), "", &mut saved);
    }
    saved
}

/// Calls `f(path, panel)` for every panel and every tab, depth first, with paths like `test`
/// and `test/eps`.
fn visit(panels: &mut [Box<dyn Panel>], prefix: &str, f: &mut dyn FnMut(&str, &mut dyn Panel)) {
    for p in panels {
        let path = format!("{prefix}{}", p.id());
        f(&path, p.as_mut());
        if let Some(tabs) = p.tabs_mut() {
            for t in tabs.iter_mut() {
                let tab_path = format!("{path}/{}", t.id());
                f(&tab_path, t.as_mut());
            }
        }
    }
}

/// Adds what `p` and its tabs save to `out`, under their paths.
fn save_into(p: &dyn Panel, prefix: &str, out: &mut BTreeMap<String, String>) {
    let path = format!("{prefix}{}", p.id());
    if let Some(text) = p.save() {
        out.insert(path.clone(), text);
    }
    if let Some(tabs) = p.tabs() {
        for t in tabs.iter() {
            save_into(t, &format!("{path}/"), out);
        }
    }
}

/// The notice under the menu, with its dismiss button.
fn notice_row(ui: &mut egui::Ui, lab: &mut Lab) {
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

/// Encodes `img` as PNG and writes it atomically to `path` (in the web build: downloads it
/// under `path`'s file name); returns the sentence for the notice.
pub fn save_png(img: &egui::ColorImage, path: &Path) -> Result<String, String> {
    let [w, h] = img.size;
    let bytes: Vec<u8> = img.pixels.iter().flat_map(|c| c.to_array()).collect();
    let buffer = image::RgbaImage::from_raw(w as u32, h as u32, bytes)
        .ok_or_else(|| "screenshot has an unexpected size".to_string())?;
    let mut png = Vec::new();
    buffer
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| e.to_string())?;
    super::files::write(path, &png).map_err(|e| format!("{}: {e}", path.display()))
}
