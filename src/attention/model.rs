//! The attention twins' transformer, in f64 with a hand-written exact gradient.
//!
//! # The model
//!
//! A decoder-only transformer over sequences of [`SEQ_LEN`] = 3 tokens (`[a, b, =]`), with `L`
//! layers, `H` heads of width `d_h = d / H`, model width `d`, MLP width `f`, no biases:
//!
//! - embedding: `x_t = E[:, token_t] + P[:, t]` (`E` is d × vocab, `P` is d × 3);
//! - each layer, pre-norm: `x ← x + W_O · attn(RMS(x) ⊙ g_attn)`, then
//!   `x ← x + W_down · SiLU(W_up · (RMS(x) ⊙ g_mlp))`, with `RMS(x) = x / √(mean(x²) + ε)`
//!   per position and learned gains `g`;
//! - attention: per head h, `q = W_Q^h y`, `k = W_K^h y`, `v = W_V^h y` (`W_Q^h` is rows
//!   `h·d_h .. (h+1)·d_h` of `W_Q`), causal softmax of `q_t·k_u / √d_h` over `u ≤ t`, output
//!   `Σ_u p_tu v_u`, heads stacked back to d rows; no normalisation of q or k;
//! - output: logits `W_U · (RMS(x_last) ⊙ g_final)` over the p classes at the last position only,
//!   and the loss is the mean cross-entropy over the batch.
//!
//! `W_Q, W_K, W_V, W_O` are d × d, `W_up` f × d, `W_down` d × f, `W_U` p × d, gains d × 1.
//!
//! # Layout and the three shortcuts
//!
//! Activations are column-major matrices with one column per (position, sequence), position
//! major, so each position's columns are one contiguous block. Three facts of the model save
//! work without changing what is computed (a test compares against a per-sequence
//! reference that computes everything):
//!
//! - *Shared first positions.* Position 0 attends only to itself, so in every layer its
//!   activations depend on the first token alone. The sequences that start with the same token
//!   share one column there: a layer has `first + 2n` columns, the `first` distinct first tokens
//!   (at most p, 47 in the paper's task against n = 883 sequences), then positions 1 and 2 of
//!   each sequence (`Columns`). A forward column is computed exactly as it would be alone; in
//!   the backward pass the gradients of the sequences sharing a column arrive already summed, so
//!   the weight gradients' sums run in a different order than over 3n columns (rounding only).
//! - *The last layer's last position.* The loss reads only position 2, which depends on the
//!   earlier positions only through their keys and values. So the last layer computes keys and
//!   values for every column but queries, attention output, `W_O` and the MLP only for the last
//!   block.
//! - *The first layer's inputs.* A column's input to the first layer is its token's embedding
//!   plus its position's, so the first layer's norm, queries, keys and values depend on the
//!   (position, token) pair alone. They are computed once per distinct pair (`Inputs`: 95 in
//!   the paper's task, against 1,813 columns) and copied to the columns; the backward pass sums
//!   the columns' gradients per pair first (rounding only, as above).
//!
//! # Products, threads and allocation
//!
//! Every product with a weight matrix goes through [`crate::linalg::gemm`] (register-blocked,
//! each entry one sequential sum); attention itself (3 positions) is written out. Products and
//! the column-wise loops (norms, SiLU, attention) are shared out over the threads of the current
//! rayon pool by columns, each column computed whole by one thread, so the numbers do not depend
//! on the thread count. A [`Workspace`] holds every activation and gradient buffer for a fixed
//! number of sequences and the products' packing space, so a forward and backward pass
//! allocates nothing once the first has run.
//!
//! # Multiply-add count
//!
//! [`forward_multiply_adds`]: with `a = first + 2n` columns per layer, per layer `2d²·a` (K, V)
//! `+ 2d²·c` (Q, O) `+ 2df·c` (MLP) `+ 2d·π` (scores and weighted values over π causal pairs),
//! with `c = a` query columns and `π = first + 5n` pairs (1 per shared first column, 2 and 3 for
//! positions 1 and 2), but `c = n` and `π = 3n` in the last layer; in the first layer
//! `3d²·m + d²·c` (Q, K and V over its m input pairs, then O) in place of `2d²·a + 2d²·c`; then
//! `p·d·n` for the logits. Copies are not counted.
//! The backward pass does two products of each forward product's size (weight gradient and input
//! gradient) and twice the attention work, so a training step is 3× the forward
//! ([`train_step_multiply_adds`]). Norms, softmax, SiLU and the update are not counted.

use std::ops::Range;

use nalgebra::DMatrix;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::data::{Batch, SEQ_LEN, TaskConfig};
use crate::arith::{self, Ops};
use crate::linalg::gemm::{GemmScratch, Operand, gemm};

/// The transformer's sizes as written in a preset (the task fixes vocabulary and classes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// Transformer layers L, 1..=8. Default 2.
    pub layers: usize,
    /// Attention heads H per layer, 1..=64, dividing `d_model`. Default 4.
    pub heads: usize,
    /// Model width d, 1..=1024. Default 64 (head width 16).
    pub d_model: usize,
    /// MLP width f, 1..=4096. Default 256.
    pub d_mlp: usize,
    /// ε inside the RMS norm's square root, in [0, 1]. Default 1e-6.
    pub norm_eps: f64,
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self {
            layers: 2,
            heads: 4,
            d_model: 64,
            d_mlp: 256,
            norm_eps: 1e-6,
        }
    }
}

/// How the initial weights are drawn (the paper does not state its initialisation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum Init {
    /// As PyTorch's defaults for its linear and embedding layers: every weight matrix uniform in
    /// ±1/√fan_in (fan_in = its column count), embeddings N(0, 1), gains 1.
    #[default]
    FanIn,
    /// Every weight matrix and embedding N(0, std²), gains 1 (std in (0, 100]).
    Normal(f64),
}

/// The full architecture: the preset's sizes plus the task's vocabulary and classes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arch {
    /// Input tokens: p residues and `=`.
    pub vocab: usize,
    /// Output classes: the p residues.
    pub classes: usize,
    /// Layers L.
    pub layers: usize,
    /// Heads H.
    pub heads: usize,
    /// Model width d.
    pub d_model: usize,
    /// MLP width f.
    pub d_mlp: usize,
    /// RMS-norm ε.
    pub norm_eps: f64,
}

/// One parameter matrix of the model, named by role (layer index where there is one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// `W_Q` of a layer, d × d.
    Query(usize),
    /// `W_K` of a layer, d × d.
    Key(usize),
    /// `W_V` of a layer, d × d.
    Value(usize),
    /// `W_O` of a layer, d × d.
    Output(usize),
    /// `W_up` of a layer, f × d.
    Up(usize),
    /// `W_down` of a layer, d × f.
    Down(usize),
    /// Token embedding `E`, d × vocab.
    TokenEmbedding,
    /// Position embedding `P`, d × 3.
    PositionEmbedding,
    /// Unembedding `W_U`, classes × d.
    Unembedding,
    /// Gain of a layer's attention norm, d × 1.
    AttnGain(usize),
    /// Gain of a layer's MLP norm, d × 1.
    MlpGain(usize),
    /// Gain of the final norm, d × 1.
    FinalGain,
}

/// Matrices per layer in the hidden group: W_Q, W_K, W_V, W_O, W_up, W_down.
const PER_LAYER: usize = 6;

impl Param {
    /// The name used in traces: `layer0.w_q`, …, `tok_emb`, `pos_emb`, `w_u`, `layer0.g_attn`,
    /// `layer0.g_mlp`, `g_final`.
    pub fn name(self) -> String {
        match self {
            Param::Query(l) => format!("layer{l}.w_q"),
            Param::Key(l) => format!("layer{l}.w_k"),
            Param::Value(l) => format!("layer{l}.w_v"),
            Param::Output(l) => format!("layer{l}.w_o"),
            Param::Up(l) => format!("layer{l}.w_up"),
            Param::Down(l) => format!("layer{l}.w_down"),
            Param::TokenEmbedding => "tok_emb".into(),
            Param::PositionEmbedding => "pos_emb".into(),
            Param::Unembedding => "w_u".into(),
            Param::AttnGain(l) => format!("layer{l}.g_attn"),
            Param::MlpGain(l) => format!("layer{l}.g_mlp"),
            Param::FinalGain => "g_final".into(),
        }
    }
}

impl Arch {
    /// The architecture of `model` on `task`.
    pub fn new(model: &ModelConfig, task: &TaskConfig) -> Self {
        Self {
            vocab: task.vocab(),
            classes: task.modulus,
            layers: model.layers,
            heads: model.heads,
            d_model: model.d_model,
            d_mlp: model.d_mlp,
            norm_eps: model.norm_eps,
        }
    }

    /// Head width d_h = d / H.
    pub fn head_dim(&self) -> usize {
        self.d_model / self.heads
    }

    /// Every parameter in storage order: the hidden group (per layer W_Q, W_K, W_V, W_O, W_up,
    /// W_down), then E, P, W_U, the gains per layer (attention, MLP) and the final gain.
    pub fn params(&self) -> Vec<Param> {
        let mut out = Vec::with_capacity(PER_LAYER * self.layers + 4 + 2 * self.layers);
        for l in 0..self.layers {
            out.extend([
                Param::Query(l),
                Param::Key(l),
                Param::Value(l),
                Param::Output(l),
                Param::Up(l),
                Param::Down(l),
            ]);
        }
        out.extend([
            Param::TokenEmbedding,
            Param::PositionEmbedding,
            Param::Unembedding,
        ]);
        for l in 0..self.layers {
            out.extend([Param::AttnGain(l), Param::MlpGain(l)]);
        }
        out.push(Param::FinalGain);
        out
    }

