//! The update rules of numerics §2: closed-form checks and their equivariance class.

use basis_lab::optim::{
    Adafactor, Adagrad, Adam, Dial, Gd, Lion, MomentumSgd, Muon, NsForm, NsScratch, Optimizer,
    OptimizerSpec, Polar, REGISTRY, RmsProp, ScalarAdam, Shampoo, SignDescent, Signum,
    newton_schulz, newton_schulz_in, polar_svd,
};
use basis_lab::rng::{gaussian_matrix, haar_orthogonal};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

fn one_step(opt: &mut dyn Optimizer, w: &DMatrix<f64>, g: &DMatrix<f64>, lr: f64) -> DMatrix<f64> {
    let mut p = [w.clone()];
    opt.step(&mut p, std::slice::from_ref(g), lr);
    let [p] = p;
    p
}

#[test]
fn adam_first_step_is_sign_descent_at_eps_zero() {
    let mut r = rng(1);
    let w = gaussian_matrix(&mut r, 6, 9, 1.0);
    let mut g = gaussian_matrix(&mut r, 6, 9, 1e-3);
    g[(2, 3)] = 0.0;
    let lr = 0.05;
    let stepped = one_step(&mut Adam::new(0.9, 0.999, 0.0), &w, &g, lr);
    for i in 0..w.len() {
        let want = if g[i] == 0.0 {
            0.0
        } else {
            -lr * g[i].signum()
        };
        assert!(((stepped[i] - w[i]) - want).abs() < 1e-15, "entry {i}");
    }
    let sign = one_step(&mut SignDescent, &w, &g, lr);
    assert!((&sign - &stepped).amax() < 1e-15);
    assert_eq!(sign[(2, 3)], w[(2, 3)], "sign(0) = 0");
}

#[test]
fn adam_matches_hand_computed_second_step() {
    let w = DMatrix::from_row_slice(1, 2, &[1.0, -2.0]);
    let (g1, g2) = (
        DMatrix::from_row_slice(1, 2, &[0.5, -1.0]),
        DMatrix::from_row_slice(1, 2, &[0.1, 3.0]),
    );
    let (b1, b2, eps, lr) = (0.9, 0.999, 1e-8, 0.1);
    let mut opt = Adam::new(b1, b2, eps);
    let mut p = [w.clone()];
    opt.step(&mut p, std::slice::from_ref(&g1), lr);
    opt.step(&mut p, std::slice::from_ref(&g2), lr);
    for j in 0..2 {
        let mut w_j = w[j];
        let (mut m, mut v) = (0.0, 0.0);
        for (t, g) in [(1, g1[j]), (2, g2[j])] {
            m = b1 * m + (1.0 - b1) * g;
            v = b2 * v + (1.0 - b2) * g * g;
            let mh = m / (1.0 - f64::powi(b1, t));
            let vh = v / (1.0 - f64::powi(b2, t));
            w_j -= lr * mh / (vh.sqrt() + eps);
        }
        assert!((p[0][j] - w_j).abs() < 1e-15, "{} vs {w_j}", p[0][j]);
    }
}

#[test]
fn zero_denominator_gives_zero_update() {
    let w = DMatrix::from_element(2, 2, 1.0);
    let g = DMatrix::zeros(2, 2);
    assert_eq!(one_step(&mut Adam::new(0.9, 0.999, 0.0), &w, &g, 1.0), w);
    assert_eq!(one_step(&mut RmsProp::new(0.99, 0.0), &w, &g, 1.0), w);
    assert_eq!(
        one_step(&mut ScalarAdam::new(0.9, 0.999, 0.0), &w, &g, 1.0),
        w
    );
}

#[test]
fn momentum_accumulates_like_the_heavy_ball() {
    let w = DMatrix::from_element(1, 1, 0.0);
    let g = DMatrix::from_element(1, 1, 1.0);
    let mut opt = MomentumSgd::new(0.5);
    let mut p = [w];
    for _ in 0..3 {
        opt.step(&mut p, std::slice::from_ref(&g), 1.0);
    }
    // B = 1, 1.5, 1.75 → W = −4.25
    assert_eq!(p[0][0], -4.25);
}

