//! The explainer's sections 1–4, 6 and 7: prose beside the first three demos (drag the keys,
//! rotate everything, rotate the gradient). All state lives in the preset's `demos`, so a
//! configuration can be saved and reopened; changing it never restarts the paired run.

use eframe::egui::{self, Color32, Pos2, Rect, RichText, Sense, Shape, Stroke, Vec2};
use egui_plot::{Line, LineStyle, Plot, Points, VLine};
use nalgebra::{DMatrix, Vector2};

use super::explainer_text::paragraphs;
use crate::app::state::{AppState, Section};
use crate::app::widgets::colors::{PALETTE, optimizer_color};
use crate::app::widgets::math;
use crate::app::widgets::plots::{Swatch, legend_row};
use crate::explainer::{
    DemoSettings, QUADRATIC_C, adam_trajectories, axis_concentration_curve, rotation,
    rotation_effect, sign_vec, step_angles, write_and_read,
};

/// Colours of keys K1 … K6: the palette without the optimizer blue and vermilion, so a key is
/// never mistaken for an arm.
const KEY_COLORS: [Color32; 6] = [
    PALETTE[5], PALETTE[4], PALETTE[2], PALETTE[3], PALETTE[6], PALETTE[7],
];

/// Draws section `s`: its text, and its demo where it has one.
pub fn ui(state: &mut AppState, s: Section, ui: &mut egui::Ui) {
    let mut demos = state.settings.preset.demos.clone();
    let has_demo = matches!(s, Section::Model | Section::NoFavouriteAxes | Section::Step);
    ui.add_space(6.0);
    ui.heading(s.title());
    ui.add_space(6.0);
    let text_w = if has_demo {
        (ui.available_width() * 0.38).clamp(360.0, 640.0)
    } else {
        ui.available_width().min(920.0)
    };
    ui.horizontal_top(|ui| {
        ui.vertical(|ui| {
            ui.set_width(text_w);
            egui::ScrollArea::vertical()
                .id_salt("text")
                .show(ui, |ui| text(ui, s));
        });
        if has_demo {
            ui.separator();
            ui.vertical(|ui| {
                egui::ScrollArea::vertical()
                    .id_salt("demo")
                    .show(ui, |ui| match s {
                        Section::Model => keys_demo(&mut demos, ui, state.hover),
                        Section::NoFavouriteAxes => rotate_demo(&mut demos, ui, state.hover),
                        _ => step_demo(&mut demos, ui, state.hover),
                    });
            });
        }
    });
    if demos != state.settings.preset.demos {
        let mut p = state.settings.preset.clone();
        p.demos = demos;
        state.apply_preset(p);
    }
}

/// The section's paragraphs, with `## ` lines as subheadings.
pub fn text(ui: &mut egui::Ui, s: Section) {
    for p in paragraphs(s) {
        if let Some(h) = p.strip_prefix("## ") {
            ui.add_space(6.0);
            ui.label(RichText::new(h).strong().size(19.0));
        } else if let Some(formula) = p.strip_prefix("    ") {
            ui.add_space(2.0);
            ui.horizontal(|ui| {
                ui.add_space(24.0);
                math::paragraph(ui, formula);
            });
            ui.add_space(2.0);
        } else {
            math::paragraph(ui, p);
        }
        ui.add_space(6.0);
    }
}

/// A square canvas; returns its response, painter, and the map from plane to screen
/// (the unit circle has radius `0.38 · side`, y up).
fn canvas(
    ui: &mut egui::Ui,
    side: f32,
    unit_circle: bool,
) -> (egui::Response, egui::Painter, Transform) {
    let (rect, response) = ui.allocate_exact_size(Vec2::splat(side), Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 4.0, ui.visuals().extreme_bg_color);
    let t = Transform {
        center: rect.center(),
        scale: 0.38 * side,
    };
    let axis = Stroke::new(1.0, ui.visuals().weak_text_color());
    painter.line_segment(
        [
            Pos2::new(rect.left() + 6.0, t.center.y),
            Pos2::new(rect.right() - 6.0, t.center.y),
        ],
        axis,
    );
    painter.line_segment(
        [
            Pos2::new(t.center.x, rect.top() + 6.0),
            Pos2::new(t.center.x, rect.bottom() - 6.0),
        ],
        axis,
    );
    if unit_circle {
        painter.circle_stroke(
            t.center,
            t.scale,
            Stroke::new(1.0, ui.visuals().weak_text_color()),
        );
    }
    (response, painter, t)
}

