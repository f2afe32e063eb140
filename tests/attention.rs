//! Attention twins: the model against a per-sequence reference, the gradient against central
//! differences, the twin properties the paper's Table 3 rests on, presets, determinism across
//! thread counts, and the output files.
//!
//! Properties that hold at any size run on small models; the ones whose numbers depend on the
//! size (rounding at step 0, how far twins drift in 1, 10 or 50 steps) run at the paper's sizes.

mod common;

use basis_lab::attention::twins::{gauge_rotations, qk_forms, rotate_heads};
use basis_lab::attention::{
    Arch, AttentionPreset, BUNDLED_ATTENTION, Batch, Init, ModelConfig, Param, Params, Record,
    RunSpec, SEQ_LEN, SeedRun, TaskConfig, TwinKind, Workspace, make_twin, relative_distance,
    report, run_attention,
};
use basis_lab::optim::{OptimizerSpec, REGISTRY};
use basis_lab::rng::stream_id;
use nalgebra::{DMatrix, DVector};

fn small_arch(layers: usize, heads: usize, d_model: usize, modulus: usize) -> Arch {
    let model = ModelConfig {
        layers,
        heads,
        d_model,
        d_mlp: 12,
        norm_eps: 1e-6,
    };
    let task = TaskConfig {
        modulus,
        train_fraction: 0.5,
    };
    Arch::new(&model, &task)
}

/// Fan-in initial weights with every gain moved off 1, so gain gradients are exercised.
fn random_params(arch: Arch, seed: u64) -> Params {
    let mut rng = stream_id(seed, 99);
    let mut p = Params::init(arch, Init::FanIn, &mut rng);
    let noise = Params::init(arch, Init::Normal(0.3), &mut rng);
    for (param, (m, z)) in arch
        .params()
        .into_iter()
        .zip(p.mats.iter_mut().zip(&noise.mats))
    {
        if matches!(
            param,
            Param::AttnGain(_) | Param::MlpGain(_) | Param::FinalGain
        ) {
            *m += &z.column(0).clone_owned();
        }
    }
    p
}

fn all_pairs(p: usize) -> Batch {
    let pairs = (0..p as u32)
        .flat_map(|a| (0..p as u32).map(move |b| (a, b)))
        .collect();
    Batch::from_pairs(pairs, p)
}

/// The model written per sequence and per position, every position through every layer, with
/// nalgebra vectors: an independent statement of the architecture.
fn reference_logits(params: &Params, batch: &Batch) -> DMatrix<f64> {
    let arch = params.arch;
    let (d, dh, n) = (arch.d_model, arch.head_dim(), batch.n);
    let rms = |x: &DVector<f64>, g: &DMatrix<f64>| -> DVector<f64> {
        let r = (x.norm_squared() / d as f64 + arch.norm_eps).sqrt();
        x.component_mul(&g.column(0)) / r
    };
    let get = |p| params.get(p);
    let mut out = DMatrix::zeros(arch.classes, n);
    for i in 0..n {
        let mut xs: Vec<DVector<f64>> = (0..SEQ_LEN)
            .map(|t| {
                get(Param::TokenEmbedding).column(batch.tokens[t * n + i] as usize)
                    + get(Param::PositionEmbedding).column(t)
            })
            .collect();
        for l in 0..arch.layers {
            let ys: Vec<_> = xs.iter().map(|x| rms(x, get(Param::AttnGain(l)))).collect();
            let qs: Vec<_> = ys.iter().map(|y| get(Param::Query(l)) * y).collect();
            let ks: Vec<_> = ys.iter().map(|y| get(Param::Key(l)) * y).collect();
            let vs: Vec<_> = ys.iter().map(|y| get(Param::Value(l)) * y).collect();
            for t in 0..SEQ_LEN {
                let mut att = DVector::zeros(d);
                for h in 0..arch.heads {
                    let r = h * dh..(h + 1) * dh;
                    let scores: Vec<f64> = (0..=t)
                        .map(|u| {
                            qs[t].rows(r.start, dh).dot(&ks[u].rows(r.start, dh))
                                / (dh as f64).sqrt()
                        })
                        .collect();
                    let max = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    let e: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
                    let sum: f64 = e.iter().sum();
                    for (u, eu) in e.iter().enumerate() {
                        let mut block = att.rows_mut(r.start, dh);
                        block += vs[u].rows(r.start, dh) * (eu / sum);
                    }
                }
                xs[t] += get(Param::Output(l)) * att;
            }
            for x in xs.iter_mut() {
                let u = get(Param::Up(l)) * rms(x, get(Param::MlpGain(l)));
                let s = u.map(|v| v / (1.0 + (-v).exp()));
                *x += get(Param::Down(l)) * s;
            }
        }
        let logits = get(Param::Unembedding) * rms(&xs[SEQ_LEN - 1], get(Param::FinalGain));
        out.set_column(i, &logits);
    }
    out
}

