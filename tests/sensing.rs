//! The gauge lab's numerics (numerics §7): the sensing gradient, gauge equivariance of each rule,
//! balancedness under GD, effective rank, the spectral tail and the selection rule.

mod common;

use basis_lab::sensing::nuclear::{MAX_ITERATIONS, TOLERANCE, min_nuclear_norm};
use basis_lab::sensing::zoo::{
    FactorRun, Outcome, RECOVERED, REFERENCE, Rule, RunResult, ZooPreset, csv_bytes, is_reference,
    markdown, run_zoo, summarise,
};
use basis_lab::sensing::{
    SensingConfig, SensingProblem, SensingWorkspace, balancedness, effective_rank,
};
use nalgebra::DMatrix;
use std::sync::atomic::AtomicBool;

/// The zoo rule of registry entry `name`.
fn rule(name: &str) -> basis_lab::sensing::zoo::Rule {
    basis_lab::sensing::zoo::Rule::named(name).expect("a registered rule")
}

fn small(n: usize, rank: usize, init: f64) -> SensingConfig {
    SensingConfig {
        n,
        rank,
        ratio: 2.0,
        init,
        tau: 0.0,
    }
}

#[test]
fn gradient_matches_central_differences() {
    for seed in 0..5 {
        let p = SensingProblem::new(&small(5, 2, 0.4), seed);
        let (u, v) = p.init(seed);
        let mut ws = SensingWorkspace::new(5);
        let mut g = [DMatrix::zeros(5, 5), DMatrix::zeros(5, 5)];
        p.loss_and_grad(&u, &v, &mut g, &mut ws);
        let mut scratch = [DMatrix::zeros(5, 5), DMatrix::zeros(5, 5)];
        let mut loss =
            |u: &DMatrix<f64>, v: &DMatrix<f64>| p.loss_and_grad(u, v, &mut scratch, &mut ws);
        let h = 1e-6;
        for (which, grad) in g.iter().enumerate() {
            let mut fd = DMatrix::zeros(5, 5);
            for i in 0..25 {
                let (mut a, mut b) = ([u.clone(), v.clone()], [u.clone(), v.clone()]);
                a[which][i] += h;
                b[which][i] -= h;
                fd[i] = (loss(&a[0], &a[1]) - loss(&b[0], &b[1])) / (2.0 * h);
            }
            let rel = (grad - &fd).norm() / grad.norm();
            assert!(grad.norm() > 1e-6);
            assert!(rel < 1e-7, "seed {seed} factor {which}: {rel:e}");
        }
    }
}

/// Drift of the gauge twin's product after `steps` steps, and how far UVᵀ itself moved.
fn twin_drift(rule: Rule, lr: f64, steps: usize) -> (f64, f64, f64) {
    let p = SensingProblem::new(&small(12, 2, 0.3), 3);
    let mut run = FactorRun::new(&p, rule, lr, 10_000, 3, true);
    let w0 = &run.params[0] * run.params[1].transpose();
    for _ in 0..steps {
        assert!(run.step().is_none(), "{rule:?} stopped early");
    }
    let w = &run.params[0] * run.params[1].transpose();
    (
        run.twin_drift().unwrap(),
        (&w - &w0).norm() / w0.norm(),
        run.factor_drift().unwrap(),
    )
}

#[test]
fn every_registered_rule_keeps_or_splits_its_gauge_twin_as_its_class_says() {
    // Every rule of the registry at the lowest rate of its zoo grid (Muon at its selected 0.1
    // amplifies rounding on this small problem), and the dial also at p = 0, where it is
    // scalar-Adam and so equivariant.
    let mut rules = Rule::all();
    rules.push(rule("dial").with_arg(0.0));
    assert!(rules.len() >= 14, "the whole registry");
    for rule in rules {
        let (drift, moved, factors) = twin_drift(rule, rule.grid()[0], 50);
        assert!(
            moved > 0.01,
            "{rule:?}: UVᵀ moved only {moved:e}, the test would be vacuous"
        );
        if rule.equivariant() {
            assert!(
                drift < 1e-10,
                "{rule:?} claims equivariance but drifts {drift:e}"
            );
            assert!(
                factors < 1e-10,
                "{rule:?}: the twin's factors left UQ ({factors:e})"
            );
        } else {
            assert!(
                drift > 1e-6,
                "{rule:?} should split its twin but drifts {drift:e}"
            );
            assert!(
                factors > 1e-6,
                "{rule:?}: factors stayed at UQ ({factors:e})"
            );
        }
    }
}

#[test]
fn one_gd_step_changes_the_imbalance_only_at_second_order() {
    let p = SensingProblem::new(&small(10, 2, 0.3), 1);
    let (u, v) = p.init(1);
    let mut ws = SensingWorkspace::new(10);
    let mut g = [DMatrix::zeros(10, 10), DMatrix::zeros(10, 10)];
    p.loss_and_grad(&u, &v, &mut g, &mut ws);
    let imbalance = |u: &DMatrix<f64>, v: &DMatrix<f64>| u.transpose() * u - v.transpose() * v;
    let before = imbalance(&u, &v);
    for lr in [1e-2, 5e-3] {
        let (u2, v2) = (&u - &g[0] * lr, &v - &g[1] * lr);
        let change = imbalance(&u2, &v2) - &before;
        // The first-order terms cancel exactly; what is left is lr²(GᵤᵀGᵤ − GᵥᵀGᵥ).
        let second = (g[0].transpose() * &g[0] - g[1].transpose() * &g[1]) * (lr * lr);
        assert!((&change - &second).norm() < 1e-12 * before.norm().max(1.0));
        assert!(change.norm() > 0.0);
    }
}

