//! Matched budget vs matched loss (the explainer §6): compare arms at equal step counts and at
//! the first step each reaches a ladder of held-out loss levels, so a difference in A(K) can be
//! told apart as a representation effect (it survives matched loss) or a speed effect (it does
//! not).
//!
//! One pass over the run: at every held-out evaluation each arm's loss is recorded and its keys
//! measured (a crossing can only fall on an evaluation), and the ladder and the crossing steps
//! are read from those evaluations afterwards. An arm's evaluations depend on no other arm, so
//! the page runs the arms apart and joins their evaluations ([`MatchedTask`]).

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use super::paired::{BASE, PairedRun};
use crate::live::{Stop, Task, undeal};
use crate::preset::Preset;

/// One arm measured at one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchedRow {
    /// `"budget"` (every arm at the reference arm's crossing step) or `"loss"` (each arm at its
    /// own crossing step).
    pub kind: String,
    /// The held-out loss level of the ladder.
    pub level: f64,
    /// Arm name.
    pub arm: String,
    /// Step measured (`None` if the arm never reached the level).
    pub step: Option<usize>,
    /// Held-out loss of the run from W0 at that step.
    pub heldout_loss: f64,
    /// A(K) − random-rotation baseline mean (run from W0).
    pub excess: f64,
    /// The baseline's standard deviation.
    pub baseline_sd: f64,
    /// Gram divergence of the twins.
    pub gram_div: f64,
    /// Twin orientation divergence.
    pub orientation_div: f64,
}

/// A verdict for one arm against the reference arm at the deepest shared level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchedVerdict {
    /// Arm name.
    pub arm: String,
    /// Excess minus the reference's at matched budget.
    pub diff_budget: f64,
    /// Excess minus the reference's at matched loss.
    pub diff_loss: f64,
    /// Mean baseline sd of the two arms (the yardstick).
    pub yardstick: f64,
    /// "representation effect", "speed effect" or "no effect beyond the baseline spread".
    pub label: String,
}

/// Everything the matched comparison reports.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchedReport {
    /// The reference arm (the preset's first).
    pub reference: String,
    /// The ladder of held-out loss levels, from the start towards the best shared loss.
    pub levels: Vec<f64>,
    /// Rows for every level, arm and kind.
    pub rows: Vec<MatchedRow>,
    /// One verdict per non-reference arm, at the deepest level.
    pub verdicts: Vec<MatchedVerdict>,
    /// Every arm at every held-out evaluation, arm by arm in preset order: what the ladder and
    /// the rows are read from (and how parts of the comparison run apart are joined). Never in
    /// `matched.json` ([`crate::experiment::report::write_matched`]); not serialized when
    /// empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evaluations: Vec<Evaluation>,
}

/// One arm at one held-out evaluation of the run (every `eval_every` steps and after the last).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    /// Arm name.
    pub arm: String,
    /// The step.
    pub step: usize,
    /// Held-out loss of the run from W0 (`None` once the arm has diverged).
    pub heldout_loss: Option<f64>,
    /// The keys measured there (`None` if the arm could not be).
    pub measure: Option<Measure>,
}

/// The keys of one arm measured at one step.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measure {
    /// Held-out loss of the run from W0.
    pub heldout_loss: f64,
    /// A(K) − random-rotation baseline mean (run from W0).
    pub excess: f64,
    /// The baseline's standard deviation.
    pub baseline_sd: f64,
    /// Gram divergence of the twins.
    pub gram_div: f64,
    /// Twin orientation divergence.
    pub orientation_div: f64,
}

/// Runs the comparison on `preset` over its `steps` with `n_levels` (1..=50) loss levels spaced
/// evenly between the initial held-out loss and the best loss every arm reaches (the highest of
/// the arms' minima). Errors: an invalid preset, a bad level count, or no arm improving.
pub fn matched_report(preset: &Preset, n_levels: usize) -> Result<MatchedReport, String> {
    check_levels(n_levels)?;
    ladder(evaluate_arms(preset)?, n_levels)
}

fn check_levels(n_levels: usize) -> Result<(), String> {
    if !(1..=50).contains(&n_levels) {
        return Err(format!("{n_levels} levels; allowed 1..=50"));
    }
    Ok(())
}

