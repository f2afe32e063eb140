//! Round 4, norms out of f64's plain range (numerics §9): a column of tiny or huge entries keeps
//! its true norm, the twins' losses do not depend on the scale of W0, the metrics and
//! Muon's normalisation survive any finite scale, and a rule whose own arithmetic cannot carry
//! the run (Adam's g² overflowing or underflowing) stops and says so.

use basis_lab::experiment::{ArmStatus, PairedRun};
use basis_lab::metrics::{gram_divergence, orientation_divergence};
use basis_lab::model::normalize_columns;
use basis_lab::optim::{
    Adafactor, Adagrad, Adam, NsScratch, Optimizer, RmsProp, ScalarAdam, Shampoo, newton_schulz,
};
use basis_lab::preset::Preset;
use basis_lab::rng::haar_orthogonal;
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The default preset at `init_std`, with `steps` steps and its arms kept to `arms`.
fn preset(init_std: Option<f64>, steps: usize, arms: &[&str]) -> Preset {
    let mut p = Preset {
        init_std,
        steps,
        ..Preset::default()
    };
    p.arms.retain(|a| arms.contains(&a.optimizer.as_str()));
    assert_eq!(p.arms.len(), arms.len(), "the default preset has {arms:?}");
    p.validate().unwrap();
    p
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

#[test]
fn the_step_zero_loss_does_not_depend_on_the_scale_of_w0() {
    let reference = {
        let mut run = PairedRun::new(&preset(Some(1.0), 1, &["gd"])).unwrap();
        run.step()[0].loss
    };
    assert!(close(reference[0], reference[1], 1e-14), "{reference:?}");
    for s in [1e-300, 1e-200, 1e-160, 1e-100, 1e100, 1e200, 1e300] {
        let mut run = PairedRun::new(&preset(Some(s), 1, &["gd"])).unwrap();
        let loss = run.step()[0].loss;
        for twin in loss {
            assert!(
                close(twin, reference[0], 1e-13),
                "init_std {s:e}: twin loss {twin} against {} at init_std 1",
                reference[0]
            );
        }
        assert_eq!(
            run.arms()[0].status(),
            &ArmStatus::Running,
            "init_std {s:e}"
        );
    }
}

#[test]
fn gd_twins_stay_at_rounding_noise_from_a_tiny_w0() {
    let mut run = PairedRun::new(&preset(Some(1e-200), 20, &["gd"])).unwrap();
    for _ in 0..20 {
        let r = run.step()[0];
        assert!(r.orientation_div < 1e-12, "step {}: {r:?}", r.step);
        assert!(r.gram_div < 1e-12, "step {}: {r:?}", r.step);
        assert!(r.loss.iter().all(|l| l.is_finite()), "{r:?}");
    }
    assert_eq!(run.arms()[0].status(), &ArmStatus::Running);
}

#[test]
fn adam_whose_squared_gradient_overflows_stops_and_says_why() {
    // At init_std 1e-200 the gradient is about 1e200 (it scales as 1/‖w‖): g² is ∞ for Adam,
    // while GD runs on.
    let mut run = PairedRun::new(&preset(Some(1e-200), 3, &["gd", "adam"])).unwrap();
    for _ in 0..3 {
        run.step();
    }
    let arms = run.arms();
    assert_eq!(arms[0].status(), &ArmStatus::Running);
    match arms[1].status() {
        ArmStatus::Diverged { step, reason } => {
            assert_eq!(*step, 0);
            assert!(
                reason.starts_with("Adam cannot represent this run"),
                "{reason}"
            );
            assert!(reason.contains("past f64's largest number"), "{reason}");
            assert!(
                arms[1]
                    .status()
                    .to_string()
                    .starts_with("stopped at step 0: Adam"),
                "{}",
                arms[1].status()
            );
        }
        other => panic!("Adam should stop: {other:?}"),
    }
}

#[test]
fn rules_report_squares_out_of_range_only_where_epsilon_does_not_cover_them() {
    let g = |x: f64| [DMatrix::from_element(2, 2, x)];
    let adam = Adam::new(0.9, 0.999, 1e-8);
    assert!(adam.representable(&g(1.0)).is_ok());
    assert!(adam.representable(&g(1e150)).is_ok());
    let e = adam.representable(&g(1e160)).unwrap_err();
    assert!(e.contains("1.00e160") && e.contains("largest"), "{e}");
    // ε = 1e-8 swamps any |g| whose square underflows: Adam's exact update is the same.
    assert!(adam.representable(&g(1e-170)).is_ok());
    // Without ε the exact rule would move by ±lr; the squares' underflow would freeze it.
    let bare = Adam::new(0.9, 0.999, 0.0);
    let e = bare.representable(&g(1e-170)).unwrap_err();
    assert!(e.contains("below f64's normal range"), "{e}");
    assert!(bare.representable(&g(1e-150)).is_ok());
    assert!(bare.representable(&g(0.0)).is_ok());
    let rms = RmsProp::new(0.99, 0.0);
    assert!(
        rms.representable(&g(-1e-200))
            .unwrap_err()
            .starts_with("RMSProp")
    );
}

#[test]
fn column_normalisation_keeps_tiny_and_huge_columns() {
    let base = DMatrix::from_column_slice(3, 2, &[3.0, 4.0, 12.0, -1.0, 2.0, 2.0]);
    let (mut keys, mut norms) = (DMatrix::zeros(3, 2), vec![0.0; 2]);
    normalize_columns(&base, &mut keys, &mut norms).unwrap();
    let unit = keys.clone();
    for s in [1e-300, 1e-200, 1e-160, 1e160, 1e200, 1e300] {
        normalize_columns(&(&base * s), &mut keys, &mut norms).unwrap();
        assert!(close(norms[0], 13.0 * s, 1e-15), "{s:e}: {norms:?}");
        assert!(close(norms[1], 3.0 * s, 1e-15), "{s:e}: {norms:?}");
        assert!((&keys - &unit).amax() < 1e-15, "{s:e}: {keys}");
    }
}

#[test]
fn twin_metrics_do_not_depend_on_the_scale() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let q = haar_orthogonal(&mut rng, 4);
    let w = DMatrix::from_fn(4, 6, |i, j| {
        ((i * 7 + j * 3) % 5) as f64 - 2.0 + 0.1 * j as f64
    });
    let twin = &q * &w + DMatrix::from_fn(4, 6, |i, j| 1e-9 * (i as f64 - j as f64));
    let mut scratch = DMatrix::zeros(4, 6);
    let reference = orientation_divergence(&twin, &q, &w, &mut scratch);
    assert!(reference > 1e-11 && reference < 1e-8, "{reference}");
    for s in [1e-300, 1e-200, 1e-160, 1e160, 1e200, 1e300] {
        let d = orientation_divergence(&(&twin * s), &q, &(&w * s), &mut scratch);
        assert!(close(d, reference, 1e-6), "{s:e}: {d} against {reference}");
    }
    // Gram divergence of unit keys differing by 1e-170: its squares underflow in a plain sum.
    let keys = DMatrix::from_column_slice(2, 2, &[1.0, 0.0, 0.0, 1.0]);
    let mut other = keys.clone();
    other[(0, 1)] = 2f64.powi(-565);
    let d = gram_divergence(&keys, &other);
    assert!(close(d, 2f64.sqrt() * 2f64.powi(-565), 1e-15), "{d:e}");
}

