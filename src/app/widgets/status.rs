//! Rows every analysis shares: the progress row of a background job (or its start button), the
//! line before its first result, and the note that results came from other settings.

use eframe::egui::{self, RichText};

use crate::app::lab::Lab;
use crate::live::Job;

/// A progress bar with a Cancel button for `job`, or, with no job, a start button labelled
/// `start`; returns whether the start button was clicked.
pub fn progress_row<T: Send + 'static>(
    ui: &mut egui::Ui,
    job: Option<&Job<T>>,
    unit: &str,
    start: &str,
    cancellable: bool,
) -> bool {
    let Some(job) = job else {
        return ui.button(RichText::new(start).strong()).clicked();
    };
    let frac = job.done() as f32 / job.total.max(1) as f32;
    ui.add(
        egui::ProgressBar::new(frac)
            .desired_width(260.0)
            .animate(true)
            .text(format!("{} / {} {unit}", job.done(), job.total)),
    );
    if job.is_cancelling() {
        ui.label("cancelling…");
    } else if cancellable && ui.button("Cancel").clicked() {
        job.cancel();
    }
    false
}

/// A red note that the results below came from other settings (`what`) than the current ones.
pub fn stale_note(ui: &mut egui::Ui, lab: &Lab, what: String) {
    ui.label(
        RichText::new(format!(
            "These results are from other settings ({what}) than the current ones; run again to \
             update them."
        ))
        .color(lab.notice_color(true)),
    );
}

/// What an analysis shows before its first result: `idle` while nothing runs, and while its job
/// runs a line saying the results are coming, so "no results" never sits under a moving bar.
pub fn before_results(ui: &mut egui::Ui, running: bool, idle: &str) {
    let text = if running {
        "Running: the results appear here when it ends."
    } else {
        idle
    };
    ui.label(RichText::new(text).weak());
}
