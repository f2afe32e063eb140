//! Update rules for sets of f64 matrices, behind one trait with explicit state (SPEC §2).
//!
//! Adding an arm is one file here plus one entry in [`REGISTRY`]; the harness only ever sees
//! `Box<dyn Optimizer>` and the registry's [`OptimizerInfo`], never an optimizer's name.

mod adafactor;
mod adam;
mod dial;
mod gd;
mod lion;
mod momentum;
mod muon;
mod rmsprop;
mod scalar_adam;
mod shampoo;
mod sign;
mod signum;

pub use adafactor::Adafactor;
pub use adam::Adam;
pub use dial::Dial;
pub use gd::Gd;
pub use lion::Lion;
pub use momentum::MomentumSgd;
pub use muon::{
    GRAM_RATIO, Muon, NsForm, NsScratch, Polar, newton_schulz, newton_schulz_in, polar_svd,
};
pub use rmsprop::RmsProp;
pub use scalar_adam::ScalarAdam;
pub use shampoo::Shampoo;
pub use sign::{SignDescent, sign0};
pub use signum::Signum;

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

/// An update rule with explicit state over a parameter set (one or more matrices updated
/// together, so pooled statistics such as scalar-Adam's can span all of them).
///
/// State starts at zero and is sized at the first call; `t = 1` at the first update (SPEC §2).
/// `Clone` (through [`Optimizer::clone_box`]) copies the state, so a twin is one clone.
pub trait Optimizer: Send {
    /// Applies one update in place: `params[i] ← params[i] − lr·(rule applied to grads)`.
    /// `grads[i]` has the shape of `params[i]`; shapes must not change between calls.
    /// Panics on a shape or length mismatch.
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64);

    /// A boxed copy including the current state.
    fn clone_box(&self) -> Box<dyn Optimizer>;
}

impl Clone for Box<dyn Optimizer> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// A hyperparameter beyond `lr` that an optimizer reads from its [`OptimizerSpec`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hyper {
    /// First-moment decay β1.
    Beta1,
    /// Second-moment decay β2.
    Beta2,
    /// Denominator offset ε (added outside the square root).
    Eps,
    /// Heavy-ball momentum μ.
    Momentum,
    /// RMSProp's second-moment decay α.
    Alpha,
    /// Muon's orthogonaliser (Newton–Schulz or exact SVD).
    Polar,
}

impl Hyper {
    /// The field name used in presets, traces and CSV headers.
    pub fn name(self) -> &'static str {
        match self {
            Hyper::Beta1 => "beta1",
            Hyper::Beta2 => "beta2",
            Hyper::Eps => "eps",
            Hyper::Momentum => "momentum",
            Hyper::Alpha => "alpha",
            Hyper::Polar => "polar",
        }
    }
}

/// One arm's optimizer as written in a preset: the registry name plus every hyperparameter any
/// rule reads (each rule reads only the ones its [`OptimizerInfo::hypers`] lists).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OptimizerSpec {
    /// Registry name, e.g. `"gd"`, `"adam"` (see [`REGISTRY`]).
    pub optimizer: String,
    /// Arm name in outputs; defaults to the optimizer name. Must be unique within a preset.
    pub label: Option<String>,
    /// Learning rate η (> 0).
    pub lr: f64,
    /// β1 in [0, 1) (Adam, scalar-Adam). Default 0.9.
    pub beta1: f64,
    /// β2 in [0, 1) (Adam, scalar-Adam). Default 0.999.
    pub beta2: f64,
    /// ε ≥ 0, outside the square root (Adam, scalar-Adam, RMSProp). Default 1e-8.
    pub eps: f64,
    /// Heavy-ball μ in [0, 1) (momentum-SGD, Muon). Default 0.9.
    pub momentum: f64,
    /// RMSProp decay α in [0, 1). Default 0.99.
    pub alpha: f64,
    /// Muon's orthogonaliser. Default Newton–Schulz.
    pub polar: Polar,
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
        }
    }
}

impl OptimizerSpec {
    /// A spec for registry name `optimizer` at learning rate `lr`, other fields at defaults.
    pub fn new(optimizer: &str, lr: f64) -> Self {
        Self {
            optimizer: optimizer.into(),
            lr,
            ..Self::default()
        }
    }

