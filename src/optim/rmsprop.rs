use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, Statistic, check_shapes,
    ensure_like,
};
use nalgebra::DMatrix;

/// RMSProp (numerics §2; Tieleman & Hinton 2012): `v ← αv + (1−α)G⊙G`, `W ← W − lr·G/(√v + ε)`,
/// no bias correction; an entry whose denominator is exactly 0 gets no update. Coordinate-wise.
#[derive(Clone, Debug)]
pub struct RmsProp {
    /// Decay α in [0, 1).
    pub alpha: f64,
    /// ε ≥ 0, outside the square root.
    pub eps: f64,
    v: Vec<DMatrix<f64>>,
}

impl RmsProp {
    /// Zero-state RMSProp.
    pub fn new(alpha: f64, eps: f64) -> Self {
        Self {
            alpha,
            eps,
            v: Vec::new(),
        }
    }
}

impl Optimizer for RmsProp {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        ensure_like(&mut self.v, params);
        let (a, eps) = (self.alpha, self.eps);
        for ((p, g), v) in params.iter_mut().zip(grads).zip(&mut self.v) {
            for ((w, &gi), vi) in p.iter_mut().zip(g.iter()).zip(v.iter_mut()) {
                *vi = a * *vi + (1.0 - a) * gi * gi;
                let denom = vi.sqrt() + eps;
                if denom != 0.0 {
                    *w -= lr * gi / denom;
                }
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        super::moments_representable(INFO.title, grads, self.eps, Statistic::Squares)
    }
}

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "rmsprop",
    variant: "RmsProp",
    title: "RMSProp",
    class: Class::CoordinateWise,
    hypers: &[Hyper::Alpha, Hyper::Eps],
    defaults: &[],
    zoo_arg: None,
    lr: 0.01,
    color: [230, 159, 0],
    sensing: SensingDefaults {
        lr: 1e-4,
        grid: &[1e-4, 3e-4, 1e-3, 3e-3, 1e-2],
        schedule: Schedule::Cosine,
    },
    chain: Some(|s| format!("scale_by_rms(decay={}, eps={})", s.alpha, s.eps)),
    build: |s| Box::new(RmsProp::new(s.alpha, s.eps)),
};
