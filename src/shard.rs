//! Sweeps split over processes or machines: `--shard i/N` runs the cells whose index is `i`
//! modulo `N` and writes them to `shard.ron`; [`merge`] puts shards back together into exactly
//! the result a single process computes (every cell depends only on its own index, and the
//! tables are assembled from the cells in index order).
//!
//! A cell is one seed of a seed sweep (`sweep`), one (point, seed) of an ε or d_k sweep (point
//! major), or one (τ, rule, rate, seed) run of the zoo in [`ZooPreset::cells`] order followed by
//! its convex references ([`ZooPreset::references`]). Shard
//! files are RON, which keeps every f64 (NaN and ±∞ included) exactly.

use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use crate::experiment::sweep::{cell_run, run_seed_cells};
use crate::experiment::{
    AdamEps, KeyDim, Point, PointAxis, PointsTask, SeedArm, SweepError, SweepResult, SweepTask,
    assemble_sweep, check_seed, sweep_seeds,
};
use crate::output::write_atomic;
use crate::preset::Preset;
use crate::sensing::zoo::{RunResult, ZooPreset, ZooTask, run_zoo_cells};
use crate::validate::{FieldError, check_int};

/// Name of the file a shard writes into its output folder.
pub const SHARD_FILE: &str = "shard.ron";
/// Most shards a job may be split into.
pub const MAX_SHARDS: usize = 10_000;
/// Version of the shard file layout; [`parse_shard`] refuses other versions, saying whether an
/// older or a newer version wrote the file.
pub const SHARD_FORMAT: u32 = 1;
pub use crate::experiment::sweep::{MAX_POINTS, MAX_SEEDS};

/// Largest shard file [`read_shard`] accepts, in bytes.
pub const MAX_SHARD_BYTES: u64 = 1 << 30;

/// Shard `index` of `count` (0-based): holds the cells whose index is `index` modulo `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 0..count.
    pub index: usize,
    /// 1..=[`MAX_SHARDS`].
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// Parses `i/N` with `0 ≤ i < N ≤ MAX_SHARDS`.
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || {
            format!("`{text}` is not a shard; write i/N with 0 <= i < N <= {MAX_SHARDS}, e.g. 0/4")
        };
        let (i, n) = text.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl Shard {
    /// The cells of a `total`-cell job this shard holds, in increasing order.
    pub fn cells(self, total: usize) -> Vec<usize> {
        (self.index..total).step_by(self.count).collect()
    }
}

/// An analysis whose cells can be split over shards, implemented once by its task type. Adding
/// one is this impl, its line in the `jobs!` list below (its [`Job`] and [`Merged`] variants)
/// and its shard-file layout in `JobFile`; `merge` in the command line writes its tables.
pub trait Shardable: Clone {
    /// One cell's result, as shard files hold it (a kind of [`CellResult`]).
    type Cell: CellKind;
    /// What the unsharded command computes.
    type Merged;
    /// The command that runs it.
    fn command(&self) -> &'static str;
    /// Number of cells.
    fn total_cells(&self) -> usize;
    /// Checks the settings as the command does. Errors name the field.
    fn validate(&self) -> Result<(), FieldError>;
    /// Runs the (valid) task's cells listed in `cells` in parallel on the current rayon pool;
    /// `progress()` after each. Errors: a cancel. Panics on a cell index out of range.
    fn run_cells(
        &self,
        cells: &[usize],
        progress: &(dyn Fn() + Sync),
        cancel: &AtomicBool,
    ) -> Result<Vec<Self::Cell>, SweepError>;
    /// Checks a result read from disk against what its cell (an index in range) computes.
    fn checker(&self) -> CellCheck<'_, Self::Cell>;
    /// The full result from every cell's result, in cell order, and the shards' summed wall
    /// time.
    fn assemble(&self, cells: Vec<Self::Cell>, seconds: f64) -> Self::Merged;
}

