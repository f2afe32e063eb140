//! One colour per optimizer, the same in every plot (the registry's, from the Okabe–Ito palette,
//! readable by people with colour-vision deficiencies). GD blue and Adam vermilion as in the
//! explainer's figures.

use eframe::egui::Color32;

/// The Okabe–Ito palette (distinct for people with colour-vision deficiencies), in the order
/// the optimizers take it (the library's [`crate::optim::PALETTE`], which figures
/// use too).
pub const PALETTE: [Color32; 9] = {
    let p = crate::optim::PALETTE;
    let mut out = [Color32::BLACK; 9];
    let mut i = 0;
    while i < 9 {
        out[i] = Color32::from_rgb(p[i][0], p[i][1], p[i][2]);
        i += 1;
    }
    out
};

/// The colour of optimizer `name` from its registry entry (the key lab's arms and the gauge
/// lab's rules share it, so an optimizer has one colour everywhere, saved figures included);
/// unknown names cycle through the palette by `index` so they still get a distinct colour.
pub fn optimizer_color(name: &str, index: usize) -> Color32 {
    let [r, g, b] = crate::optim::optimizer_rgb(name, index);
    Color32::from_rgb(r, g, b)
}

/// The colour as the figures' sRGB triple (alpha dropped).
pub fn rgb(c: Color32) -> crate::figure::Rgb {
    [c.r(), c.g(), c.b()]
}

/// `c` as the colour of text that names what `c` draws (a table's rule, an arm's heading): the
/// same hue, mixed toward black on a light theme (toward white on a dark one) in steps of 5%
/// until it has WCAG 2's 4.5:1 contrast ([`crate::app::style::contrast_ratio`]) against the
/// panel, window and text-field backgrounds of `visuals` and a striped table row's. A rule's colour is chosen for lines
/// on a plot; as text several are too pale for a projector (momentum's grey is 3.2:1 on the
/// light panel, RMSProp's orange 2.0:1).
pub fn text_color(c: Color32, visuals: &eframe::egui::Visuals) -> Color32 {
    use crate::app::style::contrast_ratio;
    let grounds = grounds(visuals);
    let toward = if visuals.dark_mode {
        Color32::WHITE
    } else {
        Color32::BLACK
    };
    (0..=20)
        .map(|k| mix(c, toward, k as f64 / 20.0))
        .find(|&m| grounds.iter().all(|&bg| contrast_ratio(m, bg) >= 4.5))
        .unwrap_or(toward)
}

/// The backgrounds text is drawn on: the panel, a window, a text field, and a striped table row
/// (its faint fill over the panel).
fn grounds(visuals: &eframe::egui::Visuals) -> [Color32; 4] {
    let stripe = visuals.faint_bg_color;
    let over = |p: u8, s: u8| {
        let a = stripe.a() as f64 / 255.0;
        // Premultiplied: the stripe's channel already carries its alpha.
        (s as f64 + (1.0 - a) * p as f64).round().min(255.0) as u8
    };
    let p = visuals.panel_fill;
    [
        p,
        visuals.window_fill,
        visuals.extreme_bg_color,
        Color32::from_rgb(
            over(p.r(), stripe.r()),
            over(p.g(), stripe.g()),
            over(p.b(), stripe.b()),
        ),
    ]
}

/// `(1 − t)·a + t·b` per channel, opaque.
fn mix(a: Color32, b: Color32, t: f64) -> Color32 {
    let ch = |x: u8, y: u8| ((1.0 - t) * x as f64 + t * y as f64).round() as u8;
    Color32::from_rgb(ch(a.r(), b.r()), ch(a.g(), b.g()), ch(a.b(), b.b()))
}

/// The same colour, lighter/transparent, for rotated-twin lines and bands.
pub fn faded(c: Color32, alpha: u8) -> Color32 {
    Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), alpha)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::style::{apply_style, contrast_ratio};

    /// Every rule's colour (and the palette's, for names the registry does not know) reads at
    /// 4.5:1 as text in both themes, and keeps its hue: a colour that already passes is kept.
    #[test]
    fn every_rule_colour_is_legible_as_text_in_both_themes() {
        let ctx = eframe::egui::Context::default();
        apply_style(&ctx);
        let colours: Vec<Color32> = crate::optim::REGISTRY
            .iter()
            .map(|i| optimizer_color(i.name, 0))
            .chain(PALETTE)
            .collect();
        let mut darkened = 0;
        for theme in [eframe::egui::Theme::Light, eframe::egui::Theme::Dark] {
            let mut visuals = None;
            ctx.style_mut_of(theme, |s| visuals = Some(s.visuals.clone()));
            let v = visuals.unwrap();
            for &c in &colours {
                let t = text_color(c, &v);
                for bg in grounds(&v) {
                    let r = contrast_ratio(t, bg);
                    assert!(r >= 4.5, "{theme:?}: {c:?} as {t:?} on {bg:?}: {r:.2}:1");
                }
                if grounds(&v).iter().all(|&bg| contrast_ratio(c, bg) >= 4.5) {
                    assert_eq!(t, c, "a legible colour is kept");
                } else {
                    darkened += 1;
                    // Mixed toward black or white only: the channels keep their order.
                    let order = |x: Color32| {
                        let mut k = [(x.r(), 0), (x.g(), 1), (x.b(), 2)];
                        k.sort();
                        k.map(|(_, i)| i)
                    };
                    let grey = c.r() == c.g() && c.g() == c.b();
                    assert!(grey || order(t) == order(c), "{c:?} → {t:?} changed hue");
                }
            }
        }
        // Momentum's grey, RMSProp's orange and Scalar-Adam's sky blue among them.
        assert!(darkened >= 3, "{darkened}");
        let light = eframe::egui::Visuals::light();
        let momentum = optimizer_color("momentum", 0);
        assert!(contrast_ratio(momentum, light.panel_fill) < 4.5);
        assert_ne!(text_color(momentum, &light), momentum);
    }
}
