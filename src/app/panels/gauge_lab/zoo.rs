//! The zoo tab: every rule of the paper's Table 2 at its selected rate, recovery per seed, the
//! gap between the classes, and the table beside the paper's means.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Bar, BarChart, FilledArea, Plot, Points};

use super::{SweepTab, class_color};
use crate::app::widgets::plots::{Swatch, category_axis, legend_row};
use crate::app::widgets::reflow;
use crate::sensing::zoo::figures as zoo_figures;
use crate::sensing::zoo::{RunResult, ZooPreset, class_gap, fmt4, paper_table2, summarise};

/// The zoo tab.
pub fn tab() -> SweepTab {
    SweepTab::new(
        ("zoo", "Optimizer zoo"),
        "zoo-paper",
        "The nine rules of the paper's Table 2 at its selected rates: n = 40, rank 3, m = 2·dof, init 1e-3, up to 2·10⁴ steps, run until the training loss interpolates.",
        (plot, |_, runs| zoo_figures::zoo_figure(runs)),
    )
}

fn plot(ui: &mut egui::Ui, _preset: &ZooPreset, runs: &[RunResult], hover: bool) {
    let summaries = summarise(runs);
    let gap = class_gap(&summaries);
    let mut items = vec![(Color32::GRAY, "one seed".to_string(), Swatch::Dot)];
    match gap {
        Some((top, bottom)) if top < bottom => items.push((
            Color32::from_rgb(0, 158, 115),
            format!("the empty gap between the classes ({top:.3} … {bottom:.3})"),
            Swatch::Thick,
        )),
        _ => {}
    }
    legend_row(ui, &items);
    if let Some((top, bottom)) = gap
        && top >= bottom
    {
        ui.label(format!(
            "No gap between the classes: the worst equivariant seed ({top:.3}) lies above the best \
             coordinate-wise seed ({bottom:.3})."
        ));
    }
    let names: Vec<String> = summaries.iter().map(|s| s.rule.clone()).collect();
    let h = (ui.available_height() - 40.0 * summaries.len() as f32 - 60.0).clamp(240.0, 520.0);
    Plot::new("zoo bars")
        .height(h)
        .x_axis_label("update rule (at its selected learning rate)")
        .y_axis_label("recovery ‖UVᵀ − X*‖F / ‖X*‖F")
        .include_y(0.0)
        .show_x(hover)
        .show_y(hover)
        .x_axis_formatter(category_axis(names))
        .show(ui, |plot| {
            if let Some((top, bottom)) = gap
                && top < bottom
            {
                let n = summaries.len() as f64;
                plot.add(
                    FilledArea::new("gap", &[-0.5, n - 0.5], &[top, top], &[bottom, bottom])
                        .fill_color(Color32::from_rgba_unmultiplied(0, 158, 115, 40)),
                );
            }
            let bars: Vec<Bar> = summaries
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    Bar::new(i as f64, s.recovery[0])
                        .width(0.6)
                        .fill(class_color(s.equivariant).gamma_multiply(0.55))
                        .name(format!("{} (lr {})", s.rule, s.lr))
                })
                .collect();
            plot.bar_chart(BarChart::new("mean recovery", bars));
            for (i, s) in summaries.iter().enumerate() {
                let dots: Vec<[f64; 2]> = runs
                    .iter()
                    .filter(|r| r.rule == s.rule && r.lr == s.lr)
                    .enumerate()
                    .map(|(k, r)| {
                        let jitter = (k as f64 / s.seeds.max(1) as f64 - 0.5) * 0.3;
                        [i as f64 + jitter, r.recovery]
                    })
                    .collect();
                plot.points(
                    Points::new(format!("{} seeds", s.rule), dots)
                        .color(class_color(s.equivariant))
                        .radius(3.5)
                        .filled(true),
                );
            }
        });
    reflow::table(
        ui,
        "zoo table",
        |ui| {
            for h in [
                "rule",
                "class",
                "lr",
                "recovery mean ± sd",
                "range",
                "erank",
                "balancedness",
                "interpolated",
                "paper (rec / erank / bal)",
            ] {
                ui.label(RichText::new(h).strong());
            }
        },
        |ui| {
            for s in &summaries {
                ui.label(
                    RichText::new(&s.rule)
                        .color(class_color(s.equivariant))
                        .strong(),
                );
                ui.label(if s.equivariant {
                    "equivariant"
                } else {
                    "coordinate-wise"
                });
                ui.label(format!("{}", s.lr));
                ui.label(
                    RichText::new(format!("{} ± {}", fmt4(s.recovery[0]), fmt4(s.recovery[1])))
                        .monospace(),
                );
                ui.label(
                    RichText::new(format!("{} … {}", fmt4(s.recovery[2]), fmt4(s.recovery[3])))
                        .monospace(),
                );
                ui.label(RichText::new(format!("{:.2}", s.erank[0])).monospace());
                ui.label(RichText::new(format!("{:.2}", s.balancedness[0])).monospace());
                ui.label(if s.all_interpolated {
                    "all seeds"
                } else {
                    "not all"
                });
                let paper = paper_table2(&s.rule).map_or("—".into(), |(a, b, c)| {
                    format!("{a:.4} / {b:.2} / {c:.2}")
                });
                ui.label(RichText::new(paper).weak());
                ui.end_row();
            }
        },
    );
}
