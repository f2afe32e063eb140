//! The optimizer workbench (issue 40): the text form and its errors, each transform's declared
//! commuting side checked against its arithmetic, the predicted class per lab, and every
//! registered rule against its chain for 100 steps in each of the three labs.

use basis_lab::attention::{AttentionPreset, RunSpec, SeedRun, TwinKind};
use basis_lab::experiment::{BASE, PairedRun, ROTATED};
use basis_lab::optim::transforms::{Action, Context, Side, TRANSFORMS};
use basis_lab::optim::{
    ChainSpec, Lab, MAX_TRANSFORMS, Optimizer, OptimizerSpec, REGISTRY, RuleInfo,
};
use basis_lab::preset::Preset;
use basis_lab::rng::{gaussian_matrix, haar_orthogonal};
use basis_lab::sensing::{SensingConfig, SensingProblem, SensingWorkspace};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

#[test]
fn the_text_form_takes_positional_named_and_default_arguments() {
    let c = ChainSpec::parse("clip_by_global_norm(1.0) | scale_by_adam(0.8, eps=1e-6)").unwrap();
    assert_eq!(c.steps.len(), 2);
    assert_eq!(c.steps[0].info.name, "clip_by_global_norm");
    assert_eq!(c.steps[0].args, vec![1.0]);
    assert_eq!(
        c.steps[1].args,
        vec![0.8, 0.999, 1e-6, 1.0],
        "b2 and p default"
    );
    // No parentheses is no arguments; flags and choices are words.
    let d = ChainSpec::parse("trace(nesterov=true)|scale_by_sign|orthogonalize(svd)").unwrap();
    assert_eq!(d.steps[0].args, vec![0.9, 1.0]);
    assert_eq!(d.steps[2].args, vec![1.0]);
    // The canonical text writes what differs from the defaults and reads back equal.
    assert_eq!(
        d.to_string(),
        "trace(nesterov=true) | scale_by_sign() | orthogonalize(method=svd)"
    );
    for c in [c, d] {
        assert_eq!(ChainSpec::parse(&c.to_string()).unwrap(), c);
    }
}

#[test]
fn errors_name_the_transform_its_index_the_argument_and_the_range() {
    let e = ChainSpec::parse("scale(2) | scale_by_adam(b1=1.5)").unwrap_err();
    assert_eq!(e.index, Some(2));
    assert_eq!(e.argument.as_deref(), Some("b1"));
    assert_eq!(
        e.message,
        "transform 2 (`scale_by_adam`): argument `b1`: `1.5` is not allowed; allowed [0, 1)"
    );
    let e = ChainSpec::parse("trace() | adamw(0.1)").unwrap_err();
    assert_eq!(e.index, Some(2));
    assert!(
        e.message
            .starts_with("transform 2: unknown transform `adamw`; known: trace, ema,")
    );
    for t in TRANSFORMS {
        assert!(e.message.contains(t.name), "{} listed", t.name);
    }
    let e = ChainSpec::parse("scale_by_shampoo(every=2.5)").unwrap_err();
    assert!(
        e.message.contains("allowed a whole number in [1, 1000000]"),
        "{e}"
    );
    let e = ChainSpec::parse("scale_by_sign(1)").unwrap_err();
    assert!(e.message.contains("takes no arguments; got 1"), "{e}");
    // Too many arguments are counted before any is read.
    let e = ChainSpec::parse("trace(0.9, 0.8, 0.7)").unwrap_err();
    assert!(
        e.message.contains("takes at most 2 arguments; got 3"),
        "{e}"
    );
    // A decimal comma is refused, not read as two arguments; `1,5` stays two.
    for (text, shown) in [
        ("scale_by_rms(0,9)", "`0,9`"),
        ("clip(max=0,01)", "`0,01`"),
        ("scale_by_adafactor(0.5, 0,8)", "`0,8`"),
    ] {
        let e = ChainSpec::parse(text).unwrap_err();
        assert!(
            e.message
                .contains(&format!("{shown} looks like a decimal comma")),
            "{e}"
        );
    }
    assert_eq!(
        ChainSpec::parse("scale_by_shampoo(1,5)")
            .unwrap()
            .to_string(),
        "scale_by_shampoo(every=5)"
    );
    assert!(ChainSpec::parse("scale_by_adam(0.9,0.99)").is_ok());
    assert!(ChainSpec::parse("scale_by_rms(0.9, 0.01)").is_ok());
    let e = ChainSpec::parse("trace() | | scale()").unwrap_err();
    assert!(e.message.starts_with("transform 2 is empty"), "{e}");
    let e = ChainSpec::parse("ema(decay=0.5, 0.4)").unwrap_err();
    assert!(
        e.message
            .contains("positional argument `0.4` after a named one"),
        "{e}"
    );
    let e = ChainSpec::parse("clip(max=1, max=2)").unwrap_err();
    assert!(e.message.contains("argument `max` is given twice"), "{e}");
    let e = ChainSpec::parse("clip(tau=1)").unwrap_err();
    assert!(
        e.message
            .contains("no argument `tau`; its arguments are max"),
        "{e}"
    );
    let e = ChainSpec::parse("orthogonalize(qr)").unwrap_err();
    assert!(e.message.contains("allowed newton_schulz or svd"), "{e}");
    let e = ChainSpec::parse("trace(0.9").unwrap_err();
    assert!(e.message.contains("must end with `)`"), "{e}");
    assert!(ChainSpec::parse("  ").is_err());
    let long = vec!["scale(1)"; MAX_TRANSFORMS + 1].join(" | ");
    let e = ChainSpec::parse(&long).unwrap_err();
    assert_eq!(
        e.message,
        "a chain has at most 16 transforms; this one has 17"
    );
    assert!(ChainSpec::parse(&vec!["scale(1)"; MAX_TRANSFORMS].join(" | ")).is_ok());
}