#[test]
fn newton_schulz_is_scale_free_for_huge_gradients() {
    let b = DMatrix::from_fn(3, 5, |i, j| {
        (i as f64 + 1.0) * (j as f64 - 2.0) + 0.5 * i as f64
    });
    let mut scratch = NsScratch::new(3, 5);
    let mut reference = DMatrix::zeros(3, 5);
    newton_schulz(&b, &mut reference, &mut scratch);
    assert!(reference.amax() > 0.5, "{reference}");
    let mut huge = DMatrix::zeros(3, 5);
    newton_schulz(&(&b * 1e160), &mut huge, &mut scratch);
    // Only the +1e-7 beside ‖B‖ (about 10 here) tells the scales apart: 1e-8 relative.
    assert!(
        (&huge - &reference).amax() < 1e-7,
        "{huge} against {reference}"
    );
    for s in [1e200, 1e300] {
        let mut out = DMatrix::zeros(3, 5);
        newton_schulz(&(&b * s), &mut out, &mut scratch);
        assert!((&out - &huge).amax() < 1e-13, "{s:e}: {out} against {huge}");
    }
}

#[test]
fn init_std_is_refused_only_where_the_model_cannot_run_and_says_why() {
    for bad in [1e-301, 5e-324, 1e301] {
        let text = format!("Preset(init_std: {bad:e})");
        let e = Preset::from_ron(&text, "p.ron").unwrap_err().to_string();
        assert!(
            e.contains("init_std") && e.contains("[1e-300, 1e300]"),
            "{e}"
        );
        assert!(e.contains("1/‖w‖"), "{e}");
    }
    for good in [1e-300, 1e-200, 1e-3, 1000.0, 1e300] {
        let text = format!("Preset(init_std: {good:e})");
        Preset::from_ron(&text, "p.ron").unwrap_or_else(|e| panic!("{good:e}: {e}"));
    }
}

