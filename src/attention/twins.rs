//! Twin construction, the lockstep training of one seed's models, and the twin metrics.
//!
//! Per seed, every run trains a base model from the seed's initial weights and one twin per
//! requested kind:
//! - **gauge**: per layer l and head h, a Haar-random orthogonal `A_lh` (d_h × d_h) multiplies
//!   that head's rows of `W_Q` and `W_K` from the left. Every score `q·k = yᵀ W_Qᵀ Aᵀ A W_K y` is
//!   unchanged, so the twin computes the same function in another basis of each head's
//!   query–key space;
//! - **identity** (A = I): the same code path with identity matrices, so the twin must equal
//!   the base model bit for bit at every step (the determinism check);
//! - **noise**: `W_Q` and `W_K` plus `noise_std · N(0, 1)` entries, no rotation: a twin that
//!   starts a tiny distance away in the same basis, so it separates only if the dynamics
//!   amplify small differences (chaos).
//!
//! All runs of a seed share the split, the initial weights, the rotations and the noise.
//! Metrics at step s describe the weights after s updates: the relative distance between the
//! base model's and a twin's validation logits (see [`relative_distance`]), the same distance
//! per layer and head between their query–key forms `(W_Q^h)ᵀ W_K^h` (which the gauge leaves
//! unchanged), and each model's training and validation loss and accuracy.
//!
//! Every model of a seed steps in lockstep, the models in parallel (rayon); each model's own
//! arithmetic is sequential, so the numbers do not depend on the thread count.

use std::ops::Range;

use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::data::{Batch, Split, split};
use super::model::{Arch, Param, Params, Stats, Workspace};
use super::preset::{AttentionPreset, EVAL_CHUNK, RunSpec, TwinKind};
use crate::optim::{GradientOracle, Optimizer, OptimizerSpec};
use crate::rng::{Stream, gaussian_matrix, haar_orthogonal, stream};
use crate::validate::FieldError;

/// A mean training cross-entropy above this many nats marks a model diverged. A run that blows
/// up here need not overflow: its softmax saturates, the gradient vanishes and the loss can sit
/// at any finite size (or fall back to ln p once the weights are inf and the logits equal), so
/// only a bound catches it. The training loss starts near ln p (3.85 at p = 47) and falls.
pub const DIVERGED_LOSS: f64 = 1e4;

/// Per layer and head a Haar-random orthogonal d_h × d_h matrix (index `l·H + h`), drawn in that
/// order from the seed's [`Stream::AttentionRotation`] stream.
pub fn gauge_rotations(arch: &Arch, seed: u64) -> Vec<DMatrix<f64>> {
    let mut rng = stream(seed, Stream::AttentionRotation);
    (0..arch.layers * arch.heads)
        .map(|_| haar_orthogonal(&mut rng, arch.head_dim()))
        .collect()
}

/// Identity matrices in the layout of [`gauge_rotations`].
pub fn identity_rotations(arch: &Arch) -> Vec<DMatrix<f64>> {
    vec![DMatrix::identity(arch.head_dim(), arch.head_dim()); arch.layers * arch.heads]
}

/// `W^h ← A_lh · W^h` for the rows of every head h of `W_Q` and `W_K` in every layer l, with
/// `rotations[l·H + h]`. Panics if there are not L·H matrices of size d_h × d_h.
pub fn rotate_heads(params: &mut Params, rotations: &[DMatrix<f64>]) {
    let arch = params.arch;
    let dh = arch.head_dim();
    assert_eq!(
        rotations.len(),
        arch.layers * arch.heads,
        "one rotation per head"
    );
    for l in 0..arch.layers {
        for p in [Param::Query(l), Param::Key(l)] {
            let w = params.get_mut(p);
            for (h, a) in rotations[l * arch.heads..(l + 1) * arch.heads]
                .iter()
                .enumerate()
            {
                assert_eq!(a.shape(), (dh, dh), "rotation size");
                let rows = h * dh;
                let block = w.rows(rows, dh).clone_owned();
                w.rows_mut(rows, dh).copy_from(&(a * block));
            }
        }
    }
}

