//! Update rules for sets of f64 matrices, behind one trait with explicit state
//! (docs/numerics.md, "Update rules").
//!
//! Every rule is one file here: its state, its update and its [`RuleInfo`] (names, class,
//! hyperparameters, default rates, colour). The trait they implement and what they share is
//! `optimizer.rs` ([`Optimizer`]); this file is the registry: [`REGISTRY`] lists the rules,
//! beside the `mod` lines it must match, with the entry's types ([`RuleInfo`],
//! [`OptimizerSpec`]), which name rules' own types (`Polar`, `ChainSpec`) and so stay with the
//! list rather than in a file the rules would import in a loop. The key lab's arms, the gauge
//! lab's zoo, preset validation and the settings column all read it, and nothing outside this
//! module names a rule. Adding one is a file plus a line in [`REGISTRY`] (and its `mod`).

mod adafactor;
mod adagrad;
mod adam;
mod chain;
mod dial;
mod flow_adam;
mod flow_adam_p;
mod gd;
mod lion;
mod momentum;
mod muon;
mod optimizer;
mod rmsprop;
mod scalar_adam;
mod shampoo;
mod sign;
mod signum;
pub mod transforms;
mod validate;

pub use adafactor::Adafactor;
pub use adagrad::Adagrad;
pub use adam::Adam;
pub use chain::{
    BUNDLED_CHAINS, Chain, ChainError, ChainSpec, Lab, MAX_CHAIN_BYTES, MAX_TRANSFORMS, Step,
};
pub use dial::Dial;
pub use flow_adam::{FlowAdam, FlowClip, FlowSettings};
pub use gd::Gd;
pub use lion::Lion;
pub use momentum::MomentumSgd;
pub use muon::{
    GRAM_RATIO, Muon, NsForm, NsScratch, Polar, newton_schulz, newton_schulz_in, polar_svd,
};
pub(crate) use optimizer::axpby;
pub use optimizer::{
    FOURTH_MAX, FOURTH_MIN, GradientOracle, Optimizer, SQUARE_MAX, SQUARE_MIN, Statistic,
    moments_representable,
};
use optimizer::{check_shapes, ensure_like};
pub use rmsprop::RmsProp;
pub use scalar_adam::ScalarAdam;
pub use shampoo::Shampoo;
pub(crate) use shampoo::inverse_fourth_root;
pub use sign::{SignDescent, sign0};
pub use signum::Signum;
pub use transforms::{Action, Side};
pub use validate::validate_spec;

use serde::{Deserialize, Serialize};

pub use crate::validate::Range;

/// Every update rule, in the order menus list them.
pub static REGISTRY: &[&RuleInfo] = &[
    &gd::INFO,
    &momentum::INFO,
    &adam::INFO,
    &scalar_adam::INFO,
    &rmsprop::INFO,
    &sign::INFO,
    &muon::INFO,
    &lion::INFO,
    &signum::INFO,
    &adafactor::INFO,
    &shampoo::INFO,
    &dial::INFO,
    &adagrad::INFO,
    &flow_adam::INFO,
    &flow_adam_p::INFO,
];

/// A hyperparameter beyond `lr` that an optimizer reads from its [`OptimizerSpec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hyper {
    /// First-moment decay β1 (also Signum's momentum and Lion's interpolation).
    Beta1,
    /// Second-moment decay β2 (also Lion's momentum decay).
    Beta2,
    /// Denominator offset ε (added outside the square root).
    Eps,
    /// Heavy-ball momentum μ.
    Momentum,
    /// RMSProp's second-moment decay α.
    Alpha,
    /// Muon's orthogonaliser (Newton–Schulz or exact SVD).
    Polar,
    /// The dial's anisotropy p (1 per coordinate, as Adam; 0 one shared scale, as scalar-Adam).
    P,
    /// Shampoo's damping λ added to both statistics before the inverse root.
    Damping,
    /// Steps between Shampoo's recomputations of its inverse roots.
    RootEvery,
}

impl Hyper {
    /// Every hyperparameter, in the order presets list them.
    pub const ALL: [Hyper; 9] = [
        Hyper::Beta1,
        Hyper::Beta2,
        Hyper::Momentum,
        Hyper::Alpha,
        Hyper::Eps,
        Hyper::Polar,
        Hyper::P,
        Hyper::Damping,
        Hyper::RootEvery,
    ];

