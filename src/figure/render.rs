//! Drawing a [`Figure`] with plotters, on its SVG or its bitmap backend. Every length is in
//! points times the scale `s` (pixels per point), so a 3× PNG is the 1× figure at three times
//! the resolution, text and lines included. The layout is measured: margins follow the widest
//! tick label, the legend wraps, ticks whose labels would touch are thinned, category names
//! turn upright when they do not fit side by side, and a text longer than its room shrinks a
//! little, then ends in "…".

use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::text::{axis_title, tick_labels};
use super::{
    Axis, Body, Dash, Figure, FigureOptions, FigureSize, Heatmap, Mark, Rgb, Shape, dot_radius,
    magnitude, pieces, plot_ranges,
};

/// Why a figure could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum FigureError {
    /// The requested size has no pixels or is absurdly large.
    #[error(
        "figure size {w} × {h} pixels is out of range (1 to 16384 per side, at most 64 million pixels)"
    )]
    Size {
        /// Width asked for (pixels).
        w: u32,
        /// Height asked for (pixels).
        h: u32,
    },
    /// The scale is not a number in (0, [`super::MAX_SCALE`]].
    #[error("figure scale {0} is out of range (above 0, at most 8 pixels per point)")]
    Scale(f64),
    /// plotters failed (a message from its backend).
    #[error("drawing failed: {0}")]
    Draw(String),
    /// PNG encoding failed.
    #[error("PNG encoding failed: {0}")]
    Png(String),
    /// The SVG could not be turned into a PDF.
    #[error("PDF conversion failed: {0}")]
    Pdf(String),
}

/// The bundled font every figure is measured and drawn in (DejaVu Sans).
#[cfg(not(target_arch = "wasm32"))]
pub(crate) const FONT_DATA: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");

fn draw_err<E: std::fmt::Debug>(e: E) -> FigureError {
    FigureError::Draw(format!("{e:?}"))
}

const FONT: &str = "sans-serif";

/// Registers the embedded DejaVu Sans under the family name the figures use, once. (In the web
/// build plotters measures text with the browser's fonts and registers none.)
#[cfg(not(target_arch = "wasm32"))]
fn ensure_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The font is a fixed asset; a failure here is a broken build, caught by the tests.
        let registered = plotters::style::register_font(FONT, FontStyle::Normal, FONT_DATA);
        assert!(
            registered.is_ok(),
            "assets/fonts/DejaVuSans.ttf is a valid font"
        );
    });
}

#[cfg(target_arch = "wasm32")]
fn ensure_font() {}

/// The figure as an SVG document of `size` (width, height) points, with the screen's text
/// sizes and its title ([`FigureSize::Screen`]).
///
/// # Errors
/// [`FigureError::Size`] for an empty or huge size; [`FigureError::Draw`] if plotters fails.
pub fn svg(figure: &Figure, size: (u32, u32)) -> Result<String, FigureError> {
    svg_as(
        figure,
        &FigureOptions::new(FigureSize::Screen(size.0, size.1)),
    )
}

/// The figure as an SVG document drawn as `opts` says.
///
/// # Errors
/// As [`svg`].
pub fn svg_as(figure: &Figure, opts: &FigureOptions) -> Result<String, FigureError> {
    let size = opts.size.points();
    check_size(size)?;
    ensure_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        draw(figure, &root, 1.0, &Style::new(opts))?;
        root.present().map_err(draw_err)?;
    }
    Ok(out)
}

/// The figure as PNG bytes: `size` points at `scale` pixels per point, so the image is
/// `round(w·scale) × round(h·scale)` pixels; its pHYs chunk records 96·scale dots per inch, so
/// it prints at the figure's size in points. Screen text sizes and the title, as [`svg`].
///
/// # Errors
/// [`FigureError::Size`] for an empty or huge size or a scale outside (0, 8];
/// [`FigureError::Draw`] or [`FigureError::Png`] if drawing or encoding fails.
pub fn png(figure: &Figure, size: (u32, u32), scale: f64) -> Result<Vec<u8>, FigureError> {
    png_as(
        figure,
        &FigureOptions::new(FigureSize::Screen(size.0, size.1)),
        scale,
    )
}

