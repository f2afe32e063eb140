//! The nine-rule optimizer zoo on matrix sensing (SPEC §7, the paper's Table 2), the anisotropy
//! dial and the spectral tail: runs, the paper's learning-rate selection rule, and tables.

use std::sync::atomic::{AtomicBool, Ordering};

use nalgebra::DMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{
    SensingConfig, SensingProblem, SensingWorkspace, balancedness, effective_rank, recovery,
};
use crate::metrics::mean_sd;
use crate::optim::{
    Adafactor, Adam, Dial, Gd, Lion, Muon, Optimizer, Polar, RmsProp, ScalarAdam, Shampoo, Signum,
};

/// An update rule of the zoo with the paper's fixed hyperparameters (SPEC §7: β1 0.9, β2 0.999,
/// ε 1e-8; RMSProp α 0.99; Lion 0.9/0.99; Muon μ 0.9 with Newton–Schulz; Shampoo λ 1, roots
/// every 20 steps). Only the learning rate is chosen per run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Rule {
    /// Gradient descent.
    Gd,
    /// Adam.
    Adam,
    /// Scalar-Adam (one shared second moment).
    ScalarAdam,
    /// RMSProp (cosine schedule).
    RmsProp,
    /// Signum (cosine schedule).
    Signum,
    /// Lion (cosine schedule).
    Lion,
    /// Adafactor.
    Adafactor,
    /// Muon (cosine schedule).
    Muon,
    /// Shampoo.
    Shampoo,
    /// The anisotropy dial at p in [0, 1] (p = 1 Adam, p = 0 scalar-Adam).
    Dial(f64),
}

impl Rule {
    /// The nine rules of Table 2, in the paper's order of recovery.
    pub const ZOO: [Rule; 9] = [
        Rule::Muon,
        Rule::Gd,
        Rule::ScalarAdam,
        Rule::Shampoo,
        Rule::Lion,
        Rule::Signum,
        Rule::RmsProp,
        Rule::Adafactor,
        Rule::Adam,
    ];

    /// Name used in files and tables.
    pub fn name(self) -> String {
        match self {
            Rule::Gd => "gd".into(),
            Rule::Adam => "adam".into(),
            Rule::ScalarAdam => "scalar_adam".into(),
            Rule::RmsProp => "rmsprop".into(),
            Rule::Signum => "signum".into(),
            Rule::Lion => "lion".into(),
            Rule::Adafactor => "adafactor".into(),
            Rule::Muon => "muon".into(),
            Rule::Shampoo => "shampoo".into(),
            Rule::Dial(p) => format!("dial_p{p}"),
        }
    }

    /// Equivariant under (U, V) → (UQ, VQ) (the paper's classification).
    pub fn equivariant(self) -> bool {
        match self {
            Rule::Gd | Rule::ScalarAdam | Rule::Muon | Rule::Shampoo => true,
            Rule::Dial(p) => p == 0.0,
            _ => false,
        }
    }

    /// Whether the paper runs it with the cosine schedule.
    pub fn cosine(self) -> bool {
        matches!(self, Rule::Muon | Rule::Signum | Rule::Lion | Rule::RmsProp)
    }