    /// Position of `p` in [`Arch::params`]. Panics on a layer index ≥ L.
    pub fn index(&self, p: Param) -> usize {
        let layer = |l: usize, k: usize| {
            assert!(l < self.layers, "layer {l} of {}", self.layers);
            PER_LAYER * l + k
        };
        let rest = PER_LAYER * self.layers;
        match p {
            Param::Query(l) => layer(l, 0),
            Param::Key(l) => layer(l, 1),
            Param::Value(l) => layer(l, 2),
            Param::Output(l) => layer(l, 3),
            Param::Up(l) => layer(l, 4),
            Param::Down(l) => layer(l, 5),
            Param::TokenEmbedding => rest,
            Param::PositionEmbedding => rest + 1,
            Param::Unembedding => rest + 2,
            Param::AttnGain(l) => rest + 3 + 2 * l,
            Param::MlpGain(l) => rest + 4 + 2 * l,
            Param::FinalGain => rest + 3 + 2 * self.layers,
        }
    }

    /// Rows × columns of `p`.
    pub fn shape(&self, p: Param) -> (usize, usize) {
        let (d, f) = (self.d_model, self.d_mlp);
        match p {
            Param::Query(_) | Param::Key(_) | Param::Value(_) | Param::Output(_) => (d, d),
            Param::Up(_) => (f, d),
            Param::Down(_) => (d, f),
            Param::TokenEmbedding => (d, self.vocab),
            Param::PositionEmbedding => (d, SEQ_LEN),
            Param::Unembedding => (self.classes, d),
            Param::AttnGain(_) | Param::MlpGain(_) | Param::FinalGain => (d, 1),
        }
    }

    /// The hidden 2-D matrices (attention projections and MLP) as a range of [`Arch::params`];
    /// the rest (embeddings, unembedding, gains) follows it.
    pub fn hidden(&self) -> Range<usize> {
        0..PER_LAYER * self.layers
    }

    /// Number of parameter matrices.
    pub fn param_count(&self) -> usize {
        PER_LAYER * self.layers + 4 + 2 * self.layers
    }

    /// Number of scalar parameters.
    pub fn numbers(&self) -> usize {
        self.params()
            .into_iter()
            .map(|p| {
                let (r, c) = self.shape(p);
                r * c
            })
            .sum()
    }

    /// Most query columns of layer `l` for `n` sequences (buffer sizes): 3n, or n in the last
    /// layer.
    fn query_cols(&self, l: usize, n: usize) -> usize {
        if l + 1 == self.layers { n } else { SEQ_LEN * n }
    }

    /// Most columns of layer `l`'s attention norm for `n` sequences (buffer sizes): the first
    /// layer's input pairs ([`Inputs`]), else 3n.
    fn normed_cols(&self, l: usize, n: usize) -> usize {
        if l == 0 {
            Inputs::capacity(self, n)
        } else {
            SEQ_LEN * n
        }
    }
}

/// The model's parameters (or their gradients): one matrix per [`Param`], in the order of
/// [`Arch::params`].
#[derive(Clone, Debug, PartialEq)]
pub struct Params {
    /// The architecture the matrices belong to.
    pub arch: Arch,
    /// The matrices, in [`Arch::params`] order.
    pub mats: Vec<DMatrix<f64>>,
}

impl Params {
    /// All-zero matrices of the right shapes.
    pub fn zeros(arch: Arch) -> Self {
        let mats = arch
            .params()
            .into_iter()
            .map(|p| {
                let (r, c) = arch.shape(p);
                DMatrix::zeros(r, c)
            })
            .collect();
        Self { arch, mats }
    }

    /// Initial weights drawn by `init` from `rng`, matrix by matrix in [`Arch::params`] order,
    /// entries in column-major order. Gains are 1 and draw nothing.
    pub fn init(arch: Arch, init: Init, rng: &mut ChaCha8Rng) -> Self {
        let mut out = Self::zeros(arch);
        for (p, m) in arch.params().into_iter().zip(&mut out.mats) {
            let embedding = matches!(p, Param::TokenEmbedding | Param::PositionEmbedding);
            let gain = matches!(p, Param::AttnGain(_) | Param::MlpGain(_) | Param::FinalGain);
            let bound = 1.0 / (arch.shape(p).1 as f64).sqrt();
            for x in m.iter_mut() {
                *x = match (init, gain, embedding) {
                    (_, true, _) => 1.0,
                    (Init::FanIn, _, true) => rng.sample::<f64, _>(StandardNormal),
                    (Init::FanIn, _, false) => bound * (2.0 * rng.random::<f64>() - 1.0),
                    (Init::Normal(std), _, _) => std * rng.sample::<f64, _>(StandardNormal),
                };
            }
        }
        out
    }

    /// The matrix of `p`.
    pub fn get(&self, p: Param) -> &DMatrix<f64> {
        &self.mats[self.arch.index(p)]
    }

    /// The matrix of `p`, mutably.
    pub fn get_mut(&mut self, p: Param) -> &mut DMatrix<f64> {
        let i = self.arch.index(p);
        &mut self.mats[i]
    }

    fn slice(&self, p: Param) -> &[f64] {
        self.get(p).as_slice()
    }

    fn operand(&self, p: Param) -> Operand<'_> {
        let m = self.get(p);
        Operand::new(m.as_slice(), m.nrows(), m.ncols())
    }
}

/// Mean loss and accuracy of one pass over a batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Mean cross-entropy (nats).
    pub loss: f64,
    /// Fraction of sequences whose largest logit is the label (ties go to the lower class).
    pub accuracy: f64,
}

/// Where each (position, sequence) of a batch lives among a layer's columns. Position 0 attends
/// only to itself, so its activations in every layer depend on the first token alone: the
/// sequences that start with the same token share one column there. A layer's columns are the
/// `first` distinct first tokens (in order of first appearance), then position 1 of the n
/// sequences, then position 2, so each position is one contiguous block.
#[derive(Clone, Copy, Debug)]
struct Columns<'a> {
    /// Sequences n.
    n: usize,
    /// The distinct first tokens, one per position-0 column.
    first_tokens: &'a [u32],
    /// Position-0 column of each sequence (n entries, each below `first_tokens.len()`).
    start: &'a [u32],
    /// The sequences in order of their position-0 column, each column's in sequence order;
    /// column g's are `by_start[by_start_from[g]..by_start_from[g + 1]]`.
    by_start: &'a [u32],
    by_start_from: &'a [u32],
}

impl<'a> Columns<'a> {
    /// Columns of a layer's input: `first + 2n`.
    fn all(&self) -> usize {
        self.first_tokens.len() + (SEQ_LEN - 1) * self.n
    }

    /// Position and token of every column of the first layer's input, in column order.
    fn tokens(self, batch: &'a Batch) -> impl Iterator<Item = (usize, u32)> + 'a {
        let later = (1..SEQ_LEN).flat_map(move |t| {
            batch.tokens[t * self.n..(t + 1) * self.n]
                .iter()
                .map(move |&tok| (t, tok))
        });
        self.first_tokens.iter().map(|&tok| (0, tok)).chain(later)
    }

    /// Query columns of layer `l`: all of them, or position 2's n in the last layer.
    fn query(&self, arch: &Arch, l: usize) -> usize {
        if l + 1 == arch.layers {
            self.n
        } else {
            self.all()
        }
    }

    /// Position t of column `col` and the columns of positions 0..=t of its sequence (the keys
    /// and values it attends to; entries past t are unused).
    fn keys(&self, col: usize) -> (usize, [usize; SEQ_LEN]) {
        let first = self.first_tokens.len();
        let mut keys = [col; SEQ_LEN];
        if col < first {
            return (0, keys);
        }
        let (t, i) = (1 + (col - first) / self.n, (col - first) % self.n);
        keys[0] = self.start[i] as usize;
        for (u, k) in keys.iter_mut().enumerate().skip(1) {
            *k = first + (u - 1) * self.n + i;
        }
        (t, keys)
    }

    /// The query columns from `off` on that attend to key column `key`, each with the key's
    /// place u among its keys, in increasing column order.
    fn attending(&self, key: usize, off: usize) -> impl Iterator<Item = (usize, usize)> + '_ {
        let (first, n) = (self.first_tokens.len(), self.n);
        let (t, i, own, sharers) = if key < first {
            let (from, to) = (self.by_start_from[key], self.by_start_from[key + 1]);
            (0, 0, 0..1, &self.by_start[from as usize..to as usize])
        } else {
            let (t, i) = (1 + (key - first) / n, (key - first) % n);
            (t, i, t..SEQ_LEN, &[][..])
        };
        // A column attends to itself and is attended by its sequence's later positions; a
        // shared first column by positions 1 and 2 of every sequence sharing it.
        let own = own.map(move |p| (if p == 0 { key } else { first + (p - 1) * n + i }, t));
        let shared = (1..SEQ_LEN).flat_map(move |p| {
            sharers
                .iter()
                .map(move |&s| (first + (p - 1) * n + s as usize, 0))
        });
        own.chain(shared).filter(move |&(q, _)| q >= off)
    }
}

/// The first layer's input at a column is `E[:, token] + P[:, position]`, so its norm and its
/// queries, keys and values depend on the column's (position, token) alone: they are computed
/// once per distinct pair (at most 2p + 1, 95 in the paper's task against first + 2n = 1,813
/// columns) and copied to every column with that pair. In the backward pass the columns'
/// gradients are summed per pair before the products.
#[derive(Clone, Debug)]
struct Inputs {
    /// Distinct pairs m of the last forward pass.
    m: usize,
    /// Position and token of each pair, in order of first appearance among the columns.
    pairs: Vec<(usize, u32)>,
    /// The pair of each column of the first layer (first + 2n entries used).
    of: Vec<u32>,
    /// Per (position, token), at `position · vocab + token`, its pair (`u32::MAX` for none;
    /// reset by each forward pass).
    slot: Vec<u32>,
    /// The pairs' embedded inputs x, queries, keys and values (d × m each).
    x: Vec<f64>,
    q: Vec<f64>,
    k: Vec<f64>,
    v: Vec<f64>,
}