    /// The field name used in presets, traces and CSV headers.
    pub fn name(self) -> &'static str {
        match self {
            Hyper::Beta1 => "beta1",
            Hyper::Beta2 => "beta2",
            Hyper::Eps => "eps",
            Hyper::Momentum => "momentum",
            Hyper::Alpha => "alpha",
            Hyper::Polar => "polar",
            Hyper::P => "p",
            Hyper::Damping => "damping",
            Hyper::RootEvery => "root_every",
        }
    }

    /// The label the settings column shows.
    pub fn label(self) -> &'static str {
        match self {
            Hyper::Beta1 => "β1",
            Hyper::Beta2 => "β2",
            Hyper::Eps => "ε",
            Hyper::Momentum => "momentum μ",
            Hyper::Alpha => "decay α",
            Hyper::Polar => "polar factor",
            Hyper::P => "anisotropy p",
            Hyper::Damping => "damping λ",
            Hyper::RootEvery => "roots every (steps)",
        }
    }

    /// The allowed values (`None` for [`Hyper::Polar`], which is a choice, not a number).
    /// [`Hyper::RootEvery`] also has to be a whole number.
    pub fn range(self) -> Option<Range> {
        match self {
            Hyper::Beta1 | Hyper::Beta2 | Hyper::Momentum | Hyper::Alpha => {
                Some(Range::below(0.0, 1.0))
            }
            Hyper::Eps => Some(Range::closed(0.0, 1e6)),
            Hyper::P => Some(Range::closed(0.0, 1.0)),
            Hyper::Damping => Some(Range::above(0.0, 1e6)),
            Hyper::RootEvery => Some(Range::closed(1.0, 1e6)),
            Hyper::Polar => None,
        }
    }
}

/// How a rule treats the basis of the matrices it updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Equivariant under W → QW (and, in the gauge lab, (U, V) → (UQ, VQ)) for orthogonal Q:
    /// its twins stay at rounding noise.
    Equivariant,
    /// Acts on coordinates one by one (or by rows and columns), so it sees the basis.
    CoordinateWise,
    /// Equivariant exactly when this hyperparameter is 0 (the dial at p = 0 is scalar-Adam).
    EquivariantAtZero(Hyper),
    /// A chain of transforms: predicted equivariant under a lab's action when every transform
    /// commutes with it ([`ChainSpec::predicted`]).
    Chain,
}

/// The learning rate over a run of `budget` steps, as a factor of the peak rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Schedule {
    /// The peak rate throughout.
    Constant,
    /// `lr·½(1 + cos(π t/T))` with T = the budget (docs/numerics.md, "The gauge lab").
    Cosine,
}

impl Schedule {
    /// The rate at step `t` (0-based) of a `budget`-step run with peak rate `lr`.
    pub fn lr_at(self, lr: f64, t: usize, budget: usize) -> f64 {
        match self {
            Schedule::Constant => lr,
            Schedule::Cosine => {
                lr * 0.5 * (1.0 + libm::cos(std::f64::consts::PI * t as f64 / budget.max(1) as f64))
            }
        }
    }
}

/// How the gauge lab runs a rule unless a zoo preset says otherwise: for the paper's nine
/// rules, the rate it selected, its rate grid at n = 40 and its schedule (docs/numerics.md,
/// "The gauge lab"); for the others, our own choice, marked so in their files.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SensingDefaults {
    /// Peak learning rate.
    pub lr: f64,
    /// The rates a grid search tries.
    pub grid: &'static [f64],
    /// Schedule.
    pub schedule: Schedule,
}

