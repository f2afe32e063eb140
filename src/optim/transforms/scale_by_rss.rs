use super::{Arg, ArgKind, Context, EPS, Side, Transform, TransformInfo, ensure_like};
use crate::optim::{Statistic, moments_representable};
use nalgebra::DMatrix;

/// Adagrad's direction, optax's `scale_by_rss` (Duchi, Hazan & Singer 2011): `s ← s + u⊙u`,
/// `u ← u/(√s + ε)`, from s = 0 (optax starts at 0.1 and puts ε inside the root; the project's
/// Adagrad does neither). An entry whose denominator is exactly 0 gets u = 0. Per-entry
/// denominator: commutes with neither rotation.
#[derive(Clone, Debug)]
pub struct ScaleByRss {
    eps: f64,
    sum: Vec<DMatrix<f64>>,
}

impl Transform for ScaleByRss {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        ensure_like(&mut self.sum, ctx.params);
        for (u, s) in u.iter_mut().zip(&mut self.sum) {
            for (ui, si) in u.iter_mut().zip(s.iter_mut()) {
                let g = *ui;
                *si += g * g;
                let denom = si.sqrt() + self.eps;
                *ui = if denom != 0.0 { g / denom } else { 0.0 };
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        moments_representable("scale_by_rss", grads, self.eps, Statistic::Squares)?;
        let sums = self.sum.iter().flat_map(|s| s.iter());
        let gs = grads.iter().flat_map(|g| g.iter());
        if let Some((s, g)) = sums.zip(gs).find(|(s, g)| (**s + **g * **g).is_infinite()) {
            return Err(format!(
                "scale_by_rss cannot represent this run: its running sum of g² ({s:.2e}) plus \
                 {g:.2e}² passes f64's largest number, so the update would be 0"
            ));
        }
        Ok(())
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "scale_by_rss",
    summary: "Adagrad: s ← s + u²; u ← u/(√s + ε)",
    args: &[Arg {
        name: "eps",
        kind: ArgKind::Real(EPS),
        default: 1e-8,
    }],
    side: |_| Side::Neither,
    why: "a per-entry denominator",
    build: |a| {
        Box::new(ScaleByRss {
            eps: a[0],
            sum: Vec::new(),
        })
    },
};
