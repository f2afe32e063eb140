//! The whole UI as one state struct with `ui()`, shared by the eframe shell and the kittest
//! tests. It renders what the worker sent and sends commands; it never trains.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use eframe::egui::{self, Color32, RichText};
use serde::{Deserialize, Serialize};

use super::history::RunHistory;
use super::job::Job;
use super::panels;
use crate::experiment::SweepResult;
use crate::experiment::output::write_atomic;
use crate::preset::{BUNDLED, Preset};
use crate::worker::{Command, StopRule, Update, Worker};

/// The left navigation: the explainer's seven sections and the gauge lab.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Section {
    /// §1 The model in one screen.
    Model,
    /// §2 The model has no favourite axes.
    NoFavouriteAxes,
    /// §3 What a step looks like, GD vs Adam.
    Step,
    /// §4 Why coordinate-wise steps can prefer axes.
    WhyAxes,
    /// §5 The controlled test (the live paired runs).
    #[default]
    ControlledTest,
    /// §6 Reading results honestly.
    Reading,
    /// §7 Blind spots and the wider map.
    BlindSpots,
    /// The factored matrix-sensing lab.
    GaugeLab,
}

impl Section {
    /// All sections in navigation order.
    pub const ALL: [Section; 8] = [
        Section::Model,
        Section::NoFavouriteAxes,
        Section::Step,
        Section::WhyAxes,
        Section::ControlledTest,
        Section::Reading,
        Section::BlindSpots,
        Section::GaugeLab,
    ];

    /// Short name used on the command line (`--panel`).
    pub fn cli_name(self) -> &'static str {
        match self {
            Section::Model => "model",
            Section::NoFavouriteAxes => "axes",
            Section::Step => "step",
            Section::WhyAxes => "why",
            Section::ControlledTest => "test",
            Section::Reading => "reading",
            Section::BlindSpots => "blind-spots",
            Section::GaugeLab => "gauge",
        }
    }

    /// The section called `name` on the command line.
    pub fn from_cli_name(name: &str) -> Option<Section> {
        Section::ALL.into_iter().find(|s| s.cli_name() == name)
    }

    /// The navigation label.
    pub fn title(self) -> &'static str {
        match self {
            Section::Model => "1  The model",
            Section::NoFavouriteAxes => "2  No favourite axes",
            Section::Step => "3  GD vs Adam: one step",
            Section::WhyAxes => "4  Why coordinate-wise steps prefer axes",
            Section::ControlledTest => "5  The controlled test",
            Section::Reading => "6  Reading results honestly",
            Section::BlindSpots => "7  Blind spots",
            Section::GaugeLab => "Gauge lab",
        }
    }
}

/// Which view of the controlled test is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LiveTab {
    /// The live paired run.
    #[default]
    Live,
    /// The memory and its reads over training.
    Activations,
    /// The seed sweep.
    Sweep,
    /// The ε sweep.
    Eps,
    /// Matched budget against matched loss.
    Matched,
    /// The d_k sweep.
    Dk,
}

impl LiveTab {
    /// All tabs in display order, with their labels.
    pub const ALL: [(LiveTab, &'static str); 6] = [
        (LiveTab::Live, "Live run"),
        (LiveTab::Activations, "Memory & reads"),
        (LiveTab::Sweep, "Seed sweep"),
        (LiveTab::Eps, "ε sweep"),
        (LiveTab::Matched, "Matched loss"),
        (LiveTab::Dk, "d_k sweep"),
    ];

    /// Short name used on the command line (`--tab`).
    pub fn cli_name(self) -> &'static str {
        match self {
            LiveTab::Live => "live",
            LiveTab::Activations => "activations",
            LiveTab::Sweep => "sweep",
            LiveTab::Eps => "eps",
            LiveTab::Matched => "matched",
            LiveTab::Dk => "dk",
        }
    }
}

impl std::str::FromStr for LiveTab {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        LiveTab::ALL
            .iter()
            .map(|t| t.0)
            .find(|t| t.cli_name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = LiveTab::ALL.iter().map(|t| t.0.cli_name()).collect();
                format!("unknown tab `{s}`; one of: {}", names.join(", "))
            })
    }
}

