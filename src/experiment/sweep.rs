//! Seed sweeps (numerics §4): the same preset over seeds s0 … s0+N−1, run in parallel with rayon;
//! results are collected in seed order, so they never depend on thread count or scheduling.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::paired::{ArmStatus, BASE, HeldOut, PairedRun, ROTATED, StepRecord};
use crate::live::{Stop, Task, undeal};
use crate::metrics::{RotationBaseline, mean_sd};
use crate::preset::Preset;
use crate::validate::FieldError;

/// Most seeds per point of a seed, ε or d_k sweep (as the commands' `--seeds`).
pub const MAX_SEEDS: usize = 10_000;
/// Most ε or d_k values of one sweep.
pub const MAX_POINTS: usize = 64;

/// Final results of one arm at one seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedArm {
    /// The seed.
    pub seed: u64,
    /// Arm name.
    pub arm: String,
    /// Running to the end, or diverged.
    pub status: ArmStatus,
    /// Metrics of the final weights; `None` if diverged.
    #[serde(rename = "final")]
    pub final_metrics: Option<StepRecord>,
    /// Held-out loss and accuracy of the final weights.
    pub heldout: Option<HeldOut>,
    /// Random-rotation baselines of both twins' final keys.
    pub baseline: Option<[RotationBaseline; 2]>,
}

/// One arm across all seeds: the numbers behind the explainer's verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmAggregate {
    /// Arm name.
    pub arm: String,
    /// Whether the optimizer is equivariant under W → QW.
    pub equivariant: bool,
    /// Seeds that finished without diverging (the statistics below use only these).
    pub seeds_ok: usize,
    /// Mean over seeds of the excess A(K) − baseline mean (run from W0).
    pub excess_mean: f64,
    /// Sample standard deviation over seeds of that excess.
    pub excess_sd: f64,
    /// Mean over seeds of the excess of the run from Q·W0.
    pub excess_rot_mean: f64,
    /// Mean over seeds of the z-score excess/sd (run from W0).
    pub z_mean: f64,
    /// Mean over seeds of the baseline's own standard deviation: the spread chance produces.
    pub baseline_sd_mean: f64,
    /// Seeds whose A(K) fell outside the baseline's 5–95% band (run from W0).
    pub outside_band: usize,
    /// Mean final twin orientation divergence.
    pub orientation_div_mean: f64,
    /// Sample standard deviation over seeds of the final twin orientation divergence.
    #[serde(default)]
    pub orientation_div_sd: f64,
    /// Mean final Gram divergence.
    pub gram_div_mean: f64,
    /// Sample standard deviation over seeds of the final Gram divergence.
    #[serde(default)]
    pub gram_div_sd: f64,
    /// Mean final held-out accuracy (run from W0).
    pub heldout_accuracy_mean: f64,
    /// Sample standard deviation over seeds of the final held-out accuracy (run from W0).
    #[serde(default)]
    pub heldout_accuracy_sd: f64,
}

/// What a seed sweep can say of one arm's axis concentration, from its two numbers: whether
/// the mean excess lies outside the baseline spread ([`ArmAggregate::excess_is_outside_baseline`])
/// and whether more than half of the seeds left their own 5–95% band (chance alone puts about
/// one seed in ten there). The words follow both, so a verdict never contradicts the count
/// printed beside it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Fewer than two seeds finished.
    TooFewSeeds,
    /// The mean and most seeds lie outside the spread.
    Outside,
    /// The mean lies outside the spread, most seeds inside their bands.
    MeanOnly,
    /// Most seeds lie outside their bands, the mean inside the spread (they disagree in sign).
    SeedsOnly,
    /// The mean and most seeds lie inside.
    Within,
}

