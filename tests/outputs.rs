//! Round 4, outputs: a full disk names the file and leaves the earlier result whole (a run's
//! files are replaced as a set), a later run removes the earlier run's files it does not write
//! (and says so), a dangling `--out` link and a read-only result file are refused by name, and
//! an output that would not fit is refused before the run starts.

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use common::{bin, fails, ok, s};

/// Every file in `dir` (name → bytes), temporaries included.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

/// Runs `script` (POSIX sh, `$BIN` the binary, `$DISK` a fresh 1 MiB file system) in a private
/// mount namespace, so the small file system vanishes with it. As root a plain `unshare -m`
/// does; otherwise a user namespace. Panics if neither can mount, so the test never passes
/// without its fault.
fn on_small_disk(script: &str, keep: &Path) {
    let disk = keep.join("disk");
    std::fs::create_dir_all(&disk).unwrap();
    let body = format!("mount -t tmpfs -o size=1m tmpfs \"$DISK\" || exit 97\n{script}");
    for flags in [&["-m"][..], &["-r", "-m"][..]] {
        let out = Command::new("unshare")
            .args(flags)
            .args(["sh", "-c", &body])
            .env("BIN", env!("CARGO_BIN_EXE_basis-lab"))
            .env("DISK", &disk)
            .env("KEEP", keep)
            .output()
            .expect("unshare (util-linux) runs");
        if out.status.success() {
            return;
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() == Some(97) || err.contains("unshare"),
            "the script failed: {err}"
        );
    }
    panic!("no small file system could be mounted for this test (needs unshare and mount)");
}

/// The shell lines that fill `$DISK` to leave about `free_kb` kB free.
fn fill_leaving(free_kb: u32) -> String {
    format!(
        "dd if=/dev/zero of=\"$DISK/reserve\" bs=1k count={free_kb} 2>/dev/null\n\
         dd if=/dev/zero of=\"$DISK/filler\" bs=4k 2>/dev/null\n\
         rm \"$DISK/reserve\"\n"
    )
}

#[test]
fn a_full_disk_names_the_file_and_keeps_the_earlier_run_whole() {
    let keep = tempfile::tempdir().unwrap();
    let script = format!(
        "set -u\n\
         \"$BIN\" run classroom --steps 40 --no-trace --quiet --out \"$DISK/out\" >/dev/null || exit 90\n\
         cp -r \"$DISK/out\" \"$KEEP/before\"\n\
         {fill}\
         \"$BIN\" run classroom --steps 4000 --seed 1 --no-trace --quiet --out \"$DISK/out\" \
           >\"$KEEP/stdout\" 2>\"$KEEP/stderr\"; echo $? >\"$KEEP/code\"\n\
         cp -r \"$DISK/out\" \"$KEEP/after\"\n\
         ls -A \"$DISK/out\" >\"$KEEP/listing\"\n",
        fill = fill_leaving(24)
    );
    on_small_disk(&script, keep.path());
    let read = |f: &str| std::fs::read_to_string(keep.path().join(f)).unwrap();
    assert_eq!(read("code").trim(), "1");
    let err = read("stderr");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(
        err.contains("out/metrics.csv") || err.contains("out/activations.csv"),
        "the error names the file: {err}"
    );
    let (before, after) = (
        files(&keep.path().join("before")),
        files(&keep.path().join("after")),
    );
    let set = [
        ".basis-lab-run.files",
        "activations.csv",
        "metrics.csv",
        "summary.json",
    ];
    assert_eq!(before.keys().collect::<Vec<_>>(), set);
    assert!(before == after, "the earlier run's files changed");
    assert_eq!(
        read("listing").lines().collect::<Vec<_>>(),
        set,
        "no temporary file is left"
    );
}