#[test]
fn a_preset_names_a_chain_where_it_names_a_rule_and_errors_say_where() {
    let text = "Preset(arms: [(optimizer: \"gd\", lr: 1.0), (optimizer: \"trace(0.5) | \
                normalize()\", label: \"ngd\", lr: 0.1)])";
    let p = Preset::from_ron(text, "text").unwrap();
    assert_eq!(p.arms[1].info().unwrap().name, "chain");
    assert_eq!(p.arms[1].arm_name(), "ngd");
    assert!(
        p.arms[1].equivariant(),
        "momentum and a global norm commute"
    );
    assert_eq!(Preset::from_ron(&p.to_ron(), "saved").unwrap(), p);
    // summary.json names a chain arm by its text, a registered one by its name.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.ron");
    std::fs::write(&file, p.to_ron()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_basis-lab"))
        .args(["run", file.to_str().unwrap(), "--steps", "3", "--out"])
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("out/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["arms"][0]["optimizer"], "gd");
    assert_eq!(summary["arms"][1]["optimizer"], "trace(0.5) | normalize()");
    // The printed table says what the prediction says: a chain not predicted equivariant is
    // "not guaranteed", never "coordinate-wise".
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(printed.contains("ngd          equivariant"), "{printed}");
    let rows = "Preset(arms: [(optimizer: \"normalize_rows() | trace(0.9)\", label: \"rows\", \
                lr: 0.01)])";
    let file = dir.path().join("rows.ron");
    std::fs::write(&file, Preset::from_ron(rows, "t").unwrap().to_ron()).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_basis-lab"))
        .args(["run", file.to_str().unwrap(), "--steps", "3", "--out"])
        .arg(dir.path().join("rows"))
        .output()
        .unwrap();
    let printed = String::from_utf8(out.stdout).unwrap();
    assert!(printed.contains("rows         not guaranteed"), "{printed}");
    let bad = text.replace("normalize()", "normalise()");
    let e = Preset::from_ron(&bad, "text").unwrap_err().to_string();
    assert!(e.contains("arms[1].optimizer"), "{e}");
    assert!(
        e.contains("transform 2: unknown transform `normalise`"),
        "{e}"
    );
    let e = Preset::from_ron(&text.replace("trace(0.5)", "nope"), "t").unwrap_err();
    assert!(
        e.to_string()
            .contains("chain: transform 1: unknown transform `nope`"),
        "{e}"
    );
    // A bare unknown word is an unknown optimizer, and the message offers chains too.
    let e = Preset::from_ron(&text.replace("trace(0.5) | normalize()", "adamw"), "t");
    let e = e.unwrap_err().to_string();
    assert!(
        e.contains("unknown optimizer `adamw`; allowed: gd, momentum"),
        "{e}"
    );
    assert!(e.contains("or a chain of transforms"), "{e}");
}

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// `‖T(R·u) − R·T(u)‖ / ‖T(u)‖` over four calls of transform `text` on two square matrices,
/// with fresh Gaussian u each call and the parameters rotated along (R by Haar Q per matrix).
/// Square, so that SOAP's statistics have no tied (zero) eigenvalues, whose eigenvectors are
/// arbitrary.
fn commutator(text: &str, action: Action) -> f64 {
    let spec = ChainSpec::parse(text).unwrap();
    let mut r = rng(7);
    let shapes = [(6, 6), (5, 5)];
    let params: Vec<DMatrix<f64>> = shapes
        .iter()
        .map(|&(a, b)| gaussian_matrix(&mut r, a, b, 1.0))
        .collect();
    let qs: Vec<DMatrix<f64>> = shapes
        .iter()
        .map(|&(a, b)| haar_orthogonal(&mut r, if action == Action::Left { a } else { b }))
        .collect();
    let rot = |m: &DMatrix<f64>, q: &DMatrix<f64>| match action {
        Action::Left => q * m,
        Action::Right => m * q,
    };
    let rotated: Vec<_> = params.iter().zip(&qs).map(|(w, q)| rot(w, q)).collect();
    let (mut a, mut b) = (transform_of(&spec), transform_of(&spec));
    let mut worst: f64 = 0.0;
    for _ in 0..4 {
        let mut u: Vec<DMatrix<f64>> = shapes
            .iter()
            .map(|&(x, y)| gaussian_matrix(&mut r, x, y, 0.7))
            .collect();
        let mut v: Vec<_> = u.iter().zip(&qs).map(|(m, q)| rot(m, q)).collect();
        a.apply(&mut u, &Context { params: &params });
        b.apply(&mut v, &Context { params: &rotated });
        // SOAP's first call steps nothing (both outputs 0): nothing to compare.
        for ((x, y), q) in u
            .iter()
            .zip(&v)
            .zip(&qs)
            .filter(|((x, _), _)| x.norm() > 0.0)
        {
            worst = worst.max((y - rot(x, q)).norm() / x.norm());
        }
    }
    worst
}

fn transform_of(spec: &ChainSpec) -> Box<dyn basis_lab::optim::transforms::Transform> {
    assert_eq!(spec.steps.len(), 1);
    (spec.steps[0].info.build)(&spec.steps[0].args)
}

#[test]
fn every_transform_commutes_exactly_with_the_sides_it_declares_and_no_others() {
    // Each transform at its defaults, and the argument values that change its side or path.
    let mut texts: Vec<String> = TRANSFORMS.iter().map(|t| format!("{}()", t.name)).collect();
    texts.extend(
        [
            "scale_by_adam(p=0)",
            "scale_by_adam(p=0.5)",
            "trace(nesterov=true)",
            "ema(debias=false)",
            "orthogonalize(svd)",
            "scale_by_shampoo(every=1)",
            "scale_by_soap(every=1)",
            "clip(0.3)",
        ]
        .map(String::from),
    );
    for text in texts {
        let spec = ChainSpec::parse(&text).unwrap();
        let side = (spec.steps[0].info.side)(&spec.steps[0].args);
        for action in [Action::Left, Action::Right] {
            let d = commutator(&text, action);
            if side.commutes(action) {
                assert!(
                    d < 1e-10,
                    "{text} declares {side:?} but {action:?} gives {d:e}"
                );
            } else {
                assert!(
                    d > 1e-4,
                    "{text} declares {side:?}, yet {action:?} commutes ({d:e})"
                );
            }
        }
    }
}

/// SOAP on a full-batch problem, where the second gradient can equal the first: the first call
/// only builds the bases (the update is zero), and a gradient the basis was made from lies on
/// its diagonal. Exact arithmetic leaves the off-diagonal entries of u′ zero; rounding leaves
/// about 1e-16 of the largest, which Adam's division by √v′ + ε would lift to about 1e-8 of
/// the step and make the rotated twin differ. Thresholded away, the step is the polar factor of u (each
/// σ divided by itself) and commutes with the rotation to rounding.
#[test]
fn soap_steps_nothing_first_then_a_repeated_gradient_gives_its_polar_factor_on_both_sides() {
    let spec = ChainSpec::parse("scale_by_soap()").unwrap();
    let polar = ChainSpec::parse("orthogonalize(svd)").unwrap();
    let mut r = rng(11);
    let param = vec![gaussian_matrix(&mut r, 6, 6, 1.0)];
    let g = gaussian_matrix(&mut r, 6, 6, 0.7);
    let q = haar_orthogonal(&mut r, 6);
    for (left, rot) in [(true, &q * &g), (false, &g * &q)] {
        let (mut a, mut b) = (transform_of(&spec), transform_of(&spec));
        let rotated = if left {
            vec![&q * &param[0]]
        } else {
            vec![&param[0] * &q]
        };
        let mut first = vec![g.clone()];
        a.apply(&mut first, &Context { params: &param });
        assert!(first[0].iter().all(|&x| x == 0.0), "{first:?}");
        let mut first_b = vec![rot.clone()];
        b.apply(&mut first_b, &Context { params: &rotated });
        assert!(first_b[0].iter().all(|&x| x == 0.0), "{first_b:?}");
        let (mut u, mut v) = (vec![g.clone()], vec![rot.clone()]);
        a.apply(&mut u, &Context { params: &param });
        b.apply(&mut v, &Context { params: &rotated });
        let back = if left {
            q.transpose() * &v[0]
        } else {
            &v[0] * q.transpose()
        };
        let d = (&back - &u[0]).norm() / u[0].norm();
        assert!(d < 1e-13, "left {left}: {d:e}");
        let mut p = vec![g.clone()];
        transform_of(&polar).apply(&mut p, &Context { params: &param });
        let e = (&u[0] - &p[0]).norm() / p[0].norm();
        // Each σ becomes σ/(σ + ε): off the polar factor by about ε/σ_min, below 1e-6 here.
        assert!(e < 1e-6, "left {left}: {e:e}");
    }
}

#[test]
fn the_prediction_is_equivariant_only_where_every_transform_commutes_with_the_labs_action() {
    let predicted = |text: &str| {
        let c = ChainSpec::parse(text).unwrap();
        Lab::ALL.map(|lab| c.predicted(lab.action()))
    };
    assert_eq!(predicted("trace() | orthogonalize()"), [true; 3]);
    assert_eq!(
        predicted("clip_by_global_norm(1) | scale_by_adam()"),
        [false; 3]
    );
    assert_eq!(
        predicted("clip_by_global_norm(1) | scale_by_adam(p=0)"),
        [true; 3]
    );
    // Column norms survive Q·W (key lab, attention), row norms (U, V)·Q (the gauge lab).
    assert_eq!(predicted("normalize_columns()"), [true, false, true]);
    assert_eq!(predicted("normalize_rows()"), [false, true, false]);
    let c = ChainSpec::parse("ema() | clip(0.1) | add_decayed_weights(0.01) | scale_by_sign()")
        .unwrap();
    assert_eq!(c.blocking(Action::Left), vec!["clip", "scale_by_sign"]);
    assert_eq!(Side::Left.name(), "left");
}

/// The registered rules that have a chain: all but FlowAdam's two, whose flow steps need a
/// gradient oracle no transform has.
fn chained() -> impl Iterator<Item = &'static RuleInfo> {
    let without: Vec<&str> = REGISTRY
        .iter()
        .filter(|i| i.chain.is_none())
        .map(|i| i.name)
        .collect();
    assert_eq!(without, ["flow_adam", "flow_adam_p"]);
    REGISTRY.iter().copied().filter(|i| i.chain.is_some())
}

#[test]
fn every_registered_rules_chain_has_the_rules_class_in_every_lab() {
    for info in chained() {
        let spec = OptimizerSpec::new(info.name, info.lr);
        let chain = ChainSpec::parse(&(info.chain.unwrap())(&spec)).unwrap();
        for lab in Lab::ALL {
            assert_eq!(
                chain.predicted(lab.action()),
                spec.equivariant(),
                "{} in the {} lab",
                info.name,
                lab.name()
            );
        }
    }
}

/// The registered rule of `name` and its chain as two specs of the same rate.
fn pair(name: &str, lr: f64) -> (OptimizerSpec, OptimizerSpec) {
    let spec = OptimizerSpec::new(name, lr);
    let mut chain = spec.clone();
    chain.optimizer = (spec.info().unwrap().chain.unwrap())(&spec);
    chain.label = Some("chain".into());
    (spec, chain)
}

/// Rules whose chain does the same operations in the same order. The others compute
/// `lr·(m̂/d)` where the rule computes `(lr·m̂)/d` (scalar-Adam folds `lr` into one scalar, its
/// chain is the dial at p = 0), one rounding apart per step. Measured after 100 steps: at most
/// 2e-15 relative in the key and gauge labs, 3e-15 in attention but RMSProp's 1.1e-7 (no bias
/// correction: its first steps are large and the small model amplifies the rounding).
const SAME_BITS: [&str; 7] = [
    "gd", "momentum", "sign", "muon", "lion", "signum", "shampoo",
];

/// Largest relative difference between two lists of matrices.
fn rel(a: &[DMatrix<f64>], b: &[DMatrix<f64>]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).norm() / x.norm())
        .fold(0.0, f64::max)
}

