//! What the section keeps of a run (decimated series, the records at the checkpoints and the
//! latest one per model) and how it draws them: the logit distance, the training curves, the
//! per-head heatmap and the checkpoint table, each with its Export CSV.

use eframe::egui::{self, Color32, RichText, Sense, Vec2};
use egui_plot::{Line, LineStyle, PlotPoints};
use serde::{Deserialize, Serialize};

use super::{Msg, Settings};
use crate::app::history::{LOG_FLOOR, MinMaxSeries, Scale};
use crate::app::lab::Lab;
use crate::app::widgets::colors::{self, optimizer_color};
use crate::app::widgets::heatmap::blues;
use crate::app::widgets::plots::{
    Clicked, Swatch, export_table, legend_row, linear_plot, log_plot, plot_cell, save_figure,
};
use crate::app::widgets::reflow;
use crate::attention::report::{checkpoints, paper_value};
use crate::attention::{AttentionPreset, Record, TwinKind};
use crate::figure::{Axis, Body, Dash, Figure, Heatmap, Mark};
use crate::output::csv_num;
use nalgebra::DMatrix;

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

/// What the training-curve plot shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Curves {
    /// Training and validation accuracy.
    Accuracy,
    /// Training and validation loss (log scale).
    Loss,
}

/// The series of one model (a base model or a twin).
struct ModelSeries {
    distance: MinMaxSeries,
    train_acc: MinMaxSeries,
    val_acc: MinMaxSeries,
    train_loss: MinMaxSeries,
    val_loss: MinMaxSeries,
}

impl ModelSeries {
    fn new() -> Self {
        Self {
            distance: MinMaxSeries::new(Scale::Log),
            train_acc: MinMaxSeries::new(Scale::Linear),
            val_acc: MinMaxSeries::new(Scale::Linear),
            train_loss: MinMaxSeries::new(Scale::Log),
            val_loss: MinMaxSeries::new(Scale::Log),
        }
    }
}

/// What the run has reported, bounded: decimated series, the records at the checkpoints and
/// the latest record of each model.
pub struct RunView {
    /// Per model, in the run's order: its run index and twin kind (`None`: base model).
    roles: Vec<(usize, Option<TwinKind>)>,
    series: Vec<ModelSeries>,
    checkpoints: Vec<usize>,
    kept: Vec<Record>,
    latest: Vec<Option<Record>>,
    diverged: Vec<Option<usize>>,
    /// The last step whose metrics arrived (`None` before step 0's).
    pub step: Option<usize>,
    /// Whether the run keeps stepping.
    pub running: bool,
    /// Why the run stopped, if it failed or panicked.
    pub failed: Option<String>,
}

impl RunView {
    /// An empty view of `preset`'s models.
    pub fn new(preset: &AttentionPreset) -> Self {
        let roles: Vec<(usize, Option<TwinKind>)> = preset
            .runs
            .iter()
            .enumerate()
            .flat_map(|(r, run)| {
                std::iter::once((r, None)).chain(run.twins.iter().map(move |&t| (r, Some(t))))
            })
            .collect();
        let n = roles.len();
        Self {
            roles,
            series: (0..n).map(|_| ModelSeries::new()).collect(),
            checkpoints: checkpoints(preset),
            kept: Vec::new(),
            latest: vec![None; n],
            diverged: vec![None; n],
            step: None,
            running: false,
            failed: None,
        }
    }

    /// Files one message of the run.
    pub fn apply(&mut self, msg: Msg) {
        match msg {
            Msg::Records(records) => records.into_iter().for_each(|r| self.push(r)),
            Msg::Progress { step, running } => {
                self.step = Some(step);
                self.running = running;
            }
            Msg::Failed(why) => {
                self.failed = Some(why);
                self.running = false;
            }
        }
    }

    fn push(&mut self, r: Record) {
        let Some(i) = self.roles.iter().position(|&x| x == (r.run, r.twin)) else {
            return;
        };
        let s = &mut self.series[i];
        s.distance.push(r.step, r.logit_distance);
        s.train_acc.push(r.step, r.train.accuracy);
        s.val_acc.push(r.step, r.val.accuracy);
        s.train_loss.push(r.step, r.train.loss);
        s.val_loss.push(r.step, r.val.loss);
        if r.train.loss.is_nan() && self.diverged[i].is_none() {
            self.diverged[i] = Some(r.step);
        }
        if self.checkpoints.contains(&r.step) {
            self.kept.push(r.clone());
        }
        self.latest[i] = Some(r);
    }

