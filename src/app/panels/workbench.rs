//! "Your optimizer": an update rule composed from transforms (the palette is
//! [`TRANSFORMS`]), its predicted class in each lab as it is edited, `basis-lab check`'s twins
//! run in the background with their verdict table, and the rule handed to the labs: as an arm
//! of the controlled test, as a rule of the gauge lab's zoo and live runs, and as a run of the
//! attention twins. A link carries the chain as `?view=optimizer&chain=TEXT`.

use eframe::egui::{self, RichText};
use serde::{Deserialize, Serialize};

use crate::app::analysis::Analysis;
use crate::app::lab::Lab;
use crate::app::panel::{Panel, Status, Table, from_ron, to_ron};
use crate::app::widgets::plots::{export_button, export_table};
use crate::app::widgets::reflow;
use crate::app::widgets::status::{before_results, progress_row, stale_note};
use crate::experiment::check::{
    self, ChainCheck, CheckTask, KEY_LR, Subject, agreement, predicted_word,
};
use crate::optim::transforms::{ArgKind, TRANSFORMS, TransformInfo};
use crate::optim::{BUNDLED_CHAINS, ChainSpec, Lab as LabKind, MAX_TRANSFORMS, chain_spec};

/// The section's id: `--panel optimizer`, `?view=optimizer`.
pub const ID: &str = "optimizer";

/// The chain a new workbench starts from (the README's first try).
const DEFAULT_CHAIN: &str = "clip_by_global_norm(1) | scale_by_adam()";

/// One transform of the chain being edited: its entry and each argument as typed (the chain's
/// parser judges the text, so an editor value out of range gets the parser's message).
#[derive(Clone)]
struct Row {
    info: &'static TransformInfo,
    args: Vec<String>,
}

impl Row {
    /// The transform at its defaults.
    fn new(info: &'static TransformInfo) -> Self {
        let args = info.args.iter().map(|a| a.text(a.default)).collect();
        Self { info, args }
    }

    /// The row's text form, every argument named.
    fn text(&self) -> String {
        let args: Vec<String> = (self.info.args.iter().zip(&self.args))
            .map(|(a, v)| format!("{}={}", a.name, v.trim()))
            .collect();
        format!("{}({})", self.info.name, args.join(", "))
    }
}

/// The section: the chain, its last check and the palette's choice.
pub struct Workbench {
    rows: Vec<Row>,
    /// The palette's transform (an index into [`TRANSFORMS`]).
    pick: usize,
    /// The chain as one line of text, to type or paste a whole chain.
    text: String,
    /// Why the typed line was refused.
    text_error: Option<String>,
    /// The chain's text as last copied into [`Workbench::text`]: the line follows the editor
    /// when the chain changes there, and keeps what is typed otherwise.
    mirrored: Option<String>,
    /// The last check and the chain text it checked.
    pub analysis: Analysis<String, ChainCheck>,
}

impl Default for Workbench {
    fn default() -> Self {
        let mut w = Self {
            rows: Vec::new(),
            pick: 0,
            text: DEFAULT_CHAIN.into(),
            text_error: None,
            mirrored: None,
            analysis: Analysis::default(),
        };
        w.set_chain(DEFAULT_CHAIN)
            .expect("the default chain parses");
        w
    }
}

/// What the section saves.
#[derive(Serialize, Deserialize)]
#[serde(default)]
struct Saved {
    chain: String,
    analysis: Analysis<String, ChainCheck>,
}

impl Default for Saved {
    fn default() -> Self {
        Self {
            chain: DEFAULT_CHAIN.into(),
            analysis: Analysis::default(),
        }
    }
}

impl Workbench {
    /// The chain as edited, parsed; the parser's error names the transform, its position, the
    /// argument and its allowed values.
    pub fn spec(&self) -> Result<ChainSpec, String> {
        // A value holding the text form's own punctuation would splice other arguments or
        // transforms into the chain: refused here as the parser refuses a bad value.
        for (i, row) in self.rows.iter().enumerate() {
            for (a, v) in row.info.args.iter().zip(&row.args) {
                if v.contains([',', '(', ')', '|', '=']) {
                    return Err(format!(
                        "transform {} (`{}`): argument `{}`: `{}` is not allowed; allowed {}",
                        i + 1,
                        row.info.name,
                        a.name,
                        v.trim(),
                        a.allowed()
                    ));
                }
            }
        }
        let text: Vec<String> = self.rows.iter().map(Row::text).collect();
        ChainSpec::parse(&text.join(" | ")).map_err(|e| e.message)
    }

