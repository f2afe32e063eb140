//! Figures for papers and slides: one description of a plot (title, axes, legend, marks) or of
//! a row of heatmaps, rendered by plotters to SVG (vectors) and to PNG at a chosen scale.
//!
//! The app's "Save figure…" buttons and the command line's `--figures` build the same
//! [`Figure`] from the same data, so a figure saved from the window and one written by a batch
//! run look alike. Figures are always in the light theme. Text uses the DejaVu Sans font in
//! `assets/fonts`, embedded in the binary, so PNGs render the same on every machine; the SVG
//! names the font family and leaves text as text.
//!
//! Headless: no GUI import, so the command line and the tests use it without a window.

mod axis;
mod render;

#[cfg(test)]
pub(crate) use axis::assert_readable;
pub use axis::{dot_radius, pieces, plot_ranges};
pub use render::{FigureError, png, svg};

use crate::output::OutputSet;

use nalgebra::DMatrix;

/// An sRGB colour, `[r, g, b]`.
pub type Rgb = [u8; 3];

/// Grey of reference lines and of legend entries that stand for every arm.
pub const GREY: Rgb = [128, 128, 128];

/// A figure: a title and either a plot or a row of heatmaps.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// Printed above everything else.
    pub title: String,
    /// What is drawn below the title.
    pub body: Body,
}

/// The content of a [`Figure`].
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// A plot with two axes, its marks and a legend above it naming every named mark.
    Plot {
        /// The horizontal axis.
        x: Axis,
        /// The vertical axis.
        y: Axis,
        /// Drawn in order (later on top).
        marks: Vec<Mark>,
    },
    /// Heatmaps side by side sharing one colour bar over [0, 1] (the grey map of
    /// [`magnitude`]).
    Heatmaps {
        /// The maps, left to right.
        maps: Vec<Heatmap>,
        /// The colour bar's caption.
        caption: String,
    },
}

/// One axis of a plot.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Axis {
    /// The axis title.
    pub label: String,
    /// Logarithmic (base 10): data are raw values, non-positive ones are left out.
    pub log: bool,
    /// Values decrease along the axis (left to right, or bottom to top).
    pub reversed: bool,
    /// Names of categories at 0, 1, …: when not empty, ticks sit at the integers and carry these
    /// names instead of numbers.
    pub categories: Vec<String>,
    /// Values the axis range always includes (e.g. 0 for a loss).
    pub include: Vec<f64>,
    /// Tick positions in data units, labelled with their values; empty: chosen automatically
    /// (decades on log axes, 1-2-5 steps on linear ones).
    pub ticks: Vec<f64>,
}

impl Axis {
    /// A linear axis titled `label`.
    pub fn linear(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            ..Self::default()
        }
    }

    /// A log10 axis titled `label`.
    pub fn log(label: impl Into<String>) -> Self {
        Self {
            label: label.into(),
            log: true,
            ..Self::default()
        }
    }

    /// A categorical axis titled `label` with `names` at 0, 1, ….
    pub fn categories(label: impl Into<String>, names: Vec<String>) -> Self {
        Self {
            label: label.into(),
            categories: names,
            ..Self::default()
        }
    }

    /// This axis, also covering `v`.
    pub fn including(mut self, v: f64) -> Self {
        self.include.push(v);
        self
    }

    /// This axis, decreasing along its direction.
    pub fn reversed(mut self) -> Self {
        self.reversed = true;
        self
    }
}

/// How a line is stroked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dash {
    /// Unbroken.
    Solid,
    /// Long dashes.
    Dashed,
    /// Short dots.
    Dotted,
}

/// One thing drawn in a plot, in data coordinates (raw values, also on log axes).
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// The legend's name for it; empty marks are left out of the legend.
    pub name: String,
    /// Its colour.
    pub color: Rgb,
    /// Opacity in [0, 1] (bands are drawn translucent).
    pub opacity: f64,
    /// Its shape and data.
    pub shape: Shape,
}

