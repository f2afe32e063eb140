//! Screenshot mode (`--screenshot`): run the live run to a step at full speed, start the open
//! panel's analysis, wait until nothing is busy, save a PNG of the window and close; and
//! frame-statistics mode (`--frame-stats`), which measures frame times while the run streams.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use web_time::Instant;

use eframe::egui;

use super::AppState;
use crate::experiment::live::{Command, StopRule};

/// Longest a screenshot run may take before it gives up.
const SHOT_TIMEOUT: Duration = Duration::from_secs(600);

/// Screenshot mode: run N steps at full speed, let the plots settle, save, close.
pub(super) struct ShotPlan {
    path: PathBuf,
    steps: usize,
    started: Instant,
    /// Frame-statistics mode, see [`GuiOptions::frame_seconds`].
    frames: Option<FrameStats>,
    /// Whether the open tab's analysis runs before the shot (see [`GuiOptions::no_analysis`]).
    pub(super) analyses: bool,
    armed: bool,
    settled_frames: u32,
    requested: bool,
    outcome: Arc<Mutex<Option<Result<PathBuf, String>>>>,
}

/// Frame times of a frame-statistics run (`--frame-stats`).
pub(super) struct FrameStats {
    /// Length of the measured window.
    seconds: f64,
    /// Start of the window and the step count then, once the run streams.
    window: Option<(Instant, usize)>,
    /// Seconds between the starts of successive frames inside the window (everything: our
    /// logic and UI, egui's tessellation and the GL renderer).
    intervals: Vec<f64>,
    /// Seconds of our own work per frame inside the window (`logic` + `ui`).
    work: Vec<f64>,
    reported: bool,
}

impl FrameStats {
    fn new(seconds: f64) -> Self {
        Self {
            seconds,
            window: None,
            intervals: Vec::new(),
            work: Vec::new(),
            reported: false,
        }
    }

    fn open(&mut self, step: usize) {
        self.window = Some((Instant::now(), step));
    }

    fn measuring(&self) -> bool {
        self.window.is_some() && !self.reported
    }

    pub(super) fn frame_started(&mut self, now: Instant, previous: Instant) {
        if self.measuring() {
            self.intervals.push((now - previous).as_secs_f64());
        }
    }

    pub(super) fn frame_finished(&mut self, work: Duration) {
        if self.measuring() {
            self.work.push(work.as_secs_f64());
        }
    }

    fn report(&self, began: Instant, steps: usize, step: usize) -> String {
        let secs = began.elapsed().as_secs_f64();
        let line = |name: &str, xs: &[f64]| {
            let (p50, p99, max) = percentiles(xs);
            format!(
                "{name}: p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                p50 * 1e3,
                p99 * 1e3,
                max * 1e3
            )
        };
        let rss =
            peak_rss_kib().map_or("unknown".into(), |k| format!("{:.0} MB", k as f64 / 1024.0));
        format!(
            "frame stats over {secs:.1} s: {} frames ({:.1} per s) while the run streamed {steps} steps \
             ({:.0} steps/s), now at step {step}\n{}\n{}\npeak resident memory (VmHWM): {rss}",
            self.intervals.len(),
            self.intervals.len() as f64 / secs,
            steps as f64 / secs,
            line("frame time (start to start)", &self.intervals),
            line("app work per frame (logic + ui)", &self.work),
        )
    }
}

/// (p50, p99, max) of `xs` by the nearest-rank rule; NaN for an empty slice.
fn percentiles(xs: &[f64]) -> (f64, f64, f64) {
    if xs.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = |p: f64| v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
    (rank(0.5), rank(0.99), v[v.len() - 1])
}

/// Peak resident set size of this process in KiB (`VmHWM` in /proc/self/status; Linux only).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

impl ShotPlan {
    /// A plan to run `steps` steps (with `frame_seconds`, to stream that long and measure the
    /// frames instead), then save a PNG at `path`; the outcome goes into `outcome`.
    pub(super) fn new(
        path: PathBuf,
        steps: usize,
        frame_seconds: Option<f64>,
        outcome: Arc<Mutex<Option<Result<PathBuf, String>>>>,
    ) -> Self {
        Self {
            path,
            steps,
            frames: frame_seconds.map(FrameStats::new),
            analyses: true,
            started: Instant::now(),
            armed: false,
            settled_frames: 0,
            requested: false,
            outcome,
        }
    }

    /// The frame statistics, in frame-statistics mode.
    pub(super) fn frames_mut(&mut self) -> Option<&mut FrameStats> {
        self.frames.as_mut()
    }

    /// One frame of the plan: arm the run and the open panel's analysis, wait until nothing
    /// is busy, let the plots settle, then take the screenshot.
    pub(super) fn drive(&mut self, state: &mut AppState, ctx: &egui::Context) {
        ctx.request_repaint();
        if !self.armed {
            self.armed = true;
            let lab = &mut state.lab;
            lab.speed = None;
            lab.stop = StopRule {
                // Frame statistics stream past the preset's own step budget.
                at_step: Some(if self.frames.is_some() {
                    usize::MAX
                } else {
                    self.steps
                }),
                heldout_loss_below: None,
            };
            lab.send(Command::SetSpeed(None));
            lab.send(Command::SetStop(lab.stop));
            lab.send(Command::Play);
            // A section with tabs starts the open tab's analysis; one without, its own run.
            if self.analyses || state.section().tabs().is_none() {
                state.start_open();
            }
            return;
        }
        let budget =
            SHOT_TIMEOUT + Duration::from_secs_f64(self.frames.as_ref().map_or(0.0, |f| f.seconds));
        if self.started.elapsed() > budget || state.lab.crashed.is_some() {
            let why = state
                .lab
                .crashed
                .clone()
                .unwrap_or_else(|| format!("run did not reach {} steps in time", self.steps));
            self.outcome.lock().expect("lock").get_or_insert(Err(why));
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if self.requested {
            return;
        }
        if let Some(stats) = &mut self.frames
            && !stats.reported
        {
            let step = state.lab.history.step;
            match stats.window {
                None if step > 0 => stats.open(step),
                Some((began, first)) if began.elapsed().as_secs_f64() >= stats.seconds => {
                    if let Err(e) = crate::console::outln(&stats.report(began, step - first, step))
                    {
                        // The failed print ends the shot as a failure, as a failed save would.
                        self.outcome
                            .lock()
                            .expect("lock")
                            .get_or_insert(Err(e.to_string()));
                        ctx.send_viewport_cmd(egui::ViewportCommand::Close);
                    }
                    stats.reported = true;
                    self.steps = 0;
                    state.lab.send(Command::Pause);
                }
                _ => {}
            }
            return;
        }
        let done = !state.section().status(&state.lab).busy;
        if !done {
            return;
        }
        self.settled_frames += 1;
        if self.settled_frames < 6 {
            return;
        }
        self.requested = true;
        let (path, outcome, ctx2) = (self.path.clone(), self.outcome.clone(), ctx.clone());
        ctx.request_screenshot(move |img| {
            crate::live::detach(move || {
                let r = super::shell::save_png(&img, &path).map(|_| path.clone());
                *outcome.lock().expect("lock") = Some(r);
                ctx2.send_viewport_cmd(egui::ViewportCommand::Close);
                ctx2.request_repaint();
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::percentiles;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let xs: Vec<f64> = (1..=200).rev().map(f64::from).collect();
        assert_eq!(percentiles(&xs), (100.0, 198.0, 200.0));
        assert_eq!(percentiles(&[3.0]), (3.0, 3.0, 3.0));
        assert!(percentiles(&[]).0.is_nan());
    }
}
