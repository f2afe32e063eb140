//! A [`Figure`] drawn on screen with egui_plot: the same marks, axes, ticks and legend that
//! "Save figure…" and `--figures` write, so a tab builds its plot once (in the headless figure
//! builders) and the window and the saved file cannot drift apart.
//!
//! Log and reversed axes are drawn on the figure's drawing coordinate ([`Axis::to_drawing`]:
//! log10, negated when reversed), with the figure's own ticks and labels; hovering shows the
//! data values. Values an axis cannot show (non-finite, non-positive on a log axis) are left
//! out, so egui_plot never sees a NaN.

use eframe::egui::{self, Color32};
use egui_plot::{
    Bar, BarChart, FilledArea, GridInput, GridMark, HLine, Line, LineStyle, Plot, Points, VLine,
};

use super::plots::{Swatch, legend_row};
use super::reflow;
use crate::figure::{self, Axis, Body, Dash, Figure, Mark, Rgb, Shape, pieces};

/// The figure's legend (every named mark once, in order) as a row above the plot.
pub fn legend(ui: &mut egui::Ui, figure: &Figure) {
    let Body::Plot { marks, .. } = &figure.body else {
        return;
    };
    let mut items: Vec<(Color32, String, Swatch)> = Vec::new();
    for m in marks.iter().filter(|m| !m.name.is_empty()) {
        if items.iter().any(|(_, name, _)| *name == m.name) {
            continue;
        }
        items.push((color(m.color, legend_opacity(m)), m.name.clone(), swatch(m)));
    }
    legend_row(ui, &items);
}

/// The figure's plot (not its title or legend), `size` points wide and high (a `None` width
/// takes the width available, a `None` height egui_plot's default), hover labels with `hover`. `id` must be stable across frames. A heatmap figure draws
/// nothing: the heatmap widget shows those.
pub fn plot(ui: &mut egui::Ui, id: &str, figure: &Figure, size: [Option<f32>; 2], hover: bool) {
    let Body::Plot { x, y, marks } = &figure.body else {
        return;
    };
    let mut p = Plot::new(id)
        .x_axis_label(x.label.clone())
        .y_axis_label(y.label.clone())
        .grid_spacing(GRID_MIN..=300.0)
        .x_grid_spacer(spacer(x, X_LABEL_PX))
        .y_grid_spacer(spacer(y, 0.0))
        .x_axis_formatter(|m: GridMark, _: &_| label(x, m))
        .y_axis_formatter(|m: GridMark, _: &_| label(y, m))
        .label_formatter(|pos| {
            let (name, at) = match *pos {
                egui_plot::HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => (plot_name, position),
                egui_plot::HoverPosition::Elsewhere { position } => ("", position),
            };
            let text = format!("{}, {}", x.value_label(at.x), y.value_label(at.y));
            Some(if name.is_empty() {
                text
            } else {
                format!("{name}\n{text}")
            })
        })
        .show_x(hover)
        .show_y(hover)
        .allow_scroll(false);
    // The saved figure's ranges exactly (its padding, and a sensible range when every value is
    // the same), so the plot on screen and the file show the same window onto the data.
    let ([x0, x1], [y0, y1]) = figure::plot_ranges(x, y, marks);
    p = p
        .set_margin_fraction(egui::Vec2::ZERO)
        .include_x(x0)
        .include_x(x1)
        .include_y(y0)
        .include_y(y1);
    if let Some(w) = size[0] {
        p = p.width(w);
    }
    if let Some(h) = size[1] {
        p = p.height(h);
    }
    p.show(ui, |plot| {
        let ctx = plot.ctx().clone();
        let width = |w: f64| reflow::line_width(&ctx, w as f32);
        for m in marks {
            let c = color(m.color, m.opacity);
            match &m.shape {
                Shape::Line {
                    points,
                    width: w,
                    dash,
                } => {
                    for piece in pieces(points, x, y) {
                        let pts: Vec<[f64; 2]> = piece.into_iter().map(|(a, b)| [a, b]).collect();
                        if pts.len() == 1 {
                            // A one-point line shows as a dot, as in the saved figure.
                            plot.points(
                                Points::new(m.name.clone(), pts)
                                    .color(c)
                                    .radius(width(figure::dot_radius(*w)))
                                    .filled(true),
                            );
                            continue;
                        }
                        plot.line(
                            Line::new(m.name.clone(), pts)
                                .color(c)
                                .width(width(*w))
                                .style(style(*dash)),
                        );
                    }
                }
                Shape::Points { points, radius } => {
                    let pts = drawable(points, x, y);
                    if !pts.is_empty() {
                        plot.points(
                            Points::new(m.name.clone(), pts)
                                .color(c)
                                .radius(*radius as f32)
                                .filled(true),
                        );
                    }
                }
                Shape::Bars { points, width: w } => {
                    let bars: Vec<Bar> = drawable(points, x, y)
                        .into_iter()
                        .map(|[a, b]| Bar::new(a, b).width(*w).fill(c).name(m.name.clone()))
                        .collect();
                    plot.bar_chart(BarChart::new(m.name.clone(), bars).color(c));
                }
                Shape::Band { x: bx, lo, hi } => {
                    let n = bx.len().min(lo.len()).min(hi.len());
                    let mut cols: [Vec<f64>; 3] = Default::default();
                    for i in 0..n {
                        if let (Some(a), Some(l), Some(h)) = (
                            x.to_drawing(bx[i]),
                            y.to_drawing(lo[i]),
                            y.to_drawing(hi[i]),
                        ) {
                            cols[0].push(a);
                            cols[1].push(l);
                            cols[2].push(h);
                        }
                    }
                    if cols[0].len() >= 2 {
                        plot.add(
                            FilledArea::new(m.name.clone(), &cols[0], &cols[1], &cols[2])
                                .fill_color(c),
                        );
                    }
                }
                Shape::HLine { y: at, dash } => {
                    if let Some(t) = y.to_drawing(*at) {
                        plot.hline(
                            HLine::new(m.name.clone(), t)
                                .color(c)
                                .style(style(*dash))
                                .width(width(1.5)),
                        );
                    }
                }
                Shape::VLine { x: at, dash } => {
                    if let Some(t) = x.to_drawing(*at) {
                        plot.vline(
                            VLine::new(m.name.clone(), t)
                                .color(c)
                                .style(style(*dash))
                                .width(width(1.5)),
                        );
                    }
                }
            }
        }
    });
}

