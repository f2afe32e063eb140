//! Experiments built on the model, the optimizers and the metrics: paired runs, seed sweeps and
//! their file outputs. Headless: nothing here knows about the GUI.

pub mod activations;
pub mod figures;
pub mod matched;
pub mod paired;
pub mod report;
pub mod run;
pub mod sweep;

pub use activations::{ActivationStats, activation_stats};
pub use paired::{Arm, ArmStatus, BASE, HeldOut, PairedRun, ROTATED, StepRecord};
pub use run::{RunOptions, Summary, run_to_dir};
pub use sweep::{
    ArmAggregate, DkPoint, EpsPoint, SeedArm, SweepError, SweepResult, assemble_sweep,
    check_dk_points, check_eps_points, check_seed, dk_sweep, eps_sweep, run_seed_until,
    scaled_to_dk, sweep, sweep_seeds, sweep_until, with_adam_eps,
};
