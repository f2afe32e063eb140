//! How the section draws a run ([`RunView`]): the logit distance, the training curves and the
//! per-head heatmap (the library's figures in [`crate::attention::figures`], drawn as saved),
//! and the checkpoint table, each with its Export CSV.

use eframe::egui::{self, Color32, RichText};

use super::{RunView, Settings};
use crate::app::lab::Lab;
use crate::app::widgets::colors::{optimizer_color, text_color};
use crate::app::widgets::figure_plot;
use crate::app::widgets::heatmap::labelled_map;
use crate::app::widgets::plots::{
    Clicked, Swatch, export_table, legend_row, plot_cell, save_figure,
};
use crate::attention::figures::{self, ModelCurves};
use crate::attention::report::paper_value;
use crate::attention::{AttentionPreset, TwinKind};
use crate::figure::{Body, Dash, Figure, arm_title};

/// The line under the heading.
pub const SUMMARY: &str = "Every rule trains a base model and its twins from one start on the \
    same data. A gauge twin turns each head's query and key weights by one orthogonal matrix: \
    every attention score, so the whole function, is unchanged and only the basis differs. \
    Solid: gauge twins; dotted: noise twins; dashed: the A = I twin, which has to stay at 0.";

/// The "What am I looking at?" text, a paragraph per entry.
pub const ABOUT: &[&str] = &[
    "Gauge twin. In a head, the score of position u seen from position t is q·k = yₜᵀ W_Qᵀ W_K y_u. \
     Multiply that head's W_Q and W_K on the left by one orthogonal A (16 × 16 in the paper's \
     model) and the product (A W_Q)ᵀ(A W_K) is W_Qᵀ W_K again: the twin computes what the base \
     model computes, written in another basis of the head's query–key space. A rule that treats \
     every basis alike (momentum SGD, scalar-Adam, Muon) keeps the pair at rounding error; Adam \
     rescales each coordinate on its own, so its steps differ between the two bases and the pair \
     drifts apart from the first update on.",
    "A = I twin. The same rotation code, run with identity matrices. Its distance must read \
     exactly 0 at every step; any other number would mean the run is not deterministic.",
    "Noise twin. W_Q and W_K plus Gaussian noise of size 1e-7, with no rotation. It lives in the \
     base model's own basis, so no rule can tell them apart by basis; the gap grows only when \
     training magnifies small differences. It measures chaos, not basis dependence.",
    "Muon. Its gauge twin leaves rounding level after about 50 steps, but its noise twin grows \
     in just the same way, by a similar factor per step. A pair that starts apart by rounding \
     and a pair that starts apart by noise both split, so the cause is how sensitive this \
     training is, not the basis: Muon's update looks the same in every basis. In f64 the gauge \
     pair splits later than in the paper's float32 run, since it starts eight orders of \
     magnitude closer.",
    "Reading the plots. The distance is ‖l₁ − l₂‖ / (½(‖l₁‖ + ‖l₂‖)) of the two models' \
     validation logits (Frobenius norms), on a log axis where values at or below 1e-18 sit at \
     1e-18. The heatmap gives the same relative distance per layer and head between the twins' \
     query–key forms W_Qᵀ W_K, which a gauge rotation leaves alone. The table reads the distance \
     at steps 0, 1, 100 and the last; in brackets the paper's figure where rule, rate, model and \
     step are the paper's (float32, so its floor is near 2e-7).",
];

/// What the training-curve plot shows (the library's, saved with the section's settings).
pub use crate::attention::figures::Curves;

/// The legend swatch of a twin kind, stroked as its lines ([`figures::twin_dash`]).
fn swatch(kind: TwinKind) -> Swatch {
    match figures::twin_dash(kind) {
        Dash::Solid => Swatch::Thin,
        Dash::Dotted => Swatch::Dotted,
        Dash::Dashed => Swatch::Dashed,
    }
}

/// A run's colour: its rule's registry colour.
fn run_color(preset: &AttentionPreset, run: usize) -> Color32 {
    optimizer_color(&preset.runs[run].rule.optimizer, run)
}

/// `x` as `1.2e-3`, exactly `0`, or a dash when unknown or not finite.
fn sci(x: Option<f64>) -> String {
    match x {
        Some(0.0) => "0".into(),
        Some(v) if v.is_finite() => format!("{v:.1e}"),
        _ => "—".into(),
    }
}