/// The figure as PNG bytes drawn as `opts` says, at `scale` pixels per point (see [`png`]).
///
/// # Errors
/// As [`png`].
pub fn png_as(figure: &Figure, opts: &FigureOptions, scale: f64) -> Result<Vec<u8>, FigureError> {
    let size = opts.size.points();
    if !(scale > 0.0 && scale <= super::MAX_SCALE) {
        return Err(FigureError::Scale(scale));
    }
    let px = (
        (size.0 as f64 * scale).round() as u32,
        (size.1 as f64 * scale).round() as u32,
    );
    check_size(px)?;
    // plotters' web build cannot draw text into a bitmap (it would panic).
    if cfg!(target_arch = "wasm32") {
        return Err(FigureError::Draw(
            "PNG figures are drawn by the desktop app; in the web page choose SVG".into(),
        ));
    }
    ensure_font();
    let mut buf = vec![255u8; px.0 as usize * px.1 as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut buf, px).into_drawing_area();
        draw(figure, &root, scale, &Style::new(opts))?;
        root.present().map_err(draw_err)?;
    }
    let mut bytes = Vec::new();
    {
        let mut enc = ::png::Encoder::new(&mut bytes, px.0, px.1);
        enc.set_color(::png::ColorType::Rgb);
        enc.set_depth(::png::BitDepth::Eight);
        let per_metre = (96.0 * scale / 0.0254).round() as u32;
        enc.set_pixel_dims(Some(::png::PixelDimensions {
            xppu: per_metre,
            yppu: per_metre,
            unit: ::png::Unit::Meter,
        }));
        let mut w = enc
            .write_header()
            .map_err(|e| FigureError::Png(e.to_string()))?;
        w.write_image_data(&buf)
            .map_err(|e| FigureError::Png(e.to_string()))?;
    }
    Ok(bytes)
}

fn check_size((w, h): (u32, u32)) -> Result<(), FigureError> {
    // A bitmap of 64 million pixels is 192 MB: beyond that a figure is a mistake.
    if w == 0 || h == 0 || w > 16_384 || h > 16_384 || w as u64 * h as u64 > 64 << 20 {
        return Err(FigureError::Size { w, h });
    }
    Ok(())
}

/// Text and line sizes of one [`FigureSize`]. Font sizes are plotters' (its SVG backend
/// writes `font-size` as the size / 1.24); lengths are points.
#[derive(Clone, Copy, Debug)]
struct Style {
    /// Tick labels and colour-bar numbers.
    tick: f64,
    /// Axis titles and the colour bar's caption.
    label: f64,
    /// Legend entries and the maps' titles.
    legend: f64,
    /// The figure's title.
    title: f64,
    /// Multiplies the marks' widths, radii and dashes.
    line: f64,
    /// Whether the title is drawn.
    titles: bool,
}

impl Style {
    fn new(opts: &FigureOptions) -> Self {
        // `p` typographic points at print size as a plotters font size (1/96 in units).
        let pt = |p: f64| p * 96.0 / 72.0 * 1.24;
        let (tick, label, legend, title, line) = match opts.size {
            FigureSize::Single => (pt(8.0), pt(9.0), pt(8.0), pt(9.5), 0.6),
            FigureSize::Double => (pt(8.0), pt(9.0), pt(8.0), pt(9.5), 0.7),
            FigureSize::Slide => (pt(20.0), pt(22.0), pt(20.0), pt(26.0), 1.7),
            FigureSize::Screen(..) => (12.0, 13.5, 12.5, 17.0, 1.0),
        };
        Self {
            tick,
            label,
            legend,
            title,
            line,
            titles: opts.titles,
        }
    }

    /// The least margin around the canvas and between texts.
    fn pad(&self) -> f64 {
        0.5 * self.tick
    }

    /// Space between a text and what it labels.
    fn gap(&self) -> f64 {
        0.3 * self.tick
    }

    /// Length of a major tick mark.
    fn tick_len(&self) -> f64 {
        0.35 * self.tick
    }
}

fn color(c: Rgb) -> RGBColor {
    RGBColor(c[0], c[1], c[2])
}

fn font(size: f64) -> FontDesc<'static> {
    (FONT, size).into_font()
}

/// The drawing area with its scale: positions and sizes in points, converted to pixels here.
struct Canvas<'a, DB: DrawingBackend> {
    area: &'a DrawingArea<DB, Shift>,
    s: f64,
    w: f64,
    h: f64,
}

/// The ellipsis a shortened text ends in.
const ELLIPSIS: char = '…';

