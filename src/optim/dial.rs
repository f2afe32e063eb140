use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, Statistic, check_shapes,
    ensure_like,
};
use nalgebra::DMatrix;

/// The anisotropy dial (numerics §7, the paper §7): Adam's moments with denominator
/// `(√v̂_i + ε)^p · (s̄ + ε)^(1−p)`, where `s̄ = √(mean of v̂ over every entry of every matrix)`.
/// p = 1 is Adam, p = 0 scalar-Adam (equivariant); in between, coordinate-wise.
#[derive(Clone, Debug)]
pub struct Dial {
    /// Anisotropy p in [0, 1].
    pub p: f64,
    /// β1 in [0, 1).
    pub beta1: f64,
    /// β2 in [0, 1).
    pub beta2: f64,
    /// ε ≥ 0.
    pub eps: f64,
    t: i32,
    m: Vec<DMatrix<f64>>,
    v: Vec<DMatrix<f64>>,
}

impl Dial {
    /// Zero-state dial at anisotropy `p`.
    pub fn new(p: f64, beta1: f64, beta2: f64, eps: f64) -> Self {
        Self {
            p,
            beta1,
            beta2,
            eps,
            t: 0,
            m: Vec::new(),
            v: Vec::new(),
        }
    }

    /// The first moment, one matrix per parameter (empty before the first step).
    pub fn first_moment(&self) -> &[DMatrix<f64>] {
        &self.m
    }

    /// The first moment sized like `params` (zero before the first step), for a rule built on
    /// the dial that moves it by other means (FlowAdam's blend).
    pub(super) fn first_moment_mut(&mut self, params: &[DMatrix<f64>]) -> &mut [DMatrix<f64>] {
        ensure_like(&mut self.m, params);
        &mut self.m
    }
}

impl Optimizer for Dial {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        ensure_like(&mut self.m, params);
        ensure_like(&mut self.v, params);
        self.t = self.t.saturating_add(1);
        let (b1, b2, eps, p) = (self.beta1, self.beta2, self.eps, self.p);
        let (bc1, bc2) = (1.0 - b1.powi(self.t), 1.0 - b2.powi(self.t));
        let mut sum = 0.0;
        let mut count = 0usize;
        for ((g, m), v) in grads.iter().zip(&mut self.m).zip(&mut self.v) {
            for ((&gi, mi), vi) in g.iter().zip(m.iter_mut()).zip(v.iter_mut()) {
                *mi = b1 * *mi + (1.0 - b1) * gi;
                *vi = b2 * *vi + (1.0 - b2) * gi * gi;
                sum += *vi / bc2;
            }
            count += g.len();
        }
        // pow(x, 1) = x and pow(x, 0) = 1 exactly, so the ends (Adam, scalar-Adam) skip the
        // call with the same bits.
        let power = |x: f64, e: f64| match e {
            1.0 => x,
            0.0 => 1.0,
            _ => libm::pow(x, e),
        };
        let shared = power((sum / count.max(1) as f64).sqrt() + eps, 1.0 - p);
        for ((w, m), v) in params.iter_mut().zip(&self.m).zip(&self.v) {
            for ((wi, &mi), &vi) in w.iter_mut().zip(m.iter()).zip(v.iter()) {
                let denom = power((vi / bc2).sqrt() + eps, p) * shared;
                if denom != 0.0 {
                    *wi -= lr * (mi / bc1) / denom;
                }
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        super::moments_representable(INFO.title, grads, self.eps, Statistic::Squares)?;
        super::moments_representable(INFO.title, grads, self.eps, Statistic::SumOfSquares)
    }
}

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "dial",
    variant: "Dial",
    title: "Anisotropy dial",
    class: Class::EquivariantAtZero(Hyper::P),
    hypers: &[Hyper::P, Hyper::Beta1, Hyper::Beta2, Hyper::Eps],
    defaults: &[],
    zoo_arg: Some(Hyper::P),
    lr: 0.01,
    color: [200, 60, 110],
    // The paper runs the dial at its anchor rate 1e-3 over scalar-Adam's grid.
    sensing: SensingDefaults {
        lr: 1e-3,
        grid: &[1e-3, 3e-3, 1e-2, 3e-2],
        schedule: Schedule::Constant,
    },
    chain: Some(|s| {
        format!(
            "scale_by_adam(b1={}, b2={}, eps={}, p={})",
            s.beta1, s.beta2, s.eps, s.p
        )
    }),
    build: |s| Box::new(Dial::new(s.p, s.beta1, s.beta2, s.eps)),
};
