//! Hyperspectral completion on synthetic data: preprocessing, masks, the masked gradient, the
//! matched-loss crossings, and the `hsi` command (on MAT-files written byte by byte; the reader
//! itself is tested in `tests/matv5.rs`).

mod common;

use std::path::Path;

use basis_lab::sensing::hsi::{
    HsiConfig, HsiError, HsiProblem, HsiWorkspace, LEVELS, pixel_matrix, preprocess, run,
};
use basis_lab::sensing::zoo::Outcome;
use common::mat::{D, small_cube, tiny_scene_file, write_mat};
use common::{bin, ok, s};
use nalgebra::DMatrix;

/// The zoo rule of registry entry `name`.
fn rule(name: &str) -> basis_lab::sensing::zoo::Rule {
    basis_lab::sensing::zoo::Rule::named(name).expect("a registered rule")
}

/// A 2 × 3 × 2 cube, column-major: pixel p = i + 2j. Pixels 1 and 5 are all zero.
/// Pixel values (band 0, band 1): p0 (2, 4), p1 (0, 0), p2 (8, 6), p3 (1, 3), p4 (0, 5), p5 (0, 0).
const TINY: [f64; 12] = [2.0, 0.0, 8.0, 1.0, 0.0, 0.0, 4.0, 0.0, 6.0, 3.0, 5.0, 0.0];

#[test]
fn preprocessing_scales_drops_zero_pixels_and_centres() {
    let m = pixel_matrix(&TINY, [2, 3, 2]);
    assert_eq!(m.shape(), (6, 2));
    assert_eq!((m[(2, 0)], m[(2, 1)]), (8.0, 6.0));
    let pre = preprocess(&m, 100, 0).unwrap();
    assert_eq!(pre.max, 8.0);
    assert_eq!(pre.kept, vec![0, 2, 3, 4]);
    assert_eq!((pre.scene_pixels, pre.nonzero_pixels), (6, 4));
    // Scaled rows (0.25, 0.5), (1, 0.75), (0.125, 0.375), (0, 0.625); band means 0.34375, 0.5625.
    let want = DMatrix::from_row_slice(
        4,
        2,
        &[
            0.25 - 0.34375,
            0.5 - 0.5625,
            1.0 - 0.34375,
            0.75 - 0.5625,
            0.125 - 0.34375,
            0.375 - 0.5625,
            0.0 - 0.34375,
            0.625 - 0.5625,
        ],
    );
    assert!((&pre.x - &want).amax() < 1e-15, "{}", pre.x);
    for col in pre.x.column_iter() {
        assert!(col.sum().abs() < 1e-15);
    }

    let two = preprocess(&m, 2, 7).unwrap();
    assert_eq!(two.kept.len(), 2);
    assert!(two.kept.windows(2).all(|w| w[0] < w[1]));
    assert!(two.kept.iter().all(|p| [0, 2, 3, 4].contains(p)));
    assert_eq!(preprocess(&m, 2, 7).unwrap().kept, two.kept, "seeded");
    let subsets: std::collections::HashSet<Vec<usize>> = (0..20)
        .map(|s| preprocess(&m, 2, s).unwrap().kept)
        .collect();
    assert!(subsets.len() > 1, "the seed changes the pixels kept");

    let zeros = DMatrix::<f64>::zeros(3, 2);
    assert!(matches!(preprocess(&zeros, 10, 0), Err(HsiError::Scene(_))));
}

#[test]
fn the_mask_has_the_requested_density() {
    let x = DMatrix::from_fn(400, 100, |i, j| ((i * 3 + j) as f64).sin());
    for density in [0.15, 0.25, 0.6] {
        let cfg = HsiConfig {
            density,
            seed: 3,
            ..HsiConfig::default()
        };
        let p = HsiProblem::new(x.clone(), &cfg).unwrap();
        let frac = p.observed() as f64 / 40_000.0;
        let sd = (density * (1.0 - density) / 40_000.0).sqrt();
        assert!(
            (frac - density).abs() < 5.0 * sd,
            "density {density}: observed fraction {frac}"
        );
        assert_eq!(p.observed(), p.mask.iter().filter(|&&o| o).count());
        let again = HsiProblem::new(x.clone(), &cfg).unwrap();
        assert_eq!(again.mask, p.mask, "seeded");
    }
    let bad = HsiConfig {
        density: 1.0,
        ..HsiConfig::default()
    };
    let e = HsiProblem::new(x, &bad).unwrap_err();
    assert!(e.to_string().contains("density") && e.to_string().contains("(0, 1)"));
}