    /// The learning-rate grid at n = 40 (SPEC §7; the dial uses scalar-Adam's grid).
    pub fn grid(self) -> &'static [f64] {
        match self {
            Rule::Gd => &[0.01, 0.03, 0.1, 0.3],
            Rule::Adam => &[1e-3, 1e-2, 3e-2],
            Rule::ScalarAdam | Rule::Dial(_) => &[1e-3, 3e-3, 1e-2, 3e-2],
            Rule::RmsProp => &[1e-4, 3e-4, 1e-3, 3e-3, 1e-2],
            Rule::Signum | Rule::Lion => &[1e-4, 3e-4, 1e-3, 3e-3],
            Rule::Adafactor => &[3e-4, 1e-3, 3e-3, 1e-2],
            Rule::Muon => &[3e-3, 1e-2, 3e-2, 0.1],
            Rule::Shampoo => &[0.03, 0.1, 0.3, 1.0],
        }
    }

    /// The rate the paper selected (Table 2; the dial's anchor 1e-3).
    pub fn paper_lr(self) -> f64 {
        match self {
            Rule::Gd | Rule::Adam => 0.01,
            Rule::ScalarAdam | Rule::Dial(_) => 1e-3,
            Rule::RmsProp => 1e-4,
            Rule::Signum => 3e-3,
            Rule::Lion | Rule::Adafactor => 3e-4,
            Rule::Muon => 0.1,
            Rule::Shampoo => 0.03,
        }
    }

    /// The paper's Table 2 means (recovery, erank, balancedness), where it reports them.
    pub fn paper_table2(self) -> Option<(f64, f64, f64)> {
        Some(match self {
            Rule::Muon => (0.0000, 2.95, 1.65),
            Rule::Gd => (0.1312, 4.51, 0.06),
            Rule::ScalarAdam => (0.2010, 5.43, 0.14),
            Rule::Shampoo => (0.2856, 6.95, 1.47),
            Rule::Lion => (0.4248, 10.58, 7.35),
            Rule::Signum => (0.4454, 7.83, 1.79),
            Rule::RmsProp => (0.5266, 12.80, 4.74),
            Rule::Adafactor => (0.5430, 10.72, 3.40),
            Rule::Adam => (0.5734, 14.37, 5.37),
            Rule::Dial(_) => return None,
        })
    }

    /// A zero-state optimizer for this rule.
    pub fn build(self) -> Box<dyn Optimizer> {
        match self {
            Rule::Gd => Box::new(Gd),
            Rule::Adam => Box::new(Adam::new(0.9, 0.999, 1e-8)),
            Rule::ScalarAdam => Box::new(ScalarAdam::new(0.9, 0.999, 1e-8)),
            Rule::RmsProp => Box::new(RmsProp::new(0.99, 1e-8)),
            Rule::Signum => Box::new(Signum::new(0.9)),
            Rule::Lion => Box::new(Lion::new(0.9, 0.99)),
            Rule::Adafactor => Box::new(Adafactor::new(0.999, 1e-8)),
            Rule::Muon => Box::new(Muon::new(0.9, Polar::NewtonSchulz)),
            Rule::Shampoo => Box::new(Shampoo::new(1.0, 20)),
            Rule::Dial(p) => Box::new(Dial::new(p, 0.9, 0.999, 1e-8)),
        }
    }

    /// Learning rate at step t (0-based) of a `budget`-step run: constant, or
    /// `lr·½(1 + cos(π t/T))` with T = budget for the cosine rules (SPEC §7).
    pub fn lr_at(self, lr: f64, t: usize, budget: usize) -> f64 {
        if self.cosine() {
            lr * 0.5 * (1.0 + (std::f64::consts::PI * t as f64 / budget.max(1) as f64).cos())
        } else {
            lr
        }
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// The pre-update loss fell below 1e-7 at a check (every 200 steps).
    Interpolated,
    /// The budget ran out first.
    Budget,
    /// The loss became non-finite or exceeded 1e8.
    Diverged,
    /// Stopped by a cancel request.
    Cancelled,
}

/// One (rule, rate, seed) run's final numbers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// Rule name.
    pub rule: String,
    /// Equivariant class.
    pub equivariant: bool,
    /// Peak learning rate.
    pub lr: f64,
    /// Problem seed.
    pub seed: u64,
    /// Spectral-tail amplitude τ of the problem.
    pub tau: f64,
    /// Updates applied.
    pub steps: usize,
    /// How it ended.
    pub outcome: Outcome,
    /// The training loss of the final factors (the pre-update loss at which the run stopped).
    pub train_loss: f64,
    /// Recovery error of the final UVᵀ.
    pub recovery: f64,
    /// Effective rank of the final UVᵀ.
    pub erank: f64,
    /// Balancedness of the final factors.
    pub balancedness: f64,
    /// With twins: ‖U′V′ᵀ − UVᵀ‖F / ‖UVᵀ‖F between the run from (UQ, VQ) and the run from (U, V).
    pub twin_drift: Option<f64>,
}

/// Pre-update loss is checked every this many steps (SPEC §7).
pub const CHECK_EVERY: usize = 200;
/// Interpolation threshold on the pre-update loss (SPEC §7).
pub const INTERPOLATED: f64 = 1e-7;
/// Divergence threshold (SPEC §7).
pub const DIVERGED: f64 = 1e8;

/// The gauge twin of a run: factors started at (UQ, VQ) and their own optimizer.
struct Twin {
    params: [DMatrix<f64>; 2],
    opt: Box<dyn Optimizer>,
    q: DMatrix<f64>,
}

/// State of one factored run (and optionally its gauge twin) in progress.
pub struct FactorRun<'a> {
    problem: &'a SensingProblem,
    rule: Rule,
    lr: f64,
    budget: usize,
    /// The factors [U, V], each `n × n`.
    pub params: [DMatrix<f64>; 2],
    grads: [DMatrix<f64>; 2],
    opt: Box<dyn Optimizer>,
    twin: Option<Twin>,
    ws: SensingWorkspace,
    /// Steps taken.
    pub t: usize,
    /// Last pre-update loss.
    pub loss: f64,
}

