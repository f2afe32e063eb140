//! The checks that a run's numbers depend only on its preset and seed: run twice, on 1 and on
//! several threads. Each lab's test file runs them in the fast arithmetic and tests/portable.rs
//! in the portable one (docs/numerics.md §8).

use std::sync::atomic::AtomicBool;

use basis_lab::attention::{
    AttentionPreset, Params, RunSpec, TwinKind, Workspace, run_attention, split,
};
use basis_lab::experiment::{RunOptions, run_to_dir, sweep};
use basis_lab::optim::OptimizerSpec;
use basis_lab::preset::Preset;
use basis_lab::rng::{Stream, stream};
use basis_lab::sensing::SensingConfig;
use basis_lab::sensing::zoo::{Rule, ZooPreset, run_zoo, summarise};

/// `f` on a fresh rayon pool of `threads` threads.
pub fn on_threads<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(f)
}

/// `metrics.csv` of `run` on `preset`.
pub fn run_csv(preset: &Preset) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    run_to_dir(
        preset,
        dir.path(),
        RunOptions {
            trace: false,
            figures: None,
            max_output_bytes: basis_lab::experiment::MAX_OUTPUT_BYTES,
        },
        &|_| {},
    )
    .unwrap();
    std::fs::read(dir.path().join("metrics.csv")).unwrap()
}

/// The classroom preset run twice gives the same bytes, and another seed others.
pub fn paired_runs_repeat_byte_for_byte() {
    let mut p = Preset::load("classroom").unwrap();
    p.steps = 300;
    let (a, b) = (run_csv(&p), run_csv(&p));
    assert_eq!(a, b);
    assert!(a.len() > 10_000);
    p.seed = 1;
    assert_ne!(run_csv(&p), a, "another seed must change the run");
}

/// A 5-seed sweep gives the same numbers on 1 and 2 threads; its seed 2 is the single run's.
pub fn sweeps_do_not_depend_on_the_thread_count() {
    let mut p = Preset::load("classroom").unwrap();
    p.steps = 100;
    p.baseline_rotations = 64;
    let run_with = |threads| on_threads(threads, || sweep(&p, 5, &|| {}).unwrap());
    let (one, two) = (run_with(1), run_with(2));
    assert_eq!(
        serde_json::to_string(&one).unwrap(),
        serde_json::to_string(&two).unwrap()
    );
    assert_eq!(one.seeds, vec![0, 1, 2, 3, 4]);
    assert_eq!(one.per_seed.len(), 10);
    let gd = one.aggregate.iter().find(|a| a.arm == "gd").unwrap();
    assert_eq!(gd.seeds_ok, 5);
    assert!(gd.orientation_div_mean < 1e-13);
    let adam = one.aggregate.iter().find(|a| a.arm == "adam").unwrap();
    assert!(adam.orientation_div_mean > 1e-3);
    let single = basis_lab::experiment::sweep::run_seed(&p, 2).unwrap();
    assert_eq!(
        serde_json::to_string(&single).unwrap(),
        serde_json::to_string(&one.per_seed[4..6]).unwrap()
    );
}

/// A small zoo grid gives the same runs on 1 and 2 threads.
pub fn zoos_do_not_depend_on_the_thread_count() {
    let rule = |name| Rule::named(name).unwrap();
    let preset = ZooPreset {
        problem: SensingConfig {
            n: 8,
            rank: 2,
            ratio: 2.0,
            init: 1e-3,
            tau: 0.0,
        },
        budget: 400,
        seeds: 2,
        rules: vec![rule("gd"), rule("adam"), rule("muon")],
        grid: true,
        ..ZooPreset::default()
    };
    let never = AtomicBool::new(false);
    let run = |threads| on_threads(threads, || run_zoo(&preset, &|| {}, &never));
    let (a, b) = (run(1), run(2));
    assert_eq!(a, b);
    // Every (rule, rate, seed) run, then each seed's convex reference.
    assert_eq!(a.len(), (4 + 3 + 4) * 2 + 2);
    let s = summarise(&a);
    assert_eq!(s.len(), 3);
    assert!(s.iter().all(|r| r.seeds == 2));
}

/// Attention twins (a small model, two seeds, three rules) give the same numbers on 1, 2 and 3
/// threads.
pub fn attention_twins_do_not_depend_on_the_thread_count(tiny: AttentionPreset) {
    let mut p = AttentionPreset {
        runs: vec![
            RunSpec {
                rule: OptimizerSpec::new("adam", 1e-2),
                rest: None,
                twins: vec![TwinKind::Gauge, TwinKind::Noise],
            },
            RunSpec {
                rule: OptimizerSpec::new("muon", 0.02),
                rest: Some(OptimizerSpec::new("adam", 1e-2)),
                twins: vec![TwinKind::Gauge],
            },
            RunSpec {
                rule: OptimizerSpec::new("scalar_adam", 1e-2),
                rest: None,
                twins: vec![TwinKind::Gauge],
            },
        ],
        ..tiny
    };
    p.seeds = 2;
    let run_with = |threads| on_threads(threads, || run_attention(&p, &|| {}).unwrap());
    // Debug text holds every f64 exactly (shortest round-trip form) and, unlike `==`, treats
    // the base models' NaN distances as equal to themselves.
    let one = format!("{:?}", run_with(1).seeds);
    for threads in [2, 3] {
        let other = format!("{:?}", run_with(threads).seeds);
        assert!(other == one, "{threads} threads give other numbers");
    }
    assert!(one.contains("seed: 1,"), "both seeds ran");
}

/// One forward and backward pass at the paper's sizes (883 sequences, d 64), where the
/// products and the column-wise loops are split over the threads, gives the same loss and
/// gradient bits on 1, 2 and 3 threads.
pub fn a_paper_size_attention_step_does_not_depend_on_the_thread_count() {
    let p = AttentionPreset::load("attention").unwrap();
    let arch = p.arch();
    let train = split(&p.task, p.seed).train;
    let params = Params::init(arch, p.init, &mut stream(p.seed, Stream::AttentionInit));
    let pass = |threads| {
        on_threads(threads, || {
            let mut ws = Workspace::new(arch, train.n, true);
            let mut grads = Params::zeros(arch);
            let loss = ws.forward(&params, &train).loss;
            ws.backward(&params, &train, &mut grads);
            let mut bits = vec![loss.to_bits()];
            bits.extend(
                grads
                    .mats
                    .iter()
                    .flat_map(|m| m.iter().map(|x| x.to_bits())),
            );
            bits
        })
    };
    let one = pass(1);
    assert_eq!(one.len(), 1 + arch.numbers());
    for threads in [2, 3] {
        assert!(pass(threads) == one, "{threads} threads give other bits");
    }
}