#[test]
fn gd_keeps_balancedness_small_over_a_run() {
    // From a balanced-to-1e-6 start, 300 GD steps at lr 0.01 add only O(lr²) per step.
    let p = SensingProblem::new(&small(10, 2, 1e-3), 4);
    let mut run = FactorRun::new(&p, rule("gd"), 0.01, 300, 4, false);
    let start = balancedness(&run.params[0], &run.params[1]);
    while run.step().is_none() {}
    let end = balancedness(&run.params[0], &run.params[1]);
    let (u, v) = (&run.params[0], &run.params[1]);
    let scale = (u.transpose() * u).norm() + (v.transpose() * v).norm();
    assert!(scale > 0.1, "the factors should have grown ({scale})");
    assert!(
        end - start < 1e-3 * scale,
        "balancedness {start:e} → {end:e} against {scale}"
    );
}

#[test]
fn runs_stop_by_the_budget_or_at_an_interpolation_check() {
    let p = SensingProblem::new(&small(8, 2, 1e-3), 6);
    let never = AtomicBool::new(false);
    let short = FactorRun::new(&p, rule("gd"), 0.01, 300, 6, false).finish(6, &never);
    assert_eq!((short.outcome, short.steps), (Outcome::Budget, 300));
    let long = FactorRun::new(&p, rule("muon"), 0.1, 20_000, 6, false).finish(6, &never);
    assert_eq!(long.outcome, Outcome::Interpolated);
    assert!(
        long.steps.is_multiple_of(200) && long.steps < 20_000,
        "{}",
        long.steps
    );
    assert!(long.train_loss < 1e-7);
    // Cosine schedule: full rate at the first step, half at T/2, near zero at the end.
    assert_eq!(rule("muon").schedule().lr_at(0.1, 0, 1000), 0.1);
    assert!((rule("muon").schedule().lr_at(0.1, 500, 1000) - 0.05).abs() < 1e-15);
    assert!(rule("muon").schedule().lr_at(0.1, 999, 1000) < 1e-6);
    assert_eq!(rule("gd").schedule().lr_at(0.1, 500, 1000), 0.1);
}

#[test]
fn a_tail_needs_room_outside_the_rank() {
    let cfg = SensingConfig {
        tau: 0.2,
        ..small(4, 4, 1e-3)
    };
    assert_eq!(cfg.validate().unwrap_err().field, "tau");
}

#[test]
fn effective_rank_of_equal_singular_values_is_the_rank() {
    let mut rng = basis_lab::sensing::sensing_stream(9, basis_lab::sensing::SensingStream::Gauge);
    let q1 = basis_lab::rng::haar_orthogonal(&mut rng, 8);
    let q2 = basis_lab::rng::haar_orthogonal(&mut rng, 8);
    for r in 1..=8 {
        let d = DMatrix::from_fn(8, 8, |i, j| if i == j && i < r { 2.5 } else { 0.0 });
        let w = &q1 * d * q2.transpose();
        assert!((effective_rank(&w) - r as f64).abs() < 1e-12, "rank {r}");
    }
    assert_eq!(effective_rank(&DMatrix::zeros(4, 4)), 0.0);
}

#[test]
fn the_spectral_tail_is_orthogonal_to_the_planted_factors_and_keeps_the_norm() {
    let cfg = SensingConfig {
        tau: 0.35,
        ..small(20, 3, 1e-3)
    };
    let p = SensingProblem::new(&cfg, 2);
    let tail = &p.target - &p.low_rank * (1.0 - 0.35f64 * 0.35).sqrt();
    assert!((tail.norm() - 0.35 * p.low_rank.norm()).abs() < 1e-12 * p.low_rank.norm());
    // The tail lives off the low-rank part's row and column spaces.
    assert!((p.low_rank.transpose() * &tail).norm() < 1e-10);
    assert!((&tail * p.low_rank.transpose()).norm() < 1e-10);
    assert!((p.target.norm() - p.low_rank.norm()).abs() < 1e-10 * p.low_rank.norm());
}

#[test]
fn the_zoo_is_deterministic_and_independent_of_thread_count() {
    common::determinism::zoos_do_not_depend_on_the_thread_count();
}

