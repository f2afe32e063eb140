//! One seed of an attention preset, trained live for the app's section: a [`LiveRun`] for the
//! [`Live`](crate::live::Live) driver that takes transport commands and sends back each step's
//! records. One step of every model outlasts a frame, so in the page it runs in Web Workers
//! ([`RemoteRun`]): the preset's runs (each a base model and its twins, which depend on no
//! other run) are dealt over one worker per core ([`SplitRun`], driven by a [`Fan`]) and their
//! records joined step by step ([`Joined`]). The section drains its [`Update`]s at the top of a
//! frame and never blocks.

use std::time::Duration;

use super::{AttentionPreset, Record, SeedRun};
use serde::{Deserialize, Serialize};

use crate::live::{Failure, Fan, Host, LiveRun, Merge, Next, Outbox, RemoteRun, Repaint, SplitRun};

/// What the section asks of the run.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Command {
    /// Step until the metrics of step `until` (or the last step) are taken, then pause.
    Play {
        /// The step to pause at; `None` runs to the end.
        until: Option<usize>,
    },
    /// Pause after the step in progress.
    Pause,
    /// Take `n` more steps, then pause.
    Step(usize),
}

/// What the run reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Update {
    /// The records of the steps just taken, in order.
    Records(Vec<super::Record>),
    /// The last step whose metrics were taken, and whether the run keeps stepping.
    Progress {
        /// The step.
        step: usize,
        /// Whether it keeps stepping without further commands.
        running: bool,
    },
    /// The run could not be built (the preset does not validate) or panicked; the message
    /// says why. The run has ended.
    Failed(String),
}

/// Seed `seed` of `preset` on the live driver (a thread on the desktop, Web Workers in the
/// page, [`Fan::remote`]): built on the driver's side, which measures step 0 (one
/// [`SeedRun::step`]) and then waits for commands. A preset that does not validate is reported
/// as [`Update::Failed`] with the reason. `repaint` wakes the UI after each message.
pub fn start(preset: AttentionPreset, seed: u64, repaint: Repaint) -> Fan<AttentionLive> {
    Fan::remote((preset, seed, (0, 1)), repaint)
}

/// The run and its transport state.
pub struct AttentionLive {
    run: SeedRun,
    /// The preset's last step.
    last: usize,
    /// [`SeedRun::step`] calls so far: the metrics of step `calls − 1` are taken.
    calls: usize,
    /// Records already sent.
    sent: usize,
    /// Steps still asked for by [`Command::Step`] (1 at the start: step 0's metrics).
    pending: usize,
    /// Where a [`Command::Play`] pauses.
    until: Option<usize>,
}

impl AttentionLive {
    /// Seed `seed` of `preset` at step 0, the models of the preset's runs `part.0, part.0 +
    /// part.1, …` only ([`SeedRun::part`]). Errors: the preset does not validate (the message).
    pub fn new(preset: &AttentionPreset, seed: u64, part: (usize, usize)) -> Result<Self, String> {
        Ok(Self {
            run: SeedRun::part(preset, seed, part).map_err(|e| e.to_string())?,
            last: preset.steps,
            calls: 0,
            sent: 0,
            pending: 1,
            until: None,
        })
    }

    fn running(&self) -> bool {
        self.until.is_some() || self.pending > 0
    }

    fn state(&self) -> Next {
        if self.running() {
            Next::Busy
        } else {
            Next::Idle
        }
    }
}

impl RemoteRun for AttentionLive {
    /// The preset, the seed and which of the preset's runs (the first and the stride).
    type Args = (AttentionPreset, u64, (usize, usize));
    const KIND: &'static str = "attention";

    fn build((preset, seed, part): Self::Args) -> Result<Self, String> {
        Self::new(&preset, seed, part)
    }
}

impl SplitRun for AttentionLive {
    type Merge = Joined;

    /// The preset's runs dealt round-robin.
    fn split((preset, seed, _): Self::Args, n: usize) -> Vec<Self::Args> {
        let n = n.clamp(1, preset.runs.len().max(1));
        (0..n).map(|k| (preset.clone(), seed, (k, n))).collect()
    }

    fn merge(parts: usize) -> Joined {
        Joined {
            records: vec![(Vec::new(), None); parts],
            progress: vec![None; parts],
            failed: false,
            catching_up: vec![false; parts],
            resting: None,
        }
    }

