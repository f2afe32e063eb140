//! What every panel shares: the experiment (the preset), its live paired run on the trainer,
//! the notices, and the look (theme, hover). Panels read and change it through [`Lab`]; it
//! knows no panel.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use eframe::egui::Color32;
use web_time::Instant;

use crate::experiment::live::{Command, StopRule, Trainer, Update};
use crate::history::RunHistory;
use crate::preset::{BUNDLED, Preset, PresetError};

/// A message shown under the menu until dismissed (information fades after 8 s).
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    /// The text.
    pub text: String,
    /// Error (red) or information.
    pub error: bool,
    /// The settings a bundled preset replaced, which the notice's Undo brings back; such a
    /// notice stays until dismissed.
    pub undo: Option<Box<Preset>>,
}

/// The shared state of the app: the experiment and its run, notices and the look.
pub struct Lab {
    /// The experiment every key-lab view shows (persisted).
    pub preset: Preset,
    /// The live run as the UI knows it.
    pub history: RunHistory,
    /// The last error or information message.
    pub notice: Option<Notice>,
    /// Set when the trainer crashed: the panic message.
    pub crashed: Option<String>,
    /// Dark theme (persisted).
    pub dark: bool,
    /// Plots and heatmaps show hover labels (off for screenshots, where the pointer is random).
    pub hover: bool,
    /// Target speed of the live run in steps per second; `None` is as fast as possible.
    pub speed: Option<f64>,
    /// When the live run pauses by itself.
    pub stop: StopRule,
    /// Snapshots received since start; identifies the one on screen.
    pub snapshot_serial: u64,
    /// Chains the optimizer workbench hands to another view ("Use as …"): that view's path and
    /// the chain's text. The view takes its own in its `logic` ([`Lab::take_handed`]).
    pub handed: Vec<(&'static str, String)>,
    trainer: Option<Trainer>,
    repaint: Arc<dyn Fn() + Send + Sync>,
    /// The notice on screen and when it appeared.
    notice_seen: Option<(Notice, Instant)>,
}

impl Lab {
    /// Starts the trainer on `preset` (on the default preset, with an error notice, if `preset`
    /// is invalid). `repaint` wakes the UI.
    pub fn new(
        preset: Preset,
        dark: bool,
        speed: Option<f64>,
        stop: StopRule,
        repaint: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        let mut lab = Self {
            preset,
            history: RunHistory::default(),
            notice: None,
            crashed: None,
            dark,
            hover: true,
            speed,
            stop,
            snapshot_serial: 0,
            handed: Vec::new(),
            trainer: None,
            repaint,
            notice_seen: None,
        };
        if let Err(e) = lab.preset.validate() {
            lab.error(format!(
                "The saved settings were invalid ({e}); the default preset is loaded."
            ));
            lab.preset = default_preset();
        }
        lab.restart_worker();
        lab
    }

    /// Starts (or restarts after a crash) the trainer on the current preset.
    pub fn restart_worker(&mut self) {
        self.trainer = None;
        match Trainer::spawn(self.preset.clone(), self.repaint.clone()) {
            Ok(t) => {
                t.send(Command::SetSpeed(self.speed));
                t.send(Command::SetStop(self.stop));
                self.trainer = Some(t);
                self.crashed = None;
            }
            Err(e) => self.crashed = Some(e.to_string()),
        }
    }

    /// Sends a command to the trainer (dropped if it has crashed).
    pub fn send(&self, cmd: Command) {
        if let Some(t) = &self.trainer {
            t.send(cmd);
        }
    }

    /// Play if paused, pause if running.
    pub fn toggle_play(&self) {
        self.send(if self.history.running {
            Command::Pause
        } else {
            Command::Play
        });
    }

    /// The chains handed to the view at `path` ([`Lab::handed`]), taken out in the order given.
    pub fn take_handed(&mut self, path: &str) -> Vec<String> {
        let (mine, others) = std::mem::take(&mut self.handed)
            .into_iter()
            .partition(|(p, _)| *p == path);
        self.handed = others;
        mine.into_iter().map(|(_, text)| text).collect()
    }

    /// The callback that wakes the UI, for background jobs.
    pub fn repaint_handle(&self) -> Arc<dyn Fn() + Send + Sync> {
        self.repaint.clone()
    }

    /// Shows an information notice.
    pub fn inform(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice {
            text: text.into(),
            error: false,
            undo: None,
        });
    }

    /// Shows an error notice.
    pub fn error(&mut self, text: impl Into<String>) {
        self.notice = Some(Notice {
            text: text.into(),
            error: true,
            undo: None,
        });
    }

    /// The file the upload in `slot` delivered, once it has (the slot is then emptied); a
    /// cancelled picker is told as "No file chosen." and a failed fetch as an error, and both
    /// give `None`.
    #[cfg(target_arch = "wasm32")]
    pub fn collect_upload(
        &mut self,
        slot: &mut Option<super::files::Upload>,
    ) -> Option<(String, Vec<u8>)> {
        let picked = slot.as_ref().and_then(super::files::Upload::take)?;
        *slot = None;
        match picked {
            Ok(Some(file)) => Some(file),
            Ok(None) => {
                self.inform("No file chosen.");
                None
            }
            Err(why) => {
                self.error(why);
                None
            }
        }
    }

