//! The live run: (a) twin orientation divergence, (b) axis concentration against its rotation
//! baseline, (c) loss or column norms, (d) the learned |K| heatmaps and (e) the per-arm table.

use eframe::egui::{self, Color32, RichText};
use serde::{Deserialize, Serialize};

use super::{arm_legend, band_arm_picker, sci};
use crate::app::files::save_dialog;
use crate::app::lab::Lab;
use crate::app::panel::{Panel, Status, from_ron, to_ron};
use crate::app::widgets::colors::{optimizer_color, text_color};
use crate::app::widgets::figure_plot;
use crate::app::widgets::heatmap::{color_bar, key_heatmap, key_image};
use crate::app::widgets::plots::{
    Clicked, Swatch, earlier_runs, legend_row, plot_cell, plot_header, save_figure,
};
use crate::app::widgets::reflow::{self, Cells, PLOT_MIN_W};
use crate::experiment::ArmStatus;
/// Which plot's data an "Export CSV" button saves (the library's name for the live plots).
pub use crate::experiment::figures::LivePlot as Export;
use crate::experiment::figures::{self, ArmSeries, RunView};
use crate::figure::Earlier;
use crate::history::{ArmHistory, LOG_FLOOR, RunHistory};
use crate::optim::class_word;

/// The live-run tab.
#[derive(Default)]
pub struct Live {
    /// What the tab saves.
    pub settings: Settings,
    heatmaps: Heatmaps,
}

/// Plot (d): textures of the latest snapshot's keys, remade only when it changes.
#[derive(Default)]
struct Heatmaps {
    /// |K| heatmap textures of the latest snapshot, per arm.
    textures: Vec<Option<egui::TextureHandle>>,
    /// (snapshot serial number, dark theme) the textures were made for.
    stamp: Option<(u64, bool)>,
}

/// What the tab saves.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Plot (c) shows raw column norms instead of the loss.
    pub show_norms: bool,
    /// Arm whose random-rotation baseline band is shaded in plot (b).
    pub band_arm: usize,
}

impl Default for Settings {
    fn default() -> Self {
        let view = RunView::default();
        Self {
            show_norms: view.show_norms,
            band_arm: view.band_arm,
        }
    }
}

impl Settings {
    /// The plots' view these settings choose.
    pub fn view(&self) -> RunView {
        RunView {
            show_norms: self.show_norms,
            band_arm: self.band_arm,
        }
    }
}

