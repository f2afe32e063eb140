//! Background work for the gauge lab panel: a zoo sweep (every rule, rate and seed of a zoo
//! preset) and live runs that stream loss, recovery and twin drift of a few rules.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, unbounded};
use rayon::prelude::*;

use super::job::Job;
use crate::sensing::zoo::{FactorRun, Rule, RunResult, ZooPreset, run_zoo};
use crate::sensing::{SensingConfig, SensingProblem};

/// Starts `preset`'s zoo sweep on rayon's pool as a background [`Job`]; its result is every
/// run, those stopped by a cancel marked `Cancelled`.
pub fn start_zoo(preset: ZooPreset, repaint: Arc<dyn Fn() + Send + Sync>) -> Job<Vec<RunResult>> {
    let total = preset.cells().len();
    Job::spawn("basis-lab zoo", total, repaint, move |progress, cancel| {
        run_zoo(&preset, progress, cancel)
    })
}

/// One sample of a live run.
#[derive(Clone, Copy, Debug)]
pub struct LiveSample {
    /// Index of the rule in the live job's list.
    pub rule: usize,
    /// Step.
    pub step: usize,
    /// Pre-update training loss.
    pub loss: f64,
    /// Recovery error.
    pub recovery: f64,
    /// Twin drift ‖U′V′ᵀ − UVᵀ‖F / ‖UVᵀ‖F.
    pub twin_drift: f64,
    /// Factor drift ‖U′ − UQ‖F / ‖UQ‖F.
    pub factor_drift: f64,
}

/// What a live run reports.
#[derive(Clone, Debug)]
pub enum LiveUpdate {
    /// A sample.
    Sample(LiveSample),
    /// A rule finished: its singular values of UVᵀ (descending).
    Done {
        /// Index of the rule.
        rule: usize,
        /// Singular values of the final UVᵀ.
        spectrum: Vec<f64>,
        /// How it ended, with its final step.
        summary: RunResult,
    },
}

/// Live runs of several rules on one problem instance, each with its gauge twin.
pub struct LiveJob {
    /// The rules, in display order.
    pub rules: Vec<(Rule, f64)>,
    /// Singular values of the target X*.
    pub target_spectrum: Vec<f64>,
    rx: Receiver<LiveUpdate>,
    cancel: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// Samples per live run.
const LIVE_SAMPLES: usize = 200;

impl LiveJob {
    /// Runs every (rule, lr) in `rules` on the instance of `seed` for at most `budget` steps,
    /// in parallel, sampling about 200 times each.
    pub fn start(
        cfg: SensingConfig,
        rules: Vec<(Rule, f64)>,
        seed: u64,
        budget: usize,
        repaint: Arc<dyn Fn() + Send + Sync>,
    ) -> Self {
        let problem = Arc::new(SensingProblem::new(&cfg, seed));
        let target_spectrum = problem.target.singular_values().iter().copied().collect();
        let (tx, rx) = unbounded();
        let cancel = Arc::new(AtomicBool::new(false));
        let handle = {
            let (rules, cancel) = (rules.clone(), cancel.clone());
            std::thread::Builder::new()
                .name("basis-lab gauge live".into())
                .spawn(move || {
                    let every = (budget / LIVE_SAMPLES).max(1);
                    rules.par_iter().enumerate().for_each(|(i, &(rule, lr))| {
                        let mut run = FactorRun::new(&problem, rule, lr, budget, seed, true);
                        let outcome = loop {
                            if cancel.load(Ordering::Relaxed) {
                                break crate::sensing::zoo::Outcome::Cancelled;
                            }
                            // Sample W_t before the step computes its loss, so all three
                            // numbers describe the same factors.
                            let t = run.t;
                            let sample = t.is_multiple_of(every).then(|| {
                                let [u, v] = &run.params;
                                (
                                    crate::sensing::recovery(u, v, &problem.target),
                                    run.twin_drift().unwrap_or(f64::NAN),
                                    run.factor_drift().unwrap_or(f64::NAN),
                                )
                            });
                            let stepped = run.step();
                            if let Some((recovery, twin_drift, factor_drift)) = sample {
                                let _ = tx.send(LiveUpdate::Sample(LiveSample {
                                    rule: i,
                                    step: t,
                                    loss: run.loss,
                                    recovery,
                                    twin_drift,
                                    factor_drift,
                                }));
                                repaint();
                            }
                            if let Some(o) = stepped {
                                break o;
                            }
                        };
                        let [u, v] = &run.params;
                        let w = u * v.transpose();
                        let summary = RunResult {
                            rule: rule.name(),
                            equivariant: rule.equivariant(),
                            lr,
                            seed,
                            tau: problem.cfg.tau,
                            steps: run.t,
                            outcome,
                            train_loss: run.loss,
                            recovery: crate::sensing::recovery(u, v, &problem.target),
                            erank: crate::sensing::effective_rank(&w),
                            balancedness: crate::sensing::balancedness(u, v),
                            twin_drift: run.twin_drift(),
                        };
                        let mut spectrum: Vec<f64> = w.singular_values().iter().copied().collect();
                        spectrum.sort_by(|a, b| b.total_cmp(a));
                        let _ = tx.send(LiveUpdate::Done {
                            rule: i,
                            spectrum,
                            summary,
                        });
                        repaint();
                    });
                })
                .expect("spawn live thread")
        };
        Self {
            rules,
            target_spectrum,
            rx,
            cancel,
            handle: Some(handle),
        }
    }

    /// Every update that has arrived.
    pub fn drain(&self) -> Vec<LiveUpdate> {
        self.rx.try_iter().collect()
    }

    /// Asks every run to stop.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Whether all runs have ended.
    pub fn is_finished(&self) -> bool {
        self.handle.as_ref().is_none_or(|h| h.is_finished())
    }
}

impl Drop for LiveJob {
    fn drop(&mut self) {
        self.cancel();
    }
}