impl<DB: DrawingBackend> Canvas<'_, DB> {
    fn px(&self, p: (f64, f64)) -> (i32, i32) {
        ((p.0 * self.s).round() as i32, (p.1 * self.s).round() as i32)
    }

    /// The width (points) of `text` in font size `size`.
    fn width(&self, text: &str, size: f64) -> f64 {
        match self
            .area
            .estimate_text_size(text, &font(size * self.s).into())
        {
            Ok((w, _)) => w as f64 / self.s,
            // A backend that cannot measure: a generous average glyph width.
            Err(_) => text.chars().count() as f64 * size * 0.6,
        }
    }

    /// `text` and a font size at which it fits in `room` points: `size`, or down to 85% of
    /// it, or that smaller size with the text cut short and ended by "…".
    fn fit(&self, text: &str, size: f64, room: f64) -> (String, f64) {
        if self.width(text, size) <= room {
            return (text.to_string(), size);
        }
        let small = size * 0.85;
        if self.width(text, small) <= room {
            return (text.to_string(), small);
        }
        let chars: Vec<char> = text.chars().collect();
        let (mut lo, mut hi) = (0, chars.len());
        // The longest prefix that fits with the ellipsis (binary search on its length).
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            let t: String = chars[..mid].iter().chain([&ELLIPSIS]).collect();
            if self.width(&t, small) <= room {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        if lo == 0 {
            return (String::new(), small);
        }
        let t = chars[..lo].iter().collect::<String>();
        (format!("{}{ELLIPSIS}", t.trim_end()), small)
    }

    /// Draws `text` at `at` (points) anchored by `anchor`, upright (reading upwards) with
    /// `upright`.
    fn text(
        &self,
        text: &str,
        at: (f64, f64),
        size: f64,
        anchor: (HPos, VPos),
        upright: bool,
    ) -> Result<(), FigureError> {
        if text.is_empty() {
            return Ok(());
        }
        let mut style = font(size * self.s)
            .color(&BLACK)
            .pos(Pos::new(anchor.0, anchor.1));
        if upright {
            style = style.transform(FontTransform::Rotate270);
        }
        self.area
            .draw(&Text::new(text.to_string(), self.px(at), style))
            .map_err(draw_err)
    }

    /// A straight line through `points` (points), `width` points wide.
    fn line(&self, points: &[(f64, f64)], c: RGBColor, width: f64) -> Result<(), FigureError> {
        let style = ShapeStyle {
            color: c.to_rgba(),
            filled: false,
            stroke_width: ((width * self.s).round() as u32).max(1),
        };
        let pts: Vec<(i32, i32)> = points.iter().map(|p| self.px(*p)).collect();
        self.area
            .draw(&PathElement::new(pts, style))
            .map_err(draw_err)
    }
}

fn draw<DB: DrawingBackend>(
    figure: &Figure,
    root: &DrawingArea<DB, Shift>,
    s: f64,
    st: &Style,
) -> Result<(), FigureError> {
    let (w, h) = root.dim_in_pixel();
    let c = Canvas {
        area: root,
        s,
        w: w as f64 / s,
        h: h as f64 / s,
    };
    let pad = st.pad();
    let mut top = pad;
    if st.titles && !figure.title.trim().is_empty() {
        let (t, size) = c.fit(figure.title.trim(), st.title, c.w - 2.0 * pad);
        c.text(&t, (c.w / 2.0, top), size, (HPos::Center, VPos::Top), false)?;
        top += size * 1.3;
    }
    match &figure.body {
        Body::Plot { x, y, marks } => draw_plot(&c, top, x, y, marks, st),
        Body::Heatmaps {
            maps,
            caption,
            x_label,
            y_label,
        } => draw_heatmaps(&c, top, maps, [caption, x_label, y_label], st),
    }
}

/// A legend entry's swatch.
#[derive(Clone, Copy)]
enum Swatch {
    Line(f64, Dash),
    Dot,
    Block,
}

fn swatch(m: &Mark) -> Swatch {
    match &m.shape {
        Shape::Line { width, dash, .. } => Swatch::Line(*width, *dash),
        Shape::HLine { dash, .. } | Shape::VLine { dash, .. } => Swatch::Line(1.5, *dash),
        Shape::Points { .. } => Swatch::Dot,
        Shape::Bars { .. } | Shape::Band { .. } => Swatch::Block,
    }
}

/// Dash and gap lengths (points) of `dash` for a line `scale` times the screen's width.
fn dash_lengths(dash: Dash, scale: f64) -> Option<(f64, f64)> {
    match dash {
        Dash::Solid => None,
        Dash::Dashed => Some((6.0 * scale, 4.0 * scale)),
        Dash::Dotted => Some((2.0 * scale, 3.0 * scale)),
    }
}

