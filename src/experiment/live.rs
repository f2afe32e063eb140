//! The key lab's training: the [`PairedRun`] as a [`LiveRun`] on the [`Live`] driver (its own
//! thread on the desktop, the frame loop in the page); it obeys [`Command`]s from the UI and
//! streams [`Update`]s back. Headless (no GUI types): the UI passes a repaint callback.
//!
//! One-way data flow: UI → `Command` → worker → `Update` → UI history → plots. The UI never
//! blocks on the worker; the worker never waits for the UI.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use nalgebra::DMatrix;
use web_time::Instant;

use crate::experiment::{ActivationStats, ArmStatus, HeldOut, PairedRun, StepRecord};
use crate::live::{Failure, Host, Live, LiveRun, Next, Outbox, Repaint};
use crate::metrics::RotationBaseline;
use crate::preset::Preset;

/// How often, at most, the worker sends a batch of step records while running.
const SEND_EVERY: Duration = Duration::from_millis(30);
/// How often, at most, the worker sends keys and their rotation baseline while running.
const SNAPSHOT_EVERY: Duration = Duration::from_millis(400);
/// The most time a speed limit keeps unspent ([`Pace`]).
const MAX_LAG: Duration = Duration::from_millis(500);
/// The longest a paced run waits between looks, so that a slow pace still reports its status
/// often.
const MAX_WAIT: Duration = Duration::from_millis(50);
/// The frame a frame driver's budget is meant for (60 Hz).
const FRAME: Duration = Duration::from_micros(16_667);
/// The most a paced run works in one frame ([`paced_frame_budget`]).
const PACED_FRAME_MAX: Duration = Duration::from_millis(40);

/// What a paced run may work in a frame that came `gap` after the last: `budget` (a 60 Hz
/// frame's share) in the same proportion to the longer gap of a page that draws fewer frames
/// (headless or without a graphics card), up to [`PACED_FRAME_MAX`], so that the run keeps its
/// set speed however fast the page draws. It takes only the steps it is due.
fn paced_frame_budget(budget: Duration, gap: Duration) -> Duration {
    let share = budget.mul_f64(gap.as_secs_f64() / FRAME.as_secs_f64());
    share.clamp(budget, PACED_FRAME_MAX.max(budget))
}

/// A speed limit as an allowance of steps: time earns `rate` steps per second and a step spends
/// one. The gaps between a page's frames are earned in full, so a run stepped once per frame
/// keeps its rate; at most [`MAX_LAG`] of unspent time is kept, so after a real stall (a slow
/// snapshot, a hidden page that stopped drawing) the run resumes its pace instead of racing
/// to catch up.
#[derive(Clone, Copy, Debug)]
struct Pace {
    rate: f64,
    credit: f64,
    earned_to: Instant,
}

impl Pace {
    /// A limit of `rate` steps per second (finite, positive) from `now`, with one step due at
    /// once.
    fn new(rate: f64, now: Instant) -> Self {
        Self {
            rate,
            credit: 1.0,
            earned_to: now,
        }
    }

    /// Earns the time from the last call (or the start) to `now`.
    fn earn(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.earned_to).as_secs_f64();
        let cap = (self.rate * MAX_LAG.as_secs_f64()).max(1.0);
        self.credit = (self.credit + elapsed * self.rate).min(cap);
        self.earned_to = now;
    }

    /// Spends one step if one has been earned; false means wait ([`Pace::wait`]).
    fn take(&mut self) -> bool {
        let due = self.credit >= 1.0;
        if due {
            self.credit -= 1.0;
        }
        due
    }

    /// How long until the next step is earned.
    fn wait(&self) -> Duration {
        Duration::from_secs_f64(((1.0 - self.credit) / self.rate).max(0.0))
    }
}

/// When a run pauses by itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct StopRule {
    /// Pause once this many steps have been taken (the preset's `steps` by default).
    pub at_step: Option<usize>,
    /// Pause once every running arm's held-out loss (run from W0) is below this.
    pub heldout_loss_below: Option<f64>,
}

