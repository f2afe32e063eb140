//! Printing into a full output (`> /dev/full`): every command that prints ends with a one-line
//! error and exit status 1, not a panic, and the files it wrote before printing are intact.

mod common;

use std::path::Path;
use std::process::Stdio;

use common::{bin, s};

/// Runs the binary with `args` and standard output on /dev/full; asserts exit status 1 and a
/// single-line error naming standard output, and returns that line.
fn into_full(args: &[&str]) -> String {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = bin().args(args).stdout(Stdio::from(full)).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.starts_with("error: cannot write to standard output: ")
            && err.contains("(os error 28)"),
        "{args:?}: {err}"
    );
    err
}

/// The JSON file at `path` parses (so it was written whole).
fn parses(path: &Path) {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str::<serde_json::Value>(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

#[test]
fn listing_and_sharing_into_a_full_output_is_a_one_line_error() {
    into_full(&["presets"]);
    into_full(&["presets", "classroom"]);
    into_full(&["presets", "attention-quick"]);
    into_full(&["share", "classroom"]);
    into_full(&["share", "attention-quick"]);
}

#[test]
fn every_command_that_writes_files_keeps_them_when_its_output_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let d = |name: &str| dir.path().join(name);
    let quick = ["--quiet", "--out"];
    let run = d("run");
    into_full(
        &[
            &["run", "classroom", "--steps", "20"][..],
            &quick,
            &[s(&run)],
        ]
        .concat(),
    );
    parses(&run.join("summary.json"));
    assert!(
        std::fs::read_to_string(run.join("metrics.csv"))
            .unwrap()
            .lines()
            .count()
            > 20
    );

    let sweep = d("sweep");
    let args = ["sweep", "classroom", "--steps", "20", "--seeds", "2"];
    into_full(&[&args[..], &quick, &[s(&sweep)]].concat());
    parses(&sweep.join("sweep.json"));

    let eps = d("eps");
    let args = [
        "eps-sweep",
        "classroom",
        "--steps",
        "20",
        "--seeds",
        "2",
        "--eps",
        "1e-8,1",
    ];
    into_full(&[&args[..], &quick, &[s(&eps)]].concat());
    assert_eq!(
        std::fs::read_to_string(eps.join("eps_sweep.csv"))
            .unwrap()
            .lines()
            .count(),
        1 + 2 * 2
    );

    let dk = d("dk");
    let args = [
        "dk-sweep",
        "classroom",
        "--steps",
        "20",
        "--seeds",
        "2",
        "--dks",
        "4,8",
    ];
    into_full(&[&args[..], &quick, &[s(&dk)]].concat());
    parses(&dk.join("dk_sweep.json"));

    let matched = d("matched");
    into_full(&[
        "matched",
        "classroom",
        "--steps",
        "20",
        "--levels",
        "2",
        "--out",
        s(&matched),
    ]);
    parses(&matched.join("matched.json"));

    let zoo = d("zoo");
    let args = [
        "zoo",
        "zoo-paper",
        "--seeds",
        "1",
        "--budget",
        "20",
        "--sizes",
        "4",
    ];
    into_full(&[&args[..], &quick, &[s(&zoo)]].concat());
    parses(&zoo.join("zoo.json"));

    let attention = d("attention");
    let args = [
        "attention",
        "attention-quick",
        "--seeds",
        "1",
        "--steps",
        "5",
    ];
    into_full(&[&args[..], &quick, &[s(&attention)]].concat());
    parses(&attention.join("trace.json"));
    assert!(attention.join("attention.md").is_file());

    let scene = common::mat::tiny_scene_file(dir.path());
    let hsi = d("hsi");
    let args = [
        "hsi",
        s(&scene),
        "--density",
        "0.5",
        "--var",
        "tiny",
        "--steps",
        "20",
    ];
    into_full(&[&args[..], &["--rules", "gd"], &quick, &[s(&hsi)]].concat());
    assert!(hsi.join("hsi.md").is_file() && hsi.join("hsi.csv").is_file());
}

#[test]
fn a_shard_and_its_merge_keep_their_files_when_the_output_is_full() {
    let dir = tempfile::tempdir().unwrap();
    let shard = dir.path().join("s0");
    let args = [
        "sweep",
        "classroom",
        "--steps",
        "20",
        "--seeds",
        "2",
        "--shard",
        "0/1",
    ];
    into_full(&[&args[..], &["--quiet", "--out", s(&shard)]].concat());
    assert!(shard.join("shard.ron").is_file());
    let merged = dir.path().join("merged");
    into_full(&["merge", s(&shard), "--out", s(&merged)]);
    assert!(merged.join("sweep.csv").is_file());
}
