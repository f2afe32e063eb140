//! `basis-lab attention`: the attention twins of the paper's Table 3.

use anyhow::Result;
use clap::Args;

use super::shared::{Output, Parallel, wrote};
use basis_lab::attention::{AttentionPreset, report, run_attention};
use basis_lab::console;

/// Attention twins (the paper's Table 3): train a small transformer on addition mod p with each
/// rule of PRESET, beside its gauge, A = I and noise twins; write attention.csv, attention.md
/// and trace.json into --out.
#[derive(Args, Debug)]
pub struct AttentionArgs {
    /// An attention preset file, or a bundled one: attention, attention-quick.
    preset: std::ffi::OsString,
    /// Override the number of seeds (mean ± sd in attention.md).
    #[arg(long)]
    seeds: Option<usize>,
    /// Override the step count.
    #[arg(long)]
    steps: Option<usize>,
    #[command(flatten)]
    output: Output,
    #[command(flatten)]
    parallel: Parallel,
}

impl AttentionArgs {
    /// Trains every run of the preset with its twins and prints the table.
    pub fn run(self) -> Result<()> {
        let mut p = AttentionPreset::load(&self.preset)?;
        p.seeds = self.seeds.unwrap_or(p.seeds);
        p.steps = self.steps.unwrap_or(p.steps);
        p.validate()?;
        self.output.prepare("attention", &report::FILES)?;
        let bar = self
            .output
            .progress_bar((p.seeds * (p.steps + 1)) as u64, "steps");
        let result = self
            .parallel
            .pool()?
            .install(|| run_attention(&p, &|| bar.inc(1)))?;
        bar.finish_and_clear();
        let (md, done) = report::write_outputs(&result, &self.output.out)?;
        console::out(&md)?;
        console::out(&done.removed_text())?;
        wrote(&self.output.out)?;
        Ok(())
    }
}
