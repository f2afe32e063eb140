use super::{Optimizer, check_shapes};
use nalgebra::DMatrix;

/// Sign descent (SPEC §2): `W ← W − lr·sign(G)` with sign(0) = 0. Steepest descent in the max
/// norm; coordinate-wise, so not equivariant.
#[derive(Clone, Copy, Debug, Default)]
pub struct SignDescent;

/// sign(x) with sign(±0) = 0 (f64::signum would give ±1).
pub fn sign0(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

impl Optimizer for SignDescent {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        for (p, g) in params.iter_mut().zip(grads) {
            for (w, &gi) in p.iter_mut().zip(g.iter()) {
                *w -= lr * sign0(gi);
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(*self)
    }
}
