//! A thread of background work with progress, cancel and a result to collect; every
//! [`super::analysis::Analysis`] runs its work in one.

#[cfg(not(target_arch = "wasm32"))]
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// A unit of work on its own thread.
pub struct Job<T> {
    /// Work items requested (for the progress bar).
    pub total: usize,
    done: Arc<AtomicUsize>,
    cancel: Arc<AtomicBool>,
    result: Arc<Mutex<Option<Result<T, String>>>>,
    handle: Option<JoinHandle<()>>,
}

impl<T: Send + 'static> Job<T> {
    /// Runs `work(progress, cancel)` on a thread called `name`; `work` calls `progress()` once
    /// per finished item and should stop soon after `cancel` is raised. `repaint` is called
    /// after each item and at the end. A panic in `work` becomes an error result.
    pub fn spawn(
        name: &str,
        total: usize,
        repaint: Arc<dyn Fn() + Send + Sync>,
        work: impl FnOnce(&(dyn Fn() + Sync), &AtomicBool) -> T + Send + 'static,
    ) -> Self {
        let done = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let result = Arc::new(Mutex::new(None));
        // A page has no threads: the panels that start jobs are desktop-only there (see
        // `panels::desktop_only`), and a job that is started anyway ends at once and says why.
        #[cfg(target_arch = "wasm32")]
        let handle = {
            let _ = (name, repaint, work);
            *result.lock().expect("job result lock") = Some(Err(
                "this analysis runs in the desktop app only (a page has no worker threads)"
                    .to_string(),
            ));
            None
        };
        #[cfg(not(target_arch = "wasm32"))]
        let handle = {
            let (done, cancel, result) = (done.clone(), cancel.clone(), result.clone());
            let thread = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || {
                    let progress = || {
                        done.fetch_add(1, Ordering::Relaxed);
                        repaint();
                    };
                    let outcome = catch_unwind(AssertUnwindSafe(|| work(&progress, &cancel)))
                        .map_err(|p| crate::worker::panic_message(p.as_ref()));
                    *result.lock().expect("job result lock") = Some(outcome);
                    repaint();
                })
                .expect("spawn job thread");
            Some(thread)
        };
        Self {
            total,
            done,
            cancel,
            result,
            handle,
        }
    }

    /// Items finished so far.
    pub fn done(&self) -> usize {
        self.done.load(Ordering::Relaxed)
    }

    /// Asks the work to stop soon.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether cancel was requested.
    pub fn is_cancelling(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The outcome once the thread has finished (`Err` with the message if it panicked);
    /// `None` while it runs.
    pub fn take_result(&mut self) -> Option<Result<T, String>> {
        let r = self.result.lock().expect("job result lock").take()?;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        Some(r)
    }
}

impl<T> Drop for Job<T> {
    /// Raises the cancel flag and lets the thread end on its own (never blocks the UI).
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}
