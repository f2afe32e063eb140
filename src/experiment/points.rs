//! Points sweeps (the explainer §7): the seed sweep of a preset changed to each of a list of
//! values of one setting, such as Adam's ε ([`AdamEps`]) or the key dimension ([`KeyDim`]).
//! Everything that differs between them is one [`PointAxis`] impl; the sweep, its checks, its
//! tables, its figures, its shards, its tab and its command are generic over it.
//!
//! Adding an axis:
//! - here, a unit type and its `impl PointAxis` (its analysis is then [`PointsTask`] over it,
//!   with one line in the task registry, `crate::tasks::TASKS`);
//! - in `shard`, its line in the `jobs!` list (its `Job` and `Merged` variants; `PointsTask`
//!   is already `Shardable`) and its `JobFile` variant and conversions (the shard file's
//!   layout);
//! - in `app::panels::controlled_test::points`, its `impl TabAxis` (the tab's wording) and a
//!   type alias, and one line in the section's tab list;
//! - in `cli::points`, an `Args` struct (clap needs the flags' names and help spelled out) whose
//!   `run` calls the generic one, and one `Command` line; in `cli::merge`, its `Merged` arm.

use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::AtomicBool;

use serde::de::{self, DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::sweep::{ArmAggregate, SeedArm, SweepError, SweepResult, in_range, sweep_until};
use super::sweep::{MAX_POINTS, MAX_SEEDS};
use super::sweep::{assemble_sweep, cell_run, run_seed_cells};
use crate::live::{Stop, Task, undeal};
use crate::metrics::isotropic_axis_concentration;
use crate::output::csv_num;
use crate::preset::Preset;
use crate::validate::{FieldError, ListNumber, check_int};

/// One swept setting: its values, how a preset is moved to one, how its points are checked,
/// named, tabulated and drawn.
pub trait PointAxis: Clone + fmt::Debug + PartialEq + Send + Sync + 'static {
    /// A value of the setting (ε: `f64`, d_k: `usize`), typed as a list ([`crate::validate::number_list`]).
    type Value: Copy
        + PartialEq
        + fmt::Debug
        + fmt::Display
        + ListNumber
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static;
    /// The command that runs the sweep, e.g. `eps-sweep`.
    const COMMAND: &'static str;
    /// Short name: figure and plot names (`<ID>_excess`), the table files (`<ID>_sweep.csv`).
    const ID: &'static str;
    /// A point's field holding its value in JSON and saved state, e.g. `d_k`.
    const FIELD: &'static str;
    /// The job's field holding the values (shard files, errors), e.g. `dks`.
    const LIST: &'static str;
    /// The setting in messages, e.g. `ε`.
    const SYMBOL: &'static str;
    /// Title of the figures' log x axis.
    const X_LABEL: &'static str;
    /// A tick at every swept value (else decades).
    const TICK_EACH: bool;
    /// The aggregates drawn, one figure each; the first is the excess, drawn with the band.
    const METRICS: &'static [&'static Metric];

    /// Where `value` sits on the x axis.
    fn x(value: Self::Value) -> f64;
    /// `preset` moved to `value`.
    fn apply(preset: &Preset, value: Self::Value) -> Preset;
    /// Checks the values (and the preset they apply to) before anything runs; the point count,
    /// seeds and every moved preset are checked by the job. Errors name the field.
    fn check_values(preset: &Preset, values: &[Self::Value]) -> Result<(), FieldError>;
    /// The error of the preset moved to `value`, said of that point.
    fn invalid_at(value: Self::Value, e: FieldError) -> FieldError;
    /// Checks a point read back from disk: `value` is in range and `preset` (its sweep's) is at
    /// it. Errors say why.
    fn check_point(value: Self::Value, preset: &Preset) -> Result<(), String>;
    /// The point's own leading columns of the tables, `(header, cell)`.
    fn columns(value: Self::Value, sweep: &SweepResult) -> Vec<(&'static str, String)>;
    /// Whether arms of optimizer `optimizer` are the ones the sweep is about (drawn thick).
    fn emphasised(optimizer: &str) -> bool;
    /// The chance spread drawn around zero excess at one point.
    fn band_sd(sweep: &SweepResult) -> f64;

    /// Stem of the table files, `<ID>_sweep`.
    fn stem() -> String {
        format!("{}_sweep", Self::ID)
    }
}

