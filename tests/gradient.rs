//! The exact gradient of the delta-rule memory (numerics §1) against central finite differences,
//! and the symmetry the whole question rests on: loss(QW) = loss(W), ∇(QW) = Q∇(W).

use basis_lab::model::{Episode, EpisodeSampler, MemoryConfig, Workspace};
use basis_lab::rng::{gaussian_matrix, haar_orthogonal};
use nalgebra::DMatrix;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

struct Case {
    cfg: MemoryConfig,
    w: DMatrix<f64>,
    episodes: Vec<Episode>,
}

fn random_case(rng: &mut ChaCha8Rng) -> Case {
    let d_k = rng.random_range(2..=6);
    let n_keys = rng.random_range(2..=7);
    let cfg = MemoryConfig {
        d_k,
        n_keys,
        n_values: rng.random_range(2..=5),
        pairs_per_episode: rng.random_range(2..=n_keys),
        beta: rng.random_range(0.1..1.9),
        gain: rng.random_range(0.5..6.0),
    };
    let std = rng.random_range(0.3..2.0);
    let w = gaussian_matrix(rng, d_k, n_keys, std);
    let mut sampler = EpisodeSampler::new(
        ChaCha8Rng::seed_from_u64(rng.random()),
        cfg.n_keys,
        cfg.n_values,
    );
    let batch = rng.random_range(1..=3);
    let episodes = (0..batch)
        .map(|_| sampler.sample(cfg.pairs_per_episode))
        .collect();
    Case { cfg, w, episodes }
}

fn loss(ws: &mut Workspace, w: &DMatrix<f64>, eps: &[Episode]) -> f64 {
    let mut g = DMatrix::zeros(w.nrows(), w.ncols());
    ws.loss_and_grad(w, eps, &mut g).unwrap()
}

#[test]
fn gradient_matches_central_differences_on_60_random_configurations() {
    let mut rng = ChaCha8Rng::seed_from_u64(2024);
    let mut worst: f64 = 0.0;
    for case in 0..60 {
        let Case { cfg, w, episodes } = random_case(&mut rng);
        let mut ws = Workspace::new(cfg);
        let mut grad = DMatrix::zeros(cfg.d_k, cfg.n_keys);
        ws.loss_and_grad(&w, &episodes, &mut grad).unwrap();
        let h = 1e-5;
        let mut fd = DMatrix::zeros(cfg.d_k, cfg.n_keys);
        for i in 0..w.len() {
            let (mut wp, mut wm) = (w.clone(), w.clone());
            wp[i] += h;
            wm[i] -= h;
            fd[i] = (loss(&mut ws, &wp, &episodes) - loss(&mut ws, &wm, &episodes)) / (2.0 * h);
        }
        let scale = grad.norm().max(fd.norm());
        assert!(
            scale > 1e-6,
            "case {case}: gradient vanished ({scale}), test would be vacuous"
        );
        let rel = (&grad - &fd).norm() / scale;
        worst = worst.max(rel);
        assert!(rel < 1e-7, "case {case} {cfg:?}: relative error {rel:e}");
    }
    assert!(
        worst > 0.0,
        "finite differences never differ from the exact gradient"
    );
}

