//! `basis-lab`: no arguments opens the desktop app; subcommands run experiments headless.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use basis_lab::experiment::output::write_atomic;
use basis_lab::experiment::{RunOptions, Summary, SweepResult, run_to_dir, sweep};
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
    /// Attention twins (the paper's Table 3): train a small transformer on addition mod p with
    /// each rule of PRESET, beside its gauge, A = I and noise twins; write attention.csv,
    /// attention.md and trace.json into --out.
    Attention {
        /// An attention preset file, or a bundled one: attention, attention-quick.
        preset: String,
        /// Output folder (created if missing).
        #[arg(long, short)]
        out: PathBuf,
        /// Override the number of seeds (mean ± sd in attention.md).
        #[arg(long)]
        seeds: Option<usize>,
        /// Override the step count.
        #[arg(long)]
        steps: Option<usize>,
        /// Worker threads (default: one per core).
        #[arg(long)]
        threads: Option<usize>,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Time the hot loops (episode, paired step, attention step, seed sweep, sensing step, memory
    /// stream) and print steps/s, episodes/s and GFLOP/s against the operation counts documented in
    /// `basis_lab::bench`. About five seconds; `--long` for about a minute and n = 128.
    Bench {
        /// Longer timings and sweeps, plus the n = 128 sensing steps.
        #[arg(long)]
        long: bool,
    },
    /// List the bundled presets (the attention presets last), or print one as RON.
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
            print_summary(&summary);
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
            write_sweep(&result, &out)?;
            print_sweep(&result);
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
            let num = basis_lab::experiment::output::csv_num;
            let mut csv = csv::Writer::from_writer(Vec::new());
            csv.write_record([
                "kind",
                "level",
                "arm",
                "step",
                "heldout_loss",
                "excess",
                "baseline_sd",
                "gram_div",
                "orientation_div",
            ])?;
            println!(
                "{:<7} {:>9} {:<12} {:>6} {:>9} {:>10} {:>11} {:>10} {:>10}",
                "match",
                "level",
                "arm",
                "step",
                "held loss",
                "excess",
                "baseline sd",
                "gram div",
                "twin div"
            );
            for r in &report.rows {
                let step = r.step.map_or(String::new(), |s| s.to_string());
                csv.write_record([
                    r.kind.clone(),
                    num(r.level),
                    r.arm.clone(),
                    step.clone(),
                    num(r.heldout_loss),
                    num(r.excess),
                    num(r.baseline_sd),
                    num(r.gram_div),
                    num(r.orientation_div),
                ])?;
                println!(
                    "{:<7} {:>9.4} {:<12} {:>6} {:>9.4} {:>10} {:>11} {:>10} {:>10}",
                    r.kind,
                    r.level,
                    r.arm,
                    if step.is_empty() { "—".into() } else { step },
                    r.heldout_loss,
                    sci(r.excess),
                    sci(r.baseline_sd),
                    sci(r.gram_div),
                    sci(r.orientation_div)
                );
            }
            println!(
                "\nAt the deepest level ({:.4}), excess A(K) against {}:",
                report.levels.last().copied().unwrap_or(f64::NAN),
                report.reference
            );
            for v in &report.verdicts {
                println!(
                    "{:<12} {:>10} at matched budget, {:>10} at matched loss (baseline sd {}): {}",
                    v.arm,
                    sci(v.diff_budget),
                    sci(v.diff_loss),
                    sci(v.yardstick),
                    v.label
                );
            }
            let bytes = csv.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
            write_atomic(&out.join("matched.csv"), &bytes)?;
            write_atomic(
                &out.join("matched.json"),
                &serde_json::to_vec_pretty(&report)?,
            )?;
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
                    write_sweep(&r, &out)?;
                    print_sweep(&r);
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
        Some(Command::Attention {
            preset,
            out,
            seeds,
            steps,
            threads,
            quiet,
        }) => {
            use basis_lab::attention::{AttentionPreset, report, run_attention};
            let mut p = AttentionPreset::load(&preset)?;
            p.seeds = seeds.unwrap_or(p.seeds);
            p.steps = steps.unwrap_or(p.steps);
            p.validate()?;
            writable_dir(&out)?;
            let bar = progress_bar(quiet, (p.seeds * (p.steps + 1)) as u64, "steps");
            let result = thread_pool(threads)?.install(|| run_attention(&p, &|| bar.inc(1)))?;
            bar.finish_and_clear();
            print!("{}", report::write_outputs(&result, &out)?);
            println!("wrote {}", out.display());
            Ok(())
        }
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
            use basis_lab::attention::{AttentionPreset, BUNDLED_ATTENTION};
            for (name, text) in BUNDLED_ATTENTION {
                let p = AttentionPreset::from_ron(text, name)?;
                println!("{name:<14} {} (`basis-lab attention`)", p.description);
            }
            Ok(())
        }
        Some(Command::Presets { name: Some(n) })
            if basis_lab::attention::BUNDLED_ATTENTION
                .iter()
                .any(|(b, _)| *b == n) =>
        {
            println!(
                "{}",
                basis_lab::attention::AttentionPreset::load(&n)?.to_ron()
            );
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

/// Writes `<stem>.csv` and `<stem>.json` into `out` and prints a table: one row per point and
/// arm, the point's own columns first, then the arm's aggregate over seeds.
fn write_points<T: serde::Serialize + ?Sized>(
    out: &std::path::Path,
    stem: &str,
    all: &T,
    rows: &[(Vec<(&str, String)>, &SweepResult)],
) -> Result<()> {
    let num = basis_lab::experiment::output::csv_num;
    let mut csv = csv::Writer::from_writer(Vec::new());
    let lead: Vec<&str> = rows
        .first()
        .map_or(Vec::new(), |r| r.0.iter().map(|c| c.0).collect());
    let mut header: Vec<&str> = lead.clone();
    header.extend([
        "arm",
        "seeds_ok",
        "excess_mean",
        "excess_sd",
        "baseline_sd_mean",
        "outside_band",
        "orientation_div_mean",
        "orientation_div_sd",
        "gram_div_mean",
        "gram_div_sd",
        "heldout_accuracy_mean",
        "heldout_accuracy_sd",
    ]);
    csv.write_record(&header)?;
    let widths: Vec<usize> = lead.iter().map(|h| h.chars().count().max(10)).collect();
    let lead_text: String = lead
        .iter()
        .zip(&widths)
        .map(|(h, w)| format!("{h:>w$} "))
        .collect();
    println!(
        "{lead_text}{:<12} {:>22} {:>11} {:>9} {:>10} {:>10} {:>9}",
        "arm", "excess mean ± sd", "baseline sd", "outside", "twin div", "gram div", "held acc"
    );
    for (cols, sweep) in rows {
        let values: String = cols
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{:>w$} ", c.1))
            .collect();
        for a in &sweep.aggregate {
            let mut record: Vec<String> = cols.iter().map(|c| c.1.clone()).collect();
            record.extend([
                a.arm.clone(),
                a.seeds_ok.to_string(),
                num(a.excess_mean),
                num(a.excess_sd),
                num(a.baseline_sd_mean),
                a.outside_band.to_string(),
                num(a.orientation_div_mean),
                num(a.orientation_div_sd),
                num(a.gram_div_mean),
                num(a.gram_div_sd),
                num(a.heldout_accuracy_mean),
                num(a.heldout_accuracy_sd),
            ]);
            csv.write_record(&record)?;
            println!(
                "{values}{:<12} {:>11} ± {:<8} {:>11} {:>6}/{:<2} {:>10} {:>10} {:>9.3}",
                a.arm,
                sci(a.excess_mean),
                sci(a.excess_sd),
                sci(a.baseline_sd_mean),
                a.outside_band,
                a.seeds_ok,
                sci(a.orientation_div_mean),
                sci(a.gram_div_mean),
                a.heldout_accuracy_mean
            );
        }
    }
    let bytes = csv.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    write_atomic(&out.join(format!("{stem}.csv")), &bytes)?;
    write_atomic(
        &out.join(format!("{stem}.json")),
        &serde_json::to_vec_pretty(all)?,
    )?;
    println!("wrote {}", out.display());
    Ok(())
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

fn sci(x: f64) -> String {
    if x.is_nan() {
        "—".into()
    } else {
        format!("{x:.2e}")
    }
}

/// `z` for the table: two decimals, or a dash when the baseline has no spread.
fn z_text(z: f64) -> String {
    if z.is_finite() {
        format!("{z:.2}")
    } else {
        "—".into()
    }
}

fn print_summary(s: &Summary) {
    println!(
        "{} steps, d_k {}, {} keys; isotropic A = 3/(d_k+2) = {:.4}",
        s.steps, s.preset.d_k, s.preset.n_keys, s.isotropic_axis_concentration
    );
    let w = s
        .arms
        .iter()
        .map(|a| a.arm.chars().count())
        .max()
        .unwrap_or(3)
        .max(12);
    println!(
        "{:<w$} {:<15} {:>10} {:>10} {:>8} {:>17} {:>10} {:>7} {:>9} {:>9}",
        "arm",
        "class",
        "twin div",
        "gram div",
        "A(K)",
        "baseline mean±sd",
        "excess",
        "z",
        "held acc",
        "held loss"
    );
    for a in &s.arms {
        let class = if a.equivariant {
            "equivariant"
        } else {
            "coordinate-wise"
        };
        match (&a.final_metrics, &a.heldout, &a.baseline) {
            (Some(f), Some(h), Some(b)) => println!(
                "{:<w$} {:<15} {:>10} {:>10} {:>8.4} {:>8.4} ± {:<6.4} {:>10} {:>7} {:>9.3} {:>9.4}",
                a.arm,
                class,
                sci(f.orientation_div),
                sci(f.gram_div),
                f.axis_concentration[0],
                b[0].mean,
                b[0].sd,
                sci(b[0].excess),
                z_text(b[0].z),
                h.accuracy[0],
                h.loss[0]
            ),
            _ => println!("{:<w$} {:<15} diverged: {:?}", a.arm, class, a.status),
        }
    }
    let noise: Vec<String> = s
        .arms
        .iter()
        .filter_map(|a| {
            let f = a.final_metrics.as_ref()?;
            f.noise_div
                .is_finite()
                .then(|| format!("{} {}", a.arm, sci(f.noise_div)))
        })
        .collect();
    if !noise.is_empty() {
        println!(
            "noise twins (W0 + 1e-12 noise, same basis), divergence from the run from W0: {}",
            noise.join(", ")
        );
    }
    println!(
        "memory S (rows, key space) and reads S·k (value space), each vs its rotation baseline mean ± sd:"
    );
    println!(
        "{:<w$} {:>28} {:>28} {:>28}",
        "arm", "kurtosis of S rows", "A(S rows)", "kurtosis of reads"
    );
    for a in &s.arms {
        if let Some(act) = &a.activations {
            let cell = |b: &basis_lab::metrics::StatBaseline| {
                format!("{:>8.3} vs {:>7.3} ± {:<6.3}", b.value, b.mean, b.sd)
            };
            println!(
                "{:<w$} {:>28} {:>28} {:>28}",
                a.arm,
                cell(&act.s_kurtosis),
                cell(&act.s_axis),
                cell(&act.read_kurtosis)
            );
        }
    }
    for a in &s.arms {
        if let Some(f) = &a.final_metrics
            && a.equivariant
            && f.orientation_div > 1e-10
        {
            println!(
                "note: {} is equivariant yet its twins drifted to {:.2e}; either the harness is at \
                 fault or the dynamics amplify rounding (too large a step, or Muon's orthogonalisation)",
                a.arm, f.orientation_div
            );
        }
    }
}

fn write_sweep(r: &SweepResult, out: &std::path::Path) -> Result<()> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "seed",
        "arm",
        "diverged",
        "axis_concentration",
        "baseline_mean",
        "baseline_sd",
        "baseline_p5",
        "baseline_p95",
        "excess",
        "z",
        "excess_rot",
        "z_rot",
        "orientation_div",
        "gram_div",
        "heldout_loss",
        "heldout_accuracy",
    ])?;
    let num = basis_lab::experiment::output::csv_num;
    for s in &r.per_seed {
        let b = s.baseline.as_ref();
        let f = s.final_metrics.as_ref();
        let h = s.heldout.as_ref();
        let o = |x: Option<f64>| x.map_or(String::new(), num);
        csv.write_record([
            s.seed.to_string(),
            s.arm.clone(),
            (s.final_metrics.is_none() as u8).to_string(),
            o(b.map(|b| b[0].axis_concentration)),
            o(b.map(|b| b[0].mean)),
            o(b.map(|b| b[0].sd)),
            o(b.map(|b| b[0].p5)),
            o(b.map(|b| b[0].p95)),
            o(b.map(|b| b[0].excess)),
            o(b.map(|b| b[0].z)),
            o(b.map(|b| b[1].excess)),
            o(b.map(|b| b[1].z)),
            o(f.map(|f| f.orientation_div)),
            o(f.map(|f| f.gram_div)),
            o(h.map(|h| h.loss[0])),
            o(h.map(|h| h.accuracy[0])),
        ])?;
    }
    let bytes = csv.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    write_atomic(&out.join("sweep.csv"), &bytes)
        .with_context(|| format!("cannot write {}", out.join("sweep.csv").display()))?;
    write_atomic(&out.join("sweep.json"), &serde_json::to_vec_pretty(r)?)
        .with_context(|| format!("cannot write {}", out.join("sweep.json").display()))?;
    Ok(())
}

