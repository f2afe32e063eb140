//! The gauge lab's problem: factored matrix sensing, `W = U Vᵀ` fitted to Gaussian linear
//! measurements of a planted low-rank matrix (numerics §7, the paper §6). The loss is unchanged by
//! `(U, V) → (UQ, VQ)` for any orthogonal Q — the gauge symmetry.

pub mod hsi;
pub mod live;
pub mod nuclear;
mod pass;
pub mod zoo;

use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::arith::{Ops, Plain};
use crate::linalg::norm::frobenius;
use crate::linalg::{mul_into, tr_mul_into};
use crate::rng::{gaussian_matrix, haar_orthogonal};
use crate::validate::{FieldError, Range, check_int, check_real};

/// Sizes of a sensing problem (numerics §7). Defaults: the paper's n 40, r 3, m/dof 2, init 1e-3.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SensingConfig {
    /// Side n of the n × n target, 2..=256.
    pub n: usize,
    /// Planted rank r, 1..=n.
    pub rank: usize,
    /// Measurements per degree of freedom, m = ratio · r(2n − r); (0, 20].
    pub ratio: f64,
    /// Standard deviation of the factors' entries at initialisation, (0, 10].
    pub init: f64,
    /// Spectral-tail amplitude τ in [0, 1) (0 = exactly low rank).
    pub tau: f64,
}

impl Default for SensingConfig {
    fn default() -> Self {
        Self {
            n: 40,
            rank: 3,
            ratio: 2.0,
            init: 1e-3,
            tau: 0.0,
        }
    }
}

impl SensingConfig {
    /// Degrees of freedom of a rank-r n × n matrix, r(2n − r).
    pub fn dof(&self) -> usize {
        self.rank * (2 * self.n - self.rank)
    }

    /// Number of measurements m = round(ratio · dof), at least 1.
    pub fn measurements(&self) -> usize {
        ((self.ratio * self.dof() as f64).round() as usize).max(1)
    }

    /// Checks every field. Errors name the field and its allowed range.
    pub fn validate(&self) -> Result<(), FieldError> {
        let bad = |f: &str, m: String| Err(FieldError::new(f, m));
        check_int("n", self.n, 2, 256)?;
        check_int("rank", self.rank, 1, self.n)?;
        check_real("ratio", self.ratio, Range::above(0.0, 20.0))?;
        check_real("init", self.init, Range::above(0.0, 10.0))?;
        check_real("tau", self.tau, Range::below(0.0, 1.0))?;
        if self.tau > 0.0 && self.rank == self.n {
            return bad(
                "tau",
                format!(
                    "a spectral tail needs room outside rank {}: use rank < n or tau 0",
                    self.rank
                ),
            );
        }
        let size = self.measurements() * self.n * self.n;
        if size > 50_000_000 {
            return bad(
                "ratio",
                format!("the measurement operator would hold {size} numbers; at most 50000000"),
            );
        }
        Ok(())
    }
}

/// One instance: the target X* (`n × n`), the measurement operator (m matrices `n × n`) and the
/// measurements y (length m).
#[derive(Clone, Debug)]
pub struct SensingProblem {
    /// Sizes.
    pub cfg: SensingConfig,
    /// The target the factors should recover (`n × n`).
    pub target: DMatrix<f64>,
    /// Its low-rank part `U_s V_sᵀ` (equal to `target` when τ = 0).
    pub low_rank: DMatrix<f64>,
    /// Measurement matrices, each `n × n` stored column-major, one after another (m·n² numbers).
    operator: Vec<f64>,
    /// Measurements `y_i = ⟨A_i, X*⟩`.
    pub y: Vec<f64>,
}

/// Random streams of a sensing seed (numerics §1's rule: one stream per consumer).
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum SensingStream {
    /// Planted factors U_s, V_s.
    Truth = 11,
    /// Measurement matrices.
    Operator = 12,
    /// Initial factors U, V.
    Init = 13,
    /// The gauge Q of twin runs.
    Gauge = 14,
    /// The tail noise E.
    Tail = 15,
    /// The live runs' noise twin's move of the initial factors.
    NoiseTwin = 16,
}

/// The ChaCha8 stream `s` of `seed`.
pub fn sensing_stream(seed: u64, s: SensingStream) -> ChaCha8Rng {
    crate::rng::stream_id(seed, s as u64)
}

