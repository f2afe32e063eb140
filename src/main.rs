//! `basis-lab`: no arguments opens the desktop app; subcommands run experiments headless.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use basis_lab::experiment::output::write_atomic;
use basis_lab::experiment::report;
use basis_lab::experiment::{DkPoint, EpsPoint, RunOptions, run_to_dir, sweep};
use basis_lab::preset::{BUNDLED, Preset};
use basis_lab::shard::{Job, Merged, Shard};

#[derive(Parser)]
#[command(
    name = "basis-lab",
    version,
    about = "Does the optimizer leave fingerprints in the coordinate basis of what a model learns?",
    long_about = "Without a subcommand, opens the desktop lab. With one, runs an experiment \
                  headless and writes CSV/JSON results."
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Open the app with this preset (a file or a bundled name) instead of the saved settings.
    #[arg(long, global = false)]
    preset: Option<String>,
    /// Screenshot mode: run --run-steps steps at full speed, save a PNG of the window here,
    /// and exit (for docs and tests).
    #[arg(long, value_name = "PATH")]
    screenshot: Option<PathBuf>,
    /// Steps to run before the screenshot.
    #[arg(long, default_value_t = 500, requires = "screenshot")]
    run_steps: usize,
    /// Use the dark theme (the View menu switches it too).
    #[arg(long)]
    dark: bool,
    /// With --screenshot: stream the run at full speed for --frame-seconds instead of stopping at
    /// --run-steps, then print frame-time percentiles and peak memory before the screenshot.
    #[arg(long, requires = "screenshot")]
    frame_stats: bool,
    /// Seconds measured by --frame-stats.
    #[arg(long, default_value_t = 30.0, requires = "frame_stats")]
    frame_seconds: f64,
    /// Open this section: model, axes, step, why, test, reading, blind-spots or gauge.
    #[arg(long, value_parser = parse_section)]
    panel: Option<basis_lab::app::state::Section>,
    /// Open this tab of the controlled test: live, activations, sweep, eps, matched or dk (in
    /// screenshot mode the seed sweep and the ε, matched and d_k analyses run first).
    #[arg(long)]
    tab: Option<basis_lab::app::state::LiveTab>,
}

fn parse_section(name: &str) -> Result<basis_lab::app::state::Section, String> {
    basis_lab::app::state::Section::from_cli_name(name).ok_or_else(|| {
        let names: Vec<&str> = basis_lab::app::state::Section::ALL
            .iter()
            .map(|s| s.cli_name())
            .collect();
        format!("unknown panel `{name}`; one of: {}", names.join(", "))
    })
}

