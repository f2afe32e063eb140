//! One seed of an attention preset, trained live for the app's section: a [`LiveRun`] for the
//! [`Live`] driver that takes transport commands and sends back each step's records. One step of
//! every model outlasts a frame, so in the page it runs in a Web Worker ([`RemoteRun`]). The
//! section drains its [`Update`]s at the top of a frame and never blocks.

use std::time::Duration;

use super::{AttentionPreset, SeedRun};
use serde::{Deserialize, Serialize};

use crate::live::{Failure, Host, Live, LiveRun, Next, Outbox, RemoteRun, Repaint};

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

/// Seed `seed` of `preset` on the live driver (a thread on the desktop, a Web Worker in the
/// page): built on the driver's side, which measures step 0 (one [`SeedRun::step`]) and then
/// waits for commands. A preset that does not
/// validate is reported as [`Update::Failed`] with the reason. `repaint` wakes the UI after each message.
pub fn start(preset: AttentionPreset, seed: u64, repaint: Repaint) -> Live<AttentionLive> {
    Live::remote((preset, seed), repaint)
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
    /// Seed `seed` of `preset` at step 0. Errors: the preset does not validate (the message).
    pub fn new(preset: &AttentionPreset, seed: u64) -> Result<Self, String> {
        Ok(Self {
            run: SeedRun::new(preset, seed).map_err(|e| e.to_string())?,
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
    type Args = (AttentionPreset, u64);
    const KIND: &'static str = "attention";

    fn build((preset, seed): Self::Args) -> Result<Self, String> {
        Self::new(&preset, seed)
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