/// The shape and data of a [`Mark`]. Widths and radii are in points (1/96 inch at scale 1).
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A polyline through `points` (`[x, y]`); non-finite points break it into pieces.
    Line {
        /// The vertices.
        points: Vec<[f64; 2]>,
        /// Stroke width.
        width: f64,
        /// Stroke pattern.
        dash: Dash,
    },
    /// Filled dots.
    Points {
        /// The centres.
        points: Vec<[f64; 2]>,
        /// Dot radius.
        radius: f64,
    },
    /// Bars from the axis (0, or the bottom of a log axis) up to `y`, centred on `x`.
    Bars {
        /// `[x, y]` of each bar.
        points: Vec<[f64; 2]>,
        /// Bar width in data units of x.
        width: f64,
    },
    /// The region between `lo` and `hi` over `x` (all three the same length).
    Band {
        /// Abscissae.
        x: Vec<f64>,
        /// Lower edge.
        lo: Vec<f64>,
        /// Upper edge.
        hi: Vec<f64>,
    },
    /// A horizontal line across the plot at `y`.
    HLine {
        /// Its height.
        y: f64,
        /// Stroke pattern.
        dash: Dash,
    },
    /// A vertical line across the plot at `x`.
    VLine {
        /// Its position.
        x: f64,
        /// Stroke pattern.
        dash: Dash,
    },
}

impl Mark {
    /// A solid or dashed line of `width` points through `points`.
    pub fn line(
        name: impl Into<String>,
        color: Rgb,
        points: Vec<[f64; 2]>,
        width: f64,
        dash: Dash,
    ) -> Self {
        Self {
            name: name.into(),
            color,
            opacity: 1.0,
            shape: Shape::Line {
                points,
                width,
                dash,
            },
        }
    }

    /// Dots of `radius` points at `points`.
    pub fn points(name: impl Into<String>, color: Rgb, points: Vec<[f64; 2]>, radius: f64) -> Self {
        Self {
            name: name.into(),
            color,
            opacity: 1.0,
            shape: Shape::Points { points, radius },
        }
    }

    /// Bars `width` wide at `points`.
    pub fn bars(name: impl Into<String>, color: Rgb, points: Vec<[f64; 2]>, width: f64) -> Self {
        Self {
            name: name.into(),
            color,
            opacity: 1.0,
            shape: Shape::Bars { points, width },
        }
    }

    /// A translucent band between `lo` and `hi` over `x`.
    pub fn band(
        name: impl Into<String>,
        color: Rgb,
        x: Vec<f64>,
        lo: Vec<f64>,
        hi: Vec<f64>,
    ) -> Self {
        Self {
            name: name.into(),
            color,
            opacity: 0.2,
            shape: Shape::Band { x, lo, hi },
        }
    }

    /// A horizontal reference line at `y`.
    pub fn hline(name: impl Into<String>, color: Rgb, y: f64, dash: Dash) -> Self {
        Self {
            name: name.into(),
            color,
            opacity: 1.0,
            shape: Shape::HLine { y, dash },
        }
    }

    /// A vertical reference line at `x`.
    pub fn vline(name: impl Into<String>, color: Rgb, x: f64, dash: Dash) -> Self {
        Self {
            name: name.into(),
            color,
            opacity: 1.0,
            shape: Shape::VLine { x, dash },
        }
    }
}

/// One heatmap: `values` (`rows × cols`, drawn as in the matrix: row 0 on top) coloured by
/// [`magnitude`] over [0, 1].
#[derive(Clone, Debug, PartialEq)]
pub struct Heatmap {
    /// Printed above the map.
    pub title: String,
    /// The values; NaN cells are grey.
    pub values: DMatrix<f64>,
}

/// Anchors of the sequential colour map (greys, as ColorBrewer's "Greys"): 0 → pale, 1 → dark.
/// Grey because a magnitude map must not take a hue that names an optimizer: every rule keeps
/// its own colour in every view, and a heatmap is titled in its arm's colour.
const GREYS: [Rgb; 6] = [
    [247, 247, 247],
    [204, 204, 204],
    [150, 150, 150],
    [99, 99, 99],
    [50, 50, 50],
    [10, 10, 10],
];

