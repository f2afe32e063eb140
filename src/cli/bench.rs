//! `basis-lab bench`: throughput of the hot loops.

use anyhow::Result;
use clap::Args;

use basis_lab::bench;

/// Time the hot loops (episode, paired step, attention step, seed sweep, Newton–Schulz, sensing
/// step, memory stream) and print steps/s, episodes/s and GFLOP/s against the operation counts
/// documented in `basis_lab::bench`. About five seconds; `--long` for about two minutes and the
/// size ladder n = 64, 96, 128.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Longer timings and sweeps, plus the sensing steps at n = 64, 96 and 128.
    #[arg(long)]
    long: bool,
}

impl BenchArgs {
    /// Prints one table row per measured figure as it comes.
    pub fn run(self) -> Result<()> {
        let opts = if self.long {
            bench::BenchOptions::long()
        } else {
            bench::BenchOptions::quick()
        };
        println!("{}", bench::table_header());
        bench::run_figures(opts, &mut |f| println!("{}", bench::table_row(f)));
        Ok(())
    }
}