/// Checks one lab's 100-step difference: 0 for [`SAME_BITS`], else below `bound`.
fn judge(lab: &str, name: &str, d: f64, bound: f64) {
    if SAME_BITS.contains(&name) {
        assert_eq!(d, 0.0, "{name} in the {lab} lab: chain differs by {d:e}");
    } else {
        assert!(d < bound, "{name} in the {lab} lab: chain differs by {d:e}");
    }
}

#[test]
fn every_registered_rule_equals_its_chain_for_100_steps_in_the_key_lab() {
    for info in chained() {
        let (spec, chain) = pair(info.name, info.lr);
        let mut p = Preset::load("default").unwrap();
        p.arms = vec![spec, chain];
        let mut run = PairedRun::new(&p).unwrap();
        for _ in 0..100 {
            run.step();
        }
        let [a, b] = [&run.arms()[0], &run.arms()[1]];
        assert!(a.status().to_string() == "running", "{}", info.name);
        for t in [BASE, ROTATED] {
            let d = rel(
                std::slice::from_ref(a.weights(t)),
                std::slice::from_ref(b.weights(t)),
            );
            judge("key", info.name, d, 1e-14);
        }
    }
}

/// A gauge-lab run: its optimizer and factors [U, V].
type Factored = (Box<dyn Optimizer>, [DMatrix<f64>; 2]);

