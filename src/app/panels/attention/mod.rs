//! Attention twins: one seed of an attention preset (`src/attention`) trained live on the library's
//! driver ([`crate::attention::live`]) — every rule's base transformer beside its twins — with the twins' logit distance,
//! the training curves, the per-head query–key differences and the paper's checkpoints.

mod run_view;
mod view;

pub use crate::attention::live::{Command, Update};
pub use run_view::RunView;
pub use view::Curves;

use eframe::egui::{self, Color32, RichText};
use serde::{Deserialize, Serialize};

use crate::app::lab::Lab;
use crate::app::panel::{Panel, Status, Table, from_ron, to_ron};
use crate::app::widgets::paste::paste_window;
use crate::attention::live::{self, AttentionLive};
use crate::attention::{AttentionPreset, BUNDLED_ATTENTION, RunSpec, TwinKind};
use crate::experiment::check::ATTENTION_LR;
use crate::live::Fan;
use crate::optim::chain_spec;

/// The section's id (its path, for [`Lab::handed`]).
pub const ID: &str = "attention";

/// Where the section's preset comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Source {
    /// A preset of [`BUNDLED_ATTENTION`], by name.
    Bundled(String),
    /// A preset opened from a file or pasted, kept whole.
    Custom(AttentionPreset),
}

impl Source {
    /// `preset` as a source: a bundled one by name when it is exactly that bundled preset
    /// (a link or paste of `ba1:attention-quick`), else kept whole.
    pub fn of(preset: AttentionPreset) -> Self {
        let bundled = Source::Bundled(preset.name.clone());
        match bundled.preset() {
            Ok(b) if b == preset => bundled,
            _ => Source::Custom(preset),
        }
    }

    /// The preset, or why it cannot be used (unknown bundled name, a field out of range).
    pub fn preset(&self) -> Result<AttentionPreset, String> {
        match self {
            Source::Bundled(name) => {
                let (_, text) = BUNDLED_ATTENTION
                    .iter()
                    .find(|(n, _)| n == name)
                    .ok_or_else(|| format!("no bundled attention preset is called `{name}`"))?;
                AttentionPreset::from_ron(text, &format!("presets/{name}.ron"))
                    .map_err(|e| e.to_string())
            }
            Source::Custom(p) => p.validate().map(|()| p.clone()).map_err(|e| e.to_string()),
        }
    }
}

/// The section's saved settings: the preset, the seed and the plot choices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The preset run.
    pub source: Source,
    /// The seed run (the preset's own seed when it is chosen).
    pub seed: u64,
    /// What the training-curve plot shows.
    pub curves: Curves,
    /// The run (by name) whose query–key differences the heatmap shows.
    pub heat_run: String,
    /// The twin kind the heatmap compares with its base model.
    pub heat_twin: TwinKind,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            source: Source::Bundled("attention-quick".into()),
            seed: 0,
            curves: Curves::Accuracy,
            heat_run: "adam".into(),
            heat_twin: TwinKind::Gauge,
        }
    }
}

/// The "Attention twins" section.
pub struct AttentionTwins {
    /// What is saved.
    pub settings: Settings,
    preset: AttentionPreset,
    job: Option<Fan<AttentionLive>>,
    /// What the run has reported.
    pub view: RunView,
    /// Where a Play of screenshot mode pauses (for [`Panel::status`]).
    until: Option<usize>,
    /// Text of the paste window, when open.
    pub paste_text: Option<String>,
    about_open: bool,
    /// The preset file being chosen in the page (opening is an upload there).
    #[cfg(target_arch = "wasm32")]
    upload: Option<crate::app::files::Upload>,
}

impl Default for AttentionTwins {
    fn default() -> Self {
        let settings = Settings::default();
        let preset = settings.source.preset().expect("bundled preset is valid");
        Self {
            view: RunView::new(&preset),
            settings,
            preset,
            job: None,
            until: None,
            paste_text: None,
            about_open: false,
            #[cfg(target_arch = "wasm32")]
            upload: None,
        }
    }
}

impl AttentionTwins {
    /// The preset as run (the chosen one with the chosen seed).
    pub fn preset(&self) -> &AttentionPreset {
        &self.preset
    }

    /// Switches to `source` at its own seed and starts afresh at step 0; a preset that does not
    /// validate changes nothing and returns why.
    pub fn set_source(&mut self, source: Source) -> Result<(), String> {
        let preset = source.preset()?;
        self.settings.seed = preset.seed;
        self.settings.source = source;
        self.rebuild(preset);
        Ok(())
    }

