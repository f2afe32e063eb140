//! Scale-out: `--shard i/N` runs disjoint cells in separate processes, and `merge` rebuilds the
//! unsharded tables byte for byte; shards that do not fit together are refused by name.

mod common;

use std::path::{Path, PathBuf};

use common::{fails, ok, s};

use basis_lab::shard::Shard;

/// Runs `command` once whole into `dir/full` and as 3 shards into `dir/s0..s2`, merges them
/// into `dir/merged`, and returns (full, merged).
fn whole_and_merged(dir: &Path, command: &[&str]) -> (PathBuf, PathBuf) {
    let full = dir.join("full");
    let mut args = command.to_vec();
    args.extend(["--quiet", "--out", s(&full)]);
    ok(&args);
    let mut shards = Vec::new();
    for i in 0..3 {
        let out = dir.join(format!("s{i}"));
        let shard = format!("{i}/3");
        let mut args = command.to_vec();
        args.extend(["--quiet", "--shard", &shard, "--out", s(&out)]);
        let printed = ok(&args);
        assert!(printed.contains(&format!("shard {i}/3")), "{printed}");
        assert!(out.join("shard.ron").exists());
        assert!(
            !out.join("sweep.csv").exists() && !out.join("zoo.csv").exists(),
            "a shard writes only its cells"
        );
        shards.push(out);
    }
    let merged = dir.join("merged");
    // Shards may be given in any order.
    ok(&[
        "merge",
        s(&shards[2]),
        s(&shards[0]),
        s(&shards[1]),
        "--out",
        s(&merged),
    ]);
    (full, merged)
}

fn same_bytes(a: &Path, b: &Path) {
    let (x, y) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(!x.is_empty());
    assert!(
        x == y,
        "{} and {} differ:\n{}\n---\n{}",
        a.display(),
        b.display(),
        String::from_utf8_lossy(&x),
        String::from_utf8_lossy(&y)
    );
}

#[test]
fn three_sweep_shards_merge_to_the_unsharded_tables_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let (full, merged) = whole_and_merged(
        dir.path(),
        &["sweep", "classroom", "--seeds", "5", "--steps", "40"],
    );
    same_bytes(&full.join("sweep.csv"), &merged.join("sweep.csv"));
    same_bytes(&full.join("sweep.json"), &merged.join("sweep.json"));
    let csv = std::fs::read_to_string(merged.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 5 * 2, "every seed and arm");

    // Shard 1 of 3 holds seeds 1 and 4 (cell index mod 3).
    let shard = basis_lab::shard::read_shard(&dir.path().join("s1")).unwrap();
    assert_eq!(shard.cells, vec![1, 4]);
    assert_eq!(shard.total_cells, 5);

    let (s0, s1, s2) = (
        dir.path().join("s0"),
        dir.path().join("s1"),
        dir.path().join("s2"),
    );
    let out = dir.path().join("bad");
    let e = fails(&["merge", s(&s0), s(&s2), "--out", s(&out)]);
    assert!(
        e.contains("2 of 5 cells are missing") && e.contains("cells 1, 4") && e.contains("1/3"),
        "{e}"
    );
    let e = fails(&["merge", s(&s0), s(&s1), s(&s1), s(&s2), "--out", s(&out)]);
    assert!(e.contains("cell 1 is in both"), "{e}");
    assert!(!out.exists(), "nothing written by a failed merge");

    // A shard of the same split but another preset (more steps) is refused.
    let other = dir.path().join("other");
    ok(&[
        "sweep",
        "classroom",
        "--seeds",
        "5",
        "--steps",
        "41",
        "--quiet",
        "--shard",
        "2/3",
        "--out",
        s(&other),
    ]);
    let e = fails(&["merge", s(&s0), s(&s1), s(&other), "--out", s(&out)]);
    assert!(e.contains("different presets or settings"), "{e}");
}

