//! The optimizer zoo on factored matrix sensing (docs/numerics.md, "The gauge lab"; the paper's
//! Table 2), the anisotropy dial and the spectral tail: runs, the paper's learning-rate
//! selection rule, and tables. A zoo rule is an entry of [`crate::optim::REGISTRY`] at its
//! default hyperparameters, or a chain of transforms; the registry (for a chain,
//! [`crate::optim::CHAIN_INFO`]) also gives its rate grid and schedule.

pub mod figures;
mod preset;
mod reference;
mod report;
mod task;
mod trace;

pub use preset::{
    BUNDLED_ZOO, FLOW_STEP_GRADIENTS, MAX_CELLS, MAX_LEVELS, MAX_OPERATOR_NUMBERS, MAX_RULES,
    MAX_TAUS, MAX_ZOO_BYTES, PerRule, RuleBudgets, RuleRates, ZooPreset, bundled_zoo,
};
pub use reference::{
    PAPER_REFERENCE, RECOVERED, REFERENCE, REFERENCE_CLASS, ReferenceCell, ReferenceStats,
    is_reference,
};
pub use report::{
    PAPER_DIAL, PAPER_TABLE2, PAPER_TABLE6, PAPER_TABLE7, PAPER_TABLE8, PAPER_TABLE8_RULES,
    PAPER_TABLE11, PAPER_TABLE11_RULES, PAPER_TAIL, PAPER_TAIL_RULES, RateMark, RateRow,
    RuleSummary, class_gap, csv_bytes, fmt4, markdown, paper_table2, paper_table7, rate_rows,
    reference_markdown, summarise, table2_rules, write_report,
};
pub use task::{ZooTask, ZooTrial};
pub use trace::{MAX_TRACE_N, TRACE_SCHEMA, TRACE_STEPS, check_traceable, trace_zoo};

use std::ops::Deref;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use nalgebra::DMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{
    MAX_SHARED, PassItem, SensingOracle, SensingProblem, SensingWorkspace, balancedness,
    effective_rank, recovery,
};
use crate::linalg::norm::frobenius;
use crate::linalg::{product, product_t};
use crate::optim::{
    CHAIN_INFO, ChainError, ChainSpec, Lab, Optimizer, OptimizerSpec, REGISTRY, RuleInfo, Schedule,
    lookup,
};

/// A rule of the zoo: a registry entry at its default hyperparameters (the paper's: β1 0.9,
/// β2 0.999, ε 1e-8; RMSProp α 0.99; Lion 0.9/0.99; Muon μ 0.9 with Newton–Schulz; Shampoo
/// λ 1, roots every 20 steps), plus the value of its [`RuleInfo::zoo_arg`] if it has one
/// (the dial's p), or a chain of transforms ([`Rule::chain`]). Only the learning rate and the
/// schedule are chosen per run.
///
/// Zoo presets write it as the registry's `variant` (`Muon`, `ScalarAdam`, `Dial(0.5)`) or as
/// `Chain("clip_by_global_norm(1) | scale_by_adam()")`; the registry name (`scalar_adam`) is
/// accepted too.
#[derive(Clone, Copy)]
pub struct Rule {
    info: &'static RuleInfo,
    arg: Option<f64>,
    /// A chain's canonical text ([`ChainSpec`]'s `Display`), interned ([`intern`]); `None`
    /// for a registry entry.
    chain: Option<&'static str>,
}

/// The most distinct chain texts one process interns ([`intern`]): with at most
/// [`crate::optim::MAX_CHAIN_BYTES`] each, at most 20 MB however many chains a session tries.
pub const MAX_CHAIN_RULES: usize = 10_000;

/// Every chain text a [`Rule`] has named in this process, each stored once.
static CHAINS: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

/// The process-wide copy of chain text `text`. `Rule` is `Copy` (it is a cell of every zoo and
/// keyed on in maps), so it holds a `&'static str`: each distinct text is leaked once and
/// reused. Errors past [`MAX_CHAIN_RULES`] distinct texts.
fn intern(text: String) -> Result<&'static str, ChainError> {
    let mut chains = CHAINS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&t) = chains.iter().find(|&&t| t == text) {
        return Ok(t);
    }
    if chains.len() >= MAX_CHAIN_RULES {
        return Err(ChainError {
            index: None,
            argument: None,
            message: format!(
                "this session has named {MAX_CHAIN_RULES} different chains, the most it keeps; \
                 restart to name new ones"
            ),
        });
    }
    let t: &'static str = Box::leak(text.into_boxed_str());
    chains.push(t);
    Ok(t)
}

