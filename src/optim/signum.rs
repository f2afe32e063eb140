use super::sign::sign0;
use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, axpby, check_shapes, ensure_like,
};
use nalgebra::DMatrix;

/// Signum (numerics §7; Bernstein et al. 2018): `m ← βm + (1−β)G`, `W ← W − lr·sign(m)`, β = 0.9,
/// sign(0) = 0. Coordinate-wise.
#[derive(Clone, Debug)]
pub struct Signum {
    /// Momentum β in [0, 1).
    pub beta: f64,
    m: Vec<DMatrix<f64>>,
}

impl Signum {
    /// Zero-state signum.
    pub fn new(beta: f64) -> Self {
        Self {
            beta,
            m: Vec::new(),
        }
    }
}

impl Optimizer for Signum {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        ensure_like(&mut self.m, params);
        for ((p, g), m) in params.iter_mut().zip(grads).zip(&mut self.m) {
            axpby(m, 1.0 - self.beta, g, self.beta);
            for (w, &mi) in p.iter_mut().zip(m.iter()) {
                *w -= lr * sign0(mi);
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "signum",
    variant: "Signum",
    title: "Signum",
    class: Class::CoordinateWise,
    hypers: &[Hyper::Beta1],
    defaults: &[],
    zoo_arg: None,
    lr: 0.002,
    color: [0, 158, 115],
    sensing: SensingDefaults {
        lr: 3e-3,
        grid: &[1e-4, 3e-4, 1e-3, 3e-3],
        schedule: Schedule::Cosine,
    },
    chain: Some(|s| format!("ema(decay={}, debias=false) | scale_by_sign()", s.beta1)),
    build: |s| Box::new(Signum::new(s.beta1)),
};
