//! Share strings (`bl1:…`, `ba1:…`): every bundled preset and a fuzzed sample of presets come
//! back bit-identical; tampered and random strings give errors that name the field, never a
//! panic; the paste window and the command line read them.

mod common;

use basis_lab::app::follow;
use basis_lab::app::{AppState, Settings};
use basis_lab::attention::{AttentionPreset, BUNDLED_ATTENTION};
use basis_lab::explainer::DemoSettings;
use basis_lab::link::parse_page_link;
use basis_lab::optim::{Hyper, OptimizerSpec, Polar, REGISTRY};
use basis_lab::preset::{BUNDLED, ColumnNorms, Preset};
use basis_lab::share::{self, Shareable, decode, encode};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use proptest::prelude::*;

/// Compact RON: equal text means every field, every f64 bit included, is equal (RON writes
/// each f64 as the shortest text that reads back to its bits, `-0.0` included).
fn bytes<T: serde::Serialize>(v: &T) -> String {
    ron::to_string(v).unwrap()
}

/// Encodes `p`, checks the string is one URL-safe line, decodes it and checks the bytes.
fn round_trip<T: Shareable + serde::Serialize>(p: &T) -> String {
    let line = encode(p);
    assert!(
        line.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~!()*,:;=@/'+%".contains(&b)),
        "not URL-safe: {line}"
    );
    let back: T = decode(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
    assert_eq!(bytes(&back), bytes(p), "{line}");
    line
}

#[test]
fn every_bundled_preset_round_trips_as_its_name() {
    for (name, text) in BUNDLED {
        let p = Preset::from_ron(text, name).unwrap();
        assert_eq!(round_trip(&p), format!("bl1:{name}"));
    }
    for (name, text) in BUNDLED_ATTENTION {
        let p = AttentionPreset::from_ron(text, name).unwrap();
        assert_eq!(round_trip(&p), format!("ba1:{name}"));
    }
    assert_eq!(round_trip(&Preset::default()), "bl1:");
}

#[test]
fn a_typical_change_fits_a_chat_message_and_reads_as_what_changed() {
    let mut p = Preset::load("default").unwrap();
    p.d_k = 8;
    p.arms[1].lr = 0.003;
    let line = round_trip(&p);
    assert_eq!(line, "bl1:default(d_k:8,arms:%5B(),(lr:0.003),(),()%5D)");
    // Dropping an arm and changing the demos from the classroom preset.
    let mut p = Preset::load("classroom").unwrap();
    p.arms.pop();
    p.demos.beta = 0.5;
    let line = round_trip(&p);
    assert_eq!(line, "bl1:classroom(arms:%5B()%5D,demos:(beta:0.5))");
    let mut a = AttentionPreset::load("attention-quick").unwrap();
    a.steps = 50;
    assert_eq!(round_trip(&a), "ba1:attention-quick(steps:50)");
}

#[test]
fn odd_floats_and_text_survive_bit_for_bit() {
    let mut p = Preset {
        name: "ünï “code” + 100% #1 'q' \\ \"x\"".into(),
        description: "two\nlines\ttab, [brackets] {braces} & = ?".into(),
        beta: -0.0,
        gain: 0.1 + 0.2,
        init_std: Some(1e-300),
        ..Preset::default()
    };
    p.arms[0].lr = f64::MIN_POSITIVE / 4.0; // subnormal
    p.arms[1].eps = -0.0;
    p.arms[1].beta1 = 1.0 - f64::EPSILON;
    p.demos.gradient = [-0.0, 1e-17];
    let line = round_trip(&p);
    assert!(!line.contains(' ') && !line.contains('\n') && !line.contains('#'));
    let back: Preset = decode(&line).unwrap();
    assert_eq!(back.beta.to_bits(), (-0.0f64).to_bits());
    assert_eq!(back.gain.to_bits(), (0.1f64 + 0.2).to_bits());
}

#[test]
fn a_link_and_surrounding_spaces_are_accepted() {
    let mut p = Preset::load("dk32").unwrap();
    p.seed = 7;
    let line = encode(&p);
    let link = format!("  https://example.org/basis-lab/#{line}\n");
    let back: Preset = decode(&link).unwrap();
    assert_eq!(bytes(&back), bytes(&p));
    // Hand-typed brackets and quotes read like their escapes.
    let typed: Preset = decode("bl1:dk32(seed:7,name:\"dk32\")").unwrap();
    assert_eq!(bytes(&typed), bytes(&p));
}

#[test]
fn tampered_strings_give_errors_naming_the_field() {
    let cases: &[(&str, &str)] = &[
        ("bl1:default(d_k:300)", "field `d_k`: 300 is out of range"),
        (
            "bl1:default(arms:%5B(),(lr:-1)%5D)",
            "field `arms[1].lr`: -1 is out of range",
        ),
        ("bl1:default(demos:(beta:7))", "field `demos.beta`"),
        ("bl1:default(dk:8)", "`dk`"),
        ("bl1:default(d_k:'eight')", "field `d_k`"),
        (
            "bl1:default(arms:%5B(optimizer:'nope')%5D)",
            "unknown optimizer `nope`",
        ),
        ("bl1:nope(d_k:8)", "no bundled preset `nope`"),
        ("bl1:default(d_k:8", "missing `)`"),
        ("bl1:default(d_k:8,d_k:9)", "field `d_k` is given twice"),
        (
            "bl1:default(d_k:%2",
            ":1:17: `%` is not followed by two hex digits",
        ),
        ("bl1:default(name:%FF)", "UTF-8"),
        ("bl2:default", "`bl2` are not known"),
        ("ba1:attention", "an attention preset"),
        ("bl1:default[d_k:8]", "`(field:value,…)`"),
    ];
    for (text, wanted) in cases {
        let e = decode::<Preset>(text).unwrap_err().to_string();
        assert!(e.starts_with("share string"), "{text}: {e}");
        assert!(e.contains(wanted), "{text}: {e} (wanted {wanted})");
    }
    let e = decode::<AttentionPreset>("ba1:attention(steps:-3)")
        .unwrap_err()
        .to_string();
    assert!(e.contains("steps"), "{e}");
}

#[test]
fn the_paste_reader_tells_share_strings_from_ron() {
    let p = share::parse_pasted::<Preset>("bl1:classroom(seed:3)", "pasted text").unwrap();
    assert_eq!((p.name.as_str(), p.seed), ("classroom", 3));
    let p = share::parse_pasted::<Preset>("Preset(d_k: 8)", "pasted text").unwrap();
    assert_eq!(p.d_k, 8);
    let e = share::parse_pasted::<Preset>("Preset(\n d_k: 0)", "pasted text").unwrap_err();
    assert_eq!(e.file, "pasted text");
    assert_eq!(e.field.as_deref(), Some("d_k"));
}

#[test]
fn the_command_line_prints_and_reads_share_strings() {
    let out = common::ok(&["share", "classroom"]);
    assert_eq!(out.trim(), "bl1:classroom");
    let out = common::ok(&["share", "bl1:classroom(steps:20,seed:5)"]);
    assert_eq!(out.trim(), "bl1:classroom(steps:20,seed:5)");
    let ron = common::ok(&["presets", "bl1:classroom(steps:20,seed:5)"]);
    let p = Preset::from_ron(&ron, "stdout").unwrap();
    assert_eq!((p.steps, p.seed, p.d_k), (20, 5, 8));
    let out = common::ok(&["share", "ba1:attention-quick(steps:9)"]);
    assert_eq!(out.trim(), "ba1:attention-quick(steps:9)");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    common::ok(&["run", "bl1:classroom(steps:3)", "--out", common::s(&out)]);
    assert!(out.join("metrics.csv").is_file());
    let e = common::fails(&["share", "bl1:classroom(steps:-3)"]);
    assert!(e.contains("share string") && e.contains("steps"), "{e}");
    // Zoo presets (the gauge lab's sweep tabs' links): by name, file, string and link.
    assert_eq!(common::ok(&["share", "zoo-paper"]).trim(), "bz1:zoo-paper");
    let tail = concat!(env!("CARGO_MANIFEST_DIR"), "/presets/tail.ron");
    assert_eq!(common::ok(&["share", "--zoo", tail]).trim(), "bz1:tail");
    let link = "https://example.org/lab/?view=gauge/zoo#bz1:zoo-paper(seeds:1)";
    assert_eq!(
        common::ok(&["share", link]).trim(),
        "bz1:zoo-paper(seeds:1)"
    );
    let zoo = dir.path().join("zoo");
    common::ok(&[
        "zoo",
        "bz1:dial(seeds:1,budget:300)",
        "--quiet",
        "--out",
        common::s(&zoo),
    ]);
    assert!(zoo.join("zoo.csv").is_file());
}

/// The app after `text` is typed into its paste window and loaded.
fn paste(text: &str) -> Harness<'static, Option<AppState>> {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1920.0, 1200.0))
        .build_ui_state(
            |ui, state: &mut Option<AppState>| {
                let settings = Settings {
                    speed: Some(1.0),
                    ..Settings::default()
                };
                let app = state.get_or_insert_with(|| AppState::new(ui.ctx(), settings));
                app.logic();
                app.ui(ui);
            },
            None,
        );
    h.run_steps(2);
    h.get_by_label("File").click();
    h.run_steps(3);
    h.get_by_label("Paste preset…").click();
    h.run_steps(2);
    h.get_by_label("Preset text").focus();
    h.step();
    h.get_by_label("Preset text").type_text(text);
    h.step();
    h.get_by_label("Load preset").click();
    h.run_steps(2);
    h
}