    /// Runs seed `seed` of the current preset from step 0 (nothing if that seed overflows).
    pub fn set_seed(&mut self, seed: u64) -> Result<(), String> {
        let mut p = self.preset.clone();
        p.seed = seed;
        p.validate().map_err(|e| e.to_string())?;
        self.settings.seed = seed;
        self.rebuild(p);
        Ok(())
    }

    /// Drops the run; the next frame starts the new one at step 0. The run dropped stays in
    /// the plots, faded, named by what `preset` changes (its seed, or the preset).
    fn rebuild(&mut self, preset: AttentionPreset) {
        self.job = None;
        self.until = None;
        let mut past = std::mem::take(&mut self.view.past);
        if self.view.step.is_some_and(|s| s > 0) {
            let label = if self.preset.name != preset.name {
                format!("preset {}", self.preset.name)
            } else if self.preset.seed != preset.seed {
                format!("seed {}", self.preset.seed)
            } else {
                "same settings".into()
            };
            let run = crate::attention::figures::PastRun {
                preset: self.preset.clone(),
                models: self.view.curves(),
            };
            let max = crate::attention::figures::MAX_PAST_RUNS;
            crate::figure::Earlier::keep(&mut past, label, run, max);
        }
        self.view = RunView::new(&preset);
        self.view.past = past;
        if !preset
            .runs
            .iter()
            .any(|r| r.name() == self.settings.heat_run)
        {
            self.settings.heat_run = preset.runs[0].name().to_string();
        }
        self.preset = preset;
    }

    /// Adds a run of the chain `text` at the workbench's check rate ([`ATTENTION_LR`]) with
    /// its gauge and noise twins to the preset, which starts afresh at step 0; its name, or why
    /// it was refused (the preset's runs are full, the chain does not validate).
    pub fn add_chain_run(&mut self, text: &str) -> Result<String, String> {
        let mut p = self.preset.clone();
        let rule = chain_spec(text, ATTENTION_LR, |n| p.runs.iter().any(|r| r.name() == n));
        let name = rule.arm_name().to_string();
        p.runs.push(RunSpec {
            rule,
            rest: None,
            twins: vec![TwinKind::Gauge, TwinKind::Noise],
        });
        self.set_source(Source::Custom(p))?;
        Ok(name)
    }

    /// Back to step 0 with the same preset and seed.
    pub fn reset(&mut self) {
        self.rebuild(self.preset.clone());
    }

    /// The running job, started (measuring step 0) if there is none.
    fn job(&mut self, lab: &Lab) -> &Fan<AttentionLive> {
        let (preset, seed) = (&self.preset, self.preset.seed);
        self.job
            .get_or_insert_with(|| live::start(preset.clone(), seed, lab.repaint_handle()))
    }

    /// Sends a transport command, starting the run if needed.
    pub fn command(&mut self, cmd: Command, lab: &Lab) {
        if self.view.failed.is_some() {
            return;
        }
        self.job(lab).send(cmd);
        // Play shows as running at once; a Pause shows once the run answers (it finishes the
        // step in progress first).
        if !matches!(cmd, Command::Pause) {
            self.view.running = true;
        }
    }

    fn play_pause(&mut self, lab: &Lab) {
        if self.view.running {
            self.command(Command::Pause, lab);
        } else {
            self.command(Command::Play { until: None }, lab);
        }
    }
}