impl Panel for Live {
    fn id(&self) -> &'static str {
        "live"
    }

    fn title(&self) -> &'static str {
        "Live run"
    }

    /// Busy until the keys on screen are those of the current step.
    fn status(&self, lab: &Lab) -> Status {
        Status {
            busy: super::snapshot_behind(lab),
            ..Status::default()
        }
    }

    fn save(&self) -> Option<String> {
        to_ron(&self.settings)
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        self.settings = from_ron(ron)?;
        Ok(Vec::new())
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        let Some(preset) = lab.history.preset.clone() else {
            ui.label("Starting…");
            return;
        };
        let hover = lab.hover;
        let runs_h = if lab.history.past.is_empty() {
            0.0
        } else {
            30.0
        };
        let table_h = 48.0 + 25.0 * lab.history.arms.len() as f32 + runs_h;
        let cells = Cells::fit(ui, "plots", 4, PLOT_MIN_W, 2);
        let plot_h = cells.height(ui.available_height(), table_h + 60.0, 560.0);
        let col_w = cells.w;
        let mut export = None;
        let mut figure = None;
        let (s, maps) = (&mut self.settings, &mut self.heatmaps);
        let mut note = |kind: Option<Export>, c: Clicked| {
            if c.csv {
                export = kind;
            }
            if let Some(f) = c.figure {
                figure = Some((kind, f));
            }
        };
        let (history, arms) = (&lab.history, &lab.history.arms);
        let d_k = preset.d_k;
        let size = |h: f32| [Some(col_w), Some(h)];
        reflow::grid(ui, 4, cells, |ui, i| match i {
            0 => note(
                Some(Export::Orientation),
                plot_cell(
                    ui,
                    (col_w, plot_h),
                    figures::ORIENTATION_TITLE,
                    true,
                    |ui, _, h| {
                        orientation_legend(ui, arms);
                        let (_, fig) =
                            figures::run_figure(history, Some(Export::Orientation), s.view(), d_k);
                        figure_plot::plot(ui, "orientation", &fig, size(h - 24.0), hover);
                    },
                ),
            ),
            1 => note(
                Some(Export::Axis),
                plot_cell(
                    ui,
                    (col_w, plot_h),
                    figures::AXIS_TITLE,
                    true,
                    |ui, _, h| {
                        axis_legend(ui, arms);
                        reflow::controls_row(ui, |ui| {
                            band_arm_picker(
                                ui,
                                "band arm",
                                "shaded: 5–95% of A over random rotations of the keys of",
                                arms,
                                &mut s.band_arm,
                            );
                        });
                        let (_, fig) =
                            figures::run_figure(history, Some(Export::Axis), s.view(), d_k);
                        figure_plot::plot(ui, "axis", &fig, size(h - 52.0), hover);
                    },
                ),
            ),
            2 => note(
                Some(Export::Loss),
                plot_cell(
                    ui,
                    (col_w, plot_h),
                    "(c) Runs from W0: loss, or raw column norms",
                    true,
                    |ui, _, h| {
                        ui.horizontal(|ui| {
                            ui.selectable_value(&mut s.show_norms, false, "loss");
                            ui.selectable_value(&mut s.show_norms, true, "column norms ‖w‖");
                        });
                        loss_legend(ui, arms, s.show_norms);
                        let (_, fig) =
                            figures::run_figure(history, Some(Export::Loss), s.view(), d_k);
                        let id = if s.show_norms { "norms" } else { "loss" };
                        figure_plot::plot(ui, id, &fig, size(h - 50.0), hover);
                    },
                ),
            ),
            _ => {
                note(
                    None,
                    plot_header(
                        ui,
                        "(d) Learned |K| of each arm's run from W0: one column per key, one row per coordinate",
                        None,
                        true,
                    ),
                );
                maps.ui(lab, ui, col_w, plot_h - 10.0);
            }
        });
        if let Some((kind, format)) = figure {
            let size = egui::vec2(col_w, plot_h);
            let (stem, fig) = live_figure(lab, kind, s, preset.d_k);
            save_figure(lab, ui.ctx(), format, stem, size, || fig);
        }
        ui.add_space(4.0);
        earlier_runs(
            ui,
            &mut lab.history.past,
            "A restart keeps the run it replaces (the last 4), named by what it had that the next run changed; their data is in Export CSV too.",
            |r| format!(" ({} steps)", r.steps),
        );
        table(lab, ui);
        if let Some(kind) = export {
            let default = match kind {
                Export::Orientation => "orientation_divergence.csv",
                Export::Axis => "axis_concentration.csv",
                Export::Loss => "loss.csv",
            };
            if let Some(path) = save_dialog("CSV", "csv", default) {
                export_csv_to(lab, kind, &path);
            }
        }
    }
}

/// The figure of live plot `kind` ((d), the keys, for `None`) as the window shows it, and its
/// file name stem ([`figures::run_figure`], which `run --figures` calls too).
pub fn live_figure(
    lab: &Lab,
    kind: Option<Export>,
    settings: &Settings,
    d_k: usize,
) -> (&'static str, crate::figure::Figure) {
    figures::run_figure(&lab.history, kind, settings.view(), d_k)
}

/// Plot (a)'s legend: each arm's twins, the noise twins and the floor.
fn orientation_legend(ui: &mut egui::Ui, arms: &[ArmHistory]) {
    let mut items = arm_legend(arms, ", gauge twin");
    if arms.iter().any(|a| !a.noise_div.is_empty()) {
        items.push((
            Color32::GRAY,
            "noise twins (W0 + 1e-12 noise)".into(),
            Swatch::Dashed,
        ));
    }
    items.push((
        Color32::GRAY,
        format!("exact 0, drawn at {LOG_FLOOR:.0e}"),
        Swatch::Dotted,
    ));
    legend_row(ui, &items);
}

/// Plot (b)'s legend: the arms and the isotropic level.
fn axis_legend(ui: &mut egui::Ui, arms: &[ArmHistory]) {
    let mut items = arm_legend(arms, "");
    items.push((
        Color32::GRAY,
        "3/(d_k+2), random directions".into(),
        Swatch::Dashed,
    ));
    legend_row(ui, &items);
}

