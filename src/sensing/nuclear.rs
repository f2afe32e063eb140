//! The convex reference of the gauge lab (numerics §9, the paper's Table 2, first row): the
//! matrix of least nuclear norm that the measurements allow, `X_nuc = argmin ‖X‖*` subject to
//! `⟨A_i, X⟩ = y_i` for every i, by Douglas–Rachford splitting (ADMM with ρ = 1) between
//! singular-value thresholding and the exact projection onto the measurements.

use std::sync::atomic::{AtomicBool, Ordering};

use nalgebra::{Cholesky, DMatrix, DVector, Dyn};

use super::{SensingProblem, block_dots, dot};
use crate::arith::Ops;
use crate::linalg::mul_into;
use crate::linalg::norm::{distance, frobenius};

/// Iteration cap of the solve (numerics §9).
pub const MAX_ITERATIONS: usize = 20_000;
/// Tolerance on the primal residual `‖X − Z‖F` and the dual residual `ρ‖Z_new − Z‖F`
/// (numerics §9), absolute.
pub const TOLERANCE: f64 = 1e-11;
/// The cancel flag is read every this many iterations.
const CANCEL_EVERY: usize = 200;

/// How a solve ended, with the iterate and the dual certificate it reached.
#[derive(Clone, Debug)]
pub struct NuclearSolve {
    /// `P(X)` (`n × n`): the last thresholded iterate projected onto the measurements.
    pub x: DMatrix<f64>,
    /// `−D` (`n × n`), the scaled dual variable: it lies in the range of `Aᵀ` exactly (it is
    /// `Aᵀλ` for the last projection's λ) and, at convergence, in the subdifferential of `‖·‖*`
    /// at `x` — `U Vᵀ + W` with `‖W‖₂ ≤ 1`, `Uᵀ W = 0`, `W V = 0` — which certifies optimality.
    pub certificate: DMatrix<f64>,
    /// Iterations taken (each one SVD and one projection).
    pub iterations: usize,
    /// Last primal residual `‖X − Z‖F`.
    pub primal: f64,
    /// Last dual residual `ρ‖Z_new − Z‖F`.
    pub dual: f64,
    /// Both residuals fell below [`TOLERANCE`] (else the cap or a cancel stopped it).
    pub converged: bool,
    /// A cancel request stopped it.
    pub cancelled: bool,
}

/// The exact projection `P(W) = W + Aᵀ (A Aᵀ)⁻¹ (y − A vec W)` onto `{X : ⟨A_i, X⟩ = y_i}`, with
/// the Cholesky factor of the Gram matrix `A Aᵀ` (`m × m`) computed once.
pub struct Projection<'a> {
    problem: &'a SensingProblem,
    chol: Cholesky<f64, Dyn>,
    lambda: DVector<f64>,
}

impl<'a> Projection<'a> {
    /// Factors `A Aᵀ` of `problem` (`m × m`, entries `⟨A_i, A_j⟩` by [`dot`] in the arithmetic in
    /// force). `None` when it is not positive definite (the measurements are dependent, as they
    /// are when m > n²).
    pub fn new(problem: &'a SensingProblem) -> Option<Self> {
        let (m, nn) = (problem.m(), problem.cfg.n * problem.cfg.n);
        let a = |i: usize| &problem.operator[i * nn..(i + 1) * nn];
        let mut gram = DMatrix::zeros(m, m);
        for j in 0..m {
            for i in j..m {
                let g = gram_entry(a(i), a(j));
                gram[(i, j)] = g;
                gram[(j, i)] = g;
            }
        }
        Some(Self {
            problem,
            chol: gram.cholesky()?,
            lambda: DVector::zeros(m),
        })
    }

    /// Replaces `w` (`n × n`) by `P(w)`; `λ` of the last call is kept ([`Projection::lambda`]).
    /// Allocation-free.
    pub fn apply(&mut self, w: &mut DMatrix<f64>) {
        let op = &self.problem.operator;
        measure(op, w.as_slice(), self.lambda.as_mut_slice());
        for (l, y) in self.lambda.iter_mut().zip(&self.problem.y) {
            *l = y - *l;
        }
        self.chol.solve_mut(&mut self.lambda);
        adjoint_add(op, self.lambda.as_slice(), w.as_mut_slice());
    }

    /// The multipliers λ (length m) of the last [`Projection::apply`]: it added `Aᵀλ`.
    pub fn lambda(&self) -> &[f64] {
        self.lambda.as_slice()
    }
}

crate::linalg::dispatch! {
    /// One entry of the Gram matrix, `⟨a, b⟩` by [`dot`].
    fn gram_entry(a: &[f64], b: &[f64]) -> f64 => dot
}

