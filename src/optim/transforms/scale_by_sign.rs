use super::{Context, Side, Transform, TransformInfo};
use crate::optim::sign0;
use nalgebra::DMatrix;

/// Sign of every entry, optax's `scale_by_sign`: `u ← sign(u)` with sign(0) = 0 (Bernstein et
/// al. 2018). Entry-wise, so it commutes with neither rotation.
#[derive(Clone, Copy, Debug)]
pub struct ScaleBySign;

impl Transform for ScaleBySign {
    fn apply(&mut self, u: &mut [DMatrix<f64>], _: &Context<'_>) {
        for x in u.iter_mut().flat_map(|m| m.iter_mut()) {
            *x = sign0(*x);
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(*self)
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "scale_by_sign",
    summary: "u ← sign(u) entry by entry, sign(0) = 0",
    args: &[],
    side: |_| Side::Neither,
    why: "entry-wise: the sign of a rotated matrix is not the rotated sign",
    build: |_| Box::new(ScaleBySign),
};
