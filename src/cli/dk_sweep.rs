//! `basis-lab dk-sweep`: the seed sweep at each key dimension.

use anyhow::Result;
use clap::Args;

use super::shared::{Shared, load_preset, write_figures, wrote};
use basis_lab::console;
use basis_lab::experiment::{DkPoint, dk_sweep, report};
use basis_lab::shard::Job;

/// The d_k sweep: the seed sweep of PRESET at each key dimension, with keys and pairs per
/// episode scaled in proportion; writes dk_sweep.csv and dk_sweep.json.
#[derive(Args, Debug)]
pub struct DkSweepArgs {
    /// A preset file, or a bundled preset name.
    preset: std::ffi::OsString,
    /// Comma-separated key dimensions.
    #[arg(long, value_delimiter = ',', default_value = "4,8,16,32,64")]
    dks: Vec<usize>,
    /// Seeds per d_k.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    seeds: u64,
    /// Override the preset's step count.
    #[arg(long)]
    steps: Option<usize>,
    #[command(flatten)]
    shared: Shared,
}

impl DkSweepArgs {
    /// Checks every scaled preset, then runs the sweep (or one shard of it) and prints its
    /// table.
    pub fn run(self) -> Result<()> {
        let preset = load_preset(&self.preset, self.steps)?;
        self.shared.output.prepare()?;
        let seeds = self.seeds as usize;
        let job = Job::DkSweep {
            preset: preset.clone(),
            dks: self.dks.clone(),
            seeds,
        };
        let work = |progress: &(dyn Fn() + Sync), cancel: &_| {
            dk_sweep(&preset, &self.dks, seeds, progress, cancel)
        };
        match self.shared.run(&job, "seeds", work)? {
            Some(points) => finish(&self.shared.output.out, &points, self.shared.figures),
            None => Ok(()),
        }
    }
}

/// Writes `dk_sweep.csv` and `dk_sweep.json` (also for `merge`).
pub fn finish(dir: &std::path::Path, points: &[DkPoint], figures: bool) -> Result<()> {
    report::write_dk_sweep(dir, points)?;
    write_figures(figures, dir, || {
        basis_lab::experiment::figures::dk_figures(points)
    })?;
    console::out(&report::points_text(&report::dk_points(points)))?;
    wrote(dir)?;
    Ok(())
}
