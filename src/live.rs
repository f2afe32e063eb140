//! The live driver every lab's run goes through: the key lab's paired run
//! ([`crate::experiment::live`]), the gauge lab's live runs ([`crate::sensing::live`]) and the attention
//! twins ([`crate::attention::live`]). A run implements [`LiveRun`] (commands in, a slice of
//! work within a budget, updates out); [`Live`] drives it on a thread of its own on the desktop
//! or inside the frame loop in the page (which has no threads), catches its panics and reports
//! them as one of its updates, over one channel. Panels start a [`Live`], drain it and draw.
//!
//! A run whose commands, updates and inputs are data ([`RemoteRun`]) can also be driven in a
//! Web Worker in the page ([`Live::remote`]): a run whose single step outlasts a frame (the
//! attention twins) then trains there without freezing the page. [`TextRun`] is its worker's
//! side.
//!
//! Also here, for the same reason (the GUI never owns a thread): [`Job`], one-shot background
//! work with progress and cancel: an analysis that is a [`Task`] (its inputs and result are
//! data) runs as a job on a thread on the desktop and in a Web Worker in the page
//! ([`Job::task`]), so a sweep never freezes the page; and [`detach`] for work that must not
//! block a frame.

use std::cell::RefCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError, unbounded};
use web_time::Instant;

/// How long the thread driver lets a run work before it looks for commands again.
pub const SLICE: Duration = Duration::from_millis(10);
/// How long the frame driver lets a run work per frame: a 60 Hz frame lasts 16.7 ms, so this
/// leaves the rest for drawing and the page stays responsive.
pub const FRAME_BUDGET: Duration = Duration::from_millis(9);

/// The wake-up callback a driver calls after it has sent updates (the UI's repaint request).
pub type Repaint = Arc<dyn Fn() + Send + Sync>;

/// What a run wants next, after a command or a slice of work.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// Nothing to do until a command arrives.
    Idle,
    /// More work: give it another slice.
    Busy,
    /// Paced and ahead of its pace: another slice after at most this long (sooner on a
    /// command). The frame driver simply comes back next frame.
    Wait(Duration),
    /// The run has ended; the driver drops it.
    Done,
}

/// Where a slice of work runs, for runs that split it differently on a thread (in parallel
/// over the pool) than in a frame (one step at a time, so a frame overruns its budget by at
/// most one step).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Host {
    /// A thread of its own.
    Thread,
    /// The page's frame loop.
    Frame,
}

/// Where a run sends its updates; remembers whether it sent any since the driver last looked.
pub struct Outbox<U> {
    tx: Sender<U>,
    sent: AtomicBool,
}

impl<U> Outbox<U> {
    /// An outbox sending into `tx` (the driver's; tests drive a run with their own).
    pub(crate) fn new(tx: Sender<U>) -> Self {
        Self {
            tx,
            sent: AtomicBool::new(false),
        }
    }

    /// Sends an update (dropped if the handle is gone).
    pub fn send(&self, u: U) {
        let _ = self.tx.send(u);
        self.sent.store(true, Ordering::Relaxed);
    }

    fn take_sent(&self) -> bool {
        self.sent.swap(false, Ordering::Relaxed)
    }
}

/// A lab's live run, as the driver sees it. Every method may send updates through `out`.
pub trait LiveRun: Send + 'static {
    /// What the UI asks of the run.
    type Command: Send + 'static;
    /// What the run reports.
    type Update: Send + 'static;

    /// Called once, before any command: sends what the UI shows at the start.
    fn begin(&mut self, out: &Outbox<Self::Update>) -> Next;
    /// Applies the commands that arrived together, in order.
    fn command(&mut self, cmds: Vec<Self::Command>, out: &Outbox<Self::Update>) -> Next;
    /// Works for about `budget` (a run whose steps are long may take one step and return).
    fn work(&mut self, budget: Duration, host: Host, out: &Outbox<Self::Update>) -> Next;
    /// The update that reports why the run ended early.
    fn failed(why: Failure) -> Self::Update;
}

/// Why a run ended before its time.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// It could not be built (the message says why).
    Refused(String),
    /// It panicked (the panic's message).
    Panicked(String),
}

/// The text of a caught panic's payload (`panic!` with a literal or a formatted message), or
/// "unknown panic" for any other payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// A [`LiveRun`] that can run in another instance of the program (a Web Worker in the page):
/// built from data, with commands and updates that travel as RON text. Every kind is listed
/// once in the task registry ([`crate::tasks::LIVE`]), where a worker looks it up.
pub trait RemoteRun: LiveRun + Sized
where
    Self::Command: serde::Serialize + serde::de::DeserializeOwned,
    Self::Update: serde::Serialize + serde::de::DeserializeOwned,
{
    /// What the run is built from.
    type Args: serde::Serialize + serde::de::DeserializeOwned + Send + 'static;
    /// The kind's name in the registry (and in the desktop thread's name).
    const KIND: &'static str;
    /// Builds the run; `Err` says why it cannot (sent as [`Failure::Refused`]).
    fn build(args: Self::Args) -> Result<Self, String>;
}

