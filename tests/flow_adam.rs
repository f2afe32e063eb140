//! FlowAdam (numerics §10): its Dormand–Prince 5(4) integrator against exact solutions, both
//! clips, the plateau and stiffness triggers, the blend of the flow into the first moment, the
//! count of the oracle's gradients, and its gauge twins in the gauge lab.

use basis_lab::linalg::ode::DormandPrince;
use basis_lab::optim::{
    FlowAdam, FlowClip, FlowSettings, GradientOracle, Optimizer, OptimizerSpec,
};
use basis_lab::sensing::zoo::{FactorRun, Rule};
use basis_lab::sensing::{SensingConfig, SensingOracle, SensingProblem, SensingWorkspace};
use nalgebra::DMatrix;

/// `y' = J y` with `J` a rotation generator plus a decay: the exact solution is `e^{−a t}`
/// times a rotation by `ω t`.
#[test]
fn the_integrator_follows_a_damped_rotation_to_its_tolerance() {
    let (a, w) = (0.3, 2.0);
    let mut y = vec![DMatrix::from_column_slice(2, 1, &[1.0, 0.5])];
    let mut f = |at: &[DMatrix<f64>], out: &mut [DMatrix<f64>]| {
        let (x0, x1) = (at[0][0], at[0][1]);
        out[0][0] = -a * x0 - w * x1;
        out[0][1] = w * x0 - a * x1;
    };
    let t_end = 5.0;
    let stats = DormandPrince::new().integrate(&mut y, t_end, 1e-8, 1e-8, None, &mut f);
    let (c, s, d) = ((w * t_end).cos(), (w * t_end).sin(), (-a * t_end).exp());
    let exact = [d * (c - 0.5 * s), d * (s + 0.5 * c)];
    let err = ((y[0][0] - exact[0]).powi(2) + (y[0][1] - exact[1]).powi(2)).sqrt();
    assert!(err < 1e-7, "error {err:e}");
    assert!(stats.complete && stats.accepted > 5, "{stats:?}");
    // First-same-as-last: six evaluations per attempt plus the first slope.
    assert_eq!(stats.evaluations, 1 + 6 * (stats.accepted + stats.rejected));
}

/// `y' = −λ ⊙ y` on a matrix with distinct rates: each entry decays as `e^{−λ t}`.
#[test]
fn the_integrator_meets_looser_tolerances_with_fewer_steps() {
    let rates = DMatrix::from_fn(3, 2, |i, j| 0.5 + (i + 3 * j) as f64);
    let mut steps = Vec::new();
    for tol in [1e-4, 1e-8] {
        let mut y = vec![DMatrix::from_element(3, 2, 1.0)];
        let stats = DormandPrince::new().integrate(&mut y, 2.0, tol, tol, None, &mut |at, out| {
            out[0] = -at[0].component_mul(&rates);
        });
        let exact = rates.map(|l| (-2.0 * l).exp());
        let err = (&y[0] - &exact).abs().max();
        assert!(err < 10.0 * tol, "tol {tol}: error {err:e}");
        assert!(stats.complete);
        steps.push(stats.accepted);
    }
    assert!(steps[0] < steps[1], "{steps:?}");
}

#[test]
fn a_supplied_first_slope_is_not_counted_and_an_empty_interval_changes_nothing() {
    let mut y = vec![DMatrix::from_element(2, 2, 1.0)];
    let slope = vec![DMatrix::from_element(2, 2, -1.0)];
    let mut f = |at: &[DMatrix<f64>], out: &mut [DMatrix<f64>]| out[0] = -&at[0];
    let stats = DormandPrince::new().integrate(&mut y, 1e-3, 1e-4, 1e-4, Some(&slope), &mut f);
    assert_eq!((stats.evaluations, stats.accepted), (6, 1));
    assert!((y[0][0] - (-1e-3f64).exp()).abs() < 1e-15);
    let before = y.clone();
    let stats = DormandPrince::new().integrate(&mut y, 0.0, 1e-4, 1e-4, None, &mut f);
    assert_eq!(y, before);
    assert!(stats.complete);
}