    /// Once every part has paused, the parts behind the furthest play on to its step (once
    /// per resting state: a Pause pressed during the catch-up leaves a new one, which is
    /// answered again), so that what the view shows and what each part holds agree again.
    /// While they catch up the run shows as paused.
    fn catch_up(merge: &mut Joined) -> Vec<(usize, Command)> {
        // Asked after every drain (each frame): nothing is built unless the run rests anew.
        let resting = |p: &Option<(usize, bool)>| p.is_some_and(|p| !p.1);
        let steps = || merge.progress.iter().map(|p| p.map_or(0, |p| p.0));
        if merge.failed
            || !merge.progress.iter().all(resting)
            || merge
                .resting
                .as_ref()
                .is_some_and(|r| r.iter().copied().eq(steps()))
        {
            return Vec::new();
        }
        let steps: Vec<usize> = steps().collect();
        let furthest = steps.iter().copied().max().unwrap_or(0);
        let behind: Vec<(usize, Command)> = (steps.iter().enumerate())
            .filter(|&(_, &s)| s < furthest)
            .map(|(k, _)| {
                (
                    k,
                    Command::Play {
                        until: Some(furthest),
                    },
                )
            })
            .collect();
        for &(k, _) in &behind {
            merge.catching_up[k] = true;
        }
        merge.resting = Some(steps);
        behind
    }
}

/// The updates of the parts of one seed ([`SplitRun::split`]) joined into the whole seed's:
/// a step's records pass on once every part has sent its own, in the whole run's order (runs
/// in preset order, each base model before its twins); the step shown is the least the parts
/// have reached, running while any part runs; the first failure is the run's, and nothing
/// passes on after it.
pub struct Joined {
    /// Per part: its records not passed on yet, and the last step it has sent records of.
    records: Vec<(Vec<Record>, Option<usize>)>,
    /// Per part: its last progress (step, running).
    progress: Vec<Option<(usize, bool)>>,
    failed: bool,
    /// Per part: sent on to the furthest step after a pause ([`SplitRun::catch_up`]) and not
    /// stopped since (its running does not make the run's).
    catching_up: Vec<bool>,
    /// The parts' steps when the run last rested, answered by [`SplitRun::catch_up`].
    resting: Option<Vec<usize>>,
}

impl Merge<Update> for Joined {
    fn take(&mut self, part: usize, u: Update) -> Vec<Update> {
        if self.failed {
            return Vec::new();
        }
        match u {
            Update::Failed(why) => {
                self.failed = true;
                vec![Update::Failed(why)]
            }
            Update::Records(records) => {
                let (kept, last) = &mut self.records[part];
                if let Some(r) = records.last() {
                    *last = Some(r.step);
                }
                kept.extend(records);
                // Every part measures the same steps: those up to the least last step are in.
                let Some(through) = self.records.iter().map(|r| r.1).min().flatten() else {
                    return Vec::new();
                };
                let mut ready: Vec<Record> = Vec::new();
                for (kept, _) in &mut self.records {
                    let cut = kept.partition_point(|r| r.step <= through);
                    ready.extend(kept.drain(..cut));
                }
                // Stable: within a run, the part's own order (base model, then twins).
                ready.sort_by_key(|r| (r.step, r.run));
                if ready.is_empty() {
                    Vec::new()
                } else {
                    vec![Update::Records(ready)]
                }
            }
            Update::Progress { step, running } => {
                self.progress[part] = Some((step, running));
                if !running {
                    self.catching_up[part] = false;
                }
                let all: Option<Vec<(usize, bool)>> = self.progress.iter().copied().collect();
                let catching = &self.catching_up;
                all.map(|all| Update::Progress {
                    step: all.iter().map(|p| p.0).min().unwrap_or(0),
                    running: all.iter().zip(catching).any(|(p, &c)| p.1 && !c),
                })
                .into_iter()
                .collect()
            }
        }
    }

    fn ended(&self) -> bool {
        self.failed
    }
}

impl LiveRun for AttentionLive {
    type Command = Command;
    type Update = Update;

    fn begin(&mut self, _out: &Outbox<Update>) -> Next {
        self.state()
    }

