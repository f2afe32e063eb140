//! Shared drawing helpers: optimizer colours, plots (log axes, titled plot cells with their
//! export button), heatmaps, formulas, and the progress and stale-result rows of analyses.

pub mod colors;
pub mod figure_plot;
pub mod heatmap;
pub mod math;
pub mod paste;
pub mod plots;
pub mod reflow;
pub mod status;