#[test]
fn pasting_a_share_string_into_the_paste_window_loads_that_preset() {
    let mut wanted = Preset::load("classroom").unwrap();
    wanted.seed = 11;
    wanted.arms[1].lr = 0.3 + 0.6;
    wanted.demos = DemoSettings {
        phi_deg: -0.0,
        ..DemoSettings::default()
    };
    let h = paste(&encode(&wanted));
    let app = h.state().as_ref().unwrap();
    assert_eq!(bytes(&app.lab.preset), bytes(&wanted));
    loaded_from_share_string(app);
}

/// The paste window closed and the notice says a share string was loaded.
fn loaded_from_share_string(app: &AppState) {
    assert!(app.paste_text.is_none(), "the window closes");
    let notice = app.lab.notice.clone().unwrap();
    assert!(
        !notice.error && notice.text.contains("share string"),
        "{}",
        notice.text
    );
}

/// The reported faults in the paste window: a share string wrapped by mail, with curly quotes
/// and a minus sign from a chat app, loads as sent.
#[test]
fn pasting_a_wrapped_share_string_with_look_alikes_loads_it() {
    let h = paste("bl1:classroom(name:‘tiny’,seed:11,\n  demos:(rotation_deg:−30))\n");
    let app = h.state().as_ref().unwrap();
    let p = &app.lab.preset;
    assert_eq!((p.name.as_str(), p.seed), ("tiny", 11));
    assert_eq!(p.demos.rotation_deg, -30.0);
    loaded_from_share_string(app);
}