#[test]
fn pooled_and_fourth_power_statistics_report_where_they_leave_the_range() {
    let g = |x: f64, n: usize| [DMatrix::from_element(n, n, x)];
    // Scalar-Adam sums every square: 16 entries of 5e153 have a norm of 2e154, past √MAX,
    // though each square alone is finite.
    let scalar = ScalarAdam::new(0.9, 0.999, 1e-8);
    assert!(scalar.representable(&g(5e153, 1)).is_ok());
    let e = scalar.representable(&g(5e153, 4)).unwrap_err();
    assert!(
        e.starts_with("Scalar-Adam") && e.contains("norm 2.00e154"),
        "{e}"
    );
    // A tiny entry beside a normal one is no loss for a pooled statistic, even without ε.
    let bare = ScalarAdam::new(0.9, 0.999, 0.0);
    let mixed = [DMatrix::from_row_slice(1, 2, &[1.0, 1e-200])];
    assert!(bare.representable(&mixed).is_ok());
    assert!(bare.representable(&g(1e-200, 2)).is_err());
    // Adafactor multiplies a row's and a column's mean square: g⁴ passes f64 at about 1.2e77.
    let ada = Adafactor::new(0.999, 1e-30);
    assert!(ada.representable(&g(1e76, 3)).is_ok());
    let e = ada.representable(&g(1e78, 3)).unwrap_err();
    assert!(e.starts_with("Adafactor") && e.contains("1.2e77"), "{e}");
    // Shampoo's damping (√λ = 1) swamps any underflow; its sums still overflow.
    let shampoo = Shampoo::new(1.0, 20);
    assert!(shampoo.representable(&g(1e-200, 3)).is_ok());
    assert!(shampoo.representable(&g(1e154, 3)).is_err());
}

#[test]
fn adagrad_reports_a_running_sum_that_would_overflow() {
    let mut adagrad = Adagrad::new(1e-10);
    let mut w = [DMatrix::from_element(1, 1, 0.0)];
    let g = [DMatrix::from_element(1, 1, 1e154)];
    assert!(adagrad.representable(&g).is_ok());
    adagrad.step(&mut w, &g, 1.0);
    // Each square is finite; the sum of the first and this one is not.
    let e = adagrad.representable(&g).unwrap_err();
    assert!(e.contains("running sum"), "{e}");
}

#[test]
fn column_norm_spread_stays_finite_at_any_scale() {
    for s in [1e-200, 1e200] {
        let mut run = PairedRun::new(&preset(Some(s), 5, &["gd"])).unwrap();
        for _ in 0..5 {
            let r = run.step()[0];
            for twin in 0..2 {
                let (mean, sd) = (r.mean_column_norm[twin], r.column_norm_sd[twin]);
                assert!(
                    mean.is_finite() && mean > 0.0,
                    "{s:e} step {}: {r:?}",
                    r.step
                );
                assert!(
                    sd.is_finite() && sd > 0.0 && sd < 10.0 * mean,
                    "{s:e}: {r:?}"
                );
            }
        }
    }
    let (mean, sd) = basis_lab::metrics::mean_sd(&[1e307, 1.5e308, 1.7e308]);
    assert!(close(mean, 1.1e308, 1e-15), "{mean:e}");
    assert!(close(sd, 0.76f64.sqrt() * 1e308, 1e-14), "{sd:e}");
    let (mean, sd) = basis_lab::metrics::mean_sd(&[1e-200, 3e-200]);
    assert!(
        close(mean, 2e-200, 1e-15) && close(sd, 2f64.sqrt() * 1e-200, 1e-15),
        "{sd:e}"
    );
}

#[test]
fn attention_distances_and_plane_angles_of_tiny_vectors() {
    let d = basis_lab::attention::twins::relative_distance(&[1e-170], &[2e-170]);
    assert!(close(d, 2.0 / 3.0, 1e-15), "{d}");
    use nalgebra::Vector2;
    let angle = basis_lab::explainer::angle_between_deg(
        Vector2::new(1e-170, 0.0),
        Vector2::new(0.0, 1e-170),
    );
    assert!((angle - 90.0).abs() < 1e-12, "{angle}");
}
