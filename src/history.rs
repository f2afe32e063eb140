//! What is kept of a key-lab run: bounded, decimated series built from the worker's updates.
//! The app folds the worker's updates into a [`RunHistory`]; `run --figures` folds the same
//! updates from its own loop into one, so both draw their figures from the same history with
//! the same builders ([`crate::experiment::figures::run_figure`]).
//!
//! Each series keeps at most [`BUCKETS`] min/max buckets, doubling the steps per bucket when
//! full, so a 10⁶-step run costs the same memory as a 10⁴-step one and a one-step spike still
//! shows (as a bucket's max). Non-finite values are never stored.
//!
//! Headless: no GUI import (the command line keeps one too).

use crate::experiment::live::{ArmLabel, Snapshot, Update};
use crate::experiment::{ArmStatus, HeldOut, StepRecord};
use crate::figure::Earlier;
use crate::metrics::{RotationBaseline, StatBaseline};
use crate::preset::Preset;

/// Steps in the training-loss moving average the live plot and `run --figures` draw.
pub const LOSS_AVERAGE_STEPS: f64 = 50.0;

/// The next value of the training-loss moving average after `loss`, from the previous value
/// `prev` (None at the first finite loss): an exponential average with weight
/// 1/[`LOSS_AVERAGE_STEPS`], about the mean of the last 50 steps.
pub fn loss_average(prev: Option<f64>, loss: f64) -> f64 {
    prev.map_or(loss, |m| m + (loss - m) / LOSS_AVERAGE_STEPS)
}

/// Buckets per series before neighbours are merged.
pub const BUCKETS: usize = 2048;
pub use crate::figure::LOG_FLOOR;

/// How a series maps values for plotting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// As is.
    Linear,
    /// log10, with values ≤ [`LOG_FLOOR`] drawn at the floor.
    Log,
}

#[derive(Clone, Copy, Debug)]
struct Bucket {
    index: u64,
    min: [f64; 2],
    max: [f64; 2],
}

/// A min/max-decimated time series of (step, value).
#[derive(Clone, Debug)]
pub struct MinMaxSeries {
    scale: Scale,
    steps_per_bucket: u64,
    buckets: Vec<Bucket>,
    last: Option<[f64; 2]>,
    cache: Vec<[f64; 2]>,
    dirty: bool,
}

impl MinMaxSeries {
    /// An empty series plotted on `scale`.
    pub fn new(scale: Scale) -> Self {
        Self {
            scale,
            steps_per_bucket: 1,
            buckets: Vec::new(),
            last: None,
            cache: Vec::new(),
            dirty: false,
        }
    }

    /// Adds `value` at `step`; non-finite values are skipped. Steps must not decrease.
    pub fn push(&mut self, step: usize, value: f64) {
        if !value.is_finite() {
            return;
        }
        let x = step as f64;
        self.last = Some([x, value]);
        self.dirty = true;
        let index = step as u64 / self.steps_per_bucket;
        match self.buckets.last_mut() {
            Some(b) if b.index == index => {
                if value < b.min[1] {
                    b.min = [x, value];
                }
                if value > b.max[1] {
                    b.max = [x, value];
                }
            }
            _ => self.buckets.push(Bucket {
                index,
                min: [x, value],
                max: [x, value],
            }),
        }
        if self.buckets.len() > BUCKETS {
            self.compact();
        }
    }

    fn compact(&mut self) {
        self.steps_per_bucket *= 2;
        let mut merged: Vec<Bucket> = Vec::with_capacity(BUCKETS / 2 + 1);
        for b in self.buckets.drain(..) {
            let index = b.index / 2;
            match merged.last_mut() {
                Some(m) if m.index == index => {
                    if b.min[1] < m.min[1] {
                        m.min = b.min;
                    }
                    if b.max[1] > m.max[1] {
                        m.max = b.max;
                    }
                }
                _ => merged.push(Bucket { index, ..b }),
            }
        }
        self.buckets = merged;
    }

    /// The latest (step, value) pushed.
    pub fn last(&self) -> Option<[f64; 2]> {
        self.last
    }

