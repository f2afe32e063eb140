//! `basis-lab sweep`: the seed sweep of a preset.

use anyhow::Result;
use clap::Args;

use super::shared::{Shared, commit, load_preset, write_figures};
use basis_lab::experiment::{SweepResult, SweepTask, report};
use basis_lab::output::OutputSet;

/// Run PRESET over seeds seed … seed+N−1 in parallel; write sweep.csv and sweep.json.
#[derive(Args, Debug)]
pub struct SweepArgs {
    /// A preset file, or a bundled preset name.
    preset: std::ffi::OsString,
    /// Number of seeds.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    seeds: u64,
    /// Override the preset's step count.
    #[arg(long)]
    steps: Option<usize>,
    #[command(flatten)]
    shared: Shared,
}

impl SweepArgs {
    /// Runs the sweep (or one shard of it) and prints its table.
    pub fn run(self) -> Result<()> {
        let p = load_preset(&self.preset, self.steps)?;
        self.shared.output.prepare("sweep", &report::SWEEP_FILES)?;
        let seeds = self.seeds as usize;
        match self.shared.run(SweepTask::new(p, seeds), "seeds")? {
            Some(result) => finish(
                &self.shared.output.out,
                &result,
                self.shared.figure_options(),
            ),
            None => Ok(()),
        }
    }
}

/// Writes the sweep's files and prints its table (also for `merge`).
pub fn finish(
    dir: &std::path::Path,
    result: &SweepResult,
    figures: Option<basis_lab::figure::FigureOptions>,
) -> Result<()> {
    let mut set = OutputSet::new(dir, "sweep");
    report::write_sweep(&mut set, result)?;
    write_figures(figures, &mut set, || {
        vec![(
            "sweep".into(),
            basis_lab::experiment::figures::sweep_figure(result),
        )]
    })?;
    commit(set, dir, &report::sweep_text(result))
}
