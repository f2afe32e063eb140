//! Rows every analysis shares: the progress row of a background job (or its start button), the
//! line before its first result, and the note that results came from other settings.

use std::time::Duration;

use eframe::egui::{self, RichText};

use crate::app::analysis::Estimate;
use crate::app::lab::Lab;
use crate::live::Job;

/// A progress bar with the elapsed and remaining time and a Cancel button for `job`, or, with
/// no job, a start button labelled `start` and `estimate`, the time the run should take here
/// (`None`: not measured yet); returns whether the start button was clicked.
pub fn progress_row<T: Send + 'static>(
    ui: &mut egui::Ui,
    job: Option<&Job<T>>,
    unit: &str,
    start: &str,
    cancellable: bool,
    estimate: Option<Estimate>,
) -> bool {
    let Some(job) = job else {
        let clicked = ui.button(RichText::new(start).strong()).clicked();
        let text = match estimate {
            Some(e) if e.from_trial => format!("{} here (from a short trial run)", about(e.time)),
            Some(e) => format!("{} here (the last run's pace)", about(e.time)),
            None => "its time is measured by the first run".to_string(),
        };
        ui.label(RichText::new(text).weak());
        return clicked;
    };
    let frac = job.done() as f32 / job.total.max(1) as f32;
    ui.add(
        egui::ProgressBar::new(frac)
            .desired_width(260.0)
            .animate(true)
            .text(format!("{} / {} {unit}", job.done(), job.total)),
    );
    let left = match job.remaining() {
        Some(t) => format!("{} left", about(t)),
        None => "estimating the rest…".to_string(),
    };
    ui.label(RichText::new(format!("{} elapsed, {left}", duration(job.elapsed()))).weak());
    if job.is_cancelling() {
        ui.label("cancelling…");
    } else if cancellable && ui.button("Cancel").clicked() {
        job.cancel();
    }
    false
}

/// An expected time: `under a second`, or `about ` and its [`duration`].
pub fn about(t: Duration) -> String {
    if t.as_secs_f64() < 0.5 {
        "under a second".to_string()
    } else {
        format!("about {}", duration(t))
    }
}

/// A duration as a person reads it: `8 s`, `2 min 05 s`, `1 h 20 min`.
pub fn duration(t: Duration) -> String {
    let s = t.as_secs_f64().round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, (s % 3600) / 60),
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_a_person_says_them() {
        assert_eq!(duration(Duration::from_millis(400)), "0 s");
        assert_eq!(about(Duration::from_millis(400)), "under a second");
        assert_eq!(about(Duration::from_secs(90)), "about 1 min 30 s");
        assert_eq!(duration(Duration::from_secs_f64(59.4)), "59 s");
        assert_eq!(duration(Duration::from_secs(125)), "2 min 05 s");
        assert_eq!(
            duration(Duration::from_secs(3600 + 20 * 60 + 7)),
            "1 h 20 min"
        );
    }
}
