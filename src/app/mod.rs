//! The desktop app: a thin eframe shell around [`state::AppState`], which holds the UI and is
//! shared with the kittest tests. Training runs on the worker thread ([`crate::worker`]).

pub mod gauge_job;
pub mod history;
pub mod job;
pub mod panels;
pub mod saved;
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
    /// Frame-statistics mode (with `screenshot`): instead of stopping at `run_steps`, stream the
    /// run at full speed for this many seconds, then print frame-time percentiles, the steps
    /// reached and the peak resident memory before the screenshot.
    pub frame_seconds: Option<f64>,
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
    // egui's dark body text (grey 140 on near-black) washes out on a projector.
    ctx.style_mut_of(egui::Theme::Dark, |style| {
        style.visuals.widgets.noninteractive.fg_stroke.color = egui::Color32::from_gray(205);
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
                    frames: opts.frame_seconds.map(FrameStats::new),
                    started: Instant::now(),
                    armed: false,
                    settled_frames: 0,
                    requested: false,
                    outcome: outcome2,
                }
            });
            let mut state = AppState::new(&cc.egui_ctx, settings);
            if let Some(text) = kept_aside {
                let more = state.notice.take().map(|n| format!(" {}", n.text));
                state.notice = Some(state::Notice {
                    text: text + &more.unwrap_or_default(),
                    error: true,
                });
            }
            state.hover = shot.is_none();
            Ok(Box::new(BasisLabApp {
                state,
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

struct BasisLabApp {
    state: AppState,
    shot: Option<ShotPlan>,
    theme: Option<bool>,
    /// When the current frame's `logic` started (for frame statistics).
    frame_began: Instant,
}

impl eframe::App for BasisLabApp {
    /// Runs every frame, also while the window is hidden or minimised (when `ui` is not called),
    /// so worker updates never pile up and screenshot mode always reaches its timeout.
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        let now = Instant::now();
        if let Some(stats) = self.shot.as_mut().and_then(|s| s.frames.as_mut()) {
            stats.frame_started(now, self.frame_began);
        }
        self.frame_began = now;
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
        if let Some(stats) = self.shot.as_mut().and_then(|s| s.frames.as_mut()) {
            stats.frame_finished(self.frame_began.elapsed());
        }
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
    /// Frame-statistics mode, see [`GuiOptions::frame_seconds`].
    frames: Option<FrameStats>,
    armed: bool,
    settled_frames: u32,
    requested: bool,
    outcome: Arc<Mutex<Option<Result<PathBuf, String>>>>,
}

/// Frame times of a frame-statistics run (`--frame-stats`).
struct FrameStats {
    /// Length of the measured window.
    seconds: f64,
    /// Start of the window and the step count then, once the run streams.
    window: Option<(Instant, usize)>,
    /// Seconds between the starts of successive frames inside the window (everything: our
    /// logic and UI, egui's tessellation and the GL renderer).
    intervals: Vec<f64>,
    /// Seconds of our own work per frame inside the window (`logic` + `ui`).
    work: Vec<f64>,
    reported: bool,
}

impl FrameStats {
    fn new(seconds: f64) -> Self {
        Self {
            seconds,
            window: None,
            intervals: Vec::new(),
            work: Vec::new(),
            reported: false,
        }
    }

    fn open(&mut self, step: usize) {
        self.window = Some((Instant::now(), step));
    }

    fn measuring(&self) -> bool {
        self.window.is_some() && !self.reported
    }

    fn frame_started(&mut self, now: Instant, previous: Instant) {
        if self.measuring() {
            self.intervals.push((now - previous).as_secs_f64());
        }
    }

    fn frame_finished(&mut self, work: Duration) {
        if self.measuring() {
            self.work.push(work.as_secs_f64());
        }
    }

    fn report(&self, began: Instant, steps: usize, step: usize) -> String {
        let secs = began.elapsed().as_secs_f64();
        let line = |name: &str, xs: &[f64]| {
            let (p50, p99, max) = percentiles(xs);
            format!(
                "{name}: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                p50 * 1e3,
                p99 * 1e3,
                max * 1e3
            )
        };
        let rss =
            peak_rss_kib().map_or("unknown".into(), |k| format!("{:.0} MB", k as f64 / 1024.0));
        format!(
            "frame stats over {secs:.1} s: {} frames ({:.1} per s) while the run streamed {steps} steps \
             ({:.0} steps/s), now at step {step}\n{}\n{}\npeak resident memory (VmHWM): {rss}",
            self.intervals.len(),
            self.intervals.len() as f64 / secs,
            steps as f64 / secs,
            line("frame time (start to start)", &self.intervals),
            line("app work per frame (logic + ui)", &self.work),
        )
    }
}

/// (p50, p99, max) of `xs` by the nearest-rank rule; NaN for an empty slice.
fn percentiles(xs: &[f64]) -> (f64, f64, f64) {
    if xs.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    (rank(0.5), rank(0.99), v[v.len() - 1])
}

/// Peak resident set size of this process in KiB (`VmHWM` in /proc/self/status; Linux only).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

impl ShotPlan {
    fn drive(&mut self, state: &mut AppState, ctx: &egui::Context) {
        ctx.request_repaint();
        if !self.armed {
            self.armed = true;
            state.settings.speed = None;
            state.settings.stop = StopRule {
                // Frame statistics stream past the preset's own step budget.
                at_step: Some(if self.frames.is_some() {
                    usize::MAX
                } else {
                    self.steps
                }),
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
                    state::LiveTab::Sweep => state.start_sweep(),
                    state::LiveTab::Eps => start_eps(state),
                    state::LiveTab::Matched => start_matched(state),
                    state::LiveTab::Dk => start_dk(state),
                    _ => {}
                }
            }
            return;
        }
        let budget =
            SHOT_TIMEOUT + Duration::from_secs_f64(self.frames.as_ref().map_or(0.0, |f| f.seconds));
        if self.started.elapsed() > budget || state.crashed.is_some() {
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
        if let Some(stats) = &mut self.frames
            && !stats.reported
        {
            let step = state.history.step;
            match stats.window {
                None if step > 0 => stats.open(step),
                Some((began, first)) if began.elapsed().as_secs_f64() >= stats.seconds => {
                    println!("{}", stats.report(began, step - first, step));
                    stats.reported = true;
                    self.steps = 0;
                    state.send(Command::Pause);
                }
                _ => {}
            }
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
            (state::Section::ControlledTest, state::LiveTab::Sweep) => {
                run_done && state.sweep.is_none()
            }
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

#[cfg(test)]
mod tests {
    use super::percentiles;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let xs: Vec<f64> = (1..=200).rev().map(f64::from).collect();
        assert_eq!(percentiles(&xs), (100.0, 198.0, 200.0));
        assert_eq!(percentiles(&[3.0]), (3.0, 3.0, 3.0));
        assert!(percentiles(&[]).0.is_nan());
    }
}
