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
#[cfg(test)]
pub(crate) mod check;
mod render;
mod text;

#[cfg(test)]
pub(crate) use axis::assert_readable;
pub use axis::{dot_radius, pieces, plot_ranges};
pub use render::{FigureError, png, png_as, svg, svg_as};

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
        /// What a map's columns are (printed below the maps).
        x_label: String,
        /// What a map's rows are (printed left of the maps).
        y_label: String,
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

/// Values at or below this are drawn at this level on log axes (exact zeros occur: twins start
/// identical). Every lab's log plots share it.
pub const LOG_FLOOR: f64 = 1e-18;

/// Opacity of an earlier run's curves, drawn under the current run's in every live view.
pub const PAST_OPACITY: f64 = 0.35;

/// An earlier run a live view keeps beside the current one, drawn faded ([`PAST_OPACITY`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Earlier<T> {
    /// What it had that the run after it changed (`adam lr 0.01`, `seed 3`), or
    /// `same settings`.
    pub label: String,
    /// Whether its curves are drawn.
    pub shown: bool,
    /// What the view kept of it.
    pub run: T,
}

impl<T> Earlier<T> {
    /// Keeps `run`, labelled `label` and shown, as the newest of `list` (newest first), which
    /// then holds at most `max`.
    pub fn keep(list: &mut Vec<Earlier<T>>, label: String, run: T, max: usize) {
        list.insert(
            0,
            Earlier {
                label,
                shown: true,
                run,
            },
        );
        list.truncate(max);
    }

    /// The shown runs with their 0-based place in `list` (the run list's and the CSV's number
    /// minus one).
    pub fn shown(list: &[Earlier<T>]) -> impl Iterator<Item = (usize, &Earlier<T>)> {
        list.iter().enumerate().filter(|(_, e)| e.shown)
    }
}

/// One faded curve of earlier run `k` (0-based) labelled `label`: thin, in `color` at
/// [`PAST_OPACITY`]; `named` for the first curve of the run, which carries the run's one
/// legend entry (`earlier 1: seed 0`).
pub fn faded_line(k: usize, label: &str, named: bool, color: Rgb, points: Vec<[f64; 2]>) -> Mark {
    let name = if named {
        format!("earlier {}: {label}", k + 1)
    } else {
        String::new()
    };
    let mut m = Mark::line(name, color, points, 1.5, Dash::Solid);
    m.opacity = PAST_OPACITY;
    m
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

/// Where a figure goes, which fixes its canvas (in points of 1/96 inch, as SVG user units)
/// and its text: print sizes set text at 8–9 pt at print size, slides at 20 pt and above.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FigureSize {
    /// One column of a two-column paper: 3.5 × 2.7 in.
    Single,
    /// The full width of a two-column paper: 7 × 3.5 in.
    Double,
    /// A 16:9 slide, 13.33 × 7.5 in.
    Slide,
    /// The plot's size on screen (`width`, `height` points) with the screen's text sizes.
    Screen(u32, u32),
}

impl FigureSize {
    /// The print sizes, for the command line's `--figure-size` and the app's menu.
    pub const PRINT: [FigureSize; 3] = [FigureSize::Single, FigureSize::Double, FigureSize::Slide];

    /// The canvas, `(width, height)` points (1/96 inch).
    pub fn points(self) -> (u32, u32) {
        match self {
            FigureSize::Single => (336, 260),
            FigureSize::Double => (672, 336),
            FigureSize::Slide => (1280, 720),
            FigureSize::Screen(w, h) => (w, h),
        }
    }