#[test]
fn three_zoo_shards_merge_to_the_unsharded_tables_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("small-zoo.ron");
    std::fs::write(
        &preset,
        "ZooPreset(name: \"small\", problem: (n: 12, rank: 2), budget: 400, seeds: 2, \
         rules: [Gd, Adam, Muon, Dial(0.5)], twins: true)",
    )
    .unwrap();
    let (full, merged) = whole_and_merged(dir.path(), &["zoo", s(&preset)]);
    same_bytes(&full.join("zoo.csv"), &merged.join("zoo.csv"));
    same_bytes(&full.join("zoo.md"), &merged.join("zoo.md"));
    // zoo.json also records wall time (`seconds`, summed over shards when merged).
    let json = |p: &Path| {
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(p.join("zoo.json")).unwrap()).unwrap();
        let t = v["seconds"].as_f64().unwrap();
        assert!(t >= 0.0);
        v.as_object_mut().unwrap().remove("seconds");
        v
    };
    assert_eq!(json(&full), json(&merged));
    let csv = std::fs::read_to_string(merged.join("zoo.csv")).unwrap();
    // Four rules × two seeds, then each seed's convex reference.
    assert_eq!(csv.lines().count(), 1 + 4 * 2 + 2);

    // A sweep shard does not merge with zoo shards.
    let sweep = dir.path().join("sweep-shard");
    ok(&[
        "sweep",
        "classroom",
        "--seeds",
        "3",
        "--steps",
        "10",
        "--quiet",
        "--shard",
        "0/3",
        "--out",
        s(&sweep),
    ]);
    let e = fails(&[
        "merge",
        s(&dir.path().join("s0")),
        s(&sweep),
        "--out",
        s(&dir.path().join("x")),
    ]);
    assert!(e.contains("`zoo` and `sweep`"), "{e}");
}

#[test]
fn eps_and_dk_sweeps_shard_and_merge_too() {
    for (cmd, points) in [("eps-sweep", "--eps"), ("dk-sweep", "--dks")] {
        let dir = tempfile::tempdir().unwrap();
        let values = if cmd == "eps-sweep" { "1e-8,1" } else { "4,8" };
        let (full, merged) = whole_and_merged(
            dir.path(),
            &[
                cmd,
                "classroom",
                "--seeds",
                "2",
                "--steps",
                "30",
                points,
                values,
            ],
        );
        let stem = cmd.replace('-', "_");
        // Given the parent of the shard folders, merge names the folders to pass instead.
        let err = fails(&["merge", s(dir.path()), "--out", s(&dir.path().join("m2"))]);
        assert!(
            err.contains("its subfolders hold shards") && err.contains("s0"),
            "{err}"
        );
        same_bytes(
            &full.join(format!("{stem}.csv")),
            &merged.join(format!("{stem}.csv")),
        );
        same_bytes(
            &full.join(format!("{stem}.json")),
            &merged.join(format!("{stem}.json")),
        );
    }
}

#[test]
fn shard_specs_are_checked_and_split_cells_disjointly() {
    let sh: Shard = "2/5".parse().unwrap();
    assert_eq!((sh.index, sh.count), (2, 5));
    assert_eq!(sh.cells(13), vec![2, 7, 12]);
    let mut all: Vec<usize> = (0..5)
        .flat_map(|i| Shard { index: i, count: 5 }.cells(13))
        .collect();
    all.sort_unstable();
    assert_eq!(all, (0..13).collect::<Vec<_>>());
    for bad in ["3/3", "1/0", "-1/3", "a/b", "3", "0/10001", ""] {
        let e = bad.parse::<Shard>().unwrap_err();
        assert!(e.contains("i/N"), "{bad}: {e}");
    }
    let e = fails(&[
        "sweep",
        "classroom",
        "--shard",
        "4/4",
        "--out",
        "/nonexistent",
    ]);
    assert!(e.contains("not a shard"), "{e}");
}

