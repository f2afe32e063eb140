//! The command line: without a subcommand it opens the desktop app; each subcommand's
//! arguments and work live in one file, the flags several share in [`shared`].

mod attention;
mod bench;
mod check;
mod hsi;
mod matched;
mod merge;
mod points;
mod presets;
mod run;
mod share;
mod shared;
mod sweep;
mod zoo;

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use basis_lab::app::panels::{section_ids, tab_ids};
use basis_lab::preset::Preset;

#[derive(Parser, Debug)]
#[command(
    name = "basis-lab",
    version,
    about = "Does the optimizer leave fingerprints in the coordinate basis of what a model learns?",
    long_about = "Without a subcommand, opens the desktop lab. With one, runs an experiment \
                  headless and writes CSV/JSON results."
)]
pub struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Compute in the portable arithmetic (no fused multiply-adds, libm's exp and ln): the same
    /// bits on every CPU and in the web page, somewhat slower; without it the fast arithmetic
    /// gives the same bits on this machine (docs/numerics.md §8).
    #[arg(long, global = true)]
    portable: bool,
    /// Open the app with this preset (a file or a bundled name) instead of the saved settings.
    #[arg(long, global = false)]
    preset: Option<std::ffi::OsString>,
    /// Open the app on a link as the web page would (`PAGE?view=optimizer&chain=…&play#bl1:…`,
    /// the page's address optional; quote it for the shell): its preset, its view, the view's
    /// settings and, with `play`, the view's run. Problems are told in the app's notice.
    #[arg(long, value_name = "URL", conflicts_with = "preset")]
    link: Option<String>,
    /// Open the app from the settings in this file (an `app.ron` as the app saves it) instead
    /// of the saved ones; with --screenshot, photograph that state.
    #[arg(long, value_name = "FILE")]
    settings: Option<PathBuf>,
    /// Open the app on a results file: the hsi.json of `basis-lab hsi --grid` (run here or on a
    /// cluster) opens the gauge lab's Hyperspectral tab with it, checked first; with
    /// --screenshot, photograph it.
    #[arg(long, value_name = "FILE")]
    open: Option<PathBuf>,
    /// Screenshot mode: run --run-steps steps at full speed, save a PNG of the window here,
    /// and exit (for docs and tests).
    #[arg(long, value_name = "PATH")]
    screenshot: Option<PathBuf>,
    /// Steps to run before the screenshot.
    #[arg(long, default_value_t = 500, requires = "screenshot")]
    run_steps: usize,
    /// Use the dark theme (the View menu switches it too).
    #[arg(long)]
    dark: bool,
    /// With --screenshot: stream the run at full speed for --frame-seconds instead of stopping at
    /// --run-steps, then print frame-time percentiles and peak memory before the screenshot.
    #[arg(long, requires = "screenshot")]
    frame_stats: bool,
    /// Seconds measured by --frame-stats.
    #[arg(long, default_value_t = 30.0, requires = "frame_stats")]
    frame_seconds: f64,
    /// Open this section (`--help` lists them, from the app's registry).
    #[arg(long, value_parser = parse_section)]
    panel: Option<String>,
    /// Open this tab of the section (of the controlled test without --panel; `--help` lists
    /// them). In screenshot mode the tab's analysis runs first.
    #[arg(long)]
    tab: Option<String>,
    /// With --screenshot: the window's size in points, `WxH` (default 1920x1200), to show a
    /// laptop (1280x720) or a projector (1024x768).
    #[arg(long, value_parser = parse_size, requires = "screenshot")]
    size: Option<[f32; 2]>,
    /// With --screenshot: pixels per point (1 to 4), so `--size 1280x720 --scale 2` is a 2x
    /// HiDPI laptop (a 2560x1440 PNG).
    #[arg(long, default_value_t = 1.0, value_parser = parse_scale, requires = "screenshot")]
    scale: f32,
    /// With --screenshot: photograph presentation mode (full screen, larger type).
    #[arg(long, requires = "screenshot")]
    present: bool,
    /// With --screenshot: photograph a tab as it opens, without running its analysis first.
    #[arg(long, requires = "screenshot")]
    no_analysis: bool,
}

/// `WxH` in points, each 320 to 8000.
fn parse_size(text: &str) -> Result<[f32; 2], String> {
    let bad =
        || format!("`{text}` is not a size; write it as WxH, e.g. 1280x720 (each 320 to 8000)");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let h: u32 = h.trim().parse().map_err(|_| bad())?;
    if !(320..=8000).contains(&w) || !(320..=8000).contains(&h) {
        return Err(bad());
    }
    Ok([w as f32, h as f32])
}

/// Pixels per point, 1 to 4.
fn parse_scale(text: &str) -> Result<f32, String> {
    match text.trim().parse::<f32>() {
        Ok(s) if (1.0..=4.0).contains(&s) => Ok(s),
        _ => Err(format!(
            "`{text}` is out of range; allowed a number from 1 to 4"
        )),
    }
}