impl Inputs {
    /// Room for the pairs of up to `capacity` sequences: at most `min(capacity, vocab)` per
    /// position.
    fn new(arch: &Arch, capacity: usize) -> Self {
        let cap = Self::capacity(arch, capacity);
        Self {
            m: 0,
            pairs: vec![(0, 0); cap],
            of: vec![0; SEQ_LEN * capacity],
            slot: vec![u32::MAX; SEQ_LEN * arch.vocab],
            x: vec![0.0; arch.d_model * cap],
            q: vec![0.0; arch.d_model * cap],
            k: vec![0.0; arch.d_model * cap],
            v: vec![0.0; arch.d_model * cap],
        }
    }

    /// Most pairs of `capacity` sequences (buffer sizes).
    fn capacity(arch: &Arch, capacity: usize) -> usize {
        SEQ_LEN * capacity.min(arch.vocab)
    }

    /// f64 values held by [`Inputs::new`] with the same arguments.
    fn numbers(arch: &Arch, capacity: usize) -> usize {
        4 * arch.d_model * Self::capacity(arch, capacity)
    }

    /// Finds the distinct (position, token) pairs among the first layer's `columns` and embeds
    /// each once.
    fn embed(
        &mut self,
        columns: impl Iterator<Item = (usize, u32)>,
        e: &DMatrix<f64>,
        p: &DMatrix<f64>,
    ) {
        let (d, vocab) = (e.nrows(), e.ncols());
        self.slot.fill(u32::MAX);
        self.m = 0;
        for ((t, tok), of) in columns.zip(&mut self.of) {
            let slot = &mut self.slot[t * vocab + tok as usize];
            if *slot == u32::MAX {
                *slot = self.m as u32;
                self.pairs[self.m] = (t, tok);
                let x = &mut self.x[self.m * d..(self.m + 1) * d];
                for ((o, &ei), &pi) in x
                    .iter_mut()
                    .zip(e.column(tok as usize).iter())
                    .zip(p.column(t).iter())
                {
                    *o = ei + pi;
                }
                self.m += 1;
            }
            *of = *slot;
        }
    }
}

/// `dst` column i (d rows) ← `src` column `of[i]`, blocks of columns on the threads of the
/// current pool.
fn gather(dst: &mut [f64], src: &[f64], of: &[u32], d: usize) {
    dst.par_chunks_mut(d * TASK_COLUMNS)
        .zip(of.par_chunks(TASK_COLUMNS))
        .for_each(|(dst, of)| {
            for (out, &i) in dst.chunks_exact_mut(d).zip(of) {
                let i = i as usize;
                out.copy_from_slice(&src[i * d..(i + 1) * d]);
            }
        });
}

/// `dst` column j (d rows) ← the sum of the `src` columns i with `of[i] = j`, in column order
/// ([`grouped_sum`]).
fn scatter_sum(dst: &mut [f64], src: &[f64], of: &[u32], d: usize, scratch: &mut [f64]) {
    let sources = || {
        of.iter()
            .zip(src.chunks_exact(d))
            .map(|(&g, c)| (g as usize, c))
    };
    grouped_sum(dst, d, sources, scratch);
}

/// Rows per thread of the sums over columns run in parallel by rows: an even share of `d`
/// in whole cache lines.
fn row_block(d: usize) -> usize {
    d.div_ceil(rayon::current_num_threads()).next_multiple_of(8)
}