impl Verdict {
    /// The verdict in a table's column.
    pub fn short(self) -> &'static str {
        match self {
            Verdict::TooFewSeeds => "too few seeds for a verdict",
            Verdict::Outside => "outside the baseline spread",
            Verdict::MeanOnly => "mean outside, most seeds inside",
            Verdict::SeedsOnly => "most seeds outside, mean inside",
            Verdict::Within => "within the baseline spread",
        }
    }

    /// The verdict with what it means for the keys' orientation.
    pub fn explained(self) -> &'static str {
        match self {
            Verdict::TooFewSeeds => "too few seeds for a verdict",
            Verdict::Outside => {
                "outside the random-rotation spread, in the mean and in most seeds: these keys \
                 prefer the axes"
            }
            Verdict::MeanOnly => {
                "the mean lies outside the random-rotation spread but most seeds stay inside \
                 their bands: a small, consistent lean towards the axes, not a clear preference \
                 (more seeds or a larger d_k would tell)"
            }
            Verdict::SeedsOnly => {
                "most seeds leave their bands but the mean stays inside the spread: the seeds \
                 disagree in sign, so there is no verdict on the axes"
            }
            Verdict::Within => {
                "within the random-rotation spread, in the mean and in most seeds: no more \
                 axis-aligned than chance"
            }
        }
    }
}

impl ArmAggregate {
    /// The sweep's [`Verdict`] on this arm.
    pub fn verdict(&self) -> Verdict {
        let most = 2 * self.outside_band > self.seeds_ok;
        match (self.seeds_ok >= 2, self.excess_is_outside_baseline(), most) {
            (false, _, _) => Verdict::TooFewSeeds,
            (true, true, true) => Verdict::Outside,
            (true, true, false) => Verdict::MeanOnly,
            (true, false, true) => Verdict::SeedsOnly,
            (true, false, false) => Verdict::Within,
        }
    }

    /// Whether the mean excess lies outside ±2 standard errors of zero *and* beyond one
    /// baseline standard deviation: a plain-number form of "outside the baseline spread".
    pub fn excess_is_outside_baseline(&self) -> bool {
        let se = self.excess_sd / (self.seeds_ok as f64).sqrt();
        self.seeds_ok >= 2
            && self.excess_mean.abs() > 2.0 * se
            && self.excess_mean.abs() > self.baseline_sd_mean
    }
}

/// Contents of `sweep.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    /// The preset (its `seed` is the first seed).
    pub preset: Preset,
    /// The seeds run, in order.
    pub seeds: Vec<u64>,
    /// One entry per (seed, arm), seeds in order, arms in preset order.
    pub per_seed: Vec<SeedArm>,
    /// One entry per arm.
    pub aggregate: Vec<ArmAggregate>,
}

/// Why a sweep did not produce a result.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    /// The preset is invalid.
    #[error(transparent)]
    Invalid(#[from] FieldError),
    /// The cancel flag was raised.
    #[error("cancelled")]
    Cancelled,
}

impl From<SweepError> for Stop {
    fn from(e: SweepError) -> Self {
        match e {
            SweepError::Cancelled => Stop::Cancelled,
            SweepError::Invalid(e) => Stop::Failed(e.to_string()),
        }
    }
}

/// A seed sweep as data: the preset over `seeds` seeds ([`sweep_until`]), or the seeds
/// `part.0, part.0 + part.1, …` of them (a part of it in one of the page's workers). The app's
/// tab, the page's workers, the command and its shards (`shard::Job`) all hold this one value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepTask {
    /// The preset swept.
    pub preset: Preset,
    /// How many seeds.
    pub seeds: usize,
    /// Which of them: the first and the stride.
    pub part: (usize, usize),
}

impl SweepTask {
    /// Every seed of an `n_seeds`-seed sweep of `preset`.
    pub fn new(preset: Preset, seeds: usize) -> Self {
        Self {
            preset,
            seeds,
            part: (0, 1),
        }
    }
}

impl Task for SweepTask {
    type Output = Result<SweepResult, Stop>;
    const KIND: &'static str = "sweep";