    /// Number of stored buckets (each drawn as one or two points).
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    /// Whether nothing has been stored.
    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Points to draw, `[step, value]` scaled (log10 on a log scale): each bucket's min and
    /// max in step order.
    pub fn points(&mut self) -> &[[f64; 2]] {
        if self.dirty {
            self.cache.clear();
            let scale = self.scale;
            let map = |p: [f64; 2]| match scale {
                Scale::Linear => p,
                Scale::Log => [p[0], p[1].max(LOG_FLOOR).log10()],
            };
            for b in &self.buckets {
                let (a, c) = if b.min[0] <= b.max[0] {
                    (b.min, b.max)
                } else {
                    (b.max, b.min)
                };
                self.cache.push(map(a));
                if c != a {
                    self.cache.push(map(c));
                }
            }
            self.dirty = false;
        }
        &self.cache
    }

    /// Raw (unscaled) bucket extremes as (step, value) in step order (a bucket's min first on a
    /// tie), for the figures and CSV export. Buckets are already in step order, so ordering
    /// each bucket's two points is all the sorting needed.
    pub fn raw_points(&self) -> Vec<[f64; 2]> {
        let mut out = Vec::with_capacity(self.buckets.len() * 2);
        for b in &self.buckets {
            if b.max == b.min {
                out.push(b.min);
            } else if b.max[0] < b.min[0] {
                out.extend([b.max, b.min]);
            } else {
                out.extend([b.min, b.max]);
            }
        }
        out
    }
}

/// A statistic and its random-rotation baseline band over time: rows of
/// (step, value, p5, mean, p95), one per snapshot.
#[derive(Clone, Debug, Default)]
pub struct BandSeries {
    points: Vec<[f64; 5]>,
}

impl BandSeries {
    /// Adds the row at `step` (replacing one at the same step); keeps at most [`BUCKETS`] rows
    /// by dropping every other one.
    pub fn push(&mut self, step: usize, value: f64, p5: f64, mean: f64, p95: f64) {
        if self.points.last().is_some_and(|p| p[0] == step as f64) {
            self.points.pop();
        }
        self.points.push([step as f64, value, p5, mean, p95]);
        if self.points.len() > BUCKETS {
            let mut i = 0;
            self.points.retain(|_| {
                i += 1;
                i % 2 == 1
            });
        }
    }

    /// Adds a [`StatBaseline`] at `step`.
    pub fn push_stat(&mut self, step: usize, b: &StatBaseline) {
        self.push(step, b.value, b.p5, b.mean, b.p95);
    }

    /// The stored (step, value, p5, mean, p95) rows, in step order.
    pub fn points(&self) -> &[[f64; 5]] {
        &self.points
    }

    /// The rows whose five numbers are all finite (egui_plot must never see NaN).
    pub fn finite_points(&self) -> impl Iterator<Item = &[f64; 5]> {
        self.points
            .iter()
            .filter(|p| p.iter().all(|x| x.is_finite()))
    }
}

/// Everything drawn for one arm.
#[derive(Clone, Debug)]
pub struct ArmHistory {
    /// Name and class.
    pub label: ArmLabel,
    /// Running or diverged.
    pub status: ArmStatus,
    /// Twin orientation divergence (log scale).
    pub orientation_div: MinMaxSeries,
    /// Twin Gram divergence (log scale).
    pub gram_div: MinMaxSeries,
    /// Noise-twin divergence (log scale; empty without noise twins).
    pub noise_div: MinMaxSeries,
    /// A(K) of [base, rotated] twins.
    pub axis_concentration: [MinMaxSeries; 2],
    /// Training loss of [base, rotated].
    pub loss: [MinMaxSeries; 2],
    /// Moving average of the base twin's training loss
    /// ([`loss_average`]).
    pub loss_average: MinMaxSeries,
    loss_ema: Option<f64>,
    /// Held-out loss of [base, rotated].
    pub heldout_loss: [MinMaxSeries; 2],
    /// Mean raw column norm of [base, rotated].
    pub column_norm: [MinMaxSeries; 2],
    /// Sample standard deviation of the base twin's raw column norms.
    pub column_norm_sd: MinMaxSeries,
    /// Baseline band of the base twin.
    pub band: BandSeries,
    /// The memory and its reads (run from W0): [kurtosis of S rows, A of S rows, kurtosis of
    /// reads], each with its rotation baseline.
    pub activations: [BandSeries; 3],
    /// The latest step record.
    pub latest: Option<StepRecord>,
    /// The latest held-out result and its step.
    pub heldout: Option<(usize, HeldOut)>,
    /// The latest baseline of both twins.
    pub baseline: Option<[RotationBaseline; 2]>,
}