#[test]
fn the_model_matches_a_per_sequence_reference() {
    for (layers, heads, d_model) in [(1, 2, 8), (2, 2, 8), (3, 4, 8)] {
        let arch = small_arch(layers, heads, d_model, 7);
        let params = random_params(arch, layers as u64);
        let batch = all_pairs(7);
        let mut ws = Workspace::new(arch, batch.n, false);
        ws.forward(&params, &batch);
        let want = reference_logits(&params, &batch);
        let scale = want.amax();
        let err = ws
            .logits()
            .iter()
            .zip(want.iter())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            scale > 0.1,
            "logits of a random model are not tiny: {scale}"
        );
        assert!(
            err <= 1e-13 * scale,
            "{layers} layers: largest difference {err} at scale {scale}"
        );
    }
}

#[test]
fn a_smaller_batch_in_a_larger_workspace_gives_the_same_numbers() {
    let arch = small_arch(2, 2, 8, 7);
    let params = random_params(arch, 5);
    let all = all_pairs(7);
    let part = Batch::from_pairs(all.pairs[..10].to_vec(), 7);
    let mut big = Workspace::new(arch, all.n, false);
    let mut exact = Workspace::new(arch, part.n, false);
    big.forward(&params, &all);
    let a = big.forward(&params, &part);
    let b = exact.forward(&params, &part);
    assert_eq!(a, b);
    assert_eq!(big.logits(), exact.logits());
}

#[test]
fn shared_first_positions_leave_each_sequences_logits_exact_in_any_batch_order() {
    // Ordered by (b, descending a), the first tokens interleave instead of running in blocks and
    // first appear in reverse, so a shared column's index is not its token; the sequences sharing
    // a position-0 column are far apart. Alone, each sequence has its own.
    let arch = small_arch(2, 2, 8, 7);
    let params = random_params(arch, 8);
    let sorted = all_pairs(7);
    let mut pairs = sorted.pairs.clone();
    pairs.sort_by_key(|&(a, b)| (b, std::cmp::Reverse(a)));
    let mixed = Batch::from_pairs(pairs, 7);
    let mut ws = Workspace::new(arch, sorted.n, true);
    let (mut g_sorted, mut g_mixed) = (Params::zeros(arch), Params::zeros(arch));
    ws.forward(&params, &sorted);
    ws.backward(&params, &sorted, &mut g_sorted);
    let logits_sorted = ws.logits().to_vec();
    ws.forward(&params, &mixed);
    ws.backward(&params, &mixed, &mut g_mixed);
    let c = arch.classes;
    for (i, pair) in mixed.pairs.iter().enumerate() {
        let j = sorted.pairs.iter().position(|p| p == pair).unwrap();
        assert_eq!(
            ws.logits()[i * c..(i + 1) * c],
            logits_sorted[j * c..(j + 1) * c],
            "{pair:?}"
        );
    }
    let mut alone = Workspace::new(arch, 1, false);
    for (j, &pair) in sorted.pairs.iter().enumerate().step_by(5) {
        alone.forward(&params, &Batch::from_pairs(vec![pair], 7));
        assert_eq!(
            alone.logits(),
            &logits_sorted[j * c..(j + 1) * c],
            "{pair:?}"
        );
    }
    for (k, p) in arch.params().into_iter().enumerate() {
        let rel = (&g_mixed.mats[k] - &g_sorted.mats[k]).norm() / g_sorted.mats[k].norm();
        assert!(
            rel < 1e-13,
            "{}: the order moved the gradient by {rel:e}",
            p.name()
        );
    }
}

