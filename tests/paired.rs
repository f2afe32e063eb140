//! The paired-run harness on the bundled presets (numerics §3–§5).

mod common;

use basis_lab::experiment::{ArmStatus, BASE, PairedRun, ROTATED, RunOptions, run_to_dir};
use basis_lab::model::{Episode, Workspace};
use basis_lab::optim::{Optimizer, lookup};
use basis_lab::preset::Preset;
use nalgebra::DMatrix;

fn arm_index(run: &PairedRun, name: &str) -> usize {
    run.arms().iter().position(|a| a.name() == name).unwrap()
}

#[test]
fn gd_twin_stays_at_float_noise_and_adam_twin_splits_on_the_default_preset() {
    let preset = Preset::load("presets/default.ron").unwrap();
    assert!(preset.steps >= 2000);
    let mut run = PairedRun::new(&preset).unwrap();
    let (gd, adam) = (arm_index(&run, "gd"), arm_index(&run, "adam"));
    let mut adam_at_50 = 0.0;
    let mut gd_max: f64 = 0.0;
    for s in 0..2000 {
        let records = run.step();
        for r in records {
            assert!(r.loss[BASE].is_finite() && r.loss[ROTATED].is_finite());
            if r.arm == gd {
                gd_max = gd_max.max(r.orientation_div);
                assert!(
                    (r.loss[BASE] - r.loss[ROTATED]).abs() < 1e-12,
                    "GD twins must see the same loss"
                );
            }
            if r.arm == adam && s == 50 {
                adam_at_50 = r.orientation_div;
            }
        }
    }
    let last = run.snapshot();
    let gd_final = last.iter().find(|r| r.arm == gd).unwrap();
    assert!(
        gd_final.orientation_div < 1e-13,
        "GD twin {:e}",
        gd_final.orientation_div
    );
    assert!(
        gd_final.gram_div < 1e-11,
        "GD Gram twin {:e}",
        gd_final.gram_div
    );
    assert!(gd_max < 1e-13, "GD twin peaked at {gd_max:e}");
    assert!(adam_at_50 > 1e-3, "Adam twin at step 50: {adam_at_50:e}");
    let adam_final = last.iter().find(|r| r.arm == adam).unwrap();
    assert!(adam_final.orientation_div > 1e-2);
    // Every arm learned something: held-out accuracy beats the untrained keys.
    let fresh = PairedRun::new(&preset).unwrap().evaluate_heldout();
    for (h0, h) in fresh.iter().zip(run.evaluate_heldout()) {
        let (h0, h) = (h0.unwrap(), h.unwrap());
        assert!(
            h.accuracy[BASE] > h0.accuracy[BASE] + 0.05,
            "{h0:?} → {h:?}"
        );
    }
}

#[test]
fn step_zero_metrics_describe_the_initial_weights() {
    let preset = Preset::load("classroom").unwrap();
    let mut run = PairedRun::new(&preset).unwrap();
    let w0 = run.w0().clone();
    let records = run.step().to_vec();
    for r in &records {
        assert_eq!(r.step, 0);
        assert_eq!(r.orientation_div, 0.0, "Q·W0 is stored exactly as computed");
        assert!(r.gram_div < 1e-14);
    }
    let mut k = w0.clone();
    let mut n = vec![0.0; w0.ncols()];
    basis_lab::model::normalize_columns(&w0, &mut k, &mut n).unwrap();
    let a0 = basis_lab::metrics::axis_concentration(&k);
    assert_eq!(records[0].axis_concentration[BASE], a0);
    assert_eq!(
        records[0].mean_column_norm[BASE],
        n.iter().sum::<f64>() / n.len() as f64
    );
}

#[test]
fn same_preset_and_seed_give_byte_identical_metrics() {
    common::determinism::paired_runs_repeat_byte_for_byte();
}

#[test]
fn sweep_does_not_depend_on_thread_count() {
    common::determinism::sweeps_do_not_depend_on_the_thread_count();
}

