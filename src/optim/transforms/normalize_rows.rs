use super::{Context, Side, Transform, TransformInfo};
use nalgebra::DMatrix;

/// Row normalisation: each row of each matrix divided by its Euclidean norm (a zero row stays
/// 0). `W ↦ W·Q` rotates every row and keeps its norm, so it commutes with the right action;
/// `W ↦ Q·W` mixes rows, so not with the left.
#[derive(Clone, Copy, Debug)]
pub struct NormalizeRows;

impl Transform for NormalizeRows {
    fn apply(&mut self, u: &mut [DMatrix<f64>], _: &Context<'_>) {
        for m in u {
            for mut row in m.row_iter_mut() {
                let n = row.norm();
                if n > 0.0 {
                    row /= n;
                }
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(*self)
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "normalize_rows",
    summary: "each row of each matrix divided by its norm",
    args: &[],
    side: |_| Side::Right,
    why: "row norms are kept by W·Q (right) but mixed by Q·W",
    build: |_| Box::new(NormalizeRows),
};
