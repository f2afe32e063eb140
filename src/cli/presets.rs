//! `basis-lab presets`: the bundled presets.

use anyhow::Result;
use clap::Args;

use basis_lab::attention::{AttentionPreset, BUNDLED_ATTENTION};
use basis_lab::console;
use basis_lab::preset::{BUNDLED, Preset};
use basis_lab::sensing::zoo::{BUNDLED_ZOO, ZooPreset};

/// List the bundled presets (the key lab's, the gauge lab's zoo presets, the attention presets),
/// or print one as RON.
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
                    console::outln(&format!("{name:<14} {}", p.description))?;
                }
                for (name, text) in BUNDLED_ZOO {
                    let p = ZooPreset::from_ron(text, name)?;
                    console::outln(&format!("{name:<14} {} (`basis-lab zoo`)", p.description))?;
                }
                for (name, text) in BUNDLED_ATTENTION {
                    let p = AttentionPreset::from_ron(text, name)?;
                    console::outln(&format!(
                        "{name:<14} {} (`basis-lab attention`)",
                        p.description
                    ))?;
                }
            }
            Some(n) if BUNDLED_ZOO.iter().any(|(b, _)| *b == n) => {
                // The bundled file itself: its comments say what each rule's rates are for.
                let (_, text) = BUNDLED_ZOO.iter().find(|(b, _)| *b == n).expect("listed");
                console::out(text)?;
            }
            Some(n) if BUNDLED_ATTENTION.iter().any(|(b, _)| *b == n) => {
                console::outln(&AttentionPreset::load(&n)?.to_ron())?;
            }
            Some(n) => {
                console::outln(&Preset::load(&n)?.to_ron())?;
            }
        }
        Ok(())
    }
}
