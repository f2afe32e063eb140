//! §5 The controlled test: GD, Adam and friends trained from W0 and Q·W0 on one episode stream,
//! live (the explainer's Demo 4), and the seed sweep that keeps one lucky run from fooling you.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{FilledArea, HLine, Line, LineStyle, PlotPoints, Points, VLine};

use crate::app::history::{ArmHistory, BandSeries, LOG_FLOOR, MinMaxSeries};
use crate::app::state::{AppState, LiveTab};
use crate::app::widgets::colors::{faded, optimizer_color};
use crate::app::widgets::heatmap::{color_bar, key_heatmap, key_image};
use crate::app::widgets::plots::{Swatch, category_axis, legend_row, linear_plot, log_plot};
use crate::experiment::ArmStatus;
use crate::experiment::output::write_atomic;
use crate::metrics::isotropic_axis_concentration;
use crate::worker::Command;

/// Draws the panel.
pub fn ui(state: &mut AppState, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        ui.heading("5 · The controlled test");
        ui.label(
            RichText::new("every arm trained twice — from W0 and from Q·W0 — on the same episodes")
                .weak(),
        );
    });
    let mut about = state.about_open;
    ui.horizontal(|ui| {
        if ui
            .selectable_label(about, "What am I looking at?")
            .on_hover_text("How to read the four plots and the table")
            .clicked()
        {
            about = !about;
        }
        let p = &state.settings.preset;
        ui.label(RichText::new(format!("preset “{}”: {}", p.name, p.description)).weak());
    });
    egui::Window::new("What am I looking at?")
        .open(&mut about)
        .default_width(640.0)
        .default_height(520.0)
        .vscroll(true)
        .show(ui.ctx(), |ui| {
            super::demos::text(ui, crate::app::state::Section::ControlledTest);
        });
    state.about_open = about;
    banners(state, ui);
    toolbar(state, ui);
    ui.separator();
    ui.horizontal(|ui| {
        for (tab, label) in LiveTab::ALL {
            ui.selectable_value(&mut state.settings.tab, tab, label);
        }
    });
    match state.settings.tab {
        LiveTab::Live => live(state, ui),
        LiveTab::Activations => super::analyses::activations(state, ui),
        LiveTab::Sweep => sweep(state, ui),
        LiveTab::Eps => super::analyses::eps(state, ui),
        LiveTab::Matched => super::analyses::matched(state, ui),
        LiveTab::Dk => super::analyses::dk(state, ui),
    }
}

fn banners(state: &mut AppState, ui: &mut egui::Ui) {
    if let Some(msg) = state.crashed.clone() {
        egui::Frame::new()
            .fill(Color32::from_rgb(150, 20, 20))
            .inner_margin(8.0)
            .corner_radius(4.0)
            .show(ui, |ui| {
                ui.horizontal(|ui| {
                    ui.label(
                        RichText::new(format!("The training worker crashed: {msg}"))
                            .color(Color32::WHITE)
                            .strong(),
                    );
                    if ui.button("Restart worker").clicked() {
                        state.restart_worker();
                    }
                });
            });
    }
    crate::app::widgets::notice::row(state, ui);
}

