//! The zoo tab: every rule of the paper's Table 2 at its selected rate, recovery per seed, the
//! gap between the classes, and the table beside the paper's means.

use eframe::egui::{self, RichText};

use super::{SweepTab, class_label, named_rule_color};
use crate::app::widgets::reflow;
use crate::sensing::zoo::figures as zoo_figures;
use crate::sensing::zoo::{RunResult, class_gap, fmt4, paper_table2, summarise};

/// The zoo tab.
pub fn tab() -> SweepTab {
    SweepTab::new(
        ("zoo", "Optimizer zoo"),
        "zoo-paper",
        "The nine rules of the paper's Table 2 at its selected rates: n = 40, rank 3, m = 2·dof, init 1e-3, up to 2·10⁴ steps, run until the training loss interpolates.",
        (|_, runs| zoo_figures::zoo_figure(runs), Some(below)),
    )
}

/// Below the bars: a note when the classes overlap, and the table beside the paper's means.
fn below(ui: &mut egui::Ui, runs: &[RunResult]) {
    let summaries = summarise(runs);
    if let Some((top, bottom)) = class_gap(&summaries)
        && top >= bottom
    {
        ui.label(format!(
            "No gap between the classes: the worst equivariant seed ({top:.3}) lies above the best \
             coordinate-wise seed ({bottom:.3})."
        ));
    }
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
            for (i, s) in summaries.iter().enumerate() {
                ui.label(
                    RichText::new(&s.rule)
                        .color(named_rule_color(&s.rule, i))
                        .strong(),
                );
                ui.label(class_label(s.equivariant));
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
