//! The workbench's transforms (docs/numerics.md, "Transforms and chains"; SPEC-style optax
//! gradient transformations): each maps the update direction `u` (one matrix per parameter,
//! the gradient at the start of a chain) and its own state to a new `u`. A [`super::Chain`]
//! applies them left to right and steps `W ← W − lr·u`.
//!
//! Every transform is one file here with its state, its update, its [`TransformInfo`] (name,
//! arguments with ranges and defaults, the side its maps commute with and why); [`TRANSFORMS`]
//! lists them. Adding one is a file plus a line there (and its `mod`).

mod add_decayed_weights;
mod clip;
mod clip_by_block_norm;
mod clip_by_global_norm;
mod ema;
mod normalize;
mod normalize_columns;
mod normalize_rows;
mod orthogonalize;
mod scale;
mod scale_by_adafactor;
mod scale_by_adam;
mod scale_by_lion;
mod scale_by_rms;
mod scale_by_rss;
mod scale_by_shampoo;
mod scale_by_sign;
mod scale_by_soap;
mod scale_by_trust_ratio;
mod trace;

use nalgebra::DMatrix;

use crate::validate::Range;

/// Every transform, in the order the palette lists them.
pub static TRANSFORMS: &[&TransformInfo] = &[
    &trace::INFO,
    &ema::INFO,
    &scale_by_adam::INFO,
    &scale_by_rms::INFO,
    &scale_by_rss::INFO,
    &scale_by_sign::INFO,
    &scale_by_lion::INFO,
    &scale_by_adafactor::INFO,
    &scale_by_shampoo::INFO,
    &scale_by_soap::INFO,
    &orthogonalize::INFO,
    &clip::INFO,
    &clip_by_global_norm::INFO,
    &clip_by_block_norm::INFO,
    &normalize::INFO,
    &normalize_rows::INFO,
    &normalize_columns::INFO,
    &scale_by_trust_ratio::INFO,
    &add_decayed_weights::INFO,
    &scale::INFO,
];

/// The registry entry of transform `name`.
pub fn transform(name: &str) -> Option<&'static TransformInfo> {
    TRANSFORMS.iter().copied().find(|t| t.name == name)
}

/// What a transform may read besides `u` and its own state. It grows with the transforms that
/// need more (a gradient oracle, the loss); today it is the parameters.
pub struct Context<'a> {
    /// The parameters before this step, one matrix per entry of `u`, same shapes.
    pub params: &'a [DMatrix<f64>],
}

/// One transform with its state. State starts empty and is sized at the first call (shapes
/// must not change between calls); `t = 1` at the first call.
pub trait Transform: Send {
    /// Replaces `u` (one matrix per parameter, shapes of `ctx.params`) by the transform of it,
    /// updating the state. Allocation-free after the first call unless the transform's
    /// documentation says otherwise.
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>);

    /// A boxed copy including the current state.
    fn clone_box(&self) -> Box<dyn Transform>;

    /// Whether the transform's own arithmetic can carry `grads` (what the chain receives, see
    /// [`super::Optimizer::representable`]); the default is always `Ok`.
    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        let _ = grads;
        Ok(())
    }
}

impl Clone for Box<dyn Transform> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Which rotations a transform's map commutes with, per parameter matrix (numerics, "The
/// commuting rule"): `T(R·u, R·state) = R·T(u, state)` for every orthogonal Q, with R the
/// action `W ↦ Q·W` (left) or `W ↦ W·Q` (right).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Both actions (norms, inner products, linear recursions, co-rotating Gram matrices).
    Both,
    /// `W ↦ Q·W` only (per-column functions of column norms).
    Left,
    /// `W ↦ W·Q` only (per-row functions of row norms).
    Right,
    /// Neither (entry-wise maps).
    Neither,
}

impl Side {
    /// Whether a map of this side commutes with `action`.
    pub fn commutes(self, action: Action) -> bool {
        matches!(
            (self, action),
            (Side::Both, _) | (Side::Left, Action::Left) | (Side::Right, Action::Right)
        )
    }

