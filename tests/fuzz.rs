//! Generated presets (proptest): random fields, out-of-range values, wrong types, truncated and
//! mutated text, NaN/inf literals, deep nesting and huge sizes never panic, parse within a
//! bounded amount of memory, and give errors that name the file; every valid preset survives
//! save → load bit for bit.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use basis_lab::attention::{AttentionPreset, BUNDLED_ATTENTION};
use basis_lab::optim::{OptimizerSpec, Polar, REGISTRY};
use basis_lab::output::write_atomic;
use basis_lab::preset::{BUNDLED, ColumnNorms, MAX_PRESET_BYTES, Preset};
use basis_lab::sensing::zoo::{BUNDLED_ZOO, MAX_ZOO_BYTES, ZooPreset};
use proptest::prelude::*;
use proptest::sample::select;

/// Counts this thread's live heap bytes and their peak, so a parse's footprint can be measured
/// while other tests run on other threads.
struct PeakAlloc;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn track(delta: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

unsafe impl GlobalAlloc for PeakAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            track(layout.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) };
        track(-(layout.size() as isize));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            track(new_size as isize - layout.size() as isize);
        }
        p
    }
}

#[global_allocator]
static ALLOC: PeakAlloc = PeakAlloc;

/// Runs `f` and returns its value and the most heap it held at once, in bytes.
fn peak_bytes<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    let peak = PEAK.with(Cell::get) - base;
    (out, peak.max(0) as usize)
}

/// A parse may hold a few copies of its input plus a small constant, never more.
fn memory_bound(text: &str) -> usize {
    (4 << 20) + 32 * text.len()
}

const PRESET_FIELDS: &[&str] = &[
    "name",
    "description",
    "d_k",
    "n_keys",
    "n_values",
    "pairs_per_episode",
    "beta",
    "gain",
    "batch",
    "steps",
    "seed",
    "init_std",
    "eval_every",
    "n_heldout",
    "baseline_rotations",
    "column_norms",
    "noise_twins",
    "arms",
    "demos",
];
const ARM_FIELDS: &[&str] = &[
    "optimizer",
    "label",
    "lr",
    "beta1",
    "beta2",
    "eps",
    "momentum",
    "alpha",
    "polar",
];
const DEMO_FIELDS: &[&str] = &[
    "key_angles_deg",
    "beta",
    "rotation_deg",
    "gradient",
    "phi_deg",
    "later_adam",
    "adam_steps",
];
const ZOO_FIELDS: &[&str] = &[
    "name",
    "description",
    "problem",
    "budget",
    "seed",
    "seeds",
    "rules",
    "grid",
    "twins",
    "taus",
    "n",
    "rank",
    "ratio",
    "init",
    "tau",
];

/// Numbers as a user (or a broken tool) might write them.
fn number() -> BoxedStrategy<String> {
    prop_oneof![
        (0u64..300).prop_map(|x| x.to_string()),
        any::<i64>().prop_map(|x| x.to_string()),
        any::<u64>().prop_map(|x| x.to_string()),
        (-3.0f64..3.0).prop_map(|x| format!("{x:?}")),
        any::<f64>().prop_map(|x| format!("{x:?}")),
        select(vec![
            "NaN",
            "inf",
            "-inf",
            "+inf",
            "1e999",
            "-1e999",
            "1e-400",
            "-0.0",
            "0x10",
            "1_000",
            "99999999999999999999999999999999",
            "18446744073709551616",
            "1e308",
            "5e-324",
            ".5",
            "1.",
            "--1",
        ])
        .prop_map(String::from),
    ]
    .boxed()
}

