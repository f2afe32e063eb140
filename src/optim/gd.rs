use super::{Class, Optimizer, RuleInfo, Schedule, SensingDefaults, axpby, check_shapes};
use nalgebra::DMatrix;

/// Plain gradient descent, `W ← W − lr·G` (numerics §2). Stateless; equivariant under `W → QW`.
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

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "gd",
    variant: "Gd",
    title: "Gradient descent",
    class: Class::Equivariant,
    hypers: &[],
    defaults: &[],
    zoo_arg: None,
    lr: 1.0,
    color: [0, 114, 178],
    sensing: SensingDefaults {
        lr: 0.01,
        grid: &[0.01, 0.03, 0.1, 0.3],
        schedule: Schedule::Constant,
    },
    chain: Some(|_| "scale(1)".into()),
    build: |_| Box::new(Gd),
};