#[test]
fn scalar_adam_pools_one_second_moment_over_every_matrix() {
    let mut opt = ScalarAdam::new(0.0, 0.0, 0.0);
    let mut p = [DMatrix::zeros(1, 2), DMatrix::zeros(2, 1)];
    let g = [
        DMatrix::from_row_slice(1, 2, &[3.0, 0.0]),
        DMatrix::from_row_slice(2, 1, &[0.0, 4.0]),
    ];
    opt.step(&mut p, &g, 1.0);
    // v = mean(G²) = 25/4, so the step is G/2.5.
    assert!((p[0][0] + 1.2).abs() < 1e-15, "{}", p[0][0]);
    assert!((p[1][1] + 1.6).abs() < 1e-15, "{}", p[1][1]);
    assert_eq!((p[0][1], p[1][0]), (0.0, 0.0));
}

/// Twin divergence ‖U(QW, QG) − Q·U(W, G)‖ / ‖W‖ after `steps` updates with gradients that
/// rotate with the weights (G′ = QG), as they do for a rotation-invariant loss.
fn twin_divergence(spec: &OptimizerSpec, steps: usize) -> f64 {
    let (mut a, mut b) = (spec.build(), spec.build());
    let mut r = rng(42);
    let q = haar_orthogonal(&mut r, 8);
    let w0 = gaussian_matrix(&mut r, 8, 12, 1.0);
    let (mut w, mut w_rot) = ([w0.clone()], [&q * &w0]);
    for _ in 0..steps {
        // Gradient of ½‖W − T‖² pulled towards a fixed target, rotated for the twin.
        let g = &w[0] - DMatrix::from_fn(8, 12, |i, j| ((i * 12 + j) as f64).sin());
        a.step(&mut w, std::slice::from_ref(&g), spec.lr);
        b.step(&mut w_rot, std::slice::from_ref(&(&q * &g)), spec.lr);
    }
    (&w_rot[0] - &q * &w[0]).norm() / w[0].norm()
}

#[test]
fn every_registered_rule_keeps_or_splits_its_twins_as_its_class_says() {
    let mut specs: Vec<OptimizerSpec> = REGISTRY
        .iter()
        .map(|info| OptimizerSpec::new(info.name, 0.01))
        .collect();
    // The dial at p = 0 is scalar-Adam, so equivariant; at its default p it is not.
    let mut dial = OptimizerSpec::new("dial", 0.01);
    dial.p = 0.0;
    specs.push(dial);
    assert!(specs.len() >= 14, "the whole registry");
    for spec in specs {
        let div = twin_divergence(&spec, 200);
        let name = format!("{} (p = {})", spec.optimizer, spec.p);
        if spec.equivariant() {
            assert!(div < 1e-12, "{name} claims equivariance but drifts {div:e}");
        } else {
            assert!(
                div > 1e-6,
                "{name} should see the basis but drifts only {div:e}"
            );
        }
    }
}

#[test]
fn adagrad_divides_by_the_root_of_every_squared_gradient_so_far() {
    let mut opt = Adagrad::new(0.0);
    let mut p = [DMatrix::from_row_slice(1, 2, &[1.0, 1.0])];
    let g1 = DMatrix::from_row_slice(1, 2, &[3.0, 0.0]);
    let g2 = DMatrix::from_row_slice(1, 2, &[4.0, 2.0]);
    opt.step(&mut p, std::slice::from_ref(&g1), 0.5);
    // First step: G/|G| per entry (a sign step); a zero gradient with no history stays put.
    assert_eq!(p[0].as_slice(), &[0.5, 1.0]);
    opt.step(&mut p, std::slice::from_ref(&g2), 0.5);
    // Second: 4/√(9 + 16) = 0.8 and 2/√4 = 1.
    assert!((p[0][0] - (0.5 - 0.5 * 0.8)).abs() < 1e-15, "{}", p[0][0]);
    assert_eq!(p[0][1], 0.5);
}

