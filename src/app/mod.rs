//! The desktop app: a thin eframe shell around [`state::AppState`], which holds the UI and is
//! shared with the kittest tests. Training runs on the worker thread ([`crate::worker`]).

pub mod gauge_job;
pub mod history;
pub mod job;
pub mod panels;
pub mod state;
pub mod widgets;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use eframe::egui;

use crate::preset::Preset;
use crate::worker::{Command, StopRule};
use state::{AppState, Settings};

/// How the app was started.
#[derive(Clone, Debug, Default)]
pub struct GuiOptions {
    /// Start with this preset instead of the saved settings.
    pub preset: Option<Preset>,
    /// Screenshot mode: run `run_steps` steps, save a PNG here and exit.
    pub screenshot: Option<PathBuf>,
    /// Steps to run before the screenshot.
    pub run_steps: usize,
    /// Force the dark (`Some(true)`) or light (`Some(false)`) theme.
    pub dark: Option<bool>,
    /// Open this section (in screenshot mode: photograph it).
    pub section: Option<state::Section>,
    /// Open this tab of the controlled test (in screenshot mode: run its analysis first).
    pub tab: Option<state::LiveTab>,
}

/// Longest a screenshot run may take before it gives up.
const SHOT_TIMEOUT: Duration = Duration::from_secs(600);

/// Fonts and text sizes chosen to stay legible on a projector. DejaVu Sans (bundled) backs up
/// egui's default font for the mathematical symbols the labels use (‖, Σ, ⁴, √, subscripts).
pub fn apply_style(ctx: &egui::Context) {
    use egui::{FontFamily, FontId, TextStyle};
    let mut fonts = egui::FontDefinitions::default();
    fonts.font_data.insert(
        "dejavu".into(),
        Arc::new(egui::FontData::from_static(include_bytes!(
            "../../assets/fonts/DejaVuSans.ttf"
        ))),
    );
    for family in [FontFamily::Proportional, FontFamily::Monospace] {
        fonts
            .families
            .entry(family)
            .or_default()
            .push("dejavu".into());
    }
    ctx.set_fonts(fonts);
    ctx.all_styles_mut(|style| {
        style.text_styles = [
            (
                TextStyle::Heading,
                FontId::new(24.0, FontFamily::Proportional),
            ),
            (TextStyle::Body, FontId::new(16.0, FontFamily::Proportional)),
            (
                TextStyle::Button,
                FontId::new(16.0, FontFamily::Proportional),
            ),
            (
                TextStyle::Monospace,
                FontId::new(15.0, FontFamily::Monospace),
            ),
            (
                TextStyle::Small,
                FontId::new(13.5, FontFamily::Proportional),
            ),
        ]
        .into();
        style.spacing.item_spacing = egui::vec2(8.0, 5.0);
        style.spacing.button_padding = egui::vec2(8.0, 3.0);
    });
}

