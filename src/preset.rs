//! The RON preset: every numerics setting of an experiment, with documented defaults and
//! validation that names the field and its allowed range (numerics §6).

use std::ffi::OsStr;

use serde::{Deserialize, Serialize};

use crate::explainer::DemoSettings;
use crate::model::MemoryConfig;
use crate::optim::{OptimizerSpec, validate_spec};
pub use crate::reading::{
    MAX_PRESET_BYTES, PresetError, Source, parse_ron, read_text, source, without_bom,
};
use crate::validate::{FieldError, Range, check_int, check_real};

/// Most held-out pairs (`n_heldout × pairs_per_episode`) a preset may ask for: they are kept
/// in memory for the whole run (about 24 bytes each, so at most ~240 MB).
pub const MAX_HELDOUT_PAIRS: usize = 10_000_000;
/// Most numbers in all twins' training workspaces together (every arm has two twins, three
/// with `noise_twins`; each needs `n_values × d_k × (pairs_per_episode + 1)`): 800 MB of f64.
pub const MAX_WORKSPACE_NUMBERS: usize = 100_000_000;
/// Longest preset `name`, in characters.
pub const MAX_NAME_CHARS: usize = 200;
/// Longest preset `description`, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 4000;

/// Presets shipped inside the binary, by name (the files in `presets/`).
pub const BUNDLED: &[(&str, &str)] = &[
    ("default", include_str!("../presets/default.ron")),
    ("classroom", include_str!("../presets/classroom.ron")),
    ("dk32", include_str!("../presets/dk32.ron")),
    (
        "full-argument",
        include_str!("../presets/full-argument.ron"),
    ),
];

/// One experiment: the memory task, the training schedule and the arms (numerics §1–§4, §6).
/// Every field has a default, so a preset file may list only what it changes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Preset {
    /// Short name shown in the UI, at most [`MAX_NAME_CHARS`] characters.
    pub name: String,
    /// One or two sentences on what the preset is for, at most [`MAX_DESCRIPTION_CHARS`].
    pub description: String,
    /// Key dimension d_k, 1..=256. Default 16.
    pub d_k: usize,
    /// Key classes V (columns of W_K), 1..=1024. Default 32.
    pub n_keys: usize,
    /// Value classes V_b, 1..=1024. Default 8.
    pub n_values: usize,
    /// Pairs per episode k, 1..=n_keys. Default 16.
    pub pairs_per_episode: usize,
    /// Write strength β, 0..=2. Default 1.
    pub beta: f64,
    /// Softmax gain g, (0, 1000]. Default 5.
    pub gain: f64,
    /// Episodes per step, 1..=4096. Default 8.
    pub batch: usize,
    /// Training steps, 0..=10⁸. Default 2000.
    pub steps: usize,
    /// Experiment seed; every random stream derives from it.
    pub seed: u64,
    /// Standard deviation of W0's entries, in [`INIT_STD_RANGE`]; `None` means 1/√d_k (unit
    /// expected norm).
    pub init_std: Option<f64>,
    /// Held-out evaluation every this many steps, 1..=10⁸. Default 100.
    pub eval_every: usize,
    /// Held-out episodes, 1..=100000, with `n_heldout × pairs_per_episode` at most
    /// [`MAX_HELDOUT_PAIRS`]. Default 200.
    pub n_heldout: usize,
    /// Haar rotations in the random-rotation baseline, 2..=100000. Default 256.
    pub baseline_rotations: usize,
    /// The arms, 1..=16 optimizers with distinct names; each is trained from W0 and from Q·W0.
    /// All twins' workspaces together stay within [`MAX_WORKSPACE_NUMBERS`].
    pub arms: Vec<OptimizerSpec>,
    /// `Free` (default) lets raw column norms drift; `Renormalize` rescales every column of
    /// W_K to unit length after each update, removing the effective-learning-rate confound.
    pub column_norms: ColumnNorms,
    /// Also train every arm from W0 plus a 1e-12 Gaussian perturbation (same basis) and report
    /// that divergence beside the gauge twin's: chaos shows in both, basis dependence only in
    /// the gauge twin (the paper's Table 3 distinction). Default false.
    pub noise_twins: bool,
    /// The explainer demos' state (key directions, β, angles). Changing it never restarts the
    /// paired run.
    pub demos: DemoSettings,
}