crate::linalg::dispatch! {
    /// `out[i] = ⟨A_i, x⟩` for every measurement, each by [`dot`]'s fixed order.
    fn measure(operator: &[f64], x: &[f64], out: &mut [f64]) => measure_with
}

crate::linalg::dispatch! {
    /// `w += Σ_i λ_i A_i`, entry by entry in measurement order.
    fn adjoint_add(operator: &[f64], lambda: &[f64], w: &mut [f64]) => adjoint_add_with
}

/// Measurements per sweep of [`measure`] and [`adjoint_add`].
const BLOCK: usize = 8;

#[inline(always)]
fn measure_with<A: Ops>(operator: &[f64], x: &[f64], out: &mut [f64]) {
    let nn = x.len();
    let full = out.len() - out.len() % BLOCK;
    for (rows, o) in operator
        .chunks_exact(BLOCK * nn)
        .zip(out[..full].chunks_exact_mut(BLOCK))
    {
        let a: [&[f64]; BLOCK] = std::array::from_fn(|b| &rows[b * nn..(b + 1) * nn]);
        o.copy_from_slice(&block_dots::<A, BLOCK>(a, x));
    }
    for (ai, o) in operator[full * nn..].chunks_exact(nn).zip(&mut out[full..]) {
        *o = dot::<A>(ai, x);
    }
}

#[inline(always)]
fn adjoint_add_with<A: Ops>(operator: &[f64], lambda: &[f64], w: &mut [f64]) {
    let nn = w.len();
    let full = lambda.len() - lambda.len() % BLOCK;
    for (rows, l) in operator
        .chunks_exact(BLOCK * nn)
        .zip(lambda[..full].chunks_exact(BLOCK))
    {
        for (idx, x) in w.iter_mut().enumerate() {
            let mut v = *x;
            for b in 0..BLOCK {
                v = A::madd(l[b], rows[b * nn + idx], v);
            }
            *x = v;
        }
    }
    for (ai, l) in operator[full * nn..].chunks_exact(nn).zip(&lambda[full..]) {
        for (x, a) in w.iter_mut().zip(ai) {
            *x = A::madd(*l, *a, *x);
        }
    }
}

/// Singular-value thresholding at 1 (the proximal map of `‖·‖*` at ρ = 1), `W = U Σ Vᵀ` ↦
/// `U max(Σ − 1, 0) Vᵀ`, by one-sided Jacobi (Hestenes): the columns of `B = W V` are rotated
/// in pairs until orthogonal, the same rotations applied to V, so that `B = U Σ` and
/// `σ_j = ‖b_j‖`. V starts from the last call's (the iterates change little from one
/// iteration to the next, so a sweep or two suffice). Only + − × ÷ and √, each rounded as IEEE
/// says, so the bits are the same on every CPU and in the browser (nalgebra's SVD calls the
/// platform's `hypot`). Allocation-free after [`Thresholding::new`].
struct Thresholding {
    b: DMatrix<f64>,
    v: DMatrix<f64>,
}

/// Most Jacobi sweeps per call (far more than a warm start needs; a cold 40 × 40 one takes
/// about ten).
const MAX_SWEEPS: usize = 60;

impl Thresholding {
    /// Buffers for `n × n`, V = I.
    fn new(n: usize) -> Self {
        Self {
            b: DMatrix::zeros(n, n),
            v: DMatrix::identity(n, n),
        }
    }

    /// Writes the thresholded `w` (`n × n`) into `out`.
    fn apply(&mut self, w: &DMatrix<f64>, out: &mut DMatrix<f64>) {
        let n = w.nrows();
        mul_into(&mut self.b, w, &self.v);
        // A pair counts as orthogonal when |b_p·b_q| ≤ n·ε·‖b_p‖‖b_q‖, about the rounding of
        // the dot product itself.
        let tol = n as f64 * f64::EPSILON;
        let (b, v) = (self.b.as_mut_slice(), self.v.as_mut_slice());
        for _ in 0..MAX_SWEEPS {
            let mut rotated = false;
            for p in 0..n {
                for q in p + 1..n {
                    let (bp, bq) = (&b[p * n..(p + 1) * n], &b[q * n..(q + 1) * n]);
                    let (mut alpha, mut beta, mut gamma) = (0.0, 0.0, 0.0);
                    for (x, y) in bp.iter().zip(bq) {
                        alpha += x * x;
                        beta += y * y;
                        gamma += x * y;
                    }
                    if gamma.abs() <= tol * (alpha * beta).sqrt() {
                        continue;
                    }
                    // tan θ, the smaller root of t² + 2ζt − 1 = 0, zeroes the rotated pair's
                    // dot product.
                    let zeta = (beta - alpha) / (2.0 * gamma);
                    let t = if zeta.abs() > 1e150 {
                        0.5 / zeta
                    } else {
                        zeta.signum() / (zeta.abs() + (1.0 + zeta * zeta).sqrt())
                    };
                    let c = 1.0 / (1.0 + t * t).sqrt();
                    let s = c * t;
                    rotate(b, n, p, q, c, s);
                    rotate(v, n, p, q, c, s);
                    rotated = true;
                }
            }
            if !rotated {
                break;
            }
        }
        out.fill(0.0);
        let o = out.as_mut_slice();
        for j in 0..n {
            let bj = &b[j * n..(j + 1) * n];
            let sigma = bj.iter().map(|x| x * x).sum::<f64>().sqrt();
            if sigma <= 1.0 {
                continue;
            }
            // (σ − 1) u_j v_jᵀ with u_j = b_j / σ.
            let f = 1.0 - 1.0 / sigma;
            for k in 0..n {
                let coef = f * v[j * n + k];
                for (x, y) in o[k * n..(k + 1) * n].iter_mut().zip(bj) {
                    *x += coef * y;
                }
            }
        }
    }
}

