use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, check_shapes, ensure_like,
};
use nalgebra::DMatrix;

/// Adagrad (Duchi, Hazan & Singer 2011; docs/numerics.md, "Update rules"): every entry keeps
/// the sum of its squared gradients, `s ← s + G⊙G`, and steps by `W ← W − lr·G/(√s + ε)`.
/// An entry whose denominator is exactly 0 gets no update. The per-entry denominator makes it
/// coordinate-wise, so not equivariant under `W → QW`.
#[derive(Clone, Debug)]
pub struct Adagrad {
    /// ε ≥ 0, outside the square root.
    pub eps: f64,
    sum: Vec<DMatrix<f64>>,
}

impl Adagrad {
    /// Zero-state Adagrad.
    pub fn new(eps: f64) -> Self {
        Self {
            eps,
            sum: Vec::new(),
        }
    }
}

impl Optimizer for Adagrad {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        ensure_like(&mut self.sum, params);
        for ((p, g), s) in params.iter_mut().zip(grads).zip(&mut self.sum) {
            for ((w, &gi), si) in p.iter_mut().zip(g.iter()).zip(s.iter_mut()) {
                *si += gi * gi;
                let denom = si.sqrt() + self.eps;
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
        super::squares_representable(INFO.title, grads, self.eps, false)
    }
}

/// The registry entry. Not in the paper's zoo: the rates are ours (docs/gauge-lab.md).
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "adagrad",
    variant: "Adagrad",
    title: "Adagrad",
    class: Class::CoordinateWise,
    hypers: &[Hyper::Eps],
    defaults: &[],
    zoo_arg: None,
    lr: 0.05,
    color: [0, 110, 110],
    sensing: SensingDefaults {
        lr: 1e-2,
        grid: &[1e-3, 3e-3, 1e-2, 3e-2],
        schedule: Schedule::Constant,
    },
    build: |s| Box::new(Adagrad::new(s.eps)),
};
