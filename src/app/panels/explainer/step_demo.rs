//! Demo 3 (section 3): drag the gradient and compare GD's step with Adam's first step in the
//! original and in a rotated world; optionally, later Adam steps on a fixed quadratic.

use eframe::egui::{self, RichText, Vec2};
use egui_plot::{Line, LineStyle, Plot, Points};
use nalgebra::Vector2;

use super::canvas::{arrow, dashed_arrow, handle, label_at, step_canvas};
use crate::app::widgets::colors::{optimizer_color, text_color};
use crate::app::widgets::plots::{Swatch, legend_row};
use crate::app::widgets::reflow;
use crate::explainer::{
    DemoSettings, QUADRATIC_C, adam_trajectories, rotation, sign_vec, step_angles,
};

/// Draws the demo; its state `d` is part of the preset, so it is saved and shared with it.
pub fn ui(d: &mut DemoSettings, ui: &mut egui::Ui, hover: bool) {
    let gd_c = optimizer_color("gd", 0);
    let adam_c = optimizer_color("adam", 1);
    let g_c = ui.visuals().text_color();
    ui.label(
        RichText::new("Demo 3 · Rotate the gradient, compare the steps")
            .strong()
            .size(19.0),
    );
    reflow::controls_row(ui, |ui| {
        let l = ui.label("world rotation φ (degrees)");
        ui.add(
            egui::Slider::new(&mut d.phi_deg, -180.0..=180.0).clamping(egui::SliderClamping::Edits),
        )
        .labelled_by(l.id);
    });
    let g = Vector2::new(d.gradient[0], d.gradient[1]);
    let q = rotation(d.phi_deg);
    // Two canvases side by side while each keeps 260 points; else one above the other.
    let side = ((ui.available_width() - reflow::GAP) / 2.0).clamp(260.0, 380.0);
    let side = reflow::side(ui, side);
    reflow::pair(ui, [side, side], |ui, part, _| {
        if part == 0 {
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
        } else {
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
        }
    });
    reflow::controls_row(ui, |ui| {
        for (c, text) in [
            (g_c, "— gradient g"),
            (gd_c, "— GD step −g (circle: its reach)"),
            (adam_c, "— Adam's first step −sign(g) (square: its reach)"),
            (
                ui.visuals().weak_text_color(),
                "dashed: the original steps carried over by Q",
            ),
        ] {
            // Whole entries move to the next line rather than breaking mid-entry.
            let c = text_color(c, ui.visuals());
            ui.add(egui::Label::new(RichText::new(text).color(c)).extend());
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
                    .color(text_color(gd_c, ui.visuals())),
            );
            ui.label(RichText::new(fmt(gd_angle)).monospace().strong());
            ui.end_row();
            ui.label(
                RichText::new("Adam: angle between Q·step and the step in the rotated world")
                    .color(text_color(adam_c, ui.visuals())),
            );
            ui.label(RichText::new(fmt(adam_angle)).monospace().strong());
            ui.end_row();
        });
    ui.add_space(6.0);
    reflow::controls_row(ui, |ui| {
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