    fn run(self, progress: &(dyn Fn() + Sync), cancel: &AtomicBool) -> Self::Output {
        if self.part == (0, 1) {
            return Ok(sweep_until(&self.preset, self.seeds, progress, cancel)?);
        }
        self.preset.validate().map_err(SweepError::from)?;
        let seeds: Vec<u64> = sweep_seeds(&self.preset, self.seeds)
            .into_iter()
            .skip(self.part.0)
            .step_by(self.part.1.max(1))
            .collect();
        let per_seed: Vec<Vec<SeedArm>> = seeds
            .par_iter()
            .map(|&s| {
                let r = run_seed_until(&self.preset, s, cancel);
                progress();
                r
            })
            .collect::<Result<_, _>>()?;
        Ok(assemble_sweep(&self.preset, seeds, per_seed))
    }

    /// Seeds dealt round-robin.
    fn split(self, n: usize) -> Vec<Self> {
        let n = n.clamp(1, self.seeds.max(1));
        (0..n)
            .map(|k| SweepTask {
                preset: self.preset.clone(),
                seeds: self.seeds,
                part: (k, n),
            })
            .collect()
    }

    /// The parts' seeds dealt back into order and the sweep assembled from them, as a whole
    /// sweep assembles it ([`assemble_sweep`]).
    fn merge(parts: Vec<Self::Output>) -> Self::Output {
        let parts: Vec<SweepResult> = parts.into_iter().collect::<Result<_, _>>()?;
        let Some(preset) = parts.first().map(|p| p.preset.clone()) else {
            return Err(Stop::Failed("no part of the sweep came back".into()));
        };
        let arms = preset.arms.len().max(1);
        let dealt = parts
            .into_iter()
            .map(|p| {
                let rows = p.per_seed.chunks(arms).map(<[SeedArm]>::to_vec);
                p.seeds.into_iter().zip(rows).collect()
            })
            .collect();
        let (seeds, per_seed): (Vec<u64>, Vec<Vec<SeedArm>>) = undeal(dealt).into_iter().unzip();
        Ok(assemble_sweep(&preset, seeds, per_seed))
    }
}

/// Runs `preset` at `seed` for `preset.steps` steps and returns each arm's final results.
/// Errors: an invalid preset.
pub fn run_seed(preset: &Preset, seed: u64) -> Result<Vec<SeedArm>, FieldError> {
    run_seed_until(preset, seed, &AtomicBool::new(false)).map_err(invalid)
}

/// Largest setup a trial may pay on the caller's thread (the UI's): rotation baselines times
/// d_k² times keys, and a step's batch × pairs × d_k × keys. Larger presets get no trial.
const TRIAL_WORK: f64 = 5e7;

/// Seconds per training step and arm (the unit of a key-lab analysis's work) that one full run
/// of `preset` ([`run_seed`]) takes on this computer, from two short trials on the calling
/// thread: `steps` and `2·steps` steps, whose difference is the steps' cost and whose rest the
/// run's one-off cost (building it, its baselines, its final evaluation), counted once over
/// `preset.steps`. `None` for an invalid preset, one too large to try on the caller's thread
/// ([`TRIAL_WORK`]), or a clock too coarse to time it. For the estimate before a first run.
pub fn trial_pace(preset: &Preset, steps: usize) -> Option<f64> {
    let (d_k, keys) = (preset.d_k as f64, preset.n_keys as f64);
    let setup = preset.baseline_rotations as f64 * d_k * d_k * keys;
    let step = (preset.batch * preset.pairs_per_episode) as f64 * d_k * keys;
    if setup.max(step) > TRIAL_WORK {
        return None;
    }
    let total = preset.steps.max(1);
    let short = steps.clamp(1, total);
    let timed = |n: usize| {
        let p = Preset {
            steps: n,
            ..preset.clone()
        };
        let t = web_time::Instant::now();
        run_seed(&p, p.seed).ok()?;
        Some(t.elapsed().as_secs_f64())
    };
    let (once, twice) = (timed(short)?, timed(2 * short)?);
    if twice <= 0.0 {
        return None;
    }
    let per_step = ((twice - once) / short as f64).max(0.0);
    let fixed = (once - per_step * short as f64).max(0.0);
    let run = fixed + per_step * total as f64;
    Some(run / (total * preset.arms.len().max(1)) as f64)
}

/// The validation error of a sweep that nothing could cancel.
fn invalid(e: SweepError) -> FieldError {
    match e {
        SweepError::Invalid(e) => e,
        SweepError::Cancelled => unreachable!("nothing raises this flag"),
    }
}