/// What the UI asks of the worker.
#[derive(Debug)]
pub enum Command {
    /// Replace the settings and start over from step 0 (paused).
    Apply(Box<Preset>),
    /// Run continuously.
    Play,
    /// Stop running after the current step.
    Pause,
    /// Take this many steps, then pause.
    Step(usize),
    /// Start over from the same W0, Q and episodes (paused).
    Reset,
    /// Target speed in steps per second; `None` runs as fast as possible.
    SetSpeed(Option<f64>),
    /// When to pause by itself.
    SetStop(StopRule),
    /// Make the worker thread panic: a test hook for the crash banner and restart.
    InjectPanic,
    /// Overwrite one weight of arm `arm`'s run from W0 with `value` (a non-finite value makes
    /// the arm diverge at its next step): a test hook for divergence handling.
    InjectWeight {
        /// Arm index in the preset.
        arm: usize,
        /// The value written.
        value: f64,
    },
    /// End the thread.
    Shutdown,
}

/// Names and classes of the arms of a (re)started run.
#[derive(Clone, Debug, PartialEq)]
pub struct ArmLabel {
    /// Arm name (label or optimizer name).
    pub name: String,
    /// Registry name of the optimizer.
    pub optimizer: String,
    /// Equivariant under W → QW.
    pub equivariant: bool,
}

impl ArmLabel {
    /// The labels of `run`'s arms, in preset order.
    pub fn of(run: &PairedRun) -> Vec<ArmLabel> {
        run.arms()
            .iter()
            .map(|a| ArmLabel {
                name: a.name().into(),
                optimizer: a.info().name.into(),
                equivariant: a.equivariant(),
            })
            .collect()
    }
}

/// Keys and baselines of every arm at one step.
#[derive(Clone, Debug)]
pub struct Snapshot {
    /// The step whose weights W_s these describe.
    pub step: usize,
    /// Unit keys of each arm's run from W0 (`d_k × V`); `None` for a diverged arm.
    pub keys: Vec<Option<DMatrix<f64>>>,
    /// Random-rotation baselines of both twins per arm.
    pub baselines: Vec<Option<[RotationBaseline; 2]>>,
    /// Pair metrics of W_step (loss NaN), so the table shows the same step as the keys.
    pub records: Vec<StepRecord>,
    /// Axis structure of the memory and reads of each arm's run from W0.
    pub activations: Vec<Option<ActivationStats>>,
}

impl Snapshot {
    /// `run`'s snapshot at its current step: the pair metrics (which mark an arm whose keys
    /// cannot be normalised diverged), each running arm's keys, random-rotation baselines and
    /// activation statistics.
    pub fn of(run: &mut PairedRun) -> Snapshot {
        let step = run.step_index();
        let records = run.snapshot();
        let baselines = run.baselines();
        let activations = run.activations();
        let keys = run
            .arms()
            .iter()
            .zip(&baselines)
            .map(|(a, b)| b.as_ref().map(|_| a.keys(0).clone()))
            .collect();
        Snapshot {
            step,
            keys,
            baselines,
            records,
            activations,
        }
    }
}

/// What the worker reports.
#[derive(Clone, Debug)]
pub enum Update {
    /// A run (re)started at step 0: forget all history.
    Started {
        /// The settings now running.
        preset: Box<Preset>,
        /// The arms, in preset order.
        arms: Vec<ArmLabel>,
    },
    /// Step records since the last batch, in step order.
    Steps(Vec<StepRecord>),
    /// Held-out results at a step (evaluated at W_step).
    HeldOut {
        /// The step.
        step: usize,
        /// Per arm; `None` if diverged.
        values: Vec<Option<HeldOut>>,
    },
    /// Keys and baselines.
    Snapshot(Box<Snapshot>),
    /// Progress and play state.
    Status {
        /// Steps taken (the index of the next step).
        step: usize,
        /// Whether the worker is running continuously or working off a step request.
        running: bool,
        /// Measured speed over the last batch, steps per second.
        steps_per_sec: f64,
        /// Per-arm status.
        arms: Vec<ArmStatus>,
    },
    /// The run paused itself; says why.
    Stopped(String),
    /// The preset could not be applied; nothing changed.
    Rejected(String),
    /// The worker thread panicked and has ended; the message says where.
    Crashed(String),
}

/// The key lab's paired run on the [`Live`] driver: a thread of its own on the desktop, the
/// frame loop in the page. Dropping it ends the run.
pub struct Trainer {
    live: Live<Loop>,
    /// Set while a periodic snapshot waits unread, so a UI that is not drawing (a minimised
    /// window) is not buried in copies of the keys.
    snapshot_unread: Arc<AtomicBool>,
}