#[test]
fn a_full_disk_during_the_zoo_tables_keeps_the_earlier_tables() {
    let keep = tempfile::tempdir().unwrap();
    let zoo = "\"$BIN\" zoo zoo-paper --seeds 1 --sizes 8 --quiet --out \"$DISK/out\"";
    let script = format!(
        "set -u\n\
         {zoo} --budget 50 >/dev/null || exit 90\n\
         cp -r \"$DISK/out\" \"$KEEP/before\"\n\
         {fill}\
         {zoo} --budget 60 >\"$KEEP/stdout\" 2>\"$KEEP/stderr\"; echo $? >\"$KEEP/code\"\n\
         cp -r \"$DISK/out\" \"$KEEP/after\"\n",
        fill = fill_leaving(8)
    );
    on_small_disk(&script, keep.path());
    let read = |f: &str| std::fs::read_to_string(keep.path().join(f)).unwrap();
    assert_eq!(read("code").trim(), "1", "{}", read("stdout"));
    let err = read("stderr");
    assert!(err.contains("No space left on device"), "{err}");
    assert!(err.contains("out/zoo."), "the error names the file: {err}");
    let (before, after) = (
        files(&keep.path().join("before")),
        files(&keep.path().join("after")),
    );
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        [".basis-lab-zoo.files", "zoo.csv", "zoo.json", "zoo.md"]
    );
    assert!(before == after, "the earlier zoo's tables changed");
}

/// `zoo zoo-paper` (or another bundled zoo preset) at a small size into `out`, with `extra`.
fn zoo(preset: &str, out: &Path, extra: &[&str]) -> String {
    let args = [
        "zoo", preset, "--seeds", "1", "--sizes", "8", "--budget", "20", "--quiet", "--out",
    ];
    ok(&[&args[..], &[s(out)], extra].concat())
}

#[test]
fn a_later_run_removes_the_earlier_runs_files_it_does_not_write_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let args = [
        "run",
        "classroom",
        "--steps",
        "20",
        "--quiet",
        "--out",
        s(&out),
    ];
    ok(&[&args[..], &["--figures"]].concat());
    let first = files(&out);
    assert!(first.contains_key("trace.json") && first.contains_key("keys.svg"));
    let printed = ok(&[&args[..], &["--no-trace", "--seed", "3"]].concat());
    let trace = out.join("trace.json");
    assert!(
        printed.contains(&format!(
            "removed {} (left by an earlier run)",
            trace.display()
        )),
        "{printed}"
    );
    assert!(
        printed.contains("keys.png (left by an earlier run)"),
        "{printed}"
    );
    let second = files(&out);
    assert_eq!(
        second.keys().collect::<Vec<_>>(),
        [
            ".basis-lab-run.files",
            "activations.csv",
            "metrics.csv",
            "notes.txt",
            "summary.json"
        ]
    );
    assert_ne!(first["metrics.csv"], second["metrics.csv"]);
    // Two zoos written into this folder replace nothing of the run's: its trace.json is not
    // theirs to remove.
    ok(&args);
    zoo("zoo-paper", &out, &[]);
    zoo("zoo-paper", &out, &[]);
    assert!(out.join("trace.json").exists() && out.join("metrics.csv").exists());
    // A zoo's figure is named for its preset's kind: the dial's goes when a plain zoo follows.
    zoo("dial", &out, &["--figures"]);
    assert!(out.join("zoo_dial.svg").exists());
    let printed = zoo("zoo-paper", &out, &[]);
    assert!(
        printed.contains("zoo_dial.svg (left by an earlier run)"),
        "{printed}"
    );
    assert!(!out.join("zoo_dial.svg").exists() && !out.join("zoo_dial.png").exists());
    assert_eq!(files(&out)["notes.txt"], b"mine");
    // A user's file of a result's name that the command never wrote stays.
    std::fs::write(out.join("loss.png"), "not ours").unwrap();
    ok(&[&args[..], &["--no-trace"]].concat());
    assert_eq!(files(&out)["loss.png"], b"not ours");
}

