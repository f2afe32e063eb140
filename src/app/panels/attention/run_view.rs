//! What the section keeps of a run: decimated series, the records at the checkpoints and the
//! latest one per model.

use super::Update;
use crate::attention::figures::ModelCurves;
use crate::attention::report::checkpoints;
use crate::attention::{AttentionPreset, Record, TwinKind};
use crate::history::{MinMaxSeries, Scale};

/// The series of one model (a base model or a twin).
struct ModelSeries {
    distance: MinMaxSeries,
    train_acc: MinMaxSeries,
    val_acc: MinMaxSeries,
    train_loss: MinMaxSeries,
    val_loss: MinMaxSeries,
}

impl ModelSeries {
    fn new() -> Self {
        Self {
            distance: MinMaxSeries::new(Scale::Log),
            train_acc: MinMaxSeries::new(Scale::Linear),
            val_acc: MinMaxSeries::new(Scale::Linear),
            train_loss: MinMaxSeries::new(Scale::Log),
            val_loss: MinMaxSeries::new(Scale::Log),
        }
    }
}

/// What the run has reported, bounded: decimated series, the records at the checkpoints and
/// the latest record of each model.
pub struct RunView {
    /// Per model, in the run's order: its run index and twin kind (`None`: base model).
    pub(super) roles: Vec<(usize, Option<TwinKind>)>,
    series: Vec<ModelSeries>,
    /// The steps the checkpoint table reads.
    pub(super) checkpoints: Vec<usize>,
    /// The records at those steps, as they arrived.
    pub(super) kept: Vec<Record>,
    latest: Vec<Option<Record>>,
    diverged: Vec<Option<usize>>,
    /// The last step whose metrics arrived (`None` before step 0's).
    pub step: Option<usize>,
    /// Whether the run keeps stepping.
    pub running: bool,
    /// Why the run stopped, if it failed or panicked.
    pub failed: Option<String>,
    /// Earlier runs, newest first, drawn faded.
    pub past: Vec<crate::figure::Earlier<crate::attention::figures::PastRun>>,
}

impl RunView {
    /// An empty view of `preset`'s models.
    pub fn new(preset: &AttentionPreset) -> Self {
        let roles: Vec<(usize, Option<TwinKind>)> = preset
            .runs
            .iter()
            .enumerate()
            .flat_map(|(r, run)| {
                std::iter::once((r, None)).chain(run.twins.iter().map(move |&t| (r, Some(t))))
            })
            .collect();
        let n = roles.len();
        Self {
            roles,
            series: (0..n).map(|_| ModelSeries::new()).collect(),
            checkpoints: checkpoints(preset),
            kept: Vec::new(),
            latest: vec![None; n],
            diverged: vec![None; n],
            step: None,
            running: false,
            failed: None,
            past: Vec::new(),
        }
    }

    /// The checkpoint table of what has arrived ([`crate::attention::figures::table_csv`]).
    ///
    /// # Errors
    /// The CSV writer's (none in practice: it writes to memory).
    pub fn checkpoint_csv(&self, preset: &AttentionPreset) -> Result<Vec<u8>, csv::Error> {
        crate::attention::figures::table_csv(preset, &self.roles, &self.checkpoints, &self.kept)
    }

    /// Files one message of the run.
    pub fn apply(&mut self, msg: Update) {
        match msg {
            Update::Records(records) => records.into_iter().for_each(|r| self.push(r)),
            Update::Progress { step, running } => {
                self.step = Some(step);
                self.running = running;
            }
            Update::Failed(why) => {
                self.failed = Some(why);
                self.running = false;
            }
        }
    }

    fn push(&mut self, r: Record) {
        let Some(i) = self.roles.iter().position(|&x| x == (r.run, r.twin)) else {
            return;
        };
        let s = &mut self.series[i];
        s.distance.push(r.step, r.logit_distance);
        s.train_acc.push(r.step, r.train.accuracy);
        s.val_acc.push(r.step, r.val.accuracy);
        s.train_loss.push(r.step, r.train.loss);
        s.val_loss.push(r.step, r.val.loss);
        if r.train.loss.is_nan() && self.diverged[i].is_none() {
            self.diverged[i] = Some(r.step);
        }
        if self.checkpoints.contains(&r.step) {
            self.kept.push(r.clone());
        }
        self.latest[i] = Some(r);
    }

    /// The latest record of run `run`'s model `twin` (`None`: the base model).
    pub fn latest(&self, run: usize, twin: Option<TwinKind>) -> Option<&Record> {
        let i = self.roles.iter().position(|&x| x == (run, twin))?;
        self.latest[i].as_ref()
    }

    /// The record of that model at checkpoint `step`, once it has arrived.
    pub fn at(&self, run: usize, twin: Option<TwinKind>, step: usize) -> Option<&Record> {
        self.kept
            .iter()
            .find(|r| (r.run, r.twin, r.step) == (run, twin, step))
    }

    /// The logit-distance series of that twin as drawn: (step, log10 of the value, values at or
    /// below the floor at the floor).
    pub fn distance_points(&mut self, run: usize, twin: TwinKind) -> Vec<[f64; 2]> {
        let Some(i) = self.roles.iter().position(|&x| x == (run, Some(twin))) else {
            return Vec::new();
        };
        self.series[i].distance.points().to_vec()
    }

    /// Every model's series as the figures take them, in the run's order.
    pub fn curves(&self) -> Vec<ModelCurves> {
        self.roles
            .iter()
            .zip(&self.series)
            .map(|(&(run, twin), s)| ModelCurves {
                run,
                twin,
                distance: s.distance.raw_points(),
                train_accuracy: s.train_acc.raw_points(),
                val_accuracy: s.val_acc.raw_points(),
                train_loss: s.train_loss.raw_points(),
                val_loss: s.val_loss.raw_points(),
            })
            .collect()
    }

    /// A line per model that diverged, naming it and the step.
    pub fn divergence_lines(&self, preset: &AttentionPreset) -> Vec<String> {
        self.roles
            .iter()
            .zip(&self.diverged)
            .filter_map(|(&(run, twin), at)| {
                at.map(|s| {
                    format!(
                        "{} {} diverged at step {s} (training loss not finite or above 1e4); the \
                         other models go on.",
                        crate::figure::arm_title(preset.runs[run].name()),
                        twin.map_or("base model".into(), |t| format!("{} twin", t.label()))
                    )
                })
            })
            .collect()
    }
}
