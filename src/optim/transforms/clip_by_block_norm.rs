use super::{Arg, ArgKind, Context, POSITIVE, Side, Transform, TransformInfo};
use crate::linalg::norm::frobenius;
use nalgebra::DMatrix;

/// Per-matrix clip (optax's `clip_by_block_rms` family, by the Frobenius norm): each matrix
/// `u_k ← u_k·max/‖u_k‖F` when `‖u_k‖F > max`. A Frobenius norm is rotation-invariant:
/// commutes with both rotations.
#[derive(Clone, Debug)]
pub struct ClipByBlockNorm {
    max: f64,
}

impl Transform for ClipByBlockNorm {
    fn apply(&mut self, u: &mut [DMatrix<f64>], _: &Context<'_>) {
        for m in u {
            let n = frobenius(m);
            if n > self.max {
                *m *= self.max / n;
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "clip_by_block_norm",
    summary: "each matrix u_k ← u_k·max/‖u_k‖ when its norm exceeds max",
    args: &[Arg {
        name: "max",
        kind: ArgKind::Real(POSITIVE),
        default: 1.0,
    }],
    side: |_| Side::Both,
    why: "a Frobenius norm per matrix: rotation-invariant",
    build: |a| Box::new(ClipByBlockNorm { max: a[0] }),
};