#[test]
fn an_out_link_to_nowhere_is_named_with_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("results");
    let target = dir.path().join("gone/away");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let err = fails(&[
        "run",
        "classroom",
        "--steps",
        "5",
        "--quiet",
        "--out",
        s(&link),
    ]);
    assert!(
        err.contains(&format!(
            "{} is a symbolic link to {}, which does not exist",
            link.display(),
            target.display()
        )),
        "{err}"
    );
    assert!(!err.contains("File exists"), "{err}");
    assert!(
        err.contains("nothing was run; choose another --out"),
        "{err}"
    );
    for cmd in [
        &["zoo", "zoo-paper", "--seeds", "1"][..],
        &["sweep", "classroom"],
    ] {
        let err = fails(&[cmd, &["--quiet", "--out", s(&link)]].concat());
        assert!(err.contains("is a symbolic link to"), "{cmd:?}: {err}");
    }
}

#[test]
fn a_read_only_result_is_refused_by_name_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let args = [
        "run",
        "classroom",
        "--steps",
        "10",
        "--no-trace",
        "--quiet",
        "--out",
        s(&out),
    ];
    ok(&args);
    let summary = out.join("summary.json");
    std::fs::set_permissions(&summary, std::fs::Permissions::from_mode(0o444)).unwrap();
    let before = files(&out);
    let err = fails(&[&args[..], &["--seed", "9"]].concat());
    assert!(
        err.contains(&format!(
            "{} is read-only; it is not replaced",
            summary.display()
        )),
        "{err}"
    );
    assert!(err.contains("nothing was run"), "{err}");
    assert!(files(&out) == before, "nothing changed");
    // A read-only figure of the earlier run would be removed as stale: refused up front too.
    std::fs::set_permissions(&summary, std::fs::Permissions::from_mode(0o644)).unwrap();
    ok(&[&args[..], &["--figures"]].concat());
    let loss = out.join("loss.png");
    std::fs::set_permissions(&loss, std::fs::Permissions::from_mode(0o444)).unwrap();
    let err = fails(&args);
    assert!(
        err.contains(&format!("{} is read-only", loss.display()))
            && err.contains("nothing was run"),
        "{err}"
    );
    assert!(loss.exists());
}

#[test]
fn an_output_that_would_not_fit_is_refused_before_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let started = std::time::Instant::now();
    let err = fails(&[
        "run",
        "classroom",
        "--steps",
        "100000000",
        "--no-trace",
        "--quiet",
        "--out",
        s(&out),
    ]);
    assert!(started.elapsed().as_secs() < 30, "refused up front");
    assert!(err.contains("metrics.csv would be about"), "{err}");
    assert!(
        err.contains("GB") && err.contains("--max-output-gb"),
        "{err}"
    );
    assert!(!out.join("metrics.csv").exists());
    // The flag raises the limit: a short run under a tiny limit is refused, over it runs.
    let short = [
        "run",
        "classroom",
        "--steps",
        "200",
        "--no-trace",
        "--quiet",
        "--out",
        s(&out),
    ];
    let err = fails(&[&short[..], &["--max-output-gb", "0.00001"]].concat());
    assert!(err.contains("above the 10 kB limit"), "{err}");
    ok(&[&short[..], &["--max-output-gb", "0.001"]].concat());
    let bad = bin()
        .args(short)
        .args(["--max-output-gb", "-1"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
}

#[test]
fn the_size_estimates_are_close_to_what_a_run_writes() {
    use basis_lab::experiment::{RunOptions, run::output_estimates, run_to_dir};
    for (name, steps) in [("classroom", 300), ("default", 200)] {
        let mut p = basis_lab::preset::Preset::load(name).unwrap();
        p.steps = steps;
        let opts = RunOptions {
            trace: true,
            figures: None,
            max_output_bytes: basis_lab::experiment::MAX_OUTPUT_BYTES,
        };
        let dir = tempfile::tempdir().unwrap();
        run_to_dir(&p, dir.path(), opts, &|_| {}).unwrap();
        for (file, estimate) in output_estimates(&p, opts) {
            let written = std::fs::metadata(dir.path().join(file)).unwrap().len() as f64;
            let ratio = estimate as f64 / written;
            assert!(
                (0.7..1.4).contains(&ratio),
                "{name} {file}: {estimate} estimated, {written} written"
            );
        }
    }
}
