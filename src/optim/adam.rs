use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, Statistic, check_shapes,
    ensure_like,
};
use crate::arith::Ops;
use nalgebra::DMatrix;
use rayon::prelude::*;

/// Adam in the PyTorch convention (numerics §2; Kingma & Ba 2015):
/// `m ← β1 m + (1−β1)G`, `v ← β2 v + (1−β2)G⊙G`, `W ← W − lr·m̂/(√v̂ + ε)` with
/// `m̂ = m/(1−β1^t)`, `v̂ = v/(1−β2^t)`. Dense state; an entry whose denominator is exactly 0
/// gets no update. Coordinate-wise, so not equivariant under `W → QW`.
#[derive(Clone, Debug)]
pub struct Adam {
    /// β1 in [0, 1).
    pub beta1: f64,
    /// β2 in [0, 1).
    pub beta2: f64,
    /// ε ≥ 0, outside the square root.
    pub eps: f64,
    t: i32,
    m: Vec<DMatrix<f64>>,
    v: Vec<DMatrix<f64>>,
}

impl Adam {
    /// Zero-state Adam.
    pub fn new(beta1: f64, beta2: f64, eps: f64) -> Self {
        Self {
            beta1,
            beta2,
            eps,
            t: 0,
            m: Vec::new(),
            v: Vec::new(),
        }
    }
}

impl Optimizer for Adam {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        ensure_like(&mut self.m, params);
        ensure_like(&mut self.v, params);
        self.t = self.t.saturating_add(1);
        let (b1, b2, eps) = (self.beta1, self.beta2, self.eps);
        let bc1 = 1.0 - b1.powi(self.t);
        let bc2 = 1.0 - b2.powi(self.t);
        let c = [b1, b2, eps, bc1, bc2, lr];
        let entries: usize = params.iter().map(|p| p.len()).sum();
        if entries < PAR_MIN {
            for (((p, g), m), v) in params
                .iter_mut()
                .zip(grads)
                .zip(&mut self.m)
                .zip(&mut self.v)
            {
                adam_update(
                    p.as_mut_slice(),
                    g.as_slice(),
                    m.as_mut_slice(),
                    v.as_mut_slice(),
                    c,
                );
            }
            return;
        }
        // Entrywise, so blocks on any thread give the same bits.
        params
            .par_iter_mut()
            .zip(grads)
            .zip(&mut self.m)
            .zip(&mut self.v)
            .for_each(|(((p, g), m), v)| {
                p.as_mut_slice()
                    .par_chunks_mut(PAR_BLOCK)
                    .zip(g.as_slice().par_chunks(PAR_BLOCK))
                    .zip(m.as_mut_slice().par_chunks_mut(PAR_BLOCK))
                    .zip(v.as_mut_slice().par_chunks_mut(PAR_BLOCK))
                    .for_each(|(((w, g), m), v)| adam_update(w, g, m, v, c));
            });
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        super::moments_representable(INFO.title, grads, self.eps, Statistic::Squares)
    }
}

/// Parameters from which a step is shared out over the threads of the current rayon pool (the
/// attention model's 104,896; the key and gauge labs' few thousand stay on the calling thread,
/// where handing over would cost more than the update).
const PAR_MIN: usize = 1 << 15;
/// Entries per task of a shared-out step.
const PAR_BLOCK: usize = 1 << 12;

crate::linalg::dispatch! {
    /// One Adam update of the entries of one matrix, compiled per arithmetic.
    /// `c` holds β1, β2, ε, the two bias corrections and the learning rate.
    fn adam_update(w: &mut [f64], g: &[f64], m: &mut [f64], v: &mut [f64], c: [f64; 6])
        => adam_update_impl
}

#[inline(always)]
fn adam_update_impl<A: Ops>(w: &mut [f64], g: &[f64], m: &mut [f64], v: &mut [f64], c: [f64; 6]) {
    let [b1, b2, eps, bc1, bc2, lr] = c;
    for (((w, &gi), mi), vi) in w.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
        *mi = A::madd(b1, *mi, (1.0 - b1) * gi);
        *vi = A::madd(b2, *vi, (1.0 - b2) * gi * gi);
        let denom = (*vi / bc2).sqrt() + eps;
        if denom != 0.0 {
            *w -= lr * (*mi / bc1) / denom;
        }
    }
}

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "adam",
    variant: "Adam",
    title: "Adam",
    class: Class::CoordinateWise,
    hypers: &[Hyper::Beta1, Hyper::Beta2, Hyper::Eps],
    defaults: &[],
    zoo_arg: None,
    lr: 0.01,
    color: [213, 94, 0],
    sensing: SensingDefaults {
        lr: 0.01,
        grid: &[1e-3, 1e-2, 3e-2],
        schedule: Schedule::Constant,
    },
    chain: Some(|s| {
        format!(
            "scale_by_adam(b1={}, b2={}, eps={})",
            s.beta1, s.beta2, s.eps
        )
    }),
    build: |s| Box::new(Adam::new(s.beta1, s.beta2, s.eps)),
};