/// One point of a sweep along `A`: the value and the seed sweep there. Serialised as
/// `{<A::FIELD>: value, sweep: …}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Point<A: PointAxis> {
    /// The setting's value.
    pub value: A::Value,
    /// The seed sweep at that value (its preset is the moved one).
    pub sweep: SweepResult,
}

/// A point of an ε sweep.
pub type EpsPoint = Point<AdamEps>;
/// A point of a d_k sweep.
pub type DkPoint = Point<KeyDim>;

impl<A: PointAxis> Point<A> {
    const FIELDS: &'static [&'static str] = &[A::FIELD, "sweep"];
}

impl<A: PointAxis> Serialize for Point<A> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Point", 2)?;
        st.serialize_field(A::FIELD, &self.value)?;
        st.serialize_field("sweep", &self.sweep)?;
        st.end()
    }
}

impl<'de, A: PointAxis> Deserialize<'de> for Point<A> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct PointVisitor<A>(PhantomData<A>);
        impl<'de, A: PointAxis> Visitor<'de> for PointVisitor<A> {
            type Value = Point<A>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a point with fields `{}` and `sweep`", A::FIELD)
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Point<A>, M::Error> {
                let (mut value, mut sweep) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    if key == A::FIELD {
                        if value.is_some() {
                            return Err(de::Error::duplicate_field(A::FIELD));
                        }
                        value = Some(map.next_value()?);
                    } else if key == "sweep" {
                        if sweep.is_some() {
                            return Err(de::Error::duplicate_field("sweep"));
                        }
                        sweep = Some(map.next_value()?);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(Point {
                    value: value.ok_or_else(|| de::Error::missing_field(A::FIELD))?,
                    sweep: sweep.ok_or_else(|| de::Error::missing_field("sweep"))?,
                })
            }
        }
        d.deserialize_struct("Point", Self::FIELDS, PointVisitor(PhantomData))
    }
}

/// The points sweep along `A`: for each value in `values`, the seed sweep of `preset` moved to
/// it ([`PointAxis::apply`]), `n_seeds` seeds each. `progress()` once per finished seed.
/// Errors: an invalid moved preset, or a cancel.
pub fn points_sweep<A: PointAxis>(
    preset: &Preset,
    values: &[A::Value],
    n_seeds: usize,
    progress: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
) -> Result<Vec<Point<A>>, SweepError> {
    values
        .iter()
        .map(|&value| {
            Ok(Point {
                value,
                sweep: sweep_until(&A::apply(preset, value), n_seeds, progress, cancel)?,
            })
        })
        .collect()
}

/// A points sweep as data: the preset moved to each of `values`, over `seeds` seeds each
/// ([`points_sweep`]), or the cells `part.0, part.0 + part.1, …` of it (a cell is one seed at
/// one point, point major, as `--shard` counts them; a part of it in one of the page's
/// workers). The app's tab, the page's workers, the command and its shards (`shard::Job`) all
/// hold this one value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound = "")]
pub struct PointsTask<A: PointAxis> {
    /// The preset swept.
    pub preset: Preset,
    /// The axis's values, in order.
    pub values: Vec<A::Value>,
    /// Seeds per value.
    pub seeds: usize,
    /// Which cells: the first and the stride.
    pub part: (usize, usize),
    #[serde(skip)]
    axis: PhantomData<A>,
}

impl<A: PointAxis> PointsTask<A> {
    /// The sweep of `preset` over `values`, `seeds` seeds each.
    pub fn new(preset: Preset, values: Vec<A::Value>, seeds: usize) -> Self {
        Self {
            preset,
            values,
            seeds,
            part: (0, 1),
            axis: PhantomData,
        }
    }