impl SensingProblem {
    /// Draws the instance of `seed` (numerics §7): U_s, V_s ∈ R^{n×r} i.i.d. N(0, 1/r), X_r = U_s V_sᵀ;
    /// with τ > 0, X = √(1−τ²) X_r + τ E⊥, E⊥ a Gaussian matrix projected off the column spaces of
    /// U_s (left) and V_s (right), rescaled to ‖X_r‖F; A_i i.i.d. N(0, 1); y_i = ⟨A_i, X⟩.
    /// Panics on an invalid config (validate first).
    pub fn new(cfg: &SensingConfig, seed: u64) -> Self {
        cfg.validate().expect("valid sensing config");
        let (n, r, m) = (cfg.n, cfg.rank, cfg.measurements());
        let mut truth = sensing_stream(seed, SensingStream::Truth);
        let scale = 1.0 / (r as f64).sqrt();
        let us = gaussian_matrix(&mut truth, n, r, scale);
        let vs = gaussian_matrix(&mut truth, n, r, scale);
        let low_rank = &us * vs.transpose();
        let target = if cfg.tau > 0.0 {
            let e = gaussian_matrix(&mut sensing_stream(seed, SensingStream::Tail), n, n, 1.0);
            let (pu, pv) = (projector(&us), projector(&vs));
            let eye = DMatrix::<f64>::identity(n, n);
            let mut perp = (&eye - pu) * e * (&eye - pv);
            perp *= frobenius(&low_rank) / frobenius(&perp);
            &low_rank * (1.0 - cfg.tau * cfg.tau).sqrt() + perp * cfg.tau
        } else {
            low_rank.clone()
        };
        let a = gaussian_matrix(
            &mut sensing_stream(seed, SensingStream::Operator),
            n * n,
            m,
            1.0,
        );
        let operator = a.as_slice().to_vec();
        let y = operator
            .chunks_exact(n * n)
            .map(|ai| dot::<Plain>(ai, target.as_slice()))
            .collect();
        Self {
            cfg: cfg.clone(),
            target,
            low_rank,
            operator,
            y,
        }
    }

    /// Number of measurements m.
    pub fn m(&self) -> usize {
        self.y.len()
    }

    /// Measurement matrix `A_i` (`n × n`). Panics when `i ≥ m`.
    pub fn measurement(&self, i: usize) -> DMatrix<f64> {
        let n2 = self.cfg.n * self.cfg.n;
        DMatrix::from_column_slice(self.cfg.n, self.cfg.n, &self.operator[i * n2..(i + 1) * n2])
    }

    /// Initial factors (U, V), each `n × n` with i.i.d. N(0, init²) entries.
    pub fn init(&self, seed: u64) -> (DMatrix<f64>, DMatrix<f64>) {
        let mut rng = sensing_stream(seed, SensingStream::Init);
        let n = self.cfg.n;
        let u = gaussian_matrix(&mut rng, n, n, self.cfg.init);
        let v = gaussian_matrix(&mut rng, n, n, self.cfg.init);
        (u, v)
    }

    /// A Haar-random gauge Q (`n × n`) for twin runs.
    pub fn gauge(&self, seed: u64) -> DMatrix<f64> {
        haar_orthogonal(&mut sensing_stream(seed, SensingStream::Gauge), self.cfg.n)
    }

    /// Loss `L = (1/m) Σ_i (⟨A_i, UVᵀ⟩ − y_i)²` and its gradients `∇U = M V`, `∇V = Mᵀ U` with
    /// `M = (2/m) Σ_i R_i A_i` (numerics §7), written into `grads` ([∇U, ∇V]). One pass over the
    /// operator: each A_i gives its residual and is added into M while still in cache.
    /// Allocation-free with `ws` from [`SensingWorkspace::new`].
    pub fn loss_and_grad(
        &self,
        u: &DMatrix<f64>,
        v: &DMatrix<f64>,
        grads: &mut [DMatrix<f64>; 2],
        ws: &mut SensingWorkspace,
    ) -> f64 {
        let m = self.m();
        v.transpose_to(&mut ws.vt);
        mul_into(&mut ws.x, u, &ws.vt);
        ws.grad_x.fill(0.0);
        let [loss] = pass::shared_pass(
            &self.operator,
            &self.y,
            [(ws.x.as_slice(), ws.grad_x.as_mut_slice())],
            2.0 / m as f64,
        );
        let [gu, gv] = grads;
        mul_into(gu, &ws.grad_x, v);
        tr_mul_into(gv, &ws.grad_x, u);
        loss / m as f64
    }
}