/// The reported fault: a share string wrapped over two lines by mail or chat was read as a
/// file name ("no such file, and no bundled preset of that name"). Whitespace is never part of
/// a share string, so it reads as sent: by the library, on every command that takes a preset
/// (key lab, zoo, attention) and in the paste window (see the next test).
#[test]
fn a_wrapped_share_string_reads_as_it_was_sent() {
    let p: Preset = decode("bl1:classroom(steps:3,\n  seed:2)").unwrap();
    assert_eq!((p.name.as_str(), p.steps, p.seed), ("classroom", 3, 2));
    let wrapped_link =
        "https://example.org/lab/?view=test#bl1:classroom(arms:%5B(),\r\n\t(lr:0.0\n3)%5D)";
    let p: Preset = decode(wrapped_link).unwrap();
    assert_eq!(p.arms[1].lr, 0.03);
    let dir = tempfile::tempdir().unwrap();
    let run = |preset: &str, name: &str| {
        let out = dir.path().join(name);
        common::ok(&[
            "run",
            preset,
            "--no-trace",
            "--quiet",
            "--out",
            common::s(&out),
        ]);
        std::fs::read(out.join("metrics.csv")).unwrap()
    };
    assert_eq!(
        run("bl1:classroom(steps:3,\n  seed:2)", "wrapped"),
        run("bl1:classroom(steps:3,seed:2)", "one-line")
    );
    let zoo = dir.path().join("zoo");
    let preset = "bz1:dial(seeds:1,\n budget:300)";
    common::ok(&["zoo", preset, "--quiet", "--out", common::s(&zoo)]);
    assert!(zoo.join("zoo.csv").is_file());
    let out = common::ok(&["share", "ba1:attention-quick(steps:\n  9)"]);
    assert_eq!(out.trim(), "ba1:attention-quick(steps:9)");
}