#[test]
fn the_per_coordinate_clip_clamps_entries_and_the_global_clip_scales_the_whole() {
    let g = || {
        vec![
            DMatrix::from_row_slice(1, 3, &[3.0, -0.5, -2.0]),
            DMatrix::from_element(1, 1, 0.25),
        ]
    };
    let mut per = g();
    FlowClip::PerCoordinate.apply(&mut per, 1.0);
    assert_eq!(per[0].as_slice(), &[1.0, -0.5, -1.0]);
    assert_eq!(per[1][0], 0.25);
    let mut global = g();
    FlowClip::GlobalNorm.apply(&mut global, 1.0);
    let norm: f64 = global.iter().map(|m| m.norm_squared()).sum::<f64>().sqrt();
    assert!((norm - 1.0).abs() < 1e-15);
    // Direction kept: every entry scaled by the same factor.
    let factor = global[0][0] / 3.0;
    assert!((global[1][0] - 0.25 * factor).abs() < 1e-16);
    // Under the threshold the global clip does nothing.
    let mut small = vec![DMatrix::from_element(2, 2, 0.1)];
    FlowClip::GlobalNorm.apply(&mut small, 1.0);
    assert_eq!(small[0], DMatrix::from_element(2, 2, 0.1));
    // The paper's experiments clip the global norm at 10.
    let mut ten = g();
    FlowClip::GlobalNorm.apply(&mut ten, 10.0);
    assert_eq!(ten, g(), "‖g‖ ≈ 3.6 is under 10");
}

/// The loss `L(θ) = ⟨G, θ⟩` (a constant gradient `G`), counting its calls.
struct Linear {
    g: DMatrix<f64>,
    calls: u64,
}

impl GradientOracle for Linear {
    fn gradient(&mut self, at: &[DMatrix<f64>], grads: &mut [DMatrix<f64>]) -> f64 {
        self.calls += 1;
        grads[0].copy_from(&self.g);
        self.g.dot(&at[0])
    }
}

/// Steps `opt` on `grads[k]` in turn with `oracle`; returns the flow-step count after each.
fn run(opt: &mut FlowAdam, grads: &[DMatrix<f64>], oracle: &mut Linear) -> Vec<u64> {
    let mut w = vec![DMatrix::from_element(2, 2, 0.5)];
    grads
        .iter()
        .map(|g| {
            opt.step_with(&mut w, std::slice::from_ref(g), 1e-3, oracle);
            opt.flow_steps()
        })
        .collect()
}

fn adam(clip: FlowClip) -> FlowAdam {
    FlowAdam::new(clip, 1.0, 0.9, 0.999, 1e-8)
}

#[test]
fn a_plateau_triggers_a_flow_step_only_after_the_first_ten_steps() {
    let g = DMatrix::from_element(2, 2, 0.3);
    let mut oracle = Linear {
        g: g.clone(),
        calls: 0,
    };
    // A drop to a tenth at step 5 is a plateau but too early; at step 15 it flows.
    let mut grads = vec![g.clone(); 20];
    grads[5] = &g * 0.1;
    grads[15] = &g * 0.1;
    let flows = run(&mut adam(FlowClip::GlobalNorm), &grads, &mut oracle);
    assert_eq!(flows[5], 0, "no flow within the first ten steps");
    assert_eq!(
        flows[14], 0,
        "a steady gradient is neither plateau nor stiff"
    );
    assert_eq!(flows[15], 1, "{flows:?}");
    // Step 16 returns to the old norm: a change of 0.9‖g‖ is more than a tenth of its running
    // average (0.42‖g‖ by then), so it is stiff and flows too.
    assert_eq!(flows[16], 2, "{flows:?}");
    assert_eq!(flows[19], 2, "{flows:?}");
}

