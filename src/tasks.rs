//! Every analysis the app runs as a [`Task`], and every live run a Web Worker can drive, listed
//! once: the page's workers look a kind up here (`runTask` and `startLive` in the web build).
//! Each task type lives beside its lab's numerics (`experiment`, `sensing::zoo`,
//! `sensing::hsi`), so a worker reaches the numerics through this list and nothing of the app.
//! Adding an analysis is its task type beside its lab plus one line in [`TASKS`]; a live run
//! for workers is its [`RemoteRun`] impl plus one line in [`LIVE`].

use std::sync::atomic::AtomicBool;

use crate::attention::live::AttentionLive;
use crate::experiment::check::CheckTask;
use crate::experiment::matched::MatchedTask;
use crate::experiment::{AdamEps, KeyDim, PointsTask, SweepTask};
use crate::live::{RemoteRun, Task, TextRun, text_run};
use crate::sensing::hsi::task::{HsiTask, HsiTrial};
use crate::sensing::zoo::{ZooTask, ZooTrial};

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
    (ZooTrial::KIND, run_text::<ZooTrial>),
    (HsiTrial::KIND, run_text::<HsiTrial>),
    (CheckTask::KIND, run_text::<CheckTask>),
];

/// Builds a live run of a kind from its settings' RON text.
type StartText = fn(&str) -> Box<dyn TextRun>;

/// Every live run kind a Web Worker can drive ([`crate::live::Live::remote`]).
pub const LIVE: &[(&str, StartText)] = &[(AttentionLive::KIND, text_run::<AttentionLive>)];

/// The live run of kind `kind` built from `args` (its settings' RON text; settings that do not
/// read give a run that reports why as its first update).
///
/// # Errors
/// An unknown kind.
pub fn live(kind: &str, args: &str) -> Result<Box<dyn TextRun>, String> {
    let (_, start) = LIVE
        .iter()
        .find(|(k, _)| *k == kind)
        .ok_or_else(|| format!("no live run `{kind}`"))?;
    Ok(start(args))
}

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

/// A trial given as the pace `0` (none measured) or a fixed one, run as a task (for the tests
/// of the app's estimates, which need a trial of known pace).
#[cfg(test)]
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct Fixed(pub f64);

#[cfg(test)]
impl Task for Fixed {
    type Output = Option<f64>;
    const KIND: &'static str = "fixed-trial";
    fn run(self, _: &(dyn Fn() + Sync), _: &AtomicBool) -> Option<f64> {
        (self.0 > 0.0).then_some(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::live::Command;
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

    /// A live run through text (as a Web Worker drives it) sends the records the run makes
    /// when called directly, every f64 bit included; an unknown kind is refused by name.
    #[test]
    fn the_attention_run_through_text_sends_the_direct_records() {
        use crate::attention::live::Update;
        use crate::attention::{AttentionPreset, SeedRun};
        assert_eq!(live("nope", "()").err().unwrap(), "no live run `nope`");
        let preset = AttentionPreset::from_ron(
            r#"(name: "t", task: (modulus: 7, train_fraction: 0.5),
                model: (layers: 1, heads: 2, d_model: 8, d_mlp: 16, norm_eps: 1e-6), steps: 3,
                runs: [(rule: (optimizer: "adam", lr: 1e-2), twins: [Gauge, Noise])])"#,
            "t",
        )
        .unwrap();
        let mut run = live(
            "attention",
            &ron::to_string(&(&preset, 5u64, (0usize, 1usize))).unwrap(),
        )
        .unwrap();
        let mut texts = run.begin().0;
        let (sent, mut next) =
            run.command(&[ron::to_string(&Command::Play { until: None }).unwrap()]);
        texts.extend(sent);
        while next != crate::live::Next::Idle {
            let (sent, n) = run.work(crate::live::SLICE);
            texts.extend(sent);
            next = n;
        }
        let records: Vec<_> = texts
            .iter()
            .filter_map(|t| match ron::from_str::<Update>(t).unwrap() {
                Update::Records(r) => Some(r),
                _ => None,
            })
            .flatten()
            .collect();
        let mut direct = SeedRun::new(&preset, 5).unwrap();
        while !direct.finished() {
            direct.step();
        }
        assert_eq!(records.len(), 4 * 3, "three models at four measured steps");
        let bits = |r: &[crate::attention::Record]| ron::to_string(r).unwrap();
        assert_eq!(bits(&records), bits(direct.records()));
        assert!(records.iter().any(|r| r.logit_distance > 0.0));
    }

    /// What a worker answers is what the thread computes, every f64 bit included: the sweep
    /// through text writes the same RON (shortest round-trip text of every f64; only the
    /// skipped arm index of a record differs, which no view reads) and the same table as the
    /// sweep called directly.
    #[test]
    fn a_task_through_text_gives_the_direct_result_bit_for_bit() {
        let mut preset = Preset::load("classroom").unwrap();
        preset.steps = 40;
        let task = SweepTask::new(preset.clone(), 2);
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