impl Rule {
    /// The rule of registry entry `name` (a rule with a zoo argument takes its default value),
    /// or the chain `name` spells when it is no registry name and parses as one.
    pub fn named(name: &str) -> Option<Rule> {
        lookup(name)
            .map(Rule::of)
            .or_else(|| Rule::chain(name).ok())
    }

    /// The rule of registry entry `info`, its zoo argument (if any) at the default.
    pub fn of(info: &'static RuleInfo) -> Rule {
        let arg = info
            .zoo_arg
            .and_then(|h| OptimizerSpec::new(info.name, 1.0).value(h));
        Rule {
            info,
            arg,
            chain: None,
        }
    }

    /// The chain of transforms `text` spells ([`ChainSpec::parse`]), held in its canonical
    /// form, so two spellings of one chain are one rule. It runs at [`CHAIN_INFO`]'s rates and
    /// schedule. Errors: the parser's (naming the transform, its position and the argument),
    /// a canonical form over [`crate::optim::MAX_CHAIN_BYTES`], or more than [`MAX_CHAIN_RULES`] chains.
    pub fn chain(text: &str) -> Result<Rule, ChainError> {
        let canonical = ChainSpec::parse(text)?.to_string();
        // The canonical text names every argument, so it may outgrow the limit the input met;
        // it must parse back, as files and tables name the rule by it.
        ChainSpec::parse(&canonical)?;
        Ok(Rule {
            info: &CHAIN_INFO,
            arg: None,
            chain: Some(intern(canonical)?),
        })
    }

    /// The same rule with its zoo argument set to `x` (ignored by a rule without one).
    pub fn with_arg(self, x: f64) -> Rule {
        Rule {
            arg: self.info.zoo_arg.map(|_| x),
            ..self
        }
    }

    /// Every registered rule (each with its argument at the default).
    pub fn all() -> Vec<Rule> {
        REGISTRY.iter().copied().map(Rule::of).collect()
    }

    /// The registry entry ([`CHAIN_INFO`] for a chain).
    pub fn info(self) -> &'static RuleInfo {
        self.info
    }

    /// The zoo argument, for a rule that has one.
    pub fn arg(self) -> Option<f64> {
        self.arg
    }

    /// The chain's canonical text, for a chain.
    pub fn chain_text(self) -> Option<&'static str> {
        self.chain
    }

    /// Name used in files and tables: the registry name, with the argument for a rule that has
    /// one (`dial_p0.5`); a chain's canonical text.
    pub fn name(self) -> String {
        match (self.chain, self.info.zoo_arg, self.arg) {
            (Some(text), _, _) => text.to_string(),
            (None, Some(h), Some(x)) => format!("{}_{}{x}", self.info.name, h.name()),
            _ => self.info.name.to_string(),
        }
    }

    /// The hyperparameters it runs with (`lr` is set per run); a chain's `optimizer` is its
    /// text.
    pub fn spec(self) -> OptimizerSpec {
        let mut s = OptimizerSpec::new(self.chain.unwrap_or(self.info.name), self.default_lr());
        if let (Some(h), Some(x)) = (self.info.zoo_arg, self.arg)
            && let Some(v) = s.value_mut(h)
        {
            *v = x;
        }
        s
    }

    /// Equivariant under (U, V) → (UQ, VQ) (the paper's classification); for a chain, its
    /// prediction under that action (right multiplication of both factors), which a chain
    /// such as `normalize_rows()` meets while the key lab's left action is blocked.
    pub fn equivariant(self) -> bool {
        match self.chain {
            Some(text) => ChainSpec::parse(text).is_ok_and(|c| c.predicted(Lab::Gauge.action())),
            None => self.spec().equivariant(),
        }
    }

    /// The learning-rate grid at n = 40 (the registry's; [`CHAIN_INFO`]'s for a chain).
    pub fn grid(self) -> &'static [f64] {
        self.info.sensing.grid
    }

    /// The rate it runs at without a grid: for the paper's nine rules the rate the paper
    /// selected (Table 2; the dial's anchor 1e-3), for the others ours (the registry's).
    pub fn default_lr(self) -> f64 {
        self.info.sensing.lr
    }

    /// The schedule the paper runs it with.
    pub fn schedule(self) -> Schedule {
        self.info.sensing.schedule
    }

    /// A zero-state optimizer for this rule.
    pub fn build(self) -> Box<dyn Optimizer> {
        self.spec().build()
    }
}

