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

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::experiment::report::PointsReport;
use crate::experiment::{
    AdamEps, KeyDim, Point, PointAxis, PointsTask, SeedArm, SweepError, SweepResult, SweepTask,
    assemble_sweep, check_seed, run_seed_until, sweep_seeds,
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

/// A points-sweep axis whose sweeps can be sharded: its [`Job`] variant.
pub trait ShardAxis: PointAxis {
    /// The shard job of a points sweep along this axis.
    fn job(task: PointsTask<Self>) -> Job;
}

impl ShardAxis for AdamEps {
    fn job(task: PointsTask<Self>) -> Job {
        Job::EpsSweep(task)
    }
}

impl ShardAxis for KeyDim {
    fn job(task: PointsTask<Self>) -> Job {
        Job::DkSweep(task)
    }
}

impl<A: ShardAxis> From<PointsTask<A>> for Job {
    fn from(task: PointsTask<A>) -> Self {
        A::job(task)
    }
}

impl From<SweepTask> for Job {
    fn from(task: SweepTask) -> Self {
        Job::Sweep(task)
    }
}

impl From<ZooTask> for Job {
    fn from(task: ZooTask) -> Self {
        Job::Zoo(task)
    }
}
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

/// What a sharded command computes: the analysis's task value itself, the one the command
/// runs whole, the app's tab starts and the page deals over its workers, so every setting that
/// changes a number is described once. A job holds its whole task (`part` `(0, 1)`: a task's
/// part is the page's split, a shard's cells are [`Shard::cells`]). Shard files keep the
/// layout they always had (`JobFile`), so files written before read back unchanged.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(into = "JobFile", from = "JobFile")]
pub enum Job {
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

/// A merged job: what the unsharded command would have computed.
#[derive(Clone, Debug, PartialEq)]
pub enum Merged {
    /// `sweep`.
    Sweep(SweepResult),
    /// A points sweep (`eps-sweep`, `dk-sweep`): its job and the seed sweep at each of its
    /// values, in order ([`Job::points_report`] turns them into its tables).
    Points {
        /// The job.
        job: Job,
        /// The seed sweep at each value.
        sweeps: Vec<SweepResult>,
    },
    /// `zoo`, with the summed wall time of its shards.
    Zoo {
        /// The zoo preset.
        preset: ZooPreset,
        /// Every run, in cell order.
        results: Vec<RunResult>,
        /// Sum of the shards' wall times, seconds.
        seconds: f64,
    },
}

/// What a [`Job`] asks of a points sweep, whatever its axis.
trait PointsJob {
    fn command(&self) -> &'static str;
    fn points(&self) -> usize;
    fn seeds(&self) -> usize;
    fn validate(&self) -> Result<(), FieldError>;
    fn presets(&self) -> Vec<Preset>;
    /// The points, from the seed sweep at each value.
    fn report(&self, sweeps: Vec<SweepResult>) -> Box<dyn PointsReport>;
}

impl<A: PointAxis> PointsJob for PointsTask<A> {
    fn command(&self) -> &'static str {
        A::COMMAND
    }

    fn points(&self) -> usize {
        self.values.len()
    }

    fn seeds(&self) -> usize {
        self.seeds
    }

    fn validate(&self) -> Result<(), FieldError> {
        PointsTask::validate(self)
    }

    fn presets(&self) -> Vec<Preset> {
        PointsTask::presets(self)
    }

    fn report(&self, sweeps: Vec<SweepResult>) -> Box<dyn PointsReport> {
        let points: Vec<Point<A>> = self
            .values
            .iter()
            .zip(sweeps)
            .map(|(&value, sweep)| Point { value, sweep })
            .collect();
        Box::new(points)
    }
}

impl Job {
    /// The job as a points sweep along its axis (`None` for `sweep` and `zoo`).
    fn points_job(&self) -> Option<&dyn PointsJob> {
        match self {
            Job::EpsSweep(task) => Some(task),
            Job::DkSweep(task) => Some(task),
            Job::Sweep(_) | Job::Zoo(_) => None,
        }
    }

    /// The command that runs it.
    pub fn command(&self) -> &'static str {
        match self {
            Job::Sweep(_) => "sweep",
            Job::Zoo(_) => "zoo",
            _ => self.points_job().expect("a points job").command(),
        }
    }

    /// Number of cells.
    pub fn total_cells(&self) -> usize {
        match self {
            Job::Sweep(task) => task.seeds,
            Job::Zoo(task) => task.preset.units(),
            _ => {
                let p = self.points_job().expect("a points job");
                p.points() * p.seeds()
            }
        }
    }

    /// Checks the settings as the commands do: seeds 1..=[`MAX_SEEDS`], 1..=[`MAX_POINTS`]
    /// values of a points sweep (each valid for its axis: ε in [0, 1e6] with an Adam arm
    /// present, say), and a valid preset at every point. Errors name the field.
    pub fn validate(&self) -> Result<(), FieldError> {
        match self {
            Job::Zoo(task) => task.preset.validate(),
            Job::Sweep(task) => {
                check_int("seeds", task.seeds, 1, MAX_SEEDS)?;
                task.preset.validate()
            }
            _ => self.points_job().expect("a points job").validate(),
        }
    }

    /// Every point's preset of a valid seed or points sweep, and its seeds per point: cell `c`
    /// runs point `c / seeds` at seed `c % seeds` from that preset's seed (see [`cell_run`]).
    fn points(&self) -> (Vec<Preset>, usize) {
        match self {
            Job::Sweep(task) => (vec![task.preset.clone()], task.seeds),
            Job::Zoo(_) => unreachable!("the zoo has no seed-sweep points"),
            _ => {
                let p = self.points_job().expect("a points job");
                (p.presets(), p.seeds())
            }
        }
    }

    /// The tables of a merged points sweep: its points, from the seed sweep at each value
    /// ([`Merged::Points`]); `None` unless this is a points sweep. Panics if `sweeps` has
    /// fewer entries than the job has values.
    pub fn points_report(&self, sweeps: Vec<SweepResult>) -> Option<Box<dyn PointsReport>> {
        let p = self.points_job()?;
        assert!(sweeps.len() >= p.points(), "a seed sweep per value");
        Some(p.report(sweeps))
    }

    /// Runs the cells listed in `cells` in parallel on the current rayon pool; `progress()`
    /// after each. Errors: an invalid preset (at any point), or a cancel. Panics on a cell
    /// index out of range.
    pub fn run_cells(
        &self,
        cells: &[usize],
        progress: &(dyn Fn() + Sync),
        cancel: &AtomicBool,
    ) -> Result<Vec<CellResult>, SweepError> {
        self.validate()?;
        if let Job::Zoo(task) = self {
            let runs = run_zoo_cells(&task.preset, cells, progress, cancel);
            return Ok(runs.into_iter().map(CellResult::Zoo).collect());
        }
        let (presets, seeds) = self.points();
        cells
            .par_iter()
            .map(|&c| {
                let (preset, seed) = cell_run(&presets, seeds, c);
                let r = run_seed_until(preset, seed, cancel).map(CellResult::Seed);
                progress();
                r
            })
            .collect()
    }

    /// Assembles the full result from every cell's result, in cell order.
    fn assemble(&self, results: Vec<CellResult>, seconds: f64) -> Merged {
        if let Job::Zoo(task) = self {
            let runs = results
                .into_iter()
                .map(|r| match r {
                    CellResult::Zoo(r) => r,
                    CellResult::Seed(_) => unreachable!("checked by merge"),
                })
                .collect();
            return Merged::Zoo {
                preset: task.preset.clone(),
                results: runs,
                seconds,
            };
        }
        let (presets, seeds) = self.points();
        let mut cells = results.into_iter().map(|r| match r {
            CellResult::Seed(s) => s,
            CellResult::Zoo(_) => unreachable!("checked by merge"),
        });
        let mut sweeps: Vec<SweepResult> = presets
            .iter()
            .map(|preset| {
                let chunk: Vec<Vec<SeedArm>> = cells.by_ref().take(seeds).collect();
                assemble_sweep(preset, sweep_seeds(preset, seeds), chunk)
            })
            .collect();
        match self {
            Job::Sweep(_) => Merged::Sweep(sweeps.remove(0)),
            _ => Merged::Points {
                job: self.clone(),
                sweeps,
            },
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

/// The preset and seed of cell `c` of a seed or points sweep whose points are `points` with
/// `seeds` seeds each (as [`Job::points`] gives them). Panics if `c` is out of range.
fn cell_run(points: &[Preset], seeds: usize, c: usize) -> (&Preset, u64) {
    let preset = &points[c / seeds];
    (preset, preset.seed.wrapping_add((c % seeds) as u64))
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
    let job = first.job.clone();
    job.validate().map_err(|e| format!("{first_name}: {e}"))?;
    let total = job.total_cells();
    // What each cell must hold: the zoo's cell list, or each point's preset and its seeds.
    let (zoo_units, points, seeds) = match &job {
        Job::Zoo(task) => (
            (task.preset.cells(), task.preset.references()),
            Vec::new(),
            1,
        ),
        _ => {
            let (points, seeds) = job.points();
            ((Vec::new(), Vec::new()), points, seeds)
        }
    };
    let check = |c: usize, r: &CellResult| match (&job, r) {
        (Job::Zoo(task), CellResult::Zoo(run)) => {
            task.preset.check_unit((&zoo_units.0, &zoo_units.1), c, run)
        }
        (_, CellResult::Seed(arms)) => {
            let (p, seed) = cell_run(&points, seeds, c);
            check_seed(p, seed, arms)
        }
        (_, CellResult::Zoo(_)) => Err("a zoo run in a seed sweep".into()),
    };
    let mut owner: Vec<Option<usize>> = vec![None; total];
    let mut slots: Vec<Option<CellResult>> = vec![None; total];
    let mut seconds = 0.0;
    for (k, (name, s)) in shards.iter().enumerate() {
        if s.job != job {
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
            let kind_ok = matches!(job, Job::Zoo(_)) == matches!(r, CellResult::Zoo(_));
            if c >= total || !kind_ok {
                return Err(format!("{name}: cell {c} does not belong to this job"));
            }
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
    Ok(job.assemble(results, seconds))
}