/// A [`RemoteRun`] whose work splits into independent parts, each a run of its own built from
/// its own settings, whose updates a [`Merge`] joins into exactly the whole run's: the page
/// drives each part in a Web Worker of its own ([`Fan`]).
pub trait SplitRun: RemoteRun
where
    Self::Command: serde::Serialize + serde::de::DeserializeOwned,
    Self::Update: serde::Serialize + serde::de::DeserializeOwned,
{
    /// What joins the parts' updates.
    type Merge: Merge<Self::Update> + 'static;
    /// The settings of at most `n` (≥ 1) parts, at least one; a single part is the whole run.
    fn split(args: Self::Args, n: usize) -> Vec<Self::Args>;
    /// A join of the updates of `parts` parts.
    fn merge(parts: usize) -> Self::Merge;

    /// Commands that bring parts which stopped short of the others up to them, once every
    /// part has stopped (a Pause lets each finish the step it is in, so parts may rest at
    /// different steps), as `(part, command)`; asked after every drain, so it should answer
    /// each stop once. None by default.
    fn catch_up(merge: &mut Self::Merge) -> Vec<(usize, Self::Command)> {
        let _ = merge;
        Vec::new()
    }
}

/// Joins the updates of a [`SplitRun`]'s parts into the whole run's.
pub trait Merge<U> {
    /// Takes update `u` of part `part` (each part's arrive in the order it sent them) and
    /// returns the whole run's updates it completes, in order.
    fn take(&mut self, part: usize, u: U) -> Vec<U>;
    /// Whether the whole run has ended for good (a part failed and said so): the other parts
    /// are stopped.
    fn ended(&self) -> bool;
}

/// A [`SplitRun`] driven in parts, each by [`Live::remote`]: on the desktop in one part (its
/// thread already spreads the run's work over the cores), in the page in one Web Worker per
/// core ([`crate::web_worker::workers`]). Every command goes to every part; the updates come
/// out joined, so the run looks whole. Dropping it ends every part.
pub struct Fan<R>
where
    R: SplitRun,
    R::Command: serde::Serialize + serde::de::DeserializeOwned,
    R::Update: serde::Serialize + serde::de::DeserializeOwned,
{
    /// The parts, in order (none once a part's failure ended the run).
    parts: RefCell<Vec<Live<R>>>,
    merge: RefCell<R::Merge>,
}

impl<R> Fan<R>
where
    R: SplitRun,
    R::Command: serde::Serialize + serde::de::DeserializeOwned + Clone,
    R::Update: serde::Serialize + serde::de::DeserializeOwned,
{
    /// The run `args` describe, in as many parts as this build runs at once: one on the
    /// desktop, one per core in the page.
    pub fn remote(args: R::Args, repaint: Repaint) -> Self {
        #[cfg(not(target_arch = "wasm32"))]
        let parts = 1;
        #[cfg(target_arch = "wasm32")]
        let parts = crate::web_worker::workers();
        Self::in_parts(args, parts, repaint)
    }

    /// The run `args` describe, split into at most `n` parts ([`SplitRun::split`]), each driven
    /// by [`Live::remote`].
    pub fn in_parts(args: R::Args, n: usize, repaint: Repaint) -> Self {
        let parts: Vec<Live<R>> = R::split(args, n.max(1))
            .into_iter()
            .map(|a| Live::remote(a, repaint.clone()))
            .collect();
        Self {
            merge: RefCell::new(R::merge(parts.len())),
            parts: RefCell::new(parts),
        }
    }

    /// Sends a command to every part.
    pub fn send(&self, cmd: R::Command) {
        for p in self.parts.borrow().iter() {
            p.send(cmd.clone());
        }
    }

    /// Every update of the whole run that the parts' updates so far complete, without
    /// blocking. Once a part's failure has ended the run, the other parts are stopped.
    pub fn drain(&self) -> Vec<R::Update> {
        let mut merge = self.merge.borrow_mut();
        let mut out = Vec::new();
        for (k, p) in self.parts.borrow().iter().enumerate() {
            for u in p.drain() {
                out.extend(merge.take(k, u));
            }
        }
        if merge.ended() {
            self.parts.borrow_mut().clear();
        } else {
            let parts = self.parts.borrow();
            for (k, cmd) in R::catch_up(&mut merge) {
                if let Some(p) = parts.get(k) {
                    p.send(cmd);
                }
            }
        }
        out
    }

    /// Whether every part has ended.
    pub fn is_finished(&self) -> bool {
        self.parts.borrow().iter().all(Live::is_finished)
    }
}

