//! Zoo presets: what runs (problem, rules, rates, seeds, τ values), how they load, and the
//! limits that keep a preset within memory.

use serde::{Deserialize, Serialize};

use std::sync::atomic::AtomicBool;

use super::{
    Active, Cell, FactorRun, INTERPOLATED, Outcome, ReferenceCell, Rule, RunResult, ZooSchedule,
    step_together,
};
use crate::reading::{PresetError, Source};
use crate::sensing::MAX_SHARED;
use crate::sensing::{SensingConfig, SensingProblem};
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
    ("schedules", include_str!("../../../presets/schedules.ron")),
    ("rates", include_str!("../../../presets/rates.ron")),
    ("inits", include_str!("../../../presets/inits.ron")),
    ("ladder", include_str!("../../../presets/ladder.ron")),
    ("section10", include_str!("../../../presets/section10.ron")),
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
    /// The rules to run, 1..=[`MAX_RULES`]: registered rules and chains
    /// (`Chain("normalize_rows() | trace(0.9)")`).
    #[serde(deserialize_with = "indexed_rules")]
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
    /// Peak rates per rule (`{Gd: [0.003, 0.01], Adam: [1e-3]}`), each list as `rates`; a rule
    /// listed here runs at these rates whatever `rates` and `grid` say. Every key must be one
    /// of `rules`.
    #[serde(skip_serializing_if = "RuleRates::is_empty")]
    pub rule_rates: RuleRates,
    /// Step budgets per rule (`{FlowAdamP(0.0): 120000}`), each as `budget`; a rule listed
    /// here runs to its own budget instead (Table 10's longer budget for FlowAdam-p). Every key
    /// must be one of `rules`.
    #[serde(skip_serializing_if = "RuleBudgets::is_empty")]
    pub rule_budgets: RuleBudgets,
    /// Training losses at which every run's fit is read ([`RunResult::readings`]: the paper's
    /// Table 10 reads 1e-4 … 1e-7), strictly descending, each in (0, 1e8), at most
    /// [`MAX_LEVELS`]; empty (the default) reads none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub loss_levels: Vec<f64>,
    /// Schedule choices to run, each a cell dimension (at most 4, no repeats); empty runs
    /// [`ZooSchedule::Paper`] only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schedules: Vec<ZooSchedule>,
    /// Init scales of the factors to sweep (each in (0, 10], at most [`MAX_TAUS`]); empty
    /// runs `problem.init` only.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inits: Vec<f64>,
    /// Problem sizes n to sweep (each 2..=256 and at least `problem.rank`, at most
    /// [`MAX_TAUS`]); empty runs `problem.n` only. The measurement count follows each size
    /// (`problem.ratio` × dof).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<usize>,
    /// Also solve each instance's convex reference, the minimum-nuclear-norm matrix of its
    /// measurements ([`ZooPreset::references`]); on unless the preset says `reference: false`.
    #[serde(skip_serializing_if = "is_true")]
    pub reference: bool,
}

/// Reads [`ZooPreset::rules`], naming the entry at fault in an error (`rules[1]: chain
/// `…`: transform 2: unknown transform …`), as a field's place in the list says more than its
/// line does.
fn indexed_rules<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<Rule>, D::Error> {
    struct Visit;
    impl<'de> serde::de::Visitor<'de> for Visit {
        type Value = Vec<Rule>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a list of rules")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut seq: A,
        ) -> Result<Vec<Rule>, A::Error> {
            use serde::de::Error;
            let mut out = Vec::new();
            // The preset's byte limit bounds the entries; validation bounds their count.
            loop {
                match seq.next_element::<Rule>() {
                    Ok(Some(r)) => out.push(r),
                    Ok(None) => return Ok(out),
                    Err(e) => return Err(A::Error::custom(format!("rules[{}]: {e}", out.len()))),
                }
            }
        }
    }
    d.deserialize_seq(Visit)
}

/// Whether `x` is true (the default of [`ZooPreset::reference`], which files leave out).
fn is_true(x: &bool) -> bool {
    *x
}

/// A value per rule, in the order the preset writes them. A preset writes it as a map from
/// rule to value (`{Gd: [0.01, 0.03], Muon: [0.1]}`); it is written back as a list of
/// (rule, value) pairs, which reads back too (JSON has no map keys such as `Dial(0.5)`).
#[derive(Clone, Debug, PartialEq)]
pub struct PerRule<T>(pub Vec<(Rule, T)>);