    /// Every command is answered with a [`Update::Progress`] (once step 0 is measured), so the
    /// UI learns when a Pause took effect.
    fn command(&mut self, cmds: Vec<Command>, out: &Outbox<Update>) -> Next {
        for cmd in cmds {
            match cmd {
                Command::Play { until } => {
                    self.until = Some(until.unwrap_or(self.last).min(self.last));
                    self.pending = 0;
                }
                Command::Pause => (self.until, self.pending) = (None, 0),
                Command::Step(n) => {
                    (self.until, self.pending) = (None, self.pending.saturating_add(n))
                }
            }
            if self.until.is_some_and(|u| self.calls > u) || self.run.finished() {
                (self.until, self.pending) = (None, 0);
            }
            if self.calls > 0 {
                out.send(Update::Progress {
                    step: self.calls - 1,
                    running: self.running(),
                });
            }
        }
        self.state()
    }

    /// One step whatever the budget (a step is the unit the section shows).
    fn work(&mut self, _budget: Duration, _host: Host, out: &Outbox<Update>) -> Next {
        self.run.step();
        self.calls += 1;
        self.pending = self.pending.saturating_sub(1);
        let step = self.calls - 1;
        if self.run.finished() || self.until.is_some_and(|u| step >= u) {
            (self.until, self.pending) = (None, 0);
        }
        let records = &self.run.records()[self.sent..];
        if !records.is_empty() {
            out.send(Update::Records(records.to_vec()));
            self.sent = self.run.records().len();
        }
        out.send(Update::Progress {
            step,
            running: self.running(),
        });
        self.state()
    }

