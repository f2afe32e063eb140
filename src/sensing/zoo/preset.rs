//! Zoo presets: what runs (problem, rules, rates, seeds, τ values), how they load, and the
//! limits that keep a preset within memory.

use serde::{Deserialize, Serialize};

use super::{Cell, Rule};
use crate::preset::{PresetError, read_text};
use crate::sensing::SensingConfig;
use crate::validate::{FieldError, Range, check_int, check_real};

/// Zoo presets shipped inside the binary, by name (the files in `presets/`).
pub const BUNDLED_ZOO: &[(&str, &str)] = &[
    ("zoo-paper", include_str!("../../../presets/zoo-paper.ron")),
    ("dial", include_str!("../../../presets/dial.ron")),
    ("tail", include_str!("../../../presets/tail.ron")),
    (
        "muon-rates",
        include_str!("../../../presets/muon-rates.ron"),
    ),
];

/// The bundled zoo preset `name`. Panics if it is missing or invalid (a test checks them all).
pub fn bundled_zoo(name: &str) -> ZooPreset {
    let (_, text) = BUNDLED_ZOO
        .iter()
        .find(|(n, _)| *n == name)
        .expect("bundled zoo preset");
    ZooPreset::from_ron(text, name).expect("bundled zoo presets are valid")
}

/// What a zoo preset asks for (`presets/zoo-paper.ron`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ZooPreset {
    /// Short name.
    pub name: String,
    /// What it reproduces.
    pub description: String,
    /// The sensing problem.
    pub problem: SensingConfig,
    /// Step budget per run, 1..=10⁶ (the paper: 2·10⁴ for the zoo, 3·10⁴ for the dial).
    pub budget: usize,
    /// First seed.
    pub seed: u64,
    /// Seeds per cell, 1..=1000, with at most [`MAX_CELLS`] runs and
    /// [`MAX_OPERATOR_NUMBERS`] operator numbers in all.
    pub seeds: usize,
    /// The rules to run, 1..=[`MAX_RULES`].
    pub rules: Vec<Rule>,
    /// `true`: each rule's whole grid and the selection rule; `false`: the paper's rates only.
    pub grid: bool,
    /// Also train gauge twins and report their drift.
    pub twins: bool,
    /// Spectral-tail amplitudes to sweep (each in [0, 1), at most [`MAX_TAUS`]); empty runs
    /// `problem.tau` only.
    pub taus: Vec<f64>,
    /// Peak rates at which every rule runs instead of the paper's rate or the grid (each in
    /// (0, 1e6], at most 32); empty (the default) keeps those.
    pub rates: Vec<f64>,
}

impl Default for ZooPreset {
    fn default() -> Self {
        Self {
            name: "zoo".into(),
            description: String::new(),
            problem: SensingConfig::default(),
            budget: 20_000,
            seed: 0,
            seeds: 3,
            rules: super::table2_rules(),
            grid: false,
            twins: false,
            taus: Vec::new(),
            rates: Vec::new(),
        }
    }
}

/// Largest zoo preset file accepted, in bytes.
pub const MAX_ZOO_BYTES: u64 = 1 << 20;
/// Most rules in one zoo preset.
pub const MAX_RULES: usize = 64;
/// Most τ values in one zoo preset.
pub const MAX_TAUS: usize = 32;
/// Most runs (cells) in one zoo preset; a bigger study is several presets or `--shard`.
pub const MAX_CELLS: usize = 100_000;
/// Most numbers in all problem instances' measurement operators together (taus × seeds ×
/// m·n²; the zoo builds them all before running): 2 GB of f64.
pub const MAX_OPERATOR_NUMBERS: usize = 250_000_000;

impl ZooPreset {
    /// Loads a zoo preset file, or a bundled one by name ([`BUNDLED_ZOO`]) when no file of that
    /// name exists. Errors: unreadable, over-long ([`MAX_ZOO_BYTES`]) or non-UTF-8 files, and
    /// everything [`ZooPreset::from_ron`] rejects.
    pub fn load(path_or_name: &std::path::Path) -> Result<Self, PresetError> {
        let shown = path_or_name.display().to_string();
        // A folder that happens to share a bundled preset's name does not hide the preset.
        if !path_or_name.is_file() {
            if let Some((_, text)) = BUNDLED_ZOO.iter().find(|(n, _)| shown == *n) {
                return Self::from_ron(text, &shown);
            }
            let names: Vec<&str> = BUNDLED_ZOO.iter().map(|(n, _)| *n).collect();
            return Err(PresetError::whole(
                &shown,
                format!(
                    "no such file, and no bundled zoo preset of that name (bundled: {})",
                    names.join(", ")
                ),
            ));
        }
        let text = read_text(path_or_name, &shown, MAX_ZOO_BYTES)?;
        Self::from_ron(&text, &shown)
    }

