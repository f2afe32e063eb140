//! Axis concentration, the Haar sampler and the random-rotation baseline (numerics §3, §4).

use basis_lab::metrics::{
    RotationBaseline, axis_concentration, gram, gram_divergence, isotropic_axis_concentration,
    mean_sd, orientation_divergence, percentile,
};
use basis_lab::model::normalize_columns;
use basis_lab::rng::{gaussian_matrix, haar_orthogonal};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn unit_keys(w: &DMatrix<f64>) -> DMatrix<f64> {
    let mut k = w.clone();
    let mut n = vec![0.0; w.ncols()];
    normalize_columns(w, &mut k, &mut n).unwrap();
    k
}

#[test]
fn axis_keys_have_concentration_one() {
    let mut k = DMatrix::zeros(5, 7);
    for a in 0..7 {
        k[(a % 5, a)] = if a % 2 == 0 { 1.0 } else { -1.0 };
    }
    assert_eq!(axis_concentration(&k), 1.0);
}

#[test]
fn evenly_spread_keys_have_concentration_one_over_d() {
    for d in [2usize, 3, 8, 16, 33] {
        let k = DMatrix::from_fn(d, 4, |i, j| {
            let s = if (i + j) % 3 == 0 { -1.0 } else { 1.0 };
            s / (d as f64).sqrt()
        });
        let a = axis_concentration(&k);
        assert!((a - 1.0 / d as f64).abs() < 1e-15, "d {d}: {a}");
    }
}

#[test]
fn random_directions_average_three_over_d_plus_two() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for d in [4usize, 16] {
        let k = unit_keys(&gaussian_matrix(&mut rng, d, 20_000, 1.0));
        let a = axis_concentration(&k);
        let want = isotropic_axis_concentration(d);
        assert!(((a - want) / want).abs() < 0.01, "d {d}: {a} vs {want}");
    }
}

#[test]
fn haar_rotation_is_orthogonal_and_unbiased() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let d = 6;
    let mut mean = DMatrix::zeros(d, d);
    let n = 4000;
    let mut negative_det = 0;
    for _ in 0..n {
        let q = haar_orthogonal(&mut rng, d);
        assert!((q.transpose() * &q - DMatrix::identity(d, d)).norm() < 1e-13);
        mean += &q / n as f64;
        if q.determinant() < 0.0 {
            negative_det += 1;
        }
    }
    // E[Q] = 0 for Haar; a QR whose R diagonal had mixed signs would bias the diagonal.
    assert!(mean.amax() < 0.06, "mean entry {}", mean.amax());
    assert!(
        (1700..2300).contains(&negative_det),
        "{negative_det} reflections of {n}"
    );
}

#[test]
fn gram_and_orientation_divergence_see_what_they_should() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let w = gaussian_matrix(&mut rng, 5, 8, 1.0);
    let q = haar_orthogonal(&mut rng, 5);
    let w_rot = &q * &w;
    let (k, k_rot) = (unit_keys(&w), unit_keys(&w_rot));
    let mut scratch = DMatrix::zeros(5, 8);
    assert!(orientation_divergence(&w_rot, &q, &w, &mut scratch) < 1e-15);
    assert!(gram_divergence(&k, &k_rot) < 1e-14);
    let g = gram(&k);
    for a in 0..8 {
        assert!((g[(a, a)] - 1.0).abs() < 1e-15);
    }
    // A different matrix: divergences equal their definitions.
    let w2 = gaussian_matrix(&mut rng, 5, 8, 1.0);
    let k2 = unit_keys(&w2);
    let direct = (gram(&k2) - gram(&k)).norm();
    assert!((gram_divergence(&k, &k2) - direct).abs() < 1e-13 * direct);
    let od = orientation_divergence(&w2, &q, &w, &mut scratch);
    assert!((od - (&w2 - &q * &w).norm() / w.norm()).abs() < 1e-14);
}

#[test]
fn baseline_of_random_keys_is_centred_and_of_axis_keys_is_extreme() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    let d = 8;
    let axis = DMatrix::<f64>::identity(d, d);
    let b = RotationBaseline::compute(&axis, 256, &mut rng);
    assert_eq!(b.axis_concentration, 1.0);
    assert!(b.p95 < 0.6, "rotated axis keys stay far from 1: {b:?}");
    assert!(b.z > 5.0 && b.outside_band());
    assert!(
        (b.mean - isotropic_axis_concentration(d)).abs() < 0.03,
        "{b:?}"
    );
    assert!(b.p5 <= b.mean && b.mean <= b.p95);
    let mut zs = Vec::new();
    for _ in 0..30 {
        let k = unit_keys(&gaussian_matrix(&mut rng, d, 12, 1.0));
        zs.push(RotationBaseline::compute(&k, 128, &mut rng).z);
    }
    let (m, s) = mean_sd(&zs);
    assert!(
        m.abs() < 0.6 && (0.5..1.6).contains(&s),
        "z of random keys {m} ± {s}"
    );
}

#[test]
fn percentile_interpolates_like_numpy() {
    let xs = [1.0, 2.0, 4.0, 8.0];
    assert_eq!(percentile(&xs, 0.0), 1.0);
    assert_eq!(percentile(&xs, 100.0), 8.0);
    assert_eq!(percentile(&xs, 50.0), 3.0);
    assert!((percentile(&xs, 5.0) - 1.15).abs() < 1e-15);
    let (m, s) = mean_sd(&xs);
    assert_eq!(m, 3.75);
    assert!((s - (28.75f64 / 3.0).sqrt()).abs() < 1e-15);
}
