//! One colour per optimizer, the same in every plot (Okabe–Ito palette, readable by people with
//! colour-vision deficiencies). GD blue and Adam vermilion as in the explainer's figures.

use eframe::egui::Color32;

/// The colour of optimizer `name` (registry name); unknown names cycle through the palette by
/// `index` so a new arm still gets a distinct colour.
pub fn optimizer_color(name: &str, index: usize) -> Color32 {
    match name {
        "gd" => Color32::from_rgb(0, 114, 178),
        "adam" => Color32::from_rgb(213, 94, 0),
        "sign" => Color32::from_rgb(0, 158, 115),
        "muon" => Color32::from_rgb(204, 121, 167),
        "scalar_adam" => Color32::from_rgb(86, 180, 233),
        "rmsprop" => Color32::from_rgb(230, 159, 0),
        "momentum" => Color32::from_rgb(120, 120, 120),
        _ => PALETTE[index % PALETTE.len()],
    }
}

const PALETTE: [Color32; 4] = [
    Color32::from_rgb(0, 114, 178),
    Color32::from_rgb(213, 94, 0),
    Color32::from_rgb(0, 158, 115),
    Color32::from_rgb(204, 121, 167),
];

/// The same colour, lighter/transparent, for rotated-twin lines and bands.
pub fn faded(c: Color32, alpha: u8) -> Color32 {
    Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), alpha)
}
