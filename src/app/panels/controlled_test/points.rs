//! What the ε and d_k tabs share: a list of points (each a seed sweep of the current
//! settings, changed at one value) drawn as mean ± sd over seeds against a log x axis, one plot
//! per aggregate, and the rows that set the points and seeds.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{FilledArea, HLine, Line, LineStyle, Plot, PlotPoints};

use crate::app::history::LOG_FLOOR;
use crate::app::widgets::colors::faded;
use crate::app::widgets::plots::{
    FigureFormat, Swatch, legend_row, log_grid, log_tick, plot_header,
};
use crate::app::widgets::reflow;
use crate::experiment::SweepResult;
pub(super) use crate::experiment::figures::{
    ACCURACY, ArmPoints, EXCESS, GRAM, Metric, ORIENTATION, SweepAxis, arm_points, points_figure,
};
use crate::figure::Figure;

fn to_color(c: crate::figure::Rgb) -> Color32 {
    Color32::from_rgb(c[0], c[1], c[2])
}

/// The seeds-per-point field.
/// The range of the seeds per point of the ε and d_k sweeps.
pub(super) const SEEDS: std::ops::RangeInclusive<usize> = 2..=64;

pub(super) fn seeds_row(ui: &mut egui::Ui, seeds: &mut usize) {
    let l = ui.label("seeds per point");
    ui.add(
        egui::DragValue::new(seeds)
            .range(SEEDS)
            .update_while_editing(false),
    )
    .labelled_by(l.id);
}

/// Parses a comma-separated list; errors name the offending entry.
pub(super) fn parse_list<T: std::str::FromStr>(text: &str) -> Result<Vec<T>, String> {
    let out: Vec<T> = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("“{s}” is not a number")))
        .collect::<Result<_, _>>()?;
    if out.is_empty() {
        return Err("the list is empty".into());
    }
    Ok(out)
}

/// How a sweep's x values are drawn: both on a log axis.
#[derive(Clone, Copy)]
pub(super) enum XAxis {
    /// log10 ε, ticks `1e-8`.
    Eps,
    /// log2 d_k, ticks `16`.
    Dk,
}

impl XAxis {
    fn name(self) -> &'static str {
        match self {
            XAxis::Eps => "eps",
            XAxis::Dk => "dk",
        }
    }

    fn position(self, x: f64) -> Option<f64> {
        let p = match self {
            XAxis::Eps => x.log10(),
            XAxis::Dk => x.log2(),
        };
        p.is_finite().then_some(p)
    }
}

/// The finished points of one sweep tab and how to draw them.
pub(super) struct SweepView<'a> {
    pub(super) axis: XAxis,
    /// (x, sweep) per point.
    pub(super) sweeps: Vec<(f64, &'a SweepResult)>,
    /// Arms drawn thick (the others dashed, as references).
    pub(super) emphasise: fn(&str) -> bool,
    pub(super) size: (f32, f32),
    pub(super) hover: bool,
}

impl SweepView<'_> {
    pub(super) fn arms(&self, m: &Metric) -> Vec<ArmPoints> {
        arm_points(&self.sweeps, m, self.emphasise)
    }

    /// Draws `m`'s plot; returns the format chosen in its "Save figure…" menu.
    pub(super) fn plot(
        &self,
        ui: &mut egui::Ui,
        m: &Metric,
        zero_band: Option<&[(f64, f64)]>,
    ) -> Option<FigureFormat> {
        let id = format!("{} {}", self.axis.name(), m.id);
        sweep_plot(
            ui,
            &id,
            m,
            self.axis,
            &self.arms(m),
            zero_band,
            self.size,
            self.hover,
        )
    }

    /// `m`'s plot as a figure (what "Save figure…" writes).
    pub(super) fn figure(&self, m: &Metric, zero_band: Option<&[(f64, f64)]>) -> Figure {
        let axis = match self.axis {
            XAxis::Eps => SweepAxis::Eps,
            XAxis::Dk => SweepAxis::Dk,
        };
        points_figure(axis, &self.arms(m), m, zero_band)
    }
}

