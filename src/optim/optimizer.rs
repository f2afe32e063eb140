//! The [`Optimizer`] trait every update rule implements, the oracle a rule may ask for other
//! gradients, and what the rules share: the checks that a rule's arithmetic can carry a
//! gradient (numerics §9) and the state helpers. It names no rule; the rules and the registry
//! ([`super::REGISTRY`]) build on it.

use nalgebra::DMatrix;

/// An update rule with explicit state over a parameter set (one or more matrices updated
/// together, so pooled statistics such as scalar-Adam's can span all of them).
///
/// State starts at zero and is sized at the first call; `t = 1` at the first update (numerics §2).
/// `Clone` (through [`Optimizer::clone_box`]) copies the state, so a twin is one clone.
pub trait Optimizer: Send {
    /// Applies one update in place: `params[i] ← params[i] − lr·(rule applied to grads)`.
    /// `grads[i]` has the shape of `params[i]`; shapes must not change between calls.
    /// Panics on a shape or length mismatch.
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64);

    /// [`Optimizer::step`] for a lab that can evaluate its loss's gradient at other points
    /// than `params` (the same loss that gave `grads`). The default ignores `oracle`, so a rule
    /// that needs no other points pays one call and nothing else; FlowAdam's flow uses it.
    fn step_with(
        &mut self,
        params: &mut [DMatrix<f64>],
        grads: &[DMatrix<f64>],
        lr: f64,
        oracle: &mut dyn GradientOracle,
    ) {
        let _ = oracle;
        self.step(params, grads, lr);
    }

    /// Whether [`Optimizer::step_with`] reads its oracle, so that a lab whose oracle costs
    /// something to set up (a copy of the model) prepares one only then.
    fn wants_oracle(&self) -> bool {
        false
    }

    /// Gradients this rule has asked an oracle for so far, beyond the one per step its lab
    /// computes (0 for the rules that never ask).
    fn oracle_evaluations(&self) -> u64 {
        0
    }

    /// A boxed copy including the current state.
    fn clone_box(&self) -> Box<dyn Optimizer>;

    /// Whether this rule's own arithmetic can carry an update from `grads` (shapes as in
    /// [`Optimizer::step`]): `Err` says why not, so that a run the rule cannot represent is
    /// reported rather than left standing still (numerics §9). The default, for rules whose
    /// arithmetic is the gradient's own (GD, momentum, sign, Lion, Muon), is always `Ok`.
    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        let _ = grads;
        Ok(())
    }
}

/// `√f64::MAX`: a gradient entry above this squares to ∞.
pub const SQUARE_MAX: f64 = 1.3407807929942596e154;

/// `√f64::MIN_POSITIVE`: a gradient entry below this squares out of f64's normal range (to a
/// subnormal number with fewer digits, or to 0).
pub const SQUARE_MIN: f64 = 1.4916681462400413e-154;

/// `f64::MAX^¼`: a gradient entry above this makes a product of two mean squares ∞.
pub const FOURTH_MAX: f64 = 1.157920892373162e77;

/// `f64::MIN_POSITIVE^¼`: below this a product of two mean squares leaves the normal range.
pub const FOURTH_MIN: f64 = 1.221338669755462e-77;

/// The statistic of the gradient a rule keeps, for [`moments_representable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Statistic {
    /// `g²` per entry (Adam, RMSProp, Adagrad's increment, the dial's per-coordinate part).
    Squares,
    /// `Σ g²` over every entry (scalar-Adam, the dial's shared scale, Shampoo's `G·Gᵀ` sums).
    SumOfSquares,
    /// Products of a row's and a column's mean `g²`, which grow as `g⁴` (Adafactor).
    FourthPowers,
}

/// [`Optimizer::representable`] for a rule that keeps `statistic` of the gradient and divides
/// by its root plus `floor` (ε; √λ for Shampoo's damping). `Err` when the statistic overflows
/// (it becomes ∞ and the update 0), or when it underflows while `floor` is too small to swamp
/// it (the root is above `floor·2⁻⁵³`: the exact rule would still move). `title` names the rule
/// in the message. Thresholds: `|g|` past [`SQUARE_MAX`] or under [`SQUARE_MIN`] per entry for
/// squares, the same for `‖G‖` for a sum, [`FOURTH_MAX`] and [`FOURTH_MIN`] for fourth powers.
/// `grads` are the matrices of one update, any shapes; no allocation. Source: numerics §9.
pub fn moments_representable(
    title: &str,
    grads: &[DMatrix<f64>],
    floor: f64,
    statistic: Statistic,
) -> Result<(), String> {
    // 2⁻⁵³: below this fraction of the floor a square root is lost in the sum's rounding.
    const HALF_ULP: f64 = 1.1102230246251565e-16;
    let over = |what: &str, x: f64, limit: f64| {
        Err(format!(
            "{title} cannot represent this run: {what} {x:.2e} puts its statistic of the \
             gradient past f64's largest number (limit {limit:.1e}), so it is infinite and the \
             update 0; the gradient's scale is out of this rule's reach"
        ))
    };
    let under = |what: &str, x: f64, limit: f64| {
        Err(format!(
            "{title} cannot represent this run: {what} {x:.2e} puts its statistic of the \
             gradient below f64's normal range (limit {limit:.1e}) and the rule's floor \
             ({floor:e}: its ε, or √λ for Shampoo) is too small to cover it, so the update \
             loses the gradient; the gradient's scale is out of this rule's reach"
        ))
    };
    let (max, min) = match statistic {
        Statistic::Squares | Statistic::SumOfSquares => (SQUARE_MAX, SQUARE_MIN),
        Statistic::FourthPowers => (FOURTH_MAX, FOURTH_MIN),
    };
    if statistic == Statistic::SumOfSquares {
        let entries = || grads.iter().flat_map(|g| g.as_slice().iter().copied());
        let plain = entries().map(|x| x * x).sum::<f64>().sqrt();
        let norm = crate::linalg::norm::checked_norm(plain, entries());
        let count = grads.iter().map(|g| g.len()).sum::<usize>().max(1) as f64;
        if norm > max && norm.is_finite() {
            return over("a gradient of norm", norm, max);
        }
        if norm > 0.0 && norm < min && norm / count.sqrt() > floor * HALF_ULP {
            return under("a gradient of norm", norm, min);
        }
        return Ok(());
    }
    for &x in grads.iter().flat_map(|g| g.iter()) {
        let a = x.abs();
        if a > max && a.is_finite() {
            return over("a gradient entry of", x, max);
        }
        if a > 0.0 && a < min && a > floor * HALF_ULP {
            return under("a gradient entry of", x, min);
        }
    }
    Ok(())
}

/// A lab's loss as a function of the parameters, for a rule that looks at other points than
/// the current one (numerics §10). The labs provide it: the key lab's batch of the step, the
/// gauge lab's sensing loss, the attention lab's training batch.
pub trait GradientOracle {
    /// Writes `∇L(at)` into `grads` (one matrix per entry of `at`, same shapes) and returns
    /// `L(at)`. A point where the loss is not finite gives non-finite values, not an error.
    fn gradient(&mut self, at: &[DMatrix<f64>], grads: &mut [DMatrix<f64>]) -> f64;
}

impl Clone for Box<dyn Optimizer> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// Allocates zero state shaped like `params` on the first call (or after the shapes change).
pub(super) fn ensure_like(state: &mut Vec<DMatrix<f64>>, params: &[DMatrix<f64>]) {
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

/// Panics unless `grads` has one matrix per parameter, each of its parameter's shape.
pub(super) fn check_shapes(params: &[DMatrix<f64>], grads: &[DMatrix<f64>]) {
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