/// One factor pair of [`SensingProblem::loss_and_grad_shared`]: its factors, where its
/// gradients go and its buffers.
pub struct PassItem<'a> {
    /// U (`n × n`).
    pub u: &'a DMatrix<f64>,
    /// V (`n × n`).
    pub v: &'a DMatrix<f64>,
    /// [∇U, ∇V], written.
    pub grads: &'a mut [DMatrix<f64>; 2],
    /// Its own buffers ([`SensingWorkspace::new`]).
    pub ws: &'a mut SensingWorkspace,
}

/// Most pairs one [`SensingProblem::loss_and_grad_shared`] serves.
pub const MAX_SHARED: usize = pass::MAX_SHARED;

impl SensingProblem {
    /// [`SensingProblem::loss_and_grad`] (numerics §7) of `P` pairs (1 ≤ P ≤ [`MAX_SHARED`],
    /// checked when compiled) with one read of the operator: returns each pair's loss (the
    /// mean squared residual) and writes its [∇U, ∇V] (`n × n` each); every pair's numbers
    /// have the bits [`SensingProblem::loss_and_grad`] gives it alone. Allocation-free. Panics
    /// if a pair's factors, gradients or buffers are not `n × n` for this problem's n.
    pub fn loss_and_grad_shared<const P: usize>(&self, items: [PassItem<'_>; P]) -> [f64; P] {
        const { assert!(P >= 1 && P <= MAX_SHARED, "1 ≤ P ≤ MAX_SHARED") };
        let m = self.m();
        let mut items = items;
        for it in items.iter_mut() {
            it.v.transpose_to(&mut it.ws.vt);
            mul_into(&mut it.ws.x, it.u, &it.ws.vt);
            it.ws.grad_x.fill(0.0);
        }
        let mut parts = items.iter_mut().map(|it| {
            let SensingWorkspace { x, grad_x, .. } = &mut *it.ws;
            (x.as_slice(), grad_x.as_mut_slice())
        });
        let parts: [_; P] = std::array::from_fn(|_| parts.next().expect("P items"));
        let mut losses = pass::shared_pass(&self.operator, &self.y, parts, 2.0 / m as f64);
        for (it, loss) in items.iter_mut().zip(losses.iter_mut()) {
            let [gu, gv] = &mut *it.grads;
            mul_into(gu, &it.ws.grad_x, it.v);
            tr_mul_into(gv, &it.ws.grad_x, it.u);
            *loss /= m as f64;
        }
        losses
    }
}

crate::linalg::dispatch! {
    /// The operator pass of [`SensingProblem::loss_and_grad`]: for each measurement i in order,
    /// `r = ⟨A_i, x⟩ − y_i`, the loss sum `+= r²` and `gx += (c·r)·A_i`; returns the loss sum.
    /// Compiled per arithmetic ([`crate::arith`]); each copy does the same operations in the
    /// same order whatever the vector width.
    fn residual_pass(operator: &[f64], y: &[f64], x: &[f64], gx: &mut [f64], c: f64) -> f64
        => residual_pass_with
}

/// Largest n² for blocks of eight measurements: eight rows then take at most 512 kB, so the
/// second read of a block (the update of M) finds them in L2 on common CPUs; longer rows go in
/// blocks of four. The block size changes no result, only the speed.
const SMALL: usize = 8192;

#[inline(always)]
fn residual_pass_with<A: Ops>(
    operator: &[f64],
    y: &[f64],
    x: &[f64],
    gx: &mut [f64],
    c: f64,
) -> f64 {
    if x.len() <= SMALL {
        residual_pass_impl::<A, 8>(operator, y, x, gx, c)
    } else {
        residual_pass_impl::<A, 4>(operator, y, x, gx, c)
    }
}

#[inline(always)]
fn residual_pass_impl<A: Ops, const BLOCK: usize>(
    operator: &[f64],
    y: &[f64],
    x: &[f64],
    gx: &mut [f64],
    c: f64,
) -> f64 {
    let nn = x.len();
    let mut loss = 0.0;
    // BLOCK measurements at a time: their dot products run side by side (each in its own fixed
    // order, as `dot`), then one sweep over gx adds the scaled rows entry by entry in
    // measurement order — the same operations as one measurement at a time, with 1/BLOCK of
    // the passes over gx.
    let mut blocks = operator.chunks_exact(BLOCK * nn).zip(y.chunks_exact(BLOCK));
    for (rows, ys) in &mut blocks {
        let a: [&[f64]; BLOCK] = std::array::from_fn(|b| &rows[b * nn..(b + 1) * nn]);
        let dots = block_dots::<A, BLOCK>(a, x);
        let mut cr = [0.0; BLOCK];
        for b in 0..BLOCK {
            let r = dots[b] - ys[b];
            loss += r * r;
            cr[b] = c * r;
        }
        for (idx, g) in gx.iter_mut().enumerate() {
            let mut v = *g;
            for b in 0..BLOCK {
                v = A::madd(cr[b], a[b][idx], v);
            }
            *g = v;
        }
    }
    let done = y.len() - y.len() % BLOCK;
    for (ai, yi) in operator[done * nn..].chunks_exact(nn).zip(&y[done..]) {
        let r = dot::<A>(ai, x) - yi;
        loss += r * r;
        let cr = c * r;
        for (g, a) in gx.iter_mut().zip(ai) {
            *g = A::madd(cr, *a, *g);
        }
    }
    loss
}

/// [`dot`] of each row of a block with `x`, computed together (identical results): in AVX2
/// intrinsics where the CPU has them (the compiler pairs the rows otherwise), else plain.
#[inline(always)]
fn block_dots<A: Ops, const BLOCK: usize>(a: [&[f64]; BLOCK], x: &[f64]) -> [f64; BLOCK] {
    assert!(a.iter().all(|r| r.len() == x.len()), "rows as long as x");
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is checked just above, and `A` is `Fused` only where the CPU has FMA
        // too (`crate::arith::fused`).
        return unsafe { dots_avx2::<A, BLOCK>(a, x) };
    }
    let mut acc = [[0.0f64; 4]; BLOCK];
    let full = x.len() - x.len() % 4;
    for j in (0..full).step_by(4) {
        let xs = &x[j..j + 4];
        for (acc_b, row) in acc.iter_mut().zip(&a) {
            for k in 0..4 {
                acc_b[k] = A::madd(row[j + k], xs[k], acc_b[k]);
            }
        }
    }
    std::array::from_fn(|b| finish_dot::<A>(acc[b], &a[b][full..], &x[full..]))
}

