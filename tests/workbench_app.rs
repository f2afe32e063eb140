//! The "Your optimizer" section driven as a user would (egui_kittest, no display): found in the
//! navigation, a chain edited with the palette, moves and removal, its prediction following
//! each edit, a refused argument named with its range, a check run in the background whose
//! verdicts are `basis-lab check`'s, the chain handed to the controlled test, the gauge lab's
//! zoo and live runs and the attention twins, and a link carrying a chain.

mod common;

use basis_lab::app::panel::Panel;
use basis_lab::app::panels::attention::AttentionTwins;
use basis_lab::app::panels::gauge_lab::{LiveRuns, SweepTab};
use basis_lab::app::panels::workbench::Workbench;
use basis_lab::app::{AppState, Settings};
use basis_lab::experiment::check::{Verdict, check_chain};
use basis_lab::preset::Preset;
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

use common::app::{State, app, harness_sized, wait_for};

/// The app at the classroom preset in a 1280 × 900 window.
fn harness() -> Harness<'static, State> {
    let s = Settings {
        preset: Preset::load("classroom").unwrap(),
        speed: Some(1.0),
        ..Settings::default()
    };
    harness_sized(s, egui::vec2(1280.0, 900.0), |_| {})
}

fn bench<'a>(h: &'a Harness<'static, State>) -> &'a Workbench {
    app(h).panel::<Workbench>("optimizer").unwrap()
}

/// How many labels read exactly `text`.
fn count(h: &Harness<'static, State>, text: &str) -> usize {
    h.query_all_by_label(text).count()
}

