use super::{Arg, ArgKind, Context, DECAY, EPS, Side, Transform, TransformInfo, ensure_like};
use crate::arith::Ops;
use crate::optim::{Statistic, moments_representable};
use crate::validate::Range;
use nalgebra::DMatrix;

/// Adam's direction with the anisotropy dial, optax's `scale_by_adam` (Kingma & Ba 2015; the
/// dial of numerics §7): `m ← b1·m + (1−b1)·u`, `v ← b2·v + (1−b2)·u⊙u`, `m̂ = m/(1−b1^t)`,
/// `v̂ = v/(1−b2^t)`, `u ← m̂ / ((√v̂ + ε)^p · (s̄ + ε)^(1−p))` with `s̄ = √(mean of v̂ over every
/// entry of every matrix)`. p = 1 is Adam (the factor `(s̄ + ε)^0` is not computed), p = 0 one
/// shared RMS scalar (scalar-Adam). An entry whose denominator is exactly 0 gets u = 0. ε is
/// outside the root (optax's `eps`; its `eps_root` is 0 here). Commutes with both rotations at
/// p = 0 (a single norm), with neither otherwise (a per-entry denominator).
#[derive(Clone, Debug)]
pub struct ScaleByAdam {
    b1: f64,
    b2: f64,
    eps: f64,
    p: f64,
    t: i32,
    m: Vec<DMatrix<f64>>,
    v: Vec<DMatrix<f64>>,
}

crate::linalg::dispatch! {
    /// Adam's moments and direction for one matrix, compiled per arithmetic with Adam's own
    /// multiply-adds. `c` holds b1, b2, ε and the two bias corrections.
    fn adam_direction(u: &mut [f64], m: &mut [f64], v: &mut [f64], c: [f64; 5])
        => adam_direction_impl
}

#[inline(always)]
fn adam_direction_impl<A: Ops>(u: &mut [f64], m: &mut [f64], v: &mut [f64], c: [f64; 5]) {
    let [b1, b2, eps, bc1, bc2] = c;
    for ((ui, mi), vi) in u.iter_mut().zip(m.iter_mut()).zip(v.iter_mut()) {
        let g = *ui;
        *mi = A::madd(b1, *mi, (1.0 - b1) * g);
        *vi = A::madd(b2, *vi, (1.0 - b2) * g * g);
        let denom = (*vi / bc2).sqrt() + eps;
        *ui = if denom != 0.0 {
            (*mi / bc1) / denom
        } else {
            0.0
        };
    }
}

impl Transform for ScaleByAdam {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        ensure_like(&mut self.m, ctx.params);
        ensure_like(&mut self.v, ctx.params);
        self.t = self.t.saturating_add(1);
        let (b1, b2, eps, p) = (self.b1, self.b2, self.eps, self.p);
        let (bc1, bc2) = (1.0 - b1.powi(self.t), 1.0 - b2.powi(self.t));
        if p == 1.0 {
            for ((u, m), v) in u.iter_mut().zip(&mut self.m).zip(&mut self.v) {
                let c = [b1, b2, eps, bc1, bc2];
                adam_direction(u.as_mut_slice(), m.as_mut_slice(), v.as_mut_slice(), c);
            }
            return;
        }
        // The dial's arithmetic, in its order (numerics §7).
        let mut sum = 0.0;
        let mut count = 0usize;
        for ((u, m), v) in u.iter().zip(&mut self.m).zip(&mut self.v) {
            for ((&g, mi), vi) in u.iter().zip(m.iter_mut()).zip(v.iter_mut()) {
                *mi = b1 * *mi + (1.0 - b1) * g;
                *vi = b2 * *vi + (1.0 - b2) * g * g;
                sum += *vi / bc2;
            }
            count += u.len();
        }
        let shared = libm::pow((sum / count.max(1) as f64).sqrt() + eps, 1.0 - p);
        if p == 0.0 {
            // (√v̂ + ε)^0 is 1 for every v̂: one division by the shared scale, the same bits.
            for (u, m) in u.iter_mut().zip(&self.m) {
                for (ui, &mi) in u.iter_mut().zip(m.iter()) {
                    *ui = if shared != 0.0 {
                        (mi / bc1) / shared
                    } else {
                        0.0
                    };
                }
            }
            return;
        }
        for ((u, m), v) in u.iter_mut().zip(&self.m).zip(&self.v) {
            for ((ui, &mi), &vi) in u.iter_mut().zip(m.iter()).zip(v.iter()) {
                let denom = libm::pow((vi / bc2).sqrt() + eps, p) * shared;
                *ui = if denom != 0.0 {
                    (mi / bc1) / denom
                } else {
                    0.0
                };
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        let title = "scale_by_adam";
        if self.p > 0.0 {
            moments_representable(title, grads, self.eps, Statistic::Squares)?;
        }
        if self.p < 1.0 {
            moments_representable(title, grads, self.eps, Statistic::SumOfSquares)?;
        }
        Ok(())
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "scale_by_adam",
    summary: "Adam's m̂/(√v̂ + ε), with the anisotropy dial p (1 Adam, 0 one shared RMS scalar)",
    args: &[
        Arg {
            name: "b1",
            kind: ArgKind::Real(DECAY),
            default: 0.9,
        },
        Arg {
            name: "b2",
            kind: ArgKind::Real(DECAY),
            default: 0.999,
        },
        Arg {
            name: "eps",
            kind: ArgKind::Real(EPS),
            default: 1e-8,
        },
        Arg {
            name: "p",
            kind: ArgKind::Real(Range::closed(0.0, 1.0)),
            default: 1.0,
        },
    ],
    side: |a| {
        if a[3] == 0.0 {
            Side::Both
        } else {
            Side::Neither
        }
    },
    why: "p > 0: a per-entry denominator (neither); p = 0: one shared norm (both)",
    build: |a| {
        Box::new(ScaleByAdam {
            b1: a[0],
            b2: a[1],
            eps: a[2],
            p: a[3],
            t: 0,
            m: Vec::new(),
            v: Vec::new(),
        })
    },
};