/// One arm's optimizer as written in a preset: the registry name plus every hyperparameter any
/// rule reads (each rule reads only the ones its [`RuleInfo::hypers`] lists). A field a
/// preset leaves out takes the rule's default ([`OptimizerSpec::new`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(from = "SpecText")]
pub struct OptimizerSpec {
    /// Registry name, e.g. `"gd"`, `"adam"` (see [`REGISTRY`]).
    pub optimizer: String,
    /// Arm name in outputs; defaults to the optimizer name. Must be unique within a preset.
    pub label: Option<String>,
    /// Learning rate η (> 0).
    pub lr: f64,
    /// β1 in [0, 1) (Adam, scalar-Adam, the dial, Signum, Lion). Default 0.9.
    pub beta1: f64,
    /// β2 in [0, 1) (Adam, scalar-Adam, the dial, Adafactor, Lion). Default 0.999; Lion 0.99.
    pub beta2: f64,
    /// ε ≥ 0, outside the square root (Adam, scalar-Adam, RMSProp, the dial, Adafactor,
    /// Adagrad). Default 1e-8.
    pub eps: f64,
    /// Heavy-ball μ in [0, 1) (momentum-SGD, Muon). Default 0.9.
    pub momentum: f64,
    /// RMSProp decay α in [0, 1). Default 0.99.
    pub alpha: f64,
    /// Muon's orthogonaliser. Default Newton–Schulz.
    pub polar: Polar,
    /// The dial's anisotropy p in [0, 1]. Default 0.5.
    #[serde(skip_serializing_if = "is_default_p")]
    pub p: f64,
    /// Shampoo's damping λ in (0, 1e6]. Default 1.
    #[serde(skip_serializing_if = "is_default_damping")]
    pub damping: f64,
    /// Steps between Shampoo's inverse-root refreshes, 1..=10⁶. Default 20.
    #[serde(skip_serializing_if = "is_default_root_every")]
    pub root_every: usize,
}

// Fields added after the first release are written only when they differ from their default,
// so files written before them (and every output of the rules that ignore them) keep their bytes.
fn is_default_p(x: &f64) -> bool {
    *x == OptimizerSpec::default().p
}
fn is_default_damping(x: &f64) -> bool {
    *x == OptimizerSpec::default().damping
}
fn is_default_root_every(x: &usize) -> bool {
    *x == OptimizerSpec::default().root_every
}

impl Default for OptimizerSpec {
    fn default() -> Self {
        Self {
            optimizer: "gd".into(),
            label: None,
            lr: 0.1,
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            momentum: 0.9,
            alpha: 0.99,
            polar: Polar::NewtonSchulz,
            p: 0.5,
            damping: 1.0,
            root_every: 20,
        }
    }
}

/// A number a preset may leave out.
#[derive(Clone, Copy, Debug, Default)]
struct Given<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Given<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(|x| Given(Some(x)))
    }
}

/// [`OptimizerSpec`] as read from a file, before the rule's defaults fill what it left out.
#[derive(Deserialize)]
#[serde(rename = "OptimizerSpec", default, deny_unknown_fields)]
struct SpecText {
    optimizer: String,
    label: Option<String>,
    lr: f64,
    beta1: Given<f64>,
    beta2: Given<f64>,
    eps: Given<f64>,
    momentum: Given<f64>,
    alpha: Given<f64>,
    polar: Given<Polar>,
    p: Given<f64>,
    damping: Given<f64>,
    root_every: Given<usize>,
}

impl Default for SpecText {
    fn default() -> Self {
        let d = OptimizerSpec::default();
        Self {
            optimizer: d.optimizer,
            label: None,
            lr: d.lr,
            beta1: Given(None),
            beta2: Given(None),
            eps: Given(None),
            momentum: Given(None),
            alpha: Given(None),
            polar: Given(None),
            p: Given(None),
            damping: Given(None),
            root_every: Given(None),
        }
    }
}

impl From<SpecText> for OptimizerSpec {
    fn from(t: SpecText) -> Self {
        let mut s = OptimizerSpec::new(&t.optimizer, t.lr);
        s.label = t.label;
        let or = |given: Given<f64>, default: f64| given.0.unwrap_or(default);
        s.beta1 = or(t.beta1, s.beta1);
        s.beta2 = or(t.beta2, s.beta2);
        s.eps = or(t.eps, s.eps);
        s.momentum = or(t.momentum, s.momentum);
        s.alpha = or(t.alpha, s.alpha);
        s.p = or(t.p, s.p);
        s.damping = or(t.damping, s.damping);
        s.polar = t.polar.0.unwrap_or(s.polar);
        s.root_every = t.root_every.0.unwrap_or(s.root_every);
        s
    }
}