#[test]
fn a_diverging_arm_is_marked_and_the_others_finish() {
    let mut p = Preset::load("classroom").unwrap();
    p.steps = 60;
    let mut run = PairedRun::new(&p).unwrap();
    for _ in 0..20 {
        run.step();
    }
    run.inject_weight(1, f64::INFINITY);
    let records = run.step().to_vec();
    assert_eq!(records.len(), 2, "the failing step is still reported");
    assert!(records[1].loss[BASE].is_nan());
    assert!(matches!(
        run.arms()[1].status(),
        ArmStatus::Diverged { step: 20, .. }
    ));
    for _ in 21..p.steps {
        let records = run.step();
        assert_eq!(records.len(), 1, "only the healthy arm goes on");
        assert!(records[0].loss[BASE].is_finite());
    }
    assert_eq!(*run.arms()[0].status(), ArmStatus::Running);
    let held = run.evaluate_heldout();
    assert!(held[0].is_some() && held[1].is_none());
    let baselines = run.baselines();
    assert!(baselines[0].is_some() && baselines[1].is_none());
    assert_eq!(run.snapshot().len(), 1);
}

fn matrix(v: &serde_json::Value, rows: usize, cols: usize) -> DMatrix<f64> {
    let rows_v = v.as_array().unwrap();
    assert_eq!(rows_v.len(), rows);
    DMatrix::from_fn(rows, cols, |i, j| {
        let r = rows_v[i].as_array().unwrap();
        assert_eq!(r.len(), cols);
        r[j].as_f64().unwrap()
    })
}

#[test]
fn trace_has_the_documented_schema_and_replays_bit_exactly() {
    let mut p = Preset::load("classroom").unwrap();
    p.steps = 40;
    let dir = tempfile::tempdir().unwrap();
    run_to_dir(
        &p,
        dir.path(),
        RunOptions {
            trace: true,
            figures: None,
            max_output_bytes: basis_lab::experiment::MAX_OUTPUT_BYTES,
        },
        &|_| {},
    )
    .unwrap();
    let t: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("trace.json")).unwrap()).unwrap();
    let c = &t["config"];
    for key in [
        "d_k",
        "n_keys",
        "n_values",
        "pairs_per_episode",
        "batch",
        "beta",
        "gain",
        "steps",
        "seed",
    ] {
        assert!(!c[key].is_null(), "config.{key} missing");
    }
    assert_eq!(c["optimizers"]["adam"]["beta1"], 0.9);
    assert_eq!(c["optimizers"]["adam"]["eps"], 1e-8);
    assert_eq!(c["optimizers"]["gd"]["lr"], 1.0);
    let (d, v) = (p.d_k, p.n_keys);
    let w0 = matrix(&t["w0"], d, v);
    let q = matrix(&t["q"], d, d);
    let w0_rot = matrix(&t["w0_rot"], d, v);
    assert!((&w0_rot - &q * &w0).amax() < 1e-14);
    assert_eq!(t["status"]["adam"], "Running");
    let episodes: Vec<Vec<Episode>> = serde_json::from_value(t["episodes"].clone()).unwrap();
    assert_eq!(episodes.len(), p.steps);
    assert!(episodes.iter().all(|b| b.len() == p.batch));
    let metrics = t["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), (p.steps + 1) * 2 * p.arms.len());
    for key in [
        "step",
        "arm",
        "loss",
        "orientation_div",
        "gram_div",
        "axis_concentration",
    ] {
        assert!(metrics[0].get(key).is_some(), "metrics record lacks {key}");
    }
    // Replay both twins of every arm from the trace alone and land on the recorded finals;
    // every recorded metric is recomputed from the replayed weights.
    let final_w = &t["final"];
    let mut scratch = DMatrix::zeros(d, v);
    for spec in &p.arms {
        let info = lookup(&spec.optimizer).unwrap();
        let mut twins = Vec::new();
        for (suffix, start) in [("", w0.clone()), ("_rot", w0_rot.clone())] {
            let mut opt: Box<dyn Optimizer> = (info.build)(spec);
            let mut ws = Workspace::new(p.memory());
            let mut w = [start];
            let mut g = DMatrix::zeros(d, v);
            for (s, batch) in episodes.iter().enumerate() {
                let loss = ws.loss_and_grad(&w[0], batch, &mut g).unwrap();
                let arm = format!("{}{suffix}", spec.arm_name());
                let rec = metrics
                    .iter()
                    .find(|m| m["step"] == s && m["arm"] == arm.as_str())
                    .unwrap();
                assert_eq!(rec["loss"].as_f64().unwrap(), loss, "{arm} step {s}");
                opt.step(&mut w, std::slice::from_ref(&g), spec.lr);
            }
            let recorded = matrix(&final_w[format!("{}{suffix}", spec.arm_name())], d, v);
            assert_eq!(recorded, w[0], "{}{suffix} final weights", spec.arm_name());
            twins.push(w);
        }
        let [[a], [b]] = [twins.remove(0), twins.remove(0)];
        let rec = metrics
            .iter()
            .find(|m| m["step"] == p.steps && m["arm"] == spec.arm_name())
            .unwrap();
        let od = basis_lab::metrics::orientation_divergence(&b, &q, &a, &mut scratch);
        assert_eq!(rec["orientation_div"].as_f64().unwrap(), od);
        let (ka, kb) = (unit(&a), unit(&b));
        assert_eq!(
            rec["gram_div"].as_f64().unwrap(),
            basis_lab::metrics::gram_divergence(&ka, &kb)
        );
        assert_eq!(
            rec["axis_concentration"].as_f64().unwrap(),
            basis_lab::metrics::axis_concentration(&ka)
        );
        assert!(rec["loss"].is_null(), "the final record has no episodes");
    }
}