fn small_problem(density: f64, width: usize) -> HsiProblem {
    let x = DMatrix::from_fn(9, 6, |i, j| 0.1 * ((i * 5 + j * 3) as f64 * 0.7).sin());
    let cfg = HsiConfig {
        density,
        width,
        seed: 1,
        ..HsiConfig::default()
    };
    HsiProblem::new(x, &cfg).unwrap()
}

#[test]
fn the_masked_gradient_matches_finite_differences() {
    let p = small_problem(0.5, 3);
    let u = DMatrix::from_fn(9, 3, |i, j| ((i + 2 * j) as f64 * 1.3).cos() * 0.4);
    let v = DMatrix::from_fn(6, 3, |i, j| ((3 * i + j) as f64 * 0.9).sin() * 0.5);
    let mut ws = HsiWorkspace::new(9, 6, 3);
    let mut g = [DMatrix::zeros(9, 3), DMatrix::zeros(6, 3)];
    let loss = p.loss_and_grad(&u, &v, &mut g, &mut ws);

    let w = &u * v.transpose();
    let mut direct = 0.0;
    for ((wi, xi), &o) in w.iter().zip(p.x.iter()).zip(p.mask.iter()) {
        if o {
            direct += (wi - xi) * (wi - xi);
        }
    }
    direct /= p.observed() as f64;
    assert!((loss - direct).abs() < 1e-15 * direct.max(1.0));

    let mut scratch = [DMatrix::zeros(9, 3), DMatrix::zeros(6, 3)];
    let mut f = |u: &DMatrix<f64>, v: &DMatrix<f64>| p.loss_and_grad(u, v, &mut scratch, &mut ws);
    let h = 1e-6;
    for (which, analytic) in g.iter().enumerate() {
        let base = if which == 0 { &u } else { &v };
        for idx in 0..base.len() {
            let (mut plus, mut minus) = (base.clone(), base.clone());
            plus[idx] += h;
            minus[idx] -= h;
            let fd = if which == 0 {
                (f(&plus, &v) - f(&minus, &v)) / (2.0 * h)
            } else {
                (f(&u, &plus) - f(&u, &minus)) / (2.0 * h)
            };
            let an = analytic[idx];
            assert!(
                (fd - an).abs() < 1e-7 * (1.0 + an.abs()),
                "factor {which} entry {idx}: analytic {an}, finite difference {fd}"
            );
        }
    }
}

