use super::{Arg, ArgKind, Context, EVERY, Side, Transform, TransformInfo};
use crate::linalg::{add_gram_into, add_outer_into, mul_into};
use crate::optim::{Statistic, inverse_fourth_root, moments_representable};
use crate::validate::Range;
use nalgebra::DMatrix;

/// Shampoo's preconditioning (Gupta et al. 2018, as the registered Shampoo of numerics §7):
/// per matrix `L ← L + uuᵀ`, `R ← R + uᵀu` from zero; at t = 1, 1 + every, … recompute
/// `P_L = (L + λI)^(−1/4)`, `P_R = (R + λI)^(−1/4)` (eigenvalues clamped ≥ 1e-6);
/// `u ← P_L u P_R`. The statistics co-rotate (QLQᵀ, QᵀRQ), so it commutes with both
/// rotations. Allocates when it refreshes the roots (nalgebra's eigendecomposition).
#[derive(Clone, Debug)]
pub struct ScaleByShampoo {
    damping: f64,
    every: usize,
    t: usize,
    left: Vec<DMatrix<f64>>,
    right: Vec<DMatrix<f64>>,
    p_left: Vec<DMatrix<f64>>,
    p_right: Vec<DMatrix<f64>>,
    tmp: Vec<DMatrix<f64>>,
}

impl Transform for ScaleByShampoo {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        if self.left.len() != u.len() {
            let sq = |n: usize| DMatrix::<f64>::zeros(n, n);
            self.left = ctx.params.iter().map(|p| sq(p.nrows())).collect();
            self.right = ctx.params.iter().map(|p| sq(p.ncols())).collect();
            self.p_left = self.left.clone();
            self.p_right = self.right.clone();
            self.tmp = ctx
                .params
                .iter()
                .map(|p| DMatrix::zeros(p.nrows(), p.ncols()))
                .collect();
        }
        self.t += 1;
        let refresh = (self.t - 1).is_multiple_of(self.every);
        for (k, g) in u.iter_mut().enumerate() {
            add_outer_into(&mut self.left[k], g);
            add_gram_into(&mut self.right[k], g);
            if refresh {
                self.p_left[k] = inverse_fourth_root(&self.left[k], self.damping);
                self.p_right[k] = inverse_fourth_root(&self.right[k], self.damping);
            }
            mul_into(&mut self.tmp[k], &self.p_left[k], g);
            mul_into(g, &self.tmp[k], &self.p_right[k]);
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        moments_representable(
            "scale_by_shampoo",
            grads,
            self.damping.sqrt(),
            Statistic::SumOfSquares,
        )
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "scale_by_shampoo",
    summary: "Shampoo: u ← (L + λI)^(−1/4) u (R + λI)^(−1/4), L = Σ uuᵀ, R = Σ uᵀu",
    args: &[
        Arg {
            name: "damping",
            kind: ArgKind::Real(Range::above(0.0, 1e6)),
            default: 1.0,
        },
        Arg {
            name: "every",
            kind: ArgKind::Whole(EVERY),
            default: 20.0,
        },
    ],
    side: |_| Side::Both,
    why: "its Gram statistics co-rotate (L ↦ QLQᵀ), so P_L u P_R rotates with u",
    build: |a| {
        Box::new(ScaleByShampoo {
            damping: a[0],
            every: a[1] as usize,
            t: 0,
            left: Vec::new(),
            right: Vec::new(),
            p_left: Vec::new(),
            p_right: Vec::new(),
            tmp: Vec::new(),
        })
    },
};
