//! The paired-run harness (numerics §3, the explainer §5): every arm trained from W0 and from Q·W0
//! on one shared episode stream, with per-step twin metrics.

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

use super::activations::{
    ACTIVATION_ROTATIONS, ActivationStats, activation_episodes, activation_stats,
};
use crate::metrics::{
    RotationBaseline, axis_concentration, gram_divergence_with, mean_sd, orientation_divergence,
};
use crate::model::{
    BatchOracle, Episode, EpisodeSampler, MemoryConfig, Workspace, normalize_columns,
};
use crate::optim::{Optimizer, RuleInfo};
use crate::preset::{ColumnNorms, Preset};
use crate::rng::{Stream, gaussian_matrix, haar_orthogonal, stream};
use crate::validate::FieldError;

/// Index of the run from W0 in a twin pair.
pub const BASE: usize = 0;
/// Index of the run from Q·W0 in a twin pair.
pub const ROTATED: usize = 1;

/// Metrics of one arm at step `s`, describing W_s, the weights going into update s (numerics §3).
/// Pairs are indexed [`BASE`], [`ROTATED`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// Step index s (0 before any update).
    pub step: usize,
    /// Index of the arm in the preset (not written to files, where the arm is named).
    #[serde(skip)]
    pub arm: usize,
    /// Step loss of step s's episodes at W_s (NaN for the final snapshot, which has no episodes).
    pub loss: [f64; 2],
    /// `‖W′_s − Q W_s‖F / ‖W_s‖F`.
    pub orientation_div: f64,
    /// `‖G′_s − G_s‖F`.
    pub gram_div: f64,
    /// A(K_s) of each twin.
    pub axis_concentration: [f64; 2],
    /// Mean raw column norm ‖w_a‖ of each twin.
    pub mean_column_norm: [f64; 2],
    /// Sample standard deviation of the raw column norms of each twin.
    pub column_norm_sd: [f64; 2],
    /// `‖W_noise − W‖F / ‖W‖F` of the noise twin (started at W0 + 1e-12·E in the same basis);
    /// NaN without `noise_twins`. Telling chaos (which this shows too) from basis dependence.
    pub noise_div: f64,
}

impl StepRecord {
    /// A record of arm `arm` at `step` with every metric NaN (for a step that failed).
    pub fn undefined(step: usize, arm: usize) -> Self {
        Self {
            step,
            arm,
            loss: [f64::NAN; 2],
            orientation_div: f64::NAN,
            gram_div: f64::NAN,
            axis_concentration: [f64::NAN; 2],
            mean_column_norm: [f64::NAN; 2],
            column_norm_sd: [f64::NAN; 2],
            noise_div: f64::NAN,
        }
    }
}

/// Held-out loss and accuracy of both twins of one arm.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct HeldOut {
    /// Mean query cross-entropy on the held-out episodes.
    pub loss: [f64; 2],
    /// Fraction of held-out queries answered correctly (argmax, first index on ties).
    pub accuracy: [f64; 2],
}

/// Whether an arm is still training.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ArmStatus {
    /// Training normally.
    Running,
    /// Stopped at `step` because a loss, gradient or weight became non-finite, or because the
    /// rule's own arithmetic cannot represent the run ([`crate::optim::Optimizer::representable`]).
    Diverged {
        /// The step at which it was detected.
        step: usize,
        /// What was non-finite.
        reason: String,
    },
}

impl std::fmt::Display for ArmStatus {
    /// `running`, or `stopped at step N: <reason>`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ArmStatus::Running => write!(f, "running"),
            ArmStatus::Diverged { step, reason } => write!(f, "stopped at step {step}: {reason}"),
        }
    }
}

#[derive(Clone)]
struct Twin {
    w: DMatrix<f64>,
    grad: DMatrix<f64>,
    ws: Workspace,
    opt: Box<dyn Optimizer>,
}

/// One optimizer trained from W0 and from Q·W0.
#[derive(Clone)]
pub struct Arm {
    name: String,
    info: &'static RuleInfo,
    equivariant: bool,
    lr: f64,
    twins: [Twin; 2],
    /// Optional noise twin: W0 plus a 1e-12 Gaussian perturbation in the same basis.
    noise: Option<Twin>,
    status: ArmStatus,
}

impl Arm {
    /// The arm's name in outputs (label or optimizer name).
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The optimizer's registry entry.
    pub fn info(&self) -> &'static RuleInfo {
        self.info
    }
    /// Whether its optimizer, with the preset's hyperparameters, is equivariant.
    pub fn equivariant(&self) -> bool {
        self.equivariant
    }
    /// Whether training continues or diverged.
    pub fn status(&self) -> &ArmStatus {
        &self.status
    }
    /// Current weights of twin `t` ([`BASE`] or [`ROTATED`]), `d_k × V`.
    pub fn weights(&self, t: usize) -> &DMatrix<f64> {
        &self.twins[t].w
    }
    /// Unit keys of twin `t` as of its last evaluation, `d_k × V`.
    pub fn keys(&self, t: usize) -> &DMatrix<f64> {
        &self.twins[t].ws.keys
    }
}