#[test]
fn a_stiff_change_triggers_a_flow_step_at_the_same_norm() {
    let g = DMatrix::from_fn(2, 2, |i, j| 0.1 + (i + 2 * j) as f64 * 0.1);
    let mut oracle = Linear {
        g: g.clone(),
        calls: 0,
    };
    // The same norm with the entries permuted: no plateau, but a jump in the change.
    let mut swapped = g.clone();
    swapped.swap_columns(0, 1);
    let mut grads = vec![g.clone(); 20];
    grads[13] = swapped;
    let flows = run(&mut adam(FlowClip::PerCoordinate), &grads, &mut oracle);
    assert_eq!(flows[12], 0);
    assert_eq!(flows[13], 1, "{flows:?}");
}

#[test]
fn a_flow_step_moves_along_the_clipped_gradient_and_blends_its_velocity_into_m() {
    // A constant gradient with entries beyond the clip: the flow moves θ by −lr·clip(G)
    // exactly, and the velocity clip(G) enters the first moment with weight ½ (capped at 5‖m‖).
    let g = DMatrix::from_row_slice(2, 2, &[40.0, -5.0, 20.0, 1.0]);
    for clip in [FlowClip::PerCoordinate, FlowClip::GlobalNorm] {
        let mut oracle = Linear {
            g: g.clone(),
            calls: 0,
        };
        let mut opt = adam(clip);
        let mut w = vec![DMatrix::from_element(2, 2, 0.5)];
        for _ in 0..12 {
            opt.step_with(&mut w, std::slice::from_ref(&g), 1e-3, &mut oracle);
        }
        assert_eq!(opt.flow_steps(), 0);
        let m_before = opt.first_moment()[0].clone();
        let w_before = w[0].clone();
        // A plateau: the gradient drops to a tenth, and the loss is now `⟨G/10, θ⟩`.
        let drop = &g * 0.1;
        oracle.g = drop.clone();
        opt.step_with(&mut w, std::slice::from_ref(&drop), 1e-3, &mut oracle);
        assert_eq!(opt.flow_steps(), 1, "{clip:?}");
        // Over t ∈ [0, lr·t_scale]: the paper's t_scale is ½; its global clip is at c = 10,
        // above ‖G/10‖ ≈ 4.5, so only the per-coordinate clip changes G here.
        let mut clipped = vec![drop.clone()];
        let c = match clip {
            FlowClip::PerCoordinate => 1.0,
            FlowClip::GlobalNorm => FlowSettings::PAPER.clip,
        };
        clip.apply(&mut clipped, c);
        assert_eq!(clipped[0] == drop, clip == FlowClip::GlobalNorm);
        let moved = (&w_before - &w[0]) / 1e-3;
        let half = &clipped[0] * FlowSettings::PAPER.t_scale;
        assert!((&moved - &half).norm() < 1e-9, "{clip:?}: {moved}");
        let mut u = half.clone();
        let cap = 5.0 * m_before.norm();
        if u.norm() > cap {
            u *= cap / (u.norm() + 1e-8);
        }
        let expected = (&m_before + &u) * 0.5;
        let m = &opt.first_moment()[0];
        assert!(
            (m - &expected).norm() < 1e-9 * expected.norm(),
            "{clip:?}: {m} vs {expected}"
        );
    }
}

#[test]
fn every_gradient_of_the_flow_is_counted_and_none_without_an_oracle() {
    let g = DMatrix::from_element(2, 2, 0.3);
    let mut grads = vec![g.clone(); 30];
    for k in [12, 17, 25] {
        grads[k] = &g * 0.1;
    }
    let mut oracle = Linear {
        g: g.clone(),
        calls: 0,
    };
    let mut opt = adam(FlowClip::GlobalNorm);
    let flows = run(&mut opt, &grads, &mut oracle);
    assert!(flows[29] >= 3, "{flows:?}");
    assert_eq!(opt.oracle_evaluations(), oracle.calls);
    // A constant field has no error, so each flow is one accepted step of six evaluations.
    assert_eq!(oracle.calls, 6 * flows[29]);
    // Through the plain step there is no oracle: no flow, nothing counted.
    let mut plain = adam(FlowClip::GlobalNorm);
    let mut w = vec![DMatrix::from_element(2, 2, 0.5)];
    for g in &grads {
        plain.step(&mut w, std::slice::from_ref(g), 1e-3);
    }
    assert_eq!((plain.flow_steps(), plain.oracle_evaluations()), (0, 0));
}

