use super::{Arg, ArgKind, Context, POSITIVE, Side, Transform, TransformInfo, global_norm};
use nalgebra::DMatrix;

/// Global-norm clip, optax's `clip_by_global_norm` (Pascanu et al. 2013): with
/// `n = √(Σ_k ‖u_k‖F²)` over every matrix, `u ← u·max/n` when `n > max`, else unchanged.
/// A Frobenius norm is rotation-invariant: commutes with both rotations.
#[derive(Clone, Debug)]
pub struct ClipByGlobalNorm {
    max: f64,
}

impl Transform for ClipByGlobalNorm {
    fn apply(&mut self, u: &mut [DMatrix<f64>], _: &Context<'_>) {
        let n = global_norm(u);
        if n > self.max {
            let factor = self.max / n;
            for m in u {
                *m *= factor;
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "clip_by_global_norm",
    summary: "u ← u·max/‖u‖ when the norm over every matrix exceeds max",
    args: &[Arg {
        name: "max",
        kind: ArgKind::Real(POSITIVE),
        default: 1.0,
    }],
    side: |_| Side::Both,
    why: "a Frobenius norm: rotation-invariant",
    build: |a| Box::new(ClipByGlobalNorm { max: a[0] }),
};