/// Draws the legend (named marks, wrapped into rows) from `left` to the canvas's right edge,
/// its top at `top`; returns its bottom (points).
fn draw_legend<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    top: f64,
    left: f64,
    marks: &[Mark],
    st: &Style,
) -> Result<f64, FigureError> {
    let size = st.legend;
    let row_h = size * 1.25;
    let sw = 1.8 * size;
    let (gap, spacing) = (0.4 * size, 1.0 * size);
    let right = c.w - st.pad();
    let mut seen: Vec<&Mark> = Vec::new();
    for m in marks.iter().filter(|m| !m.name.is_empty()) {
        if !seen.iter().any(|s| s.name == m.name) {
            seen.push(m);
        }
    }
    // A grid of equal columns: as many as the widest entry allows once names may shrink by
    // the 15% that `fit` allows (a name wider than its column then ends in "…"), since a
    // legend one row shorter leaves a paper's column more room for the plot.
    let widest = seen
        .iter()
        .map(|m| sw + gap + c.width(&m.name, size))
        .fold(0.0, f64::max);
    let avail = right - left;
    let shrunk = sw + gap + 0.86 * (widest - sw - gap);
    let cols =
        (((avail + spacing) / (shrunk + spacing)).floor() as usize).clamp(1, seen.len().max(1));
    let col_w = (avail + spacing) / cols as f64;
    // One size for every name: the smaller one when the widest needs it.
    let uniform = if widest + spacing > col_w {
        0.85 * size
    } else {
        size
    };
    let mut any = false;
    let mut last = top;
    let y0 = top;
    for (k, m) in seen.into_iter().enumerate() {
        let (x, y) = (
            left + (k % cols) as f64 * col_w,
            y0 + (k / cols) as f64 * row_h,
        );
        let room = col_w - spacing - sw - gap;
        let (name, tsize) = c.fit(&m.name, size, room);
        let tsize = tsize.min(uniform);
        let bottom = y;
        any = true;
        let cy = y + row_h / 2.0;
        let col = color(m.color);
        match swatch(m) {
            Swatch::Line(w, dash) => {
                let style = ShapeStyle {
                    color: col.to_rgba(),
                    filled: false,
                    stroke_width: ((w * st.line * c.s).round() as u32).max(1),
                };
                let pts = [c.px((x, cy)), c.px((x + sw, cy))];
                match dash_lengths(dash, st.line) {
                    None => c.area.draw(&PathElement::new(pts, style)),
                    Some((on, off)) => c.area.draw(&DashedPathElement::new(
                        pts,
                        ((on * c.s) as i32).max(1),
                        ((off * c.s) as i32).max(1),
                        style,
                    )),
                }
                .map_err(draw_err)?;
            }
            Swatch::Dot => {
                let r = ((3.5 * st.line * c.s).round() as i32).max(2);
                c.area
                    .draw(&Circle::new(c.px((x + sw / 2.0, cy)), r, col.filled()))
                    .map_err(draw_err)?;
            }
            Swatch::Block => {
                let h = 0.3 * size;
                c.area
                    .draw(&Rectangle::new(
                        [c.px((x, cy - h)), c.px((x + sw, cy + h))],
                        col.mix(m.opacity.max(0.35)).filled(),
                    ))
                    .map_err(draw_err)?;
            }
        }
        c.text(
            &name,
            (x + sw + gap, cy),
            tsize,
            (HPos::Left, VPos::Center),
            false,
        )?;
        last = last.max(bottom);
    }
    Ok(if any { last + row_h + 0.3 * size } else { top })
}

/// The indices of `pos` (increasing or decreasing pixel positions of labels `sizes` wide
/// along the axis) to label: every k-th from the first, for the least k at which neighbours
/// stay `gap` apart.
fn thinned(pos: &[f64], sizes: &[f64], gap: f64) -> Vec<usize> {
    for k in 1..=pos.len().max(1) {
        let kept: Vec<usize> = (0..pos.len()).step_by(k).collect();
        let clear = kept
            .windows(2)
            .all(|w| (pos[w[1]] - pos[w[0]]).abs() >= (sizes[w[0]] + sizes[w[1]]) / 2.0 + gap);
        if clear {
            return kept;
        }
    }
    vec![0]
}

/// One axis's ticks as drawn: positions (drawing coordinates), labels, and which of them carry
/// their label; and the axis title with any common power of ten.
struct Ticks {
    at: Vec<f64>,
    labels: Vec<String>,
    title: String,
}

fn ticks_of(axis: &Axis, lo: f64, hi: f64) -> Ticks {
    let (at, step) = axis.tick_marks(lo, hi);
    let (labels, exp) = tick_labels(axis, &at, step);
    Ticks {
        at,
        labels,
        title: axis_title(&axis.label, exp),
    }
}

