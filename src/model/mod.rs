//! The delta-rule associative memory: episodes, forward pass through every write, cross-entropy
//! on every read, and the exact reverse-mode gradient with respect to `W_K`.
//!
//! Source: the explainer §1; every open choice is pinned in numerics §1.
//!
//! Layout: `W_K` is a column-major `d_k × V` [`DMatrix`]; column `a` is the raw key `w_a`. The
//! memory `S` (`V_b × d_k`) lives in a flat column-major buffer, so a read `S k` and a write
//! `S ← S + β δ kᵀ` both walk contiguous columns.

mod episode;

pub use episode::{Episode, EpisodeSampler};

use nalgebra::DMatrix;

use crate::arith::Ops;
use thiserror::Error;

/// Sizes and constants of the memory task (numerics §1). All counts are ≥ 1; validated by the preset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MemoryConfig {
    /// Key dimension `d_k` (rows of `W_K`).
    pub d_k: usize,
    /// Number of key classes `V` (columns of `W_K`).
    pub n_keys: usize,
    /// Number of value classes `V_b` (rows of `S`).
    pub n_values: usize,
    /// Pairs written per episode, `k` (1 ≤ k ≤ V).
    pub pairs_per_episode: usize,
    /// Write strength β of the delta rule.
    pub beta: f64,
    /// Softmax gain `g` applied to the read scores.
    pub gain: f64,
}

/// Errors of the forward/backward pass.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum ModelError {
    /// A column of `W_K` has zero (or non-finite) norm, so its key is undefined (numerics §1: no epsilon).
    #[error("column {column} of W_K has norm {norm}; a key needs a finite, non-zero column")]
    DegenerateColumn {
        /// Index of the offending column.
        column: usize,
        /// Its Euclidean norm.
        norm: f64,
    },
}

/// Divides every column of `w` (`d_k × V`) by its Euclidean norm, writing the unit keys into
/// `keys` (same shape) and the norms into `norms` (length V). Allocation-free.
///
/// Errors: [`ModelError::DegenerateColumn`] if a norm is zero or non-finite.
/// Panics if the shapes disagree.
#[inline(always)]
pub fn normalize_columns(
    w: &DMatrix<f64>,
    keys: &mut DMatrix<f64>,
    norms: &mut [f64],
) -> Result<(), ModelError> {
    assert_eq!(w.shape(), keys.shape(), "keys must have the shape of W_K");
    assert_eq!(norms.len(), w.ncols(), "one norm per column");
    let d = w.nrows();
    let (src, dst) = (w.as_slice(), keys.as_mut_slice());
    for (a, norm_out) in norms.iter_mut().enumerate() {
        let col = &src[a * d..(a + 1) * d];
        // Range-safe: a column of tiny or huge entries keeps its true norm (numerics §9).
        let norm = crate::linalg::norm::norm(col);
        if !(norm.is_finite() && norm > 0.0) {
            return Err(ModelError::DegenerateColumn { column: a, norm });
        }
        *norm_out = norm;
        for (o, x) in dst[a * d..(a + 1) * d].iter_mut().zip(col) {
            *o = x / norm;
        }
    }
    Ok(())
}

/// Reusable buffers for one model evaluation, sized once for a [`MemoryConfig`], so that the
/// training step allocates nothing.
#[derive(Clone, Debug)]
pub struct Workspace {
    cfg: MemoryConfig,
    /// Unit keys `K` (`d_k × V`) of the current `W_K`.
    pub keys: DMatrix<f64>,
    /// Raw column norms ‖w_a‖ (length V).
    pub norms: Vec<f64>,
    /// Gradient of the loss with respect to the unit keys (`d_k × V`).
    d_keys: DMatrix<f64>,
    /// Whether a key class took part in the current batch (length V).
    used: Vec<bool>,
    /// Memory snapshots `S_0 … S_k`, each `V_b × d_k` column-major.
    s_hist: Vec<f64>,
    /// Write errors `δ_1 … δ_k`, each of length `V_b`.
    deltas: Vec<f64>,
    /// dL/dS, `V_b × d_k` column-major.
    d_s: Vec<f64>,
    /// Scratch of length `V_b`.
    scores: Vec<f64>,
}

/// The key lab's loss on one step's batch as a [`crate::optim::GradientOracle`] over
/// `[W_K]`, for a rule that evaluates gradients at other points than the current keys
/// (FlowAdam's flow): the batch stays the step's, only `W_K` moves.
pub struct BatchOracle<'a> {
    /// Buffers of [`Workspace::loss_and_grad`], shared with the twin.
    pub ws: &'a mut Workspace,
    /// The step's episodes.
    pub episodes: &'a [Episode],
}

