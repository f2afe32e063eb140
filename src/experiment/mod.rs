//! Experiments built on the model, the optimizers and the metrics: paired runs, seed sweeps and
//! their file outputs. Headless: nothing here knows about the GUI.

pub mod activations;
pub mod check;
pub mod figures;
pub mod live;
pub mod matched;
pub mod paired;
pub mod points;
pub mod report;
pub mod run;
pub mod sweep;

pub use activations::{ActivationStats, activation_stats};
pub use paired::{Arm, ArmStatus, BASE, HeldOut, PairedRun, ROTATED, StepRecord};
pub use points::{
    AdamEps, DkPoint, EpsPoint, KeyDim, Point, PointAxis, PointsTask, check_points, points_sweep,
    scaled_to_dk, with_adam_eps,
};
pub use run::{MAX_OUTPUT_BYTES, RunOptions, Summary, run_to_dir};
pub use sweep::{
    ArmAggregate, SeedArm, SweepError, SweepResult, SweepTask, assemble_sweep, check_seed,
    run_seed_until, sweep, sweep_seeds, sweep_until,
};
