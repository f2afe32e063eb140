//! The attention-twins preset (`presets/attention.ron`): task, model, initialisation, schedule,
//! and the runs (an update rule, optionally a second rule for the non-hidden parameters, and
//! the twin types to train beside the base model).

use serde::{Deserialize, Serialize};

use super::data::{MAX_MODULUS, TaskConfig};
use super::model::{Arch, Init, ModelConfig, Workspace};
use crate::optim::OptimizerSpec;
use crate::optim::validate_spec;
use crate::reading::{PresetError, Source};
use crate::validate::{FieldError, Range, check_int, check_real};

/// Attention presets shipped inside the binary, by name (the files in `presets/`).
pub const BUNDLED_ATTENTION: &[(&str, &str)] = &[
    ("attention", include_str!("../../presets/attention.ron")),
    (
        "attention-quick",
        include_str!("../../presets/attention-quick.ron"),
    ),
];

/// Largest attention preset file accepted, in bytes.
pub const MAX_ATTENTION_BYTES: u64 = 1 << 20;
/// Most runs in one preset.
pub const MAX_RUNS: usize = 16;
/// Most f64 values all models of one seed may hold together (parameters, gradients, optimizer
/// state and workspaces): 3.2 GB.
pub const MAX_NUMBERS: usize = 400_000_000;

/// Validation sequences per evaluation pass: the capacity of each model's evaluation workspace,
/// counted in [`AttentionPreset::numbers_per_seed`].
pub const EVAL_CHUNK: usize = 256;

/// What distinguishes a twin from its base model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TwinKind {
    /// Haar-rotated query–key space per head: the same function in another basis.
    Gauge,
    /// A = I: the gauge construction with identity matrices; must never differ.
    Identity,
    /// Small Gaussian perturbation of W_Q and W_K in the same basis.
    Noise,
}

impl TwinKind {
    /// Every kind, in table order.
    pub const ALL: [TwinKind; 3] = [TwinKind::Gauge, TwinKind::Identity, TwinKind::Noise];

    /// The name in CSV and JSON: `gauge`, `identity`, `noise`.
    pub fn name(self) -> &'static str {
        match self {
            TwinKind::Gauge => "gauge",
            TwinKind::Identity => "identity",
            TwinKind::Noise => "noise",
        }
    }

    /// The name in tables: `gauge`, `A = I`, `noise`.
    pub fn label(self) -> &'static str {
        match self {
            TwinKind::Gauge => "gauge",
            TwinKind::Identity => "A = I",
            TwinKind::Noise => "noise",
        }
    }
}

/// One run: a rule trained from the seed's initial weights (the base model) and from each twin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunSpec {
    /// The update rule of the hidden matrices (attention projections and MLP), and of every
    /// parameter when `rest` is absent; its label (or registry name) names the run. Any
    /// registered rule; hyperparameters not written take the registry defaults.
    pub rule: OptimizerSpec,
    /// The rule of the embeddings, unembedding and norm gains, if they get their own (Muon's
    /// setting: Adam 1e-3 there). One optimizer instance per group, so a pooled statistic
    /// (scalar-Adam's) spans exactly its group.
    pub rest: Option<OptimizerSpec>,
    /// The twins trained beside the base model: 1..=3 distinct kinds.
    pub twins: Vec<TwinKind>,
}

impl Default for RunSpec {
    fn default() -> Self {
        Self {
            rule: OptimizerSpec::new("adam", 1e-3),
            rest: None,
            twins: vec![TwinKind::Gauge],
        }
    }
}

impl RunSpec {
    /// The run's name in outputs: the rule's label, or its registry name.
    pub fn name(&self) -> &str {
        self.rule.arm_name()
    }
}

/// Every setting of an attention-twins experiment. Every field has a default (the paper's
/// setting), so a file may list only what it changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AttentionPreset {
    /// Short name, at most 200 characters.
    pub name: String,
    /// What the preset is for, at most 4000 characters.
    pub description: String,
    /// The task (modulus, training fraction).
    pub task: TaskConfig,
    /// The transformer's sizes.
    pub model: ModelConfig,
    /// The initial weights' distribution. Default [`Init::FanIn`].
    pub init: Init,
    /// Training steps (full-batch updates), 0..=100000. Default 1500.
    pub steps: usize,
    /// First seed; seed s draws the split, the initial weights, the rotations and the noise.
    pub seed: u64,
    /// Seeds seed..seed+seeds−1, 1..=100. Default 1.
    pub seeds: usize,
    /// Metrics at every step up to this one, 0..=100000. Default 100.
    pub dense_until: usize,
    /// Then at every multiple of this, 1..=100000 (and at the last step). Default 10.
    pub measure_every: usize,
    /// Standard deviation of the noise twins' perturbation of W_Q and W_K, in (0, 1].
    /// Default 1e-7.
    pub noise_std: f64,
    /// The runs, 1..=[`MAX_RUNS`] with distinct names.
    pub runs: Vec<RunSpec>,
}