/// Whether a run's rule name ([`Rule::name`]) is a chain's: a chain's canonical text always
/// has its transforms' parentheses, a registered rule's name (`dial_p0.5`) never.
pub fn names_chain(name: &str) -> bool {
    name.contains('(')
}

impl PartialEq for Rule {
    fn eq(&self, other: &Rule) -> bool {
        self.info.name == other.info.name && self.arg == other.arg && self.chain == other.chain
    }
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.chain, self.arg) {
            (Some(text), _) => write!(f, "{}({text:?})", CHAIN_INFO.variant),
            (None, Some(x)) => write!(f, "{}({x:?})", self.info.variant),
            (None, None) => f.write_str(self.info.variant),
        }
    }
}

impl Serialize for Rule {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // A chain is the variant after the registry's.
        let index = REGISTRY
            .iter()
            .position(|i| i.name == self.info.name)
            .unwrap_or(REGISTRY.len()) as u32;
        match (self.chain, self.arg) {
            (Some(text), _) => s.serialize_newtype_variant("Rule", index, CHAIN_INFO.variant, text),
            (None, Some(x)) => s.serialize_newtype_variant("Rule", index, self.info.variant, &x),
            (None, None) => s.serialize_unit_variant("Rule", index, self.info.variant),
        }
    }
}

/// A variant name as the format spells it (RON writes it bare, JSON as a string).
struct Ident(String);

impl<'de> Deserialize<'de> for Ident {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl serde::de::Visitor<'_> for Visit {
            type Value = Ident;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a rule name")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Ident, E> {
                Ok(Ident(v.to_string()))
            }
        }
        d.deserialize_identifier(Visit)
    }
}

/// Every spelling of a rule a zoo preset may use, for error messages: the registry's variants,
/// then `Chain`.
static VARIANTS: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    (REGISTRY.iter().map(|i| i.variant))
        .chain([CHAIN_INFO.variant])
        .collect()
});

impl<'de> Deserialize<'de> for Rule {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Rule;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a rule of the optimizer registry or a chain of transforms")
            }
            fn visit_enum<A: serde::de::EnumAccess<'de>>(self, data: A) -> Result<Rule, A::Error> {
                use serde::de::{Error, VariantAccess};
                let (Ident(name), variant) = data.variant()?;
                if name == CHAIN_INFO.variant {
                    let text: String = variant.newtype_variant()?;
                    return Rule::chain(&text)
                        .map_err(|e| A::Error::custom(format!("chain `{text}`: {}", e.message)));
                }
                let info = REGISTRY
                    .iter()
                    .copied()
                    .find(|i| i.variant == name || i.name == name)
                    .ok_or_else(|| A::Error::unknown_variant(&name, &VARIANTS))?;
                match info.zoo_arg {
                    Some(_) => Ok(Rule::of(info).with_arg(variant.newtype_variant()?)),
                    None => variant.unit_variant().map(|()| Rule::of(info)),
                }
            }
        }
        d.deserialize_enum("Rule", &VARIANTS, Visit)
    }
}

/// One run of a zoo preset: which size, τ and init scale (indices into
/// [`ZooPreset::size_values`], [`ZooPreset::tau_values`], [`ZooPreset::init_values`]), schedule
/// choice, rule, peak rate and seed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    /// Index of the problem size n.
    pub size: usize,
    /// Index of the spectral-tail amplitude.
    pub tau: usize,
    /// Index of the init scale.
    pub init: usize,
    /// The preset's schedule choice this cell runs under.
    pub choice: ZooSchedule,
    /// The rule.
    pub rule: Rule,
    /// Its schedule (the choice resolved for the rule).
    pub schedule: Schedule,
    /// Peak learning rate.
    pub lr: f64,
    /// Problem seed.
    pub seed: u64,
}

/// How a zoo preset schedules each rule's peak rate over the budget (docs/numerics.md, "The
/// gauge lab"; the paper's Table 6).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ZooSchedule {
    /// Each rule on the schedule the paper ran it with (the registry's: cosine for Muon, Signum,
    /// Lion, RMSProp and sign descent, constant for the others).
    #[default]
    Paper,
    /// Every rule at its peak rate throughout.
    Constant,
    /// Every rule on the cosine schedule over the budget; a run stops at interpolation.
    Cosine,
    /// Every rule on the cosine schedule over the budget, and the run goes on to the end of the
    /// budget after it interpolates (it stops early only when it diverges), so the rate decays
    /// all the way to zero.
    CosineFullHorizon,
}

