//! Web Workers for the page's analyses and long live runs (wasm32), below the live module,
//! which uses them. `worker.js` (beside `index.html`) starts its own instance of the program
//! and takes one of two jobs:
//! - a task (`live::Task`), sent as `["task", kind, RON]`: it runs it through the app's
//!   registry (`runTask` in [`crate::web`]) and answers `p<count>` as items finish, then
//!   `o<RON result>`, or why it failed: `r<why>` (refused: an unknown kind, unreadable input)
//!   or `e<message>` (it panicked) ([`Running`]);
//! - a live run (`live::RemoteRun`), sent as `["live", kind, RON args]` and then
//!   `["command", RON]` per command: it drives the run (`startLive`) and answers `u<RON update>`
//!   per update, `d` when the run has ended, or `r<why>` / `e<message>` as a task does
//!   ([`Streaming`]).
//!
//! Messages keep the page's frame loop free while a sweep or a transformer trains.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

/// Where the worker script is, relative to the page.
const SCRIPT: &str = "./worker.js";
/// The shortest time between two progress messages from a worker (ms).
const PROGRESS_EVERY_MS: f64 = 50.0;

/// Most workers one analysis starts: each holds its own copy of what its part builds.
const MAX_WORKERS: usize = 8;

/// How many workers an analysis splits over ([`crate::live::Task::split`]): the browser's
/// `navigator.hardwareConcurrency`, at least one and at most [`MAX_WORKERS`].
pub fn workers() -> usize {
    web_sys::window()
        .map_or(1.0, |w| w.navigator().hardware_concurrency())
        .clamp(1.0, MAX_WORKERS as f64) as usize
}

/// A worker running one task; dropping it ends the worker (done or not).
pub struct Running {
    worker: web_sys::Worker,
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::ErrorEvent)>,
}

impl Running {
    /// Starts a worker on the task of kind `kind` whose RON text is `input`: its progress
    /// counts go to `done`, its outcome (the result's RON text, or why it failed) to `finish`
    /// once, and `repaint` is called after each message.
    ///
    /// # Errors
    /// The browser refused to start a worker or to send it the task.
    pub fn start(
        kind: &str,
        input: String,
        done: Arc<AtomicUsize>,
        finish: impl Fn(Result<String, String>) + 'static,
        repaint: Arc<dyn Fn() + Send + Sync>,
    ) -> Result<Self, String> {
        let worker = new_worker()?;
        let finish = std::rc::Rc::new(finish);
        let ended = std::rc::Rc::new(Cell::new(false));
        let on_message = {
            let (finish, ended, repaint) = (finish.clone(), ended.clone(), repaint.clone());
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
                let text = e.data().as_string().unwrap_or_default();
                let (head, rest) = text.split_at(text.len().min(1));
                match head {
                    "p" => done.store(rest.parse().unwrap_or(0), Ordering::Relaxed),
                    "o" if !ended.replace(true) => finish(Ok(rest.to_string())),
                    "e" | "r" if !ended.replace(true) => finish(Err(rest.to_string())),
                    _ => {}
                }
                repaint();
            })
        };
        let on_error =
            Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |e: web_sys::ErrorEvent| {
                if !ended.replace(true) {
                    finish(Err(format!("the Web Worker failed: {}", e.message())));
                }
                repaint();
            });
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let message = js_sys::Array::of3(&"task".into(), &kind.into(), &input.into());
        worker
            .post_message(&message)
            .map_err(|e| format!("the page could not reach its Web Worker ({e:?})"))?;
        Ok(Self {
            worker,
            _on_message: on_message,
            _on_error: on_error,
        })
    }

    /// Ends the worker at once (a cancelled analysis).
    pub fn stop(&self) {
        self.worker.terminate();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.worker.set_onmessage(None);
        self.worker.set_onerror(None);
        self.worker.terminate();
    }
}

/// A module worker running `worker.js`.
fn new_worker() -> Result<web_sys::Worker, String> {
    let options = web_sys::WorkerOptions::new();
    options.set_type(web_sys::WorkerType::Module);
    let worker = web_sys::Worker::new_with_options(SCRIPT, &options)
        .map_err(|e| format!("the page could not start a Web Worker ({e:?})"))?;
    STARTED.with(|n| n.set(n.get() + 1));
    Ok(worker)
}

thread_local! {
    /// Web Workers the page has started.
    static STARTED: Cell<usize> = const { Cell::new(0) };
}