/// Every arm of `preset` at every held-out evaluation, arm by arm: one pass of the run, which
/// measures the keys wherever it evaluates (a crossing can only happen there). Errors: an
/// invalid preset.
pub fn evaluate_arms(preset: &Preset) -> Result<Vec<Evaluation>, String> {
    let mut run = PairedRun::new(preset).map_err(|e| e.to_string())?;
    let names: Vec<String> = run.arms().iter().map(|a| a.name().to_string()).collect();
    let mut per_arm: Vec<Vec<Evaluation>> = vec![Vec::new(); names.len()];
    let mut evaluate = |run: &mut PairedRun| {
        let step = run.step_index();
        let held = run.evaluate_heldout();
        let snap = run.snapshot();
        let baselines = run.baselines();
        for (a, (name, out)) in names.iter().zip(&mut per_arm).enumerate() {
            let measure = (|| {
                let r = snap.iter().find(|r| r.arm == a)?;
                let b = baselines[a].as_ref()?;
                Some(Measure {
                    heldout_loss: held[a]?.loss[BASE],
                    excess: b[BASE].excess,
                    baseline_sd: b[BASE].sd,
                    gram_div: r.gram_div,
                    orientation_div: r.orientation_div,
                })
            })();
            out.push(Evaluation {
                arm: name.clone(),
                step,
                heldout_loss: held[a].map(|h| h.loss[BASE]),
                measure,
            });
        }
    };
    for s in 0..preset.steps {
        if s % preset.eval_every == 0 {
            evaluate(&mut run);
        }
        run.step();
    }
    evaluate(&mut run);
    Ok(per_arm.into_iter().flatten().collect())
}

/// The comparison read from `evaluations` ([`evaluate_arms`]; the arms in the order they
/// first appear, the first the reference) at `n_levels` levels. Errors: a bad level count, no
/// evaluation, or no level below the start that every arm reaches.
pub fn ladder(evaluations: Vec<Evaluation>, n_levels: usize) -> Result<MatchedReport, String> {
    check_levels(n_levels)?;
    let mut names: Vec<String> = Vec::new();
    for e in &evaluations {
        if !names.contains(&e.arm) {
            names.push(e.arm.clone());
        }
    }
    let arms = names.len();
    let of = |a: usize| {
        let name = &names[a];
        evaluations.iter().filter(move |e| e.arm == *name)
    };
    let curves: Vec<Vec<(usize, f64)>> = (0..arms)
        .map(|a| {
            of(a)
                .filter_map(|e| Some((e.step, e.heldout_loss?)))
                .collect()
        })
        .collect();
    let start = curves
        .first()
        .and_then(|c| c.first())
        .map(|c| c.1)
        .ok_or("no held-out evaluation")?;
    let best_shared = curves
        .iter()
        .map(|c| c.iter().map(|x| x.1).fold(f64::INFINITY, f64::min))
        .fold(f64::NEG_INFINITY, f64::max);
    if best_shared.is_nan() || best_shared >= start {
        return Err("no loss level below the start is reached by every arm".into());
    }
    let levels: Vec<f64> = (1..=n_levels)
        .map(|i| start + (best_shared - start) * i as f64 / n_levels as f64)
        .collect();
    let crossing = |arm: usize, level: f64| curves[arm].iter().find(|x| x.1 <= level).map(|x| x.0);
    let at = |step: usize, arm: usize| -> Option<Measure> {
        of(arm).find(|e| e.step == step).and_then(|e| e.measure)
    };
    let row = |kind: &str, level: f64, arm: usize, step: Option<usize>| {
        let m = step.and_then(|s| at(s, arm));
        MatchedRow {
            kind: kind.into(),
            level,
            arm: names[arm].clone(),
            step,
            heldout_loss: m.map_or(f64::NAN, |m| m.heldout_loss),
            excess: m.map_or(f64::NAN, |m| m.excess),
            baseline_sd: m.map_or(f64::NAN, |m| m.baseline_sd),
            gram_div: m.map_or(f64::NAN, |m| m.gram_div),
            orientation_div: m.map_or(f64::NAN, |m| m.orientation_div),
        }
    };
    let mut rows = Vec::new();
    for &level in &levels {
        let reference_step = crossing(0, level);
        for a in 0..arms {
            rows.push(row("budget", level, a, reference_step));
        }
        for a in 0..arms {
            rows.push(row("loss", level, a, crossing(a, level)));
        }
    }
    let deepest = *levels.last().expect("at least one level");
    let find = |kind: &str, arm: &str| {
        rows.iter()
            .find(|r| r.kind == kind && r.level.to_bits() == deepest.to_bits() && r.arm == arm)
            .cloned()
    };
    let verdicts = names
        .iter()
        .skip(1)
        .filter_map(|name| {
            let (rb, ab) = (find("budget", &names[0])?, find("budget", name)?);
            let (rl, al) = (find("loss", &names[0])?, find("loss", name)?);
            let diff_budget = ab.excess - rb.excess;
            let diff_loss = al.excess - rl.excess;
            let yardstick = (al.baseline_sd + rl.baseline_sd) / 2.0;
            let label = if diff_loss.abs() > yardstick {
                "representation effect"
            } else if diff_budget.abs() > yardstick {
                "speed effect"
            } else {
                "no effect beyond the baseline spread"
            };
            Some(MatchedVerdict {
                arm: name.clone(),
                diff_budget,
                diff_loss,
                yardstick,
                label: label.into(),
            })
        })
        .collect();
    Ok(MatchedReport {
        reference: names[0].clone(),
        levels,
        rows,
        verdicts,
        evaluations,
    })
}

