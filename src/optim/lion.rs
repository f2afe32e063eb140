use super::sign::sign0;
use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, check_shapes, ensure_like,
};
use nalgebra::DMatrix;

/// Lion (numerics §7; Chen et al. 2023): `c = sign(β1 m + (1−β1)G)`, `m ← β2 m + (1−β2)G`,
/// `W ← W − lr·c`, with β1 = 0.9, β2 = 0.99. Coordinate-wise.
#[derive(Clone, Debug)]
pub struct Lion {
    /// Interpolation β1 of the step direction.
    pub beta1: f64,
    /// Decay β2 of the momentum.
    pub beta2: f64,
    m: Vec<DMatrix<f64>>,
}

impl Lion {
    /// Zero-state Lion.
    pub fn new(beta1: f64, beta2: f64) -> Self {
        Self {
            beta1,
            beta2,
            m: Vec::new(),
        }
    }
}

impl Optimizer for Lion {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        ensure_like(&mut self.m, params);
        let (b1, b2) = (self.beta1, self.beta2);
        for ((p, g), m) in params.iter_mut().zip(grads).zip(&mut self.m) {
            for ((w, &gi), mi) in p.iter_mut().zip(g.iter()).zip(m.iter_mut()) {
                *w -= lr * sign0(b1 * *mi + (1.0 - b1) * gi);
                *mi = b2 * *mi + (1.0 - b2) * gi;
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "lion",
    variant: "Lion",
    title: "Lion",
    class: Class::CoordinateWise,
    hypers: &[Hyper::Beta1, Hyper::Beta2],
    defaults: &[(Hyper::Beta2, 0.99)],
    zoo_arg: None,
    lr: 0.002,
    color: [90, 60, 30],
    sensing: SensingDefaults {
        lr: 3e-4,
        grid: &[1e-4, 3e-4, 1e-3, 3e-3],
        schedule: Schedule::Cosine,
    },
    chain: Some(|s| format!("scale_by_lion(b1={}, b2={})", s.beta1, s.beta2)),
    build: |s| Box::new(Lion::new(s.beta1, s.beta2)),
};