#[test]
fn every_registered_rule_equals_its_chain_for_100_steps_in_the_gauge_lab() {
    let cfg = SensingConfig {
        n: 12,
        rank: 2,
        ratio: 2.0,
        init: 0.3,
        tau: 0.0,
    };
    let problem = SensingProblem::new(&cfg, 3);
    for info in chained() {
        let (spec, chain) = pair(info.name, info.sensing.lr);
        let mut runs: Vec<Factored> = [spec, chain]
            .iter()
            .map(|s| {
                let (u, v) = problem.init(3);
                (s.build(), [u, v])
            })
            .collect();
        let mut ws = SensingWorkspace::new(cfg.n);
        let mut g = [DMatrix::zeros(12, 12), DMatrix::zeros(12, 12)];
        for _ in 0..100 {
            for (opt, params) in &mut runs {
                let [u, v] = &*params;
                problem.loss_and_grad(u, v, &mut g, &mut ws);
                opt.step(params, &g, info.sensing.lr);
            }
        }
        judge("gauge", info.name, rel(&runs[0].1, &runs[1].1), 1e-14);
    }
}

#[test]
fn every_registered_rule_equals_its_chain_for_100_steps_in_the_attention_lab() {
    for info in chained() {
        let (spec, chain) = pair(info.name, info.lr.min(1e-3));
        // `check`'s attention setting, 100 steps.
        let preset = AttentionPreset {
            steps: 100,
            measure_every: 50,
            runs: [spec, chain]
                .map(|rule| RunSpec {
                    rule,
                    rest: None,
                    twins: vec![TwinKind::Identity],
                })
                .to_vec(),
            ..basis_lab::experiment::check::attention_setting()
        };
        let mut run = SeedRun::new(&preset, 0).unwrap();
        while !run.finished() {
            run.step();
        }
        let result = run.finish();
        let base = |r: usize| {
            result
                .models
                .iter()
                .find(|m| m.run == r && m.twin.is_none())
        };
        let [a, b] = [base(0).unwrap(), base(1).unwrap()];
        assert_eq!(
            (a.diverged_at, b.diverged_at),
            (None, None),
            "{}",
            info.name
        );
        let d = rel(&a.final_params.mats, &b.final_params.mats);
        let bound = if info.name == "rmsprop" { 1e-6 } else { 1e-14 };
        judge("attention", info.name, d, bound);
    }
}

