//! Measurements of a learned key matrix and of a twin pair (numerics §3, §4; the explainer §5).

use nalgebra::DMatrix;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::rng::haar_orthogonal;

/// Axis concentration `A(K) = (1/V) Σ_a Σ_j (k_a)_j⁴` of unit-norm keys `keys` (`d_k × V`,
/// columns of norm 1). Lies in [1/d_k, 1]: 1 for keys on coordinate axes, 1/d_k for keys spread
/// evenly, 3/(d_k+2) in expectation for uniformly random directions. Source: the explainer §5.
/// Returns NaN for V = 0.
pub fn axis_concentration(keys: &DMatrix<f64>) -> f64 {
    keys.iter().map(|x| (x * x) * (x * x)).sum::<f64>() / keys.ncols() as f64
}

/// The isotropic reference value 3/(d_k + 2): the mean of A over uniformly random directions.
pub fn isotropic_axis_concentration(d_k: usize) -> f64 {
    3.0 / (d_k as f64 + 2.0)
}

/// The Gram matrix `G = KᵀK` (`V × V`) of keys `keys` (`d_k × V`). Allocates.
pub fn gram(keys: &DMatrix<f64>) -> DMatrix<f64> {
    keys.tr_mul(keys)
}

/// Gram divergence `‖K′ᵀK′ − KᵀK‖F` (absolute, diagonal included; numerics §3) between two key
/// matrices of equal shape `d_k × V`. O(V²·d_k); allocates the two V × V Gram matrices (see
/// [`gram_divergence_with`]). Panics on a shape mismatch.
pub fn gram_divergence(keys_a: &DMatrix<f64>, keys_b: &DMatrix<f64>) -> f64 {
    let v = keys_a.ncols();
    let mut grams = [DMatrix::zeros(v, v), DMatrix::zeros(v, v)];
    gram_divergence_with(keys_a, keys_b, &mut grams)
}

/// [`gram_divergence`] into `grams` (two `V × V` matrices, overwritten with KᵀK and K′ᵀK′):
/// allocation-free. Each Gram entry is a dot product summed in order over the coordinates, and
/// the squared differences are added over the lower triangle row by row (off-diagonal entries
/// twice). Panics on a shape mismatch.
pub fn gram_divergence_with(
    keys_a: &DMatrix<f64>,
    keys_b: &DMatrix<f64>,
    grams: &mut [DMatrix<f64>; 2],
) -> f64 {
    assert_eq!(
        keys_a.shape(),
        keys_b.shape(),
        "key matrices must have one shape"
    );
    let [ga, gb] = grams;
    crate::linalg::tr_mul_into(ga, keys_a, keys_a);
    crate::linalg::tr_mul_into(gb, keys_b, keys_b);
    let v = keys_a.ncols();
    let mut sum = 0.0;
    for i in 0..v {
        for j in 0..=i {
            let diff = ga[(i, j)] - gb[(i, j)];
            sum += if i == j {
                diff * diff
            } else {
                2.0 * diff * diff
            };
        }
    }
    // The whole difference matrix, for the range-safe norm when the sum left f64's range.
    let diffs = (0..v * v).map(|k| ga[(k % v, k / v)] - gb[(k % v, k / v)]);
    crate::linalg::norm::checked_norm(sum.sqrt(), diffs)
}

/// Orientation divergence `‖W′ − QW‖F / ‖W‖F` (numerics §3) of a twin `w_rot` against `w`, both
/// `d_k × V`, with `q` (`d_k × d_k`). `scratch` (`d_k × V`) receives `QW`; allocation-free.
/// Panics on a shape mismatch.
pub fn orientation_divergence(
    w_rot: &DMatrix<f64>,
    q: &DMatrix<f64>,
    w: &DMatrix<f64>,
    scratch: &mut DMatrix<f64>,
) -> f64 {
    crate::linalg::mul_into(scratch, q, w);
    use crate::linalg::norm::{distance, frobenius};
    distance(w_rot.as_slice(), scratch.as_slice()) / frobenius(w)
}

/// Mean and sample standard deviation (n − 1 denominator; 0 for n = 1; NaN for n = 0), for
/// finite values of any size (numerics §9): the plain formulas where their sums stay in range,
/// a scaled mean and the range-safe norm of the deviations where not.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    use crate::linalg::norm::{checked_norm, in_plain_range};
    let n = xs.len() as f64;
    let mut mean = xs.iter().sum::<f64>() / n;
    if mean.is_infinite() && xs.iter().all(|x| x.is_finite()) {
        // The sum overflowed: the mean of the values scaled by the largest, scaled back.
        let m = xs.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        mean = m * (xs.iter().map(|x| x / m).sum::<f64>() / n);
    }
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let sum_sq = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>();
    if in_plain_range(sum_sq.sqrt()) {
        return (mean, (sum_sq / (n - 1.0)).sqrt());
    }
    let norm = checked_norm(f64::NAN, xs.iter().map(|x| x - mean));
    (mean, norm / (n - 1.0).sqrt())
}