/// A remote run as a Web Worker drives it, through text: each call returns the updates it sent
/// (RON, in order) and what the run wants next. The loop around it (web/worker.js) is the
/// thread driver's: commands first, then a slice of work while busy. A panic in a call stops
/// the worker's instance (the web build cannot unwind), so the updates of that call are lost
/// and its message is all the page gets.
pub trait TextRun {
    /// [`LiveRun::begin`].
    fn begin(&mut self) -> (Vec<String>, Next);
    /// [`LiveRun::command`] with the commands' RON texts (one that does not read ends the run
    /// as refused).
    fn command(&mut self, cmds: &[String]) -> (Vec<String>, Next);
    /// [`LiveRun::work`] for up to `budget`.
    fn work(&mut self, budget: Duration) -> (Vec<String>, Next);
}

/// The run of kind `R` built from `args` (its RON text) behind [`TextRun`]. Args that do not
/// read, or a run that cannot be built, give a run whose `begin` reports why and is done.
pub fn text_run<R>(args: &str) -> Box<dyn TextRun>
where
    R: RemoteRun,
    R::Command: serde::Serialize + serde::de::DeserializeOwned,
    R::Update: serde::Serialize + serde::de::DeserializeOwned,
{
    let (tx, rx) = unbounded();
    let out = Outbox::new(tx);
    let run = ron::from_str::<R::Args>(args)
        .map_err(|e| format!("the run's settings did not read: {e}"))
        .and_then(R::build);
    let run = match run {
        Ok(r) => Some(r),
        Err(why) => {
            out.send(R::failed(Failure::Refused(why)));
            None
        }
    };
    Box::new(Texted { run, out, rx })
}

/// [`text_run`]'s run: `None` once it has ended.
struct Texted<R: LiveRun> {
    run: Option<R>,
    out: Outbox<R::Update>,
    rx: Receiver<R::Update>,
}

impl<R> Texted<R>
where
    R: LiveRun,
    R::Update: serde::Serialize,
{
    /// Calls `f` on the run (nothing once ended) and collects what it sent.
    fn call(&mut self, f: impl FnOnce(&mut R, &Outbox<R::Update>) -> Next) -> (Vec<String>, Next) {
        let next = match self.run.as_mut() {
            Some(run) => f(run, &self.out),
            None => Next::Done,
        };
        if next == Next::Done {
            self.run = None;
        }
        let sent = self
            .rx
            .try_iter()
            .map(|u| ron::to_string(&u).unwrap_or_default())
            .collect();
        (sent, next)
    }
}

impl<R> TextRun for Texted<R>
where
    R: LiveRun,
    R::Command: serde::de::DeserializeOwned,
    R::Update: serde::Serialize,
{
    fn begin(&mut self) -> (Vec<String>, Next) {
        self.call(|run, out| run.begin(out))
    }

    fn command(&mut self, cmds: &[String]) -> (Vec<String>, Next) {
        let read: Result<Vec<R::Command>, String> = cmds
            .iter()
            .map(|c| ron::from_str(c).map_err(|e| format!("a command did not read: {e}")))
            .collect();
        self.call(|run, out| match read {
            Ok(cmds) => run.command(cmds, out),
            Err(why) => {
                out.send(R::failed(Failure::Refused(why)));
                Next::Done
            }
        })
    }

    fn work(&mut self, budget: Duration) -> (Vec<String>, Next) {
        self.call(|run, out| run.work(budget, Host::Thread, out))
    }
}

/// Runs `f`, turning a panic into `Err` with its message: the one place panics are caught.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| panic_message(p.as_ref()))
}

/// A run being driven: send it commands, drain its updates. Dropping it ends the run (the
/// thread driver waits up to two seconds for the slice in progress, then lets it end alone).
pub struct Live<R: LiveRun> {
    tx: Option<Sender<R::Command>>,
    rx: Receiver<R::Update>,
    driver: Driver<R>,
}

enum Driver<R: LiveRun> {
    Thread(Option<JoinHandle<()>>),
    Frames(RefCell<Frames<R>>),
    /// A Web Worker runs it; commands go to it as RON text through the encoder.
    #[cfg(target_arch = "wasm32")]
    Worker(crate::web_worker::Streaming, fn(&R::Command) -> String),
}