fn print_sweep(r: &SweepResult) {
    println!(
        "{} seeds × {} steps; excess = A(K) − mean A over {} random rotations of the same keys",
        r.seeds.len(),
        r.preset.steps,
        r.preset.baseline_rotations
    );
    let w = r
        .aggregate
        .iter()
        .map(|a| a.arm.chars().count())
        .max()
        .unwrap_or(3)
        .max(12);
    println!(
        "{:<w$} {:>4} {:>22} {:>11} {:>9} {:>10} {:>10}  verdict",
        "arm", "ok", "excess mean ± sd", "baseline sd", "outside", "twin div", "held acc"
    );
    for a in &r.aggregate {
        let verdict = if a.seeds_ok < 2 {
            "too few seeds for a verdict"
        } else if a.excess_is_outside_baseline() {
            "outside the baseline spread"
        } else {
            "within the baseline spread"
        };
        println!(
            "{:<w$} {:>4} {:>11} ± {:<8} {:>11} {:>6}/{:<2} {:>10} {:>10.3}  {verdict}",
            a.arm,
            a.seeds_ok,
            sci(a.excess_mean),
            sci(a.excess_sd),
            sci(a.baseline_sd_mean),
            a.outside_band,
            a.seeds_ok,
            sci(a.orientation_div_mean),
            a.heldout_accuracy_mean
        );
    }
}

