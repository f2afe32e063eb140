//! `basis-lab eps-sweep` and `basis-lab dk-sweep`: the points sweeps. Each command is its flags
//! (names, defaults and help, which clap needs spelled out) and one call of [`run`].

use std::ffi::{OsStr, OsString};
use std::path::Path;

use anyhow::Result;
use clap::Args;

use super::shared::{List, Shared, commit, load_preset, values, write_figures};
use basis_lab::experiment::report::PointsReport;
use basis_lab::experiment::{AdamEps, KeyDim, PointAxis, PointsTask};
use basis_lab::output::OutputSet;
use basis_lab::shard::Job;

/// The ε sweep: the seed sweep of PRESET at each ε of every Adam arm; writes eps_sweep.csv
/// and eps_sweep.json (mean ± sd over seeds of each arm's A(K) excess, twin divergences and
/// held-out accuracy per ε).
#[derive(Args, Debug)]
pub struct EpsSweepArgs {
    /// A preset file, or a bundled preset name.
    preset: OsString,
    /// Comma-separated values of Adam's ε.
    #[arg(
        long,
        value_parser = List::<f64>::parse,
        default_value = "1e-12,1e-8,1e-6,1e-4,1e-2,1"
    )]
    eps: Vec<List<f64>>,
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
    /// Runs the ε sweep ([`run`]).
    pub fn run(self) -> Result<()> {
        run::<AdamEps>(
            &self.preset,
            values(self.eps),
            self.seeds,
            self.steps,
            &self.shared,
        )
    }
}

/// The d_k sweep: the seed sweep of PRESET at each key dimension, with keys and pairs per
/// episode scaled in proportion; writes dk_sweep.csv and dk_sweep.json.
#[derive(Args, Debug)]
pub struct DkSweepArgs {
    /// A preset file, or a bundled preset name.
    preset: OsString,
    /// Comma-separated key dimensions.
    #[arg(long, value_parser = List::<usize>::parse, default_value = "4,8,16,32,64")]
    dks: Vec<List<usize>>,
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
    /// Runs the d_k sweep ([`run`]).
    pub fn run(self) -> Result<()> {
        run::<KeyDim>(
            &self.preset,
            values(self.dks),
            self.seeds,
            self.steps,
            &self.shared,
        )
    }
}

/// The sweep along `A` of `preset` (a file or a bundled name, `steps` overriding its step
/// count) at each of `values`, `seeds` seeds each: checks every point, then runs the sweep (or
/// one shard of it), writes its tables and prints its table.
fn run<A: PointAxis>(
    preset: &OsStr,
    values: Vec<A::Value>,
    seeds: u64,
    steps: Option<usize>,
    shared: &Shared,
) -> Result<()>
where
    Job: From<PointsTask<A>>,
{
    let preset = load_preset(preset, steps)?;
    let stem = A::stem();
    shared
        .output
        .prepare(&stem, &[&format!("{stem}.csv"), &format!("{stem}.json")])?;
    let task = PointsTask::<A>::new(preset, values, seeds as usize);
    match shared.run(task, "seeds")? {
        Some(points) => finish(&shared.output.out, &points, shared.figure_options()),
        None => Ok(()),
    }
}

/// Writes a points sweep's `<ID>_sweep.csv` and `<ID>_sweep.json` (with `figures` also its
/// plots) into `dir` and prints its table; also for `merge`.
pub fn finish(
    dir: &Path,
    points: &dyn PointsReport,
    figures: Option<basis_lab::figure::FigureOptions>,
) -> Result<()> {
    let mut set = OutputSet::new(dir, &points.stem());
    points.write(&mut set)?;
    write_figures(figures, &mut set, || points.figures())?;
    commit(set, dir, &points.text())
}