/// Runs cells of a seed or points sweep whose points are `presets` with `seeds` seeds each
/// ([`cell_run`]), in parallel; `progress()` after each.
pub(crate) fn run_seed_cells(
    presets: &[Preset],
    seeds: usize,
    cells: &[usize],
    progress: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
) -> Result<Vec<Vec<SeedArm>>, SweepError> {
    cells
        .par_iter()
        .map(|&c| {
            let (preset, seed) = cell_run(presets, seeds, c);
            let r = run_seed_until(preset, seed, cancel);
            progress();
            r
        })
        .collect()
}

/// The preset and seed of cell `c` of a seed or points sweep whose points are `points` with
/// `seeds` seeds each. Panics if `c` is out of range.
pub(crate) fn cell_run(points: &[Preset], seeds: usize, c: usize) -> (&Preset, u64) {
    let preset = &points[c / seeds];
    (preset, preset.seed.wrapping_add((c % seeds) as u64))
}

/// [`run_seed`] that gives up with [`SweepError::Cancelled`] soon after `cancel` is raised.
pub fn run_seed_until(
    preset: &Preset,
    seed: u64,
    cancel: &AtomicBool,
) -> Result<Vec<SeedArm>, SweepError> {
    let mut p = preset.clone();
    p.seed = seed;
    let mut run = PairedRun::new(&p)?;
    for s in 0..p.steps {
        if s % 64 == 0 && cancel.load(Ordering::Relaxed) {
            return Err(SweepError::Cancelled);
        }
        run.step();
    }
    let finals = run.snapshot();
    let heldout = run.evaluate_heldout();
    let baselines = run.baselines();
    Ok(run
        .arms()
        .iter()
        .enumerate()
        .map(|(i, arm)| {
            let running = *arm.status() == ArmStatus::Running;
            SeedArm {
                seed,
                arm: arm.name().into(),
                status: arm.status().clone(),
                final_metrics: finals.iter().find(|r| r.arm == i && running).copied(),
                heldout: heldout[i],
                baseline: baselines[i].clone(),
            }
        })
        .collect())
}

/// Runs `n_seeds` seeds starting at `preset.seed` in parallel on the current rayon pool;
/// `progress()` is called once per finished seed (from any thread).
/// Errors: an invalid preset.
pub fn sweep(
    preset: &Preset,
    n_seeds: usize,
    progress: &(dyn Fn() + Sync),
) -> Result<SweepResult, FieldError> {
    sweep_until(preset, n_seeds, progress, &AtomicBool::new(false)).map_err(invalid)
}

/// [`sweep`] that stops early with [`SweepError::Cancelled`] once `cancel` is raised.
pub fn sweep_until(
    preset: &Preset,
    n_seeds: usize,
    progress: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
) -> Result<SweepResult, SweepError> {
    preset.validate()?;
    let seeds = sweep_seeds(preset, n_seeds);
    let per_seed: Vec<Vec<SeedArm>> = seeds
        .par_iter()
        .map(|&s| {
            let r = run_seed_until(preset, s, cancel);
            progress();
            r
        })
        .collect::<Result<_, _>>()?;
    Ok(assemble_sweep(preset, seeds, per_seed))
}

/// The seeds of an `n_seeds`-seed sweep of `preset`: `preset.seed`, `preset.seed + 1`, …
/// (wrapping at 2⁶⁴).
pub fn sweep_seeds(preset: &Preset, n_seeds: usize) -> Vec<u64> {
    (0..n_seeds as u64)
        .map(|i| preset.seed.wrapping_add(i))
        .collect()
}

