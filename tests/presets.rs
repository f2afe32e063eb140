//! Presets (numerics §6): defaults, exact round trip, and errors that name the place, the field
//! and the allowed range — never a panic.

use basis_lab::preset::{BUNDLED, MAX_PRESET_BYTES, Preset};

#[test]
fn bundled_presets_load_validate_and_round_trip_exactly() {
    for (name, text) in BUNDLED {
        let p = Preset::from_ron(text, name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&p.name, name);
        let again = Preset::from_ron(&p.to_ron(), "round trip").unwrap();
        assert_eq!(again, p);
        let on_disk = Preset::load(format!("presets/{name}.ron")).unwrap();
        assert_eq!(on_disk, p, "presets/{name}.ron and the bundled copy differ");
    }
    assert!(
        Preset::load("default").unwrap().d_k >= 16,
        "Demo 4 defaults to d_k ≥ 16"
    );
}

#[test]
fn missing_fields_take_defaults() {
    let p = Preset::from_ron(
        "Preset(d_k: 12, arms: [(optimizer: \"adam\", lr: 0.02)])",
        "t",
    )
    .unwrap();
    let d = Preset::default();
    assert_eq!(p.d_k, 12);
    assert_eq!(
        (p.n_keys, p.beta, p.batch, p.steps),
        (d.n_keys, d.beta, d.batch, d.steps)
    );
    assert_eq!(p.arms[0].beta2, 0.999);
    assert_eq!(p.arms[0].eps, 1e-8);
    assert!((p.init_std() - 1.0 / 12f64.sqrt()).abs() < 1e-16);
    assert_eq!(Preset::from_ron("()", "t").unwrap(), d);
}

#[test]
fn options_may_be_written_without_some() {
    let p = Preset::from_ron("Preset(init_std: 0.25)", "t").unwrap();
    assert_eq!(p.init_std, Some(0.25));
    let p = Preset::from_ron("Preset(init_std: Some(0.25))", "t").unwrap();
    assert_eq!(p.init_std, Some(0.25));
}

#[test]
fn demo_state_round_trips_and_does_not_change_the_experiment() {
    let mut p = Preset::default();
    p.demos.key_angles_deg = vec![30.0, 200.0];
    p.demos.beta = 1.0;
    p.demos.later_adam = true;
    let back = Preset::from_ron(&p.to_ron(), "t").unwrap();
    assert_eq!(back, p);
    assert!(back.same_experiment(&Preset::default()));
    let other = Preset {
        beta: 0.5,
        ..Preset::default()
    };
    assert!(!other.same_experiment(&p));
}

#[test]
fn awkward_floats_round_trip_bit_exactly() {
    let mut p = Preset {
        beta: 0.1 + 0.2,
        gain: 1.0 / 3.0,
        init_std: Some(f64::MIN_POSITIVE * 1e10),
        ..Preset::default()
    };
    p.arms[1].eps = 1e-300;
    p.arms[1].lr = 0.007_000_000_000_000_001;
    let back = Preset::from_ron(&p.to_ron(), "t").unwrap();
    assert_eq!(back.beta.to_bits(), p.beta.to_bits());
    assert_eq!(back.gain.to_bits(), p.gain.to_bits());
    assert_eq!(
        back.init_std.unwrap().to_bits(),
        p.init_std.unwrap().to_bits()
    );
    assert_eq!(back.arms[1].eps.to_bits(), p.arms[1].eps.to_bits());
    assert_eq!(back.arms[1].lr.to_bits(), p.arms[1].lr.to_bits());
}

