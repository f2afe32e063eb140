//! `basis-lab zoo` (also `dial`, `tail`): the gauge lab's optimizer zoo.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::shared::{List, Shared, values};
use basis_lab::console;
use basis_lab::output::OutputSet;
use basis_lab::sensing::zoo::{
    RunResult, ZooPreset, ZooTask, check_traceable, trace_zoo, write_report,
};

/// Gauge lab: run the optimizer zoo on factored matrix sensing (a zoo preset:
/// presets/zoo-paper.ron, presets/dial.ron, presets/tail.ron); write zoo.csv, zoo.json and
/// zoo.md. `dial` and `tail` are the same command.
#[derive(Args, Debug)]
pub struct ZooArgs {
    /// A zoo preset file, or a bundled one: zoo-paper, dial, tail, muon-rates, schedules, rates,
    /// inits, ladder, section10.
    preset: PathBuf,
    /// Override the number of seeds.
    #[arg(long)]
    seeds: Option<usize>,
    /// Override the step budget of every rule (a preset's per-rule budgets included).
    #[arg(long)]
    budget: Option<usize>,
    /// Override the problem sizes n, comma-separated (one rung of `ladder`: `--sizes 64`). Each
    /// size gets m = ratio · dof measurements; sizes are checked as the preset's `sizes` are.
    #[arg(long, value_parser = List::<usize>::parse)]
    sizes: Option<Vec<List<usize>>>,
    /// Also write trace.json: per run the measurement operator, measurements, target, initial
    /// factors, the rule's settings and schedule, and the factors after each of the first 10
    /// steps and at the end, enough to replay it elsewhere (docs/numerics.md, "Zoo traces").
    /// Only for small problems (n ≤ 12) and unsharded runs.
    #[arg(long)]
    trace: bool,
    /// Skip the convex reference (the minimum-nuclear-norm matrix of each instance's
    /// measurements, numerics §9), which the zoo otherwise solves and reports after the rules.
    #[arg(long)]
    no_reference: bool,
    #[command(flatten)]
    shared: Shared,
}

impl ZooArgs {
    /// Runs every cell of the preset (or one shard of them) and prints the table.
    pub fn run(self) -> Result<()> {
        let mut p = ZooPreset::load(&self.preset)?;
        p.seeds = self.seeds.unwrap_or(p.seeds);
        if let Some(budget) = self.budget {
            p.budget = budget;
            p.rule_budgets = Default::default();
        }
        if let Some(sizes) = self.sizes {
            p.sizes = values(sizes);
        }
        if self.no_reference {
            p.reference = false;
        }
        p.validate()?;
        if self.trace {
            check_traceable(&p).map_err(anyhow::Error::msg)?;
            if self.shared.shard.is_some() {
                anyhow::bail!("--trace writes the whole zoo's trace: run it without --shard");
            }
        }
        self.shared
            .output
            .prepare("zoo", &["zoo.csv", "zoo.json", "zoo.md", "trace.json"])?;
        let started = std::time::Instant::now();
        match self.shared.run(ZooTask::new(p.clone()), "runs")? {
            Some(results) => {
                let seconds = started.elapsed().as_secs_f64();
                let trace = if self.trace {
                    let trace = trace_zoo(&p).map_err(anyhow::Error::msg)?;
                    Some(serde_json::to_vec(&trace)?)
                } else {
                    None
                };
                finish(
                    &self.shared.output.out,
                    &p,
                    &results,
                    seconds,
                    self.shared.figure_options(),
                    trace,
                )
            }
            None => Ok(()),
        }
    }
}

/// Writes `zoo.csv`, `zoo.json`, `zoo.md` for `results` (in cell order) and `trace.json` if
/// given, as one set (an earlier run's trace or figures that this one does not write are
/// removed), and prints the Markdown (also for `merge`).
pub fn finish(
    dir: &std::path::Path,
    p: &ZooPreset,
    results: &[RunResult],
    seconds: f64,
    figures: Option<basis_lab::figure::FigureOptions>,
    trace: Option<Vec<u8>>,
) -> Result<()> {
    let mut set = OutputSet::new(dir, "zoo");
    let md = write_report(&mut set, p, results, seconds)?;
    super::shared::write_figures(figures, &mut set, || {
        vec![basis_lab::sensing::zoo::figures::figure(p, results)]
    })?;
    if let Some(trace) = trace {
        set.write("trace.json", &trace)?;
    }
    let done = set.commit()?;
    console::out(&md)?;
    console::out(&done.removed_text())?;
    console::outln(&format!(
        "\n{} runs in {seconds:.1} s; wrote {}",
        results.len(),
        dir.display()
    ))?;
    Ok(())
}