#[test]
fn share_strings_and_links_carry_a_chain_arm_and_a_chain_attention_rule() {
    use basis_lab::link::{page_link, parse_page_link};
    use basis_lab::share::{decode, encode};
    let mut p = Preset::load("default").unwrap();
    p.arms[1].optimizer = "clip_by_global_norm(1e+3) | scale_by_adam(b1=0.95)".into();
    p.arms[1].label = Some("clipped".into());
    let s = encode(&p);
    assert!(!s.contains(' ') && !s.contains('|'), "{s}");
    assert_eq!(decode::<Preset>(&s).unwrap(), p);
    let link = page_link("https://x/page", "test", true, &[], &s);
    let (search, hash) = link.split_once('?').unwrap().1.split_once('#').unwrap();
    let back = parse_page_link(search, hash).share.unwrap();
    assert_eq!(decode::<Preset>(&back).unwrap(), p);
    // Old share strings of registered rules read as before.
    let plain = Preset::load("default").unwrap();
    assert_eq!(decode::<Preset>(&encode(&plain)).unwrap(), plain);

    let mut a = AttentionPreset::load("attention").unwrap();
    a.runs[0].rule.optimizer = "trace(0.9) | orthogonalize()".into();
    a.runs[0].rule.label = Some("muon-chain".into());
    let s = encode(&a);
    assert_eq!(decode::<AttentionPreset>(&s).unwrap(), a);
}