impl<'a> FactorRun<'a> {
    /// Starts `rule` at peak rate `lr` on `problem` from the seed's initial factors; with
    /// `twins`, also from (UQ, VQ) for the seed's Haar Q.
    pub fn new(
        problem: &'a SensingProblem,
        rule: Rule,
        lr: f64,
        budget: usize,
        seed: u64,
        twins: bool,
    ) -> Self {
        let n = problem.cfg.n;
        let (u, v) = problem.init(seed);
        let twin = twins.then(|| {
            let q = problem.gauge(seed);
            Twin {
                params: [&u * &q, &v * &q],
                opt: rule.build(),
                q,
            }
        });
        Self {
            problem,
            rule,
            lr,
            budget,
            params: [u, v],
            grads: [DMatrix::zeros(n, n), DMatrix::zeros(n, n)],
            opt: rule.build(),
            twin,
            ws: SensingWorkspace::new(n),
            t: 0,
            loss: f64::NAN,
        }
    }

    /// Takes one step unless a stopping rule fires first; returns the outcome when it does.
    pub fn step(&mut self) -> Option<Outcome> {
        let [u, v] = &self.params;
        self.loss = self
            .problem
            .loss_and_grad(u, v, &mut self.grads, &mut self.ws);
        if !self.loss.is_finite() || self.loss > DIVERGED {
            return Some(Outcome::Diverged);
        }
        // After `budget` updates the run is over whatever the loss; the interpolation check
        // belongs to steps that would still update (SPEC §7: every 200 steps of the loop).
        if self.t >= self.budget {
            return Some(Outcome::Budget);
        }
        if self.t.is_multiple_of(CHECK_EVERY) && self.loss < INTERPOLATED {
            return Some(Outcome::Interpolated);
        }
        let lr = self.rule.lr_at(self.lr, self.t, self.budget);
        self.opt.step(&mut self.params, &self.grads, lr);
        if let Some(twin) = &mut self.twin {
            let [tu, tv] = &twin.params;
            self.problem
                .loss_and_grad(tu, tv, &mut self.grads, &mut self.ws);
            twin.opt.step(&mut twin.params, &self.grads, lr);
        }
        self.t += 1;
        None
    }

    /// Relative distance of the twin's product from this run's, `‖U′V′ᵀ − UVᵀ‖F / ‖UVᵀ‖F`.
    pub fn twin_drift(&self) -> Option<f64> {
        let tw = &self.twin.as_ref()?.params;
        let w = &self.params[0] * self.params[1].transpose();
        let w2 = &tw[0] * tw[1].transpose();
        Some((w2 - &w).norm() / w.norm())
    }

    /// Factor drift of the twin, `‖U′ − UQ‖F / ‖UQ‖F`: whether the twin's factors stay the
    /// gauge-rotated factors (equivariant rules) and not only the same product.
    pub fn factor_drift(&self) -> Option<f64> {
        let twin = self.twin.as_ref()?;
        let uq = &self.params[0] * &twin.q;
        Some((&twin.params[0] - &uq).norm() / uq.norm())
    }

    /// Runs to a stopping rule (checking `cancel` every 200 steps) and summarises.
    pub fn finish(mut self, seed: u64, cancel: &AtomicBool) -> RunResult {
        let outcome = loop {
            if self.t.is_multiple_of(CHECK_EVERY) && cancel.load(Ordering::Relaxed) {
                break Outcome::Cancelled;
            }
            if let Some(o) = self.step() {
                break o;
            }
        };
        let [u, v] = &self.params;
        let w = u * v.transpose();
        RunResult {
            rule: self.rule.name(),
            equivariant: self.rule.equivariant(),
            lr: self.lr,
            seed,
            tau: self.problem.cfg.tau,
            steps: self.t,
            outcome,
            train_loss: self.loss,
            recovery: recovery(u, v, &self.problem.target),
            erank: effective_rank(&w),
            balancedness: balancedness(u, v),
            twin_drift: self.twin_drift(),
        }
    }
}

