//! Demo 2 (section 2): rotate every key at once; the Gram matrix and the reads stay put to
//! rounding, the axis concentration A(K) does not.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Line, Plot, Points, VLine};
use nalgebra::{DMatrix, Vector2};

use super::canvas::{KEY_COLORS, arrow, canvas, label_at, matrix_grid};
use crate::app::widgets::plots::{Swatch, legend_row};
use crate::app::widgets::reflow;
use crate::explainer::{
    DemoSettings, axis_concentration_curve, rotation, rotation_effect, write_and_read,
};

/// Draws the demo; its state `d` is part of the preset, so it is saved and shared with it.
pub fn ui(d: &mut DemoSettings, ui: &mut egui::Ui, hover: bool) {
    ui.label(
        RichText::new("Demo 2 · Rotate everything, nothing changes")
            .strong()
            .size(19.0),
    );
    ui.label(RichText::new("Uses the keys and β of Demo 1.").weak());
    reflow::controls_row(ui, |ui| {
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
    let side = reflow::side(ui, 400.0);
    reflow::pair(ui, [side, 380.0], |ui, part, _| {
        if part == 1 {
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
            return;
        }
        let (_, painter, t) = canvas(ui, side, true);
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
