//! A run ended by a signal (Ctrl-C, `kill`, a closed terminal) leaves no temporary files in its
//! output folder and exits as a shell expects (128 + the signal); the temporary files of a
//! process killed outright are removed by the next run writing to that folder.
#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{bin, ok, s};

/// The names in `dir` of this module's temporary files (`.<name>.tmp-<pid>`).
fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.') && n.contains(".tmp-"))
        .collect()
}

/// Starts a run far too long to finish, waits until its temporary files exist, sends `signal`
/// and returns the exit status with the files then left in the folder.
fn interrupted(signal: &str) -> (Option<i32>, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut child = bin()
        .args([
            "run",
            "default",
            "--steps",
            "10000000",
            "--no-trace",
            // Killed long before its output passes the default 2 GB limit.
            "--max-output-gb",
            "1000",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !out.is_dir() || temporaries(&out).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the run wrote no temporary files"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let killed = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    (status.code(), temporaries(&out))
}

#[test]
fn ctrl_c_during_a_run_removes_its_temporary_files_and_exits_130() {
    assert_eq!(interrupted("-INT"), (Some(130), vec![]));
}

#[test]
fn sigterm_and_sighup_remove_them_too() {
    assert_eq!(interrupted("-TERM"), (Some(143), vec![]));
    assert_eq!(interrupted("-HUP"), (Some(129), vec![]));
}

#[test]
fn a_run_removes_the_temporaries_of_dead_processes_and_keeps_everything_else() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    std::fs::create_dir(&out).unwrap();
    // Beyond Linux's largest pid (2^22), so no process has it.
    let dead = ".metrics.csv.tmp-99999999";
    let living = format!(".summary.json.tmp-{}", std::process::id());
    let others = [".notes.tmp-draft", "metrics.csv.tmp-99999999", ".hidden"];
    for name in [dead, &living].into_iter().chain(others) {
        std::fs::write(out.join(name), "x").unwrap();
    }
    ok(&[
        "run",
        "default",
        "--steps",
        "2",
        "--no-trace",
        "--out",
        s(&out),
    ]);
    let mut left = temporaries(&out);
    left.sort();
    assert_eq!(left, vec![".notes.tmp-draft".to_string(), living]);
    assert!(out.join("metrics.csv.tmp-99999999").exists() && out.join(".hidden").exists());
    assert!(out.join("metrics.csv").exists());
}