/// Zoo presets shipped inside the binary, by name (the files in `presets/`).
pub const BUNDLED_ZOO: &[(&str, &str)] = &[
    ("zoo-paper", include_str!("../../presets/zoo-paper.ron")),
    ("dial", include_str!("../../presets/dial.ron")),
    ("tail", include_str!("../../presets/tail.ron")),
    ("muon-rates", include_str!("../../presets/muon-rates.ron")),
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
            rules: Rule::ZOO.to_vec(),
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
    pub fn load(path_or_name: &std::path::Path) -> Result<Self, String> {
        let shown = path_or_name.display().to_string();
        // A folder that happens to share a bundled preset's name does not hide the preset.
        if !path_or_name.is_file()
            && let Some((_, text)) = BUNDLED_ZOO.iter().find(|(n, _)| shown == *n)
        {
            return Self::from_ron(text, &shown);
        }
        let names: Vec<&str> = BUNDLED_ZOO.iter().map(|(n, _)| *n).collect();
        let len = std::fs::metadata(path_or_name)
            .map_err(|e| {
                format!(
                    "cannot read {shown}: {e} (bundled zoo presets: {})",
                    names.join(", ")
                )
            })?
            .len();
        if len > MAX_ZOO_BYTES {
            return Err(format!(
                "{shown}: file is {len} bytes; at most {MAX_ZOO_BYTES} are accepted"
            ));
        }
        let text = std::fs::read_to_string(path_or_name)
            .map_err(|e| format!("cannot read {shown}: {e}"))?;
        Self::from_ron(&text, &shown)
    }

    /// Parses and validates RON text (a leading byte-order mark is ignored); `file` names the
    /// source in errors (with line:column for syntax and type errors). Errors also for text over
    /// [`MAX_ZOO_BYTES`].
    pub fn from_ron(text: &str, file: &str) -> Result<Self, String> {
        let text = crate::preset::without_bom(text);
        if text.len() as u64 > MAX_ZOO_BYTES {
            return Err(format!(
                "{file}: preset is {} bytes; at most {MAX_ZOO_BYTES} are accepted",
                text.len()
            ));
        }
        let p: ZooPreset = ron::Options::default()
            .from_str(text)
            .map_err(|e| format!("{file}:{}: {}", e.span.start, e.code))?;
        p.validate()
            .map_err(|(f, m)| format!("{file}: field `{f}`: {m}"))?;
        Ok(p)
    }

    /// Checks every field. Errors: `(field, message)`.
    pub fn validate(&self) -> Result<(), (String, String)> {
        self.problem
            .validate()
            .map_err(|(f, m)| (format!("problem.{f}"), m))?;
        if !(1..=1_000_000).contains(&self.budget) {
            return Err((
                "budget".into(),
                format!("{} is out of range; allowed 1..=1000000", self.budget),
            ));
        }
        if !(1..=1000).contains(&self.seeds) {
            return Err((
                "seeds".into(),
                format!("{} is out of range; allowed 1..=1000", self.seeds),
            ));
        }
        if self.rules.is_empty() || self.rules.len() > MAX_RULES {
            return Err((
                "rules".into(),
                format!("{} rules given; allowed 1..={MAX_RULES}", self.rules.len()),
            ));
        }
        if self.taus.len() > MAX_TAUS {
            return Err((
                "taus".into(),
                format!("{} values given; allowed 0..={MAX_TAUS}", self.taus.len()),
            ));
        }
        for (field, text, max) in [
            ("name", &self.name, 200),
            ("description", &self.description, 4000),
        ] {
            let n = text.chars().count();
            if n > max {
                return Err((
                    field.into(),
                    format!("{n} characters; allowed at most {max}"),
                ));
            }
        }
        for &tau in &self.taus {
            if !(tau.is_finite() && (0.0..1.0).contains(&tau)) {
                return Err((
                    "taus".into(),
                    format!("{tau} is out of range; allowed [0, 1)"),
                ));
            }
        }
        for r in &self.rules {
            if let Rule::Dial(p) = r
                && !(p.is_finite() && (0.0..=1.0).contains(p))
            {
                return Err((
                    "rules".into(),
                    format!("dial p = {p} is out of range; allowed [0, 1]"),
                ));
            }
        }
        if self.rates.len() > 32 {
            return Err((
                "rates".into(),
                format!("{} values given; allowed 0..=32", self.rates.len()),
            ));
        }
        if let Some(bad) = self
            .rates
            .iter()
            .find(|r| !(r.is_finite() && **r > 0.0 && **r <= 1e6))
        {
            return Err((
                "rates".into(),
                format!("{bad} is out of range; allowed (0, 1000000]"),
            ));
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
            return Err((
                "seeds".into(),
                format!(
                    "{taus} τ × {rates} (rule, rate) pairs × {} seeds = {cells} runs exceeds the \
                     limit of {MAX_CELLS}; split the study into several presets",
                    self.seeds
                ),
            ));
        }
        let operator = taus * self.seeds * self.problem.measurements() * self.problem.n.pow(2);
        if operator > MAX_OPERATOR_NUMBERS {
            return Err((
                "seeds".into(),
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

    /// Every (τ index, rule, lr, seed) cell this preset runs, in a fixed order.
    pub fn cells(&self) -> Vec<Cell> {
        let mut out = Vec::new();
        for ti in 0..self.tau_values().len() {
            for &rule in &self.rules {
                let lrs: Vec<f64> = if !self.rates.is_empty() {
                    self.rates.clone()
                } else if self.grid {
                    rule.grid().to_vec()
                } else {
                    vec![rule.paper_lr()]
                };
                for lr in lrs {
                    for s in 0..self.seeds as u64 {
                        out.push((ti, rule, lr, self.seed.wrapping_add(s)));
                    }
                }
            }
        }
        out
    }
}

/// One run of a zoo preset: (τ index, rule, peak rate, seed), as [`ZooPreset::cells`] lists.
pub type Cell = (usize, Rule, f64, u64);

impl ZooPreset {
    /// Checks `run`, read back from disk (a shard, the app's saved sweeps), as the result of
    /// `cell`: rule, class, rate, seed and τ equal the cell's bit for bit; at most `budget`
    /// steps (exactly `budget` when the budget ran out); twin drift present exactly when the
    /// preset trains twins; loss, recovery, effective rank (≤ n) and balancedness finite and
    /// ≥ 0 for a finished run (a diverged or cancelled run may hold NaN or ±∞, never a negative
    /// number); an interpolated run below [`INTERPOLATED`]. Errors name the cell and the field.
    pub fn check_run(&self, cell: Cell, run: &RunResult) -> Result<(), String> {
        let (ti, rule, lr, seed) = cell;
        let tau = self.tau_values().get(ti).copied().unwrap_or(f64::NAN);
        let name = format!(
            "{} at lr {lr}, seed {seed}{}",
            rule.name(),
            if self.taus.is_empty() {
                String::new()
            } else {
                format!(", τ {tau}")
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
        if run.steps > self.budget || (run.outcome == Outcome::Budget && run.steps != self.budget) {
            return wrong(
                "steps",
                format!(
                    "{} for a {:?} run with a budget of {}",
                    run.steps, run.outcome, self.budget
                ),
            );
        }
        let finished = matches!(run.outcome, Outcome::Interpolated | Outcome::Budget);
        let max_erank = self.problem.n as f64 * (1.0 + 1e-9);
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

    /// Checks `runs`, read back from disk, as the complete result of this preset: one run per
    /// cell of [`ZooPreset::cells`], in that order, each passing [`ZooPreset::check_run`], and
    /// the preset itself valid. Errors name the cell and the field.
    pub fn check_runs(&self, runs: &[RunResult]) -> Result<(), String> {
        self.validate()
            .map_err(|(f, m)| format!("the preset's field `{f}`: {m}"))?;
        let cells = self.cells();
        if runs.len() != cells.len() {
            return Err(format!(
                "{} runs, but the preset has {} cells",
                runs.len(),
                cells.len()
            ));
        }
        for (i, (&cell, run)) in cells.iter().zip(runs).enumerate() {
            self.check_run(cell, run)
                .map_err(|e| format!("cell {i}, {e}"))?;
        }
        Ok(())
    }
}

/// Runs every cell of `preset` in parallel (rayon), problems built once per seed; `progress()`
/// after each run. Results come back in cell order whatever the thread count.
pub fn run_zoo(
    preset: &ZooPreset,
    progress: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
) -> Vec<RunResult> {
    let all: Vec<usize> = (0..preset.cells().len()).collect();
    run_zoo_cells(preset, &all, progress, cancel)
}

/// Runs the cells of `preset` whose indices into [`ZooPreset::cells`] are listed in `which`
/// (in that order), building only the problem instances they need. Each run depends only on
/// its cell, so a zoo split over processes and merged equals [`run_zoo`]. Panics on an index
/// out of range.
pub fn run_zoo_cells(
    preset: &ZooPreset,
    which: &[usize],
    progress: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
) -> Vec<RunResult> {
    let taus = preset.tau_values();
    let cells = preset.cells();
    let chosen: Vec<Cell> = which.iter().map(|&i| cells[i]).collect();
    let instance = |ti: usize, seed: u64| (ti, seed.wrapping_sub(preset.seed));
    let mut instances: Vec<(usize, u64)> = chosen
        .iter()
        .map(|&(ti, _, _, seed)| instance(ti, seed))
        .collect();
    instances.sort_unstable();
    instances.dedup();
    let problems: Vec<SensingProblem> = instances
        .par_iter()
        .map(|&(ti, s)| {
            let cfg = SensingConfig {
                tau: taus[ti],
                ..preset.problem.clone()
            };
            SensingProblem::new(&cfg, preset.seed.wrapping_add(s))
        })
        .collect();
    chosen
        .par_iter()
        .map(|&(ti, rule, lr, seed)| {
            let at = instances
                .binary_search(&instance(ti, seed))
                .expect("built above");
            let r = FactorRun::new(&problems[at], rule, lr, preset.budget, seed, preset.twins)
                .finish(seed, cancel);
            progress();
            r
        })
        .collect()
}

/// One rule's summary at its selected rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleSummary {
    /// Rule name.
    pub rule: String,
    /// Spectral-tail amplitude τ.
    pub tau: f64,
    /// Equivariant class.
    pub equivariant: bool,
    /// Selected rate.
    pub lr: f64,
    /// Whether every seed interpolated at that rate (the selection rule's condition).
    pub all_interpolated: bool,
    /// Seeds at this rate.
    pub seeds: usize,
    /// Mean, sd, min, max of recovery.
    pub recovery: [f64; 4],
    /// Mean, sd of effective rank.
    pub erank: [f64; 2],
    /// Mean, sd of balancedness.
    pub balancedness: [f64; 2],
    /// Mean final training loss.
    pub train_loss: f64,
    /// Mean twin drift, if twins ran.
    pub twin_drift: Option<f64>,
}

/// Selects each (rule, τ)'s rate by the paper's rule — the lowest mean recovery among rates at which
/// every seed interpolates; if no rate qualifies, the lowest mean recovery overall, flagged —
/// and summarises it. Rules in first-appearance order.
pub fn summarise(results: &[RunResult]) -> Vec<RuleSummary> {
    // Groups are keyed by the exact bits of τ and the rate: `==` would never match a NaN read
    // from a damaged file, and such a group would come out empty.
    let mut groups: Vec<(String, u64)> = Vec::new();
    for r in results {
        if !groups
            .iter()
            .any(|(n, t)| *n == r.rule && *t == r.tau.to_bits())
        {
            groups.push((r.rule.clone(), r.tau.to_bits()));
        }
    }
    groups
        .iter()
        .map(|(name, tau)| {
            let mine: Vec<&RunResult> = results
                .iter()
                .filter(|r| &r.rule == name && r.tau.to_bits() == *tau)
                .collect();
            let mut lrs: Vec<f64> = mine.iter().map(|r| r.lr).collect();
            lrs.sort_by(f64::total_cmp);
            lrs.dedup_by(|a, b| a.to_bits() == b.to_bits());
            let at = |lr: f64| -> Vec<&RunResult> {
                mine.iter()
                    .copied()
                    .filter(|r| r.lr.to_bits() == lr.to_bits())
                    .collect()
            };
            let mean_rec =
                |lr: f64| mean_sd(&at(lr).iter().map(|r| r.recovery).collect::<Vec<_>>()).0;
            let ok = |lr: f64| at(lr).iter().all(|r| r.outcome == Outcome::Interpolated);
            let best = |pool: &mut dyn Iterator<Item = f64>| {
                pool.filter(|&lr| mean_rec(lr).is_finite())
                    .min_by(|&a, &b| mean_rec(a).total_cmp(&mean_rec(b)))
            };
            // `mine` holds at least the run that opened the group, so `lrs` is not empty.
            let chosen = best(&mut lrs.iter().copied().filter(|&lr| ok(lr)))
                .or_else(|| best(&mut lrs.iter().copied()))
                .unwrap_or(lrs[0]);
            let runs = at(chosen);
            let col = |f: fn(&RunResult) -> f64| runs.iter().map(|r| f(r)).collect::<Vec<f64>>();
            let rec = col(|r| r.recovery);
            let (rm, rs) = mean_sd(&rec);
            let (em, es) = mean_sd(&col(|r| r.erank));
            let (bm, bs) = mean_sd(&col(|r| r.balancedness));
            let drifts: Vec<f64> = runs.iter().filter_map(|r| r.twin_drift).collect();
            RuleSummary {
                rule: name.clone(),
                tau: f64::from_bits(*tau),
                equivariant: runs[0].equivariant,
                lr: chosen,
                all_interpolated: ok(chosen),
                seeds: runs.len(),
                recovery: [
                    rm,
                    rs,
                    rec.iter().copied().fold(f64::INFINITY, f64::min),
                    rec.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ],
                erank: [em, es],
                balancedness: [bm, bs],
                train_loss: mean_sd(&col(|r| r.train_loss)).0,
                twin_drift: (!drifts.is_empty()).then(|| mean_sd(&drifts).0),
            }
        })
        .collect()
}

/// The largest recovery of any equivariant rule and the smallest of any coordinate-wise one
/// over every seed at the selected rates: a gap exists when the first is below the second.
pub fn class_gap(summaries: &[RuleSummary]) -> Option<(f64, f64)> {
    let eq = summaries
        .iter()
        .filter(|s| s.equivariant)
        .map(|s| s.recovery[3]);
    let co = summaries
        .iter()
        .filter(|s| !s.equivariant)
        .map(|s| s.recovery[2]);
    let top = eq.fold(f64::NEG_INFINITY, f64::max);
    let bottom = co.fold(f64::INFINITY, f64::min);
    (top.is_finite() && bottom.is_finite()).then_some((top, bottom))
}

/// A Markdown table in the shape of the paper's Table 2, with our spread beside its means.
pub fn markdown(preset: &ZooPreset, summaries: &[RuleSummary], results: &[RunResult]) -> String {
    let taus = preset.tau_values();
    let tau_text = taus
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let mut s = format!(
        "# {}\n\n{}\n\nn = {}, r = {}, m = {} measurements (ratio {} × dof {}), init {}, τ = {}, budget {} steps, {} seed(s) from {}; f64.\n\n",
        preset.name,
        preset.description,
        preset.problem.n,
        preset.problem.rank,
        preset.problem.measurements(),
        preset.problem.ratio,
        preset.problem.dof(),
        preset.problem.init,
        tau_text,
        preset.budget,
        preset.seeds,
        preset.seed
    );
    if taus.len() > 1 {
        return s + &tail_markdown(preset, summaries, &taus);
    }
    let twins = summaries.iter().any(|r| r.twin_drift.is_some());
    s.push_str("| rule | class | lr | recovery mean ± sd [min, max] | erank | balancedness | train loss | interpolated |");
    s.push_str(if twins { " twin drift |" } else { "" });
    s.push_str(" paper rec / erank / bal |\n|---|---|---|---|---|---|---|---|");
    s.push_str(if twins { "---|" } else { "" });
    s.push_str("---|\n");
    for r in summaries {
        let paper = Rule::ZOO
            .iter()
            .find(|z| z.name() == r.rule)
            .and_then(|z| z.paper_table2())
            .map_or("—".to_string(), |(a, b, c)| {
                format!("{a:.4} / {b:.2} / {c:.2}")
            });
        let drift = if twins {
            r.twin_drift
                .map_or(" — |".to_string(), |d| format!(" {d:.1e} |"))
        } else {
            String::new()
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} ± {} [{}, {}] | {:.2} ± {:.2} | {:.2} ± {:.2} | {:.1e} | {} |{drift} {} |\n",
            r.rule,
            if r.equivariant { "equivariant" } else { "coordinate-wise" },
            r.lr,
            fmt4(r.recovery[0]),
            fmt4(r.recovery[1]),
            fmt4(r.recovery[2]),
            fmt4(r.recovery[3]),
            r.erank[0],
            r.erank[1],
            r.balancedness[0],
            r.balancedness[1],
            r.train_loss,
            if r.all_interpolated { "all seeds" } else { "not all" },
            paper
        ));
    }
    s.push_str(
        "\n*interpolated*: the pre-update training loss fell below 1e-7 at one of the checks made \
         every 200 steps before the budget ran out (a cosine-scheduled rule may only get there at \
         the last steps, after the final check). Each rule's rate is the paper's, or with a grid \
         the lowest mean recovery among rates at which every seed interpolated (if none did, the \
         lowest mean overall, marked *not all*).\n",
    );
    if preset.grid || !preset.rates.is_empty() {
        s.push_str("\n## Every rate\n\n| rule | lr | recovery mean ± sd | seeds interpolated |\n|---|---|---|---|\n");
        let mut seen: Vec<(String, u64)> = Vec::new();
        for r in results {
            let key = (r.rule.clone(), r.lr.to_bits());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let at: Vec<&RunResult> = results
                .iter()
                .filter(|x| x.rule == r.rule && x.lr.to_bits() == r.lr.to_bits())
                .collect();
            let (m, sd) = mean_sd(&at.iter().map(|x| x.recovery).collect::<Vec<_>>());
            let ok = at
                .iter()
                .filter(|x| x.outcome == Outcome::Interpolated)
                .count();
            s.push_str(&format!(
                "| {} | {} | {} ± {} | {ok} of {} |\n",
                r.rule,
                r.lr,
                fmt4(m),
                fmt4(sd),
                at.len()
            ));
        }
    }
    if preset.rules.iter().all(|r| matches!(r, Rule::Dial(_))) {
        s.push_str("\n## Anisotropy dial\n\n| p | recovery mean ± sd | erank | paper envelope |\n|---|---|---|---|\n");
        for r in &preset.rules {
            let Rule::Dial(p) = *r else { continue };
            if let Some(x) = summaries.iter().find(|x| x.rule == r.name()) {
                let paper = PAPER_DIAL
                    .iter()
                    .find(|row| row.0.to_bits() == p.to_bits())
                    .map_or("—".to_string(), |row| format!("{:.3}", row.1));
                s.push_str(&format!(
                    "| {p} | {:.3} ± {:.3} | {:.2} | {paper} |\n",
                    x.recovery[0], x.recovery[1], x.erank[0]
                ));
            }
        }
        return s;
    }
    if let Some((top, bottom)) = class_gap(summaries) {
        if summaries.iter().any(|r| !r.all_interpolated) {
            s.push_str(
                "\nNot every selected run interpolated: the comparison below includes unfinished fits.\n",
            );
        }
        s.push_str(&format!(
            "\nWorst equivariant seed: {top:.4}; best coordinate-wise seed: {bottom:.4}. {}\n",
            if top < bottom {
                "The classes do not overlap: a gap separates them."
            } else {
                "The per-seed ranges of the two classes overlap."
            }
        ));
    }
    s
}

/// Four decimals, or two significant digits in scientific notation below 1e-3.
pub fn fmt4(x: f64) -> String {
    if x != 0.0 && x.abs() < 1e-3 {
        format!("{x:.1e}")
    } else {
        format!("{x:.4}")
    }
}

/// The spectral-tail table: recovery mean ± sd per (τ, rule), beside the paper's Table 4.
fn tail_markdown(preset: &ZooPreset, summaries: &[RuleSummary], taus: &[f64]) -> String {
    let mut s = String::new();
    s.push_str("\n## Spectral tail: recovery mean ± sd against τ\n\n| τ |");
    let rules: Vec<String> = preset.rules.iter().map(|r| r.name()).collect();
    for r in &rules {
        s.push_str(&format!(" {r} |"));
    }
    s.push_str(" paper GD / Adam / Muon / Shampoo |\n|---|");
    s.push_str(&"---|".repeat(rules.len() + 1));
    s.push('\n');
    for &tau in taus {
        s.push_str(&format!("| {tau} |"));
        for r in &rules {
            match summaries
                .iter()
                .find(|x| &x.rule == r && x.tau.to_bits() == tau.to_bits())
            {
                Some(x) => s.push_str(&format!(
                    " {:.3} ± {:.3}{} |",
                    x.recovery[0],
                    x.recovery[1],
                    if x.all_interpolated { "" } else { " †" }
                )),
                None => s.push_str(" — |"),
            }
        }
        let paper = PAPER_TAIL
            .iter()
            .find(|row| row.0.to_bits() == tau.to_bits())
            .map_or("—".to_string(), |row| {
                format!("{:.3} / {:.3} / {:.3} / {:.3}", row.1, row.2, row.3, row.4)
            });
        s.push_str(&format!(" {paper} |\n"));
    }
    if summaries.iter().any(|x| !x.all_interpolated) {
        s.push_str(
            "\n† not every seed interpolated within the budget: the recovery is that of an \
             unfinished fit (with a tail, τ > 0, the target has full rank).\n",
        );
    }
    s
}

/// The paper's Table 4: recovery at τ for GD, Adam, Muon, Shampoo (3-seed means, float32).
pub const PAPER_TAIL: [(f64, f64, f64, f64, f64); 6] = [
    (0.0, 0.112, 0.542, 0.000, 0.334),
    (0.05, 0.150, 0.543, 0.095, 0.343),
    (0.1, 0.214, 0.555, 0.191, 0.375),
    (0.2, 0.351, 0.597, 0.354, 0.449),
    (0.35, 0.549, 0.685, 0.580, 0.576),
    (0.5, 0.727, 0.776, 0.752, 0.723),
];

/// The paper's dial envelope: recovery at p (3-seed means, float32).
pub const PAPER_DIAL: [(f64, f64); 5] = [
    (1.0, 0.570),
    (0.75, 0.459),
    (0.5, 0.348),
    (0.25, 0.260),
    (0.0, 0.201),
];