/// Anchors for dark backgrounds: 0 → near the background, 1 → bright.
const GREYS_DARK: [Rgb; 6] = [
    [30, 30, 30],
    [70, 70, 70],
    [115, 115, 115],
    [165, 165, 165],
    [210, 210, 210],
    [250, 250, 250],
];

/// Pale yellow for values that are not numbers (no grey of the map, no optimizer's colour).
pub const NAN_COLOR: Rgb = [250, 225, 120];

/// Colour of `v` in [0, 1] (clamped; NaN is [`NAN_COLOR`]): pale to dark grey, or with `dark`
/// (for dark backgrounds) dark to bright, so a larger value always stands out more.
pub fn magnitude(v: f64, dark: bool) -> Rgb {
    if !v.is_finite() {
        return NAN_COLOR;
    }
    let map = if dark { &GREYS_DARK } else { &GREYS };
    let x = v.clamp(0.0, 1.0) * (map.len() - 1) as f64;
    let i = (x.floor() as usize).min(map.len() - 2);
    let t = x - i as f64;
    let (a, b) = (map[i], map[i + 1]);
    let mix = |k: usize| (a[k] as f64 + t * (b[k] as f64 - a[k] as f64)).round() as u8;
    [mix(0), mix(1), mix(2)]
}

/// Largest PNG scale (pixels per point) [`png`] accepts.
pub const MAX_SCALE: f64 = 8.0;

/// Size (points) of a figure the command line writes: a single-column paper figure.
pub const CLI_SIZE: (u32, u32) = (720, 450);

/// Scale of the command line's PNGs: 3 pixels per point (288 dpi), print resolution.
pub const CLI_SCALE: f64 = 3.0;

/// Stages `figure` as `<stem>.svg` and `<stem>.png` ([`CLI_SIZE`] at [`CLI_SCALE`]) in `set`,
/// to be renamed into place with the rest of its result.
///
/// # Errors
/// A rendering error or the I/O error of either file, naming the file.
pub fn write_pair(figure: &Figure, set: &mut OutputSet, stem: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    let (svg_name, png_name) = (format!("{stem}.svg"), format!("{stem}.png"));
    let text = svg(figure, CLI_SIZE).with_context(|| format!("drawing {svg_name}"))?;
    set.write(&svg_name, text.as_bytes())?;
    let bytes = png(figure, CLI_SIZE, CLI_SCALE).with_context(|| format!("drawing {png_name}"))?;
    set.write(&png_name, &bytes)?;
    Ok(())
}

/// Stages every `(stem, figure)` of `figures` in `set` with [`write_pair`].
///
/// # Errors
/// The first failure of [`write_pair`].
pub fn write_all(set: &mut OutputSet, figures: &[(String, Figure)]) -> anyhow::Result<()> {
    for (stem, fig) in figures {
        write_pair(fig, set, stem)?;
    }
    Ok(())
}

/// Every series name of a figure (marks' and heatmaps' titles), in order: what its legend
/// shows.
pub fn names(figure: &Figure) -> Vec<&str> {
    match &figure.body {
        Body::Plot { marks, .. } => marks
            .iter()
            .map(|m| m.name.as_str())
            .filter(|n| !n.is_empty())
            .collect(),
        Body::Heatmaps { maps, .. } => maps.iter().map(|m| m.title.as_str()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magnitude_ends_and_nan() {
        assert_eq!(magnitude(0.0, false), GREYS[0]);
        assert_eq!(magnitude(1.0, false), GREYS[5]);
        assert_eq!(magnitude(2.0, true), GREYS_DARK[5]);
        assert_eq!(magnitude(f64::NAN, false), NAN_COLOR);
        // Halfway between anchors 2 and 3 (x = 2.5).
        assert_eq!(magnitude(0.5, false), [125, 125, 125]);
        // No value takes a hue, so no map reads as an optimizer's colour.
        for k in 0..=20 {
            for dark in [false, true] {
                let [r, g, b] = magnitude(k as f64 / 20.0, dark);
                assert!(r == g && g == b, "{k} {dark}");
            }
        }
    }
}