impl ZooSchedule {
    /// Every choice, in the order tables list them.
    pub const ALL: [ZooSchedule; 4] = [
        ZooSchedule::Paper,
        ZooSchedule::Constant,
        ZooSchedule::Cosine,
        ZooSchedule::CosineFullHorizon,
    ];

    /// The schedule `rule` runs on under this choice.
    pub fn for_rule(self, rule: Rule) -> Schedule {
        match self {
            ZooSchedule::Paper => rule.schedule(),
            ZooSchedule::Constant => Schedule::Constant,
            ZooSchedule::Cosine | ZooSchedule::CosineFullHorizon => Schedule::Cosine,
        }
    }

    /// Whether a run goes on past interpolation to the end of its budget.
    pub fn full_horizon(self) -> bool {
        self == ZooSchedule::CosineFullHorizon
    }

    /// The name `zoo.csv` uses (one word).
    pub fn token(self) -> &'static str {
        match self {
            ZooSchedule::Paper => "paper",
            ZooSchedule::Constant => "constant",
            ZooSchedule::Cosine => "cosine",
            ZooSchedule::CosineFullHorizon => "cosine_full_horizon",
        }
    }

    /// The name tables use.
    pub fn name(self) -> &'static str {
        match self {
            ZooSchedule::Paper => "paper",
            ZooSchedule::Constant => "constant",
            ZooSchedule::Cosine => "cosine",
            ZooSchedule::CosineFullHorizon => "cosine, full horizon",
        }
    }

    /// Whether it is the default ([`ZooSchedule::Paper`]), which files leave out.
    pub fn is_paper(&self) -> bool {
        *self == ZooSchedule::Paper
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
    /// The convex reference's solve met its tolerance (numerics §9); a rule's run never ends so.
    Converged,
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
    /// Gradients the rule evaluated beyond the one per step the run computes (FlowAdam's flow,
    /// [`Optimizer::oracle_evaluations`]); 0, and left out of files, for every other rule.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extra_gradients: u64,
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
    /// Side n of the problem, when the preset lists `sizes` (absent otherwise, as in files
    /// written before sizes existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<usize>,
    /// Init scale of the factors, when the preset lists `inits`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<f64>,
    /// The preset's schedule choice for this run (left out when it is the paper's).
    #[serde(default, skip_serializing_if = "ZooSchedule::is_paper")]
    pub schedule: ZooSchedule,
    /// Present on a convex-reference row ([`ZooPreset::run_reference`]), never on a rule's run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<ReferenceStats>,
    /// The fit read where the training loss first fell to each of the preset's
    /// [`ZooPreset::loss_levels`] (the paper's Table 10), in the levels' order; levels never
    /// reached are absent. Empty, and left out of files, without levels.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub readings: Vec<Reading>,
}

/// A run read where its training loss first fell to a level, at the interpolation checks
/// (every [`CHECK_EVERY`] steps, as the paper reads Table 10).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    /// The level (the pre-update training loss was at or below it).
    pub level: f64,
    /// Updates applied before the reading.
    pub step: usize,
    /// The pre-update training loss there.
    pub train_loss: f64,
    /// Recovery error of UVᵀ there.
    pub recovery: f64,
    /// Effective rank of UVᵀ there.
    pub erank: f64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// Pre-update loss is checked every this many steps (numerics §7).
pub const CHECK_EVERY: usize = 200;
/// Interpolation threshold on the pre-update loss (numerics §7).
pub const INTERPOLATED: f64 = 1e-7;
/// Divergence threshold (numerics §7).
pub const DIVERGED: f64 = 1e8;

/// The gauge twin of a run: factors started at (UQ, VQ), their own optimizer, gradients and
/// buffers (so that a shared pass can compute its gradients beside the run's).
struct Twin {
    params: [DMatrix<f64>; 2],
    opt: Box<dyn Optimizer>,
    q: DMatrix<f64>,
    grads: [DMatrix<f64>; 2],
    ws: SensingWorkspace,
}

/// State of one factored run (and optionally its gauge twin) in progress, on the problem
/// `P` points to (`&SensingProblem`, or an `Arc` for a run that outlives its caller's frame,
/// as the web build's live runs do).
pub struct FactorRun<P> {
    problem: P,
    rule: Rule,
    schedule: Schedule,
    full_horizon: bool,
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
    /// Loss levels to read the fit at ([`FactorRun::with_levels`]), descending.
    levels: Vec<f64>,
    /// The readings so far, one per level reached.
    readings: Vec<Reading>,
}