/// The verdict a registered rule has in the check's settings: equivariant or basis-dependent
/// by its class.
fn class_verdict(spec: &OptimizerSpec) -> basis_lab::experiment::check::Verdict {
    use basis_lab::experiment::check::Verdict;
    if spec.equivariant() {
        Verdict::Equivariant
    } else {
        Verdict::BasisDependent
    }
}

#[test]
fn the_verdict_calls_twins_that_rise_together_chaotic_not_basis_dependent() {
    use basis_lab::experiment::check::{FLOOR, SEPARATION, Verdict};
    assert_eq!(FLOOR, 1e-7);
    assert_eq!(SEPARATION, 10.0);
    assert_eq!(Verdict::of(7e-16, 4e-12), Verdict::Equivariant);
    assert_eq!(Verdict::of(1e-7, 1e-12), Verdict::Equivariant);
    assert_eq!(Verdict::of(4e-4, 4e-12), Verdict::BasisDependent);
    // A rule that amplifies rounding (Muon where the loss barely sees the weights, SOAP without
    // ε): the gauge twin leaves the floor, but the noise twin goes as far.
    assert_eq!(Verdict::of(7.0e-2, 7.1e-2), Verdict::Chaotic);
    assert_eq!(Verdict::of(5e-6, 1e-6), Verdict::Chaotic);
    assert_eq!(Verdict::of(2e-7, 5e-8), Verdict::Inconclusive);
    assert_eq!(Verdict::of(f64::NAN, 1e-12), Verdict::Diverged);
    // A twin that blew up beside a sound run is as far as can be; a finite gauge twin under
    // the floor is equivariant whatever became of the noise twin.
    assert_eq!(Verdict::of(f64::INFINITY, 1e-12), Verdict::BasisDependent);
    assert_eq!(Verdict::of(1e-15, f64::INFINITY), Verdict::Equivariant);
    assert_eq!(Verdict::of(1e-15, f64::NAN), Verdict::Equivariant);
    assert_eq!(Verdict::of(1e-3, f64::NAN), Verdict::Inconclusive);
}

#[test]
fn check_gives_every_registered_rules_chain_the_rules_own_measured_verdict_in_every_lab() {
    use basis_lab::experiment::check::{Verdict, check_chain, twin_distances};
    let mut specs: Vec<OptimizerSpec> = REGISTRY
        .iter()
        .filter(|i| i.chain.is_some())
        .map(|i| OptimizerSpec::new(i.name, i.lr))
        .collect();
    let mut dial0 = OptimizerSpec::new("dial", 0.01);
    dial0.p = 0.0;
    specs.push(dial0);
    for spec in specs {
        let text = spec.info().unwrap().chain.unwrap()(&spec);
        let c = check_chain(&text).unwrap();
        // The registered rule itself, in the same settings.
        let rule = twin_distances(&spec);
        let want = class_verdict(&spec);
        for (l, &(g, n)) in c.labs.iter().zip(&rule) {
            let own = Verdict::of(g, n);
            let what = format!(
                "{} in the {} lab: {l:?}, rule ({g:e}, {n:e})",
                spec.optimizer, l.lab
            );
            assert_eq!(own, want, "{what}");
            assert_eq!(l.verdict, want, "{what}");
            assert!(l.agrees, "{what}");
            if want == Verdict::Equivariant {
                // Rounding: GD's, Muon's and Shampoo's twins stay within a few ulps of ‖W‖.
                assert!(l.gauge_distance < 1e-13 && g < 1e-13, "{what}");
            } else {
                assert!(l.gauge_distance > 1e-3 && g > 1e-3, "{what}");
                assert!(l.noise_distance < 1e-10, "{what}");
            }
        }
        assert_eq!(check_chain(&text).unwrap(), c, "same chain, same bits");
    }
    // A registered rule with hyperparameters checks its chain at them; a wrong one is named.
    let with = check_chain("muon(momentum=0.5)").unwrap();
    assert_eq!(with.name.as_deref(), Some("muon"));
    assert_eq!(with.chain, "trace(decay=0.5) | orthogonalize()");
    assert_eq!(
        check_chain("adam(eps=1e-3)").unwrap().chain,
        "scale_by_adam(eps=0.001)"
    );
    let e = check_chain("adam(tau=1)").unwrap_err().to_string();
    assert!(e.contains("adam: no argument `tau`"), "{e}");
    // A registered rule's name checks its chain.
    let by_name = check_chain("adam").unwrap();
    assert_eq!(by_name.name.as_deref(), Some("adam"));
    assert_eq!(by_name.chain, check_chain("scale_by_adam()").unwrap().chain);
    assert_eq!(
        by_name.labs,
        check_chain("scale_by_adam()").unwrap().labs,
        "same chain, same bits"
    );
}