/// Any RON-ish value: numbers, strings, enum names, options, lists and structs, nested.
fn value(fields: &'static [&'static str]) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        4 => number(),
        1 => "[a-zA-Z0-9 _\\-\"\\\\]{0,12}".prop_map(|s| format!("{s:?}")),
        1 => select(REGISTRY.iter().map(|r| r.name).collect::<Vec<_>>())
            .prop_map(|s| format!("\"{s}\"")),
        1 => select(vec![
            "true", "false", "None", "Some(0.5)", "Some(\"x\")", "Free", "Renormalize", "Svd",
            "NewtonSchulz", "Gd", "Adam", "Muon", "Dial(0.5)", "Dial(7)", "()", "\"\"", "'c'",
            "b\"bytes\"", "Qr",
        ])
        .prop_map(String::from),
    ];
    leaf.prop_recursive(3, 32, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec((select(fields), inner.clone()), 0..5).prop_map(|fs| {
                let body: Vec<String> = fs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                format!("({})", body.join(", "))
            }),
            inner.clone().prop_map(|v| format!("Some({v})")),
            (inner.clone(), inner).prop_map(|(a, b)| format!("({a}, {b})")),
        ]
    })
    .boxed()
}

/// A field name: a real one (of the preset, an arm or the demos) or a made-up one.
fn field_name(fields: &'static [&'static str]) -> BoxedStrategy<String> {
    prop_oneof![
        8 => select(fields).prop_map(String::from),
        1 => "[a-z_]{1,12}",
    ]
    .boxed()
}

/// One arm, mostly well formed.
fn arm() -> BoxedStrategy<String> {
    let field = prop_oneof![
        3 => (select(ARM_FIELDS), number()).prop_map(|(k, v)| format!("{k}: {v}")),
        1 => (select(ARM_FIELDS), value(ARM_FIELDS)).prop_map(|(k, v)| format!("{k}: {v}")),
    ];
    (
        select(REGISTRY.iter().map(|r| r.name).collect::<Vec<_>>()),
        prop::collection::vec(field, 0..4),
    )
        .prop_map(|(opt, fields)| {
            let mut all = vec![format!("optimizer: \"{opt}\"")];
            all.extend(fields);
            format!("({})", all.join(", "))
        })
        .boxed()
}

/// A preset text: random fields with random values, random arms, the demos, optionally huge
/// lists, with or without the struct name.
fn preset_text() -> BoxedStrategy<String> {
    let all_fields: &'static [&'static str] = &[
        "name",
        "description",
        "d_k",
        "n_keys",
        "n_values",
        "pairs_per_episode",
        "beta",
        "gain",
        "batch",
        "steps",
        "seed",
        "init_std",
        "eval_every",
        "n_heldout",
        "baseline_rotations",
        "column_norms",
        "noise_twins",
        "optimizer",
        "lr",
        "eps",
        "key_angles_deg",
        "gradient",
    ];
    let field = prop_oneof![
        4 => (select(PRESET_FIELDS), number()).prop_map(|(k, v)| format!("{k}: {v}")),
        2 => (field_name(PRESET_FIELDS), value(all_fields)).prop_map(|(k, v)| format!("{k}: {v}")),
        1 => prop::collection::vec(arm(), 0..20).prop_map(|a| format!("arms: [{}]", a.join(", "))),
        1 => prop::collection::vec((select(DEMO_FIELDS), number()), 0..5).prop_map(|fs| {
            let body: Vec<String> = fs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            format!("demos: ({})", body.join(", "))
        }),
        1 => (0usize..20_000).prop_map(|n| format!("demos: (key_angles_deg: [{}])", vec!["1.0"; n].join(","))),
        1 => (0usize..3_000).prop_map(|n| format!("arms: [{}]", vec!["()"; n].join(","))),
        1 => (0usize..50_000).prop_map(|n| format!("name: \"{}\"", "é".repeat(n))),
    ];
    (
        prop::collection::vec(field, 0..12),
        select(vec!["Preset", "", "Zoo", "preset"]),
        any::<bool>(),
    )
        .prop_map(|(fields, head, trailing)| {
            let comma = if trailing && !fields.is_empty() {
                ","
            } else {
                ""
            };
            format!("{head}(\n  {}{comma}\n)", fields.join(",\n  "))
        })
        .boxed()
}

