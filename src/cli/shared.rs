//! What several commands share: the flattened flag groups (output folder, progress bar,
//! threads, shard), the progress bar, the thread pool and the shard runner.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

use basis_lab::console;
use basis_lab::figure::{FigureOptions, FigureSize};
use basis_lab::live::{Stop, Task};
use basis_lab::output::OutputSet;
use basis_lab::preset::Preset;
use basis_lab::shard::{Job, Shard};
use basis_lab::validate::{ListNumber, number_list};

/// A comma-separated number list as a flag takes it, read whole by [`number_list`] so that a
/// decimal comma (`--eps 0,01`) is refused instead of read as two values (clap's
/// `value_delimiter` would split it first). A flag given twice adds its values ([`values`]).
#[derive(Clone, Debug)]
pub struct List<T>(Vec<T>);

impl<T: ListNumber> List<T> {
    /// The flag's value parser. Errors: [`number_list`]'s, and an empty list.
    pub fn parse(text: &str) -> Result<Self, String> {
        let values = number_list(text)?;
        if values.is_empty() {
            return Err("give at least one value".into());
        }
        Ok(Self(values))
    }
}

/// The values of a list flag given once or more, in order.
pub fn values<T>(lists: Vec<List<T>>) -> Vec<T> {
    lists.into_iter().flat_map(|l| l.0).collect()
}

/// Where a command writes and whether it shows a progress bar.
#[derive(Args, Debug)]
pub struct Output {
    /// Output folder (created if missing).
    #[arg(long, short)]
    pub out: PathBuf,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

impl Output {
    /// Creates the folder and checks it is writable, and that none of `files` (the tables
    /// `command` will write there) nor of the files its previous set there wrote is read-only,
    /// before any work starts.
    pub fn prepare(&self, command: &str, files: &[&str]) -> Result<()> {
        prepare_dir(&self.out, command, files)
    }

    /// A progress bar over `len` items called `unit`, hidden with `--quiet`.
    pub fn progress_bar(&self, len: u64, unit: &str) -> ProgressBar {
        if self.quiet {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::new(len);
        let template =
            format!("{{bar:40}} {{pos}}/{{len}} {unit}  {{elapsed}} elapsed, eta {{eta}}");
        bar.set_style(ProgressStyle::with_template(&template).expect("valid template"));
        bar
    }
}

/// How a command with `--figures` draws them: their size and whether they carry titles.
#[derive(Args, Debug, Clone)]
pub struct FigureLook {
    /// With --figures: where the figures go: `single` (one column of a paper, 3.5 in wide),
    /// `double` (a full page width, 7 in) or `slide` (16:9). Text is 8–9 pt at print size
    /// for papers and 20 pt or more for slides.
    #[arg(long, value_name = "SIZE", default_value = "single", value_parser = FigureSize::parse, requires = "figures")]
    pub figure_size: FigureSize,
    /// With --figures: leave the titles out of slides too (papers have none: the caption,
    /// written beside each figure as a .txt, says what it shows).
    #[arg(long, requires = "figures")]
    pub no_titles: bool,
}

impl FigureLook {
    /// The options `--figures` draws with, or None without it (`on`).
    pub fn options(&self, on: bool) -> Option<FigureOptions> {
        on.then(|| {
            let mut opts = FigureOptions::new(self.figure_size);
            opts.titles &= !self.no_titles;
            opts
        })
    }
}

/// How many threads a parallel command uses.
#[derive(Args, Debug)]
pub struct Parallel {
    /// Worker threads (default: one per core).
    #[arg(long)]
    pub threads: Option<usize>,
}

impl Parallel {
    /// A rayon pool of `--threads` workers (default: one per core). Errors: a count outside
    /// 1..=1024.
    pub fn pool(&self) -> Result<rayon::ThreadPool> {
        let mut pool = rayon::ThreadPoolBuilder::new();
        if let Some(t) = self.threads {
            if !(1..=1024).contains(&t) {
                anyhow::bail!("--threads {t} is out of range; allowed 1..=1024");
            }
            pool = pool.num_threads(t);
        }
        Ok(pool.build()?)
    }
}

/// The flags of the commands that can be split over processes: output folder, progress bar,
/// threads and shard.
#[derive(Args, Debug)]
pub struct Shared {
    #[command(flatten)]
    pub output: Output,
    #[command(flatten)]
    pub parallel: Parallel,
    /// Run only shard i of N (0-based; cells i, i+N, …) and write shard.ron for
    /// `basis-lab merge`.
    #[arg(long, value_name = "i/N")]
    pub shard: Option<Shard>,
    /// Also write the plots as SVG, PDF, PNG (3×) and caption text next to the tables (not with
    /// --shard: give it to `merge`).
    #[arg(long, conflicts_with = "shard")]
    pub figures: bool,
    #[command(flatten)]
    pub look: FigureLook,
}

impl Shared {
    /// The options `--figures` draws with, or None without it.
    pub fn figure_options(&self) -> Option<FigureOptions> {
        self.look.options(self.figures)
    }