#[test]
fn the_convex_reference_is_one_row_per_instance_after_the_runs_which_keep_their_bytes() {
    let preset = ZooPreset {
        problem: small(8, 2, 1e-3),
        budget: 60,
        seeds: 2,
        rules: vec![rule("gd"), rule("adam")],
        ..ZooPreset::default()
    };
    let never = AtomicBool::new(false);
    let runs = run_zoo(&preset, &|| {}, &never);
    assert_eq!(runs.len(), 2 * 2 + 2);
    assert!(runs[..4].iter().all(|r| !is_reference(r)));
    for (r, seed) in runs[4..].iter().zip([0, 1]) {
        assert!(is_reference(r) && r.rule == REFERENCE && r.seed == seed);
        // The row reports the solver's own result on that instance, bit for bit.
        let p = SensingProblem::new(&preset.problem, seed);
        let s = min_nuclear_norm(&p, MAX_ITERATIONS, TOLERANCE, &never).unwrap();
        assert_eq!(r.steps, s.iterations);
        assert_eq!(r.outcome, Outcome::Converged);
        let rec = basis_lab::sensing::nuclear::recovery_of(&p, &s.x);
        assert_eq!(r.recovery.to_bits(), rec.to_bits());
        let stats = r.reference.as_ref().unwrap();
        assert!(
            stats.feasibility < 1e-13 && stats.primal < TOLERANCE,
            "{stats:?}"
        );
        let ratio = stats.nuclear_norm / stats.target_nuclear_norm;
        assert!(ratio <= 1.0 + 1e-9, "{ratio} (recovery {})", r.recovery);
    }
    preset.check_runs(&runs).unwrap();
    assert_eq!(summarise(&runs), summarise(&runs[..4]));

    // Without the reference the runs are the same, and so are their bytes in zoo.csv.
    let off = ZooPreset {
        reference: false,
        ..preset.clone()
    };
    let runs_off = run_zoo(&off, &|| {}, &never);
    assert_eq!(runs_off[..], runs[..4]);
    let text = |r: &[RunResult]| String::from_utf8(csv_bytes(r, &summarise(r)).unwrap()).unwrap();
    let (on, plain) = (text(&runs), text(&runs_off));
    let extra = on.strip_prefix(&plain).expect("the runs' rows unchanged");
    let lines: Vec<&str> = extra.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(
        lines[0].starts_with("min_nuclear_norm,reference,0,,0,"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("min_nuclear_norm,reference,0,,1,"),
        "{}",
        lines[1]
    );
    let md = markdown(&preset, &summarise(&runs), &runs);
    let hit = runs[4..].iter().filter(|r| r.recovery < RECOVERED).count();
    assert!(md.contains("## Convex reference"), "{md}");
    assert!(md.contains(&format!("in {hit} of 2 instances")), "{md}");
    assert!(!markdown(&off, &summarise(&runs_off), &runs_off).contains("Convex reference"));

    // Read back from disk, a reference row must be the instance's.
    let mut bad = runs.clone();
    bad[5].seed = 7;
    assert!(
        preset
            .check_runs(&bad)
            .unwrap_err()
            .contains("min_nuclear_norm")
    );
    bad = runs.clone();
    bad[4].reference = None;
    assert!(preset.check_runs(&bad).is_err());
    assert!(preset.check_runs(&runs[..5]).is_err());
    assert!(off.check_runs(&runs).is_err());
    // A sweep saved before the reference existed has none and still reads.
    preset.check_runs(&runs[..4]).unwrap();
}

fn result(rule: &str, lr: f64, seed: u64, recovery: f64, outcome: Outcome) -> RunResult {
    RunResult {
        rule: rule.into(),
        equivariant: rule == "gd",
        lr,
        seed,
        tau: 0.0,
        steps: 100,
        extra_gradients: 0,
        outcome,
        train_loss: 1e-8,
        recovery,
        erank: 3.0,
        balancedness: 0.1,
        twin_drift: None,
        n: None,
        init: None,
        schedule: Default::default(),
        reference: None,
        readings: Vec::new(),
    }
}

#[test]
fn selection_takes_the_best_rate_at_which_every_seed_interpolates() {
    use Outcome::*;
    let runs = vec![
        // lr 0.1 has the best mean but one seed fails to interpolate: not eligible.
        result("gd", 0.1, 0, 0.01, Interpolated),
        result("gd", 0.1, 1, 0.02, Budget),
        result("gd", 0.03, 0, 0.20, Interpolated),
        result("gd", 0.03, 1, 0.30, Interpolated),
        result("gd", 0.01, 0, 0.10, Interpolated),
        result("gd", 0.01, 1, 0.20, Interpolated),
        // No adam rate interpolates everywhere: the best mean is taken and flagged.
        result("adam", 0.01, 0, 0.6, Budget),
        result("adam", 0.001, 0, 0.5, Budget),
    ];
    let s = summarise(&runs);
    assert_eq!(
        (s[0].rule.as_str(), s[0].lr, s[0].all_interpolated),
        ("gd", 0.01, true)
    );
    assert!((s[0].recovery[0] - 0.15).abs() < 1e-15);
    assert_eq!((s[0].recovery[2], s[0].recovery[3]), (0.10, 0.20));
    assert_eq!((s[1].lr, s[1].all_interpolated), (0.001, false));
}

#[test]
fn bundled_zoo_presets_are_valid_and_match_the_files() {
    for (name, _) in basis_lab::sensing::zoo::BUNDLED_ZOO {
        let p = basis_lab::sensing::zoo::bundled_zoo(name);
        let text = std::fs::read_to_string(format!("presets/{name}.ron")).unwrap();
        assert_eq!(ZooPreset::from_ron(&text, name).unwrap(), p);
    }
    let paper = basis_lab::sensing::zoo::bundled_zoo("zoo-paper");
    assert_eq!(
        (paper.seeds, paper.budget, paper.cells().len()),
        (10, 20_000, 90)
    );
    assert_eq!(paper.problem.measurements(), 462);
    let bad = ZooPreset::from_ron("ZooPreset(seeds: 0)", "bad.ron")
        .unwrap_err()
        .to_string();
    assert!(bad.contains("seeds") && bad.contains("1..=1000"), "{bad}");
}

#[test]
fn zoo_presets_name_every_registered_rule_and_read_back_what_they_wrote() {
    let text = "ZooPreset(rules: [Adagrad, Momentum, scalar_adam, Dial(0.25)], seeds: 1)";
    let p = ZooPreset::from_ron(text, "text").unwrap();
    let names: Vec<String> = p.rules.iter().map(|r| r.name()).collect();
    assert_eq!(names, ["adagrad", "momentum", "scalar_adam", "dial_p0.25"]);
    let written = ron::to_string(&p.rules).unwrap();
    assert_eq!(written, "[Adagrad,Momentum,ScalarAdam,Dial(0.25)]");
    let json = serde_json::to_string(&p.rules).unwrap();
    assert_eq!(json, r#"["Adagrad","Momentum","ScalarAdam",{"Dial":0.25}]"#);
    let back: Vec<Rule> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p.rules);
    let err = ZooPreset::from_ron("ZooPreset(rules: [Sgd])", "text")
        .unwrap_err()
        .to_string();
    assert!(err.contains("`Sgd`") && err.contains("`Adagrad`"), "{err}");
    let err = ZooPreset::from_ron("ZooPreset(rules: [Dial(1.5)])", "text")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("dial p = 1.5 is out of range; allowed [0, 1]"),
        "{err}"
    );
}

