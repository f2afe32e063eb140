//! The RON preset: every numerics setting of an experiment, with documented defaults and
//! validation that names the field and its allowed range (numerics §6).

use std::ffi::OsStr;
use std::path::Path;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::explainer::DemoSettings;
use crate::model::MemoryConfig;
use crate::optim::{Hyper, OptimizerSpec, REGISTRY};
use crate::validate::{FieldError, Range, check_int, check_real};

/// Largest preset file accepted, in bytes.
pub const MAX_PRESET_BYTES: u64 = 1 << 20;

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
    /// Standard deviation of W0's entries, (0, 100]; `None` means 1/√d_k (unit expected norm).
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

/// Why a preset was rejected: where (file, line:column when known), which field, and what is
/// allowed. Never a panic.
#[derive(Debug, Clone, PartialEq, Error)]
#[error("{}{}: {}{}", file, location(*line, *column), field.as_ref().map(|f| format!("field `{f}`: ")).unwrap_or_default(), message)]
pub struct PresetError {
    /// The file name, or `<text>` for pasted text.
    pub file: String,
    /// 1-based line, if known.
    pub line: Option<usize>,
    /// 1-based column, if known.
    pub column: Option<usize>,
    /// The offending field (`arms[1].lr` style), if one.
    pub field: Option<String>,
    /// What is wrong and what is allowed.
    pub message: String,
}

fn location(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

impl PresetError {
    /// An error about the source as a whole (unreadable, too long, not text).
    pub fn whole(file: &str, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line: None,
            column: None,
            field: None,
            message: message.into(),
        }
    }

    /// A RON syntax or type error at its line:column; names the field when the error is about
    /// a value, not about the structure.
    pub fn parse(e: &ron::error::SpannedError, text: &str, file: &str) -> Self {
        let message = e
            .code
            .to_string()
            .replace("`OptimizerSpec`", "an arm")
            .replace("`DemoSettings`", "`demos`")
            .replace("struct `Preset`", "the preset");
        let structural = ["field named", "comma", "closing", "opening", "end of"]
            .iter()
            .any(|w| message.contains(w));
        let offset = byte_offset(text, e.span.start.line, e.span.start.col);
        Self {
            file: file.into(),
            line: Some(e.span.start.line),
            column: Some(e.span.start.col),
            field: (!structural).then(|| field_before(text, offset)).flatten(),
            message,
        }
    }

    /// A validation error of `text`, at the line:column where it writes the field (if it does).
    pub fn invalid(e: FieldError, text: &str, file: &str) -> Self {
        let (line, column) = locate_field(text, &e.field)
            .or_else(|| locate_path(text, &e.field))
            .unzip();
        Self {
            file: file.into(),
            line,
            column,
            field: Some(e.field),
            message: e.message,
        }
    }
}

/// The text of the file at `path` (shown as `shown` in errors) for a preset reader: at most
/// `max` bytes of UTF-8. The file is only read. Errors: unreadable, too long, not UTF-8.
pub fn read_text(path: &Path, shown: &str, max: u64) -> Result<String, PresetError> {
    let io_err = |e: std::io::Error| PresetError::whole(shown, format!("cannot read: {e}"));
    let len = std::fs::metadata(path).map_err(io_err)?.len();
    if len > max {
        return Err(PresetError::whole(
            shown,
            format!("file is {len} bytes; at most {max} are accepted"),
        ));
    }
    let bytes = std::fs::read(path).map_err(io_err)?;
    String::from_utf8(bytes).map_err(|e| PresetError::whole(shown, format!("not UTF-8 text: {e}")))
}

/// Reads the RON text of any preset kind the one way all three kinds read it: a leading
/// byte-order mark dropped, at most `max` bytes, parsed with `options`, then checked by
/// `validate`. `file` names the source in errors.
///
/// Errors: syntax, type and unknown-field errors at their line:column (with the field a wrong
/// value belongs to); a value `validate` refuses, naming its field path and range, at the
/// line:column where the text writes it (or the nearest enclosing field it writes); text longer
/// than `max` bytes.
pub fn parse_ron<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &str,
    max: u64,
    options: ron::Options,
    validate: impl FnOnce(&T) -> Result<(), FieldError>,
) -> Result<T, PresetError> {
    let text = without_bom(text);
    if text.len() as u64 > max {
        return Err(PresetError::whole(
            file,
            format!("preset is {} bytes; at most {max} are accepted", text.len()),
        ));
    }
    let value: T = options
        .from_str(text)
        .map_err(|e| PresetError::parse(&e, text, file))?;
    validate(&value).map_err(|e| PresetError::invalid(e, text, file))?;
    Ok(value)
}