impl crate::optim::GradientOracle for BatchOracle<'_> {
    /// [`Workspace::loss_and_grad`] at `at = [W_K]` into `grads = [∂L/∂W_K]`; a degenerate
    /// column gives a NaN loss and gradient. Panics unless both hold one matrix.
    fn gradient(&mut self, at: &[DMatrix<f64>], grads: &mut [DMatrix<f64>]) -> f64 {
        let [w] = at else { panic!("one key matrix") };
        let [g] = grads else { panic!("one gradient") };
        self.ws
            .loss_and_grad(w, self.episodes, g)
            .unwrap_or_else(|_| {
                g.fill(f64::NAN);
                f64::NAN
            })
    }
}

impl Workspace {
    /// Buffers for `cfg`: about `(k + 2)·V_b·d_k + 2·d_k·V` numbers.
    pub fn new(cfg: MemoryConfig) -> Self {
        let (d, v, vb, k) = (cfg.d_k, cfg.n_keys, cfg.n_values, cfg.pairs_per_episode);
        Self {
            cfg,
            keys: DMatrix::zeros(d, v),
            norms: vec![0.0; v],
            d_keys: DMatrix::zeros(d, v),
            used: vec![false; v],
            s_hist: vec![0.0; (k + 1) * vb * d],
            deltas: vec![0.0; k * vb],
            d_s: vec![0.0; vb * d],
            scores: vec![0.0; vb],
        }
    }

    /// The configuration these buffers were sized for.
    pub fn config(&self) -> &MemoryConfig {
        &self.cfg
    }

    /// Step loss and exact gradient (numerics §1): the mean over `episodes` of each episode's mean
    /// query cross-entropy, at `w` (`d_k × V`). Writes `∂L/∂W_K` into `grad` (`d_k × V`);
    /// columns of key classes not drawn in `episodes` get exactly 0. Allocation-free.
    ///
    /// Errors: a degenerate column of `w`. Panics on shape mismatch, an empty batch, or an
    /// episode whose length is not `pairs_per_episode`.
    pub fn loss_and_grad(
        &mut self,
        w: &DMatrix<f64>,
        episodes: &[Episode],
        grad: &mut DMatrix<f64>,
    ) -> Result<f64, ModelError> {
        loss_and_grad_dispatch(self, w, episodes, grad)
    }

    #[inline(always)]
    fn loss_and_grad_impl<A: Ops>(
        &mut self,
        w: &DMatrix<f64>,
        episodes: &[Episode],
        grad: &mut DMatrix<f64>,
    ) -> Result<f64, ModelError> {
        assert!(!episodes.is_empty(), "a step needs at least one episode");
        assert_eq!(grad.shape(), w.shape(), "grad must have the shape of W_K");
        self.check_episodes(episodes);
        normalize_columns(w, &mut self.keys, &mut self.norms)?;
        self.d_keys.fill(0.0);
        self.used.fill(false);
        let scale = 1.0 / (episodes.len() * self.cfg.pairs_per_episode) as f64;
        let mut total = 0.0;
        for ep in episodes {
            total += self.episode_backward::<A>(ep, scale);
        }
        self.project_to_columns::<A>(grad);
        Ok(total * scale)
    }

    /// Held-out evaluation at `w` (`d_k × V`): returns (mean query loss, fraction of queries
    /// whose argmax read, first index on ties, equals the stored value); NaN for no episodes.
    /// Errors: a degenerate column. Panics like [`Workspace::loss_and_grad`].
    pub fn evaluate(
        &mut self,
        w: &DMatrix<f64>,
        episodes: &[Episode],
    ) -> Result<(f64, f64), ModelError> {
        evaluate_dispatch(self, w, episodes)
    }

    #[inline(always)]
    fn evaluate_impl<A: Ops>(
        &mut self,
        w: &DMatrix<f64>,
        episodes: &[Episode],
    ) -> Result<(f64, f64), ModelError> {
        self.check_episodes(episodes);
        normalize_columns(w, &mut self.keys, &mut self.norms)?;
        let (mut loss, mut correct, mut count) = (0.0, 0usize, 0usize);
        for ep in episodes {
            self.forward_writes::<A>(ep);
            let s_final = self.final_memory_offset();
            for &q in &ep.query_order {
                let (a, b) = (ep.keys[q], ep.values[q]);
                self.read::<A>(s_final, a);
                if argmax_first(&self.scores) == b {
                    correct += 1;
                }
                loss += self.cross_entropy::<A>(b);
                count += 1;
            }
        }
        Ok((loss / count as f64, correct as f64 / count as f64))
    }

