use super::{Arg, ArgKind, Context, DECAY, Side, Transform, TransformInfo, ensure_like};
use crate::optim::axpby;
use nalgebra::DMatrix;

/// Exponential moving average, optax's `ema`: `m ← decay·m + (1−decay)·u`, then `u ← m`, or
/// with `debias` `u ← m/(1 − decay^t)` (t = 1 at the first call). Linear in u, so it commutes
/// with both rotations.
#[derive(Clone, Debug)]
pub struct Ema {
    decay: f64,
    debias: bool,
    t: i32,
    m: Vec<DMatrix<f64>>,
}

impl Transform for Ema {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        ensure_like(&mut self.m, ctx.params);
        self.t = self.t.saturating_add(1);
        let d = self.decay;
        let correction = 1.0 - d.powi(self.t);
        for (u, m) in u.iter_mut().zip(&mut self.m) {
            // Signum's expression for its momentum ((1−β)·g + β·m).
            axpby(m, 1.0 - d, u, d);
            if self.debias {
                for (ui, &mi) in u.iter_mut().zip(m.iter()) {
                    *ui = mi / correction;
                }
            } else {
                u.copy_from(m);
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "ema",
    summary: "moving average: m ← decay·m + (1−decay)·u; u ← m (÷ (1−decay^t) with debias)",
    args: &[
        Arg {
            name: "decay",
            kind: ArgKind::Real(DECAY),
            default: 0.9,
        },
        Arg {
            name: "debias",
            kind: ArgKind::Flag,
            default: 1.0,
        },
    ],
    side: |_| Side::Both,
    why: "a linear recursion in u: a rotation passes through every term",
    build: |a| {
        Box::new(Ema {
            decay: a[0],
            debias: a[1] != 0.0,
            t: 0,
            m: Vec::new(),
        })
    },
};
