//! Euclidean norms that neither underflow nor overflow for any finite input (numerics §9).
//!
//! The plain `√(Σ xᵢ²)` is kept wherever its sum of squares lies safely inside f64's normal
//! range, so the bits there are those of the plain formula; only outside it is the sum redone
//! scaled by the largest magnitude, `m·√(Σ (xᵢ/m)²)`. This is the split of Blue's algorithm,
//! which LAPACK's `dnrm2` uses since 3.10: no scaling for mid-range values, scaling for tiny or
//! huge ones.

use nalgebra::DMatrix;

/// The smallest norm whose plain sum of squares is trusted: at `Σx² ≥ 2⁻⁹⁸²`, the squares that
/// underflowed (each off by at most 2⁻¹⁰⁷⁵) change the sum of up to 2⁴⁰ terms by at most half an
/// ulp. `2⁻⁴⁹¹ ≈ 1.6e-148`.
pub const PLAIN_MIN: f64 = f64::from_bits((1023 - 491) << 52);

/// Whether a norm computed plainly as `plain = √(Σ x²)` is exact to rounding: finite and at
/// least [`PLAIN_MIN`]. The one test of the plain range ([`checked_norm`], and callers that keep
/// their own formula in range, such as `metrics::mean_sd`).
#[inline]
pub fn in_plain_range(plain: f64) -> bool {
    plain.is_finite() && plain >= PLAIN_MIN
}

/// `√(Σ xᵢ²)` of `xs`, summed in order; for finite input it never underflows to 0, and is ∞
/// only when the norm itself is beyond `f64::MAX` (see the module documentation). NaN if an entry is NaN, ∞ if one is infinite, 0 for
/// an empty slice. Allocation-free.
#[inline]
pub fn norm(xs: &[f64]) -> f64 {
    let plain = xs.iter().map(|x| x * x).sum::<f64>().sqrt();
    checked_norm(plain, xs.iter().copied())
}

/// `plain` (a norm computed by some plain `√(Σ x²)`) when it is finite and at least
/// [`PLAIN_MIN`]; otherwise the norm of `xs` redone with scaling. So a caller keeps the bits of
/// its own summation order in range and gets a correct value out of it. Two passes over `xs`
/// only in the scaled case. NaN if an entry is NaN, ∞ if one is infinite.
#[inline]
pub fn checked_norm<I: Iterator<Item = f64> + Clone>(plain: f64, xs: I) -> f64 {
    if in_plain_range(plain) {
        return plain;
    }
    scaled_norm(xs)
}

/// The Frobenius norm `‖m‖F` of a matrix: nalgebra's `norm()` in range (its bits unchanged),
/// scaled outside it ([`checked_norm`]).
#[inline]
pub fn frobenius(m: &DMatrix<f64>) -> f64 {
    checked_norm(m.norm(), m.as_slice().iter().copied())
}

/// `‖x − y‖` over paired entries (e.g. two matrices' column-major slices), summed in order;
/// range-safe as [`norm`]. Panics if the lengths differ.
#[inline]
pub fn distance(x: &[f64], y: &[f64]) -> f64 {
    assert_eq!(x.len(), y.len(), "distance of slices of different lengths");
    let plain = x
        .iter()
        .zip(y)
        .map(|(a, b)| (a - b) * (a - b))
        .sum::<f64>()
        .sqrt();
    checked_norm(plain, x.iter().zip(y).map(|(a, b)| a - b))
}

#[cold]
fn scaled_norm<I: Iterator<Item = f64> + Clone>(xs: I) -> f64 {
    let mut largest = 0.0_f64;
    for x in xs.clone() {
        if x.is_nan() {
            return f64::NAN;
        }
        largest = largest.max(x.abs());
    }
    if largest == 0.0 || largest.is_infinite() {
        return largest;
    }
    let sum: f64 = xs.map(|x| (x / largest) * (x / largest)).sum();
    largest * sum.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_min_is_two_to_the_minus_491() {
        assert_eq!(PLAIN_MIN, 2f64.powi(-491));
    }

    #[test]
    fn tiny_and_huge_vectors_keep_their_norm() {
        for scale in [1e-320, 1e-300, 1e-200, 1e-160, 1e160, 1e200, 1e300] {
            let x = [3.0 * scale, 4.0 * scale];
            let n = norm(&x);
            let exact = 5.0 * scale;
            // Subnormal inputs carry fewer digits: compare to their own precision.
            let tol = if scale < 1e-300 { 1e-3 } else { 1e-15 };
            assert!((n - exact).abs() <= tol * exact, "{scale}: {n} vs {exact}");
        }
    }

    #[test]
    fn in_range_bits_are_the_plain_formula() {
        let x = [0.1, -0.25, 3.5, 1e-3];
        let plain = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert_eq!(norm(&x).to_bits(), plain.to_bits());
        let m = DMatrix::from_row_slice(2, 2, &x);
        assert_eq!(frobenius(&m).to_bits(), m.norm().to_bits());
    }

    #[test]
    fn special_values() {
        assert_eq!(norm(&[]), 0.0);
        assert_eq!(norm(&[0.0, -0.0]), 0.0);
        assert!(norm(&[1.0, f64::NAN]).is_nan());
        assert_eq!(norm(&[1e-300, f64::INFINITY]), f64::INFINITY);
        let half = f64::MAX / 2.0;
        assert_eq!(norm(&[half, half]), half * 2f64.sqrt());
        // Only a norm beyond f64::MAX is ∞.
        assert_eq!(norm(&[f64::MAX, f64::MAX]), f64::INFINITY);
    }

    #[test]
    fn distance_of_tiny_twins() {
        // Exact offsets: the difference squared (about 4e-422) underflows in the plain sum.
        let (x, e) = (2f64.powi(-660), 2f64.powi(-700));
        let (a, b) = ([x, 2.0 * x], [x + 3.0 * e, 2.0 * x - 4.0 * e]);
        assert_eq!(distance(&a, &b), 5.0 * e);
    }
}