    /// The memory's activations at `w` (`d_k × V`) over `episodes`: appends to `s_rows` every
    /// non-zero row of each episode's final memory `S_k` (`d_k` numbers per row; rows of values
    /// the episode never wrote stay exactly 0 and are skipped), and to `reads` every query's
    /// read `r = S_k k_a` before the softmax (`V_b` numbers per query). Allocates only by
    /// growing the two vectors. Errors: a degenerate column. Panics like
    /// [`Workspace::loss_and_grad`]. Source: the explainer §7's "analog of an activation".
    pub fn collect_activations(
        &mut self,
        w: &DMatrix<f64>,
        episodes: &[Episode],
        s_rows: &mut Vec<f64>,
        reads: &mut Vec<f64>,
    ) -> Result<(), ModelError> {
        activations_dispatch(self, w, episodes, s_rows, reads)
    }

    #[inline(always)]
    fn collect_activations_impl<A: Ops>(
        &mut self,
        w: &DMatrix<f64>,
        episodes: &[Episode],
        s_rows: &mut Vec<f64>,
        reads: &mut Vec<f64>,
    ) -> Result<(), ModelError> {
        self.check_episodes(episodes);
        normalize_columns(w, &mut self.keys, &mut self.norms)?;
        let (d, vb) = (self.cfg.d_k, self.cfg.n_values);
        let s_final = self.final_memory_offset();
        for ep in episodes {
            self.forward_writes::<A>(ep);
            let s = &self.s_hist[s_final..s_final + vb * d];
            for b in 0..vb {
                if (0..d).any(|j| s[j * vb + b] != 0.0) {
                    s_rows.extend((0..d).map(|j| s[j * vb + b]));
                }
            }
            for &q in &ep.query_order {
                self.read::<A>(s_final, ep.keys[q]);
                reads.extend_from_slice(&self.scores);
            }
        }
        Ok(())
    }

    #[inline(always)]
    fn check_episodes(&self, episodes: &[Episode]) {
        let k = self.cfg.pairs_per_episode;
        for ep in episodes {
            assert!(
                ep.keys.len() == k && ep.values.len() == k && ep.query_order.len() == k,
                "an episode must have exactly pairs_per_episode = {k} pairs"
            );
        }
    }

    #[inline(always)]
    fn final_memory_offset(&self) -> usize {
        self.cfg.pairs_per_episode * self.cfg.n_values * self.cfg.d_k
    }

    /// Runs the k delta-rule writes of `ep`, filling `s_hist` (S_0 … S_k) and `deltas`.
    #[inline(always)]
    fn forward_writes<A: Ops>(&mut self, ep: &Episode) {
        let (d, vb, beta) = (self.cfg.d_k, self.cfg.n_values, self.cfg.beta);
        let sz = vb * d;
        self.s_hist[..sz].fill(0.0);
        let keys = self.keys.as_slice();
        for (i, (&a, &b)) in ep.keys.iter().zip(&ep.values).enumerate() {
            let key = &keys[a * d..(a + 1) * d];
            let (prev, next) = self.s_hist[i * sz..(i + 2) * sz].split_at_mut(sz);
            let delta = &mut self.deltas[i * vb..(i + 1) * vb];
            // δ = e_b − S k
            delta.fill(0.0);
            fold_columns(delta, prev, key, |dl, s, kj| A::madd(-s, kj, dl));
            delta[b] += 1.0;
            // S ← S + β δ kᵀ
            for (j, &kj) in key.iter().enumerate() {
                let c = beta * kj;
                let (src, dst) = (&prev[j * vb..(j + 1) * vb], &mut next[j * vb..(j + 1) * vb]);
                for ((o, s), dl) in dst.iter_mut().zip(src).zip(delta.iter()) {
                    *o = A::madd(c, *dl, *s);
                }
            }
        }
    }

    /// Scores `r = S k_a` into `self.scores`, S taken at `s_off` in `s_hist`.
    #[inline(always)]
    fn read<A: Ops>(&mut self, s_off: usize, a: usize) {
        let (d, vb) = (self.cfg.d_k, self.cfg.n_values);
        let s = &self.s_hist[s_off..s_off + vb * d];
        let key = &self.keys.as_slice()[a * d..(a + 1) * d];
        self.scores.fill(0.0);
        fold_columns(&mut self.scores, s, key, |r, sv, kj| A::madd(sv, kj, r));
    }