#[test]
fn the_gradient_matches_central_differences() {
    // One layer is the last layer alone (queries at the last position only); two add a full
    // layer below it; three add a full layer below a full layer.
    for (layers, heads, d_model) in [(1, 1, 6), (2, 2, 8), (3, 4, 8)] {
        let arch = small_arch(layers, heads, d_model, 5);
        let mut params = random_params(arch, 10 + layers as u64);
        let batch = all_pairs(5);
        let mut ws = Workspace::new(arch, batch.n, true);
        let mut grads = Params::zeros(arch);
        ws.forward(&params, &batch);
        ws.backward(&params, &batch, &mut grads);
        let h = 1e-5;
        for (k, p) in arch.params().into_iter().enumerate() {
            let g = grads.mats[k].clone();
            let mut fd = DMatrix::zeros(g.nrows(), g.ncols());
            for e in 0..g.len() {
                let x = params.mats[k][e];
                params.mats[k][e] = x + h;
                let plus = ws.forward(&params, &batch).loss;
                params.mats[k][e] = x - h;
                let minus = ws.forward(&params, &batch).loss;
                params.mats[k][e] = x;
                fd[e] = (plus - minus) / (2.0 * h);
            }
            let rel = (&fd - &g).norm() / g.norm();
            assert!(
                g.norm() > 1e-6,
                "{}: gradient is not trivially zero",
                p.name()
            );
            assert!(
                rel < 1e-7,
                "{layers} layers, {}: relative error {rel:.2e}",
                p.name()
            );
        }
    }
}

#[test]
fn the_gauge_rotation_leaves_every_score_and_qk_form_unchanged() {
    let arch = small_arch(2, 2, 8, 7);
    let params = random_params(arch, 3);
    let rotations = gauge_rotations(&arch, 3);
    for a in &rotations {
        let eye = DMatrix::<f64>::identity(a.nrows(), a.nrows());
        assert!((a.transpose() * a - eye).amax() < 1e-14, "A is orthogonal");
    }
    let mut rotated = params.clone();
    rotate_heads(&mut rotated, &rotations);
    assert!(
        (rotated.get(Param::Query(0)) - params.get(Param::Query(0))).amax() > 0.01,
        "the rotation moves W_Q"
    );
    let n = arch.layers * arch.heads;
    let (mut a, mut b) = (vec![DMatrix::zeros(8, 8); n], vec![DMatrix::zeros(8, 8); n]);
    qk_forms(&params, &mut a);
    qk_forms(&rotated, &mut b);
    for (x, y) in a.iter().zip(&b) {
        assert!(relative_distance(x.as_slice(), y.as_slice()) < 1e-14);
    }
    assert_ne!(rotations[0], rotations[1], "each head draws its own A");
    let batch = all_pairs(7);
    let mut ws = Workspace::new(arch, batch.n, false);
    ws.forward(&params, &batch);
    let before = ws.logits().to_vec();
    ws.forward(&rotated, &batch);
    let after = relative_distance(&before, ws.logits());
    assert!(after < 1e-14, "the logits move by {after:e}");
}

/// The paper's setting with only the given runs and `steps` steps.
fn paper_with(runs: Vec<RunSpec>, steps: usize) -> AttentionPreset {
    AttentionPreset {
        steps,
        runs,
        ..AttentionPreset::load("attention").unwrap()
    }
}

fn run_spec(optimizer: &str, lr: f64, twins: &[TwinKind]) -> RunSpec {
    RunSpec {
        rule: OptimizerSpec::new(optimizer, lr),
        rest: None,
        twins: twins.to_vec(),
    }
}

fn records_of(run: &SeedRun, r: usize, twin: TwinKind) -> Vec<&Record> {
    run.records()
        .iter()
        .filter(|x| x.run == r && x.twin == Some(twin))
        .collect()
}

