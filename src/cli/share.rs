//! `basis-lab share`: a preset's share string.

use anyhow::Result;
use clap::Args;

use basis_lab::attention::{AttentionPreset, BUNDLED_ATTENTION};
use basis_lab::console;
use basis_lab::preset::Preset;
use basis_lab::sensing::zoo::{BUNDLED_ZOO, ZooPreset};
use basis_lab::share;

/// Print a preset's share string: one URL-safe line holding only what differs from a bundled
/// preset (`bl1:…` for the key lab, `ba1:…` for attention twins, `bz1:…` for the gauge lab's
/// zoo, dial and tail), which `--preset`, `run`, `attention`, `zoo`, the app's paste window
/// and the web page's links read back bit for bit.
#[derive(Args, Debug)]
pub struct ShareArgs {
    /// A preset file, a bundled preset's name, or a share string.
    preset: std::ffi::OsString,
    /// Read PRESET as an attention preset (implied by the bundled attention presets' names and
    /// by `ba1:` strings).
    #[arg(long, conflicts_with = "zoo")]
    attention: bool,
    /// Read PRESET as a zoo preset (implied by the bundled zoo presets' names and by `bz1:`
    /// strings).
    #[arg(long)]
    zoo: bool,
}

impl ShareArgs {
    /// Prints the share string.
    pub fn run(self) -> Result<()> {
        let lossy = self.preset.to_string_lossy();
        let text = lossy.trim();
        let named = |list: &[(&str, &str)]| list.iter().any(|(n, _)| *n == text);
        let line = if self.attention
            || named(BUNDLED_ATTENTION)
            || share::is_kind::<AttentionPreset>(text)
        {
            share::encode(&AttentionPreset::load(&self.preset)?)
        } else if self.zoo || named(BUNDLED_ZOO) || share::is_kind::<ZooPreset>(text) {
            share::encode(&ZooPreset::load(&self.preset)?)
        } else {
            // A file of another kind: the key lab's error, then which flag reads it.
            share::encode(&Preset::load(&self.preset).map_err(|e| {
                let other = if ZooPreset::load(&self.preset).is_ok() {
                    "; it reads as a zoo preset: add --zoo"
                } else if AttentionPreset::load(&self.preset).is_ok() {
                    "; it reads as an attention preset: add --attention"
                } else {
                    ""
                };
                anyhow::anyhow!("{e}{other}")
            })?)
        };
        console::outln(&line)?;
        Ok(())
    }
}
