//! `basis-lab presets`: the bundled presets.

use anyhow::Result;
use clap::Args;

use basis_lab::preset::{BUNDLED, Preset};

/// List the bundled presets, or print one as RON.
#[derive(Args, Debug)]
pub struct PresetsArgs {
    /// Print this preset's full RON text.
    name: Option<String>,
}

impl PresetsArgs {
    /// Prints the list, or the named preset's RON text.
    pub fn run(self) -> Result<()> {
        match self.name {
            None => {
                for (name, text) in BUNDLED {
                    let p = Preset::from_ron(text, name)?;
                    println!("{name:<14} {}", p.description);
                }
            }
            Some(n) => {
                print!("{}", Preset::load(&n)?.to_ron());
                println!();
            }
        }
        Ok(())
    }
}
