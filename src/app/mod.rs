//! The desktop app: a thin eframe shell around [`AppState`], which holds the UI and is shared
//! with the kittest tests. Sections and tabs are [`panel::Panel`]s listed in
//! [`panels::sections`]; what they share is the [`lab::Lab`]. Training runs on the worker
//! thread ([`crate::worker`]), other background work in [`analysis::Analysis`] jobs.

pub mod analysis;
pub mod history;
pub mod job;
pub mod lab;
pub mod panel;
pub mod panels;
pub mod saved;
mod screenshot;
pub mod shell;
mod style;
pub mod widgets;

pub use shell::{AppState, Settings};
pub use style::apply_style;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use eframe::egui;

use crate::preset::Preset;
use screenshot::ShotPlan;

/// How the app was started.
#[derive(Clone, Debug, Default)]
pub struct GuiOptions {
    /// Start with this preset instead of the saved settings.
    pub preset: Option<Preset>,
    /// Start from these settings instead of the saved ones (also in screenshot mode, which
    /// otherwise starts from the defaults); checked like saved settings.
    pub settings: Option<Settings>,
    /// Screenshot mode: run `run_steps` steps, save a PNG here and exit.
    pub screenshot: Option<PathBuf>,
    /// Steps to run before the screenshot.
    pub run_steps: usize,
    /// Force the dark (`Some(true)`) or light (`Some(false)`) theme.
    pub dark: Option<bool>,
    /// Open the section with this id (in screenshot mode: photograph it).
    pub section: Option<String>,
    /// Open this tab of that section (of the controlled test if no section is given), by id (in
    /// screenshot mode: run its analysis first).
    pub tab: Option<String>,
    /// Frame-statistics mode (with `screenshot`): instead of stopping at `run_steps`, stream the
    /// run at full speed for this many seconds, then print frame-time percentiles, the steps
    /// reached and the peak resident memory before the screenshot.
    pub frame_seconds: Option<f64>,
    /// Screenshot mode: the window's size in points (default 1920 × 1200).
    pub size: Option<[f32; 2]>,
    /// Screenshot mode: pixels per point (default 1).
    pub scale: Option<f32>,
    /// Start in presentation mode.
    pub present: bool,
    /// Screenshot mode: photograph a tab as it opens, without running its analysis first (the
    /// layout screenshots of CI, where the analyses would take many minutes).
    pub no_analysis: bool,
}

/// Opens the main window and blocks until it is closed. In screenshot mode, returns an error if
/// the screenshot could not be taken. Errors: no display or no usable graphics context.
pub fn run_gui(opts: GuiOptions) -> anyhow::Result<()> {
    let shot_mode = opts.screenshot.is_some();
    let store = shot_mode
        .then(|| std::env::temp_dir().join(format!("basis-lab-shot-{}.ron", std::process::id())));
    let scale = opts.scale.unwrap_or(1.0);
    let size = if shot_mode {
        let [w, h] = opts.size.unwrap_or([1920.0, 1200.0]);
        [w * scale, h * scale]
    } else {
        FIRST_WINDOW
    };
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("basis-lab")
            .with_app_id("basis-lab")
            .with_inner_size(size)
            .with_min_inner_size([640.0, 480.0]),
        persist_window: !shot_mode,
        persistence_path: store.clone(),
        ..Default::default()
    };
    // eframe drops a settings file it cannot read and overwrites it at the next save.
    let kept_aside = if shot_mode {
        None
    } else {
        eframe::storage_dir("basis-lab")
            .and_then(|dir| saved::keep_unreadable_aside(&dir.join("app.ron")))
    };
    let outcome: Arc<Mutex<Option<Result<PathBuf, String>>>> = Arc::new(Mutex::new(None));
    let outcome2 = outcome.clone();
    let result = eframe::run_native(
        "basis-lab",
        options,
        Box::new(move |cc| {
            let mut settings = if let Some(s) = opts.settings.clone() {
                s
            } else if shot_mode {
                Settings::default()
            } else {
                cc.storage
                    .and_then(|s| eframe::get_value::<Settings>(s, eframe::APP_KEY))
                    .unwrap_or_default()
            };
            if let Some(p) = opts.preset.clone() {
                settings.preset = p;
            }
            if let Some(dark) = opts.dark {
                settings.dark = dark;
            }
            let shot = opts
                .screenshot
                .clone()
                .map(|path| ShotPlan::new(path, opts.run_steps, opts.frame_seconds, outcome2))
                .map(|mut plan| {
                    plan.analyses = !opts.no_analysis;
                    plan
                });
            let mut state = AppState::new(&cc.egui_ctx, settings);
            if shot_mode {
                state.set_zoom_base(&cc.egui_ctx, scale);
            }
            if let Some(text) = kept_aside {
                let more = state.lab.notice.take().map(|n| format!(" {}", n.text));
                state.lab.error(text + &more.unwrap_or_default());
            }
            state.lab.hover = shot.is_none();
            state.fullscreen_allowed = !shot_mode;
            if opts.present {
                state.set_presenting(&cc.egui_ctx, true);
            }
            // A tab without a section is one of the controlled test's.
            let section =
                (opts.section.clone()).or_else(|| opts.tab.as_ref().map(|_| "test".to_string()));
            if let Some(section) = &section {
                state.open_section(section);
            }
            if let Some(tab) = &opts.tab {
                let section = state.section().id();
                state.open_tab(section, tab);
            }
            Ok(Box::new(BasisLabApp {
                state,
                // A screenshot's window keeps the size it was asked for.
                fitted: shot_mode,
                shot,
                theme: None,
                frame_began: Instant::now(),
            }))
        }),
    );
    if let Some(store) = store {
        let _ = std::fs::remove_file(store);
    }
    result.map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))?;
    if shot_mode {
        match outcome.lock().expect("lock").take() {
            Some(Ok(path)) => println!("saved {}", path.display()),
            Some(Err(e)) => anyhow::bail!("screenshot failed: {e}"),
            None => anyhow::bail!("the window closed before the screenshot was taken"),
        }
    }
    Ok(())
}

