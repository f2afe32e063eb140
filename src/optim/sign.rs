use super::{Class, Optimizer, RuleInfo, Schedule, SensingDefaults, check_shapes};
use nalgebra::DMatrix;

/// Sign descent (numerics §2): `W ← W − lr·sign(G)` with sign(0) = 0. Steepest descent in the max
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

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "sign",
    variant: "Sign",
    title: "Sign descent",
    class: Class::CoordinateWise,
    hypers: &[],
    defaults: &[],
    zoo_arg: None,
    lr: 0.002,
    color: [0, 158, 115],
    // Not in the paper's zoo: Signum's grid and schedule (a constant sign step cannot settle).
    sensing: SensingDefaults {
        lr: 3e-4,
        grid: &[1e-4, 3e-4, 1e-3, 3e-3],
        schedule: Schedule::Cosine,
    },
    chain: Some(|_| "scale_by_sign()".into()),
    build: |_| Box::new(SignDescent),
};