/// The reported shards: a 2-rule, 2-seed zoo split in two, one cell's rate edited to NaN or to
/// another rate. Merge names the shard and the cell and fails without a panic; the unedited
/// pair merges byte for byte.
#[test]
fn a_shard_whose_cell_was_edited_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("sm.ron");
    std::fs::write(
        &preset,
        "ZooPreset(name: \"sm\", description: \"small\", problem: (n: 6, rank: 1, ratio: 2.0, \
         init: 1e-3, tau: 0.0), budget: 50, seed: 0, seeds: 2, rules: [Gd, Adam])",
    )
    .unwrap();
    let full = dir.path().join("full");
    ok(&["zoo", s(&preset), "--quiet", "--out", s(&full)]);
    let shard = |i: usize| {
        let out = dir.path().join(format!("sh{i}"));
        let spec = format!("{i}/2");
        ok(&[
            "zoo",
            s(&preset),
            "--quiet",
            "--shard",
            &spec,
            "--out",
            s(&out),
        ]);
        out
    };
    let (sh0, sh1) = (shard(0), shard(1));
    let merged = dir.path().join("merged");
    ok(&["merge", s(&sh0), s(&sh1), "--out", s(&merged)]);
    for f in ["zoo.csv", "zoo.md"] {
        same_bytes(&full.join(f), &merged.join(f));
    }
    let text = std::fs::read_to_string(sh0.join("shard.ron")).unwrap();
    assert_eq!(text.matches("lr:0.01,").count(), 2, "{text}");
    for edit in ["NaN", "0.02"] {
        let edited = dir.path().join(format!("sh0-{edit}"));
        std::fs::create_dir_all(&edited).unwrap();
        // Cell 0 is GD at seed 0.
        std::fs::write(
            edited.join("shard.ron"),
            text.replacen("lr:0.01,", &format!("lr:{edit},"), 1),
        )
        .unwrap();
        let err = fails(&["merge", s(&edited), s(&sh1), "--out", s(&merged)]);
        assert!(
            err.contains(&format!(
                "sh0-{edit}: cell 0 does not hold what the job's cell computes (gd at lr 0.01, \
                 seed 0: field `lr`: {edit} differs from the preset's cell list, which has 0.01)"
            )) && !err.contains("panicked"),
            "{err}"
        );
    }
    // Edited numbers that no run can produce are refused too.
    let bad = text.replacen("recovery:", "recovery:-", 1);
    std::fs::write(sh0.join("shard.ron"), bad).unwrap();
    let err = fails(&["merge", s(&sh0), s(&sh1), "--out", s(&merged)]);
    assert!(err.contains("field `recovery`: -"), "{err}");
    // A byte-order mark is accepted.
    std::fs::write(sh0.join("shard.ron"), format!("\u{feff}{text}")).unwrap();
    ok(&["merge", s(&sh0), s(&sh1), "--out", s(&merged)]);
    same_bytes(&full.join("zoo.md"), &merged.join("zoo.md"));
}

/// A shard's job is checked before anything is looked up in it: an ε or d_k sweep whose list of
/// values was emptied, or a shard whose cell total was edited, is refused with the shard's name
/// and the field, never with a panic; the unedited pair merges.
#[test]
fn a_shard_with_an_emptied_sweep_list_or_an_edited_total_is_refused_without_a_panic() {
    use basis_lab::experiment::PointsTask;
    use basis_lab::preset::Preset;
    use basis_lab::shard::{Job, merge, parse_shard, run_shard};
    use std::sync::atomic::AtomicBool;
    let preset = Preset {
        steps: 6,
        eval_every: 3,
        n_heldout: 8,
        baseline_rotations: 4,
        ..Preset::load("classroom").unwrap()
    };
    let jobs = [
        (
            "eps",
            Job::EpsSweep(PointsTask::new(preset.clone(), vec![1e-8, 1e-2], 1)),
        ),
        ("dks", Job::DkSweep(PointsTask::new(preset, vec![4, 8], 1))),
    ];
    for (list, job) in jobs {
        let [a, b] = [0, 1].map(|index| {
            let out = run_shard(
                &job,
                Shard { index, count: 2 },
                &|| {},
                &AtomicBool::new(false),
            );
            ron::ser::to_string(&out.unwrap()).unwrap()
        });
        let merged = |first: &str, second: &str| {
            merge(vec![
                ("first".into(), parse_shard(first, "first").unwrap()),
                ("second".into(), parse_shard(second, "second").unwrap()),
            ])
        };
        assert!(merged(&a, &b).is_ok(), "{list}: the unedited pair");

        // `eps:[1e-8,0.01]` → `eps:[]` (an arm's own `eps:` is a number, never a list).
        let open = format!("{list}:[");
        let at = a.find(&open).unwrap() + open.len();
        let end = at + a[at..].find(']').unwrap();
        let emptied = format!("{}{}", &a[..at], &a[end..]);
        let e = merged(&emptied, &b).unwrap_err();
        assert!(
            e.contains(&format!(
                "first: field `{list}`: 0 values given; allowed 1..=64"
            )),
            "{e}"
        );
        let e = merged(&b, &emptied).unwrap_err();
        assert!(e.contains("shards of different jobs"), "{e}");

        assert_eq!(a.matches("total_cells:2,").count(), 1, "{a}");
        let total = a.replace("total_cells:2,", "total_cells:3,");
        for (x, y, name) in [(&total, &b, "first"), (&b, &total, "second")] {
            let e = merged(x, y).unwrap_err();
            assert!(
                e.contains(&format!(
                    "{name}: field `total_cells`: 3 where the job has 2 cells"
                )),
                "{e}"
            );
        }
    }
}