/// Checks a cell's result read from disk (its index, its result) against what that cell
/// computes; the error says what differs.
pub type CellCheck<'a, C> = Box<dyn Fn(usize, &C) -> Result<(), String> + 'a>;

/// A kind of cell result: the contents of one [`CellResult`] variant.
pub trait CellKind: Clone + Sized {
    /// The contents, when `result` is of this kind.
    fn of(result: &CellResult) -> Option<&Self>;
    /// As a shard file holds it.
    fn into_result(self) -> CellResult;
}

impl CellKind for Vec<SeedArm> {
    fn of(result: &CellResult) -> Option<&Self> {
        match result {
            CellResult::Seed(arms) => Some(arms),
            CellResult::Zoo(_) => None,
        }
    }

    fn into_result(self) -> CellResult {
        CellResult::Seed(self)
    }
}

impl CellKind for RunResult {
    fn of(result: &CellResult) -> Option<&Self> {
        match result {
            CellResult::Zoo(run) => Some(run),
            CellResult::Seed(_) => None,
        }
    }

    fn into_result(self) -> CellResult {
        CellResult::Zoo(self)
    }
}

/// Lists the shardable analyses once: each line's variant names its [`Job`] and its
/// [`Merged`], and the [`Job`] methods dispatch to its [`Shardable`] impl.
macro_rules! jobs {
    ($($(#[doc = $doc:literal])* $variant:ident($task:ty),)*) => {
        /// What a sharded command computes: the analysis's task value itself, the one the
        /// command runs whole, the app's tab starts and the page deals over its workers, so
        /// every setting that changes a number is described once. A job holds its whole task
        /// (`part` `(0, 1)`: a task's part is the page's split, a shard's cells are
        /// [`Shard::cells`]). Shard files keep the layout they always had (`JobFile`), so files
        /// written before read back unchanged.
        #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(into = "JobFile", from = "JobFile")]
        pub enum Job {
            $($(#[doc = $doc])* $variant($task),)*
        }

        /// A merged job: what the unsharded command would have computed, by analysis.
        #[derive(Clone, Debug, PartialEq)]
        pub enum Merged {
            $(#[doc = concat!("The merged [`Job::", stringify!($variant), "`].")]
            $variant(<$task as Shardable>::Merged),)*
        }

        $(impl From<$task> for Job {
            fn from(task: $task) -> Self {
                Job::$variant(task)
            }
        })*

        impl Job {
            /// The command that runs it.
            pub fn command(&self) -> &'static str {
                match self {
                    $(Job::$variant(task) => task.command(),)*
                }
            }

            /// Number of cells.
            pub fn total_cells(&self) -> usize {
                match self {
                    $(Job::$variant(task) => task.total_cells(),)*
                }
            }

            /// Checks the settings as the commands do: seeds 1..=[`MAX_SEEDS`],
            /// 1..=[`MAX_POINTS`] values of a points sweep (each valid for its axis: ε in
            /// [0, 1e6] with an Adam arm present, say), and a valid preset at every point.
            /// Errors name the field.
            pub fn validate(&self) -> Result<(), FieldError> {
                match self {
                    $(Job::$variant(task) => task.validate(),)*
                }
            }

            /// Runs the cells listed in `cells` in parallel on the current rayon pool;
            /// `progress()` after each. Errors: an invalid preset (at any point), or a cancel.
            /// Panics on a cell index out of range.
            pub fn run_cells(
                &self,
                cells: &[usize],
                progress: &(dyn Fn() + Sync),
                cancel: &AtomicBool,
            ) -> Result<Vec<CellResult>, SweepError> {
                self.validate()?;
                match self {
                    $(Job::$variant(task) => Ok(task
                        .run_cells(cells, progress, cancel)?
                        .into_iter()
                        .map(CellKind::into_result)
                        .collect()),)*
                }
            }

            /// Checks `shards` against this job and assembles them ([`merge_cells`]).
            fn merge(&self, shards: &[(String, ShardOutput)]) -> Result<Merged, String> {
                match self {
                    $(Job::$variant(task) => merge_cells(self, task, shards).map(Merged::$variant),)*
                }
            }
        }
    };
}

jobs! {
    /// `sweep`: every seed of a seed sweep (steps already applied).
    Sweep(SweepTask),
    /// `eps-sweep`: the seed sweep at each Adam ε ([`AdamEps`]).
    EpsSweep(PointsTask<AdamEps>),
    /// `dk-sweep`: the seed sweep at each key dimension ([`KeyDim`]).
    DkSweep(PointsTask<KeyDim>),
    /// `zoo` (`dial`, `tail`): every unit of the zoo preset (seeds and budget already applied).
    Zoo(ZooTask),
}

/// A [`Job`] as shard files hold it (format [`SHARD_FORMAT`]): the command and its settings,
/// field by field, as the files written before the job held task values spelled them.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename = "Job")]
enum JobFile {
    Sweep {
        preset: Preset,
        seeds: usize,
    },
    EpsSweep {
        preset: Preset,
        eps: Vec<f64>,
        seeds: usize,
    },
    DkSweep {
        preset: Preset,
        dks: Vec<usize>,
        seeds: usize,
    },
    Zoo {
        preset: ZooPreset,
    },
}

impl From<Job> for JobFile {
    fn from(job: Job) -> Self {
        match job {
            Job::Sweep(t) => JobFile::Sweep {
                preset: t.preset,
                seeds: t.seeds,
            },
            Job::EpsSweep(t) => JobFile::EpsSweep {
                preset: t.preset,
                eps: t.values,
                seeds: t.seeds,
            },
            Job::DkSweep(t) => JobFile::DkSweep {
                preset: t.preset,
                dks: t.values,
                seeds: t.seeds,
            },
            Job::Zoo(t) => JobFile::Zoo { preset: t.preset },
        }
    }
}

impl From<JobFile> for Job {
    fn from(file: JobFile) -> Self {
        match file {
            JobFile::Sweep { preset, seeds } => Job::Sweep(SweepTask::new(preset, seeds)),
            JobFile::EpsSweep { preset, eps, seeds } => {
                Job::EpsSweep(PointsTask::new(preset, eps, seeds))
            }
            JobFile::DkSweep { preset, dks, seeds } => {
                Job::DkSweep(PointsTask::new(preset, dks, seeds))
            }
            JobFile::Zoo { preset } => Job::Zoo(ZooTask::new(preset)),
        }
    }
}

/// One cell's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum CellResult {
    /// Every arm at one seed of a seed, ε or d_k sweep.
    Seed(Vec<SeedArm>),
    /// One zoo run.
    Zoo(RunResult),
}

/// Contents of `shard.ron`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardOutput {
    /// [`SHARD_FORMAT`].
    pub format: u32,
    /// The whole job (equal in every shard of it).
    pub job: Job,
    /// Which shard this is.
    pub shard: Shard,
    /// Cells of the whole job.
    pub total_cells: usize,
    /// The cells held, in increasing order.
    pub cells: Vec<usize>,
    /// Their results, parallel to `cells`.
    pub results: Vec<CellResult>,
    /// Wall time of this shard, seconds.
    pub seconds: f64,
}

/// A merged zoo: its runs and the summed wall time of its shards.
#[derive(Clone, Debug, PartialEq)]
pub struct ZooRuns {
    /// The zoo preset.
    pub preset: ZooPreset,
    /// Every run, in cell order.
    pub results: Vec<RunResult>,
    /// Sum of the shards' wall times, seconds.
    pub seconds: f64,
}

/// The seed sweep at each of `presets`, from every cell's result in cell order (point major).
fn seed_sweeps(presets: &[Preset], seeds: usize, cells: Vec<Vec<SeedArm>>) -> Vec<SweepResult> {
    let mut cells = cells.into_iter();
    presets
        .iter()
        .map(|preset| {
            let chunk: Vec<Vec<SeedArm>> = cells.by_ref().take(seeds).collect();
            assemble_sweep(preset, sweep_seeds(preset, seeds), chunk)
        })
        .collect()
}

/// Checks a seed cell read from disk against what cell `c` of `presets` computes.
fn seed_checker(presets: Vec<Preset>, seeds: usize) -> CellCheck<'static, Vec<SeedArm>> {
    Box::new(move |c, arms| {
        let (p, seed) = cell_run(&presets, seeds, c);
        check_seed(p, seed, arms)
    })
}