/// The `p`-th percentile (p in [0, 100]) of `sorted` (ascending) by linear interpolation between
/// closest ranks (numpy's default). NaN for an empty slice. Panics if p is outside [0, 100].
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    assert!(
        (0.0..=100.0).contains(&p),
        "percentile {p} outside [0, 100]"
    );
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = p / 100.0 * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (pos - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The random-rotation baseline of A for one learned key matrix (numerics §4, the explainer §5):
/// A(QK) over many Haar rotations Q, which keep the keys' intrinsic geometry (their Gram matrix)
/// and change only their orientation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RotationBaseline {
    /// A(K) of the learned keys.
    pub axis_concentration: f64,
    /// Mean of A(QK).
    pub mean: f64,
    /// Sample standard deviation of A(QK).
    pub sd: f64,
    /// 5th percentile of A(QK).
    pub p5: f64,
    /// 95th percentile of A(QK).
    pub p95: f64,
    /// `A(K) − mean`.
    pub excess: f64,
    /// `excess / sd` (±inf or NaN if sd = 0).
    pub z: f64,
    /// Number of rotations drawn.
    pub rotations: usize,
}

impl RotationBaseline {
    /// Draws `rotations` Haar Q's (`d_k × d_k`) from `rng` and summarises A(QK) for unit keys
    /// `keys` (`d_k × V`). Allocates; O(rotations·d_k²·(d_k + V)).
    pub fn compute(keys: &DMatrix<f64>, rotations: usize, rng: &mut ChaCha8Rng) -> Self {
        let s = StatBaseline::compute(keys, rotations, rng, axis_concentration);
        Self {
            axis_concentration: s.value,
            mean: s.mean,
            sd: s.sd,
            p5: s.p5,
            p95: s.p95,
            excess: s.excess,
            z: s.z,
            rotations,
        }
    }

    /// Whether A(K) lies outside the baseline's 5–95% band.
    pub fn outside_band(&self) -> bool {
        self.axis_concentration < self.p5 || self.axis_concentration > self.p95
    }
}

/// Excess kurtosis (Fisher's definition, population moments) of the coordinates of one vector:
/// `m4 / m2² − 3` with `m_k` the mean of `(x_i − x̄)^k`. 0 in expectation for i.i.d. Gaussian
/// coordinates (as n → ∞), large when a few coordinates dominate; a one-hot vector of length n
/// gives `(n² − 6n + 6)/(n − 1)`. NaN when every coordinate is equal (or `x` is empty).
/// Source: the explainer §7 (the transformer outlier-channel statistic).
pub fn excess_kurtosis(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let (mut m2, mut m4) = (0.0, 0.0);
    for v in x {
        let d2 = (v - mean) * (v - mean);
        m2 += d2;
        m4 += d2 * d2;
    }
    let (m2, m4) = (m2 / n, m4 / n);
    if m2 > 0.0 {
        m4 / (m2 * m2) - 3.0
    } else {
        f64::NAN
    }
}

/// Mean [`excess_kurtosis`] over the columns of `x` (`n × count`, one vector per column),
/// skipping columns whose kurtosis is undefined (all coordinates equal). NaN if none is defined.
pub fn mean_excess_kurtosis(x: &DMatrix<f64>) -> f64 {
    let (mut sum, mut count) = (0.0, 0usize);
    for col in x.column_iter() {
        let k = excess_kurtosis(col.as_slice());
        if k.is_finite() {
            sum += k;
            count += 1;
        }
    }
    if count == 0 {
        f64::NAN
    } else {
        sum / count as f64
    }
}

/// A statistic of a set of vectors against its random-rotation baseline: `stat(X)` beside the
/// distribution of `stat(QX)` over Haar rotations Q of the vectors' space. The generalisation of
/// [`RotationBaseline`] (numerics §4) to any statistic, used for the memory and its reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatBaseline {
    /// `stat(X)` in the coordinates as learned.
    pub value: f64,
    /// Mean of `stat(QX)`.
    pub mean: f64,
    /// Sample standard deviation of `stat(QX)`.
    pub sd: f64,
    /// 5th percentile of `stat(QX)`.
    pub p5: f64,
    /// 95th percentile of `stat(QX)`.
    pub p95: f64,
    /// `value − mean`.
    pub excess: f64,
    /// `excess / sd` (±inf or NaN if sd = 0).
    pub z: f64,
}

impl StatBaseline {
    /// Draws `rotations` Haar Q's (`n × n`) from `rng` and summarises `stat(QX)` for `x`
    /// (`n × count`, one vector per column). Allocates; O(rotations·n²·(n + count)).
    pub fn compute(
        x: &DMatrix<f64>,
        rotations: usize,
        rng: &mut ChaCha8Rng,
        stat: impl Fn(&DMatrix<f64>) -> f64,
    ) -> Self {
        let value = stat(x);
        let mut rotated = DMatrix::zeros(x.nrows(), x.ncols());
        let mut samples: Vec<f64> = (0..rotations)
            .map(|_| {
                haar_orthogonal(rng, x.nrows()).mul_to(x, &mut rotated);
                stat(&rotated)
            })
            .collect();
        samples.sort_by(f64::total_cmp);
        let (mean, sd) = mean_sd(&samples);
        Self {
            value,
            mean,
            sd,
            p5: percentile(&samples, 5.0),
            p95: percentile(&samples, 95.0),
            excess: value - mean,
            z: (value - mean) / sd,
        }
    }
}
