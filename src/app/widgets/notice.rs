//! The notice line: the last error or information message, with a dismiss button.

use eframe::egui::{self, RichText};

use crate::app::state::AppState;

/// Draws `state.notice`, if any, with a button that dismisses it.
pub fn row(state: &mut AppState, ui: &mut egui::Ui) {
    if let Some(n) = state.notice.clone() {
        ui.horizontal_top(|ui| {
            if ui.small_button("dismiss").clicked() {
                state.notice = None;
            }
            ui.add(
                egui::Label::new(RichText::new(&n.text).color(state.notice_color(n.error))).wrap(),
            );
        });
    }
}
