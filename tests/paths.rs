//! File names that are not UTF-8 (valid on Linux, e.g. a preset saved as `pre\xe9.ron` by a
//! Latin-1 tool): every command and the app's `--preset` read them, and messages show them
//! lossily (`pre\u{fffd}.ron`), never "invalid UTF-8" from the argument parser.

mod common;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use common::bin;

/// `dir/pre\xe9.SUFFIX`.
fn latin1(dir: &Path, suffix: &str) -> PathBuf {
    let mut name = b"pre\xe9.".to_vec();
    name.extend_from_slice(suffix.as_bytes());
    dir.join(OsStr::from_bytes(&name))
}

/// Runs the binary with `args`; asserts success and returns stdout.
fn ok(args: &[&OsStr]) -> String {
    let out = bin().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs the binary with `args`; asserts exit status 1 (our error, not the parser's 2) and
/// returns stderr.
fn fails(args: &[&OsStr]) -> String {
    let out = bin().args(args).output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    err
}

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

#[test]
fn every_command_reads_a_preset_whose_name_is_not_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let preset = latin1(dir.path(), "ron");
    let classroom = ok(&[os("presets"), os("classroom")]);
    std::fs::write(&preset, &classroom).unwrap();
    let p = preset.as_os_str();
    let out = |name: &str| -> OsString { dir.path().join(name).into_os_string() };
    let quick = |cmd: &str, extra: &[&str], folder: &str| {
        let folder = out(folder);
        let mut args = vec![os(cmd), p, os("--steps"), os("10"), os("--quiet")];
        args.extend(extra.iter().map(|a| os(a)));
        args.extend([os("--out"), folder.as_os_str()]);
        ok(&args);
        folder
    };

    let run = quick("run", &[], "run");
    assert!(Path::new(&run).join("summary.json").is_file());
    let sweep = quick("sweep", &["--seeds", "2"], "sweep");
    assert!(Path::new(&sweep).join("sweep.json").is_file());
    let eps = quick("eps-sweep", &["--seeds", "1", "--eps", "1e-8,1"], "eps");
    assert!(Path::new(&eps).join("eps_sweep.csv").is_file());
    let dk = quick("dk-sweep", &["--seeds", "1", "--dks", "4,8"], "dk");
    assert!(Path::new(&dk).join("dk_sweep.json").is_file());
    let matched = out("matched");
    ok(&[
        os("matched"),
        p,
        os("--steps"),
        os("10"),
        os("--levels"),
        os("2"),
        os("--out"),
        &matched,
    ]);
    assert!(Path::new(&matched).join("matched.json").is_file());

    // The share string of the file is the bundled preset's (same text, same preset).
    assert_eq!(ok(&[os("share"), p]), ok(&[os("share"), os("classroom")]));

    let attention = latin1(dir.path(), "attention.ron");
    std::fs::write(&attention, ok(&[os("presets"), os("attention-quick")])).unwrap();
    let folder = out("attention");
    ok(&[
        os("attention"),
        attention.as_os_str(),
        os("--seeds"),
        os("1"),
        os("--steps"),
        os("3"),
        os("--quiet"),
        os("--out"),
        &folder,
    ]);
    assert!(Path::new(&folder).join("attention.md").is_file());
    assert_eq!(
        ok(&[os("share"), os("--attention"), attention.as_os_str()]),
        ok(&[os("share"), os("attention-quick")])
    );
    // Without the flag, the key lab's reader refuses it and says which flag reads it.
    let out = bin()
        .args([os("share"), attention.as_os_str()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains("it reads as an attention preset: add --attention"),
        "{stderr}"
    );
    let zoo = dir.path().join("zoo.ron");
    std::fs::write(&zoo, ok(&[os("presets"), os("zoo-paper")])).unwrap();
    let out = bin().args([os("share"), zoo.as_os_str()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("it reads as a zoo preset: add --zoo"),
        "{stderr}"
    );
}

#[test]
fn the_app_reads_a_preset_whose_name_is_not_utf8_before_opening_a_window() {
    let dir = tempfile::tempdir().unwrap();
    let preset = latin1(dir.path(), "ron");
    std::fs::write(&preset, ok(&[os("presets"), os("classroom")])).unwrap();
    // The preset loads, so the next check (the missing --settings file) is what fails.
    let missing = dir.path().join("missing-app.ron");
    let err = fails(&[
        os("--preset"),
        preset.as_os_str(),
        os("--settings"),
        missing.as_os_str(),
    ]);
    assert!(
        err.contains("--settings") && err.contains("missing-app.ron"),
        "{err}"
    );
}

#[test]
fn errors_show_a_non_utf8_name_lossily_with_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let preset = latin1(dir.path(), "ron");
    std::fs::write(&preset, "(d_k: 0)").unwrap();
    for args in [
        vec![
            os("run"),
            preset.as_os_str(),
            os("--out"),
            dir.path().as_os_str(),
        ],
        vec![os("share"), preset.as_os_str()],
        vec![os("--preset"), preset.as_os_str()],
    ] {
        let err = fails(&args);
        assert!(
            err.contains("pre\u{fffd}.ron") && err.contains("d_k") && err.contains("1..=256"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("invalid UTF-8"), "{err}");
    }
    let gone = latin1(dir.path(), "missing.ron");
    let d = dir.path().as_os_str();
    let err = fails(&[os("attention"), gone.as_os_str(), os("--out"), d]);
    assert!(
        err.contains("pre\u{fffd}.missing.ron") && err.contains("no such file"),
        "{err}"
    );
    let err = fails(&[os("zoo"), gone.as_os_str(), os("--out"), d]);
    assert!(
        err.contains("pre\u{fffd}.missing.ron") && err.contains("no such file"),
        "{err}"
    );
}
