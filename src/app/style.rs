//! The look: fonts and text sizes that stay legible on a projector.

use std::sync::Arc;

use eframe::egui;

/// Fonts and text sizes chosen to stay legible on a projector. DejaVu Sans (bundled) backs up
/// egui's default font for the mathematical symbols the labels use (‖, Σ, ⁴, √, subscripts).
pub fn apply_style(ctx: &egui::Context) {
    use egui::{FontFamily, FontId, TextStyle};
    let mut fonts = egui::FontDefinitions::default();
    fonts.font_data.insert(
        "dejavu".into(),
        Arc::new(egui::FontData::from_static(include_bytes!(
            "../../assets/fonts/DejaVuSans.ttf"
        ))),
    );
    for family in [FontFamily::Proportional, FontFamily::Monospace] {
        fonts
            .families
            .entry(family)
            .or_default()
            .push("dejavu".into());
    }
    ctx.set_fonts(fonts);
    ctx.all_styles_mut(|style| {
        style.text_styles = [
            (
                TextStyle::Heading,
                FontId::new(24.0, FontFamily::Proportional),
            ),
            (TextStyle::Body, FontId::new(16.0, FontFamily::Proportional)),
            (
                TextStyle::Button,
                FontId::new(16.0, FontFamily::Proportional),
            ),
            (
                TextStyle::Monospace,
                FontId::new(15.0, FontFamily::Monospace),
            ),
            (
                TextStyle::Small,
                FontId::new(13.5, FontFamily::Proportional),
            ),
        ]
        .into();
        style.spacing.item_spacing = egui::vec2(8.0, 5.0);
        style.spacing.button_padding = egui::vec2(8.0, 3.0);
    });
    // egui's dark body text (grey 140 on near-black) washes out on a projector.
    ctx.style_mut_of(egui::Theme::Dark, |style| {
        style.visuals.widgets.noninteractive.fg_stroke.color = egui::Color32::from_gray(205);
        style.visuals.weak_text_color = Some(egui::Color32::from_gray(WEAK_DARK));
        // egui's pure red errors are 4.3:1 on its dark panel; a lighter red is 5.5:1.
        style.visuals.error_fg_color = egui::Color32::from_rgb(255, 90, 90);
    });
    // egui's light warning, error and link colours (#FF6400, #FF0000, #009BFF) are 2.8–3.8:1
    // on its panel; these darker ones of the same hues are 5.2–5.7:1.
    ctx.style_mut_of(egui::Theme::Light, |style| {
        let v = &mut style.visuals;
        v.weak_text_color = Some(egui::Color32::from_gray(WEAK_LIGHT));
        v.warn_fg_color = egui::Color32::from_rgb(180, 70, 0);
        v.error_fg_color = egui::Color32::from_rgb(200, 0, 0);
        v.hyperlink_color = egui::Color32::from_rgb(0, 100, 200);
    });
}

/// Secondary text (`RichText::weak`: descriptions, "paused…", subtitles) on the light theme:
/// grey 100 on egui's light panel (grey 248) is 5.6:1, where egui's default (the body text at
/// 60% alpha, about grey 147) was 2.9:1 and washed out on a projector.
const WEAK_LIGHT: u8 = 100;

/// Secondary text on the dark theme: grey 160 on egui's dark panel (grey 27) is 6.6:1.
const WEAK_DARK: u8 = 160;

/// WCAG 2's contrast ratio `(L₁ + 0.05)/(L₂ + 0.05)` of two opaque colours (1 to 21), with the
/// relative luminance of sRGB (WCAG 2.1, "relative luminance").
pub fn contrast_ratio(a: egui::Color32, b: egui::Color32) -> f64 {
    let luminance = |c: egui::Color32| {
        let lin = |v: u8| {
            let s = v as f64 / 255.0;
            if s <= 0.04045 {
                s / 12.92
            } else {
                ((s + 0.055) / 1.055).powf(2.4)
            }
        };
        0.2126 * lin(c.r()) + 0.7152 * lin(c.g()) + 0.0722 * lin(c.b())
    };
    let (la, lb) = (luminance(a), luminance(b));
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every text colour of `visuals` beside every background it is drawn on, as
    /// `(what, text, background)`: body, strong and secondary text, warnings and errors, links on
    /// the panel, window and text-field backgrounds, and each widget state's text on its fill.
    fn text_pairs(visuals: &egui::Visuals) -> Vec<(&'static str, egui::Color32, egui::Color32)> {
        let w = &visuals.widgets;
        let texts = [
            ("body text", visuals.text_color()),
            ("strong text", visuals.strong_text_color()),
            ("secondary text", visuals.weak_text_color()),
            ("warning", visuals.warn_fg_color),
            ("error", visuals.error_fg_color),
            ("link", visuals.hyperlink_color),
        ];
        let grounds = [
            visuals.panel_fill,
            visuals.window_fill,
            visuals.extreme_bg_color,
        ];
        let mut pairs: Vec<_> = texts
            .iter()
            .flat_map(|&(what, fg)| grounds.iter().map(move |&bg| (what, fg, bg)))
            .collect();
        for (what, state) in [
            ("button text", &w.inactive),
            ("hovered button text", &w.hovered),
            ("pressed button text", &w.active),
            ("selected text", &w.open),
        ] {
            pairs.push((what, state.fg_stroke.color, state.weak_bg_fill));
        }
        pairs.push((
            "selected item",
            visuals.selection.stroke.color,
            visuals.selection.bg_fill,
        ));
        pairs
    }

    #[test]
    fn the_contrast_ratio_is_wcag_s() {
        let (black, white) = (egui::Color32::BLACK, egui::Color32::WHITE);
        assert!((contrast_ratio(black, white) - 21.0).abs() < 1e-9);
        assert!((contrast_ratio(white, white) - 1.0).abs() < 1e-12);
        // egui's old secondary text: grey 147 on grey 248.
        let old = contrast_ratio(egui::Color32::from_gray(147), egui::Color32::from_gray(248));
        assert!((old - 2.9).abs() < 0.05, "{old}");
    }

    #[test]
    fn every_text_colour_meets_4_5_to_1_in_both_themes() {
        let ctx = egui::Context::default();
        apply_style(&ctx);
        for theme in [egui::Theme::Light, egui::Theme::Dark] {
            let mut visuals = None;
            ctx.style_mut_of(theme, |s| visuals = Some(s.visuals.clone()));
            let failing: Vec<String> = text_pairs(&visuals.unwrap())
                .into_iter()
                .map(|(what, fg, bg)| (what, fg, bg, contrast_ratio(fg, bg)))
                .filter(|&(.., r)| r < 4.5)
                .map(|(what, fg, bg, r)| format!("{what} {fg:?} on {bg:?}: {r:.2}:1"))
                .collect();
            assert!(failing.is_empty(), "{theme:?}: {failing:#?}");
        }
    }
}
