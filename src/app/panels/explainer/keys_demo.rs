//! Demo 1 (section 1): drag 2–6 keys in the plane and watch the delta-rule memory write and
//! read them back: their Gram matrix and every key's read scores.

use eframe::egui::{self, RichText};
use nalgebra::Vector2;

use super::canvas::{KEY_COLORS, arrow, canvas, handle, label_at, matrix_grid, read_bars};
use crate::app::widgets::reflow;
use crate::explainer::{DemoSettings, write_and_read};

/// Draws the demo; its state `d` is part of the preset, so it is saved and shared with it.
pub fn ui(d: &mut DemoSettings, ui: &mut egui::Ui, _hover: bool) {
    ui.label(
        RichText::new("Demo 1 · Drag the keys, watch the memory")
            .strong()
            .size(19.0),
    );
    reflow::controls_row(ui, |ui| {
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
    reflow::controls_row(ui, |ui| {
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
    let side = reflow::side(ui, 440.0);
    let gram_w = 46.0 * (keys.ncols() + 1) as f32;
    reflow::pair(ui, [side, gram_w], |ui, part, _| {
        if part == 1 {
            let readout = write_and_read(&keys, d.beta);
            ui.label(RichText::new("Gram matrix G = KᵀK (signed overlaps)").strong());
            matrix_grid(ui, &readout.gram, "K", 46.0);
            return;
        }
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
    });
    let readout = write_and_read(&keys, d.beta);
    ui.add_space(4.0);
    ui.label(
        RichText::new("Reads r = S·kₐ from the final memory (thick outline: the correct class)")
            .strong(),
    );
    read_bars(ui, &readout.reads);
}