    /// Checks `task`'s shard job as `merge` will, then runs it: with `--shard` that shard of
    /// its cells, written to `shard.ron` (returns `None`); otherwise the whole task on the
    /// thread pool, with a progress bar over its cells called `unit`. The one task value
    /// describes both, as it does for the app and the page's workers.
    pub fn run<K, T>(&self, task: K, unit: &str) -> Result<Option<T>>
    where
        K: Task<Output = Result<T, Stop>> + Clone,
        Job: From<K>,
        T: Send,
    {
        let job = Job::from(task.clone());
        job.validate()?;
        if self.run_shard(&job)? {
            return Ok(None);
        }
        let pool = self.parallel.pool()?;
        let bar = self.output.progress_bar(job.total_cells() as u64, unit);
        let never = AtomicBool::new(false);
        let result = pool.install(|| task.run(&|| bar.inc(1), &never));
        bar.finish_and_clear();
        match result {
            Ok(r) => Ok(Some(r)),
            Err(Stop::Failed(e)) => Err(anyhow::Error::msg(e)),
            Err(Stop::Cancelled) => Err(anyhow::Error::msg("cancelled")),
        }
    }

    /// With `--shard`, runs that shard of `job` and writes `shard.ron` (returns true: the
    /// command is done); without, does nothing and returns false.
    fn run_shard(&self, job: &Job) -> Result<bool> {
        let Some(shard) = self.shard else {
            return Ok(false);
        };
        let cells = shard.cells(job.total_cells()).len();
        let bar = self.output.progress_bar(cells as u64, "cells");
        let never = AtomicBool::new(false);
        let output = self
            .parallel
            .pool()?
            .install(|| basis_lab::shard::run_shard(job, shard, &|| bar.inc(1), &never))?;
        bar.finish_and_clear();
        let out = &self.output.out;
        let file = out.join(basis_lab::shard::SHARD_FILE);
        basis_lab::shard::write_shard(out, &output)
            .with_context(|| format!("cannot write {}", file.display()))?;
        console::outln(&format!(
            "{} shard {}/{}: {cells} of {} cells in {:.1} s; wrote {}\ncombine every shard with: basis-lab merge DIR... --out DIR",
            job.command(),
            shard.index,
            shard.count,
            job.total_cells(),
            output.seconds,
            file.display()
        ))?;
        Ok(true)
    }
}

/// Creates `dir` and checks it is writable, and that none of `files` in it, nor of the files
/// `command`'s previous set there wrote ([`basis_lab::output::check_set`]), is read-only (or a
/// dangling link), before any work starts.
pub fn prepare_dir(dir: &Path, command: &str, files: &[&str]) -> Result<()> {
    let hint = || {
        format!(
            "cannot write to {} (nothing was run; choose another --out)",
            dir.display()
        )
    };
    basis_lab::output::ensure_writable_dir(dir).with_context(hint)?;
    basis_lab::output::check_set(dir, command, files)
        .map_err(|e| anyhow::anyhow!("{e} (nothing was run)"))
}

/// Loads a preset (a file or a bundled name), applies `--steps` and validates it.
pub fn load_preset(name: &std::ffi::OsStr, steps: Option<usize>) -> Result<Preset> {
    let mut p = Preset::load(name)?;
    p.steps = steps.unwrap_or(p.steps);
    p.validate()?;
    Ok(p)
}

/// With `opts`, stages every `(stem, figure)` of `figures()` as SVG, PDF, PNG and caption in `set`.
pub fn write_figures(
    opts: Option<FigureOptions>,
    set: &mut OutputSet,
    figures: impl FnOnce() -> Vec<(String, basis_lab::figure::Figure)>,
) -> Result<()> {
    if let Some(opts) = opts {
        basis_lab::figure::write_all(set, &figures(), &opts)?;
    }
    Ok(())
}

/// Renames `set`'s files into place, then prints `text` (the result's table), which stale files
/// of an earlier run were removed, and "wrote DIR". Errors: a file (named) or standard output
/// cannot be written.
pub fn commit(set: OutputSet, dir: &Path, text: &str) -> Result<()> {
    let done = set.commit()?;
    console::out(text)?;
    console::out(&done.removed_text())?;
    wrote(dir)
}

/// Prints "wrote DIR". Errors: standard output cannot be written.
pub fn wrote(dir: &Path) -> Result<()> {
    Ok(console::outln(&format!("wrote {}", dir.display()))?)
}