impl Trainer {
    /// Starts the trainer of this build on `preset` (paused at step 0): a thread on the
    /// desktop, the frame loop in the page. `repaint` is called after every batch of updates.
    /// Errors: an invalid preset.
    pub fn spawn(preset: Preset, repaint: Repaint) -> Result<Self, crate::validate::FieldError> {
        #[cfg(not(target_arch = "wasm32"))]
        return Self::on_thread(preset, repaint);
        #[cfg(target_arch = "wasm32")]
        return Self::in_frames(preset, repaint, crate::live::FRAME_BUDGET);
    }

    /// The trainer on a thread of its own. Errors: an invalid preset.
    pub fn on_thread(
        preset: Preset,
        repaint: Repaint,
    ) -> Result<Self, crate::validate::FieldError> {
        preset.validate()?;
        let snapshot_unread = Arc::new(AtomicBool::new(false));
        let unread = snapshot_unread.clone();
        let live = Live::on_thread(
            "basis-lab worker",
            move || Ok(Loop::new(&preset, unread)),
            repaint,
        );
        Ok(Self {
            live,
            snapshot_unread,
        })
    }

    /// The trainer without a thread, stepped by [`Trainer::drain`] for at most `budget` per
    /// call (the page's frame loop, once per frame), so training never blocks the page. Same
    /// commands, same updates, same numbers. Errors: an invalid preset.
    pub fn in_frames(
        preset: Preset,
        repaint: Repaint,
        budget: Duration,
    ) -> Result<Self, crate::validate::FieldError> {
        preset.validate()?;
        let snapshot_unread = Arc::new(AtomicBool::new(false));
        let unread = snapshot_unread.clone();
        let live = Live::in_frames(move || Ok(Loop::new(&preset, unread)), repaint, budget);
        Ok(Self {
            live,
            snapshot_unread,
        })
    }

    /// Sends a command; silently dropped if the trainer has ended (the UI learns that from
    /// [`Update::Crashed`]).
    pub fn send(&self, cmd: Command) {
        self.live.send(cmd);
    }

    /// Every update that has arrived, without blocking (the frame driver trains first).
    pub fn drain(&self) -> Vec<Update> {
        let updates = self.live.drain();
        if updates.iter().any(|u| matches!(u, Update::Snapshot(_))) {
            self.snapshot_unread.store(false, Ordering::Relaxed);
        }
        updates
    }

    /// Whether it has ended (after a crash or shutdown).
    pub fn is_finished(&self) -> bool {
        self.live.is_finished()
    }
}

/// The key lab's run as the driver sees it: the paired run, its transport state and the
/// updates it has queued since the driver last took them.
struct Loop {
    run: PairedRun,
    queued: Vec<Update>,
    running: bool,
    pending: usize,
    speed: Option<f64>,
    pace: Option<Pace>,
    stop: StopRule,
    records: Vec<StepRecord>,
    last_send: Instant,
    last_snapshot: Instant,
    snapshot_gap: Duration,
    snapshot_step: Option<usize>,
    snapshot_unread: Arc<AtomicBool>,
    rate_window: (Instant, usize),
    steps_per_sec: f64,
    last_heldout: Vec<Option<HeldOut>>,
    /// When the frame driver last gave the run a paced slice.
    last_frame: Option<Instant>,
}

impl LiveRun for Loop {
    type Command = Command;
    type Update = Update;

    fn begin(&mut self, out: &Outbox<Update>) -> Next {
        self.restart(None);
        self.post(out)
    }

    fn command(&mut self, cmds: Vec<Command>, out: &Outbox<Update>) -> Next {
        if !self.handle_batch(cmds) {
            return Next::Done;
        }
        self.post(out)
    }

    fn work(&mut self, budget: Duration, host: Host, out: &Outbox<Update>) -> Next {
        let budget = match host {
            Host::Frame if self.pace.is_some() => {
                let now = Instant::now();
                let gap = (self.last_frame.replace(now))
                    .map_or(FRAME, |t| now.saturating_duration_since(t));
                paced_frame_budget(budget, gap)
            }
            _ => budget,
        };
        let wait = self.work_slice(budget);
        match (self.post(out), wait) {
            (Next::Busy, Some(wait)) => Next::Wait(wait),
            (next, _) => next,
        }
    }