/// `dst` (d × groups, column-major) ← per group g the sum of the source columns in group g,
/// each entry summed from +0 in the order `sources` yields (group, column). Many columns feed
/// few sums here, so blocks of rows, not columns, run on the threads of the current pool: each
/// entry is summed whole by one thread, in the same order on any count. `scratch` (at least
/// d × groups) holds each block's rows of every group meanwhile, so each block is one slice.
fn grouped_sum<'s, I>(
    dst: &mut [f64],
    d: usize,
    sources: impl Fn() -> I + Sync,
    scratch: &mut [f64],
) where
    I: Iterator<Item = (usize, &'s [f64])>,
{
    let (groups, rb) = (dst.len() / d, row_block(d));
    let sums = &mut scratch[..d * groups];
    sums.par_chunks_mut(rb * groups)
        .enumerate()
        .for_each(|(b, block)| {
            let (r0, rows) = (b * rb, block.len() / groups);
            block.fill(0.0);
            for (g, col) in sources() {
                let sum = &mut block[g * rows..(g + 1) * rows];
                for (o, &x) in sum.iter_mut().zip(&col[r0..r0 + rows]) {
                    *o += x;
                }
            }
        });
    for (b, block) in sums.chunks(rb * groups).enumerate() {
        let (r0, rows) = (b * rb, block.len() / groups);
        for (out, sum) in dst.chunks_exact_mut(d).zip(block.chunks_exact(rows)) {
            out[r0..r0 + rows].copy_from_slice(sum);
        }
    }
}

/// Entries per task of the copies and sums of whole buffers run in parallel.
const TASK_ENTRIES: usize = 64 * TASK_COLUMNS;

/// `dst ← src` (equal lengths), in blocks on the threads of the current pool.
fn par_copy(dst: &mut [f64], src: &[f64]) {
    dst.par_chunks_mut(TASK_ENTRIES)
        .zip(src.par_chunks(TASK_ENTRIES))
        .for_each(|(d, s)| d.copy_from_slice(s));
}

/// `dst ← dst + src` entrywise (equal lengths), in blocks on the threads of the current pool.
fn par_add(dst: &mut [f64], src: &[f64]) {
    dst.par_chunks_mut(TASK_ENTRIES)
        .zip(src.par_chunks(TASK_ENTRIES))
        .for_each(|(d, s)| {
            for (o, &x) in d.iter_mut().zip(s) {
                *o += x;
            }
        });
}

/// The activations one layer keeps for its backward pass, for up to `cap` sequences (3·cap
/// columns, the first layer's norm one per input pair; a batch of n uses the first `a·d`, `m·d`
/// or `c·d` entries of each buffer, with a = first + 2n columns as [`Columns`] lays them out).
#[derive(Clone, Debug)]
struct LayerBuffers {
    /// Layer input x (d × a).
    x_in: Vec<f64>,
    /// x / rms(x) (d × a) and 1 / rms(x) per column (a); in the first layer per input pair
    /// (d × m and m, see [`Inputs`]).
    xhat1: Vec<f64>,
    rinv1: Vec<f64>,
    /// Attention input y = xhat1 ⊙ g_attn (d × a; in the first layer d × m).
    y1: Vec<f64>,
    /// Queries (d × c), keys and values (d × a).
    q: Vec<f64>,
    k: Vec<f64>,
    v: Vec<f64>,
    /// Attention weights, [`SEQ_LEN`] slots per (query column, head).
    probs: Vec<f64>,
    /// Heads' outputs (d × c).
    att: Vec<f64>,
    /// Residual after attention (d × c), its normalised form, 1/rms, and the MLP input.
    mid: Vec<f64>,
    xhat2: Vec<f64>,
    rinv2: Vec<f64>,
    y2: Vec<f64>,
    /// MLP pre-activation u, σ(u) and SiLU(u) = u·σ(u) (f × c each).
    u: Vec<f64>,
    sig: Vec<f64>,
    s: Vec<f64>,
}

impl LayerBuffers {
    fn new(d: usize, f: usize, heads: usize, all: usize, normed: usize, c: usize) -> Self {
        Self {
            x_in: vec![0.0; d * all],
            xhat1: vec![0.0; d * normed],
            rinv1: vec![0.0; normed],
            y1: vec![0.0; d * normed],
            q: vec![0.0; d * c],
            k: vec![0.0; d * all],
            v: vec![0.0; d * all],
            probs: vec![0.0; c * heads * SEQ_LEN],
            att: vec![0.0; d * c],
            mid: vec![0.0; d * c],
            xhat2: vec![0.0; d * c],
            rinv2: vec![0.0; c],
            y2: vec![0.0; d * c],
            u: vec![0.0; f * c],
            sig: vec![0.0; f * c],
            s: vec![0.0; f * c],
        }
    }

    /// Numbers held by [`LayerBuffers::new`] with the same arguments.
    fn numbers(d: usize, f: usize, heads: usize, all: usize, normed: usize, c: usize) -> usize {
        3 * d * all + (2 * d + 1) * normed + (5 * d + 1 + heads * SEQ_LEN + 3 * f) * c
    }
}

/// Gradient buffers of the backward pass (sized for the widest layer: 3 columns per sequence of
/// the capacity; the first layer's per-pair gradients for its most input pairs).
#[derive(Clone, Debug)]
struct Backward {
    /// Gradient of the current layer's output, then of its input (swapped each layer).
    d_out: Vec<f64>,
    d_in: Vec<f64>,
    d_y: Vec<f64>,
    d_q: Vec<f64>,
    d_k: Vec<f64>,
    d_v: Vec<f64>,
    d_att: Vec<f64>,
    d_mid: Vec<f64>,
    d_u: Vec<f64>,
    d_logits: Vec<f64>,
    d_z: Vec<f64>,
    /// The attention scores' gradients, [`SEQ_LEN`] slots per (query column, head).
    d_scores: Vec<f64>,
    /// Row-major sums of [`grouped_sum`] (d × the most pairs or tokens).
    sums: Vec<f64>,
    /// The first layer's query, key, value and input gradients summed per input pair (d × m
    /// each, see [`Inputs`]).
    d_q0: Vec<f64>,
    d_k0: Vec<f64>,
    d_v0: Vec<f64>,
    d_x0: Vec<f64>,
}

impl Backward {
    fn new(d: usize, f: usize, arch: &Arch, n: usize, pairs: usize) -> Self {
        let (all, classes) = (SEQ_LEN * n, arch.classes);
        Self {
            d_out: vec![0.0; d * all],
            d_in: vec![0.0; d * all],
            d_y: vec![0.0; d * all],
            d_q: vec![0.0; d * all],
            d_k: vec![0.0; d * all],
            d_v: vec![0.0; d * all],
            d_att: vec![0.0; d * all],
            d_mid: vec![0.0; d * all],
            d_u: vec![0.0; f * all],
            d_logits: vec![0.0; classes * n],
            d_z: vec![0.0; d * n],
            d_scores: vec![0.0; all * arch.heads * SEQ_LEN],
            sums: vec![0.0; d * pairs.max(arch.vocab)],
            d_q0: vec![0.0; d * pairs],
            d_k0: vec![0.0; d * pairs],
            d_v0: vec![0.0; d * pairs],
            d_x0: vec![0.0; d * pairs],
        }
    }

    /// Numbers held by [`Backward::new`] with the same arguments.
    fn numbers(d: usize, f: usize, arch: &Arch, n: usize, pairs: usize) -> usize {
        (8 * d + f + arch.heads * SEQ_LEN) * SEQ_LEN * n
            + (arch.classes + d) * n
            + 4 * d * pairs
            + d * pairs.max(arch.vocab)
    }
}

/// Every buffer of a forward (and optionally backward) pass over up to `capacity` sequences.
#[derive(Clone, Debug)]
pub struct Workspace {
    arch: Arch,
    capacity: usize,
    /// Sequences in the last forward pass.
    n: usize,
    /// Its distinct first tokens (the position-0 columns, see [`Columns`]), the token of each
    /// such column, each sequence's position-0 column, and per vocabulary token its column
    /// (`u32::MAX` for none; reset by each forward pass).
    first: usize,
    first_tokens: Vec<u32>,
    start: Vec<u32>,
    slot: Vec<u32>,
    /// The sequences grouped by position-0 column (see [`Columns`]).
    by_start: Vec<u32>,
    by_start_from: Vec<u32>,
    /// The first layer's distinct inputs.
    inputs: Inputs,
    layers: Vec<LayerBuffers>,
    /// Output of the last layer at the last position (d × n), normalised, 1/rms, final input z.
    x_last: Vec<f64>,
    xhat_f: Vec<f64>,
    rinv_f: Vec<f64>,
    z: Vec<f64>,
    /// Logits and their softmax (classes × n).
    logits: Vec<f64>,
    probs_out: Vec<f64>,
    /// Each sequence's loss and whether its answer is right, summed in order afterwards.
    terms: Vec<f64>,
    hits: Vec<bool>,
    backward: Option<Backward>,
    /// The products' copies of transposed weights.
    gemm: GemmScratch,
}

impl Workspace {
    /// Buffers for batches of up to `capacity` sequences; with `backward`, also for the
    /// gradient. Holds [`Workspace::numbers`] f64 values.
    pub fn new(arch: Arch, capacity: usize, backward: bool) -> Self {
        let (d, f, n) = (arch.d_model, arch.d_mlp, capacity);
        let layers = (0..arch.layers)
            .map(|l| {
                let (normed, c) = (arch.normed_cols(l, n), arch.query_cols(l, n));
                LayerBuffers::new(d, f, arch.heads, SEQ_LEN * n, normed, c)
            })
            .collect();
        Self {
            arch,
            capacity,
            n: 0,
            first: 0,
            first_tokens: vec![0; n],
            start: vec![0; n],
            slot: vec![u32::MAX; arch.vocab],
            by_start: vec![0; n],
            by_start_from: vec![0; n + 1],
            inputs: Inputs::new(&arch, n),
            layers,
            x_last: vec![0.0; d * n],
            xhat_f: vec![0.0; d * n],
            rinv_f: vec![0.0; n],
            z: vec![0.0; d * n],
            logits: vec![0.0; arch.classes * n],
            probs_out: vec![0.0; arch.classes * n],
            terms: vec![0.0; n],
            hits: vec![false; n],
            backward: backward.then(|| Backward::new(d, f, &arch, n, Inputs::capacity(&arch, n))),
            gemm: GemmScratch::new(rayon::current_num_threads()),
        }
    }

    /// The f64 values a workspace of `capacity` sequences holds (for memory limits).
    pub fn numbers(arch: &Arch, capacity: usize, backward: bool) -> usize {
        let (d, f, n) = (arch.d_model, arch.d_mlp, capacity);
        let layers: usize = (0..arch.layers)
            .map(|l| {
                let (normed, c) = (arch.normed_cols(l, n), arch.query_cols(l, n));
                LayerBuffers::numbers(d, f, arch.heads, SEQ_LEN * n, normed, c)
            })
            .sum();
        let bw = if backward {
            Backward::numbers(d, f, arch, n, Inputs::capacity(arch, n))
        } else {
            0
        };
        layers + Inputs::numbers(arch, n) + (3 * d + 2 + 2 * arch.classes) * n + bw
    }

    /// The logits of the last forward pass: classes × n, column-major (column i = sequence i).
    pub fn logits(&self) -> &[f64] {
        &self.logits[..self.arch.classes * self.n]
    }

    /// Forward pass over `batch` with `params`: fills the logits and returns mean loss and
    /// accuracy. Panics if the batch is larger than the capacity, empty, or the parameters'
    /// architecture differs from the workspace's.
    pub fn forward(&mut self, params: &Params, batch: &Batch) -> Stats {
        assert!(
            (1..=self.capacity).contains(&batch.n),
            "batch of {} sequences, capacity {}",
            batch.n,
            self.capacity
        );
        assert_eq!(params.arch, self.arch, "architecture");
        let (arch, n) = (self.arch, batch.n);
        self.n = n;
        let (d, c) = (arch.d_model, arch.classes);
        self.slot.fill(u32::MAX);
        self.first = 0;
        for (&tok, start) in batch.tokens[..n].iter().zip(&mut self.start) {
            let slot = &mut self.slot[tok as usize];
            if *slot == u32::MAX {
                *slot = self.first as u32;
                self.first_tokens[self.first] = tok;
                self.first += 1;
            }
            *start = *slot;
        }
        // A counting sort of the sequences by position-0 column (stable).
        let from = &mut self.by_start_from[..=self.first];
        from.fill(0);
        for &s in &self.start[..n] {
            from[s as usize + 1] += 1;
        }
        for g in 1..from.len() {
            from[g] += from[g - 1];
        }
        for (i, &s) in self.start[..n].iter().enumerate() {
            let at = &mut from[s as usize];
            self.by_start[*at as usize] = i as u32;
            *at += 1;
        }
        from.copy_within(..from.len() - 1, 1);
        from[0] = 0;
        let cols = Columns {
            n,
            first_tokens: &self.first_tokens[..self.first],
            start: &self.start[..n],
            by_start: &self.by_start[..n],
            by_start_from: &self.by_start_from[..=self.first],
        };
        let inputs = &mut self.inputs;
        inputs.embed(
            cols.tokens(batch),
            params.get(Param::TokenEmbedding),
            params.get(Param::PositionEmbedding),
        );
        let all = cols.all();
        gather(
            &mut self.layers[0].x_in[..d * all],
            &inputs.x,
            &inputs.of[..all],
            d,
        );
        for l in 0..arch.layers {
            let (head, tail) = self.layers.split_at_mut(l + 1);
            let out = match tail.first_mut() {
                Some(next) => &mut next.x_in[..d * all],
                None => &mut self.x_last[..d * n],
            };
            let first_layer = (l == 0).then_some(&mut *inputs);
            layer_forward(
                &arch,
                l,
                &cols,
                params,
                &mut head[l],
                first_layer,
                out,
                &mut self.gemm,
            );
        }
        let z = &mut self.z[..d * n];
        rms_forward(
            &self.x_last[..d * n],
            params.slice(Param::FinalGain),
            arch.norm_eps,
            &mut self.xhat_f[..d * n],
            &mut self.rinv_f[..n],
            z,
        );
        let logits = &mut self.logits[..c * n];
        let scratch = &mut self.gemm;
        gemm(
            logits,
            params.operand(Param::Unembedding),
            Operand::new(z, d, n),
            0.0,
            scratch,
        );
        // Each sequence's softmax, loss and answer on the threads of the current pool; the
        // losses are then added in sequence order.
        let (terms, hits) = (&mut self.terms[..n], &mut self.hits[..n]);
        logits
            .par_chunks(c * TASK_COLUMNS)
            .zip(self.probs_out[..c * n].par_chunks_mut(c * TASK_COLUMNS))
            .zip(terms.par_chunks_mut(TASK_COLUMNS))
            .zip(hits.par_chunks_mut(TASK_COLUMNS))
            .zip(batch.labels[..n].par_chunks(TASK_COLUMNS))
            .for_each(|((((logits, probs), terms), hits), labels)| {
                for ((((l, p), term), hit), &y) in logits
                    .chunks_exact(c)
                    .zip(probs.chunks_exact_mut(c))
                    .zip(terms)
                    .zip(hits)
                    .zip(labels)
                {
                    let (mut best, mut arg) = (f64::NEG_INFINITY, 0);
                    for (j, &x) in l.iter().enumerate() {
                        if x > best {
                            best = x;
                            arg = j;
                        }
                    }
                    let mut sum = 0.0;
                    for (pj, &x) in p.iter_mut().zip(l) {
                        *pj = arith::exp(x - best);
                        sum += *pj;
                    }
                    for pj in p.iter_mut() {
                        *pj /= sum;
                    }
                    let y = y as usize;
                    *term = best + arith::ln(sum) - l[y];
                    *hit = arg == y;
                }
            });
        let loss = terms.iter().fold(0.0, |s, &t| s + t);
        let correct = hits.iter().filter(|&&h| h).count();
        Stats {
            loss: loss / n as f64,
            accuracy: correct as f64 / n as f64,
        }
    }

    /// Gradient of the mean loss of the last [`Workspace::forward`] (same `params`, same
    /// `batch`) with respect to every parameter, written into `grads` (every matrix overwritten).
    /// Panics if the workspace was made without backward buffers or `batch` is not the one of
    /// the last forward pass's size.
    pub fn backward(&mut self, params: &Params, batch: &Batch, grads: &mut Params) {
        assert_eq!(batch.n, self.n, "the batch of the last forward pass");
        assert_eq!(grads.arch, self.arch, "architecture");
        let (arch, n) = (self.arch, self.n);
        let (d, c) = (arch.d_model, arch.classes);
        let bw = self
            .backward
            .as_mut()
            .expect("a workspace made with backward buffers");
        let inv_n = 1.0 / n as f64;
        let scratch = &mut self.gemm;
        let d_logits = &mut bw.d_logits[..c * n];
        d_logits
            .par_chunks_mut(c * TASK_COLUMNS)
            .zip(self.probs_out[..c * n].par_chunks(c * TASK_COLUMNS))
            .zip(batch.labels[..n].par_chunks(TASK_COLUMNS))
            .for_each(|((d_logits, probs), labels)| {
                for ((g, p), &y) in d_logits
                    .chunks_exact_mut(c)
                    .zip(probs.chunks_exact(c))
                    .zip(labels)
                {
                    for (gj, &pj) in g.iter_mut().zip(p) {
                        *gj = pj * inv_n;
                    }
                    g[y as usize] -= inv_n;
                }
            });
        let d_logits = Operand::new(d_logits, c, n);
        gemm(
            grads.get_mut(Param::Unembedding).as_mut_slice(),
            d_logits,
            Operand::new(&self.z[..d * n], d, n).t(),
            0.0,
            scratch,
        );
        let d_z = &mut bw.d_z[..d * n];
        gemm(
            d_z,
            params.operand(Param::Unembedding).t(),
            d_logits,
            0.0,
            scratch,
        );
        rms_backward(
            d_z,
            params.slice(Param::FinalGain),
            &self.xhat_f[..d * n],
            &self.rinv_f[..n],
            grads.get_mut(Param::FinalGain).as_mut_slice(),
            &mut bw.d_out[..d * n],
        );
        let cols = Columns {
            n,
            first_tokens: &self.first_tokens[..self.first],
            start: &self.start[..n],
            by_start: &self.by_start[..n],
            by_start_from: &self.by_start_from[..=self.first],
        };
        for l in (0..arch.layers).rev() {
            let first_layer = (l == 0).then_some(&self.inputs);
            let b = &self.layers[l];
            layer_backward(&arch, l, &cols, params, b, first_layer, bw, grads, scratch);
            std::mem::swap(&mut bw.d_out, &mut bw.d_in);
        }
        // The input's gradient: along the residual path per column, through the first layer's
        // norm per input pair; summed per token and per position.
        let m = self.inputs.m;
        let (d_out, d_x0) = (&bw.d_out[..d * cols.all()], &bw.d_x0[..d * m]);
        let pairs = &self.inputs.pairs[..m];
        let d_x = || {
            let residual = cols.tokens(batch).zip(d_out.chunks_exact(d));
            residual.chain(pairs.iter().copied().zip(d_x0.chunks_exact(d)))
        };
        let tok = grads.get_mut(Param::TokenEmbedding).as_mut_slice();
        let by_token = || d_x().map(|((_, t), g)| (t as usize, g));
        grouped_sum(tok, d, by_token, &mut bw.sums);
        let pos = grads.get_mut(Param::PositionEmbedding).as_mut_slice();
        grouped_sum(pos, d, || d_x().map(|((t, _), g)| (t, g)), &mut bw.sums);
    }
}

/// One layer's forward pass over n sequences; `out` (d × c) receives the layer output at the
/// query columns. The first layer is given its distinct `inputs`.
#[allow(clippy::too_many_arguments)]
fn layer_forward(
    arch: &Arch,
    l: usize,
    cols: &Columns,
    params: &Params,
    b: &mut LayerBuffers,
    mut inputs: Option<&mut Inputs>,
    out: &mut [f64],
    scratch: &mut GemmScratch,
) {
    let (d, f) = (arch.d_model, arch.d_mlp);
    let (all, c) = (cols.all(), cols.query(arch, l));
    let off = all - c;
    let LayerBuffers {
        x_in,
        xhat1,
        rinv1,
        y1,
        q,
        k,
        v,
        probs,
        att,
        mid,
        xhat2,
        rinv2,
        y2,
        u,
        sig,
        s,
    } = b;
    let x_in = &x_in[..d * all];
    let (q, k, v) = (&mut q[..d * c], &mut k[..d * all], &mut v[..d * all]);
    // The first layer normalises and projects its input pairs, then copies them to the columns.
    let (x, normed, q_off) = match inputs.as_deref() {
        Some(inputs) => (&inputs.x[..d * inputs.m], inputs.m, 0),
        None => (x_in, all, off),
    };
    let y1 = &mut y1[..d * normed];
    rms_forward(
        x,
        params.slice(Param::AttnGain(l)),
        arch.norm_eps,
        &mut xhat1[..d * normed],
        &mut rinv1[..normed],
        y1,
    );
    let (k_dst, v_dst, q_dst) = match inputs.as_deref_mut() {
        Some(inputs) => (
            &mut inputs.k[..d * normed],
            &mut inputs.v[..d * normed],
            &mut inputs.q[..d * normed],
        ),
        None => (&mut *k, &mut *v, &mut *q),
    };
    for (w, dst, from) in [
        (Param::Key(l), k_dst, 0),
        (Param::Value(l), v_dst, 0),
        (Param::Query(l), q_dst, q_off),
    ] {
        let y1 = Operand::new(&y1[from * d..], d, normed - from);
        gemm(dst, params.operand(w), y1, 0.0, scratch);
    }
    if let Some(inputs) = inputs {
        gather(k, &inputs.k, &inputs.of[..all], d);
        gather(v, &inputs.v, &inputs.of[..all], d);
        gather(q, &inputs.q, &inputs.of[off..all], d);
    }
    let att = &mut att[..d * c];
    attention_forward(
        arch,
        cols,
        off,
        q,
        k,
        v,
        &mut probs[..c * arch.heads * SEQ_LEN],
        att,
    );
    let mid = &mut mid[..d * c];
    par_copy(mid, &x_in[off * d..]);
    gemm(
        mid,
        params.operand(Param::Output(l)),
        Operand::new(att, d, c),
        1.0,
        scratch,
    );
    let y2 = &mut y2[..d * c];
    rms_forward(
        mid,
        params.slice(Param::MlpGain(l)),
        arch.norm_eps,
        &mut xhat2[..d * c],
        &mut rinv2[..c],
        y2,
    );
    let (u, sig, s) = (&mut u[..f * c], &mut sig[..f * c], &mut s[..f * c]);
    gemm(
        u,
        params.operand(Param::Up(l)),
        Operand::new(y2, d, c),
        0.0,
        scratch,
    );
    silu(u, sig, s);
    par_copy(out, mid);
    gemm(
        out,
        params.operand(Param::Down(l)),
        Operand::new(s, f, c),
        1.0,
        scratch,
    );
}

/// Causal attention for the query columns `off..` (queries `q`, d × c; keys and values `k`,
/// `v`, d × all columns): writes the weights into `probs` and the heads' outputs into `att`
/// (d × c). Query columns are independent: blocks of them run on the threads of the current
/// pool.
#[allow(clippy::too_many_arguments)]
fn attention_forward(
    arch: &Arch,
    cols: &Columns,
    off: usize,
    q: &[f64],
    k: &[f64],
    v: &[f64],
    probs: &mut [f64],
    att: &mut [f64],
) {
    let (d, slots) = (arch.d_model, arch.heads * SEQ_LEN);
    att.par_chunks_mut(d * TASK_COLUMNS)
        .zip(probs.par_chunks_mut(slots * TASK_COLUMNS))
        .zip(q.par_chunks(d * TASK_COLUMNS))
        .enumerate()
        .for_each(|(t, ((att, probs), q))| {
            attention_forward_cols(arch, cols, off + t * TASK_COLUMNS, q, k, v, probs, att)
        });
}

/// Columns per task of the column-wise loops run in parallel: enough work to outweigh the
/// hand-over. Each column's numbers do not depend on how the columns are shared out.
const TASK_COLUMNS: usize = 32;

crate::linalg::dispatch! {
    /// [`attention_forward`] on one block of query columns (the first is `off`), compiled per
    /// arithmetic.
    #[allow(clippy::too_many_arguments)]
    fn attention_forward_cols(
        arch: &Arch,
        cols: &Columns,
        off: usize,
        q: &[f64],
        k: &[f64],
        v: &[f64],
        probs: &mut [f64],
        att: &mut [f64],
    ) => attention_forward_impl
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn attention_forward_impl<A: Ops>(
    arch: &Arch,
    cols: &Columns,
    off: usize,
    q: &[f64],
    k: &[f64],
    v: &[f64],
    probs: &mut [f64],
    att: &mut [f64],
) {
    let (d, heads, dh) = (arch.d_model, arch.heads, arch.head_dim());
    let scale = 1.0 / (dh as f64).sqrt();
    for (j, ((att, probs), q)) in att
        .chunks_exact_mut(d)
        .zip(probs.chunks_exact_mut(heads * SEQ_LEN))
        .zip(q.chunks_exact(d))
        .enumerate()
    {
        let (t, keys) = cols.keys(off + j);
        for h in 0..heads {
            let hs = h * dh..(h + 1) * dh;
            let p = &mut probs[h * SEQ_LEN..h * SEQ_LEN + t + 1];
            let mut best = f64::NEG_INFINITY;
            for (pu, &key) in p.iter_mut().zip(&keys) {
                let kc = key * d;
                *pu = scale * dot::<A>(&q[hs.clone()], &k[kc + hs.start..kc + hs.end]);
                best = best.max(*pu);
            }
            let mut sum = 0.0;
            for pu in p.iter_mut() {
                *pu = A::exp(*pu - best);
                sum += *pu;
            }
            let out = &mut att[hs.clone()];
            out.fill(0.0);
            for (pu, &key) in p.iter_mut().zip(&keys) {
                *pu /= sum;
                let vc = key * d;
                for (o, &vv) in out.iter_mut().zip(&v[vc + hs.start..vc + hs.end]) {
                    *o = A::madd(*pu, vv, *o);
                }
            }
        }
    }
}

/// One layer's backward pass over n sequences: reads the gradient of its output at the query
/// columns from `bw.d_out` (d × c), writes the layer's weight and gain gradients into `grads`
/// and the gradient of its input into `bw.d_in` (d × all columns). The first layer, given its
/// distinct `inputs`, writes into `bw.d_in` only the residual path's part (zero before `off`);
/// the part through its norm goes, per input pair, into `bw.d_x0` (d × m).
#[allow(clippy::too_many_arguments)]
fn layer_backward(
    arch: &Arch,
    l: usize,
    cols: &Columns,
    params: &Params,
    b: &LayerBuffers,
    inputs: Option<&Inputs>,
    bw: &mut Backward,
    grads: &mut Params,
    scratch: &mut GemmScratch,
) {
    let (d, f) = (arch.d_model, arch.d_mlp);
    let (all, c) = (cols.all(), cols.query(arch, l));
    let off = all - c;
    let d_out = &bw.d_out[..d * c];
    let d_u = &mut bw.d_u[..f * c];
    gemm(
        d_u,
        params.operand(Param::Down(l)).t(),
        Operand::new(d_out, d, c),
        0.0,
        scratch,
    );
    gemm(
        grads.get_mut(Param::Down(l)).as_mut_slice(),
        Operand::new(d_out, d, c),
        Operand::new(&b.s[..f * c], f, c).t(),
        0.0,
        scratch,
    );
    silu_backward(d_u, &b.sig, &b.u);
    gemm(
        grads.get_mut(Param::Up(l)).as_mut_slice(),
        Operand::new(d_u, f, c),
        Operand::new(&b.y2[..d * c], d, c).t(),
        0.0,
        scratch,
    );
    let d_y2 = &mut bw.d_y[..d * c];
    gemm(
        d_y2,
        params.operand(Param::Up(l)).t(),
        Operand::new(d_u, f, c),
        0.0,
        scratch,
    );
    let d_mid = &mut bw.d_mid[..d * c];
    rms_backward(
        d_y2,
        params.slice(Param::MlpGain(l)),
        &b.xhat2[..d * c],
        &b.rinv2[..c],
        grads.get_mut(Param::MlpGain(l)).as_mut_slice(),
        d_mid,
    );
    par_add(d_mid, d_out);
    let att = Operand::new(&b.att[..d * c], d, c);
    gemm(
        grads.get_mut(Param::Output(l)).as_mut_slice(),
        Operand::new(d_mid, d, c),
        att.t(),
        0.0,
        scratch,
    );
    let d_att = &mut bw.d_att[..d * c];
    gemm(
        d_att,
        params.operand(Param::Output(l)).t(),
        Operand::new(d_mid, d, c),
        0.0,
        scratch,
    );
    let (d_q, d_k, d_v) = (
        &mut bw.d_q[..d * c],
        &mut bw.d_k[..d * all],
        &mut bw.d_v[..d * all],
    );
    let d_scores = &mut bw.d_scores[..c * arch.heads * SEQ_LEN];
    attention_backward(arch, cols, off, b, d_att, d_scores, d_q, d_k, d_v);
    // The first layer's gradients reach its products summed per input pair.
    let (normed, q_off, d_q, d_k, d_v) = match inputs {
        Some(inputs) => {
            let (m, of, sums) = (inputs.m, &inputs.of[..all], &mut bw.sums);
            scatter_sum(&mut bw.d_q0[..d * m], d_q, &of[off..], d, sums);
            scatter_sum(&mut bw.d_k0[..d * m], d_k, of, d, sums);
            scatter_sum(&mut bw.d_v0[..d * m], d_v, of, d, sums);
            (
                m,
                0,
                &bw.d_q0[..d * m],
                &bw.d_k0[..d * m],
                &bw.d_v0[..d * m],
            )
        }
        None => (all, off, &*d_q, &*d_k, &*d_v),
    };
    let d_y1 = &mut bw.d_y[..d * normed];
    for (w, g, from) in [
        (Param::Key(l), d_k, 0),
        (Param::Value(l), d_v, 0),
        (Param::Query(l), d_q, q_off),
    ] {
        let g = Operand::new(g, d, normed - from);
        let y1 = Operand::new(&b.y1[from * d..d * normed], d, normed - from);
        gemm(grads.get_mut(w).as_mut_slice(), g, y1.t(), 0.0, scratch);
        // The first product (keys') overwrites, the others add.
        let beta = if matches!(w, Param::Key(_)) { 0.0 } else { 1.0 };
        gemm(
            &mut d_y1[from * d..],
            params.operand(w).t(),
            g,
            beta,
            scratch,
        );
    }
    let d_x = if inputs.is_some() {
        &mut bw.d_x0[..d * normed]
    } else {
        &mut bw.d_in[..d * all]
    };
    rms_backward(
        d_y1,
        params.slice(Param::AttnGain(l)),
        &b.xhat1[..d * normed],
        &b.rinv1[..normed],
        grads.get_mut(Param::AttnGain(l)).as_mut_slice(),
        d_x,
    );
    let (d_in, d_mid) = (&mut bw.d_in[..d * all], &bw.d_mid[..d * c]);
    if inputs.is_some() {
        // Only the residual path reaches the columns; the part through the norm stays per pair.
        d_in[..off * d].fill(0.0);
        par_copy(&mut d_in[off * d..], d_mid);
    } else {
        par_add(&mut d_in[off * d..], d_mid);
    }
}

/// Backward through the causal attention of the query columns `off..`: `d_att` (d × c) in,
/// `d_q` (d × c), `d_k` and `d_v` (d × all columns) overwritten, the scores' gradients left in
/// `d_scores` ([`SEQ_LEN`] slots per query column and head). Two passes, each over blocks of
/// columns on the threads of the current pool: per query column its `d_q` and scores'
/// gradients, then per key column the terms of the query columns attending to it, added in
/// increasing column order as one pass over the queries would add them, so a key shared by many
/// sequences is summed whole by one thread in the same order on any thread count.
#[allow(clippy::too_many_arguments)]
fn attention_backward(
    arch: &Arch,
    cols: &Columns,
    off: usize,
    b: &LayerBuffers,
    d_att: &[f64],
    d_scores: &mut [f64],
    d_q: &mut [f64],
    d_k: &mut [f64],
    d_v: &mut [f64],
) {
    let (d, slots) = (arch.d_model, arch.heads * SEQ_LEN);
    d_q.par_chunks_mut(d * TASK_COLUMNS)
        .zip(d_scores.par_chunks_mut(slots * TASK_COLUMNS))
        .enumerate()
        .for_each(|(t, (d_q, d_scores))| {
            let j0 = t * TASK_COLUMNS;
            attention_query_grad(arch, cols, off, j0, b, d_att, d_scores, d_q)
        });
    let d_scores = &*d_scores;
    d_k.par_chunks_mut(d * TASK_COLUMNS)
        .zip(d_v.par_chunks_mut(d * TASK_COLUMNS))
        .enumerate()
        .for_each(|(t, (d_k, d_v))| {
            let k0 = t * TASK_COLUMNS;
            attention_key_grad(arch, cols, off, k0, b, d_att, d_scores, d_k, d_v)
        });
}

crate::linalg::dispatch! {
    /// The query pass of [`attention_backward`] over the query columns from `off + j0` (as many
    /// as `d_q` holds), compiled per arithmetic.
    #[allow(clippy::too_many_arguments)]
    fn attention_query_grad(
        arch: &Arch,
        cols: &Columns,
        off: usize,
        j0: usize,
        b: &LayerBuffers,
        d_att: &[f64],
        d_scores: &mut [f64],
        d_q: &mut [f64],
    ) => attention_query_grad_impl
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn attention_query_grad_impl<A: Ops>(
    arch: &Arch,
    cols: &Columns,
    off: usize,
    j0: usize,
    b: &LayerBuffers,
    d_att: &[f64],
    d_scores: &mut [f64],
    d_q: &mut [f64],
) {
    let (d, heads, dh) = (arch.d_model, arch.heads, arch.head_dim());
    let (slots, scale) = (heads * SEQ_LEN, 1.0 / (dh as f64).sqrt());
    for (jj, (dq, ds)) in d_q
        .chunks_exact_mut(d)
        .zip(d_scores.chunks_exact_mut(slots))
        .enumerate()
    {
        let j = j0 + jj;
        let (t, keys) = cols.keys(off + j);
        let (da, probs) = (
            &d_att[j * d..(j + 1) * d],
            &b.probs[j * slots..(j + 1) * slots],
        );
        dq.fill(0.0);
        for h in 0..heads {
            let hs = h * dh..(h + 1) * dh;
            let p = &probs[h * SEQ_LEN..h * SEQ_LEN + t + 1];
            let mut dp = [0.0; SEQ_LEN];
            let mut mean = 0.0;
            for ((u, &pu), &key) in p.iter().enumerate().zip(&keys) {
                let vc = key * d;
                dp[u] = dot::<A>(&da[hs.clone()], &b.v[vc + hs.start..vc + hs.end]);
                mean = A::madd(pu, dp[u], mean);
            }
            for ((u, &pu), &key) in p.iter().enumerate().zip(&keys) {
                let g = scale * pu * (dp[u] - mean);
                ds[h * SEQ_LEN + u] = g;
                let kc = key * d;
                for (o, &k) in dq[hs.clone()]
                    .iter_mut()
                    .zip(&b.k[kc + hs.start..kc + hs.end])
                {
                    *o = A::madd(g, k, *o);
                }
            }
        }
    }
}

crate::linalg::dispatch! {
    /// The key pass of [`attention_backward`] over the key columns from `k0` (as many as `d_k`
    /// holds), compiled per arithmetic.
    #[allow(clippy::too_many_arguments)]
    fn attention_key_grad(
        arch: &Arch,
        cols: &Columns,
        off: usize,
        k0: usize,
        b: &LayerBuffers,
        d_att: &[f64],
        d_scores: &[f64],
        d_k: &mut [f64],
        d_v: &mut [f64],
    ) => attention_key_grad_impl
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn attention_key_grad_impl<A: Ops>(
    arch: &Arch,
    cols: &Columns,
    off: usize,
    k0: usize,
    b: &LayerBuffers,
    d_att: &[f64],
    d_scores: &[f64],
    d_k: &mut [f64],
    d_v: &mut [f64],
) {
    let (d, heads, dh) = (arch.d_model, arch.heads, arch.head_dim());
    let slots = heads * SEQ_LEN;
    for (kk, (dk, dv)) in d_k
        .chunks_exact_mut(d)
        .zip(d_v.chunks_exact_mut(d))
        .enumerate()
    {
        dk.fill(0.0);
        dv.fill(0.0);
        for (q, u) in cols.attending(k0 + kk, off) {
            let j = q - off;
            let (da, qv) = (&d_att[j * d..(j + 1) * d], &b.q[j * d..(j + 1) * d]);
            for h in 0..heads {
                let hs = h * dh..(h + 1) * dh;
                let slot = j * slots + h * SEQ_LEN + u;
                let (pu, g) = (b.probs[slot], d_scores[slot]);
                for (o, &a) in dv[hs.clone()].iter_mut().zip(&da[hs.clone()]) {
                    *o = A::madd(pu, a, *o);
                }
                for (o, &x) in dk[hs.clone()].iter_mut().zip(&qv[hs.clone()]) {
                    *o = A::madd(g, x, *o);
                }
            }
        }
    }
}

/// Per column of `x` (d rows): `xhat = x / rms`, `rinv = 1/rms` with `rms = √(mean(x²) + ε)`,
/// `y = g ⊙ xhat`; blocks of columns on the threads of the current pool.
fn rms_forward(x: &[f64], g: &[f64], eps: f64, xhat: &mut [f64], rinv: &mut [f64], y: &mut [f64]) {
    let d = g.len();
    x.par_chunks(d * TASK_COLUMNS)
        .zip(xhat.par_chunks_mut(d * TASK_COLUMNS))
        .zip(rinv.par_chunks_mut(TASK_COLUMNS))
        .zip(y.par_chunks_mut(d * TASK_COLUMNS))
        .for_each(|(((x, xhat), rinv), y)| rms_forward_cols(x, g, eps, xhat, rinv, y));
}

crate::linalg::dispatch! {
    /// [`rms_forward`] on one block of columns, compiled per arithmetic.
    fn rms_forward_cols(
        x: &[f64],
        g: &[f64],
        eps: f64,
        xhat: &mut [f64],
        rinv: &mut [f64],
        y: &mut [f64],
    ) => rms_forward_impl
}

#[inline(always)]
fn rms_forward_impl<A: Ops>(
    x: &[f64],
    g: &[f64],
    eps: f64,
    xhat: &mut [f64],
    rinv: &mut [f64],
    y: &mut [f64],
) {
    let d = g.len();
    for (((x, xh), r), y) in x
        .chunks_exact(d)
        .zip(xhat.chunks_exact_mut(d))
        .zip(rinv.iter_mut())
        .zip(y.chunks_exact_mut(d))
    {
        let ms = x.iter().fold(-0.0, |s, &v| A::madd(v, v, s)) / d as f64;
        *r = 1.0 / (ms + eps).sqrt();
        for (((xh, yv), &xv), &gv) in xh.iter_mut().zip(y.iter_mut()).zip(x).zip(g) {
            *xh = xv * *r;
            *yv = gv * *xh;
        }
    }
}

/// Backward of [`rms_forward`]: from `d_y` (gradient of y), writes the gain gradient
/// `d_g = Σ_cols d_y ⊙ xhat` (each entry summed over the columns in order, blocks of rows on the
/// threads of the current pool) and, alongside, `d_x = (d_ŷ − xhat·mean(d_ŷ ⊙ xhat)) · rinv`
/// with `d_ŷ = d_y ⊙ g`, column by column (blocks of columns on the threads).
fn rms_backward(
    d_y: &[f64],
    g: &[f64],
    xhat: &[f64],
    rinv: &[f64],
    d_g: &mut [f64],
    d_x: &mut [f64],
) {
    let d = g.len();
    rayon::join(
        || {
            let rb = row_block(d);
            d_g.par_chunks_mut(rb)
                .enumerate()
                .for_each(|(b, d_g)| rms_gain_grad(d_y, xhat, d, b * rb, d_g))
        },
        || {
            d_y.par_chunks(d * TASK_COLUMNS)
                .zip(xhat.par_chunks(d * TASK_COLUMNS))
                .zip(rinv.par_chunks(TASK_COLUMNS))
                .zip(d_x.par_chunks_mut(d * TASK_COLUMNS))
                .for_each(|(((d_y, xhat), rinv), d_x)| rms_input_grad(d_y, g, xhat, rinv, d_x))
        },
    );
}

crate::linalg::dispatch! {
    /// The gain gradient of [`rms_backward`] at rows `r0..` (as many as `d_g` holds) of the
    /// d-row columns, compiled per arithmetic.
    fn rms_gain_grad(d_y: &[f64], xhat: &[f64], d: usize, r0: usize, d_g: &mut [f64])
        => rms_gain_grad_impl
}

#[inline(always)]
fn rms_gain_grad_impl<A: Ops>(d_y: &[f64], xhat: &[f64], d: usize, r0: usize, d_g: &mut [f64]) {
    let r1 = r0 + d_g.len();
    d_g.fill(0.0);
    for (dy, xh) in d_y.chunks_exact(d).zip(xhat.chunks_exact(d)) {
        for ((dg, &dyv), &xv) in d_g.iter_mut().zip(&dy[r0..r1]).zip(&xh[r0..r1]) {
            *dg = A::madd(dyv, xv, *dg);
        }
    }
}

crate::linalg::dispatch! {
    /// The input gradient of [`rms_backward`] on one block of columns, compiled per arithmetic.
    fn rms_input_grad(d_y: &[f64], g: &[f64], xhat: &[f64], rinv: &[f64], d_x: &mut [f64])
        => rms_input_grad_impl
}

#[inline(always)]
fn rms_input_grad_impl<A: Ops>(
    d_y: &[f64],
    g: &[f64],
    xhat: &[f64],
    rinv: &[f64],
    d_x: &mut [f64],
) {
    let d = g.len();
    for (((dy, xh), &r), dx) in d_y
        .chunks_exact(d)
        .zip(xhat.chunks_exact(d))
        .zip(rinv)
        .zip(d_x.chunks_exact_mut(d))
    {
        let mut mean = 0.0;
        for ((&dyv, &xv), &gv) in dy.iter().zip(xh).zip(g) {
            mean = A::madd(dyv * gv, xv, mean);
        }
        mean /= d as f64;
        for (((o, &dyv), &xv), &gv) in dx.iter_mut().zip(dy).zip(xh).zip(g) {
            *o = A::madd(dyv, gv, -(xv * mean)) * r;
        }
    }
}

/// `sig = σ(u) = 1/(1 + e^−u)` and `s = u·σ(u)` entrywise (equal lengths), in blocks on the
/// threads of the current pool.
fn silu(u: &[f64], sig: &mut [f64], s: &mut [f64]) {
    const BLOCK: usize = 64 * TASK_COLUMNS;
    u.par_chunks(BLOCK)
        .zip(sig.par_chunks_mut(BLOCK))
        .zip(s.par_chunks_mut(BLOCK))
        .for_each(|((u, sig), s)| silu_block(u, sig, s));
}

crate::linalg::dispatch! {
    /// [`silu`] on one block, compiled per arithmetic: with [`exp_branch_free`] the loop runs
    /// four entries at a time.
    fn silu_block(u: &[f64], sig: &mut [f64], s: &mut [f64]) => silu_impl
}

#[inline(always)]
fn silu_impl<A: Ops>(u: &[f64], sig: &mut [f64], s: &mut [f64]) {
    for ((&x, sg), o) in u.iter().zip(sig.iter_mut()).zip(s.iter_mut()) {
        *sg = 1.0 / (1.0 + exp_branch_free::<A>(-x));
        *o = x * *sg;
    }
}

/// `g ← g · SiLU′(u)` entrywise with `SiLU′(u) = σ(u)·(1 + u·(1 − σ(u)))` from the stored
/// `sig = σ(u)`, in blocks on the threads of the current pool.
fn silu_backward(g: &mut [f64], sig: &[f64], u: &[f64]) {
    const BLOCK: usize = 64 * TASK_COLUMNS;
    g.par_chunks_mut(BLOCK)
        .zip(sig.par_chunks(BLOCK))
        .zip(u.par_chunks(BLOCK))
        .for_each(|((g, sig), u)| silu_backward_block(g, sig, u));
}

crate::linalg::dispatch! {
    /// [`silu_backward`] on one block, compiled per arithmetic.
    fn silu_backward_block(g: &mut [f64], sig: &[f64], u: &[f64]) => silu_backward_impl
}

#[inline(always)]
fn silu_backward_impl<A: Ops>(g: &mut [f64], sig: &[f64], u: &[f64]) {
    for ((g, &sg), &u) in g.iter_mut().zip(sig).zip(u) {
        *g *= sg * A::madd(u, 1.0 - sg, 1.0);
    }
}

/// `e^x` within about 2 ulp for |x| ≤ 708 (the argument is clamped to that range; NaN stays
/// NaN), without branches or calls so that loops over it vectorise. Cody–Waite reduction
/// `x = k·ln 2 + r` with |r| ≤ ½ln 2 (k found by the 1.5·2⁵² rounding trick, whose bits also
/// hold k), the degree-12 Taylor polynomial of `e^r` (truncation below 2e-16), times `2^k` built
/// from its exponent bits. The SiLU's sigmoid spends most of the MLP's non-product time in `exp`;
/// libm's is a call per entry.
#[inline(always)]
fn exp_branch_free<A: Ops>(x: f64) -> f64 {
    const ROUND: f64 = 6_755_399_441_055_744.0;
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    let x = x.clamp(-708.0, 708.0);
    let t = x * std::f64::consts::LOG2_E + ROUND;
    let k = t - ROUND;
    let r = A::madd(-k, LN2_LO, A::madd(-k, LN2_HI, x));
    let mut p = 1.0 / 479_001_600.0;
    for n in (1..12).rev() {
        p = A::madd(p, r, 1.0 / FACTORIALS[n]);
    }
    p = A::madd(p, r, 1.0);
    // t's low mantissa bits are k + 2⁵¹; adding the bias and shifting leaves (k + 1023) << 52.
    p * f64::from_bits(t.to_bits().wrapping_add(1023) << 52)
}

/// n! for n = 0..=11.
const FACTORIALS: [f64; 12] = [
    1.0,
    1.0,
    2.0,
    6.0,
    24.0,
    120.0,
    720.0,
    5040.0,
    40_320.0,
    362_880.0,
    3_628_800.0,
    39_916_800.0,
];

#[inline(always)]
fn dot<A: Ops>(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(-0.0, |s, (x, y)| A::madd(*x, *y, s))
}

/// Multiply-adds of one forward pass over `batch` (see the module docs): a count, the work
/// [`Workspace::forward`] does on that batch. Panics if a token is outside `arch`'s vocabulary.
pub fn forward_multiply_adds(arch: &Arch, batch: &Batch) -> u64 {
    let n = batch.n;
    // Distinct tokens at each position: the first is the shared position-0 columns, their sum
    // the first layer's input pairs.
    let distinct: Vec<u64> = (0..SEQ_LEN)
        .map(|t| {
            let mut seen = vec![false; arch.vocab];
            batch.tokens[t * n..(t + 1) * n]
                .iter()
                .filter(|&&tok| !std::mem::replace(&mut seen[tok as usize], true))
                .count() as u64
        })
        .collect();
    let (first, inputs) = (distinct[0], distinct.iter().sum::<u64>());
    let (d, f, n) = (arch.d_model as u64, arch.d_mlp as u64, n as u64);
    let all = first + (SEQ_LEN as u64 - 1) * n;
    let mut total = arch.classes as u64 * d * n;
    for l in 0..arch.layers {
        let (c, pairs) = if l + 1 == arch.layers {
            (n, SEQ_LEN as u64 * n)
        } else {
            (all, first + 5 * n)
        };
        let qkv = if l == 0 {
            3 * d * d * inputs
        } else {
            2 * d * d * all + d * d * c
        };
        total += qkv + d * d * c + 2 * d * f * c + 2 * d * pairs;
    }
    total
}

/// Multiply-adds of one training step (forward and backward) over `batch`: 3× the forward.
pub fn train_step_multiply_adds(arch: &Arch, batch: &Batch) -> u64 {
    3 * forward_multiply_adds(arch, batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequences_with_one_first_token_share_its_column_and_the_rest_attend_to_it() {
        let arch = Arch {
            vocab: 6,
            classes: 5,
            layers: 2,
            heads: 1,
            d_model: 4,
            d_mlp: 4,
            norm_eps: 1e-6,
        };
        let batch = Batch::from_pairs(vec![(3, 0), (1, 2), (3, 4), (1, 1), (0, 0)], 5);
        let params = Params::init(arch, Init::FanIn, &mut crate::rng::stream_id(1, 1));
        let mut ws = Workspace::new(arch, 8, false);
        ws.forward(&params, &batch);
        assert_eq!(ws.first_tokens[..ws.first], [3, 1, 0]);
        assert_eq!(ws.start[..5], [0, 1, 0, 1, 2]);
        let cols = Columns {
            n: 5,
            first_tokens: &ws.first_tokens[..3],
            start: &ws.start[..5],
            by_start: &ws.by_start[..5],
            by_start_from: &ws.by_start_from[..4],
        };
        // Sequences 0 and 2 share column 0, 1 and 3 column 1, 4 has column 2.
        assert_eq!(cols.by_start, [0, 2, 1, 3, 4]);
        assert_eq!(cols.by_start_from, [0, 2, 4, 5]);
        let attending = |key, off| cols.attending(key, off).collect::<Vec<_>>();
        // Column 0 itself, then positions 1 and 2 of sequences 0 and 2; in the last layer
        // (queries from column 8 on) only position 2's.
        assert_eq!(attending(0, 0), [(0, 0), (3, 0), (5, 0), (8, 0), (10, 0)]);
        assert_eq!(attending(0, 8), [(8, 0), (10, 0)]);
        // Position 1 of sequence 2 (column 5): itself and its position 2 (column 10), as key 1.
        assert_eq!(attending(5, 0), [(5, 1), (10, 1)]);
        assert_eq!(attending(12, 8), [(12, 2)]);
        assert_eq!(
            (cols.all(), cols.query(&arch, 0), cols.query(&arch, 1)),
            (13, 13, 5)
        );
        assert_eq!(cols.keys(2), (0, [2, 2, 2]));
        // Position 1 of sequence 2 (first token 3, column 0); position 2 of sequence 3 (token 1).
        assert_eq!(cols.keys(5).0, 1);
        assert_eq!(cols.keys(5).1[..2], [0, 5]);
        assert_eq!(cols.keys(11), (2, [1, 6, 11]));
        let tokens: Vec<_> = cols.tokens(&batch).collect();
        assert_eq!(tokens[..4], [(0, 3), (0, 1), (0, 0), (1, 0)]);
        assert_eq!(tokens[12], (2, 5));
        let (e, p) = (
            params.get(Param::TokenEmbedding),
            params.get(Param::PositionEmbedding),
        );
        let want = e.column(3) + p.column(0);
        assert_eq!(ws.layers[0].x_in[..4], *want.as_slice());
        // The first layer's inputs: one per (position, token), in column order; sequences 0 and
        // 4 share position 1's pair (token 0), every position 2 holds `=`.
        let inputs = &ws.inputs;
        let pairs = [
            (0, 3),
            (0, 1),
            (0, 0),
            (1, 0),
            (1, 2),
            (1, 4),
            (1, 1),
            (2, 5),
        ];
        assert_eq!(inputs.pairs[..inputs.m], pairs);
        assert_eq!(inputs.of[..13], [0, 1, 2, 3, 4, 5, 6, 3, 7, 7, 7, 7, 7]);
        // Column 7's keys are pair 3's, computed once among the pairs and copied.
        let k = &ws.layers[0].k;
        assert_eq!(k[7 * 4..8 * 4], inputs.k[3 * 4..4 * 4]);
        assert_eq!(k[3 * 4..4 * 4], k[7 * 4..8 * 4]);
        assert_ne!(k[3 * 4..4 * 4], k[4 * 4..5 * 4]);
        assert_eq!(ws.layers[0].x_in[7 * 4..8 * 4], inputs.x[3 * 4..4 * 4]);
    }

    #[test]
    fn the_branch_free_exp_is_within_a_few_ulp_of_libm() {
        fn check<A: Ops>() {
            let mut worst: f64 = 0.0;
            for i in -70_000..=70_000 {
                let x = i as f64 * 0.01 + 0.003;
                let (ours, libm) = (exp_branch_free::<A>(x), libm::exp(x));
                worst = worst.max(((ours - libm) / libm).abs());
            }
            assert!(worst < 5e-16, "largest relative error {worst:e}");
            assert_eq!(exp_branch_free::<A>(0.0), 1.0);
            assert!(exp_branch_free::<A>(f64::NAN).is_nan());
            assert!(exp_branch_free::<A>(-1e6) > 0.0 && exp_branch_free::<A>(-1e6) < 1e-300);
            assert!(exp_branch_free::<A>(1e6).is_finite());
        }
        check::<crate::arith::Plain>();
        check::<crate::arith::Fused>();
    }

    #[test]
    fn silu_matches_its_definition() {
        let u: Vec<f64> = (-50..50).map(|i| i as f64 * 0.37).collect();
        let (mut sig, mut s) = (vec![0.0; u.len()], vec![0.0; u.len()]);
        silu(&u, &mut sig, &mut s);
        for ((&x, &g), &o) in u.iter().zip(&sig).zip(&s) {
            let want = 1.0 / (1.0 + (-x).exp());
            assert!((g - want).abs() <= 4e-16 * want, "{x}");
            assert!((o - x * g).abs() == 0.0);
        }
    }
}