#[derive(Clone, Copy)]
struct Transform {
    center: Pos2,
    scale: f32,
}

impl Transform {
    fn to_screen(self, v: Vector2<f64>) -> Pos2 {
        self.center + Vec2::new(v.x as f32, -v.y as f32) * self.scale
    }
    fn to_plane(self, p: Pos2) -> Vector2<f64> {
        let d = (p - self.center) / self.scale;
        Vector2::new(d.x as f64, -d.y as f64)
    }
}

fn arrow(painter: &egui::Painter, t: Transform, v: Vector2<f64>, color: Color32, width: f32) {
    let tip = t.to_screen(v);
    painter.arrow(t.center, tip - t.center, Stroke::new(width, color));
}

fn dashed_arrow(painter: &egui::Painter, t: Transform, v: Vector2<f64>, color: Color32) {
    let tip = t.to_screen(v);
    painter.extend(Shape::dashed_line(
        &[t.center, tip],
        Stroke::new(2.5, color),
        7.0,
        5.0,
    ));
    painter.circle_stroke(tip, 5.0, Stroke::new(2.0, color));
}

fn label_at(painter: &egui::Painter, pos: Pos2, text: &str, color: Color32) {
    painter.text(
        pos,
        egui::Align2::CENTER_CENTER,
        text,
        egui::FontId::proportional(16.0),
        color,
    );
}

/// A draggable handle at `pos`; returns the new plane position while dragged.
fn handle(
    ui: &mut egui::Ui,
    t: Transform,
    pos: Pos2,
    id: egui::Id,
    name: &str,
) -> Option<Vector2<f64>> {
    let r = ui.interact(
        Rect::from_center_size(pos, Vec2::splat(26.0)),
        id,
        Sense::drag(),
    );
    let name = name.to_string();
    r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &name));
    if r.hovered() || r.dragged() {
        ui.ctx().set_cursor_icon(egui::CursorIcon::Grab);
    }
    if r.dragged() {
        r.interact_pointer_pos().map(|p| t.to_plane(p))
    } else {
        None
    }
}

/// A canvas for Demo 3 at scale 1.5 (so steps of length up to √2 fit), with the reach of each
/// first step drawn: the unit circle for GD, the unit square for Adam.
fn step_canvas(
    ui: &mut egui::Ui,
    side: f32,
    gd_c: Color32,
    adam_c: Color32,
) -> (egui::Painter, Transform) {
    let (_, painter, t) = canvas(ui, side, false);
    let t = Transform {
        scale: t.scale / 1.5,
        ..t
    };
    painter.circle_stroke(t.center, t.scale, Stroke::new(1.5, gd_c));
    painter.rect_stroke(
        Rect::from_center_size(t.center, Vec2::splat(2.0 * t.scale)),
        0.0,
        Stroke::new(1.5, adam_c),
        egui::StrokeKind::Middle,
    );
    (painter, t)
}

/// Two decimals with a sign, and no “−0.00”.
fn fixed2(v: f64) -> String {
    let v = if v.abs() < 0.005 { 0.0 } else { v };
    format!("{v:+.2}")
}

/// Diverging colour for a value in [−1, 1]: blue below zero, white at zero, vermilion above.
fn diverging(v: f64) -> Color32 {
    let x = v.clamp(-1.0, 1.0) as f32;
    let (end, t) = if x < 0.0 {
        ([33.0, 102.0, 172.0], -x)
    } else {
        ([200.0, 70.0, 30.0], x)
    };
    let mix = |k: usize| (255.0 + t * (end[k] - 255.0)).round() as u8;
    Color32::from_rgb(mix(0), mix(1), mix(2))
}

