//! Faults: a killed save never damages the previous file, an unwritable output folder fails
//! before any work with a clear error, a diverging arm is marked while the others finish (the
//! CLI, the training worker and the gauge lab's live worker), and a panicking worker is
//! reported and can be started again.

mod common;

use std::io::Write;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use basis_lab::experiment::ArmStatus;
use basis_lab::experiment::live::{Command as Cmd, Trainer, Update};
use basis_lab::live::Live;
use basis_lab::output::AtomicFile;
use basis_lab::preset::Preset;
use basis_lab::sensing::SensingConfig;
use basis_lab::sensing::live::{self as gauge, GaugeLive};
use basis_lab::sensing::zoo::Outcome;
use common::{bin, ok};

/// The zoo rule of registry entry `name`.
fn rule(name: &str) -> basis_lab::sensing::zoo::Rule {
    basis_lab::sensing::zoo::Rule::named(name).expect("a registered rule")
}

#[test]
fn killing_the_process_during_a_big_save_leaves_the_old_files_intact() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    ok(&[
        "run",
        "classroom",
        "--steps",
        "30",
        "--no-trace",
        "--quiet",
        "--out",
        out,
    ]);
    let old_csv = std::fs::read(dir.path().join("metrics.csv")).unwrap();
    let old_summary = std::fs::read(dir.path().join("summary.json")).unwrap();

    // A long run streams metrics.csv into a temporary file beside the old one.
    let mut child = bin()
        .args([
            "run",
            "default",
            "--steps",
            "100000000",
            "--no-trace",
            // Its output would pass the default 2 GB limit: the run is killed long before.
            "--max-output-gb",
            "1000",
            "--quiet",
            "--out",
            out,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let tmp = dir.path().join(format!(".metrics.csv.tmp-{}", child.id()));
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut written = 0;
    while written < 2 << 20 {
        assert!(Instant::now() < deadline, "the save never got going");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(20));
        written = std::fs::metadata(&tmp).map_or(0, |m| m.len());
    }
    child.kill().unwrap();
    child.wait().unwrap();

    assert!(
        std::fs::metadata(&tmp).unwrap().len() >= 2 << 20,
        "killed in the middle of writing"
    );
    assert_eq!(
        std::fs::read(dir.path().join("metrics.csv")).unwrap(),
        old_csv,
        "the old metrics.csv is untouched"
    );
    assert_eq!(
        std::fs::read(dir.path().join("summary.json")).unwrap(),
        old_summary
    );
    // The next run replaces the old files whole.
    ok(&[
        "run",
        "classroom",
        "--steps",
        "40",
        "--no-trace",
        "--quiet",
        "--out",
        out,
    ]);
    let csv = std::fs::read_to_string(dir.path().join("metrics.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 41 * 2);
}

#[test]
fn an_atomic_file_abandoned_midway_leaves_the_old_file_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("preset.ron");
    std::fs::write(&dest, "Preset(d_k: 8)").unwrap();
    {
        let mut f = AtomicFile::create(&dest).unwrap();
        f.writer().write_all(&vec![b'x'; 1 << 20]).unwrap();
        f.writer().flush().unwrap();
        // Dropped without commit: an error or a panic in the middle of a save.
    }
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "Preset(d_k: 8)");
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("preset.ron")]);
}

#[test]
fn an_unwritable_output_folder_fails_before_any_work_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let ro = common::read_only_dir(dir.path());
    let ro_s = ro.to_str().unwrap();
    // Step counts a single process would take hours over: the check comes first.
    let commands: [&[&str]; 5] = [
        &["run", "default", "--steps", "100000000", "--no-trace"],
        &["sweep", "default", "--steps", "100000000", "--seeds", "64"],
        &[
            "eps-sweep",
            "default",
            "--steps",
            "100000000",
            "--eps",
            "1e-8,1",
        ],
        &["zoo", "zoo-paper", "--seeds", "100"],
        &["sweep", "default", "--steps", "100000000", "--shard", "0/2"],
    ];
    for args in commands {
        let out = bin()
            .args(args)
            .args(["--quiet", "--out", ro_s])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.contains(&format!("cannot write to {ro_s}")),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("denied") || err.contains("Read-only"),
            "{args:?}: the system's reason is shown: {err}"
        );
    }
}