/// Adds `std · N(0, 1)` to every entry of `W_Q` and `W_K`, drawn from `rng` layer by layer,
/// `W_Q` before `W_K`, each column-major.
pub fn add_qk_noise(params: &mut Params, std: f64, rng: &mut ChaCha8Rng) {
    let arch = params.arch;
    for l in 0..arch.layers {
        for p in [Param::Query(l), Param::Key(l)] {
            let w = params.get_mut(p);
            *w += gaussian_matrix(rng, w.nrows(), w.ncols(), std);
        }
    }
}

/// The twin of kind `kind` of `base`: rotated by `rotations` (gauge), by identities, or with
/// noise of standard deviation `noise_std` from the seed's [`Stream::AttentionNoise`] stream.
pub fn make_twin(
    base: &Params,
    kind: TwinKind,
    rotations: &[DMatrix<f64>],
    noise_std: f64,
    seed: u64,
) -> Params {
    let mut twin = base.clone();
    match kind {
        TwinKind::Gauge => rotate_heads(&mut twin, rotations),
        TwinKind::Identity => rotate_heads(&mut twin, &identity_rotations(&base.arch)),
        TwinKind::Noise => add_qk_noise(
            &mut twin,
            noise_std,
            &mut stream(seed, Stream::AttentionNoise),
        ),
    }
    twin
}

/// Writes `(W_Q^h)ᵀ W_K^h` (d × d) of every layer l and head h into `out[l·H + h]`: the
/// bilinear form each head's scores are made of, unchanged by the gauge rotation.
/// Panics if `out` does not hold L·H matrices of size d × d.
pub fn qk_forms(params: &Params, out: &mut [DMatrix<f64>]) {
    let arch = params.arch;
    let dh = arch.head_dim();
    assert_eq!(out.len(), arch.layers * arch.heads, "one form per head");
    for l in 0..arch.layers {
        let (wq, wk) = (params.get(Param::Query(l)), params.get(Param::Key(l)));
        for h in 0..arch.heads {
            let form = &mut out[l * arch.heads + h];
            let (q, k) = (wq.rows(h * dh, dh), wk.rows(h * dh, dh));
            q.tr_mul_to(&k, form);
        }
    }
}

/// The relative distance `‖a − b‖ / (½(‖a‖ + ‖b‖))` (Frobenius norms of equal-length slices);
/// 0 when both are zero, NaN when either holds a NaN. Panics if the lengths differ.
pub fn relative_distance(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "equal lengths");
    let (mut diff, mut na, mut nb) = (0.0, 0.0, 0.0);
    for (&x, &y) in a.iter().zip(b) {
        diff += (x - y) * (x - y);
        na += x * x;
        nb += y * y;
    }
    use crate::linalg::norm::checked_norm;
    let diff = checked_norm(diff.sqrt(), a.iter().zip(b).map(|(x, y)| x - y));
    if diff == 0.0 {
        return 0.0;
    }
    let (na, nb) = (
        checked_norm(na.sqrt(), a.iter().copied()),
        checked_norm(nb.sqrt(), b.iter().copied()),
    );
    diff / (0.5 * (na + nb))
}

/// The metrics of one model (a base model or a twin) at one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The seed.
    pub seed: u64,
    /// Updates done so far.
    pub step: usize,
    /// Index of the run in the preset.
    pub run: usize,
    /// The twin kind, or `None` for the base model.
    pub twin: Option<TwinKind>,
    /// Relative distance of this twin's validation logits from the base model's (NaN for the
    /// base model and for a diverged pair).
    pub logit_distance: f64,
    /// Relative distance of the query–key forms per layer and head (index l·H + h); empty for
    /// the base model.
    pub qk_distance: Vec<f64>,
    /// Loss and accuracy on the training set (NaN once diverged).
    pub train: Stats,
    /// Loss and accuracy on the validation set (NaN once diverged).
    pub val: Stats,
}