/// The new preset fields are checked with their paths.
#[test]
fn schedules_inits_sizes_and_rule_rates_are_validated_by_field_path() {
    let err = |body: &str| {
        let text = format!("ZooPreset(seeds: 1, rules: [Gd, Adam], {body})");
        ZooPreset::from_ron(&text, "p.ron").unwrap_err().to_string()
    };
    for (body, field, says) in [
        ("rule_rates: {Muon: [0.1]}", "rule_rates[0]", "not one of"),
        (
            "rule_rates: {Gd: [0.1], Gd: [0.2]}",
            "rule_rates[1]",
            "twice",
        ),
        ("rule_rates: {Adam: []}", "rule_rates[0]", "no rates"),
        ("rule_rates: {Gd: [0.1, -1.0]}", "rule_rates[0].gd[1]", "-1"),
        (
            "schedules: [Cosine, Constant, Cosine]",
            "schedules[2]",
            "twice",
        ),
        ("inits: [1e-3, 0.0]", "inits[1]", "0"),
        ("inits: [1e-3, 11.0]", "inits[1]", "11"),
        ("sizes: [40, 1]", "sizes[1]", "3..=256"),
        ("sizes: [300]", "sizes[0]", "3..=256"),
        ("rates: [0.1, 2e6]", "rates[1]", "2000000"),
        ("rule_budgets: {Muon: 100}", "rule_budgets[0]", "not one of"),
        ("rule_budgets: {Gd: 10, Gd: 20}", "rule_budgets[1]", "twice"),
        ("rule_budgets: {Adam: 0}", "rule_budgets[0].adam", "0"),
        ("loss_levels: [1e-4, 1e-4]", "loss_levels[1]", "descending"),
        ("loss_levels: [1e-4, -1.0]", "loss_levels[1]", "(0, 1e8)"),
        (
            "loss_levels: [9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0]",
            "loss_levels",
            "0..=8",
        ),
    ] {
        let e = err(body);
        assert!(
            e.contains(&format!("`{field}`")) && e.contains(says),
            "{body}: {e}"
        );
    }
    let e = ZooPreset::from_ron("ZooPreset(schedule: [Cosine])", "p.ron")
        .unwrap_err()
        .to_string();
    assert!(e.contains("schedule"), "{e}");
    // n = 128 holds 1518 · 128² numbers per instance: 11 seeds break the memory limit, 10 do
    // not (sizes are built one at a time, so n = 40 adds nothing).
    let at = |seeds: usize| {
        let text = format!("ZooPreset(seeds: {seeds}, rules: [Gd], sizes: [40, 128])");
        ZooPreset::from_ron(&text, "p.ron").map_err(|e| e.to_string())
    };
    let e = at(11).unwrap_err();
    assert!(e.contains("`seeds`") && e.contains("memory"), "{e}");
    at(10).unwrap();
    // Every value of the enum reads back, and the defaults leave the fields out.
    let p = ZooPreset::from_ron(
        "ZooPreset(rules: [Gd, Adam], schedules: [Paper, Constant, Cosine, CosineFullHorizon], \
         rule_rates: {Gd: [0.003]}, inits: [1e-3], sizes: [8])",
        "p.ron",
    )
    .unwrap();
    let written = ron::to_string(&p).unwrap();
    assert_eq!(ZooPreset::from_ron(&written, "back").unwrap(), p);
    let json = serde_json::to_string(&p).unwrap();
    assert_eq!(serde_json::from_str::<ZooPreset>(&json).unwrap(), p);
    let plain = ron::to_string(&ZooPreset::default()).unwrap();
    for field in [
        "rule_rates",
        "rule_budgets",
        "loss_levels",
        "schedules",
        "inits",
        "sizes",
    ] {
        assert!(!plain.contains(field), "{plain}");
    }
}

