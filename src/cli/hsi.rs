//! `basis-lab hsi`: hyperspectral completion (the paper's Table 5).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::shared::{Output, Parallel, wrote};
use basis_lab::experiment::output::write_atomic;
use basis_lab::sensing::hsi::{
    HsiConfig, csv_bytes, load, markdown, rule_by_name, run_all, select,
};

/// Hyperspectral completion (the paper's Table 5): fit W = UVᵀ to a random fraction of a
/// scene's pixels × bands matrix with GD, Adam and Muon in parallel; report held-out RMSE
/// and effective rank at matched training loss; write hsi.csv and hsi.md into --out. You
/// supply the scene (a MATLAB v5 .mat file); nothing is downloaded.
#[derive(Args, Debug)]
pub struct HsiArgs {
    /// The scene: a MATLAB v5 .mat file holding a rows × columns × bands array.
    scene: PathBuf,
    /// Fraction of entries observed, in (0, 1) (the paper: 0.15 and 0.25).
    #[arg(long)]
    density: f64,
    /// Variable holding the cube (default: the file's only 3-D numeric array).
    #[arg(long)]
    var: Option<String>,
    /// Seed of the pixel choice, the mask and the initial factors.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Step budget per rule.
    #[arg(long, default_value_t = 30_000)]
    steps: usize,
    /// Comma-separated rules: gd, adam, muon.
    #[arg(long, value_delimiter = ',', default_value = "gd,adam,muon")]
    rules: Vec<String>,
    /// Override rates, e.g. `gd=500,adam=3e-4` (defaults: the documented choice).
    #[arg(long, value_delimiter = ',', conflicts_with = "grid")]
    lr: Vec<String>,
    /// Run each rule's whole rate grid and mark the rate the train-only rule selects.
    #[arg(long)]
    grid: bool,
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    parallel: Parallel,
}

impl HsiArgs {
    /// Loads the scene, runs the rules in parallel, prints and writes hsi.csv / hsi.md.
    pub fn run(self) -> Result<()> {
        let rules = self
            .rules
            .iter()
            .map(|n| rule_by_name(n.trim()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("--rules: {e}"))?;
        let mut runs: Vec<_> = if self.grid {
            rules
                .iter()
                .flat_map(|&(r, _, grid)| grid.iter().map(move |&lr| (r, lr)))
                .collect()
        } else {
            rules.iter().map(|&(r, lr, _)| (r, lr)).collect()
        };
        for item in &self.lr {
            let (name, value) = item
                .split_once('=')
                .with_context(|| format!("--lr `{item}`: expected RULE=RATE, e.g. gd=0.5"))?;
            let rate: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite() && *x > 0.0)
                .with_context(|| format!("--lr `{item}`: the rate must be a positive number"))?;
            let (rule, _, _) =
                rule_by_name(name.trim()).map_err(|e| anyhow::anyhow!("--lr: {e}"))?;
            let slot = runs
                .iter_mut()
                .find(|(r, _)| *r == rule)
                .with_context(|| format!("--lr `{item}`: {} is not in --rules", rule.name()))?;
            slot.1 = rate;
        }
        let cfg = HsiConfig {
            density: self.density,
            seed: self.seed,
            steps: self.steps,
            ..HsiConfig::default()
        };
        let (setup, problem) = load(&self.scene, self.var.as_deref(), &cfg)?;
        let out = &self.output;
        out.prepare()?;
        let pool = self.parallel.pool()?;
        let bar = out.progress_bar((runs.len() * cfg.steps) as u64, "steps");
        let started = std::time::Instant::now();
        let results = pool.install(|| run_all(&problem, &runs, &|n| bar.inc(n)));
        bar.finish_and_clear();
        let seconds = started.elapsed().as_secs_f64();
        let selected = select(&results);
        write_atomic(
            &out.out.join("hsi.csv"),
            &csv_bytes(&setup, &results, &selected)?,
        )?;
        let md = markdown(&setup, &results, &selected, seconds);
        write_atomic(&out.out.join("hsi.md"), md.as_bytes())?;
        print!("{md}");
        wrote(&out.out);
        Ok(())
    }
}