impl<P: Deref<Target = SensingProblem>> FactorRun<P> {
    /// Starts `rule` at peak rate `lr` on `problem` from the seed's initial factors, on the
    /// rule's own schedule ([`FactorRun::with_schedule`] changes it); with `twins`, also from
    /// (UQ, VQ) for the seed's Haar Q.
    pub fn new(problem: P, rule: Rule, lr: f64, budget: usize, seed: u64, twins: bool) -> Self {
        let n = problem.cfg.n;
        let (u, v) = problem.init(seed);
        let twin = twins.then(|| {
            let q = problem.gauge(seed);
            Twin {
                params: [product(&u, &q), product(&v, &q)],
                opt: rule.build(),
                q,
                grads: [DMatrix::zeros(n, n), DMatrix::zeros(n, n)],
                ws: SensingWorkspace::new(n),
            }
        });
        Self {
            problem,
            rule,
            schedule: rule.schedule(),
            full_horizon: false,
            lr,
            budget,
            params: [u, v],
            grads: [DMatrix::zeros(n, n), DMatrix::zeros(n, n)],
            opt: rule.build(),
            twin,
            ws: SensingWorkspace::new(n),
            t: 0,
            loss: f64::NAN,
            levels: Vec::new(),
            readings: Vec::new(),
        }
    }

    /// The same run, reading its fit where the training loss first falls to each of `levels`
    /// (descending; [`RunResult::readings`]) at the interpolation checks.
    pub fn with_levels(self, levels: &[f64]) -> Self {
        Self {
            levels: levels.to_vec(),
            ..self
        }
    }

    /// Reads the fit at every level the loss has now reached for the first time (allocates
    /// for the product and its SVD: at most once per level).
    fn read_levels(&mut self) {
        let reached = self.levels[self.readings.len()..]
            .iter()
            .take_while(|&&l| self.loss <= l)
            .count();
        if reached == 0 {
            return;
        }
        let [u, v] = &self.params;
        let (recovery, erank) = (
            recovery(u, v, &self.problem.target),
            effective_rank(&(u * v.transpose())),
        );
        let from = self.readings.len();
        for &level in &self.levels[from..from + reached] {
            self.readings.push(Reading {
                level,
                step: self.t,
                train_loss: self.loss,
                recovery,
                erank,
            });
        }
    }

    /// The problem the run fits.
    pub fn problem(&self) -> &SensingProblem {
        &self.problem
    }

    /// The same run on `schedule` (before its first step).
    pub fn with_schedule(self, schedule: Schedule) -> Self {
        Self { schedule, ..self }
    }

    /// The same run, going on past interpolation to the end of its budget
    /// ([`ZooSchedule::CosineFullHorizon`]); it still stops when it diverges, and ends
    /// [`Outcome::Interpolated`] when its final loss is below [`INTERPOLATED`].
    pub fn with_full_horizon(self, full_horizon: bool) -> Self {
        Self {
            full_horizon,
            ..self
        }
    }

    /// The same run (before its first step) with its optimizer, and its twin's, built by `make`
    /// in place of the rule's: a chain of transforms (`basis-lab check`) runs through the same
    /// loop and twin. The rule still names the run and gives its schedule.
    pub fn with_optimizer(mut self, make: &dyn Fn() -> Box<dyn Optimizer>) -> Self {
        self.opt = make();
        if let Some(twin) = &mut self.twin {
            twin.opt = make();
        }
        self
    }

    /// The same run (before its first step) with its twin moved from (UQ, VQ) to the noise
    /// twin (U + std·E, V), E standard Gaussian from `seed`, Q = I: then
    /// [`FactorRun::twin_drift`] measures how far rounding-sized differences grow (chaos), to
    /// set a gauge twin's drift against. No effect on a run without twins.
    pub fn with_noise_twin(mut self, std: f64, seed: u64) -> Self {
        if let Some(twin) = &mut self.twin {
            let n = self.params[0].nrows();
            let mut rng = crate::rng::stream_id(seed, 0x6e6f697365);
            twin.params = [
                &self.params[0] + crate::rng::gaussian_matrix(&mut rng, n, n, std),
                self.params[1].clone(),
            ];
            twin.q = DMatrix::identity(n, n);
        }
        self
    }