/// A rule with a budget of its own runs to it (the others to the preset's), and levels read
/// every run where its loss first falls to each: in order, at interpolation checks, with the
/// metrics a run stopped there would report.
#[test]
fn rule_budgets_and_loss_levels_shape_each_run() {
    use basis_lab::sensing::zoo::CHECK_EVERY;
    let p = ZooPreset::from_ron(
        "ZooPreset(problem: (n: 8, rank: 2, init: 0.3), seeds: 1, rules: [Gd, Adam], \
         budget: 600, rule_budgets: {Adam: 1000}, loss_levels: [1e-1, 3e-2, 1e-30], \
         reference: false)",
        "p.ron",
    )
    .unwrap();
    assert_eq!(p.work(), (600 + 1000) as f64);
    let runs = run_zoo(&p, &|| {}, &AtomicBool::new(false));
    p.check_runs(&runs).unwrap();
    let (gd, adam) = (&runs[0], &runs[1]);
    assert_eq!((gd.rule.as_str(), adam.rule.as_str()), ("gd", "adam"));
    assert!(gd.steps <= 600);
    assert_eq!(adam.outcome, Outcome::Budget, "{adam:?}");
    assert_eq!(adam.steps, 1000);
    for run in [gd, adam] {
        // 1e-30 is never reached; the others are, in order.
        assert_eq!(run.readings.len(), 2, "{run:?}");
        for (r, level) in run.readings.iter().zip([1e-1, 3e-2]) {
            assert_eq!(r.level, level);
            assert!(r.train_loss <= level, "{r:?}");
            assert!(r.step.is_multiple_of(CHECK_EVERY) || r.step == run.steps);
        }
        assert!(run.readings[0].step <= run.readings[1].step);
        // The same run stopped at the reading's step reports the same recovery and erank.
        let r = &run.readings[1];
        let problem = SensingProblem::new(&p.config(0, 0, 0), p.seed);
        let rule = Rule::named(&run.rule).unwrap();
        let budget = p.budget_of(rule);
        let mut replay = FactorRun::new(&problem, rule, run.lr, budget, run.seed, false)
            .with_schedule(rule.schedule());
        while replay.t < r.step {
            assert!(replay.step().is_none());
        }
        let there = replay.summary(run.seed, Outcome::Budget);
        assert_eq!(there.recovery.to_bits(), r.recovery.to_bits());
        assert_eq!(there.erank.to_bits(), r.erank.to_bits());
    }
    // A reading that does not belong is refused when a sweep is read back.
    let mut bad = runs.clone();
    bad[0].readings[0].train_loss = 0.5;
    let e = p.check_runs(&bad).unwrap_err();
    assert!(e.contains("readings"), "{e}");
    let md = markdown(&p, &summarise(&runs), &runs);
    assert!(md.contains("| adam | "), "{md}");
    assert!(md.contains("(1 of 1)"), "{md}");
}

/// The cells run size, τ, init, schedule, rule, rate, seed, outermost first; a rule's own rates
/// replace `rates` and the grid.
#[test]
fn the_cell_list_runs_size_then_tau_init_schedule_rule_rate_seed() {
    use basis_lab::optim::Schedule::{Constant, Cosine};
    use basis_lab::sensing::zoo::ZooSchedule as Z;
    let p = ZooPreset::from_ron(
        "ZooPreset(problem: (n: 6, rank: 1), seeds: 2, seed: 5, rules: [Gd, Muon], \
         rates: [0.5], rule_rates: {Muon: [0.01, 0.03]}, sizes: [6, 8], inits: [1e-3, 1e-2], \
         schedules: [Paper, Constant])",
        "p.ron",
    )
    .unwrap();
    let cells = p.cells();
    assert_eq!(cells.len(), 2 * 2 * 2 * (1 + 2) * 2);
    let key = |i: usize| {
        let c = cells[i];
        (
            c.size,
            c.init,
            c.choice,
            c.rule.name(),
            c.schedule,
            c.lr,
            c.seed,
        )
    };
    assert_eq!(key(0), (0, 0, Z::Paper, "gd".into(), Constant, 0.5, 5));
    assert_eq!(key(1), (0, 0, Z::Paper, "gd".into(), Constant, 0.5, 6));
    assert_eq!(key(2), (0, 0, Z::Paper, "muon".into(), Cosine, 0.01, 5));
    assert_eq!(key(4), (0, 0, Z::Paper, "muon".into(), Cosine, 0.03, 5));
    assert_eq!(key(6), (0, 0, Z::Constant, "gd".into(), Constant, 0.5, 5));
    assert_eq!(
        key(8),
        (0, 0, Z::Constant, "muon".into(), Constant, 0.01, 5)
    );
    assert_eq!(key(12), (0, 1, Z::Paper, "gd".into(), Constant, 0.5, 5));
    assert_eq!(key(24), (1, 0, Z::Paper, "gd".into(), Constant, 0.5, 5));
    assert_eq!(p.config(1, 0, 1).n, 8);
    assert_eq!(p.config(1, 0, 1).init, 1e-2);
    // Runs carry their labels, and a saved run with a wrong label is refused by field.
    let never = AtomicBool::new(false);
    let runs = basis_lab::sensing::zoo::run_zoo_cells(&p, &[25, 20], &|| {}, &never);
    assert_eq!((runs[0].n, runs[0].init), (Some(8), Some(1e-3)));
    assert_eq!(runs[1].schedule, Z::Constant);
    assert_eq!(runs[1].n, Some(6));
    p.check_run(cells[25], &runs[0]).unwrap();
    let mut wrong = runs[0].clone();
    wrong.init = Some(1e-2);
    let e = p.check_run(cells[25], &wrong).unwrap_err();
    assert!(e.contains("`init`") && e.contains("n 8"), "{e}");
    let mut wrong = runs[1].clone();
    wrong.schedule = Z::Paper;
    let e = p.check_run(cells[20], &wrong).unwrap_err();
    assert!(e.contains("`schedule`"), "{e}");
    let e = p.check_run(cells[24], &runs[0]).unwrap_err();
    assert!(e.contains("`seed`"), "{e}");
}

