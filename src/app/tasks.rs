//! Every analysis the app runs as a [`Task`], listed once: the page's Web Workers look a task's
//! kind up here (`runTask` in the web build). Adding an analysis is its task type beside its
//! panel plus one line in [`TASKS`].

use std::sync::atomic::AtomicBool;

use crate::app::panels::controlled_test::{MatchedTask, PointsTask, SweepTask};
use crate::app::panels::gauge_lab::{HsiTask, ZooTask};
use crate::experiment::{AdamEps, KeyDim};
use crate::live::Task;

/// Runs a task from its RON text, calling `progress` per item; its output as RON text.
type RunText = fn(&str, &(dyn Fn() + Sync)) -> Result<String, String>;

/// Every task kind and how to run it from text.
pub const TASKS: &[(&str, RunText)] = &[
    (SweepTask::KIND, run_text::<SweepTask>),
    (PointsTask::<AdamEps>::KIND, run_text::<PointsTask<AdamEps>>),
    (PointsTask::<KeyDim>::KIND, run_text::<PointsTask<KeyDim>>),
    (MatchedTask::KIND, run_text::<MatchedTask>),
    (ZooTask::KIND, run_text::<ZooTask>),
    (HsiTask::KIND, run_text::<HsiTask>),
];

/// Runs the task of kind `kind` whose RON text is `input` (never cancelled: a worker is
/// stopped instead) and returns its output's RON text.
///
/// # Errors
/// An unknown kind, or text that does not read as that kind's task.
pub fn run(kind: &str, input: &str, progress: &(dyn Fn() + Sync)) -> Result<String, String> {
    let (_, run) = TASKS
        .iter()
        .find(|(k, _)| *k == kind)
        .ok_or_else(|| format!("no analysis `{kind}`"))?;
    run(input, progress)
}

fn run_text<K: Task>(input: &str, progress: &(dyn Fn() + Sync)) -> Result<String, String> {
    let task: K = ron::from_str(input).map_err(|e| format!("{}: {e}", K::KIND))?;
    let output = task.run(progress, &AtomicBool::new(false));
    ron::to_string(&output).map_err(|e| format!("{}: {e}", K::KIND))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preset::Preset;

    #[test]
    fn kinds_are_unique_and_unknown_ones_are_refused() {
        let mut kinds: Vec<&str> = TASKS.iter().map(|(k, _)| *k).collect();
        kinds.sort_unstable();
        kinds.dedup();
        assert_eq!(kinds.len(), TASKS.len());
        let err = run("nope", "()", &|| {}).unwrap_err();
        assert_eq!(err, "no analysis `nope`");
        assert!(
            run("sweep", "(", &|| {})
                .unwrap_err()
                .starts_with("sweep: ")
        );
    }

    /// What a worker answers is what the thread computes, every f64 bit included: the sweep
    /// through text writes the same RON (shortest round-trip text of every f64; only the
    /// skipped arm index of a record differs, which no view reads) and the same table as the
    /// sweep called directly.
    #[test]
    fn a_task_through_text_gives_the_direct_result_bit_for_bit() {
        let mut preset = Preset::load("classroom").unwrap();
        preset.steps = 40;
        let task = SweepTask {
            preset: preset.clone(),
            seeds: 2,
        };
        let count = std::sync::atomic::AtomicUsize::new(0);
        let progress = || {
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let text = run("sweep", &ron::to_string(&task).unwrap(), &progress).unwrap();
        assert_eq!(count.into_inner(), 2, "one progress call per seed");
        let back: <SweepTask as Task>::Output = ron::from_str(&text).unwrap();
        let direct = task.run(&|| {}, &AtomicBool::new(false));
        assert_eq!(
            ron::to_string(&back).unwrap(),
            ron::to_string(&direct).unwrap()
        );
        let (back, direct) = (back.unwrap(), direct.unwrap());
        let table = crate::experiment::report::sweep_csv(&back).unwrap();
        assert_eq!(
            table,
            crate::experiment::report::sweep_csv(&direct).unwrap()
        );
        assert!(back.aggregate.iter().all(|a| a.excess_mean.is_finite()));
    }
}