/// The sweep result from each seed's arms (`per_seed[i]` from [`run_seed`] at `seeds[i]`, in
/// seed order): the per-seed rows and every arm's aggregate. Pure, so a sweep assembled from
/// shards run elsewhere is identical to one run here. `preset` must be valid.
pub fn assemble_sweep(
    preset: &Preset,
    seeds: Vec<u64>,
    per_seed: Vec<Vec<SeedArm>>,
) -> SweepResult {
    let per_seed: Vec<SeedArm> = per_seed.into_iter().flatten().collect();
    let aggregate = preset
        .arms
        .iter()
        .map(|spec| aggregate(spec.arm_name(), spec.equivariant(), &per_seed))
        .collect();
    SweepResult {
        preset: preset.clone(),
        seeds,
        per_seed,
        aggregate,
    }
}

/// One seed's final metrics, held-out result and baselines.
type Finished<'a> = (&'a StepRecord, &'a HeldOut, &'a [RotationBaseline; 2]);

fn aggregate(arm: &str, equivariant: bool, per_seed: &[SeedArm]) -> ArmAggregate {
    let ok: Vec<Finished> = per_seed
        .iter()
        .filter(|s| s.arm == arm)
        .filter_map(|s| {
            Some((
                s.final_metrics.as_ref()?,
                s.heldout.as_ref()?,
                s.baseline.as_ref()?,
            ))
        })
        .collect();
    let col = |f: &dyn Fn(&Finished) -> f64| -> Vec<f64> { ok.iter().map(f).collect() };
    let (excess_mean, excess_sd) = mean_sd(&col(&|x| x.2[BASE].excess));
    let orientation = mean_sd(&col(&|x| x.0.orientation_div));
    let gram = mean_sd(&col(&|x| x.0.gram_div));
    let accuracy = mean_sd(&col(&|x| x.1.accuracy[BASE]));
    ArmAggregate {
        arm: arm.into(),
        equivariant,
        seeds_ok: ok.len(),
        excess_mean,
        excess_sd,
        excess_rot_mean: mean_sd(&col(&|x| x.2[ROTATED].excess)).0,
        z_mean: mean_sd(&col(&|x| x.2[BASE].z)).0,
        baseline_sd_mean: mean_sd(&col(&|x| x.2[BASE].sd)).0,
        outside_band: ok.iter().filter(|x| x.2[BASE].outside_band()).count(),
        orientation_div_mean: orientation.0,
        orientation_div_sd: orientation.1,
        gram_div_mean: gram.0,
        gram_div_sd: gram.1,
        heldout_accuracy_mean: accuracy.0,
        heldout_accuracy_sd: accuracy.1,
    }
}

/// `Err(message)` unless `x` is finite and in `[lo, hi]`.
pub(super) fn in_range(x: f64, lo: f64, hi: f64) -> Result<(), String> {
    if x.is_finite() && (lo..=hi).contains(&x) {
        Ok(())
    } else {
        Err(format!(
            "{x} is out of range; allowed finite, in [{lo}, {hi}]"
        ))
    }
}

/// A(K) and its baseline's statistics lie in [1/d_k, 1]; this bound leaves room for rounding.
const A_MAX: f64 = 1.0 + 1e-9;

impl SeedArm {
    /// Checks a result read back from disk (a shard, the app's saved sweeps) as arm `arm` of
    /// `preset` run at `seed`: the arm and seed are the expected ones; a running arm has its
    /// final metrics (at step `preset.steps`), held-out result and baselines, a diverged one
    /// diverged by then and has no final metrics; every number is finite and in its range
    /// (losses and divergences ≥ 0, A(K), accuracies and baseline statistics in [0, 1]; the
    /// final step's loss and a missing noise twin's divergence are NaN). Errors name the field.
    pub fn check(&self, preset: &Preset, arm: &str, seed: u64) -> Result<(), FieldError> {
        let field = |f: &'static str| move |m: String| FieldError::new(f, m);
        if self.arm != arm || self.seed != seed {
            return Err(FieldError::new(
                "arm",
                format!(
                    "arm {:?} at seed {} where the preset has {arm:?} at seed {seed}",
                    self.arm, self.seed
                ),
            ));
        }
        match (
            &self.status,
            &self.final_metrics,
            &self.heldout,
            &self.baseline,
        ) {
            (ArmStatus::Running, Some(f), Some(h), Some(b)) => {
                if f.step != preset.steps {
                    return Err(FieldError::new(
                        "final.step",
                        format!("{} where the preset runs {} steps", f.step, preset.steps),
                    ));
                }
                check_record(f)?;
                for t in [BASE, ROTATED] {
                    in_range(h.loss[t], 0.0, f64::MAX).map_err(field("heldout.loss"))?;
                    in_range(h.accuracy[t], 0.0, 1.0).map_err(field("heldout.accuracy"))?;
                    check_baseline(&b[t], preset.baseline_rotations)
                        .map_err(|e| e.within("baseline"))?;
                }
                Ok(())
            }
            (ArmStatus::Running, ..) => Err(FieldError::new(
                "final",
                "a running arm without its final metrics, held-out result or baselines",
            )),
            (ArmStatus::Diverged { step, .. }, None, ..) if *step <= preset.steps => Ok(()),
            (ArmStatus::Diverged { step, .. }, ..) => Err(FieldError::new(
                "status",
                format!(
                    "diverged at step {step} of {} but with final metrics, or after the end",
                    preset.steps
                ),
            )),
        }
    }
}