/// A mean ± sd plot of `m` over a log x axis (and a log y axis when `m.log_y`).
#[allow(clippy::too_many_arguments)]
fn sweep_plot(
    ui: &mut egui::Ui,
    id: &str,
    m: &Metric,
    axis: XAxis,
    arms: &[ArmPoints],
    zero_band: Option<&[(f64, f64)]>,
    size: (f32, f32),
    hover: bool,
) -> Option<FigureFormat> {
    let (y_label, log_y) = (m.y_label, m.log_y);
    ui.vertical(|ui| {
        ui.set_width(size.0);
        let clicked = plot_header(ui, m.title, None, true);
        let x_label = match axis {
            XAxis::Eps => "Adam's ε (log scale)",
            XAxis::Dk => "key dimension d_k (log scale)",
        };
        let xs = arms
            .iter()
            .flat_map(|a| a.points.iter().filter_map(|p| axis.position(p.0)));
        let (x_lo, x_hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
        let mut plot = Plot::new(id)
            .width(size.0)
            .height(size.1)
            .x_axis_label(x_label)
            .y_axis_label(y_label)
            .x_grid_spacer(match axis {
                XAxis::Eps => Box::new(log_grid) as Box<dyn Fn(_) -> _>,
                XAxis::Dk => Box::new(|input: egui_plot::GridInput| {
                    let (lo, hi) = input.bounds;
                    if !(lo.is_finite() && hi.is_finite()) || hi - lo > 64.0 {
                        return Vec::new();
                    }
                    (lo.ceil() as i64..=hi.floor() as i64)
                        .map(|e| egui_plot::GridMark {
                            value: e as f64,
                            step_size: 1.0,
                        })
                        .collect()
                }),
            })
            .x_axis_formatter(move |mark, range| {
                // Ticks beyond the data would spill past the plot's corners.
                if mark.value < x_lo - 1e-9 || mark.value > x_hi + 1e-9 {
                    return String::new();
                }
                match axis {
                    XAxis::Eps => log_tick(mark, range),
                    XAxis::Dk => format!("{}", 2f64.powf(mark.value).round()),
                }
            })
            .show_x(hover)
            .show_y(hover);
        let y = |v: f64| {
            if log_y { v.max(LOG_FLOOR).log10() } else { v }
        };
        if log_y {
            // As on x: decade labels beyond the whiskers would sit on the title or the x axis.
            let ys = arms.iter().flat_map(|a| {
                a.points
                    .iter()
                    .flat_map(|p| [y(p.1 - p.2), y(p.1 + p.2), y(p.1)])
            });
            let (lo, hi) = ys
                .filter(|v| v.is_finite())
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                    (lo.min(v), hi.max(v))
                });
            // Within a decade no mark would be labelled: widen to the decades around it.
            let (lo, hi) = if hi - lo < 1.0 {
                (lo.floor(), hi.ceil())
            } else {
                (lo, hi)
            };
            plot = plot
                .y_grid_spacer(log_grid)
                .y_axis_formatter(move |mark, range| {
                    if mark.value < lo - 1e-9 || mark.value > hi + 1e-9 {
                        String::new()
                    } else {
                        log_tick(mark, range)
                    }
                });
        }
        plot.show(ui, |plot| {
            if let Some(band) = zero_band {
                let pts: Vec<(f64, f64)> = band
                    .iter()
                    .filter_map(|(x, sd)| Some((axis.position(*x)?, *sd)))
                    .filter(|p| p.1.is_finite())
                    .collect();
                if pts.len() >= 2 {
                    let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
                    let lo: Vec<f64> = pts.iter().map(|p| -p.1).collect();
                    let hi: Vec<f64> = pts.iter().map(|p| p.1).collect();
                    plot.add(
                        FilledArea::new("± the baseline's sd", &xs, &lo, &hi)
                            .fill_color(faded(Color32::GRAY, 55)),
                    );
                }
                plot.hline(HLine::new("zero excess", 0.0).color(Color32::GRAY));
            }
            for (i, a) in arms.iter().enumerate() {
                // Each arm's bars sit slightly apart (in log-x units) so none hides another.
                let nudge = (i as f64 - (arms.len() as f64 - 1.0) / 2.0) * 0.05;
                let pts: Vec<(f64, f64, f64)> = a
                    .points
                    .iter()
                    .filter_map(|&(x, m, sd)| Some((axis.position(x)?, m, sd)))
                    .filter(|p| p.1.is_finite())
                    .collect();
                let width = if a.emphasised { 3.0 } else { 1.5 };
                let style = if a.emphasised {
                    LineStyle::Solid
                } else {
                    LineStyle::dashed_loose()
                };
                let means: Vec<[f64; 2]> = pts.iter().map(|p| [p.0, y(p.1)]).collect();
                plot.line(
                    Line::new(a.name.clone(), PlotPoints::from(means))
                        .color(to_color(a.color))
                        .width(reflow::line_width(plot.ctx(), width))
                        .style(style),
                );
                for &(x, m, sd) in &pts {
                    if !sd.is_finite() || sd == 0.0 {
                        continue;
                    }
                    plot.line(
                        Line::new(
                            format!("{} ± sd over seeds", a.name),
                            vec![[x + nudge, y(m - sd)], [x + nudge, y(m + sd)]],
                        )
                        .color(to_color(a.color))
                        .width(reflow::line_width(plot.ctx(), width)),
                    );
                }
            }
        });
        clicked.figure
    })
    .inner
}

pub(super) fn sweep_legend(ui: &mut egui::Ui, arms: &[ArmPoints], emphasis_note: &str) {
    let mut items: Vec<(Color32, String, Swatch)> = arms
        .iter()
        .map(|a| {
            let swatch = if a.emphasised {
                Swatch::Thick
            } else {
                Swatch::Dashed
            };
            (to_color(a.color), a.name.clone(), swatch)
        })
        .collect();
    items.push((Color32::GRAY, "bars: ± sd over seeds".into(), Swatch::Thin));
    legend_row(ui, &items);
    if !emphasis_note.is_empty() {
        ui.label(RichText::new(emphasis_note).small().weak());
    }
}