fn draw_plot<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    top: f64,
    x_axis: &Axis,
    y_axis: &Axis,
    marks: &[Mark],
    st: &Style,
) -> Result<(), FigureError> {
    let (pad, gap, tick_len) = (st.pad(), st.gap(), st.tick_len());
    let line_h = st.tick;
    let ([x0, x1], [y0, y1]) = plot_ranges(x_axis, y_axis, marks);
    let yt = ticks_of(y_axis, y0, y1);
    let xt = ticks_of(x_axis, x0, x1);
    let y_title_w = if yt.title.is_empty() {
        0.0
    } else {
        st.label + gap
    };
    // The tick labels' column may take at most 40% of the width (longer ones end in "…").
    let ywidth = |l: &String| c.width(l, st.tick).min(0.4 * c.w);
    let yw = yt.labels.iter().map(ywidth).fold(0.0, f64::max);
    let left = pad + y_title_w + yw + gap + tick_len;
    let xw: Vec<f64> = xt.labels.iter().map(|l| c.width(l, st.tick)).collect();
    let right = pad.max(xw.last().copied().unwrap_or(0.0) / 2.0 + gap);
    let pw = (c.w - left - right).max(1.0);
    let legend_bottom = draw_legend(c, top, pad, marks, st)?;
    let to_x = |t: f64| left + (t - x0) / (x1 - x0) * pw;
    // Category names turn upright when they would touch side by side.
    let xpos: Vec<f64> = xt.at.iter().map(|&t| to_x(t)).collect();
    let upright = !x_axis.categories.is_empty() && thinned(&xpos, &xw, gap).len() < xpos.len();
    let upright_room = 0.4 * c.h;
    let x_label_h = if upright {
        xw.iter().fold(0.0f64, |m, w| m.max(w.min(upright_room)))
    } else {
        line_h
    };
    let x_title_h = if xt.title.is_empty() {
        0.0
    } else {
        gap + st.label
    };
    let bottom = tick_len + gap + x_label_h + x_title_h + pad;
    let ptop = legend_bottom + 0.6 * line_h;
    let ph = (c.h - bottom - ptop).max(1.0);
    let to_y = |t: f64| ptop + ph - (t - y0) / (y1 - y0) * ph;
    let ypos: Vec<f64> = yt.at.iter().map(|&t| to_y(t)).collect();
    let x_kept = if upright {
        thinned(&xpos, &vec![line_h; xpos.len()], 0.3 * gap)
    } else {
        thinned(&xpos, &xw, 2.0 * gap)
    };
    let y_kept = thinned(&ypos, &vec![line_h; ypos.len()], 0.5 * gap);

    let plot = c.area.clone().shrink(
        c.px((left, ptop)),
        ((pw * c.s).round() as u32, (ph * c.s).round() as u32),
    );
    let mut chart = ChartBuilder::on(&plot)
        .build_cartesian_2d(Ticked::new(x0, x1), Ticked::new(y0, y1))
        .map_err(draw_err)?;
    // Grid lines at the labelled ticks, under the marks.
    let at = |chart: &Chart<'_, DB>, p: (f64, f64)| {
        let (a, b) = chart.backend_coord(&p);
        (a as f64 / c.s, b as f64 / c.s)
    };
    let grid = RGBColor(225, 225, 225);
    // Axes, ticks and grid one point wide (0.75 pt, about matplotlib's 0.8).
    let thin = 1.0;
    for &i in &x_kept {
        let (a, b) = (at(&chart, (xt.at[i], y0)), at(&chart, (xt.at[i], y1)));
        c.line(&[a, b], grid, thin)?;
    }
    for &i in &y_kept {
        let (a, b) = (at(&chart, (x0, yt.at[i])), at(&chart, (x1, yt.at[i])));
        c.line(&[a, b], grid, thin)?;
    }
    draw_marks(
        &mut chart,
        x_axis,
        y_axis,
        marks,
        ([x0, x1], [y0, y1]),
        c.s,
        st,
    )?;
    // The axes, their ticks (minor ones on log axes) and labels.
    let (bl, br, tl) = (
        at(&chart, (x0, y0)),
        at(&chart, (x1, y0)),
        at(&chart, (x0, y1)),
    );
    c.line(&[tl, bl, br], BLACK, thin)?;
    for (k, &t) in xt.at.iter().enumerate() {
        let (px, py) = at(&chart, (t, y0));
        c.line(&[(px, py), (px, py + tick_len)], BLACK, thin)?;
        if x_kept.contains(&k) {
            if upright {
                let (l, size) = c.fit(&xt.labels[k], st.tick, upright_room);
                c.text(
                    &l,
                    (px, py + tick_len + gap),
                    size,
                    (HPos::Right, VPos::Center),
                    true,
                )?;
            } else {
                c.text(
                    &xt.labels[k],
                    (px, py + tick_len + gap),
                    st.tick,
                    (HPos::Center, VPos::Top),
                    false,
                )?;
            }
        }
    }
    for (k, &t) in yt.at.iter().enumerate() {
        let (px, py) = at(&chart, (x0, t));
        c.line(&[(px, py), (px - tick_len, py)], BLACK, thin)?;
        if y_kept.contains(&k) {
            let (l, size) = c.fit(&yt.labels[k], st.tick, 0.4 * c.w);
            c.text(
                &l,
                (px - tick_len - gap, py),
                size,
                (HPos::Right, VPos::Center),
                false,
            )?;
        }
    }
    // Minor ticks where decades are far enough apart to show them.
    let decade_px = |span: f64, len: f64| len / span.max(1e-12);
    if decade_px(x1 - x0, pw) >= 3.0 * line_h {
        for t in x_axis.minor_marks(x0, x1) {
            let (px, py) = at(&chart, (t, y0));
            c.line(&[(px, py), (px, py + 0.55 * tick_len)], BLACK, thin)?;
        }
    }
    if decade_px(y1 - y0, ph) >= 3.0 * line_h {
        for t in y_axis.minor_marks(y0, y1) {
            let (px, py) = at(&chart, (x0, t));
            c.line(&[(px, py), (px - 0.55 * tick_len, py)], BLACK, thin)?;
        }
    }
    let (xtitle, xsize) = c.fit(&xt.title, st.label, c.w - 2.0 * pad);
    let mid_x = (left + pw / 2.0)
        .max(pad + c.width(&xtitle, xsize) / 2.0)
        .min(c.w - pad - c.width(&xtitle, xsize) / 2.0);
    c.text(
        &xtitle,
        (mid_x, c.h - pad),
        xsize,
        (HPos::Center, VPos::Bottom),
        false,
    )?;
    // Upright, centred on the plot, clear of the legend above it (whose swatches share its
    // column) and of the x axis's title below it.
    let mid_y = ptop + ph / 2.0;
    let room = 2.0 * (mid_y - legend_bottom).min(c.h - pad - x_title_h - mid_y);
    let (ytitle, ysize) = c.fit(&yt.title, st.label, room);
    c.text(
        &ytitle,
        (pad + st.label / 2.0, mid_y),
        ysize,
        (HPos::Center, VPos::Center),
        true,
    )
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>;

