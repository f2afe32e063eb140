use super::{Arg, ArgKind, Context, Side, Transform, TransformInfo, ensure_like};
use crate::optim::{NsScratch, newton_schulz, polar_svd};
use nalgebra::DMatrix;

/// Muon's orthogonalisation (Jordan et al. 2024; numerics §2): each matrix `u ← O(u)`, its
/// orthogonal polar factor, by five quintic Newton–Schulz iterations (`newton_schulz`) or
/// exactly from an SVD (`svd`, which allocates). O(QuQ′) = Q·O(u)·Q′, so it commutes with both
/// rotations.
#[derive(Clone, Debug)]
pub struct Orthogonalize {
    svd: bool,
    out: Vec<DMatrix<f64>>,
    scratch: Vec<NsScratch>,
}

impl Transform for Orthogonalize {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        if self.svd {
            for m in u {
                *m = polar_svd(m);
            }
            return;
        }
        ensure_like(&mut self.out, ctx.params);
        if self.scratch.len() != u.len() {
            self.scratch = u
                .iter()
                .map(|m| NsScratch::new(m.nrows(), m.ncols()))
                .collect();
        }
        for ((m, out), scratch) in u.iter_mut().zip(&mut self.out).zip(&mut self.scratch) {
            newton_schulz(m, out, scratch);
            m.copy_from(out);
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "orthogonalize",
    summary: "Muon: u ← its orthogonal polar factor (Newton–Schulz or SVD)",
    args: &[Arg {
        name: "method",
        kind: ArgKind::Choice(&["newton_schulz", "svd"]),
        default: 0.0,
    }],
    side: |_| Side::Both,
    why: "the polar factor rotates with its matrix from either side",
    build: |a| {
        Box::new(Orthogonalize {
            svd: a[0] != 0.0,
            out: Vec::new(),
            scratch: Vec::new(),
        })
    },
};