/// A seed sweep: cell `c` is seed `c` from the preset's seed.
impl Shardable for SweepTask {
    type Cell = Vec<SeedArm>;
    type Merged = SweepResult;

    fn command(&self) -> &'static str {
        "sweep"
    }

    fn total_cells(&self) -> usize {
        self.seeds
    }

    fn validate(&self) -> Result<(), FieldError> {
        check_int("seeds", self.seeds, 1, MAX_SEEDS)?;
        self.preset.validate()
    }

    fn run_cells(
        &self,
        cells: &[usize],
        progress: &(dyn Fn() + Sync),
        cancel: &AtomicBool,
    ) -> Result<Vec<Self::Cell>, SweepError> {
        run_seed_cells(
            std::slice::from_ref(&self.preset),
            self.seeds,
            cells,
            progress,
            cancel,
        )
    }

    fn checker(&self) -> CellCheck<'_, Self::Cell> {
        seed_checker(vec![self.preset.clone()], self.seeds)
    }

    fn assemble(&self, cells: Vec<Self::Cell>, _seconds: f64) -> Self::Merged {
        let presets = std::slice::from_ref(&self.preset);
        seed_sweeps(presets, self.seeds, cells).remove(0)
    }
}

/// A points sweep: cell `c` runs point `c / seeds` at seed `c % seeds` from that point's seed.
impl<A: PointAxis> Shardable for PointsTask<A> {
    type Cell = Vec<SeedArm>;
    type Merged = Vec<Point<A>>;