/// An n × n signed matrix drawn as coloured cells with their values.
fn matrix_grid(ui: &mut egui::Ui, m: &DMatrix<f64>, names: &str, cell: f32) {
    let n = m.nrows();
    let (rect, _) = ui.allocate_exact_size(Vec2::splat(cell * (n as f32 + 1.0)), Sense::hover());
    let painter = ui.painter_at(rect);
    let text = ui.visuals().text_color();
    for i in 0..n {
        let label = format!("{names}{}", i + 1);
        let top = rect.min + Vec2::new(cell * (i as f32 + 1.5), cell * 0.5);
        let left = rect.min + Vec2::new(cell * 0.5, cell * (i as f32 + 1.5));
        label_at(&painter, top, &label, text);
        label_at(&painter, left, &label, text);
        for j in 0..n {
            let r = Rect::from_min_size(
                rect.min + Vec2::new(cell * (j as f32 + 1.0), cell * (i as f32 + 1.0)),
                Vec2::splat(cell - 2.0),
            );
            let v = m[(i, j)];
            painter.rect_filled(r, 2.0, diverging(v));
            painter.text(
                r.center(),
                egui::Align2::CENTER_CENTER,
                fixed2(v),
                egui::FontId::monospace(13.0),
                Color32::BLACK,
            );
        }
    }
}

/// Read scores of every key as small bar charts over the value classes, each bar labelled with
/// its score; the correct class is outlined up to its target 1.
fn read_bars(ui: &mut egui::Ui, reads: &DMatrix<f64>) {
    let n = reads.ncols();
    let (w, h) = (70.0 * n as f32 + 20.0, 170.0);
    let text = ui.visuals().text_color();
    let weak = ui.visuals().weak_text_color();
    ui.horizontal_wrapped(|ui| {
        for a in 0..n {
            let (rect, _) = ui.allocate_exact_size(Vec2::new(w, h + 46.0), Sense::hover());
            let painter = ui.painter_at(rect);
            label_at(
                &painter,
                rect.center_top() + Vec2::new(0.0, 10.0),
                &format!("read of K{}", a + 1),
                KEY_COLORS[a % KEY_COLORS.len()],
            );
            let plot =
                Rect::from_min_size(rect.min + Vec2::new(10.0, 24.0), Vec2::new(w - 20.0, h));
            let zero = plot.center().y;
            let unit = plot.height() / 2.0 / 1.25;
            painter.line_segment(
                [Pos2::new(plot.left(), zero), Pos2::new(plot.right(), zero)],
                Stroke::new(1.0, weak),
            );
            let bw = plot.width() / n as f32;
            for b in 0..n {
                let value = reads[(b, a)];
                let v = value.clamp(-1.25, 1.25) as f32;
                let x0 = plot.left() + b as f32 * bw + 6.0;
                let bar = Rect::from_two_pos(
                    Pos2::new(x0, zero),
                    Pos2::new(x0 + bw - 12.0, zero - v * unit),
                );
                painter.rect_filled(bar, 1.0, KEY_COLORS[b % KEY_COLORS.len()]);
                if a == b {
                    let target = Rect::from_two_pos(
                        Pos2::new(x0 - 2.0, zero - unit),
                        Pos2::new(x0 + bw - 10.0, zero),
                    );
                    painter.rect_stroke(
                        target,
                        1.0,
                        Stroke::new(3.0, text),
                        egui::StrokeKind::Outside,
                    );
                }
                let label_y = if v >= 0.0 {
                    zero - v.max(1.0) * unit - 9.0
                } else {
                    zero - v * unit + 9.0
                };
                painter.text(
                    Pos2::new(x0 + (bw - 12.0) / 2.0, label_y),
                    egui::Align2::CENTER_CENTER,
                    fixed2(value),
                    egui::FontId::monospace(12.0),
                    text,
                );
                painter.text(
                    Pos2::new(x0 + (bw - 12.0) / 2.0, plot.bottom() + 10.0),
                    egui::Align2::CENTER_CENTER,
                    format!("class {}", b + 1),
                    egui::FontId::proportional(14.0),
                    text,
                );
            }
        }
    });
}