    /// The part's cells: every point, with the seeds of it the part holds (none for a point
    /// it holds no cell of), each seed's arms as [`run_seed_cells`] gives them.
    fn run_part(
        &self,
        progress: &(dyn Fn() + Sync),
        cancel: &AtomicBool,
    ) -> Result<Vec<Point<A>>, SweepError> {
        let presets = self.presets();
        for p in &presets {
            p.validate()?;
        }
        let cells: Vec<usize> = (self.part.0..presets.len() * self.seeds)
            .step_by(self.part.1.max(1))
            .collect();
        let runs = run_seed_cells(&presets, self.seeds, &cells, progress, cancel)?;
        let mut ran = cells.into_iter().zip(runs).peekable();
        Ok(self
            .values
            .iter()
            .zip(&presets)
            .enumerate()
            .map(|(i, (&value, preset))| {
                let (mut at, mut arms) = (Vec::new(), Vec::new());
                // Cells are point major, so a point's come together (none without seeds).
                while let Some((c, r)) = ran.next_if(|(c, _)| c / self.seeds == i) {
                    at.push(cell_run(&presets, self.seeds, c).1);
                    arms.push(r);
                }
                Point {
                    value,
                    sweep: assemble_sweep(preset, at, arms),
                }
            })
            .collect())
    }

    /// Checks the sweep as the command and its shards do: the values (and the preset they
    /// move) per [`PointAxis::check_values`], then 1..=[`MAX_POINTS`] of them, the seeds
    /// (1..=[`MAX_SEEDS`]) and every moved preset. Errors name the field.
    pub fn validate(&self) -> Result<(), FieldError> {
        A::check_values(&self.preset, &self.values)?;
        let points = self.values.len();
        if !(1..=MAX_POINTS).contains(&points) {
            return Err(FieldError::new(
                A::LIST,
                format!("{points} values given; allowed 1..={MAX_POINTS}"),
            ));
        }
        check_int("seeds", self.seeds, 1, MAX_SEEDS)?;
        for &v in &self.values {
            A::apply(&self.preset, v)
                .validate()
                .map_err(|e| A::invalid_at(v, e))?;
        }
        Ok(())
    }

    /// The moved preset of each point, in the order of `values`.
    pub fn presets(&self) -> Vec<Preset> {
        self.values
            .iter()
            .map(|&v| A::apply(&self.preset, v))
            .collect()
    }
}

impl<A: PointAxis> Task for PointsTask<A> {
    type Output = Result<Vec<Point<A>>, Stop>;
    const KIND: &'static str = A::ID;

    fn run(self, progress: &(dyn Fn() + Sync), cancel: &AtomicBool) -> Self::Output {
        if self.part != (0, 1) {
            return Ok(self.run_part(progress, cancel)?);
        }
        Ok(points_sweep::<A>(
            &self.preset,
            &self.values,
            self.seeds,
            progress,
            cancel,
        )?)
    }

    /// Cells dealt round-robin, as `--shard` deals them.
    fn split(self, n: usize) -> Vec<Self> {
        let n = n.clamp(1, (self.values.len() * self.seeds).max(1));
        (0..n)
            .map(|k| Self {
                part: (k, n),
                ..self.clone()
            })
            .collect()
    }