/// (text, what the message must contain, expected field if any, expected line if known)
fn bad_cases() -> Vec<(String, &'static str, Option<&'static str>, Option<usize>)> {
    let default = BUNDLED[0].1;
    vec![
        ("Preset(d_k: 16".into(), "", None, Some(1)),
        ("Preset(\n  d_kk: 3,\n)".into(), "d_kk", None, Some(2)),
        (
            "Preset(d_k: \"16\")".into(),
            "Expected integer",
            Some("d_k"),
            Some(1),
        ),
        (
            "Preset(d_k: -1)".into(),
            "out of bounds",
            Some("d_k"),
            Some(1),
        ),
        ("Preset(d_k: 0)".into(), "1..=256", Some("d_k"), Some(1)),
        (
            "Preset(\n\n  d_k: 100000)".into(),
            "1..=256",
            Some("d_k"),
            Some(3),
        ),
        ("Preset(beta: 3.0)".into(), "[0, 2]", Some("beta"), Some(1)),
        (
            "Preset(gain: 0.0)".into(),
            "(0, 1000]",
            Some("gain"),
            Some(1),
        ),
        ("Preset(gain: NaN)".into(), "allowed", Some("gain"), None),
        ("Preset(beta: inf)".into(), "allowed", Some("beta"), None),
        (
            "Preset(n_keys: 4, pairs_per_episode: 5)".into(),
            "1..=4",
            Some("pairs_per_episode"),
            None,
        ),
        ("Preset(arms: [])".into(), "1..=16", Some("arms"), None),
        (
            "Preset(arms: [(optimizer: \"adamw\", lr: 0.1)])".into(),
            "adam, scalar_adam",
            Some("arms[0].optimizer"),
            None,
        ),
        (
            "Preset(arms: [(optimizer: \"gd\", lr: 0.1), (optimizer: \"adam\", lr: -1.0)])".into(),
            "(0, 1000000]",
            Some("arms[1].lr"),
            Some(1),
        ),
        (
            "Preset(arms: [(optimizer: \"adam\", lr: 0.1, beta1: 1.0)])".into(),
            "[0, 1)",
            Some("arms[0].beta1"),
            None,
        ),
        (
            "Preset(arms: [(optimizer: \"gd\"), (optimizer: \"gd\")])".into(),
            "used twice",
            Some("arms[1].label"),
            None,
        ),
        (
            "Preset(arms: [(optimizer: \"gd\", learning_rate: 0.1)])".into(),
            "learning_rate",
            None,
            Some(1),
        ),
        (default[..default.len() / 2].to_string(), "", None, None),
        ("".into(), "", None, None),
        ("[1, 2, 3]".into(), "", None, Some(1)),
        (
            "Preset(steps: 99999999999999999999999999)".into(),
            "out of bounds",
            Some("steps"),
            Some(1),
        ),
        ("Preset(batch: 1.5)".into(), "", None, Some(1)),
        (
            "Preset(arms: [(optimizer: \"muon\", polar: Qr)])".into(),
            "NewtonSchulz",
            Some("polar"),
            Some(1),
        ),
        (
            "Preset(init_std: Some(0.0))".into(),
            "[1e-300, 1e300]",
            Some("init_std"),
            None,
        ),
        (
            "Preset(arms: [(optimizer: \"gd\", label: Some(\"a b\"))])".into(),
            "label",
            Some("arms[0].label"),
            None,
        ),
        (
            "Preset(d_k: 256, n_keys: 1024, n_values: 1024, pairs_per_episode: 1024)".into(),
            "memory limit",
            Some("pairs_per_episode"),
            None,
        ),
        (
            "Preset(eval_every: 0)".into(),
            "1..=100000000",
            Some("eval_every"),
            None,
        ),
        (
            "Preset(baseline_rotations: 1)".into(),
            "2..=100000",
            Some("baseline_rotations"),
            None,
        ),
        ("Preset(seed: -5)".into(), "", Some("seed"), Some(1)),
        (
            "Preset(demos: (beta: 3.0))".into(),
            "[0, 2]",
            Some("demos.beta"),
            Some(1),
        ),
        (
            "Preset(demos: (key_angles_deg: [10.0]))".into(),
            "2..=6",
            Some("demos.key_angles_deg"),
            Some(1),
        ),
        (
            "Preset(arms: [(optimizer: \"gd\", label: Some(\"gd_rot\"))])".into(),
            "_rot",
            Some("arms[0].label"),
            Some(1),
        ),
        (
            "Preset(arms: [(optimizer: \"gd\"), (optimizer: \"gd\")])".into(),
            "used twice",
            Some("arms[1].label"),
            Some(1),
        ),
    ]
}

#[test]
fn malformed_presets_give_located_errors_and_never_panic() {
    let cases = bad_cases();
    assert!(cases.len() >= 15);
    for (i, (text, needle, field, line)) in cases.iter().enumerate() {
        let err = match std::panic::catch_unwind(|| Preset::from_ron(text, "bad.ron")) {
            Ok(Err(e)) => e,
            Ok(Ok(p)) => panic!("case {i} accepted: {text:?} → {p:?}"),
            Err(_) => panic!("case {i} panicked: {text:?}"),
        };
        let msg = err.to_string();
        assert!(msg.starts_with("bad.ron"), "case {i}: {msg}");
        assert!(msg.contains(needle), "case {i}: `{msg}` lacks `{needle}`");
        assert_eq!(err.field.as_deref(), *field, "case {i}: {msg}");
        if let Some(l) = line {
            assert_eq!(err.line, Some(*l), "case {i}: {msg}");
            assert!(err.column.is_some(), "case {i}: {msg}");
        }
        if field.is_some() {
            assert!(
                msg.contains(&format!("field `{}`", field.unwrap())),
                "case {i}: {msg}"
            );
        }
    }
}