fn keys_demo(d: &mut DemoSettings, ui: &mut egui::Ui, _hover: bool) {
    ui.label(
        RichText::new("Demo 1 · Drag the keys, watch the memory")
            .strong()
            .size(19.0),
    );
    ui.horizontal(|ui| {
        let l = ui.label("keys");
        let mut n = d.key_angles_deg.len();
        if ui
            .add(egui::DragValue::new(&mut n).range(2..=6))
            .labelled_by(l.id)
            .changed()
        {
            let defaults = [15.0, 105.0, 230.0, 300.0, 60.0, 170.0];
            d.key_angles_deg.resize(n, 0.0);
            for (i, a) in d.key_angles_deg.iter_mut().enumerate().skip(n.min(3)) {
                if *a == 0.0 {
                    *a = defaults[i];
                }
            }
        }
        let l = ui.label("write strength β");
        ui.add(egui::Slider::new(&mut d.beta, 0.0..=2.0).clamping(egui::SliderClamping::Edits))
            .labelled_by(l.id);
    });
    ui.horizontal_wrapped(|ui| {
        ui.label("Things to try:");
        if ui.button("two close keys").clicked() {
            d.key_angles_deg = vec![30.0, 45.0];
        }
        if ui.button("two opposite keys").clicked() {
            d.key_angles_deg = vec![30.0, 200.0];
        }
        if ui.button("three keys in two dimensions").clicked() {
            d.key_angles_deg = vec![90.0, 210.0, 330.0];
        }
    });
    let keys = d.keys();
    let side = 440.0;
    ui.horizontal_top(|ui| {
        let (_, painter, t) = canvas(ui, side, true);
        for (i, angle) in d.key_angles_deg.iter_mut().enumerate() {
            let k = Vector2::new(keys[(0, i)], keys[(1, i)]);
            let color = KEY_COLORS[i % KEY_COLORS.len()];
            arrow(&painter, t, k, color, 3.0);
            painter.circle_filled(t.to_screen(k), 7.0, color);
            label_at(
                &painter,
                t.to_screen(k * 1.16),
                &format!("K{}", i + 1),
                color,
            );
            let id = ui.scope_id().with(("key tip", i));
            if let Some(p) = handle(ui, t, t.to_screen(k), id, &format!("K{} tip", i + 1))
                && p.norm() > 1e-3
            {
                *angle = (p.y.atan2(p.x).to_degrees() * 10.0).round() / 10.0;
            }
        }
        ui.vertical(|ui| {
            let readout = write_and_read(&keys, d.beta);
            ui.label(RichText::new("Gram matrix G = KᵀK (signed overlaps)").strong());
            matrix_grid(ui, &readout.gram, "K", 46.0);
        });
    });
    let readout = write_and_read(&keys, d.beta);
    ui.add_space(4.0);
    ui.label(
        RichText::new("Reads r = S·kₐ from the final memory (thick outline: the correct class)")
            .strong(),
    );
    read_bars(ui, &readout.reads);
}