    /// The chain's canonical text, when it parses.
    pub fn chain_text(&self) -> Option<String> {
        self.spec().ok().map(|s| s.to_string())
    }

    /// Replaces the chain by `text`: a chain, a registered rule's name (its chain) or a bundled
    /// chain's name. Errors (nothing changes): text that does not parse, or a rule no chain
    /// expresses.
    pub fn set_chain(&mut self, text: &str) -> Result<(), String> {
        let spec = match check::resolve(text).map_err(|e| e.message)? {
            (_, Subject::Chain(c)) => c,
            (name, Subject::Rule(_)) => {
                return Err(format!(
                    "`{}` is a registered rule no chain of transforms expresses (its flow steps \
                     need the lab's gradient); check it with `basis-lab check`",
                    name.unwrap_or_default()
                ));
            }
        };
        self.rows = (spec.steps.iter())
            .map(|s| Row {
                info: s.info,
                args: (s.info.args.iter().zip(&s.args))
                    .map(|(a, &x)| a.text(x))
                    .collect(),
            })
            .collect();
        self.text = spec.to_string();
        self.text_error = None;
        Ok(())
    }

    /// Hands the chain to the controlled test as a new arm at the check's key-lab rate
    /// ([`KEY_LR`]); the notice says where it went, or why the preset refused it.
    fn use_as_arm(&self, text: &str, lab: &mut Lab) {
        let mut p = lab.preset.clone();
        let arm = chain_spec(text, KEY_LR, |n| p.arms.iter().any(|a| a.arm_name() == n));
        let name = arm.arm_name().to_string();
        p.arms.push(arm);
        if lab.apply_preset(p) {
            lab.inform(format!(
                "Added the arm `{name}` (your chain at lr {KEY_LR}) to the controlled test's \
                 preset; its live run restarted with it (Controlled test, Live run)."
            ));
        }
    }