/// The lanes of a four-lane dot product and its tail, added up as [`dot`] does.
#[inline(always)]
fn finish_dot<A: Ops>(lanes: [f64; 4], a: &[f64], b: &[f64]) -> f64 {
    let tail = a.iter().zip(b).fold(-0.0, |s, (p, q)| A::madd(*p, *q, s));
    (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + tail
}

/// [`block_dots`] in AVX2 intrinsics: one vector holds the four lanes of one row's [`dot`], and
/// the block's rows give independent sums; a fused multiply-add when `A` is `Fused`.
///
/// # Safety
/// The CPU must support AVX2, and FMA too when `A` is `Fused`; every row as long as `x`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn dots_avx2<A: Ops, const BLOCK: usize>(a: [&[f64]; BLOCK], x: &[f64]) -> [f64; BLOCK] {
    use std::arch::x86_64::{__m256d, _mm256_add_pd, _mm256_fmadd_pd, _mm256_loadu_pd};
    use std::arch::x86_64::{_mm256_mul_pd, _mm256_setzero_pd, _mm256_storeu_pd};
    let full = x.len() - x.len() % 4;
    // SAFETY (whole body): the caller guarantees the CPU features; j + 4 ≤ full ≤ the length of
    // x and of every row.
    unsafe {
        let mut acc: [__m256d; BLOCK] = [_mm256_setzero_pd(); BLOCK];
        for j in (0..full).step_by(4) {
            let xs = _mm256_loadu_pd(x.as_ptr().add(j));
            for (acc_b, row) in acc.iter_mut().zip(&a) {
                let r = _mm256_loadu_pd(row.as_ptr().add(j));
                *acc_b = if A::FUSED {
                    _mm256_fmadd_pd(r, xs, *acc_b)
                } else {
                    _mm256_add_pd(_mm256_mul_pd(r, xs), *acc_b)
                };
            }
        }
        std::array::from_fn(|b| {
            let mut lanes = [0.0f64; 4];
            _mm256_storeu_pd(lanes.as_mut_ptr(), acc[b]);
            finish_dot::<A>(lanes, &a[b][full..], &x[full..])
        })
    }
}