impl Record {
    /// Mean of [`Record::qk_distance`] over heads (NaN for the base model).
    pub fn qk_mean(&self) -> f64 {
        if self.qk_distance.is_empty() {
            return f64::NAN;
        }
        self.qk_distance.iter().sum::<f64>() / self.qk_distance.len() as f64
    }

    /// Largest entry of [`Record::qk_distance`] (NaN for the base model or if any is NaN).
    pub fn qk_max(&self) -> f64 {
        if self.qk_distance.is_empty() || self.qk_distance.iter().any(|x| x.is_nan()) {
            return f64::NAN;
        }
        self.qk_distance.iter().copied().fold(0.0, f64::max)
    }
}

/// One model's optimizer: one instance per parameter group, each with its own rate.
struct Group {
    range: Range<usize>,
    optimizer: Box<dyn Optimizer>,
    lr: f64,
}

/// The step's training loss as a [`GradientOracle`] over one group's matrices (FlowAdam's flow
/// in the attention lab): the rest of the model stays where the step found it.
struct GroupOracle<'a> {
    /// The model as the step found it, the group's matrices overwritten by each point asked
    /// for.
    point: &'a mut Params,
    /// The gradient at that point.
    grads: &'a mut Params,
    ws: &'a mut Workspace,
    batch: &'a Batch,
    range: Range<usize>,
}

impl GradientOracle for GroupOracle<'_> {
    fn gradient(&mut self, at: &[DMatrix<f64>], grads: &mut [DMatrix<f64>]) -> f64 {
        for (p, a) in self.point.mats[self.range.clone()].iter_mut().zip(at) {
            p.copy_from(a);
        }
        let loss = self.ws.forward(self.point, self.batch).loss;
        if loss.is_finite() {
            self.ws.backward(self.point, self.batch, self.grads);
            for (g, from) in grads.iter_mut().zip(&self.grads.mats[self.range.clone()]) {
                g.copy_from(from);
            }
        } else {
            grads.iter_mut().for_each(|g| g.fill(f64::NAN));
        }
        loss
    }
}

/// What [`GroupOracle`] works in: the model as the step found it, the point asked for, and
/// the gradient there.
struct OracleBuffers {
    start: Params,
    point: Params,
    grads: Params,
}

/// One model in training, with its buffers.
struct Trainee {
    params: Params,
    grads: Params,
    /// The buffers of [`GroupOracle`], when a group's rule asks one
    /// ([`Optimizer::wants_oracle`]); `None` costs the other rules nothing.
    oracle: Option<OracleBuffers>,
    ws: Workspace,
    eval_ws: Workspace,
    groups: Vec<Group>,
    train: Stats,
    val: Stats,
    val_logits: Vec<f64>,
    qk: Vec<DMatrix<f64>>,
    diverged_at: Option<usize>,
}

const NAN_STATS: Stats = Stats {
    loss: f64::NAN,
    accuracy: f64::NAN,
};

fn build(spec: &OptimizerSpec) -> Box<dyn Optimizer> {
    (spec
        .info()
        .expect("rule names are checked by validation")
        .build)(spec)
}