impl OptimizerSpec {
    /// A spec for registry name `optimizer` at learning rate `lr`, every hyperparameter at the
    /// rule's default (an unknown name gets the common defaults; validation names it).
    pub fn new(optimizer: &str, lr: f64) -> Self {
        let mut s = Self {
            optimizer: optimizer.into(),
            lr,
            ..Self::default()
        };
        if let Some(info) = lookup(optimizer) {
            for &(h, x) in info.defaults {
                if let Some(v) = s.value_mut(h) {
                    *v = x;
                }
            }
        }
        s
    }

    /// The arm's name in outputs: `label`, or the optimizer name (`chain` for a chain, whose
    /// text is no name).
    pub fn arm_name(&self) -> &str {
        match (&self.label, self.chain()) {
            (Some(label), _) => label,
            (None, Some(_)) => CHAIN_INFO.name,
            (None, None) => &self.optimizer,
        }
    }

    /// The registry entry, if the name is known; [`CHAIN_INFO`] when `optimizer` is a chain
    /// that parses.
    pub fn info(&self) -> Option<&'static RuleInfo> {
        lookup(&self.optimizer).or_else(|| self.chain().map(|_| &CHAIN_INFO))
    }

    /// The chain `optimizer` spells, when it is not a registered name and parses as one.
    pub fn chain(&self) -> Option<ChainSpec> {
        if lookup(&self.optimizer).is_some() {
            return None;
        }
        ChainSpec::parse(&self.optimizer).ok()
    }

    /// Whether the rule with these hyperparameters is equivariant under `W → QW` (see
    /// [`Class`]; a chain's prediction for the left action); false for an unknown name.
    pub fn equivariant(&self) -> bool {
        self.equivariant_under(Action::Left)
    }

    /// Whether the rule is (for a chain: predicted) equivariant under `action`. The registered
    /// rules' classes hold for both actions.
    pub fn equivariant_under(&self, action: Action) -> bool {
        match self.info().map(|i| i.class) {
            Some(Class::Equivariant) => true,
            Some(Class::EquivariantAtZero(h)) => self.value(h) == Some(0.0),
            Some(Class::Chain) => self.chain().is_some_and(|c| c.predicted(action)),
            _ => false,
        }
    }

    /// Numeric value of a hyperparameter (`Polar` has none and gives `None`).
    pub fn value(&self, h: Hyper) -> Option<f64> {
        Some(match h {
            Hyper::Beta1 => self.beta1,
            Hyper::Beta2 => self.beta2,
            Hyper::Eps => self.eps,
            Hyper::Momentum => self.momentum,
            Hyper::Alpha => self.alpha,
            Hyper::P => self.p,
            Hyper::Damping => self.damping,
            Hyper::RootEvery => self.root_every as f64,
            Hyper::Polar => return None,
        })
    }

    /// The field of a real-valued hyperparameter (`None` for `Polar` and `RootEvery`).
    pub fn value_mut(&mut self, h: Hyper) -> Option<&mut f64> {
        match h {
            Hyper::Beta1 => Some(&mut self.beta1),
            Hyper::Beta2 => Some(&mut self.beta2),
            Hyper::Eps => Some(&mut self.eps),
            Hyper::Momentum => Some(&mut self.momentum),
            Hyper::Alpha => Some(&mut self.alpha),
            Hyper::P => Some(&mut self.p),
            Hyper::Damping => Some(&mut self.damping),
            Hyper::Polar | Hyper::RootEvery => None,
        }
    }

    /// Builds the rule with zero state. Panics on an unknown name (validate the preset first).
    pub fn build(&self) -> Box<dyn Optimizer> {
        (self.info().expect("a registered optimizer").build)(self)
    }
}

/// The spec of chain `text` at rate `lr` for a preset, labelled `chain`, `chain-2`, … (the
/// first label `taken` says is free), so that it never clashes with an arm or run already there.
pub fn chain_spec(text: &str, lr: f64, taken: impl Fn(&str) -> bool) -> OptimizerSpec {
    let label = (1..)
        .map(|k| match k {
            1 => "chain".to_string(),
            k => format!("chain-{k}"),
        })
        .find(|l| !taken(l))
        .expect("some label is free");
    OptimizerSpec {
        label: Some(label),
        ..OptimizerSpec::new(text, lr)
    }
}