    /// Takes one step unless a stopping rule fires first; returns the outcome when it does.
    pub fn step(&mut self) -> Option<Outcome> {
        let [u, v] = &self.params;
        self.loss = self
            .problem
            .loss_and_grad(u, v, &mut self.grads, &mut self.ws);
        self.step_from_gradient(false)
    }

    /// The rest of [`FactorRun::step`] once `loss` and `grads` hold the loss and gradients at
    /// the current factors (computed alone or in a shared pass, [`step_together`]), and the
    /// twin's gradients at its factors too when `twin_ready`.
    fn step_from_gradient(&mut self, twin_ready: bool) -> Option<Outcome> {
        if !self.loss.is_finite() || self.loss > DIVERGED {
            return Some(Outcome::Diverged);
        }
        if self.readings.len() < self.levels.len()
            && (self.t.is_multiple_of(CHECK_EVERY) || self.t >= self.budget)
        {
            self.read_levels();
        }
        // After `budget` updates the run is over whatever the loss; the interpolation check
        // belongs to steps that would still update (numerics §7: every 200 steps of the loop).
        if self.t >= self.budget {
            return Some(if self.full_horizon && self.loss < INTERPOLATED {
                Outcome::Interpolated
            } else {
                Outcome::Budget
            });
        }
        if !self.full_horizon && self.t.is_multiple_of(CHECK_EVERY) && self.loss < INTERPOLATED {
            return Some(Outcome::Interpolated);
        }
        let lr = self.schedule.lr_at(self.lr, self.t, self.budget);
        let mut oracle = SensingOracle {
            problem: &self.problem,
            ws: &mut self.ws,
        };
        self.opt
            .step_with(&mut self.params, &self.grads, lr, &mut oracle);
        if let Some(twin) = &mut self.twin {
            if !twin_ready {
                let [tu, tv] = &twin.params;
                self.problem
                    .loss_and_grad(tu, tv, &mut twin.grads, &mut twin.ws);
            }
            let mut oracle = SensingOracle {
                problem: &self.problem,
                ws: &mut twin.ws,
            };
            twin.opt
                .step_with(&mut twin.params, &twin.grads, lr, &mut oracle);
        }
        self.t += 1;
        None
    }

    /// Relative distance of the twin's product from this run's, `‖U′V′ᵀ − UVᵀ‖F / ‖UVᵀ‖F`.
    pub fn twin_drift(&self) -> Option<f64> {
        let tw = &self.twin.as_ref()?.params;
        let w = product_t(&self.params[0], &self.params[1]);
        let w2 = product_t(&tw[0], &tw[1]);
        Some(frobenius(&(w2 - &w)) / frobenius(&w))
    }

    /// Factor drift of the twin, `‖U′ − UQ‖F / ‖UQ‖F`: whether the twin's factors stay the
    /// gauge-rotated factors (equivariant rules) and not only the same product.
    pub fn factor_drift(&self) -> Option<f64> {
        let twin = self.twin.as_ref()?;
        let uq = product(&self.params[0], &twin.q);
        Some(frobenius(&(&twin.params[0] - &uq)) / frobenius(&uq))
    }

    /// Runs to a stopping rule (checking `cancel` every 200 steps) and summarises.
    pub fn finish(mut self, seed: u64, cancel: &AtomicBool) -> RunResult {
        let outcome = loop {
            if self.cancelled(cancel) {
                break Outcome::Cancelled;
            }
            if let Some(o) = self.step() {
                break o;
            }
        };
        self.summary(seed, outcome)
    }

    /// Whether the run stops here for `cancel` (looked at every [`CHECK_EVERY`] steps).
    fn cancelled(&self, cancel: &AtomicBool) -> bool {
        self.t.is_multiple_of(CHECK_EVERY) && cancel.load(Ordering::Relaxed)
    }

    /// The run's result as it stands, ended by `outcome`: recovery, effective rank and
    /// balancedness of the current factors (seed `seed` is only recorded).
    pub fn summary(&self, seed: u64, outcome: Outcome) -> RunResult {
        let [u, v] = &self.params;
        let w = u * v.transpose();
        RunResult {
            rule: self.rule.name(),
            equivariant: self.rule.equivariant(),
            lr: self.lr,
            seed,
            tau: self.problem.cfg.tau,
            steps: self.t,
            extra_gradients: self.opt.oracle_evaluations(),
            outcome,
            train_loss: self.loss,
            recovery: recovery(u, v, &self.problem.target),
            erank: effective_rank(&w),
            balancedness: balancedness(u, v),
            twin_drift: self.twin_drift(),
            n: None,
            init: None,
            schedule: ZooSchedule::Paper,
            reference: None,
            readings: self.readings.clone(),
        }
    }
}

