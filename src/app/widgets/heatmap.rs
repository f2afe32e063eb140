//! |K| heatmaps (one column per key, one row per coordinate) and their colour bar, painted
//! directly: the scale is fixed to [0, 1] because keys are unit vectors, so every arm and
//! every moment share one legend.

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};
use nalgebra::DMatrix;

/// Anchors of the sequential colour map (ColorBrewer "Blues"): 0 → pale, 1 → dark.
const BLUES: [[u8; 3]; 6] = [
    [247, 251, 255],
    [198, 219, 239],
    [107, 174, 214],
    [33, 113, 181],
    [8, 69, 148],
    [8, 29, 88],
];

/// Colour of `v` in [0, 1] (clamped; NaN is drawn grey).
pub fn blues(v: f64) -> Color32 {
    if !v.is_finite() {
        return Color32::GRAY;
    }
    let x = v.clamp(0.0, 1.0) * (BLUES.len() - 1) as f64;
    let i = (x.floor() as usize).min(BLUES.len() - 2);
    let t = x - i as f64;
    let (a, b) = (BLUES[i], BLUES[i + 1]);
    let mix = |k: usize| (a[k] as f64 + t * (b[k] as f64 - a[k] as f64)).round() as u8;
    Color32::from_rgb(mix(0), mix(1), mix(2))
}

/// Paints |`keys`| (`d_k × V`) into a `size` rectangle; with `hover`, pointing at a cell names
/// key, coordinate and value. Returns the response of the whole map.
pub fn key_heatmap(
    ui: &mut egui::Ui,
    keys: &DMatrix<f64>,
    size: Vec2,
    hover: bool,
) -> egui::Response {
    let (rect, response) = ui.allocate_exact_size(size, Sense::hover());
    let (rows, cols) = keys.shape();
    if rows == 0 || cols == 0 {
        return response;
    }
    let cell = Vec2::new(rect.width() / cols as f32, rect.height() / rows as f32);
    let painter = ui.painter_at(rect);
    for a in 0..cols {
        for j in 0..rows {
            let min = rect.min + Vec2::new(a as f32 * cell.x, j as f32 * cell.y);
            painter.rect_filled(
                Rect::from_min_size(min, cell),
                0.0,
                blues(keys[(j, a)].abs()),
            );
        }
    }
    painter.rect_stroke(
        rect,
        0.0,
        Stroke::new(1.0, ui.visuals().weak_text_color()),
        StrokeKind::Outside,
    );
    if let Some(pos) = response.hover_pos().filter(|_| hover) {
        let a = (((pos.x - rect.min.x) / cell.x) as usize).min(cols - 1);
        let j = (((pos.y - rect.min.y) / cell.y) as usize).min(rows - 1);
        response.clone().on_hover_text_at_pointer(format!(
            "key {} · coordinate {}\n|k| = {:.3}",
            a + 1,
            j + 1,
            keys[(j, a)].abs()
        ));
    }
    response
}

/// A vertical colour bar for [0, 1] with ticks at 0, 0.25, …, 1 and a caption.
pub fn color_bar(ui: &mut egui::Ui, height: f32, caption: &str) {
    let font = egui::TextStyle::Small.resolve(ui.style());
    let width = 18.0;
    let label_w = 40.0;
    let (rect, _) =
        ui.allocate_exact_size(Vec2::new(width + label_w, height + 24.0), Sense::hover());
    let bar = Rect::from_min_size(rect.min + Vec2::new(0.0, 8.0), Vec2::new(width, height));
    let painter = ui.painter_at(rect.expand(2.0));
    let steps = 64;
    for i in 0..steps {
        let v0 = i as f32 / steps as f32;
        let y = bar.max.y - (v0 + 1.0 / steps as f32) * bar.height();
        let r = Rect::from_min_max(
            Pos2::new(bar.min.x, y),
            Pos2::new(bar.max.x, y + bar.height() / steps as f32 + 0.5),
        );
        painter.rect_filled(r, 0.0, blues(v0 as f64 + 0.5 / steps as f64));
    }
    let text = ui.visuals().text_color();
    painter.rect_stroke(bar, 0.0, Stroke::new(1.0, text), StrokeKind::Outside);
    for t in [0.0f32, 0.25, 0.5, 0.75, 1.0] {
        let y = bar.max.y - t * bar.height();
        painter.line_segment(
            [Pos2::new(bar.max.x, y), Pos2::new(bar.max.x + 4.0, y)],
            Stroke::new(1.0, text),
        );
        painter.text(
            Pos2::new(bar.max.x + 6.0, y),
            egui::Align2::LEFT_CENTER,
            format!("{t}"),
            font.clone(),
            text,
        );
    }
    painter.text(
        Pos2::new(bar.min.x, bar.max.y + 4.0),
        egui::Align2::LEFT_TOP,
        caption,
        font,
        text,
    );
}