/// Plot (c)'s legend: the arms and what the norms view or the loss view draws.
fn loss_legend(ui: &mut egui::Ui, arms: &[ArmHistory], norms: bool) {
    let mut items = arm_legend(arms, "");
    let extra = if norms {
        [
            ("mean ‖w‖ over keys", Swatch::Thick),
            ("spread (sd over keys)", Swatch::Dashed),
        ]
    } else {
        [
            ("held-out", Swatch::Dot),
            ("training (50-step average)", Swatch::Thin),
        ]
    };
    items.extend(extra.map(|(name, swatch)| (Color32::GRAY, name.to_string(), swatch)));
    legend_row(ui, &items);
}

impl Heatmaps {
    fn ui(&mut self, lab: &Lab, ui: &mut egui::Ui, w: f32, h: f32) {
        let Some(snap) = &lab.history.snapshot else {
            ui.label("Waiting for the first snapshot…");
            return;
        };
        let dark = lab.dark;
        let stamp = (lab.snapshot_serial, dark);
        if self.stamp != Some(stamp) {
            self.textures = snap
                .keys
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    k.as_ref().map(|k| {
                        ui.ctx().load_texture(
                            format!("keys {i}"),
                            key_image(k, dark),
                            egui::TextureOptions::NEAREST,
                        )
                    })
                })
                .collect();
            self.stamp = Some(stamp);
        }
        let arms = &lab.history.arms;
        let n = arms.len().max(1);
        let cols = if n <= 2 { n } else { 2 };
        let rows = n.div_ceil(cols);
        let bar_w = 70.0;
        let cell_w = (w - bar_w - 12.0 * cols as f32) / cols as f32;
        let cell_h = (h - 30.0 * rows as f32) / rows as f32 - 6.0;
        ui.horizontal_top(|ui| {
            egui::Grid::new("heatmaps")
                .num_columns(cols)
                .spacing([12.0, 4.0])
                .show(ui, |ui| {
                    for (i, a) in arms.iter().enumerate() {
                        ui.vertical(|ui| {
                            ui.set_max_width(cell_w);
                            let c = optimizer_color(&a.label.optimizer, i);
                            // A long rule name ends in "…" rather than widen the map's column.
                            ui.add(
                                egui::Label::new(
                                    RichText::new(format!(
                                        "{} · step {}",
                                        figures::arm_title(&a.name()),
                                        snap.step
                                    ))
                                    .color(text_color(c, ui.visuals()))
                                    .strong(),
                                )
                                .truncate(),
                            );
                            let keys = snap.keys.get(i).and_then(|k| k.as_ref());
                            let tex = self.textures.get(i).and_then(|t| t.as_ref());
                            match (keys, tex) {
                                (Some(k), Some(t)) => {
                                    key_heatmap(
                                        ui,
                                        k,
                                        t,
                                        egui::vec2(cell_w, cell_h.max(40.0)),
                                        lab.hover,
                                    );
                                }
                                _ => {
                                    // Why: a non-finite value, or a rule that cannot carry it.
                                    ui.label("stopped — no keys")
                                        .on_hover_text(a.status.to_string());
                                }
                            }
                        });
                        if (i + 1) % cols == 0 {
                            ui.end_row();
                        }
                    }
                });
            color_bar(ui, (h - 60.0).max(60.0), "|k|", dark);
        });
    }
}