/// Rotates columns p and q of the column-major `n × n` matrix `m`:
/// `(m_p, m_q) ← (c·m_p − s·m_q, s·m_p + c·m_q)`.
fn rotate(m: &mut [f64], n: usize, p: usize, q: usize, c: f64, s: f64) {
    let (left, right) = m.split_at_mut(q * n);
    for (x, y) in left[p * n..(p + 1) * n].iter_mut().zip(&mut right[..n]) {
        let (a, b) = (*x, *y);
        *x = c * a - s * b;
        *y = s * a + c * b;
    }
}

/// Solves `min ‖X‖*` subject to the measurements of `problem` (numerics §9): start `Z = P(0)`,
/// `D = 0`; repeat `X ← SVT(Z − D)`, `Z_new ← P(X + D)`, `D ← D + X − Z_new` until
/// `‖X − Z_new‖F` and `‖Z_new − Z‖F` are both below `tolerance`, or `max_iterations`; returns
/// `P(X)`. Reads `cancel` every 200 iterations. `None` when `A Aᵀ` is singular
/// ([`Projection::new`]). Deterministic: the same bits for the same problem and arithmetic.
pub fn min_nuclear_norm(
    problem: &SensingProblem,
    max_iterations: usize,
    tolerance: f64,
    cancel: &AtomicBool,
) -> Option<NuclearSolve> {
    let n = problem.cfg.n;
    let mut proj = Projection::new(problem)?;
    let mut z = DMatrix::zeros(n, n);
    proj.apply(&mut z);
    let mut d = DMatrix::<f64>::zeros(n, n);
    let (mut x, mut w) = (DMatrix::zeros(n, n), DMatrix::zeros(n, n));
    let mut svt = Thresholding::new(n);
    let (mut primal, mut dual) = (f64::INFINITY, f64::INFINITY);
    let mut iterations = 0;
    let mut cancelled = false;
    let mut converged = false;
    while iterations < max_iterations {
        if iterations.is_multiple_of(CANCEL_EVERY) && cancel.load(Ordering::Relaxed) {
            cancelled = true;
            break;
        }
        w.copy_from(&z);
        w -= &d;
        svt.apply(&w, &mut x);
        w.copy_from(&x);
        w += &d;
        proj.apply(&mut w);
        primal = distance(x.as_slice(), w.as_slice());
        dual = distance(w.as_slice(), z.as_slice());
        d += &x;
        d -= &w;
        std::mem::swap(&mut z, &mut w);
        iterations += 1;
        if primal < tolerance && dual < tolerance {
            converged = true;
            break;
        }
    }
    let certificate = -&d;
    proj.apply(&mut x);
    Some(NuclearSolve {
        x,
        certificate,
        iterations,
        primal,
        dual,
        converged,
        cancelled,
    })
}

/// Nuclear norm `‖x‖*` (sum of singular values) of `x`.
pub fn nuclear_norm(x: &DMatrix<f64>) -> f64 {
    x.singular_values().iter().sum()
}

/// The misfit `‖A(x) − y‖` of `x` (`n × n`) on `problem` (divided by `‖y‖`, the relative
/// feasibility; squared and divided by m, the sensing loss).
pub fn misfit(problem: &SensingProblem, x: &DMatrix<f64>) -> f64 {
    let mut ax = vec![0.0; problem.m()];
    measure(&problem.operator, x.as_slice(), &mut ax);
    distance(&ax, &problem.y)
}

/// `‖x − X*‖F / ‖X*‖F` for a matrix `x` (`n × n`) on `problem`.
pub fn recovery_of(problem: &SensingProblem, x: &DMatrix<f64>) -> f64 {
    frobenius(&(x - &problem.target)) / frobenius(&problem.target)
}