#[test]
fn zoo_shards_over_sizes_inits_and_schedules_merge_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("dims.ron");
    std::fs::write(
        &preset,
        "ZooPreset(name: \"dims\", problem: (n: 6, rank: 1), budget: 300, seeds: 2, \
         rules: [Gd, Muon], rule_rates: {Gd: [0.01, 0.03]}, sizes: [6, 9], inits: [1e-3, 1e-2], \
         schedules: [Paper, CosineFullHorizon])",
    )
    .unwrap();
    let (full, merged) = whole_and_merged(dir.path(), &["zoo", s(&preset)]);
    same_bytes(&full.join("zoo.csv"), &merged.join("zoo.csv"));
    same_bytes(&full.join("zoo.md"), &merged.join("zoo.md"));
    let csv = std::fs::read_to_string(merged.join("zoo.csv")).unwrap();
    // Then a convex reference per size and seed, the same for either init scale.
    assert_eq!(csv.lines().count(), 1 + 2 * 2 * 2 * 3 * 2 + 2 * 2);
    assert!(
        csv.contains("\nmin_nuclear_norm,reference,9,,,0,,1,"),
        "{csv}"
    );
    assert!(csv.starts_with("rule,class,n,init,schedule,tau,"), "{csv}");
    assert!(
        csv.contains("muon,equivariant,9,0.01,cosine_full_horizon,0,0.1,1,300,"),
        "{csv}"
    );
    // A shard whose runs carry another size is refused by field.
    let shard0 = dir.path().join("s0").join("shard.ron");
    let text = std::fs::read_to_string(&shard0).unwrap();
    let bad = dir.path().join("bad");
    std::fs::create_dir(&bad).unwrap();
    assert!(text.contains("n:Some(6)"), "{text}");
    std::fs::write(
        bad.join("shard.ron"),
        text.replacen("n:Some(6)", "n:Some(9)", 1),
    )
    .unwrap();
    let e = fails(&[
        "merge",
        s(&bad),
        s(&dir.path().join("s1")),
        s(&dir.path().join("s2")),
        "--out",
        s(&dir.path().join("x")),
    ]);
    assert!(e.contains("`n`"), "{e}");
}