    /// The name the command line and the file menu use (`single`, `double`, `slide`;
    /// `screen` for the on-screen size).
    pub fn name(self) -> &'static str {
        match self {
            FigureSize::Single => "single",
            FigureSize::Double => "double",
            FigureSize::Slide => "slide",
            FigureSize::Screen(..) => "screen",
        }
    }

    /// The print size named `name` (`single`, `double` or `slide`).
    ///
    /// # Errors
    /// Any other name, with the names allowed.
    pub fn parse(name: &str) -> Result<Self, String> {
        Self::PRINT
            .into_iter()
            .find(|s| s.name() == name.trim())
            .ok_or_else(|| format!("`{name}` is not a figure size; allowed: single, double, slide"))
    }
}

/// How the command line writes figures: their size and whether they carry their titles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FigureOptions {
    /// Canvas and text size.
    pub size: FigureSize,
    /// Print the figure's title above it (a paper puts it in the caption instead).
    pub titles: bool,
}

impl FigureOptions {
    /// `size` with titles as a figure there wants them: off for papers, on for slides and
    /// the screen.
    pub fn new(size: FigureSize) -> Self {
        let titles = !matches!(size, FigureSize::Single | FigureSize::Double);
        Self { size, titles }
    }
}

/// Scale of the command line's PNGs: 3 pixels per point (288 dpi), print resolution.
pub const CLI_SCALE: f64 = 3.0;

/// The text a paper's caption can start from: the title, what each axis shows, and the
/// series, as one paragraph.
pub fn caption(figure: &Figure) -> String {
    let mut text = figure.title.trim().to_string();
    if !text.is_empty() && !text.ends_with('.') {
        text.push('.');
    }
    let mut sentence = |s: String| {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&s);
    };
    match &figure.body {
        Body::Plot { x, y, .. } => {
            sentence(format!(
                "Horizontal axis: {}; vertical axis: {}.",
                x.label, y.label
            ));
        }
        Body::Heatmaps {
            caption,
            x_label,
            y_label,
            ..
        } => sentence(format!(
            "One map per panel; columns: {x_label}; rows: {y_label}; colour: {caption}."
        )),
    }
    let names = names(figure);
    if !names.is_empty() {
        let kind = if matches!(figure.body, Body::Plot { .. }) {
            "Series"
        } else {
            "Panels"
        };
        sentence(format!("{kind}: {}.", names.join("; ")));
    }
    text.push('\n');
    text
}

/// `svg` (as [`svg_as`] draws it: user units of 1/96 inch) as a one-page PDF of the same size,
/// converted by usvg and svg2pdf: lines, bands and bars stay vectors, and text stays text in
/// the bundled DejaVu Sans (subset and embedded), so a LaTeX document can include it and its
/// words can be searched.
///
/// # Errors
/// [`FigureError::Pdf`] when the SVG does not parse or the conversion fails (with its reason).
#[cfg(not(target_arch = "wasm32"))]
pub fn pdf_from_svg(svg: &str) -> Result<Vec<u8>, FigureError> {
    use svg2pdf::usvg;
    let mut fonts = usvg::fontdb::Database::new();
    fonts.load_font_data(render::FONT_DATA.to_vec());
    // plotters writes `sans-serif`; the bundled font is the one measured and drawn.
    fonts.set_sans_serif_family("DejaVu Sans");
    let options = usvg::Options {
        fontdb: std::sync::Arc::new(fonts),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| FigureError::Pdf(e.to_string()))?;
    svg2pdf::to_pdf(
        &tree,
        svg2pdf::ConversionOptions::default(),
        svg2pdf::PageOptions { dpi: 96.0 },
    )
    .map_err(|e| FigureError::Pdf(e.to_string()))
}

/// `figure` as a PDF drawn as `opts` says ([`pdf_from_svg`] of [`svg_as`]).
///
/// # Errors
/// A drawing error, or [`FigureError::Pdf`].
#[cfg(not(target_arch = "wasm32"))]
pub fn pdf_as(figure: &Figure, opts: &FigureOptions) -> Result<Vec<u8>, FigureError> {
    pdf_from_svg(&svg_as(figure, opts)?)
}

