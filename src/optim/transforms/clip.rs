use super::{Arg, ArgKind, Context, POSITIVE, Side, Transform, TransformInfo};
use nalgebra::DMatrix;

/// Per-coordinate clip, optax's `clip`: every entry `u_i ← min(max(u_i, −max), max)`.
/// Entry-wise: commutes with neither rotation.
#[derive(Clone, Debug)]
pub struct Clip {
    max: f64,
}

impl Transform for Clip {
    fn apply(&mut self, u: &mut [DMatrix<f64>], _: &Context<'_>) {
        for x in u.iter_mut().flat_map(|m| m.iter_mut()) {
            *x = x.clamp(-self.max, self.max);
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "clip",
    summary: "each entry clipped to [−max, max]",
    args: &[Arg {
        name: "max",
        kind: ArgKind::Real(POSITIVE),
        default: 1.0,
    }],
    side: |_| Side::Neither,
    why: "entry-wise: a rotation moves mass between the clipped entries",
    build: |a| Box::new(Clip { max: a[0] }),
};