    fn failed(why: Failure) -> Update {
        match why {
            Failure::Refused(m) => Update::Rejected(m),
            Failure::Panicked(m) => Update::Crashed(m),
        }
    }
}

impl Loop {
    /// A paused run of a validated `preset` at step 0 (its first updates are sent by
    /// [`LiveRun::begin`]).
    fn new(preset: &Preset, snapshot_unread: Arc<AtomicBool>) -> Self {
        let now = Instant::now();
        Self {
            run: PairedRun::new(preset).expect("validated before starting"),
            queued: Vec::new(),
            running: false,
            pending: 0,
            speed: None,
            pace: None,
            stop: StopRule::default(),
            records: Vec::new(),
            last_send: now,
            last_snapshot: now,
            snapshot_gap: SNAPSHOT_EVERY,
            snapshot_step: None,
            snapshot_unread,
            rate_window: (now, 0),
            steps_per_sec: 0.0,
            last_heldout: Vec::new(),
            last_frame: None,
        }
    }

    fn send(&mut self, u: Update) {
        self.queued.push(u);
    }

    /// Hands the queued updates to the driver; says whether there is work left.
    fn post(&mut self, out: &Outbox<Update>) -> Next {
        for u in self.queued.drain(..) {
            out.send(u);
        }
        if self.running || self.pending > 0 {
            Next::Busy
        } else {
            Next::Idle
        }
    }

    /// Applies commands in order, except that a restart (Apply or Reset) followed by another
    /// restart in the same batch is skipped, and Shutdown wins at once. False means shut down.
    fn handle_batch(&mut self, batch: Vec<Command>) -> bool {
        if batch.iter().any(|c| matches!(c, Command::Shutdown)) {
            return false;
        }
        let is_restart = |c: &Command| matches!(c, Command::Apply(_) | Command::Reset);
        let last_restart = batch.iter().rposition(is_restart);
        for (i, cmd) in batch.into_iter().enumerate() {
            if is_restart(&cmd) && Some(i) != last_restart {
                continue;
            }
            if !self.handle(cmd) {
                return false;
            }
        }
        true
    }

    /// Applies one command; false means shut down.
    fn handle(&mut self, cmd: Command) -> bool {
        match cmd {
            Command::Apply(preset) => match PairedRun::new(&preset) {
                Ok(run) => {
                    // A settings change restarts from step 0 but keeps playing if it was.
                    let was_running = self.running;
                    self.restart(Some(run));
                    self.running = was_running;
                    self.reset_pacing();
                }
                Err(e) => self.send(Update::Rejected(e.to_string())),
            },
            Command::Reset => self.restart(None),
            Command::Play => {
                self.running = true;
                self.reset_pacing();
            }
            Command::Pause => {
                self.running = false;
                self.pending = 0;
            }
            Command::Step(n) => {
                self.pending = self.pending.saturating_add(n);
                self.reset_pacing();
            }
            Command::SetSpeed(s) => {
                self.speed = s.filter(|v| v.is_finite() && *v > 0.0);
                self.reset_pacing();
            }
            Command::SetStop(rule) => self.stop = rule,
            Command::InjectPanic => panic!("worker panic injected by a test"),
            Command::InjectWeight { arm, value } => {
                if arm < self.run.arms().len() {
                    self.run.inject_weight(arm, value);
                }
            }
            Command::Shutdown => return false,
        }
        if !(self.running || self.pending > 0) {
            self.flush(true);
        }
        true
    }

    fn reset_pacing(&mut self) {
        let now = Instant::now();
        self.pace = self.speed.map(|rate| Pace::new(rate, now));
        self.rate_window = (now, self.run.step_index());
    }

    /// Starts over with `run`, or rebuilds the current run from its preset.
    fn restart(&mut self, run: Option<PairedRun>) {
        self.run = run.unwrap_or_else(|| PairedRun::new(self.run.preset()).expect("was valid"));
        self.running = false;
        self.pending = 0;
        self.records.clear();
        self.snapshot_step = None;
        self.last_heldout.clear();
        let arms = ArmLabel::of(&self.run);
        self.send(Update::Started {
            preset: Box::new(self.run.preset().clone()),
            arms,
        });
        self.evaluate_heldout();
        self.flush(true);
    }