/// The frame driver's state: the run (`None` once it has ended) and what it asked for last.
struct Frames<R: LiveRun> {
    run: Option<R>,
    commands: Receiver<R::Command>,
    out: Outbox<R::Update>,
    next: Next,
    budget: Duration,
    repaint: Repaint,
}

impl<R: LiveRun> Live<R> {
    /// Drives the run `build` makes the way this build can: on a thread called `name` on the
    /// desktop, in the frame loop (for [`FRAME_BUDGET`] per [`Live::drain`]) in the page.
    /// `build` runs on the driver's side; its `Err` is sent as the only update
    /// ([`Failure::Refused`]).
    pub fn start(
        name: &str,
        build: impl FnOnce() -> Result<R, String> + Send + 'static,
        repaint: Repaint,
    ) -> Self {
        #[cfg(not(target_arch = "wasm32"))]
        return Self::on_thread(name, build, repaint);
        #[cfg(target_arch = "wasm32")]
        {
            let _ = name;
            Self::in_frames(build, repaint, FRAME_BUDGET)
        }
    }

    /// Drives the run on a thread called `name`: it waits for commands while the run is idle,
    /// works in slices of [`SLICE`] while busy, and calls `repaint` after each turn that sent
    /// updates. A panic (in `build` too) is sent as [`Failure::Panicked`] and ends the thread.
    pub fn on_thread(
        name: &str,
        build: impl FnOnce() -> Result<R, String> + Send + 'static,
        repaint: Repaint,
    ) -> Self {
        let (tx, commands) = unbounded();
        let (up, rx) = unbounded();
        let handle = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let out = Outbox::new(up);
                let outcome = guarded(|| match build() {
                    Ok(run) => thread_loop(run, &commands, &out, &repaint),
                    Err(why) => out.send(R::failed(Failure::Refused(why))),
                });
                if let Err(message) = outcome {
                    out.send(R::failed(Failure::Panicked(message)));
                }
                repaint();
            })
            .expect("spawn a live thread");
        Self {
            tx: Some(tx),
            rx,
            driver: Driver::Thread(Some(handle)),
        }
    }

    /// Drives the run without a thread: each [`Live::drain`] applies the commands sent since
    /// the last one and lets the run work for up to `budget`, asking for another frame while
    /// it is busy. Same commands, same updates and same numbers as [`Live::on_thread`].
    pub fn in_frames(
        build: impl FnOnce() -> Result<R, String>,
        repaint: Repaint,
        budget: Duration,
    ) -> Self {
        let (tx, commands) = unbounded();
        let (up, rx) = unbounded();
        let out = Outbox::new(up);
        let (run, next) = match guarded(build) {
            Ok(Ok(mut run)) => match guarded(|| run.begin(&out)) {
                Ok(next) => (Some(run), next),
                Err(m) => crash::<R>(&out, m),
            },
            Ok(Err(why)) => {
                out.send(R::failed(Failure::Refused(why)));
                (None, Next::Done)
            }
            Err(m) => crash::<R>(&out, m),
        };
        repaint();
        Self {
            tx: Some(tx),
            rx,
            driver: Driver::Frames(RefCell::new(Frames {
                run,
                commands,
                out,
                next,
                budget,
                repaint,
            })),
        }
    }

    /// Drives the run `R::build(args)` makes on a thread on the desktop (as [`Live::start`])
    /// and in a Web Worker in the page, where its slices of work run beside the frame loop
    /// instead of inside it: the worker builds it from `args` as text, takes commands and sends
    /// its updates as RON text, and a panic there arrives as [`Failure::Panicked`]. Same
    /// commands, same updates and the same numbers either way.
    pub fn remote(args: R::Args, repaint: Repaint) -> Self
    where
        R: RemoteRun,
        R::Command: serde::Serialize + serde::de::DeserializeOwned,
        R::Update: serde::Serialize + serde::de::DeserializeOwned,
    {
        #[cfg(not(target_arch = "wasm32"))]
        return Self::on_thread(
            &format!("basis-lab {}", R::KIND),
            move || R::build(args),
            repaint,
        );
        #[cfg(target_arch = "wasm32")]
        {
            let (up, rx) = unbounded();
            let failed = up.clone();
            let update = move |text: &str| {
                let u = ron::from_str::<R::Update>(text).unwrap_or_else(|e| {
                    R::failed(Failure::Panicked(format!(
                        "an update from the Web Worker did not read back: {e}"
                    )))
                });
                let _ = up.send(u);
            };
            let fail = move |why: String, panicked: bool| {
                let failure = if panicked {
                    Failure::Panicked(why)
                } else {
                    Failure::Refused(why)
                };
                let _ = failed.send(R::failed(failure));
            };
            let args = ron::to_string(&args).unwrap_or_default();
            let worker = crate::web_worker::Streaming::start(R::KIND, &args, update, fail, repaint);
            let encode: fn(&R::Command) -> String = |c| ron::to_string(c).unwrap_or_default();
            Self {
                tx: None,
                rx,
                driver: Driver::Worker(worker, encode),
            }
        }
    }

    /// Sends a command; dropped silently once the run has ended.
    pub fn send(&self, cmd: R::Command) {
        #[cfg(target_arch = "wasm32")]
        if let Driver::Worker(worker, encode) = &self.driver {
            worker.send(&encode(&cmd));
            return;
        }
        if let Some(tx) = &self.tx {
            let _ = tx.send(cmd);
        }
    }

    /// Every update that has arrived, without blocking; the frame driver first gives the run
    /// its turn.
    pub fn drain(&self) -> Vec<R::Update> {
        if let Driver::Frames(frames) = &self.driver {
            frames.borrow_mut().turn();
        }
        self.rx.try_iter().collect()
    }

    /// Whether the run has ended (by itself, on a panic, or after its last command).
    pub fn is_finished(&self) -> bool {
        match &self.driver {
            Driver::Thread(h) => h.as_ref().is_none_or(|h| h.is_finished()),
            Driver::Frames(f) => f.borrow().run.is_none(),
            #[cfg(target_arch = "wasm32")]
            Driver::Worker(w, _) => w.has_ended(),
        }
    }
}