    /// The editor: one line per transform with its arguments, moves and removal, then the
    /// palette.
    fn editor(&mut self, ui: &mut egui::Ui, spec: Option<&ChainSpec>) {
        let (mut up, mut remove) = (None, None);
        let rows = self.rows.len();
        for (i, row) in self.rows.iter_mut().enumerate() {
            ui.horizontal_wrapped(|ui| {
                ui.label(RichText::new(format!("{}.", i + 1)).monospace());
                // Moves and removal first, so they line up from row to row.
                let name = row.info.name;
                let button = |ui: &mut egui::Ui, text: &str, enabled: bool, hover: String| {
                    ui.add_enabled(enabled, egui::Button::new(text).small())
                        .on_hover_text(hover)
                        .clicked()
                };
                if button(ui, "↑", i > 0, format!("Move {name} up")) {
                    up = Some(i);
                }
                if button(ui, "↓", i + 1 < rows, format!("Move {name} down")) {
                    up = Some(i + 1);
                }
                if button(ui, "Remove", rows > 1, format!("Remove {name}")) {
                    remove = Some(i);
                }
                let side = spec
                    .and_then(|s| s.steps.get(i))
                    .map(|s| (s.info.side)(&s.args).name());
                ui.label(RichText::new(row.info.name).strong().monospace())
                    .on_hover_text(format!("{}\nCommutes: {}", row.info.summary, row.info.why));
                for (a, value) in row.info.args.iter().zip(&mut row.args) {
                    let hover = format!("{}: allowed {}", a.name, a.allowed());
                    match a.kind {
                        ArgKind::Flag => {
                            let mut on = value.trim() == "true";
                            if ui.checkbox(&mut on, a.name).on_hover_text(hover).changed() {
                                *value = on.to_string();
                            }
                        }
                        ArgKind::Choice(words) => {
                            let l = ui.label(a.name);
                            egui::ComboBox::from_id_salt(("chain choice", i, a.name))
                                .selected_text(value.as_str())
                                .show_ui(ui, |ui| {
                                    for w in words {
                                        ui.selectable_value(value, w.to_string(), *w);
                                    }
                                })
                                .response
                                .labelled_by(l.id)
                                .on_hover_text(hover);
                        }
                        ArgKind::Real(_) | ArgKind::Whole(_) => {
                            let l = ui.label(a.name);
                            // Wide enough for what is typed (1000000, 1e-8): a number cut
                            // short reads as another.
                            let chars = value.chars().count().max(5) as f32 + 1.0;
                            let width = chars * 0.6 * ui.text_style_height(&egui::TextStyle::Body);
                            ui.add(egui::TextEdit::singleline(value).desired_width(width))
                                .labelled_by(l.id)
                                .on_hover_text(hover);
                        }
                    }
                }
                if let Some(side) = side {
                    ui.label(RichText::new(format!("commutes: {side}")).weak());
                }
            });
        }
        if let Some(i) = up {
            self.rows.swap(i - 1, i);
        }
        if let Some(i) = remove {
            self.rows.remove(i);
        }
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("add");
            let picked = TRANSFORMS[self.pick];
            egui::ComboBox::from_id_salt("chain palette")
                .selected_text(picked.name)
                .show_ui(ui, |ui| {
                    for (k, t) in TRANSFORMS.iter().enumerate() {
                        ui.selectable_value(&mut self.pick, k, t.name)
                            .on_hover_text(t.summary);
                    }
                })
                .response
                .labelled_by(l.id);
            let full = self.rows.len() >= MAX_TRANSFORMS;
            let hover = if full {
                format!("A chain has at most {MAX_TRANSFORMS} transforms")
            } else {
                format!("Append {} at its defaults", picked.name)
            };
            if ui
                .add_enabled(!full, egui::Button::new("Add transform"))
                .on_hover_text(hover)
                .clicked()
            {
                self.rows.push(Row::new(picked));
            }
            ui.label(RichText::new(picked.summary).weak());
        });
    }

    /// The line to type or paste a whole chain (or a rule's or bundled chain's name), and the
    /// menu of rules and bundled chains to start from.
    fn text_line(&mut self, ui: &mut egui::Ui) {
        let mut chosen = None;
        reflow::controls_row(ui, |ui| {
            let l = ui.label("start from");
            egui::ComboBox::from_id_salt("chain start")
                .selected_text("a rule or bundled chain…")
                .show_ui(ui, |ui| {
                    for info in crate::optim::REGISTRY.iter().filter(|i| i.chain.is_some()) {
                        if ui.selectable_label(false, info.title).clicked() {
                            chosen = Some(info.name.to_string());
                        }
                    }
                    ui.separator();
                    for (name, _, source) in BUNDLED_CHAINS {
                        if ui
                            .selectable_label(false, *name)
                            .on_hover_text(*source)
                            .clicked()
                        {
                            chosen = Some(name.to_string());
                        }
                    }
                })
                .response
                .labelled_by(l.id);
        });
        ui.horizontal(|ui| {
            let l = ui.label("chain");
            let width = (ui.available_width() - 110.0).max(160.0);
            let edit = ui
                .add(
                    egui::TextEdit::singleline(&mut self.text)
                        .desired_width(width)
                        .font(egui::TextStyle::Monospace),
                )
                .labelled_by(l.id)
                .on_hover_text("Transforms joined by |, applied left to right; Enter applies");
            let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.button("Apply text").clicked() || enter {
                chosen = Some(self.text.clone());
            }
            let now = self.chain_text();
            if now.is_some() && now != self.mirrored && !edit.has_focus() {
                self.text = now.clone().unwrap_or_default();
                self.text_error = None;
                self.mirrored = now;
            }
        });
        if let Some(text) = chosen {
            self.text_error = self.set_chain(&text).err();
        }
        if let Some(e) = &self.text_error {
            ui.label(
                RichText::new(format!("Text not applied: {e}")).color(ui.visuals().error_fg_color),
            );
        }
    }

    /// Per lab: how the gauge acts, the prediction, and the transforms that block it.
    fn predictions(ui: &mut egui::Ui, spec: &ChainSpec) {
        reflow::table(
            ui,
            "chain predictions",
            |ui| {
                for h in ["lab", "the gauge acts", "predicted", "not commuting"] {
                    ui.label(RichText::new(h).strong());
                }
            },
            |ui| {
                for lab in LabKind::ALL {
                    let (name, action) = lab_words(lab);
                    ui.label(name);
                    ui.label(action);
                    let blocking = spec.blocking(lab.action());
                    ui.label(predicted_word(blocking.is_empty()));
                    ui.label(if blocking.is_empty() {
                        "—".into()
                    } else {
                        blocking.join(", ")
                    });
                    ui.end_row();
                }
            },
        );
    }

    /// The last check's table, per lab: prediction, both twins' distances, verdict, agreement.
    fn verdicts(ui: &mut egui::Ui, c: &ChainCheck) {
        ui.label(
            RichText::new(format!(
                "Checked `{}`: gauge twin (Haar Q) and noise twin (1e-12) after the check's \
                 short runs; equivariant within {:e}, basis-dependent past {}× the noise twin.",
                c.chain,
                c.floor,
                check::SEPARATION
            ))
            .weak(),
        );
        reflow::table(
            ui,
            "chain verdicts",
            |ui| {
                for h in [
                    "lab",
                    "predicted",
                    "gauge twin",
                    "noise twin",
                    "measured",
                    "agree",
                ] {
                    ui.label(RichText::new(h).strong());
                }
            },
            |ui| {
                for l in &c.labs {
                    ui.label(&l.lab);
                    ui.label(predicted_word(l.predicted_equivariant));
                    ui.label(RichText::new(format!("{:.2e}", l.gauge_distance)).monospace());
                    ui.label(RichText::new(format!("{:.2e}", l.noise_distance)).monospace());
                    ui.label(RichText::new(l.verdict.name()).strong());
                    let (short, long) = agreement(l);
                    let text = RichText::new(short);
                    ui.label(if l.agrees {
                        text
                    } else {
                        text.color(ui.visuals().error_fg_color)
                    })
                    .on_hover_text(long);
                    ui.end_row();
                }
            },
        );
    }
}