    /// The latest record of run `run`'s model `twin` (`None`: the base model).
    pub fn latest(&self, run: usize, twin: Option<TwinKind>) -> Option<&Record> {
        let i = self.roles.iter().position(|&x| x == (run, twin))?;
        self.latest[i].as_ref()
    }

    /// The record of that model at checkpoint `step`, once it has arrived.
    pub fn at(&self, run: usize, twin: Option<TwinKind>, step: usize) -> Option<&Record> {
        self.kept
            .iter()
            .find(|r| (r.run, r.twin, r.step) == (run, twin, step))
    }

    /// The logit-distance series of that twin as drawn: (step, log10 of the value, values at or
    /// below the floor at the floor).
    pub fn distance_points(&mut self, run: usize, twin: TwinKind) -> Vec<[f64; 2]> {
        let Some(i) = self.roles.iter().position(|&x| x == (run, Some(twin))) else {
            return Vec::new();
        };
        self.series[i]
            .distance
            .points()
            .iter()
            .map(|p| [p.x, p.y])
            .collect()
    }

    /// A line per model that diverged, naming it and the step.
    pub fn divergence_lines(&self, preset: &AttentionPreset) -> Vec<String> {
        self.roles
            .iter()
            .zip(&self.diverged)
            .filter_map(|(&(run, twin), at)| {
                at.map(|s| {
                    format!(
                        "{} {} diverged at step {s} (training loss not finite or above 1e4); the \
                         other models go on.",
                        preset.runs[run].name(),
                        twin.map_or("base model".into(), |t| format!("{} twin", t.label()))
                    )
                })
            })
            .collect()
    }
}