/// Opens the main window and blocks until it is closed. In screenshot mode, returns an error if
/// the screenshot could not be taken. Errors: no display or no usable graphics context.
pub fn run_gui(opts: GuiOptions) -> anyhow::Result<()> {
    let shot_mode = opts.screenshot.is_some();
    let store = shot_mode
        .then(|| std::env::temp_dir().join(format!("basis-lab-shot-{}.ron", std::process::id())));
    let size = if shot_mode {
        [1920.0, 1200.0]
    } else {
        [1680.0, 1050.0]
    };
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("basis-lab")
            .with_app_id("basis-lab")
            .with_inner_size(size)
            .with_min_inner_size([900.0, 600.0]),
        persist_window: !shot_mode,
        persistence_path: store.clone(),
        ..Default::default()
    };
    let outcome: Arc<Mutex<Option<Result<PathBuf, String>>>> = Arc::new(Mutex::new(None));
    let outcome2 = outcome.clone();
    let result = eframe::run_native(
        "basis-lab",
        options,
        Box::new(move |cc| {
            let mut settings = if shot_mode {
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
            if let Some(section) = opts.section {
                settings.section = section;
            }
            if let Some(tab) = opts.tab {
                settings.tab = tab;
            }
            let shot = opts.screenshot.clone().map(|path| {
                settings.section = opts.section.unwrap_or(state::Section::ControlledTest);
                settings.tab = opts.tab.unwrap_or(state::LiveTab::Live);
                ShotPlan {
                    path,
                    steps: opts.run_steps,
                    started: Instant::now(),
                    armed: false,
                    settled_frames: 0,
                    requested: false,
                    outcome: outcome2,
                }
            });
            let mut state = AppState::new(&cc.egui_ctx, settings);
            state.hover = shot.is_none();
            Ok(Box::new(BasisLabApp {
                state,
                shot,
                theme: None,
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

struct BasisLabApp {
    state: AppState,
    shot: Option<ShotPlan>,
    theme: Option<bool>,
}

impl eframe::App for BasisLabApp {
    /// Runs every frame, also while the window is hidden or minimised (when `ui` is not called),
    /// so worker updates never pile up and screenshot mode always reaches its timeout.
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        self.state.poll();
        if let Some(plan) = &mut self.shot {
            plan.drive(&mut self.state, ctx);
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        if self.theme != Some(self.state.settings.dark) {
            self.theme = Some(self.state.settings.dark);
            ui.ctx().set_theme(if self.state.settings.dark {
                egui::Theme::Dark
            } else {
                egui::Theme::Light
            });
        }
        self.state.ui(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if self.shot.is_none() {
            eframe::set_value(storage, eframe::APP_KEY, &self.state.settings);
        }
    }
}

/// Screenshot mode: run N steps at full speed, let the plots settle, save, close.
struct ShotPlan {
    path: PathBuf,
    steps: usize,
    started: Instant,
    armed: bool,
    settled_frames: u32,
    requested: bool,
    outcome: Arc<Mutex<Option<Result<PathBuf, String>>>>,
}

impl ShotPlan {
    fn drive(&mut self, state: &mut AppState, ctx: &egui::Context) {
        ctx.request_repaint();
        if !self.armed {
            self.armed = true;
            state.settings.speed = None;
            state.settings.stop = StopRule {
                at_step: Some(self.steps),
                heldout_loss_below: None,
            };
            state.send(Command::SetSpeed(None));
            state.send(Command::SetStop(state.settings.stop));
            state.send(Command::Play);
            if state.settings.section == state::Section::GaugeLab
                && state.settings.gauge.zoo.is_none()
            {
                state.settings.gauge.tab = panels::gauge_lab::GaugeTab::Zoo;
                panels::gauge_lab::start_sweep(state, panels::gauge_lab::GaugeTab::Zoo);
            }
            if state.settings.section == state::Section::ControlledTest {
                use panels::analyses::{start_dk, start_eps, start_matched};
                match state.settings.tab {
                    state::LiveTab::Eps => start_eps(state),
                    state::LiveTab::Matched => start_matched(state),
                    state::LiveTab::Dk => start_dk(state),
                    _ => {}
                }
            }
            return;
        }
        if self.started.elapsed() > SHOT_TIMEOUT || state.crashed.is_some() {
            let why = state
                .crashed
                .clone()
                .unwrap_or_else(|| format!("run did not reach {} steps in time", self.steps));
            self.outcome.lock().expect("lock").get_or_insert(Err(why));
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if self.requested {
            return;
        }
        let h = &state.history;
        let run_done = h.step >= self.steps && !h.running;
        let done = match (state.settings.section, state.settings.tab) {
            (state::Section::GaugeLab, _) => {
                !panels::gauge_lab::sweep_running(state) && state.settings.gauge.zoo.is_some()
            }
            (
                state::Section::ControlledTest,
                state::LiveTab::Eps | state::LiveTab::Matched | state::LiveTab::Dk,
            ) => run_done && !state.analyses.busy(),
            (state::Section::ControlledTest, _) => {
                run_done && h.snapshot.as_ref().is_some_and(|s| s.step == h.step)
            }
            _ => true,
        };
        if !done {
            return;
        }
        self.settled_frames += 1;
        if self.settled_frames < 6 {
            return;
        }
        self.requested = true;
        let (path, outcome, ctx2) = (self.path.clone(), self.outcome.clone(), ctx.clone());
        ctx.request_screenshot(move |img| {
            std::thread::spawn(move || {
                let r = state::save_png(&img, &path).map(|()| path.clone());
                *outcome.lock().expect("lock") = Some(r);
                ctx2.send_viewport_cmd(egui::ViewportCommand::Close);
                ctx2.request_repaint();
            });
        });
    }
}
