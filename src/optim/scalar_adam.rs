use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, Statistic, axpby, check_shapes,
    ensure_like,
};
use nalgebra::DMatrix;

/// Scalar-Adam (numerics §2, §7): Adam's first moment per entry, but one second moment `v` for the
/// whole parameter set, an EMA of mean(G⊙G) over every entry of every matrix. Bias-corrected,
/// ε outside the root. The denominator is one number, so the rule is equivariant under `W → QW`
/// (the equivariant control with adaptive step size).
#[derive(Clone, Debug)]
pub struct ScalarAdam {
    /// β1 in [0, 1).
    pub beta1: f64,
    /// β2 in [0, 1).
    pub beta2: f64,
    /// ε ≥ 0, outside the square root.
    pub eps: f64,
    t: i32,
    m: Vec<DMatrix<f64>>,
    v: f64,
}

impl ScalarAdam {
    /// Zero-state scalar-Adam.
    pub fn new(beta1: f64, beta2: f64, eps: f64) -> Self {
        Self {
            beta1,
            beta2,
            eps,
            t: 0,
            m: Vec::new(),
            v: 0.0,
        }
    }
}

impl Optimizer for ScalarAdam {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        ensure_like(&mut self.m, params);
        self.t = self.t.saturating_add(1);
        let (b1, b2) = (self.beta1, self.beta2);
        let count: usize = grads.iter().map(|g| g.len()).sum();
        let mean_sq = grads.iter().map(|g| g.norm_squared()).sum::<f64>() / count.max(1) as f64;
        self.v = b2 * self.v + (1.0 - b2) * mean_sq;
        let denom = (self.v / (1.0 - b2.powi(self.t))).sqrt() + self.eps;
        if denom == 0.0 {
            for (m, g) in self.m.iter_mut().zip(grads) {
                axpby(m, 1.0 - b1, g, b1);
            }
            return;
        }
        let scale = lr / ((1.0 - b1.powi(self.t)) * denom);
        for ((p, g), m) in params.iter_mut().zip(grads).zip(&mut self.m) {
            axpby(m, 1.0 - b1, g, b1);
            axpby(p, -scale, m, 1.0);
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        super::moments_representable(INFO.title, grads, self.eps, Statistic::SumOfSquares)
    }
}

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "scalar_adam",
    variant: "ScalarAdam",
    title: "Scalar-Adam",
    class: Class::Equivariant,
    hypers: &[Hyper::Beta1, Hyper::Beta2, Hyper::Eps],
    defaults: &[],
    zoo_arg: None,
    lr: 0.01,
    color: [86, 180, 233],
    sensing: SensingDefaults {
        lr: 1e-3,
        grid: &[1e-3, 3e-3, 1e-2, 3e-2],
        schedule: Schedule::Constant,
    },
    chain: Some(|s| {
        format!(
            "scale_by_adam(b1={}, b2={}, eps={}, p=0)",
            s.beta1, s.beta2, s.eps
        )
    }),
    build: |s| Box::new(ScalarAdam::new(s.beta1, s.beta2, s.eps)),
};