/// The cosine schedule's rate at chosen steps, and what the full horizon changes: a run that
/// interpolates early goes on to the end of its budget.
#[test]
fn schedules_give_their_rates_and_the_full_horizon_runs_the_whole_budget() {
    use basis_lab::optim::Schedule;
    let (lr, t_max) = (0.2, 1000);
    assert_eq!(Schedule::Constant.lr_at(lr, 700, t_max), 0.2);
    assert_eq!(Schedule::Cosine.lr_at(lr, 0, t_max), 0.2);
    assert!((Schedule::Cosine.lr_at(lr, 500, t_max) - 0.1).abs() < 1e-15);
    assert!((Schedule::Cosine.lr_at(lr, 250, t_max) - 0.1 * (1.0 + 0.5f64.sqrt())).abs() < 1e-15);
    assert!(Schedule::Cosine.lr_at(lr, 1000, t_max).abs() < 1e-17);
    let p = SensingProblem::new(&small(8, 1, 1e-3), 2);
    let never = AtomicBool::new(false);
    let run = |full: bool| {
        FactorRun::new(&p, rule("muon"), 0.1, 4000, 2, false)
            .with_schedule(Schedule::Cosine)
            .with_full_horizon(full)
            .finish(2, &never)
    };
    let (stop, full) = (run(false), run(true));
    assert_eq!(stop.outcome, Outcome::Interpolated);
    assert!(
        stop.steps < 4000 && stop.steps.is_multiple_of(200),
        "{}",
        stop.steps
    );
    assert_eq!((full.outcome, full.steps), (Outcome::Interpolated, 4000));
    assert!(full.train_loss < stop.train_loss);
}

/// The Table 7 marks on made-up runs: `div` when any seed diverged, `n/i` when a seed did not
/// interpolate, `→fl` on the lowest interpolating rate of a constant-rate row when it lies
/// below the rule's benchmark rate, and never on a cosine row.
#[test]
fn rate_marks_follow_the_papers_definitions() {
    use Outcome::*;
    use basis_lab::sensing::zoo::{RateMark as M, rate_rows};
    let p = ZooPreset {
        rules: vec![rule("gd"), rule("muon"), rule("shampoo")],
        ..ZooPreset::default()
    };
    let runs = vec![
        result("gd", 0.001, 0, 0.2, Budget),
        result("gd", 0.001, 1, 0.2, Interpolated),
        result("gd", 0.003, 0, 0.1, Interpolated),
        result("gd", 0.003, 1, 0.12, Interpolated),
        // Also below the benchmark and interpolating, but not the lowest: one →fl per row.
        result("gd", 0.005, 0, 0.12, Interpolated),
        result("gd", 0.01, 0, 0.13, Interpolated),
        result("gd", 0.01, 1, 0.13, Interpolated),
        result("gd", 0.1, 0, f64::NAN, Diverged),
        result("gd", 0.1, 1, 0.5, Budget),
        result("muon", 0.003, 0, 0.9, Interpolated),
        result("muon", 0.1, 0, 0.0, Interpolated),
        // Shampoo's lowest interpolating rate is its benchmark rate 0.03: no →fl.
        result("shampoo", 0.01, 0, 0.88, Budget),
        result("shampoo", 0.03, 0, 0.29, Interpolated),
    ];
    let rows = rate_rows(&p, &runs);
    let marks: Vec<(&str, f64, M)> = rows
        .iter()
        .map(|r| (r.rule.as_str(), r.lr, r.mark))
        .collect();
    assert_eq!(
        marks,
        [
            ("gd", 0.001, M::NotInterpolated),
            ("gd", 0.003, M::FlowLimit),
            ("gd", 0.005, M::None),
            ("gd", 0.01, M::None),
            ("gd", 0.1, M::Diverged),
            ("muon", 0.003, M::None),
            ("muon", 0.1, M::None),
            ("shampoo", 0.01, M::NotInterpolated),
            ("shampoo", 0.03, M::None),
        ]
    );
    assert_eq!((rows[1].interpolated, rows[1].seeds), (2, 2));
    assert!((rows[1].recovery[0] - 0.11).abs() < 1e-15);
    assert_eq!((rows[4].diverged, rows[4].interpolated), (1, 0));
    // Run at a constant rate, Muon's lowest interpolating rate is marked too.
    let constant: Vec<RunResult> = runs[9..11]
        .iter()
        .cloned()
        .map(|mut r| {
            r.schedule = basis_lab::sensing::zoo::ZooSchedule::Constant;
            r
        })
        .collect();
    assert_eq!(rate_rows(&p, &constant)[0].mark, M::FlowLimit);
}