    fn command(&self) -> &'static str {
        A::COMMAND
    }

    fn total_cells(&self) -> usize {
        self.values.len() * self.seeds
    }

    fn validate(&self) -> Result<(), FieldError> {
        PointsTask::validate(self)
    }

    fn run_cells(
        &self,
        cells: &[usize],
        progress: &(dyn Fn() + Sync),
        cancel: &AtomicBool,
    ) -> Result<Vec<Self::Cell>, SweepError> {
        run_seed_cells(&self.presets(), self.seeds, cells, progress, cancel)
    }

    fn checker(&self) -> CellCheck<'_, Self::Cell> {
        seed_checker(self.presets(), self.seeds)
    }

    fn assemble(&self, cells: Vec<Self::Cell>, _seconds: f64) -> Self::Merged {
        let sweeps = seed_sweeps(&self.presets(), self.seeds, cells);
        self.values
            .iter()
            .zip(sweeps)
            .map(|(&value, sweep)| Point { value, sweep })
            .collect()
    }
}

/// The zoo: its runs in [`ZooPreset::cells`] order, then its convex references.
impl Shardable for ZooTask {
    type Cell = RunResult;
    type Merged = ZooRuns;

    fn command(&self) -> &'static str {
        "zoo"
    }

    fn total_cells(&self) -> usize {
        self.preset.units()
    }

    fn validate(&self) -> Result<(), FieldError> {
        self.preset.validate()
    }

    fn run_cells(
        &self,
        cells: &[usize],
        progress: &(dyn Fn() + Sync),
        cancel: &AtomicBool,
    ) -> Result<Vec<Self::Cell>, SweepError> {
        Ok(run_zoo_cells(&self.preset, cells, progress, cancel))
    }

    fn checker(&self) -> CellCheck<'_, Self::Cell> {
        let units = (self.preset.cells(), self.preset.references());
        Box::new(move |c, run| self.preset.check_unit((&units.0, &units.1), c, run))
    }

    fn assemble(&self, cells: Vec<Self::Cell>, seconds: f64) -> Self::Merged {
        ZooRuns {
            preset: self.preset.clone(),
            results: cells,
            seconds,
        }
    }
}