/// Legend row, then the plot: [`legend`] and [`plot`] together.
pub fn show(ui: &mut egui::Ui, id: &str, figure: &Figure, size: [Option<f32>; 2], hover: bool) {
    legend(ui, figure);
    plot(ui, id, figure, size, hover);
}

/// Spacing given to the minor marks of log axes, which [`label`] leaves unlabelled: below any
/// spacing [`Axis::tick_marks`] returns for a log axis (0.5 or whole decades).
const MINOR: f64 = 0.1;

/// The plots' smallest grid spacing in points (egui_plot's default), through which the spacer
/// reads how many points a unit of the axis takes.
const GRID_MIN: f32 = 8.0;

/// Fewest points between x tick labels: egui_plot draws none 60 or fewer apart and fades them
/// up to 80.
const X_LABEL_PX: f64 = 80.0;

/// The grid marks of `axis` over the visible range: the figure's own ticks (so the screen
/// labels the same values as the saved figure), with a bail-out for ranges no axis could
/// label (non-finite, or more than 400 decades of a log axis).
fn spacer(axis: &Axis, min_px: f64) -> impl Fn(GridInput) -> Vec<GridMark> + '_ {
    move |input| {
        let (lo, hi) = input.bounds;
        if !(lo.is_finite() && hi.is_finite()) || hi <= lo || (axis.log && hi - lo > 400.0) {
            return Vec::new();
        }
        let (mut ticks, mut step) = axis.tick_marks(lo, hi);
        // egui_plot leaves a tick unlabelled when labels come closer than its spacing (60 points
        // on x): a narrow plot keeps every 2nd, 5th, 10th… of the figure's ticks, round ones.
        let px_per_unit = GRID_MIN as f64 / input.base_step_size;
        if step > 0.0 && px_per_unit.is_finite() && step * px_per_unit < min_px {
            let k = [2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
                .into_iter()
                .find(|k| k * step * px_per_unit >= min_px)
                .unwrap_or(100.0);
            // By index, not by value: ticks far from 0 carry their sums' rounding.
            ticks.retain(|t| ((t / step).round() as i64).rem_euclid(k as i64) == 0);
            step *= k;
        }
        // Explicit ticks have no spacing; egui_plot fades grid lines by it, so give it one.
        let step_size = if step > 0.0 { step } else { (hi - lo) / 5.0 };
        let mut marks: Vec<GridMark> = ticks
            .into_iter()
            .map(|value| GridMark { value, step_size })
            .collect();
        // Unlabelled minor lines at the decades' 2…9 on log axes spanning few decades, as the
        // app's other log plots have.
        if step == 1.0 && hi - lo < 6.0 {
            marks.extend(axis.minor_marks(lo, hi).into_iter().map(|value| GridMark {
                value,
                step_size: MINOR,
            }));
        }
        marks
    }
}