/// Zoo preset texts built the same way.
fn zoo_text() -> BoxedStrategy<String> {
    let rule = select(vec![
        "Gd",
        "Adam",
        "ScalarAdam",
        "RmsProp",
        "Signum",
        "Lion",
        "Adafactor",
        "Muon",
        "Shampoo",
        "Dial(0.25)",
        "Dial(NaN)",
        "Dial(-1.0)",
        "Sgd",
    ]);
    let field = prop_oneof![
        4 => (select(ZOO_FIELDS), number()).prop_map(|(k, v)| format!("{k}: {v}")),
        2 => (field_name(ZOO_FIELDS), value(ZOO_FIELDS)).prop_map(|(k, v)| format!("{k}: {v}")),
        2 => prop::collection::vec((select(&ZOO_FIELDS[10..]), number()), 0..6).prop_map(|fs| {
            let body: Vec<String> = fs.iter().map(|(k, v)| format!("{k}: {v}")).collect();
            format!("problem: ({})", body.join(", "))
        }),
        1 => prop::collection::vec(rule, 0..100).prop_map(|r| format!("rules: [{}]", r.join(", "))),
        1 => prop::collection::vec(number(), 0..100).prop_map(|t| format!("taus: [{}]", t.join(", "))),
    ];
    (
        prop::collection::vec(field, 0..10),
        select(vec!["ZooPreset", "", "Preset"]),
    )
        .prop_map(|(fields, head)| format!("{head}({})", fields.join(", ")))
        .boxed()
}

/// Damages `text`: truncation at any character, a deleted span, a stray character, a repeated
/// span, or nothing.
fn damaged(text: BoxedStrategy<String>) -> BoxedStrategy<String> {
    (
        text,
        any::<prop::sample::Index>(),
        any::<prop::sample::Index>(),
        0u8..6,
        any::<char>(),
    )
        .prop_map(|(t, a, b, how, c)| {
            let cuts: Vec<usize> = t.char_indices().map(|(i, _)| i).chain([t.len()]).collect();
            let (i, j) = {
                let (x, y) = (*a.get(&cuts), *b.get(&cuts));
                (x.min(y), x.max(y))
            };
            match how {
                0 => t[..i].to_string(),
                1 => format!("{}{}", &t[..i], &t[j..]),
                2 => format!("{}{c}{}", &t[..i], &t[i..]),
                3 => format!("{}{}", &t[..j], &t[i..]),
                _ => t,
            }
        })
        .boxed()
}