    /// Runs steps for up to `budget` (fewer when paced), then reports. When paced and ahead of
    /// the pace, returns how long until the next step is due (the thread waits for a command
    /// that long; the frame stepper comes back next frame).
    fn work_slice(&mut self, budget: Duration) -> Option<Duration> {
        let start = Instant::now();
        while start.elapsed() < budget && (self.running || self.pending > 0) {
            if let Some(pace) = &mut self.pace {
                pace.earn(Instant::now());
                if !pace.take() {
                    let wait = pace.wait().min(MAX_WAIT);
                    self.flush(false);
                    return Some(wait);
                }
            }
            if let Some(reason) = self.stop_reason() {
                self.running = false;
                self.pending = 0;
                self.send(Update::Stopped(reason));
                break;
            }
            self.one_step();
        }
        self.flush(!(self.running || self.pending > 0));
        None
    }

    fn one_step(&mut self) {
        let records = self.run.step();
        self.records.extend_from_slice(records);
        self.pending = self.pending.saturating_sub(1);
        let s = self.run.step_index();
        if s.is_multiple_of(self.run.preset().eval_every) {
            self.evaluate_heldout();
        }
    }

    fn evaluate_heldout(&mut self) {
        let values = self.run.evaluate_heldout();
        self.last_heldout = values.clone();
        self.send(Update::HeldOut {
            step: self.run.step_index(),
            values,
        });
    }

    fn stop_reason(&self) -> Option<String> {
        let s = self.run.step_index();
        let budget = self.stop.at_step.unwrap_or(self.run.preset().steps);
        if self.running && s >= budget {
            return Some(format!("reached the step budget of {budget}"));
        }
        if let Some(target) = self.stop.heldout_loss_below {
            let losses: Vec<f64> = self
                .last_heldout
                .iter()
                .flatten()
                .map(|h| h.loss[0])
                .collect();
            if self.running && !losses.is_empty() && losses.iter().all(|&l| l < target) {
                return Some(format!("every arm's held-out loss is below {target}"));
            }
        }
        None
    }

    /// Sends pending records and status; with `force` (or when due) also a snapshot.
    fn flush(&mut self, force: bool) {
        if !force && self.last_send.elapsed() < SEND_EVERY {
            return;
        }
        let (t0, s0) = self.rate_window;
        let s = self.run.step_index();
        let dt = t0.elapsed().as_secs_f64();
        if dt > 0.25 || force {
            self.steps_per_sec = if dt > 0.0 && s >= s0 {
                (s - s0) as f64 / dt
            } else {
                0.0
            };
            self.rate_window = (Instant::now(), s);
        }
        if !self.records.is_empty() {
            let records = std::mem::take(&mut self.records);
            self.send(Update::Steps(records));
        }
        let snapshot_due = self.last_snapshot.elapsed() >= self.snapshot_gap
            && !self.snapshot_unread.load(Ordering::Relaxed);
        if (force || snapshot_due) && self.snapshot_step != Some(s) {
            self.send_snapshot();
        }
        self.send(Update::Status {
            step: s,
            running: self.running || self.pending > 0,
            steps_per_sec: if self.running || self.pending > 0 {
                self.steps_per_sec
            } else {
                0.0
            },
            arms: self.run.arms().iter().map(|a| a.status().clone()).collect(),
        });
        self.last_send = Instant::now();
    }

