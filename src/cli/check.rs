//! `basis-lab check`: a chain of transforms' predicted and measured class in the three labs.

use anyhow::Result;
use clap::Args;

use basis_lab::console;
use basis_lab::experiment::check::{self, ChainCheck};
use basis_lab::optim::BUNDLED_CHAINS;

/// Check a chain of transforms (e.g. `'clip_by_global_norm(1) | scale_by_adam()'`), a
/// registered rule by name (its chain; `adam(eps=1e-3)` at those hyperparameters) or a bundled
/// chain by name (`adamw`, `lamb`, …): for the
/// key lab, the gauge lab and attention, the predicted class (from each transform's declared
/// commuting side), the gauge twin's and the noise twin's distances after a short run, the
/// measured verdict and whether the two agree. Under a second; the settings and the rounding
/// floor are documented in docs/numerics.md, "Transforms and chains". A chain predicted
/// equivariant that measures otherwise is an error (exit status 1, after the table).
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The chain in the text form (quote it for the shell), a registered rule's name (with
    /// named hyperparameters if wanted) or a bundled chain's name.
    #[arg(required_unless_present = "bundled")]
    chain: Option<String>,
    /// Check every bundled chain (AdamW, LAMB, …) and print the Markdown table of the README.
    #[arg(long, conflicts_with = "chain")]
    bundled: bool,
    /// Print the result as JSON instead of a table.
    #[arg(long)]
    json: bool,
}

impl CheckArgs {
    /// Prints the table or the JSON, then fails if a prediction and its measurement disagree.
    pub fn run(self) -> Result<()> {
        let checks: Vec<ChainCheck> = match &self.chain {
            Some(text) => {
                vec![check::check_chain(text).map_err(|e| anyhow::anyhow!("chain: {e}"))?]
            }
            None => BUNDLED_CHAINS
                .iter()
                .map(|b| check::check_chain(b.0))
                .collect::<Result<_, _>>()?,
        };
        if self.json && self.bundled {
            console::outln(&serde_json::to_string_pretty(&checks)?)?;
        } else if self.json {
            console::outln(&serde_json::to_string_pretty(&checks[0])?)?;
        } else if self.bundled {
            console::out(&check::markdown(&checks))?;
        } else {
            console::out(&check::table(&checks[0]))?;
        }
        let bad: Vec<String> = checks.iter().filter_map(check::disagreements).collect();
        anyhow::ensure!(
            bad.is_empty(),
            "prediction and measurement disagree (an error of a transform's declaration or of \
             the numerics): {}",
            bad.join("; ")
        );
        Ok(())
    }
}