fn toolbar(state: &mut AppState, ui: &mut egui::Ui) {
    let h = &state.history;
    let running = h.running;
    let budget = state
        .settings
        .stop
        .at_step
        .unwrap_or(state.settings.preset.steps);
    ui.horizontal_wrapped(|ui| {
        let play = if running { "❚❚ Pause" } else { "▶ Play" };
        if ui
            .button(RichText::new(play).strong())
            .on_hover_text("Space")
            .clicked()
        {
            state.toggle_play();
        }
        if ui.button("Step").on_hover_text("Period (.)").clicked() {
            state.send(Command::Step(1));
        }
        let label = format!("Step {}", state.settings.step_n);
        if ui.button(label).clicked() {
            state.send(Command::Step(state.settings.step_n));
        }
        let n_label = ui.label("N");
        ui.add(egui::DragValue::new(&mut state.settings.step_n).range(1..=1_000_000))
            .labelled_by(n_label.id);
        if ui
            .button("⟲ Reset")
            .on_hover_text("R — back to step 0 with the same W0, Q and episodes")
            .clicked()
        {
            state.send(Command::Reset);
        }
        if ui
            .button("New seed")
            .on_hover_text("New W0, Q and episodes (seed + 1); restarts")
            .clicked()
        {
            let mut p = state.settings.preset.clone();
            p.seed = p.seed.wrapping_add(1);
            state.apply_preset(p);
        }
        ui.separator();
        let h = &state.history;
        ui.label(
            RichText::new(format!("step {} / {budget}", h.step))
                .monospace()
                .strong(),
        );
        if running {
            ui.label(RichText::new(format!("{:.0} steps/s", h.steps_per_sec)).weak());
        } else if let Some(why) = &h.stopped {
            ui.label(RichText::new(format!("paused: {why}")).weak());
        } else {
            ui.label(RichText::new("paused").weak());
        }
        ui.label(RichText::new(format!("seed {}", state.settings.preset.seed)).weak());
    });
}

fn live(state: &mut AppState, ui: &mut egui::Ui) {
    let Some(preset) = state.history.preset.clone() else {
        ui.label("Starting…");
        return;
    };
    let hover = state.hover;
    let avail = ui.available_size();
    let table_h = 48.0 + 25.0 * state.history.arms.len() as f32;
    let plot_h = ((avail.y - table_h - 60.0) / 2.0).clamp(180.0, 560.0);
    let col_w = (avail.x - 16.0) / 2.0;
    let mut export = None;
    egui::Grid::new("plots")
        .num_columns(2)
        .spacing([12.0, 6.0])
        .show(ui, |ui| {
            plot_cell(ui, col_w, plot_h, "(a) Twin orientation divergence ‖W′ − QW‖F / ‖W‖F", &mut export, Export::Orientation, |ui, w, h| {
                orientation_plot(&mut state.history.arms, ui, w, h, hover)
            });
            plot_cell(ui, col_w, plot_h, "(b) Axis concentration A(K): thick from W0, thin from Q·W0", &mut export, Export::Axis, |ui, w, h| {
                axis_plot(state, preset.d_k, ui, w, h)
            });
            ui.end_row();
            plot_cell(ui, col_w, plot_h, "(c) Runs from W0: loss, or raw column norms", &mut export, Export::Loss, |ui, w, h| {
                let s = &mut *state;
                ui.horizontal(|ui| {
                    ui.selectable_value(&mut s.settings.show_norms, false, "loss");
                    ui.selectable_value(&mut s.settings.show_norms, true, "column norms ‖w‖");
                });
                if s.settings.show_norms {
                    norms_plot(&mut s.history.arms, ui, w, h - 26.0, hover)
                } else {
                    loss_plot(&mut s.history.arms, ui, w, h - 26.0, hover)
                }
            });
            ui.vertical(|ui| {
                ui.set_width(col_w);
                ui.label(RichText::new("(d) Learned |K| of each arm's run from W0: one column per key, one row per coordinate").strong());
                heatmaps(state, ui, col_w, plot_h - 10.0);
            });
            ui.end_row();
        });
    ui.add_space(4.0);
    table(state, ui);
    if let Some(kind) = export {
        export_csv(state, kind);
    }
}

/// Which plot's data an "Export CSV" button saves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Export {
    /// Plot (a): twin orientation divergence.
    Orientation,
    /// Plot (b): axis concentration and the baseline band.
    Axis,
    /// Plot (c): training and held-out loss.
    Loss,
}