    fn send_snapshot(&mut self) {
        let started = Instant::now();
        let snapshot = Snapshot::of(&mut self.run);
        let step = snapshot.step;
        self.snapshot_unread.store(true, Ordering::Relaxed);
        self.send(Update::Snapshot(Box::new(snapshot)));
        self.snapshot_step = Some(step);
        self.last_snapshot = Instant::now();
        // Baselines of big presets are costly: keep them under a fifth of the worker's time.
        self.snapshot_gap = SNAPSHOT_EVERY.max(started.elapsed() * 5);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps a [`Pace`] of `rate` takes at each of `frames` (seconds from its start), taking
    /// every step it has earned each time, as a frame with time to spare does.
    fn paced_steps(rate: f64, frames: impl IntoIterator<Item = f64>) -> Vec<usize> {
        let start = Instant::now();
        let mut pace = Pace::new(rate, start);
        let mut steps = Vec::new();
        for t in frames {
            pace.earn(start + Duration::from_secs_f64(t));
            steps.push(std::iter::from_fn(|| pace.take().then_some(())).count());
        }
        steps
    }

    #[test]
    fn a_pace_stepped_once_per_frame_runs_at_its_rate() {
        // 60 and 17 frames per second for 3 s: every gap between frames is earned.
        for fps in [60.0, 17.0] {
            let frames = (1..=(3.0 * fps) as usize).map(|i| i as f64 / fps);
            for rate in [5.0, 200.0, 2000.0] {
                let steps: usize = paced_steps(rate, frames.clone()).iter().sum();
                assert!(
                    (steps as f64 - 3.0 * rate).abs() <= 1.0,
                    "{rate} steps/s at {fps} frames/s: {steps} steps in 3 s"
                );
            }
        }
    }

    #[test]
    fn a_stall_is_caught_up_by_at_most_max_lag() {
        // A second at 60 frames/s, a page hidden for 10 s, then frames again.
        let frames = (1..=60)
            .map(|i| f64::from(i) / 60.0)
            .chain([11.0, 11.6, 11.6 + 1.0 / 60.0]);
        let steps = paced_steps(200.0, frames);
        let lag = (200.0 * MAX_LAG.as_secs_f64()) as usize;
        assert_eq!(steps[60..], [lag, lag, 3], "{steps:?}");
    }

    #[test]
    fn a_pace_waits_until_its_next_step_is_earned() {
        let start = Instant::now();
        let mut pace = Pace::new(4.0, start);
        assert!(pace.take(), "the first step is due at once");
        assert!(!pace.take());
        assert_eq!(pace.wait(), Duration::from_millis(250));
        pace.earn(start + Duration::from_millis(100));
        assert!(!pace.take());
        assert!((pace.wait().as_secs_f64() - 0.15).abs() < 1e-9);
        pace.earn(start + Duration::from_millis(250));
        assert!(pace.take());
    }

    #[test]
    fn a_paced_run_takes_a_60_hz_frame_s_share_of_a_slower_frame() {
        let budget = crate::live::FRAME_BUDGET;
        let ms = |m: u64| Duration::from_millis(m);
        assert_eq!(paced_frame_budget(budget, FRAME), budget);
        assert_eq!(paced_frame_budget(budget, ms(5)), budget, "never less");
        let at_30_hz = paced_frame_budget(budget, FRAME * 2);
        assert!(at_30_hz.abs_diff(budget * 2) < Duration::from_micros(1));
        assert_eq!(paced_frame_budget(budget, ms(125)), PACED_FRAME_MAX);
    }

    /// The page's trainer, stepped by a frame loop at about 60 frames per second with a speed
    /// limit of 200 steps/s, takes about 200 steps a second (not one per frame).
    #[test]
    fn the_frame_stepper_keeps_the_set_speed() {
        let mut preset = Preset::load("classroom").expect("bundled");
        preset.steps = 1_000_000;
        let trainer =
            Trainer::in_frames(preset, Arc::new(|| {}), crate::live::FRAME_BUDGET).unwrap();
        trainer.send(Command::SetSpeed(Some(200.0)));
        trainer.send(Command::Play);
        let step_of = |updates: Vec<Update>, step: &mut usize| {
            for u in updates {
                if let Update::Status { step: s, .. } = u {
                    *step = s;
                }
            }
        };
        let mut step = 0;
        // A few frames to settle (the first builds the run), then two seconds of frames.
        for _ in 0..5 {
            step_of(trainer.drain(), &mut step);
            std::thread::sleep(Duration::from_millis(16));
        }
        let (began, first) = (Instant::now(), step);
        while began.elapsed() < Duration::from_secs(2) {
            step_of(trainer.drain(), &mut step);
            std::thread::sleep(Duration::from_millis(16));
        }
        let rate = (step - first) as f64 / began.elapsed().as_secs_f64();
        assert!(
            (rate - 200.0).abs() <= 50.0,
            "{rate:.0} steps/s against 200 set"
        );
    }
}
