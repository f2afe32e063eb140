//! Drawing a [`Figure`] with plotters, on its SVG or its bitmap backend. Every length is in
//! points times the scale `s` (pixels per point), so a 3× PNG is the 1× figure at three times
//! the resolution, text and lines included.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::{Axis, Body, Dash, Figure, Heatmap, Mark, Rgb, Shape, blues};

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
}

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
        let bytes: &'static [u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
        // The font is a fixed asset; a failure here is a broken build, caught by the tests.
        let registered = plotters::style::register_font(FONT, FontStyle::Normal, bytes);
        assert!(
            registered.is_ok(),
            "assets/fonts/DejaVuSans.ttf is a valid font"
        );
    });
}

#[cfg(target_arch = "wasm32")]
fn ensure_font() {}

/// The figure as an SVG document of `size` (width, height) points.
///
/// # Errors
/// [`FigureError::Size`] for an empty or huge size; [`FigureError::Draw`] if plotters fails.
pub fn svg(figure: &Figure, size: (u32, u32)) -> Result<String, FigureError> {
    check_size(size)?;
    ensure_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(draw_err)?;
        draw(figure, &root, 1.0)?;
        root.present().map_err(draw_err)?;
    }
    Ok(out)
}

/// The figure as PNG bytes: `size` points at `scale` pixels per point, so the image is
/// `round(w·scale) × round(h·scale)` pixels; its pHYs chunk records 96·scale dots per inch, so
/// it prints at the figure's size in points.
///
/// # Errors
/// [`FigureError::Size`] for an empty or huge size or a scale outside (0, 8];
/// [`FigureError::Draw`] or [`FigureError::Png`] if drawing or encoding fails.
pub fn png(figure: &Figure, size: (u32, u32), scale: f64) -> Result<Vec<u8>, FigureError> {
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
        draw(figure, &root, scale)?;
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

fn color(c: Rgb) -> RGBColor {
    RGBColor(c[0], c[1], c[2])
}

fn font(size: f64) -> FontDesc<'static> {
    (FONT, size).into_font()
}

fn draw<DB: DrawingBackend>(
    figure: &Figure,
    root: &DrawingArea<DB, Shift>,
    s: f64,
) -> Result<(), FigureError> {
    let margin = (10.0 * s) as u32;
    let root = root.margin(margin, margin, margin, margin);
    let title_style = font(17.0 * s).color(&BLACK);
    let body = root.titled(&figure.title, title_style).map_err(draw_err)?;
    match &figure.body {
        Body::Plot { x, y, marks } => draw_plot(&body, x, y, marks, s),
        Body::Heatmaps { maps, caption } => draw_heatmaps(&body, maps, caption, s),
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

/// Draws the legend (named marks, wrapped into rows) at the top of `area`; returns its height
/// in pixels.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    marks: &[Mark],
    s: f64,
) -> Result<u32, FigureError> {
    let style = font(12.5 * s).color(&BLACK);
    let row_h = (19.0 * s) as i32;
    let sw = (24.0 * s) as i32;
    let width = area.dim_in_pixel().0 as i32;
    let (mut x, mut y) = ((60.0 * s) as i32, 0i32);
    let mut seen: Vec<&str> = Vec::new();
    let mut any = false;
    for m in marks.iter().filter(|m| !m.name.is_empty()) {
        if seen.contains(&m.name.as_str()) {
            continue;
        }
        seen.push(&m.name);
        let (tw, _) = area.estimate_text_size(&m.name, &style).map_err(draw_err)?;
        let entry = sw + (6.0 * s) as i32 + tw as i32 + (16.0 * s) as i32;
        if x + entry > width && x > (60.0 * s) as i32 {
            x = (60.0 * s) as i32;
            y += row_h;
        }
        any = true;
        let cy = y + row_h / 2;
        let c = color(m.color);
        match swatch(m) {
            Swatch::Line(w, dash) => {
                let stroke = ShapeStyle {
                    color: c.to_rgba(),
                    filled: false,
                    stroke_width: ((w * s).round() as u32).max(1),
                };
                let pts = [(x, cy), (x + sw, cy)];
                match dash {
                    Dash::Solid => area.draw(&PathElement::new(pts, stroke)),
                    Dash::Dashed => area.draw(&DashedPathElement::new(
                        pts,
                        (6.0 * s) as i32,
                        (4.0 * s) as i32,
                        stroke,
                    )),
                    Dash::Dotted => area.draw(&DashedPathElement::new(
                        pts,
                        (2.0 * s) as i32,
                        (3.0 * s) as i32,
                        stroke,
                    )),
                }
                .map_err(draw_err)?;
            }
            Swatch::Dot => {
                area.draw(&Circle::new((x + sw / 2, cy), (4.0 * s) as i32, c.filled()))
                    .map_err(draw_err)?;
            }
            Swatch::Block => {
                let h = (5.0 * s) as i32;
                area.draw(&Rectangle::new(
                    [(x, cy - h), (x + sw, cy + h)],
                    c.mix(m.opacity.max(0.35)).filled(),
                ))
                .map_err(draw_err)?;
            }
        }
        area.draw(&Text::new(
            m.name.clone(),
            (x + sw + (6.0 * s) as i32, cy - (7.0 * s) as i32),
            style.clone(),
        ))
        .map_err(draw_err)?;
        x += entry;
    }
    Ok(if any {
        (y + row_h + (4.0 * s) as i32) as u32
    } else {
        0
    })
}

/// An axis mapped to a linear drawing coordinate: log10 for log axes, negated when reversed.
struct Mapped<'a> {
    axis: &'a Axis,
}

