//! |K| heatmaps (one column per key, one row per coordinate) and their colour bar, painted
//! directly: the scale is fixed to [0, 1] because keys are unit vectors, so every arm and
//! every moment share one legend.

use eframe::egui::{self, Color32, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};
use nalgebra::DMatrix;

/// Colour of `v` in [0, 1] (clamped; NaN is pale yellow): pale to dark grey, or on a dark
/// background dark to bright, so a larger |k| always stands out more (the figures' map,
/// [`crate::figure::magnitude`]).
pub fn magnitude(v: f64, dark: bool) -> Color32 {
    let [r, g, b] = crate::figure::magnitude(v, dark);
    Color32::from_rgb(r, g, b)
}

/// |`keys`| (`d_k × V`) as an image: one pixel per entry (x = key, y = coordinate).
pub fn key_image(keys: &DMatrix<f64>, dark: bool) -> egui::ColorImage {
    let (rows, cols) = keys.shape();
    let pixels = (0..rows)
        .flat_map(|j| (0..cols).map(move |a| magnitude(keys[(j, a)].abs(), dark)))
        .collect();
    egui::ColorImage::new([cols, rows], pixels)
}

/// Draws `texture` (made by [`key_image`] from `keys`) into a `size` rectangle, one texture
/// per snapshot rather than one shape per cell; with `hover`, pointing at a cell names key,
/// coordinate and value.
pub fn key_heatmap(
    ui: &mut egui::Ui,
    keys: &DMatrix<f64>,
    texture: &egui::TextureHandle,
    size: Vec2,
    hover: bool,
) -> egui::Response {
    let (rect, response) = ui.allocate_exact_size(size, Sense::hover());
    let (rows, cols) = keys.shape();
    if rows == 0 || cols == 0 {
        return response;
    }
    let uv = Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0));
    ui.painter().image(texture.id(), rect, uv, Color32::WHITE);
    ui.painter().rect_stroke(
        rect,
        0.0,
        Stroke::new(1.0, ui.visuals().weak_text_color()),
        StrokeKind::Outside,
    );
    if let Some(pos) = response.hover_pos().filter(|_| hover) {
        let a = (((pos.x - rect.min.x) / rect.width() * cols as f32) as usize).min(cols - 1);
        let j = (((pos.y - rect.min.y) / rect.height() * rows as f32) as usize).min(rows - 1);
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
pub fn color_bar(ui: &mut egui::Ui, height: f32, caption: &str, dark: bool) {
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
        painter.rect_filled(r, 0.0, magnitude(v0 as f64 + 0.5 / steps as f64, dark));
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

/// A figure's heatmap as a grid of cells, `names[0] N` labelling the rows on the left and
/// `names[1] N` the columns above (N from 1), each cell coloured by [`magnitude`] of its value;
/// cells as large as fit `w` wide and `h` high (18 to 110 points). A cell at least 40 points
/// wide shows `text(row, column)`, in black or white as its colour needs.
pub fn labelled_map(
    ui: &mut egui::Ui,
    map: &crate::figure::Heatmap,
    names: [&str; 2],
    (w, h): (f32, f32),
    dark: bool,
    text: impl Fn(usize, usize) -> String,
) {
    let (rows, cols) = map.values.shape();
    if rows == 0 || cols == 0 {
        return;
    }
    let label_w = 64.0;
    let cell = ((w - label_w - 8.0) / cols as f32)
        .min(h / rows as f32 - 4.0)
        .clamp(18.0, 110.0);
    let font = egui::TextStyle::Small.resolve(ui.style());
    let ink = ui.visuals().text_color();
    let (rect, _) = ui.allocate_exact_size(
        Vec2::new(label_w + cell * cols as f32, 18.0 + cell * rows as f32),
        Sense::hover(),
    );
    let p = ui.painter_at(rect);
    for c in 0..cols {
        p.text(
            rect.min + Vec2::new(label_w + (c as f32 + 0.5) * cell, 8.0),
            egui::Align2::CENTER_CENTER,
            format!("{} {}", names[1], c + 1),
            font.clone(),
            ink,
        );
    }
    for r in 0..rows {
        let y = rect.min.y + 18.0 + r as f32 * cell;
        p.text(
            Pos2::new(rect.min.x, y + cell / 2.0),
            egui::Align2::LEFT_CENTER,
            format!("{} {}", names[0], r + 1),
            font.clone(),
            ink,
        );
        for c in 0..cols {
            let fill = magnitude(map.values[(r, c)], dark);
            let cell_rect = Rect::from_min_size(
                Pos2::new(rect.min.x + label_w + c as f32 * cell, y),
                Vec2::splat(cell - 2.0),
            );
            p.rect_filled(cell_rect, 2.0, fill);
            let light = fill.r() as u32 + fill.g() as u32 + fill.b() as u32 > 420;
            let on_fill = if light {
                Color32::BLACK
            } else {
                Color32::WHITE
            };
            if cell >= 40.0 {
                p.text(
                    cell_rect.center(),
                    egui::Align2::CENTER_CENTER,
                    text(r, c),
                    font.clone(),
                    on_fill,
                );
            }
        }
    }
}