/// Orthogonal projector onto the column space of `b` (full column rank).
fn projector(b: &DMatrix<f64>) -> DMatrix<f64> {
    let q = b.clone().qr().q();
    &q * q.transpose()
}

/// Dot product in four independent lanes (fixed order, so bit-reproducible), by multiply-adds of
/// the arithmetic `A`.
#[inline(always)]
pub(crate) fn dot<A: Ops>(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            acc[k] = A::madd(x[k], y[k], acc[k]);
        }
    }
    finish_dot::<A>(acc, ra, rb)
}

/// The sensing loss as a [`crate::optim::GradientOracle`] over `[U, V]`, for a rule that
/// evaluates gradients at other points than the current factors (FlowAdam's flow).
pub struct SensingOracle<'a> {
    /// The instance whose loss it evaluates.
    pub problem: &'a SensingProblem,
    /// Buffers of [`SensingProblem::loss_and_grad`], shared with the run.
    pub ws: &'a mut SensingWorkspace,
}

impl crate::optim::GradientOracle for SensingOracle<'_> {
    /// [`SensingProblem::loss_and_grad`] at `at = [U, V]` into `grads = [∇U, ∇V]`. Panics
    /// unless both hold two matrices.
    fn gradient(&mut self, at: &[DMatrix<f64>], grads: &mut [DMatrix<f64>]) -> f64 {
        let grads: &mut [DMatrix<f64>; 2] = grads.try_into().expect("[∇U, ∇V]");
        self.problem.loss_and_grad(&at[0], &at[1], grads, self.ws)
    }
}

/// Buffers for [`SensingProblem::loss_and_grad`] at side n.
#[derive(Clone, Debug)]
pub struct SensingWorkspace {
    vt: DMatrix<f64>,
    x: DMatrix<f64>,
    grad_x: DMatrix<f64>,
}

impl SensingWorkspace {
    /// Buffers for side `n`.
    pub fn new(n: usize) -> Self {
        Self {
            vt: DMatrix::zeros(n, n),
            x: DMatrix::zeros(n, n),
            grad_x: DMatrix::zeros(n, n),
        }
    }
}

/// Recovery error `‖UVᵀ − X*‖F / ‖X*‖F` (numerics §7).
pub fn recovery(u: &DMatrix<f64>, v: &DMatrix<f64>, target: &DMatrix<f64>) -> f64 {
    frobenius(&(u * v.transpose() - target)) / frobenius(target)
}

/// Effective rank (Roy & Vetterli 2007) of `w`: with p_i = σ_i/Σσ, `exp(−Σ p_i ln p_i)`,
/// 0·ln 0 = 0, with the `ln` and `exp` of the arithmetic in force ([`crate::arith`]). Equals r for
/// a rank-r matrix with equal singular values; 0 for the zero matrix.
pub fn effective_rank(w: &DMatrix<f64>) -> f64 {
    let s = w.singular_values();
    let total: f64 = s.iter().sum();
    if total <= 0.0 {
        return 0.0;
    }
    let h: f64 = s
        .iter()
        .map(|&x| x / total)
        .filter(|&p| p > 0.0)
        .map(|p| -p * crate::arith::ln(p))
        .sum();
    crate::arith::exp(h)
}

/// Balancedness `‖UᵀU − VᵀV‖F` (numerics §7); gradient flow conserves UᵀU − VᵀV.
pub fn balancedness(u: &DMatrix<f64>, v: &DMatrix<f64>) -> f64 {
    frobenius(&(u.transpose() * u - v.transpose() * v))
}