#[test]
fn a_diverging_zoo_rate_is_marked_and_the_other_runs_finish() {
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("diverge.ron");
    std::fs::write(
        &preset,
        "ZooPreset(name: \"diverge\", problem: (n: 12, rank: 2), budget: 600, seeds: 2, \
         rules: [Gd, ScalarAdam], rates: [1e3, 0.01])",
    )
    .unwrap();
    let out = dir.path().join("out");
    ok(&[
        "zoo",
        preset.to_str().unwrap(),
        "--quiet",
        "--out",
        out.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(out.join("zoo.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(csv.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (lr, outcome, steps) = (col("lr"), col("outcome"), col("steps"));
    let records: Vec<csv::StringRecord> = rows.records().map(|r| r.unwrap()).collect();
    // Two rules × two rates × two seeds, then each seed's convex reference.
    assert_eq!(records.len(), 2 * 2 * 2 + 2);
    for r in &records {
        if &r[lr] == "1000" {
            assert_eq!(&r[outcome], "Diverged", "{r:?}");
            assert!(r[steps].parse::<usize>().unwrap() < 600);
        } else {
            assert_ne!(&r[outcome], "Diverged", "{r:?}");
            assert_ne!(&r[outcome], "Cancelled", "{r:?}");
        }
    }
    let md = std::fs::read_to_string(out.join("zoo.md")).unwrap();
    assert!(md.contains("| gd | equivariant | 0.01 |"), "{md}");
}

/// Collects worker updates until `done` holds for a status; fails after 30 s.
fn wait_status(w: &Trainer, done: impl Fn(usize, &[ArmStatus]) -> bool) -> Vec<Update> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = Vec::new();
    loop {
        for u in w.drain() {
            let stop = matches!(&u, Update::Status { step, arms, running: false, .. } if done(*step, arms));
            seen.push(u);
            if stop {
                return seen;
            }
        }
        assert!(
            Instant::now() < deadline,
            "timed out; last: {:?}",
            seen.last()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn the_training_worker_marks_a_diverged_arm_and_keeps_training_the_others() {
    let p = Preset::load("classroom").unwrap();
    let w = Trainer::on_thread(p, Arc::new(|| {})).unwrap();
    w.send(Cmd::Step(5));
    wait_status(&w, |s, _| s == 5);
    w.send(Cmd::InjectWeight {
        arm: 1,
        value: f64::NAN,
    });
    w.send(Cmd::Step(30));
    let seen = wait_status(&w, |s, _| s == 35);
    let Some(Update::Status { arms, .. }) = seen.last() else {
        unreachable!()
    };
    assert_eq!(arms[0], ArmStatus::Running);
    assert!(
        matches!(arms[1], ArmStatus::Diverged { step: 5, .. }),
        "{:?}",
        arms[1]
    );
    let steps: Vec<_> = seen
        .iter()
        .filter_map(|u| match u {
            Update::Steps(r) => Some(r.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(steps.iter().any(|r| r.arm == 0 && r.step == 34));
    assert!(
        steps.iter().all(|r| r.arm == 0 || r.step <= 5),
        "a diverged arm reports nothing after it diverged"
    );
    assert!(
        steps
            .iter()
            .filter(|r| r.arm == 0)
            .all(|r| r.loss[0].is_finite())
    );
}

#[test]
fn the_gauge_live_worker_marks_a_diverging_rate_and_finishes_the_others() {
    let cfg = SensingConfig {
        n: 12,
        rank: 2,
        ..SensingConfig::default()
    };
    let rules = vec![(rule("gd"), 1e3), (rule("gd"), 0.01), (rule("muon"), 0.1)];
    let job = Live::on_thread(
        "test",
        move || Ok(GaugeLive::new(&cfg, &rules, 3, 800)),
        Arc::new(|| {}),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut done = [None, None, None];
    while done.iter().any(Option::is_none) {
        assert!(Instant::now() < deadline, "live runs did not finish");
        for u in job.drain() {
            if let gauge::Update::Done { rule, summary, .. } = u {
                done[rule] = Some(summary);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let [diverged, gd, muon] = done.map(Option::unwrap);
    assert_eq!(diverged.outcome, Outcome::Diverged);
    assert!(diverged.steps < 800);
    for r in [&gd, &muon] {
        assert!(
            matches!(r.outcome, Outcome::Interpolated | Outcome::Budget),
            "{r:?}"
        );
        assert!(r.recovery.is_finite() && r.train_loss.is_finite());
    }
    assert!(gd.steps > diverged.steps);
}

/// Everything a live job reports until its runs end, ordered by rule then step (the thread
/// interleaves rules, the frame loop takes them round-robin).
fn live_reports(job: &Live<GaugeLive>, rules: usize) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut samples, mut done) = (Vec::new(), vec![None; rules]);
    while done.iter().any(Option::is_none) {
        assert!(Instant::now() < deadline, "live runs did not finish");
        for u in job.drain() {
            match u {
                gauge::Update::Sample(s) => samples.push((s.rule, s.step, format!("{s:?}"))),
                gauge::Update::Done {
                    rule,
                    spectrum,
                    summary,
                    noise_drift,
                } => done[rule] = Some(format!("{spectrum:?} {summary:?} {noise_drift:?}")),
                gauge::Update::Crashed(m) => panic!("live runs crashed: {m}"),
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    samples.sort_by_key(|(rule, step, _)| (*rule, *step));
    samples
        .into_iter()
        .map(|(_, _, s)| s)
        .chain(done.into_iter().map(Option::unwrap))
        .collect()
}

#[test]
fn the_gauge_live_runs_stepped_in_frames_report_what_the_thread_reports() {
    let cfg = SensingConfig {
        n: 10,
        rank: 2,
        ..SensingConfig::default()
    };
    let rules = vec![
        (rule("gd"), 0.01),
        (rule("adam"), 0.01),
        (rule("muon"), 0.1),
    ];
    let repaints = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = repaints.clone();
    let repaint = Arc::new(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    let runs = GaugeLive::new(&cfg, &rules, 5, 600);
    let thread = Live::on_thread("test", move || Ok(runs), Arc::new(|| {}));
    let frames = Live::in_frames(
        || Ok(GaugeLive::new(&cfg, &rules, 5, 600)),
        repaint,
        basis_lab::live::FRAME_BUDGET,
    );
    assert!(!frames.is_finished());
    let from_thread = live_reports(&thread, 3);
    let from_frames = live_reports(&frames, 3);
    assert!(frames.is_finished());
    // A sample every 3 steps (about 200 per 600-step run) and the three summaries.
    assert!(from_frames.len() > 3 * 150, "{}", from_frames.len());
    assert_eq!(from_thread, from_frames);
    // The frame loop asked for another frame while runs were left.
    assert!(repaints.load(std::sync::atomic::Ordering::Relaxed) > 1);
}

#[test]
fn stopping_live_runs_stepped_in_frames_ends_every_run_cancelled() {
    let rules = vec![(rule("gd"), 0.01), (rule("muon"), 0.1)];
    let job = Live::in_frames(
        || {
            Ok(GaugeLive::new(
                &SensingConfig::default(),
                &rules,
                1,
                100_000,
            ))
        },
        Arc::new(|| {}),
        basis_lab::live::FRAME_BUDGET,
    );
    let first = job.drain();
    assert!(first.iter().any(|u| matches!(u, gauge::Update::Sample(_))));
    job.send(gauge::Command::Cancel);
    assert!(
        !job.is_finished(),
        "a command takes effect at the next frame"
    );
    let ends: Vec<Outcome> = job
        .drain()
        .into_iter()
        .filter_map(|u| match u {
            gauge::Update::Done { summary, .. } => Some(summary.outcome),
            _ => None,
        })
        .collect();
    assert_eq!(ends, [Outcome::Cancelled, Outcome::Cancelled]);
    assert!(job.is_finished());
}

#[test]
fn a_worker_panic_is_reported_and_a_new_worker_runs() {
    let p = Preset::load("classroom").unwrap();
    let w = Trainer::on_thread(p.clone(), Arc::new(|| {})).unwrap();
    w.send(Cmd::Step(3));
    wait_status(&w, |s, _| s == 3);
    w.send(Cmd::InjectPanic);
    let deadline = Instant::now() + Duration::from_secs(10);
    let message = loop {
        if let Some(Update::Crashed(m)) = w
            .drain()
            .into_iter()
            .find(|u| matches!(u, Update::Crashed(_)))
        {
            break m;
        }
        assert!(Instant::now() < deadline, "no crash report");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(message.contains("injected by a test"), "{message}");
    while !w.is_finished() {
        assert!(Instant::now() < deadline, "the thread did not end");
        std::thread::sleep(Duration::from_millis(5));
    }
    w.send(Cmd::Step(1));
    drop(w);
    let again = Trainer::on_thread(p, Arc::new(|| {})).unwrap();
    again.send(Cmd::Step(2));
    wait_status(&again, |s, arms| {
        s == 2 && arms.iter().all(|a| *a == ArmStatus::Running)
    });
}

/// The reported preset: saved by an editor that starts the file with a UTF-8 byte-order mark.
#[test]
fn presets_and_zoo_presets_may_start_with_a_byte_order_mark() {
    let dir = tempfile::tempdir().unwrap();
    let text = "// small preset\nPreset(\n    name: \"tiny\",\n    d_k: 4,\n    n_keys: 8,\n    \
                n_values: 4,\n    pairs_per_episode: 4,\n    batch: 1,\n    steps: 20,\n    \
                eval_every: 10,\n    n_heldout: 10,\n    baseline_rotations: 8,\n    arms: [\n        \
                (optimizer: \"gd\", lr: 0.5),\n        (optimizer: \"adam\", lr: 0.01),\n    ],\n)\n";
    let run = |name: &str, body: String| {
        let file = dir.path().join(format!("{name}.ron"));
        std::fs::write(&file, body).unwrap();
        let out = dir.path().join(name);
        ok(&[
            "run",
            file.to_str().unwrap(),
            "--no-trace",
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ]);
        std::fs::read(out.join("metrics.csv")).unwrap()
    };
    let plain = run("plain", text.to_string());
    assert_eq!(run("bom", format!("\u{feff}{text}")), plain);
    assert_eq!(
        Preset::from_ron(&format!("\u{feff}{text}"), "pasted text").unwrap(),
        Preset::from_ron(text, "pasted text").unwrap()
    );
    let zoo = "ZooPreset(name: \"z\", problem: (n: 5, rank: 1), budget: 10, seeds: 1, rules: [Gd])";
    assert_eq!(
        basis_lab::sensing::zoo::ZooPreset::from_ron(&format!("\u{feff}{zoo}"), "z.ron").unwrap(),
        basis_lab::sensing::zoo::ZooPreset::from_ron(zoo, "z.ron").unwrap()
    );
}

/// The reported settings file: a kept zoo sweep whose run has `lr: NaN` (the zoo tab's saved
/// settings, under `gauge/zoo`).
const NAN_ZOO_CACHE: &str = "(seeds: 1, analysis: (last: Some((inputs: (name: \"z\", problem: \
     (n: 5, rank: 1), budget: 10, seeds: 1, rules: [Gd]), result: [(rule: \"gd\", equivariant: \
     true, lr: NaN, seed: 0, tau: 0.0, steps: 10, outcome: Budget, train_loss: 0.1, recovery: \
     0.5, erank: 1.0, balancedness: 0.0, twin_drift: None)]))))";

/// Settings showing the gauge lab, with `panels` (path, saved text) restored.
fn saved_settings(panels: &[(&str, &str)]) -> basis_lab::app::Settings {
    basis_lab::app::Settings {
        open: "gauge".into(),
        panels: panels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Default::default()
    }
}

/// The settings as the app reads them from disk: parsed, checked, every panel restored.
/// Returns the settings, the panels and the lines of the notice.
fn restore(
    s: &basis_lab::app::Settings,
) -> (
    basis_lab::app::Settings,
    Vec<Box<dyn basis_lab::app::panel::Panel>>,
    Vec<String>,
) {
    use basis_lab::app::saved::{parse_app_ron, sanitize};
    let mut s = parse_app_ron(&common::app_ron(s)).unwrap().unwrap();
    let mut notes = sanitize(&mut s);
    let mut panels = basis_lab::app::panels::sections();
    notes.extend(basis_lab::app::shell::load_panels(&mut panels, &s.panels));
    (s, panels, notes)
}

#[test]
fn a_saved_zoo_sweep_with_a_nan_rate_is_dropped_with_a_notice() {
    use basis_lab::app::panels::controlled_test::SeedSweep;
    use basis_lab::app::panels::gauge_lab::{LiveRuns, SweepTab};
    use basis_lab::app::shell::find_panel;
    use basis_lab::sensing::zoo::{RunResult, summarise};
    // The summary itself never panics on such a run: groups are keyed by bits.
    let run: &str = &NAN_ZOO_CACHE[NAN_ZOO_CACHE.find("(rule:").unwrap()..];
    let run: RunResult = ron::from_str(&run[..run.find(")]").unwrap() + 1]).unwrap();
    let s = summarise(std::slice::from_ref(&run));
    assert_eq!((s.len(), s[0].seeds), (1, 1));
    assert!(s[0].lr.is_nan());

    let (settings, panels, notes) = restore(&saved_settings(&[("gauge/zoo", NAN_ZOO_CACHE)]));
    assert_eq!(
        notes,
        vec![
            "gauge/zoo: the saved gauge-lab zoo sweep was dropped (cell 0, gd at lr 0.01, seed 0: \
             field `lr`: NaN differs from the preset's cell list, which has 0.01)"
        ]
    );
    let zoo = find_panel::<SweepTab>(&panels, "gauge/zoo").unwrap();
    assert!(zoo.analysis.last.is_none());
    assert_eq!(
        (settings.open.as_str(), zoo.seeds),
        ("gauge", 1),
        "the rest is kept"
    );

    // The same sweep with its real rate is kept.
    let fixed = NAN_ZOO_CACHE.replace("lr: NaN", "lr: 0.01");
    let (_, panels, notes) = restore(&saved_settings(&[("gauge/zoo", &fixed)]));
    assert_eq!(notes, Vec::<String>::new());
    let zoo = find_panel::<SweepTab>(&panels, "gauge/zoo").unwrap();
    assert_eq!(zoo.analysis.last.as_ref().unwrap().result[0].lr, 0.01);

    // Out-of-range numbers are reset to their defaults.
    let mut s = saved_settings(&[
        ("test/sweep", "(seeds: 100000000)"),
        ("gauge/zoo", "(seeds: 0)"),
        ("gauge/live", "(rules: [Gd, Dial(NaN)])"),
    ]);
    s.speed = Some(f64::NAN);
    let (settings, panels, notes) = restore(&s);
    assert_eq!(notes.len(), 4, "{notes:?}");
    let seeds = |path| find_panel::<SweepTab>(&panels, path).unwrap().seeds;
    assert_eq!(
        (
            find_panel::<SeedSweep>(&panels, "test/sweep")
                .unwrap()
                .seeds,
            seeds("gauge/zoo")
        ),
        (8, 3)
    );
    assert_eq!(settings.speed, Some(200.0));
    let live = find_panel::<LiveRuns>(&panels, "gauge/live").unwrap();
    assert_eq!(live.settings.rules, vec![rule("gd")]);
}

#[test]
fn an_unreadable_settings_file_is_kept_aside_and_a_bom_is_accepted() {
    use basis_lab::app::saved::{keep_unreadable_aside, parse_app_ron};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.ron");
    assert_eq!(
        keep_unreadable_aside(&file),
        None,
        "no file yet: a first start"
    );

    let good = common::app_ron(&basis_lab::app::Settings {
        dark: true,
        ..Default::default()
    });
    std::fs::write(&file, &good).unwrap();
    assert_eq!(keep_unreadable_aside(&file), None);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), good, "untouched");

    std::fs::write(&file, format!("\u{feff}{good}")).unwrap();
    assert_eq!(keep_unreadable_aside(&file), None);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        good,
        "the mark removed"
    );
    assert!(parse_app_ron(&good).unwrap().unwrap().dark);

    for (n, bad) in [
        (1, "{ \"app\": \"(dark: true)\", ".to_string()),
        (2, good.replace("dark:true", "dark:5")),
        (3, "\u{0}\u{1}binary".to_string()),
    ] {
        std::fs::write(&file, &bad).unwrap();
        let notice = keep_unreadable_aside(&file).expect("a notice");
        let aside = if n == 1 {
            dir.path().join("app.ron.unreadable")
        } else {
            dir.path().join(format!("app.ron.unreadable.{n}"))
        };
        assert!(!file.exists(), "eframe will start from defaults");
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), bad, "kept whole");
        assert!(
            notice.contains("could not be read")
                && notice.contains(&format!("the file was kept as {}", aside.display())),
            "{notice}"
        );
    }
}