/// Draws the legend, the four cells (two per row from 900 px of width, else one) and handles
/// their exports.
pub fn plots(
    ui: &mut egui::Ui,
    lab: &mut Lab,
    preset: &AttentionPreset,
    view: &mut RunView,
    settings: &mut Settings,
) {
    let mut items: Vec<(Color32, String, Swatch)> = preset
        .runs
        .iter()
        .enumerate()
        .map(|(i, r)| (run_color(preset, i), arm_title(r.name()), Swatch::Thick))
        .collect();
    for kind in TwinKind::ALL {
        if preset.runs.iter().any(|r| r.twins.contains(&kind)) {
            items.push((
                ui.visuals().strong_text_color(),
                format!("{} twin", kind.label()),
                swatch(kind),
            ));
        }
    }
    legend_row(ui, &items);
    crate::app::widgets::plots::earlier_runs(
        ui,
        &mut view.past,
        "A new seed or preset keeps the run it replaces (the last 3): gauge twins' distances and base models' training curves",
        |_| String::new(),
    );
    let models = view.curves();
    let width = ui.available_width();
    let two = width >= 900.0;
    let w = if two { (width - 12.0) / 2.0 } else { width };
    let h = (w * 0.6).clamp(240.0, 420.0);
    let mut exports = [Clicked::default(); 4];
    let mut row = |ui: &mut egui::Ui, cells: [usize; 2]| {
        let mut draw = |ui: &mut egui::Ui, c: usize| {
            exports[c] = match c {
                0 => distance_cell(
                    ui,
                    lab.hover,
                    &figure(preset, view, &models, settings, 0).1,
                    w,
                    h,
                ),
                1 => curves_cell(ui, lab.hover, preset, view, &models, settings, w, h),
                2 => heatmap_cell(ui, lab.dark, preset, view, settings, w, h),
                _ => table_cell(ui, preset, view, w, h),
            };
        };
        if two {
            ui.horizontal_top(|ui| {
                draw(ui, cells[0]);
                draw(ui, cells[1]);
            });
        } else {
            draw(ui, cells[0]);
            draw(ui, cells[1]);
        }
    };
    row(ui, [0, 1]);
    ui.add_space(8.0);
    row(ui, [2, 3]);
    let kept = "The run is still here";
    for (c, clicked) in exports.iter().enumerate() {
        if let Some(format) = clicked.figure {
            let (stem, fig) = figure(preset, view, &models, settings, c);
            save_figure(lab, ui.ctx(), format, stem, egui::vec2(w, h), || fig);
        }
    }
    let exports = exports.map(|c| c.csv);
    if exports[0] {
        export_table(lab, "attention-distance.csv", kept, || {
            figures::distance_csv(preset, &models)
        });
    }
    if exports[1] {
        export_table(lab, "attention-curves.csv", kept, || {
            figures::curves_csv(preset, &models)
        });
    }
    if exports[2] {
        export_table(lab, "attention-heads.csv", kept, || {
            let (run, twin) = (heat_run(preset, settings), settings.heat_twin);
            figures::heads_csv(preset, run, twin, view.latest(run, Some(twin)))
        });
    }
    if exports[3] {
        export_table(lab, "attention-checkpoints.csv", kept, || {
            view.checkpoint_csv(preset)
        });
    }
}

fn distance_cell(ui: &mut egui::Ui, hover: bool, fig: &Figure, w: f32, h: f32) -> Clicked {
    plot_cell(ui, (w, h), figures::DISTANCE_TITLE, true, |ui, w, h| {
        figure_plot::plot(ui, "attention distance", fig, [Some(w), Some(h)], hover);
    })
}

#[allow(clippy::too_many_arguments)]
fn curves_cell(
    ui: &mut egui::Ui,
    hover: bool,
    preset: &AttentionPreset,
    view: &RunView,
    models: &[ModelCurves],
    settings: &mut Settings,
    w: f32,
    h: f32,
) -> Clicked {
    plot_cell(ui, (w, h), settings.curves.title(), true, |ui, w, h| {
        ui.horizontal(|ui| {
            ui.selectable_value(&mut settings.curves, Curves::Accuracy, "accuracy");
            ui.selectable_value(&mut settings.curves, Curves::Loss, "loss");
            ui.label(
                RichText::new("training solid, validation dashed")
                    .small()
                    .weak(),
            );
        });
        let id = match settings.curves {
            Curves::Accuracy => "attention curves",
            Curves::Loss => "attention loss",
        };
        let fig = figure(preset, view, models, settings, 1).1;
        figure_plot::plot(ui, id, &fig, [Some(w), Some(h - 26.0)], hover);
    })
}

/// The figure of cell `c` (0 distance, 1 curves, 2 heads) of `view` (its series `models`) as
/// the window shows it, and its file name stem.
fn figure(
    preset: &AttentionPreset,
    view: &RunView,
    models: &[ModelCurves],
    settings: &Settings,
    c: usize,
) -> (&'static str, Figure) {
    let faded = |mut f: Figure, curves: Option<figures::Curves>| {
        if let Body::Plot { marks, .. } = &mut f.body {
            marks.splice(0..0, figures::past_marks(&view.past, curves));
        }
        f
    };
    match c {
        0 => (
            "attention-distance",
            faded(figures::distance_figure(preset, models), None),
        ),
        1 => (
            "attention-curves",
            faded(
                figures::curves_figure(preset, models, settings.curves),
                Some(settings.curves),
            ),
        ),
        _ => {
            let (run, twin) = (heat_run(preset, settings), settings.heat_twin);
            let latest = view.latest(run, Some(twin));
            (
                "attention-heads",
                figures::heads_figure(preset, run, twin, latest),
            )
        }
    }
}

