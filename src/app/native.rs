//! The desktop's window: eframe's native runner around [`AppState`], with screenshot mode and
//! the first window fitted to its monitor.

use std::sync::{Arc, Mutex};

use eframe::egui;
use web_time::Instant;

use super::panels::gauge_lab::HsiTab;
use super::screenshot::ShotPlan;
use super::{AppState, FIRST_WINDOW, GuiOptions, Settings, place_window, saved};
use std::path::PathBuf;

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
            let link_problem = (opts.link.as_ref())
                .and_then(|link| super::follow::load_key_preset(link, &mut settings));
            if let Some(dark) = opts.dark {
                settings.dark = dark;
            }
            let shot = opts
                .screenshot
                .clone()
                .map(|path| ShotPlan::new(path, opts.run_steps, opts.frame_seconds, outcome2))
                .map(|mut plan| {
                    plan.analyses = !opts.no_analysis && opts.hsi_report.is_none();
                    plan
                });
            let mut state = AppState::new(&cc.egui_ctx, settings);
            if shot_mode {
                state.set_zoom_base(&cc.egui_ctx, scale);
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
            if let Some(link) = &opts.link {
                super::follow::follow(&mut state, link, link_problem);
            }
            // After the link's notice, which this one then keeps.
            if let Some(text) = kept_aside {
                let more = state.lab.notice.take().map(|n| format!(" {}", n.text));
                state.lab.error(text + &more.unwrap_or_default());
            }
            if let Some(report) = opts.hsi_report.clone() {
                if let Some((tab, _)) = state.panel_mut::<HsiTab>("gauge/hsi") {
                    tab.open_report(report);
                }
                state.open_tab("gauge", "hsi");
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
            Some(Ok(path)) => crate::console::outln(&format!("saved {}", path.display()))?,
            Some(Err(e)) => anyhow::bail!("screenshot failed: {e}"),
            None => anyhow::bail!("the window closed before the screenshot was taken"),
        }
    }
    Ok(())
}

struct BasisLabApp {
    state: AppState,
    /// Whether the window has been fitted to its monitor ([`super::fit_window`]), done once when the
    /// monitor's size is first known.
    fitted: bool,
    shot: Option<ShotPlan>,
    theme: Option<bool>,
    /// When the current frame's `logic` started (for frame statistics).
    frame_began: Instant,
}

impl BasisLabApp {
    /// Fits the window to its monitor once the monitor's size is known (after the first frame;
    /// winit gives no monitor before the window exists): [`super::fit_window`]'s size, and centred when
    /// the restored position is off the monitor ([`place_window`]). A maximised or full-screen
    /// window is left alone.
    fn fit_to_monitor(&mut self, ctx: &egui::Context) {
        let (monitor, inner, outer, maximized, fullscreen) = ctx.input(|i| {
            let v = i.viewport();
            (
                v.monitor_size,
                v.inner_rect,
                v.outer_rect,
                v.maximized,
                v.fullscreen,
            )
        });
        let (Some(monitor), Some(inner)) = (monitor, inner) else {
            return;
        };
        self.fitted = true;
        if maximized == Some(true) || fullscreen == Some(true) || monitor.min_elem() < 1.0 {
            return;
        }
        let outer = outer.unwrap_or(inner);
        if let Some((pos, size)) = place_window(outer, inner.size(), monitor) {
            if (size - inner.size()).abs().max_elem() >= 1.0 {
                ctx.send_viewport_cmd(egui::ViewportCommand::InnerSize(size));
            }
            if (pos - outer.min).abs().max_elem() >= 1.0 {
                ctx.send_viewport_cmd(egui::ViewportCommand::OuterPosition(pos));
            }
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
        self.state.sync_theme(ui.ctx(), &mut self.theme);
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
