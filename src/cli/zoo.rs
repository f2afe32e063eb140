//! `basis-lab zoo` (also `dial`, `tail`): the gauge lab's optimizer zoo.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use clap::Args;

use super::shared::Shared;
use basis_lab::sensing::zoo::{RunResult, ZooPreset, run_zoo, write_report};
use basis_lab::shard::Job;

/// Gauge lab: run the optimizer zoo on factored matrix sensing (a zoo preset:
/// presets/zoo-paper.ron, presets/dial.ron, presets/tail.ron); write zoo.csv, zoo.json and
/// zoo.md. `dial` and `tail` are the same command.
#[derive(Args, Debug)]
pub struct ZooArgs {
    /// A zoo preset file, or a bundled one: zoo-paper, dial, tail, muon-rates.
    preset: PathBuf,
    /// Override the number of seeds.
    #[arg(long)]
    seeds: Option<usize>,
    /// Override the step budget.
    #[arg(long)]
    budget: Option<usize>,
    #[command(flatten)]
    shared: Shared,
}

impl ZooArgs {
    /// Runs every cell of the preset (or one shard of them) and prints the table.
    pub fn run(self) -> Result<()> {
        let mut p = ZooPreset::load(&self.preset)?;
        p.seeds = self.seeds.unwrap_or(p.seeds);
        p.budget = self.budget.unwrap_or(p.budget);
        p.validate()?;
        let out = &self.shared.output;
        out.prepare()?;
        if self.shared.run_shard(&Job::Zoo { preset: p.clone() })? {
            return Ok(());
        }
        let pool = self.shared.parallel.pool()?;
        let bar = out.progress_bar(p.cells().len() as u64, "runs");
        let started = std::time::Instant::now();
        let never = AtomicBool::new(false);
        let results = pool.install(|| run_zoo(&p, &|| bar.inc(1), &never));
        bar.finish_and_clear();
        finish(&out.out, &p, &results, started.elapsed().as_secs_f64())
    }
}

/// Writes `zoo.csv`, `zoo.json` and `zoo.md` for `results` (in cell order) and prints the
/// Markdown (also for `merge`).
pub fn finish(
    dir: &std::path::Path,
    p: &ZooPreset,
    results: &[RunResult],
    seconds: f64,
) -> Result<()> {
    let md = write_report(dir, p, results, seconds)?;
    print!("{md}");
    println!(
        "\n{} runs in {seconds:.1} s; wrote {}",
        results.len(),
        dir.display()
    );
    Ok(())
}