fn check_record(r: &StepRecord) -> Result<(), FieldError> {
    let field = |f: &'static str| move |m: String| FieldError::new(format!("final.{f}"), m);
    let nan_or = |x: f64| {
        if x.is_nan() {
            Ok(())
        } else {
            in_range(x, 0.0, f64::MAX)
        }
    };
    for t in [BASE, ROTATED] {
        nan_or(r.loss[t]).map_err(field("loss"))?;
        in_range(r.axis_concentration[t], 0.0, A_MAX).map_err(field("axis_concentration"))?;
        in_range(r.mean_column_norm[t], 0.0, f64::MAX).map_err(field("mean_column_norm"))?;
        in_range(r.column_norm_sd[t], 0.0, f64::MAX).map_err(field("column_norm_sd"))?;
    }
    in_range(r.orientation_div, 0.0, f64::MAX).map_err(field("orientation_div"))?;
    in_range(r.gram_div, 0.0, f64::MAX).map_err(field("gram_div"))?;
    nan_or(r.noise_div).map_err(field("noise_div"))
}

fn check_baseline(b: &RotationBaseline, rotations: usize) -> Result<(), FieldError> {
    let field = |f: &'static str| move |m: String| FieldError::new(f, m);
    for (name, x) in [
        ("axis_concentration", b.axis_concentration),
        ("mean", b.mean),
        ("p5", b.p5),
        ("p95", b.p95),
    ] {
        in_range(x, 0.0, A_MAX).map_err(field(name))?;
    }
    in_range(b.sd, 0.0, 1.0).map_err(field("sd"))?;
    in_range(b.excess, -A_MAX, A_MAX).map_err(field("excess"))?;
    if b.p5 > b.p95 {
        return Err(FieldError::new(
            "p5",
            format!("{} is above p95 {}", b.p5, b.p95),
        ));
    }
    // z = excess / sd is ±∞ or NaN only when the baseline has no spread.
    if b.sd > 0.0 && !b.z.is_finite() {
        return Err(FieldError::new("z", format!("{} with sd {}", b.z, b.sd)));
    }
    if b.rotations != rotations {
        return Err(FieldError::new(
            "rotations",
            format!("{} where the preset draws {rotations}", b.rotations),
        ));
    }
    Ok(())
}

/// Checks every arm of one seed read back from disk, as [`run_seed`] at `seed` of `preset`
/// returns them (one per arm, in preset order). Errors name the arm and field.
pub fn check_seed(preset: &Preset, seed: u64, arms: &[SeedArm]) -> Result<(), String> {
    if arms.len() != preset.arms.len() {
        return Err(format!(
            "seed {seed}: {} arms, but the preset has {}",
            arms.len(),
            preset.arms.len()
        ));
    }
    for (spec, got) in preset.arms.iter().zip(arms) {
        got.check(preset, spec.arm_name(), seed)
            .map_err(|e| format!("seed {seed}, arm {}: {e}", spec.arm_name()))?;
    }
    Ok(())
}