    /// The word tables use: "both", "left", "right" or "neither".
    pub fn name(self) -> &'static str {
        match self {
            Side::Both => "both",
            Side::Left => "left",
            Side::Right => "right",
            Side::Neither => "neither",
        }
    }
}

/// How a lab's gauge acts on the matrices an optimizer updates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `W ↦ Q·W` (the key lab's W_K, attention's blocks of rows of W_Q and W_K).
    Left,
    /// `W ↦ W·Q` (the gauge lab's U and V).
    Right,
}

/// The kind of an argument's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ArgKind {
    /// A real number in the range.
    Real(Range),
    /// A whole number in the range.
    Whole(Range),
    /// `true` or `false` (held as 1 or 0).
    Flag,
    /// One of the words (held as its index).
    Choice(&'static [&'static str]),
}

/// One argument of a transform.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arg {
    /// Name in the text form (`decay`, `b1`).
    pub name: &'static str,
    /// Allowed values.
    pub kind: ArgKind,
    /// Value when the text leaves it out (a flag 0 or 1, a choice its index).
    pub default: f64,
}

impl Arg {
    /// What the argument allows, for error messages and the editor: `[0, 1)`, `a whole number
    /// in [1, 1000000]`, `true or false`, `newton_schulz or svd`.
    pub fn allowed(&self) -> String {
        match self.kind {
            ArgKind::Real(r) => r.to_string(),
            ArgKind::Whole(r) => format!("a whole number in {r}"),
            ArgKind::Flag => "true or false".into(),
            ArgKind::Choice(words) => words.join(" or "),
        }
    }

    /// `x` (a value of this argument) as the text form writes it.
    pub fn text(&self, x: f64) -> String {
        match self.kind {
            ArgKind::Real(_) | ArgKind::Whole(_) => crate::validate::real(x),
            ArgKind::Flag => (x != 0.0).to_string(),
            ArgKind::Choice(words) => words.get(x as usize).copied().unwrap_or("?").into(),
        }
    }
}

/// What the chain, the parser and the editor know of a transform. Each transform's file
/// defines its entry; [`TRANSFORMS`] lists them.
pub struct TransformInfo {
    /// Name in the text form (optax's where optax has the transform).
    pub name: &'static str,
    /// One line saying what it does.
    pub summary: &'static str,
    /// Its arguments in positional order.
    pub args: &'static [Arg],
    /// The side its map commutes with, given its argument values (one per [`Self::args`]).
    pub side: fn(&[f64]) -> Side,
    /// Why it commutes with that side (one line, for docs and the check's table).
    pub why: &'static str,
    /// Builds it with zero state from its argument values (validated, one per arg).
    pub build: fn(&[f64]) -> Box<dyn Transform>,
}

impl std::fmt::Debug for TransformInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransformInfo")
            .field("name", &self.name)
            .finish()
    }
}

/// Decay in [0, 1) (β1, β2, EMA decays).
const DECAY: Range = Range::below(0.0, 1.0);
/// ε ≥ 0, outside the root.
const EPS: Range = Range::closed(0.0, 1e6);
/// A positive threshold (clips).
const POSITIVE: Range = Range::above(0.0, 1e6);
/// Steps between refreshes.
const EVERY: Range = Range::closed(1.0, 1e6);

/// Zero matrices shaped like `like` unless `state` already is (the first call).
fn ensure_like(state: &mut Vec<DMatrix<f64>>, like: &[DMatrix<f64>]) {
    super::ensure_like(state, like)
}

/// `√(Σ_k ‖u_k‖²)` over every matrix, range-safe ([`crate::linalg::norm::checked_norm`]).
fn global_norm(u: &[DMatrix<f64>]) -> f64 {
    let plain = u.iter().map(|m| m.norm_squared()).sum::<f64>().sqrt();
    crate::linalg::norm::checked_norm(plain, u.iter().flat_map(|m| m.iter().copied()))
}