/// Everything restored at the next start (eframe persistence).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The experiment.
    pub preset: Preset,
    /// The section shown.
    pub section: Section,
    /// Live run or sweep.
    pub tab: LiveTab,
    /// Dark theme.
    pub dark: bool,
    /// Target speed in steps per second; `None` is as fast as possible.
    pub speed: Option<f64>,
    /// When the run pauses by itself.
    pub stop: StopRule,
    /// Steps taken by "Step N".
    pub step_n: usize,
    /// Seeds in a sweep.
    pub sweep_seeds: usize,
    /// Arm whose random-rotation baseline band is shaded in the A(K) plot.
    pub band_arm: usize,
    /// Plot (c) shows raw column norms instead of the loss.
    pub show_norms: bool,
    /// The gauge lab's settings and last results.
    pub gauge: panels::gauge_lab::GaugeSettings,
    /// The ε, matched and d_k analyses' settings and last results.
    pub analyses: panels::analyses::AnalysisSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            preset: Preset::from_ron(BUNDLED[0].1, "default").expect("bundled preset is valid"),
            section: Section::ControlledTest,
            tab: LiveTab::Live,
            dark: false,
            speed: Some(200.0),
            stop: StopRule::default(),
            step_n: 100,
            sweep_seeds: 8,
            band_arm: 1,
            show_norms: false,
            gauge: panels::gauge_lab::GaugeSettings::default(),
            analyses: panels::analyses::AnalysisSettings::default(),
        }
    }
}

/// A message shown under the toolbar until dismissed.
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    /// The text.
    pub text: String,
    /// Error (red) or information.
    pub error: bool,
}

/// The application state shown by [`AppState::ui`].
pub struct AppState {
    /// Persisted settings.
    pub settings: Settings,
    /// The run as the UI knows it.
    pub history: RunHistory,
    /// The last error or information message.
    pub notice: Option<Notice>,
    /// Set when the worker crashed: the panic message.
    pub crashed: Option<String>,
    /// Text of the "Paste preset" window, when open.
    pub paste_text: Option<String>,
    /// The seed sweep in flight.
    pub sweep: Option<Job<Result<SweepResult, crate::experiment::SweepError>>>,
    /// Whether the "What am I looking at?" window is open.
    pub about_open: bool,
    /// The gauge lab's jobs and live series.
    pub gauge: panels::gauge_lab::GaugeRuntime,
    /// The analyses' background jobs.
    pub analyses: panels::analyses::AnalysisRuntime,
    /// The notice on screen and when it appeared (information notices fade after a while).
    notice_seen: Option<(Notice, std::time::Instant)>,
    /// The last finished sweep.
    pub sweep_result: Option<SweepResult>,
    /// Plots and heatmaps show hover labels (off for screenshots, where the pointer is random).
    pub hover: bool,
    /// Where Ctrl+S screenshots go.
    pub screenshot_dir: PathBuf,
    /// |K| heatmap textures of the latest snapshot, per arm.
    pub heatmap_textures: Vec<Option<egui::TextureHandle>>,
    /// (snapshot serial number, dark theme) the textures were made for.
    pub heatmap_stamp: Option<(u64, bool)>,
    /// Snapshots received since start; identifies the one on screen.
    pub snapshot_serial: u64,
    screenshot_outcome: Arc<Mutex<Option<Result<PathBuf, String>>>>,
    worker: Option<Worker>,
    repaint: Arc<dyn Fn() + Send + Sync>,
}

impl AppState {
    /// Builds the state and starts the worker on `settings.preset`. Settings that fail
    /// [`super::saved::sanitize`] (an invalid preset, out-of-range values, damaged cached
    /// results) are reset or dropped, with a notice. `ctx` is woken by the worker.
    pub fn new(ctx: &egui::Context, mut settings: Settings) -> Self {
        let problems = super::saved::sanitize(&mut settings);
        let notice = (!problems.is_empty()).then(|| Notice {
            text: format!(
                "Some saved settings could not be used and were reset: {}.",
                problems.join("; ")
            ),
            error: true,
        });
        super::apply_style(ctx);
        let ctx2 = ctx.clone();
        let repaint: Arc<dyn Fn() + Send + Sync> = Arc::new(move || ctx2.request_repaint());
        let mut state = Self {
            settings,
            history: RunHistory::default(),
            notice,
            crashed: None,
            paste_text: None,
            sweep: None,
            about_open: false,
            gauge: panels::gauge_lab::GaugeRuntime::default(),
            analyses: panels::analyses::AnalysisRuntime::default(),
            notice_seen: None,
            sweep_result: None,
            hover: true,
            screenshot_dir: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            screenshot_outcome: Arc::new(Mutex::new(None)),
            heatmap_textures: Vec::new(),
            heatmap_stamp: None,
            snapshot_serial: 0,
            worker: None,
            repaint,
        };
        state.start_worker();
        state
    }

