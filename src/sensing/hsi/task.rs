//! The hyperspectral grid as data, for a thread, a Web Worker or the task registry
//! ([`crate::tasks`]): what a run reads ([`HsiInputs`]), the run ([`HsiTask`], the paper's
//! Table 5 protocol of [`run_grid`]) and its trial before a first run ([`HsiTrial`]).

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use super::grid::{GridPlan, GridProgress, GridReport, merge_parts, run_grid, trial_pace};
use super::{HsiConfig, HsiError, Scene};
use crate::live::{Stop, TRIAL_STEPS, Task};

/// What a grid run reads (the gauge lab's Hyperspectral tab edits it): the scene, its
/// variable, and the protocol.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HsiInputs {
    /// Path of the MAT-file.
    pub scene: String,
    /// Its variable (empty: the file's only 3-D numeric array).
    pub var: String,
    /// Fraction of the entries observed.
    pub density: f64,
    /// Step budget per run.
    pub steps: usize,
    /// Rules, grids and seeds.
    pub plan: GridPlan,
}

impl HsiInputs {
    /// The completion settings these inputs run with (the plan sets the seeds).
    pub fn cfg(&self) -> HsiConfig {
        HsiConfig {
            density: self.density,
            steps: self.steps,
            ..HsiConfig::default()
        }
    }

    /// Checks what a run needs: a scene path, a valid plan and completion settings. Errors say
    /// which is missing or out of range.
    pub fn validate(&self) -> Result<(), String> {
        if self.scene.trim().is_empty() {
            return Err("choose a scene file (a MATLAB v5 .mat file) first".into());
        }
        self.plan.validate().map_err(|e| e.to_string())?;
        self.cfg().validate().map_err(|e| e.to_string())
    }

    /// Steps a run takes if every rule picks one rate (the progress bar's length).
    pub fn planned_steps(&self) -> usize {
        let selection = self.plan.selection_rates().len() * self.plan.selection_seeds.len();
        let report = self.plan.rules.len() * self.plan.report_seeds.len();
        (selection + report) * self.steps
    }
}

/// A grid run as data: the inputs, and the scene file's bytes when they were uploaded (else the
/// scene is read from `inputs.scene`). See [`run_grid`].
#[derive(Serialize, Deserialize)]
pub struct HsiTask {
    /// What the run reads.
    pub inputs: HsiInputs,
    /// The scene file's contents, if uploaded.
    pub bytes: Option<Vec<u8>>,
}

impl Task for HsiTask {
    type Output = Result<GridReport, Stop>;
    const KIND: &'static str = "hsi";

    fn run(self, progress: &(dyn Fn() + Sync), cancel: &AtomicBool) -> Self::Output {
        let run = &self.inputs;
        let scene = read_scene(run, self.bytes).map_err(|e| Stop::Failed(e.to_string()))?;
        let steps = |n: u64| (0..n).for_each(|_| progress());
        let mut report = run_grid(
            &scene,
            &run.cfg(),
            &run.plan,
            &|p| {
                if let GridProgress::Steps(n) = p {
                    steps(n);
                }
            },
            cancel,
        )
        .map_err(|e| match e {
            HsiError::Cancelled => Stop::Cancelled,
            e => Stop::Failed(e.to_string()),
        })?;
        // Every step's loss is kept in memory for the selection only; the view and the
        // saved settings need the summaries.
        for r in &mut report.runs {
            r.losses = Vec::new();
        }
        Ok(report)
    }