impl Panel for AttentionTwins {
    fn id(&self) -> &'static str {
        ID
    }

    /// The preset as run, its seed included.
    fn share(&self) -> Option<String> {
        Some(crate::share::encode(&self.preset))
    }

    fn open_shared(&mut self, text: &str) -> Option<Result<String, String>> {
        let prefix = format!("{}:", <AttentionPreset as crate::share::Shareable>::PREFIX);
        if !text.starts_with(&prefix) {
            return None;
        }
        let loaded = crate::share::parse_pasted::<AttentionPreset>(text, "link")
            .map_err(|e| e.to_string())
            .and_then(|p| {
                let name = p.name.clone();
                self.set_source(Source::of(p)).map(|()| name)
            });
        Some(loaded)
    }

    fn title(&self) -> &'static str {
        "Attention twins"
    }

    fn logic(&mut self, lab: &mut Lab) {
        if let Some(job) = &self.job {
            for m in job.drain() {
                self.view.apply(m);
            }
        }
        for text in lab.take_handed(ID) {
            match self.add_chain_run(&text) {
                Ok(name) => lab.inform(format!(
                    "Added the run `{name}` (your chain at lr {ATTENTION_LR:e}, with its gauge and \
                     noise twins) to the attention twins; it starts at step 0 there."
                )),
                Err(e) => lab.error(format!(
                    "The chain was not added to the attention twins: {e}"
                )),
            }
        }
        #[cfg(target_arch = "wasm32")]
        self.collect_upload(lab);
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        self.job(lab);
        egui::ScrollArea::vertical()
            .id_salt("attention scroll")
            .show(ui, |ui| {
                self.header(ui, lab);
                self.transport(ui, lab);
                ui.separator();
                view::plots(ui, lab, &self.preset, &mut self.view, &mut self.settings);
            });
        self.paste_window(ui, lab);
    }

    /// Plays to `lab.stop.at_step` (screenshot mode's step count) or to the end.
    fn start(&mut self, lab: &mut Lab) -> bool {
        let until = lab.stop.at_step.map(|s| s.min(self.preset.steps));
        self.until = Some(until.unwrap_or(self.preset.steps));
        self.command(Command::Play { until }, lab);
        true
    }

    fn status(&self, _lab: &Lab) -> Status {
        Status {
            busy: self.view.failed.is_none()
                && (self.view.step.is_none()
                    || self.until.is_some_and(|u| self.view.step < Some(u))),
            awaits_run: false,
            live_step: self.view.step,
        }
    }

    /// The checkpoint table (the logit distance of every twin at steps 0, 1, 100 and the last,
    /// beside the paper's), as its Export CSV writes it; once step 0 is measured.
    fn table(&self) -> Option<Table> {
        self.view.step?;
        let bytes = self.view.checkpoint_csv(&self.preset);
        Some(("attention-checkpoints.csv".into(), bytes))
    }

    fn save(&self) -> Option<String> {
        to_ron(&self.settings)
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let mut s: Settings = from_ron(ron)?;
        let mut notes = Vec::new();
        let mut preset = match s.source.preset() {
            Ok(p) => p,
            Err(e) => {
                notes.push(format!(
                    "the attention preset ({e}) was replaced by attention-quick"
                ));
                s.source = Settings::default().source;
                s.seed = 0;
                s.source.preset().expect("bundled preset is valid")
            }
        };
        preset.seed = s.seed;
        if let Err(e) = preset.validate() {
            notes.push(format!("`seed` {} ({e}); reset", s.seed));
            preset.seed = s.source.preset().expect("checked above").seed;
            s.seed = preset.seed;
        }
        if !preset.runs.iter().any(|r| r.name() == s.heat_run) {
            notes.push(format!(
                "`heat_run` `{}` is not a run of the preset; the first run is shown",
                s.heat_run
            ));
            s.heat_run = preset.runs[0].name().to_string();
        }
        self.settings = s;
        self.rebuild(preset);
        Ok(notes)
    }
}

impl AttentionTwins {
    fn header(&mut self, ui: &mut egui::Ui, lab: &Lab) {
        ui.horizontal_wrapped(|ui| {
            ui.heading("Attention twins");
            ui.label(RichText::new("one transformer, trained in two bases").weak());
        });
        let mut about = self.about_open;
        if ui
            .selectable_label(about, "What am I looking at?")
            .on_hover_text("The twins, and how to read the plots")
            .clicked()
        {
            about = !about;
        }
        egui::Window::new("Attention twins: what am I looking at?")
            .open(&mut about)
            .default_width(640.0)
            .vscroll(true)
            .show(ui.ctx(), |ui| {
                for paragraph in view::ABOUT {
                    ui.label(*paragraph);
                    ui.add_space(4.0);
                }
            });
        self.about_open = about;
        ui.label(view::SUMMARY);
        if let Some(why) = &self.view.failed {
            egui::Frame::new()
                .fill(Color32::from_rgb(150, 20, 20))
                .inner_margin(8.0)
                .corner_radius(4.0)
                .show(ui, |ui| {
                    ui.label(
                        RichText::new(format!(
                            "The attention run stopped: {why}. Reset starts it again."
                        ))
                        .color(Color32::WHITE)
                        .strong(),
                    );
                });
        }
        for line in self.view.divergence_lines(&self.preset) {
            ui.label(RichText::new(line).color(lab.notice_color(true)));
        }
    }