fn unit(w: &DMatrix<f64>) -> DMatrix<f64> {
    let mut k = w.clone();
    let mut n = vec![0.0; w.ncols()];
    basis_lab::model::normalize_columns(w, &mut k, &mut n).unwrap();
    k
}

#[test]
fn heldout_columns_are_filled_every_eval_every_steps_and_at_the_end() {
    let mut p = Preset::load("classroom").unwrap();
    p.steps = 120;
    p.eval_every = 50;
    let csv = String::from_utf8(common::determinism::run_csv(&p)).unwrap();
    let mut filled = Vec::new();
    for line in csv.lines().skip(1) {
        let cols: Vec<&str> = line.split(',').collect();
        assert_eq!(cols.len(), 17);
        if !cols[12].is_empty() {
            assert!(!cols[13].is_empty() && !cols[14].is_empty() && !cols[15].is_empty());
            filled.push(cols[0].parse::<usize>().unwrap());
        }
    }
    filled.dedup();
    assert_eq!(filled, vec![0, 50, 100, 120]);
}

#[test]
fn renormalized_columns_stay_unit_and_keep_the_twins_honest() {
    let mut p = Preset::load("classroom").unwrap();
    p.steps = 300;
    p.column_norms = basis_lab::preset::ColumnNorms::Renormalize;
    // On the unit sphere a step of GD's usual rate 1.0 is large enough for the dynamics to
    // amplify rounding (the twins drift to ~1e-6): a smaller rate keeps them at float noise.
    p.arms[0].lr = 0.3;
    let mut run = PairedRun::new(&p).unwrap();
    for _ in 0..p.steps {
        run.step();
    }
    for arm in run.arms() {
        for t in [BASE, ROTATED] {
            for col in arm.weights(t).column_iter() {
                assert!(
                    (col.norm() - 1.0).abs() < 1e-12,
                    "{} column norm {}",
                    arm.name(),
                    col.norm()
                );
            }
        }
    }
    let last = run.snapshot();
    assert!(
        last[0].orientation_div < 1e-13,
        "GD twin {:e}",
        last[0].orientation_div
    );
    assert!(
        last[1].orientation_div > 1e-3,
        "Adam twin {:e}",
        last[1].orientation_div
    );
    assert!(
        last.iter()
            .all(|r| (r.mean_column_norm[0] - 1.0).abs() < 1e-12)
    );
}