/// A paired experiment in progress: shared W0, Q, episode stream and held-out set, and one
/// [`Arm`] per optimizer. Advance with [`PairedRun::step`]; steps are unbounded (the caller
/// decides when to stop), and the same preset always yields bit-identical numbers.
#[derive(Clone)]
pub struct PairedRun {
    preset: Preset,
    cfg: MemoryConfig,
    w0: DMatrix<f64>,
    w0_rot: DMatrix<f64>,
    q: DMatrix<f64>,
    sampler: EpisodeSampler,
    batch: Vec<Episode>,
    heldout: Vec<Episode>,
    arms: Vec<Arm>,
    scratch: DMatrix<f64>,
    /// The two V × V Gram matrices of the twin metrics.
    grams: [DMatrix<f64>; 2],
    step: usize,
    records: Vec<StepRecord>,
}

impl PairedRun {
    /// Sets up the run: draws W0 (`d_k × V`), Q (`d_k × d_k`), the held-out episodes and each
    /// arm's zero-state optimizers. Errors: the preset's validation error.
    pub fn new(preset: &Preset) -> Result<Self, FieldError> {
        preset.validate()?;
        let cfg = preset.memory();
        let (d, v, k) = (cfg.d_k, cfg.n_keys, cfg.pairs_per_episode);
        let w0 = gaussian_matrix(
            &mut stream(preset.seed, Stream::InitialWeights),
            d,
            v,
            preset.init_std(),
        );
        let q = haar_orthogonal(&mut stream(preset.seed, Stream::Rotation), d);
        // Same product routine as the orientation divergence, so step 0 measures exactly 0.
        let mut w0_rot = DMatrix::zeros(d, v);
        crate::linalg::mul_into(&mut w0_rot, &q, &w0);
        let w0_noisy = preset.noise_twins.then(|| {
            &w0 + gaussian_matrix(
                &mut stream(preset.seed, Stream::Noise),
                d,
                v,
                NOISE_TWIN_SCALE,
            )
        });
        let mut held = EpisodeSampler::new(stream(preset.seed, Stream::HeldOut), v, cfg.n_values);
        let heldout = (0..preset.n_heldout).map(|_| held.sample(k)).collect();
        let arms = preset
            .arms
            .iter()
            .map(|spec| {
                let info = spec.info().expect("validated");
                let twin = |w: &DMatrix<f64>| Twin {
                    w: w.clone(),
                    grad: DMatrix::zeros(d, v),
                    ws: Workspace::new(cfg),
                    opt: (info.build)(spec),
                };
                Arm {
                    name: spec.arm_name().to_string(),
                    info,
                    equivariant: spec.equivariant(),
                    lr: spec.lr,
                    twins: [twin(&w0), twin(&w0_rot)],
                    noise: w0_noisy.as_ref().map(twin),
                    status: ArmStatus::Running,
                }
            })
            .collect();
        Ok(Self {
            preset: preset.clone(),
            cfg,
            sampler: EpisodeSampler::new(stream(preset.seed, Stream::Training), v, cfg.n_values),
            batch: (0..preset.batch).map(|_| Episode::with_pairs(k)).collect(),
            heldout,
            arms,
            scratch: DMatrix::zeros(d, v),
            grams: [DMatrix::zeros(v, v), DMatrix::zeros(v, v)],
            step: 0,
            records: Vec::with_capacity(preset.arms.len()),
            w0,
            w0_rot,
            q,
        })
    }

    /// The preset this run was built from.
    pub fn preset(&self) -> &Preset {
        &self.preset
    }
    /// Initial weights W0 (`d_k × V`).
    pub fn w0(&self) -> &DMatrix<f64> {
        &self.w0
    }
    /// Q·W0 as the rotated twins started (`d_k × V`).
    pub fn w0_rot(&self) -> &DMatrix<f64> {
        &self.w0_rot
    }
    /// The gauge rotation Q (`d_k × d_k`).
    pub fn q(&self) -> &DMatrix<f64> {
        &self.q
    }
    /// The arms, in preset order.
    pub fn arms(&self) -> &[Arm] {
        &self.arms
    }
    /// Number of updates applied so far (the index of the next step).
    pub fn step_index(&self) -> usize {
        self.step
    }
    /// The records of the most recent step (as returned by [`PairedRun::step`]).
    pub fn last_records(&self) -> &[StepRecord] {
        &self.records
    }
    /// The episodes of the most recent step (empty content before the first step).
    pub fn last_batch(&self) -> &[Episode] {
        &self.batch
    }