/// Peak rates per rule ([`ZooPreset::rule_rates`]).
pub type RuleRates = PerRule<Vec<f64>>;

/// Step budgets per rule ([`ZooPreset::rule_budgets`]).
pub type RuleBudgets = PerRule<usize>;

impl<T> Default for PerRule<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T> PerRule<T> {
    /// No rule has a value of its own.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value listed for `rule`, if any.
    pub fn get(&self, rule: Rule) -> Option<&T> {
        self.0.iter().find(|(r, _)| *r == rule).map(|(_, v)| v)
    }
}

impl<T: Serialize> Serialize for PerRule<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut m = s.serialize_seq(Some(self.0.len()))?;
        for pair in &self.0 {
            m.serialize_element(pair)?;
        }
        m.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for PerRule<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visit<T> {
            type Value = PerRule<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a map from rule to its value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<PerRule<T>, A::Error> {
                let mut out = Vec::new();
                // The preset's byte limit bounds the entries; validation bounds their count.
                while let Some((r, v)) = map.next_entry::<Rule, T>()? {
                    out.push((r, v));
                }
                Ok(PerRule(out))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<PerRule<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(pair) = seq.next_element::<(Rule, T)>()? {
                    out.push(pair);
                }
                Ok(PerRule(out))
            }
        }
        d.deserialize_any(Visit(std::marker::PhantomData))
    }
}

impl crate::share::Shareable for ZooPreset {
    const PREFIX: &'static str = "bz1";
    const BUNDLED: &'static [(&'static str, &'static str)] = BUNDLED_ZOO;
    fn parse_ron(text: &str, file: &str) -> Result<Self, PresetError> {
        ZooPreset::from_ron(text, file)
    }
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
            rule_rates: RuleRates::default(),
            rule_budgets: RuleBudgets::default(),
            loss_levels: Vec::new(),
            schedules: Vec::new(),
            inits: Vec::new(),
            sizes: Vec::new(),
            reference: true,
        }
    }
}

/// Largest zoo preset file accepted, in bytes.
pub const MAX_ZOO_BYTES: u64 = 1 << 20;
/// Most rules in one zoo preset.
pub const MAX_RULES: usize = 64;
/// Gradient evaluations a step of a flow rule (FlowAdam) costs at most: its own and the six of
/// one Dormand–Prince attempt (at the paper's settings it flows on nearly every step).
pub const FLOW_STEP_GRADIENTS: f64 = 7.0;

/// Gradient evaluations a step of `rule` costs at most: 1, or [`FLOW_STEP_GRADIENTS`] for a
/// rule that asks its lab for more ([`crate::optim::Optimizer::wants_oracle`]).
fn step_cost(rule: Rule) -> f64 {
    if rule.build().wants_oracle() {
        FLOW_STEP_GRADIENTS
    } else {
        1.0
    }
}

/// Most loss levels a zoo preset reads its runs at.
pub const MAX_LEVELS: usize = 8;
/// Most τ values in one zoo preset.
pub const MAX_TAUS: usize = 32;
/// Most runs (cells) in one zoo preset; a bigger study is several presets or `--shard`.
pub const MAX_CELLS: usize = 100_000;
/// Most numbers in all problem instances' measurement operators together (taus × seeds ×
/// m·n²; the zoo builds them all before running): 2 GB of f64.
pub const MAX_OPERATOR_NUMBERS: usize = 250_000_000;

impl ZooPreset {
    /// Loads a zoo preset file (any file name the OS allows), a share string (`bz1:…`), or a
    /// bundled one by name ([`BUNDLED_ZOO`]) when no file of that name exists
    /// ([`crate::reading::source`]). Errors: unreadable, over-long ([`MAX_ZOO_BYTES`]) or
    /// non-UTF-8 files, a share string that does not decode, and everything
    /// [`ZooPreset::from_ron`] rejects.
    pub fn load(path_or_name: impl AsRef<std::ffi::OsStr>) -> Result<Self, PresetError> {
        match crate::reading::source(
            path_or_name.as_ref(),
            BUNDLED_ZOO,
            "zoo preset",
            MAX_ZOO_BYTES,
            crate::share::is_share_string,
        )? {
            Source::Ron { text, file } => Self::from_ron(&text, &file),
            Source::Share(s) => crate::share::decode(&s),
        }
    }