fn parse_section(name: &str) -> Result<String, String> {
    let names = section_ids();
    if names.contains(&name) {
        Ok(name.to_string())
    } else {
        Err(format!(
            "unknown panel `{name}`; one of: {}",
            names.join(", ")
        ))
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    Run(run::RunArgs),
    Sweep(sweep::SweepArgs),
    EpsSweep(points::EpsSweepArgs),
    DkSweep(points::DkSweepArgs),
    Matched(matched::MatchedArgs),
    #[command(visible_alias = "dial", visible_alias = "tail")]
    Zoo(zoo::ZooArgs),
    Merge(merge::MergeArgs),
    Hsi(hsi::HsiArgs),
    Attention(attention::AttentionArgs),
    Bench(bench::BenchArgs),
    Check(check::CheckArgs),
    Presets(presets::PresetsArgs),
    Share(share::ShareArgs),
}

impl Cli {
    /// Parses the process's arguments ([`Cli::command_with_views`]); on an error or `--help`
    /// prints and exits, as clap's `parse` does.
    pub fn parse_args() -> Self {
        let matches = Self::command_with_views().get_matches();
        Self::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }

    /// The command whose `--panel` and `--tab` help lists the app's sections and each one's
    /// tabs, read from the registry of views (a new tab shows up without editing a string).
    pub fn command_with_views() -> clap::Command {
        let sections = section_ids();
        let tabs: Vec<String> = sections
            .iter()
            .filter_map(|&s| {
                let t = tab_ids(s)?;
                (!t.is_empty()).then(|| format!("{s}: {}", t.join(", ")))
            })
            .collect();
        Self::command()
            .mut_arg("panel", |a| {
                a.help(format!("Open this section: {}", sections.join(", ")))
            })
            .mut_arg("tab", |a| {
                a.help(format!(
                    "Open this tab of the section (of the controlled test without --panel); \
                     {}. In screenshot mode the tab's analysis runs first",
                    tabs.join("; ")
                ))
            })
    }

    /// Runs the subcommand, or opens the app.
    pub fn run(self) -> Result<()> {
        if self.portable {
            basis_lab::arith::set(basis_lab::arith::Arithmetic::Portable);
        }
        match self.command {
            None => self.gui(),
            Some(Command::Run(a)) => a.run(),
            Some(Command::Sweep(a)) => a.run(),
            Some(Command::EpsSweep(a)) => a.run(),
            Some(Command::DkSweep(a)) => a.run(),
            Some(Command::Matched(a)) => a.run(),
            Some(Command::Zoo(a)) => a.run(),
            Some(Command::Merge(a)) => a.run(),
            Some(Command::Hsi(a)) => a.run(),
            Some(Command::Attention(a)) => a.run(),
            Some(Command::Bench(a)) => a.run(),
            Some(Command::Check(a)) => a.run(),
            Some(Command::Presets(a)) => a.run(),
            Some(Command::Share(a)) => a.run(),
        }
    }

    fn gui(self) -> Result<()> {
        if self.frame_stats && !(self.frame_seconds.is_finite() && self.frame_seconds > 0.0) {
            anyhow::bail!(
                "--frame-seconds {} is out of range; allowed a positive number",
                self.frame_seconds
            );
        }
        if let Some(tab) = &self.tab {
            let section = self.panel.as_deref().unwrap_or("test");
            let tabs = tab_ids(section).unwrap_or_default();
            if !tabs.contains(&tab.as_str()) {
                anyhow::bail!(
                    "unknown tab `{tab}` of section `{section}`; one of: {}",
                    tabs.join(", ")
                );
            }
        }
        let preset = self.preset.as_deref().map(Preset::load).transpose()?;
        let settings = match &self.settings {
            None => None,
            Some(file) => {
                let text = std::fs::read_to_string(file)
                    .with_context(|| format!("--settings {}", file.display()))?;
                let parsed = basis_lab::app::saved::parse_app_ron(&text)
                    .map_err(|e| anyhow::anyhow!("--settings {}: {e}", file.display()))?;
                Some(parsed.with_context(|| {
                    format!("--settings {}: the file holds no settings", file.display())
                })?)
            }
        };
        let hsi_report = match &self.open {
            None => None,
            Some(file)
                if file
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("json")) =>
            {
                Some(
                    basis_lab::sensing::hsi::report::read_grid(file)
                        .map_err(|e| anyhow::anyhow!("--open {e}"))?,
                )
            }
            Some(file) => anyhow::bail!(
                "--open {}: not a results file the app reads (the hsi.json of `basis-lab hsi \
                 --grid`)",
                file.display()
            ),
        };
        basis_lab::app::run_gui(basis_lab::app::GuiOptions {
            hsi_report,
            preset,
            link: self.link.as_deref().map(basis_lab::link::parse_link),
            settings,
            screenshot: self.screenshot,
            run_steps: self.run_steps,
            dark: self.dark.then_some(true),
            section: self.panel,
            tab: self.tab,
            frame_seconds: self.frame_stats.then_some(self.frame_seconds),
            size: self.size,
            scale: Some(self.scale),
            present: self.present,
            no_analysis: self.no_analysis,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The help of `--panel` and `--tab` names every view the registry holds, and only those.
    #[test]
    fn panel_and_tab_help_come_from_the_registry_of_views() {
        let mut cmd = Cli::command_with_views();
        let help = cmd.render_long_help().to_string();
        for s in section_ids() {
            assert!(help.contains(s), "section {s}");
            for t in tab_ids(s).unwrap() {
                assert!(help.contains(&format!(" {t}")), "tab {s}/{t}");
            }
        }
        assert!(help.contains("gauge: zoo, dial, tail, hsi, live"), "{help}");
        assert!(help.contains("optimizer"), "{help}");
    }
}