impl Trainee {
    fn new(params: Params, run: &RunSpec, n_train: usize, n_val: usize) -> Self {
        let arch = params.arch;
        let all = 0..arch.param_count();
        let groups = match &run.rest {
            None => vec![Group {
                range: all,
                optimizer: build(&run.rule),
                lr: run.rule.lr,
            }],
            Some(rest) => {
                let hidden = arch.hidden();
                vec![
                    Group {
                        range: hidden.clone(),
                        optimizer: build(&run.rule),
                        lr: run.rule.lr,
                    },
                    Group {
                        range: hidden.end..all.end,
                        optimizer: build(rest),
                        lr: rest.lr,
                    },
                ]
            }
        };
        let d = arch.d_model;
        let oracle = groups
            .iter()
            .any(|g| g.optimizer.wants_oracle())
            .then(|| OracleBuffers {
                start: Params::zeros(arch),
                point: Params::zeros(arch),
                grads: Params::zeros(arch),
            });
        Self {
            oracle,
            grads: Params::zeros(arch),
            ws: Workspace::new(arch, n_train, true),
            eval_ws: Workspace::new(arch, n_val.min(EVAL_CHUNK), false),
            groups,
            train: NAN_STATS,
            val: NAN_STATS,
            val_logits: vec![0.0; arch.classes * n_val],
            qk: vec![DMatrix::zeros(d, d); arch.layers * arch.heads],
            diverged_at: None,
            params,
        }
    }

    /// Loss and accuracy on the training set at the current weights, and the gradient if
    /// `backward`. A loss that is not finite or exceeds [`DIVERGED_LOSS`] marks the model
    /// diverged at `step`; it is not trained further.
    fn forward_backward(&mut self, train: &Batch, step: usize, backward: bool) {
        if self.diverged_at.is_some() {
            return;
        }
        self.train = self.ws.forward(&self.params, train);
        if !(self.train.loss.is_finite() && self.train.loss <= DIVERGED_LOSS) {
            self.diverged_at = Some(step);
            self.train = NAN_STATS;
        } else if backward {
            self.ws.backward(&self.params, train, &mut self.grads);
        }
    }

    /// One update of every group with the last gradient, that of the `train` batch (a rule
    /// that asks for gradients elsewhere gets them on that batch).
    fn update(&mut self, train: &Batch) {
        if self.diverged_at.is_some() {
            return;
        }
        // The other group's matrices stay where the step found them, whichever steps first.
        if let Some(b) = &mut self.oracle {
            for (s, q) in b.start.mats.iter_mut().zip(&self.params.mats) {
                s.copy_from(q);
            }
        }
        for g in &mut self.groups {
            let range = g.range.clone();
            let grads = &self.grads.mats[range.clone()];
            match &mut self.oracle {
                Some(b) if g.optimizer.wants_oracle() => {
                    for (p, s) in b.point.mats.iter_mut().zip(&b.start.mats) {
                        p.copy_from(s);
                    }
                    let params = &mut self.params.mats[range.clone()];
                    let mut oracle = GroupOracle {
                        point: &mut b.point,
                        grads: &mut b.grads,
                        ws: &mut self.ws,
                        batch: train,
                        range,
                    };
                    g.optimizer.step_with(params, grads, g.lr, &mut oracle);
                }
                _ => g.optimizer.step(&mut self.params.mats[range], grads, g.lr),
            }
        }
    }

    /// Validation loss, accuracy and logits, and the query–key forms, at the current weights.
    fn evaluate(&mut self, chunks: &[Batch]) {
        if self.diverged_at.is_some() {
            self.val = NAN_STATS;
            self.val_logits.fill(f64::NAN);
            return;
        }
        let n: usize = chunks.iter().map(|c| c.n).sum();
        let (mut loss, mut correct, mut at) = (0.0, 0.0, 0);
        for chunk in chunks {
            let s = self.eval_ws.forward(&self.params, chunk);
            loss += s.loss * chunk.n as f64;
            correct += (s.accuracy * chunk.n as f64).round();
            let logits = self.eval_ws.logits();
            self.val_logits[at..at + logits.len()].copy_from_slice(logits);
            at += logits.len();
        }
        self.val = Stats {
            loss: loss / n as f64,
            accuracy: correct / n as f64,
        };
        qk_forms(&self.params, &mut self.qk);
    }
}

/// The validation set cut into passes of at most [`EVAL_CHUNK`] sequences, in order.
fn eval_chunks(val: &Batch, modulus: usize) -> Vec<Batch> {
    val.pairs
        .chunks(EVAL_CHUNK)
        .map(|c| Batch::from_pairs(c.to_vec(), modulus))
        .collect()
}

