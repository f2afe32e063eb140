//! The tail tab: recovery against the spectral-tail amplitude τ for GD, Adam, Muon and
//! Shampoo, beside the paper's Table 4.

use eframe::egui::{self, Color32};
use egui_plot::{FilledArea, Line, LineStyle, Plot};

use super::{SweepTab, rule_color};
use crate::app::widgets::plots::{Swatch, legend_row};
use crate::app::widgets::reflow;
use crate::sensing::zoo::figures as zoo_figures;
use crate::sensing::zoo::{PAPER_TAIL, PAPER_TAIL_RULES, RunResult, ZooPreset, summarise};

/// The tail tab.
pub fn tab() -> SweepTab {
    SweepTab::new(
        ("tail", "Spectral tail"),
        "tail",
        "Targets with τ² of their energy outside rank 3; GD, Adam, Muon and Shampoo at their Table 2 rates.",
        (plot, zoo_figures::tail_figure),
    )
}

fn plot(ui: &mut egui::Ui, preset: &ZooPreset, runs: &[RunResult], hover: bool) {
    let summaries = summarise(runs);
    let mut items: Vec<(Color32, String, Swatch)> = preset
        .rules
        .iter()
        .enumerate()
        .map(|(i, r)| (rule_color(*r, i), r.name(), Swatch::Thick))
        .collect();
    items.push((
        Color32::GRAY,
        "the paper (dashed, same colours)".into(),
        Swatch::Dashed,
    ));
    legend_row(ui, &items);
    Plot::new("tail")
        .height(380.0)
        .x_axis_label("tail amplitude τ (τ² of the target's energy lies outside rank 3)")
        .y_axis_label("recovery")
        .include_y(0.0)
        .show_x(hover)
        .show_y(hover)
        .show(ui, |plot| {
            for (i, r) in preset.rules.iter().enumerate() {
                let col = rule_color(*r, i);
                let mut pts: Vec<(f64, f64, f64)> = summaries
                    .iter()
                    .filter(|s| s.rule == r.name())
                    .map(|s| (s.tau, s.recovery[0], s.recovery[1]))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                if pts.len() >= 2 {
                    let x: Vec<f64> = pts.iter().map(|p| p.0).collect();
                    let l: Vec<f64> = pts.iter().map(|p| p.1 - p.2).collect();
                    let h: Vec<f64> = pts.iter().map(|p| p.1 + p.2).collect();
                    plot.add(
                        FilledArea::new(r.name(), &x, &l, &h).fill_color(col.gamma_multiply(0.18)),
                    );
                }
                let line: Vec<[f64; 2]> = pts.iter().map(|p| [p.0, p.1]).collect();
                plot.line(
                    Line::new(r.name(), line)
                        .color(col)
                        .width(reflow::line_width(plot.ctx(), 2.5)),
                );
                let column = PAPER_TAIL_RULES.iter().position(|n| *n == r.info().name);
                if let Some(k) = column.map(|c| c + 1) {
                    let paper: Vec<[f64; 2]> = PAPER_TAIL
                        .iter()
                        .map(|row| [row.0, [row.1, row.2, row.3, row.4][k - 1]])
                        .collect();
                    plot.line(
                        Line::new(format!("{} (paper)", r.name()), paper)
                            .color(col.gamma_multiply(0.7))
                            .style(LineStyle::dashed_loose())
                            .width(reflow::line_width(plot.ctx(), 1.2)),
                    );
                }
            }
        });
}
