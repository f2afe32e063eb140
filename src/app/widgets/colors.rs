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

/// The same colour, lighter/transparent, for rotated-twin lines and bands.
pub fn faded(c: Color32, alpha: u8) -> Color32 {
    Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), alpha)
}