/// Stages `figure` as `<stem>.svg`, `<stem>.pdf` (not in the web build), `<stem>.png` (at
/// [`CLI_SCALE`]) and `<stem>.txt` (its [`caption`]) in `set`, drawn as `opts` says, to be
/// renamed into place with the rest of its result.
///
/// # Errors
/// A rendering error or the I/O error of any file, naming the file.
pub fn write_pair(
    figure: &Figure,
    set: &mut OutputSet,
    stem: &str,
    opts: &FigureOptions,
) -> anyhow::Result<()> {
    use anyhow::Context;
    let (svg_name, png_name) = (format!("{stem}.svg"), format!("{stem}.png"));
    let text = svg_as(figure, opts).with_context(|| format!("drawing {svg_name}"))?;
    set.write(&svg_name, text.as_bytes())?;
    #[cfg(not(target_arch = "wasm32"))]
    {
        let pdf = pdf_from_svg(&text).with_context(|| format!("drawing {stem}.pdf"))?;
        set.write(&format!("{stem}.pdf"), &pdf)?;
    }
    let bytes = png_as(figure, opts, CLI_SCALE).with_context(|| format!("drawing {png_name}"))?;
    set.write(&png_name, &bytes)?;
    set.write(&format!("{stem}.txt"), caption(figure).as_bytes())?;
    Ok(())
}

/// Stages every `(stem, figure)` of `figures` in `set` with [`write_pair`].
///
/// # Errors
/// The first failure of [`write_pair`].
pub fn write_all(
    set: &mut OutputSet,
    figures: &[(String, Figure)],
    opts: &FigureOptions,
) -> anyhow::Result<()> {
    for (stem, fig) in figures {
        write_pair(fig, set, stem, opts)?;
    }
    Ok(())
}

/// The registry entry of the rule a file names `name`: the longest registry name `name`
/// starts with (`dial_p0.5` is the dial's, `scalar_adam` is not Adam's).
fn rule_info(name: &str) -> Option<&'static crate::optim::RuleInfo> {
    crate::optim::REGISTRY
        .iter()
        .copied()
        .filter(|i| name.starts_with(i.name))
        .max_by_key(|i| i.name.len())
}

/// The name a reader sees for the rule a file names `name`: its registry title (`scalar_adam`
/// → `Scalar-Adam`), with the zoo argument of a rule that has one (`dial_p0.5` →
/// `Anisotropy dial, p = 0.5`); a name the registry does not know, as it is (a user's label).
pub fn rule_title(name: &str) -> String {
    rule_info(name)
        .and_then(|i| {
            let rest = &name[i.name.len()..];
            if rest.is_empty() {
                return Some(i.title.to_string());
            }
            let arg = rest.strip_prefix('_')?;
            let at = arg.find(|c: char| c.is_ascii_digit() || c == '-' || c == '.')?;
            Some(format!("{}, {} = {}", i.title, &arg[..at], &arg[at..]))
        })
        .unwrap_or_else(|| name.to_string())
}

/// The colour of the rule a file names `name` (its registry entry's, found as
/// [`rule_title`] finds it, so `dial_p0.3` takes the dial's), or the palette's colour number
/// `index` for a name the registry does not know: one colour per optimizer in every figure
/// and in the app.
pub fn rule_rgb(name: &str, index: usize) -> Rgb {
    rule_info(name).map_or_else(|| crate::optim::optimizer_rgb(name, index), |i| i.color)
}

