//! `basis-lab hsi`: hyperspectral completion (the paper's Table 5).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};

use super::shared::{List, Output, Parallel, commit, values};
use basis_lab::output::OutputSet;
use basis_lab::sensing::hsi::grid::{GridPlan, GridProgress, Grids, run_grid, select};
use basis_lab::sensing::hsi::report::{self, csv_bytes, markdown};
use basis_lab::sensing::hsi::{HsiConfig, Scene, rule_by_name, run_all};
use basis_lab::validate::decimal_comma;

/// Hyperspectral completion (the paper's Table 5): fit W = UVᵀ to a random fraction of a
/// scene's pixels × bands matrix with GD, Adam, scalar-Adam and Muon in parallel; report
/// held-out RMSE and effective rank at matched training loss; write hsi.csv and hsi.md into
/// --out. With --grid, the paper's protocol: rate grids on two selection seeds, a rate per rule
/// picked from training losses only, four seeds reported (also hsi_summary.csv and hsi.json).
/// You supply the scene (a MATLAB v5 .mat file); nothing is downloaded.
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
    /// Seed of the pixel choice, the mask and the initial factors (--grid has its own seeds).
    #[arg(long, default_value_t = 0, conflicts_with = "grid")]
    seed: u64,
    /// Step budget per run.
    #[arg(long, default_value_t = 30_000)]
    steps: usize,
    /// Comma-separated rules: gd, adam, scalar_adam, muon.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "gd,adam,scalar_adam,muon"
    )]
    rules: Vec<String>,
    /// Override rates, e.g. `gd=30,adam=3e-4`, one per rule of --rules (the others keep
    /// --rates').
    #[arg(long, value_delimiter = ',', conflicts_with = "grid")]
    lr: Vec<String>,
    /// Rates of a run without --grid: `paper` (the rates the paper's protocol picks at density
    /// 0.15: GD 30, Adam 0.01, scalar-Adam 0.03, Muon 0.1) or `fastest` (the fastest stable
    /// rates of the project's own grids: GD 1e4, the others 0.01).
    #[arg(long, value_enum, default_value_t = Rates::Paper, conflicts_with = "grid")]
    rates: Rates,
    /// Run every rate of each rule's grid on the selection seeds, pick a rate per rule from
    /// their training losses alone (the paper's rule and the project's, side by side), run the
    /// picks on the report seeds, and report mean ± sd over all seeds beside the paper's Table 5.
    #[arg(long)]
    grid: bool,
    /// With --grid: also draw the held-out RMSE and effective rank along the fit (Figure 5's
    /// view) as SVG and PNG (3×) next to the tables.
    #[arg(long, requires = "grid")]
    figures: bool,
    #[command(flatten)]
    look: super::shared::FigureLook,
    /// With --grid: `paper` (the paper's grids; GD's CPU and GPU grids) or `own` (the project's
    /// wider grids).
    #[arg(long, default_value = "paper", requires = "grid")]
    grids: Grids,
    /// With --grid: seeds that run every rate.
    #[arg(
        long,
        value_parser = List::<u64>::parse,
        default_value = "42,123",
        requires = "grid"
    )]
    selection_seeds: Vec<List<u64>>,
    /// With --grid: seeds that run only the picked rates.
    #[arg(
        long,
        value_parser = List::<u64>::parse,
        default_value = "456,789",
        requires = "grid"
    )]
    report_seeds: Vec<List<u64>>,
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    parallel: Parallel,
}

/// Which rates a plain `hsi` run uses (see [`HsiArgs`]'s `--rates`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Rates {
    /// The paper's protocol's picks at density 0.15 ([`basis_lab::sensing::hsi::HsiRule::default_lr`]).
    Paper,
    /// The fastest stable rates of the project's grids
    /// ([`basis_lab::sensing::hsi::HsiRule::fastest_lr`]).
    Fastest,
}

/// The first name in `names` given twice, if any.
fn repeated<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let mut seen = std::collections::BTreeSet::new();
    names.into_iter().find(|n| !seen.insert(*n))
}