    fn start_worker(&mut self) {
        self.worker = None;
        match Worker::spawn(self.settings.preset.clone(), self.repaint.clone()) {
            Ok(w) => {
                w.send(Command::SetSpeed(self.settings.speed));
                w.send(Command::SetStop(self.settings.stop));
                self.worker = Some(w);
                self.crashed = None;
            }
            Err((f, m)) => self.crashed = Some(format!("field `{f}`: {m}")),
        }
    }

    /// Sends a command to the worker (dropped if it has crashed).
    pub fn send(&self, cmd: Command) {
        if let Some(w) = &self.worker {
            w.send(cmd);
        }
    }

    /// Replaces the experiment: validates, then restarts the run (unless only the demos' state
    /// changed). A bad preset changes nothing and leaves an error notice.
    pub fn apply_preset(&mut self, preset: Preset) -> bool {
        match preset.validate() {
            Ok(()) => {
                let restart = !preset.same_experiment(&self.settings.preset);
                if self.notice.as_ref().is_some_and(|n| n.error) {
                    self.notice = None;
                }
                self.settings.preset = preset.clone();
                if restart {
                    self.send(Command::Apply(Box::new(preset)));
                }
                true
            }
            Err((field, msg)) => {
                self.notice = Some(Notice {
                    text: format!("Preset not applied — field `{field}`: {msg}"),
                    error: true,
                });
                false
            }
        }
    }

    /// Loads RON text (a file's or pasted); errors become a notice and change nothing.
    pub fn load_preset_text(&mut self, text: &str, source: &str) -> bool {
        let loaded = Preset::from_ron(text, source);
        self.apply_loaded(loaded, &format!("Loaded {source}."))
    }

    /// Loads a preset file; errors become a notice.
    pub fn load_preset_file(&mut self, path: &Path) -> bool {
        let loaded = Preset::load(&path.to_string_lossy());
        self.apply_loaded(loaded, &format!("Opened {}.", path.display()))
    }

    /// Applies a parsed preset, or reports why it could not be read.
    fn apply_loaded(
        &mut self,
        loaded: Result<Preset, crate::preset::PresetError>,
        success: &str,
    ) -> bool {
        match loaded {
            Ok(p) => {
                let ok = self.apply_preset(p);
                if ok {
                    self.notice = Some(Notice {
                        text: success.into(),
                        error: false,
                    });
                }
                ok
            }
            Err(e) => {
                self.notice = Some(Notice {
                    text: format!("Preset not loaded: {e}"),
                    error: true,
                });
                false
            }
        }
    }

    /// Writes the current preset to `path` atomically; the outcome becomes a notice.
    pub fn save_preset_file(&mut self, path: &Path) -> bool {
        let result = write_atomic(path, self.settings.preset.to_ron().as_bytes());
        self.notice = Some(match &result {
            Ok(()) => Notice {
                text: format!("Saved {}.", path.display()),
                error: false,
            },
            Err(e) => Notice {
                text: format!(
                    "Could not save {}: {e}. The settings are still here; try another folder.",
                    path.display()
                ),
                error: true,
            },
        });
        result.is_ok()
    }

    /// Folds every pending worker update into the history; never blocks.
    pub fn poll(&mut self) {
        self.expire_notice();
        panels::analyses::poll(self);
        let updates: Vec<Update> = match &self.worker {
            Some(w) => w.drain().collect(),
            None => return,
        };
        for u in updates {
            match u {
                Update::Rejected(msg) => {
                    self.notice = Some(Notice {
                        text: format!("Settings not applied — {msg}"),
                        error: true,
                    })
                }
                Update::Crashed(msg) => self.crashed = Some(msg),
                other => {
                    if matches!(other, Update::Snapshot(_)) {
                        self.snapshot_serial += 1;
                    }
                    self.history.apply(other)
                }
            }
        }
        if self.crashed.is_none() && self.worker.as_ref().is_some_and(|w| w.is_finished()) {
            self.crashed = Some("the worker stopped unexpectedly".into());
        }
        if let Some(outcome) = self.screenshot_outcome.lock().expect("lock").take() {
            self.notice = Some(match outcome {
                Ok(p) => Notice {
                    text: format!("Screenshot saved to {}.", p.display()),
                    error: false,
                },
                Err(e) => Notice {
                    text: format!("Screenshot failed: {e}"),
                    error: true,
                },
            });
        }
        if let Some(job) = &mut self.sweep
            && let Some(r) = job.take_result()
        {
            match r.unwrap_or_else(|panic| {
                Err(crate::experiment::SweepError::Invalid(
                    "sweep".into(),
                    format!("the sweep stopped: {panic}"),
                ))
            }) {
                Ok(res) => self.sweep_result = Some(res),
                Err(e) => {
                    self.notice = Some(Notice {
                        text: format!("Sweep stopped: {e}"),
                        error: !matches!(e, crate::experiment::SweepError::Cancelled),
                    })
                }
            }
            self.sweep = None;
        }
    }