/// The reported fault: a link with a second `#`, with nothing after its `#` or with its `#`
/// written `%23` was read as a file name too. A link is always read as one that holds a share
/// string, so its error says what is wrong with it and where (line:column of what was given),
/// on the command line and in the page (whose fragment the key lab's reader is given).
#[test]
fn a_broken_link_says_what_is_wrong_with_its_share_string() {
    let cases: &[(&str, &str, (usize, usize))] = &[
        ("https://x.org/lab/#", "the link ends at its `#`", (1, 19)),
        (
            "https://x.org/lab/%23bl1:classroom",
            "the link's `#` is written `%23`",
            (1, 19),
        ),
        (
            "https://x.org/lab/#bl1:classroom#bl1:dk32",
            "a second `#`",
            (1, 33),
        ),
        ("x.org/lab/#view#bl1:classroom", "a second `#`", (1, 16)),
        (
            "https://x.org/lab/?view=test",
            "the link has no `#`",
            (1, 29),
        ),
        (
            "https://x.org/lab/\n#hello",
            "starts with `bl1:`; this one starts `hello`",
            (2, 2),
        ),
    ];
    for &(link, says, at) in cases {
        let e = decode::<Preset>(link).unwrap_err();
        assert!(e.message.contains(says), "{link}: {e}");
        assert_eq!((e.line, e.column), (Some(at.0), Some(at.1)), "{link}: {e}");
        let e = common::fails(&["run", link, "--out", "unused"]);
        let place = format!("share string:{}:{}: ", at.0, at.1);
        assert!(e.contains(&place) && e.contains(says), "{link}: {e}");
        assert!(!e.contains("no such file"), "{link}: {e}");
    }
    for (hash, says) in [
        ("#bl1:classroom#", "a second `#`"),
        ("#%23bl1:classroom", "`%23`"),
    ] {
        let link = parse_page_link("?view=test", hash);
        let (key, view) = follow::shares(&link);
        assert!(view.is_none(), "{hash}");
        let e = decode::<Preset>(key.unwrap()).unwrap_err().to_string();
        assert!(e.contains(says), "{hash}: {e}");
    }
}