/// A zoo preset names chains of transforms beside registered rules: they run, read back,
/// keep their class (the chain's prediction under the gauge lab's right action) and their
/// twins behave as that class says.
#[test]
fn a_chain_is_a_zoo_rule_that_runs_reads_back_and_keeps_its_class() {
    // At `basis-lab check`'s init scale and length: from init 1e-3, or over 300 steps, the
    // normalised step (which never shrinks) amplifies rounding to 1e-9..1e-5 (chaos, which a
    // noise twin shows as well, not the basis).
    let text = r#"ZooPreset(name: "chains", problem: (n: 8, rank: 2, init: 0.3), budget: 100, seeds: 2,
        twins: true, reference: false,
        rules: [Chain("clip_by_global_norm(1) | scale_by_adam()"), Gd,
                Chain("normalize_rows() | trace(0.9)")])"#;
    let p = ZooPreset::from_ron(text, "chains.ron").unwrap();
    let (adam, norm) = (
        "clip_by_global_norm() | scale_by_adam()",
        "normalize_rows() | trace()",
    );
    let names: Vec<String> = p.rules.iter().map(|r| r.name()).collect();
    assert_eq!(names, [adam, "gd", norm]);
    // Two spellings of one chain are one rule, its text held once.
    let again = Rule::chain("clip_by_global_norm(1.0)|scale_by_adam( )").unwrap();
    assert_eq!(again, p.rules[0]);
    assert!(std::ptr::eq(
        again.chain_text().unwrap(),
        p.rules[0].chain_text().unwrap()
    ));
    assert_eq!(Rule::named(norm), Some(p.rules[2]));
    assert_ne!(p.rules[0], p.rules[2]);
    // Adam's per-entry root is coordinate-wise; row normalisation commutes with (U, V) → (UQ, VQ).
    let classes: Vec<bool> = p.rules.iter().map(|r| r.equivariant()).collect();
    assert_eq!(classes, [false, true, true]);
    assert_eq!(p.rules[2].default_lr(), 1e-3);

    let written = ron::to_string(&p.rules).unwrap();
    assert_eq!(written, format!("[Chain(\"{adam}\"),Gd,Chain(\"{norm}\")]"));
    assert_eq!(format!("{:?}", p.rules[2]), format!("Chain({norm:?})"));
    let json = serde_json::to_string(&p.rules).unwrap();
    assert_eq!(
        json,
        format!(r#"[{{"Chain":"{adam}"}},"Gd",{{"Chain":"{norm}"}}]"#)
    );
    let back: Vec<Rule> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, p.rules);
    assert_eq!(
        ZooPreset::from_ron(&ron::to_string(&p).unwrap(), "back").unwrap(),
        p
    );
    let share = basis_lab::share::encode(&p);
    assert!(
        share.contains("Chain('normalize_rows()+%7C+trace()')"),
        "{share}"
    );
    assert_eq!(basis_lab::share::decode::<ZooPreset>(&share).unwrap(), p);

    let runs = run_zoo(&p, &|| {}, &AtomicBool::new(false));
    assert_eq!(runs.len(), 3 * 2);
    p.check_runs(&runs).unwrap();
    let json = serde_json::to_string(&runs).unwrap();
    let back: Vec<RunResult> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, runs);
    p.check_runs(&back).unwrap();
    let drift = |i: usize| runs[i].twin_drift.unwrap();
    for (i, want) in [(0, adam), (2, "gd"), (4, norm)] {
        assert_eq!(runs[i].rule, want);
    }
    assert!(!runs[0].equivariant && runs[2].equivariant && runs[4].equivariant);
    // The equivariant chain's twins stay at rounding, as GD's do; Adam's separate.
    for i in [2, 3, 4, 5] {
        assert!(drift(i) < 1e-12, "{}: {:e}", runs[i].rule, drift(i));
    }
    for i in [0, 1] {
        assert!(drift(i) > 0.1, "{}: {:e}", runs[i].rule, drift(i));
    }
    // A class the run did not have is refused on reading.
    let mut bad = runs.clone();
    bad[4].equivariant = false;
    let e = p.check_runs(&bad).unwrap_err();
    assert!(
        e.contains(&format!("{norm} at lr 0.001")) && e.contains("`equivariant`"),
        "{e}"
    );

    // zoo.md: the chain's `|` is escaped, so each row keeps the header's cells.
    let md = markdown(&p, &summarise(&runs), &runs);
    let cells = |line: &str| line.replace("\\|", "").matches('|').count();
    let header = md
        .lines()
        .find(|l| l.starts_with("| rule | class"))
        .unwrap();
    let row = (md.lines())
        .find(|l| l.starts_with("| clip_by_global_norm"))
        .unwrap();
    assert!(
        row.starts_with("| clip_by_global_norm() \\| scale_by_adam() | not guaranteed | 0.001 |"),
        "{row}"
    );
    assert_eq!(cells(row), cells(header));
    let row = md
        .lines()
        .find(|l| l.starts_with("| normalize_rows"))
        .unwrap();
    assert!(
        row.starts_with("| normalize_rows() \\| trace() | equivariant |"),
        "{row}"
    );
    // zoo.csv quotes nothing it need not: the chain has no comma or quote.
    let csv = String::from_utf8(csv_bytes(&runs, &summarise(&runs)).unwrap()).unwrap();
    assert!(csv.contains(&format!("\n{adam},")), "{csv}");
}