    /// Parses and validates RON text; `file` names the source in errors (with line:column for
    /// syntax and type errors, and for a field the text writes). Errors also for text over
    /// [`MAX_ZOO_BYTES`].
    pub fn from_ron(text: &str, file: &str) -> Result<Self, PresetError> {
        if text.len() as u64 > MAX_ZOO_BYTES {
            return Err(PresetError::whole(
                file,
                format!(
                    "preset is {} bytes; at most {MAX_ZOO_BYTES} are accepted",
                    text.len()
                ),
            ));
        }
        let p: ZooPreset = ron::Options::default()
            .from_str(text)
            .map_err(|e| PresetError::parse(&e, text, file))?;
        p.validate()
            .map_err(|e| PresetError::invalid(e, text, file))?;
        Ok(p)
    }

    /// Checks every field. Errors name the field (`problem.n`, `taus`) and what is allowed.
    pub fn validate(&self) -> Result<(), FieldError> {
        self.problem.validate().map_err(|e| e.within("problem"))?;
        check_int("budget", self.budget, 1, 1_000_000)?;
        check_int("seeds", self.seeds, 1, 1000)?;
        if self.rules.is_empty() || self.rules.len() > MAX_RULES {
            return Err(FieldError::new(
                "rules",
                format!("{} rules given; allowed 1..={MAX_RULES}", self.rules.len()),
            ));
        }
        if self.taus.len() > MAX_TAUS {
            return Err(FieldError::new(
                "taus",
                format!("{} values given; allowed 0..={MAX_TAUS}", self.taus.len()),
            ));
        }
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
        for &tau in &self.taus {
            check_real("taus", tau, Range::below(0.0, 1.0))?;
        }
        for r in &self.rules {
            if let (Some(h), Some(x)) = (r.info().zoo_arg, r.arg())
                && let Some(range) = h.range()
                && !range.contains(x)
            {
                return Err(FieldError::new(
                    "rules",
                    format!(
                        "{} {} = {x} is out of range; allowed {range}",
                        r.info().name,
                        h.name()
                    ),
                ));
            }
        }
        if self.rates.len() > 32 {
            return Err(FieldError::new(
                "rates",
                format!("{} values given; allowed 0..=32", self.rates.len()),
            ));
        }
        for &rate in &self.rates {
            check_real("rates", rate, Range::above(0.0, 1e6))?;
        }
        let taus = self.tau_values().len();
        let rates: usize = self
            .rules
            .iter()
            .map(|r| match (self.rates.len(), self.grid) {
                (0, true) => r.grid().len(),
                (0, false) => 1,
                (n, _) => n,
            })
            .sum();
        let cells = taus * rates * self.seeds;
        if cells > MAX_CELLS {
            return Err(FieldError::new(
                "seeds",
                format!(
                    "{taus} τ × {rates} (rule, rate) pairs × {} seeds = {cells} runs exceeds the \
                     limit of {MAX_CELLS}; split the study into several presets",
                    self.seeds
                ),
            ));
        }
        let operator = taus * self.seeds * self.problem.measurements() * self.problem.n.pow(2);
        if operator > MAX_OPERATOR_NUMBERS {
            return Err(FieldError::new(
                "seeds",
                format!(
                    "{taus} τ × {} seeds problem instances hold {operator} numbers together, \
                     over the memory limit of {MAX_OPERATOR_NUMBERS}; use fewer seeds or τ values \
                     (at most {} seeds here)",
                    self.seeds,
                    (MAX_OPERATOR_NUMBERS
                        / (taus * self.problem.measurements() * self.problem.n.pow(2)))
                    .max(1)
                ),
            ));
        }
        Ok(())
    }

    /// The τ values run.
    pub fn tau_values(&self) -> Vec<f64> {
        if self.taus.is_empty() {
            vec![self.problem.tau]
        } else {
            self.taus.clone()
        }
    }

    /// Every cell this preset runs, in a fixed order (τ, then rule, then rate, then seed); each
    /// rule on the schedule the registry gives it.
    pub fn cells(&self) -> Vec<Cell> {
        let mut out = Vec::new();
        for ti in 0..self.tau_values().len() {
            for &rule in &self.rules {
                let lrs: Vec<f64> = if !self.rates.is_empty() {
                    self.rates.clone()
                } else if self.grid {
                    rule.grid().to_vec()
                } else {
                    vec![rule.default_lr()]
                };
                for lr in lrs {
                    for s in 0..self.seeds as u64 {
                        out.push(Cell {
                            tau: ti,
                            rule,
                            schedule: rule.schedule(),
                            lr,
                            seed: self.seed.wrapping_add(s),
                        });
                    }
                }
            }
        }
        out
    }
}
