//! The window where a preset's share string or RON text is pasted, shared by the key lab's presets (the shell)
//! and the attention section's.

use eframe::egui;

/// Draws the paste window for a `what` ("preset", "attention preset") while `slot` holds its
/// text. Pressing "Load {what}" calls `load(text)`, which returns whether the text was taken
/// (the window then closes; otherwise it stays, so the text can be fixed); closing the window
/// drops the text.
pub fn paste_window(
    ctx: &egui::Context,
    slot: &mut Option<String>,
    what: &str,
    load: impl FnOnce(&str) -> bool,
) {
    let Some(mut text) = slot.take() else {
        return;
    };
    let mut open = true;
    let mut pressed = false;
    let field = format!("{}{} text", what[..1].to_uppercase(), &what[1..]);
    egui::Window::new(format!("Paste {what}"))
        .open(&mut open)
        .default_width(520.0)
        .show(ctx, |ui| {
            ui.horizontal(|ui| {
                pressed = ui.button(format!("Load {what}")).clicked();
                ui.label(format!(
                    "Paste the {what}'s share string or RON text below (Ctrl+V), then load it."
                ));
            });
            let label = ui.label(field);
            egui::ScrollArea::vertical()
                .max_height(420.0)
                .show(ui, |ui| {
                    ui.add(
                        egui::TextEdit::multiline(&mut text)
                            .code_editor()
                            .desired_rows(12)
                            .desired_width(f32::INFINITY),
                    )
                    .labelled_by(label.id);
                });
        });
    if (pressed && load(&text)) || !open {
        return;
    }
    *slot = Some(text);
}