    /// The parts' cells dealt back into order and each point's sweep assembled from its seeds,
    /// as a whole sweep assembles it ([`assemble_sweep`]).
    fn merge(parts: Vec<Self::Output>) -> Self::Output {
        let parts: Vec<Vec<Point<A>>> = parts.into_iter().collect::<Result<_, _>>()?;
        let Some(points) = parts.first().cloned() else {
            return Err(Stop::Failed("no part of the sweep came back".into()));
        };
        // Each part's cells in order: (point, seed, that seed's arms).
        let dealt = parts
            .into_iter()
            .map(|part| {
                part.into_iter()
                    .enumerate()
                    .flat_map(|(i, p)| {
                        let arms = p.sweep.preset.arms.len().max(1);
                        let rows: Vec<Vec<SeedArm>> = p
                            .sweep
                            .per_seed
                            .chunks(arms)
                            .map(<[SeedArm]>::to_vec)
                            .collect();
                        p.sweep
                            .seeds
                            .into_iter()
                            .zip(rows)
                            .map(move |(s, r)| (i, s, r))
                    })
                    .collect()
            })
            .collect();
        let mut cells = undeal(dealt).into_iter().peekable();
        Ok(points
            .into_iter()
            .enumerate()
            .map(|(i, p)| {
                let (mut seeds, mut arms) = (Vec::new(), Vec::new());
                while let Some((_, s, r)) = cells.next_if(|c| c.0 == i) {
                    seeds.push(s);
                    arms.push(r);
                }
                Point {
                    value: p.value,
                    sweep: assemble_sweep(&p.sweep.preset, seeds, arms),
                }
            })
            .collect())
    }
}

/// Checks the points of a sweep read back from disk: 1..=[`MAX_POINTS`] of them, each passing
/// [`PointAxis::check_point`], each sweep passing [`SweepResult::checked`], which recomputes
/// its aggregates. Errors name the point.
pub fn check_points<A: PointAxis>(points: Vec<Point<A>>) -> Result<Vec<Point<A>>, String> {
    let n = points.len();
    if !(1..=MAX_POINTS).contains(&n) {
        return Err(format!("{n} points; allowed 1..={MAX_POINTS}"));
    }
    points
        .into_iter()
        .map(|p| {
            A::check_point(p.value, &p.sweep.preset)?;
            let value = p.value;
            let sweep = p
                .sweep
                .checked()
                .map_err(|e| format!("{} {value}: {e}", A::SYMBOL))?;
            Ok(Point { value, sweep })
        })
        .collect()
}

/// Adam's ε: every arm whose optimizer is `adam` gets it, the others are references. If the
/// axis effect comes from Adam's per-coordinate normalisation it should fade as ε grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AdamEps;

/// Largest ε a sweep accepts.
const EPS_MAX: f64 = 1e6;

impl PointAxis for AdamEps {
    type Value = f64;
    const COMMAND: &'static str = "eps-sweep";
    const ID: &'static str = "eps";
    const FIELD: &'static str = "eps";
    const LIST: &'static str = "eps";
    const SYMBOL: &'static str = "ε";
    const X_LABEL: &'static str = "Adam's ε (log scale)";
    const TICK_EACH: bool = false;
    const METRICS: &'static [&'static Metric] = &[&EXCESS, &ORIENTATION, &GRAM, &ACCURACY];

    fn x(eps: f64) -> f64 {
        eps
    }

    fn apply(preset: &Preset, eps: f64) -> Preset {
        with_adam_eps(preset, eps)
    }

    /// Every ε finite in [0, 1e6], and an Adam arm to read it.
    fn check_values(preset: &Preset, eps: &[f64]) -> Result<(), FieldError> {
        if let Some(bad) = eps
            .iter()
            .find(|e| !(e.is_finite() && (0.0..=EPS_MAX).contains(*e)))
        {
            return Err(FieldError::new(
                "eps",
                format!("{bad} is out of range; allowed [0, 1e6]"),
            ));
        }
        if !preset.arms.iter().any(|a| a.optimizer == "adam") {
            return Err(FieldError::new(
                "arms",
                "the preset has no adam arm for the ε sweep",
            ));
        }
        Ok(())
    }

    fn invalid_at(_: f64, e: FieldError) -> FieldError {
        e
    }

    /// ε finite in [0, 1e6] and equal to the ε of every Adam arm (at least one).
    fn check_point(eps: f64, preset: &Preset) -> Result<(), String> {
        in_range(eps, 0.0, EPS_MAX).map_err(|m| format!("eps: {m}"))?;
        let adam: Vec<f64> = preset
            .arms
            .iter()
            .filter(|a| a.optimizer == "adam")
            .map(|a| a.eps)
            .collect();
        if adam.is_empty() || adam.iter().any(|e| e.to_bits() != eps.to_bits()) {
            return Err(format!("ε {eps}: the sweep's Adam arms have ε {adam:?}"));
        }
        Ok(())
    }

    /// The column `eps`.
    fn columns(eps: f64, _: &SweepResult) -> Vec<(&'static str, String)> {
        vec![("eps", csv_num(eps))]
    }

    fn emphasised(optimizer: &str) -> bool {
        optimizer == "adam"
    }

    /// Adam's baseline sd (the first arm's if there is no Adam arm).
    fn band_sd(sweep: &SweepResult) -> f64 {
        let arms = || sweep.aggregate.iter().zip(&sweep.preset.arms);
        let adam = arms()
            .find(|(_, s)| s.optimizer == "adam")
            .or_else(|| arms().next());
        adam.map_or(f64::NAN, |(a, _)| a.baseline_sd_mean)
    }
}