/// A chain that does not parse is refused with its place in `rules` and the transform at
/// fault; an unknown rule's message lists `Chain` among the spellings.
#[test]
fn a_bad_chain_in_a_zoo_preset_is_refused_by_its_place_and_transform() {
    let err = ZooPreset::from_ron(
        r#"ZooPreset(rules: [Gd, Chain("clip(0.01) | scale_by_adamm()")])"#,
        "bad.ron",
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "rules[1]: chain `clip(0.01) | scale_by_adamm()`: transform 2: unknown \
                      transform `scale_by_adamm`; known: trace,"
        ),
        "{err}"
    );
    assert!(err.starts_with("bad.ron:1:"), "{err}");
    let err = ZooPreset::from_ron(r#"ZooPreset(rules: [Chain("trace(2)")])"#, "bad.ron")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(
            "rules[0]: chain `trace(2)`: transform 1 (`trace`): argument `decay`: `2` \
                      is not allowed; allowed [0, 1)"
        ),
        "{err}"
    );
    let err = serde_json::from_str::<Rule>(r#"{"Chain":"nope()"}"#)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("transform 1: unknown transform `nope`"),
        "{err}"
    );
    let err = ZooPreset::from_ron("ZooPreset(rules: [Sgd])", "text")
        .unwrap_err()
        .to_string();
    assert!(err.contains("rules[0]") && err.contains("`Chain`"), "{err}");
}

#[test]
fn a_shared_pass_gives_every_pair_the_bits_of_its_own_pass() {
    use basis_lab::sensing::PassItem;
    // n 40 takes blocks of eight measurements, n 100 blocks of four; both leave a tail of
    // measurements after the last block.
    for n in [40, 100] {
        let p = SensingProblem::new(&small(n, 3, 1e-1), 5);
        let factors: Vec<(DMatrix<f64>, DMatrix<f64>)> = (0..3).map(|s| p.init(s)).collect();
        let zero = || [DMatrix::zeros(n, n), DMatrix::zeros(n, n)];
        let (mut grads, mut ws) = (
            [zero(), zero(), zero()],
            [0, 1, 2].map(|_| SensingWorkspace::new(n)),
        );
        let (mut g, mut w) = (grads.iter_mut(), ws.iter_mut());
        let items: [PassItem<'_>; 3] = std::array::from_fn(|k| PassItem {
            u: &factors[k].0,
            v: &factors[k].1,
            grads: g.next().unwrap(),
            ws: w.next().unwrap(),
        });
        let losses = p.loss_and_grad_shared(items);
        for (k, f) in factors.iter().enumerate() {
            let (mut alone, mut w) = (zero(), SensingWorkspace::new(n));
            let loss = p.loss_and_grad(&f.0, &f.1, &mut alone, &mut w);
            assert!(loss > 0.0);
            assert_eq!(loss.to_bits(), losses[k].to_bits(), "n {n}, pair {k}");
            let bits = |g: &[DMatrix<f64>; 2]| -> Vec<u64> {
                g.iter()
                    .flat_map(|m| m.iter().map(|x| x.to_bits()))
                    .collect()
            };
            assert_eq!(bits(&alone), bits(&grads[k]), "n {n}, pair {k}");
        }
    }
}

#[test]
fn a_zoo_s_runs_stepped_together_equal_each_run_alone() {
    // Twins, a rule asking the oracle for extra gradients and runs ending at different steps.
    let preset = ZooPreset {
        problem: small(10, 2, 1e-2),
        budget: 300,
        seeds: 2,
        rules: ["gd", "adam", "muon", "flow_adam", "lion"]
            .map(rule)
            .to_vec(),
        twins: true,
        ..ZooPreset::default()
    };
    let never = AtomicBool::new(false);
    let together = run_zoo(&preset, &|| {}, &never);
    let cells = preset.cells();
    assert_eq!(together.len(), cells.len() + 2);
    let steps: std::collections::BTreeSet<usize> = together.iter().map(|r| r.steps).collect();
    assert!(steps.len() > 2, "runs end at different steps: {steps:?}");
    for (c, r) in cells.iter().zip(&together) {
        let problem = SensingProblem::new(&preset.config(c.size, c.tau, c.init), c.seed);
        assert_eq!(
            &preset.run_cell(&problem, *c, &never),
            r,
            "{} seed {}",
            r.rule,
            r.seed
        );
    }
}

#[test]
fn a_zoo_cancelled_before_it_starts_ends_every_run_cancelled_at_step_0() {
    let preset = ZooPreset {
        problem: small(8, 2, 1e-2),
        budget: 300,
        seeds: 3,
        rules: ["gd", "adam", "muon"].map(rule).to_vec(),
        twins: true,
        ..ZooPreset::default()
    };
    let cancel = AtomicBool::new(true);
    let progress = std::sync::atomic::AtomicUsize::new(0);
    let tick = || {
        progress.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    let out = run_zoo(&preset, &tick, &cancel);
    assert_eq!(out.len(), preset.units());
    assert_eq!(progress.into_inner(), preset.units());
    for (c, r) in preset.cells().iter().zip(&out) {
        assert_eq!((r.rule.as_str(), r.seed), (c.rule.name().as_str(), c.seed));
        assert_eq!(
            (r.outcome, r.steps),
            (Outcome::Cancelled, 0),
            "{} {}",
            r.rule,
            r.seed
        );
    }
}