/// Writes `eps_sweep.csv` and `eps_sweep.json` and prints the table.
fn write_eps_points(
    out: &std::path::Path,
    points: &[basis_lab::experiment::EpsPoint],
) -> Result<()> {
    let rows: Vec<_> = points
        .iter()
        .map(|x| {
            let eps = basis_lab::experiment::output::csv_num(x.eps);
            (vec![("eps", eps)], &x.sweep)
        })
        .collect();
    write_points(out, "eps_sweep", points, &rows)
}

/// Writes `dk_sweep.csv` and `dk_sweep.json` and prints the table.
fn write_dk_points(out: &std::path::Path, points: &[basis_lab::experiment::DkPoint]) -> Result<()> {
    let rows: Vec<_> = points
        .iter()
        .map(|x| {
            let sp = &x.sweep.preset;
            let iso = basis_lab::metrics::isotropic_axis_concentration(x.d_k);
            let lead = vec![
                ("d_k", x.d_k.to_string()),
                ("n_keys", sp.n_keys.to_string()),
                ("pairs_per_episode", sp.pairs_per_episode.to_string()),
                ("isotropic", format!("{iso:.4}")),
            ];
            (lead, &x.sweep)
        })
        .collect();
    write_points(out, "dk_sweep", points, &rows)
}

