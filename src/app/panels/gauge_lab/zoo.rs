//! The zoo tab: every rule of the paper's Table 2 at its selected rate, recovery per seed, the
//! gap between the classes, and the table beside the paper's means.

use eframe::egui::{self, RichText};

use super::{SweepTab, named_rule_color};
use crate::app::widgets::colors::text_color;
use crate::app::widgets::reflow;
use crate::optim::class_word;
use crate::sensing::zoo::figures as zoo_figures;
use crate::sensing::zoo::names_chain;
use crate::sensing::zoo::{
    RECOVERED, REFERENCE, REFERENCE_CLASS, RunResult, class_gap, fmt4, is_reference, paper_table2,
    summarise,
};

/// The zoo tab.
pub fn tab() -> SweepTab {
    SweepTab::new(
        ("zoo", "Optimizer zoo"),
        "zoo-paper",
        "The nine rules of the paper's Table 2 at its selected rates: n = 40, rank 3, m = 2·dof, init 1e-3, up to 2·10⁴ steps, run until the training loss interpolates. The dotted line is the convex reference: the minimum-nuclear-norm matrix of each instance's measurements (not an optimizer).",
        (|_, runs| zoo_figures::zoo_figure(runs), Some(below)),
    )
}

/// Below the bars: a note when the classes overlap, and the table beside the paper's means, with
/// the convex reference's row last, in grey (a reference, not a rule).
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
    // A sweep with a flow rule counts gradients per run, so FlowAdam compares at equal cost.
    let flows = summaries.iter().any(|s| s.gradients.is_some());
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
            ] {
                ui.label(RichText::new(h).strong());
            }
            if flows {
                ui.label(RichText::new("gradients per run").strong());
            }
            ui.label(RichText::new("paper (rec / erank / bal)").strong());
        },
        |ui| {
            for (i, s) in summaries.iter().enumerate() {
                ui.label(
                    RichText::new(&s.rule)
                        .color(text_color(named_rule_color(&s.rule, i), ui.visuals()))
                        .strong(),
                );
                ui.label(class_word(names_chain(&s.rule), s.equivariant));
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
                if let Some(g) = s.gradients.filter(|_| flows) {
                    ui.label(RichText::new(format!("{g:.0}")).monospace());
                }
                let paper = paper_table2(&s.rule).map_or("—".into(), |(a, b, c)| {
                    format!("{a:.4} / {b:.2} / {c:.2}")
                });
                ui.label(RichText::new(paper).weak());
                ui.end_row();
            }
            let rec: Vec<f64> = runs
                .iter()
                .filter(|r| is_reference(r))
                .map(|r| r.recovery)
                .collect();
            if !rec.is_empty() {
                reference_row(ui, runs, &rec, flows);
            }
        },
    );
}

/// The convex reference's row: mean ± sd and range of its recoveries `rec` over the instances,
/// its effective rank, and how many instances recovered X* exactly (`flows`: the table has a
/// gradients column, empty here).
fn reference_row(ui: &mut egui::Ui, runs: &[RunResult], rec: &[f64], flows: bool) {
    let (m, sd) = crate::metrics::mean_sd(rec);
    let erank: Vec<f64> = runs
        .iter()
        .filter(|r| is_reference(r))
        .map(|r| r.erank)
        .collect();
    let lo = rec.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = rec.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let hit = rec.iter().filter(|&&x| x < RECOVERED).count();
    ui.label(RichText::new(REFERENCE).weak().strong())
        .on_hover_text("the minimum-nuclear-norm matrix of each instance's measurements");
    ui.label(RichText::new(REFERENCE_CLASS).weak());
    ui.label("—");
    ui.label(RichText::new(format!("{} ± {}", fmt4(m), fmt4(sd))).monospace());
    ui.label(RichText::new(format!("{} … {}", fmt4(lo), fmt4(hi))).monospace());
    ui.label(RichText::new(format!("{:.2}", crate::metrics::mean_sd(&erank).0)).monospace());
    ui.label("—");
    ui.label(format!("X* in {hit} of {}", rec.len()));
    if flows {
        ui.label("—");
    }
    ui.label(RichText::new("0.0335 / 3.30 / —").weak());
    ui.end_row();
}
