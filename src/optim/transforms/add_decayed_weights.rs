use super::{Arg, ArgKind, Context, Side, Transform, TransformInfo};
use crate::optim::axpby;
use crate::validate::Range;
use nalgebra::DMatrix;

/// Decoupled weight decay, optax's `add_decayed_weights` (Loshchilov & Hutter 2019):
/// `u ← u + wd·W` with W the parameters before the step, so the step is `W ← W − lr·(u + wd·W)`.
/// W rotates with u: commutes with both rotations.
#[derive(Clone, Debug)]
pub struct AddDecayedWeights {
    wd: f64,
}

impl Transform for AddDecayedWeights {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        for (m, w) in u.iter_mut().zip(ctx.params) {
            axpby(m, self.wd, w, 1.0);
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "add_decayed_weights",
    summary: "u ← u + wd·W (decoupled weight decay)",
    args: &[Arg {
        name: "wd",
        kind: ArgKind::Real(Range::closed(0.0, 1e3)),
        default: 1e-4,
    }],
    side: |_| Side::Both,
    why: "linear in (u, W), which rotate together",
    build: |a| Box::new(AddDecayedWeights { wd: a[0] }),
};
