use super::{Arg, ArgKind, Context, Side, Transform, TransformInfo};
use crate::validate::Range;
use nalgebra::DMatrix;

/// Multiplies the update by a constant, optax's `scale`: `u ← factor·u` (factor 1 leaves u
/// untouched, bit for bit). Commutes with both rotations.
#[derive(Clone, Debug)]
pub struct Scale {
    factor: f64,
}

impl Transform for Scale {
    fn apply(&mut self, u: &mut [DMatrix<f64>], _: &Context<'_>) {
        if self.factor != 1.0 {
            for m in u {
                *m *= self.factor;
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "scale",
    summary: "u ← factor·u",
    args: &[Arg {
        name: "factor",
        kind: ArgKind::Real(Range::closed(-1e6, 1e6)),
        default: 1.0,
    }],
    side: |_| Side::Both,
    why: "a scalar multiple: a rotation passes through it",
    build: |a| Box::new(Scale { factor: a[0] }),
};