/// What the harness, the zoo and the UI know of an update rule. Each rule's file defines its
/// entry; [`REGISTRY`] lists them.
pub struct RuleInfo {
    /// Registry name used in presets, CSV and JSON (`"scalar_adam"`).
    pub name: &'static str,
    /// How zoo presets write the rule (`ScalarAdam`, `Dial(0.5)`).
    pub variant: &'static str,
    /// Human-readable name.
    pub title: &'static str,
    /// Equivariant or coordinate-wise; checked by a twin test for every entry in both labs.
    pub class: Class,
    /// The hyperparameters besides `lr` that the rule reads.
    pub hypers: &'static [Hyper],
    /// The rule's defaults where they differ from [`OptimizerSpec::default`].
    pub defaults: &'static [(Hyper, f64)],
    /// The hyperparameter a zoo preset writes in parentheses (`Dial(p)`), if any.
    pub zoo_arg: Option<Hyper>,
    /// A learning rate that trains reasonably on the key lab's default task, for a new arm.
    pub lr: f64,
    /// Colour in every plot, as sRGB.
    pub color: [u8; 3],
    /// How the gauge lab runs it.
    pub sensing: SensingDefaults,
    /// Its chain of transforms with the spec's hyperparameters ([`ChainSpec::parse`] reads
    /// it; tests/chains.rs runs both and compares their bits). `None` for a rule no chain
    /// expresses: FlowAdam replaces whole steps with a flow that needs a [`GradientOracle`].
    pub chain: Option<fn(&OptimizerSpec) -> String>,
    /// Builds the rule with zero state.
    pub build: fn(&OptimizerSpec) -> Box<dyn Optimizer>,
}

impl std::fmt::Debug for RuleInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuleInfo")
            .field("name", &self.name)
            .field("class", &self.class)
            .finish()
    }
}

/// The entry an [`OptimizerSpec`] naming a chain has (not in [`REGISTRY`]): its `build` parses
/// the spec's `optimizer` text; the rates are a default a preset overrides.
pub static CHAIN_INFO: RuleInfo = RuleInfo {
    name: "chain",
    variant: "Chain",
    title: "Chain of transforms",
    class: Class::Chain,
    hypers: &[],
    defaults: &[],
    zoo_arg: None,
    lr: 0.01,
    color: [60, 60, 60],
    sensing: SensingDefaults {
        lr: 1e-3,
        grid: &[1e-4, 3e-4, 1e-3, 3e-3, 1e-2],
        schedule: Schedule::Constant,
    },
    chain: Some(|s| s.optimizer.clone()),
    build: |s| {
        Box::new(
            ChainSpec::parse(&s.optimizer)
                .expect("a validated chain")
                .build(),
        )
    },
};

/// The registry entry named `name`.
pub fn lookup(name: &str) -> Option<&'static RuleInfo> {
    REGISTRY.iter().copied().find(|i| i.name == name)
}

/// The class as the tables write it for a registered rule (`chain` false) or a chain:
/// "equivariant", else "coordinate-wise" for a rule and "not guaranteed" for a chain, whose
/// prediction never claims that it breaks the symmetry (`basis-lab check` measures that).
pub fn class_word(chain: bool, equivariant: bool) -> &'static str {
    match (equivariant, chain) {
        (true, _) => "equivariant",
        (false, true) => "not guaranteed",
        (false, false) => "coordinate-wise",
    }
}

/// The Okabe–Ito palette in the order the optimizers take it, then a violet, grey and brown;
/// names the registry does not know cycle through it.
pub const PALETTE: [[u8; 3]; 9] = [
    [0, 114, 178],
    [213, 94, 0],
    [0, 158, 115],
    [204, 121, 167],
    [86, 180, 233],
    [230, 159, 0],
    [120, 94, 240],
    [140, 140, 140],
    [90, 60, 30],
];

/// The colour of optimizer `name` (its registry entry's; an unknown name takes the palette's
/// colour number `index`).
pub fn optimizer_rgb(name: &str, index: usize) -> [u8; 3] {
    lookup(name).map_or(PALETTE[index % PALETTE.len()], |i| i.color)
}