#[test]
fn bundled_chains_measure_what_they_predict_in_every_lab() {
    use basis_lab::experiment::check::{Verdict, check_chain, disagreements};
    use basis_lab::optim::BUNDLED_CHAINS;
    assert!(
        BUNDLED_CHAINS.iter().all(|b| !b.0.contains("nadam")),
        "left out"
    );
    for &(name, _, _) in BUNDLED_CHAINS {
        let c = check_chain(name).unwrap();
        assert_eq!(c.name.as_deref(), Some(name));
        for l in &c.labs {
            if name == "soap" {
                // Its statistics' null spaces share one second moment and entries at rounding
                // size are thresholded away, so neither the eigensolver's basis nor rounding is divided
                // by ε; its eigenvectors still carry rounding over the eigenvalue gaps.
                assert_eq!(l.verdict, Verdict::Equivariant, "{l:?}");
                assert!(l.gauge_distance < 1e-8, "{l:?}");
            } else if l.predicted_equivariant {
                assert_eq!(l.verdict, Verdict::Equivariant, "{name}: {l:?}");
                assert!(l.gauge_distance < 1e-13, "{name}: {l:?}");
            } else {
                assert_eq!(l.verdict, Verdict::BasisDependent, "{name}: {l:?}");
                // GD's per-coordinate clip separates least: 8e-6 in attention, noise 1e-13.
                assert!(l.gauge_distance > 1e-6, "{name}: {l:?}");
                assert!(l.gauge_distance > 1e6 * l.noise_distance, "{name}: {l:?}");
            }
        }
        assert!(disagreements(&c).is_none(), "{name}");
    }
}

#[test]
fn check_reads_never_seen_chains_by_their_side() {
    use basis_lab::experiment::check::{Verdict, check_chain};
    let sides = |text: &str| {
        let c = check_chain(text).unwrap();
        assert!(c.labs.iter().all(|l| l.agrees), "{c:?}");
        c.labs
            .iter()
            .map(|l| (l.predicted_equivariant, l.verdict))
            .collect::<Vec<_>>()
    };
    use Verdict::{BasisDependent as B, Equivariant as E};
    // Column norms are seen only by the gauge lab (which acts from the right), row norms only by
    // the key lab and attention (from the left).
    assert_eq!(
        sides("trace(0.5) | normalize_columns() | scale(0.5)"),
        vec![(true, E), (false, B), (true, E)]
    );
    assert_eq!(
        sides("normalize_rows() | trace(0.9)"),
        vec![(false, B), (true, E), (false, B)]
    );
    // A per-matrix clip of Muon's direction with decoupled decay: equivariant everywhere.
    assert_eq!(
        sides(
            "trace(0.95, nesterov=true) | orthogonalize(svd) | clip_by_block_norm(0.5) | add_decayed_weights(0.1)"
        ),
        vec![(true, E); 3]
    );
    let c = check_chain("normalize_rows() | trace(0.9)").unwrap();
    assert_eq!(c.labs[0].not_commuting, vec!["normalize_rows"]);
    assert!(c.labs[1].gauge_distance < 1e-13 && c.labs[0].gauge_distance > 1e-2);
}