#[test]
fn a_preset_arm_takes_its_own_rules_defaults_for_fields_it_leaves_out() {
    use basis_lab::preset::Preset;
    let p = Preset::from_ron(
        "Preset(arms: [(optimizer: \"lion\", lr: 3e-4), (optimizer: \"lion\", label: \"l2\", lr: 3e-4, beta2: 0.9), (optimizer: \"adam\", lr: 0.01)])",
        "text",
    )
    .unwrap();
    assert_eq!(p.arms[0].beta2, 0.99, "Lion's own default");
    assert_eq!(p.arms[1].beta2, 0.9, "written values win");
    assert_eq!(p.arms[2].beta2, 0.999, "Adam's default");
    assert_eq!(Preset::from_ron(&p.to_ron(), "saved").unwrap(), p);
}

#[test]
fn polar_factor_is_left_equivariant_for_both_methods() {
    let mut r = rng(9);
    for (rows, cols) in [(6, 6), (4, 9), (9, 4), (16, 32), (80, 8)] {
        for _ in 0..5 {
            let m = gaussian_matrix(&mut r, rows, cols, 1.0);
            let q = haar_orthogonal(&mut r, rows);
            let qm = &q * &m;
            let exact = polar_svd(&m);
            assert!((polar_svd(&qm) - &q * &exact).amax() < 1e-12);
            let mut s = NsScratch::new(rows, cols);
            let (mut o, mut o_rot) = (DMatrix::zeros(rows, cols), DMatrix::zeros(rows, cols));
            newton_schulz(&m, &mut o, &mut s);
            newton_schulz(&qm, &mut o_rot, &mut s);
            assert!((&o_rot - &q * &o).amax() < 1e-12, "{rows}x{cols}");
            // Newton–Schulz only approximates the polar factor: singular values land in about
            // [0.7, 1.2] (Jordan et al. 2024), while the SVD one is exact.
            let sv = o.clone().singular_values();
            assert!(sv.min() > 0.5 && sv.max() < 1.3, "{sv:?}");
            let small = rows.min(cols);
            let gram = if rows <= cols {
                &exact * exact.transpose()
            } else {
                exact.transpose() * &exact
            };
            assert!((gram - DMatrix::identity(small, small)).amax() < 1e-12);
        }
    }
}

#[test]
fn muon_svd_and_newton_schulz_steps_point_the_same_way() {
    let mut r = rng(10);
    let w = gaussian_matrix(&mut r, 8, 8, 1.0);
    let g = gaussian_matrix(&mut r, 8, 8, 1.0);
    let ns = one_step(&mut Muon::new(0.9, Polar::NewtonSchulz), &w, &g, 1.0) - &w;
    let svd = one_step(&mut Muon::new(0.9, Polar::Svd), &w, &g, 1.0) - &w;
    let cos = ns.dot(&svd) / (ns.norm() * svd.norm());
    assert!(cos > 0.95, "cosine {cos}");
}

#[test]
fn gd_is_w_minus_lr_g() {
    let w = DMatrix::from_row_slice(1, 3, &[1.0, 2.0, 3.0]);
    let g = DMatrix::from_row_slice(1, 3, &[0.5, -1.0, 0.0]);
    assert_eq!(
        one_step(&mut Gd, &w, &g, 2.0),
        DMatrix::from_row_slice(1, 3, &[0.0, 4.0, 3.0])
    );
}