#[derive(Subcommand)]
enum Command {
    /// Train every arm of PRESET from W0 and from Q·W0; write metrics.csv, summary.json and
    /// trace.json into --out.
    Run {
        /// A preset file, or a bundled preset name (see `basis-lab presets`).
        preset: String,
        /// Output folder (created if missing).
        #[arg(long, short)]
        out: PathBuf,
        /// Override the preset's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Override the preset's step count.
        #[arg(long)]
        steps: Option<usize>,
        /// Skip trace.json (every episode and matrix; large for long runs).
        #[arg(long)]
        no_trace: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Run PRESET over seeds seed … seed+N−1 in parallel; write sweep.csv and sweep.json.
    Sweep {
        /// A preset file, or a bundled preset name.
        preset: String,
        /// Number of seeds.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=10_000))]
        seeds: u64,
        /// Output folder (created if missing).
        #[arg(long, short)]
        out: PathBuf,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// Override the preset's step count.
        #[arg(long)]
        steps: Option<usize>,
        /// Run only shard i of N (0-based; cells i, i+N, …) and write shard.ron for
        /// `basis-lab merge`.
        #[arg(long, value_name = "i/N")]
        shard: Option<Shard>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// The ε sweep: the seed sweep of PRESET at each ε of every Adam arm; writes eps_sweep.csv
    /// and eps_sweep.json (mean ± sd over seeds of each arm's A(K) excess, twin divergences and
    /// held-out accuracy per ε).
    EpsSweep {
        /// A preset file, or a bundled preset name.
        preset: String,
        /// Comma-separated values of Adam's ε.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "1e-12,1e-8,1e-6,1e-4,1e-2,1"
        )]
        eps: Vec<f64>,
        /// Seeds per ε.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=10_000))]
        seeds: u64,
        /// Output folder (created if missing).
        #[arg(long, short)]
        out: PathBuf,
        /// Override the preset's step count.
        #[arg(long)]
        steps: Option<usize>,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// Run only shard i of N (0-based; cells i, i+N, …) and write shard.ron for
        /// `basis-lab merge`.
        #[arg(long, value_name = "i/N")]
        shard: Option<Shard>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// The d_k sweep: the seed sweep of PRESET at each key dimension, with keys and pairs per
    /// episode scaled in proportion; writes dk_sweep.csv and dk_sweep.json.
    DkSweep {
        /// A preset file, or a bundled preset name.
        preset: String,
        /// Comma-separated key dimensions.
        #[arg(long, value_delimiter = ',', default_value = "4,8,16,32,64")]
        dks: Vec<usize>,
        /// Seeds per d_k.
        #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=10_000))]
        seeds: u64,
        /// Output folder (created if missing).
        #[arg(long, short)]
        out: PathBuf,
        /// Override the preset's step count.
        #[arg(long)]
        steps: Option<usize>,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// Run only shard i of N (0-based; cells i, i+N, …) and write shard.ron for
        /// `basis-lab merge`.
        #[arg(long, value_name = "i/N")]
        shard: Option<Shard>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Matched budget vs matched loss: every arm measured at the step the first arm reaches each
    /// of a ladder of held-out loss levels, and at the step it reaches each level itself;
    /// writes matched.csv and matched.json and labels each arm's difference from the first arm.
    Matched {
        /// A preset file, or a bundled preset name.
        preset: String,
        /// Number of loss levels between the initial loss and the best one every arm reaches.
        #[arg(long, default_value_t = 6)]
        levels: usize,
        /// Output folder (created if missing).
        #[arg(long, short)]
        out: PathBuf,
        /// Override the preset's step count.
        #[arg(long)]
        steps: Option<usize>,
    },
    /// Gauge lab: run the optimizer zoo on factored matrix sensing (a zoo preset:
    /// presets/zoo-paper.ron, presets/dial.ron, presets/tail.ron); write zoo.csv, zoo.json and
    /// zoo.md. `dial` and `tail` are the same command.
    #[command(visible_alias = "dial", visible_alias = "tail")]
    Zoo {
        /// A zoo preset file, or a bundled one: zoo-paper, dial, tail, muon-rates.
        preset: PathBuf,
        /// Output folder (created if missing).
        #[arg(long, short)]
        out: PathBuf,
        /// Override the number of seeds.
        #[arg(long)]
        seeds: Option<usize>,
        /// Override the step budget.
        #[arg(long)]
        budget: Option<usize>,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// Run only shard i of N (0-based; cells i, i+N, …) and write shard.ron for
        /// `basis-lab merge`.
        #[arg(long, value_name = "i/N")]
        shard: Option<Shard>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Combine the shard.ron outputs of `--shard i/N` runs into the tables the unsharded
    /// command writes, byte for byte.
    Merge {
        /// Shard output folders (or shard.ron files), every shard of one run.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Output folder (created if missing).
        #[arg(long, short)]
        out: PathBuf,
    },
    /// Hyperspectral completion (the paper's Table 5): fit W = UVᵀ to a random fraction of a
    /// scene's pixels × bands matrix with GD, Adam and Muon in parallel; report held-out RMSE
    /// and effective rank at matched training loss; write hsi.csv and hsi.md into --out. You
    /// supply the scene (a MATLAB v5 .mat file); nothing is downloaded.
    Hsi {
        /// The scene: a MATLAB v5 .mat file holding a rows × columns × bands array.
        scene: PathBuf,
        /// Fraction of entries observed, in (0, 1) (the paper: 0.15 and 0.25).
        #[arg(long)]
        density: f64,
        /// Variable holding the cube.
        #[arg(long, default_value = "indian_pines_corrected")]
        var: String,
        /// Seed of the pixel choice, the mask and the initial factors.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Step budget per rule.
        #[arg(long, default_value_t = 30_000)]
        steps: usize,
        /// Output folder (created if missing).
        #[arg(long, short)]
        out: PathBuf,
        /// Comma-separated rules: gd, adam, muon.
        #[arg(long, value_delimiter = ',', default_value = "gd,adam,muon")]
        rules: Vec<String>,
        /// Override rates, e.g. `gd=500,adam=3e-4` (defaults: the documented choice).
        #[arg(long, value_delimiter = ',', conflicts_with = "grid")]
        lr: Vec<String>,
        /// Run each rule's whole rate grid and mark the rate the train-only rule selects.
        #[arg(long)]
        grid: bool,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Time the hot loops (episode, paired step, seed sweep, sensing step, memory stream) and
    /// print steps/s, episodes/s and GFLOP/s against the operation counts documented in
    /// `basis_lab::bench`. About five seconds; `--long` for about a minute and n = 128.
    Bench {
        /// Longer timings and sweeps, plus the n = 128 sensing steps.
        #[arg(long)]
        long: bool,
    },
    /// List the bundled presets, or print one as RON.
    Presets {
        /// Print this preset's full RON text.
        name: Option<String>,
    },
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so printing into a closed pipe (`basis-lab presets | head`) would
    // panic; the default action ends the process quietly, as other command-line tools do.
    #[cfg(unix)]
    // SAFETY: called first thing, before any other thread exists; SIG_DFL is a valid action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        None => {
            if cli.frame_stats && !(cli.frame_seconds.is_finite() && cli.frame_seconds > 0.0) {
                anyhow::bail!(
                    "--frame-seconds {} is out of range; allowed a positive number",
                    cli.frame_seconds
                );
            }
            let preset = cli.preset.as_deref().map(Preset::load).transpose()?;
            basis_lab::app::run_gui(basis_lab::app::GuiOptions {
                preset,
                screenshot: cli.screenshot,
                run_steps: cli.run_steps,
                dark: cli.dark.then_some(true),
                section: cli.panel,
                tab: cli.tab,
                frame_seconds: cli.frame_stats.then_some(cli.frame_seconds),
            })
        }
        Some(Command::Run {
            preset,
            out,
            seed,
            steps,
            no_trace,
            quiet,
        }) => {
            let mut p = Preset::load(&preset)?;
            p.seed = seed.unwrap_or(p.seed);
            p.steps = steps.unwrap_or(p.steps);
            p.validate()
                .map_err(|(f, m)| anyhow::anyhow!("field `{f}`: {m}"))?;
            let bar = progress_bar(quiet, p.steps as u64, "steps");
            let summary = run_to_dir(&p, &out, RunOptions { trace: !no_trace }, &|s| {
                bar.set_position(s as u64)
            })?;
            bar.finish_and_clear();
            print!("{}", report::summary_text(&summary));
            println!("wrote {}", out.display());
            Ok(())
        }
        Some(Command::Sweep {
            preset,
            seeds,
            out,
            threads,
            steps,
            shard,
            quiet,
        }) => {
            let mut p = Preset::load(&preset)?;
            p.steps = steps.unwrap_or(p.steps);
            p.validate()
                .map_err(|(f, m)| anyhow::anyhow!("field `{f}`: {m}"))?;
            writable_dir(&out)?;
            if let Some(shard) = shard {
                let job = Job::Sweep {
                    preset: p,
                    seeds: seeds as usize,
                };
                return run_shard(&job, shard, &out, threads, quiet);
            }
            let pool = thread_pool(threads)?;
            let bar = progress_bar(quiet, seeds, "seeds");
            let result = pool
                .install(|| sweep(&p, seeds as usize, &|| bar.inc(1)))
                .map_err(|(f, m)| anyhow::anyhow!("field `{f}`: {m}"))?;
            bar.finish_and_clear();
            report::write_sweep(&out, &result)?;
            print!("{}", report::sweep_text(&result));
            println!("wrote {}", out.display());
            Ok(())
        }
        Some(Command::EpsSweep {
            preset,
            eps,
            seeds,
            out,
            steps,
            threads,
            shard,
            quiet,
        }) => {
            let job = Job::EpsSweep {
                preset: load_for_sweep(&preset, steps, &out)?,
                eps,
                seeds: seeds as usize,
            };
            run_points(&job, shard, &out, threads, quiet)
        }
        Some(Command::DkSweep {
            preset,
            dks,
            seeds,
            out,
            steps,
            threads,
            shard,
            quiet,
        }) => {
            let job = Job::DkSweep {
                preset: load_for_sweep(&preset, steps, &out)?,
                dks,
                seeds: seeds as usize,
            };
            run_points(&job, shard, &out, threads, quiet)
        }
        Some(Command::Matched {
            preset,
            levels,
            out,
            steps,
        }) => {
            let mut p = Preset::load(&preset)?;
            p.steps = steps.unwrap_or(p.steps);
            writable_dir(&out)?;
            let report = basis_lab::experiment::matched::matched_report(&p, levels)
                .map_err(|e| anyhow::anyhow!(e))?;
            print!("{}", report::matched_text(&report));
            report::write_matched(&out, &report)?;
            println!("wrote {}", out.display());
            Ok(())
        }
        Some(Command::Zoo {
            preset,
            out,
            seeds,
            budget,
            threads,
            shard,
            quiet,
        }) => {
            use basis_lab::sensing::zoo::{ZooPreset, run_zoo};
            let mut p = ZooPreset::load(&preset).map_err(anyhow::Error::msg)?;
            p.seeds = seeds.unwrap_or(p.seeds);
            p.budget = budget.unwrap_or(p.budget);
            p.validate()
                .map_err(|(f, m)| anyhow::anyhow!("field `{f}`: {m}"))?;
            writable_dir(&out)?;
            if let Some(shard) = shard {
                return run_shard(&Job::Zoo { preset: p }, shard, &out, threads, quiet);
            }
            let pool = thread_pool(threads)?;
            let bar = progress_bar(quiet, p.cells().len() as u64, "runs");
            let started = std::time::Instant::now();
            let never = std::sync::atomic::AtomicBool::new(false);
            let results = pool.install(|| run_zoo(&p, &|| bar.inc(1), &never));
            bar.finish_and_clear();
            let seconds = started.elapsed().as_secs_f64();
            write_zoo(&p, &results, seconds, &out)
        }
        Some(Command::Merge { dirs, out }) => {
            let shards = dirs
                .iter()
                .map(|d| basis_lab::shard::read_shard(d).map(|s| (d.display().to_string(), s)))
                .collect::<Result<Vec<_>, String>>()
                .map_err(anyhow::Error::msg)?;
            let merged = basis_lab::shard::merge(shards).map_err(anyhow::Error::msg)?;
            writable_dir(&out)?;
            match merged {
                Merged::Sweep(r) => {
                    report::write_sweep(&out, &r)?;
                    print!("{}", report::sweep_text(&r));
                    println!("wrote {}", out.display());
                    Ok(())
                }
                Merged::EpsSweep(points) => write_eps_points(&out, &points),
                Merged::DkSweep(points) => write_dk_points(&out, &points),
                Merged::Zoo {
                    preset,
                    results,
                    seconds,
                } => write_zoo(&preset, &results, seconds, &out),
            }
        }
        Some(Command::Hsi {
            scene,
            density,
            var,
            seed,
            steps,
            out,
            rules,
            lr,
            grid,
            threads,
            quiet,
        }) => hsi(HsiArgs {
            scene,
            density,
            var,
            seed,
            steps,
            out,
            rules,
            lr,
            grid,
            threads,
            quiet,
        }),
        Some(Command::Bench { long }) => {
            use basis_lab::bench;
            let opts = if long {
                bench::BenchOptions::long()
            } else {
                bench::BenchOptions::quick()
            };
            println!("{}", bench::table_header());
            bench::run_figures(opts, &mut |f| println!("{}", bench::table_row(f)));
            Ok(())
        }
        Some(Command::Presets { name: None }) => {
            for (name, text) in BUNDLED {
                let p = Preset::from_ron(text, name)?;
                println!("{name:<14} {}", p.description);
            }
            Ok(())
        }
        Some(Command::Presets { name: Some(n) }) => {
            print!("{}", Preset::load(&n)?.to_ron());
            println!();
            Ok(())
        }
    }
}

/// Creates `out` and checks it is writable before any work starts.
fn writable_dir(out: &std::path::Path) -> Result<()> {
    basis_lab::experiment::output::ensure_writable_dir(out).with_context(|| {
        format!(
            "cannot write to {} (nothing was run; choose another --out)",
            out.display()
        )
    })
}

/// Errors unless a list of sweep points has 1..=MAX_POINTS values.
/// Runs an ε or d_k sweep `job` (checked first, every point's preset included): one shard of
/// it with `--shard`, otherwise the whole of it, writing its table.
fn run_points(
    job: &Job,
    shard: Option<Shard>,
    out: &std::path::Path,
    threads: Option<usize>,
    quiet: bool,
) -> Result<()> {
    job.validate()
        .map_err(|(f, m)| anyhow::anyhow!("field `{f}`: {m}"))?;
    if let Some(shard) = shard {
        return run_shard(job, shard, out, threads, quiet);
    }
    let bar = progress_bar(quiet, job.total_cells() as u64, "seeds");
    let never = std::sync::atomic::AtomicBool::new(false);
    let progress = || bar.inc(1);
    let pool = thread_pool(threads)?;
    let sweep_error = |e: basis_lab::experiment::SweepError| anyhow::anyhow!("{e}");
    match job {
        Job::EpsSweep {
            preset, eps, seeds, ..
        } => {
            let points = pool
                .install(|| {
                    basis_lab::experiment::eps_sweep(preset, eps, *seeds, &progress, &never)
                })
                .map_err(sweep_error)?;
            bar.finish_and_clear();
            write_eps_points(out, &points)
        }
        Job::DkSweep {
            preset, dks, seeds, ..
        } => {
            let points = pool
                .install(|| basis_lab::experiment::dk_sweep(preset, dks, *seeds, &progress, &never))
                .map_err(sweep_error)?;
            bar.finish_and_clear();
            write_dk_points(out, &points)
        }
        _ => unreachable!("run_points takes ε and d_k sweeps"),
    }
}

/// Loads a preset for a sweep command, applies `--steps`, validates it and creates `out`.
fn load_for_sweep(preset: &str, steps: Option<usize>, out: &std::path::Path) -> Result<Preset> {
    let mut p = Preset::load(preset)?;
    p.steps = steps.unwrap_or(p.steps);
    p.validate()
        .map_err(|(f, m)| anyhow::anyhow!("field `{f}`: {m}"))?;
    writable_dir(out)?;
    Ok(p)
}

struct HsiArgs {
    scene: PathBuf,
    density: f64,
    var: String,
    seed: u64,
    steps: usize,
    out: PathBuf,
    rules: Vec<String>,
    lr: Vec<String>,
    grid: bool,
    threads: Option<usize>,
    quiet: bool,
}

/// The `hsi` command: load, run the rules in parallel, print and write hsi.csv / hsi.md.
fn hsi(a: HsiArgs) -> Result<()> {
    use basis_lab::sensing::hsi::{
        HsiConfig, csv_bytes, load, markdown, rule_by_name, run_all, select,
    };
    let rules = a
        .rules
        .iter()
        .map(|n| rule_by_name(n.trim()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("--rules: {e}"))?;
    let mut runs: Vec<_> = if a.grid {
        rules
            .iter()
            .flat_map(|&(r, _, grid)| grid.iter().map(move |&lr| (r, lr)))
            .collect()
    } else {
        rules.iter().map(|&(r, lr, _)| (r, lr)).collect()
    };
    for item in &a.lr {
        let (name, value) = item
            .split_once('=')
            .with_context(|| format!("--lr `{item}`: expected RULE=RATE, e.g. gd=0.5"))?;
        let rate: f64 = value
            .trim()
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite() && *x > 0.0)
            .with_context(|| format!("--lr `{item}`: the rate must be a positive number"))?;
        let (rule, _, _) = rule_by_name(name.trim()).map_err(|e| anyhow::anyhow!("--lr: {e}"))?;
        let slot = runs
            .iter_mut()
            .find(|(r, _)| *r == rule)
            .with_context(|| format!("--lr `{item}`: {} is not in --rules", rule.name()))?;
        slot.1 = rate;
    }
    let cfg = HsiConfig {
        density: a.density,
        seed: a.seed,
        steps: a.steps,
        ..HsiConfig::default()
    };
    let (setup, problem) = load(&a.scene, &a.var, &cfg)?;
    writable_dir(&a.out)?;
    let pool = thread_pool(a.threads)?;
    let bar = progress_bar(a.quiet, (runs.len() * cfg.steps) as u64, "steps");
    let started = std::time::Instant::now();
    let results = pool.install(|| run_all(&problem, &runs, &|n| bar.inc(n)));
    bar.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let selected = select(&results);
    write_atomic(
        &a.out.join("hsi.csv"),
        &csv_bytes(&setup, &results, &selected)?,
    )?;
    let md = markdown(&setup, &results, &selected, seconds);
    write_atomic(&a.out.join("hsi.md"), md.as_bytes())?;
    print!("{md}");
    println!("wrote {}", a.out.display());
    Ok(())
}

/// A rayon pool of `threads` workers (default: one per core).
fn thread_pool(threads: Option<usize>) -> Result<rayon::ThreadPool> {
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        if !(1..=1024).contains(&t) {
            anyhow::bail!("--threads {t} is out of range; allowed 1..=1024");
        }
        pool = pool.num_threads(t);
    }
    Ok(pool.build()?)
}

fn progress_bar(quiet: bool, len: u64, unit: &str) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    let template = format!("{{bar:40}} {{pos}}/{{len}} {unit}  {{elapsed}} elapsed, eta {{eta}}");
    bar.set_style(ProgressStyle::with_template(&template).expect("valid template"));
    bar
}