#[test]
fn the_check_command_prints_a_table_writes_json_and_fails_on_a_disagreement() {
    use basis_lab::experiment::check::check_chain;
    use std::process::Command;
    let bin = env!("CARGO_BIN_EXE_basis-lab");
    let text = "normalize_rows() | trace(0.9)";
    let out = Command::new(bin).args(["check", text]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(
        table.contains("chain: normalize_rows() | trace()"),
        "{table}"
    );
    assert_eq!(table.matches("basis-dependent").count(), 3, "{table}");
    assert!(
        table.contains("yes (not commuting: normalize_rows)"),
        "{table}"
    );

    let out = Command::new(bin)
        .args(["check", text, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = check_chain(text).unwrap();
    assert_eq!(json, serde_json::to_value(&c).unwrap());
    assert_eq!(json["labs"][1]["verdict"], "equivariant");
    assert_eq!(json["labs"][0]["verdict"], "basis_dependent");
    assert_eq!(
        json["labs"][0]["gauge_distance"].as_f64().unwrap(),
        c.labs[0].gauge_distance,
        "the same bits"
    );

    // SOAP without ε divides rounding by rounding in attention: predicted equivariant, measured
    // chaotic; printed, then an error.
    let out = Command::new(bin)
        .args(["check", "scale_by_soap(eps=0)"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("NO: predicted equivariant, measured chaotic"),
        "{stdout}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("prediction and measurement disagree"),
        "{stderr}"
    );

    // A chain whose runs diverge measures nothing and contradicts nothing, and says so.
    let out = Command::new(bin)
        .args(["check", "--json", "orthogonalize() | scale(1e6)"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["labs"][1]["verdict"], "diverged", "{json}");
    let out = Command::new(bin)
        .args(["check", "orthogonalize() | scale(1e6)"])
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("nothing measured: a run diverged"),
        "{stdout}"
    );

    let out = Command::new(bin)
        .args(["check", "--bundled"])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        md.lines().count(),
        2 + basis_lab::optim::BUNDLED_CHAINS.len(),
        "{md}"
    );
    assert!(
        md.contains("| gd_coordinate_clip | `clip(max=0.001)` |"),
        "{md}"
    );

    let out = Command::new(bin)
        .args(["check", "scale_by_adam() |"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("transform 2")
    );
}

/// Section 10's criterion as a tool (issue 41 item 4): FlowAdam is checked as a registered rule
/// (no chain expresses its flow steps), predicted from its registered class. At the paper's
/// settings flow steps fire in all three labs' short runs (each lab provides an oracle), so
/// FlowAdam's distances are not Adam's; its per-coordinate clip separates the twins, FlowAdam-p
/// at p = 0 (global-norm clip, shared scale) stays at the rounding floor in every lab, at p = 1
/// it separates.
#[test]
fn check_measures_flow_adam_by_name_with_its_hyperparameters() {
    use basis_lab::experiment::check::{Verdict, check_chain, disagreements};
    let coordinate = check_chain("flow_adam").unwrap();
    assert_eq!(coordinate.chain, "flow_adam");
    let adam = check_chain("adam").unwrap();
    for (f, a) in coordinate.labs.iter().zip(&adam.labs) {
        let apart = (f.gauge_distance - a.gauge_distance).abs() / a.gauge_distance;
        assert!(
            apart > 0.1,
            "flow steps change the run: {f:?} against Adam's {a:?}"
        );
    }
    for l in &coordinate.labs {
        assert!(
            !l.predicted_equivariant && l.not_commuting == ["flow_adam"],
            "{l:?}"
        );
        assert_eq!(l.verdict, Verdict::BasisDependent, "{l:?}");
    }
    let repaired = check_chain("flow_adam_p(p=0)").unwrap();
    assert_eq!(repaired.chain, "flow_adam_p(p=0)");
    assert_eq!(disagreements(&repaired), None);
    for l in &repaired.labs {
        assert!(l.predicted_equivariant, "{l:?}");
        assert_eq!(l.verdict, Verdict::Equivariant, "{l:?}");
        assert!(l.gauge_distance < 1e-10, "{l:?}");
    }
    let adam_root = check_chain("flow_adam_p(p=1)").unwrap();
    assert!(
        adam_root
            .labs
            .iter()
            .all(|l| !l.predicted_equivariant && l.verdict == Verdict::BasisDependent)
    );
    for (text, want) in [
        (
            "flow_adam_p(q=0)",
            "flow_adam_p: no argument `q` (it takes p, beta1, beta2, eps)",
        ),
        ("flow_adam_p(p=2)", "flow_adam_p: p = 2 is outside"),
        ("flow_adam_p(p=0", "parenthesis is not closed"),
        ("flow_adam_p(p=x)", "p = `x` is not a number"),
    ] {
        let e = check_chain(text).unwrap_err().to_string();
        assert!(e.contains(want), "{text}: {e}");
    }
}