/// Sends the crash report of a run that panicked; the run is gone.
fn crash<R: LiveRun>(out: &Outbox<R::Update>, message: String) -> (Option<R>, Next) {
    out.send(R::failed(Failure::Panicked(message)));
    (None, Next::Done)
}

impl<R: LiveRun> Frames<R> {
    /// One frame's turn: the commands that arrived, then up to the budget of work.
    fn turn(&mut self) {
        let Some(run) = self.run.as_mut() else {
            return;
        };
        let batch: Vec<R::Command> = self.commands.try_iter().collect();
        let (out, budget) = (&self.out, self.budget);
        let outcome = guarded(|| {
            let mut next = self.next;
            if !batch.is_empty() {
                next = run.command(batch, out);
            }
            if matches!(next, Next::Busy | Next::Wait(_)) {
                next = run.work(budget, Host::Frame, out);
            }
            next
        });
        self.next = match outcome {
            Ok(next) => next,
            Err(m) => crash::<R>(out, m).1,
        };
        if self.next == Next::Done {
            self.run = None;
        } else if self.next != Next::Idle {
            (self.repaint)();
        }
    }
}

/// The thread driver's loop; returns when the run is done or its handle is dropped.
fn thread_loop<R: LiveRun>(
    mut run: R,
    commands: &Receiver<R::Command>,
    out: &Outbox<R::Update>,
    repaint: &Repaint,
) {
    let wake = || {
        if out.take_sent() {
            repaint();
        }
    };
    let mut next = run.begin(out);
    wake();
    loop {
        let mut batch = Vec::new();
        match next {
            Next::Done => return,
            Next::Idle => match commands.recv() {
                Ok(c) => batch.push(c),
                Err(_) => return,
            },
            Next::Wait(d) => match commands.recv_timeout(d) {
                Ok(c) => batch.push(c),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            },
            Next::Busy => {}
        }
        loop {
            match commands.try_recv() {
                Ok(c) => batch.push(c),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
        next = if batch.is_empty() {
            run.work(SLICE, Host::Thread, out)
        } else {
            run.command(batch, out)
        };
        wake();
    }
}

impl<R: LiveRun> Drop for Live<R> {
    /// Closes the command channel (the run ends at its next look for commands) and waits up to
    /// two seconds for the thread, so closing the window never hangs.
    fn drop(&mut self) {
        self.tx = None;
        if let Driver::Thread(handle) = &mut self.driver
            && let Some(h) = handle.take()
        {
            let deadline = Instant::now() + Duration::from_secs(2);
            while !h.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            if h.is_finished() {
                let _ = h.join();
            }
        }
    }
}

/// Why an analysis ([`Task`]) ended without a result.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Stop {
    /// It was cancelled (the app's Cancel button).
    Cancelled,
    /// It failed; the message says why.
    Failed(String),
}

/// Steps of a trial run before an analysis's first run, to estimate its time (the key lab's
/// [`crate::experiment::sweep::trial_pace`], the zoo's
/// [`crate::sensing::zoo::ZooPreset::trial_pace`], the hyperspectral grid's): tens of
/// milliseconds at the bundled sizes.
pub const TRIAL_STEPS: usize = 20;

/// A one-shot analysis described by data: its inputs are the value itself and its result is
/// [`Task::Output`], both readable as RON text, so the page can run it in a Web Worker (an
/// instance of the same program with memory of its own, reached by messages) and the desktop on
/// a thread, with the same numbers. Every kind is listed once in the task registry
/// ([`crate::tasks`]), which the worker looks kinds up in.
pub trait Task: serde::Serialize + serde::de::DeserializeOwned + Send + 'static {
    /// What the analysis gives.
    type Output: serde::Serialize + serde::de::DeserializeOwned + Send + 'static;
    /// The kind's name in the registry (and the desktop thread's name).
    const KIND: &'static str;
    /// Runs the analysis; calls `progress()` once per finished item and returns soon after
    /// `cancel` is raised (a worker is stopped instead: it never sees `cancel` raised).
    fn run(self, progress: &(dyn Fn() + Sync), cancel: &AtomicBool) -> Self::Output;

    /// Splits the analysis into at most `n` (≥ 1) independent parts, at least one, whose
    /// outputs [`Task::merge`] joins into exactly this one's, so the page can run them in `n`
    /// Web Workers at once. The default keeps it whole.
    fn split(self, n: usize) -> Vec<Self>
    where
        Self: Sized,
    {
        let _ = n;
        vec![self]
    }

    /// Joins the outputs of [`Task::split`]'s parts, given in their order, into the whole's.
    /// The default, for a task that does not split, takes the one part's output. Panics on
    /// no parts.
    fn merge(parts: Vec<Self::Output>) -> Self::Output {
        parts.into_iter().next().expect("one part at least")
    }
}

