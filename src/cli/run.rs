//! `basis-lab run`: one paired run written to a folder.

use anyhow::Result;
use clap::Args;

use super::shared::{FigureLook, Output, load_preset, wrote};
use basis_lab::console;
use basis_lab::experiment::{MAX_OUTPUT_BYTES, RunOptions, report, run_to_dir};

/// Train every arm of PRESET from W0 and from Q·W0; write metrics.csv, summary.json and
/// trace.json into --out (with --figures also the plots as SVG, PDF and PNG).
#[derive(Args, Debug)]
pub struct RunArgs {
    /// A preset file, or a bundled preset name (see `basis-lab presets`).
    preset: std::ffi::OsString,
    #[command(flatten)]
    output: Output,
    /// Override the preset's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Override the preset's step count.
    #[arg(long)]
    steps: Option<usize>,
    /// Skip trace.json (every episode and matrix; large for long runs).
    #[arg(long)]
    no_trace: bool,
    /// Also write the live run's plots (a)–(d) as SVG, PDF, PNG (3×) and caption text next to the
    /// tables.
    #[arg(long)]
    figures: bool,
    #[command(flatten)]
    look: FigureLook,
    /// Largest output file the run may write, in GB (metrics.csv grows with steps × arms; the
    /// size of each file is estimated before the run starts).
    #[arg(long, default_value_t = MAX_OUTPUT_BYTES as f64 / 1e9, value_parser = positive_gb)]
    max_output_gb: f64,
}

/// A positive, finite number of gigabytes.
fn positive_gb(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 => Ok(x),
        _ => Err(format!("`{text}` is not a positive number of GB")),
    }
}

impl RunArgs {
    /// Runs the preset and prints the summary table.
    pub fn run(self) -> Result<()> {
        let mut p = load_preset(&self.preset, self.steps)?;
        p.seed = self.seed.unwrap_or(p.seed);
        let bar = self.output.progress_bar(p.steps as u64, "steps");
        let opts = RunOptions {
            trace: !self.no_trace,
            figures: self.look.options(self.figures),
            max_output_bytes: (self.max_output_gb * 1e9) as u64,
        };
        let (summary, done) =
            run_to_dir(&p, &self.output.out, opts, &|s| bar.set_position(s as u64))?;
        bar.finish_and_clear();
        console::out(&report::summary_text(&summary))?;
        console::out(&done.removed_text())?;
        wrote(&self.output.out)?;
        Ok(())
    }
}