/// A zoo with a chain among its rules shards and merges byte for byte: each shard's cells
/// read back with the chain named by its canonical text, which zoo.md escapes in its table.
#[test]
fn zoo_shards_with_a_chain_rule_merge_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let preset = dir.path().join("chain-zoo.ron");
    std::fs::write(
        &preset,
        "ZooPreset(name: \"chain\", problem: (n: 6, rank: 1), budget: 200, seeds: 2, \
         rules: [Chain(\"clip_by_global_norm(1) | scale_by_adam()\"), Gd])",
    )
    .unwrap();
    let (full, merged) = whole_and_merged(dir.path(), &["zoo", s(&preset)]);
    for f in ["zoo.csv", "zoo.md"] {
        same_bytes(&full.join(f), &merged.join(f));
    }
    let shard = basis_lab::shard::read_shard(&dir.path().join("s0")).unwrap();
    let text = format!("{shard:?}");
    assert!(
        text.contains("clip_by_global_norm() | scale_by_adam()"),
        "{text}"
    );
    let md = std::fs::read_to_string(merged.join("zoo.md")).unwrap();
    assert!(
        md.contains("\n| clip_by_global_norm() \\| scale_by_adam() | not guaranteed | 0.001 |"),
        "{md}"
    );
    // zoo.json reads back: its preset names the chain, and its runs are that preset's.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(merged.join("zoo.json")).unwrap()).unwrap();
    let preset: basis_lab::sensing::zoo::ZooPreset =
        serde_json::from_value(json["preset"].clone()).unwrap();
    assert_eq!(
        preset.rules[0].chain_text(),
        Some("clip_by_global_norm() | scale_by_adam()")
    );
    let runs: Vec<basis_lab::sensing::zoo::RunResult> =
        serde_json::from_value(json["runs"].clone()).unwrap();
    assert_eq!(runs.len(), 2 * 2 + 2);
    preset.check_runs(&runs).unwrap();
    let csv = std::fs::read_to_string(merged.join("zoo.csv")).unwrap();
    assert_eq!(
        csv.lines()
            .filter(|l| l.starts_with("clip_by_global_norm() | scale_by_adam(),"))
            .count(),
        2,
        "{csv}"
    );
}

/// Shard files written before the shard job held the analyses' task values (by the build
/// before that change, in the portable arithmetic, kept in `tests/data`) still read and merge,
/// with a shard this build writes, into the tables the unsharded command writes, byte for
/// byte; a file of another layout version is refused, saying which version wrote it.
#[test]
fn shards_written_by_the_previous_version_still_merge_byte_for_byte() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[&str], &str, &[&str]); 2] = [
        (
            "shard-v1-sweep-0of2.ron",
            &["sweep", "classroom", "--seeds", "3", "--steps", "20"],
            "1/2",
            &["sweep.csv", "sweep.json"],
        ),
        (
            "shard-v1-zoo-1of2.ron",
            &[
                "zoo", "dial", "--seeds", "2", "--budget", "200", "--sizes", "8",
            ],
            "0/2",
            // zoo.json also records wall time; its runs are zoo.csv's.
            &["zoo.csv", "zoo.md"],
        ),
    ];
    for (k, (old, command, other, tables)) in cases.into_iter().enumerate() {
        let old = data.join(old);
        let (full, new, merged) = (
            dir.path().join(format!("full{k}")),
            dir.path().join(format!("new{k}")),
            dir.path().join(format!("merged{k}")),
        );
        let mut args = command.to_vec();
        args.extend(["--portable", "--quiet", "--out", s(&full)]);
        ok(&args);
        let mut args = command.to_vec();
        args.extend(["--portable", "--quiet", "--shard", other, "--out", s(&new)]);
        ok(&args);
        ok(&["merge", "--portable", s(&old), s(&new), "--out", s(&merged)]);
        for t in tables {
            same_bytes(&full.join(t), &merged.join(t));
        }
    }
    let text = std::fs::read_to_string(data.join("shard-v1-sweep-0of2.ron")).unwrap();
    assert!(text.starts_with("(format:1,"));
    for (format, who, fix) in [
        ("0", "an older", "run that shard again with this one"),
        ("2", "a newer", "merge it with that version"),
    ] {
        let edited = text.replacen("(format:1,", &format!("(format:{format},"), 1);
        let e = basis_lab::shard::parse_shard(&edited, "old.ron").unwrap_err();
        assert_eq!(
            e,
            format!(
                "old.ron: written by {who} version of basis-lab (shard format {format}; this \
                 build reads 1); {fix}"
            )
        );
    }
}
