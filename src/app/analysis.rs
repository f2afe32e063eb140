//! One generic background analysis for every panel that runs one (seed, ε and d_k sweeps, the
//! matched comparison, the gauge lab's sweeps): its inputs and job while it runs, its last
//! result with the inputs that made it (kept across restarts), and one poll that files the
//! outcome or a notice.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::lab::Lab;
use super::panel::Status;
use crate::live::{Job, Repaint, Stop, Task};

/// The work of `runs` paired runs of `preset` for [`Analysis::start`]: training steps times
/// arms (each arm trains its twin too, so the factor 2 is common to all and left out).
pub fn paired_work(preset: &crate::preset::Preset, runs: usize) -> f64 {
    runs as f64 * preset.steps as f64 * preset.arms.len() as f64
}

/// How many units of work an analysis runs at once here: one per core on the desktop (its
/// threads), one in the page (its one worker).
pub fn threads() -> usize {
    if cfg!(target_arch = "wasm32") {
        1
    } else {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
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
    /// Seconds per unit of work on one thread from a short trial on this computer
    /// ([`Analysis::calibrate`]), and what it tried (the settings' text), for the estimate
    /// before the first run finishes.
    #[serde(skip)]
    trial: Option<(String, f64)>,
    /// The key [`Analysis::calibrate`] was last given, written here each frame (its capacity
    /// kept) to compare with the trial's.
    #[serde(skip)]
    key: String,
    /// A trial running in the background ([`Analysis::calibrate_in_background`]) and its key.
    #[serde(skip)]
    trying: Option<(String, Job<Option<f64>>)>,
    /// The inputs, the work they hold and the job.
    #[serde(skip)]
    running: Option<(I, f64, Outcome<R>)>,
}

/// How long an analysis should take here, and what that is based on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The expected time.
    pub time: Duration,
    /// From a short trial ([`Analysis::calibrate`]) rather than the last finished run.
    pub from_trial: bool,
}

