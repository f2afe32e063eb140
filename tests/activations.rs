//! Axis structure of the memory and its reads (issue 5, item 5): excess kurtosis, the
//! generalised rotation baseline, and the activation statistics of a paired run.

use basis_lab::experiment::{PairedRun, activation_stats};
use basis_lab::metrics::{
    RotationBaseline, StatBaseline, axis_concentration, excess_kurtosis, mean_excess_kurtosis,
};
use basis_lab::model::{EpisodeSampler, MemoryConfig, Workspace};
use basis_lab::preset::Preset;
use basis_lab::rng::{gaussian_matrix, haar_orthogonal};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[test]
fn kurtosis_of_a_large_gaussian_sample_is_near_zero() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let x = gaussian_matrix(&mut rng, 1_000_000, 1, 1.0);
    let k = excess_kurtosis(x.as_slice());
    // Sampling sd of the kurtosis is √(24/n) ≈ 0.005.
    assert!(k.abs() < 0.05, "excess kurtosis {k}");
}

#[test]
fn kurtosis_of_a_one_hot_vector_matches_the_closed_form() {
    for n in [2usize, 3, 8, 16, 100] {
        let mut x = vec![0.0; n];
        x[n / 2] = 1.0;
        let nf = n as f64;
        let expected = (nf * nf - 6.0 * nf + 6.0) / (nf - 1.0);
        let k = excess_kurtosis(&x);
        assert!((k - expected).abs() < 1e-12, "n {n}: {k} vs {expected}");
        // Scale and sign do not matter.
        let y: Vec<f64> = x.iter().map(|v| -3.5 * v).collect();
        assert!((excess_kurtosis(&y) - expected).abs() < 1e-12);
    }
    // n = 2: one-hot is two equal-magnitude deviations, the flattest possible shape.
    assert!((excess_kurtosis(&[0.0, 1.0]) + 2.0).abs() < 1e-15);
}

#[test]
fn kurtosis_of_a_constant_vector_is_undefined_and_skipped_in_means() {
    assert!(excess_kurtosis(&[2.0; 5]).is_nan());
    let mut x = DMatrix::zeros(4, 2);
    x[(1, 1)] = 1.0;
    let expected = (16.0 - 24.0 + 6.0) / 3.0;
    assert!((mean_excess_kurtosis(&x) - expected).abs() < 1e-12);
    assert!(mean_excess_kurtosis(&DMatrix::zeros(4, 3)).is_nan());
}

#[test]
fn the_general_baseline_reproduces_the_key_baseline_exactly() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut keys = gaussian_matrix(&mut rng, 6, 9, 1.0);
    for mut c in keys.column_iter_mut() {
        let n = c.norm();
        c /= n;
    }
    let a = RotationBaseline::compute(&keys, 50, &mut ChaCha8Rng::seed_from_u64(5));
    let b = StatBaseline::compute(
        &keys,
        50,
        &mut ChaCha8Rng::seed_from_u64(5),
        axis_concentration,
    );
    assert_eq!(
        (a.axis_concentration, a.mean, a.sd, a.p5, a.p95, a.excess),
        (b.value, b.mean, b.sd, b.p5, b.p95, b.excess)
    );
}

#[test]
fn axis_aligned_vectors_have_kurtosis_far_above_their_rotation_baseline() {
    // One-hot columns: rotating them spreads the mass over every coordinate.
    let n = 16;
    let x = DMatrix::from_fn(n, 40, |i, j| if i == j % n { 1.0 } else { 0.0 });
    let b = StatBaseline::compute(
        &x,
        64,
        &mut ChaCha8Rng::seed_from_u64(9),
        mean_excess_kurtosis,
    );
    assert!(b.value > 10.0 && b.mean.abs() < 1.0, "{b:?}");
    assert!(b.z > 10.0, "{b:?}");
}

fn memory(d_k: usize) -> MemoryConfig {
    MemoryConfig {
        d_k,
        n_keys: 12,
        n_values: 5,
        pairs_per_episode: 6,
        beta: 1.0,
        gain: 5.0,
    }
}

#[test]
fn memory_rows_are_the_written_values_and_reads_ignore_the_gauge() {
    let cfg = memory(8);
    let mut sampler = EpisodeSampler::new(ChaCha8Rng::seed_from_u64(1), cfg.n_keys, cfg.n_values);
    let episodes: Vec<_> = (0..10)
        .map(|_| sampler.sample(cfg.pairs_per_episode))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let w = gaussian_matrix(&mut rng, cfg.d_k, cfg.n_keys, 1.0);
    let q = haar_orthogonal(&mut rng, cfg.d_k);
    let mut ws = Workspace::new(cfg);
    let (mut rows, mut reads) = (Vec::new(), Vec::new());
    ws.collect_activations(&w, &episodes, &mut rows, &mut reads)
        .unwrap();
    let distinct: usize = episodes
        .iter()
        .map(|e| {
            let mut v = e.values.clone();
            v.sort_unstable();
            v.dedup();
            v.len()
        })
        .sum();
    assert_eq!(rows.len(), distinct * cfg.d_k);
    assert_eq!(
        reads.len(),
        episodes.len() * cfg.pairs_per_episode * cfg.n_values
    );

    // Rotating every key rotates every row of S and leaves every read unchanged.
    let (mut rows_q, mut reads_q) = (Vec::new(), Vec::new());
    ws.collect_activations(&(&q * &w), &episodes, &mut rows_q, &mut reads_q)
        .unwrap();
    for (r, rq) in reads.iter().zip(&reads_q) {
        assert!((r - rq).abs() < 1e-12, "{r} vs {rq}");
    }
    let rows = DMatrix::from_vec(cfg.d_k, distinct, rows);
    let rows_q = DMatrix::from_vec(cfg.d_k, distinct, rows_q);
    assert!((&q * &rows - &rows_q).norm() < 1e-12 * rows.norm());

    let a = activation_stats(&mut ws, &w, &episodes, 32, 7).unwrap();
    let b = activation_stats(&mut ws, &(&q * &w), &episodes, 32, 7).unwrap();
    assert_eq!((a.s_rows, a.reads), (distinct, 60));
    assert!((a.read_kurtosis.value - b.read_kurtosis.value).abs() < 1e-9);
    // The rows' statistics do move with the basis.
    assert!((a.s_kurtosis.value - b.s_kurtosis.value).abs() > 1e-6);
}

#[test]
fn a_paired_run_reports_activations_for_every_arm_deterministically() {
    let mut p = Preset::load("classroom").unwrap();
    p.steps = 50;
    let stats = |p: &Preset| {
        let mut run = PairedRun::new(p).unwrap();
        for _ in 0..p.steps {
            run.step();
        }
        run.activations()
    };
    let a = stats(&p);
    assert_eq!(a.len(), p.arms.len());
    for s in &a {
        let s = s.as_ref().expect("no arm diverges in 50 steps");
        assert!(s.s_rows > 0 && s.reads > 0);
        assert!(s.s_axis.value > 1.0 / p.d_k as f64 - 1e-12 && s.s_axis.value <= 1.0);
        assert!(s.read_kurtosis.sd > 0.0 && s.s_kurtosis.sd > 0.0);
    }
    assert_eq!(a, stats(&p), "same preset and seed, same numbers");
}