/// numerics §2's Newton–Schulz written literally, for comparison with the in-place version.
fn spec_newton_schulz(b: &DMatrix<f64>) -> DMatrix<f64> {
    let (a, bb, c) = (3.4445, -4.7750, 2.0315);
    let transpose = b.nrows() > b.ncols();
    let mut x = b / (b.norm() + 1e-7);
    if transpose {
        x = x.transpose();
    }
    for _ in 0..5 {
        let m = &x * x.transpose();
        x = a * &x + (bb * &m + c * &m * &m) * &x;
    }
    if transpose { x.transpose() } else { x }
}

#[test]
fn newton_schulz_is_the_spec_iteration() {
    let mut r = rng(12);
    for (rows, cols) in [(6, 6), (4, 9), (9, 4), (1, 5), (16, 32)] {
        let m = gaussian_matrix(&mut r, rows, cols, 1.0);
        let mut s = NsScratch::new(rows, cols);
        let mut o = DMatrix::zeros(rows, cols);
        newton_schulz(&m, &mut o, &mut s);
        let want = spec_newton_schulz(&m);
        assert!(
            (&o - &want).amax() < 1e-13,
            "{rows}x{cols}: {:e}",
            (&o - &want).amax()
        );
    }
}

/// `‖a − b‖F / ‖b‖F`.
fn relative(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).norm() / b.norm()
}

/// A `rows × cols` matrix with singular values spread log-evenly over `[floor, 1]`, in random
/// directions: the ill-conditioned inputs Muon's momentum gives on nearly low-rank data.
fn spread_spectrum(r: &mut ChaCha8Rng, rows: usize, cols: usize, floor: f64) -> DMatrix<f64> {
    let k = rows.min(cols);
    // Orthonormal columns from thin QRs (a full Haar matrix of side 2000 would be slow).
    let left = gaussian_matrix(r, rows, k, 1.0).qr().q();
    let right = gaussian_matrix(r, cols, k, 1.0).qr().q();
    let s = DMatrix::from_fn(k, k, |i, j| {
        if i == j {
            floor.powf(i as f64 / (k - 1).max(1) as f64)
        } else {
            0.0
        }
    });
    left * s * right.transpose()
}

#[test]
fn newton_schulz_picks_the_gram_form_only_for_long_thin_inputs() {
    for (rows, cols, form) in [
        (40, 40, NsForm::Direct),
        (16, 32, NsForm::Direct),
        (200, 48, NsForm::Direct),
        (2000, 48, NsForm::Gram),
        (48, 2000, NsForm::Gram),
        (80, 10, NsForm::Gram),
    ] {
        assert_eq!(NsForm::for_shape(rows, cols), form, "{rows}x{cols}");
    }
}

#[test]
fn the_gram_form_agrees_with_the_direct_form() {
    let mut r = rng(13);
    for (rows, cols) in [(2000, 48), (48, 2000), (200, 48), (90, 9), (9, 90)] {
        let mut s = NsScratch::new(rows, cols);
        let (mut direct, mut gram) = (DMatrix::zeros(rows, cols), DMatrix::zeros(rows, cols));
        let mut compare = |b: &DMatrix<f64>| {
            newton_schulz_in(NsForm::Direct, b, &mut direct, &mut s);
            newton_schulz_in(NsForm::Gram, b, &mut gram, &mut s);
            assert!(relative(&direct, &spec_newton_schulz(b)) < 1e-13);
            relative(&gram, &direct)
        };
        // Condition numbers up to 1e2, as the completion momentum has (about 10 to 65 over
        // the first 300 Muon steps on Indian Pines): within 1e-12.
        let tame = [
            gaussian_matrix(&mut r, rows, cols, 1.0),
            spread_spectrum(&mut r, rows, cols, 1e-2),
            1e4 * spread_spectrum(&mut r, rows, cols, 0.1),
        ];
        for (i, b) in tame.iter().enumerate() {
            let rel = compare(b);
            assert!(rel < 1e-12, "{rows}x{cols} input {i}: {rel:e}");
        }
        // Forming YᵀY squares the spread of the small singular values, so far more
        // ill-conditioned inputs lose more in the Gram form (a few 1e-12).
        for floor in [1e-4, 1e-8, 1e-12] {
            let rel = compare(&spread_spectrum(&mut r, rows, cols, floor));
            assert!(rel < 1e-11, "{rows}x{cols} floor {floor:e}: {rel:e}");
        }
    }
}