impl MatchedReport {
    /// Checks a report read back from disk (the app's saved comparison) as one of `preset`
    /// (which must be valid): the reference is the preset's first arm; 1..=50 finite levels;
    /// every row of kind "budget" or "loss" at one of the levels, for an arm of the preset, at a
    /// step within the run, with finite numbers (held-out loss and divergences ≥ 0) where it
    /// was measured and NaN where not; every verdict for an arm of the preset with finite
    /// differences and yardstick; every evaluation for an arm of the preset at a step within
    /// the run, its numbers finite and in the rows' ranges. Errors name the row, verdict or
    /// evaluation and the field.
    pub fn check(&self, preset: &Preset) -> Result<(), String> {
        preset.validate().map_err(|e| format!("the preset's {e}"))?;
        let names: Vec<&str> = preset.arms.iter().map(|a| a.arm_name()).collect();
        if names.first() != Some(&self.reference.as_str()) {
            return Err(format!(
                "reference {:?} is not the preset's first arm",
                self.reference
            ));
        }
        if !(1..=50).contains(&self.levels.len()) || self.levels.iter().any(|l| !l.is_finite()) {
            return Err(format!("levels {:?}: 1..=50 finite values", self.levels));
        }
        for (i, r) in self.rows.iter().enumerate() {
            let bad = |m: String| Err(format!("row {i} ({} {}): {m}", r.kind, r.arm));
            if !matches!(r.kind.as_str(), "budget" | "loss") || !names.contains(&r.arm.as_str()) {
                return bad("not a kind and arm of this comparison".into());
            }
            if !self.levels.iter().any(|l| l.to_bits() == r.level.to_bits()) {
                return bad(format!("level {} is not one of the levels", r.level));
            }
            if r.step.is_some_and(|s| s > preset.steps) {
                return bad(format!("step {:?} is past the run's end", r.step));
            }
            for (field, x, lo) in [
                ("heldout_loss", r.heldout_loss, 0.0),
                ("excess", r.excess, -2.0),
                ("baseline_sd", r.baseline_sd, 0.0),
                ("gram_div", r.gram_div, 0.0),
                ("orientation_div", r.orientation_div, 0.0),
            ] {
                // A row whose arm was not measured holds NaN.
                if !(x.is_nan() || (x.is_finite() && x >= lo)) {
                    return bad(format!("field `{field}`: {x} is out of range"));
                }
            }
        }
        for (i, e) in self.evaluations.iter().enumerate() {
            let bad = |m: String| Err(format!("evaluation {i} ({} at {}): {m}", e.arm, e.step));
            if !names.contains(&e.arm.as_str()) || e.step > preset.steps {
                return bad("not an arm and step of this comparison".into());
            }
            let m = e.measure.as_ref();
            for (field, x, lo) in [
                ("heldout_loss", e.heldout_loss, 0.0),
                ("measure.heldout_loss", m.map(|m| m.heldout_loss), 0.0),
                ("measure.excess", m.map(|m| m.excess), -2.0),
                ("measure.baseline_sd", m.map(|m| m.baseline_sd), 0.0),
                ("measure.gram_div", m.map(|m| m.gram_div), 0.0),
                ("measure.orientation_div", m.map(|m| m.orientation_div), 0.0),
            ] {
                if x.is_some_and(|x| !(x.is_finite() && x >= lo)) {
                    return bad(format!("field `{field}`: {x:?} is out of range"));
                }
            }
        }
        for v in &self.verdicts {
            let finite = [v.diff_budget, v.diff_loss, v.yardstick]
                .iter()
                .all(|x| x.is_finite());
            if !names.contains(&v.arm.as_str()) || !finite {
                return Err(format!(
                    "verdict for {:?}: not an arm of the preset, or a non-finite number",
                    v.arm
                ));
            }
        }
        Ok(())
    }
}

/// The matched comparison as data, for a thread or a Web Worker: the preset at `levels` loss
/// levels ([`matched_report`]), one progress item per arm. The page deals its arms over its
/// workers: an arm's run depends on no other arm's, and the ladder is read from every arm's
/// evaluations once they are joined.
#[derive(Serialize, Deserialize)]
pub struct MatchedTask {
    /// The preset compared.
    pub preset: Preset,
    /// How many loss levels.
    pub levels: usize,
}

