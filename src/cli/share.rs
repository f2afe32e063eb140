//! `basis-lab share`: a preset's share string.

use anyhow::Result;
use clap::Args;

use basis_lab::attention::{AttentionPreset, BUNDLED_ATTENTION};
use basis_lab::console;
use basis_lab::preset::Preset;
use basis_lab::share::{self, Shareable};

/// Print a preset's share string: one URL-safe line holding only what differs from a bundled
/// preset (`bl1:…` for the key lab, `ba1:…` for attention twins), which `--preset`, `run`,
/// `attention` and the app's paste window read back bit for bit.
#[derive(Args, Debug)]
pub struct ShareArgs {
    /// A preset file, a bundled preset's name, or a share string.
    preset: std::ffi::OsString,
    /// Read PRESET as an attention preset (implied by the bundled attention presets' names and
    /// by `ba1:` strings).
    #[arg(long)]
    attention: bool,
}

impl ShareArgs {
    /// Prints the share string.
    pub fn run(self) -> Result<()> {
        let tag = format!("{}:", AttentionPreset::PREFIX);
        let lossy = self.preset.to_string_lossy();
        let text = lossy.trim();
        let attention = self.attention
            || BUNDLED_ATTENTION.iter().any(|(n, _)| *n == text)
            || (share::is_share_string(text)
                && (text.starts_with(&tag) || text.contains(&format!("#{tag}"))));
        if attention {
            console::outln(&share::encode(&AttentionPreset::load(&self.preset)?))?;
        } else {
            console::outln(&share::encode(&Preset::load(&self.preset)?))?;
        }
        Ok(())
    }
}