/// The dash pattern of a twin kind, the same in the plot and its legend.
fn style(kind: TwinKind) -> (LineStyle, Swatch) {
    match kind {
        TwinKind::Gauge => (LineStyle::Solid, Swatch::Thin),
        TwinKind::Noise => (LineStyle::dotted_loose(), Swatch::Dotted),
        TwinKind::Identity => (LineStyle::dashed_loose(), Swatch::Dashed),
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

/// CSV rows into bytes (header first).
fn csv_bytes(header: &[&str], rows: Vec<Vec<String>>) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header)?;
    for r in rows {
        w.write_record(r)?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
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
        .map(|(i, r)| (run_color(preset, i), r.name().to_string(), Swatch::Thick))
        .collect();
    for kind in TwinKind::ALL {
        if preset.runs.iter().any(|r| r.twins.contains(&kind)) {
            items.push((
                ui.visuals().strong_text_color(),
                format!("{} twin", kind.label()),
                style(kind).1,
            ));
        }
    }
    legend_row(ui, &items);
    let width = ui.available_width();
    let two = width >= 900.0;
    let w = if two { (width - 12.0) / 2.0 } else { width };
    let h = (w * 0.6).clamp(240.0, 420.0);
    let mut exports = [Clicked::default(); 4];
    let mut row = |ui: &mut egui::Ui, cells: [usize; 2]| {
        let mut draw = |ui: &mut egui::Ui, c: usize| {
            exports[c] = match c {
                0 => distance_cell(ui, lab.hover, preset, view, w, h),
                1 => curves_cell(ui, lab.hover, preset, view, settings, w, h),
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
            let (stem, fig) = figure(preset, view, settings, c);
            save_figure(lab, ui.ctx(), format, stem, egui::vec2(w, h), || fig);
        }
    }
    let exports = exports.map(|c| c.csv);
    if exports[0] {
        export_table(lab, "attention-distance.csv", kept, || {
            distance_csv(preset, view)
        });
    }
    if exports[1] {
        export_table(lab, "attention-curves.csv", kept, || {
            curves_csv(preset, view)
        });
    }
    if exports[2] {
        export_table(lab, "attention-heads.csv", kept, || {
            heads_csv(preset, view, settings)
        });
    }
    if exports[3] {
        export_table(lab, "attention-checkpoints.csv", kept, || {
            table_csv(preset, view)
        });
    }
}

fn distance_cell(
    ui: &mut egui::Ui,
    hover: bool,
    preset: &AttentionPreset,
    view: &mut RunView,
    w: f32,
    h: f32,
) -> Clicked {
    let title = DISTANCE_TITLE;
    plot_cell(ui, (w, h), title, true, |ui, w, h| {
        log_plot("attention distance", "relative logit distance")
            .width(w)
            .height(h)
            .include_y(-16.0)
            .include_y(0.0)
            .show_x(hover)
            .show_y(hover)
            .show(ui, |plot| {
                for (&(run, twin), s) in view.roles.iter().zip(view.series.iter_mut()) {
                    let Some(kind) = twin else { continue };
                    let name = format!("{} {}", preset.runs[run].name(), kind.label());
                    plot.line(
                        Line::new(name, PlotPoints::Borrowed(s.distance.points()))
                            .color(run_color(preset, run))
                            .style(style(kind).0)
                            .width(reflow::line_width(plot.ctx(), 2.0)),
                    );
                }
            });
    })
}

#[allow(clippy::too_many_arguments)]
fn curves_cell(
    ui: &mut egui::Ui,
    hover: bool,
    preset: &AttentionPreset,
    view: &mut RunView,
    settings: &mut Settings,
    w: f32,
    h: f32,
) -> Clicked {
    let title = curves_title(settings.curves);
    plot_cell(ui, (w, h), title, true, |ui, w, h| {
        ui.horizontal(|ui| {
            ui.selectable_value(&mut settings.curves, Curves::Accuracy, "accuracy");
            ui.selectable_value(&mut settings.curves, Curves::Loss, "loss");
            ui.label(
                RichText::new("training solid, validation dashed")
                    .small()
                    .weak(),
            );
        });
        let h = h - 26.0;
        let plot = match settings.curves {
            Curves::Accuracy => linear_plot("attention curves", "accuracy")
                .include_y(0.0)
                .include_y(1.0),
            Curves::Loss => log_plot("attention loss", "cross-entropy (nats)"),
        };
        let loss = settings.curves == Curves::Loss;
        plot.width(w)
            .height(h)
            .show_x(hover)
            .show_y(hover)
            .show(ui, |plot| {
                for (&(run, twin), s) in view.roles.iter().zip(view.series.iter_mut()) {
                    if twin.is_some() {
                        continue;
                    }
                    let c = run_color(preset, run);
                    let name = preset.runs[run].name();
                    let (train, val) = if loss {
                        (&mut s.train_loss, &mut s.val_loss)
                    } else {
                        (&mut s.train_acc, &mut s.val_acc)
                    };
                    plot.line(
                        Line::new(
                            format!("{name} training"),
                            PlotPoints::Borrowed(train.points()),
                        )
                        .color(c)
                        .width(reflow::line_width(plot.ctx(), 2.0)),
                    );
                    plot.line(
                        Line::new(
                            format!("{name} validation"),
                            PlotPoints::Borrowed(val.points()),
                        )
                        .color(c)
                        .style(LineStyle::dashed_loose())
                        .width(reflow::line_width(plot.ctx(), 1.5)),
                    );
                }
            });
    })
}

const DISTANCE_TITLE: &str = "Twin vs base model: logit distance";
const HEADS_TITLE: &str = "Query–key form difference per head";

fn curves_title(c: Curves) -> &'static str {
    match c {
        Curves::Accuracy => "Base models' accuracy",
        Curves::Loss => "Base models' loss",
    }
}

/// The figure of cell `c` (0 distance, 1 curves, 2 heads) as the window shows it, and its file
/// name stem.
fn figure(
    preset: &AttentionPreset,
    view: &RunView,
    settings: &Settings,
    c: usize,
) -> (&'static str, Figure) {
    let rgb = |run: usize| colors::rgb(run_color(preset, run));
    let dash = |kind: TwinKind| match kind {
        TwinKind::Gauge => Dash::Solid,
        TwinKind::Noise => Dash::Dotted,
        TwinKind::Identity => Dash::Dashed,
    };
    let models = || view.roles.iter().zip(view.series.iter());
    match c {
        0 => {
            let marks = models()
                .filter_map(|(&(run, twin), s)| {
                    let kind = twin?;
                    let name = format!("{} {} twin", preset.runs[run].name(), kind.label());
                    let points = s
                        .distance
                        .raw_points()
                        .into_iter()
                        .map(|p| [p[0], p[1].max(LOG_FLOOR)])
                        .collect();
                    Some(Mark::line(name, rgb(run), points, 2.0, dash(kind)))
                })
                .collect();
            let fig = Figure {
                title: DISTANCE_TITLE.into(),
                body: Body::Plot {
                    x: Axis::linear("training step").including(0.0),
                    y: Axis::log("relative logit distance"),
                    marks,
                },
            };
            ("attention-distance", fig)
        }
        1 => {
            let loss = settings.curves == Curves::Loss;
            let mut marks = Vec::new();
            for (&(run, twin), s) in models() {
                if twin.is_some() {
                    continue;
                }
                let name = preset.runs[run].name();
                let (train, val) = if loss {
                    (&s.train_loss, &s.val_loss)
                } else {
                    (&s.train_acc, &s.val_acc)
                };
                marks.push(Mark::line(
                    format!("{name} training"),
                    rgb(run),
                    train.raw_points(),
                    2.0,
                    Dash::Solid,
                ));
                marks.push(Mark::line(
                    format!("{name} validation"),
                    rgb(run),
                    val.raw_points(),
                    1.5,
                    Dash::Dashed,
                ));
            }
            let y = if loss {
                Axis::log("cross-entropy (nats)")
            } else {
                Axis::linear("accuracy").including(0.0).including(1.0)
            };
            let fig = Figure {
                title: curves_title(settings.curves).into(),
                body: Body::Plot {
                    x: Axis::linear("training step").including(0.0),
                    y,
                    marks,
                },
            };
            ("attention-curves", fig)
        }
        _ => {
            let arch = preset.arch();
            let run = heat_run(preset, settings);
            let maps = view
                .latest(run, Some(settings.heat_twin))
                .map(|rec| {
                    let values = DMatrix::from_fn(arch.layers, arch.heads, |l, hd| {
                        heat_level(
                            rec.qk_distance
                                .get(l * arch.heads + hd)
                                .copied()
                                .unwrap_or(f64::NAN),
                        )
                    });
                    vec![Heatmap {
                        title: format!(
                            "{} {} twin, step {} (rows: layers, columns: heads)",
                            preset.runs[run].name(),
                            settings.heat_twin.label(),
                            rec.step
                        ),
                        values,
                    }]
                })
                .unwrap_or_default();
            let fig = Figure {
                title: HEADS_TITLE.into(),
                body: Body::Heatmaps {
                    maps,
                    caption: "log10 scale: 0 = 1e-16, 1 = 1".into(),
                },
            };
            ("attention-heads", fig)
        }
    }
}

/// Where a value sits on the heatmap's colour scale: log10 from 1e-16 (0) to 1 (1).
fn heat_level(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    ((x.max(1e-16).log10() + 16.0) / 16.0).clamp(0.0, 1.0)
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
    let title = HEADS_TITLE;
    plot_cell(ui, (w, h), title, true, |ui, w, h| {
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("rule");
            egui::ComboBox::from_id_salt("attention heat run")
                .selected_text(settings.heat_run.clone())
                .show_ui(ui, |ui| {
                    for r in &preset.runs {
                        ui.selectable_value(&mut settings.heat_run, r.name().to_string(), r.name());
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
                    preset.runs[run].name(),
                    settings.heat_twin.label()
                ))
                .weak(),
            );
            return;
        };
        let arch = preset.arch();
        let (layers, heads) = (arch.layers, arch.heads);
        ui.label(
            RichText::new(format!(
                "step {}: ‖(W_Qᵀ W_K)₁ − (W_Qᵀ W_K)₂‖ / mean norm; colour log-scaled from 1e-16 \
                 (pale) to 1 (dark)",
                rec.step
            ))
            .small(),
        );
        let label_w = 64.0;
        let cell = ((w - label_w - 8.0) / heads as f32)
            .min((h - 80.0) / layers as f32 - 4.0)
            .clamp(18.0, 110.0);
        let font = egui::TextStyle::Small.resolve(ui.style());
        let text = ui.visuals().text_color();
        let (rect, _) = ui.allocate_exact_size(
            Vec2::new(label_w + cell * heads as f32, 18.0 + cell * layers as f32),
            Sense::hover(),
        );
        let p = ui.painter_at(rect);
        for hd in 0..heads {
            p.text(
                rect.min + Vec2::new(label_w + (hd as f32 + 0.5) * cell, 8.0),
                egui::Align2::CENTER_CENTER,
                format!("head {}", hd + 1),
                font.clone(),
                text,
            );
        }
        for l in 0..layers {
            let y = rect.min.y + 18.0 + l as f32 * cell;
            p.text(
                egui::pos2(rect.min.x, y + cell / 2.0),
                egui::Align2::LEFT_CENTER,
                format!("layer {}", l + 1),
                font.clone(),
                text,
            );
            for hd in 0..heads {
                let v = rec
                    .qk_distance
                    .get(l * heads + hd)
                    .copied()
                    .unwrap_or(f64::NAN);
                let fill = blues(heat_level(v), dark);
                let r = egui::Rect::from_min_size(
                    egui::pos2(rect.min.x + label_w + hd as f32 * cell, y),
                    Vec2::splat(cell - 2.0),
                );
                p.rect_filled(r, 2.0, fill);
                let light = fill.r() as u32 + fill.g() as u32 + fill.b() as u32 > 420;
                let ink = if light {
                    Color32::BLACK
                } else {
                    Color32::WHITE
                };
                if cell >= 40.0 {
                    p.text(
                        r.center(),
                        egui::Align2::CENTER_CENTER,
                        sci(Some(v)),
                        font.clone(),
                        ink,
                    );
                }
            }
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
                                RichText::new(preset.runs[run].name())
                                    .color(run_color(preset, run)),
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

fn distance_csv(preset: &AttentionPreset, view: &RunView) -> Result<Vec<u8>, csv::Error> {
    let mut rows = Vec::new();
    for (i, &(run, twin)) in view.roles.iter().enumerate() {
        let Some(kind) = twin else { continue };
        for [step, v] in view.series[i].distance.raw_points() {
            rows.push(vec![
                preset.runs[run].name().to_string(),
                kind.name().to_string(),
                step.to_string(),
                csv_num(v),
            ]);
        }
    }
    csv_bytes(&["rule", "twin", "step", "logit_distance"], rows)
}

fn curves_csv(preset: &AttentionPreset, view: &RunView) -> Result<Vec<u8>, csv::Error> {
    let mut rows = Vec::new();
    for (i, &(run, twin)) in view.roles.iter().enumerate() {
        if twin.is_some() {
            continue;
        }
        let s = &view.series[i];
        for (what, series) in [
            ("train_accuracy", &s.train_acc),
            ("val_accuracy", &s.val_acc),
            ("train_loss", &s.train_loss),
            ("val_loss", &s.val_loss),
        ] {
            for [step, v] in series.raw_points() {
                rows.push(vec![
                    preset.runs[run].name().to_string(),
                    what.to_string(),
                    step.to_string(),
                    csv_num(v),
                ]);
            }
        }
    }
    csv_bytes(&["rule", "metric", "step", "value"], rows)
}

fn heads_csv(
    preset: &AttentionPreset,
    view: &RunView,
    settings: &Settings,
) -> Result<Vec<u8>, csv::Error> {
    let run = heat_run(preset, settings);
    let heads = preset.arch().heads;
    let mut rows = Vec::new();
    if let Some(rec) = view.latest(run, Some(settings.heat_twin)) {
        for (i, v) in rec.qk_distance.iter().enumerate() {
            rows.push(vec![
                preset.runs[run].name().to_string(),
                settings.heat_twin.name().to_string(),
                rec.step.to_string(),
                (i / heads + 1).to_string(),
                (i % heads + 1).to_string(),
                csv_num(*v),
            ]);
        }
    }
    csv_bytes(
        &["rule", "twin", "step", "layer", "head", "qk_distance"],
        rows,
    )
}

fn table_csv(preset: &AttentionPreset, view: &RunView) -> Result<Vec<u8>, csv::Error> {
    let mut rows = Vec::new();
    for &(run, twin) in &view.roles {
        let Some(kind) = twin else { continue };
        for &s in &view.checkpoints {
            let ours = view.at(run, twin, s).map(|r| r.logit_distance);
            rows.push(vec![
                preset.runs[run].name().to_string(),
                kind.name().to_string(),
                s.to_string(),
                ours.map_or(String::new(), csv_num),
                paper_value(preset, run, kind, s).map_or(String::new(), csv_num),
            ]);
        }
    }
    csv_bytes(&["rule", "twin", "step", "logit_distance", "paper"], rows)
}