#[test]
fn scalar_adam_and_rmsprop_match_hand_computed_steps() {
    let g1 = DMatrix::from_row_slice(1, 2, &[1.0, -3.0]);
    let g2 = DMatrix::from_row_slice(1, 2, &[2.0, 0.5]);
    let (b1, b2, eps, lr) = (0.9, 0.999, 1e-3, 0.1);
    let mut opt = ScalarAdam::new(b1, b2, eps);
    let mut p = [DMatrix::zeros(1, 2)];
    let (mut m, mut v, mut w) = ([0.0f64; 2], 0.0f64, [0.0f64; 2]);
    for (t, g) in [(1, &g1), (2, &g2)] {
        opt.step(&mut p, std::slice::from_ref(g), lr);
        v = b2 * v + (1.0 - b2) * (g[0] * g[0] + g[1] * g[1]) / 2.0;
        let denom = (v / (1.0 - f64::powi(b2, t))).sqrt() + eps;
        for j in 0..2 {
            m[j] = b1 * m[j] + (1.0 - b1) * g[j];
            w[j] -= lr * (m[j] / (1.0 - f64::powi(b1, t))) / denom;
        }
    }
    for j in 0..2 {
        assert!(
            (p[0][j] - w[j]).abs() < 1e-15,
            "scalar-Adam {j}: {} vs {}",
            p[0][j],
            w[j]
        );
    }
    let (alpha, eps) = (0.99, 1e-8);
    let mut opt = RmsProp::new(alpha, eps);
    let mut p = [DMatrix::zeros(1, 2)];
    let (mut v, mut w) = ([0.0f64; 2], [0.0f64; 2]);
    for g in [&g1, &g2] {
        opt.step(&mut p, std::slice::from_ref(g), lr);
        for j in 0..2 {
            v[j] = alpha * v[j] + (1.0 - alpha) * g[j] * g[j];
            w[j] -= lr * g[j] / (v[j].sqrt() + eps);
        }
    }
    for j in 0..2 {
        assert!(
            (p[0][j] - w[j]).abs() < 1e-15,
            "RMSProp {j}: {} vs {}",
            p[0][j],
            w[j]
        );
    }
}

#[test]
fn muon_momentum_feeds_the_orthogonaliser() {
    // Two steps with the SVD polar factor: W2 = W0 − lr·O(G1) − lr·O(μG1 + G2).
    let mut r = rng(13);
    let w0 = gaussian_matrix(&mut r, 5, 7, 1.0);
    let (g1, g2) = (
        gaussian_matrix(&mut r, 5, 7, 1.0),
        gaussian_matrix(&mut r, 5, 7, 1.0),
    );
    let mut opt = Muon::new(0.9, Polar::Svd);
    let mut p = [w0.clone()];
    opt.step(&mut p, std::slice::from_ref(&g1), 0.1);
    opt.step(&mut p, std::slice::from_ref(&g2), 0.1);
    let want = &w0 - 0.1 * polar_svd(&g1) - 0.1 * polar_svd(&(0.9 * &g1 + &g2));
    assert!((&p[0] - &want).amax() < 1e-14);
}

fn run_steps(opt: &mut dyn Optimizer, grads: &[[DMatrix<f64>; 2]]) -> [DMatrix<f64>; 2] {
    let mut p = [
        DMatrix::from_element(2, 3, 0.5),
        DMatrix::from_element(3, 2, -0.25),
    ];
    for g in grads {
        opt.step(&mut p, g, 0.01);
    }
    p
}

fn random_grads(seed: u64, n: usize) -> Vec<[DMatrix<f64>; 2]> {
    let mut r = rng(seed);
    (0..n)
        .map(|_| {
            [
                gaussian_matrix(&mut r, 2, 3, 1.0),
                gaussian_matrix(&mut r, 3, 2, 0.1),
            ]
        })
        .collect()
}