#[test]
fn the_dk_sweep_scales_keys_with_the_dimension_and_the_baseline_tightens() {
    let p = Preset::load("classroom").unwrap();
    let s = basis_lab::experiment::scaled_to_dk(&p, 32);
    assert_eq!((s.d_k, s.n_keys, s.pairs_per_episode), (32, 64, 32));
    assert_eq!(s.n_values, p.n_values);
    let s = basis_lab::experiment::scaled_to_dk(&p, 2);
    assert_eq!((s.d_k, s.n_keys, s.pairs_per_episode), (2, 4, 2));
    let mut short = p.clone();
    short.steps = 60;
    short.baseline_rotations = 64;
    let never = std::sync::atomic::AtomicBool::new(false);
    let points = basis_lab::experiment::points_sweep::<basis_lab::experiment::KeyDim>(
        &short,
        &[4, 32],
        2,
        &|| {},
        &never,
    )
    .unwrap();
    assert_eq!(
        points.iter().map(|x| x.value).collect::<Vec<_>>(),
        vec![4, 32]
    );
    let sd = |i: usize| points[i].sweep.aggregate[0].baseline_sd_mean;
    assert!(
        sd(1) < sd(0) / 3.0,
        "the baseline should tighten with d_k: {} vs {}",
        sd(0),
        sd(1)
    );
}

#[test]
fn matched_loss_rows_sit_at_each_arms_own_crossing_and_budget_rows_share_a_step() {
    let mut p = Preset::load("classroom").unwrap();
    p.steps = 300;
    p.eval_every = 20;
    p.baseline_rotations = 64;
    let r = basis_lab::experiment::matched::matched_report(&p, 4).unwrap();
    assert_eq!(r.levels.len(), 4);
    assert!(
        r.levels.windows(2).all(|w| w[1] < w[0]),
        "levels descend from the start"
    );
    assert_eq!(r.rows.len(), 4 * 2 * 2);
    assert_eq!(r.reference, "gd");
    for &level in &r.levels {
        let budget: Vec<_> = r
            .rows
            .iter()
            .filter(|x| x.kind == "budget" && x.level == level)
            .collect();
        assert!(budget.windows(2).all(|w| w[0].step == w[1].step));
        for row in r
            .rows
            .iter()
            .filter(|x| x.kind == "loss" && x.level == level)
        {
            let step = row
                .step
                .expect("every arm reaches every level up to the best shared loss");
            assert!(step % 20 == 0 || step == 300);
            assert!(
                row.heldout_loss <= level,
                "{} at {step}: {} > {level}",
                row.arm,
                row.heldout_loss
            );
            if row.arm == "gd" {
                assert!(row.orientation_div < 1e-13);
            }
        }
    }
    assert_eq!(r.verdicts.len(), 1);
    assert!(r.verdicts[0].yardstick > 0.0);
    assert!(
        [
            "representation effect",
            "speed effect",
            "no effect beyond the baseline spread"
        ]
        .contains(&r.verdicts[0].label.as_str())
    );
}

#[test]
fn every_arm_falls_in_its_class_over_2000_steps_and_muon_stays_within_its_noise_twin() {
    use basis_lab::optim::OptimizerSpec;
    let mut p = Preset::load("default").unwrap();
    p.noise_twins = true;
    p.arms.push(OptimizerSpec::new("momentum", 0.1));
    p.arms.push(OptimizerSpec::new("scalar_adam", 0.01));
    p.arms.push(OptimizerSpec::new("rmsprop", 0.001));
    let mut run = PairedRun::new(&p).unwrap();
    for _ in 0..2000 {
        run.step();
    }
    let last = run.snapshot();
    let get = |name: &str| {
        let i = run.arms().iter().position(|a| a.name() == name).unwrap();
        *last.iter().find(|r| r.arm == i).unwrap()
    };
    for name in ["gd", "momentum", "scalar_adam"] {
        let r = get(name);
        assert!(r.orientation_div < 1e-12, "{name}: {:e}", r.orientation_div);
    }
    for name in ["adam", "rmsprop", "sign"] {
        let r = get(name);
        assert!(r.orientation_div > 1e-6, "{name}: {:e}", r.orientation_div);
        assert!(
            r.orientation_div > 1e3 * r.noise_div,
            "{name}: the gauge twin must drift far beyond numerical noise"
        );
    }
    let muon = get("muon");
    assert!(muon.noise_div.is_finite() && muon.noise_div > 0.0);
    assert!(
        muon.orientation_div < 10.0 * muon.noise_div,
        "Muon's gauge twin {:e} vs its noise twin {:e}",
        muon.orientation_div,
        muon.noise_div
    );
}