impl Default for AttentionPreset {
    fn default() -> Self {
        let spec = |name: &str, lr: f64| OptimizerSpec::new(name, lr);
        Self {
            name: "attention".into(),
            description: String::new(),
            task: TaskConfig::default(),
            model: ModelConfig::default(),
            init: Init::FanIn,
            steps: 1500,
            seed: 0,
            seeds: 1,
            dense_until: 100,
            measure_every: 10,
            noise_std: 1e-7,
            runs: vec![
                RunSpec {
                    rule: spec("adam", 1e-3),
                    rest: None,
                    twins: vec![TwinKind::Gauge, TwinKind::Identity, TwinKind::Noise],
                },
                RunSpec {
                    rule: spec("momentum", 0.5),
                    rest: None,
                    twins: vec![TwinKind::Gauge],
                },
                RunSpec {
                    rule: spec("scalar_adam", 3e-3),
                    rest: None,
                    twins: vec![TwinKind::Gauge],
                },
                RunSpec {
                    rule: spec("muon", 0.02),
                    rest: Some(spec("adam", 1e-3)),
                    twins: vec![TwinKind::Gauge, TwinKind::Noise],
                },
            ],
        }
    }
}

impl AttentionPreset {
    /// The model's architecture on the task.
    pub fn arch(&self) -> Arch {
        Arch::new(&self.model, &self.task)
    }

    /// Whether metrics are recorded at `step` (0..=steps): every step up to `dense_until`, every
    /// multiple of `measure_every` after, and the last step.
    pub fn is_measured(&self, step: usize) -> bool {
        step <= self.dense_until || step.is_multiple_of(self.measure_every) || step == self.steps
    }

    /// The models trained per seed: each run's base model and its twins.
    pub fn models_per_seed(&self) -> usize {
        self.runs.iter().map(|r| 1 + r.twins.len()).sum()
    }

    /// f64 values one seed's models hold: per model the parameters four times (weights,
    /// gradient, up to two optimizer moments), a training workspace for the training set and an
    /// evaluation workspace of [`EVAL_CHUNK`] sequences.
    pub fn numbers_per_seed(&self) -> usize {
        let arch = self.arch();
        let n_train = self.task.train_count();
        let n_val = self.task.modulus * self.task.modulus - n_train;
        let per_model = 4 * arch.numbers()
            + Workspace::numbers(&arch, n_train, true)
            + Workspace::numbers(&arch, n_val.min(EVAL_CHUNK), false);
        self.models_per_seed().saturating_mul(per_model)
    }