/// What happens to the raw column norms of W_K between updates (the explainer §7's confound).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ColumnNorms {
    /// Leave them to the optimizer.
    #[default]
    Free,
    /// Rescale every column to unit length after each update.
    Renormalize,
}

impl Default for Preset {
    fn default() -> Self {
        Self {
            name: "default".into(),
            description: String::new(),
            d_k: 16,
            n_keys: 32,
            n_values: 8,
            pairs_per_episode: 16,
            beta: 1.0,
            gain: 5.0,
            batch: 8,
            steps: 2000,
            seed: 0,
            init_std: None,
            eval_every: 100,
            n_heldout: 200,
            baseline_rotations: 256,
            arms: vec![
                OptimizerSpec::new("gd", 1.0),
                OptimizerSpec::new("adam", 0.01),
                OptimizerSpec::new("sign", 0.002),
                OptimizerSpec::new("muon", 0.02),
            ],
            column_norms: ColumnNorms::Free,
            noise_twins: false,
            demos: DemoSettings::default(),
        }
    }
}

/// The `init_std` values the model can run: the loss ignores a column's length, but the
/// gradient scales as 1/‖w‖ and overflows below about 1e-300 (where W0's entries also turn
/// subnormal), and W0's entries overflow near 1e308.
pub const INIT_STD_RANGE: Range = Range::closed(1e-300, 1e300);

