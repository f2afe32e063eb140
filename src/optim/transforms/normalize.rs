use super::{Context, Side, Transform, TransformInfo, global_norm};
use nalgebra::DMatrix;

/// Normalised direction: `u ← u/n` with `n = √(Σ_k ‖u_k‖F²)` over every matrix (a zero u stays
/// 0). Normalised gradient descent when alone. Commutes with both rotations.
#[derive(Clone, Copy, Debug)]
pub struct Normalize;

impl Transform for Normalize {
    fn apply(&mut self, u: &mut [DMatrix<f64>], _: &Context<'_>) {
        let n = global_norm(u);
        if n > 0.0 {
            for m in u {
                *m /= n;
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(*self)
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "normalize",
    summary: "u ← u/‖u‖, the norm over every matrix",
    args: &[],
    side: |_| Side::Both,
    why: "a Frobenius norm: rotation-invariant",
    build: |_| Box::new(Normalize),
};
