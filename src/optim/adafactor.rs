use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, Statistic, check_shapes,
};
use nalgebra::{DMatrix, DVector};

/// Adafactor as in numerics §7 (Shazeer & Stern 2018, without relative step, clipping or
/// momentum): per matrix, `r ← β2 r + (1−β2) rowmean(G⊙G)`, `c ← β2 c + (1−β2) colmean(G⊙G)`,
/// `V̂ = r cᵀ / mean(r)`, `W ← W − lr·G/(√V̂ + ε)`; no bias correction. An entry whose
/// denominator is exactly 0 gets no update. Coordinate-wise.
#[derive(Clone, Debug)]
pub struct Adafactor {
    /// Decay β2 of the factored second moment.
    pub beta2: f64,
    /// ε ≥ 0, outside the root.
    pub eps: f64,
    row: Vec<DVector<f64>>,
    col: Vec<DVector<f64>>,
}

impl Adafactor {
    /// Zero-state Adafactor.
    pub fn new(beta2: f64, eps: f64) -> Self {
        Self {
            beta2,
            eps,
            row: Vec::new(),
            col: Vec::new(),
        }
    }
}

impl Optimizer for Adafactor {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        if self.row.len() != params.len()
            || self
                .row
                .iter()
                .zip(params.iter())
                .any(|(r, p)| r.len() != p.nrows())
        {
            self.row = params.iter().map(|p| DVector::zeros(p.nrows())).collect();
            self.col = params.iter().map(|p| DVector::zeros(p.ncols())).collect();
        }
        let b2 = self.beta2;
        for (k, (p, g)) in params.iter_mut().zip(grads).enumerate() {
            let (rows, cols) = g.shape();
            let (r, c) = (&mut self.row[k], &mut self.col[k]);
            for i in 0..rows {
                let mean = (0..cols).map(|j| g[(i, j)] * g[(i, j)]).sum::<f64>() / cols as f64;
                r[i] = b2 * r[i] + (1.0 - b2) * mean;
            }
            for j in 0..cols {
                let mean = g.column(j).norm_squared() / rows as f64;
                c[j] = b2 * c[j] + (1.0 - b2) * mean;
            }
            let r_mean = r.mean();
            if r_mean == 0.0 {
                continue;
            }
            for j in 0..cols {
                for i in 0..rows {
                    let denom = (r[i] * c[j] / r_mean).sqrt() + self.eps;
                    if denom != 0.0 {
                        p[(i, j)] -= lr * g[(i, j)] / denom;
                    }
                }
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        super::moments_representable(INFO.title, grads, self.eps, Statistic::FourthPowers)
    }
}

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "adafactor",
    variant: "Adafactor",
    title: "Adafactor",
    class: Class::CoordinateWise,
    hypers: &[Hyper::Beta2, Hyper::Eps],
    defaults: &[],
    zoo_arg: None,
    lr: 0.01,
    color: [150, 130, 0],
    sensing: SensingDefaults {
        lr: 3e-4,
        grid: &[3e-4, 1e-3, 3e-3, 1e-2],
        schedule: Schedule::Constant,
    },
    chain: Some(|s| format!("scale_by_adafactor(decay={}, eps={})", s.beta2, s.eps)),
    build: |s| Box::new(Adafactor::new(s.beta2, s.eps)),
};
