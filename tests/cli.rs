//! The headless command line, run as a user would.

mod common;

use common::{bin, fails, ok, s};

#[test]
fn run_writes_metrics_summary_and_trace() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = ok(&[
        "run",
        "classroom",
        "--steps",
        "60",
        "--quiet",
        "--out",
        s(dir.path()),
    ]);
    assert!(stdout.contains("gd") && stdout.contains("adam") && stdout.contains("equivariant"));
    let csv = std::fs::read_to_string(dir.path().join("metrics.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(
        lines
            .next()
            .unwrap()
            .starts_with("step,arm,loss,loss_rot,orientation_div")
    );
    assert_eq!(
        lines.count(),
        61 * 2,
        "one row per step per arm, plus the final state"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["steps"], 60);
    assert_eq!(summary["arms"][0]["arm"], "gd");
    assert!(summary["arms"][0]["baseline"][0]["sd"].as_f64().unwrap() > 0.0);
    assert!(dir.path().join("trace.json").exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left behind");
}

#[test]
fn sweep_writes_one_row_per_seed_and_arm() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = ok(&[
        "sweep",
        "classroom",
        "--seeds",
        "3",
        "--steps",
        "40",
        "--quiet",
        "--out",
        s(dir.path()),
    ]);
    let csv = std::fs::read_to_string(dir.path().join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 2);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("sweep.json")).unwrap()).unwrap();
    assert_eq!(json["seeds"], serde_json::json!([0, 1, 2]));
    assert_eq!(json["aggregate"].as_array().unwrap().len(), 2);
    assert!(stdout.contains("baseline spread"));
}

#[test]
fn a_bad_preset_fails_with_the_field_and_range() {
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("bad.ron");
    std::fs::write(&preset, "Preset(\n  beta: 7.0,\n)").unwrap();
    let out = bin()
        .arg("run")
        .arg(&preset)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("bad.ron:2:3") && err.contains("`beta`") && err.contains("[0, 2]"),
        "{err}"
    );
    assert!(
        !dir.path().join("out").exists(),
        "nothing written for a bad preset"
    );
}

#[test]
fn presets_lists_the_bundled_files() {
    let out = bin().arg("presets").output().unwrap();
    let listed = String::from_utf8(out.stdout).unwrap();
    for name in [
        "default",
        "classroom",
        "dk32",
        "full-argument",
        "attention",
        "attention-quick",
    ] {
        assert!(listed.contains(name), "{listed}");
    }
    for (name, _) in basis_lab::sensing::zoo::BUNDLED_ZOO {
        assert!(
            listed.contains(&format!("{name:<14} ")) && listed.contains("(`basis-lab zoo`)"),
            "{name}: {listed}"
        );
    }
    let quick = ok(&["presets", "attention-quick"]);
    assert!(quick.contains("steps: 200"), "{quick}");
    let dial = ok(&["presets", "dial"]);
    assert!(
        dial.contains("ZooPreset(") && dial.contains("Dial("),
        "{dial}"
    );
}

#[test]
fn zoo_writes_a_table_for_every_rule() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "zoo",
        "presets/zoo-paper.ron",
        "--seeds",
        "2",
        "--budget",
        "200",
        "--quiet",
        "--out",
        s(dir.path()),
    ]);
    let md = std::fs::read_to_string(dir.path().join("zoo.md")).unwrap();
    for rule in [
        "muon",
        "gd",
        "scalar_adam",
        "shampoo",
        "lion",
        "signum",
        "rmsprop",
        "adafactor",
        "adam",
    ] {
        assert!(
            md.contains(&format!("| {rule} |")),
            "{rule} missing from\n{md}"
        );
    }
    let csv = std::fs::read_to_string(dir.path().join("zoo.csv")).unwrap();
    // Nine rules × two seeds, then each seed's convex reference.
    assert_eq!(csv.lines().count(), 1 + 9 * 2 + 2);
    assert_eq!(csv.matches(",reference,").count(), 2);
    assert!(md.contains("## Convex reference"), "{md}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("zoo.json")).unwrap()).unwrap();
    assert_eq!(json["summary"].as_array().unwrap().len(), 9);
}