impl ArmHistory {
    fn new(label: ArmLabel) -> Self {
        let pair = |s| [MinMaxSeries::new(s), MinMaxSeries::new(s)];
        Self {
            label,
            status: ArmStatus::Running,
            orientation_div: MinMaxSeries::new(Scale::Log),
            gram_div: MinMaxSeries::new(Scale::Log),
            noise_div: MinMaxSeries::new(Scale::Log),
            axis_concentration: pair(Scale::Linear),
            loss: pair(Scale::Linear),
            loss_average: MinMaxSeries::new(Scale::Linear),
            loss_ema: None,
            heldout_loss: pair(Scale::Linear),
            column_norm: pair(Scale::Linear),
            column_norm_sd: MinMaxSeries::new(Scale::Linear),
            band: BandSeries::default(),
            activations: Default::default(),
            latest: None,
            heldout: None,
            baseline: None,
        }
    }

    /// The arm's name as its figures and tables show it: its label, and where it stopped if it
    /// diverged (`adam (stopped at 40)`).
    pub fn name(&self) -> String {
        match &self.status {
            ArmStatus::Running => self.label.name.clone(),
            ArmStatus::Diverged { step, .. } => format!("{} (stopped at {step})", self.label.name),
        }
    }

    fn push(&mut self, r: &StepRecord) {
        self.orientation_div.push(r.step, r.orientation_div);
        self.gram_div.push(r.step, r.gram_div);
        self.noise_div.push(r.step, r.noise_div);
        for t in 0..2 {
            self.axis_concentration[t].push(r.step, r.axis_concentration[t]);
            self.loss[t].push(r.step, r.loss[t]);
            self.column_norm[t].push(r.step, r.mean_column_norm[t]);
        }
        self.column_norm_sd.push(r.step, r.column_norm_sd[0]);
        if r.loss[0].is_finite() {
            let ema = loss_average(self.loss_ema, r.loss[0]);
            self.loss_ema = Some(ema);
            self.loss_average.push(r.step, ema);
        }
        self.latest = Some(*r);
    }
}

/// The UI's copy of the current run.
#[derive(Clone, Debug, Default)]
pub struct RunHistory {
    /// The settings of the run shown.
    pub preset: Option<Preset>,
    /// One entry per arm.
    pub arms: Vec<ArmHistory>,
    /// Steps taken.
    pub step: usize,
    /// Whether the worker is stepping.
    pub running: bool,
    /// Measured speed.
    pub steps_per_sec: f64,
    /// The latest keys and baselines.
    pub snapshot: Option<Snapshot>,
    /// Why the run last paused by itself.
    pub stopped: Option<String>,
    /// Step records received since the run started (for tests and the status bar).
    pub records_received: usize,
    /// Earlier runs, newest first, at most [`MAX_PAST_RUNS`]: a restart keeps the run it
    /// replaces here so that runs can be compared on one plot, faded.
    pub past: Vec<Earlier<PastRun>>,
}

/// How many earlier runs a [`RunHistory`] keeps.
pub const MAX_PAST_RUNS: usize = 4;

/// What a [`RunHistory`] keeps of a finished or interrupted run (labelled by
/// [`settings_difference`]).
#[derive(Clone, Debug)]
pub struct PastRun {
    /// Steps it had taken.
    pub steps: usize,
    /// Its arms' series, as they were.
    pub arms: Vec<ArmHistory>,
}