#[test]
fn oversized_and_unreadable_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.ron");
    std::fs::write(&big, vec![b' '; MAX_PRESET_BYTES as usize + 1]).unwrap();
    let e = Preset::load(big.to_str().unwrap()).unwrap_err();
    assert!(e.message.contains("at most"), "{e}");
    let missing = dir.path().join("nope.ron");
    let e = Preset::load(missing.to_str().unwrap()).unwrap_err();
    assert!(e.message.contains("no such file"), "{e}");
    let e = Preset::load("classroooom").unwrap_err();
    assert!(
        e.message.contains("bundled: default, classroom, dk32"),
        "{e}"
    );
    let binary = dir.path().join("bin.ron");
    std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
    assert!(
        Preset::load(binary.to_str().unwrap())
            .unwrap_err()
            .message
            .contains("UTF-8")
    );
}

#[test]
fn loading_never_changes_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("p.ron");
    let text = "Preset(d_k: 8, steps: 10)";
    std::fs::write(&path, text).unwrap();
    let p = Preset::load(path.to_str().unwrap()).unwrap();
    assert_eq!((p.d_k, p.steps), (8, 10));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn the_readme_example_preset_is_valid() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let start = readme.find("```ron").expect("README shows a preset") + "```ron".len();
    let end = start + readme[start..].find("```").unwrap();
    let p = Preset::from_ron(&readme[start..end], "README.md").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(p.arms.len(), 4);
    assert_eq!(p.arms[2].arm_name(), "adam-eps1e-3");
}

/// The reported fault: `name:‘tiny’` (curly quotes from a chat app) or `rotation_deg: −30` (a
/// minus sign) gave "Expected string" / "Expected float" with no pointer at the character.
/// Outside strings and comments the common look-alikes read as the ASCII they stand for, in
/// every preset kind; strings and comments are kept as written.
#[test]
fn look_alike_characters_read_as_ascii_in_every_preset_kind() {
    let typed = "// a ‘comment’ − kept\nPreset(\n    name: ‘tiny’,\n    description: “it’s − \
                 ‘q’”,\n    d_k:\u{a0}4,\n    demos: (rotation_deg: −30.0),\n)";
    let p = Preset::from_ron(typed, "typed.ron").unwrap();
    assert_eq!(
        (p.name.as_str(), p.description.as_str()),
        ("tiny", "it’s − ‘q’")
    );
    assert_eq!((p.d_k, p.demos.rotation_deg), (4, -30.0));
    let p = Preset::from_ron("Preset(name: \"‘−’\")", "straight.ron").unwrap();
    assert_eq!(p.name, "‘−’");
    let zoo = "ZooPreset(name: ”z”, problem: (n: 5, rank: 1), budget: 10, seeds: 1, rules: [Gd])";
    let z = basis_lab::sensing::zoo::ZooPreset::from_ron(zoo, "z.ron").unwrap();
    assert_eq!(z.name, "z");
    let quick = basis_lab::attention::BUNDLED_ATTENTION
        .iter()
        .find(|(n, _)| *n == "attention-quick")
        .unwrap()
        .1;
    let typed = quick.replace("name: \"attention-quick\"", "name: ‘q’");
    let a = basis_lab::attention::AttentionPreset::from_ron(&typed, "a.ron").unwrap();
    assert_eq!(a.name, "q");
}

/// A character RON does not read outside a string (not one of the accepted look-alikes) is
/// named with its code point at its line:column; every other error keeps its line:column,
/// counted in characters as RON counts them, also after look-alikes were read as ASCII.
#[test]
fn other_characters_are_named_at_their_line_and_column() {
    let at = |text: &str| {
        let e = Preset::from_ron(text, "t.ron").unwrap_err();
        (e.to_string(), e.line, e.column)
    };
    let (e, line, column) = at("Preset(\n    name: “tiny”,\n    beta: –1.0,\n)");
    assert_eq!((line, column), (Some(3), Some(11)), "{e}");
    assert!(
        e.starts_with(
            "t.ron:3:11: field `beta`: `–` (U+2013) outside a string: a preset is written in \
             ASCII there (type `-`) (the reader: Expected float)"
        ),
        "{e}"
    );
    let (e, line, column) = at("Preset(\n  seed：0)");
    assert_eq!((line, column), (Some(2), Some(7)), "{e}");
    assert!(e.starts_with("t.ron:2:7: `：` (U+FF1A)"), "{e}");
    // After the look-alikes and a non-ASCII letter: the column of the value, in characters.
    let (e, line, column) = at("Preset(name: ‘é’, d_k: 0)");
    assert_eq!((line, column), (Some(1), Some(19)), "{e}");
    assert_eq!(at("Preset(name: \"é\", d_k: 0)").2, Some(19));
    assert_eq!(at("Preset(name: ‘é’, d_k: x)").2, Some(23));
}