    /// −ln softmax(g·r)_b via log-sum-exp; leaves softmax(g·r) in `self.scores`.
    #[inline(always)]
    fn cross_entropy<A: Ops>(&mut self, b: usize) -> f64 {
        let g = self.cfg.gain;
        let max = self
            .scores
            .iter()
            .fold(f64::NEG_INFINITY, |m, &r| m.max(g * r));
        let target = g * self.scores[b];
        let mut sum = 0.0;
        for r in self.scores.iter_mut() {
            *r = A::exp(A::madd(g, *r, -max));
            sum += *r;
        }
        for r in self.scores.iter_mut() {
            *r /= sum;
        }
        max + A::ln(sum) - target
    }

    /// Forward and reverse pass of one episode; accumulates `scale·∂(Σ query losses)/∂K` into
    /// `d_keys` and returns the summed query loss.
    #[inline(always)]
    fn episode_backward<A: Ops>(&mut self, ep: &Episode, scale: f64) -> f64 {
        let (d, vb, beta, g) = (
            self.cfg.d_k,
            self.cfg.n_values,
            self.cfg.beta,
            self.cfg.gain,
        );
        let sz = vb * d;
        self.forward_writes::<A>(ep);
        let s_final = self.final_memory_offset();
        self.d_s.fill(0.0);
        let mut loss = 0.0;
        for &q in &ep.query_order {
            let (a, b) = (ep.keys[q], ep.values[q]);
            self.used[a] = true;
            self.read::<A>(s_final, a);
            loss += self.cross_entropy::<A>(b);
            // dL/dr = scale·g·(p − e_b), kept in `scores`.
            self.scores[b] -= 1.0;
            for r in self.scores.iter_mut() {
                *r *= scale * g;
            }
            let s = &self.s_hist[s_final..s_final + sz];
            let key = &self.keys.as_slice()[a * d..(a + 1) * d];
            let dk = &mut self.d_keys.as_mut_slice()[a * d..(a + 1) * d];
            // dS += dr kᵀ ; dk += Sᵀ dr. Four coordinates j at a time, so that their four dot
            // products (each summed in order over the values) overlap instead of waiting on
            // one another; the same operations in the same order as one j at a time.
            let (d_s, dr) = (&mut self.d_s, &self.scores);
            let grouped = d - d % 4;
            for j0 in (0..grouped).step_by(4) {
                let (ds, sv) = (&mut d_s[j0 * vb..(j0 + 4) * vb], &s[j0 * vb..(j0 + 4) * vb]);
                let mut acc = [0.0f64; 4];
                for (v, &drv) in dr.iter().enumerate() {
                    for q in 0..4 {
                        ds[q * vb + v] = A::madd(drv, key[j0 + q], ds[q * vb + v]);
                        acc[q] = A::madd(sv[q * vb + v], drv, acc[q]);
                    }
                }
                for q in 0..4 {
                    dk[j0 + q] += acc[q];
                }
            }
            for j in grouped..d {
                let col = j * vb..(j + 1) * vb;
                let mut acc = 0.0;
                for ((ds, sv), drv) in d_s[col.clone()].iter_mut().zip(&s[col]).zip(dr) {
                    *ds = A::madd(*drv, key[j], *ds);
                    acc = A::madd(*sv, *drv, acc);
                }
                dk[j] += acc;
            }
        }
        // Reverse through the writes S_{i+1} = S_i + β δ_i k_iᵀ with δ_i = e − S_i k_i.
        for i in (0..ep.keys.len()).rev() {
            let a = ep.keys[i];
            self.used[a] = true;
            let key = &self.keys.as_slice()[a * d..(a + 1) * d];
            let delta = &self.deltas[i * vb..(i + 1) * vb];
            let s_prev = &self.s_hist[i * sz..(i + 1) * sz];
            // dδ = β dS k
            let d_delta = &mut self.scores;
            d_delta.fill(0.0);
            fold_columns(d_delta, &self.d_s, key, |dd, ds, kj| {
                A::madd(beta * ds, kj, dd)
            });
            // dk += β dSᵀ δ − S_iᵀ dδ ; dS −= dδ kᵀ
            let dk = &mut self.d_keys.as_mut_slice()[a * d..(a + 1) * d];
            let d_s = &mut self.d_s;
            let grouped = d - d % 4;
            for j0 in (0..grouped).step_by(4) {
                let (ds, sp) = (
                    &mut d_s[j0 * vb..(j0 + 4) * vb],
                    &s_prev[j0 * vb..(j0 + 4) * vb],
                );
                let mut acc = [0.0f64; 4];
                for (v, (&dl, &dd)) in delta.iter().zip(d_delta.iter()).enumerate() {
                    for q in 0..4 {
                        let x = &mut ds[q * vb + v];
                        acc[q] += A::madd(beta * *x, dl, -(sp[q * vb + v] * dd));
                        *x = A::madd(-dd, key[j0 + q], *x);
                    }
                }
                for q in 0..4 {
                    dk[j0 + q] += acc[q];
                }
            }
            for j in grouped..d {
                let col = j * vb..(j + 1) * vb;
                let mut acc = 0.0;
                for (((ds, sp), dl), dd) in d_s[col.clone()]
                    .iter_mut()
                    .zip(&s_prev[col])
                    .zip(delta)
                    .zip(d_delta.iter())
                {
                    acc += A::madd(beta * *ds, *dl, -(sp * dd));
                    *ds = A::madd(-dd, key[j], *ds);
                }
                dk[j] += acc;
            }
        }
        loss
    }