/// `preset` with the ε of every arm whose optimizer is `adam` set to `eps`.
pub fn with_adam_eps(preset: &Preset, eps: f64) -> Preset {
    let mut p = preset.clone();
    for arm in p.arms.iter_mut().filter(|a| a.optimizer == "adam") {
        arm.eps = eps;
    }
    p
}

/// The key dimension d_k, with keys and pairs per episode scaled along ([`scaled_to_dk`]). At
/// small d_k the gap between random (3/(d_k+2)) and aligned (1) keys is small and chance fills
/// it; the baseline's spread shows by how much.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyDim;

impl PointAxis for KeyDim {
    type Value = usize;
    const COMMAND: &'static str = "dk-sweep";
    const ID: &'static str = "dk";
    const FIELD: &'static str = "d_k";
    const LIST: &'static str = "dks";
    const SYMBOL: &'static str = "d_k";
    const X_LABEL: &'static str = "key dimension d_k (log scale)";
    const TICK_EACH: bool = true;
    const METRICS: &'static [&'static Metric] = &[&EXCESS, &ORIENTATION];

    fn x(d_k: usize) -> f64 {
        d_k as f64
    }

    fn apply(preset: &Preset, d_k: usize) -> Preset {
        scaled_to_dk(preset, d_k)
    }

    /// Any list: each scaled preset is checked by the job.
    fn check_values(_: &Preset, _: &[usize]) -> Result<(), FieldError> {
        Ok(())
    }

    fn invalid_at(d_k: usize, e: FieldError) -> FieldError {
        FieldError {
            message: format!("at d_k = {d_k}: {}", e.message),
            ..e
        }
    }

    /// d_k is that of the sweep's preset.
    fn check_point(d_k: usize, preset: &Preset) -> Result<(), String> {
        if d_k != preset.d_k {
            return Err(format!(
                "d_k {d_k}: the sweep's preset has d_k {}",
                preset.d_k
            ));
        }
        Ok(())
    }

    /// The columns `d_k`, `n_keys`, `pairs_per_episode` and the isotropic A = 3/(d_k + 2).
    fn columns(d_k: usize, sweep: &SweepResult) -> Vec<(&'static str, String)> {
        let sp = &sweep.preset;
        let iso = isotropic_axis_concentration(d_k);
        vec![
            ("d_k", d_k.to_string()),
            ("n_keys", sp.n_keys.to_string()),
            ("pairs_per_episode", sp.pairs_per_episode.to_string()),
            ("isotropic", format!("{iso:.4}")),
        ]
    }

    fn emphasised(_: &str) -> bool {
        true
    }

    /// The baseline sd averaged over the arms.
    fn band_sd(sweep: &SweepResult) -> f64 {
        let sds: Vec<f64> = sweep
            .aggregate
            .iter()
            .map(|a| a.baseline_sd_mean)
            .filter(|x| x.is_finite())
            .collect();
        sds.iter().sum::<f64>() / sds.len() as f64
    }
}