/// An arm's name as a figure prints it: the rule's title ([`rule_title`]) when the name starts
/// with the rule's registry name (`adam`, `adam (stopped at 40)`), otherwise as it is.
pub fn arm_title(name: &str) -> String {
    let head = name.split(' ').next().unwrap_or(name);
    let title = rule_title(head);
    if title == head {
        name.to_string()
    } else {
        format!("{title}{}", &name[head.len()..])
    }
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
    fn rules_print_their_titles() {
        assert_eq!(rule_title("scalar_adam"), "Scalar-Adam");
        assert_eq!(rule_title("adam"), "Adam");
        assert_eq!(rule_title("dial_p0.5"), "Anisotropy dial, p = 0.5");
        assert_eq!(rule_title("my arm"), "my arm");
        assert_eq!(rule_rgb("dial_p0.3", 0), rule_rgb("dial", 5));
        assert_ne!(rule_rgb("scalar_adam", 0), rule_rgb("adam", 0));
        assert_eq!(arm_title("adam (stopped at 40)"), "Adam (stopped at 40)");
        assert_eq!(arm_title("scalar_adam"), "Scalar-Adam");
        assert_eq!(arm_title("fast adam"), "fast adam");
    }

    /// Every zlib stream of a PDF, inflated (content streams and fonts alike).
    fn inflated_streams(pdf: &[u8]) -> Vec<Vec<u8>> {
        use std::io::Read;
        let mut out = Vec::new();
        let mut at = 0;
        while let Some(k) = pdf[at..].windows(6).position(|w| w == b"stream") {
            let mut start = at + k + 6;
            if pdf.get(start) == Some(&b'\r') {
                start += 1;
            }
            if pdf.get(start) == Some(&b'\n') {
                start += 1;
            }
            let mut data = Vec::new();
            if flate2::read::ZlibDecoder::new(&pdf[start..])
                .read_to_end(&mut data)
                .is_ok()
            {
                out.push(data);
            }
            at = start;
        }
        out
    }

    /// Issue 38 item 5, measured against the SVG: the PDF's page is the SVG's size in points
    /// (user units of 1/96 inch), its font is embedded, and it shows every glyph of the SVG's
    /// texts as text.
    #[test]
    fn the_pdf_has_the_svgs_page_and_texts() {
        let fig = Figure {
            title: "A title".into(),
            body: Body::Plot {
                x: Axis::log("Adam's ε (log scale)"),
                y: Axis::linear("recovery error"),
                marks: vec![
                    Mark::line(
                        "Adam",
                        [213, 94, 0],
                        vec![[1e-8, 0.5], [1.0, 0.2]],
                        2.0,
                        Dash::Solid,
                    ),
                    Mark::points("Scalar-Adam", [0, 114, 178], vec![[1e-4, 0.1]], 3.0),
                ],
            },
        };
        for size in FigureSize::PRINT {
            let opts = FigureOptions { size, titles: true };
            let svg = svg_as(&fig, &opts).unwrap();
            let pdf = pdf_from_svg(&svg).unwrap();
            assert!(pdf.starts_with(b"%PDF-"));
            let raw = String::from_utf8_lossy(&pdf);
            let (w, h) = size.points();
            let media = format!("/MediaBox [0 0 {} {}]", w as f64 * 0.75, h as f64 * 0.75);
            assert!(
                raw.contains(&media),
                "{media} not in {:?}",
                &raw[..600.min(raw.len())]
            );
            assert!(raw.contains("/FontFile"), "the font is embedded");
            // svg2pdf shows text glyph by glyph, each at its own place: one `Tj` per
            // character of the SVG's texts, spaces included.
            let doc = roxmltree::Document::parse(&svg).unwrap();
            let texts: Vec<&str> = doc
                .descendants()
                .filter(|n| n.has_tag_name("text"))
                .filter_map(|n| n.text())
                .collect();
            let glyphs: usize = texts.iter().map(|t| t.trim().chars().count()).sum();
            let shown: usize = inflated_streams(&pdf)
                .iter()
                .map(|s| String::from_utf8_lossy(s).matches(") Tj").count())
                .sum();
            assert!(texts.len() > 8, "{texts:?}");
            assert_eq!(shown, glyphs, "{}", size.name());
        }
        assert!(matches!(pdf_from_svg("<svg"), Err(FigureError::Pdf(_))));
    }

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