    fn transport(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        let mut choice: Option<Source> = None;
        let mut seed = self.settings.seed;
        let mut open_file = false;
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("preset");
            let current = match &self.settings.source {
                Source::Bundled(n) => n.clone(),
                Source::Custom(p) => format!("{} (custom)", p.name),
            };
            egui::ComboBox::from_id_salt("attention preset")
                .selected_text(current)
                .show_ui(ui, |ui| {
                    for (name, _) in BUNDLED_ATTENTION {
                        if ui.selectable_label(false, *name).clicked() {
                            choice = Some(Source::Bundled((*name).into()));
                        }
                    }
                })
                .response
                .labelled_by(l.id);
            open_file = ui
                .button("Open file…")
                .on_hover_text("An attention preset (.ron), as `basis-lab attention FILE` reads")
                .clicked();
            if ui
                .button("Copy")
                .on_hover_text("Copy the preset's share string (ba1:…), one line for a message")
                .clicked()
            {
                let line = crate::share::encode(&self.preset);
                ui.ctx().copy_text(line.clone());
                lab.inform(format!(
                    "Attention preset copied as its share string: {line}"
                ));
            }
            if ui
                .button("Paste…")
                .on_hover_text("Paste an attention preset's share string (ba1:…) or RON text")
                .clicked()
            {
                self.paste_text.get_or_insert_with(String::new);
            }
            let l = ui.label("seed");
            ui.add(egui::DragValue::new(&mut seed).update_while_editing(false))
                .labelled_by(l.id);
            ui.label(
                RichText::new(format!(
                    "{} models of {} parameters, {} steps",
                    self.preset.models_per_seed(),
                    self.preset.arch().numbers(),
                    self.preset.steps
                ))
                .weak(),
            );
        });
        #[cfg(not(target_arch = "wasm32"))]
        if open_file {
            match crate::app::files::pick_file("RON preset", "ron") {
                Some(path) => match AttentionPreset::load(&path) {
                    Ok(p) => choice = Some(Source::of(p)),
                    Err(e) => lab.error(format!("Attention preset not loaded: {e}")),
                },
                None => lab.inform("No file chosen."),
            }
        }
        #[cfg(target_arch = "wasm32")]
        if open_file {
            let repaint = lab.repaint_handle();
            self.upload = Some(crate::app::files::Upload::start(
                "RON preset",
                "ron",
                repaint,
            ));
        }
        if let Some(source) = choice {
            if let Err(e) = self.set_source(source) {
                lab.error(format!("Attention preset not loaded: {e}"));
            }
        } else if seed != self.settings.seed
            && let Err(e) = self.set_seed(seed)
        {
            lab.error(format!("Seed not applied: {e}"));
        }
        ui.horizontal_wrapped(|ui| {
            let play = if self.view.running {
                "❚❚ Pause"
            } else {
                "▶ Play"
            };
            let finished = self.view.step == Some(self.preset.steps);
            if ui
                .add_enabled(
                    !finished || self.view.running,
                    egui::Button::new(RichText::new(play).strong()),
                )
                .clicked()
            {
                self.play_pause(lab);
            }
            if ui
                .add_enabled(!finished, egui::Button::new("Step"))
                .on_hover_text("One training step of every model")
                .clicked()
            {
                self.command(Command::Step(1), lab);
            }
            if ui
                .button("⟲ Reset")
                .on_hover_text("Back to step 0 with the same preset and seed")
                .clicked()
            {
                self.reset();
            }
            let done = self.view.step.map_or(0, |s| s + 1);
            ui.add(
                egui::ProgressBar::new(done as f32 / (self.preset.steps + 1) as f32)
                    .desired_width(200.0),
            );
            let step = self.view.step.map_or("starting".into(), |s| {
                format!("step {s} / {}", self.preset.steps)
            });
            ui.label(RichText::new(step).monospace().strong());
            let state = if self.view.failed.is_some() {
                "stopped"
            } else if self.view.running {
                "running"
            } else if finished {
                "finished"
            } else {
                "paused"
            };
            ui.label(RichText::new(state).weak());
        });
    }

    /// Loads the preset file the browser's picker delivered, if it has.
    #[cfg(target_arch = "wasm32")]
    fn collect_upload(&mut self, lab: &mut Lab) {
        let Some((name, bytes)) = lab.collect_upload(&mut self.upload) else {
            return;
        };
        let loaded = AttentionPreset::from_ron(&String::from_utf8_lossy(&bytes), &name)
            .map_err(|e| e.to_string())
            .and_then(|p| {
                let name = p.name.clone();
                self.set_source(Source::of(p)).map(|()| name)
            });
        match loaded {
            Ok(name) => lab.inform(format!("Loaded the attention preset `{name}`.")),
            Err(e) => lab.error(format!("Attention preset not loaded: {e}")),
        }
    }

    fn paste_window(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        let mut text = self.paste_text.take();
        paste_window(ui.ctx(), &mut text, "attention preset", |text| {
            match crate::share::parse_pasted::<AttentionPreset>(text, "pasted text")
                .map_err(|e| e.to_string())
                .and_then(|p| {
                    let name = p.name.clone();
                    self.set_source(Source::of(p)).map(|()| name)
                }) {
                Ok(name) => {
                    lab.inform(format!("Loaded the attention preset `{name}`."));
                    true
                }
                Err(e) => {
                    lab.error(format!("Attention preset not loaded: {e}"));
                    false
                }
            }
        });
        self.paste_text = text;
    }
}