/// The run index of the heatmap's chosen run (the first if the name is not a run).
fn heat_run(preset: &AttentionPreset, settings: &Settings) -> usize {
    preset
        .runs
        .iter()
        .position(|r| r.name() == settings.heat_run)
        .unwrap_or(0)
}

fn heatmap_cell(
    ui: &mut egui::Ui,
    dark: bool,
    preset: &AttentionPreset,
    view: &RunView,
    settings: &mut Settings,
    w: f32,
    h: f32,
) -> Clicked {
    let title = figures::HEADS_TITLE;
    plot_cell(ui, (w, h), title, true, |ui, w, h| {
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("rule");
            egui::ComboBox::from_id_salt("attention heat run")
                .selected_text(arm_title(&settings.heat_run))
                .show_ui(ui, |ui| {
                    for r in &preset.runs {
                        let title = arm_title(r.name());
                        ui.selectable_value(&mut settings.heat_run, r.name().to_string(), title);
                    }
                })
                .response
                .labelled_by(l.id);
            let l = ui.label("twin");
            egui::ComboBox::from_id_salt("attention heat twin")
                .selected_text(settings.heat_twin.label())
                .show_ui(ui, |ui| {
                    for k in TwinKind::ALL {
                        ui.selectable_value(&mut settings.heat_twin, k, k.label());
                    }
                })
                .response
                .labelled_by(l.id);
        });
        let run = heat_run(preset, settings);
        let Some(rec) = view.latest(run, Some(settings.heat_twin)) else {
            ui.label(
                RichText::new(format!(
                    "{} has no {} twin in this preset, or no step has arrived yet.",
                    arm_title(preset.runs[run].name()),
                    settings.heat_twin.label()
                ))
                .weak(),
            );
            return;
        };
        ui.label(
            RichText::new(format!(
                "step {}: ‖(W_Qᵀ W_K)₁ − (W_Qᵀ W_K)₂‖ / mean norm; colour log-scaled from 1e-16 \
                 (pale) to 1 (dark)",
                rec.step
            ))
            .small(),
        );
        let fig = figures::heads_figure(preset, run, settings.heat_twin, Some(rec));
        let Body::Heatmaps { maps, .. } = &fig.body else {
            return;
        };
        let heads = preset.arch().heads;
        let value = |l: usize, hd: usize| rec.qk_distance.get(l * heads + hd).copied();
        for map in maps {
            labelled_map(ui, map, ["layer", "head"], (w, h - 80.0), dark, |l, hd| {
                sci(Some(value(l, hd).unwrap_or(f64::NAN)))
            });
        }
    })
}

fn table_cell(
    ui: &mut egui::Ui,
    preset: &AttentionPreset,
    view: &RunView,
    w: f32,
    h: f32,
) -> Clicked {
    let title = "Logit distance at the paper's checkpoints";
    plot_cell(ui, (w, h), title, false, |ui, w, h| {
        egui::ScrollArea::both()
            .id_salt("attention table")
            .max_width(w)
            .max_height(h)
            .show(ui, |ui| {
                ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
                egui::Grid::new("attention checkpoints")
                    .striped(true)
                    .num_columns(2 + view.checkpoints.len())
                    .show(ui, |ui| {
                        ui.label(RichText::new("rule").strong());
                        ui.label(RichText::new("twin").strong());
                        for s in &view.checkpoints {
                            ui.label(RichText::new(format!("step {s}")).strong());
                        }
                        ui.end_row();
                        for &(run, twin) in &view.roles {
                            let Some(kind) = twin else { continue };
                            ui.label(
                                RichText::new(arm_title(preset.runs[run].name()))
                                    .color(text_color(run_color(preset, run), ui.visuals())),
                            );
                            ui.label(kind.label());
                            for &s in &view.checkpoints {
                                let ours = view.at(run, twin, s).map(|r| r.logit_distance);
                                ui.vertical(|ui| {
                                    ui.label(RichText::new(sci(ours)).monospace());
                                    if let Some(p) = paper_value(preset, run, kind, s) {
                                        ui.label(
                                            RichText::new(format!("({})", sci(Some(p))))
                                                .monospace()
                                                .small()
                                                .weak(),
                                        );
                                    }
                                });
                            }
                            ui.end_row();
                        }
                    });
                ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Wrap);
                ui.set_max_width(w);
                ui.label(
                    RichText::new(
                        "Ours in f64; below in brackets the paper's value (float32 CPU, floor \
                         near 2e-7) where rule, rate, model and step match; — not reached yet.",
                    )
                    .small()
                    .weak(),
                );
            });
    })
}
