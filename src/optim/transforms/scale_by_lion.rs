use super::{Arg, ArgKind, Context, DECAY, Side, Transform, TransformInfo, ensure_like};
use crate::optim::sign0;
use nalgebra::DMatrix;

/// Lion's direction, optax's `scale_by_lion` (Chen et al. 2023): `u ← sign(b1·m + (1−b1)·u)`,
/// then `m ← b2·m + (1−b2)·g` with g the incoming u. Entry-wise sign: commutes with neither.
#[derive(Clone, Debug)]
pub struct ScaleByLion {
    b1: f64,
    b2: f64,
    m: Vec<DMatrix<f64>>,
}

impl Transform for ScaleByLion {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        ensure_like(&mut self.m, ctx.params);
        let (b1, b2) = (self.b1, self.b2);
        for (u, m) in u.iter_mut().zip(&mut self.m) {
            for (ui, mi) in u.iter_mut().zip(m.iter_mut()) {
                let g = *ui;
                *ui = sign0(b1 * *mi + (1.0 - b1) * g);
                *mi = b2 * *mi + (1.0 - b2) * g;
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "scale_by_lion",
    summary: "u ← sign(b1·m + (1−b1)·u); m ← b2·m + (1−b2)·u",
    args: &[
        Arg {
            name: "b1",
            kind: ArgKind::Real(DECAY),
            default: 0.9,
        },
        Arg {
            name: "b2",
            kind: ArgKind::Real(DECAY),
            default: 0.99,
        },
    ],
    side: |_| Side::Neither,
    why: "an entry-wise sign",
    build: |a| {
        Box::new(ScaleByLion {
            b1: a[0],
            b2: a[1],
            m: Vec::new(),
        })
    },
};