#[test]
fn gd_on_a_planted_low_rank_matrix_reports_the_first_crossing() {
    // X = A Bᵀ of rank 2 (30 × 12), about 0.3 per entry; half the entries observed.
    let a = DMatrix::from_fn(30, 2, |i, j| 0.6 * ((i * (j + 2)) as f64 * 0.37).sin());
    let b = DMatrix::from_fn(12, 2, |i, j| 0.6 * ((i + 5 * j) as f64 * 0.61).cos());
    let x = &a * b.transpose();
    let cfg = HsiConfig {
        density: 0.5,
        width: 4,
        steps: 4000,
        seed: 2,
        ..HsiConfig::default()
    };
    let p = HsiProblem::new(x.clone(), &cfg).unwrap();
    let r = run(&p, rule("gd"), GD_RATE, &|_| {});
    assert_eq!(r.outcome, Outcome::Budget);
    assert_eq!(r.losses.len(), cfg.steps + 1);
    let deepest = r.crossings[LEVELS.len() - 1]
        .as_ref()
        .expect("GD reaches 1e-5 on a planted rank-2 matrix");
    for (level, c) in LEVELS.iter().zip(&r.crossings) {
        let c = c.as_ref().expect("every level reached");
        let first = r.losses.iter().position(|&l| l < *level).unwrap();
        assert_eq!(c.step, first, "level {level}: the first step below it");
        assert_eq!(c.train_loss, r.losses[first]);
    }
    assert!(deepest.step > 0, "the fit takes steps");
    // Held out entries are recovered: far below the data's own RMS.
    let rms = (x.iter().map(|v| v * v).sum::<f64>() / x.len() as f64).sqrt();
    assert!(
        deepest.test_rmse < 0.05 * rms,
        "{} vs {rms}",
        deepest.test_rmse
    );
    let planted = basis_lab::sensing::effective_rank(&x);
    assert!(
        (deepest.erank - planted).abs() < 0.05,
        "erank {} vs the planted matrix's {planted}",
        deepest.erank
    );

    // The RMSE at the crossing is that of the factors after exactly `step` updates: a run
    // stopped there ends on the same numbers, bit for bit.
    let c = r.crossings[2].as_ref().unwrap();
    let short = HsiProblem::new(
        x,
        &HsiConfig {
            steps: c.step,
            ..cfg.clone()
        },
    )
    .unwrap();
    let stopped = run(&short, rule("gd"), GD_RATE, &|_| {});
    assert_eq!(stopped.last.step, c.step);
    assert_eq!(stopped.last.test_rmse.to_bits(), c.test_rmse.to_bits());
    assert_eq!(stopped.last.erank.to_bits(), c.erank.to_bits());
}

const GD_RATE: f64 = 5.0;

#[test]
fn a_huge_rate_is_marked_diverged() {
    let p = small_problem(0.5, 3);
    let r = run(&p, rule("gd"), 1e9, &|_| {});
    assert_eq!(r.outcome, Outcome::Diverged);
    assert!(r.steps < p.cfg.steps);
    assert!(r.last.test_rmse.is_nan());
}

