//! Shared drawing helpers: optimizer colours, log-axis plots, heatmaps.

pub mod colors;
pub mod heatmap;
pub mod math;
pub mod notice;
pub mod plots;
