use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, Statistic, check_shapes,
};
use crate::linalg::{add_gram_into, add_outer_into, mul_into};
use nalgebra::DMatrix;

/// Shampoo as in numerics §7 (Gupta et al. 2018): per matrix `L ← L + GGᵀ`, `R ← R + GᵀG` from
/// zero; at t = 1, 1 + every, 1 + 2·every, … recompute `P_L = (L + λI)^(−1/4)` and
/// `P_R = (R + λI)^(−1/4)` by symmetric eigendecomposition with eigenvalues clamped ≥ 1e-6;
/// step `W ← W − lr·P_L G P_R`. Equivariant under (U, V) → (UQ, VQ). Allocates only when it
/// refreshes the roots (nalgebra eigendecomposition, every 20 steps).
#[derive(Clone, Debug)]
pub struct Shampoo {
    /// Damping λ.
    pub lambda: f64,
    /// Steps between refreshes of the inverse roots.
    pub every: usize,
    t: usize,
    left: Vec<DMatrix<f64>>,
    right: Vec<DMatrix<f64>>,
    p_left: Vec<DMatrix<f64>>,
    p_right: Vec<DMatrix<f64>>,
    tmp: Vec<DMatrix<f64>>,
    update: Vec<DMatrix<f64>>,
}

impl Shampoo {
    /// Zero-state Shampoo with damping `lambda`, refreshing every `every` steps.
    pub fn new(lambda: f64, every: usize) -> Self {
        Self {
            lambda,
            every: every.max(1),
            t: 0,
            left: Vec::new(),
            right: Vec::new(),
            p_left: Vec::new(),
            p_right: Vec::new(),
            tmp: Vec::new(),
            update: Vec::new(),
        }
    }
}

/// `(A + λI)^(−1/4)` of a symmetric matrix, eigenvalues clamped at 1e-6 first.
pub(crate) fn inverse_fourth_root(a: &DMatrix<f64>, lambda: f64) -> DMatrix<f64> {
    let n = a.nrows();
    let damped = a + DMatrix::<f64>::identity(n, n) * lambda;
    let eig = damped.symmetric_eigen();
    let d = eig.eigenvalues.map(|e| libm::pow(e.max(1e-6), -0.25));
    &eig.eigenvectors * DMatrix::from_diagonal(&d) * eig.eigenvectors.transpose()
}

impl Optimizer for Shampoo {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        if self.left.len() != params.len() {
            let sq = |n: usize| DMatrix::<f64>::zeros(n, n);
            self.left = params.iter().map(|p| sq(p.nrows())).collect();
            self.right = params.iter().map(|p| sq(p.ncols())).collect();
            self.p_left = self.left.clone();
            self.p_right = self.right.clone();
            self.tmp = params
                .iter()
                .map(|p| DMatrix::zeros(p.nrows(), p.ncols()))
                .collect();
            self.update = self.tmp.clone();
        }
        self.t += 1;
        let refresh = (self.t - 1).is_multiple_of(self.every);
        for (k, (p, g)) in params.iter_mut().zip(grads).enumerate() {
            add_outer_into(&mut self.left[k], g);
            add_gram_into(&mut self.right[k], g);
            if refresh {
                self.p_left[k] = inverse_fourth_root(&self.left[k], self.lambda);
                self.p_right[k] = inverse_fourth_root(&self.right[k], self.lambda);
            }
            mul_into(&mut self.tmp[k], &self.p_left[k], g);
            mul_into(&mut self.update[k], &self.tmp[k], &self.p_right[k]);
            super::axpby(p, -lr, &self.update[k], 1.0);
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        super::moments_representable(
            INFO.title,
            grads,
            self.lambda.sqrt(),
            Statistic::SumOfSquares,
        )
    }
}

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "shampoo",
    variant: "Shampoo",
    title: "Shampoo",
    class: Class::Equivariant,
    hypers: &[Hyper::Damping, Hyper::RootEvery],
    defaults: &[],
    zoo_arg: None,
    lr: 0.05,
    color: [120, 94, 240],
    sensing: SensingDefaults {
        lr: 0.03,
        grid: &[0.03, 0.1, 0.3, 1.0],
        schedule: Schedule::Constant,
    },
    chain: Some(|s| {
        format!(
            "scale_by_shampoo(damping={}, every={})",
            s.damping, s.root_every
        )
    }),
    build: |s| Box::new(Shampoo::new(s.damping, s.root_every)),
};
