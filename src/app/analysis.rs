//! One generic background analysis for every panel that runs one (seed, ε and d_k sweeps, the
//! matched comparison, the gauge lab's sweeps): its inputs and job while it runs, its last
//! result with the inputs that made it (kept across restarts), and one poll that files the
//! outcome or a notice.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::lab::Lab;
use crate::experiment::SweepError;
use crate::live::{Job, Task};

/// Why an analysis ended without a result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Stop {
    /// Its Cancel button was pressed.
    Cancelled,
    /// It failed; the message says why.
    Failed(String),
}

impl From<SweepError> for Stop {
    fn from(e: SweepError) -> Self {
        match e {
            SweepError::Cancelled => Stop::Cancelled,
            SweepError::Invalid(e) => Stop::Failed(e.to_string()),
        }
    }
}

/// The work of `runs` paired runs of `preset` for [`Analysis::start`]: training steps times
/// arms (each arm trains its twin too, so the factor 2 is common to all and left out).
pub fn paired_work(preset: &crate::preset::Preset, runs: usize) -> f64 {
    runs as f64 * preset.steps as f64 * preset.arms.len() as f64
}

/// The job of an analysis with result `R`.
type Outcome<R> = Job<Result<R, Stop>>;

/// What ran and what it gave.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finished<I, R> {
    /// The inputs (for the stale check: are they still what the panel would run?).
    pub inputs: I,
    /// The result.
    pub result: R,
}

/// A background analysis with inputs `I` and result `R`. Only the last result is saved.
#[derive(Serialize, Deserialize)]
#[serde(bound(
    serialize = "I: Serialize, R: Serialize",
    deserialize = "I: Deserialize<'de>, R: Deserialize<'de>"
))]
pub struct Analysis<I, R> {
    /// The last finished run.
    pub last: Option<Finished<I, R>>,
    /// Seconds per unit of work (the tab's own measure, see [`Analysis::start`]) that the last
    /// finished run took on this computer: the pace the next run's estimate uses.
    #[serde(default)]
    pub pace: Option<f64>,
    /// The inputs, the work they hold and the job.
    #[serde(skip)]
    running: Option<(I, f64, Outcome<R>)>,
}

impl<I, R> Default for Analysis<I, R> {
    fn default() -> Self {
        Self {
            last: None,
            pace: None,
            running: None,
        }
    }
}

impl<I: Send + 'static, R: Send + 'static> Analysis<I, R> {
    /// Starts `task` for `total` items ([`Job::task`]: a thread on the desktop, a Web Worker
    /// in the page). `work` is the size of the job in the tab's own measure (training steps
    /// times arms, say): its time over `work` becomes [`Analysis::pace`]. A running job is
    /// replaced (and cancelled).
    pub fn start<K: Task<Output = Result<R, Stop>>>(
        &mut self,
        inputs: I,
        total: usize,
        work: f64,
        repaint: Arc<dyn Fn() + Send + Sync>,
        task: K,
    ) where
        R: serde::de::DeserializeOwned,
    {
        self.running = Some((inputs, work, Job::task(task, total, repaint)));
    }

    /// How long a job of `work` (the measure of [`Analysis::start`]) should take here, at the
    /// last finished run's pace; `None` before any run finished.
    pub fn estimate(&self, work: f64) -> Option<Duration> {
        let secs = self.pace? * work;
        (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(1e9)))
    }

    /// Files a finished job: its result becomes [`Analysis::last`]; a cancel, a failure or a
    /// panic becomes a notice naming `what`, and the previous result stays.
    pub fn poll(&mut self, what: &str, lab: &mut Lab) {
        let Some((_, _, job)) = &mut self.running else {
            return;
        };
        let Some(outcome) = job.take_result() else {
            return;
        };
        let (inputs, work, job) = self.running.take().expect("checked above");
        match outcome {
            // A page's worker is stopped, not told: its job ends with an error instead.
            Err(_) if job.is_cancelling() => {
                lab.inform(format!("{what} cancelled; the previous results stay."))
            }
            Ok(Ok(result)) => {
                if work > 0.0 {
                    self.pace = Some(job.elapsed().as_secs_f64() / work);
                }
                self.last = Some(Finished { inputs, result });
            }
            Ok(Err(Stop::Cancelled)) => {
                lab.inform(format!("{what} cancelled; the previous results stay."))
            }
            Ok(Err(Stop::Failed(msg))) => {
                lab.error(format!("{what} stopped: {msg}; the previous results stay."))
            }
            Err(panic) => lab.error(format!("{what} stopped: {panic}")),
        }
    }

    /// Checks the last result as read back from disk: `check` returns it as it should be kept
    /// (derived numbers computed again, say) or why it cannot be used, in which case it is
    /// dropped. Returns a line for a notice naming `what` when it was dropped.
    pub fn check_saved(
        &mut self,
        what: &str,
        check: impl FnOnce(Finished<I, R>) -> Result<Finished<I, R>, String>,
    ) -> Option<String> {
        match check(self.last.take()?) {
            Ok(kept) => {
                self.last = Some(kept);
                None
            }
            Err(e) => Some(format!("the saved {what} was dropped ({e})")),
        }
    }

    /// The job while it runs.
    pub fn job(&self) -> Option<&Job<Result<R, Stop>>> {
        self.running.as_ref().map(|(_, _, j)| j)
    }

    /// Whether a job runs.
    pub fn is_running(&self) -> bool {
        self.running.is_some()
    }
}
