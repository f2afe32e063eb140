use super::{Context, Side, Transform, TransformInfo};
use nalgebra::DMatrix;

/// Column normalisation: each column of each matrix divided by its Euclidean norm (a zero
/// column stays 0). `W ↦ Q·W` rotates every column and keeps its norm, so it commutes with the
/// left action; `W ↦ W·Q` mixes columns, so not with the right.
#[derive(Clone, Copy, Debug)]
pub struct NormalizeColumns;

impl Transform for NormalizeColumns {
    fn apply(&mut self, u: &mut [DMatrix<f64>], _: &Context<'_>) {
        for m in u {
            for mut col in m.column_iter_mut() {
                let n = col.norm();
                if n > 0.0 {
                    col /= n;
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
    name: "normalize_columns",
    summary: "each column of each matrix divided by its norm",
    args: &[],
    side: |_| Side::Left,
    why: "column norms are kept by Q·W (left) but mixed by W·Q",
    build: |_| Box::new(NormalizeColumns),
};