    /// The arm's name in outputs: `label`, or the optimizer name.
    pub fn arm_name(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.optimizer)
    }

    /// The registry entry, if the name is known.
    pub fn info(&self) -> Option<&'static OptimizerInfo> {
        lookup(&self.optimizer)
    }

    /// Numeric value of a hyperparameter (`Polar` has none and gives `None`).
    pub fn value(&self, h: Hyper) -> Option<f64> {
        match h {
            Hyper::Beta1 => Some(self.beta1),
            Hyper::Beta2 => Some(self.beta2),
            Hyper::Eps => Some(self.eps),
            Hyper::Momentum => Some(self.momentum),
            Hyper::Alpha => Some(self.alpha),
            Hyper::Polar => None,
        }
    }
}

/// What the harness and the UI know of an optimizer: its name, class and constructor.
pub struct OptimizerInfo {
    /// Registry name used in presets, CSV and JSON.
    pub name: &'static str,
    /// Human-readable name.
    pub title: &'static str,
    /// Equivariant under `W → QW` for orthogonal Q (SPEC §2); its twin must stay at float noise.
    pub equivariant: bool,
    /// The hyperparameters besides `lr` that the rule reads.
    pub hypers: &'static [Hyper],
    /// Builds the rule with zero state.
    pub build: fn(&OptimizerSpec) -> Box<dyn Optimizer>,
}

impl std::fmt::Debug for OptimizerInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OptimizerInfo")
            .field("name", &self.name)
            .field("equivariant", &self.equivariant)
            .finish()
    }
}

/// Every optimizer the key lab offers.
pub static REGISTRY: &[OptimizerInfo] = &[
    OptimizerInfo {
        name: "gd",
        title: "Gradient descent",
        equivariant: true,
        hypers: &[],
        build: |_| Box::new(Gd),
    },
    OptimizerInfo {
        name: "momentum",
        title: "Momentum SGD (heavy ball)",
        equivariant: true,
        hypers: &[Hyper::Momentum],
        build: |s| Box::new(MomentumSgd::new(s.momentum)),
    },
    OptimizerInfo {
        name: "adam",
        title: "Adam",
        equivariant: false,
        hypers: &[Hyper::Beta1, Hyper::Beta2, Hyper::Eps],
        build: |s| Box::new(Adam::new(s.beta1, s.beta2, s.eps)),
    },
    OptimizerInfo {
        name: "scalar_adam",
        title: "Scalar-Adam",
        equivariant: true,
        hypers: &[Hyper::Beta1, Hyper::Beta2, Hyper::Eps],
        build: |s| Box::new(ScalarAdam::new(s.beta1, s.beta2, s.eps)),
    },
    OptimizerInfo {
        name: "rmsprop",
        title: "RMSProp",
        equivariant: false,
        hypers: &[Hyper::Alpha, Hyper::Eps],
        build: |s| Box::new(RmsProp::new(s.alpha, s.eps)),
    },
    OptimizerInfo {
        name: "sign",
        title: "Sign descent",
        equivariant: false,
        hypers: &[],
        build: |_| Box::new(SignDescent),
    },
    OptimizerInfo {
        name: "muon",
        title: "Muon",
        equivariant: true,
        hypers: &[Hyper::Momentum, Hyper::Polar],
        build: |s| Box::new(Muon::new(s.momentum, s.polar)),
    },
];

/// The registry entry named `name`.
pub fn lookup(name: &str) -> Option<&'static OptimizerInfo> {
    REGISTRY.iter().find(|i| i.name == name)
}

/// Allocates zero state shaped like `params` on the first call (or after the shapes change).
fn ensure_like(state: &mut Vec<DMatrix<f64>>, params: &[DMatrix<f64>]) {
    let same = state.len() == params.len()
        && state
            .iter()
            .zip(params)
            .all(|(s, p)| s.shape() == p.shape());
    if !same {
        *state = params
            .iter()
            .map(|p| DMatrix::zeros(p.nrows(), p.ncols()))
            .collect();
    }
}

fn check_shapes(params: &[DMatrix<f64>], grads: &[DMatrix<f64>]) {
    assert_eq!(params.len(), grads.len(), "one gradient per parameter");
    for (p, g) in params.iter().zip(grads) {
        assert_eq!(
            p.shape(),
            g.shape(),
            "gradient shape must match its parameter"
        );
    }
}

/// `y ← a·x + b·y` entrywise for equal-shaped matrices (nalgebra's `axpy` is vector-only).
#[inline]
pub(crate) fn axpby(y: &mut DMatrix<f64>, a: f64, x: &DMatrix<f64>, b: f64) {
    debug_assert_eq!(y.shape(), x.shape());
    for (yi, xi) in y.as_mut_slice().iter_mut().zip(x.as_slice()) {
        *yi = a * xi + b * *yi;
    }
}
