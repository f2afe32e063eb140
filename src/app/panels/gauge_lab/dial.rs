//! The dial tab: recovery along the anisotropy dial p from Adam (1) to scalar-Adam (0), beside
//! the paper's envelope.

use eframe::egui::{self, Color32};
use egui_plot::{FilledArea, Line, LineStyle, Plot, Points};

use super::{COORDINATEWISE, SweepTab};
use crate::app::widgets::plots::{Swatch, legend_row};
use crate::app::widgets::reflow;
use crate::sensing::zoo::figures as zoo_figures;
use crate::sensing::zoo::{PAPER_DIAL, RunResult, ZooPreset, summarise};

/// The dial tab.
pub fn tab() -> SweepTab {
    SweepTab::new(
        ("dial", "Anisotropy dial"),
        "dial",
        "Adam's denominator turned from per-coordinate (p = 1, Adam) to one shared scale (p = 0, scalar-Adam), 3·10⁴ steps at the dial's rate 1e-3.",
        (plot, zoo_figures::dial_figure),
    )
}

fn plot(ui: &mut egui::Ui, preset: &ZooPreset, runs: &[RunResult], hover: bool) {
    let summaries = summarise(runs);
    let pts: Vec<(f64, f64, f64)> = preset
        .rules
        .iter()
        .filter_map(|r| {
            let p = r.arg()?;
            let s = summaries.iter().find(|s| s.rule == r.name())?;
            Some((p, s.recovery[0], s.recovery[1]))
        })
        .collect();
    legend_row(
        ui,
        &[
            (
                COORDINATEWISE,
                "ours: mean ± sd over seeds".into(),
                Swatch::Thick,
            ),
            (
                Color32::GRAY,
                "the paper's envelope (3 seeds, float32)".into(),
                Swatch::Dashed,
            ),
        ],
    );
    let xs: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let lo: Vec<f64> = pts.iter().map(|p| p.1 - p.2).collect();
    let hi: Vec<f64> = pts.iter().map(|p| p.1 + p.2).collect();
    let mut sorted: Vec<(f64, f64, f64)> = pts.clone();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    Plot::new("dial")
        .height(360.0)
        .x_axis_label("anisotropy p (0 = scalar-Adam, 1 = Adam)")
        .y_axis_label("recovery")
        .include_y(0.0)
        .show_x(hover)
        .show_y(hover)
        .show(ui, |plot| {
            if xs.len() >= 2 {
                let mut order: Vec<usize> = (0..xs.len()).collect();
                order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
                let x: Vec<f64> = order.iter().map(|&i| xs[i]).collect();
                let l: Vec<f64> = order.iter().map(|&i| lo[i]).collect();
                let h: Vec<f64> = order.iter().map(|&i| hi[i]).collect();
                plot.add(
                    FilledArea::new("± sd", &x, &l, &h)
                        .fill_color(COORDINATEWISE.gamma_multiply(0.2)),
                );
            }
            let line: Vec<[f64; 2]> = sorted.iter().map(|p| [p.0, p.1]).collect();
            plot.line(
                Line::new("ours", line.clone())
                    .color(COORDINATEWISE)
                    .width(reflow::line_width(plot.ctx(), 2.5)),
            );
            plot.points(Points::new("ours", line).color(COORDINATEWISE).radius(4.0));
            let paper: Vec<[f64; 2]> = PAPER_DIAL.iter().rev().map(|p| [p.0, p.1]).collect();
            plot.line(
                Line::new("paper", paper)
                    .color(Color32::GRAY)
                    .style(LineStyle::dashed_loose())
                    .width(reflow::line_width(plot.ctx(), 1.5)),
            );
        });
}