/// The reported fault: `name:‘tiny’` (curly quotes from a chat app) or `rotation_deg: −30` (a
/// minus sign) gave "Expected string" / "Expected float" with no pointer at the character. The
/// common look-alikes read as the ASCII they stand for outside quotes, in a share string and
/// in a link (which a browser percent-encodes); any other character outside quotes that is not
/// ASCII is named with its code point and line:column.
#[test]
fn look_alike_characters_read_as_ascii_or_are_named_where_they_stand() {
    let p: Preset = decode("bl1:classroom(name:‘tiny’,demos:(rotation_deg:−30))").unwrap();
    assert_eq!((p.name.as_str(), p.demos.rotation_deg), ("tiny", -30.0));
    let p: Preset = decode("bl1:classroom(name:“it’s+mine”)").unwrap();
    assert_eq!(p.name, "it’s mine", "an apostrophe inside quotes stays");
    let p: Preset = decode("bl1:classroom(name:'a+−+‘b’')").unwrap();
    assert_eq!(p.name, "a − ‘b’", "nothing between straight quotes changes");
    let hash = "#bl1:classroom(name:%E2%80%9Ctiny%E2%80%9D,demos:(rotation_deg:%E2%88%9230))";
    let link = parse_page_link("?view=test", hash);
    let p: Preset = decode(follow::shares(&link).0.unwrap()).unwrap();
    assert_eq!((p.name.as_str(), p.demos.rotation_deg), ("tiny", -30.0));
    let a: AttentionPreset = decode("ba1:attention-quick(name:‘q’)").unwrap();
    assert_eq!(a.name, "q");
    let out = common::ok(&["share", "bl1:classroom(name:‘tiny’,seed:−0)"]);
    assert_eq!(out.trim(), "bl1:classroom(name:'tiny')");

    let cases: &[(&str, &str, (usize, usize))] = &[
        (
            "bl1:classroom(steps:3,\n  seed：2)",
            "`：` (U+FF1A) outside a string: a share string \
          is written in ASCII there (type `:`)",
            (2, 7),
        ),
        (
            "bl1:classroom(demos:(rotation_deg:–30))",
            "`–` (U+2013)",
            (1, 35),
        ),
        (
            "https://x.org/#bl1:classroom(demos:(phi_deg:%E2%80%9330))",
            "`–` (U+2013)",
            (1, 45),
        ),
        ("bl1:classroom(name:„x“)", "`„` (U+201E)", (1, 20)),
    ];
    for &(text, says, at) in cases {
        let e = decode::<Preset>(text).unwrap_err();
        assert!(e.message.starts_with(says), "{text}: {e}");
        assert_eq!((e.line, e.column), (Some(at.0), Some(at.1)), "{text}: {e}");
    }
}

/// A real number in `lo..=hi`: uniform, either end, or one of the awkward values (subnormal,
/// -0.0, 1e-300, 0.1 + 0.2) when it lies in range.
fn real(lo: f64, hi: f64) -> impl Strategy<Value = f64> {
    let odd = [-0.0, 0.0, 1e-300, 5e-324, 0.1 + 0.2, 1.0 / 3.0, 1e-17];
    let odd: Vec<f64> = odd.into_iter().filter(|x| (lo..=hi).contains(x)).collect();
    let pick = if odd.is_empty() { vec![lo] } else { odd };
    prop_oneof![
        4 => lo..=hi,
        1 => prop::sample::select(vec![lo, hi]),
        2 => prop::sample::select(pick),
    ]
}

/// An arm of a registered rule with every hyperparameter drawn in its range.
fn arm() -> impl Strategy<Value = OptimizerSpec> {
    let names: Vec<&str> = REGISTRY.iter().map(|r| r.name).collect();
    (
        prop::sample::select(names),
        real(1e-9, 1e6),
        proptest::collection::vec(real(0.0, 0.999_999), 4),
        real(0.0, 1.0),
        any::<bool>(),
    )
        .prop_map(|(name, lr, decays, eps, svd)| {
            let mut a = OptimizerSpec::new(name, lr);
            let hs = [Hyper::Beta1, Hyper::Beta2, Hyper::Momentum, Hyper::Alpha];
            for (h, x) in hs.into_iter().zip(decays) {
                *a.value_mut(h).unwrap() = x;
            }
            a.eps = eps;
            if svd {
                a.polar = Polar::Svd;
            }
            a
        })
}

fn demos() -> impl Strategy<Value = DemoSettings> {
    (
        proptest::collection::vec(real(-360.0, 360.0), 2..=6),
        real(0.0, 2.0),
        real(-180.0, 180.0),
        (real(-10.0, 10.0), real(-10.0, 10.0)),
        real(-180.0, 180.0),
        any::<bool>(),
        1usize..=1000,
    )
        .prop_map(|(keys, beta, rot, g, phi, later, steps)| DemoSettings {
            key_angles_deg: keys,
            beta,
            rotation_deg: rot,
            gradient: [g.0, g.1],
            phi_deg: phi,
            later_adam: later,
            adam_steps: steps,
        })
}

