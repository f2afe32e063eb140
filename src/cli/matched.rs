//! `basis-lab matched`: matched budget against matched held-out loss.

use anyhow::Result;
use clap::Args;

use super::shared::{commit, load_preset, prepare_dir};
use basis_lab::experiment::matched::matched_report;
use basis_lab::experiment::report;
use basis_lab::output::OutputSet;

/// Matched budget vs matched loss: every arm measured at the step the first arm reaches each
/// of a ladder of held-out loss levels, and at the step it reaches each level itself;
/// writes matched.csv and matched.json and labels each arm's difference from the first arm.
#[derive(Args, Debug)]
pub struct MatchedArgs {
    /// A preset file, or a bundled preset name.
    preset: std::ffi::OsString,
    /// Number of loss levels between the initial loss and the best one every arm reaches.
    #[arg(long, default_value_t = 6)]
    levels: usize,
    /// Output folder (created if missing).
    #[arg(long, short)]
    out: std::path::PathBuf,
    /// Override the preset's step count.
    #[arg(long)]
    steps: Option<usize>,
}

impl MatchedArgs {
    /// Runs the comparison and prints its table and verdicts.
    pub fn run(self) -> Result<()> {
        let p = load_preset(&self.preset, self.steps)?;
        prepare_dir(&self.out, "matched", &["matched.csv", "matched.json"])?;
        let r = matched_report(&p, self.levels).map_err(anyhow::Error::msg)?;
        let mut set = OutputSet::new(&self.out, "matched");
        report::write_matched(&mut set, &r)?;
        commit(set, &self.out, &report::matched_text(&r))
    }
}