/// Draws `marks` on `chart` over the ranges `[x0, x1] × [y0, y1]` (drawing coordinates).
fn draw_marks<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    x_axis: &Axis,
    y_axis: &Axis,
    marks: &[Mark],
    ([x0, x1], [y0, y1]): ([f64; 2], [f64; 2]),
    s: f64,
    st: &Style,
) -> Result<(), FigureError> {
    let k = st.line * s;
    for m in marks {
        let c = color(m.color).mix(m.opacity);
        let stroke = |w: f64| ShapeStyle {
            color: c,
            filled: false,
            stroke_width: ((w * k).round() as u32).max(1),
        };
        match &m.shape {
            Shape::Line {
                points,
                width,
                dash,
            } => {
                for piece in pieces(points, x_axis, y_axis) {
                    if let [p] = piece[..] {
                        // A one-point line (one sweep value, one sample) is a dot, not nothing.
                        let r = ((dot_radius(*width) * k).round() as i32).max(1);
                        chart
                            .draw_series(std::iter::once(Circle::new(p, r, c.filled())))
                            .map_err(draw_err)?;
                    } else {
                        draw_path(chart, piece, stroke(*width), *dash, k)?;
                    }
                }
            }
            Shape::HLine { y, dash } => {
                if let Some(t) = y_axis.to_drawing(*y) {
                    draw_path(chart, vec![(x0, t), (x1, t)], stroke(1.5), *dash, k)?;
                }
            }
            Shape::VLine { x, dash } => {
                if let Some(t) = x_axis.to_drawing(*x) {
                    draw_path(chart, vec![(t, y0), (t, y1)], stroke(1.5), *dash, k)?;
                }
            }
            Shape::Points { points, radius } => {
                let r = ((radius * k).round() as i32).max(1);
                let dots: Vec<(f64, f64)> = points
                    .iter()
                    .filter_map(|p| Some((x_axis.to_drawing(p[0])?, y_axis.to_drawing(p[1])?)))
                    .collect();
                chart
                    .draw_series(dots.into_iter().map(|p| Circle::new(p, r, c.filled())))
                    .map_err(draw_err)?;
            }
            Shape::Bars { points, width } => {
                let base = if y_axis.log { y0 } else { 0.0 };
                let bars: Vec<[(f64, f64); 2]> = points
                    .iter()
                    .filter_map(|p| {
                        let (a, b) = (
                            x_axis.to_drawing(p[0] - width / 2.0)?,
                            x_axis.to_drawing(p[0] + width / 2.0)?,
                        );
                        Some([(a, base), (b, y_axis.to_drawing(p[1])?)])
                    })
                    .collect();
                chart
                    .draw_series(bars.into_iter().map(|r| Rectangle::new(r, c.filled())))
                    .map_err(draw_err)?;
            }
            Shape::Band { x, lo, hi } => {
                let n = x.len().min(lo.len()).min(hi.len());
                let (lower, upper): (Vec<_>, Vec<_>) = (0..n)
                    .filter_map(|i| {
                        let t = x_axis.to_drawing(x[i])?;
                        Some((
                            (t, y_axis.to_drawing(lo[i])?),
                            (t, y_axis.to_drawing(hi[i])?),
                        ))
                    })
                    .unzip();
                if lower.len() >= 2 {
                    let poly: Vec<(f64, f64)> =
                        lower.into_iter().chain(upper.into_iter().rev()).collect();
                    chart
                        .draw_series(std::iter::once(Polygon::new(poly, c.filled())))
                        .map_err(draw_err)?;
                }
            }
        }
    }
    Ok(())
}

