//! Every analysis the app runs as a [`Task`], and every live run a Web Worker can drive, listed
//! once: the page's workers look a kind up here (`runTask` and `startLive` in the web build).
//! Adding an analysis is its task type beside its panel plus one line in [`TASKS`]; a live run
//! for workers is its [`RemoteRun`] impl plus one line in [`LIVE`].

use std::sync::atomic::AtomicBool;

use crate::app::panels::controlled_test::{MatchedTask, PointsTask, SweepTask};
use crate::app::panels::gauge_lab::{HsiTask, HsiTrial, ZooTask, ZooTrial};
use crate::app::panels::workbench::CheckTask;
use crate::attention::live::AttentionLive;
use crate::experiment::{AdamEps, KeyDim};
use crate::live::{RemoteRun, Task, TextRun, text_run};

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
        let mut run = live("attention", &ron::to_string(&(&preset, 5u64)).unwrap()).unwrap();
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

    /// The page deals a zoo's units over its workers: any number of parts, run apart and
    /// merged, gives the whole sweep's runs bit for bit; a part that fails fails the whole.
    #[test]
    fn a_zoo_split_over_workers_merges_to_the_whole_bit_for_bit() {
        use crate::app::analysis::Stop;
        use crate::sensing::zoo::ZooPreset;
        let preset = ZooPreset::from_ron(
            "ZooPreset(problem: (n: 6, rank: 1), seeds: 2, budget: 100, rules: [Gd, Adam, Muon])",
            "p.ron",
        )
        .unwrap();
        let run = |t: ZooTask| t.run(&|| {}, &AtomicBool::new(false));
        let whole = run(ZooTask::new(preset.clone())).unwrap();
        assert_eq!(whole.len(), preset.units());
        for n in [1, 2, 3, 5, 100] {
            let parts = ZooTask::new(preset.clone()).split(n);
            assert_eq!(parts.len(), n.min(preset.units()));
            let merged = ZooTask::merge(parts.into_iter().map(run).collect()).unwrap();
            assert_eq!(format!("{merged:?}"), format!("{whole:?}"), "{n} parts");
        }
        let failed = ZooTask::merge(vec![Ok(whole), Err(Stop::Cancelled)]);
        assert_eq!(failed, Err(Stop::Cancelled));
    }

    /// A seed sweep dealt over the page's workers merges to the whole sweep bit for bit
    /// (its per-seed rows and its aggregates), for any number of parts.
    #[test]
    fn a_seed_sweep_split_over_workers_merges_to_the_whole_bit_for_bit() {
        let mut preset = Preset::load("classroom").unwrap();
        preset.steps = 30;
        let run = |t: SweepTask| t.run(&|| {}, &AtomicBool::new(false));
        let whole = run(SweepTask::new(preset.clone(), 5)).unwrap();
        assert_eq!(whole.seeds.len(), 5);
        for n in [1, 2, 3, 8] {
            let parts = SweepTask::new(preset.clone(), 5).split(n);
            assert_eq!(parts.len(), n.min(5));
            let merged = SweepTask::merge(parts.into_iter().map(run).collect()).unwrap();
            assert_eq!(format!("{merged:?}"), format!("{whole:?}"), "{n} parts");
        }
    }
}