#[test]
fn zoo_runs_one_rung_of_the_ladder_and_quotes_no_paper_row_for_a_size_the_paper_never_ran() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "zoo",
        "ladder",
        "--sizes",
        "12",
        "--seeds",
        "1",
        "--budget",
        "20",
        "--quiet",
        "--out",
        s(dir.path()),
    ]);
    let md = std::fs::read_to_string(dir.path().join("zoo.md")).unwrap();
    assert!(md.contains("n = 12, r = 3"), "{md}");
    let gd = md
        .lines()
        .find(|l| l.starts_with("| gd |"))
        .expect("GD row");
    // Table 2's 0.1312 is n = 40's: at n = 12 the paper column stays empty.
    assert!(gd.ends_with("| — |"), "{gd}");
    let csv = std::fs::read_to_string(dir.path().join("zoo.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 9 + 1);
    let err = fails(&[
        "zoo",
        "ladder",
        "--sizes",
        "2",
        "--seeds",
        "1",
        "--quiet",
        "--out",
        s(dir.path()),
    ]);
    // Checked as the preset's own `sizes` are: at least the rank (3), before any work.
    assert!(
        err.contains("field `sizes[0]`: 2 is out of range; allowed 3..=256"),
        "{err}"
    );
}

#[test]
fn sweeps_over_points_refuse_bad_points_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| fails(&[args, &["--out", s(dir.path())]].concat());
    let err = run(&["eps-sweep", "classroom", "--eps", "1e-8,1e9"]);
    assert!(
        err.contains("field `eps`") && err.contains("allowed [0, 1e6]"),
        "{err}"
    );
    let err = run(&["dk-sweep", "classroom", "--dks", "4,1000"]);
    assert!(err.contains("at d_k = 1000"), "{err}");
    assert!(
        !dir.path().join("eps_sweep.csv").exists() && !dir.path().join("dk_sweep.csv").exists()
    );
}

#[test]
fn the_tail_table_marks_fits_that_did_not_interpolate() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "tail",
        "tail",
        "--seeds",
        "1",
        "--budget",
        "100",
        "--quiet",
        "--out",
        s(dir.path()),
    ]);
    let md = std::fs::read_to_string(dir.path().join("zoo.md")).unwrap();
    // 100 steps interpolate nothing: every cell carries the mark and the table explains it.
    let row = md
        .lines()
        .find(|l| l.starts_with("| 0.5 |"))
        .expect("τ = 0.5 row");
    assert_eq!(row.matches('†').count(), 4, "{row}");
    assert!(md.contains("† not every seed interpolated"), "{md}");
}

#[test]
fn eps_sweep_changes_only_adam_and_a_large_eps_calms_its_twins() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "eps-sweep",
        "classroom",
        "--seeds",
        "2",
        "--steps",
        "200",
        "--eps",
        "1e-12,1",
        "--quiet",
        "--out",
        s(dir.path()),
    ]);
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("eps_sweep.json")).unwrap()).unwrap();
    let points = json.as_array().unwrap();
    assert_eq!(points.len(), 2);
    let agg = |i: usize, arm: &str| {
        points[i]["sweep"]["aggregate"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["arm"] == arm)
            .unwrap()
            .clone()
    };
    assert_eq!(agg(0, "gd"), agg(1, "gd"), "GD does not read ε");
    let div = |i| agg(i, "adam")["orientation_div_mean"].as_f64().unwrap();
    assert!(
        div(1) < div(0) / 5.0,
        "ε = 1 should bring Adam toward momentum SGD: {} vs {}",
        div(1),
        div(0)
    );
    let csv = std::fs::read_to_string(dir.path().join("eps_sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2 * 2);
}

#[test]
fn the_app_refuses_an_unknown_section_or_tab_and_lists_the_known_ones() {
    let err = fails(&["--panel", "lobby"]);
    assert!(
        err.contains("unknown panel `lobby`") && err.contains("gauge"),
        "{err}"
    );
    let err = fails(&["--tab", "dial"]);
    assert!(
        err.contains("unknown tab `dial` of section `test`") && err.contains("matched"),
        "{err}"
    );
    let err = fails(&["--panel", "gauge", "--tab", "eps"]);
    assert!(err.contains("zoo, dial, tail, hsi, live"), "{err}");
}

/// `--open` reads a results file before any window opens: one that is missing, not a grid
/// report, or not JSON at all fails, naming the file.
#[test]
fn the_app_refuses_a_results_file_it_cannot_open_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("hsi.json");
    let e = fails(&["--open", s(&missing)]);
    assert!(e.contains("--open") && e.contains(s(&missing)), "{e}");
    let other = dir.path().join("zoo.json");
    std::fs::write(&other, "{\"runs\": []}").unwrap();
    let e = fails(&["--open", s(&other)]);
    assert!(
        e.contains(s(&other)) && e.contains("not the hsi.json of `basis-lab hsi --grid`"),
        "{e}"
    );
    let scene = dir.path().join("scene.mat");
    std::fs::write(&scene, b"MATLAB").unwrap();
    let e = fails(&["--open", s(&scene)]);
    assert!(e.contains("not a results file the app reads"), "{e}");
}

/// `--settings` reads a file the user may have edited: one that is missing, not settings, or
/// holds none fails before any window opens, naming the file.
#[test]
fn the_app_refuses_a_settings_file_it_cannot_read_and_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.ron");
    let e = fails(&["--settings", s(&missing)]);
    assert!(
        e.contains(&format!("--settings {}", missing.display())),
        "{e}"
    );
    let bad = dir.path().join("bad.ron");
    std::fs::write(&bad, "{\"app\": \"(dark: 5)\"}").unwrap();
    let e = fails(&["--settings", s(&bad)]);
    assert!(
        e.contains(&format!("--settings {}: the settings:", bad.display())),
        "{e}"
    );
    let empty = dir.path().join("empty.ron");
    std::fs::write(&empty, "{}").unwrap();
    let e = fails(&["--settings", s(&empty)]);
    assert!(e.contains("the file holds no settings"), "{e}");
}