/// What one model of a finished seed leaves for the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelResult {
    /// Index of the run in the preset.
    pub run: usize,
    /// The twin kind, or `None` for the base model.
    pub twin: Option<TwinKind>,
    /// The initial `W_Q` and `W_K` of every layer (the only matrices in which a twin's start
    /// differs from the base model's).
    pub initial_qk: Vec<(DMatrix<f64>, DMatrix<f64>)>,
    /// The weights after the last update.
    pub final_params: Params,
    /// The step at which the training loss became non-finite or passed [`DIVERGED_LOSS`], if
    /// it did.
    pub diverged_at: Option<usize>,
}

/// Everything one seed produced.
#[derive(Clone, Debug, PartialEq)]
pub struct SeedResult {
    /// The seed.
    pub seed: u64,
    /// The training and validation pairs.
    pub split: Split,
    /// The base models' initial weights (shared by every run).
    pub initial: Params,
    /// The gauge twins' rotations, index l·H + h.
    pub rotations: Vec<DMatrix<f64>>,
    /// Every model, runs in preset order, each run's base model before its twins.
    pub models: Vec<ModelResult>,
    /// Metrics at every measured step, in step order; within a step, models in the order of
    /// [`SeedResult::models`].
    pub records: Vec<Record>,
}

/// One seed's models training in lockstep; [`SeedRun::step`] advances them all by one update.
pub struct SeedRun {
    preset: AttentionPreset,
    seed: u64,
    split: Split,
    val_chunks: Vec<Batch>,
    initial: Params,
    rotations: Vec<DMatrix<f64>>,
    models: Vec<Trainee>,
    roles: Vec<(usize, Option<TwinKind>)>,
    initial_qk: Vec<Vec<(DMatrix<f64>, DMatrix<f64>)>>,
    step: usize,
    records: Vec<Record>,
}

impl SeedRun {
    /// Builds every model of `seed` (split, initial weights, rotations, twins). Errors: the
    /// preset does not validate.
    pub fn new(preset: &AttentionPreset, seed: u64) -> Result<Self, FieldError> {
        Self::part(preset, seed, (0, 1))
    }

    /// [`SeedRun::new`] with the models of the preset's runs `part.0, part.0 + part.1, …` only
    /// (a part of the seed the page trains in a worker of its own): a run's models share only
    /// what the seed draws, so each trains, and is measured, as in the whole seed, and its
    /// records keep the run's index in the preset.
    pub fn part(
        preset: &AttentionPreset,
        seed: u64,
        part: (usize, usize),
    ) -> Result<Self, FieldError> {
        preset.validate()?;
        let arch = preset.arch();
        let split = split(&preset.task, seed);
        let val_chunks = eval_chunks(&split.val, preset.task.modulus);
        let initial = Params::init(arch, preset.init, &mut stream(seed, Stream::AttentionInit));
        let rotations = gauge_rotations(&arch, seed);
        let (n_train, n_val) = (split.train.n, split.val.n);
        let mut models = Vec::new();
        let mut roles = Vec::new();
        let mut initial_qk = Vec::new();
        let (first, stride) = (part.0, part.1.max(1));
        for (r, run) in preset.runs.iter().enumerate().skip(first).step_by(stride) {
            let kinds = std::iter::once(None).chain(run.twins.iter().copied().map(Some));
            for twin in kinds {
                let params = match twin {
                    None => initial.clone(),
                    Some(kind) => make_twin(&initial, kind, &rotations, preset.noise_std, seed),
                };
                initial_qk.push(
                    (0..arch.layers)
                        .map(|l| {
                            (
                                params.get(Param::Query(l)).clone(),
                                params.get(Param::Key(l)).clone(),
                            )
                        })
                        .collect(),
                );
                models.push(Trainee::new(params, run, n_train, n_val));
                roles.push((r, twin));
            }
        }
        Ok(Self {
            preset: preset.clone(),
            seed,
            split,
            val_chunks,
            initial,
            rotations,
            models,
            roles,
            initial_qk,
            step: 0,
            records: Vec::new(),
        })
    }

