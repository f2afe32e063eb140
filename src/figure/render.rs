//! Drawing a [`Figure`] with plotters, on its SVG or its bitmap backend. Every length is in
//! points times the scale `s` (pixels per point), so a 3× PNG is the 1× figure at three times
//! the resolution, text and lines included.

use plotters::coord::Shift;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::{
    Axis, Body, Dash, Figure, Heatmap, Mark, Rgb, Shape, dot_radius, magnitude, pieces, plot_ranges,
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

fn draw_plot<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    x_axis: &Axis,
    y_axis: &Axis,
    marks: &[Mark],
    s: f64,
) -> Result<(), FigureError> {
    let legend_h = draw_legend(area, marks, s)?;
    let (_, plot_area) = area.split_vertically(legend_h);
    let ([x0, x1], [y0, y1]) = plot_ranges(x_axis, y_axis, marks);
    let (xt, xstep) = x_axis.tick_marks(x0, x1);
    let (yt, ystep) = y_axis.tick_marks(y0, y1);
    let mut chart = ChartBuilder::on(&plot_area)
        .margin_right((14.0 * s) as u32)
        .margin_top((6.0 * s) as u32)
        .x_label_area_size((46.0 * s) as u32)
        .y_label_area_size((70.0 * s) as u32)
        .build_cartesian_2d(Ticked::new(x0, x1, xt), Ticked::new(y0, y1, yt))
        .map_err(draw_err)?;
    let grid = RGBColor(225, 225, 225);
    let x_fmt = |t: &f64| x_axis.tick_label(*t, xstep);
    let y_fmt = |t: &f64| y_axis.tick_label(*t, ystep);
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
                for piece in pieces(points, x_axis, y_axis) {
                    if let [p] = piece[..] {
                        // A one-point line (one sweep value, one sample) is a dot, not nothing.
                        let r = ((dot_radius(*width) * s).round() as i32).max(1);
                        chart
                            .draw_series(std::iter::once(Circle::new(p, r, c.filled())))
                            .map_err(draw_err)?;
                    } else {
                        draw_path(&mut chart, piece, stroke(*width), *dash, s)?;
                    }
                }
            }
            Shape::HLine { y, dash } => {
                if let Some(t) = y_axis.to_drawing(*y) {
                    draw_path(&mut chart, vec![(x0, t), (x1, t)], stroke(1.5), *dash, s)?;
                }
            }
            Shape::VLine { x, dash } => {
                if let Some(t) = x_axis.to_drawing(*x) {
                    draw_path(&mut chart, vec![(t, y0), (t, y1)], stroke(1.5), *dash, s)?;
                }
            }
            Shape::Points { points, radius } => {
                let r = ((radius * s).round() as i32).max(1);
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
                    color(magnitude(v, false)).filled(),
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
            color(magnitude(v, false)).filled(),
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