fn plot_cell(
    ui: &mut egui::Ui,
    w: f32,
    h: f32,
    title: &str,
    export: &mut Option<Export>,
    kind: Export,
    draw: impl FnOnce(&mut egui::Ui, f32, f32),
) {
    ui.vertical(|ui| {
        ui.set_width(w);
        ui.horizontal(|ui| {
            ui.label(RichText::new(title).strong());
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui
                    .small_button("Export CSV")
                    .on_hover_text("Save this plot's data (min/max per bucket) as CSV")
                    .clicked()
                {
                    *export = Some(kind);
                }
            });
        });
        draw(ui, w, h - 24.0);
    });
}

/// One thick legend entry per arm in its colour, named `<arm><suffix>`.
pub(super) fn arm_legend(arms: &[ArmHistory], suffix: &str) -> Vec<(Color32, String, Swatch)> {
    arms.iter()
        .enumerate()
        .map(|(i, a)| {
            (
                optimizer_color(&a.label.optimizer, i),
                format!("{}{suffix}", arm_name(a)),
                Swatch::Thick,
            )
        })
        .collect()
}

/// A labelled drop-down choosing the arm whose random-rotation baseline is shaded; `label`
/// says what the band is.
pub(super) fn band_arm_picker(
    ui: &mut egui::Ui,
    id: &str,
    label: &str,
    arms: &[ArmHistory],
    band_arm: &mut usize,
) {
    let l = ui.label(RichText::new(label).small());
    egui::ComboBox::from_id_salt(id)
        .selected_text(
            arms.get(*band_arm)
                .map_or(String::new(), |a| a.label.name.clone()),
        )
        .show_ui(ui, |ui| {
            for (i, a) in arms.iter().enumerate() {
                ui.selectable_value(band_arm, i, &a.label.name);
            }
        })
        .response
        .labelled_by(l.id);
}

/// The 5–95% band of a baseline series as a filled area (finite rows only); `None` with fewer
/// than two rows.
pub(super) fn band_area(s: &BandSeries, name: String, fill: Color32) -> Option<FilledArea> {
    let pts: Vec<&[f64; 5]> = s.finite_points().collect();
    if pts.len() < 2 {
        return None;
    }
    let xs: Vec<f64> = pts.iter().map(|p| p[0]).collect();
    let lo: Vec<f64> = pts.iter().map(|p| p[2]).collect();
    let hi: Vec<f64> = pts.iter().map(|p| p[4]).collect();
    Some(FilledArea::new(name, &xs, &lo, &hi).fill_color(fill))
}

fn arm_name(a: &ArmHistory) -> String {
    match &a.status {
        ArmStatus::Running => a.label.name.clone(),
        ArmStatus::Diverged { step, .. } => format!("{} (diverged at {step})", a.label.name),
    }
}

fn line<'a>(name: String, series: &'a mut MinMaxSeries, color: Color32, width: f32) -> Line<'a> {
    Line::new(name, PlotPoints::Borrowed(series.points()))
        .color(color)
        .width(width)
}

fn orientation_plot(arms: &mut [ArmHistory], ui: &mut egui::Ui, w: f32, h: f32, hover: bool) {
    let floor = LOG_FLOOR.log10();
    let mut items = arm_legend(arms, " twins");
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
    log_plot("orientation", "‖W′ − QW‖F / ‖W‖F (log scale)")
        .width(w)
        .height(h - 24.0)
        .include_y(floor)
        .include_y(0.0)
        .show_x(hover)
        .show_y(hover)
        .show(ui, |plot| {
            plot.hline(
                HLine::new("floor", floor)
                    .color(Color32::GRAY)
                    .style(LineStyle::dotted_loose()),
            );
            for (i, a) in arms.iter_mut().enumerate() {
                let c = optimizer_color(&a.label.optimizer, i);
                let label = arm_name(a);
                plot.line(line(
                    format!("{label} twins"),
                    &mut a.orientation_div,
                    c,
                    2.5,
                ));
                if !a.noise_div.is_empty() {
                    plot.line(
                        line(format!("{label} noise twin"), &mut a.noise_div, c, 1.5)
                            .style(LineStyle::dashed_loose()),
                    );
                }
                if let ArmStatus::Diverged { step, .. } = a.status {
                    plot.vline(
                        VLine::new(format!("{} diverged", a.label.name), step as f64)
                            .color(c)
                            .style(LineStyle::dashed_dense()),
                    );
                }
            }
        });
}

