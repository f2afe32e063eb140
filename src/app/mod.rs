//! The desktop app. Until the live lab lands, the window says what the headless commands do.

use eframe::egui;

/// Opens the main window and blocks until it is closed.
/// Errors: no display or no usable graphics context.
pub fn run_gui() -> anyhow::Result<()> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("basis-lab")
            .with_inner_size([900.0, 560.0]),
        ..Default::default()
    };
    eframe::run_native(
        "basis-lab",
        options,
        Box::new(|_cc| Ok(Box::new(Placeholder))),
    )
    .map_err(|e| anyhow::anyhow!("cannot open the window: {e}"))
}

struct Placeholder;

impl eframe::App for Placeholder {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        egui::CentralPanel::default().show(ui, |ui| {
            ui.heading("basis-lab");
            ui.add_space(8.0);
            ui.label(
                "Does the optimizer you train with leave fingerprints in the coordinate basis \
                 of what a model learns, when the model itself cannot see the basis?",
            );
            ui.add_space(12.0);
            ui.label("The live lab is not in this build yet. The experiments run from a terminal:");
            ui.add_space(4.0);
            for cmd in [
                "basis-lab run presets/default.ron --out out/",
                "basis-lab sweep presets/default.ron --seeds 8 --out sweep/",
                "basis-lab presets",
            ] {
                ui.code(cmd);
            }
        });
    }
}