/// A linear f64 coordinate from `lo` to `hi` with no ticks of its own (the renderer draws
/// them).
#[derive(Clone)]
struct Ticked {
    lo: f64,
    hi: f64,
}

impl Ticked {
    fn new(lo: f64, hi: f64) -> Self {
        Self { lo, hi }
    }
}

impl Ranged for Ticked {
    type ValueType = f64;
    type FormatOption = NoDefaultFormatting;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = (v - self.lo) / (self.hi - self.lo);
        (limit.0 as f64 + t * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, _hint: H) -> Vec<f64> {
        Vec::new()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

impl ValueFormatter<f64> for Ticked {
    fn format(v: &f64) -> String {
        format!("{v}")
    }
}

/// Draws a line through `points` (drawing coordinates) dashed as `dash`, its dashes `k`
/// pixels per screen point.
fn draw_path<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    points: Vec<(f64, f64)>,
    style: ShapeStyle,
    dash: Dash,
    k: f64,
) -> Result<(), FigureError> {
    let r = match dash_lengths(dash, k) {
        None => chart
            .draw_series(LineSeries::new(points, style))
            .map(|_| ()),
        Some((on, off)) => chart
            .draw_series(DashedLineSeries::new(
                points,
                (on.round() as i32).max(1),
                (off.round() as i32).max(1),
                style,
            ))
            .map(|_| ()),
    };
    r.map_err(draw_err)
}

/// The colour bar's ticks.
const BAR_TICKS: [(f64, &str); 5] = [
    (0.0, "0.00"),
    (0.25, "0.25"),
    (0.5, "0.50"),
    (0.75, "0.75"),
    (1.0, "1.00"),
];

/// Draws the maps in a grid of at most three columns below `top`, `labels` (colour bar's
/// caption, columns' label, rows' label) around them, and the colour bar on the right.
fn draw_heatmaps<DB: DrawingBackend>(
    c: &Canvas<'_, DB>,
    top: f64,
    maps: &[Heatmap],
    [caption, x_label, y_label]: [&String; 3],
    st: &Style,
) -> Result<(), FigureError> {
    let (pad, gap, tick_len) = (st.pad(), st.gap(), st.tick_len());
    let left = pad
        + if y_label.is_empty() {
            0.0
        } else {
            st.label + gap
        };
    let bar_w = 0.8 * st.tick;
    let tick_w = BAR_TICKS
        .iter()
        .map(|(_, l)| c.width(l, st.tick))
        .fold(0.0, f64::max);
    let caption_w = if caption.is_empty() {
        0.0
    } else {
        gap + st.label
    };
    let bar_block = 2.0 * gap + bar_w + tick_len + gap + tick_w + caption_w;
    let maps_w = (c.w - left - pad - bar_block).max(1.0);
    let n = maps.len().max(1);
    let cols = n.min(3);
    let rows = n.div_ceil(3);
    let cell_w = ((maps_w - gap * (cols - 1) as f64) / cols as f64).max(1.0);
    let title_h = st.legend * 1.3;
    let bottom = c.h
        - pad
        - if x_label.is_empty() {
            0.0
        } else {
            st.label + gap
        };
    let cell_h = ((bottom - top - gap * (rows - 1) as f64) / rows as f64).max(1.0);
    let outline = ShapeStyle {
        color: RGBColor(90, 90, 90).to_rgba(),
        filled: false,
        stroke_width: c.s.round().max(1.0) as u32,
    };
    let mut maps_bottom = top + title_h;
    for (k, map) in maps.iter().enumerate() {
        let x = left + (k % cols) as f64 * (cell_w + gap);
        let y = top + (k / cols) as f64 * (cell_h + gap);
        let (title, size) = c.fit(&map.title, st.legend, cell_w);
        c.text(
            &title,
            (x, y + title_h / 2.0),
            size,
            (HPos::Left, VPos::Center),
            false,
        )?;
        let (map_top, map_bottom) = (y + title_h, y + cell_h);
        maps_bottom = maps_bottom.max(map_bottom);
        let (r_n, c_n) = map.values.shape();
        if r_n == 0 || c_n == 0 {
            continue;
        }
        let (x0, y0) = c.px((x, map_top));
        let (x1, y1) = c.px((x + cell_w, map_bottom));
        for r in 0..r_n {
            for col in 0..c_n {
                let cx0 = x0 + (col as i64 * (x1 - x0) as i64 / c_n as i64) as i32;
                let cx1 = x0 + ((col + 1) as i64 * (x1 - x0) as i64 / c_n as i64) as i32;
                let cy0 = y0 + (r as i64 * (y1 - y0) as i64 / r_n as i64) as i32;
                let cy1 = y0 + ((r + 1) as i64 * (y1 - y0) as i64 / r_n as i64) as i32;
                c.area
                    .draw(&Rectangle::new(
                        [(cx0, cy0), (cx1, cy1)],
                        color(magnitude(map.values[(r, col)], false)).filled(),
                    ))
                    .map_err(draw_err)?;
            }
        }
        c.area
            .draw(&Rectangle::new([(x0, y0), (x1, y1)], outline))
            .map_err(draw_err)?;
    }
    // The axes' labels: the columns' below the grid, the rows' upright on its left.
    let grid_w = cols as f64 * cell_w + gap * (cols - 1) as f64;
    let (xl, xsize) = c.fit(x_label, st.label, grid_w);
    c.text(
        &xl,
        (left + grid_w / 2.0, c.h - pad),
        xsize,
        (HPos::Center, VPos::Bottom),
        false,
    )?;
    let mid_y = (top + title_h + maps_bottom) / 2.0;
    let (yl, ysize) = c.fit(y_label, st.label, maps_bottom - top - title_h);
    c.text(
        &yl,
        (pad + st.label / 2.0, mid_y),
        ysize,
        (HPos::Center, VPos::Center),
        true,
    )?;
    // The colour bar: 64 steps from 0 (bottom) to 1 (top).
    let bx = left + maps_w + 2.0 * gap;
    let (btop, bbot) = (top + title_h, maps_bottom);
    let steps = 64;
    for i in 0..steps {
        let y1 = bbot - i as f64 * (bbot - btop) / steps as f64;
        let y0 = bbot - (i + 1) as f64 * (bbot - btop) / steps as f64;
        let v = (i as f64 + 0.5) / steps as f64;
        c.area
            .draw(&Rectangle::new(
                [c.px((bx, y0)), c.px((bx + bar_w, y1))],
                color(magnitude(v, false)).filled(),
            ))
            .map_err(draw_err)?;
    }
    c.area
        .draw(&Rectangle::new(
            [c.px((bx, btop)), c.px((bx + bar_w, bbot))],
            outline,
        ))
        .map_err(draw_err)?;
    let ypos: Vec<f64> = BAR_TICKS
        .iter()
        .map(|(t, _)| bbot - t * (bbot - btop))
        .collect();
    let kept = thinned(&ypos, &[st.tick; 5], 0.5 * gap);
    for (k, (_, label)) in BAR_TICKS.iter().enumerate() {
        let y = ypos[k];
        c.line(&[(bx + bar_w, y), (bx + bar_w + tick_len, y)], BLACK, 1.0)?;
        if kept.contains(&k) {
            c.text(
                label,
                (bx + bar_w + tick_len + gap, y),
                st.tick,
                (HPos::Left, VPos::Center),
                false,
            )?;
        }
    }
    let (cap, csize) = c.fit(caption, st.label, bbot - btop + title_h);
    c.text(
        &cap,
        (c.w - pad - st.label / 2.0, (btop + bbot) / 2.0),
        csize,
        (HPos::Center, VPos::Center),
        true,
    )
}