fn table(lab: &Lab, ui: &mut egui::Ui) {
    ui.label(RichText::new("(e) Per arm, latest step (pair metrics compare the run from W0 with the run from Q·W0)").strong());
    reflow::table(
        ui,
        "arm table",
        |ui| {
            for head in [
                "arm",
                "class",
                "twin orientation div",
                "Gram div",
                "held-out acc",
                "held-out loss",
                "mean ‖w‖",
                "A(K)",
                "baseline mean ± sd",
                "excess",
                "z",
            ] {
                ui.label(RichText::new(head).strong());
            }
        },
        |ui| {
            for (i, a) in lab.history.arms.iter().enumerate() {
                let c = optimizer_color(&a.label.optimizer, i);
                let name = ui.label(
                    RichText::new(a.name())
                        .color(text_color(c, ui.visuals()))
                        .strong(),
                );
                if let ArmStatus::Diverged { .. } = &a.status {
                    // Why it stopped: a non-finite value, or a rule that cannot carry the run.
                    name.on_hover_text(a.status.to_string());
                }
                let chain = a.label.optimizer == crate::optim::CHAIN_INFO.name;
                ui.label(class_word(chain, a.label.equivariant));
                match a.latest {
                    Some(r) => {
                        let div = RichText::new(sci(r.orientation_div)).monospace();
                        let fault = a.label.equivariant && r.orientation_div > 1e-10;
                        ui.label(if fault {
                            div.color(Color32::RED)
                        } else {
                            div
                        })
                        .on_hover_text(if fault {
                            "An equivariant arm's twins should stay near rounding noise. Above 1e-10 either the harness is at fault or, for Muon, its orthogonalisation is amplifying rounding (likely when the loss barely depends on the keys)."
                        } else {
                            "‖W′ − QW‖F / ‖W‖F"
                        });
                        ui.label(RichText::new(sci(r.gram_div)).monospace());
                    }
                    None => {
                        ui.label("—");
                        ui.label("—");
                    }
                }
                match a.heldout {
                    Some((_, h)) => {
                        ui.label(RichText::new(format!("{:.3}", h.accuracy[0])).monospace());
                        ui.label(RichText::new(format!("{:.4}", h.loss[0])).monospace());
                    }
                    None => {
                        ui.label("—");
                        ui.label("—");
                    }
                }
                match a.latest {
                    Some(r) => {
                        ui.label(RichText::new(norm_text(r.mean_column_norm[0])).monospace());
                    }
                    None => {
                        ui.label("—");
                    }
                }
                match &a.baseline {
                    Some([b, _]) => {
                        ui.label(RichText::new(format!("{:.4}", b.axis_concentration)).monospace());
                        ui.label(RichText::new(format!("{:.4} ± {:.4}", b.mean, b.sd)).monospace());
                        ui.label(RichText::new(format!("{:+.2e}", b.excess)).monospace());
                        let z = if b.z.is_finite() {
                            format!("{:+.2}", b.z)
                        } else {
                            "—".into()
                        };
                        ui.label(RichText::new(z).monospace());
                    }
                    None => {
                        for _ in 0..4 {
                            ui.label("—");
                        }
                    }
                }
                ui.end_row();
            }
        },
    );
}

/// Writes the data of plot `kind` (`series,step,value` rows) to `path` atomically; the outcome
/// becomes a notice. On failure nothing is lost: the history stays in memory for another try.
pub fn export_csv_to(lab: &mut Lab, kind: Export, path: &std::path::Path) -> bool {
    let csv = plot_csv(&lab.history, kind);
    lab.write_file(path, csv.as_bytes(), "The run's data is still here")
}

/// The data of plot `kind` as CSV ([`figures::live_csv`] of every arm's decimated series:
/// each min/max bucket, and for plot (b) the baseline band), then the shown earlier runs'.
pub fn plot_csv(history: &RunHistory, kind: Export) -> String {
    let current = history.arms.iter().map(|a| (a.label.name.clone(), a));
    // The earlier runs shown, named `earlier N [what differed] arm` (commas become `;`).
    let past = Earlier::shown(&history.past).flat_map(|(n, e)| {
        let label = e.label.replace(',', ";");
        e.run
            .arms
            .iter()
            .map(move |a| (format!("earlier {} [{label}] {}", n + 1, a.label.name), a))
    });
    let arms: Vec<ArmSeries> = current
        .chain(past)
        .map(|(name, a)| ArmSeries {
            name,
            orientation: a.orientation_div.raw_points(),
            axis: [
                a.axis_concentration[0].raw_points(),
                a.axis_concentration[1].raw_points(),
            ],
            train_loss: a.loss[0].raw_points(),
            heldout: a.heldout_loss[0].raw_points(),
            band: a
                .band
                .points()
                .iter()
                .map(|p| [p[0], p[2], p[3], p[4]])
                .collect(),
        })
        .collect();
    figures::live_csv(&arms, kind)
}

/// A column norm for the table: three decimals at the scales presets use, scientific notation
/// far from them (an `init_std` of 1e-200 makes norms of 1e199), a dash when not a number.
fn norm_text(x: f64) -> String {
    if !x.is_finite() {
        "—".into()
    } else if (1e-3..1e4).contains(&x.abs()) {
        format!("{x:.3}")
    } else {
        format!("{x:.2e}")
    }
}
