//! One colour per optimizer, the same in every plot (the registry's, from the Okabe–Ito palette,
//! readable by people with colour-vision deficiencies). GD blue and Adam vermilion as in the
//! explainer's figures.

use eframe::egui::Color32;

/// The Okabe–Ito palette (distinct for people with colour-vision deficiencies), in the order
/// the optimizers take it: blue, vermilion, bluish green, reddish purple, sky blue, orange,
/// then a violet, grey and brown for the rest.
pub const PALETTE: [Color32; 9] = [
    Color32::from_rgb(0, 114, 178),
    Color32::from_rgb(213, 94, 0),
    Color32::from_rgb(0, 158, 115),
    Color32::from_rgb(204, 121, 167),
    Color32::from_rgb(86, 180, 233),
    Color32::from_rgb(230, 159, 0),
    Color32::from_rgb(120, 94, 240),
    Color32::from_rgb(140, 140, 140),
    Color32::from_rgb(90, 60, 30),
];

/// The colour of optimizer `name` from its registry entry (the key lab's arms and the gauge
/// lab's rules share it, so an optimizer has one colour everywhere); unknown names cycle
/// through the palette by `index` so they still get a distinct colour.
pub fn optimizer_color(name: &str, index: usize) -> Color32 {
    match crate::optim::lookup(name) {
        Some(info) => {
            let [r, g, b] = info.color;
            Color32::from_rgb(r, g, b)
        }
        None => PALETTE[index % PALETTE.len()],
    }
}

/// The same colour, lighter/transparent, for rotated-twin lines and bands.
pub fn faded(c: Color32, alpha: u8) -> Color32 {
    Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), alpha)
}
