//! The desktop app: a thin eframe shell around [`AppState`], which holds the UI and is shared
//! with the kittest tests. Sections and tabs are [`panel::Panel`]s listed in
//! [`panels::sections`]; what they share is the [`lab::Lab`]. Training runs on the library's live
//! driver ([`crate::live`]), other background work in [`analysis::Analysis`] jobs; the app
//! owns no thread.

pub mod analysis;
pub mod files;
pub mod follow;
pub mod lab;
#[cfg(not(target_arch = "wasm32"))]
mod native;
#[cfg(target_arch = "wasm32")]
pub mod page;
pub mod panel;
pub mod panels;
pub mod saved;
#[cfg(not(target_arch = "wasm32"))]
mod screenshot;
pub mod shell;
mod style;
pub mod widgets;

#[cfg(not(target_arch = "wasm32"))]
pub use native::run_gui;
pub use shell::{AppState, Settings};
pub use style::apply_style;

use std::path::PathBuf;

use eframe::egui;

use crate::preset::Preset;

/// How the app was started.
#[derive(Clone, Debug, Default)]
pub struct GuiOptions {
    /// Start with this preset instead of the saved settings.
    pub preset: Option<Preset>,
    /// Open a link as the page does (`--link`): its preset, view, the view's settings and, with
    /// `play`, the view's run ([`follow::follow`]).
    pub link: Option<crate::link::PageLink>,
    /// Start from these settings instead of the saved ones (also in screenshot mode, which
    /// otherwise starts from the defaults); checked like saved settings.
    pub settings: Option<Settings>,
    /// Screenshot mode: run `run_steps` steps, save a PNG here and exit.
    pub screenshot: Option<PathBuf>,
    /// Steps to run before the screenshot.
    pub run_steps: usize,
    /// Force the dark (`Some(true)`) or light (`Some(false)`) theme.
    pub dark: Option<bool>,
    /// Open the section with this id (in screenshot mode: photograph it).
    pub section: Option<String>,
    /// Open this tab of that section (of the controlled test if no section is given), by id (in
    /// screenshot mode: run its analysis first).
    pub tab: Option<String>,
    /// Frame-statistics mode (with `screenshot`): instead of stopping at `run_steps`, stream the
    /// run at full speed for this many seconds, then print frame-time percentiles, the steps
    /// reached and the peak resident memory before the screenshot.
    pub frame_seconds: Option<f64>,
    /// Screenshot mode: the window's size in points (default 1920 × 1200).
    pub size: Option<[f32; 2]>,
    /// Screenshot mode: pixels per point (default 1).
    pub scale: Option<f32>,
    /// Start in presentation mode.
    pub present: bool,
    /// Open the gauge lab's Hyperspectral tab on this report (`--open hsi.json`); in screenshot
    /// mode its analysis does not run, the report is what is photographed.
    pub hsi_report: Option<crate::sensing::hsi::grid::GridReport>,
    /// Screenshot mode: photograph a tab as it opens, without running its analysis first (the
    /// layout screenshots of CI, where the analyses would take many minutes).
    pub no_analysis: bool,
}

/// The window size in points that fits a monitor of `monitor` points: `size` shrunk to at most
/// [`MONITOR_SHARE`] of the monitor on each side (room for a title bar and a task bar), but
/// not below [`MIN_WINDOW`] unless the monitor itself is smaller. Used for the first window
/// and for a restored one.
pub fn fit_window(size: egui::Vec2, monitor: egui::Vec2) -> egui::Vec2 {
    let room = monitor * MONITOR_SHARE;
    let floor = MIN_WINDOW.min(monitor);
    size.min(room).max(floor).min(monitor)
}

/// Where a restored window goes on a monitor of `monitor` points (its origin at 0, 0, as winit
/// reports the window's monitor): `None` when the saved placement fits (at least half of the
/// window's outer rectangle `outer` on the monitor, its inner size `inner` already
/// [`fit_window`]-sized); otherwise the outer position and inner size that centre a fitted
/// window on the monitor. A position saved while a second monitor was attached, or a window
/// the window manager left hanging over an edge, is dropped this way instead of opening where
/// nobody can see it (and being saved there again).
pub fn place_window(
    outer: egui::Rect,
    inner: egui::Vec2,
    monitor: egui::Vec2,
) -> Option<(egui::Pos2, egui::Vec2)> {
    let size = fit_window(inner, monitor);
    let screen = egui::Rect::from_min_size(egui::Pos2::ZERO, monitor);
    let shown = outer.intersect(screen);
    let shown_area = if shown.is_positive() {
        shown.area()
    } else {
        0.0
    };
    let on_screen = outer.is_finite() && shown_area >= 0.5 * outer.area();
    if on_screen && (size - inner).abs().max_elem() < 1.0 {
        return None;
    }
    if on_screen {
        // Only the size changes: keep the window where it is, inside the monitor.
        let frame = (outer.size() - inner).max(egui::Vec2::ZERO);
        let max = (monitor - size - frame).max(egui::Vec2::ZERO);
        let pos = outer.min.to_vec2().clamp(egui::Vec2::ZERO, max);
        return Some((pos.to_pos2(), size));
    }
    let frame = if outer.is_finite() {
        (outer.size() - inner).max(egui::Vec2::ZERO)
    } else {
        egui::Vec2::ZERO
    };
    let pos = ((monitor - size - frame) / 2.0).max(egui::Vec2::ZERO);
    Some((pos.to_pos2(), size))
}

/// The largest share of the monitor a window takes on each side, width and height.
pub const MONITOR_SHARE: egui::Vec2 = egui::vec2(0.96, 0.9);
/// The smallest window [`fit_window`] makes on a monitor that has room for it (points).
pub const MIN_WINDOW: egui::Vec2 = egui::vec2(640.0, 480.0);
/// The window's size on a first start, in points, before it is fitted to the monitor.
pub const FIRST_WINDOW: [f32; 2] = [1680.0, 1050.0];
