//! The thin shell around the panels, shared by the eframe app and the kittest tests: the menu,
//! the navigation, the notice row, the paste window and screenshots. It holds the sections
//! ([`super::panels::sections`]) and the shared [`Lab`]; what a section shows is the section's.
//! Split as the app's state and logic (here: building, saving, finding panels, navigation and
//! the per-frame logic), what it draws (`ui.rs`) and what it does when asked (`commands.rs`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use eframe::egui;

use super::lab::Lab;
use super::panel::Panel;
use super::panels;
use super::widgets::reflow;

mod commands;
mod ui;

pub use super::saved::{Settings, ZOOM_RANGE, ZOOM_STEP};
pub use commands::save_png;

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
        self.view().status(&self.lab).busy
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
