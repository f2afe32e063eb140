//! Drawing helpers of the explainer's demos: a square canvas with plane coordinates, arrows,
//! draggable handles, a signed-matrix grid and bar charts of read scores.

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Shape, Stroke, Vec2};
use nalgebra::{DMatrix, Vector2};

use crate::app::widgets::colors::PALETTE;

/// Colours of keys K1 … K6: the palette without the optimizer blue and vermilion, so a key is
/// never mistaken for an arm.
pub const KEY_COLORS: [Color32; 6] = [
    PALETTE[5], PALETTE[4], PALETTE[2], PALETTE[3], PALETTE[6], PALETTE[7],
];

/// A square canvas; returns its response, painter, and the map from plane to screen
/// (the unit circle has radius `0.38 · side`, y up).
pub(super) fn canvas(
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
pub(super) struct Transform {
    pub(super) center: Pos2,
    pub(super) scale: f32,
}

impl Transform {
    pub(super) fn to_screen(self, v: Vector2<f64>) -> Pos2 {
        self.center + Vec2::new(v.x as f32, -v.y as f32) * self.scale
    }
    pub(super) fn to_plane(self, p: Pos2) -> Vector2<f64> {
        let d = (p - self.center) / self.scale;
        Vector2::new(d.x as f64, -d.y as f64)
    }
}

pub(super) fn arrow(
    painter: &egui::Painter,
    t: Transform,
    v: Vector2<f64>,
    color: Color32,
    width: f32,
) {
    let tip = t.to_screen(v);
    painter.arrow(t.center, tip - t.center, Stroke::new(width, color));
}

pub(super) fn dashed_arrow(painter: &egui::Painter, t: Transform, v: Vector2<f64>, color: Color32) {
    let tip = t.to_screen(v);
    painter.extend(Shape::dashed_line(
        &[t.center, tip],
        Stroke::new(2.5, color),
        7.0,
        5.0,
    ));
    painter.circle_stroke(tip, 5.0, Stroke::new(2.0, color));
}

pub(super) fn label_at(painter: &egui::Painter, pos: Pos2, text: &str, color: Color32) {
    painter.text(
        pos,
        egui::Align2::CENTER_CENTER,
        text,
        egui::FontId::proportional(16.0),
        color,
    );
}

/// A draggable handle at `pos`; returns the new plane position while dragged.
pub(super) fn handle(
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
pub(super) fn step_canvas(
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
pub(super) fn fixed2(v: f64) -> String {
    let v = if v.abs() < 0.005 { 0.0 } else { v };
    format!("{v:+.2}")
}

/// Diverging colour for a value in [−1, 1]: blue below zero, white at zero, vermilion above.
pub(super) fn diverging(v: f64) -> Color32 {
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
pub(super) fn matrix_grid(ui: &mut egui::Ui, m: &DMatrix<f64>, names: &str, cell: f32) {
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
pub(super) fn read_bars(ui: &mut egui::Ui, reads: &DMatrix<f64>) {
    let n = reads.ncols();
    // Each key's chart narrows to the width there is rather than running off the edge.
    let (w, h) = ((70.0 * n as f32 + 20.0).min(ui.available_width()), 170.0);
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
