use super::{Arg, ArgKind, Context, DECAY, Side, Transform, TransformInfo, ensure_like};
use crate::optim::axpby;
use nalgebra::DMatrix;

/// Heavy-ball momentum, optax's `trace` (Polyak 1964): `b ← decay·b + u`, then `u ← b`, or with
/// `nesterov` `u ← u + decay·b`. Linear in u, so it commutes with both rotations.
#[derive(Clone, Debug)]
pub struct Trace {
    decay: f64,
    nesterov: bool,
    buf: Vec<DMatrix<f64>>,
}

impl Transform for Trace {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        ensure_like(&mut self.buf, ctx.params);
        for (u, b) in u.iter_mut().zip(&mut self.buf) {
            // The same expression as Muon's and momentum-SGD's buffers (1·g + μ·b).
            axpby(b, 1.0, u, self.decay);
            if self.nesterov {
                axpby(u, self.decay, b, 1.0);
            } else {
                u.copy_from(b);
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "trace",
    summary: "heavy-ball momentum: b ← decay·b + u; u ← b (or u + decay·b with nesterov)",
    args: &[
        Arg {
            name: "decay",
            kind: ArgKind::Real(DECAY),
            default: 0.9,
        },
        Arg {
            name: "nesterov",
            kind: ArgKind::Flag,
            default: 0.0,
        },
    ],
    side: |_| Side::Both,
    why: "a linear recursion in u: a rotation passes through every term",
    build: |a| {
        Box::new(Trace {
            decay: a[0],
            nesterov: a[1] != 0.0,
            buf: Vec::new(),
        })
    },
};
