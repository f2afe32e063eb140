use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, Statistic, check_shapes,
    ensure_like,
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
        super::moments_representable(INFO.title, grads, self.eps, Statistic::Squares)?;
        // The running sum grows every step: it may pass f64's largest number on its own.
        let sums = self.sum.iter().flat_map(|s| s.iter());
        let gs = grads.iter().flat_map(|g| g.iter());
        if let Some((s, g)) = sums.zip(gs).find(|(s, g)| (**s + **g * **g).is_infinite()) {
            return Err(format!(
                "Adagrad cannot represent this run: its running sum of g² ({s:.2e}) plus \
                 {g:.2e}² passes f64's largest number, so the update would be 0"
            ));
        }
        Ok(())
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
    chain: Some(|s| format!("scale_by_rss(eps={})", s.eps)),
    build: |s| Box::new(Adagrad::new(s.eps)),
};
