//! The portable arithmetic (docs/numerics.md §8): every test of this binary computes in it, so
//! none sees the arithmetic change under it. Here run the determinism checks the labs' own test
//! files run in the fast arithmetic, the zoo outputs pinned in tests/data (written by a build
//! that computed as the portable arithmetic does), and the command line's `--portable` against
//! the library's numbers.

mod common;

use std::sync::atomic::AtomicBool;

use basis_lab::arith::{self, Arithmetic};
use basis_lab::preset::Preset;
use basis_lab::sensing::zoo::{ZooPreset, bundled_zoo, csv_bytes, run_zoo, summarise};

use common::determinism;

fn portable() {
    arith::set(Arithmetic::Portable);
}

#[test]
fn paired_runs_repeat_byte_for_byte() {
    portable();
    determinism::paired_runs_repeat_byte_for_byte();
}

#[test]
fn sweeps_do_not_depend_on_the_thread_count() {
    portable();
    determinism::sweeps_do_not_depend_on_the_thread_count();
}

#[test]
fn zoos_do_not_depend_on_the_thread_count() {
    portable();
    determinism::zoos_do_not_depend_on_the_thread_count();
}

#[test]
fn attention_steps_do_not_depend_on_the_thread_count() {
    portable();
    determinism::a_paper_size_attention_step_does_not_depend_on_the_thread_count();
}

/// Bundled presets written before sizes, inits, schedules and per-rule rates existed write the
/// same `zoo.csv` bytes as then (the convex reference's rows follow them): the files under
/// tests/data were written by the build before those fields (commit 4c33f55) with `--seeds 1 --budget 1500`, and written again (same
/// options) when the numerics moved to matrixmultiply's portable kernel and libm's `pow` and
/// `cos`, which is the portable arithmetic's. That moved the dial's numbers by about 1e-13
/// relative; Muon's Newton–Schulz iterations amplify rounding over 1500 steps, so its
/// recoveries moved by up to 1e-5 relative and its tiny final losses and one balancedness by up
/// to 25 %.
#[test]
fn presets_without_the_new_dimensions_write_the_bytes_they_always_did() {
    portable();
    let never = AtomicBool::new(false);
    for (name, pinned) in [
        (
            "muon-rates",
            include_str!("data/zoo-muon-rates-s1-b1500.csv"),
        ),
        ("dial", include_str!("data/zoo-dial-s1-b1500.csv")),
    ] {
        let p = ZooPreset {
            seeds: 1,
            budget: 1500,
            ..bundled_zoo(name)
        };
        let runs = run_zoo(&p, &|| {}, &never);
        let bytes = String::from_utf8(csv_bytes(&runs, &summarise(&runs)).unwrap()).unwrap();
        // The convex reference's rows come after the runs, which keep their bytes.
        let (runs_part, reference) = bytes.split_at(pinned.len().min(bytes.len()));
        assert_eq!(runs_part, pinned, "{name}");
        assert_eq!(reference.lines().count(), 1, "{name}");
        assert!(
            reference.starts_with("min_nuclear_norm,reference,0,,0,"),
            "{name}"
        );
    }
}

/// `basis-lab --portable run` writes the library's portable numbers; without the flag the
/// command line computes in the fast arithmetic, which on a CPU with FMA rounds differently.
#[test]
fn the_portable_flag_selects_the_portable_numbers() {
    portable();
    let mut p = Preset::load("classroom").unwrap();
    p.steps = 200;
    let [metrics, ..] = basis_lab::experiment::run::run_tables(&p).unwrap();
    let read = |flag: Option<&str>| {
        let out = tempfile::tempdir().unwrap();
        let dir = out.path().to_str().unwrap();
        let mut args: Vec<&str> = flag.into_iter().collect();
        args.extend([
            "run",
            "classroom",
            "--steps",
            "200",
            "--quiet",
            "--out",
            dir,
        ]);
        common::ok(&args);
        std::fs::read_to_string(out.path().join("metrics.csv")).unwrap()
    };
    assert!(
        read(Some("--portable")) == metrics,
        "--portable run differs from the library's"
    );
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("fma") && std::is_x86_feature_detected!("avx2") {
        assert!(
            read(None) != metrics,
            "the fast arithmetic should round differently"
        );
    }
}