    /// The plan's rules dealt round-robin ([`GridPlan::part`]): each rule's selection and
    /// report runs stay in one part, which reads the scene for itself.
    fn split(self, n: usize) -> Vec<Self> {
        // Every part carries the scene's bytes (as RON text, up to four times their size), so
        // the parts together stay within SPLIT_BYTES of scene.
        let scene = self.bytes.as_ref().map_or(0, Vec::len);
        let copies = (SPLIT_BYTES / scene.max(1)).max(1);
        let n = n.clamp(1, self.inputs.plan.rules.len().max(1)).min(copies);
        if n == 1 {
            return vec![self];
        }
        let mut bytes = self.bytes;
        (0..n)
            .map(|k| HsiTask {
                inputs: HsiInputs {
                    plan: self.inputs.plan.part(k, n),
                    ..self.inputs.clone()
                },
                // The last part takes the scene itself: n copies, not n + 1.
                bytes: if k + 1 == n {
                    bytes.take()
                } else {
                    bytes.clone()
                },
            })
            .collect()
    }

    /// The parts' reports as the whole's ([`merge_parts`]).
    fn merge(parts: Vec<Self::Output>) -> Self::Output {
        let parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
        merge_parts(parts).ok_or_else(|| Stop::Failed("no part of the grid came back".into()))
    }
}

/// Most bytes of scene the parts of a split grid carry together ([`Task::split`]): a scene
/// larger than half of it runs whole, in one worker.
pub const SPLIT_BYTES: usize = 64 << 20;

/// A grid's trial before its first run, as data ([`trial_pace`]): it reads the scene, so it
/// runs in the background (a thread, or a Web Worker in the page).
#[derive(Serialize, Deserialize)]
pub struct HsiTrial(pub HsiTask);

impl Task for HsiTrial {
    type Output = Option<f64>;
    const KIND: &'static str = "hsi-trial";

    fn run(self, _progress: &(dyn Fn() + Sync), _cancel: &AtomicBool) -> Self::Output {
        let run = &self.0.inputs;
        let scene = read_scene(run, self.0.bytes).ok()?;
        trial_pace(&scene, &run.cfg(), &run.plan, TRIAL_STEPS)
    }
}

/// The scene `inputs` name, from the uploaded `bytes` when there are some.
fn read_scene(inputs: &HsiInputs, bytes: Option<Vec<u8>>) -> Result<Scene, HsiError> {
    let var = Some(inputs.var.trim()).filter(|v| !v.is_empty());
    let path = std::path::Path::new(inputs.scene.trim());
    match bytes {
        Some(bytes) => Scene::from_bytes(path, bytes, var),
        None => Scene::read(path, var),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page deals a grid's rules over its workers: at most a part per rule, part `k` the
    /// plan's [`GridPlan::part`] with the scene's bytes (what `merge_parts` joins; its test
    /// runs them); a failed or missing part fails the whole.
    #[test]
    fn a_grid_splits_into_at_most_a_part_per_rule() {
        let inputs = HsiInputs {
            scene: "s.mat".into(),
            var: String::new(),
            density: 0.5,
            steps: 100,
            plan: GridPlan::paper(vec!["gd".into(), "adam".into(), "muon".into()]),
        };
        let task = || HsiTask {
            inputs: inputs.clone(),
            bytes: Some(vec![1, 2, 3]),
        };
        for n in [1, 2, 3, 5] {
            let parts = task().split(n);
            let k = n.min(3);
            assert_eq!(parts.len(), k);
            for (i, p) in parts.iter().enumerate() {
                assert_eq!(p.inputs.plan, inputs.plan.part(i, k));
                assert_eq!(
                    (&p.inputs.scene, &p.bytes),
                    (&inputs.scene, &Some(vec![1, 2, 3]))
                );
            }
        }
        // A large scene is copied into fewer parts, and one over half the budget not at all.
        for (len, parts) in [(SPLIT_BYTES / 2, 2), (SPLIT_BYTES / 2 + 1, 1)] {
            let big = HsiTask {
                inputs: inputs.clone(),
                bytes: Some(vec![0; len]),
            };
            assert_eq!(big.split(3).len(), parts, "{len} bytes");
        }
        assert_eq!(
            HsiTask::merge(vec![Err(Stop::Cancelled)]),
            Err(Stop::Cancelled)
        );
        assert!(matches!(HsiTask::merge(Vec::new()), Err(Stop::Failed(_))));
    }
}
