//! The zoo's convex reference (numerics §9, the paper's Table 2, first row): per problem
//! instance, the minimum-nuclear-norm matrix the measurements allow
//! ([`crate::sensing::nuclear`]), reported beside the rules as a reference and never as one of
//! them.

use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};

use super::{Outcome, RunResult, ZooPreset, ZooSchedule};
use crate::linalg::norm::norm;
use crate::sensing::nuclear::{
    MAX_ITERATIONS, TOLERANCE, min_nuclear_norm, misfit, nuclear_norm, recovery_of,
};
use crate::sensing::{SensingProblem, effective_rank};

/// The name a reference row carries in the `rule` column of `zoo.csv` and in the tables.
pub const REFERENCE: &str = "min_nuclear_norm";
/// The class column of a reference row: not one of the two classes of rules.
pub const REFERENCE_CLASS: &str = "reference";
/// A reference solve counts as recovering X* when its recovery is below this.
pub const RECOVERED: f64 = 1e-6;

/// The paper's convex reference per seed (its own generator): seed, recovery, effective rank.
pub const PAPER_REFERENCE: [(u64, f64, f64); 3] =
    [(42, 0.0, 2.96), (123, 0.0, 2.94), (456, 0.1005, 3.99)];

/// One problem instance's reference solve: indices into the preset's sizes and τ values, and
/// the problem seed (the instance does not depend on the factors' init scale).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReferenceCell {
    /// Index of the problem size n.
    pub size: usize,
    /// Index of the spectral-tail amplitude.
    pub tau: usize,
    /// Problem seed.
    pub seed: u64,
}

/// What a reference solve reports besides [`RunResult`]'s shared columns.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReferenceStats {
    /// Last primal residual `‖X − Z‖F`.
    pub primal: f64,
    /// Last dual residual `‖Z_new − Z‖F`.
    pub dual: f64,
    /// `‖A(X) − y‖ / ‖y‖` of the reported `P(X)`.
    pub feasibility: f64,
    /// `‖X‖*` of the reported matrix.
    pub nuclear_norm: f64,
    /// `‖X*‖*` of the target.
    pub target_nuclear_norm: f64,
}

/// Whether `run` is a convex-reference row, not a rule's run.
pub fn is_reference(run: &RunResult) -> bool {
    run.reference.is_some()
}

impl ZooPreset {
    /// The instances whose convex reference this preset solves (none unless `reference`): one
    /// per size, τ and seed, in that order, after every cell of [`ZooPreset::cells`].
    pub fn references(&self) -> Vec<ReferenceCell> {
        if !self.reference {
            return Vec::new();
        }
        let mut out = Vec::new();
        for size in 0..self.size_values().len() {
            for tau in 0..self.tau_values().len() {
                for s in 0..self.seeds as u64 {
                    out.push(ReferenceCell {
                        size,
                        tau,
                        seed: self.seed.wrapping_add(s),
                    });
                }
            }
        }
        out
    }

    /// Runs (cells) and reference solves together: the length of [`ZooPreset::cells`] plus
    /// that of [`ZooPreset::references`], the units a zoo reports progress in and shards split.
    pub fn units(&self) -> usize {
        self.cells().len() + self.references().len()
    }