/// The SVG's text nodes (trimmed).
fn svg_texts(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text().map(|t| t.trim().to_string()))
        .collect()
}

#[test]
fn figures_are_written_next_to_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    ok(&[
        "run",
        "classroom",
        "--steps",
        "40",
        "--no-trace",
        "--figures",
        "--quiet",
        "--out",
        s(dir.path()),
    ]);
    for stem in [
        "orientation_divergence",
        "axis_concentration",
        "loss",
        "column_norms",
        "keys",
    ] {
        let png = image::open(dir.path().join(format!("{stem}.png"))).unwrap();
        // The default size is one column (336 × 260 points) at 3 pixels per point.
        assert_eq!((png.width(), png.height()), (1008, 780), "{stem}.png");
        // A vector PDF beside the SVG, on the same one-column page (3.5 × 2.7 in).
        let pdf = std::fs::read(dir.path().join(format!("{stem}.pdf"))).unwrap();
        assert!(
            pdf.starts_with(b"%PDF-")
                && String::from_utf8_lossy(&pdf).contains("/MediaBox [0 0 252 195]"),
            "{stem}.pdf"
        );
        let texts = svg_texts(&dir.path().join(format!("{stem}.svg")));
        // Arms go by their rules' display names in every figure.
        for arm in ["Gradient descent", "Adam"] {
            assert!(
                texts.iter().any(|t| t.starts_with(arm)),
                "{stem}.svg lacks {arm}: {texts:?}"
            );
        }
    }
    let sweep = tempfile::tempdir().unwrap();
    ok(&[
        "sweep",
        "classroom",
        "--seeds",
        "2",
        "--steps",
        "20",
        "--figures",
        "--quiet",
        "--out",
        s(sweep.path()),
    ]);
    let texts = svg_texts(&sweep.path().join("sweep.svg"));
    // The arms are named on the x axis, what each draws in the legend.
    assert!(
        texts.iter().any(|t| t == "one seed") && texts.iter().any(|t| t == "Adam"),
        "{texts:?}"
    );
    // A shard's figures would show a part of the sweep: `merge --figures` draws them.
    let err = fails(&[
        "sweep",
        "classroom",
        "--seeds",
        "2",
        "--shard",
        "0/2",
        "--figures",
        "--out",
        s(sweep.path()),
    ]);
    assert!(
        err.contains("--figures") && err.contains("--shard"),
        "{err}"
    );
}

/// The reported fault: `--eps 0,01` silently ran ε = 0 and ε = 1. Every list flag refuses what
/// reads as a decimal comma (`01`, or two bare digits in a list of reals), with a hint about the
/// decimal point, before any work; a decimal point or a space after the comma runs.
#[test]
fn a_decimal_comma_in_a_list_flag_is_refused_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let hsi = ["hsi", "scene.mat", "--density", "0.2"];
    let cases: [(Vec<&str>, &str); 7] = [
        (
            vec!["eps-sweep", "classroom", "--eps", "0,01"],
            "`0,01`: use a decimal point (0.01); separate values with commas",
        ),
        (
            vec!["eps-sweep", "classroom", "--eps", "1,5"],
            "`1,5`: use a decimal point (1.5); separate values with commas (for the two values \
             write `1, 5`)",
        ),
        (
            vec!["dk-sweep", "classroom", "--dks", "4,08"],
            "`4,08`: use a decimal point (4.08)",
        ),
        (
            vec!["zoo", "dial", "--sizes", "8,012"],
            "`8,012`: use a decimal point",
        ),
        (
            [&hsi[..], &["--grid", "--selection-seeds", "1,02"]].concat(),
            "`1,02`: use a decimal point",
        ),
        (
            [&hsi[..], &["--grid", "--report-seeds", "007"]].concat(),
            "`007` starts with 0 and another digit",
        ),
        (
            [&hsi[..], &["--lr", "gd=0,01"]].concat(),
            "--lr: `0,01`: use a decimal point (0.01)",
        ),
    ];
    for (args, says) in cases {
        let e = fails(&[&args[..], &["--out", s(&out)]].concat());
        assert!(e.contains(says), "{args:?}: {e}");
    }
    assert!(!out.exists(), "nothing ran");
    for (eps, rows) in [("0.01,0.1", ["0.01", "0.1"]), ("1, 5", ["1", "5"])] {
        ok(&[
            "eps-sweep",
            "classroom",
            "--eps",
            eps,
            "--seeds",
            "1",
            "--steps",
            "2",
            "--quiet",
            "--out",
            s(&out),
        ]);
        let csv = std::fs::read_to_string(out.join("eps_sweep.csv")).unwrap();
        let mut values: Vec<&str> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').next().unwrap())
            .collect();
        values.dedup();
        assert_eq!(values, rows, "{eps}");
    }
}
