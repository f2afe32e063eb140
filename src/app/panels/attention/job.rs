//! The thread that trains one seed of an attention preset for the section: it owns the
//! [`SeedRun`], takes transport commands and sends back each step's records. The UI never
//! trains; it drains [`Msg`]s at the top of a frame and never blocks.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender, TryRecvError, unbounded};

use crate::attention::{AttentionPreset, Record, SeedRun};

/// What the section asks of the run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cmd {
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
#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    /// The records of the steps just taken, in order.
    Records(Vec<Record>),
    /// The last step whose metrics were taken, and whether the run keeps stepping.
    Progress {
        /// The step.
        step: usize,
        /// Whether it keeps stepping without further commands.
        running: bool,
    },
    /// The run could not be built (the preset does not validate) or panicked; the message
    /// says why. The thread has ended.
    Failed(String),
}

/// One seed of an attention preset training on its own thread.
pub struct AttentionJob {
    tx: Sender<Cmd>,
    rx: Receiver<Msg>,
    handle: Option<JoinHandle<()>>,
}

impl AttentionJob {
    /// Builds seed `seed` of `preset` on a new thread and measures step 0 (one
    /// [`SeedRun::step`]), then waits for commands. `repaint` wakes the UI after each message.
    pub fn spawn(preset: AttentionPreset, seed: u64, repaint: Arc<dyn Fn() + Send + Sync>) -> Self {
        let (tx, commands) = unbounded();
        let (out, rx) = unbounded();
        let handle = std::thread::Builder::new()
            .name("basis-lab attention".into())
            .spawn(move || {
                let send = |m: Msg| {
                    let _ = out.send(m);
                    repaint();
                };
                let outcome =
                    catch_unwind(AssertUnwindSafe(|| train(&preset, seed, &commands, &send)));
                let failure = match outcome {
                    Ok(Ok(())) => return,
                    Ok(Err(e)) => e,
                    Err(p) => format!(
                        "the run panicked: {}",
                        crate::worker::panic_message(p.as_ref())
                    ),
                };
                send(Msg::Failed(failure));
            })
            .expect("spawn attention thread");
        Self {
            tx,
            rx,
            handle: Some(handle),
        }
    }

    /// Sends a command (ignored once the thread has ended).
    pub fn send(&self, cmd: Cmd) {
        let _ = self.tx.send(cmd);
    }

    /// Every message that has arrived.
    pub fn drain(&self) -> Vec<Msg> {
        self.rx.try_iter().collect()
    }

    /// Whether the thread has ended (failed, or its section dropped it).
    pub fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(|h| h.is_finished())
    }
}

/// The thread's loop: returns when the job is dropped (its command channel closes).
fn train(
    preset: &AttentionPreset,
    seed: u64,
    commands: &Receiver<Cmd>,
    send: &dyn Fn(Msg),
) -> Result<(), String> {
    let mut run = SeedRun::new(preset, seed).map_err(|e| e.to_string())?;
    let last = preset.steps;
    // `calls` is the number of SeedRun::step calls: the metrics of step calls − 1 are taken.
    let (mut calls, mut sent) = (0usize, 0usize);
    let (mut pending, mut until) = (1usize, None::<usize>);
    loop {
        let busy = pending > 0 || until.is_some();
        let cmd = if busy {
            match commands.try_recv() {
                Ok(c) => Some(c),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => return Ok(()),
            }
        } else {
            match commands.recv() {
                Ok(c) => Some(c),
                Err(_) => return Ok(()),
            }
        };
        if let Some(cmd) = cmd {
            match cmd {
                Cmd::Play { until: u } => {
                    until = Some(u.unwrap_or(last).min(last));
                    pending = 0;
                }
                Cmd::Pause => (until, pending) = (None, 0),
                Cmd::Step(n) => (until, pending) = (None, pending.saturating_add(n)),
            }
            if until.is_some_and(|u| calls > u) || run.finished() {
                (until, pending) = (None, 0);
            }
            // Every command is answered, so the UI learns when a Pause took effect.
            if calls > 0 {
                send(Msg::Progress {
                    step: calls - 1,
                    running: until.is_some() || pending > 0,
                });
            }
            continue;
        }
        run.step();
        calls += 1;
        pending = pending.saturating_sub(1);
        let step = calls - 1;
        if run.finished() || until.is_some_and(|u| step >= u) {
            (until, pending) = (None, 0);
        }
        let records = &run.records()[sent..];
        if !records.is_empty() {
            send(Msg::Records(records.to_vec()));
            sent = run.records().len();
        }
        send(Msg::Progress {
            step,
            running: until.is_some() || pending > 0,
        });
    }
}