impl Mapped<'_> {
    /// The drawing coordinate of the data value `v` (None if it cannot be drawn).
    fn to(&self, v: f64) -> Option<f64> {
        if !v.is_finite() || (self.axis.log && v <= 0.0) {
            return None;
        }
        let t = if self.axis.log { v.log10() } else { v };
        Some(if self.axis.reversed { -t } else { t })
    }

    /// The data value shown at drawing coordinate `t` (for tick labels); `step` is the tick
    /// spacing, 0 for ticks given explicitly.
    fn label(&self, t: f64, step: f64) -> String {
        let t = if self.axis.reversed { -t } else { t };
        if step == 0.0 {
            return significant(if self.axis.log { 10f64.powf(t) } else { t });
        }
        if !self.axis.categories.is_empty() {
            let i = t.round();
            return if (t - i).abs() < 1e-6 && i >= 0.0 {
                self.axis
                    .categories
                    .get(i as usize)
                    .cloned()
                    .unwrap_or_default()
            } else {
                String::new()
            };
        }
        if self.axis.log {
            if step >= 1.0 {
                format!("1e{}", t.round() as i64)
            } else {
                significant(10f64.powf(t))
            }
        } else {
            number(t, step)
        }
    }
}

/// `v` printed with as many decimals as `step` needs; large or tiny magnitudes in e-notation
/// with as many digits as `step` needs.
fn number(v: f64, step: f64) -> String {
    let v = if v.abs() < step * 1e-9 { 0.0 } else { v };
    if v != 0.0 && (v.abs() >= 1e5 || v.abs() < 1e-3) {
        let digits = (v.abs().log10().floor() - step.log10().floor()).clamp(0.0, 6.0) as usize;
        return format!("{v:.digits$e}");
    }
    let decimals = (-step.log10().floor()).clamp(0.0, 6.0) as usize;
    format!("{v:.decimals$}")
}

/// `v` to four significant digits, trailing zeros dropped: `0.25`, `1500`, `2e-9`.
fn significant(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor();
    if (-3.0..5.0).contains(&mag) {
        let decimals = (3.0 - mag).max(0.0) as usize;
        let text = format!("{v:.decimals$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    } else {
        let text = format!("{v:.3e}");
        let (m, e) = text.split_once('e').unwrap_or((&text, "0"));
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.')
        } else {
            m
        };
        format!("{m}e{e}")
    }
}

/// The drawing range of an axis over every value in `values` (already mapped), padded.
fn range(values: &[f64], categorical: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    if !(lo.is_finite() && hi.is_finite()) {
        return (0.0, 1.0);
    }
    if categorical {
        return (lo - 0.6, hi + 0.6);
    }
    if hi - lo < 1e-12 * lo.abs().max(1.0) {
        let d = (lo.abs() * 0.1).max(0.5);
        return (lo - d, hi + d);
    }
    let pad = (hi - lo) * 0.04;
    lo -= pad;
    hi += pad;
    (lo, hi)
}