fn rotate_demo(d: &mut DemoSettings, ui: &mut egui::Ui, hover: bool) {
    ui.label(
        RichText::new("Demo 2 · Rotate everything, nothing changes")
            .strong()
            .size(19.0),
    );
    ui.label(RichText::new("Uses the keys and β of Demo 1.").weak());
    ui.horizontal(|ui| {
        let l = ui.label("rotation (degrees)");
        ui.add(
            egui::Slider::new(&mut d.rotation_deg, -180.0..=180.0)
                .clamping(egui::SliderClamping::Edits),
        )
        .labelled_by(l.id);
    });
    let keys = d.keys();
    let q = rotation(d.rotation_deg);
    let rotated = DMatrix::from_fn(2, keys.ncols(), |r, a| {
        (q * Vector2::new(keys[(0, a)], keys[(1, a)]))[r]
    });
    let (gram_change, read_change, a_rot) = rotation_effect(&keys, d.beta, d.rotation_deg);
    ui.horizontal_top(|ui| {
        let (_, painter, t) = canvas(ui, 400.0, true);
        for i in 0..keys.ncols() {
            let color = KEY_COLORS[i % KEY_COLORS.len()];
            arrow(
                &painter,
                t,
                Vector2::new(keys[(0, i)], keys[(1, i)]),
                color.gamma_multiply(0.3),
                2.0,
            );
            let k = Vector2::new(rotated[(0, i)], rotated[(1, i)]);
            arrow(&painter, t, k, color, 3.0);
            label_at(
                &painter,
                t.to_screen(k * 1.16),
                &format!("K{}", i + 1),
                color,
            );
        }
        ui.vertical(|ui| {
            ui.label(RichText::new("Gram matrix of the rotated keys").strong());
            matrix_grid(ui, &write_and_read(&rotated, d.beta).gram, "K", 42.0);
            ui.add_space(8.0);
            egui::Grid::new("rotation numbers")
                .spacing([16.0, 6.0])
                .show(ui, |ui| {
                    ui.label("largest change in any Gram entry");
                    ui.label(
                        RichText::new(format!("{gram_change:.1e}"))
                            .monospace()
                            .strong(),
                    );
                    ui.end_row();
                    ui.label("largest change in any read score");
                    ui.label(
                        RichText::new(format!("{read_change:.1e}"))
                            .monospace()
                            .strong(),
                    );
                    ui.end_row();
                    ui.label("axis concentration A(K) of the rotated keys");
                    ui.label(RichText::new(format!("{a_rot:.4}")).monospace().strong());
                    ui.end_row();
                });
        });
    });
    ui.add_space(6.0);
    ui.label(RichText::new("A(K) of the rotated keys over a full turn").strong());
    legend_row(
        ui,
        &[
            (
                Color32::from_rgb(0, 114, 178),
                "A(Q(θ)K)".into(),
                Swatch::Thick,
            ),
            (
                Color32::from_rgb(213, 94, 0),
                "the current angle".into(),
                Swatch::Dot,
            ),
        ],
    );
    let curve = axis_concentration_curve(&keys, 361);
    Plot::new("axis curve")
        .height(220.0)
        .x_axis_label("rotation (degrees)")
        .y_axis_label("A(K)")
        .include_y(0.5)
        .include_y(1.0)
        .show_x(hover)
        .show_y(hover)
        .show(ui, |plot| {
            plot.line(
                Line::new("A(Q(θ)K)", curve)
                    .color(Color32::from_rgb(0, 114, 178))
                    .width(2.5),
            );
            plot.vline(VLine::new("current angle", d.rotation_deg).color(Color32::GRAY));
            plot.points(
                Points::new("now", vec![[d.rotation_deg, a_rot]])
                    .radius(6.0)
                    .color(Color32::from_rgb(213, 94, 0)),
            );
        });
}

