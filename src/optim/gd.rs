use super::{Optimizer, axpby, check_shapes};
use nalgebra::DMatrix;

/// Plain gradient descent, `W ← W − lr·G` (SPEC §2). Stateless; equivariant under `W → QW`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gd;

impl Optimizer for Gd {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        for (p, g) in params.iter_mut().zip(grads) {
            axpby(p, -lr, g, 1.0);
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(*self)
    }
}