/// Writes `zoo.csv`, `zoo.json` and `zoo.md` for `results` (in cell order) and prints the table.
fn write_zoo(
    p: &basis_lab::sensing::zoo::ZooPreset,
    results: &[basis_lab::sensing::zoo::RunResult],
    seconds: f64,
    out: &std::path::Path,
) -> Result<()> {
    use basis_lab::sensing::zoo::{markdown, summarise};
    let summaries = summarise(results);
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "rule",
        "class",
        "tau",
        "lr",
        "seed",
        "steps",
        "outcome",
        "train_loss",
        "recovery",
        "erank",
        "balancedness",
        "twin_drift",
        "selected",
    ])?;
    let num = basis_lab::experiment::output::csv_num;
    for r in results {
        let selected = summaries
            .iter()
            .any(|s| s.rule == r.rule && s.tau == r.tau && s.lr == r.lr);
        csv.write_record([
            r.rule.clone(),
            (if r.equivariant {
                "equivariant"
            } else {
                "coordinate-wise"
            })
            .into(),
            num(r.tau),
            num(r.lr),
            r.seed.to_string(),
            r.steps.to_string(),
            format!("{:?}", r.outcome),
            num(r.train_loss),
            num(r.recovery),
            num(r.erank),
            num(r.balancedness),
            r.twin_drift.map_or(String::new(), num),
            (selected as u8).to_string(),
        ])?;
    }
    let bytes = csv.into_inner().map_err(|e| anyhow::anyhow!("{e}"))?;
    write_atomic(&out.join("zoo.csv"), &bytes)?;
    let json =
        serde_json::json!({"preset": p, "runs": results, "summary": summaries, "seconds": seconds});
    write_atomic(&out.join("zoo.json"), &serde_json::to_vec_pretty(&json)?)?;
    let md = markdown(p, &summaries, results);
    write_atomic(&out.join("zoo.md"), md.as_bytes())?;
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