    /// Runs step s = [`PairedRun::step_index`]: draws the batch, evaluates every running arm's
    /// twins at W_s (loss, gradient, metrics) and applies one update to each. Returns one
    /// record per arm that was running (see [`StepRecord`]); an arm whose loss, gradient or
    /// weights become non-finite is marked [`ArmStatus::Diverged`] and skipped from then on.
    /// Allocation-free for every optimizer but Muon's SVD variant.
    pub fn step(&mut self) -> &[StepRecord] {
        for ep in &mut self.batch {
            self.sampler.sample_into(ep);
        }
        self.records.clear();
        let s = self.step;
        for (idx, arm) in self.arms.iter_mut().enumerate() {
            if arm.status != ArmStatus::Running {
                continue;
            }
            let mut loss = [f64::NAN; 2];
            let mut failure = None;
            for (t, twin) in arm.twins.iter_mut().enumerate() {
                match twin.ws.loss_and_grad(&twin.w, &self.batch, &mut twin.grad) {
                    Ok(l) if l.is_finite() && twin.grad.iter().all(|g| g.is_finite()) => {
                        loss[t] = l;
                        // A rule that cannot carry this gradient is stopped and says so.
                        if let Err(why) = twin.opt.representable(std::slice::from_ref(&twin.grad)) {
                            failure = Some(why);
                        }
                    }
                    Ok(l) => failure = Some(format!("loss {l} or its gradient is not finite")),
                    Err(e) => failure = Some(e.to_string()),
                }
            }
            let mut record = match failure {
                None => pair_metrics(arm, &self.q, &mut self.scratch, &mut self.grams, s, idx),
                Some(_) => StepRecord::undefined(s, idx),
            };
            record.loss = loss;
            self.records.push(record);
            if let Some(reason) = failure {
                arm.status = ArmStatus::Diverged { step: s, reason };
                continue;
            }
            let renormalize = self.preset.column_norms == ColumnNorms::Renormalize;
            if let Some(noise) = &mut arm.noise {
                // A non-finite noise twin only loses its own curve; the arm goes on.
                if noise
                    .ws
                    .loss_and_grad(&noise.w, &self.batch, &mut noise.grad)
                    .is_ok()
                {
                    let mut oracle = BatchOracle {
                        ws: &mut noise.ws,
                        episodes: &self.batch,
                    };
                    noise.opt.step_with(
                        std::slice::from_mut(&mut noise.w),
                        std::slice::from_ref(&noise.grad),
                        arm.lr,
                        &mut oracle,
                    );
                    if renormalize {
                        renormalize_columns(&mut noise.w);
                    }
                }
            }
            for twin in &mut arm.twins {
                let mut oracle = BatchOracle {
                    ws: &mut twin.ws,
                    episodes: &self.batch,
                };
                twin.opt.step_with(
                    std::slice::from_mut(&mut twin.w),
                    std::slice::from_ref(&twin.grad),
                    arm.lr,
                    &mut oracle,
                );
                if renormalize {
                    renormalize_columns(&mut twin.w);
                }
            }
        }
        self.step += 1;
        &self.records
    }

    /// Metrics of the current weights W_s (s = [`PairedRun::step_index`]) without taking a
    /// step, e.g. the final state after the last update. `loss` is NaN. Arms whose weights
    /// cannot be normalised are marked diverged and omitted.
    pub fn snapshot(&mut self) -> Vec<StepRecord> {
        let s = self.step;
        let mut out = Vec::with_capacity(self.arms.len());
        for (idx, arm) in self.arms.iter_mut().enumerate() {
            if arm.status != ArmStatus::Running {
                continue;
            }
            let failed = arm
                .twins
                .iter_mut()
                .find_map(|t| normalize_columns(&t.w, &mut t.ws.keys, &mut t.ws.norms).err());
            if let Some(e) = failed {
                arm.status = ArmStatus::Diverged {
                    step: s,
                    reason: e.to_string(),
                };
                continue;
            }
            out.push(pair_metrics(
                arm,
                &self.q,
                &mut self.scratch,
                &mut self.grams,
                s,
                idx,
            ));
        }
        out
    }

    /// Held-out loss and accuracy of both twins of every arm at the current weights, in arm
    /// order; `None` for a diverged arm (or one that diverges here).
    pub fn evaluate_heldout(&mut self) -> Vec<Option<HeldOut>> {
        let s = self.step;
        let heldout = &self.heldout;
        self.arms
            .iter_mut()
            .map(|arm| {
                if arm.status != ArmStatus::Running {
                    return None;
                }
                let mut h = HeldOut {
                    loss: [0.0; 2],
                    accuracy: [0.0; 2],
                };
                for (t, twin) in arm.twins.iter_mut().enumerate() {
                    match twin.ws.evaluate(&twin.w, heldout) {
                        Ok((l, a)) => (h.loss[t], h.accuracy[t]) = (l, a),
                        Err(e) => {
                            arm.status = ArmStatus::Diverged {
                                step: s,
                                reason: e.to_string(),
                            };
                            return None;
                        }
                    }
                }
                Some(h)
            })
            .collect()
    }