#[test]
fn at_step_0_the_gauge_twin_computes_the_same_logits_to_1e_13() {
    let p = paper_with(
        vec![run_spec(
            "adam",
            1e-3,
            &[TwinKind::Gauge, TwinKind::Identity, TwinKind::Noise],
        )],
        0,
    );
    let mut run = SeedRun::new(&p, 0).unwrap();
    run.step();
    assert!(run.finished());
    let at = |kind| records_of(&run, 0, kind)[0].logit_distance;
    let gauge = at(TwinKind::Gauge);
    assert!(gauge < 1e-13, "gauge twin at step 0: {gauge:e}");
    assert!(
        gauge > 0.0,
        "a rotation of f64 weights changes the last bits: {gauge:e}"
    );
    assert_eq!(at(TwinKind::Identity), 0.0);
    let noise = at(TwinKind::Noise);
    assert!(
        (1e-9..1e-5).contains(&noise),
        "noise twin at step 0: {noise:e}"
    );
}

#[test]
fn the_identity_twin_stays_exactly_equal_for_every_registered_rule() {
    let runs: Vec<RunSpec> = REGISTRY
        .iter()
        .map(|info| run_spec(info.name, 1e-3, &[TwinKind::Identity]))
        .collect();
    let p = AttentionPreset {
        task: TaskConfig {
            modulus: 11,
            train_fraction: 0.5,
        },
        model: ModelConfig {
            layers: 2,
            heads: 2,
            d_model: 16,
            d_mlp: 32,
            norm_eps: 1e-6,
        },
        steps: 12,
        runs,
        ..AttentionPreset::default()
    };
    let mut run = SeedRun::new(&p, 1).unwrap();
    while !run.finished() {
        run.step();
    }
    for (i, info) in REGISTRY.iter().enumerate() {
        let recs = records_of(&run, i, TwinKind::Identity);
        assert_eq!(recs.len(), 13, "{}", info.name);
        for r in recs {
            assert_eq!(r.logit_distance, 0.0, "{} step {}", info.name, r.step);
            assert!(r.qk_distance.iter().all(|&x| x == 0.0), "{}", info.name);
        }
    }
    let result = run.finish();
    for pair in result.models.chunks(2) {
        assert_eq!(pair[0].final_params, pair[1].final_params);
        assert_ne!(pair[0].final_params, result.initial, "the models trained");
    }
}

#[test]
fn momentum_and_scalar_adam_gauge_twins_stay_below_1e_9_through_step_50() {
    let p = paper_with(
        vec![
            RunSpec {
                rule: OptimizerSpec {
                    momentum: 0.9,
                    ..OptimizerSpec::new("momentum", 0.5)
                },
                rest: None,
                twins: vec![TwinKind::Gauge],
            },
            run_spec("scalar_adam", 3e-3, &[TwinKind::Gauge]),
        ],
        50,
    );
    let mut run = SeedRun::new(&p, 0).unwrap();
    while !run.finished() {
        run.step();
    }
    for r in 0..2 {
        let recs = records_of(&run, r, TwinKind::Gauge);
        assert_eq!(recs.len(), 51);
        let worst = recs.iter().map(|x| x.logit_distance).fold(0.0, f64::max);
        assert!(worst < 1e-9, "run {r}: gauge twin reached {worst:e}");
        let qk = recs.iter().map(|x| x.qk_max()).fold(0.0, f64::max);
        assert!(qk < 1e-9, "run {r}: QK forms reached {qk:e}");
    }
    let base = run
        .records()
        .iter()
        .filter(|x| x.twin.is_none() && x.step == 50)
        .map(|x| x.train.loss);
    for loss in base {
        assert!(loss < 47f64.ln() - 0.2, "both rules train: loss {loss}");
    }
}