    fn failed(why: Failure) -> Update {
        Update::Failed(match why {
            Failure::Refused(m) => m,
            Failure::Panicked(m) => format!("the run panicked: {m}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Instant;

    /// Three runs of a tiny transformer: Adam with gauge and noise twins, momentum SGD and Muon
    /// with a gauge twin each.
    fn three_runs(steps: usize) -> AttentionPreset {
        AttentionPreset::from_ron(
            &format!(
                r#"(name: "t", task: (modulus: 7, train_fraction: 0.5),
                model: (layers: 1, heads: 2, d_model: 8, d_mlp: 16, norm_eps: 1e-6),
                steps: {steps},
                runs: [(rule: (optimizer: "adam", lr: 1e-2), twins: [Gauge, Noise]),
                       (rule: (optimizer: "momentum", lr: 0.1, momentum: 0.9), twins: [Gauge]),
                       (rule: (optimizer: "muon", lr: 0.02), rest: (optimizer: "adam", lr: 1e-3),
                        twins: [Gauge])])"#
            ),
            "t",
        )
        .unwrap()
    }

    /// Every update of `fan` until `done` holds for one, or a panic after a minute.
    fn until(fan: &Fan<AttentionLive>, done: impl Fn(&Update) -> bool) -> Vec<Update> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut all = Vec::new();
        loop {
            for u in fan.drain() {
                let end = done(&u);
                all.push(u);
                if end {
                    return all;
                }
            }
            assert!(Instant::now() < deadline, "the run never ended: {all:?}");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// The page deals a seed's runs over its workers: in any number of parts (more than runs
    /// too) the joined records are the whole seed's bit for bit and in its order, and the run
    /// shows its last step once every part has reached it.
    #[test]
    fn a_seed_split_over_workers_joins_to_the_whole_seed_bit_for_bit() {
        let steps = 4;
        let preset = three_runs(steps);
        let mut whole = SeedRun::new(&preset, 3).unwrap();
        while !whole.finished() {
            whole.step();
        }
        let want = format!("{:?}", whole.records());
        assert_eq!(
            whole.records().len(),
            7 * (steps + 1),
            "seven models, every step"
        );
        for n in [1, 2, 3, 5] {
            let fan = Fan::in_parts((preset.clone(), 3, (0, 1)), n, Arc::new(|| {}));
            fan.send(Command::Play { until: None });
            let done = |u: &Update| matches!(u, Update::Progress { step, running: false } if *step == steps);
            let updates = until(&fan, done);
            let records: Vec<Record> = updates
                .iter()
                .filter_map(|u| match u {
                    Update::Records(r) => Some(r.clone()),
                    Update::Failed(why) => panic!("{why}"),
                    Update::Progress { .. } => None,
                })
                .flatten()
                .collect();
            assert_eq!(format!("{records:?}"), want, "{n} parts");
            let shown: Vec<usize> = updates
                .iter()
                .filter_map(|u| match u {
                    Update::Progress { step, .. } => Some(*step),
                    _ => None,
                })
                .collect();
            assert!(shown.is_sorted(), "{n} parts: {shown:?}");
        }
    }

    /// Parts at different paces (one at the end before the other has begun): a step's
    /// records wait for the slowest part, the step shown is the slowest's, the joined records
    /// are the whole seed's in its order, and after the first failure nothing passes on.
    #[test]
    fn a_step_waits_for_the_slowest_part_and_a_failure_ends_the_join() {
        let steps = 3;
        let preset = three_runs(steps);
        let mut whole = SeedRun::new(&preset, 1).unwrap();
        while !whole.finished() {
            whole.step();
        }
        let mut join = AttentionLive::merge(2);
        let mut out = Vec::new();
        for k in 0..2 {
            let mut run = SeedRun::part(&preset, 1, (k, 2)).unwrap();
            for step in 0..=steps {
                let sent = run.records().len();
                run.step();
                let records = run.records()[sent..].to_vec();
                out.extend(join.take(k, Update::Records(records)));
                let running = step < steps;
                out.extend(join.take(k, Update::Progress { step, running }));
            }
            if k == 0 {
                assert!(out.is_empty(), "nothing before the other part's first step");
            }
        }
        let records: Vec<Record> = out
            .iter()
            .filter_map(|u| match u {
                Update::Records(r) => Some(r.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        assert_eq!(format!("{records:?}"), format!("{:?}", whole.records()));
        let shown: Vec<(usize, bool)> = out
            .iter()
            .filter_map(|u| match u {
                Update::Progress { step, running } => Some((*step, *running)),
                _ => None,
            })
            .collect();
        assert_eq!(shown, [(0, true), (1, true), (2, true), (3, false)]);
        assert!(!join.ended());
        let failed = join.take(1, Update::Failed("one".into()));
        assert_eq!(failed, [Update::Failed("one".into())]);
        assert!(join.ended());
        assert!(join.take(0, Update::Failed("two".into())).is_empty());
        let late = Update::Progress {
            step: steps,
            running: false,
        };
        assert!(join.take(0, late).is_empty());
    }

    /// A Pause leaves parts at different steps: once every part has stopped, the ones behind
    /// are sent on to the furthest step, once per stop; not while any part still runs.
    #[test]
    fn parts_that_paused_short_of_the_others_are_sent_on_to_them_once() {
        let mut join = AttentionLive::merge(3);
        let progress = |step, running| Update::Progress { step, running };
        assert!(
            AttentionLive::catch_up(&mut join).is_empty(),
            "no part has reported"
        );
        join.take(0, progress(5, false));
        join.take(1, progress(7, true));
        join.take(2, progress(7, false));
        assert!(
            AttentionLive::catch_up(&mut join).is_empty(),
            "part 1 still runs"
        );
        join.take(1, progress(8, false));
        let play = |until| Command::Play { until: Some(until) };
        assert_eq!(
            AttentionLive::catch_up(&mut join),
            [(0, play(8)), (2, play(8))]
        );
        assert!(AttentionLive::catch_up(&mut join).is_empty(), "sent once");
        // Catching up does not show as running.
        assert_eq!(join.take(0, progress(6, true)), [progress(6, false)]);
        // A Pause pressed during the catch-up leaves a new resting state: answered again.
        join.take(0, progress(7, false));
        assert_eq!(
            AttentionLive::catch_up(&mut join),
            [(0, play(8)), (2, play(8))]
        );
        join.take(0, progress(8, false));
        join.take(2, progress(8, false));
        assert!(
            AttentionLive::catch_up(&mut join).is_empty(),
            "all at one step"
        );
        // The user's Play shows as running again.
        assert_eq!(join.take(1, progress(9, true)), [progress(8, true)]);
    }

    /// Every part of a seed whose preset does not validate refuses it; the run reports that
    /// once, and every part has ended.
    #[test]
    fn a_failure_in_the_parts_is_the_runs_and_reported_once() {
        let mut preset = three_runs(4);
        preset.steps = 1_000_000;
        let fan = Fan::in_parts((preset, 0, (0, 1)), 3, Arc::new(|| {}));
        let first = until(&fan, |u| matches!(u, Update::Failed(_)));
        assert!(
            matches!(&first[..], [Update::Failed(why)] if why.contains("steps")),
            "{first:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
        assert!(fan.drain().is_empty(), "reported once");
        assert!(fan.is_finished());
    }
}
