//! Axis structure where the activations are (the explainer §7): the memory state `S` after an
//! episode and the reads `r = S·k_a`, each measured against its own random-rotation baseline.
//!
//! The rows of `S` live in key space (`R^{d_k}`), which the loss cannot see: rotating the keys
//! by Q rotates every row, so their axis structure can only come from the optimizer. The reads
//! live in value space (`R^{V_b}`), whose basis the one-hot targets single out, so reads are
//! expected to be heavy-tailed for every arm: they are the task's own privileged basis, shown as
//! a reference beside the key-space numbers.

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

use crate::metrics::{StatBaseline, axis_concentration, mean_excess_kurtosis};
use crate::model::{Episode, ModelError, Workspace};
use crate::rng::{Stream, stream};

/// Held-out episodes the activation statistics use (the first ones of the fixed held-out set),
/// so every measurement over training looks at the same episodes.
pub const ACTIVATION_EPISODES: usize = 64;

/// Upper bound on the rotations of the activation baselines (the preset's
/// `baseline_rotations` if smaller); each statistic averages hundreds of vectors, so its
/// baseline spread is narrow and a few dozen rotations pin it.
pub const ACTIVATION_ROTATIONS: usize = 64;

/// Activation statistics of one key matrix, each beside its random-rotation baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActivationStats {
    /// Mean excess kurtosis of the non-zero rows of `S` (`d_k` coordinates each), against rows
    /// rotated by Haar Q ∈ O(d_k).
    pub s_kurtosis: StatBaseline,
    /// Axis concentration A of the rows of `S` normalised to unit length, against the same
    /// rotations of key space.
    pub s_axis: StatBaseline,
    /// Mean excess kurtosis of the reads `S·k_a` (`V_b` coordinates each), against reads
    /// rotated by Haar Q ∈ O(V_b).
    pub read_kurtosis: StatBaseline,
    /// Number of non-zero rows of `S` measured.
    pub s_rows: usize,
    /// Number of reads measured.
    pub reads: usize,
}

/// Measures [`ActivationStats`] of `w` (`d_k × V`) on `episodes` with `rotations` baseline
/// rotations drawn from `seed`'s activation stream (a fresh copy per statistic, so every key
/// matrix is compared against the same rotations). Uses `ws` for the forward passes.
/// Errors: a degenerate column of `w`. Allocates; O(rotations·(d_k²·rows + V_b²·reads)).
pub fn activation_stats(
    ws: &mut Workspace,
    w: &DMatrix<f64>,
    episodes: &[Episode],
    rotations: usize,
    seed: u64,
) -> Result<ActivationStats, ModelError> {
    let (d, vb) = (ws.config().d_k, ws.config().n_values);
    let (mut rows, mut reads) = (Vec::new(), Vec::new());
    ws.collect_activations(w, episodes, &mut rows, &mut reads)?;
    let rows = DMatrix::from_vec(d, rows.len() / d, rows);
    let mut unit_rows = rows.clone();
    for mut c in unit_rows.column_iter_mut() {
        let n = c.norm();
        c /= n;
    }
    let reads = DMatrix::from_vec(vb, reads.len() / vb, reads);
    let rng = || stream(seed, Stream::Activation);
    Ok(ActivationStats {
        s_kurtosis: StatBaseline::compute(&rows, rotations, &mut rng(), mean_excess_kurtosis),
        s_axis: StatBaseline::compute(&unit_rows, rotations, &mut rng(), axis_concentration),
        read_kurtosis: StatBaseline::compute(&reads, rotations, &mut rng(), mean_excess_kurtosis),
        s_rows: rows.ncols(),
        reads: reads.ncols(),
    })
}
