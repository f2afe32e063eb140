use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, axpby, check_shapes, ensure_like,
};
use crate::linalg::{mul_into, tr_mul_into};
use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

/// How Muon computes the orthogonal polar factor O(B) of its momentum (numerics §2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Polar {
    /// Five quintic Newton–Schulz iterations, see [`newton_schulz`].
    #[default]
    NewtonSchulz,
    /// Exact polar factor `U Vᵀ` from an SVD, see [`polar_svd`]. Allocates per step.
    Svd,
}

/// Newton–Schulz coefficients (a, b, c) of the quintic iteration (numerics §2; Jordan et al. 2024).
pub const NS_COEFFS: (f64, f64, f64) = (3.4445, -4.7750, 2.0315);
/// Number of Newton–Schulz iterations (numerics §2).
pub const NS_STEPS: usize = 5;

/// Scratch buffers for [`newton_schulz`] on one matrix shape.
#[derive(Clone, Debug)]
pub struct NsScratch {
    y: DMatrix<f64>,
    a: DMatrix<f64>,
    p: DMatrix<f64>,
    tmp: DMatrix<f64>,
}

impl NsScratch {
    fn fits(&self, rows: usize, cols: usize) -> bool {
        self.y.shape() == (rows.max(cols), rows.min(cols))
    }

    /// Buffers for an `rows × cols` input.
    pub fn new(rows: usize, cols: usize) -> Self {
        let (tall, small) = (rows.max(cols), rows.min(cols));
        Self {
            y: DMatrix::zeros(tall, small),
            a: DMatrix::zeros(small, small),
            p: DMatrix::zeros(small, small),
            tmp: DMatrix::zeros(tall, small),
        }
    }
}

/// Approximate orthogonal polar factor of `b` (`m × n`) by numerics §2's Newton–Schulz iteration:
/// `X ← B/(‖B‖F + 1e-7)`, transposed if m > n, then 5 times `A = XXᵀ; X ← aX + (bA + cA²)X`.
/// Computed in the transposed (tall) form `Y = Xᵀ`, `Y ← aY + Y(bA + cA²)` with `A = YᵀY`,
/// which is the same iteration. Writes `out` (`m × n`); allocation-free with `scratch` from
/// [`NsScratch::new`]`(m, n)`. Left-equivariant: NS(QB) = Q·NS(B) for orthogonal Q, up to rounding.
/// Panics if `out` is not `m × n` or `scratch` was made for another shape.
pub fn newton_schulz(b: &DMatrix<f64>, out: &mut DMatrix<f64>, scratch: &mut NsScratch) {
    newton_schulz_dispatch(b, out, scratch)
}

crate::linalg::avx2_dispatch! {
    /// [`newton_schulz`], compiled with AVX2 where the CPU has it.
    fn newton_schulz_dispatch(b: &DMatrix<f64>, out: &mut DMatrix<f64>, scratch: &mut NsScratch)
        => newton_schulz_impl
}

#[inline(always)]
fn newton_schulz_impl(b: &DMatrix<f64>, out: &mut DMatrix<f64>, scratch: &mut NsScratch) {
    let (a_c, b_c, c_c) = NS_COEFFS;
    let tall = b.nrows() > b.ncols();
    let NsScratch { y, a, p, tmp } = scratch;
    if tall {
        y.copy_from(b);
    } else {
        b.transpose_to(y);
    }
    *y /= b.norm() + 1e-7;
    for _ in 0..NS_STEPS {
        tr_mul_into(a, y, y);
        mul_into(p, a, a);
        axpby(p, b_c, a, c_c);
        mul_into(tmp, y, p);
        axpby(y, 1.0, tmp, a_c);
    }
    if tall {
        out.copy_from(y);
    } else {
        y.transpose_to(out);
    }
}

/// Exact orthogonal polar factor of `b` (`m × n`): `U_r V_rᵀ` over the singular triplets with
/// σ > max(m, n)·ε_mach·σ_max, so a rank-deficient `b` maps to the unique partial isometry and
/// O(QB) = Q·O(B) holds. Allocates (nalgebra SVD).
pub fn polar_svd(b: &DMatrix<f64>) -> DMatrix<f64> {
    let svd = b.clone().svd(true, true);
    let (u, v_t) = (svd.u.expect("u requested"), svd.v_t.expect("v_t requested"));
    let s = &svd.singular_values;
    let tol = b.nrows().max(b.ncols()) as f64 * f64::EPSILON * s.max();
    let mut out = DMatrix::zeros(b.nrows(), b.ncols());
    for i in 0..s.len() {
        if s[i] > tol {
            out.ger(1.0, &u.column(i), &v_t.row(i).transpose(), 1.0);
        }
    }
    out
}

/// Muon (numerics §2; Jordan et al. 2024): `B ← μB + G` (no Nesterov), `W ← W − lr·O(B)` for each
/// matrix separately, with O the orthogonal polar factor. Equivariant under `W → QW`.
#[derive(Clone, Debug)]
pub struct Muon {
    /// Momentum μ in [0, 1).
    pub momentum: f64,
    /// Orthogonaliser.
    pub polar: Polar,
    buf: Vec<DMatrix<f64>>,
    ortho: Vec<DMatrix<f64>>,
    scratch: Vec<NsScratch>,
}

impl Muon {
    /// Zero-state Muon.
    pub fn new(momentum: f64, polar: Polar) -> Self {
        Self {
            momentum,
            polar,
            buf: Vec::new(),
            ortho: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

impl Optimizer for Muon {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        ensure_like(&mut self.buf, params);
        ensure_like(&mut self.ortho, params);
        let fits = self.scratch.len() == params.len()
            && self
                .scratch
                .iter()
                .zip(params.iter())
                .all(|(s, p)| s.fits(p.nrows(), p.ncols()));
        if !fits {
            self.scratch = params
                .iter()
                .map(|p| NsScratch::new(p.nrows(), p.ncols()))
                .collect();
        }
        for (i, (p, g)) in params.iter_mut().zip(grads).enumerate() {
            axpby(&mut self.buf[i], 1.0, g, self.momentum);
            match self.polar {
                Polar::NewtonSchulz => {
                    newton_schulz(&self.buf[i], &mut self.ortho[i], &mut self.scratch[i])
                }
                Polar::Svd => self.ortho[i] = polar_svd(&self.buf[i]),
            }
            axpby(p, -lr, &self.ortho[i], 1.0);
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }
}

/// The registry entry.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "muon",
    variant: "Muon",
    title: "Muon",
    class: Class::Equivariant,
    hypers: &[Hyper::Momentum, Hyper::Polar],
    defaults: &[],
    zoo_arg: None,
    lr: 0.02,
    color: [204, 121, 167],
    sensing: SensingDefaults {
        lr: 0.1,
        grid: &[3e-3, 1e-2, 3e-2, 0.1],
        schedule: Schedule::Cosine,
    },
    build: |s| Box::new(Muon::new(s.momentum, s.polar)),
};