/// The parts of a round-robin deal (part `k` of `n` holding items `k, k + n, …`, in order, as
/// the [`Task::split`]s and `--shard` deal them) put back into one list in the whole's order.
pub fn undeal<T>(parts: Vec<Vec<T>>) -> Vec<T> {
    let total = parts.iter().map(Vec::len).sum();
    let mut each: Vec<_> = parts.into_iter().map(Vec::into_iter).collect();
    let n = each.len();
    (0..total).filter_map(|i| each[i % n].next()).collect()
}

/// One-shot background work with progress, cancel and a result to collect (every analysis of
/// the app runs in one).
pub struct Job<T> {
    /// Work items requested (for the progress bar).
    pub total: usize,
    /// When the job started (for its elapsed and remaining time).
    pub started: Instant,
    /// Items finished (the desktop's thread counts them here).
    #[cfg(not(target_arch = "wasm32"))]
    done: Arc<AtomicUsize>,
    cancel: Arc<AtomicBool>,
    result: Arc<Mutex<Option<Result<T, String>>>>,
    /// The thread running the task on the desktop.
    #[cfg(not(target_arch = "wasm32"))]
    handle: Option<JoinHandle<()>>,
    /// The Web Workers running the task's parts in the page (dropping them ends them), and
    /// each part's progress.
    #[cfg(target_arch = "wasm32")]
    workers: Vec<(crate::web_worker::Running, Arc<AtomicUsize>)>,
}