/// Runs every cell of `preset` and then its convex references ([`ZooPreset::units`]) in
/// parallel (rayon), problems built once per seed; `progress()` after each. Results come back
/// in that order whatever the thread count.
pub fn run_zoo(
    preset: &ZooPreset,
    progress: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
) -> Vec<RunResult> {
    let all: Vec<usize> = (0..preset.units()).collect();
    run_zoo_cells(preset, &all, progress, cancel)
}

/// One unit of a zoo: a rule's run or an instance's convex reference.
#[derive(Clone, Copy)]
enum Unit {
    Run(Cell),
    Reference(ReferenceCell),
}

impl Unit {
    fn size(self) -> usize {
        match self {
            Unit::Run(c) => c.size,
            Unit::Reference(c) => c.size,
        }
    }

    /// The problem instance it runs on: τ, init and seed offset (a reference's instance is the
    /// first init scale's, the same target and operator).
    fn instance(self, first_seed: u64) -> (usize, usize, u64) {
        match self {
            Unit::Run(c) => (c.tau, c.init, c.seed.wrapping_sub(first_seed)),
            Unit::Reference(c) => (c.tau, 0, c.seed.wrapping_sub(first_seed)),
        }
    }
}

/// Runs the units of `preset` whose indices are listed in `which` (in that order): an index
/// below the length of [`ZooPreset::cells`] is that cell, the ones after it the entries of
/// [`ZooPreset::references`]. Builds only the problem instances they need, one problem size at
/// a time (so memory holds one size's instances). Each result depends only on its unit, so a
/// zoo split over processes and merged equals [`run_zoo`]. Panics on an index out of range.
pub fn run_zoo_cells(
    preset: &ZooPreset,
    which: &[usize],
    progress: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
) -> Vec<RunResult> {
    let cells = preset.cells();
    let refs = preset.references();
    let chosen: Vec<Unit> = which
        .iter()
        .map(|&i| match cells.get(i) {
            Some(&c) => Unit::Run(c),
            None => Unit::Reference(refs[i - cells.len()]),
        })
        .collect();
    let mut sizes: Vec<usize> = chosen.iter().map(|c| c.size()).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut out: Vec<Option<RunResult>> = vec![None; chosen.len()];
    for size in sizes {
        let mine: Vec<usize> = (0..chosen.len())
            .filter(|&i| chosen[i].size() == size)
            .collect();
        let instance = |c: &Unit| c.instance(preset.seed);
        let mut instances: Vec<(usize, usize, u64)> =
            mine.iter().map(|&i| instance(&chosen[i])).collect();
        instances.sort_unstable();
        instances.dedup();
        let problems: Vec<SensingProblem> = instances
            .par_iter()
            .map(|&(ti, ii, s)| {
                let cfg = preset.config(size, ti, ii);
                SensingProblem::new(&cfg, preset.seed.wrapping_add(s))
            })
            .collect();
        // Runs of one instance are taken one after another, so that a thread's active runs
        // mostly share their instance and its pass; the references come last.
        let mut order: Vec<(bool, usize, usize)> = mine
            .iter()
            .map(|&i| {
                let c = chosen[i];
                let at = instances.binary_search(&instance(&c)).expect("built above");
                (matches!(c, Unit::Reference(_)), at, i)
            })
            .collect();
        order.sort_unstable();
        let next = AtomicUsize::new(0);
        let threads = rayon::current_num_threads().max(1);
        // A few runs are spread over the threads rather than shared on one.
        let per_thread = MAX_SHARED.min(order.len().div_ceil(threads)).max(1);
        let done: Vec<Vec<(usize, RunResult)>> = (0..threads)
            .into_par_iter()
            .map(|_| {
                let mut done = Vec::new();
                let mut active: Vec<Active<'_>> = Vec::with_capacity(MAX_SHARED);
                loop {
                    while active.len() < per_thread {
                        let Some(&(_, at, i)) = order.get(next.fetch_add(1, Ordering::Relaxed))
                        else {
                            break;
                        };
                        match chosen[i] {
                            Unit::Run(cell) => {
                                let run = preset.start_cell(&problems[at], cell);
                                let pos = active.partition_point(|a| a.at <= at);
                                active.insert(
                                    pos,
                                    Active {
                                        slot: i,
                                        at,
                                        cell,
                                        run,
                                    },
                                );
                            }
                            Unit::Reference(c) => {
                                done.push((i, preset.run_reference(&problems[at], c, cancel)));
                                progress();
                            }
                        }
                    }
                    if active.is_empty() {
                        break done;
                    }
                    step_together(&mut active, cancel, &mut |a, outcome| {
                        done.push((a.slot, preset.end_cell(a.cell, &a.run, outcome)));
                        progress();
                    });
                }
            })
            .collect();
        for (i, r) in done.into_iter().flatten() {
            out[i] = Some(r);
        }
    }
    out.into_iter()
        .map(|r| r.expect("every cell ran"))
        .collect()
}