impl HsiArgs {
    /// Loads the scene, runs in parallel, prints and writes the report.
    pub fn run(self) -> Result<()> {
        let names: Vec<String> = self.rules.iter().map(|n| n.trim().to_string()).collect();
        if let Some(n) = repeated(names.iter().map(String::as_str)) {
            anyhow::bail!("--rules: `{n}` is given twice; name each rule once");
        }
        let lr_names = self.lr.iter().map(|item| {
            item.split_once('=')
                .map_or(item.as_str(), |(n, _)| n)
                .trim()
        });
        if let Some(n) = repeated(lr_names) {
            anyhow::bail!("--lr: `{n}` is given twice; give each rule one rate");
        }
        let rules = names
            .iter()
            .map(|n| rule_by_name(n))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("--rules: {e}"))?;
        let cfg = HsiConfig {
            density: self.density,
            seed: self.seed,
            steps: self.steps,
            ..HsiConfig::default()
        };
        cfg.validate()?;
        let out = &self.output;
        let pool = self.parallel.pool()?;
        let bar = out.progress_bar(0, "steps");
        if self.grid {
            let plan = GridPlan {
                rules: names,
                grids: self.grids,
                selection_seeds: values(self.selection_seeds),
                report_seeds: values(self.report_seeds),
            };
            plan.validate()?;
            let scene = Scene::read(&self.scene, self.var.as_deref())?;
            out.prepare("hsi", &report::GRID_FILES)?;
            let report = pool.install(|| {
                run_grid(
                    &scene,
                    &cfg,
                    &plan,
                    &|p| match p {
                        GridProgress::Planned(n) => bar.inc_length(n),
                        GridProgress::Steps(n) => bar.inc(n),
                    },
                    &std::sync::atomic::AtomicBool::new(false),
                )
            })?;
            bar.finish_and_clear();
            let mut set = OutputSet::new(&out.out, "hsi");
            let md = report::write_grid(&mut set, &report)?;
            super::shared::write_figures(self.look.options(self.figures), &mut set, || {
                basis_lab::sensing::hsi::figures::figures(&report)
            })?;
            return commit(set, &out.out, &md);
        }
        let rate = |r: &basis_lab::sensing::hsi::HsiRule| match self.rates {
            Rates::Paper => r.default_lr,
            Rates::Fastest => r.fastest_lr,
        };
        let mut runs: Vec<_> = rules.iter().map(|r| (r.rule(), rate(r))).collect();
        // `gd=0,01`: a decimal comma split a rate in two (the list is split at its commas).
        for pair in self.lr.windows(2) {
            let rate = pair[0].split_once('=').map(|(_, r)| r.trim());
            let joined = rate.filter(|_| !pair[1].contains('='));
            let joined = joined.map(|r| format!("{r},{}", pair[1].trim()));
            if let Some(hint) = joined.and_then(|t| decimal_comma(&t, true)) {
                anyhow::bail!("--lr: {hint}");
            }
        }
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
            let rule = rule_by_name(name.trim())
                .map_err(|e| anyhow::anyhow!("--lr: {e}"))?
                .rule();
            let slot = runs
                .iter_mut()
                .find(|(r, _)| *r == rule)
                .with_context(|| format!("--lr `{item}`: {} is not in --rules", rule.name()))?;
            slot.1 = rate;
        }
        let (setup, problem) = Scene::read(&self.scene, self.var.as_deref())?.problem(&cfg)?;
        out.prepare("hsi", &report::GRID_FILES)?;
        bar.set_length((runs.len() * cfg.steps) as u64);
        let started = std::time::Instant::now();
        let results = pool.install(|| run_all(&problem, &runs, &|n| bar.inc(n)));
        bar.finish_and_clear();
        let seconds = started.elapsed().as_secs_f64();
        let selected = select(&results);
        let mut set = OutputSet::new(&out.out, "hsi");
        set.write("hsi.csv", &csv_bytes(&setup, &results, &selected)?)?;
        let md = markdown(&setup, &results, &selected, seconds);
        set.write("hsi.md", md.as_bytes())?;
        commit(set, &out.out, &md)
    }
}
