use super::{Arg, ArgKind, Context, DECAY, EPS, Side, Transform, TransformInfo};
use crate::optim::{Statistic, moments_representable};
use nalgebra::{DMatrix, DVector};

/// Adafactor's factored second moment, optax's `scale_by_factored_rms` under the name the
/// issue gives it (Shazeer & Stern 2018, as the registered Adafactor of numerics §7: no relative
/// step, clipping or momentum): per matrix `r ← decay·r + (1−decay)·rowmean(u⊙u)`,
/// `c ← decay·c + (1−decay)·colmean(u⊙u)`, `V̂ = r cᵀ/mean(r)`, `u ← u/(√V̂ + ε)`. A matrix
/// whose mean(r) is 0 gets u = 0, as does an entry whose denominator is 0. Per-entry
/// denominator: commutes with neither rotation.
#[derive(Clone, Debug)]
pub struct ScaleByAdafactor {
    decay: f64,
    eps: f64,
    row: Vec<DVector<f64>>,
    col: Vec<DVector<f64>>,
}

impl Transform for ScaleByAdafactor {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        let params = ctx.params;
        let fits = self.row.len() == params.len()
            && self
                .row
                .iter()
                .zip(params)
                .all(|(r, p)| r.len() == p.nrows());
        if !fits {
            self.row = params.iter().map(|p| DVector::zeros(p.nrows())).collect();
            self.col = params.iter().map(|p| DVector::zeros(p.ncols())).collect();
        }
        let b2 = self.decay;
        for (k, g) in u.iter_mut().enumerate() {
            let (rows, cols) = g.shape();
            let (r, c) = (&mut self.row[k], &mut self.col[k]);
            // The registered Adafactor's sums, in its order.
            for i in 0..rows {
                let mean = (0..cols).map(|j| g[(i, j)] * g[(i, j)]).sum::<f64>() / cols as f64;
                r[i] = b2 * r[i] + (1.0 - b2) * mean;
            }
            for j in 0..cols {
                let mean = g.column(j).norm_squared() / rows as f64;
                c[j] = b2 * c[j] + (1.0 - b2) * mean;
            }
            let r_mean = r.mean();
            if r_mean == 0.0 {
                g.fill(0.0);
                continue;
            }
            for j in 0..cols {
                for i in 0..rows {
                    let denom = (r[i] * c[j] / r_mean).sqrt() + self.eps;
                    let x = &mut g[(i, j)];
                    *x = if denom != 0.0 { *x / denom } else { 0.0 };
                }
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        moments_representable(
            "scale_by_adafactor",
            grads,
            self.eps,
            Statistic::FourthPowers,
        )
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "scale_by_adafactor",
    summary: "Adafactor: u ← u/(√(r cᵀ/mean r) + ε) from row and column mean squares",
    args: &[
        Arg {
            name: "decay",
            kind: ArgKind::Real(DECAY),
            default: 0.999,
        },
        Arg {
            name: "eps",
            kind: ArgKind::Real(EPS),
            default: 1e-8,
        },
    ],
    side: |_| Side::Neither,
    why: "a per-entry denominator built from row and column statistics",
    build: |a| {
        Box::new(ScaleByAdafactor {
            decay: a[0],
            eps: a[1],
            row: Vec::new(),
            col: Vec::new(),
        })
    },
};