    /// The colour of a notice's text.
    pub fn notice_color(&self, error: bool) -> Color32 {
        if error {
            Color32::from_rgb(200, 40, 40)
        } else if self.dark {
            Color32::from_rgb(120, 200, 140)
        } else {
            Color32::from_rgb(20, 120, 50)
        }
    }

    /// Replaces the experiment: validates, then restarts the run (unless only the demos' state
    /// changed). A bad preset changes nothing and leaves an error notice.
    pub fn apply_preset(&mut self, preset: Preset) -> bool {
        match preset.validate() {
            Ok(()) => {
                let restart = !preset.same_experiment(&self.preset);
                if self.notice.as_ref().is_some_and(|n| n.error) {
                    self.notice = None;
                }
                self.preset = preset.clone();
                if restart {
                    self.send(Command::Apply(Box::new(preset)));
                }
                true
            }
            Err(e) => {
                self.error(format!("Preset not applied — {e}"));
                false
            }
        }
    }

    /// Loads RON text (a file's or pasted) or a share string (`bl1:…`, see [`crate::share`]);
    /// errors become a notice and change nothing.
    pub fn load_preset_text(&mut self, text: &str, source: &str) -> bool {
        let loaded = crate::share::parse_pasted::<Preset>(text, source);
        let source = if crate::share::is_share_string(text) {
            "the share string"
        } else {
            source
        };
        self.apply_loaded(loaded, &format!("Loaded {source}."))
    }

    /// Loads a preset file; errors become a notice.
    pub fn load_preset_file(&mut self, path: &Path) -> bool {
        let loaded = Preset::load(path);
        self.apply_loaded(loaded, &format!("Opened {}.", path.display()))
    }

    /// Loads the bundled preset `name` (its RON `text`). When that replaces settings that are
    /// not a bundled preset's (the reader's edits), the notice offers Undo ([`Lab::undo`]).
    pub fn load_bundled(&mut self, name: &str, text: &str) -> bool {
        let before = self.preset.clone();
        let edited = !BUNDLED
            .iter()
            .filter_map(|(n, t)| Preset::from_ron(t, n).ok())
            .any(|p| p.same_experiment(&before));
        let ok = self.load_preset_text(text, &format!("the bundled preset `{name}`"));
        if ok && edited && !before.same_experiment(&self.preset) {
            self.notice = Some(Notice {
                text: format!(
                    "Loaded the bundled preset `{name}`; your edited settings were replaced."
                ),
                error: false,
                undo: Some(Box::new(before)),
            });
        }
        ok
    }

    /// Brings back the settings the notice's bundled preset replaced (and restarts the run on
    /// them); does nothing without such a notice.
    pub fn undo(&mut self) {
        if let Some(before) = self.notice.as_mut().and_then(|n| n.undo.take())
            && self.apply_preset(*before)
        {
            self.inform("Your settings are back.");
        }
    }

    fn apply_loaded(&mut self, loaded: Result<Preset, PresetError>, success: &str) -> bool {
        match loaded {
            Ok(p) => {
                let ok = self.apply_preset(p);
                if ok {
                    self.inform(success);
                }
                ok
            }
            Err(e) => {
                self.error(format!("Preset not loaded: {e}"));
                false
            }
        }
    }

    /// Writes the current preset to `path` atomically; the outcome becomes a notice.
    pub fn save_preset_file(&mut self, path: &Path) -> bool {
        let text = self.preset.to_ron();
        self.write_file(path, text.as_bytes(), "The settings are still here")
    }

    /// Writes `bytes` to `path` atomically (in the web build: downloads them, see
    /// [`super::files::write`]); the outcome becomes a notice, which on failure says `kept`
    /// (what is still in memory for another try).
    pub fn write_file(&mut self, path: &Path, bytes: &[u8], kept: &str) -> bool {
        match super::files::write(path, bytes) {
            Ok(done) => {
                self.inform(done);
                true
            }
            Err(e) => {
                self.error(format!(
                    "Could not save {}: {e}. {kept}; try another folder.",
                    path.display()
                ));
                false
            }
        }
    }

    /// Folds every pending trainer update into the history and expires old notices; never
    /// blocks.
    pub fn poll(&mut self) {
        self.expire_notice();
        let Some(trainer) = &self.trainer else {
            return;
        };
        let finished = trainer.is_finished();
        for u in trainer.drain() {
            match u {
                Update::Rejected(msg) => self.error(format!("Settings not applied — {msg}")),
                Update::Crashed(msg) => self.crashed = Some(msg),
                other => {
                    if matches!(other, Update::Snapshot(_)) {
                        self.snapshot_serial += 1;
                    }
                    self.history.apply(other)
                }
            }
        }
        if self.crashed.is_none() && finished {
            self.crashed = Some("the worker stopped unexpectedly".into());
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
                if !n.error && n.undo.is_none() && at.elapsed() > Duration::from_secs(8) {
                    self.notice = None;
                    self.notice_seen = None;
                }
            }
            _ => self.notice_seen = Some((n.clone(), Instant::now())),
        }
    }
}

/// The first bundled preset.
pub fn default_preset() -> Preset {
    Preset::from_ron(BUNDLED[0].1, "default").expect("bundled preset is valid")
}