/// On the zoo protocol (n = 40, rank 3, init 1e-3, lr 1e-3) the paper's settings flow from the
/// first steps after the warm-up, and the package's defaults never do: the reason the registered
/// rules take the paper's.
#[test]
fn the_papers_settings_flow_on_the_zoo_protocol_and_the_package_defaults_do_not() {
    let cfg = SensingConfig {
        n: 40,
        rank: 3,
        ratio: 2.0,
        init: 1e-3,
        tau: 0.0,
    };
    let problem = SensingProblem::new(&cfg, 0);
    let flows = |settings: FlowSettings| {
        let (u, v) = problem.init(0);
        let mut params = [u, v];
        let mut opt = FlowAdam::new(FlowClip::PerCoordinate, 1.0, 0.9, 0.999, 1e-8);
        opt.settings = settings;
        let mut ws = SensingWorkspace::new(cfg.n);
        let mut g = [DMatrix::zeros(cfg.n, cfg.n), DMatrix::zeros(cfg.n, cfg.n)];
        for _ in 0..300 {
            problem.loss_and_grad(&params[0], &params[1], &mut g, &mut ws);
            let mut oracle = SensingOracle {
                problem: &problem,
                ws: &mut ws,
            };
            opt.step_with(&mut params, &g, 1e-3, &mut oracle);
        }
        opt.flow_steps()
    };
    let (paper, package) = (flows(FlowSettings::PAPER), flows(FlowSettings::PACKAGE));
    assert_eq!(package, 0);
    assert!(paper > 100, "{paper} flow steps of 300");
}

/// Init scale of the twins' problem: the zoo's small init, from which the escape at a rate of
/// 1e-2 trips the triggers and the gradient's entries pass the clip.
const INIT: f64 = 1e-3;

/// The twins' problem: n = 12, rank 2, 2n² measurements, init [`INIT`].
fn small() -> SensingConfig {
    SensingConfig {
        n: 12,
        rank: 2,
        ratio: 2.0,
        init: INIT,
        tau: 0.0,
    }
}

/// Twins in the gauge lab at optimizer level: the same FlowAdam from (U, V) and from (UQ, VQ)
/// for `steps` steps on the sensing loss; returns the factor drift ‖U′ − UQ‖/‖UQ‖ and the
/// flow steps taken.
fn gauge_twins(clip: FlowClip, p: f64, steps: usize) -> (f64, u64) {
    let cfg = small();
    let problem = SensingProblem::new(&cfg, 3);
    let (u, v) = problem.init(3);
    let q = problem.gauge(3);
    let mut a = [u.clone(), v.clone()];
    let mut b = [&u * &q, &v * &q];
    let (mut oa, mut ob) = (
        FlowAdam::new(clip, p, 0.9, 0.999, 1e-8),
        FlowAdam::new(clip, p, 0.9, 0.999, 1e-8),
    );
    let mut ws = SensingWorkspace::new(cfg.n);
    let mut g = [DMatrix::zeros(cfg.n, cfg.n), DMatrix::zeros(cfg.n, cfg.n)];
    for _ in 0..steps {
        for (params, opt) in [(&mut a, &mut oa), (&mut b, &mut ob)] {
            problem.loss_and_grad(&params[0], &params[1], &mut g, &mut ws);
            let mut oracle = SensingOracle {
                problem: &problem,
                ws: &mut ws,
            };
            opt.step_with(params, &g, 0.01, &mut oracle);
        }
    }
    assert_eq!(oa.flow_steps(), ob.flow_steps());
    let uq = &a[0] * &q;
    ((&b[0] - &uq).norm() / uq.norm(), oa.flow_steps())
}