/// `text` without a leading UTF-8 byte-order mark (U+FEFF), which some editors write at the
/// start of every file they save; every reader of a text file the user may edit calls this.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Where a preset argument's text comes from (see [`source`]).
#[derive(Debug)]
pub enum Source {
    /// The RON text of a file or of a bundled preset, with the name errors should give it
    /// (the path as given, shown lossily when it is not UTF-8, or `presets/NAME.ron`).
    Ron {
        /// The preset's RON text.
        text: String,
        /// The file name errors quote.
        file: String,
    },
    /// A share string (or a link holding one), to be decoded by [`crate::share::decode`].
    Share(String),
}

/// Resolves a preset argument the way every preset kind reads it: an existing file at `arg`
/// (any file name the OS allows, UTF-8 or not) is read; otherwise a bundled preset called `arg`
/// (from `bundled`), or, when `shares` is set, a share string. `kind` names the presets in the
/// "not found" message ("preset", "attention preset", "zoo preset").
///
/// Errors: unreadable files, files over `max` bytes or not UTF-8, and an argument that is
/// neither a file nor a bundled name nor (with `shares`) a share string; each names the
/// argument as given (lossily for a non-UTF-8 name).
pub fn source(
    arg: &OsStr,
    bundled: &[(&str, &str)],
    kind: &str,
    max: u64,
    shares: bool,
) -> Result<Source, PresetError> {
    let path = Path::new(arg);
    let shown = path.display().to_string();
    // A folder that happens to share a bundled preset's name does not hide the preset.
    if path.is_file() {
        let text = read_text(path, &shown, max)?;
        return Ok(Source::Ron { text, file: shown });
    }
    if let Some(name) = arg.to_str() {
        if shares && crate::share::is_share_string(name) {
            return Ok(Source::Share(name.to_string()));
        }
        if let Some((_, text)) = bundled.iter().find(|(n, _)| *n == name) {
            return Ok(Source::Ron {
                text: (*text).to_string(),
                file: format!("presets/{name}.ron"),
            });
        }
    }
    let names: Vec<&str> = bundled.iter().map(|(n, _)| *n).collect();
    Err(PresetError::whole(
        &shown,
        format!(
            "no such file, and no bundled {kind} of that name (bundled: {})",
            names.join(", ")
        ),
    ))
}

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
            true,
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
            check_real("init_std", s, Range::above(0.0, 100.0))?;
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

/// Checks one optimizer spec (registry name, label, rate, hyperparameters); fields are named
/// `{prefix}.lr` and so on. Errors name the field.
pub(crate) fn validate_spec(prefix: &str, arm: &OptimizerSpec) -> Result<(), FieldError> {
    let field = |f: &str| format!("{prefix}.{f}");
    if arm.info().is_none() {
        let names: Vec<_> = REGISTRY.iter().map(|r| r.name).collect();
        return Err(FieldError::new(
            field("optimizer"),
            format!(
                "unknown optimizer `{}`; allowed: {}",
                arm.optimizer,
                names.join(", ")
            ),
        ));
    }
    if let Some(label) = &arm.label {
        let ok = !label.is_empty()
            && label.len() <= 32
            && !label.ends_with("_rot")
            && label
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if !ok {
            return Err(FieldError::new(
                field("label"),
                format!(
                    "label `{label}` must be 1..=32 characters of a-z, 0-9, _ or - and must not \
                     end in `_rot` (the suffix of rotated twins)"
                ),
            ));
        }
    }
    check_real(&field("lr"), arm.lr, Range::above(0.0, 1e6))?;
    // Every field, also those the rule ignores: a saved preset must load under any rule.
    for h in Hyper::ALL {
        if let (Some(range), Some(x)) = (h.range(), arm.value(h)) {
            check_real(&field(h.name()), x, range)?;
        }
    }
    Ok(())
}

/// 1-based (line, column) of where `field` is written in `text`: for `arms[i].name`, the i-th
/// arm's `name:` when every arm writes it, else the first; for a plain field, its first `name:`.
fn locate_field(text: &str, field: &str) -> Option<(usize, usize)> {
    if let Some(key) = field.strip_prefix("demos.") {
        let key = key.split('[').next().unwrap_or(key);
        let start = *key_positions(text, "demos").first()?;
        let pick = start + *key_positions(&text[start..], key).first()?;
        return Some(line_col(text, pick));
    }
    let (index, key) = match field.strip_prefix("arms[") {
        Some(rest) => {
            let (i, key) = rest.split_once("].")?;
            (i.parse::<usize>().ok(), key)
        }
        None => (None, field),
    };
    let mut hits = key_positions(text, key);
    if hits.is_empty() && index.is_some() {
        // A field left at its default (say an arm without `label`): point at the arm itself.
        hits = key_positions(text, "optimizer");
    } else if index.is_some() && count_arms(text) != hits.len() {
        hits.truncate(1);
    }
    let pick = match index {
        Some(i) if hits.len() > i => hits[i],
        _ => *hits.first()?,
    };
    Some(line_col(text, pick))
}