    /// Parses and validates RON text (a leading byte-order mark is ignored); `file` names the
    /// source in errors (with line:column for syntax and type errors, and for a field the text
    /// writes). Errors also for text over [`MAX_ZOO_BYTES`].
    pub fn from_ron(text: &str, file: &str) -> Result<Self, PresetError> {
        let options = ron::Options::default();
        crate::reading::parse_ron(text, file, MAX_ZOO_BYTES, options, Self::validate)
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
        check_rates("rates", &self.rates)?;
        for (i, (rule, rates)) in self.rule_rates.0.iter().enumerate() {
            let field = self.check_key("rule_rates", &self.rule_rates, i)?;
            if rates.is_empty() {
                return Err(FieldError::new(
                    field,
                    format!("{}: no rates given; allowed 1..=32", rule.name()),
                ));
            }
            check_rates(&format!("{field}.{}", rule.name()), rates)?;
        }
        if self.loss_levels.len() > MAX_LEVELS {
            return Err(FieldError::new(
                "loss_levels",
                format!(
                    "{} values given; allowed 0..={MAX_LEVELS}",
                    self.loss_levels.len()
                ),
            ));
        }
        for (i, &l) in self.loss_levels.iter().enumerate() {
            let field = format!("loss_levels[{i}]");
            if !(l > 0.0 && l < 1e8) {
                return Err(FieldError::new(
                    field,
                    format!("{l} is out of range; allowed (0, 1e8)"),
                ));
            }
            if i > 0 && l >= self.loss_levels[i - 1] {
                return Err(FieldError::new(
                    field,
                    format!("{l} is not below the level before it; list them descending"),
                ));
            }
        }
        for (i, (rule, budget)) in self.rule_budgets.0.iter().enumerate() {
            let field = self.check_key("rule_budgets", &self.rule_budgets, i)?;
            check_int(&format!("{field}.{}", rule.name()), *budget, 1, 1_000_000)?;
        }
        if self.schedules.len() > ZooSchedule::ALL.len() {
            return Err(FieldError::new(
                "schedules",
                format!(
                    "{} values given; allowed 0..={}",
                    self.schedules.len(),
                    ZooSchedule::ALL.len()
                ),
            ));
        }
        for (i, s) in self.schedules.iter().enumerate() {
            if self.schedules[..i].contains(s) {
                return Err(FieldError::new(
                    format!("schedules[{i}]"),
                    format!("{s:?} is listed twice"),
                ));
            }
        }
        if self.inits.len() > MAX_TAUS {
            return Err(FieldError::new(
                "inits",
                format!("{} values given; allowed 0..={MAX_TAUS}", self.inits.len()),
            ));
        }
        for (i, &x) in self.inits.iter().enumerate() {
            check_real(&format!("inits[{i}]"), x, Range::above(0.0, 10.0))?;
        }
        if self.sizes.len() > MAX_TAUS {
            return Err(FieldError::new(
                "sizes",
                format!("{} values given; allowed 0..={MAX_TAUS}", self.sizes.len()),
            ));
        }
        for (i, &n) in self.sizes.iter().enumerate() {
            let field = format!("sizes[{i}]");
            check_int(&field, n, self.problem.rank.max(2), 256)?;
            SensingConfig {
                n,
                ..self.problem.clone()
            }
            .validate()
            .map_err(|e| FieldError::new(field, e.message))?;
        }
        let per_instance: usize = self.size_values().len()
            * self.tau_values().len()
            * self.init_values().len()
            * self.schedule_values().len();
        let rates: usize = self.rules.iter().map(|&r| self.rates_for(r).len()).sum();
        let cells = per_instance * rates * self.seeds;
        if cells > MAX_CELLS {
            return Err(FieldError::new(
                "seeds",
                format!(
                    "{per_instance} (size, τ, init, schedule) × {rates} (rule, rate) pairs × {} \
                     seeds = {cells} runs exceeds the limit of {MAX_CELLS}; split the study into \
                     several presets",
                    self.seeds
                ),
            ));
        }
        // Problems are built one size at a time: the largest size's instances bound memory.
        let instances = self.tau_values().len() * self.init_values().len();
        let biggest = self
            .size_values()
            .iter()
            .map(|&n| {
                SensingConfig {
                    n,
                    ..self.problem.clone()
                }
                .measurements()
                    * n
                    * n
            })
            .max()
            .unwrap_or(0);
        let operator = instances * self.seeds * biggest;
        if operator > MAX_OPERATOR_NUMBERS {
            return Err(FieldError::new(
                "seeds",
                format!(
                    "{instances} (τ, init) × {} seeds problem instances hold {operator} numbers \
                     together, over the memory limit of {MAX_OPERATOR_NUMBERS}; use fewer seeds, \
                     τ values or init scales (at most {} seeds here)",
                    self.seeds,
                    (MAX_OPERATOR_NUMBERS / (instances * biggest).max(1)).max(1)
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

    /// The init scales run.
    pub fn init_values(&self) -> Vec<f64> {
        if self.inits.is_empty() {
            vec![self.problem.init]
        } else {
            self.inits.clone()
        }
    }

    /// The problem sizes run.
    pub fn size_values(&self) -> Vec<usize> {
        if self.sizes.is_empty() {
            vec![self.problem.n]
        } else {
            self.sizes.clone()
        }
    }

    /// The schedule choices run.
    pub fn schedule_values(&self) -> Vec<ZooSchedule> {
        if self.schedules.is_empty() {
            vec![ZooSchedule::Paper]
        } else {
            self.schedules.clone()
        }
    }

    /// Checks the key of entry `i` of the per-rule map `map` (the preset field `name`): one of
    /// `rules`, listed once. Returns the entry's field path (`rule_rates[2]`) for the value's
    /// own errors.
    fn check_key<T>(&self, name: &str, map: &PerRule<T>, i: usize) -> Result<String, FieldError> {
        let field = format!("{name}[{i}]");
        let rule = map.0[i].0;
        if !self.rules.contains(&rule) {
            return Err(FieldError::new(
                field,
                format!("{} is not one of the preset's `rules`", rule.name()),
            ));
        }
        if map.0[..i].iter().any(|(r, _)| *r == rule) {
            return Err(FieldError::new(
                field,
                format!("{} is listed twice", rule.name()),
            ));
        }
        Ok(field)
    }

    /// The step budget of `rule`: its `rule_budgets` entry, else `budget`.
    pub fn budget_of(&self, rule: Rule) -> usize {
        self.rule_budgets.get(rule).copied().unwrap_or(self.budget)
    }

    /// Gradient evaluations of every run together at most (the unit of a zoo's work for the
    /// estimates): each run's budget, a step of a rule that asks for extra gradients (FlowAdam)
    /// counted as [`FLOW_STEP_GRADIENTS`].
    pub fn work(&self) -> f64 {
        let cost: Vec<f64> = self.rules.iter().map(|&r| step_cost(r)).collect();
        self.cells()
            .iter()
            .map(|c| {
                let k = self.rules.iter().position(|&r| r == c.rule).unwrap_or(0);
                self.budget_of(c.rule) as f64 * cost.get(k).copied().unwrap_or(1.0)
            })
            .sum()
    }

    /// The peak rates `rule` runs at: its `rule_rates` entry, else `rates`, else its grid
    /// (with `grid`), else the paper's rate.
    pub fn rates_for(&self, rule: Rule) -> Vec<f64> {
        if let Some(r) = self.rule_rates.get(rule) {
            r.clone()
        } else if !self.rates.is_empty() {
            self.rates.clone()
        } else if self.grid {
            rule.grid().to_vec()
        } else {
            vec![rule.default_lr()]
        }
    }

    /// The sensing problem of size index `size`, τ index `tau` and init index `init`.
    pub fn config(&self, size: usize, tau: usize, init: usize) -> SensingConfig {
        SensingConfig {
            n: self.size_values()[size],
            tau: self.tau_values()[tau],
            init: self.init_values()[init],
            ..self.problem.clone()
        }
    }

    /// Every cell this preset runs, in a fixed order: size, then τ, then init scale, then
    /// schedule choice, then rule (in `rules` order), then rate ([`ZooPreset::rates_for`]),
    /// then seed. A dimension the preset leaves empty has its one value, so a preset without
    /// sizes, inits or schedules lists the cells it always did.
    pub fn cells(&self) -> Vec<Cell> {
        let mut out = Vec::new();
        for size in 0..self.size_values().len() {
            for tau in 0..self.tau_values().len() {
                for init in 0..self.init_values().len() {
                    for choice in self.schedule_values() {
                        for &rule in &self.rules {
                            for lr in self.rates_for(rule) {
                                for s in 0..self.seeds as u64 {
                                    out.push(Cell {
                                        size,
                                        tau,
                                        init,
                                        choice,
                                        rule,
                                        schedule: choice.for_rule(rule),
                                        lr,
                                        seed: self.seed.wrapping_add(s),
                                    });
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// Runs `cell` on `problem` (the instance of the cell's size, τ, init and seed) and labels
    /// the result with the dimensions this preset sweeps.
    pub fn run_cell(&self, problem: &SensingProblem, cell: Cell, cancel: &AtomicBool) -> RunResult {
        let mut r = self.start_cell(problem, cell).finish(cell.seed, cancel);
        self.label(cell, &mut r);
        r
    }

    /// The run of `cell` on `problem` (its instance) before its first step.
    pub(super) fn start_cell<'a>(
        &self,
        problem: &'a SensingProblem,
        cell: Cell,
    ) -> FactorRun<&'a SensingProblem> {
        FactorRun::new(
            problem,
            cell.rule,
            cell.lr,
            self.budget_of(cell.rule),
            cell.seed,
            self.twins,
        )
        .with_schedule(cell.schedule)
        .with_full_horizon(cell.choice.full_horizon())
        .with_levels(&self.loss_levels)
    }

    /// The labelled result of `cell`'s `run`, ended by `outcome` ([`ZooPreset::run_cell`]).
    pub(super) fn end_cell(
        &self,
        cell: Cell,
        run: &FactorRun<&SensingProblem>,
        outcome: Outcome,
    ) -> RunResult {
        let mut r = run.summary(cell.seed, outcome);
        self.label(cell, &mut r);
        r
    }

    /// Seconds per gradient evaluation of one run (the unit of [`ZooPreset::work`]) on this
    /// computer, from a short trial on the calling thread: the preset's last rule that asks
    /// for no extra gradients (else its last rule, its time divided by
    /// [`FLOW_STEP_GRADIENTS`]) at its largest size for up to `steps` steps, in
    /// [`MAX_SHARED`] copies stepped together as the zoo steps the runs of one instance
    /// (building the instance not counted; at these sizes a step is mostly the pass over the
    /// measurements, the same for every rule), so an upper bound for smaller sizes. `None` without cells or
    /// with a clock too coarse to time it. Building the largest instance takes seconds at
    /// n = 128: run it off the UI's thread.
    pub fn trial_pace(&self, steps: usize) -> Option<f64> {
        let cells = self.cells();
        let largest = (0..self.size_values().len()).max_by_key(|&i| self.size_values()[i])?;
        let at_largest = || cells.iter().rev().filter(|c| c.size == largest);
        let cell = *at_largest()
            .find(|c| step_cost(c.rule) == 1.0)
            .or_else(|| at_largest().next())?;
        let cost = step_cost(cell.rule);
        let cfg = self.config(cell.size, cell.tau, cell.init);
        let problem = SensingProblem::new(&cfg, self.seed);
        let steps = steps.clamp(1, self.budget.max(1));
        // As many copies as a shared pass serves, stepped together as the zoo steps the runs
        // of one instance; the pace is per run.
        let mut active: Vec<Active<'_>> = (0..MAX_SHARED)
            .map(|slot| Active {
                slot,
                at: 0,
                cell,
                run: FactorRun::new(&problem, cell.rule, cell.lr, steps, cell.seed, self.twins)
                    .with_schedule(cell.schedule),
            })
            .collect();
        let never = AtomicBool::new(false);
        let t = web_time::Instant::now();
        let mut taken = 0;
        while taken < steps && active.len() == MAX_SHARED {
            taken += 1;
            step_together(&mut active, &never, &mut |_, _| {});
        }
        let secs = t.elapsed().as_secs_f64();
        (secs > 0.0).then(|| secs / (taken as f64 * MAX_SHARED as f64 * cost))
    }

    /// Sets the labels of the swept dimensions (n, init, schedule) of `cell` on `run`.
    fn label(&self, cell: Cell, run: &mut RunResult) {
        run.n = (!self.sizes.is_empty()).then(|| self.size_values()[cell.size]);
        run.init = (!self.inits.is_empty()).then(|| self.init_values()[cell.init]);
        run.schedule = cell.choice;
    }

    /// Checks `run`, read back from disk (a shard, the app's saved sweeps), as the result of
    /// `cell`: rule, class, rate, seed and τ equal the cell's bit for bit; at most `budget`
    /// steps (exactly `budget` when the budget ran out); twin drift present exactly when the
    /// preset trains twins; loss, recovery, effective rank (≤ n) and balancedness finite and
    /// ≥ 0 for a finished run (a diverged or cancelled run may hold NaN or ±∞, never a negative
    /// number); an interpolated run below [`INTERPOLATED`]. Errors name the cell and the field.
    pub fn check_run(&self, cell: Cell, run: &RunResult) -> Result<(), String> {
        let Cell {
            tau: ti,
            rule,
            lr,
            seed,
            ..
        } = cell;
        let tau = self.tau_values().get(ti).copied().unwrap_or(f64::NAN);
        let mut want = run.clone();
        self.label(cell, &mut want);
        let name = format!(
            "{} at lr {lr}, seed {seed}{}{}{}{}",
            rule.name(),
            if self.taus.is_empty() {
                String::new()
            } else {
                format!(", τ {tau}")
            },
            want.n.map_or(String::new(), |n| format!(", n {n}")),
            want.init.map_or(String::new(), |x| format!(", init {x}")),
            if cell.choice.is_paper() {
                String::new()
            } else {
                format!(", schedule {}", cell.choice.name())
            }
        );
        let wrong =
            |field: &str, message: String| Err(format!("{name}: field `{field}`: {message}"));
        let differs = |field: &str, got: String, want: String| {
            wrong(
                field,
                format!("{got} differs from the preset's cell list, which has {want}"),
            )
        };
        if run.rule != rule.name() {
            return differs(
                "rule",
                format!("{:?}", run.rule),
                format!("{:?}", rule.name()),
            );
        }
        if run.equivariant != rule.equivariant() {
            return differs(
                "equivariant",
                run.equivariant.to_string(),
                rule.equivariant().to_string(),
            );
        }
        if run.lr.to_bits() != lr.to_bits() {
            return differs("lr", run.lr.to_string(), lr.to_string());
        }
        if run.seed != seed {
            return differs("seed", run.seed.to_string(), seed.to_string());
        }
        if run.tau.to_bits() != tau.to_bits() {
            return differs("tau", run.tau.to_string(), tau.to_string());
        }
        if run.n != want.n {
            return differs("n", format!("{:?}", run.n), format!("{:?}", want.n));
        }
        if run.init.map(f64::to_bits) != want.init.map(f64::to_bits) {
            return differs(
                "init",
                format!("{:?}", run.init),
                format!("{:?}", want.init),
            );
        }
        if run.schedule != want.schedule {
            return differs(
                "schedule",
                format!("{:?}", run.schedule),
                format!("{:?}", want.schedule),
            );
        }
        let budget = self.budget_of(cell.rule);
        if run.steps > budget || (run.outcome == Outcome::Budget && run.steps != budget) {
            return wrong(
                "steps",
                format!(
                    "{} for a {:?} run with a budget of {budget}",
                    run.steps, run.outcome
                ),
            );
        }
        if run.outcome == Outcome::Converged {
            return wrong(
                "outcome",
                "Converged is the convex reference's outcome, not a rule's".into(),
            );
        }
        let finished = matches!(run.outcome, Outcome::Interpolated | Outcome::Budget);
        let n = self.size_values().get(cell.size).copied().unwrap_or(0);
        let max_erank = n as f64 * (1.0 + 1e-9);
        for (field, x, max) in [
            ("train_loss", run.train_loss, f64::INFINITY),
            ("recovery", run.recovery, f64::INFINITY),
            ("erank", run.erank, max_erank),
            ("balancedness", run.balancedness, f64::INFINITY),
        ] {
            let bad = if finished {
                !(x.is_finite() && (0.0..=max).contains(&x))
            } else {
                x < 0.0 || (x.is_finite() && x > max)
            };
            if bad {
                return wrong(
                    field,
                    format!(
                        "{x} is out of range for a {:?} run; allowed {}",
                        run.outcome,
                        if finished {
                            format!("finite, in [0, {max}]")
                        } else {
                            format!("NaN, ±∞ or [0, {max}]")
                        }
                    ),
                );
            }
        }
        if run.outcome == Outcome::Interpolated && run.train_loss >= INTERPOLATED {
            return wrong(
                "train_loss",
                format!(
                    "{} for an interpolated run; interpolation means below {INTERPOLATED}",
                    run.train_loss
                ),
            );
        }
        // Readings: the preset's first levels in order, at steps the run took, each at or
        // below its level, with sound metrics.
        if run.readings.len() > self.loss_levels.len() {
            return wrong(
                "readings",
                format!(
                    "{} given; the preset reads {} levels",
                    run.readings.len(),
                    self.loss_levels.len()
                ),
            );
        }
        for (i, (r, &level)) in run.readings.iter().zip(&self.loss_levels).enumerate() {
            let after = i.checked_sub(1).map_or(0, |k| run.readings[k].step);
            let sound = r.level.to_bits() == level.to_bits()
                && (after..=run.steps).contains(&r.step)
                && (0.0..=level).contains(&r.train_loss)
                && r.recovery.is_finite()
                && r.recovery >= 0.0
                && (0.0..=max_erank).contains(&r.erank);
            if !sound {
                return wrong(
                    "readings",
                    format!(
                        "reading {i} ({r:?}) does not belong at level {level} of a {}-step run",
                        run.steps
                    ),
                );
            }
        }
        match run.twin_drift {
            // A twin may diverge while its run does not: any value but a negative one.
            Some(d) if self.twins && d < 0.0 => wrong("twin_drift", format!("{d} is negative")),
            Some(_) if !self.twins => wrong(
                "twin_drift",
                "present, but the preset trains no twins".into(),
            ),
            None if self.twins => wrong("twin_drift", "missing; the preset trains twins".into()),
            _ => Ok(()),
        }
    }

    /// Checks `run`, read back from disk, as the result of unit `index` of this preset (a cell
    /// of `cells`, which must be [`ZooPreset::cells`], or after them a reference of `refs`, which
    /// must be [`ZooPreset::references`]): [`ZooPreset::check_run`] or
    /// [`ZooPreset::check_reference`]. Errors name the unit and the field.
    pub fn check_unit(
        &self,
        (cells, refs): (&[Cell], &[ReferenceCell]),
        index: usize,
        run: &RunResult,
    ) -> Result<(), String> {
        match cells.get(index) {
            Some(&cell) if run.reference.is_none() => self.check_run(cell, run),
            Some(_) => Err(format!(
                "a {} row where the preset's cell list has a rule's run",
                super::REFERENCE
            )),
            None => match refs.get(index - cells.len()) {
                Some(&r) => self.check_reference(r, run),
                None => Err(format!("no unit {index} in the preset")),
            },
        }
    }

    /// Checks `runs`, read back from disk, as the complete result of this preset: one result
    /// per unit ([`ZooPreset::units`]: the cells of [`ZooPreset::cells`], then the references),
    /// in that order, each passing [`ZooPreset::check_unit`], and the preset itself valid. A
    /// sweep saved before the convex reference existed (every cell's run, no reference rows)
    /// passes too. Errors name the cell and the field.
    pub fn check_runs(&self, runs: &[RunResult]) -> Result<(), String> {
        self.validate().map_err(|e| format!("the preset's {e}"))?;
        let (cells, refs) = (self.cells(), self.references());
        for (i, run) in runs.iter().enumerate().take(cells.len() + refs.len()) {
            self.check_unit((&cells, &refs), i, run)
                .map_err(|e| format!("cell {i}, {e}"))?;
        }
        if runs.len() != cells.len() + refs.len() && runs.len() != cells.len() {
            return Err(format!(
                "{} runs, but the preset has {} cells and {} convex references",
                runs.len(),
                cells.len(),
                refs.len()
            ));
        }
        Ok(())
    }
}

/// Checks a list of peak rates: at most 32, each in (0, 1e6]. Errors name `field[i]`.
fn check_rates(field: &str, rates: &[f64]) -> Result<(), FieldError> {
    if rates.len() > 32 {
        return Err(FieldError::new(
            field,
            format!("{} values given; allowed 0..=32", rates.len()),
        ));
    }
    for (i, &rate) in rates.iter().enumerate() {
        check_real(&format!("{field}[{i}]"), rate, Range::above(0.0, 1e6))?;
    }
    Ok(())
}