/// Muon orthogonalises each hidden matrix's momentum as stored (d_out × d_in). The gauge twin's
/// W_Q and W_K are `blockdiag(A_h) · W` and their gradients and momenta likewise, and Newton–Schulz
/// (`X ← aX + (bXXᵀ + c(XXᵀ)²)X`) commutes with an orthogonal left factor; the Adam group sees the
/// same gradients in both twins. So the twin stays at rounding error until the training's chaos
/// amplifies that (after step 50, docs/attention.md).
#[test]
fn muons_gauge_twin_stays_at_rounding_error_through_step_20() {
    let p = paper_with(
        vec![RunSpec {
            rule: OptimizerSpec::new("muon", 0.02),
            rest: Some(OptimizerSpec::new("adam", 1e-3)),
            twins: vec![TwinKind::Gauge],
        }],
        20,
    );
    let mut run = SeedRun::new(&p, 0).unwrap();
    while !run.finished() {
        run.step();
    }
    let recs = records_of(&run, 0, TwinKind::Gauge);
    assert_eq!(recs.len(), 21);
    let worst = recs.iter().map(|x| x.logit_distance).fold(0.0, f64::max);
    assert!(worst < 1e-12, "gauge twin reached {worst:e}");
    let qk = recs.iter().map(|x| x.qk_max()).fold(0.0, f64::max);
    assert!(qk < 1e-12, "QK forms reached {qk:e}");
    let moved = recs[20].train.loss;
    assert!(
        moved < recs[0].train.loss - 0.2,
        "Muon trains: loss {moved}"
    );
}

#[test]
fn adams_gauge_twin_splits_at_step_1_and_exceeds_its_noise_twin_100_fold_at_step_10() {
    let p = paper_with(
        vec![run_spec("adam", 1e-3, &[TwinKind::Gauge, TwinKind::Noise])],
        10,
    );
    let mut run = SeedRun::new(&p, 0).unwrap();
    while !run.finished() {
        run.step();
    }
    let gauge = records_of(&run, 0, TwinKind::Gauge);
    let noise = records_of(&run, 0, TwinKind::Noise);
    assert!(
        gauge[1].logit_distance > 1e-4,
        "step 1: {:e}",
        gauge[1].logit_distance
    );
    assert!(
        gauge[10].logit_distance > 100.0 * noise[10].logit_distance,
        "step 10: gauge {:e}, noise {:e}",
        gauge[10].logit_distance,
        noise[10].logit_distance
    );
    assert!(
        gauge[10].qk_mean() > 1e-3,
        "the QK forms split too: {:e}",
        gauge[10].qk_mean()
    );
}

#[test]
fn bad_presets_are_rejected_naming_the_field() {
    let cases = [
        ("(steps: 200000)", "steps"),
        ("(task: (modulus: 1))", "task.modulus"),
        ("(task: (train_fraction: 1.5))", "task.train_fraction"),
        (
            "(task: (modulus: 3, train_fraction: 0.05))",
            "task.train_fraction",
        ),
        ("(model: (heads: 3))", "model.d_model"),
        ("(model: (norm_eps: -1.0))", "model.norm_eps"),
        ("(init: Normal(0.0))", "init"),
        ("(noise_std: 0.0)", "noise_std"),
        ("(measure_every: 0)", "measure_every"),
        ("(seeds: 0)", "seeds"),
        ("(runs: [])", "runs"),
        (
            "(runs: [(rule: (optimizer: \"nope\", lr: 1e-3), twins: [Gauge])])",
            "runs[0].rule.optimizer",
        ),
        (
            "(runs: [(rule: (optimizer: \"adam\", lr: -1.0), twins: [Gauge])])",
            "runs[0].rule.lr",
        ),
        (
            "(runs: [(rule: (optimizer: \"muon\", lr: 0.02), rest: (optimizer: \"adam\", \
             lr: 1e-3, beta2: 1.0), twins: [Gauge])])",
            "runs[0].rest.beta2",
        ),
        (
            "(runs: [(rule: (optimizer: \"adam\", lr: 1e-3), twins: [Gauge, Gauge])])",
            "runs[0].twins",
        ),
        (
            "(runs: [(rule: (optimizer: \"adam\", lr: 1e-3), twins: [])])",
            "runs[0].twins",
        ),
        (
            "(runs: [(rule: (optimizer: \"adam\", lr: 1e-3)), (rule: (optimizer: \"adam\", \
             lr: 1e-2))])",
            "runs[1].rule.label",
        ),
        (
            "(model: (d_model: 1024, d_mlp: 4096), task: (modulus: 256))",
            "runs",
        ),
    ];
    for (text, field) in cases {
        let err = AttentionPreset::from_ron(text, "bad.ron").unwrap_err();
        assert_eq!(err.field.as_deref(), Some(field), "{text}: {err}");
        assert!(err.to_string().contains(field), "{err}");
    }
    let err = AttentionPreset::from_ron("(stpes: 10)", "typo.ron").unwrap_err();
    assert_eq!((err.file.as_str(), err.line), ("typo.ron", Some(1)));
    assert!(err.message.contains("stpes"), "{err}");
}