/// Tick positions (drawing coordinates) in `[lo, hi]` and their spacing: integers for
/// categories, decades for log axes spanning at least one, otherwise 1-2-5 steps.
fn ticks(axis: &Axis, lo: f64, hi: f64) -> (Vec<f64>, f64) {
    if !axis.ticks.is_empty() {
        let m = Mapped { axis };
        let v = axis
            .ticks
            .iter()
            .filter_map(|&t| m.to(t))
            .filter(|t| *t >= lo && *t <= hi)
            .collect();
        return (v, 0.0);
    }
    if !axis.categories.is_empty() {
        let v = (0..axis.categories.len())
            .map(|i| if axis.reversed { -(i as f64) } else { i as f64 })
            .filter(|t| *t >= lo && *t <= hi)
            .collect();
        return (v, 1.0);
    }
    let span = hi - lo;
    if axis.log && span < 1.5 {
        return (narrow_log_ticks(axis, lo, hi), 0.5);
    }
    let step = if axis.log && span >= 1.5 {
        (span / 8.0).ceil().max(1.0)
    } else {
        let raw = span / 6.0;
        let mag = 10f64.powf(raw.log10().floor());
        let f = raw / mag;
        mag * if f < 1.5 {
            1.0
        } else if f < 3.5 {
            2.0
        } else if f < 7.5 {
            5.0
        } else {
            10.0
        }
    };
    let mut out = Vec::new();
    let mut t = (lo / step).ceil() * step;
    while t <= hi + step * 1e-9 && out.len() < 64 {
        out.push(t);
        t += step;
    }
    (out, step)
}

/// Ticks of a log axis spanning less than a decade and a half: 1, 2 and 5 times powers of ten
/// (every digit when that gives fewer than two), as drawing coordinates in `[lo, hi]`.
fn narrow_log_ticks(axis: &Axis, lo: f64, hi: f64) -> Vec<f64> {
    let m = Mapped { axis };
    let (a, b) = if axis.reversed { (-hi, -lo) } else { (lo, hi) };
    let pick = |digits: &[f64]| -> Vec<f64> {
        let mut out = Vec::new();
        for k in (a.floor() as i64)..=(b.ceil() as i64) {
            for d in digits {
                let v = d * 10f64.powi(k as i32);
                if let Some(t) = m.to(v)
                    && t >= lo
                    && t <= hi
                {
                    out.push(t);
                }
            }
        }
        out
    };
    let ticks = pick(&[1.0, 2.0, 5.0]);
    if ticks.len() >= 2 {
        ticks
    } else {
        pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    }
}

fn mark_values(m: &Mark, x: &Mapped, y: &Mapped, xs: &mut Vec<f64>, ys: &mut Vec<f64>) {
    let mut push = |px: f64, py: f64| {
        if let (Some(a), Some(b)) = (x.to(px), y.to(py)) {
            xs.push(a);
            ys.push(b);
        }
    };
    match &m.shape {
        Shape::Line { points, .. } | Shape::Points { points, .. } | Shape::Bars { points, .. } => {
            for p in points {
                push(p[0], p[1]);
            }
        }
        Shape::Band { x: bx, lo, hi } => {
            for i in 0..bx.len().min(lo.len()).min(hi.len()) {
                push(bx[i], lo[i]);
                push(bx[i], hi[i]);
            }
        }
        Shape::HLine { y: v, .. } => ys.extend(y.to(*v)),
        Shape::VLine { x: v, .. } => xs.extend(x.to(*v)),
    }
}