/// `preset` moved to key dimension `d_k`, with the number of keys and of pairs per episode
/// scaled in proportion (rounded, at least 1 and 2 keys, pairs ≤ keys) so the memory stays as
/// loaded as at the preset's own d_k; value classes and everything else unchanged.
pub fn scaled_to_dk(preset: &Preset, d_k: usize) -> Preset {
    let ratio = d_k as f64 / preset.d_k as f64;
    let n_keys = ((preset.n_keys as f64 * ratio).round() as usize).max(2);
    let pairs = ((preset.pairs_per_episode as f64 * ratio).round() as usize).clamp(1, n_keys);
    Preset {
        d_k,
        n_keys,
        pairs_per_episode: pairs,
        ..preset.clone()
    }
}

/// One plot of a points sweep: which aggregate it shows and how.
pub struct Metric {
    /// Short name (file names, plot ids).
    pub id: &'static str,
    /// The plot's title.
    pub title: &'static str,
    /// The y axis' title.
    pub y_label: &'static str,
    /// Log y axis.
    pub log_y: bool,
    /// (mean, sd) over seeds of one arm at one point.
    pub value: fn(&ArmAggregate) -> (f64, f64),
}

/// The A(K) excess over the rotation baseline.
pub const EXCESS: Metric = Metric {
    id: "excess",
    title: "A(K) excess over the rotation baseline (shaded: ± the baseline's sd)",
    y_label: "excess A(K) − baseline mean",
    log_y: false,
    value: |a| (a.excess_mean, a.excess_sd),
};
/// Twin orientation divergence.
pub const ORIENTATION: Metric = Metric {
    id: "orientation",
    title: "Twin orientation divergence ‖W′ − QW‖F / ‖W‖F",
    y_label: "orientation divergence",
    log_y: true,
    value: |a| (a.orientation_div_mean, a.orientation_div_sd),
};
/// Twin Gram divergence.
pub const GRAM: Metric = Metric {
    id: "gram",
    title: "Twin Gram divergence ‖K′ᵀK′ − KᵀK‖F",
    y_label: "Gram divergence",
    log_y: true,
    value: |a| (a.gram_div_mean, a.gram_div_sd),
};
/// Held-out accuracy.
pub const ACCURACY: Metric = Metric {
    id: "accuracy",
    title: "Held-out accuracy (run from W0)",
    y_label: "accuracy",
    log_y: false,
    value: |a| (a.heldout_accuracy_mean, a.heldout_accuracy_sd),
};

#[cfg(test)]
mod tests {
    use super::*;

    /// A points sweep dealt over the page's workers by cells (point, seed) merges to the whole
    /// sweep bit for bit, every point's per-seed rows and aggregates, for any number of parts
    /// (more than cells too).
    #[test]
    fn a_points_sweep_split_over_workers_merges_to_the_whole_bit_for_bit() {
        let mut preset = Preset::load("classroom").unwrap();
        preset.steps = 20;
        let task = PointsTask::<AdamEps>::new(preset, vec![1e-8, 1e-3], 3);
        let run = |t: PointsTask<AdamEps>| t.run(&|| {}, &AtomicBool::new(false));
        let whole = run(task.clone()).unwrap();
        assert_eq!(whole.len(), 2);
        assert!(whole.iter().all(|p| p.sweep.seeds.len() == 3));
        for n in [1, 2, 3, 4, 7] {
            let parts = task.clone().split(n);
            assert_eq!(parts.len(), n.min(6));
            let merged = PointsTask::<AdamEps>::merge(parts.into_iter().map(run).collect());
            assert_eq!(
                format!("{merged:?}"),
                format!("{:?}", Ok::<_, Stop>(&whole)),
                "{n} parts"
            );
        }
        let failed = PointsTask::<AdamEps>::merge(vec![Ok(whole), Err(Stop::Cancelled)]);
        assert_eq!(failed, Err(Stop::Cancelled));
    }
}