#[test]
fn the_global_clip_at_p_0_keeps_gauge_twins_at_rounding_and_the_per_coordinate_clip_splits_them() {
    let (global, flows) = gauge_twins(FlowClip::GlobalNorm, 0.0, 400);
    assert!(flows > 0, "the test needs flow steps");
    assert!(
        global < 1e-12,
        "global-norm clip at p = 0: drift {global:e}"
    );
    let (per, flows) = gauge_twins(FlowClip::PerCoordinate, 0.0, 400);
    assert!(flows > 0);
    assert!(
        per > 1e-6,
        "per-coordinate clip at p = 0: drift only {per:e}"
    );
    eprintln!("drift: global {global:e}, per-coordinate {per:e}, flows {flows}");
}

#[test]
fn the_registry_classes_and_the_zoo_report_its_gradients() {
    let per = OptimizerSpec::new("flow_adam", 1e-3);
    assert!(!per.equivariant());
    let mut fp = OptimizerSpec::new("flow_adam_p", 1e-3);
    assert!(!fp.equivariant(), "p = 0.5 by default, as the dial");
    fp.p = 0.0;
    assert!(fp.equivariant());
    let cfg = small();
    let problem = SensingProblem::new(&cfg, 3);
    let rule = Rule::named("flow_adam_p").unwrap().with_arg(0.0);
    let mut run = FactorRun::new(&problem, rule, 1e-2, 600, 3, true);
    for _ in 0..600 {
        if run.step().is_some() {
            break;
        }
    }
    let r = run.summary(3, basis_lab::sensing::zoo::Outcome::Budget);
    assert!(r.extra_gradients > 0, "{r:?}");
    assert_eq!(r.extra_gradients % 6, 0);
    assert!(
        run.factor_drift().unwrap() < 1e-12,
        "{:?}",
        run.factor_drift()
    );
}

/// A sweep with a flow rule counts every rule's gradients (steps plus the flow's), so FlowAdam
/// compares with the others at equal cost: in the summaries, the Markdown and the CSV.
#[test]
fn a_zoo_with_a_flow_rule_reports_gradients_per_run_beside_steps() {
    use basis_lab::sensing::zoo::{ZooPreset, csv_bytes, markdown, run_zoo, summarise};
    let p = ZooPreset::from_ron(
        "ZooPreset(problem: (n: 12, rank: 2, init: 1e-3), seeds: 1, budget: 300, \
         rules: [Gd, FlowAdamP(0.0)], rates: [0.01], reference: false)",
        "p.ron",
    )
    .unwrap();
    let runs = run_zoo(&p, &|| {}, &std::sync::atomic::AtomicBool::new(false));
    let s = summarise(&runs);
    let (gd, flow) = (&runs[0], &runs[1]);
    assert_eq!(gd.extra_gradients, 0);
    assert!(flow.extra_gradients > 0, "{flow:?}");
    assert_eq!(s[0].gradients, Some(gd.steps as f64));
    assert_eq!(
        s[1].gradients,
        Some((flow.steps as u64 + flow.extra_gradients) as f64)
    );
    let csv = String::from_utf8(csv_bytes(&runs, &s).unwrap()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].ends_with(",selected,extra_gradients"),
        "{}",
        lines[0]
    );
    assert!(
        lines[2].ends_with(&format!(",{}", flow.extra_gradients)),
        "{}",
        lines[2]
    );
    assert!(markdown(&p, &s, &runs).contains(" gradients |"));
    // Without a flow rule nothing changes: no column, no field.
    let plain: Vec<_> = runs[..1].to_vec();
    let s = summarise(&plain);
    assert_eq!(s[0].gradients, None);
    let csv = String::from_utf8(csv_bytes(&plain, &s).unwrap()).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",selected"));
}