/// A valid preset, often near a bundled one (the common case) and sometimes far from any.
fn preset() -> impl Strategy<Value = Preset> {
    let base = prop::sample::select(BUNDLED.iter().map(|(n, _)| *n).collect::<Vec<_>>());
    let sizes = (1usize..=32, 1usize..=48, 1usize..=16, 1usize..=48)
        .prop_map(|(d_k, n_keys, n_values, k)| (d_k, n_keys, n_values, k.min(n_keys)));
    let numbers = (
        real(0.0, 2.0),
        real(1e-12, 1000.0),
        1usize..=4096,
        0usize..=100_000_000,
        any::<u64>(),
        prop::option::of(real(1e-300, 100.0)),
        (1usize..=100_000_000, 1usize..=500, 2usize..=100_000),
    );
    let arms = proptest::collection::vec(arm(), 1..=5);
    let text = ("\\PC{0,30}", "\\PC{0,80}");
    let flags = (any::<bool>(), any::<bool>(), 0u8..4);
    (base, sizes, numbers, arms, demos(), text, flags).prop_map(
        |(base, sizes, numbers, arms, demos, (name, description), (renorm, noise, keep))| {
            let mut p = Preset::load(base).unwrap();
            // keep = 0..=2: change a few fields of the bundled preset; 3: change everything.
            match keep {
                0 => p.seed = numbers.4,
                1 => {
                    p.arms[0].lr = numbers.1;
                    p.demos.beta = numbers.0;
                }
                2 => {
                    p.d_k = sizes.0;
                    p.init_std = numbers.5;
                    p.arms.truncate(1);
                }
                _ => {
                    (p.d_k, p.n_keys, p.n_values, p.pairs_per_episode) = sizes;
                    (p.beta, p.gain, p.batch, p.steps, p.seed, p.init_std) = (
                        numbers.0, numbers.1, numbers.2, numbers.3, numbers.4, numbers.5,
                    );
                    (p.eval_every, p.n_heldout, p.baseline_rotations) = numbers.6;
                    p.arms = arms;
                    for (i, a) in p.arms.iter_mut().enumerate() {
                        a.label = Some(format!("arm-{i}"));
                    }
                    p.demos = demos;
                    (p.name, p.description) = (name, description);
                    p.column_norms = if renorm {
                        ColumnNorms::Renormalize
                    } else {
                        ColumnNorms::Free
                    };
                    p.noise_twins = noise;
                }
            }
            p
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(160))]

    #[test]
    fn fuzzed_presets_round_trip_bit_for_bit(p in preset()) {
        prop_assume!(p.validate().is_ok());
        let line = round_trip(&p);
        prop_assert!(!line.contains('\n'));
    }

    #[test]
    fn random_strings_never_panic(body in "[a-z_:,()'\\[\\]%0-9A-F.+\\-\"{} ]{0,60}") {
        for text in [format!("bl1:{body}"), format!("bl1:default({body}"), body.clone()] {
            if let Ok(p) = decode::<Preset>(&text) {
                prop_assert!(p.validate().is_ok());
            }
            let _ = decode::<AttentionPreset>(&text);
        }
    }

    #[test]
    fn a_share_string_with_one_character_changed_is_an_error_or_a_valid_preset(
        p in preset(),
        at in any::<prop::sample::Index>(),
        c in "[a-z0-9_:,()'%.+\\-\\[\\]]",
        op in 0u8..3,
    ) {
        prop_assume!(p.validate().is_ok());
        let line = encode(&p);
        let mut chars: Vec<char> = line.chars().collect();
        let i = at.index(chars.len());
        let c = c.chars().next().unwrap();
        match op {
            0 => chars[i] = c,
            1 => chars.insert(i, c),
            _ => {
                chars.remove(i);
            }
        }
        let tampered: String = chars.into_iter().collect();
        match decode::<Preset>(&tampered) {
            Ok(q) => prop_assert!(q.validate().is_ok()),
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }
}