fn axis_plot(state: &mut AppState, d_k: usize, ui: &mut egui::Ui, w: f32, h: f32) {
    let hover = state.hover;
    let dark = state.settings.dark;
    let arms = &mut state.history.arms;
    let band_arm = state.settings.band_arm.min(arms.len().saturating_sub(1));
    let mut items = arm_legend(arms, "");
    items.push((
        Color32::GRAY,
        "3/(d_k+2), random directions".into(),
        Swatch::Dashed,
    ));
    ui.horizontal(|ui| {
        legend_row(ui, &items);
    });
    ui.horizontal(|ui| {
        band_arm_picker(
            ui,
            "band arm",
            "shaded: 5–95% of A over random rotations of the keys of",
            arms,
            &mut state.settings.band_arm,
        );
    });
    linear_plot("axis", "A(K) = (1/V) Σ k⁴")
        .width(w)
        .height(h - 52.0)
        .show_x(hover)
        .show_y(hover)
        .show(ui, |plot| {
            if let Some(a) = arms.get(band_arm) {
                let c = optimizer_color(&a.label.optimizer, band_arm);
                let alpha = if dark { 30 } else { 45 };
                let name = format!("{} rotation baseline 5–95%", a.label.name);
                if let Some(area) = band_area(&a.band, name, faded(c, alpha)) {
                    plot.add(area);
                }
            }
            for (i, a) in arms.iter_mut().enumerate() {
                let c = optimizer_color(&a.label.optimizer, i);
                let name = arm_name(a);
                let [base, rot] = &mut a.axis_concentration;
                plot.line(line(format!("{name} from Q·W0"), rot, faded(c, 150), 1.0));
                plot.line(line(format!("{name} from W0"), base, c, 2.5));
            }
            plot.hline(
                HLine::new("3/(d_k+2)", isotropic_axis_concentration(d_k))
                    .color(Color32::GRAY)
                    .style(LineStyle::dashed_loose()),
            );
        });
}

fn norms_plot(arms: &mut [ArmHistory], ui: &mut egui::Ui, w: f32, h: f32, hover: bool) {
    let mut items = arm_legend(arms, "");
    items.push((Color32::GRAY, "mean ‖w‖ over keys".into(), Swatch::Thick));
    items.push((
        Color32::GRAY,
        "spread (sd over keys)".into(),
        Swatch::Dashed,
    ));
    legend_row(ui, &items);
    linear_plot("norms", "raw column norm ‖w‖")
        .width(w)
        .height(h - 24.0)
        .include_y(0.0)
        .show_x(hover)
        .show_y(hover)
        .show(ui, |plot| {
            for (i, a) in arms.iter_mut().enumerate() {
                let c = optimizer_color(&a.label.optimizer, i);
                let name = arm_name(a);
                plot.line(line(format!("{name} mean"), &mut a.column_norm[0], c, 2.5));
                plot.line(
                    line(format!("{name} sd"), &mut a.column_norm_sd, c, 1.2)
                        .style(LineStyle::dashed_loose()),
                );
            }
        });
}

