//! `basis-lab eps-sweep`: the seed sweep at each of Adam's ε.

use anyhow::Result;
use clap::Args;

use super::shared::{Shared, load_preset, write_figures, wrote};
use basis_lab::console;
use basis_lab::experiment::{EpsPoint, eps_sweep, report};
use basis_lab::shard::Job;

/// The ε sweep: the seed sweep of PRESET at each ε of every Adam arm; writes eps_sweep.csv
/// and eps_sweep.json (mean ± sd over seeds of each arm's A(K) excess, twin divergences and
/// held-out accuracy per ε).
#[derive(Args, Debug)]
pub struct EpsSweepArgs {
    /// A preset file, or a bundled preset name.
    preset: std::ffi::OsString,
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
    /// Override the preset's step count.
    #[arg(long)]
    steps: Option<usize>,
    #[command(flatten)]
    shared: Shared,
}

impl EpsSweepArgs {
    /// Checks every point, then runs the sweep (or one shard of it) and prints its table.
    pub fn run(self) -> Result<()> {
        let preset = load_preset(&self.preset, self.steps)?;
        self.shared.output.prepare()?;
        let seeds = self.seeds as usize;
        let job = Job::EpsSweep {
            preset: preset.clone(),
            eps: self.eps.clone(),
            seeds,
        };
        let work = |progress: &(dyn Fn() + Sync), cancel: &_| {
            eps_sweep(&preset, &self.eps, seeds, progress, cancel)
        };
        match self.shared.run(&job, "seeds", work)? {
            Some(points) => finish(&self.shared.output.out, &points, self.shared.figures),
            None => Ok(()),
        }
    }
}

/// Writes `eps_sweep.csv` and `eps_sweep.json` (also for `merge`).
pub fn finish(dir: &std::path::Path, points: &[EpsPoint], figures: bool) -> Result<()> {
    report::write_eps_sweep(dir, points)?;
    write_figures(figures, dir, || {
        basis_lab::experiment::figures::eps_figures(points)
    })?;
    console::out(&report::points_text(&report::eps_points(points)))?;
    wrote(dir)?;
    Ok(())
}
