//! Numerics of the explainer's demos (sections 1–3).

use basis_lab::explainer::{
    DemoSettings, adam_trajectories, axis_concentration_curve, keys_from_angles, rotation_effect,
    step_angles, write_and_read,
};
use nalgebra::{DMatrix, Vector2};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn orthogonal_keys_at_beta_one_store_every_pair_exactly() {
    let r = write_and_read(&keys_from_angles(&[20.0, 110.0]), 1.0);
    assert!((&r.reads - DMatrix::<f64>::identity(2, 2)).amax() < 1e-15);
    assert!((&r.gram - DMatrix::<f64>::identity(2, 2)).amax() < 1e-15);
}

#[test]
fn the_things_to_try_show_what_the_text_says() {
    // Two close keys: the later write is exact, the earlier one is damaged.
    let close = write_and_read(&keys_from_angles(&[30.0, 45.0]), 1.0);
    assert!((close.reads[(1, 1)] - 1.0).abs() < 1e-14);
    assert!(
        close.reads[(0, 0)] < 0.2,
        "K1's own class {}",
        close.reads[(0, 0)]
    );
    assert!(
        close.reads[(1, 0)] > 0.9,
        "K1 reads K2's class {}",
        close.reads[(1, 0)]
    );
    // Two nearly opposite keys: the interference pushes the wrong class down.
    let opposite = write_and_read(&keys_from_angles(&[30.0, 200.0]), 1.0);
    assert!(opposite.gram[(0, 1)] < -0.9);
    assert!(
        opposite.reads[(1, 0)] < -0.9,
        "K1's read of class 2 {}",
        opposite.reads[(1, 0)]
    );
    // Three keys in a plane: no layout stores all three; the best spread still misses.
    let three = write_and_read(&keys_from_angles(&[90.0, 210.0, 330.0]), 1.0);
    let worst = (0..3)
        .map(|a| (three.reads[(a, a)] - 1.0).abs())
        .fold(0.0, f64::max);
    assert!(worst > 0.1, "three keys stored almost exactly ({worst})");
}

#[test]
fn rotating_every_key_changes_no_gram_entry_and_no_read_but_changes_a() {
    let keys = DemoSettings::default().keys();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for _ in 0..100 {
        let deg = rng.random_range(-180.0..180.0);
        let beta = rng.random_range(0.0..2.0);
        let (gram, read, a) = rotation_effect(&keys, beta, deg);
        assert!(gram < 1e-12 && read < 1e-12, "{deg}°: {gram:e} {read:e}");
        lo = lo.min(a);
        hi = hi.max(a);
    }
    assert!(
        hi - lo > 0.1,
        "A(K) should swing with the angle: {lo}..{hi}"
    );
    let curve = axis_concentration_curve(&keys, 361);
    assert_eq!(curve.len(), 361);
    assert_eq!(curve[0][0], -180.0);
    assert_eq!(curve[360][0], 180.0);
    assert!(curve.iter().all(|p| (0.5..=1.0).contains(&p[1])));
}

#[test]
fn gd_steps_rotate_with_the_world_and_adam_steps_do_not() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for _ in 0..200 {
        let g = Vector2::new(rng.random_range(-3.0..3.0), rng.random_range(-3.0..3.0));
        let (gd, _) = step_angles(g, rng.random_range(-180.0..180.0));
        assert!(gd < 1e-9, "GD angle {gd}°");
    }
    // g = (1, 0.2): sign(g) = (1, 1). Rotated by 30° or 60°, Qg stays in the first quadrant,
    // so the rotated-world step is still along (1, 1), while Q carries (1, 1) by φ.
    let g = Vector2::new(1.0, 0.2);
    for phi in [30.0, 60.0] {
        let (_, adam) = step_angles(g, phi);
        assert!((adam - phi).abs() < 1e-9, "φ = {phi}: Adam angle {adam}");
    }
    // A rotation by 90° maps the sign pattern onto itself: the steps agree.
    let (_, adam) = step_angles(Vector2::new(1.0, 0.2), 90.0);
    assert!(adam < 1e-9);
}

#[test]
fn later_adam_steps_drift_apart_in_a_rotated_world() {
    let (a, b) = adam_trajectories(0.0, 60, 0.05);
    assert_eq!(a, b, "no rotation, no difference");
    let (a, b) = adam_trajectories(30.0, 60, 0.05);
    assert_eq!(a.len(), 61);
    assert_eq!(a[0], b[0]);
    let gap = a
        .iter()
        .zip(&b)
        .map(|(p, q)| ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2)).sqrt())
        .fold(0.0, f64::max);
    assert!(gap > 0.05, "trajectories stayed together ({gap})");
}

#[test]
fn demo_settings_are_validated() {
    assert!(DemoSettings::default().validate().is_ok());
    let bad = DemoSettings {
        key_angles_deg: vec![0.0; 7],
        ..DemoSettings::default()
    };
    assert!(bad.validate().unwrap_err().message.contains("2..=6"));
    let bad = DemoSettings {
        gradient: [f64::NAN, 0.0],
        ..DemoSettings::default()
    };
    assert_eq!(bad.validate().unwrap_err().field, "gradient[0]");
}