    /// Whether every step is done.
    pub fn finished(&self) -> bool {
        self.step > self.preset.steps
    }

    /// The records so far.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// Measures the current weights if the step is measured, then (before the last step)
    /// applies one update to every model. Does nothing once finished.
    pub fn step(&mut self) {
        if self.finished() {
            return;
        }
        let s = self.step;
        let last = s == self.preset.steps;
        let measured = self.preset.is_measured(s);
        let train = &self.split.train;
        self.models.par_iter_mut().for_each(|m| {
            m.forward_backward(train, s, !last);
            if !measured {
                m.update(train);
            }
        });
        if measured {
            let chunks = &self.val_chunks;
            self.models.par_iter_mut().for_each(|m| {
                m.evaluate(chunks);
                if !last {
                    m.update(train);
                }
            });
            self.record(s);
        }
        self.step += 1;
    }

    fn record(&mut self, step: usize) {
        let mut base = 0;
        for (i, (&(run, twin), m)) in self.roles.iter().zip(&self.models).enumerate() {
            let (logit_distance, qk_distance) = match twin {
                None => {
                    base = i;
                    (f64::NAN, Vec::new())
                }
                Some(_) => {
                    let b = &self.models[base];
                    let qk =
                        b.qk.iter()
                            .zip(&m.qk)
                            .map(|(x, y)| relative_distance(x.as_slice(), y.as_slice()))
                            .collect();
                    (relative_distance(&b.val_logits, &m.val_logits), qk)
                }
            };
            let diverged = m.diverged_at.is_some() || self.models[base].diverged_at.is_some();
            self.records.push(Record {
                seed: self.seed,
                step,
                run,
                twin,
                logit_distance: if diverged { f64::NAN } else { logit_distance },
                qk_distance: if diverged {
                    vec![f64::NAN; qk_distance.len()]
                } else {
                    qk_distance
                },
                train: m.train,
                val: m.val,
            });
        }
    }

    /// The seed's results (call after [`SeedRun::finished`]; earlier, the weights are those of
    /// the steps done so far).
    pub fn finish(self) -> SeedResult {
        let models = self
            .models
            .into_iter()
            .zip(self.roles)
            .zip(self.initial_qk)
            .map(|((m, (run, twin)), initial_qk)| ModelResult {
                run,
                twin,
                initial_qk,
                final_params: m.params,
                diverged_at: m.diverged_at,
            })
            .collect();
        SeedResult {
            seed: self.seed,
            split: self.split,
            initial: self.initial,
            rotations: self.rotations,
            models,
            records: self.records,
        }
    }
}

/// Every seed of a preset.
#[derive(Clone, Debug, PartialEq)]
pub struct AttentionResult {
    /// The preset as run.
    pub preset: AttentionPreset,
    /// One result per seed, in seed order.
    pub seeds: Vec<SeedResult>,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// Runs every seed of `preset` (one after the other, each seed's models in parallel on the
/// current rayon pool), calling `progress` after every step of every seed
/// (`seeds × (steps + 1)` calls in all). Errors: the preset does not validate.
pub fn run_attention(
    preset: &AttentionPreset,
    progress: &(dyn Fn() + Sync),
) -> Result<AttentionResult, FieldError> {
    preset.validate()?;
    let started = web_time::Instant::now();
    let mut seeds = Vec::with_capacity(preset.seeds);
    for k in 0..preset.seeds as u64 {
        let mut run = SeedRun::new(preset, preset.seed + k)?;
        while !run.finished() {
            run.step();
            progress();
        }
        seeds.push(run.finish());
    }
    Ok(AttentionResult {
        preset: preset.clone(),
        seeds,
        seconds: started.elapsed().as_secs_f64(),
    })
}