    /// Chain rule through k = w/‖w‖: ∂w = (I − k kᵀ) ∂k / ‖w‖ on used columns, 0 elsewhere.
    #[inline(always)]
    fn project_to_columns<A: Ops>(&self, grad: &mut DMatrix<f64>) {
        let d = self.cfg.d_k;
        let (keys, dk) = (self.keys.as_slice(), self.d_keys.as_slice());
        let out = grad.as_mut_slice();
        for (a, &used) in self.used.iter().enumerate() {
            let cols = a * d..(a + 1) * d;
            let o = &mut out[cols.clone()];
            if !used {
                o.fill(0.0);
                continue;
            }
            let (k, g) = (&keys[cols.clone()], &dk[cols]);
            let dot = k.iter().zip(g).fold(-0.0, |s, (x, y)| A::madd(*x, *y, s));
            let inv = 1.0 / self.norms[a];
            for ((o, kj), gj) in o.iter_mut().zip(k).zip(g) {
                *o = A::madd(-dot, *kj, *gj) * inv;
            }
        }
    }
}

/// For every entry v of `out` (length V_b), in order of j: `out[v] = f(out[v], m[j·V_b + v],
/// key[j])`, with `m` a column-major `V_b × d` matrix (at least d columns) — a matrix–vector
/// product in the form `f` gives it. Eight entries at a time stay in registers over the whole
/// j loop (the plain loop would store and reload them for every j); each entry sees the same
/// operations in the same order.
#[inline(always)]
fn fold_columns(out: &mut [f64], m: &[f64], key: &[f64], f: impl Fn(f64, f64, f64) -> f64) {
    const W: usize = 8;
    let vb = out.len();
    let full = vb - vb % W;
    for c0 in (0..full).step_by(W) {
        let mut acc: [f64; W] = out[c0..c0 + W].try_into().expect("block length");
        for (j, &kj) in key.iter().enumerate() {
            let col: &[f64; W] = m[j * vb + c0..j * vb + c0 + W]
                .try_into()
                .expect("block length");
            for (a, &x) in acc.iter_mut().zip(col) {
                *a = f(*a, x, kj);
            }
        }
        out[c0..c0 + W].copy_from_slice(&acc);
    }
    for (v, o) in out.iter_mut().enumerate().skip(full) {
        let mut a = *o;
        for (j, &kj) in key.iter().enumerate() {
            a = f(a, m[j * vb + v], kj);
        }
        *o = a;
    }
}

crate::linalg::dispatch! {
    /// [`Workspace::loss_and_grad`], compiled per arithmetic.
    fn loss_and_grad_dispatch(
        ws: &mut Workspace,
        w: &DMatrix<f64>,
        episodes: &[Episode],
        grad: &mut DMatrix<f64>,
    ) -> Result<f64, ModelError> => Workspace::loss_and_grad_impl
}

crate::linalg::dispatch! {
    /// [`Workspace::evaluate`], compiled per arithmetic.
    fn evaluate_dispatch(
        ws: &mut Workspace,
        w: &DMatrix<f64>,
        episodes: &[Episode],
    ) -> Result<(f64, f64), ModelError> => Workspace::evaluate_impl
}

crate::linalg::dispatch! {
    /// [`Workspace::collect_activations`], compiled per arithmetic.
    fn activations_dispatch(
        ws: &mut Workspace,
        w: &DMatrix<f64>,
        episodes: &[Episode],
        s_rows: &mut Vec<f64>,
        reads: &mut Vec<f64>,
    ) -> Result<(), ModelError> => Workspace::collect_activations_impl
}

/// Index of the largest entry, the first one on ties (numerics §1's accuracy rule). A NaN after the
/// first entry never wins. Panics on an empty slice.
pub fn argmax_first(xs: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in xs.iter().enumerate().skip(1) {
        if x > xs[best] {
            best = i;
        }
    }
    best
}