fn step_demo(d: &mut DemoSettings, ui: &mut egui::Ui, hover: bool) {
    let gd_c = optimizer_color("gd", 0);
    let adam_c = optimizer_color("adam", 1);
    let g_c = ui.visuals().text_color();
    ui.label(
        RichText::new("Demo 3 · Rotate the gradient, compare the steps")
            .strong()
            .size(19.0),
    );
    ui.horizontal(|ui| {
        let l = ui.label("world rotation φ (degrees)");
        ui.add(
            egui::Slider::new(&mut d.phi_deg, -180.0..=180.0).clamping(egui::SliderClamping::Edits),
        )
        .labelled_by(l.id);
    });
    let g = Vector2::new(d.gradient[0], d.gradient[1]);
    let q = rotation(d.phi_deg);
    let side = 380.0;
    ui.horizontal_top(|ui| {
        ui.vertical(|ui| {
            ui.label(RichText::new("Original world").strong());
            let (painter, t) = step_canvas(ui, side, gd_c, adam_c);
            arrow(&painter, t, g, g_c, 2.0);
            label_at(
                &painter,
                t.to_screen(g * 1.15) + Vec2::new(10.0, 0.0),
                "g",
                g_c,
            );
            arrow(&painter, t, -g, gd_c, 3.5);
            arrow(&painter, t, -sign_vec(g), adam_c, 3.5);
            let id = ui.scope_id().with("gradient tip");
            if let Some(p) = handle(ui, t, t.to_screen(g), id, "gradient tip") {
                d.gradient = [
                    (p.x.clamp(-10.0, 10.0) * 100.0).round() / 100.0,
                    (p.y.clamp(-10.0, 10.0) * 100.0).round() / 100.0,
                ];
            }
        });
        ui.vertical(|ui| {
            ui.label(RichText::new(format!("World rotated by φ = {:.0}°", d.phi_deg)).strong());
            let (painter, t) = step_canvas(ui, side, gd_c, adam_c);
            let qg = q * g;
            arrow(&painter, t, qg, g_c, 2.0);
            label_at(
                &painter,
                t.to_screen(qg * 1.15) + Vec2::new(14.0, 0.0),
                "Qg",
                g_c,
            );
            dashed_arrow(&painter, t, q * (-g), gd_c);
            dashed_arrow(&painter, t, q * (-sign_vec(g)), adam_c);
            arrow(&painter, t, -qg, gd_c, 3.5);
            arrow(&painter, t, -sign_vec(qg), adam_c, 3.5);
        });
    });
    ui.horizontal_wrapped(|ui| {
        for (c, text) in [
            (g_c, "— gradient g"),
            (gd_c, "— GD step −g (circle: its reach)"),
            (adam_c, "— Adam's first step −sign(g) (square: its reach)"),
            (
                ui.visuals().weak_text_color(),
                "dashed: the original steps carried over by Q",
            ),
        ] {
            ui.label(RichText::new(text).color(c));
        }
    });
    let (gd_angle, adam_angle) = step_angles(g, d.phi_deg);
    let fmt = |a: f64| {
        if a.is_nan() {
            "—".to_string()
        } else {
            format!("{a:.2}°")
        }
    };
    egui::Grid::new("angles")
        .spacing([16.0, 6.0])
        .show(ui, |ui| {
            ui.label(
                RichText::new("GD: angle between Q·step and the step in the rotated world")
                    .color(gd_c),
            );
            ui.label(RichText::new(fmt(gd_angle)).monospace().strong());
            ui.end_row();
            ui.label(
                RichText::new("Adam: angle between Q·step and the step in the rotated world")
                    .color(adam_c),
            );
            ui.label(RichText::new(fmt(adam_angle)).monospace().strong());
            ui.end_row();
        });
    ui.add_space(6.0);
    ui.horizontal(|ui| {
        ui.checkbox(&mut d.later_adam, "later Adam steps on a fixed quadratic");
        if d.later_adam {
            let l = ui.label("steps");
            ui.add(egui::DragValue::new(&mut d.adam_steps).range(1..=1000))
                .labelled_by(l.id);
        }
    });
    if d.later_adam {
        let (carried, rotated) = adam_trajectories(d.phi_deg, d.adam_steps, 0.05);
        let c = q * Vector2::from(QUADRATIC_C);
        legend_row(
            ui,
            &[
                (
                    adam_c.gamma_multiply(0.6),
                    "Adam run in the original world, carried over by Q".into(),
                    Swatch::Dashed,
                ),
                (
                    adam_c,
                    "Adam run in the rotated world".into(),
                    Swatch::Thick,
                ),
                (g_c, "minimum".into(), Swatch::Dot),
            ],
        );
        Plot::new("adam trajectories")
            .height(300.0)
            .data_aspect(1.0)
            .x_axis_label("w′₁ (rotated world)")
            .y_axis_label("w′₂")
            .show_x(hover)
            .show_y(hover)
            .show(ui, |plot| {
                plot.line(
                    Line::new("Adam run in the original world, carried over by Q", carried)
                        .color(adam_c.gamma_multiply(0.6))
                        .style(LineStyle::dashed_loose())
                        .width(2.5),
                );
                plot.line(
                    Line::new("Adam run in the rotated world", rotated)
                        .color(adam_c)
                        .width(2.5),
                );
                plot.points(
                    Points::new("minimum", vec![[c.x, c.y]])
                        .radius(6.0)
                        .color(g_c),
                );
            });
    }
}