/// `x` as a person types it: `0.01`, `2`, `1e-8`.
fn short(x: f64) -> String {
    if x != 0.0 && !(1e-3..1e4).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// What `old` had that `new` does not, as a short label of the changed fields with `old`'s
/// values: every arm whose rule, rate or hyperparameters changed (`adam lr 0.01`), then the
/// changed task fields (`seed 3`, `d_k 16`). `same settings` when nothing differs.
pub fn settings_difference(old: &Preset, new: &Preset) -> String {
    let mut parts = Vec::new();
    if old.arms.len() != new.arms.len() {
        let names: Vec<&str> = old.arms.iter().map(|a| a.arm_name()).collect();
        parts.push(names.join(" + "));
    } else {
        for (a, b) in old.arms.iter().zip(&new.arms) {
            if a == b {
                continue;
            }
            let mut bits = vec![a.arm_name().to_string()];
            if a.optimizer != b.optimizer && a.arm_name() == b.arm_name() {
                bits.push(a.optimizer.clone());
            }
            if a.lr != b.lr {
                bits.push(format!("lr {}", short(a.lr)));
            }
            let info = a.info().filter(|_| a.optimizer == b.optimizer);
            for &h in info.map_or(&[][..], |i| i.hypers) {
                if let (Some(x), y) = (a.value(h), b.value(h))
                    && Some(x) != y
                {
                    bits.push(format!("{} {}", h.name(), short(x)));
                }
            }
            parts.push(bits.join(" "));
        }
    }
    let fields: [(&str, String, String); 15] = [
        ("seed", old.seed.to_string(), new.seed.to_string()),
        ("d_k", old.d_k.to_string(), new.d_k.to_string()),
        ("keys", old.n_keys.to_string(), new.n_keys.to_string()),
        ("values", old.n_values.to_string(), new.n_values.to_string()),
        (
            "k",
            old.pairs_per_episode.to_string(),
            new.pairs_per_episode.to_string(),
        ),
        ("β", old.beta.to_string(), new.beta.to_string()),
        ("gain", old.gain.to_string(), new.gain.to_string()),
        ("batch", old.batch.to_string(), new.batch.to_string()),
        (
            "init",
            format!("{:?}", old.init_std),
            format!("{:?}", new.init_std),
        ),
        (
            "columns",
            format!("{:?}", old.column_norms),
            format!("{:?}", new.column_norms),
        ),
        ("steps", old.steps.to_string(), new.steps.to_string()),
        (
            "eval every",
            old.eval_every.to_string(),
            new.eval_every.to_string(),
        ),
        (
            "held-out",
            old.n_heldout.to_string(),
            new.n_heldout.to_string(),
        ),
        (
            "rotations",
            old.baseline_rotations.to_string(),
            new.baseline_rotations.to_string(),
        ),
        (
            "noise twins",
            old.noise_twins.to_string(),
            new.noise_twins.to_string(),
        ),
    ];
    for (name, a, b) in fields {
        if a != b {
            let a = a.trim_start_matches("Some(").trim_end_matches(')');
            parts.push(format!("{name} {a}"));
        }
    }
    if parts.is_empty() {
        "same settings".into()
    } else {
        parts.join(", ")
    }
}

impl RunHistory {
    /// Folds one worker update into the history. `Rejected` and `Crashed` are the caller's.
    pub fn apply(&mut self, update: Update) {
        match update {
            Update::Started { preset, arms } => {
                let mut past = std::mem::take(&mut self.past);
                if let Some(old) = self.preset.take().filter(|_| self.step > 0) {
                    let run = PastRun {
                        steps: self.step,
                        arms: std::mem::take(&mut self.arms),
                    };
                    let label = settings_difference(&old, &preset);
                    Earlier::keep(&mut past, label, run, MAX_PAST_RUNS);
                }
                *self = RunHistory {
                    preset: Some(*preset),
                    arms: arms.into_iter().map(ArmHistory::new).collect(),
                    past,
                    ..RunHistory::default()
                };
            }
            Update::Steps(records) => {
                self.records_received += records.len();
                for r in &records {
                    if let Some(a) = self.arms.get_mut(r.arm) {
                        a.push(r);
                    }
                }
            }
            Update::HeldOut { step, values } => {
                for (a, v) in self.arms.iter_mut().zip(values) {
                    if let Some(h) = v {
                        a.heldout_loss[0].push(step, h.loss[0]);
                        a.heldout_loss[1].push(step, h.loss[1]);
                        a.heldout = Some((step, h));
                    }
                }
            }
            Update::Snapshot(snap) => {
                for r in &snap.records {
                    if let Some(a) = self.arms.get_mut(r.arm) {
                        a.push(r);
                    }
                }
                for (a, b) in self.arms.iter_mut().zip(&snap.baselines) {
                    if let Some(b) = b {
                        let b0 = &b[0];
                        a.band
                            .push(snap.step, b0.axis_concentration, b0.p5, b0.mean, b0.p95);
                        a.baseline = Some(b.clone());
                    }
                }
                for (a, act) in self.arms.iter_mut().zip(&snap.activations) {
                    if let Some(act) = act {
                        a.activations[0].push_stat(snap.step, &act.s_kurtosis);
                        a.activations[1].push_stat(snap.step, &act.s_axis);
                        a.activations[2].push_stat(snap.step, &act.read_kurtosis);
                    }
                }
                self.snapshot = Some(*snap);
            }
            Update::Status {
                step,
                running,
                steps_per_sec,
                arms,
            } => {
                self.step = step;
                self.running = running;
                self.steps_per_sec = steps_per_sec;
                if running {
                    self.stopped = None;
                }
                for (a, s) in self.arms.iter_mut().zip(arms) {
                    a.status = s;
                }
            }
            Update::Stopped(reason) => self.stopped = Some(reason),
            Update::Rejected(_) | Update::Crashed(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_million_steps_stay_bounded_and_keep_the_spike() {
        let mut s = MinMaxSeries::new(Scale::Linear);
        for step in 0..1_000_000usize {
            let v = if step == 654_321 {
                50.0
            } else {
                (step as f64).sin()
            };
            s.push(step, v);
        }
        assert!(s.len() <= BUCKETS);
        assert!(s.len() > BUCKETS / 2);
        let pts = s.points();
        assert!(pts.iter().any(|p| p[1] == 50.0 && p[0] == 654_321.0));
        assert!(
            pts.windows(2).all(|w| w[0][0] <= w[1][0]),
            "points in step order"
        );
        assert_eq!(s.last(), Some([999_999.0, (999_999f64).sin()]));
    }

    /// A restart's earlier run is named by what it had that the next run changed.
    #[test]
    fn settings_difference_names_the_old_values_of_what_changed() {
        let old = Preset::load("classroom").unwrap();
        assert_eq!(settings_difference(&old, &old), "same settings");
        let mut new = old.clone();
        new.arms[1].lr = 0.1;
        new.arms[1].eps = 1e-3;
        new.seed = 7;
        assert_eq!(
            settings_difference(&old, &new),
            format!("adam lr {} eps 1e-8, seed {}", old.arms[1].lr, old.seed)
        );
        let mut fewer = old.clone();
        fewer.arms.truncate(1);
        fewer.init_std = Some(0.5);
        assert_eq!(settings_difference(&old, &fewer), "gd + adam, init None");
    }

    /// Restarts keep at most [`MAX_PAST_RUNS`] earlier runs, newest first; a run that never
    /// stepped is not kept.
    #[test]
    fn restarts_keep_the_last_runs_newest_first() {
        let preset = Preset::load("classroom").unwrap();
        let started = |seed: u64| {
            let mut p = preset.clone();
            p.seed = seed;
            Update::Started {
                preset: Box::new(p),
                arms: Vec::new(),
            }
        };
        let mut h = RunHistory::default();
        h.apply(started(0));
        h.apply(started(1));
        assert!(h.past.is_empty(), "no steps, nothing kept");
        for seed in 2..8 {
            h.step = 10 * seed as usize;
            h.apply(started(seed));
        }
        let labels: Vec<&str> = h.past.iter().map(|r| r.label.as_str()).collect();
        assert_eq!(labels, ["seed 6", "seed 5", "seed 4", "seed 3"]);
        assert_eq!(h.past[0].run.steps, 70);
        assert_eq!(h.step, 0);
    }

    proptest::proptest! {
        /// The raw points are every bucket's extremes in step order, as a stable sort by step
        /// of min-then-max would give (what the exported CSV has always held), over runs long
        /// enough to merge buckets, with repeated steps and wild values.
        #[test]
        fn raw_points_are_in_step_order_without_a_sort(
            values in proptest::collection::vec((0usize..3, -1e3f64..1e3), 1..6000),
        ) {
            let mut s = MinMaxSeries::new(Scale::Linear);
            let mut step = 0;
            for (advance, v) in values {
                step += advance;
                s.push(step, v);
            }
            let mut reference: Vec<[f64; 2]> = s
                .buckets
                .iter()
                .flat_map(|b| if b.max == b.min { vec![b.min] } else { vec![b.min, b.max] })
                .collect();
            reference.sort_by(|a, b| a[0].total_cmp(&b[0]));
            proptest::prop_assert_eq!(s.raw_points(), reference);
        }
    }

    #[test]
    fn log_series_floor_zeros_and_skip_nan() {
        let mut s = MinMaxSeries::new(Scale::Log);
        s.push(0, 0.0);
        s.push(1, f64::NAN);
        s.push(2, 1e-3);
        let pts = s.points().to_vec();
        assert_eq!(pts, vec![[0.0, LOG_FLOOR.log10()], [2.0, 1e-3f64.log10()]]);
        assert!(pts.iter().all(|p| p[1].is_finite()));
    }
}