#[test]
fn the_dial_ends_at_adam_and_at_scalar_adam() {
    let grads = random_grads(20, 6);
    let close = |a: &[DMatrix<f64>; 2], b: &[DMatrix<f64>; 2]| {
        (&a[0] - &b[0]).amax().max((&a[1] - &b[1]).amax())
    };
    let adam = run_steps(&mut Adam::new(0.9, 0.999, 1e-8), &grads);
    let p1 = run_steps(&mut Dial::new(1.0, 0.9, 0.999, 1e-8), &grads);
    assert!(close(&adam, &p1) < 1e-15);
    let scalar = run_steps(&mut ScalarAdam::new(0.9, 0.999, 1e-8), &grads);
    let p0 = run_steps(&mut Dial::new(0.0, 0.9, 0.999, 1e-8), &grads);
    assert!(close(&scalar, &p0) < 1e-15);
    let half = run_steps(&mut Dial::new(0.5, 0.9, 0.999, 1e-8), &grads);
    assert!(close(&half, &adam) > 1e-6 && close(&half, &scalar) > 1e-6);
}

#[test]
fn lion_and_signum_match_hand_computed_steps() {
    let g1 = DMatrix::from_row_slice(1, 2, &[1.0, -2.0]);
    let g2 = DMatrix::from_row_slice(1, 2, &[-3.0, 0.5]);
    // Lion: c = sign(0.9 m + 0.1 g) from the old m, then m ← 0.99 m + 0.01 g.
    // Step 1: m = 0 → c = sign(g1) = (1, −1); m = (0.01, −0.02).
    // Step 2: 0.9 m + 0.1 g2 = (0.009 − 0.3, −0.018 + 0.05) → c = (−1, 1).
    let mut lion = Lion::new(0.9, 0.99);
    let mut p = [DMatrix::zeros(1, 2)];
    lion.step(&mut p, std::slice::from_ref(&g1), 0.1);
    assert_eq!(p[0], DMatrix::from_row_slice(1, 2, &[-0.1, 0.1]));
    lion.step(&mut p, std::slice::from_ref(&g2), 0.1);
    assert_eq!(p[0], DMatrix::from_row_slice(1, 2, &[0.0, 0.0]));
    // Signum: m ← 0.9 m + 0.1 g, step −lr·sign(m).
    // Step 2: m = 0.9·(0.1, −0.2) + 0.1·(−3, 0.5) = (−0.21, −0.13) → both coordinates move up.
    let mut signum = Signum::new(0.9);
    let mut p = [DMatrix::zeros(1, 2)];
    signum.step(&mut p, std::slice::from_ref(&g1), 0.1);
    signum.step(&mut p, std::slice::from_ref(&g2), 0.1);
    assert!((&p[0] - DMatrix::from_row_slice(1, 2, &[0.0, 0.2])).amax() < 1e-15);
}

#[test]
fn adafactor_is_exact_when_the_squared_gradient_has_rank_one() {
    // G = a bᵀ makes G⊙G = (a⊙a)(b⊙b)ᵀ, which the factored moment reproduces exactly:
    // after one step V̂ = (1 − β2)·G⊙G, so the step is −lr·sign(G)/√(1 − β2) at ε = 0.
    let (a, b) = ([1.0, -2.0, 0.5], [3.0, 0.25]);
    let g = DMatrix::from_fn(3, 2, |i, j| a[i] * b[j]);
    let mut opt = Adafactor::new(0.999, 0.0);
    let mut p = [DMatrix::zeros(3, 2)];
    opt.step(&mut p, std::slice::from_ref(&g), 0.01);
    let want = g.map(|x| -0.01 * x.signum() / (1.0f64 - 0.999).sqrt());
    assert!((&p[0] - &want).amax() < 1e-12, "{}", (&p[0] - &want).amax());
}