fn loss_plot(arms: &mut [ArmHistory], ui: &mut egui::Ui, w: f32, h: f32, hover: bool) {
    let mut items = arm_legend(arms, "");
    items.push((Color32::GRAY, "held-out".into(), Swatch::Dot));
    items.push((
        Color32::GRAY,
        "training (50-step average)".into(),
        Swatch::Thin,
    ));
    legend_row(ui, &items);
    linear_plot("loss", "cross-entropy per query (nats)")
        .width(w)
        .height(h - 24.0)
        .include_y(0.0)
        .show_x(hover)
        .show_y(hover)
        .show(ui, |plot| {
            for (i, a) in arms.iter_mut().enumerate() {
                let c = optimizer_color(&a.label.optimizer, i);
                let name = arm_name(a);
                let dots: Vec<[f64; 2]> = a.heldout_loss[0]
                    .points()
                    .iter()
                    .map(|p| [p.x, p.y])
                    .collect();
                plot.points(
                    Points::new(format!("{name} held-out"), dots)
                        .color(c)
                        .radius(3.5)
                        .filled(true),
                );
                plot.line(line(
                    format!("{name} training (average)"),
                    &mut a.loss_average,
                    faded(c, 170),
                    1.2,
                ));
                plot.line(line(
                    format!("{name} held-out"),
                    &mut a.heldout_loss[0],
                    c,
                    2.5,
                ));
            }
        });
}

