use super::{
    Class, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, axpby, check_shapes, ensure_like,
};
use crate::arith::Ops;
use crate::linalg::{mul_symmetric_with, mul_with, tr_mul_with};
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

/// Where [`newton_schulz`] runs its iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NsForm {
    /// On the tall `t × s` matrix itself: each iteration costs about `1.5·t·s² + s³`
    /// multiply-adds.
    Direct,
    /// In the `s × s` Gram space: one Gram matrix (`t·s²/2`), five iterations of small products
    /// (about `4·s³` each) and one final product (`t·s²`). The same iteration up to rounding.
    Gram,
}

impl NsForm {
    /// The form [`newton_schulz`] uses for an `rows × cols` input: [`NsForm::Gram`] when the
    /// long side is at least [`GRAM_RATIO`] times the short one (there it does at most half the
    /// work of the direct form), otherwise [`NsForm::Direct`], so square and nearly square
    /// inputs — the zoo's n × n factors, the key lab's d_k × V keys — keep the exact operations
    /// their results were computed with.
    pub fn for_shape(rows: usize, cols: usize) -> Self {
        if rows.max(cols) >= GRAM_RATIO * rows.min(cols) {
            NsForm::Gram
        } else {
            NsForm::Direct
        }
    }
}

/// Aspect ratio from which [`newton_schulz`] iterates in the Gram space ([`NsForm::for_shape`]).
pub const GRAM_RATIO: usize = 8;

/// Scratch buffers for [`newton_schulz`] on one matrix shape.
#[derive(Clone, Debug)]
pub struct NsScratch {
    y: DMatrix<f64>,
    a: DMatrix<f64>,
    p: DMatrix<f64>,
    tmp: DMatrix<f64>,
    q: DMatrix<f64>,
    total: DMatrix<f64>,
    next: DMatrix<f64>,
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
            q: DMatrix::zeros(small, small),
            total: DMatrix::zeros(small, small),
            next: DMatrix::zeros(small, small),
        }
    }
}

/// Approximate orthogonal polar factor of `b` (`m × n`) by numerics §2's Newton–Schulz iteration:
/// `X ← B/(‖B‖F + 1e-7)`, transposed if m > n, then 5 times `A = XXᵀ; X ← aX + (bA + cA²)X`.
/// Computed in the transposed (tall) form `Y = Xᵀ`, `Y ← Y·M` with `M = aI + bA + cA²` and
/// `A = YᵀY`, which is the same iteration, in the form [`NsForm::for_shape`] picks. Writes `out`
/// (`m × n`); allocation-free with `scratch` from [`NsScratch::new`]`(m, n)`. Left-equivariant:
/// NS(QB) = Q·NS(B) for orthogonal Q, up to rounding. Panics if `out` is not `m × n` or
/// `scratch` was made for another shape.
pub fn newton_schulz(b: &DMatrix<f64>, out: &mut DMatrix<f64>, scratch: &mut NsScratch) {
    newton_schulz_in(NsForm::for_shape(b.nrows(), b.ncols()), b, out, scratch)
}

/// [`newton_schulz`] in a given form (for tests and benchmarks that compare the two).
///
/// The Gram form rests on `A_{k+1} = Y_{k+1}ᵀY_{k+1} = M_k A_k M_k` (M_k is a polynomial in the
/// symmetric A_k, so it is symmetric): the five steps run on `s × s` matrices, their product
/// `T = M_0 ⋯ M_4` is accumulated, and `Y_5 = Y_0·T` is the only product with the long side
/// after the first Gram matrix. On the hyperspectral factor (2000 × 48) it agrees with the
/// direct form to about 1e-14 relative (tests/optimizers.rs) and does a quarter of its work.
pub fn newton_schulz_in(
    form: NsForm,
    b: &DMatrix<f64>,
    out: &mut DMatrix<f64>,
    scratch: &mut NsScratch,
) {
    assert_eq!(out.shape(), b.shape(), "output shape");
    assert!(scratch.fits(b.nrows(), b.ncols()), "scratch shape");
    match form {
        NsForm::Direct => direct_dispatch(b, out, scratch),
        NsForm::Gram => gram_dispatch(b, out, scratch),
    }
}

crate::linalg::dispatch! {
    /// The direct form, compiled per arithmetic.
    fn direct_dispatch(b: &DMatrix<f64>, out: &mut DMatrix<f64>, scratch: &mut NsScratch)
        => direct_impl
}

crate::linalg::dispatch! {
    /// The Gram form, compiled per arithmetic.
    fn gram_dispatch(b: &DMatrix<f64>, out: &mut DMatrix<f64>, scratch: &mut NsScratch)
        => gram_impl
}

/// `Y = B/(‖B‖F + 1e-7)` in tall form (B itself if tall, else Bᵀ); returns whether B is tall.
#[inline(always)]
fn scaled_tall(b: &DMatrix<f64>, y: &mut DMatrix<f64>) -> bool {
    let tall = b.nrows() > b.ncols();
    if tall {
        y.copy_from(b);
    } else {
        b.transpose_to(y);
    }
    *y /= crate::linalg::norm::frobenius(b) + 1e-7;
    tall
}

#[inline(always)]
fn direct_impl<A: Ops>(b: &DMatrix<f64>, out: &mut DMatrix<f64>, scratch: &mut NsScratch) {
    let (a_c, b_c, c_c) = NS_COEFFS;
    let NsScratch { y, a, p, tmp, .. } = scratch;
    let tall = scaled_tall(b, y);
    for _ in 0..NS_STEPS {
        tr_mul_with::<A>(a, y, y);
        // a = yᵀy is mirrored, so exactly symmetric.
        mul_symmetric_with::<A>(p, a);
        axpby(p, b_c, a, c_c);
        mul_with::<A>(tmp, y, p);
        axpby(y, 1.0, tmp, a_c);
    }
    if tall {
        out.copy_from(y);
    } else {
        y.transpose_to(out);
    }
}

#[inline(always)]
fn gram_impl<A: Ops>(b: &DMatrix<f64>, out: &mut DMatrix<f64>, scratch: &mut NsScratch) {
    let (a_c, b_c, c_c) = NS_COEFFS;
    let NsScratch {
        y,
        a,
        p,
        tmp,
        q,
        total,
        next,
    } = scratch;
    let tall = scaled_tall(b, y);
    tr_mul_with::<A>(a, y, y);
    for k in 0..NS_STEPS {
        // p = M_k = aI + bA + cA².
        mul_with::<A>(p, a, a);
        axpby(p, b_c, a, c_c);
        for i in 0..p.nrows() {
            p[(i, i)] += a_c;
        }
        if k == 0 {
            total.copy_from(p);
        } else {
            mul_with::<A>(next, total, p);
            std::mem::swap(total, next);
        }
        if k + 1 < NS_STEPS {
            mul_with::<A>(q, a, p);
            mul_with::<A>(a, p, q);
        }
    }
    if tall {
        mul_with::<A>(out, y, total);
    } else {
        mul_with::<A>(tmp, y, total);
        tmp.transpose_to(out);
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
    chain: Some(|s| {
        let method = match s.polar {
            Polar::NewtonSchulz => "newton_schulz",
            Polar::Svd => "svd",
        };
        format!("trace(decay={}) | orthogonalize({method})", s.momentum)
    }),
    build: |s| Box::new(Muon::new(s.momentum, s.polar)),
};