/// Writes `zoo.csv`, `zoo.json` and `zoo.md` for `results` (in cell order) and prints the table.
fn write_zoo(
    p: &basis_lab::sensing::zoo::ZooPreset,
    results: &[basis_lab::sensing::zoo::RunResult],
    seconds: f64,
    out: &std::path::Path,
) -> Result<()> {
    let md = basis_lab::sensing::zoo::write_report(out, p, results, seconds)?;
    print!("{md}");
    println!(
        "\n{} runs in {seconds:.1} s; wrote {}",
        results.len(),
        out.display()
    );
    Ok(())
}

/// Runs one shard of `job` and writes `shard.ron` into `out`.
fn run_shard(
    job: &Job,
    shard: Shard,
    out: &std::path::Path,
    threads: Option<usize>,
    quiet: bool,
) -> Result<()> {
    let cells = shard.cells(job.total_cells()).len();
    let bar = progress_bar(quiet, cells as u64, "cells");
    let never = std::sync::atomic::AtomicBool::new(false);
    let output = thread_pool(threads)?
        .install(|| basis_lab::shard::run_shard(job, shard, &|| bar.inc(1), &never))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    bar.finish_and_clear();
    let file = out.join(basis_lab::shard::SHARD_FILE);
    basis_lab::shard::write_shard(out, &output)
        .with_context(|| format!("cannot write {}", file.display()))?;
    println!(
        "{} shard {}/{}: {cells} of {} cells in {:.1} s; wrote {}\ncombine every shard with: basis-lab merge DIR... --out DIR",
        job.command(),
        shard.index,
        shard.count,
        job.total_cells(),
        output.seconds,
        file.display()
    );
    Ok(())
}

/// Prints the ε sweep's table and writes `eps_sweep.csv` and `eps_sweep.json`.
fn write_eps_points(out: &std::path::Path, points: &[EpsPoint]) -> Result<()> {
    print!("{}", report::points_text(&report::eps_points(points)));
    report::write_eps_sweep(out, points)?;
    println!("wrote {}", out.display());
    Ok(())
}

/// Prints the d_k sweep's table and writes `dk_sweep.csv` and `dk_sweep.json`.
fn write_dk_points(out: &std::path::Path, points: &[DkPoint]) -> Result<()> {
    print!("{}", report::points_text(&report::dk_points(points)));
    report::write_dk_sweep(out, points)?;
    println!("wrote {}", out.display());
    Ok(())
}
