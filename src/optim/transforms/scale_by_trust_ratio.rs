use super::{Context, Side, Transform, TransformInfo};
use crate::linalg::norm::frobenius;
use nalgebra::DMatrix;

/// LAMB/LARS trust ratio, optax's `scale_by_trust_ratio` (You et al. 2017, 2020): each matrix
/// `u_k ← u_k·‖W_k‖F/‖u_k‖F`, with the ratio 1 when either norm is 0. Both norms are
/// rotation-invariant and W rotates with u: commutes with both rotations.
#[derive(Clone, Copy, Debug)]
pub struct ScaleByTrustRatio;

impl Transform for ScaleByTrustRatio {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        for (m, w) in u.iter_mut().zip(ctx.params) {
            let (wn, un) = (frobenius(w), frobenius(m));
            if wn > 0.0 && un > 0.0 {
                *m *= wn / un;
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(*self)
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "scale_by_trust_ratio",
    summary: "each matrix u_k ← u_k·‖W_k‖/‖u_k‖ (LAMB, LARS)",
    args: &[],
    side: |_| Side::Both,
    why: "a ratio of Frobenius norms: rotation-invariant",
    build: |_| Box::new(ScaleByTrustRatio),
};