/// The command's standard output up to its closing "wrote" line, as the file hsi.md holds it.
fn printed_markdown(stdout: &str) -> String {
    stdout
        .lines()
        .take_while(|l| !l.starts_with("wrote"))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn the_hsi_command_writes_a_table_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let scene = tiny_scene_file(dir.path());
    let out_dir = dir.path().join("out");
    let stdout = ok(&[
        "hsi",
        s(&scene),
        "--density",
        "0.5",
        "--var",
        "tiny",
        "--steps",
        "400",
        "--rules",
        "gd,adam",
        "--lr",
        "gd=50,adam=3e-3",
        "--quiet",
        "--out",
        s(&out_dir),
    ]);
    assert!(stdout.contains("| gd | 50 |") && stdout.contains("| adam | 0.003 |"));
    assert!(stdout.contains("30 pixels non-zero"), "{stdout}");
    let csv = std::fs::read_to_string(out_dir.join("hsi.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "rule,lr,density,seed,level,step,train_loss,test_rmse,erank,outcome,selected"
    );
    assert_eq!(lines.count(), 2 * (LEVELS.len() + 1));
    let md = std::fs::read_to_string(out_dir.join("hsi.md")).unwrap();
    assert_eq!(md, printed_markdown(&stdout));
}

#[test]
fn the_hsi_grid_command_runs_the_papers_protocol() {
    let dir = tempfile::tempdir().unwrap();
    let scene = tiny_scene_file(dir.path());
    let out_dir = dir.path().join("grid");
    let stdout = ok(&[
        "hsi",
        s(&scene),
        "--density",
        "0.5",
        "--var",
        "tiny",
        "--steps",
        "150",
        "--grid",
        "--rules",
        "gd,muon",
        "--quiet",
        "--out",
        s(&out_dir),
    ]);
    let md = std::fs::read_to_string(out_dir.join("hsi.md")).unwrap();
    assert_eq!(md, printed_markdown(&stdout));
    assert!(
        md.contains("selection seeds 42, 123; report seeds 456, 789"),
        "{md}"
    );
    assert!(md.contains("| gd | paper | 0.3, 1, 3, 10, 30 |"), "{md}");
    assert!(md.contains("| gd | paper-cpu | 1, 3, 10 |"), "{md}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("hsi.json")).unwrap()).unwrap();
    // GD: two grids, Muon: one; each with both selection rules.
    assert_eq!(json["picks"].as_array().unwrap().len(), 6);
    let runs = json["runs"].as_array().unwrap().len();
    // Every rate on two seeds (GD 5, Muon 3), then each picked rate on two more.
    let picked = json["summaries"].as_array().unwrap().len();
    assert_eq!(runs, 2 * 8 + 2 * picked);
    let csv = std::fs::read_to_string(out_dir.join("hsi.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + runs * (LEVELS.len() + 1));
    let summary = std::fs::read_to_string(out_dir.join("hsi_summary.csv")).unwrap();
    assert_eq!(summary.lines().count(), 1 + picked * (LEVELS.len() + 1));
    assert!(
        summary
            .lines()
            .skip(1)
            .all(|l| l.contains(",42;123;456;789,")),
        "{summary}"
    );

    let own = dir.path().join("own");
    let stdout = ok(&[
        "hsi",
        s(&scene),
        "--density",
        "0.5",
        "--var",
        "tiny",
        "--steps",
        "50",
        "--grid",
        "--grids",
        "own",
        "--rules",
        "muon",
        "--quiet",
        "--out",
        s(&own),
    ]);
    assert!(
        stdout.contains("| muon | own | 0.0001, 0.0003, 0.001, 0.003, 0.01 |"),
        "{stdout}"
    );

    let cases: [(&[&str], &str); 4] = [
        (&["--grid", "--seed", "3"], "cannot be used with"),
        (&["--grids", "own"], "--grid"),
        (&["--grid", "--lr", "gd=3"], "cannot be used with"),
        (
            &["--grid", "--selection-seeds", "1,2", "--report-seeds", "2"],
            "seed 2 is listed twice",
        ),
    ];
    for (args, want) in cases {
        let out = bin()
            .args([
                "hsi",
                s(&scene),
                "--density",
                "0.5",
                "--var",
                "tiny",
                "--quiet",
            ])
            .args(args)
            .arg("--out")
            .arg(dir.path().join("bad"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn the_hsi_command_fails_cleanly_on_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.mat");
    std::fs::write(&junk, "not a mat file").unwrap();
    let scene = dir.path().join("tiny.mat");
    write_mat(&scene, "tiny", [2, 3, 4], &small_cube(), &D);
    let empty = dir.path().join("empty.mat");
    write_mat(&empty, "tiny", [0, 3, 4], &[], &D);
    let cases: [(&Path, &[&str], &str); 10] = [
        (&junk, &["--density", "0.2"], "not a MATLAB v5"),
        (
            &scene,
            &["--density", "0.2", "--var", "indian_pines_corrected"],
            "has no variable `indian_pines_corrected`; it holds: tiny (uint16, 2 × 3 × 4), d \
             (double, 3 × 2)",
        ),
        (
            &scene,
            &["--density", "1.5", "--var", "tiny"],
            "field `density`",
        ),
        (
            &scene,
            &["--density", "0.2", "--var", "d"],
            "expected 3 dimensions",
        ),
        (
            &scene,
            &["--density", "0.2", "--var", "tiny", "--rules", "gd,lion"],
            "unknown rule `lion`",
        ),
        (
            &empty,
            &["--density", "0.2", "--var", "tiny"],
            "variable `tiny` is empty (0 × 3 × 4)",
        ),
        (
            &scene,
            &[
                "--density",
                "0.2",
                "--var",
                "tiny",
                "--rules",
                "gd,gd",
                "--lr",
                "gd=1",
            ],
            "--rules: `gd` is given twice",
        ),
        (
            &scene,
            &["--density", "0.2", "--var", "tiny", "--lr", "gd=1,gd=2"],
            "--lr: `gd` is given twice",
        ),
        (
            &scene,
            &[
                "--density",
                "0.2",
                "--var",
                "tiny",
                "--lr",
                " muon = 1,muon=2",
            ],
            "--lr: `muon` is given twice",
        ),
        (
            &scene,
            &[
                "--density",
                "0.2",
                "--var",
                "tiny",
                "--rules",
                "gd",
                "--lr",
                "adam=1",
            ],
            "adam is not in --rules",
        ),
    ];
    for (file, args, want) in cases {
        let out = bin()
            .arg("hsi")
            .arg(file)
            .args(args)
            .arg("--quiet")
            .arg("--out")
            .arg(dir.path().join("o"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

/// The density-0.25 run of the paper's protocol kept in docs/results (docs/gauge-lab.md's Table
/// 5 at that density) reads back through the reader the app uses, holds the numbers the docs
/// print, and writes the same hsi.md again.
#[test]
fn the_kept_indian_pines_run_reads_back_with_the_documented_table() {
    use basis_lab::sensing::hsi::report::{grid_markdown, read_grid};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/results");
    let r = read_grid(&dir.join("hsi-indian-pines-025.json")).unwrap();
    assert_eq!(r.plan.seeds(), [42, 123, 456, 789]);
    assert!(
        r.setups
            .iter()
            .all(|s| s.cfg.density == 0.25 && s.cfg.steps == 30_000)
    );
    let row = |rule: &str, lr: f64| {
        let s = r
            .summaries
            .iter()
            .find(|s| s.rule == rule && s.lr == lr)
            .unwrap_or_else(|| panic!("{rule} at {lr} was picked"));
        let d = s.deepest();
        let rmse = d
            .test_rmse
            .map(|t| format!("{:.3} ± {:.3}", t.mean * 100.0, t.sd * 100.0));
        let rank = d.erank.map(|e| format!("{:.1}", e.mean));
        (d.reached, rmse, rank)
    };
    let some = |a: &str, b: &str| (4, Some(a.to_string()), Some(b.to_string()));
    assert_eq!(row("gd", 30.0), some("1.240 ± 0.013", "13.1"));
    assert_eq!(row("gd", 10.0), (0, None, None));
    assert_eq!(row("adam", 0.01), some("1.732 ± 0.060", "20.9"));
    assert_eq!(row("muon", 0.1), some("3.350 ± 0.117", "35.9"));
    assert_eq!(row("scalar_adam", 0.03), some("3.000 ± 0.474", "31.2"));
    let md = std::fs::read_to_string(dir.join("hsi-indian-pines-025.md")).unwrap();
    assert_eq!(grid_markdown(&r), md);
}

#[test]
fn a_plain_run_uses_the_papers_protocol_rates_and_the_fastest_ones_by_flag() {
    let dir = tempfile::tempdir().unwrap();
    let scene = tiny_scene_file(dir.path());
    let run = |extra: &[&str]| {
        let out = dir.path().join("out");
        let args = [
            &["hsi", s(&scene), "--density", "0.5", "--var", "tiny"][..],
            &["--steps", "5", "--quiet", "--out", s(&out)],
            extra,
        ]
        .concat();
        ok(&args)
    };
    let paper = run(&[]);
    for row in [
        "| gd | 30 |",
        "| adam | 0.01 |",
        "| scalar_adam | 0.03 |",
        "| muon | 0.1 |",
    ] {
        assert!(paper.contains(row), "{row}: {paper}");
    }
    let fastest = run(&["--rates", "fastest"]);
    for row in [
        "| gd | 10000 |",
        "| adam | 0.01 |",
        "| scalar_adam | 0.01 |",
        "| muon | 0.01 |",
    ] {
        assert!(fastest.contains(row), "{row}: {fastest}");
    }
    // --lr overrides one rule and leaves the others at --rates'.
    let mixed = run(&["--rates", "fastest", "--lr", "muon=0.1"]);
    assert!(
        mixed.contains("| gd | 10000 |") && mixed.contains("| muon | 0.1 |"),
        "{mixed}"
    );
}