/// How many Web Workers the page has started so far (the page publishes it, so a test can tell
/// an analysis split over several).
pub fn started() -> usize {
    STARTED.with(Cell::get)
}

/// A worker driving one live run; dropping it ends the worker.
pub struct Streaming {
    worker: Option<web_sys::Worker>,
    ended: std::rc::Rc<Cell<bool>>,
    fail: std::rc::Rc<dyn Fn(String, bool)>,
    _on_message: Option<Closure<dyn FnMut(web_sys::MessageEvent)>>,
    _on_error: Option<Closure<dyn FnMut(web_sys::ErrorEvent)>>,
}

impl Streaming {
    /// Starts a worker on the live run of kind `kind` built from `args` (RON text): each
    /// update's text goes to `update`, a failure to `fail` once (why, and whether the run
    /// panicked; otherwise it was refused or no worker could run it), and `repaint` is called
    /// after each message.
    pub fn start(
        kind: &str,
        args: &str,
        update: impl Fn(&str) + 'static,
        fail: impl Fn(String, bool) + 'static,
        repaint: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        let ended = std::rc::Rc::new(Cell::new(false));
        let fail: std::rc::Rc<dyn Fn(String, bool)> = std::rc::Rc::new(fail);
        let worker = match new_worker() {
            Ok(w) => w,
            Err(why) => {
                fail(why, false);
                repaint();
                ended.set(true);
                return Self {
                    worker: None,
                    ended,
                    fail,
                    _on_message: None,
                    _on_error: None,
                };
            }
        };
        let on_message = {
            let (fail, ended, repaint) = (fail.clone(), ended.clone(), repaint.clone());
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
                let text = e.data().as_string().unwrap_or_default();
                let (head, rest) = text.split_at(text.len().min(1));
                match head {
                    "u" if !ended.get() => update(rest),
                    "d" => ended.set(true),
                    "e" if !ended.replace(true) => fail(rest.to_string(), true),
                    "r" if !ended.replace(true) => fail(rest.to_string(), false),
                    _ => {}
                }
                repaint();
            })
        };
        let on_error = {
            let (fail, ended) = (fail.clone(), ended.clone());
            Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |e: web_sys::ErrorEvent| {
                if !ended.replace(true) {
                    fail(format!("the Web Worker failed: {}", e.message()), false);
                }
                repaint();
            })
        };
        worker.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        let this = Self {
            worker: Some(worker),
            ended,
            fail,
            _on_message: Some(on_message),
            _on_error: Some(on_error),
        };
        this.post(&js_sys::Array::of3(
            &"live".into(),
            &kind.into(),
            &args.into(),
        ));
        this
    }

    /// Sends a command's RON text to the run.
    pub fn send(&self, command: &str) {
        self.post(&js_sys::Array::of2(&"command".into(), &command.into()));
    }

    /// Whether the run has ended (done, failed, or no worker could start).
    pub fn has_ended(&self) -> bool {
        self.ended.get()
    }

    /// Posts `message`; a worker that cannot be reached ends the run as failed.
    fn post(&self, message: &js_sys::Array) {
        if let Some(w) = &self.worker
            && let Err(e) = w.post_message(message)
            && !self.ended.replace(true)
        {
            w.terminate();
            (self.fail)(
                format!("the page could not reach its Web Worker ({e:?})"),
                false,
            );
        }
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        if let Some(w) = &self.worker {
            w.set_onmessage(None);
            w.set_onerror(None);
            w.terminate();
        }
    }
}

thread_local! {
    /// Items the worker's task has finished, and when it last said so (ms since the epoch).
    static PROGRESS: Cell<(usize, f64)> = const { Cell::new((0, 0.0)) };
}

/// The worker's side of progress: counts one finished item and tells the page, at most every
/// [`PROGRESS_EVERY_MS`]. Does nothing outside a worker.
pub fn report_progress() {
    PROGRESS.with(|p| {
        let (count, last) = p.get();
        let now = js_sys::Date::now();
        let count = count + 1;
        if now - last >= PROGRESS_EVERY_MS {
            post(&format!("p{count}"));
            p.set((count, now));
        } else {
            p.set((count, last));
        }
    });
}

/// Posts `text` to the page from inside a worker (nothing elsewhere).
pub fn post(text: &str) {
    if let Ok(scope) = js_sys::global().dyn_into::<web_sys::DedicatedWorkerGlobalScope>() {
        let _ = scope.post_message(&text.into());
    }
}