    /// Checks every field. Errors name the field's path and the allowed range.
    pub fn validate(&self) -> Result<(), FieldError> {
        for (field, text, max) in [
            ("name", &self.name, 200),
            ("description", &self.description, 4000),
        ] {
            let n = text.chars().count();
            if n > max {
                return Err(FieldError::new(
                    field,
                    format!("{n} characters; allowed at most {max}"),
                ));
            }
        }
        check_int("task.modulus", self.task.modulus, 2, MAX_MODULUS)?;
        check_real(
            "task.train_fraction",
            self.task.train_fraction,
            Range::above(0.0, 1.0),
        )?;
        let pairs = self.task.modulus * self.task.modulus;
        let train = self.task.train_count();
        if train == 0 || train == pairs {
            return Err(FieldError::new(
                "task.train_fraction",
                format!(
                    "{} of {pairs} pairs gives {train} training and {} validation pairs; both \
                     must be at least 1",
                    self.task.train_fraction,
                    pairs - train
                ),
            ));
        }
        let m = &self.model;
        check_int("model.layers", m.layers, 1, 8)?;
        check_int("model.heads", m.heads, 1, 64)?;
        check_int("model.d_model", m.d_model, 1, 1024)?;
        check_int("model.d_mlp", m.d_mlp, 1, 4096)?;
        if !m.d_model.is_multiple_of(m.heads) {
            return Err(FieldError::new(
                "model.d_model",
                format!(
                    "{} is not a multiple of model.heads = {}",
                    m.d_model, m.heads
                ),
            ));
        }
        check_real("model.norm_eps", m.norm_eps, Range::closed(0.0, 1.0))?;
        if let Init::Normal(std) = self.init {
            check_real("init", std, Range::above(0.0, 100.0))?;
        }
        check_int("steps", self.steps, 0, 100_000)?;
        check_int("seeds", self.seeds, 1, 100)?;
        if self.seed.checked_add(self.seeds as u64 - 1).is_none() {
            return Err(FieldError::new(
                "seed",
                format!("{} + {} seeds overflows u64", self.seed, self.seeds),
            ));
        }
        check_int("dense_until", self.dense_until, 0, 100_000)?;
        check_int("measure_every", self.measure_every, 1, 100_000)?;
        check_real("noise_std", self.noise_std, Range::above(0.0, 1.0))?;
        if self.runs.is_empty() || self.runs.len() > MAX_RUNS {
            return Err(FieldError::new(
                "runs",
                format!("{} runs given; allowed 1..={MAX_RUNS}", self.runs.len()),
            ));
        }
        for (i, run) in self.runs.iter().enumerate() {
            validate_spec(&format!("runs[{i}].rule"), &run.rule)?;
            if let Some(rest) = &run.rest {
                validate_spec(&format!("runs[{i}].rest"), rest)?;
            }
            let twins = &run.twins;
            let distinct = twins
                .iter()
                .enumerate()
                .all(|(j, t)| !twins[..j].contains(t));
            if twins.is_empty() || twins.len() > 3 || !distinct {
                return Err(FieldError::new(
                    format!("runs[{i}].twins"),
                    format!("{twins:?}: allowed 1..=3 distinct kinds of Gauge, Identity, Noise"),
                ));
            }
            if let Some(j) = self.runs[..i].iter().position(|r| r.name() == run.name()) {
                return Err(FieldError::new(
                    format!("runs[{i}].rule.label"),
                    format!(
                        "run name `{}` is also the name of runs[{j}]; give one a `label`",
                        run.name()
                    ),
                ));
            }
        }
        let numbers = self.numbers_per_seed();
        if numbers > MAX_NUMBERS {
            return Err(FieldError::new(
                "runs",
                format!(
                    "{} models of {} parameters on {} training sequences need {numbers} f64 \
                     values, over the limit of {MAX_NUMBERS}; use fewer runs or twins, or a \
                     smaller model or task",
                    self.models_per_seed(),
                    self.arch().numbers(),
                    self.task.train_count(),
                ),
            ));
        }
        Ok(())
    }

    /// Parses and validates RON text (a leading byte-order mark is dropped); `file` names the
    /// source in errors, as every preset kind reads ([`crate::reading::parse_ron`]): line:column
    /// for syntax, type and unknown-field errors, with the field a wrong value belongs to; the
    /// field path and range of an out-of-range value at the line:column where it is written.
    pub fn from_ron(text: &str, file: &str) -> Result<Self, PresetError> {
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        crate::reading::parse_ron(text, file, MAX_ATTENTION_BYTES, options, Self::validate)
    }

    /// Loads a preset file (any file name the OS allows), or a bundled preset
    /// ([`BUNDLED_ATTENTION`]) by name or a share string (`ba1:…`, see [`crate::share`]) when no
    /// file of that name exists ([`crate::reading::source`]). Errors as
    /// [`AttentionPreset::from_ron`] and [`crate::share::decode`], plus unreadable, over-long and
    /// non-UTF-8 files.
    pub fn load(path_or_name: impl AsRef<std::ffi::OsStr>) -> Result<Self, PresetError> {
        match crate::reading::source(
            path_or_name.as_ref(),
            BUNDLED_ATTENTION,
            "attention preset",
            MAX_ATTENTION_BYTES,
            crate::share::is_share_string,
        )? {
            Source::Ron { text, file } => Self::from_ron(&text, &file),
            Source::Share(s) => crate::share::decode(&s),
        }
    }

    /// The preset as RON text (every field written).
    pub fn to_ron(&self) -> String {
        ron::ser::to_string_pretty(self, ron::ser::PrettyConfig::default())
            .expect("a preset always serialises")
    }
}

impl crate::share::Shareable for AttentionPreset {
    const PREFIX: &'static str = "ba1";
    const BUNDLED: &'static [(&'static str, &'static str)] = BUNDLED_ATTENTION;
    fn parse_ron(text: &str, file: &str) -> Result<Self, PresetError> {
        AttentionPreset::from_ron(text, file)
    }
}