#[test]
fn shampoo_refreshes_its_roots_at_steps_1_21_41() {
    let g = DMatrix::from_row_slice(2, 2, &[1.0, 0.5, -0.3, 2.0]);
    let mut opt = Shampoo::new(1.0, 20);
    let mut p = [DMatrix::zeros(2, 2)];
    let mut deltas = Vec::new();
    for _ in 0..45 {
        let before = p[0].clone();
        opt.step(&mut p, std::slice::from_ref(&g), 0.1);
        deltas.push(&p[0] - before);
    }
    // With a constant gradient the step changes only when the roots are recomputed.
    for t in 1..45 {
        let changed = (&deltas[t] - &deltas[t - 1]).amax() > 1e-12;
        assert_eq!(changed, t == 20 || t == 40, "step {} (t = {})", t, t + 1);
    }
    // The first step uses (GGᵀ + I)^(−1/4) G (GᵀG + I)^(−1/4), accumulated from zero.
    let root = |m: DMatrix<f64>| {
        let e = (m + DMatrix::<f64>::identity(2, 2)).symmetric_eigen();
        &e.eigenvectors
            * DMatrix::from_diagonal(&e.eigenvalues.map(|x| x.powf(-0.25)))
            * e.eigenvectors.transpose()
    };
    let first = root(&g * g.transpose()) * &g * root(g.transpose() * &g) * -0.1;
    assert!((&deltas[0] - first).amax() < 1e-14);
}

#[test]
fn every_rule_reads_back_from_a_saved_preset_what_it_was_given() {
    use basis_lab::optim::Hyper;
    use basis_lab::preset::Preset;
    // Each rule at its own defaults, and with every hyperparameter at the common default:
    // fields a file may leave out must come back as they were, whatever the rule's defaults.
    let common = OptimizerSpec::default();
    for info in REGISTRY {
        let own = OptimizerSpec::new(info.name, 0.1);
        let mut plain = own.clone();
        for h in Hyper::ALL {
            if let (Some(v), Some(x)) = (plain.value_mut(h), common.value(h)) {
                *v = x;
            }
        }
        plain.root_every = common.root_every;
        plain.label = Some("plain".into());
        let p = Preset {
            arms: vec![own, plain],
            ..Preset::default()
        };
        let back = Preset::from_ron(&p.to_ron(), "saved").unwrap();
        assert_eq!(back.arms, p.arms, "{}", info.name);
    }
}

/// Adam's update runs on the pool for 2¹⁵ parameters or more (attention's sizes): the same bits
/// on 1, 2 and 3 threads over a few steps, entry by entry.
#[test]
fn adam_on_the_pool_gives_the_same_bits_on_any_thread_count() {
    let mut r = ChaCha8Rng::seed_from_u64(5);
    let start: Vec<DMatrix<f64>> = (0..3)
        .map(|_| gaussian_matrix(&mut r, 128, 130, 1.0))
        .collect();
    let grads: Vec<Vec<DMatrix<f64>>> = (0..4)
        .map(|_| {
            (0..3)
                .map(|_| gaussian_matrix(&mut r, 128, 130, 0.3))
                .collect()
        })
        .collect();
    assert!(
        start.iter().map(|m| m.len()).sum::<usize>() >= 1 << 15,
        "on the pool"
    );
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut params = start.clone();
            let mut adam = Adam::new(0.9, 0.999, 1e-8);
            for g in &grads {
                adam.step(&mut params, g, 1e-3);
            }
            params
        })
    };
    let one = run(1);
    assert_ne!(one, start, "the steps moved the weights");
    for threads in [2, 3] {
        let other = run(threads);
        let same = one.iter().zip(&other).all(|(a, b)| {
            a.iter()
                .zip(b.iter())
                .all(|(x, y)| x.to_bits() == y.to_bits())
        });
        assert!(same, "{threads} threads");
    }
}