    /// Information notices disappear 8 s after they appear; errors stay until dismissed.
    fn expire_notice(&mut self) {
        let Some(n) = &self.notice else {
            self.notice_seen = None;
            return;
        };
        match &self.notice_seen {
            Some((seen, at)) if seen == n => {
                if !n.error && at.elapsed() > std::time::Duration::from_secs(8) {
                    self.notice = None;
                    self.notice_seen = None;
                }
            }
            _ => self.notice_seen = Some((n.clone(), std::time::Instant::now())),
        }
    }

    fn no_file_chosen(&mut self) {
        self.notice = Some(Notice {
            text: "No file chosen. (If no dialog appeared, this desktop offers no file-dialog \
                   service; File → Copy preset and Paste preset… work without one.)"
                .into(),
            error: false,
        });
    }

    /// The callback that wakes the UI, for background jobs.
    pub fn repaint_handle(&self) -> Arc<dyn Fn() + Send + Sync> {
        self.repaint.clone()
    }

    /// Restarts a crashed worker with the current settings.
    pub fn restart_worker(&mut self) {
        self.start_worker();
    }

    /// Starts a seed sweep of the current preset in the background.
    pub fn start_sweep(&mut self) {
        let (preset, seeds) = (
            self.settings.preset.clone(),
            self.settings.sweep_seeds.max(1),
        );
        self.sweep = Some(Job::spawn(
            "basis-lab sweep",
            seeds,
            self.repaint.clone(),
            move |progress, cancel| {
                crate::experiment::sweep_until(&preset, seeds, progress, cancel)
            },
        ));
    }

    /// Asks for a PNG of the next frame, saved into `path` (or a time-stamped file in
    /// [`AppState::screenshot_dir`]); the outcome arrives as a notice.
    pub fn request_screenshot(&self, ctx: &egui::Context, path: Option<PathBuf>) {
        let path = path.unwrap_or_else(|| {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            self.screenshot_dir.join(format!("basis-lab-{secs}.png"))
        });
        let outcome = self.screenshot_outcome.clone();
        let ctx2 = ctx.clone();
        ctx.request_screenshot(move |img| {
            // Encoding a full-window PNG takes a while: keep it off the UI thread.
            std::thread::spawn(move || {
                let r = save_png(&img, &path).map(|()| path.clone());
                *outcome.lock().expect("lock") = Some(r);
                ctx2.request_repaint();
            });
        });
    }

