use super::{Arg, ArgKind, Context, DECAY, EPS, Side, Transform, TransformInfo, ensure_like};
use crate::optim::{Statistic, moments_representable};
use nalgebra::DMatrix;

/// RMSProp's direction, optax's `scale_by_rms` (Tieleman & Hinton 2012): `v ← decay·v +
/// (1−decay)·u⊙u`, `u ← u/(√v + ε)`, no bias correction, ε outside the root (optax puts it
/// inside; the project's RMSProp outside). An entry whose denominator is exactly 0 gets u = 0.
/// Per-entry denominator: commutes with neither rotation.
#[derive(Clone, Debug)]
pub struct ScaleByRms {
    decay: f64,
    eps: f64,
    v: Vec<DMatrix<f64>>,
}

impl Transform for ScaleByRms {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        ensure_like(&mut self.v, ctx.params);
        let (a, eps) = (self.decay, self.eps);
        for (u, v) in u.iter_mut().zip(&mut self.v) {
            for (ui, vi) in u.iter_mut().zip(v.iter_mut()) {
                let g = *ui;
                *vi = a * *vi + (1.0 - a) * g * g;
                let denom = vi.sqrt() + eps;
                *ui = if denom != 0.0 { g / denom } else { 0.0 };
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        moments_representable("scale_by_rms", grads, self.eps, Statistic::Squares)
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "scale_by_rms",
    summary: "RMSProp: v ← decay·v + (1−decay)·u²; u ← u/(√v + ε)",
    args: &[
        Arg {
            name: "decay",
            kind: ArgKind::Real(DECAY),
            default: 0.99,
        },
        Arg {
            name: "eps",
            kind: ArgKind::Real(EPS),
            default: 1e-8,
        },
    ],
    side: |_| Side::Neither,
    why: "a per-entry denominator",
    build: |a| {
        Box::new(ScaleByRms {
            decay: a[0],
            eps: a[1],
            v: Vec::new(),
        })
    },
};