impl<T: Send + 'static> Job<T> {
    /// Runs `task` (`total` items, for the progress bar). On the desktop: on a thread named
    /// after its kind, counting each `progress()` and calling `repaint` after each item and at
    /// the end; a panic becomes an error result. In the page: its parts ([`Task::split`]) in
    /// one Web Worker each, up to the computer's cores, their outputs merged in order
    /// ([`Task::merge`]); Cancel stops them all and the result is `Err("cancelled")`, and the
    /// first part to fail gives the job's error.
    pub fn task<K: Task<Output = T>>(task: K, total: usize, repaint: Repaint) -> Self
    where
        T: serde::de::DeserializeOwned,
    {
        let cancel = Arc::new(AtomicBool::new(false));
        let result = Arc::new(Mutex::new(None));
        #[cfg(not(target_arch = "wasm32"))]
        {
            let done = Arc::new(AtomicUsize::new(0));
            let (counted, asked, filed) = (done.clone(), cancel.clone(), result.clone());
            let thread = std::thread::Builder::new()
                .name(format!("basis-lab {}", K::KIND))
                .spawn(move || {
                    let progress = || {
                        counted.fetch_add(1, Ordering::Relaxed);
                        repaint();
                    };
                    let outcome = guarded(|| task.run(&progress, &asked));
                    *filed.lock().expect("job result lock") = Some(outcome);
                    repaint();
                })
                .expect("spawn job thread");
            Self {
                total,
                started: Instant::now(),
                done,
                cancel,
                result,
                handle: Some(thread),
            }
        }
        #[cfg(target_arch = "wasm32")]
        {
            // The parts run in as many workers as the computer has cores; their outputs are
            // merged in order, so the result is the whole task's, bit for bit.
            let parts = task.split(crate::web_worker::workers());
            let count = parts.len();
            if count == 0 {
                result
                    .lock()
                    .expect("job result lock")
                    .get_or_insert(Err("the analysis split into no parts".into()));
            }
            let outputs: std::rc::Rc<std::cell::RefCell<Vec<Option<T>>>> =
                std::rc::Rc::new(std::cell::RefCell::new((0..count).map(|_| None).collect()));
            let mut workers = Vec::with_capacity(count);
            for (k, part) in parts.into_iter().enumerate() {
                let input =
                    ron::to_string(&part).map_err(|e| format!("the task did not write: {e}"));
                let finish = {
                    let (result, outputs) = (result.clone(), outputs.clone());
                    move |outcome: Result<String, String>| {
                        let read = outcome.and_then(|text| {
                            ron::from_str::<T>(&text)
                                .map_err(|e| format!("the worker's result did not read back: {e}"))
                        });
                        let mut filed = result.lock().expect("job result lock");
                        match read {
                            // The first failure is the job's; later ones add nothing.
                            Err(e) => {
                                filed.get_or_insert(Err(e));
                            }
                            Ok(out) => {
                                let mut slots = outputs.borrow_mut();
                                slots[k] = Some(out);
                                if filed.is_none() && slots.iter().all(Option::is_some) {
                                    let all = slots.iter_mut().filter_map(Option::take).collect();
                                    *filed = Some(Ok(K::merge(all)));
                                }
                            }
                        }
                    }
                };
                let counted = Arc::new(AtomicUsize::new(0));
                let started = input.and_then(|input| {
                    crate::web_worker::Running::start(
                        K::KIND,
                        input,
                        counted.clone(),
                        finish,
                        repaint.clone(),
                    )
                });
                match started {
                    Ok(w) => workers.push((w, counted)),
                    Err(e) => {
                        result
                            .lock()
                            .expect("job result lock")
                            .get_or_insert(Err(e));
                        break;
                    }
                }
            }
            Self {
                total,
                started: Instant::now(),
                cancel,
                result,
                workers,
            }
        }
    }

    /// Items finished so far.
    pub fn done(&self) -> usize {
        #[cfg(target_arch = "wasm32")]
        return self
            .workers
            .iter()
            .map(|(_, n)| n.load(Ordering::Relaxed))
            .sum();
        #[cfg(not(target_arch = "wasm32"))]
        self.done.load(Ordering::Relaxed)
    }

    /// Time since the job started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The time the rest should take at the pace of the items finished so far (items are
    /// taken to cost alike); `None` before the first one finishes.
    pub fn remaining(&self) -> Option<Duration> {
        let done = self.done();
        (done > 0).then(|| {
            let left = self.total.saturating_sub(done);
            self.elapsed().mul_f64(left as f64 / done as f64)
        })
    }

    /// Asks the work to stop soon (in the page: stops its worker at once).
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        #[cfg(target_arch = "wasm32")]
        if !self.workers.is_empty() {
            for (w, _) in &self.workers {
                w.stop();
            }
            self.result
                .lock()
                .expect("job result lock")
                .get_or_insert(Err("cancelled".into()));
        }
    }

    /// Whether cancel was requested.
    pub fn is_cancelling(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The outcome once the thread has finished (`Err` with the message if it panicked);
    /// `None` while it runs.
    pub fn take_result(&mut self) -> Option<Result<T, String>> {
        let r = self.result.lock().expect("job result lock").take()?;
        #[cfg(not(target_arch = "wasm32"))]
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        Some(r)
    }
}