/// The label of a grid mark from [`spacer`]: the figure's tick label, nothing for a minor mark.
fn label(axis: &Axis, m: GridMark) -> String {
    if axis.ticks.is_empty() && !axis.categories.is_empty() {
        // egui_plot drops a label wider than the space between two ticks ("Gradient descent"
        // among nine rules at 1280 × 720); on two lines it fits.
        return axis.tick_label(m.value, m.step_size).replacen(' ', "\n", 1);
    }
    if !axis.ticks.is_empty() {
        // The spacer gave explicit ticks a spacing for egui_plot's fading only.
        axis.tick_label(m.value, 0.0)
    } else if axis.log && m.step_size <= MINOR {
        String::new()
    } else {
        axis.tick_label(m.value, m.step_size)
    }
}

/// The points of `points` both axes can show, in drawing coordinates.
fn drawable(points: &[[f64; 2]], x: &Axis, y: &Axis) -> Vec<[f64; 2]> {
    points
        .iter()
        .filter_map(|p| Some([x.to_drawing(p[0])?, y.to_drawing(p[1])?]))
        .collect()
}

/// A figure colour at `opacity` (0–1) as egui's premultiplied colour.
fn color(c: Rgb, opacity: f64) -> Color32 {
    Color32::from_rgb(c[0], c[1], c[2]).gamma_multiply(opacity.clamp(0.0, 1.0) as f32)
}

/// Opacity of a mark's legend swatch: bands and bars a little stronger than drawn, so a pale
/// band still shows its colour in a small swatch (as the saved figure's legend does).
fn legend_opacity(m: &Mark) -> f64 {
    match m.shape {
        Shape::Band { .. } | Shape::Bars { .. } => m.opacity.max(0.35),
        _ => m.opacity,
    }
}

/// A mark's legend swatch.
fn swatch(m: &Mark) -> Swatch {
    match &m.shape {
        Shape::Line { width, dash, .. } => match dash {
            Dash::Solid if *width >= 2.0 => Swatch::Thick,
            Dash::Solid => Swatch::Thin,
            Dash::Dashed => Swatch::Dashed,
            Dash::Dotted => Swatch::Dotted,
        },
        Shape::HLine { dash, .. } | Shape::VLine { dash, .. } => match dash {
            Dash::Solid => Swatch::Thin,
            Dash::Dashed => Swatch::Dashed,
            Dash::Dotted => Swatch::Dotted,
        },
        Shape::Points { .. } => Swatch::Dot,
        Shape::Bars { .. } | Shape::Band { .. } => Swatch::Block,
    }
}

/// egui_plot's stroke pattern for a figure's.
fn style(dash: Dash) -> LineStyle {
    match dash {
        Dash::Solid => LineStyle::Solid,
        Dash::Dashed => LineStyle::dashed_loose(),
        Dash::Dotted => LineStyle::dotted_dense(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_category_s_name_of_two_words_is_labelled_on_two_lines() {
        let axis = Axis::categories("rule", vec!["Muon".into(), "Gradient descent".into()]);
        let at = |value| {
            label(
                &axis,
                GridMark {
                    value,
                    step_size: 1.0,
                },
            )
        };
        assert_eq!(at(0.0), "Muon");
        assert_eq!(at(1.0), "Gradient\ndescent");
        assert_eq!(at(0.5), "");
    }
}
