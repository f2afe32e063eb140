//! The zoo as data, for a thread, a Web Worker or the task registry ([`crate::tasks`]): a sweep
//! of a zoo preset's units, dealt over workers as `--shard` deals them, and its trial before a
//! first run.

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use super::{Outcome, RunResult, ZooPreset, run_zoo_cells};
use crate::live::{Stop, TRIAL_STEPS, Task, undeal};

/// A zoo sweep as data: the preset's units ([`ZooPreset::units`]: its cells, then its convex
/// references) `part.0, part.0 + part.1, …`, every one with `(0, 1)` ([`run_zoo_cells`], the
/// units of a shard). The app's tabs, the page's workers, the command and its shards
/// (`shard::Job`) all hold this one value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ZooTask {
    /// The sweep.
    pub preset: ZooPreset,
    /// Which of its units: the first and the stride.
    pub part: (usize, usize),
}

impl ZooTask {
    /// Every unit of `preset`.
    pub fn new(preset: ZooPreset) -> Self {
        Self {
            preset,
            part: (0, 1),
        }
    }
}

impl Task for ZooTask {
    type Output = Result<Vec<RunResult>, Stop>;
    const KIND: &'static str = "zoo";

    fn run(self, progress: &(dyn Fn() + Sync), cancel: &AtomicBool) -> Self::Output {
        let (first, stride) = (self.part.0, self.part.1.max(1));
        let which: Vec<usize> = (first..self.preset.units()).step_by(stride).collect();
        let runs = run_zoo_cells(&self.preset, &which, progress, cancel);
        if runs.iter().any(|r| r.outcome == Outcome::Cancelled) {
            return Err(Stop::Cancelled);
        }
        Ok(runs)
    }

    /// Units dealt round-robin, as `--shard` deals them (each part builds the instances its
    /// units need).
    fn split(self, n: usize) -> Vec<Self> {
        let n = n.clamp(1, self.preset.units().max(1));
        (0..n)
            .map(|k| ZooTask {
                preset: self.preset.clone(),
                part: (k, n),
            })
            .collect()
    }

    /// The parts' runs dealt back into unit order.
    fn merge(parts: Vec<Self::Output>) -> Self::Output {
        Ok(undeal(parts.into_iter().collect::<Result<_, _>>()?))
    }
}

/// A zoo's trial before its first run, as data ([`ZooPreset::trial_pace`]): run in the
/// background, since the preset's largest instance may be slow to build.
#[derive(Serialize, Deserialize)]
pub struct ZooTrial(pub ZooPreset);

impl Task for ZooTrial {
    type Output = Option<f64>;
    const KIND: &'static str = "zoo-trial";

    fn run(self, _progress: &(dyn Fn() + Sync), _cancel: &AtomicBool) -> Self::Output {
        self.0.trial_pace(TRIAL_STEPS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page deals a zoo's units over its workers: any number of parts, run apart and
    /// merged, gives the whole sweep's runs bit for bit; a part that fails fails the whole.
    #[test]
    fn a_zoo_split_over_workers_merges_to_the_whole_bit_for_bit() {
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
}