    /// The random-rotation baseline (numerics §4) of both twins' current keys for every running
    /// arm, each drawn from a fresh copy of the seed's baseline stream, so every key matrix is
    /// compared against the same rotations. `None` for a diverged arm.
    pub fn baselines(&mut self) -> Vec<Option<[RotationBaseline; 2]>> {
        let (seed, m) = (self.preset.seed, self.preset.baseline_rotations);
        self.arms
            .iter_mut()
            .map(|arm| {
                if arm.status != ArmStatus::Running {
                    return None;
                }
                let one = |t: &mut Twin| {
                    normalize_columns(&t.w, &mut t.ws.keys, &mut t.ws.norms).ok()?;
                    Some(RotationBaseline::compute(
                        &t.ws.keys,
                        m,
                        &mut stream(seed, Stream::Baseline),
                    ))
                };
                let [a, b] = &mut arm.twins;
                Some([one(a)?, one(b)?])
            })
            .collect()
    }

    /// Activation statistics (the memory `S` and the reads) of every running arm's run from W0
    /// at the current weights, on the first [`activation_episodes`] held-out episodes with up
    /// to `min(baseline_rotations, ACTIVATION_ROTATIONS)` rotations; `None` for a diverged arm.
    pub fn activations(&mut self) -> Vec<Option<ActivationStats>> {
        let seed = self.preset.seed;
        let rotations = self.preset.baseline_rotations.min(ACTIVATION_ROTATIONS);
        let n = activation_episodes(self.cfg.pairs_per_episode);
        let episodes = &self.heldout[..self.heldout.len().min(n)];
        self.arms
            .iter_mut()
            .map(|arm| {
                if arm.status != ArmStatus::Running {
                    return None;
                }
                let t = &mut arm.twins[BASE];
                activation_stats(&mut t.ws, &t.w, episodes, rotations, seed).ok()
            })
            .collect()
    }

    /// Test hook: overwrites one entry of arm `arm`'s base twin with `value` (e.g. NaN), to check
    /// that a non-finite run is marked diverged while the others go on. Panics on a bad index.
    #[doc(hidden)]
    pub fn inject_weight(&mut self, arm: usize, value: f64) {
        self.arms[arm].twins[BASE].w[0] = value;
    }

    /// The memory task's sizes.
    pub fn memory(&self) -> &MemoryConfig {
        &self.cfg
    }
}

/// Pair metrics of `arm` from its twins' current keys and norms (set by the last evaluation).
fn pair_metrics(
    arm: &Arm,
    q: &DMatrix<f64>,
    scratch: &mut DMatrix<f64>,
    grams: &mut [DMatrix<f64>; 2],
    step: usize,
    idx: usize,
) -> StepRecord {
    let [a, b] = &arm.twins;
    let (na, nb) = (mean_sd(&a.ws.norms), mean_sd(&b.ws.norms));
    StepRecord {
        step,
        arm: idx,
        loss: [f64::NAN; 2],
        orientation_div: orientation_divergence(&b.w, q, &a.w, scratch),
        gram_div: gram_divergence_with(&a.ws.keys, &b.ws.keys, grams),
        axis_concentration: [
            axis_concentration(&a.ws.keys),
            axis_concentration(&b.ws.keys),
        ],
        mean_column_norm: [na.0, nb.0],
        column_norm_sd: [na.1, nb.1],
        noise_div: arm
            .noise
            .as_ref()
            .map_or(f64::NAN, |n| relative_distance(&n.w, &a.w)),
    }
}

/// `‖x − y‖F / ‖y‖F`.
fn relative_distance(x: &DMatrix<f64>, y: &DMatrix<f64>) -> f64 {
    use crate::linalg::norm::{distance, frobenius};
    distance(x.as_slice(), y.as_slice()) / frobenius(y)
}

/// Size of the noise twin's perturbation of W0 (per entry standard deviation).
pub const NOISE_TWIN_SCALE: f64 = 1e-12;

/// Rescales every column of `w` to unit length (the norm control of the explainer §7); a zero
/// or non-finite column is left as it is, for the next step's check to report.
pub fn renormalize_columns(w: &mut DMatrix<f64>) {
    for mut col in w.column_iter_mut() {
        let norm = crate::linalg::norm::checked_norm(col.norm(), col.as_slice().iter().copied());
        if norm.is_finite() && norm > 0.0 {
            col /= norm;
        }
    }
}
