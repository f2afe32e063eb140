//! `basis-lab bench`: throughput of the hot loops.

use anyhow::Result;
use clap::Args;

use basis_lab::bench;
use basis_lab::console;

/// Time the hot loops (episode, paired step, attention step, seed sweep, Newton–Schulz, sensing
/// step, memory stream, each registered rule's chain against the rule) in the fast and the portable arithmetic, and print steps/s, episodes/s
/// and GFLOP/s against the operation counts documented in `basis_lab::bench`. About ten
/// seconds; `--long` for about four minutes and the size ladder n = 64, 96, 128.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Longer timings and sweeps, plus the sensing steps at n = 64, 96 and 128.
    #[arg(long)]
    long: bool,
    /// Time only this group: episode, paired, attention, sweep, newton-schulz, completion or
    /// sensing, chains.
    #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(bench::GROUPS))]
    only: Option<String>,
}

impl BenchArgs {
    /// Prints one table row per measured figure as it comes.
    pub fn run(self) -> Result<()> {
        let mut opts = if self.long {
            bench::BenchOptions::long()
        } else {
            bench::BenchOptions::quick()
        };
        opts.only = self
            .only
            .as_deref()
            .and_then(|g| bench::GROUPS.iter().copied().find(|&x| x == g));
        console::outln(&bench::table_header())?;
        // The bench cannot be stopped from here: after a failed print it runs on silently and
        // the first error is returned at its end.
        let mut failed = None;
        bench::run_figures(opts, &mut |f| {
            if failed.is_none() {
                failed = console::outln(&bench::table_row(f)).err();
            }
        });
        failed.map_or(Ok(()), |e| Err(e.into()))
    }
}
