//! Text with inline sub- and superscripts, so formulas read as formulas without LaTeX:
//! `W_K` → W with a lowered K, `R^{d_k}` → R with raised d_k, `_{…}`/`^{…}` group several
//! characters. Everything else is plain text.

use eframe::egui::{self, Align, Color32, FontId, text::LayoutJob};

/// Lays out `text` at `font` in `color`, wrapping at `width` points.
pub fn layout(text: &str, font: &FontId, color: Color32, width: f32) -> LayoutJob {
    let mut job = LayoutJob::default();
    job.wrap.max_width = width;
    let small = FontId::new(font.size * 0.72, font.family.clone());
    let normal = egui::TextFormat {
        font_id: font.clone(),
        color,
        valign: Align::Center,
        ..Default::default()
    };
    let script = |valign| egui::TextFormat {
        font_id: small.clone(),
        color,
        valign,
        ..Default::default()
    };
    let mut chars = text.chars().peekable();
    let mut plain = String::new();
    while let Some(c) = chars.next() {
        let valign = match c {
            '_' => Align::BOTTOM,
            '^' => Align::TOP,
            _ => {
                plain.push(c);
                continue;
            }
        };
        let group: String = match chars.peek() {
            Some('{') => {
                chars.next();
                chars.by_ref().take_while(|&c| c != '}').collect()
            }
            Some(_) => chars.next().into_iter().collect(),
            None => {
                plain.push(c);
                break;
            }
        };
        if !plain.is_empty() {
            job.append(&std::mem::take(&mut plain), 0.0, normal.clone());
        }
        job.append(&group, 0.0, script(valign));
    }
    if !plain.is_empty() {
        job.append(&plain, 0.0, normal);
    }
    job
}

/// Shows `text` (with sub/superscript markup) as a wrapped label in the body font.
pub fn paragraph(ui: &mut egui::Ui, text: &str) -> egui::Response {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let color = ui.visuals().text_color();
    let job = layout(text, &font, color, ui.available_width());
    ui.label(job)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_become_separate_sections() {
        let font = FontId::proportional(16.0);
        let job = layout("W_K ∈ R^{d_k×V}, x", &font, Color32::BLACK, 400.0);
        let parts: Vec<(&str, f32, Align)> = job
            .sections
            .iter()
            .map(|s| {
                (
                    &job.text[s.byte_range.start.0..s.byte_range.end.0],
                    s.format.font_id.size,
                    s.format.valign,
                )
            })
            .collect();
        assert_eq!(parts[0].0, "W");
        assert_eq!((parts[1].0, parts[1].2), ("K", Align::BOTTOM));
        assert_eq!(parts[2].0, " ∈ R");
        assert_eq!((parts[3].0, parts[3].2), ("d_k×V", Align::TOP));
        assert!(parts[3].1 < 16.0);
        assert_eq!(parts[4].0, ", x");
    }
}