/// Runs `shard` of `job` and returns its output (not yet written). Errors as
/// [`Job::run_cells`].
pub fn run_shard(
    job: &Job,
    shard: Shard,
    progress: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
) -> Result<ShardOutput, SweepError> {
    let started = std::time::Instant::now();
    let total_cells = job.total_cells();
    let cells = shard.cells(total_cells);
    let results = job.run_cells(&cells, progress, cancel)?;
    Ok(ShardOutput {
        format: SHARD_FORMAT,
        job: job.clone(),
        shard,
        total_cells,
        cells,
        results,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Writes `out` to `dir/shard.ron` atomically. Errors: the folder is not writable.
pub fn write_shard(dir: &Path, out: &ShardOutput) -> std::io::Result<()> {
    let text = ron::ser::to_string(out).map_err(std::io::Error::other)?;
    write_atomic(&dir.join(SHARD_FILE), text.as_bytes())
}

/// When `dir` holds no shard but its subfolders do (the parent of the shards was given), a
/// hint naming them; empty otherwise.
fn shard_folders_hint(dir: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return String::new();
    };
    let mut found: Vec<String> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(SHARD_FILE).is_file())
        .map(|p| p.display().to_string())
        .collect();
    if found.is_empty() {
        return String::new();
    }
    found.sort();
    format!(
        " (its subfolders hold shards: pass them instead, e.g. `{}`)",
        found.join(" ")
    )
}

/// Reads `dir/shard.ron` (or `dir` itself when it names a file). Errors name the file.
pub fn read_shard(dir: &Path) -> Result<ShardOutput, String> {
    let file = if dir.is_dir() {
        dir.join(SHARD_FILE)
    } else {
        dir.to_path_buf()
    };
    let name = file.display().to_string();
    let len = std::fs::metadata(&file)
        .map_err(|e| format!("{name}: cannot read: {e}{}", shard_folders_hint(dir)))?
        .len();
    if len > MAX_SHARD_BYTES {
        return Err(format!(
            "{name}: {len} bytes; at most {MAX_SHARD_BYTES} are accepted"
        ));
    }
    let text = std::fs::read_to_string(&file).map_err(|e| format!("{name}: cannot read: {e}"))?;
    parse_shard(&text, &name)
}

/// Parses the text of a shard file (a leading byte-order mark is ignored) and checks its
/// layout: version, shard spec, wall time, one result per cell. `name` names it in errors. The
/// results themselves are checked against the job by [`merge`].
pub fn parse_shard(text: &str, name: &str) -> Result<ShardOutput, String> {
    let out: ShardOutput = ron::from_str(crate::preset::without_bom(text))
        .map_err(|e| format!("{name}: not a shard file: {e}"))?;
    if out.format != SHARD_FORMAT {
        let (who, fix) = if out.format < SHARD_FORMAT {
            ("an older", "run that shard again with this one")
        } else {
            ("a newer", "merge it with that version")
        };
        return Err(format!(
            "{name}: written by {who} version of basis-lab (shard format {}; this build reads \
             {SHARD_FORMAT}); {fix}",
            out.format
        ));
    }
    if out.shard.count == 0 || out.shard.count > MAX_SHARDS || out.shard.index >= out.shard.count {
        return Err(format!(
            "{name}: field `shard`: {}/{} is not a shard; allowed i/N with 0 <= i < N <= \
             {MAX_SHARDS}",
            out.shard.index, out.shard.count
        ));
    }
    if !(out.seconds.is_finite() && out.seconds >= 0.0) {
        return Err(format!(
            "{name}: field `seconds`: {} is out of range; allowed finite, >= 0",
            out.seconds
        ));
    }
    if out.cells.len() != out.results.len() {
        return Err(format!(
            "{name}: {} cells but {} results",
            out.cells.len(),
            out.results.len()
        ));
    }
    Ok(out)
}

/// Combines shards (each with the name it was read from, for errors) into the full result.
///
/// Errors: no shards; shards of different jobs (command, preset or settings) or split into
/// different counts; a cell held twice or missing (listing them); a result of the wrong kind,
/// or one that is not what its cell of the job computes (checked as values read from disk by
/// [`ZooPreset::check_run`] and [`check_seed`]), naming the shard and the cell.
pub fn merge(shards: Vec<(String, ShardOutput)>) -> Result<Merged, String> {
    let Some((first_name, first)) = shards.first() else {
        return Err("no shards given".into());
    };
    first
        .job
        .validate()
        .map_err(|e| format!("{first_name}: {e}"))?;
    first.job.merge(&shards)
}

/// [`merge`] of shards of `job`, whose task is `task` (valid): checks every shard against the
/// first and each cell against what it computes, then assembles the cells.
fn merge_cells<S: Shardable>(
    job: &Job,
    task: &S,
    shards: &[(String, ShardOutput)],
) -> Result<S::Merged, String> {
    let (first_name, first) = &shards[0];
    let total = task.total_cells();
    let check = task.checker();
    let mut owner: Vec<Option<usize>> = vec![None; total];
    let mut slots: Vec<Option<S::Cell>> = vec![None; total];
    let mut seconds = 0.0;
    for (k, (name, s)) in shards.iter().enumerate() {
        if s.job != *job {
            let what = if s.job.command() != job.command() {
                format!("`{}` and `{}` outputs", job.command(), s.job.command())
            } else {
                "different presets or settings".into()
            };
            return Err(format!(
                "{name} and {first_name} are shards of different jobs ({what}); merge only \
                 shards of one command run"
            ));
        }
        if s.total_cells != total {
            return Err(format!(
                "{name}: field `total_cells`: {} where the job has {total} cells; the file was \
                 edited or damaged",
                s.total_cells
            ));
        }
        if s.shard.count != first.shard.count {
            return Err(format!(
                "{name} is shard {}/{} but {first_name} is shard {}/{}; all shards must come \
                 from one split",
                s.shard.index, s.shard.count, first.shard.index, first.shard.count
            ));
        }
        seconds += s.seconds;
        for (&c, r) in s.cells.iter().zip(&s.results) {
            let cell = S::Cell::of(r).filter(|_| c < total);
            let Some(r) = cell else {
                return Err(format!("{name}: cell {c} does not belong to this job"));
            };
            check(c, r).map_err(|e| {
                format!(
                    "{name}: cell {c} does not hold what the job's cell computes ({e}); the file \
                     was edited or damaged: run that shard again"
                )
            })?;
            if let Some(other) = owner[c] {
                return Err(format!(
                    "cell {c} is in both {} and {name}: the same shard was given twice, or \
                     shards of different splits",
                    shards[other].0
                ));
            }
            owner[c] = Some(k);
            slots[c] = Some(r.clone());
        }
    }
    let missing: Vec<usize> = (0..total).filter(|&c| owner[c].is_none()).collect();
    if !missing.is_empty() {
        let mut shards_missing: Vec<usize> =
            missing.iter().map(|c| c % first.shard.count).collect();
        shards_missing.sort_unstable();
        shards_missing.dedup();
        let list: Vec<String> = missing.iter().take(10).map(|c| c.to_string()).collect();
        let more = if missing.len() > 10 { ", …" } else { "" };
        let which: Vec<String> = shards_missing
            .iter()
            .map(|i| format!("{i}/{}", first.shard.count))
            .collect();
        return Err(format!(
            "{} of {total} cells are missing (cells {}{more}); run shard(s) {} and merge again",
            missing.len(),
            list.join(", "),
            which.join(", ")
        ));
    }
    let results = slots.into_iter().map(|r| r.expect("checked")).collect();
    Ok(task.assemble(results, seconds))
}