impl Preset {
    /// Parses and validates RON `text` (a leading byte-order mark is ignored); `file` names the
    /// source in errors.
    ///
    /// Errors: syntax errors and unknown fields with line:column from the parser; type errors;
    /// out-of-range values naming the field and its range (with line:column when the field is
    /// written in the text); text longer than [`MAX_PRESET_BYTES`].
    pub fn from_ron(text: &str, file: &str) -> Result<Self, PresetError> {
        // IMPLICIT_SOME lets `init_std: 0.1` stand for `Some(0.1)`.
        let options = ron::Options::default()
            .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME);
        parse_ron(text, file, MAX_PRESET_BYTES, options, Self::validate)
    }

    /// Loads a preset file (any file name the OS allows), or a bundled preset by name
    /// ([`BUNDLED`]) or a share string (`bl1:…`, see [`crate::share`]) when no file of that name
    /// exists ([`source`]). The file is only read. Errors as [`Preset::from_ron`] and
    /// [`crate::share::decode`], plus unreadable, over-long and non-UTF-8 files.
    pub fn load(path_or_name: impl AsRef<OsStr>) -> Result<Self, PresetError> {
        match source(
            path_or_name.as_ref(),
            BUNDLED,
            "preset",
            MAX_PRESET_BYTES,
            crate::share::is_share_string,
        )? {
            Source::Ron { text, file } => Self::from_ron(&text, &file),
            Source::Share(s) => crate::share::decode(&s),
        }
    }

    /// The preset as pretty RON text, which [`Preset::from_ron`] reads back exactly.
    pub fn to_ron(&self) -> String {
        let cfg = ron::ser::PrettyConfig::new().struct_names(true);
        ron::ser::to_string_pretty(self, cfg).expect("a preset always serialises")
    }

    /// The memory task's sizes.
    pub fn memory(&self) -> MemoryConfig {
        MemoryConfig {
            d_k: self.d_k,
            n_keys: self.n_keys,
            n_values: self.n_values,
            pairs_per_episode: self.pairs_per_episode,
            beta: self.beta,
            gain: self.gain,
        }
    }

    /// Whether `other` runs the same experiment (everything but the demos' state is equal).
    pub fn same_experiment(&self, other: &Preset) -> bool {
        Preset {
            demos: DemoSettings::default(),
            ..self.clone()
        } == Preset {
            demos: DemoSettings::default(),
            ..other.clone()
        }
    }

    /// Standard deviation of W0's entries: `init_std`, or 1/√d_k.
    pub fn init_std(&self) -> f64 {
        self.init_std.unwrap_or(1.0 / (self.d_k as f64).sqrt())
    }

    /// Checks every field against its range. Errors name the field by its path (`arms[1].lr`,
    /// `demos.beta`) and its allowed range.
    pub fn validate(&self) -> Result<(), FieldError> {
        check_int("d_k", self.d_k, 1, 256)?;
        check_int("n_keys", self.n_keys, 1, 1024)?;
        check_int("n_values", self.n_values, 1, 1024)?;
        check_int("pairs_per_episode", self.pairs_per_episode, 1, self.n_keys)?;
        check_real("beta", self.beta, Range::closed(0.0, 2.0))?;
        check_real("gain", self.gain, Range::above(0.0, 1000.0))?;
        check_int("batch", self.batch, 1, 4096)?;
        check_int("steps", self.steps, 0, 100_000_000)?;
        if let Some(s) = self.init_std {
            check_real("init_std", s, INIT_STD_RANGE).map_err(|e| {
                FieldError::new(
                    "init_std",
                    format!(
                        "{}: the keys are scale-free, but outside this range the gradient \
                         (which grows as 1/‖w‖) or W0's entries leave f64's range",
                        e.message
                    ),
                )
            })?;
        }
        check_int("eval_every", self.eval_every, 1, 100_000_000)?;
        check_int("n_heldout", self.n_heldout, 1, 100_000)?;
        check_int("baseline_rotations", self.baseline_rotations, 2, 100_000)?;
        // One twin's workspace (the checks below bound all twins together).
        let work = self.n_values * self.d_k * (self.pairs_per_episode + 1);
        if work > 20_000_000 {
            return Err(FieldError::new(
                "pairs_per_episode",
                format!(
                    "n_values × d_k × (pairs_per_episode + 1) = {work} exceeds the memory limit \
                     of 20000000 numbers; make the task smaller"
                ),
            ));
        }
        let held = self.n_heldout * self.pairs_per_episode;
        if held > MAX_HELDOUT_PAIRS {
            return Err(FieldError::new(
                "n_heldout",
                format!(
                    "n_heldout × pairs_per_episode = {held} exceeds the limit of \
                     {MAX_HELDOUT_PAIRS} held-out pairs kept in memory; allowed \
                     1..={} at {} pairs per episode",
                    MAX_HELDOUT_PAIRS / self.pairs_per_episode,
                    self.pairs_per_episode
                ),
            ));
        }
        for (field, text, max) in [
            ("name", &self.name, MAX_NAME_CHARS),
            ("description", &self.description, MAX_DESCRIPTION_CHARS),
        ] {
            let n = text.chars().count();
            if n > max {
                return Err(FieldError::new(
                    field,
                    format!("{n} characters; allowed at most {max}"),
                ));
            }
        }
        if self.arms.is_empty() || self.arms.len() > 16 {
            return Err(FieldError::new(
                "arms",
                format!("{} arms given; allowed 1..=16", self.arms.len()),
            ));
        }
        let per_arm = if self.noise_twins { 3 } else { 2 };
        let total = self.arms.len() * per_arm * work;
        if total > MAX_WORKSPACE_NUMBERS {
            return Err(FieldError::new(
                "arms",
                format!(
                    "{} arms × {per_arm} twins × {work} workspace numbers = {total} exceeds the \
                     memory limit of {MAX_WORKSPACE_NUMBERS} numbers; use fewer arms or a \
                     smaller task",
                    self.arms.len()
                ),
            ));
        }
        self.demos.validate().map_err(|e| e.within("demos"))?;
        for (i, arm) in self.arms.iter().enumerate() {
            validate_spec(&format!("arms[{i}]"), arm)?;
            if self.arms[..i]
                .iter()
                .any(|a| a.arm_name() == arm.arm_name())
            {
                return Err(FieldError::new(
                    format!("arms[{i}].label"),
                    format!(
                        "arm name `{}` is used twice; give one of them a distinct `label`",
                        arm.arm_name()
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl crate::share::Shareable for Preset {
    const PREFIX: &'static str = "bl1";
    const BUNDLED: &'static [(&'static str, &'static str)] = BUNDLED;
    fn parse_ron(text: &str, file: &str) -> Result<Self, PresetError> {
        Preset::from_ron(text, file)
    }
}