/// Attention presets are read as the other two kinds are: a byte-order mark is accepted and an
/// out-of-range value is located at the line:column that writes it.
#[test]
fn a_bom_is_accepted_and_a_bad_value_is_located() {
    let text = AttentionPreset::default().to_ron();
    assert_eq!(
        AttentionPreset::from_ron(&format!("\u{feff}{text}"), "bom.ron").unwrap(),
        AttentionPreset::from_ron(&text, "plain.ron").unwrap()
    );
    let text = "(\n  model: (\n    layers: 1,\n    heads: 99,\n  ),\n)";
    let err = AttentionPreset::from_ron(text, "heads.ron").unwrap_err();
    assert_eq!(err.field.as_deref(), Some("model.heads"));
    assert_eq!((err.line, err.column), (Some(4), Some(5)), "{err}");
    assert!(
        err.to_string()
            .starts_with("heads.ron:4:5: field `model.heads`: "),
        "{err}"
    );
    // The second run's twins, past a first run that writes them too.
    let text = "(runs: [\n (rule: (optimizer: \"adam\", lr: 1e-3), twins: [Gauge]),\n \
                (rule: (optimizer: \"momentum\", lr: 1e-2), twins: [Noise, Noise]),\n])";
    let err = AttentionPreset::from_ron(text, "twins.ron").unwrap_err();
    assert_eq!(err.field.as_deref(), Some("runs[1].twins"), "{err}");
    assert_eq!((err.line, err.column), (Some(3), Some(44)), "{err}");
    // A field left at its default: the error points at the enclosing one the text writes.
    let text = "(runs: [\n (rule: (optimizer: \"adam\", lr: 1e-3)),\n (rule: (optimizer: \"adam\", lr: 1e-2)),\n])";
    let err = AttentionPreset::from_ron(text, "label.ron").unwrap_err();
    assert_eq!(err.field.as_deref(), Some("runs[1].rule.label"), "{err}");
    assert_eq!((err.line, err.column), (Some(3), Some(3)), "{err}");
}

#[test]
fn bundled_presets_load_validate_and_round_trip() {
    for (name, _) in BUNDLED_ATTENTION {
        let p = AttentionPreset::load(name).unwrap();
        assert_eq!(AttentionPreset::from_ron(&p.to_ron(), "again").unwrap(), p);
    }
    let paper = AttentionPreset::load("attention").unwrap();
    assert_eq!(
        paper,
        AttentionPreset {
            description: paper.description.clone(),
            ..AttentionPreset::default()
        }
    );
    assert_eq!(paper.models_per_seed(), 11);
    assert_eq!(paper.arch().numbers(), 104_896);
}