/// The window size in points that fits a monitor of `monitor` points: `size` shrunk to at most
/// [`MONITOR_SHARE`] of the monitor on each side (room for a title bar and a task bar), but
/// not below [`MIN_WINDOW`] unless the monitor itself is smaller. Used for the first window
/// and for a restored one.
pub fn fit_window(size: egui::Vec2, monitor: egui::Vec2) -> egui::Vec2 {
    let room = monitor * MONITOR_SHARE;
    let floor = MIN_WINDOW.min(monitor);
    size.min(room).max(floor).min(monitor)
}

/// The largest share of the monitor a window takes on each side, width and height.
pub const MONITOR_SHARE: egui::Vec2 = egui::vec2(0.96, 0.9);
/// The smallest window [`fit_window`] makes on a monitor that has room for it (points).
pub const MIN_WINDOW: egui::Vec2 = egui::vec2(640.0, 480.0);
/// The window's size on a first start, in points, before it is fitted to the monitor.
pub const FIRST_WINDOW: [f32; 2] = [1680.0, 1050.0];

struct BasisLabApp {
    state: AppState,
    /// Whether the window has been fitted to its monitor ([`fit_window`]), done once when the
    /// monitor's size is first known.
    fitted: bool,
    shot: Option<ShotPlan>,
    theme: Option<bool>,
    /// When the current frame's `logic` started (for frame statistics).
    frame_began: Instant,
}

impl BasisLabApp {
    /// Shrinks the window to [`fit_window`] once the monitor's size is known (after the first
    /// frame; winit gives no monitor before the window exists). A maximised or full-screen
    /// window is left alone.
    fn fit_to_monitor(&mut self, ctx: &egui::Context) {
        let (monitor, inner, maximized, fullscreen) = ctx.input(|i| {
            let v = i.viewport();
            (v.monitor_size, v.inner_rect, v.maximized, v.fullscreen)
        });
        let (Some(monitor), Some(inner)) = (monitor, inner) else {
            return;
        };
        self.fitted = true;
        if maximized == Some(true) || fullscreen == Some(true) || monitor.min_elem() < 1.0 {
            return;
        }
        let size = fit_window(inner.size(), monitor);
        if (size - inner.size()).abs().max_elem() >= 1.0 {
            ctx.send_viewport_cmd(egui::ViewportCommand::InnerSize(size));
        }
    }
}

impl eframe::App for BasisLabApp {
    /// Runs every frame, also while the window is hidden or minimised (when `ui` is not called),
    /// so worker updates never pile up and screenshot mode always reaches its timeout.
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        let now = Instant::now();
        if let Some(stats) = self.shot.as_mut().and_then(|s| s.frames_mut()) {
            stats.frame_started(now, self.frame_began);
        }
        self.frame_began = now;
        if !self.fitted {
            self.fit_to_monitor(ctx);
        }
        self.state.logic();
        if let Some(plan) = &mut self.shot {
            plan.drive(&mut self.state, ctx);
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        if self.theme != Some(self.state.lab.dark) {
            self.theme = Some(self.state.lab.dark);
            ui.ctx().set_theme(if self.state.lab.dark {
                egui::Theme::Dark
            } else {
                egui::Theme::Light
            });
        }
        self.state.ui(ui);
        if let Some(stats) = self.shot.as_mut().and_then(|s| s.frames_mut()) {
            stats.frame_finished(self.frame_began.elapsed());
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if self.shot.is_none() {
            eframe::set_value(storage, eframe::APP_KEY, &self.state.settings());
        }
    }
}