#[test]
fn a_chain_is_edited_predicted_checked_and_handed_to_the_labs() {
    let mut h = harness();
    h.run_steps(2);
    h.get_by_label("Your optimizer").click();
    h.run_steps(3);
    assert_eq!(app(&h).view_path(), "optimizer");
    let text = |h: &Harness<'static, State>| bench(h).chain_text().unwrap();
    assert_eq!(text(&h), "clip_by_global_norm() | scale_by_adam()");
    // Adam's per-entry root blocks the prediction in all three labs.
    assert_eq!(count(&h, "not guaranteed"), 3);
    assert_eq!(
        count(&h, "scale_by_adam"),
        4,
        "the row and three labs' blockers"
    );

    // Remove Adam: the global-norm clip alone commutes with every action.
    h.get_all_by_label("Remove").nth(1).unwrap().click();
    h.run_steps(3);
    assert_eq!(text(&h), "clip_by_global_norm()");
    assert_eq!(count(&h, "not guaranteed"), 0);
    assert_eq!(count(&h, "equivariant"), 3);

    // The palette's first transform (trace) at its defaults, then moved to the front.
    h.get_by_label("Add transform").click();
    h.run_steps(3);
    assert_eq!(text(&h), "clip_by_global_norm() | trace()");
    h.get_all_by_label("↑").nth(1).unwrap().click();
    h.run_steps(3);
    assert_eq!(text(&h), "trace() | clip_by_global_norm()");

    // A value out of its range: the error names the transform, its place, the argument and
    // the range, and the prediction and Check wait until it is fixed.
    h.get_by_label("decay").click();
    h.run_steps(2);
    h.get_by_label("decay").type_text("e3");
    h.run_steps(3);
    assert_eq!(bench(&h).chain_text(), None);
    let error = bench(&h).spec().unwrap_err();
    assert_eq!(
        error,
        "transform 1 (`trace`): argument `decay`: `0.9e3` is not allowed; allowed [0, 1)"
    );
    assert_eq!(count(&h, &format!("The chain does not parse: {error}")), 1);
    assert_eq!(count(&h, "equivariant"), 0);
    // A value cannot splice a transform into the chain: the text form's punctuation is refused.
    h.get_by_label("decay").type_text(") | scale_by_sign(");
    h.run_steps(3);
    assert_eq!(
        bench(&h).spec().unwrap_err(),
        "transform 1 (`trace`): argument `decay`: `0.9e3) | scale_by_sign(` is not allowed; \
         allowed [0, 1)"
    );

    // A whole chain typed on the line replaces the rows.
    let wanted = "clip(0.01) | scale_by_adam()";
    h.state_mut()
        .as_mut()
        .unwrap()
        .set_from_link("chain", wanted)
        .unwrap();
    h.run_steps(3);
    assert_eq!(text(&h), "clip(max=0.01) | scale_by_adam()");

    // Check: in the background, then the table of `basis-lab check`'s verdicts.
    h.get_by_label("Check").click();
    h.run_steps(1);
    assert!(bench(&h).analysis.is_running());
    wait_for(&mut h, "the check", |a| {
        let b = a.panel::<Workbench>("optimizer").unwrap();
        b.analysis.last.is_some() && !b.analysis.is_running()
    });
    h.run_steps(2);
    let got = bench(&h).analysis.last.clone().unwrap();
    assert_eq!(
        got.result,
        check_chain(wanted).unwrap(),
        "the command's bits"
    );
    assert!(
        got.result
            .labs
            .iter()
            .all(|l| l.verdict == Verdict::BasisDependent)
    );
    assert_eq!(count(&h, "basis-dependent"), 3);
    assert_eq!(bench(&h).table().unwrap().0, "check.csv");

    // Use as an arm: the key lab's preset gets it at the check's rate, named `chain`.
    let arms = app(&h).lab.preset.arms.len();
    h.get_by_label("an arm of the controlled test").click();
    h.run_steps(3);
    let a = app(&h);
    assert_eq!(a.lab.preset.arms.len(), arms + 1);
    let arm = a.lab.preset.arms.last().unwrap();
    assert_eq!(arm.optimizer, "clip(max=0.01) | scale_by_adam()");
    assert_eq!((arm.arm_name(), arm.lr), ("chain", 0.01));
    let notice = a.lab.notice.clone().unwrap();
    assert!(
        !notice.error && notice.text.contains("Added the arm `chain`"),
        "{}",
        notice.text
    );
    // Twice: a second name, never a clash.
    h.get_by_label("an arm of the controlled test").click();
    h.run_steps(3);
    assert_eq!(
        app(&h).lab.preset.arms.last().unwrap().arm_name(),
        "chain-2"
    );

    // Use as an attention run: the attention twins' preset gets it with both twins.
    let runs = app(&h)
        .panel::<AttentionTwins>("attention")
        .unwrap()
        .preset()
        .runs
        .len();
    h.get_by_label("a run of the attention twins").click();
    h.run_steps(3);
    let a = app(&h);
    let preset = a.panel::<AttentionTwins>("attention").unwrap().preset();
    assert_eq!(preset.runs.len(), runs + 1);
    let run = preset.runs.last().unwrap();
    assert_eq!(run.rule.optimizer, "clip(max=0.01) | scale_by_adam()");
    assert_eq!(run.name(), "chain");
    assert_eq!(run.twins.len(), 2);
    let notice = a.lab.notice.clone().unwrap();
    assert!(
        !notice.error && notice.text.contains("Added the run `chain`"),
        "{}",
        notice.text
    );

    // At most 16 transforms: the palette's button stops adding there.
    let a = h.state_mut().as_mut().unwrap();
    a.set_from_link("chain", "trace()").unwrap();
    for _ in 0..16 {
        h.run_steps(2);
        h.get_by_label("Add transform").click();
    }
    h.run_steps(3);
    let text = text(&h);
    assert_eq!(text.matches("trace()").count(), 16, "{text}");
}