/// A preset that trains in well under a second.
fn tiny(runs: Vec<RunSpec>) -> AttentionPreset {
    AttentionPreset {
        name: "tiny".into(),
        task: TaskConfig {
            modulus: 7,
            train_fraction: 0.5,
        },
        model: ModelConfig {
            layers: 2,
            heads: 2,
            d_model: 8,
            d_mlp: 12,
            norm_eps: 1e-6,
        },
        steps: 15,
        dense_until: 5,
        measure_every: 4,
        runs,
        ..AttentionPreset::default()
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    common::determinism::attention_twins_do_not_depend_on_the_thread_count(tiny(vec![]));
}

#[test]
fn a_paper_size_step_does_not_depend_on_the_thread_count() {
    common::determinism::a_paper_size_attention_step_does_not_depend_on_the_thread_count();
}

#[test]
fn metrics_are_recorded_at_the_documented_steps() {
    let p = tiny(vec![run_spec("adam", 1e-2, &[TwinKind::Gauge])]);
    let result = run_attention(&p, &|| {}).unwrap();
    let steps: Vec<usize> = result.seeds[0]
        .records
        .iter()
        .filter(|r| r.twin.is_some())
        .map(|r| r.step)
        .collect();
    assert_eq!(steps, [0, 1, 2, 3, 4, 5, 8, 12, 15]);
    assert_eq!(report::checkpoints(&p), [0, 1, 15]);
}

#[test]
fn the_output_files_hold_what_the_docs_describe() {
    let p = tiny(vec![
        run_spec("adam", 1e-2, &[TwinKind::Gauge, TwinKind::Identity]),
        run_spec("gd", 0.1, &[TwinKind::Noise]),
    ]);
    let result = run_attention(&p, &|| {}).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (md, _) = report::write_outputs(&result, dir.path()).unwrap();
    assert_eq!(
        md,
        std::fs::read_to_string(dir.path().join("attention.md")).unwrap()
    );
    assert!(md.contains("| adam | A = I | 0 | 0 | 0 |"), "{md}");

    let csv = std::fs::read_to_string(dir.path().join("attention.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "seed,step,rule,twin,logit_distance,qk_mean,qk_max,train_loss,train_accuracy,val_loss,\
         val_accuracy"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 9 * 5, "9 measured steps × 5 models");
    let first_gauge = rows.iter().find(|r| r[3] == "gauge").unwrap();
    assert_eq!(&first_gauge[..3], ["0", "0", "adam"]);
    assert!(first_gauge[4].parse::<f64>().unwrap() < 1e-13);
    let base = rows.iter().find(|r| r[3] == "base").unwrap();
    assert_eq!(&base[4..7], ["", "", ""]);
    assert!((base[7].parse::<f64>().unwrap() - 7f64.ln()).abs() < 1.0);

    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("trace.json")).unwrap()).unwrap();
    assert_eq!(trace["schema"], report::TRACE_SCHEMA);
    assert_eq!(trace["arch"]["vocab"], 8);
    assert_eq!(trace["arch"]["head_dim"], 4);
    assert_eq!(trace["train_pairs"].as_array().unwrap().len(), 24);
    assert_eq!(trace["val_pairs"].as_array().unwrap().len(), 25);
    let init = &trace["initial"];
    let arch = p.arch();
    for param in arch.params() {
        let (rows, cols) = arch.shape(param);
        let m = init[param.name()].as_array().unwrap();
        assert_eq!((m.len(), m[0].as_array().unwrap().len()), (rows, cols));
    }
    // Rows as stored: entry (i, j) is row i, column j.
    let wq = result.seeds[0].initial.get(Param::Query(1));
    assert_eq!(init["layer1.w_q"][2][5].as_f64().unwrap(), wq[(2, 5)]);
    assert_eq!(trace["rotations"].as_array().unwrap().len(), 4);
    let models = trace["models"].as_array().unwrap();
    assert_eq!(models.len(), 5);
    assert_eq!(
        (models[1]["rule"].as_str(), models[1]["twin"].as_str()),
        (Some("adam"), Some("gauge"))
    );
    assert_eq!(models[1]["initial_w_q"].as_array().unwrap().len(), 2);
    let fin = result.seeds[0].models[4]
        .final_params
        .get(Param::Unembedding);
    assert_eq!(
        models[4]["final"]["w_u"][6][7].as_f64().unwrap(),
        fin[(6, 7)]
    );
    let metrics = trace["metrics"].as_array().unwrap();
    assert_eq!(metrics.len(), 45);
    assert_eq!(metrics[1]["qk_distance"].as_array().unwrap().len(), 4);
    assert!(
        metrics[0]["logit_distance"].is_null(),
        "NaN is written as null"
    );
}

#[test]
fn make_twin_changes_only_the_query_and_key_weights() {
    let arch = small_arch(2, 2, 8, 7);
    let base = random_params(arch, 8);
    let rotations = gauge_rotations(&arch, 8);
    for kind in TwinKind::ALL {
        let twin = make_twin(&base, kind, &rotations, 1e-7, 8);
        for (p, (a, b)) in arch
            .params()
            .into_iter()
            .zip(base.mats.iter().zip(&twin.mats))
        {
            let qk = matches!(p, Param::Query(_) | Param::Key(_));
            if qk && kind != TwinKind::Identity {
                assert_ne!(a, b, "{kind:?} {}", p.name());
            } else {
                assert_eq!(a, b, "{kind:?} {}", p.name());
            }
        }
        let dh = arch.head_dim();
        let mut sq = (0.0, 0usize);
        for l in 0..arch.layers {
            for p in [Param::Query(l), Param::Key(l)] {
                let (a, b) = (base.get(p), twin.get(p));
                sq.0 += (b - a).norm_squared();
                sq.1 += a.len();
                for h in 0..arch.heads {
                    let rows = |m: &DMatrix<f64>| m.rows(h * dh, dh).clone_owned();
                    let want = match kind {
                        TwinKind::Gauge => &rotations[l * arch.heads + h] * rows(a),
                        _ => rows(a),
                    };
                    let off = (rows(b) - want).amax();
                    let tol = if kind == TwinKind::Noise { 1e-6 } else { 1e-15 };
                    assert!(off < tol, "{kind:?} layer {l} head {h}: {off:e}");
                }
            }
        }
        let rms = (sq.0 / sq.1 as f64).sqrt();
        if kind == TwinKind::Noise {
            assert!((0.85e-7..1.15e-7).contains(&rms), "noise of size {rms:e}");
        }
    }
}

#[test]
fn the_command_line_writes_the_three_files_and_names_bad_fields() {
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("tiny.ron");
    std::fs::write(
        &preset,
        tiny(vec![run_spec("adam", 1e-2, &[TwinKind::Gauge])]).to_ron(),
    )
    .unwrap();
    let out = dir.path().join("out");
    let stdout = common::ok(&[
        "attention",
        common::s(&preset),
        "--out",
        common::s(&out),
        "--steps",
        "3",
        "--seeds",
        "2",
        "--threads",
        "2",
        "--quiet",
    ]);
    assert!(stdout.contains("| adam | gauge |"), "{stdout}");
    assert!(stdout.contains("Mean ± sd over seeds."), "{stdout}");
    for f in ["attention.csv", "attention.md", "trace.json"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let err = common::fails(&[
        "attention",
        common::s(&preset),
        "--out",
        common::s(&out),
        "--steps",
        "999999",
    ]);
    assert!(err.contains("field `steps`"), "{err}");
}

#[test]
fn a_diverging_run_is_marked_while_the_others_go_on() {
    let p = tiny(vec![
        run_spec("gd", 1e6, &[TwinKind::Gauge]),
        run_spec("adam", 1e-2, &[TwinKind::Gauge]),
    ]);
    let result = run_attention(&p, &|| {}).unwrap();
    let seed = &result.seeds[0];
    let at = seed.models[0]
        .diverged_at
        .expect("a rate of 1e6 blows the loss up");
    assert!(at <= 3, "diverged at step {at}");
    assert_eq!(seed.models[2].diverged_at, None);
    let last = |run, twin| {
        seed.records
            .iter()
            .rfind(|r| r.run == run && r.twin == twin)
            .unwrap()
    };
    assert!(last(0, None).train.loss.is_nan());
    assert!(last(0, Some(TwinKind::Gauge)).logit_distance.is_nan());
    assert!(last(1, Some(TwinKind::Gauge)).logit_distance > 0.0);
    assert!(last(1, None).train.loss < 7f64.ln());
    let md = report::markdown(&result);
    assert!(md.contains("gd base (seed 0) diverged at step"), "{md}");
}
