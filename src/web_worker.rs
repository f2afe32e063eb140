//! Web Workers for the page's analyses (wasm32), below the live module, which uses them. A
//! task (`live::Task`) is sent to
//! `worker.js` (beside `index.html`) as its kind and its RON text; the worker starts its own
//! instance of the program, runs the task through the app's registry (`runTask` in
//! [`crate::web`]) and answers with short text messages: `p<count>` as items finish, then
//! `o<RON result>` or `e<why>`. Messages keep the page's frame loop free while a sweep runs.

use std::cell::Cell;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;

/// Where the worker script is, relative to the page.
const SCRIPT: &str = "./worker.js";
/// The shortest time between two progress messages from a worker (ms).
const PROGRESS_EVERY_MS: f64 = 50.0;

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
        let options = web_sys::WorkerOptions::new();
        options.set_type(web_sys::WorkerType::Module);
        let worker = web_sys::Worker::new_with_options(SCRIPT, &options)
            .map_err(|e| format!("the page could not start a Web Worker ({e:?})"))?;
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
                    "e" if !ended.replace(true) => finish(Err(rest.to_string())),
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
        let message = js_sys::Array::of2(&kind.into(), &input.into());
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