fn draw_plot<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x_axis: &Axis,
    y_axis: &Axis,
    marks: &[Mark],
    s: f64,
) -> Result<(), FigureError> {
    let legend_h = draw_legend(area, marks, s)?;
    let (_, plot_area) = area.split_vertically(legend_h);
    let (xm, ym) = (Mapped { axis: x_axis }, Mapped { axis: y_axis });
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for m in marks {
        mark_values(m, &xm, &ym, &mut xs, &mut ys);
        if let Shape::Bars { .. } = m.shape
            && !y_axis.log
        {
            ys.push(0.0);
        }
    }
    xs.extend(x_axis.include.iter().filter_map(|v| xm.to(*v)));
    ys.extend(y_axis.include.iter().filter_map(|v| ym.to(*v)));
    if !x_axis.categories.is_empty() {
        xs.extend(
            [0.0, x_axis.categories.len() as f64 - 1.0]
                .iter()
                .filter_map(|v| xm.to(*v)),
        );
    }
    let (x0, x1) = range(&xs, !x_axis.categories.is_empty());
    let (y0, y1) = range(&ys, !y_axis.categories.is_empty());
    let (xt, xstep) = ticks(x_axis, x0, x1);
    let (yt, ystep) = ticks(y_axis, y0, y1);
    let mut chart = ChartBuilder::on(&plot_area)
        .margin_right((14.0 * s) as u32)
        .margin_top((6.0 * s) as u32)
        .x_label_area_size((46.0 * s) as u32)
        .y_label_area_size((70.0 * s) as u32)
        .build_cartesian_2d(Ticked::new(x0, x1, xt), Ticked::new(y0, y1, yt))
        .map_err(draw_err)?;
    let grid = RGBColor(225, 225, 225);
    let x_fmt = |t: &f64| xm.label(*t, xstep);
    let y_fmt = |t: &f64| ym.label(*t, ystep);
    chart
        .configure_mesh()
        .x_desc(x_axis.label.as_str())
        .y_desc(y_axis.label.as_str())
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(font(12.0 * s).color(&BLACK))
        .axis_desc_style(font(13.5 * s).color(&BLACK))
        .bold_line_style(ShapeStyle {
            color: grid.to_rgba(),
            filled: false,
            stroke_width: s.round().max(1.0) as u32,
        })
        .light_line_style(TRANSPARENT)
        .axis_style(ShapeStyle {
            color: BLACK.to_rgba(),
            filled: false,
            stroke_width: s.round().max(1.0) as u32,
        })
        .draw()
        .map_err(draw_err)?;
    for m in marks {
        let c = color(m.color).mix(m.opacity);
        let stroke = |w: f64| ShapeStyle {
            color: c,
            filled: false,
            stroke_width: ((w * s).round() as u32).max(1),
        };
        match &m.shape {
            Shape::Line {
                points,
                width,
                dash,
            } => {
                for piece in pieces(points, &xm, &ym) {
                    draw_path(&mut chart, piece, stroke(*width), *dash, s)?;
                }
            }
            Shape::HLine { y, dash } => {
                if let Some(t) = ym.to(*y) {
                    draw_path(&mut chart, vec![(x0, t), (x1, t)], stroke(1.5), *dash, s)?;
                }
            }
            Shape::VLine { x, dash } => {
                if let Some(t) = xm.to(*x) {
                    draw_path(&mut chart, vec![(t, y0), (t, y1)], stroke(1.5), *dash, s)?;
                }
            }
            Shape::Points { points, radius } => {
                let r = ((radius * s).round() as i32).max(1);
                let dots: Vec<(f64, f64)> = points
                    .iter()
                    .filter_map(|p| Some((xm.to(p[0])?, ym.to(p[1])?)))
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
                        let (a, b) = (xm.to(p[0] - width / 2.0)?, xm.to(p[0] + width / 2.0)?);
                        Some([(a, base), (b, ym.to(p[1])?)])
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
                        let t = xm.to(x[i])?;
                        Some(((t, ym.to(lo[i])?), (t, ym.to(hi[i])?)))
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

/// A linear f64 coordinate from `lo` to `hi` whose ticks are exactly `ticks` (plotters picks
/// its own otherwise, which would put log axes' ticks between decades).
#[derive(Clone)]
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
        Self { lo, hi, ticks }
    }
}

impl Ranged for Ticked {
    type ValueType = f64;
    type FormatOption = NoDefaultFormatting;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let t = (v - self.lo) / (self.hi - self.lo);
        (limit.0 as f64 + t * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
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

/// The drawable runs of `points`: maximal stretches of points both axes can show.
fn pieces(points: &[[f64; 2]], x: &Mapped, y: &Mapped) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for p in points {
        match (x.to(p[0]), y.to(p[1])) {
            (Some(a), Some(b)) => cur.push((a, b)),
            _ => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<Ticked, Ticked>>;

fn draw_path<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    points: Vec<(f64, f64)>,
    style: ShapeStyle,
    dash: Dash,
    s: f64,
) -> Result<(), FigureError> {
    let r = match dash {
        Dash::Solid => chart
            .draw_series(LineSeries::new(points, style))
            .map(|_| ()),
        Dash::Dashed => chart
            .draw_series(DashedLineSeries::new(
                points,
                (7.0 * s) as i32,
                (5.0 * s) as i32,
                style,
            ))
            .map(|_| ()),
        Dash::Dotted => chart
            .draw_series(DashedLineSeries::new(
                points,
                (2.0 * s) as i32,
                (4.0 * s) as i32,
                style,
            ))
            .map(|_| ()),
    };
    r.map_err(draw_err)
}

fn draw_heatmaps<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    maps: &[Heatmap],
    caption: &str,
    s: f64,
) -> Result<(), FigureError> {
    let (w, h) = area.dim_in_pixel();
    let bar_w = (90.0 * s) as u32;
    let gap = (14.0 * s) as i32;
    // Up to three maps in a row; more wrap into a grid of at most three columns.
    let n = maps.len().max(1);
    let cols = n.min(3) as i32;
    let rows = n.div_ceil(3) as i32;
    let maps_w = (w.saturating_sub(bar_w)) as i32;
    let cell_w = ((maps_w - gap * (cols - 1)) / cols).max(1);
    let label = font(12.5 * s).color(&BLACK);
    let title_h = (20.0 * s) as i32;
    let (top, bottom) = (0, h as i32 - (6.0 * s) as i32);
    let cell_h = ((bottom - top - gap * (rows - 1)) / rows).max(1);
    let outline = ShapeStyle {
        color: RGBColor(90, 90, 90).to_rgba(),
        filled: false,
        stroke_width: s.round().max(1.0) as u32,
    };
    for (k, map) in maps.iter().enumerate() {
        let left = (k as i32 % cols) * (cell_w + gap);
        let y_top = top + (k as i32 / cols) * (cell_h + gap);
        area.draw(&Text::new(map.title.clone(), (left, y_top), label.clone()))
            .map_err(draw_err)?;
        let (rows, cols) = map.values.shape();
        if rows == 0 || cols == 0 {
            continue;
        }
        let (map_top, map_bottom) = (y_top + title_h, y_top + cell_h);
        let avail_h = (map_bottom - map_top).max(1);
        for r in 0..rows {
            for c in 0..cols {
                let x0 = left + (c as i64 * cell_w as i64 / cols as i64) as i32;
                let x1 = left + ((c + 1) as i64 * cell_w as i64 / cols as i64) as i32;
                let y0 = map_top + (r as i64 * avail_h as i64 / rows as i64) as i32;
                let y1 = map_top + ((r + 1) as i64 * avail_h as i64 / rows as i64) as i32;
                let v = map.values[(r, c)];
                area.draw(&Rectangle::new(
                    [(x0, y0), (x1, y1)],
                    color(blues(v, false)).filled(),
                ))
                .map_err(draw_err)?;
            }
        }
        area.draw(&Rectangle::new(
            [(left, map_top), (left + cell_w, map_bottom)],
            outline,
        ))
        .map_err(draw_err)?;
    }
    let top = title_h;
    // The colour bar: 64 steps from 0 (bottom) to 1 (top), ticks every 0.25.
    let bx = maps_w + gap;
    let bw = (16.0 * s) as i32;
    let (btop, bbot) = (top, bottom - (22.0 * s) as i32);
    let steps = 64;
    for i in 0..steps {
        let y1 = bbot - (i * (bbot - btop) / steps);
        let y0 = bbot - ((i + 1) * (bbot - btop) / steps);
        let v = (i as f64 + 0.5) / steps as f64;
        area.draw(&Rectangle::new(
            [(bx, y0), (bx + bw, y1)],
            color(blues(v, false)).filled(),
        ))
        .map_err(draw_err)?;
    }
    area.draw(&Rectangle::new([(bx, btop), (bx + bw, bbot)], outline))
        .map_err(draw_err)?;
    let small = font(11.5 * s).color(&BLACK);
    for t in [0.0, 0.25, 0.5, 0.75, 1.0] {
        let y = bbot - (t * (bbot - btop) as f64) as i32;
        area.draw(&PathElement::new(
            [(bx + bw, y), (bx + bw + (4.0 * s) as i32, y)],
            outline,
        ))
        .map_err(draw_err)?;
        area.draw(&Text::new(
            format!("{t}"),
            (bx + bw + (6.0 * s) as i32, y - (6.0 * s) as i32),
            small.clone(),
        ))
        .map_err(draw_err)?;
    }
    area.draw(&Text::new(
        caption.to_string(),
        (bx, bbot + (6.0 * s) as i32),
        small,
    ))
    .map_err(draw_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_numbers() {
        let (t, step) = ticks(&Axis::linear("x"), -0.03, 1.03);
        assert_eq!(step, 0.2);
        assert_eq!(t.len(), 6);
        assert!((t[5] - 1.0).abs() < 1e-12);
        assert_eq!(number(0.4000000001, 0.2), "0.4");
        assert_eq!(number(25000.0, 5000.0), "25000");
        assert_eq!(number(2.5e-5, 5e-6), "2.5e-5");
    }

    #[test]
    fn log_ticks_are_decades() {
        let axis = Axis::log("y");
        let (t, step) = ticks(&axis, -12.3, -0.2);
        assert_eq!(step, 2.0);
        assert_eq!(t, vec![-12.0, -10.0, -8.0, -6.0, -4.0, -2.0]);
        let m = Mapped { axis: &axis };
        assert_eq!(m.label(-6.0, step), "1e-6");
        assert_eq!(m.to(0.0), None);
        assert_eq!(m.to(100.0), Some(2.0));
    }

    #[test]
    fn narrow_log_axes_tick_at_one_two_five() {
        let axis = Axis::log("y");
        let m = Mapped { axis: &axis };
        let (t, step) = ticks(&axis, 1e-9f64.log10(), 3e-9f64.log10());
        let labels: Vec<String> = t.iter().map(|t| m.label(*t, step)).collect();
        assert_eq!(labels, ["1e-9", "2e-9"]);
        let (t, step) = ticks(&axis, 2f64.log10(), 6f64.log10());
        let labels: Vec<String> = t.iter().map(|t| m.label(*t, step)).collect();
        assert_eq!(labels, ["2", "5"]);
        // Less than a 1-2-5 step apart: every digit.
        let (t, step) = ticks(&axis, 3.5f64.log10(), 4.6f64.log10());
        let labels: Vec<String> = t.iter().map(|t| m.label(*t, step)).collect();
        assert_eq!(labels, ["4"]);
        assert_eq!(significant(0.25), "0.25");
        assert_eq!(significant(1500.0), "1500");
        assert_eq!(significant(1.9999999999e-9), "2e-9");
        assert_eq!(significant(123456.0), "1.235e5");
        assert_eq!(number(100_000.0, 10.0), "1.0000e5");
    }

    #[test]
    fn reversed_log_axis_maps_and_labels_back() {
        let axis = Axis::log("loss").reversed();
        let m = Mapped { axis: &axis };
        assert_eq!(m.to(1e-3), Some(3.0));
        assert_eq!(m.label(3.0, 1.0), "1e-3");
    }

    #[test]
    fn pieces_break_at_gaps() {
        let axis = Axis::log("y");
        let lin = Axis::linear("x");
        let (x, y) = (Mapped { axis: &lin }, Mapped { axis: &axis });
        let pts = [
            [0.0, 1.0],
            [1.0, 10.0],
            [2.0, 0.0],
            [3.0, f64::NAN],
            [4.0, 100.0],
        ];
        let p = pieces(&pts, &x, &y);
        assert_eq!(p, vec![vec![(0.0, 0.0), (1.0, 1.0)], vec![(4.0, 2.0)]]);
    }
}