    /// Solves the convex reference of `cell` on `problem` (its instance) and reports it as a
    /// row: `steps` the iterations, outcome [`Outcome::Converged`] or [`Outcome::Budget`] (the
    /// cap), `train_loss` the sensing loss of the reported matrix, its recovery and effective
    /// rank, balancedness 0 (its balanced factors `UΣ^½`, `VΣ^½` have none), rate 0.
    /// `A Aᵀ` singular (m > n²) gives a NaN row marked [`Outcome::Diverged`].
    pub fn run_reference(
        &self,
        problem: &SensingProblem,
        cell: ReferenceCell,
        cancel: &AtomicBool,
    ) -> RunResult {
        let solve = min_nuclear_norm(problem, MAX_ITERATIONS, TOLERANCE, cancel);
        let nan = f64::NAN;
        let (outcome, steps, x) = match &solve {
            Some(s) if s.cancelled => (Outcome::Cancelled, s.iterations, Some(&s.x)),
            Some(s) if s.converged => (Outcome::Converged, s.iterations, Some(&s.x)),
            Some(s) => (Outcome::Budget, s.iterations, Some(&s.x)),
            None => (Outcome::Diverged, 0, None),
        };
        let of = |f: &dyn Fn(&nalgebra::DMatrix<f64>) -> f64| x.map_or(nan, f);
        let m = problem.m() as f64;
        let stats = ReferenceStats {
            primal: solve.as_ref().map_or(nan, |s| s.primal),
            dual: solve.as_ref().map_or(nan, |s| s.dual),
            feasibility: of(&|x| misfit(problem, x) / norm(&problem.y)),
            nuclear_norm: of(&nuclear_norm),
            target_nuclear_norm: nuclear_norm(&problem.target),
        };
        RunResult {
            rule: REFERENCE.into(),
            equivariant: true,
            lr: 0.0,
            seed: cell.seed,
            tau: problem.cfg.tau,
            steps,
            extra_gradients: 0,
            outcome,
            train_loss: of(&|x| misfit(problem, x).powi(2) / m),
            recovery: of(&|x| recovery_of(problem, x)),
            erank: of(&effective_rank),
            balancedness: if x.is_some() { 0.0 } else { nan },
            twin_drift: None,
            n: (!self.sizes.is_empty()).then(|| self.size_values()[cell.size]),
            init: None,
            schedule: ZooSchedule::Paper,
            reference: Some(stats),
            readings: Vec::new(),
        }
    }

    /// Checks `run`, read back from disk, as the reference solve of `cell`: a reference row
    /// with rate 0, the cell's seed, τ and size, at most [`MAX_ITERATIONS`] iterations,
    /// finite non-negative numbers when it finished. Errors name the instance and the field.
    pub fn check_reference(&self, cell: ReferenceCell, run: &RunResult) -> Result<(), String> {
        let tau = self.tau_values().get(cell.tau).copied().unwrap_or(f64::NAN);
        let n = (!self.sizes.is_empty()).then(|| self.size_values()[cell.size]);
        let name = format!("{REFERENCE} of seed {}, τ {tau}", cell.seed);
        let wrong =
            |field: &str, message: String| Err(format!("{name}: field `{field}`: {message}"));
        let Some(stats) = &run.reference else {
            return wrong(
                "reference",
                "missing: this cell is a reference solve".into(),
            );
        };
        if run.rule != REFERENCE || !run.equivariant || run.lr != 0.0 || run.twin_drift.is_some() {
            return wrong("rule", format!("{:?} is not a reference row", run.rule));
        }
        if run.seed != cell.seed || run.tau.to_bits() != tau.to_bits() || run.n != n {
            return wrong(
                "seed",
                format!(
                    "seed {}, τ {}, n {:?} where the preset's instance has {}, {tau}, {n:?}",
                    run.seed, run.tau, run.n, cell.seed
                ),
            );
        }
        if run.init.is_some() || !run.schedule.is_paper() {
            return wrong("init", "a reference row has no init or schedule".into());
        }
        if run.steps > MAX_ITERATIONS {
            return wrong(
                "steps",
                format!("{} iterations; the cap is {MAX_ITERATIONS}", run.steps),
            );
        }
        if matches!(run.outcome, Outcome::Interpolated) {
            return wrong("outcome", "Interpolated is a rule's outcome".into());
        }
        if matches!(run.outcome, Outcome::Converged | Outcome::Budget) {
            for (field, x) in [
                ("train_loss", run.train_loss),
                ("recovery", run.recovery),
                ("erank", run.erank),
                ("balancedness", run.balancedness),
                ("primal", stats.primal),
                ("dual", stats.dual),
                ("feasibility", stats.feasibility),
                ("nuclear_norm", stats.nuclear_norm),
                ("target_nuclear_norm", stats.target_nuclear_norm),
            ] {
                if !(x.is_finite() && x >= 0.0) {
                    return wrong(field, format!("{x} is not finite and ≥ 0"));
                }
            }
        }
        Ok(())
    }
}