/// The line:column where `text` writes the field at `path` (`model.d_model`, `runs[1].twins`,
/// `problem.n`): each key is looked for after the previous one and an index counts the list's
/// elements. A field the text leaves at its default gives the nearest enclosing one it writes;
/// None when it writes not even the first.
fn locate_path(text: &str, path: &str) -> Option<(usize, usize)> {
    let mut at = None;
    for segment in path.split('.') {
        let (key, index) = match segment.split_once('[') {
            Some((key, rest)) => (key, rest.strip_suffix(']').and_then(|i| i.parse().ok())),
            None => (segment, None),
        };
        let from = at.unwrap_or(0);
        let Some(&hit) = key_positions(&text[from..], key).first() else {
            break;
        };
        at = Some(from + hit);
        if let Some(i) = index {
            match nth_element(text, from + hit, i) {
                Some(p) => at = Some(p),
                None => break,
            }
        }
    }
    at.map(|p| line_col(text, p))
}

/// The byte offset where the `n`th element (0-based) of the first list after `from` starts,
/// skipping nested brackets and strings; None if the list has fewer elements.
fn nth_element(text: &str, from: usize, n: usize) -> Option<usize> {
    let open = from + text[from..].find('[')?;
    let (mut depth, mut count, mut expecting) = (0usize, 0usize, true);
    let (mut in_string, mut escaped) = (false, false);
    for (p, b) in text.bytes().enumerate().skip(open + 1) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if expecting && !b.is_ascii_whitespace() {
            if depth == 0 && b == b']' {
                return None;
            }
            if count == n {
                return Some(p);
            }
            expecting = false;
        }
        match b {
            b'"' => in_string = true,
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 => return None,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                count += 1;
                expecting = true;
            }
            _ => {}
        }
    }
    None
}

/// Byte offset of 1-based (line, column), clamped to the text.
fn byte_offset(text: &str, line: usize, col: usize) -> usize {
    let start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let rest = &text[start.min(text.len())..];
    start
        + rest
            .char_indices()
            .nth(col.saturating_sub(1))
            .map_or(rest.len(), |(i, _)| i)
}

/// The name of the field whose value starts nearest before byte `pos` (`name:` on the same
/// line or earlier), for parse errors that only give a position.
fn field_before(text: &str, pos: usize) -> Option<String> {
    let head = &text[..pos.min(text.len())];
    let colon = head.rfind(':')?;
    let name: String = head[..colon]
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit())).then_some(name)
}

/// 1-based (line, column) of byte offset `pos`.
fn line_col(text: &str, pos: usize) -> (usize, usize) {
    let line = text[..pos].matches('\n').count() + 1;
    let col = pos - text[..pos].rfind('\n').map_or(0, |p| p + 1) + 1;
    (line, col)
}

/// Byte offsets of `key` written as a field name (`key` then optional spaces then `:`).
fn key_positions(text: &str, key: &str) -> Vec<usize> {
    let bytes = text.as_bytes();
    text.match_indices(key)
        .map(|(p, _)| p)
        .filter(|&p| {
            let before_ok =
                p == 0 || !(bytes[p - 1].is_ascii_alphanumeric() || bytes[p - 1] == b'_');
            let after = text[p + key.len()..].trim_start();
            before_ok && after.starts_with(':')
        })
        .collect()
}

fn count_arms(text: &str) -> usize {
    key_positions(text, "optimizer").len()
}

#[cfg(test)]
mod tests {
    use super::{locate_path, nth_element};

    #[test]
    fn list_elements_are_counted_past_nested_brackets_and_strings() {
        let text = r#"x: ["a, [b\" ]", (c: [1, 2]), 3]"#;
        assert_eq!(nth_element(text, 0, 0), text.find("\"a"));
        assert_eq!(nth_element(text, 0, 1), text.find("(c"));
        assert_eq!(nth_element(text, 0, 2), text.find('3'));
        assert_eq!(nth_element(text, 0, 3), None);
        assert_eq!(nth_element("x: []", 0, 0), None);
    }

    #[test]
    fn a_field_path_is_found_key_after_key() {
        let text = "(\n  n: 1,\n  problem: (\n    n: 40,\n  ),\n)";
        assert_eq!(locate_path(text, "problem.n"), Some((4, 5)));
        assert_eq!(locate_path(text, "problem.rank"), Some((3, 3)));
        assert_eq!(locate_path(text, "budget"), None);
    }
}