#[test]
fn unused_columns_get_exactly_zero_gradient() {
    let cfg = MemoryConfig {
        d_k: 4,
        n_keys: 10,
        n_values: 3,
        pairs_per_episode: 3,
        beta: 1.0,
        gain: 3.0,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let w = gaussian_matrix(&mut rng, 4, 10, 0.5);
    let ep = Episode {
        keys: vec![2, 7, 4],
        values: vec![0, 2, 2],
        query_order: vec![1, 2, 0],
    };
    let mut ws = Workspace::new(cfg);
    let mut grad = DMatrix::from_element(4, 10, f64::NAN);
    ws.loss_and_grad(&w, &[ep], &mut grad).unwrap();
    for a in 0..10 {
        let col_norm = grad.column(a).norm();
        if [2, 7, 4].contains(&a) {
            assert!(col_norm > 1e-6, "used column {a} has no gradient");
            // Scale invariance of k = w/‖w‖: the gradient is orthogonal to its column.
            let dot = grad.column(a).dot(&w.column(a));
            assert!(dot.abs() < 1e-13 * col_norm * w.column(a).norm().max(1.0));
        } else {
            assert_eq!(col_norm, 0.0, "unused column {a}");
        }
    }
}

#[test]
fn beta_one_stores_a_single_pair_exactly() {
    // With one pair and β = 1 the read equals e_b: loss = −ln softmax(g·e_b)_b.
    let cfg = MemoryConfig {
        d_k: 3,
        n_keys: 4,
        n_values: 5,
        pairs_per_episode: 1,
        beta: 1.0,
        gain: 2.0,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let w = gaussian_matrix(&mut rng, 3, 4, 1.0);
    let ep = Episode {
        keys: vec![1],
        values: vec![3],
        query_order: vec![0],
    };
    let mut ws = Workspace::new(cfg);
    let l = loss(&mut ws, &w, std::slice::from_ref(&ep));
    let expected = -(2.0f64.exp() / (2.0f64.exp() + 4.0)).ln();
    assert!((l - expected).abs() < 1e-14, "{l} vs {expected}");
    let (held_loss, acc) = ws.evaluate(&w, &[ep]).unwrap();
    assert!((held_loss - expected).abs() < 1e-14);
    assert_eq!(acc, 1.0);
}

#[test]
fn loss_is_rotation_invariant_and_gradient_rotates() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for case in 0..50 {
        let Case { cfg, w, episodes } = random_case(&mut rng);
        let q = haar_orthogonal(&mut rng, cfg.d_k);
        let w_rot = &q * &w;
        let mut ws = Workspace::new(cfg);
        let (mut g, mut g_rot) = (
            DMatrix::zeros(cfg.d_k, cfg.n_keys),
            DMatrix::zeros(cfg.d_k, cfg.n_keys),
        );
        let l = ws.loss_and_grad(&w, &episodes, &mut g).unwrap();
        let l_rot = ws.loss_and_grad(&w_rot, &episodes, &mut g_rot).unwrap();
        assert!((l - l_rot).abs() < 1e-12, "case {case}: {l} vs {l_rot}");
        let err = (&g_rot - &q * &g).norm() / g.norm().max(1e-300);
        assert!(
            err < 1e-12,
            "case {case}: gradient does not rotate ({err:e})"
        );
    }
}

#[test]
fn zero_column_is_an_error_not_a_nan() {
    let cfg = MemoryConfig {
        d_k: 3,
        n_keys: 3,
        n_values: 2,
        pairs_per_episode: 2,
        beta: 1.0,
        gain: 1.0,
    };
    let mut w = DMatrix::from_element(3, 3, 0.5);
    w.column_mut(1).fill(0.0);
    let ep = Episode {
        keys: vec![0, 2],
        values: vec![1, 0],
        query_order: vec![0, 1],
    };
    let mut ws = Workspace::new(cfg);
    let mut g = DMatrix::zeros(3, 3);
    let err = ws.loss_and_grad(&w, &[ep], &mut g).unwrap_err();
    assert!(err.to_string().contains("column 1"), "{err}");
}

#[test]
fn episodes_are_valid_and_uniform_enough() {
    let mut s = EpisodeSampler::new(ChaCha8Rng::seed_from_u64(5), 6, 3);
    let mut key_counts = [0usize; 6];
    let mut first_query = [0usize; 4];
    for _ in 0..12_000 {
        let ep = s.sample(4);
        let mut keys = ep.keys.clone();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), 4, "keys repeat: {:?}", ep.keys);
        assert!(ep.values.iter().all(|&b| b < 3));
        let mut order = ep.query_order.clone();
        order.sort();
        assert_eq!(order, vec![0, 1, 2, 3]);
        for &a in &ep.keys {
            key_counts[a] += 1;
        }
        first_query[ep.query_order[0]] += 1;
    }
    // Each key appears in 4/6 of episodes: 8000 expected, sd ≈ 52.
    for c in key_counts {
        assert!((7700..8300).contains(&c), "key counts {key_counts:?}");
    }
    for c in first_query {
        assert!(
            (2800..3200).contains(&c),
            "query order counts {first_query:?}"
        );
    }
}