/// Bundled presets (valid to start with) and deep nesting, damaged.
fn known_text() -> BoxedStrategy<String> {
    let bundled: Vec<String> = BUNDLED.iter().map(|(_, t)| t.to_string()).collect();
    prop_oneof![
        3 => select(bundled),
        1 => (1usize..20_000, select(vec!["(", "[", "Some(", "(a:"]))
            .prop_map(|(n, open)| format!("Preset(arms: {}", open.repeat(n))),
    ]
    .boxed()
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(10_000))]

    #[test]
    fn ten_thousand_generated_presets_never_panic_and_parse_in_bounded_memory(
        text in prop_oneof![3 => damaged(preset_text()), 1 => damaged(known_text())]
    ) {
        let (result, peak) = peak_bytes(|| {
            std::panic::catch_unwind(|| Preset::from_ron(&text, "fuzz.ron"))
        });
        let Ok(result) = result else {
            return Err(TestCaseError::fail(format!("panicked on {text:?}")));
        };
        prop_assert!(
            peak <= memory_bound(&text),
            "{peak} bytes held to parse {} bytes", text.len()
        );
        match result {
            Ok(p) => {
                prop_assert!(p.validate().is_ok());
                let back = Preset::from_ron(&p.to_ron(), "again");
                prop_assert_eq!(back.as_ref(), Ok(&p));
            }
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("fuzz.ron"), "{}", msg);
                prop_assert!(!e.message.is_empty());
                if e.message.contains("out of range") {
                    prop_assert!(e.message.contains("allowed"), "{}", msg);
                    prop_assert!(e.field.is_some(), "{}", msg);
                }
            }
        }
    }

    #[test]
    fn ten_thousand_generated_zoo_presets_never_panic_and_parse_in_bounded_memory(
        text in damaged(zoo_text())
    ) {
        let (result, peak) = peak_bytes(|| {
            std::panic::catch_unwind(|| ZooPreset::from_ron(&text, "zoo-fuzz.ron"))
        });
        let Ok(result) = result else {
            return Err(TestCaseError::fail(format!("panicked on {text:?}")));
        };
        prop_assert!(peak <= memory_bound(&text), "{peak} bytes for {} bytes", text.len());
        match result {
            Ok(p) => {
                prop_assert!(p.validate().is_ok());
                // The run list a valid preset implies is bounded too.
                prop_assert!(p.cells().len() <= basis_lab::sensing::zoo::MAX_CELLS);
            }
            Err(e) => {
                let e = e.to_string();
                prop_assert!(e.starts_with("zoo-fuzz.ron"), "{}", e);
                if e.contains("out of range") {
                    prop_assert!(e.contains("allowed") && e.contains("field `"), "{}", e);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(config(3_000))]

    #[test]
    fn damaged_attention_presets_never_panic_and_name_the_file(
        text in damaged(select(
            BUNDLED_ATTENTION.iter().map(|(_, t)| t.to_string()).collect::<Vec<_>>()
        ).boxed())
    ) {
        let result = std::panic::catch_unwind(|| AttentionPreset::from_ron(&text, "att.ron"));
        let Ok(result) = result else {
            return Err(TestCaseError::fail(format!("panicked on {text:?}")));
        };
        match result {
            Ok(p) => {
                prop_assert!(p.validate().is_ok());
                let back = AttentionPreset::from_ron(&p.to_ron(), "again");
                prop_assert_eq!(back.as_ref(), Ok(&p));
            }
            Err(e) => {
                prop_assert!(e.to_string().starts_with("att.ron"), "{}", e);
                if e.message.contains("out of range") {
                    prop_assert!(e.field.is_some() && e.message.contains("allowed"), "{}", e);
                }
            }
        }
    }
}

#[test]
fn oversized_text_is_refused_before_parsing() {
    for size in [MAX_PRESET_BYTES as usize + 1, 8 << 20] {
        let text = format!("Preset(name: \"{}\")", "x".repeat(size));
        let (r, peak) = peak_bytes(|| Preset::from_ron(&text, "big.ron"));
        let e = r.unwrap_err();
        assert!(e.message.contains("at most 1048576"), "{e}");
        assert!(peak < 1 << 16, "refused without copying: {peak} bytes");
    }
    let text = format!(
        "ZooPreset(name: \"{}\")",
        "x".repeat(MAX_ZOO_BYTES as usize)
    );
    let e = ZooPreset::from_ron(&text, "big-zoo.ron")
        .unwrap_err()
        .to_string();
    assert!(e.contains("at most 1048576"), "{e}");
}

#[test]
fn every_size_limit_names_its_field_and_range() {
    let cases = [
        (
            "Preset(n_heldout: 100000, n_keys: 256, pairs_per_episode: 200)",
            "n_heldout",
            "1..=50000",
        ),
        (
            "Preset(d_k: 256, n_values: 1024, n_keys: 64, pairs_per_episode: 64, arms: [(optimizer: \"gd\"), (optimizer: \"adam\"), (optimizer: \"sign\")])",
            "arms",
            "memory limit of 100000000",
        ),
        (
            "Preset(baseline_rotations: 100001)",
            "baseline_rotations",
            "2..=100000",
        ),
        ("Preset(batch: 4097)", "batch", "1..=4096"),
        ("Preset(steps: 100000001)", "steps", "0..=100000000"),
    ];
    for (text, field, range) in cases {
        let e = Preset::from_ron(text, "t.ron").unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
        assert!(e.to_string().contains(range), "{e}");
    }
    let long = format!("Preset(name: \"{}\")", "n".repeat(201));
    let e = Preset::from_ron(&long, "t.ron").unwrap_err();
    assert!(
        e.field.as_deref() == Some("name") && e.message.contains("at most 200"),
        "{e}"
    );
    let zoo = [
        ("ZooPreset(seeds: 1001)", "`seeds`", "1..=1000"),
        ("ZooPreset(budget: 1000001)", "`budget`", "1..=1000000"),
        ("ZooPreset(problem: (n: 257))", "`problem.n`", "2..=256"),
        (
            "ZooPreset(taus: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6])",
            "`taus`",
            "0..=32",
        ),
        ("ZooPreset(rules: [])", "`rules`", "1..=64"),
        (
            "ZooPreset(grid: true, seeds: 1000, taus: [0.0, 0.1, 0.2, 0.3])",
            "`seeds`",
            "limit of 100000",
        ),
        (
            "ZooPreset(problem: (n: 128, ratio: 2.0), seeds: 200)",
            "`seeds`",
            "at most 10 seeds",
        ),
    ];
    for (text, field, range) in zoo {
        let e = ZooPreset::from_ron(text, "z.ron").unwrap_err().to_string();
        assert!(e.contains(field) && e.contains(range), "{text}: {e}");
    }
    for (name, text) in BUNDLED_ZOO {
        ZooPreset::from_ron(text, name).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A float in [lo, hi] (or (lo, hi]) with all 53 bits of mantissa random, or an edge value.
fn real(lo: f64, hi: f64, lo_closed: bool) -> BoxedStrategy<f64> {
    let mut edges = vec![hi, lo + (hi - lo) * 0.5, 0.1_f64.clamp(lo, hi)];
    if lo_closed {
        edges.push(lo);
        if lo == 0.0 {
            edges.push(-0.0);
        }
    }
    if lo == 0.0 {
        edges.extend([5e-324, f64::MIN_POSITIVE, 1e-300, 2.2250738585072e-308]);
    }
    edges.retain(|x| if lo_closed { *x >= lo } else { *x > lo } && *x <= hi);
    prop_oneof![
        4 => any::<u64>().prop_map(move |b| {
            let u = (b >> 11) as f64 / (1u64 << 53) as f64;
            let x = lo + (hi - lo) * u;
            if x > lo || lo_closed { x } else { hi }
        }),
        1 => select(edges),
    ]
    .boxed()
}

fn spec() -> BoxedStrategy<OptimizerSpec> {
    (
        select(REGISTRY.iter().map(|r| r.name).collect::<Vec<_>>()),
        real(0.0, 1e6, false),
        prop::array::uniform4(real(0.0, 0.999_999_999, true)),
        real(0.0, 1e6, true),
        any::<bool>(),
        (real(0.0, 1.0, true), real(0.0, 1e6, false), 1usize..=1000),
    )
        .prop_map(
            |(opt, lr, [beta1, beta2, momentum, alpha], eps, svd, (p, damping, root_every))| {
                OptimizerSpec {
                    optimizer: opt.into(),
                    label: None,
                    lr,
                    beta1,
                    beta2,
                    eps,
                    momentum,
                    alpha,
                    polar: if svd { Polar::Svd } else { Polar::NewtonSchulz },
                    p,
                    damping,
                    root_every,
                }
            },
        )
        .boxed()
}

/// A valid preset with every field random within its range.
fn valid_preset() -> BoxedStrategy<Preset> {
    let sizes = (1usize..=64, 1usize..=64, 1usize..=64).prop_flat_map(|(d_k, n_keys, n_values)| {
        (Just(d_k), Just(n_keys), Just(n_values), 1..=n_keys)
    });
    let text = "\\PC{0,40}";
    let demos = (
        prop::collection::vec(real(-360.0, 360.0, true), 2..=6),
        real(0.0, 2.0, true),
        real(-180.0, 180.0, true),
        prop::array::uniform2(real(-10.0, 10.0, true)),
        real(-180.0, 180.0, true),
        any::<bool>(),
        1usize..=1000,
    );
    (
        (
            text,
            text,
            sizes,
            real(0.0, 2.0, true),
            real(0.0, 1000.0, false),
        ),
        (
            1usize..=4096,
            0usize..=100_000_000,
            any::<u64>(),
            prop::option::of(real(1e-300, 100.0, true)),
        ),
        (
            1usize..=100_000_000,
            1usize..=1000,
            2usize..=100_000,
            any::<bool>(),
            any::<bool>(),
        ),
        (
            prop::collection::vec((spec(), any::<bool>()), 1..=16),
            demos,
        ),
    )
        .prop_map(
            |(
                (name, description, (d_k, n_keys, n_values, pairs), beta, gain),
                (batch, steps, seed, init_std),
                (eval_every, n_heldout, baseline_rotations, renorm, noise_twins),
                (arms, demos),
            )| {
                let mut specs: Vec<OptimizerSpec> = Vec::new();
                for (i, (mut s, labelled)) in arms.into_iter().enumerate() {
                    let taken = specs.iter().any(|o| o.arm_name() == s.optimizer);
                    if labelled || taken {
                        s.label = Some(format!("arm-{i}_x"));
                    }
                    specs.push(s);
                }
                let mut p = Preset {
                    name,
                    description,
                    d_k,
                    n_keys,
                    n_values,
                    pairs_per_episode: pairs,
                    beta,
                    gain,
                    batch,
                    steps,
                    seed,
                    init_std,
                    eval_every,
                    n_heldout,
                    baseline_rotations,
                    arms: specs,
                    column_norms: if renorm {
                        ColumnNorms::Renormalize
                    } else {
                        ColumnNorms::Free
                    },
                    noise_twins,
                    ..Preset::default()
                };
                let (angles, beta, rotation, gradient, phi, later, adam_steps) = demos;
                p.demos.key_angles_deg = angles;
                p.demos.beta = beta;
                p.demos.rotation_deg = rotation;
                p.demos.gradient = gradient;
                p.demos.phi_deg = phi;
                p.demos.later_adam = later;
                p.demos.adam_steps = adam_steps;
                p
            },
        )
        .boxed()
}

/// Every f64 of a preset, as bits.
fn float_bits(p: &Preset) -> Vec<u64> {
    let mut v = vec![p.beta, p.gain, p.init_std.unwrap_or(f64::NAN)];
    for a in &p.arms {
        v.extend([a.lr, a.beta1, a.beta2, a.eps, a.momentum, a.alpha]);
    }
    let d = &p.demos;
    v.extend(&d.key_angles_deg);
    v.extend([
        d.beta,
        d.rotation_deg,
        d.gradient[0],
        d.gradient[1],
        d.phi_deg,
    ]);
    v.iter().map(|x| x.to_bits()).collect()
}

proptest! {
    #![proptest_config(config(2000))]

    #[test]
    fn any_valid_preset_round_trips_bit_for_bit_through_text_and_a_file(p in valid_preset()) {
        prop_assert_eq!(p.validate(), Ok(()));
        let text = p.to_ron();
        let back = Preset::from_ron(&text, "saved.ron").map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(&back, &p);
        prop_assert_eq!(float_bits(&back), float_bits(&p));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.ron");
        write_atomic(&path, text.as_bytes()).unwrap();
        let loaded = Preset::load(path.to_str().unwrap()).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(float_bits(&loaded), float_bits(&p));
        prop_assert_eq!(loaded, p);
    }
}
