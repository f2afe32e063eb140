use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, axpby, check_shapes, ensure_like,
};
use nalgebra::DMatrix;

/// Heavy-ball momentum SGD (numerics §2): `B ← μB + G`, `W ← W − lr·B`. Equivariant under `W → QW`.
#[derive(Clone, Debug)]
pub struct MomentumSgd {
    /// Momentum coefficient μ in [0, 1).
    pub momentum: f64,
    buf: Vec<DMatrix<f64>>,
}

impl MomentumSgd {
    /// Zero-state heavy ball with coefficient `momentum`.
    pub fn new(momentum: f64) -> Self {
        Self {
            momentum,
            buf: Vec::new(),
        }
    }
}

impl Optimizer for MomentumSgd {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        ensure_like(&mut self.buf, params);
        for ((p, g), b) in params.iter_mut().zip(grads).zip(&mut self.buf) {
            axpby(b, 1.0, g, self.momentum);
            axpby(p, -lr, b, 1.0);
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "momentum",
    variant: "Momentum",
    title: "Momentum SGD (heavy ball)",
    class: Class::Equivariant,
    hypers: &[Hyper::Momentum],
    defaults: &[],
    zoo_arg: None,
    lr: 0.1,
    color: [140, 140, 140],
    // Not in the paper's zoo: GD's grid at a tenth (μ = 0.9 makes the step ten times longer).
    sensing: SensingDefaults {
        lr: 1e-3,
        grid: &[1e-3, 3e-3, 1e-2, 3e-2],
        schedule: Schedule::Constant,
    },
    chain: Some(|s| format!("trace(decay={})", s.momentum)),
    build: |s| Box::new(MomentumSgd::new(s.momentum)),
};