#[test]
fn a_chain_handed_to_the_gauge_lab_joins_its_zoo_and_live_runs() {
    let mut h = harness();
    h.run_steps(2);
    h.get_by_label("Your optimizer").click();
    h.run_steps(3);
    let a = h.state_mut().as_mut().unwrap();
    a.set_from_link("chain", "normalize_rows() | trace(0.9)")
        .unwrap();
    h.run_steps(3);
    let zoo = |h: &Harness<'static, State>| app(h).panel::<SweepTab>("gauge/zoo").unwrap().preset();
    let live = |h: &Harness<'static, State>| {
        let rules = &app(h)
            .panel::<LiveRuns>("gauge/live")
            .unwrap()
            .settings
            .rules;
        rules.iter().map(|r| r.name()).collect::<Vec<_>>()
    };
    let before = zoo(&h);
    assert_eq!((before.name.as_str(), before.rules.len()), ("zoo-paper", 9));
    assert_eq!(live(&h), ["gd", "adam", "muon", "scalar_adam"]);

    let chain = "normalize_rows() | trace()";
    for _ in 0..2 {
        // Twice: the second finds it there and adds nothing.
        h.get_by_label("a rule of the gauge lab").click();
        h.run_steps(3);
        let p = zoo(&h);
        assert_eq!(p.rules.len(), 10);
        let rule = *p.rules.last().unwrap();
        assert_eq!(rule.name(), chain);
        assert!(rule.equivariant(), "rows commute with the right action");
        assert_eq!(p.rates_for(rule), [1e-3]);
        assert_eq!(p.rules[..9], before.rules[..]);
        assert_eq!(live(&h), ["gd", "adam", "muon", "scalar_adam", chain]);
        let notice = app(&h).lab.notice.clone().unwrap();
        assert_eq!(
            notice.text,
            "Added your chain to the gauge lab at lr 1e-3: to the zoo's preset `zoo-paper` \
             (Optimizer zoo, Run) and to the live runs (Live runs and twins, Run live)."
        );
        assert!(!notice.error);
    }

    // The zoo tab says which preset it runs and with which chain.
    let a = h.state_mut().as_mut().unwrap();
    assert!(a.open_tab("gauge", "zoo"));
    h.run_steps(3);
    h.get_by_label_contains(&format!(
        "Runs the preset `zoo-paper` with the chain `{chain}`: "
    ));
    assert_eq!(
        count(&h, "33 runs"),
        1,
        "ten rules × 3 seeds, and 3 convex references"
    );

    // The live tab offers it beside the registered rules, ticked; unticked it stays offered.
    let a = h.state_mut().as_mut().unwrap();
    assert!(a.open_tab("gauge", "live"));
    h.run_steps(3);
    h.get_by_label(chain).click();
    h.run_steps(3);
    assert_eq!(live(&h), ["gd", "adam", "muon", "scalar_adam"]);
    h.get_by_label(chain).click();
    h.run_steps(3);
    assert_eq!(live(&h), ["gd", "adam", "muon", "scalar_adam", chain]);

    // Its link round-trips the chain, commas inside a chain's parentheses included, through
    // the page's link escaping.
    let a = h.state_mut().as_mut().unwrap();
    let commas = "clip(max=0.5) | scale_by_adam(b1=0.8, b2=0.99)";
    a.set_from_link("rules", &format!("muon, gd,{commas}"))
        .unwrap();
    let settings = a.view().link_settings();
    let rules = format!("gd,muon,{commas}");
    assert_eq!(settings[0], ("rules", rules.clone()));
    let link = basis_lab::link::page_link("https://x/", "gauge/live", false, &settings, "");
    let back = basis_lab::link::parse_page_link(link.split_once('?').unwrap().1, "");
    assert_eq!(back.settings[0], ("rules".to_string(), rules.clone()));
    a.set_from_link("rules", &back.settings[0].1).unwrap();
    assert_eq!(a.view().link_settings()[0], ("rules", rules));
    // A chain of one transform may leave out its parentheses; a chain is run once.
    a.set_from_link("rules", "normalize,gd,normalize()")
        .unwrap();
    assert_eq!(
        a.view().link_settings()[0],
        ("rules", "gd,normalize()".into())
    );
    let e = a.set_from_link("rules", "gd,trace(2)").unwrap_err();
    assert_eq!(
        e,
        "`rules`: chain `trace(2)`: transform 1 (`trace`): argument `decay`: `2` is not \
         allowed; allowed [0, 1)"
    );
}

