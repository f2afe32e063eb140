//! Seeded random streams (numerics §1): every consumer of randomness reads its own ChaCha8 stream
//! derived from the preset seed, so changing how much one consumer draws never shifts another.

use nalgebra::DMatrix;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

/// The independent random streams of one experiment seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Stream {
    /// The initial key matrix W0.
    InitialWeights = 1,
    /// The gauge rotation Q of the paired runs.
    Rotation = 2,
    /// Training episodes.
    Training = 3,
    /// The fixed held-out episodes.
    HeldOut = 4,
    /// Rotations of the random-rotation baseline (numerics §4).
    Baseline = 5,
    /// The perturbation of the noise twins.
    Noise = 6,
    /// Rotations of the memory and read baselines ([`crate::experiment::activations`]).
    Activation = 7,
    /// The training/validation split of the attention task ([`crate::attention::data`]).
    AttentionSplit = 8,
    /// The attention model's initial weights.
    AttentionInit = 9,
    /// The per-head rotations A_h of the attention gauge twins.
    AttentionRotation = 10,
    /// The perturbation of the attention noise twins.
    AttentionNoise = 11,
}

/// A ChaCha8 generator for `stream` of `seed`: the seed picks the key, the stream the ChaCha
/// stream id, so streams never overlap.
pub fn stream(seed: u64, stream: Stream) -> ChaCha8Rng {
    stream_id(seed, stream as u64)
}

/// The ChaCha8 generator of `seed` on stream number `id` (each consumer owns its own id).
pub fn stream_id(seed: u64, id: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(id);
    rng
}

/// A `rows × cols` matrix of i.i.d. N(0, std²) entries, drawn in column-major order.
pub fn gaussian_matrix(rng: &mut ChaCha8Rng, rows: usize, cols: usize, std: f64) -> DMatrix<f64> {
    DMatrix::from_fn(rows, cols, |_, _| {
        std * rng.sample::<f64, _>(StandardNormal)
    })
}

/// A Haar-random `d × d` orthogonal matrix (numerics §3): QR of a standard Gaussian matrix, with
/// column j of Q multiplied by sign(R_jj) so the distribution is exactly Haar. det Q = ±1.
/// (nalgebra's QR already returns R with a non-negative diagonal, so the fix is a safeguard
/// that keeps the result Haar whatever convention the factorisation follows.)
pub fn haar_orthogonal(rng: &mut ChaCha8Rng, d: usize) -> DMatrix<f64> {
    let qr = gaussian_matrix(rng, d, d, 1.0).qr();
    let (mut q, r) = (qr.q(), qr.r());
    for j in 0..d {
        if r[(j, j)] < 0.0 {
            q.column_mut(j).neg_mut();
        }
    }
    q
}