impl SweepResult {
    /// Checks a sweep read back from disk (the app's saved analyses): a valid preset, seeds
    /// `preset.seed`, `preset.seed + 1`, … (1..=10⁴ of them), every seed's arms passing
    /// [`check_seed`]. Returns it with its aggregates computed again from the per-seed rows:
    /// derived numbers are never taken from disk (and files saved before an aggregate field
    /// existed get it). Errors name the seed, arm and field.
    pub fn checked(self) -> Result<SweepResult, String> {
        self.preset
            .validate()
            .map_err(|e| format!("the preset's {e}"))?;
        let n = self.seeds.len();
        if !(1..=MAX_SEEDS).contains(&n) || self.seeds != sweep_seeds(&self.preset, n) {
            return Err(format!(
                "seeds {:?} are not {} consecutive seeds from the preset's seed {}",
                self.seeds, n, self.preset.seed
            ));
        }
        let arms = self.preset.arms.len();
        if self.per_seed.len() != n * arms {
            return Err(format!(
                "{} per-seed rows for {n} seeds × {arms} arms",
                self.per_seed.len()
            ));
        }
        for (&seed, rows) in self.seeds.iter().zip(self.per_seed.chunks(arms)) {
            check_seed(&self.preset, seed, rows)?;
        }
        let per_seed = self
            .per_seed
            .chunks(arms)
            .map(<[SeedArm]>::to_vec)
            .collect();
        Ok(assemble_sweep(&self.preset, self.seeds, per_seed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An arm of `seeds` seeds with mean excess `mean` (sd 0.01, baseline sd 0.01) and
    /// `outside` seeds outside their bands.
    fn arm(seeds: usize, mean: f64, outside: usize) -> ArmAggregate {
        ArmAggregate {
            arm: "adam".into(),
            equivariant: false,
            seeds_ok: seeds,
            excess_mean: mean,
            excess_sd: 0.01,
            excess_rot_mean: 0.0,
            z_mean: 0.0,
            baseline_sd_mean: 0.01,
            outside_band: outside,
            orientation_div_mean: 0.5,
            orientation_div_sd: 0.0,
            gram_div_mean: 0.5,
            gram_div_sd: 0.0,
            heldout_accuracy_mean: 0.9,
            heldout_accuracy_sd: 0.0,
        }
    }

    #[test]
    fn the_verdict_follows_the_mean_and_the_seed_count() {
        assert_eq!(arm(1, 1.0, 1).verdict(), Verdict::TooFewSeeds);
        assert_eq!(arm(4, 0.05, 3).verdict(), Verdict::Outside);
        // The case a researcher met: the mean beyond the spread, 0 of 4 seeds outside.
        let lean = arm(4, 0.05, 0);
        assert_eq!(lean.verdict(), Verdict::MeanOnly);
        assert!(!lean.verdict().explained().contains("prefer the axes"));
        assert_eq!(arm(4, 0.0, 4).verdict(), Verdict::SeedsOnly);
        assert_eq!(arm(4, 0.005, 0).verdict(), Verdict::Within);
        // Exactly half is not "most".
        assert_eq!(arm(4, 0.05, 2).verdict(), Verdict::MeanOnly);
    }

    /// A seed sweep dealt over the page's workers merges to the whole sweep bit for bit
    /// (its per-seed rows and its aggregates), for any number of parts.
    #[test]
    fn a_seed_sweep_split_over_workers_merges_to_the_whole_bit_for_bit() {
        let mut preset = Preset::load("classroom").unwrap();
        preset.steps = 30;
        let run = |t: SweepTask| t.run(&|| {}, &AtomicBool::new(false));
        let whole = run(SweepTask::new(preset.clone(), 5)).unwrap();
        assert_eq!(whole.seeds.len(), 5);
        for n in [1, 2, 3, 8] {
            let parts = SweepTask::new(preset.clone(), 5).split(n);
            assert_eq!(parts.len(), n.min(5));
            let merged = SweepTask::merge(parts.into_iter().map(run).collect()).unwrap();
            assert_eq!(format!("{merged:?}"), format!("{whole:?}"), "{n} parts");
        }
    }
}
