//! `basis-lab merge`: the tables of a sharded run, from its `shard.ron` files.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use super::shared::{FigureLook, prepare_dir};
use basis_lab::shard::{Merged, merge, read_shard};

/// Combine the shard.ron outputs of `--shard i/N` runs into the tables the unsharded
/// command writes, byte for byte.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// Shard output folders (or shard.ron files), every shard of one run.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Output folder (created if missing).
    #[arg(long, short)]
    out: PathBuf,
    /// Also write the plots as SVG, PDF, PNG (3×) and caption text next to the tables.
    #[arg(long)]
    figures: bool,
    #[command(flatten)]
    look: FigureLook,
}

impl MergeArgs {
    /// Reads and checks every shard, then writes what the unsharded command writes.
    pub fn run(self) -> Result<()> {
        let shards = self
            .dirs
            .iter()
            .map(|d| read_shard(d).map(|s| (d.display().to_string(), s)))
            .collect::<Result<Vec<_>, String>>()
            .map_err(anyhow::Error::msg)?;
        let merged = merge(shards).map_err(anyhow::Error::msg)?;
        prepare_dir(&self.out, "merge", &[])?;
        let figures = self.look.options(self.figures);
        match merged {
            Merged::Sweep(r) => super::sweep::finish(&self.out, &r, figures),
            Merged::EpsSweep(points) => super::points::finish(&self.out, &points, figures),
            Merged::DkSweep(points) => super::points::finish(&self.out, &points, figures),
            Merged::Zoo(z) => {
                super::zoo::finish(&self.out, &z.preset, &z.results, z.seconds, figures, None)
            }
        }
    }
}