impl Task for MatchedTask {
    type Output = Result<MatchedReport, Stop>;
    const KIND: &'static str = "matched";

    fn run(self, progress: &(dyn Fn() + Sync), _cancel: &AtomicBool) -> Self::Output {
        let r = matched_report(&self.preset, self.levels).map_err(Stop::Failed);
        self.preset.arms.iter().for_each(|_| progress());
        r
    }

    /// The preset's arms dealt round-robin, each part a preset of its arms (the shared start,
    /// rotation and episodes come from the seed, so an arm runs alike alone).
    fn split(self, n: usize) -> Vec<Self> {
        let n = n.clamp(1, self.preset.arms.len().max(1));
        (0..n)
            .map(|k| {
                let mut preset = self.preset.clone();
                preset.arms = self
                    .preset
                    .arms
                    .iter()
                    .skip(k)
                    .step_by(n)
                    .cloned()
                    .collect();
                MatchedTask {
                    preset,
                    levels: self.levels,
                }
            })
            .collect()
    }

    /// Every arm's evaluations dealt back into preset order and the ladder read from them
    /// ([`ladder`]), as the whole comparison reads it.
    fn merge(parts: Vec<Self::Output>) -> Self::Output {
        let parts: Vec<MatchedReport> = parts.into_iter().collect::<Result<_, _>>()?;
        let levels = parts.first().map_or(0, |p| p.levels.len());
        let dealt = parts
            .into_iter()
            .map(|p| {
                let mut arms: Vec<Vec<Evaluation>> = Vec::new();
                for e in p.evaluations {
                    match arms.last_mut() {
                        Some(arm) if arm[0].arm == e.arm => arm.push(e),
                        _ => arms.push(vec![e]),
                    }
                }
                arms
            })
            .collect();
        let evaluations = undeal(dealt).into_iter().flatten().collect();
        ladder(evaluations, levels).map_err(Stop::Failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The page deals the arms over its workers: every split, run apart and merged, gives the
    /// whole comparison bit for bit (rows, verdicts and evaluations), more parts than arms
    /// included; the whole reads its crossings where the arms were evaluated.
    #[test]
    fn a_matched_comparison_split_over_workers_merges_to_the_whole_bit_for_bit() {
        let mut preset = Preset::load("default").unwrap();
        preset.steps = 150;
        preset.eval_every = 10;
        let arms = preset.arms.len();
        assert!(arms >= 3, "{arms} arms");
        let task = || MatchedTask {
            preset: preset.clone(),
            levels: 3,
        };
        let run = |t: MatchedTask| t.run(&|| {}, &AtomicBool::new(false));
        let whole = run(task()).unwrap();
        assert_eq!(whole.rows.len(), 3 * 2 * arms);
        assert_eq!(whole.evaluations.len(), arms * (150 / 10 + 1));
        for r in whole.rows.iter().filter(|r| r.step.is_some()) {
            assert!(r.step.unwrap() % 10 == 0 && r.excess.is_finite(), "{r:?}");
        }
        for n in [1, 2, 3, arms + 2] {
            let parts = task().split(n);
            assert_eq!(parts.len(), n.min(arms));
            let merged = MatchedTask::merge(parts.into_iter().map(run).collect()).unwrap();
            assert_eq!(format!("{merged:?}"), format!("{whole:?}"), "{n} parts");
        }
        // A saved comparison is checked with its evaluations (the verdicts, left out, are not
        // all finite after 150 steps); the file leaves them out.
        let mut saved = whole.clone();
        saved.verdicts.clear();
        saved.check(&preset).unwrap();
        let mut tampered = saved.clone();
        tampered.evaluations[4].heldout_loss = Some(-1.0);
        let err = tampered.check(&preset).unwrap_err();
        assert!(
            err.starts_with("evaluation 4 (") && err.contains("heldout_loss"),
            "{err}"
        );
        tampered.evaluations[4] = Evaluation {
            arm: "nobody".into(),
            ..whole.evaluations[4].clone()
        };
        assert!(tampered.check(&preset).unwrap_err().contains("not an arm"));
        let text = serde_json::to_string(&MatchedReport {
            evaluations: Vec::new(),
            ..whole.clone()
        })
        .unwrap();
        assert!(
            !text.contains("evaluations") && text.contains("verdicts"),
            "{text}"
        );
        let failed = MatchedTask::merge(vec![Ok(whole), Err(Stop::Cancelled)]);
        assert_eq!(failed, Err(Stop::Cancelled));
    }
}