impl<I, R> Default for Analysis<I, R> {
    fn default() -> Self {
        Self {
            last: None,
            pace: None,
            trial: None,
            key: String::new(),
            trying: None,
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
        // The run's own pace soon replaces a trial's; it would only slow the run.
        self.trying = None;
        self.running = Some((inputs, work, Job::task(task, total, repaint)));
    }

    /// How long a job of `work` (the measure of [`Analysis::start`]) should take here: at the
    /// last finished run's pace, else at the trial's spread over the `parallel` units the job
    /// runs at once; `None` before either.
    pub fn estimate(&self, work: f64, parallel: usize) -> Option<Estimate> {
        let (pace, from_trial) = match (self.pace, &self.trial) {
            (Some(p), _) => (p, false),
            // A trial of other settings says nothing about these.
            (None, Some((k, t))) if *k == self.key => (t / parallel.max(1) as f64, true),
            (None, _) => return None,
        };
        let secs = pace * work;
        (secs.is_finite() && secs >= 0.0).then(|| Estimate {
            time: Duration::from_secs_f64(secs.min(1e9)),
            from_trial,
        })
    }

    /// Measures the pace before any run has: `trial` times a small piece of the work (on the
    /// calling thread, a few tens of milliseconds; `None` when it cannot) and returns seconds
    /// per unit of work on one thread. `key` is what it tries (the settings; compared by their
    /// `Debug` text): called every frame, it measures once per key, and not at all once a run
    /// has set the pace.
    pub fn calibrate(&mut self, key: &impl std::fmt::Debug, trial: impl FnOnce() -> Option<f64>) {
        if self.pace.is_some() {
            return;
        }
        use std::fmt::Write;
        self.key.clear();
        // Writing to a String cannot fail.
        let _ = write!(self.key, "{key:?}");
        if self.trial.as_ref().is_some_and(|(k, _)| *k == self.key) {
            return;
        }
        // A failed trial (settings too large or invalid) is not retried until they change.
        self.trial = Some((self.key.clone(), trial().unwrap_or(f64::NAN)));
    }

    /// [`Analysis::calibrate`] for a trial too slow for the UI's thread (a large zoo instance, a
    /// scene to read): `trial()` builds a task whose output is that pace, started in the
    /// background ([`Job::task`]: a thread, or a Web Worker in the page) once per `key` and
    /// not while the analysis runs; [`Analysis::poll`] files its pace. One trial runs at a
    /// time: settings that change while it runs are tried once it has ended (trials do not
    /// share the cores, and a dragged field does not start one per value).
    pub fn calibrate_in_background<K: Task<Output = Option<f64>>>(
        &mut self,
        key: &impl std::fmt::Debug,
        repaint: &Repaint,
        trial: impl FnOnce() -> K,
    ) {
        if self.pace.is_some() || self.running.is_some() {
            return;
        }
        use std::fmt::Write;
        self.key.clear();
        // Writing to a String cannot fail.
        let _ = write!(self.key, "{key:?}");
        if self.trying.is_some() || self.trial.as_ref().is_some_and(|(k, _)| *k == self.key) {
            return;
        }
        self.trying = Some((self.key.clone(), Job::task(trial(), 1, repaint.clone())));
    }

    /// Files a background trial that has ended (a failed one as "no estimate" for its key).
    fn poll_trial(&mut self) {
        let Some((_, job)) = &mut self.trying else {
            return;
        };
        let Some(outcome) = job.take_result() else {
            return;
        };
        let (key, _) = self.trying.take().expect("checked above");
        let pace = outcome.ok().flatten().filter(|p| p.is_finite() && *p > 0.0);
        self.trial = Some((key, pace.unwrap_or(f64::NAN)));
    }

    /// Files a finished job: its result becomes [`Analysis::last`]; a cancel, a failure or a
    /// panic becomes a notice naming `what`, and the previous result stays.
    pub fn poll(&mut self, what: &str, lab: &mut Lab) {
        self.poll_trial();
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

    /// The status of a panel whose work is this analysis: busy while it runs, awaiting a run
    /// while it has neither run nor a result.
    pub fn status(&self) -> Status {
        Status {
            busy: self.is_running(),
            awaits_run: self.last.is_none() && !self.is_running(),
            live_step: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::TRIAL_STEPS;
    use crate::tasks::Fixed;

    /// Before any run: one trial per settings, divided over the units run at once; a finished
    /// run's pace then wins.
    #[test]
    fn the_estimate_comes_from_one_trial_until_a_run_sets_the_pace() {
        let mut a: Analysis<(), ()> = Analysis::default();
        assert_eq!(a.estimate(100.0, 1), None);
        let mut trials = 0;
        for _ in 0..3 {
            a.calibrate(&"classroom", || {
                trials += 1;
                Some(0.01)
            });
        }
        assert_eq!(trials, 1);
        // Spread over the units run at once, whatever their number now.
        let e = a.estimate(100.0, 2).unwrap();
        assert!(e.from_trial);
        assert!((e.time.as_secs_f64() - 0.5).abs() < 1e-9, "{e:?}");
        assert!((a.estimate(100.0, 1).unwrap().time.as_secs_f64() - 1.0).abs() < 1e-9);
        // Other settings: tried again.
        a.calibrate(&"dk32", || Some(0.03));
        assert!((a.estimate(100.0, 1).unwrap().time.as_secs_f64() - 3.0).abs() < 1e-9);
        a.pace = Some(0.002);
        let e = a.estimate(100.0, 2).unwrap();
        assert!(!e.from_trial && (e.time.as_secs_f64() - 0.2).abs() < 1e-9);
        // A failed trial gives no estimate and is not retried for the same settings.
        let mut b: Analysis<(), ()> = Analysis::default();
        b.calibrate(&"huge", || None);
        b.calibrate(&"huge", || panic!("not retried"));
        assert_eq!(b.estimate(1.0, 1), None);
    }

    /// The trials measure real work: a positive pace, well under a second per step.
    #[test]
    fn trials_of_the_key_lab_and_the_zoo_measure_a_pace() {
        let preset = crate::preset::Preset::load("classroom").unwrap();
        let key = crate::experiment::sweep::trial_pace(&preset, TRIAL_STEPS).unwrap();
        assert!(key > 0.0 && key < 0.1, "{key} s per step and arm");
        // Too large to try on the UI's thread: no trial.
        let huge = crate::preset::Preset {
            baseline_rotations: 100_000,
            d_k: 256,
            ..preset.clone()
        };
        assert_eq!(
            crate::experiment::sweep::trial_pace(&huge, TRIAL_STEPS),
            None
        );
        let zoo = crate::sensing::zoo::bundled_zoo("zoo-paper");
        let pace = zoo.trial_pace(TRIAL_STEPS).unwrap();
        assert!(pace > 0.0 && pace < 1.0, "{pace} s per step");
    }

    /// Waits for the background trial to be filed.
    fn settle(a: &mut Analysis<(), ()>) {
        for _ in 0..500 {
            a.poll_trial();
            if a.trying.is_none() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the trial never ended");
    }

    /// A background trial starts once per settings, gives the estimate when it ends, and one
    /// that measures nothing gives none (and is not started again for the same settings).
    #[test]
    fn a_background_trial_gives_the_estimate_once_it_ends() {
        let repaint: Repaint = Arc::new(|| {});
        let mut a: Analysis<(), ()> = Analysis::default();
        let mut built = 0;
        a.calibrate_in_background(&"ladder", &repaint, || {
            built += 1;
            Fixed(0.04)
        });
        a.calibrate_in_background(&"ladder", &repaint, || {
            built += 1;
            Fixed(0.04)
        });
        // Other settings wait for the running trial: one at a time.
        a.calibrate_in_background(&"seeds 4", &repaint, || {
            built += 1;
            Fixed(9.0)
        });
        assert_eq!(built, 1, "one trial per settings, and one at a time");
        settle(&mut a);
        // The filed trial is the ladder's; for other settings it gives no estimate.
        assert_eq!(a.estimate(100.0, 2), None);
        a.calibrate_in_background(&"ladder", &repaint, || -> Fixed { panic!("tried already") });
        let e = a.estimate(100.0, 2).unwrap();
        assert!(
            e.from_trial && (e.time.as_secs_f64() - 2.0).abs() < 1e-9,
            "{e:?}"
        );
        a.calibrate_in_background(&"tiny", &repaint, || Fixed(0.0));
        settle(&mut a);
        assert_eq!(a.estimate(100.0, 1), None);
        a.calibrate_in_background(&"tiny", &repaint, || -> Fixed { panic!("not retried") });
        assert!(a.trying.is_none());
    }
}