/// A lab's name and how its gauge acts, for the tables.
fn lab_words(lab: LabKind) -> (&'static str, &'static str) {
    match lab {
        LabKind::Key => ("key", "W_K → Q·W_K (left)"),
        LabKind::Gauge => ("gauge", "(U, V) → (UQ, VQ) (right)"),
        LabKind::Attention => ("attention", "W_Q, W_K head rows (left)"),
    }
}

impl Panel for Workbench {
    fn id(&self) -> &'static str {
        ID
    }

    fn title(&self) -> &'static str {
        "Your optimizer"
    }

    fn separated(&self) -> bool {
        true
    }

    fn logic(&mut self, lab: &mut Lab) {
        self.analysis.poll("The check", lab);
    }

    /// Checks the chain in the background, unless a check runs or the chain does not parse
    /// (then a notice says why).
    fn start(&mut self, lab: &mut Lab) -> bool {
        if self.analysis.is_running() {
            return true;
        }
        match self.chain_text() {
            Some(text) => {
                let task = CheckTask(text.clone());
                let labs = LabKind::ALL.len();
                self.analysis
                    .start(text, labs, labs as f64, lab.repaint_handle(), task);
            }
            None => lab.error(format!(
                "The chain was not checked: {}",
                self.spec().err().unwrap_or_default()
            )),
        }
        true
    }

    fn status(&self, _lab: &Lab) -> Status {
        self.analysis.status()
    }

    fn table(&self) -> Option<Table> {
        let c = &self.analysis.last.as_ref()?.result;
        Some(("check.csv".into(), check::csv_bytes(c)))
    }

    /// The chain, as `&chain=TEXT`.
    fn link_settings(&self) -> Vec<(&'static str, String)> {
        self.chain_text()
            .map(|t| ("chain", t))
            .into_iter()
            .collect()
    }

    fn set_from_link(&mut self, name: &str, value: &str, _lab: &mut Lab) -> Result<bool, String> {
        if name != "chain" {
            return Ok(false);
        }
        self.set_chain(value).map(|()| true)
    }

    fn save(&self) -> Option<String> {
        /// [`Saved`], borrowed.
        #[derive(Serialize)]
        struct SavedRef<'a> {
            chain: String,
            analysis: &'a Analysis<String, ChainCheck>,
        }
        to_ron(&SavedRef {
            chain: self.chain_text().unwrap_or_else(|| self.text.clone()),
            analysis: &self.analysis,
        })
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let mut s: Saved = from_ron(ron)?;
        let mut notes = Vec::new();
        if let Err(e) = self.set_chain(&s.chain) {
            notes.push(format!("the saved chain was reset ({e})"));
            self.set_chain(DEFAULT_CHAIN)
                .expect("the default chain parses");
        }
        notes.extend(s.analysis.check_saved("chain check", |f| {
            if f.result.labs.len() != LabKind::ALL.len() {
                return Err(format!("{} labs instead of 3", f.result.labs.len()));
            }
            Ok(f)
        }));
        self.analysis = s.analysis;
        Ok(notes)
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        if !reflow::presenting(ui.ctx()) {
            reflow::heading_row(
                ui,
                "Your optimizer",
                "compose an update rule from transforms; the labs predict and measure whether it \
                 sees the basis",
            );
        }
        ui.label(
            "A rule is a chain of transforms applied left to right to the gradient (names as in \
             optax); the learning rate stays the arm's. A chain is predicted equivariant in a lab \
             when every transform commutes with that lab's gauge action; Check runs each lab \
             briefly from its start, a gauge-rotated start and a noise-moved start.",
        );
        ui.add_space(4.0);
        self.text_line(ui);
        ui.add_space(4.0);
        let spec = self.spec();
        self.editor(ui, spec.as_ref().ok());
        ui.add_space(6.0);
        let text = match &spec {
            Ok(s) => {
                ui.label(RichText::new("Predicted class").strong());
                Self::predictions(ui, s);
                Some(s.to_string())
            }
            Err(e) => {
                ui.label(
                    RichText::new(format!("The chain does not parse: {e}"))
                        .color(ui.visuals().error_fg_color),
                );
                None
            }
        };
        ui.add_space(6.0);
        let mut start = false;
        let mut export = false;
        reflow::controls_row(ui, |ui| {
            let estimate = self.analysis.estimate(LabKind::ALL.len() as f64, 1);
            let running = self.analysis.is_running();
            ui.add_enabled_ui(text.is_some() || running, |ui| {
                start = progress_row(ui, self.analysis.job(), "labs", "Check", true, estimate);
            });
            if self.analysis.last.is_some() {
                export = export_button(ui, "Save the check's table (check.csv)");
            }
        });
        if start {
            self.start(lab);
        }
        if let Some(text) = &text {
            reflow::controls_row(ui, |ui| {
                ui.label("use as");
                if ui
                    .button("an arm of the controlled test")
                    .on_hover_text(format!(
                        "Adds the chain to the key lab's preset at lr {KEY_LR} (the check's rate)"
                    ))
                    .clicked()
                {
                    self.use_as_arm(text, lab);
                }
                if ui
                    .button("a rule of the gauge lab")
                    .on_hover_text(format!(
                        "Adds the chain to the gauge lab's zoo preset (at lr {:e}) and ticks it \
                         in its live runs",
                        crate::optim::CHAIN_INFO.sensing.lr
                    ))
                    .clicked()
                {
                    lab.handed.push((super::gauge_lab::ID, text.clone()));
                }
                if ui
                    .button("a run of the attention twins")
                    .on_hover_text(format!(
                        "Adds the chain to the attention preset at lr {:e} with gauge and noise \
                         twins",
                        check::ATTENTION_LR
                    ))
                    .clicked()
                {
                    lab.handed.push((super::attention::ID, text.clone()));
                }
            });
        }
        if export && let Some((name, bytes)) = self.table() {
            export_table(lab, &name, "The check is still here", || bytes);
        }
        let Some(last) = &self.analysis.last else {
            before_results(
                ui,
                self.analysis.is_running(),
                "Not checked yet: press Check.",
            );
            return;
        };
        if text.as_ref() != Some(&last.inputs) {
            stale_note(ui, lab, format!("the chain `{}`", last.inputs));
        }
        Self::verdicts(ui, &last.result);
    }
}