fn heatmaps(state: &mut AppState, ui: &mut egui::Ui, w: f32, h: f32) {
    let Some(snap) = &state.history.snapshot else {
        ui.label("Waiting for the first snapshot…");
        return;
    };
    let dark = state.settings.dark;
    let stamp = (state.snapshot_serial, dark);
    if state.heatmap_stamp != Some(stamp) {
        state.heatmap_textures = snap
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
        state.heatmap_stamp = Some(stamp);
    }
    let arms = &state.history.arms;
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
                        let c = optimizer_color(&a.label.optimizer, i);
                        ui.label(
                            RichText::new(format!("{} · step {}", arm_name(a), snap.step))
                                .color(c)
                                .strong(),
                        );
                        let keys = snap.keys.get(i).and_then(|k| k.as_ref());
                        let tex = state.heatmap_textures.get(i).and_then(|t| t.as_ref());
                        match (keys, tex) {
                            (Some(k), Some(t)) => {
                                key_heatmap(
                                    ui,
                                    k,
                                    t,
                                    egui::vec2(cell_w, cell_h.max(40.0)),
                                    state.hover,
                                );
                            }
                            _ => {
                                ui.label("diverged — no keys");
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

fn sci(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2e}")
    } else {
        "—".into()
    }
}

fn table(state: &AppState, ui: &mut egui::Ui) {
    ui.label(RichText::new("(e) Per arm, latest step (pair metrics compare the run from W0 with the run from Q·W0)").strong());
    egui::ScrollArea::horizontal()
        .id_salt("table scroll")
        .show(ui, |ui| table_grid(state, ui));
}

fn table_grid(state: &AppState, ui: &mut egui::Ui) {
    egui::Grid::new("arm table")
        .striped(true)
        .spacing([12.0, 4.0])
        .show(ui, |ui| {
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
            ui.end_row();
            for (i, a) in state.history.arms.iter().enumerate() {
                let c = optimizer_color(&a.label.optimizer, i);
                ui.label(RichText::new(arm_name(a)).color(c).strong());
                ui.label(if a.label.equivariant {
                    "equivariant"
                } else {
                    "coordinate-wise"
                });
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
                        ui.label(RichText::new(format!("{:.3}", r.mean_column_norm[0])).monospace());
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
        });
}

fn export_csv(state: &mut AppState, kind: Export) {
    let default = match kind {
        Export::Orientation => "orientation_divergence.csv",
        Export::Axis => "axis_concentration.csv",
        Export::Loss => "loss.csv",
    };
    if let Some(path) = rfd::FileDialog::new()
        .add_filter("CSV", &["csv"])
        .set_file_name(default)
        .save_file()
    {
        export_csv_to(state, kind, &path);
    }
}

/// Writes the data of plot `kind` (`series,step,value` rows) to `path` atomically; the outcome
/// becomes a notice. On failure nothing is lost: the history stays in memory for another try.
pub fn export_csv_to(state: &mut AppState, kind: Export, path: &std::path::Path) -> bool {
    let mut csv = String::from("series,step,value\n");
    for a in &state.history.arms {
        let name = &a.label.name;
        let series: Vec<(String, &MinMaxSeries)> = match kind {
            Export::Orientation => vec![(format!("{name}_orientation_div"), &a.orientation_div)],
            Export::Axis => vec![
                (
                    format!("{name}_axis_concentration"),
                    &a.axis_concentration[0],
                ),
                (
                    format!("{name}_rot_axis_concentration"),
                    &a.axis_concentration[1],
                ),
            ],
            Export::Loss => vec![
                (format!("{name}_train_loss"), &a.loss[0]),
                (format!("{name}_heldout_loss"), &a.heldout_loss[0]),
            ],
        };
        for (label, s) in series {
            for [x, y] in s.raw_points() {
                csv.push_str(&format!("{label},{x},{y}\n"));
            }
        }
        if kind == Export::Axis {
            for p in a.band.points() {
                csv.push_str(&format!("{name}_baseline_p5,{},{}\n", p[0], p[2]));
                csv.push_str(&format!("{name}_baseline_mean,{},{}\n", p[0], p[3]));
                csv.push_str(&format!("{name}_baseline_p95,{},{}\n", p[0], p[4]));
            }
        }
    }
    let result = write_atomic(path, csv.as_bytes());
    state.notice = Some(match &result {
        Ok(()) => crate::app::state::Notice {
            text: format!("Saved {}.", path.display()),
            error: false,
        },
        Err(e) => crate::app::state::Notice {
            text: format!(
                "Could not save {}: {e}. The run's data is still here; export again to another \
                 folder.",
                path.display()
            ),
            error: true,
        },
    });
    result.is_ok()
}

fn sweep(state: &mut AppState, ui: &mut egui::Ui) {
    ui.add_space(4.0);
    ui.label(
        "One seed proves nothing about A(K). The sweep repeats the current settings over several \
         seeds (in parallel) and compares each arm's final excess A(K) − baseline mean with the \
         spread that random rotations of the same keys produce.",
    );
    ui.horizontal(|ui| {
        let l = ui.label("seeds");
        ui.add(egui::DragValue::new(&mut state.settings.sweep_seeds).range(2..=256))
            .labelled_by(l.id);
        ui.label(
            RichText::new(format!(
                "starting at seed {}, {} steps each",
                state.settings.preset.seed, state.settings.preset.steps
            ))
            .weak(),
        );
        match &state.sweep {
            None => {
                if ui.button(RichText::new("Run sweep").strong()).clicked() {
                    state.start_sweep();
                }
            }
            Some(job) => {
                let frac = job.done() as f32 / job.total.max(1) as f32;
                ui.add(
                    egui::ProgressBar::new(frac)
                        .desired_width(240.0)
                        .text(format!("{} / {} seeds", job.done(), job.total)),
                );
                if job.is_cancelling() {
                    ui.label("cancelling…");
                } else if ui.button("Cancel").clicked() {
                    job.cancel();
                }
            }
        }
    });
    let Some(result) = &state.sweep_result else {
        ui.label(RichText::new("No sweep yet.").weak());
        return;
    };
    if state.sweep.is_some() {
        ui.label(RichText::new("A new sweep is running; below are the previous results.").weak());
    }
    if !result.preset.same_experiment(&state.settings.preset) {
        ui.label(
            RichText::new(format!(
                "These results are from other settings (preset “{}”, seed {}, {} arms) than the current ones; run the sweep again to update them.",
                result.preset.name,
                result.preset.seed,
                result.preset.arms.len()
            ))
            .color(state.notice_color(true)),
        );
    }
    legend_row(
        ui,
        &[
            (Color32::GRAY, "one seed's excess".into(), Swatch::Dot),
            (Color32::GRAY, "mean ± sd over seeds".into(), Swatch::Thick),
            (
                Color32::GRAY,
                "± the baseline's own sd (shaded)".into(),
                Swatch::Thin,
            ),
        ],
    );
    let hover = state.hover;
    let n_arms = result.aggregate.len();
    linear_plot("sweep", "excess A(K) − baseline mean")
        .x_axis_label("arm")
        .height((ui.available_height() - 40.0 * n_arms as f32 - 60.0).max(200.0))
        .x_axis_formatter(category_axis(
            result.aggregate.iter().map(|a| a.arm.clone()).collect(),
        ))
        .show_x(hover)
        .show_y(hover)
        .show(ui, |plot| {
            plot.hline(HLine::new("zero excess", 0.0).color(Color32::GRAY));
            for (i, agg) in result.aggregate.iter().enumerate() {
                let optimizer = result
                    .preset
                    .arms
                    .get(i)
                    .map_or(agg.arm.as_str(), |a| a.optimizer.as_str());
                let c = optimizer_color(optimizer, i);
                let x = i as f64;
                let sd = agg.baseline_sd_mean;
                if !(sd.is_finite() && agg.excess_mean.is_finite()) {
                    continue;
                }
                plot.add(
                    FilledArea::new(
                        format!("{} ± baseline sd", agg.arm),
                        &[x - 0.35, x + 0.35],
                        &[-sd, -sd],
                        &[sd, sd],
                    )
                    .fill_color(faded(c, 35)),
                );
                let dots: Vec<[f64; 2]> = result
                    .per_seed
                    .iter()
                    .filter(|s| s.arm == agg.arm)
                    .enumerate()
                    .filter_map(|(k, s)| {
                        let b = s.baseline.as_ref()?;
                        let jitter = (k as f64 / result.seeds.len().max(1) as f64 - 0.5) * 0.4;
                        Some([x + jitter, b[0].excess])
                    })
                    .collect();
                plot.points(
                    Points::new(format!("{} per seed", agg.arm), dots)
                        .color(c)
                        .radius(4.0)
                        .filled(true),
                );
                if agg.excess_mean.is_finite() {
                    let (m, s) = (agg.excess_mean, agg.excess_sd);
                    plot.line(
                        Line::new(
                            format!("{} mean ± sd", agg.arm),
                            vec![[x, m - s], [x, m + s]],
                        )
                        .color(c)
                        .width(3.0),
                    );
                    plot.line(
                        Line::new(
                            format!("{} mean ± sd", agg.arm),
                            vec![[x - 0.25, m], [x + 0.25, m]],
                        )
                        .color(c)
                        .width(3.0),
                    );
                }
            }
        });
    ui.add_space(4.0);
    for (i, a) in result.aggregate.iter().enumerate() {
        let optimizer = result
            .preset
            .arms
            .get(i)
            .map_or(a.arm.as_str(), |s| s.optimizer.as_str());
        if a.seeds_ok < 2 {
            ui.label(
                RichText::new(format!(
                    "{}: only {} of {} seeds finished without diverging — too few for a verdict",
                    a.arm,
                    a.seeds_ok,
                    result.seeds.len()
                ))
                .color(optimizer_color(optimizer, i)),
            );
            continue;
        }
        let verdict = if a.excess_is_outside_baseline() {
            "outside the baseline spread: the orientation is special"
        } else {
            "within the baseline spread: no more axis-aligned than chance"
        };
        ui.label(
            RichText::new(format!(
                "{}: mean excess {:+.2e} ± {:.2e} over {} seeds; baseline sd {:.2e}; {} of {} seeds outside the 5–95% band; twin divergence {:.1e} → {verdict}",
                a.arm,
                a.excess_mean,
                a.excess_sd,
                a.seeds_ok,
                a.baseline_sd_mean,
                a.outside_band,
                a.seeds_ok,
                a.orientation_div_mean,
            ))
            .color(optimizer_color(optimizer, i)),
        );
    }
}