/// A run in a thread's active set ([`run_zoo_cells`]): its place in the output, its
/// instance's index and its cell.
struct Active<'a> {
    slot: usize,
    at: usize,
    cell: Cell,
    run: FactorRun<&'a SensingProblem>,
}

/// One step of every run in `active` (sorted by instance): the runs of one instance get their
/// gradients in shared passes of up to [`MAX_SHARED`], then each takes the rest of its step
/// alone. A run that stops (a stopping rule, or `cancel` at a check) is handed to `ended`
/// with its outcome and leaves the set. Each run's numbers are those of [`FactorRun::step`].
fn step_together(
    active: &mut Vec<Active<'_>>,
    cancel: &AtomicBool,
    ended: &mut dyn FnMut(&Active<'_>, Outcome),
) {
    let mut i = 0;
    while i < active.len() {
        if active[i].run.cancelled(cancel) {
            ended(&active[i], Outcome::Cancelled);
            active.remove(i);
        } else {
            i += 1;
        }
    }
    for group in active.chunk_by_mut(|a, b| a.at == b.at) {
        shared_gradients(group);
    }
    let mut i = 0;
    while i < active.len() {
        if let Some(outcome) = active[i].run.step_from_gradient(true) {
            ended(&active[i], outcome);
            active.remove(i);
        } else {
            i += 1;
        }
    }
}

/// A pair's pass input and, for a run (not a twin), where its loss goes.
type Slot<'a> = Option<(PassItem<'a>, Option<&'a mut f64>)>;

/// Losses and gradients of the runs of `group` (one instance) and of their twins, in shared
/// passes of up to [`MAX_SHARED`] pairs.
fn shared_gradients(group: &mut [Active<'_>]) {
    let Some(first) = group.first() else {
        return;
    };
    let problem = first.run.problem;
    let mut slots: [Slot<'_>; MAX_SHARED] = std::array::from_fn(|_| None);
    let mut len = 0;
    for a in group.iter_mut() {
        let FactorRun {
            params,
            grads,
            ws,
            twin,
            loss,
            ..
        } = &mut a.run;
        let run = PassItem {
            u: &params[0],
            v: &params[1],
            grads,
            ws,
        };
        let twin = twin.as_mut().map(|t| PassItem {
            u: &t.params[0],
            v: &t.params[1],
            grads: &mut t.grads,
            ws: &mut t.ws,
        });
        let pairs = std::iter::once((run, Some(loss))).chain(twin.map(|t| (t, None)));
        for pair in pairs {
            slots[len] = Some(pair);
            len += 1;
            if len == MAX_SHARED {
                pass_slots::<MAX_SHARED>(problem, &mut slots);
                len = 0;
            }
        }
    }
    const { assert!(MAX_SHARED == 4, "one arm per count of pairs left") };
    match len {
        0 => {}
        1 => pass_slots::<1>(problem, &mut slots),
        2 => pass_slots::<2>(problem, &mut slots),
        3 => pass_slots::<3>(problem, &mut slots),
        _ => unreachable!("a full set of slots is passed at once"),
    }
}

/// One shared pass over the first `P` filled `slots`, which it empties.
fn pass_slots<'a, const P: usize>(problem: &SensingProblem, slots: &mut [Slot<'a>; MAX_SHARED]) {
    let mut taken = slots.iter_mut().map(|s| s.take().expect("a filled slot"));
    let mut losses: [Option<&'a mut f64>; P] = std::array::from_fn(|_| None);
    let items: [PassItem<'a>; P] = std::array::from_fn(|k| {
        let (item, loss) = taken.next().expect("P slots");
        losses[k] = loss;
        item
    });
    for (to, loss) in losses.into_iter().zip(problem.loss_and_grad_shared(items)) {
        if let Some(to) = to {
            *to = loss;
        }
    }
}