impl<T> Drop for Job<T> {
    /// Raises the cancel flag and lets the thread end on its own (never blocks the UI); a
    /// page's worker ends as its handle drops.
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// Runs `f` off the caller's thread on the desktop (work too slow for a frame, such as
/// encoding a screenshot), in place in the page, which has no other thread.
pub fn detach(f: impl FnOnce() + Send + 'static) {
    #[cfg(not(target_arch = "wasm32"))]
    std::thread::spawn(f);
    #[cfg(target_arch = "wasm32")]
    f();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts to `end` one per slice; a command `true` panics, `false` pauses.
    struct Counter {
        at: usize,
        end: usize,
        running: bool,
    }

    impl LiveRun for Counter {
        type Command = bool;
        type Update = Result<usize, String>;

        fn begin(&mut self, out: &Outbox<Self::Update>) -> Next {
            out.send(Ok(self.at));
            Next::Idle
        }

        fn command(&mut self, cmds: Vec<bool>, _out: &Outbox<Self::Update>) -> Next {
            for c in cmds {
                assert!(!c, "injected");
                self.running = !self.running;
            }
            if self.running { Next::Busy } else { Next::Idle }
        }

        fn work(&mut self, _b: Duration, _h: Host, out: &Outbox<Self::Update>) -> Next {
            self.at += 1;
            out.send(Ok(self.at));
            if self.at == self.end {
                Next::Done
            } else {
                Next::Busy
            }
        }

        fn failed(why: Failure) -> Self::Update {
            Err(format!("{why:?}"))
        }
    }

    impl RemoteRun for Counter {
        type Args = usize;
        const KIND: &'static str = "counter";

        fn build(end: usize) -> Result<Self, String> {
            if end == 0 {
                return Err("nothing to count".into());
            }
            Ok(counter(end))
        }
    }

    /// Drives a [`TextRun`] as web/worker.js does, giving it `commands` whenever it is idle;
    /// the updates read back.
    fn drive_text(run: &mut dyn TextRun, commands: Vec<&str>) -> Vec<Result<usize, String>> {
        let mut commands = commands.into_iter();
        let mut texts = Vec::new();
        let (sent, mut next) = run.begin();
        texts.extend(sent);
        while next != Next::Done {
            let (sent, n) = if next == Next::Idle {
                let Some(c) = commands.next() else { break };
                run.command(&[c.to_string()])
            } else {
                run.work(SLICE)
            };
            texts.extend(sent);
            next = n;
        }
        texts.iter().map(|t| ron::from_str(t).unwrap()).collect()
    }

    #[test]
    fn a_run_through_text_reports_what_the_thread_driver_reports() {
        let thread = Live::<Counter>::remote(4, Arc::new(|| {}));
        thread.send(false);
        let by_thread = until_finished(&thread);
        let by_text = drive_text(text_run::<Counter>("4").as_mut(), vec!["false"]);
        assert_eq!(by_text, by_thread);
        assert_eq!(by_text, (0..=4).map(Ok).collect::<Vec<_>>());
    }

    #[test]
    fn text_runs_report_bad_settings_commands_and_builds_as_refused() {
        let refused =
            |args: &str, commands| drive_text(text_run::<Counter>(args).as_mut(), commands);
        assert_eq!(
            refused("0", vec![]),
            [Err("Refused(\"nothing to count\")".into())]
        );
        let unread = refused("(", vec![]);
        assert_eq!(unread.len(), 1);
        assert!(
            unread[0]
                .as_ref()
                .unwrap_err()
                .starts_with("Refused(\"the run's settings did not read")
        );
        let bad_command = refused("3", vec!["maybe"]);
        assert_eq!(bad_command[0], Ok(0));
        assert!(
            bad_command[1]
                .as_ref()
                .unwrap_err()
                .starts_with("Refused(\"a command did not read")
        );
        assert_eq!(bad_command.len(), 2);
    }

    fn counter(end: usize) -> Counter {
        Counter {
            at: 0,
            end,
            running: false,
        }
    }

    fn until_finished(live: &Live<Counter>) -> Vec<Result<usize, String>> {
        let mut all = Vec::new();
        for _ in 0..10_000 {
            all.extend(live.drain());
            if live.is_finished() {
                all.extend(live.drain());
                return all;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        panic!("the run never ended");
    }

    #[test]
    fn both_drivers_report_the_same_updates_and_end_with_the_run() {
        let thread = Live::on_thread("test", || Ok(counter(5)), Arc::new(|| {}));
        let frames = Live::in_frames(|| Ok(counter(5)), Arc::new(|| {}), SLICE);
        assert_eq!(frames.drain(), [Ok(0)], "idle until told to run");
        assert!(!frames.is_finished());
        thread.send(false);
        frames.send(false);
        let want: Vec<_> = (1..=5).map(Ok).collect();
        assert_eq!(until_finished(&thread)[1..], want);
        assert_eq!(until_finished(&frames), want);
    }

    #[test]
    fn a_panic_is_reported_once_as_the_runs_own_update() {
        for live in [
            Live::on_thread("test", || Ok(counter(5)), Arc::new(|| {})),
            Live::in_frames(|| Ok(counter(5)), Arc::new(|| {}), SLICE),
        ] {
            live.send(true);
            let got = until_finished(&live);
            assert_eq!(got, [Ok(0), Err("Panicked(\"injected\")".to_string())]);
        }
        let failed = Live::<Counter>::in_frames(|| Err("no".into()), Arc::new(|| {}), SLICE);
        assert!(failed.is_finished());
        assert_eq!(failed.drain(), [Err("Refused(\"no\")".to_string())]);
    }
}
