//! A seed sweep running in the background for the UI, with progress and cancel.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use crate::experiment::{SweepError, SweepResult, sweep_until};
use crate::preset::Preset;

/// A sweep in flight (or just finished).
pub struct SweepJob {
    /// Seeds requested.
    pub total: usize,
    done: Arc<AtomicUsize>,
    cancel: Arc<AtomicBool>,
    result: Arc<Mutex<Option<Result<SweepResult, SweepError>>>>,
    handle: Option<JoinHandle<()>>,
}

impl SweepJob {
    /// Starts `n_seeds` seeds of `preset` on rayon's pool; `repaint` is called after each seed.
    pub fn start(preset: Preset, n_seeds: usize, repaint: Arc<dyn Fn() + Send + Sync>) -> Self {
        let done = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let result = Arc::new(Mutex::new(None));
        let handle = {
            let (done, cancel, result) = (done.clone(), cancel.clone(), result.clone());
            std::thread::Builder::new()
                .name("basis-lab sweep".into())
                .spawn(move || {
                    let progress = || {
                        done.fetch_add(1, Ordering::Relaxed);
                        repaint();
                    };
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        sweep_until(&preset, n_seeds, &progress, &cancel)
                    }))
                    .unwrap_or_else(|_| {
                        Err(SweepError::Invalid(
                            "sweep".into(),
                            "the sweep panicked".into(),
                        ))
                    });
                    *result.lock().expect("sweep result lock") = Some(r);
                    repaint();
                })
                .expect("spawn sweep thread")
        };
        Self {
            total: n_seeds,
            done,
            cancel,
            result,
            handle: Some(handle),
        }
    }

    /// Seeds finished so far.
    pub fn done(&self) -> usize {
        self.done.load(Ordering::Relaxed)
    }

    /// Asks the sweep to stop soon.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether cancel was requested.
    pub fn is_cancelling(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The outcome once the thread has finished; `None` while running.
    pub fn take_result(&mut self) -> Option<Result<SweepResult, SweepError>> {
        let r = self.result.lock().expect("sweep result lock").take()?;
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        Some(r)
    }
}

impl Drop for SweepJob {
    fn drop(&mut self) {
        self.cancel();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}