    /// Draws the whole app into `ui` and handles keyboard shortcuts.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        self.poll();
        self.shortcuts(ui);
        egui::Panel::top("menu").show(ui, |ui| self.menu_bar(ui));
        egui::Panel::left("nav")
            .resizable(false)
            .exact_size(270.0)
            .show(ui, |ui| self.nav(ui));
        // The controlled test shows notices under its toolbar; elsewhere they sit on top.
        if self.settings.section != Section::ControlledTest && self.notice.is_some() {
            egui::Panel::top("notice").show(ui, |ui| super::widgets::notice::row(self, ui));
        }
        if self.settings.section == Section::ControlledTest {
            egui::Panel::right("settings")
                .resizable(true)
                .default_size(360.0)
                .show(ui, |ui| panels::settings::ui(self, ui));
        }
        egui::CentralPanel::default().show(ui, |ui| match self.settings.section {
            // On a narrow screen the plots' titles and the table keep their widths and scroll
            // sideways instead of running under the settings column.
            Section::ControlledTest => {
                egui::ScrollArea::horizontal()
                    .id_salt("test scroll")
                    .show(ui, |ui| panels::controlled_test::ui(self, ui));
            }
            Section::GaugeLab => {
                egui::ScrollArea::vertical()
                    .id_salt("gauge scroll")
                    .show(ui, |ui| panels::gauge_lab::ui(self, ui));
            }
            s => panels::demos::ui(self, s, ui),
        });
        self.paste_window(ui);
    }

    fn shortcuts(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::S)) {
            self.request_screenshot(&ctx, None);
        }
        if ctx.egui_wants_keyboard_input() || self.settings.section != Section::ControlledTest {
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
            self.toggle_play();
        }
        if period {
            self.send(Command::Step(1));
        }
        if r {
            self.send(Command::Reset);
        }
    }

    /// Play if paused, pause if running.
    pub fn toggle_play(&mut self) {
        if self.history.running {
            self.send(Command::Pause);
        } else {
            self.send(Command::Play);
        }
    }

    fn menu_bar(&mut self, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open preset…").clicked() {
                    ui.close();
                    match rfd::FileDialog::new()
                        .add_filter("RON preset", &["ron"])
                        .pick_file()
                    {
                        Some(path) => {
                            self.load_preset_file(&path);
                        }
                        None => self.no_file_chosen(),
                    }
                }
                if ui.button("Save preset…").clicked() {
                    ui.close();
                    match rfd::FileDialog::new()
                        .add_filter("RON preset", &["ron"])
                        .set_file_name(format!("{}.ron", self.settings.preset.name))
                        .save_file()
                    {
                        Some(path) => {
                            self.save_preset_file(&path);
                        }
                        None => self.no_file_chosen(),
                    }
                }
                ui.separator();
                if ui.button("Copy preset").clicked() {
                    ui.ctx().copy_text(self.settings.preset.to_ron());
                    self.notice = Some(Notice {
                        text: "Preset copied to the clipboard as RON text.".into(),
                        error: false,
                    });
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
                        self.load_preset_text(text, &format!("the bundled preset `{name}`"));
                        ui.close();
                    }
                }
            });
            ui.menu_button("View", |ui| {
                if ui.checkbox(&mut self.settings.dark, "Dark theme").changed() {
                    ui.close();
                }
            });
            ui.separator();
            ui.label(RichText::new("basis-lab").strong());
            ui.label(RichText::new("does the optimizer leave fingerprints in the basis?").weak());
        });
    }

    fn nav(&mut self, ui: &mut egui::Ui) {
        ui.add_space(8.0);
        ui.label(RichText::new("Sections").heading());
        ui.add_space(6.0);
        for s in Section::ALL {
            if s == Section::GaugeLab {
                ui.add_space(6.0);
                ui.separator();
            }
            let selected = self.settings.section == s;
            if ui.selectable_label(selected, s.title()).clicked() {
                self.settings.section = s;
            }
        }
    }

    fn paste_window(&mut self, ui: &mut egui::Ui) {
        let Some(mut text) = self.paste_text.take() else {
            return;
        };
        let mut open = true;
        let mut load = false;
        egui::Window::new("Paste preset")
            .open(&mut open)
            .default_width(520.0)
            .show(ui.ctx(), |ui| {
                ui.horizontal(|ui| {
                    load = ui.button("Load").clicked();
                    ui.label("Paste a preset's RON text below (Ctrl+V), then press Load.");
                });
                let label = ui.label("Preset text");
                egui::ScrollArea::vertical()
                    .max_height(420.0)
                    .show(ui, |ui| {
                        ui.add(
                            egui::TextEdit::multiline(&mut text)
                                .code_editor()
                                .desired_rows(12)
                                .desired_width(f32::INFINITY),
                        )
                        .labelled_by(label.id);
                    });
            });
        if load {
            if self.load_preset_text(&text, "pasted text") {
                return;
            }
        } else if !open {
            return;
        }
        self.paste_text = Some(text);
    }

    /// The colour for a notice.
    pub fn notice_color(&self, error: bool) -> Color32 {
        if error {
            Color32::from_rgb(200, 40, 40)
        } else if self.settings.dark {
            Color32::from_rgb(120, 200, 140)
        } else {
            Color32::from_rgb(20, 120, 50)
        }
    }
}

/// Encodes `img` as PNG and writes it atomically to `path`.
pub fn save_png(img: &egui::ColorImage, path: &Path) -> Result<(), String> {
    let [w, h] = img.size;
    let bytes: Vec<u8> = img.pixels.iter().flat_map(|c| c.to_array()).collect();
    let buffer = image::RgbaImage::from_raw(w as u32, h as u32, bytes)
        .ok_or_else(|| "screenshot has an unexpected size".to_string())?;
    let mut png = Vec::new();
    buffer
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| e.to_string())?;
    write_atomic(path, &png).map_err(|e| format!("{}: {e}", path.display()))
}