#[test]
fn a_link_opens_the_chain_and_a_bad_one_is_refused_by_name() {
    let ctx = egui::Context::default();
    let mut a = AppState::new(
        &ctx,
        Settings {
            preset: Preset::load("classroom").unwrap(),
            ..Settings::default()
        },
    );
    assert!(a.open_section("optimizer"));
    assert_eq!(
        a.set_from_link("chain", "lamb"),
        Ok(true),
        "a bundled chain"
    );
    let lamb = "scale_by_adam(eps=1e-6) | add_decayed_weights(wd=0.01) | scale_by_trust_ratio()";
    assert_eq!(a.view().link_settings(), vec![("chain", lamb.to_string())]);
    let refused = a.set_from_link("chain", "trace(2)").unwrap_err();
    assert_eq!(
        refused,
        "transform 1 (`trace`): argument `decay`: `2` is not allowed; allowed [0, 1)"
    );
    let refused = a.set_from_link("chain", "flow_adam").unwrap_err();
    assert!(
        refused.starts_with("`flow_adam` is a registered rule"),
        "{refused}"
    );
    assert_eq!(
        a.view().link_settings(),
        vec![("chain", lamb.to_string())],
        "a refused chain changes nothing"
    );
    assert_eq!(a.set_from_link("utm_source", "mail"), Ok(false));
}

/// A saved chain that no longer parses is reset to the default with a notice naming it, and a
/// saved check is kept.
#[test]
fn a_damaged_saved_chain_is_reset_with_a_notice() {
    use basis_lab::app::analysis::{Analysis, Finished};
    let check = check_chain("normalize()").unwrap();
    let mut analysis: Analysis<String, basis_lab::experiment::check::ChainCheck> =
        Analysis::default();
    analysis.last = Some(Finished {
        inputs: "normalize()".into(),
        result: check.clone(),
    });
    let mut s = Settings {
        preset: Preset::load("classroom").unwrap(),
        ..Settings::default()
    };
    let saved = format!(
        "(chain: \"trace(decay=1.5)\", analysis: {})",
        ron::to_string(&analysis).unwrap()
    );
    s.panels.insert("optimizer".into(), saved);
    let a = AppState::new(&egui::Context::default(), s);
    let notice = a.lab.notice.clone().unwrap();
    assert!(notice.error, "{}", notice.text);
    assert!(
        notice.text.contains(
            "optimizer: the saved chain was reset (transform 1 (`trace`): argument `decay`: \
             `1.5` is not allowed; allowed [0, 1))"
        ),
        "{}",
        notice.text
    );
    let b = a.panel::<Workbench>("optimizer").unwrap();
    assert_eq!(
        b.chain_text().unwrap(),
        "clip_by_global_norm() | scale_by_adam()"
    );
    assert_eq!(b.analysis.last.as_ref().unwrap().result, check);
}

/// A Web Worker's check (the task through its RON text, as the page runs it) gives the
/// command's check, every bit included, with one progress call per lab.
#[test]
fn the_check_through_text_is_the_command_s() {
    use basis_lab::experiment::check::ChainCheck;
    use basis_lab::experiment::check::CheckTask;
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let progress = || {
        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    let input = ron::to_string(&CheckTask("lars".into())).unwrap();
    let text = basis_lab::tasks::run("check", &input, &progress).unwrap();
    assert_eq!(calls.into_inner(), 3);
    let back: Result<ChainCheck, basis_lab::live::Stop> = ron::from_str(&text).unwrap();
    let back = back.unwrap();
    assert_eq!(back, check_chain("lars").unwrap());
    assert_eq!(back.name.as_deref(), Some("lars"));
    assert!(back.labs.iter().all(|l| l.verdict == Verdict::Equivariant));
    // A chain that does not parse fails with the parser's message.
    let bad = ron::to_string(&CheckTask("trace(2)".into())).unwrap();
    let text = basis_lab::tasks::run("check", &bad, &|| {}).unwrap();
    let back: Result<ChainCheck, basis_lab::live::Stop> = ron::from_str(&text).unwrap();
    assert_eq!(
        back,
        Err(basis_lab::live::Stop::Failed(
            "transform 1 (`trace`): argument `decay`: `2` is not allowed; allowed [0, 1)".into()
        ))
    );
}
