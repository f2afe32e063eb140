//! The desktop UI driven as a user would (egui_kittest: no display needed): play, step,
//! reset, a bad preset, a crashed worker, a sweep, and saving and reopening a preset.

mod common;

use std::time::Duration;

use basis_lab::app::panel::Panel;
use basis_lab::app::panels::controlled_test::{
    ControlledTest, DkSweep, EpsSweep, Live, Matched, SeedSweep,
};
use basis_lab::app::panels::gauge_lab::{LiveRuns, SweepTab};
use basis_lab::app::{AppState, Settings};
use basis_lab::experiment::live::Command;
use basis_lab::preset::Preset;
use basis_lab::sensing::live::LivePlot;
use basis_lab::sensing::zoo::RunResult;
use common::app::{State, app, harness_sized, wait_for};
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};

/// The zoo rule of registry entry `name`.
fn rule(name: &str) -> basis_lab::sensing::zoo::Rule {
    basis_lab::sensing::zoo::Rule::named(name).expect("a registered rule")
}

fn settings(preset: &str) -> Settings {
    Settings {
        preset: Preset::load(preset).unwrap(),
        speed: None,
        ..Settings::default()
    }
}

fn harness(s: Settings) -> Harness<'static, State> {
    harness_with(s, |_| {})
}

/// [`harness_sized`] at desk size (1920 × 1200).
fn harness_with(s: Settings, setup: fn(&mut AppState)) -> Harness<'static, State> {
    harness_sized(s, egui::vec2(1920.0, 1200.0), setup)
}

/// The panel of type `P` at `path` (`test/eps`).
fn panel<'a, P: Panel>(h: &'a Harness<'static, State>, path: &str) -> &'a P {
    app(h).panel::<P>(path).expect("a panel of that type there")
}

/// Whether the seed sweep tab holds a result.
fn seed_sweep_done(a: &AppState) -> bool {
    a.panel::<SeedSweep>("test/sweep")
        .unwrap()
        .analysis
        .last
        .is_some()
}

#[test]
fn play_runs_steps_and_fills_the_plots_then_reset_returns_to_zero() {
    let mut h = harness(settings("classroom"));
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    assert_eq!(app(&h).lab.history.step, 0);
    h.get_by_label("▶ Play").click();
    wait_for(&mut h, "200 steps", |a| a.lab.history.step >= 200);
    let a = app(&h);
    assert!(
        a.lab.history.records_received >= 2 * 200,
        "two arms report every step"
    );
    for arm in &a.lab.history.arms {
        assert!(arm.orientation_div.len() > 50, "plot data grows");
        assert!(arm.heldout.is_some());
    }
    let gd = &a.lab.history.arms[0];
    assert!(
        gd.latest.unwrap().orientation_div < 1e-13,
        "GD twins at float noise"
    );
    let adam = &a.lab.history.arms[1];
    assert!(
        adam.latest.unwrap().orientation_div > 1e-3,
        "Adam twins drift"
    );
    // The classroom budget is 600 steps: the run pauses there by itself.
    wait_for(&mut h, "the step budget", |a| {
        !a.lab.history.running && a.lab.history.step == 600
    });
    assert!(
        app(&h)
            .lab
            .history
            .stopped
            .as_deref()
            .unwrap()
            .contains("budget")
    );
    h.get_by_label_contains("step 600 / 600");
    h.get_by_label("⟲ Reset").click();
    wait_for(&mut h, "reset to step 0", |a| {
        a.lab.history.step == 0 && a.lab.history.records_received == 0
    });
    // Only the snapshot of the fresh W0 remains.
    assert!(app(&h).lab.history.arms[0].orientation_div.len() <= 1);
}

#[test]
fn keyboard_steps_and_plays() {
    let mut s = settings("classroom");
    s.speed = Some(100.0);
    let mut h = harness(s);
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    h.key_press(egui::Key::Period);
    wait_for(&mut h, "one step", |a| a.lab.history.step == 1);
    h.key_press(egui::Key::Space);
    wait_for(&mut h, "running", |a| a.lab.history.step > 20);
    h.key_press(egui::Key::Space);
    wait_for(&mut h, "paused", |a| !a.lab.history.running);
    let paused_at = app(&h).lab.history.step;
    assert!(paused_at < 600, "paused by the key, not by the budget");
    assert!(app(&h).lab.history.stopped.is_none());
    for _ in 0..20 {
        h.step();
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        app(&h).lab.history.step,
        paused_at,
        "a paused run stays put"
    );
    h.key_press(egui::Key::R);
    wait_for(&mut h, "reset", |a| a.lab.history.step == 0);
}

/// With the keyboard on the section list (a teacher tabbed there), the run's keys still work
/// and Space does not open the focused section.
#[test]
fn the_run_keys_work_while_the_section_list_has_focus() {
    let mut s = settings("classroom");
    s.speed = Some(100.0);
    let mut h = harness(s);
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    h.get_by_label("Gauge lab").focus();
    h.step();
    h.key_press(egui::Key::Space);
    wait_for(&mut h, "running", |a| a.lab.history.step > 20);
    assert_eq!(app(&h).view_path(), "test/live", "Space opened no section");
    h.key_press(egui::Key::Space);
    wait_for(&mut h, "paused", |a| !a.lab.history.running);
    h.key_press(egui::Key::R);
    wait_for(&mut h, "reset", |a| a.lab.history.step == 0);
    assert_eq!(app(&h).view_path(), "test/live");
}

#[test]
fn a_bad_pasted_preset_shows_its_error_and_changes_nothing() {
    let mut h = harness(settings("classroom"));
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    let before = app(&h).lab.preset.clone();
    h.get_by_label("File").click();
    h.run_steps(3);
    h.get_by_label("Paste preset…").click();
    h.run_steps(2);
    h.get_by_label("Preset text").focus();
    h.step();
    h.get_by_label("Preset text")
        .type_text("Preset(\n  beta: 9.0,\n)");
    h.step();
    h.get_by_label("Load preset").click();
    h.step();
    h.step();
    let notice = app(&h).lab.notice.clone().expect("an error notice");
    assert!(notice.error);
    assert!(
        notice.text.contains("pasted text:2:3") && notice.text.contains("`beta`"),
        "{}",
        notice.text
    );
    h.get_by_label_contains("Preset not loaded");
    assert_eq!(app(&h).lab.preset, before);
    assert!(
        app(&h).paste_text.is_some(),
        "the window stays open to fix the text"
    );
}

#[test]
fn a_crashed_worker_is_reported_and_can_be_restarted() {
    let mut h = harness(settings("classroom"));
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    h.get_by_label("Step").click();
    wait_for(&mut h, "one step", |a| a.lab.history.step == 1);
    app(&h).lab.send(Command::InjectPanic);
    wait_for(&mut h, "the crash banner", |a| a.lab.crashed.is_some());
    h.get_by_label_contains("The training worker crashed");
    h.get_by_label("Restart worker").click();
    wait_for(&mut h, "a fresh worker at step 0", |a| {
        a.lab.crashed.is_none() && a.lab.history.step == 0 && a.lab.history.preset.is_some()
    });
    h.run_steps(2);
    h.get_by_label("Step").click();
    wait_for(&mut h, "a step after restart", |a| a.lab.history.step == 1);
}

#[test]
fn a_sweep_runs_in_the_background_and_reports_every_arm() {
    let mut s = settings("classroom");
    s.preset.steps = 80;
    s.preset.baseline_rotations = 32;
    let mut h = harness_with(s, |a| {
        a.open_tab("test", "sweep");
        a.panel_mut::<SeedSweep>("test/sweep").unwrap().0.seeds = 4;
    });
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    // Before the first sweep on this computer, a short trial run gives the estimate.
    h.step();
    h.get_by_label_contains("here (from a short trial run)");
    assert!(panel::<SeedSweep>(&h, "test/sweep").analysis.pace.is_none());
    h.get_by_label("Run sweep").click();
    let done = seed_sweep_done;
    wait_for(&mut h, "the sweep result", done);
    let sweep = panel::<SeedSweep>(&h, "test/sweep");
    let r = sweep.analysis.last.clone().unwrap().result;
    assert_eq!(r.seeds, vec![0, 1, 2, 3]);
    assert_eq!(r.aggregate.len(), 2);
    assert!(r.aggregate.iter().all(|a| a.seeds_ok == 4));
    // The next sweep's estimate comes from this one's pace: 4 seeds × 80 steps × 2 arms.
    let pace = sweep
        .analysis
        .pace
        .expect("a finished sweep records its pace");
    assert!(pace > 0.0 && pace < 0.1, "{pace} s per step and arm");
    h.step();
    h.get_by_label_contains("gd: mean excess");
    h.get_by_label_contains("adam: mean excess");
    h.get_by_label_contains("here (the last run's pace)");
}

#[test]
fn a_saved_preset_reopens_identically_and_edits_restart_the_run() {
    let mut h = harness(settings("classroom"));
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.ron");
    let mut edited = app(&h).lab.preset.clone();
    edited.beta = 0.75;
    edited.arms[1].eps = 1e-3;
    let a = h.state_mut().as_mut().unwrap();
    assert!(a.lab.apply_preset(edited.clone()));
    assert!(a.lab.save_preset_file(&path));
    wait_for(&mut h, "the edited run", |a| {
        a.lab
            .history
            .preset
            .as_ref()
            .is_some_and(|p| p.beta == 0.75)
    });
    let a = h.state_mut().as_mut().unwrap();
    assert!(
        a.lab
            .load_preset_text(basis_lab::preset::BUNDLED[1].1, "bundled")
    );
    assert!(a.lab.load_preset_file(&path));
    assert_eq!(a.lab.preset, edited);
    let bad = dir.path().join("bad.ron");
    std::fs::write(&bad, "Preset(d_k: 0)").unwrap();
    assert!(!a.lab.load_preset_file(&bad));
    assert_eq!(a.lab.preset, edited, "a bad file changes nothing");
    assert!(a.lab.notice.as_ref().unwrap().text.contains("`d_k`"));
}

#[test]
fn opening_each_bundled_preset_changes_nothing_by_itself() {
    for (name, _) in basis_lab::preset::BUNDLED {
        let s = settings(name);
        let original = s.preset.clone();
        let mut h = harness(s);
        wait_for(&mut h, "the first snapshot", |a| a.lab.snapshot_serial >= 1);
        for section in 0..app(&h).sections.len() {
            h.state_mut().as_mut().unwrap().open = section;
            for _ in 0..4 {
                h.step();
            }
        }
        h.state_mut().as_mut().unwrap().open_section("test");
        for _ in 0..20 {
            h.step();
            std::thread::sleep(Duration::from_millis(2));
        }
        let a = app(&h);
        assert_eq!(
            a.lab.preset, original,
            "{name}: a widget rewrote the preset"
        );
        assert_eq!(
            a.lab.snapshot_serial, 1,
            "{name}: the run restarted without being asked"
        );
        assert_eq!(a.lab.history.step, 0);
    }
}

#[test]
fn dragging_a_key_moves_it_and_beta_changes_without_restarting_the_run() {
    let mut h = harness_with(settings("classroom"), |a| {
        a.open_section("model");
    });
    wait_for(&mut h, "the first snapshot", |a| a.lab.snapshot_serial >= 1);
    h.run_steps(2);
    let angles = app(&h).lab.preset.demos.key_angles_deg.clone();
    assert_eq!(angles, vec![15.0, 105.0, 230.0]);
    let from = h.get_by_label("K1 tip").rect().center();
    let to = h.get_by_label("K2 tip").rect().center();
    h.drag_at(from);
    h.step();
    h.hover_at(from + (to - from) * 0.5);
    h.step();
    h.hover_at(to);
    h.step();
    h.drop_at(to);
    h.run_steps(2);
    let moved = app(&h).lab.preset.demos.key_angles_deg[0];
    assert!((moved - 105.0).abs() < 3.0, "K1 now at {moved}°");
    h.get_by_role_and_label(egui::Role::Slider, "write strength β")
        .set_value_accesskit(0.5);
    h.run_steps(2);
    let a = app(&h);
    assert_eq!(a.lab.preset.demos.beta, 0.5);
    assert_eq!(
        a.lab.snapshot_serial, 1,
        "demo edits must not restart the paired run"
    );
    let p = Preset::from_ron(&a.lab.preset.to_ron(), "saved").unwrap();
    assert_eq!(
        p.demos, a.lab.preset.demos,
        "the demo state is part of the preset"
    );
}

/// The learning rate: its slider moves one 1-2-5 step per notch (not four decades in 20 px),
/// and its field takes a typed rate between the stops.
#[test]
fn the_learning_rate_moves_in_1_2_5_steps_and_takes_a_typed_rate() {
    let mut h = harness(settings("classroom"));
    wait_for(&mut h, "the first snapshot", |a| a.lab.snapshot_serial >= 1);
    h.run_steps(2);
    assert_eq!(app(&h).lab.preset.arms[0].lr, 1.0);
    let slider = || egui::Role::Slider;
    // Up one notch from 1 (stop 15): 2, the next stop; then down two: 0.5.
    h.get_all_by_role_and_label(slider(), "learning rate")
        .next()
        .unwrap()
        .set_value_accesskit(16.0);
    h.run_steps(2);
    assert_eq!(app(&h).lab.preset.arms[0].lr, 2.0);
    h.get_all_by_role_and_label(slider(), "learning rate")
        .next()
        .unwrap()
        .set_value_accesskit(14.0);
    h.run_steps(2);
    assert_eq!(app(&h).lab.preset.arms[0].lr, 0.5);
    // A rate between the stops, typed.
    let field = || egui::Role::SpinButton;
    h.get_all_by_role_and_label(field(), "learning rate")
        .next()
        .unwrap()
        .click();
    h.run_steps(2);
    h.get_all_by_role_and_label(field(), "learning rate")
        .next()
        .unwrap()
        .type_text("3e-3");
    h.key_press(egui::Key::Enter);
    h.run_steps(2);
    assert_eq!(app(&h).lab.preset.arms[0].lr, 0.003);
    wait_for(&mut h, "the restarted run", |a| a.lab.snapshot_serial >= 2);
}

#[test]
fn a_typed_setting_applies_on_enter_and_an_invalid_one_changes_nothing() {
    let mut h = harness(settings("classroom"));
    wait_for(&mut h, "the first snapshot", |a| a.lab.snapshot_serial >= 1);
    h.run_steps(2);
    assert_eq!(
        (
            app(&h).lab.preset.n_keys,
            app(&h).lab.preset.pairs_per_episode
        ),
        (16, 8)
    );
    let field = || egui::Role::SpinButton;
    h.get_by_role_and_label(field(), "keys V").click();
    h.run_steps(2);
    h.get_by_role_and_label(field(), "keys V").type_text("4");
    h.run_steps(2);
    assert_eq!(
        app(&h).lab.preset.n_keys,
        16,
        "nothing applies while typing"
    );
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    let a = app(&h);
    assert_eq!(
        a.lab.preset.n_keys, 16,
        "4 keys cannot hold 8 pairs: not applied"
    );
    let notice = a.lab.notice.clone().expect("an error notice");
    assert!(
        notice.error && notice.text.contains("pairs_per_episode"),
        "{}",
        notice.text
    );
    assert_eq!(a.lab.snapshot_serial, 1, "no restart");
    h.get_by_role_and_label(field(), "keys V").click();
    h.run_steps(2);
    h.get_by_role_and_label(field(), "keys V").type_text("12");
    h.key_press(egui::Key::Enter);
    wait_for(&mut h, "the restarted run", |a| a.lab.snapshot_serial >= 2);
    let a = app(&h);
    assert_eq!(
        (a.lab.preset.n_keys, a.lab.preset.pairs_per_episode),
        (12, 8)
    );
    assert!(
        a.lab.notice.is_none(),
        "the error clears once a valid value applies"
    );
}

#[test]
fn the_gauge_lab_runs_the_dial_and_live_twins_in_the_background() {
    let mut h = harness_with(settings("classroom"), |a| {
        a.open_tab("gauge", "dial");
        a.panel_mut::<SweepTab>("gauge/dial").unwrap().0.seeds = 1;
    });
    h.run_steps(3);
    h.get_by_label("No results yet: press Run.");
    // An optimizer has one colour everywhere: no legend recolours the rules by class.
    assert!(h.query_by_label("gauge-equivariant rules").is_none());
    assert!(h.query_by_label("coordinate-wise rules").is_none());
    h.get_by_label("Run").click();
    h.run_steps(2);
    // While it runs the tab says results are coming, not that there are none.
    assert!(h.query_by_label("No results yet: press Run.").is_none());
    h.get_by_label("Running: the results appear here when it ends.");
    wait_for(&mut h, "the dial sweep", |a| {
        let tab = a.panel::<SweepTab>("gauge/dial").unwrap();
        tab.analysis.last.is_some()
    });
    let dial = panel::<SweepTab>(&h, "gauge/dial").analysis.last.clone();
    let dial = dial.unwrap().result;
    // Five dial settings, then the instance's convex reference, below all of them.
    assert_eq!(dial.len(), 6);
    assert_eq!(dial[5].rule, basis_lab::sensing::zoo::REFERENCE);
    assert!(dial[5].recovery < dial[4].recovery);
    // Recovery falls from Adam (p = 1) to scalar-Adam (p = 0), as in the paper.
    assert!(dial[0].recovery > dial[4].recovery + 0.1);
    {
        let a = h.state_mut().as_mut().unwrap();
        a.open_tab("gauge", "live");
        let live = a.panel_mut::<LiveRuns>("gauge/live").unwrap().0;
        live.settings.rules = vec![rule("gd"), rule("adam")];
        live.settings.budget = 400;
    }
    h.run_steps(3);
    h.get_by_label("Run live").click();
    wait_for(&mut h, "both live runs", |a| {
        let sums = a.panel::<LiveRuns>("gauge/live").unwrap().summaries();
        sums.iter().all(|s| s.is_some()) && !sums.is_empty()
    });
    let sums = panel::<LiveRuns>(&h, "gauge/live").summaries();
    let gd = sums[0].clone().unwrap();
    let adam = sums[1].clone().unwrap();
    assert_eq!((gd.rule.as_str(), adam.rule.as_str()), ("gd", "adam"));
    assert!(
        gd.twin_drift.unwrap() < 1e-10,
        "GD twin {:e}",
        gd.twin_drift.unwrap()
    );
    assert!(
        adam.twin_drift.unwrap() > 1e-6,
        "Adam twin {:e}",
        adam.twin_drift.unwrap()
    );
    // Each summary line names the class in words and reports the noise twin beside the gauge
    // twin, in the rule's own colour.
    let line = |r: &RunResult, class: &str| {
        format!(
            "{} ({class}, lr {}): {:?} after {} steps; recovery {:.2e}, effective rank {:.2}, \
             drift of the gauge twin {:.1e}, of the noise twin ",
            basis_lab::figure::rule_title(&r.rule),
            r.lr,
            r.outcome,
            r.steps,
            r.recovery,
            r.erank,
            r.twin_drift.unwrap()
        )
    };
    for (r, class) in [(&gd, "equivariant"), (&adam, "coordinate-wise")] {
        let start = line(r, class);
        let node = h.get_by_label_contains(&start).accesskit_node();
        // A label's text is its accessibility value (kittest's label filter reads both).
        let text = node
            .value()
            .or_else(|| node.label())
            .expect("a labelled line");
        let drift: f64 = text[start.len()..].parse().unwrap();
        assert!(
            drift.is_finite() && drift < 1e-10,
            "{} noise twin {drift:e}",
            r.rule
        );
    }
}

#[test]
fn the_zoo_tab_shows_the_convex_reference_as_a_grey_row_and_a_dotted_line() {
    use basis_lab::figure::{Body, Shape};
    use basis_lab::sensing::zoo::figures::zoo_figure;
    use basis_lab::sensing::zoo::{REFERENCE, ZooPreset, run_zoo};
    let preset = ZooPreset {
        problem: basis_lab::sensing::SensingConfig {
            n: 8,
            rank: 2,
            ..Default::default()
        },
        budget: 200,
        seeds: 2,
        rules: vec![rule("gd"), rule("adam")],
        ..ZooPreset::default()
    };
    let runs = run_zoo(&preset, &|| {}, &std::sync::atomic::AtomicBool::new(false));
    let hit = runs[4..].iter().filter(|r| r.recovery < 1e-6).count();
    let fig = zoo_figure(&runs);
    assert!(
        fig.title
            .ends_with(&format!("exact on {hit} of 2 instances")),
        "{}",
        fig.title
    );
    let Body::Plot { marks, .. } = fig.body else {
        panic!("a plot")
    };
    let line = marks
        .iter()
        .find(|m| m.name.starts_with("convex reference"))
        .expect("the reference's line");
    assert!(
        matches!(line.shape, Shape::HLine { .. }),
        "{:?}",
        line.shape
    );
    let h = zoo_tab_showing(preset, runs);
    h.get_by_label(REFERENCE);
    h.get_by_label("reference");
    h.get_by_label(&format!("X* in {hit} of 2"));
    // No flow rule: no gradients column.
    assert!(h.query_by_label("gradients per run").is_none());
}

/// The gauge lab's zoo tab showing `runs` of `preset` as its last sweep.
fn zoo_tab_showing(
    preset: basis_lab::sensing::zoo::ZooPreset,
    runs: Vec<RunResult>,
) -> Harness<'static, State> {
    let mut h = harness_with(settings("classroom"), |a| {
        a.open_tab("gauge", "zoo");
    });
    h.run_steps(1);
    let a = h.state_mut().as_mut().unwrap();
    let tab = a.panel_mut::<SweepTab>("gauge/zoo").unwrap().0;
    tab.analysis.last = Some(basis_lab::app::analysis::Finished {
        inputs: preset,
        result: runs,
    });
    h.run_steps(3);
    h
}

/// With a flow rule in the sweep the table counts every rule's gradients per run (steps plus
/// the flow's), so FlowAdam is compared at equal cost.
#[test]
fn the_zoo_tab_counts_gradients_when_a_flow_rule_ran() {
    use basis_lab::sensing::zoo::{ZooPreset, run_zoo, summarise};
    let preset = ZooPreset::from_ron(
        "ZooPreset(problem: (n: 12, rank: 2, init: 1e-3), seeds: 1, budget: 300, \
         rules: [Gd, FlowAdamP(0.0)], rates: [0.01], reference: false)",
        "p.ron",
    )
    .unwrap();
    let runs = run_zoo(&preset, &|| {}, &std::sync::atomic::AtomicBool::new(false));
    let flow = summarise(&runs)[1].gradients.unwrap();
    assert!(flow > runs[1].steps as f64, "{flow}");
    let h = zoo_tab_showing(preset, runs.clone());
    h.get_by_label("gradients per run");
    h.get_by_label(&format!("{flow:.0}"));
    h.get_by_label(&format!("{}", runs[0].steps));
}

/// The reported settings file: a cached zoo sweep whose run has `lr: NaN` crashed the app at
/// every start. It starts, drops that sweep with a notice and shows the gauge lab.
#[test]
fn saved_settings_with_a_damaged_zoo_sweep_start_with_a_notice() {
    let zoo = "(seeds: 1, analysis: (last: Some((inputs: (name: \"z\", problem: (n: 5, rank: 1), \
               budget: 10, seeds: 1, rules: [Gd]), result: [(rule: \"gd\", equivariant: true, \
               lr: NaN, seed: 0, tau: 0.0, steps: 10, outcome: Budget, train_loss: 0.1, \
               recovery: 0.5, erank: 1.0, balancedness: 0.0, twin_drift: None)]))))";
    let s = Settings {
        open: "gauge".into(),
        panels: [("gauge/zoo", zoo), ("gauge", "\"zoo\"")]
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .into(),
        ..Settings::default()
    };
    let text = common::app_ron(&s);
    let s = basis_lab::app::saved::parse_app_ron(&text)
        .unwrap()
        .unwrap();
    assert_eq!(s.panels["gauge/zoo"], zoo);
    let mut h = harness(s);
    h.run_steps(4);
    let a = app(&h);
    assert!(panel::<SweepTab>(&h, "gauge/zoo").analysis.last.is_none());
    assert_eq!(a.section().id(), "gauge", "the rest is kept");
    let notice = a.lab.notice.clone().expect("a notice");
    assert!(
        notice.error
            && notice.text.contains(
                "gauge/zoo: the saved gauge-lab zoo sweep was dropped (cell 0, gd at lr 0.01"
            ),
        "{notice:?}"
    );
    h.get_by_label_contains("zoo sweep was dropped");
    h.get_by_label("No results yet: press Run.");
}

#[test]
fn plot_c_switches_to_column_norms() {
    let mut h = harness(settings("classroom"));
    wait_for(&mut h, "the first snapshot", |a| a.lab.snapshot_serial >= 1);
    h.get_by_label("▶ Play").click();
    wait_for(&mut h, "some steps", |a| a.lab.history.step >= 100);
    h.get_by_label("column norms ‖w‖").click();
    h.run_steps(3);
    assert!(panel::<Live>(&h, "test/live").settings.show_norms);
    h.get_by_label_contains("spread (sd over keys)");
    assert!(app(&h).lab.history.arms[0].column_norm_sd.len() > 10);
}

#[test]
fn the_memory_tab_plots_each_arm_against_its_baseline() {
    let mut h = harness_with(settings("classroom"), |a| {
        a.open_tab("test", "activations");
    });
    wait_for(&mut h, "the first snapshot", |a| a.lab.snapshot_serial >= 1);
    h.get_by_label("▶ Play").click();
    wait_for(&mut h, "a few snapshots", |a| {
        a.lab.history.step >= 300 && a.lab.history.arms[0].activations[0].points().len() >= 2
    });
    h.get_by_label("Memory & reads").click();
    h.run_steps(2);
    h.get_by_label("Excess kurtosis of the reads S·k (value space)");
    h.get_by_label_contains("At step");
    let a = app(&h);
    for arm in &a.lab.history.arms {
        for series in &arm.activations {
            let p = series.points().last().unwrap();
            // (step, value, p5, mean, p95): the band is ordered and the step is real.
            assert!(p[0] > 0.0 && p[2] <= p[3] && p[3] <= p[4], "{p:?}");
        }
    }
}

#[test]
fn the_eps_sweep_tab_rejects_a_bad_list_then_runs_and_plots() {
    let mut s = settings("classroom");
    s.preset.steps = 60;
    s.preset.baseline_rotations = 16;
    let mut h = harness_with(s, |a| {
        a.open_tab("test", "eps");
        let eps = a.panel_mut::<EpsSweep>("test/eps").unwrap().0;
        eps.seeds = 2;
        eps.text = "1e-8, banana".into();
    });
    let eps_text = |h: &mut Harness<'static, State>, text: &str| {
        let app = h.state_mut().as_mut().unwrap();
        app.panel_mut::<EpsSweep>("test/eps").unwrap().0.text = text.into();
    };
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    h.get_by_label("Run ε sweep").click();
    h.run_steps(2);
    h.get_by_label_contains("“banana” is not a number");
    // The same check as the command line: ε must lie in [0, 1e6].
    eps_text(&mut h, "1e-8, 1e9");
    h.get_by_label("Run ε sweep").click();
    h.run_steps(2);
    h.get_by_label_contains("1000000000 is out of range; allowed [0, 1e6]");
    assert!(panel::<EpsSweep>(&h, "test/eps").analysis.last.is_none());
    eps_text(&mut h, "1e-8, 1");
    h.get_by_label("Run ε sweep").click();
    wait_for(&mut h, "the ε sweep", |a| {
        let tab = a.panel::<EpsSweep>("test/eps").unwrap();
        tab.analysis.last.is_some()
    });
    let last = panel::<EpsSweep>(&h, "test/eps").analysis.last.clone();
    let points = last.unwrap().result;
    assert_eq!(
        points.iter().map(|p| p.value).collect::<Vec<_>>(),
        [1e-8, 1.0]
    );
    for p in &points {
        assert_eq!(p.sweep.seeds, vec![0, 1]);
        let adam = &p.sweep.aggregate[1];
        assert_eq!(adam.seeds_ok, 2);
        assert!(adam.orientation_div_sd.is_finite());
    }
    // Adam at ε = 1 is nearly momentum SGD: its twins stay much closer than at 1e-8.
    assert!(
        points[1].sweep.aggregate[1].orientation_div_mean
            < 0.5 * points[0].sweep.aggregate[1].orientation_div_mean
    );
    h.step();
    h.get_by_label("Twin Gram divergence ‖K′ᵀK′ − KᵀK‖F");
}

#[test]
fn the_matched_and_dk_tabs_run_and_show_their_results() {
    let mut s = settings("classroom");
    s.preset.steps = 100;
    s.preset.eval_every = 10;
    s.preset.baseline_rotations = 16;
    let mut h = harness_with(s, |a| {
        a.open_tab("test", "matched");
        a.panel_mut::<Matched>("test/matched").unwrap().0.levels = 3;
        let dk = a.panel_mut::<DkSweep>("test/dk").unwrap().0;
        dk.seeds = 2;
        dk.text = "4, 8".into();
    });
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    h.get_by_label("Run comparison").click();
    wait_for(&mut h, "the comparison", |a| {
        let tab = a.panel::<Matched>("test/matched").unwrap();
        tab.analysis.last.is_some()
    });
    let last = panel::<Matched>(&h, "test/matched").analysis.last.clone();
    let report = last.unwrap().result;
    assert_eq!(report.levels.len(), 3);
    assert_eq!(report.verdicts.len(), 1);
    h.step();
    h.get_by_label_contains("adam vs gd: excess difference");
    h.get_by_label("d_k sweep").click();
    h.run_steps(2);
    h.get_by_label("Run d_k sweep").click();
    wait_for(&mut h, "the d_k sweep", |a| {
        let tab = a.panel::<DkSweep>("test/dk").unwrap();
        tab.analysis.last.is_some()
    });
    let last = panel::<DkSweep>(&h, "test/dk").analysis.last.clone();
    let dk = last.unwrap().result;
    assert_eq!(dk.iter().map(|p| p.value).collect::<Vec<_>>(), [4, 8]);
    assert_eq!(dk[0].sweep.preset.n_keys, 8, "keys scale with d_k");
    h.step();
    h.get_by_label_contains("d_k   4 (8 keys");
}

#[test]
fn a_failed_save_or_export_keeps_the_run_and_settings_for_a_retry() {
    use basis_lab::app::panels::controlled_test::{Export, export_csv_to};
    let mut h = harness(settings("classroom"));
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    h.get_by_label("Step 100").click();
    wait_for(&mut h, "100 steps", |a| a.lab.history.step == 100);
    let dir = tempfile::tempdir().unwrap();
    let ro = common::read_only_dir(dir.path());
    let a = h.state_mut().as_mut().unwrap();
    let preset = a.lab.preset.clone();
    let received = a.lab.history.records_received;

    assert!(!a.lab.save_preset_file(&ro.join("mine.ron")));
    let n = a.lab.notice.clone().unwrap();
    assert!(n.error && n.text.contains(&ro.join("mine.ron").display().to_string()));
    assert!(n.text.contains("still here"), "{}", n.text);
    assert!(
        !a.lab.load_preset_file(&ro.join("mine.ron")),
        "nothing was written"
    );

    assert!(!export_csv_to(
        &mut a.lab,
        Export::Orientation,
        &ro.join("a.csv")
    ));
    let n = a.lab.notice.clone().unwrap();
    assert!(n.error && n.text.contains("still here"), "{}", n.text);
    assert_eq!(a.lab.preset, preset);
    assert_eq!(a.lab.history.records_received, received, "the run is kept");

    // The retry to a writable folder saves everything that was there.
    let csv_path = dir.path().join("a.csv");
    assert!(export_csv_to(&mut a.lab, Export::Orientation, &csv_path));
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    assert!(csv.starts_with("series,step,value\n"));
    let gd_rows = csv
        .lines()
        .filter(|l| l.starts_with("gd_orientation_div,"))
        .count();
    assert!(gd_rows > 50, "{gd_rows} rows");
    assert!(csv.lines().any(|l| l.starts_with("gd_orientation_div,99,")));
    let preset_path = dir.path().join("mine.ron");
    assert!(a.lab.save_preset_file(&preset_path));
    assert_eq!(Preset::load(preset_path.to_str().unwrap()).unwrap(), preset);
    h.step();
    h.get_by_label_contains("Saved");
}

/// A user action on the app, for the random-order test below.
#[derive(Clone, Debug)]
enum Action {
    Click(&'static str),
    Key(egui::Key),
    StepN(usize),
    Apply {
        beta: f64,
        keys: usize,
        pairs: usize,
        steps: usize,
        seed: u64,
    },
    LoadText(usize),
    Speed(Option<f64>),
    Stop(Option<usize>, Option<f64>),
    Section(usize),
    Tab(usize),
    Sweep,
    BandArm(usize),
    Norms(bool),
    Dark(bool),
    Crash,
    Frames(usize),
}

const TEXTS: [&str; 6] = [
    "Preset(d_k: 4, n_keys: 6, pairs_per_episode: 3, steps: 200, baseline_rotations: 8)",
    "Preset(beta: NaN)",
    "Preset(arms: [])",
    "Preset(d_k: 4, n_keys: 6, pairs_per_episode: 3, baseline_rotations: 8, arms: [(optimizer: \"sign\", lr: 0.01), (optimizer: \"muon\", lr: 0.02, polar: Svd)])",
    "Preset(d_k: 6",
    "",
];

fn action() -> impl proptest::strategy::Strategy<Value = Action> {
    use proptest::prelude::*;
    use proptest::sample::select;
    prop_oneof![
        4 => select(vec!["▶ Play", "❚❚ Pause", "Step", "⟲ Reset", "New seed", "Run sweep", "Cancel", "Restart worker", "dismiss"]).prop_map(Action::Click),
        2 => select(vec![egui::Key::Space, egui::Key::Period, egui::Key::R]).prop_map(Action::Key),
        1 => (1usize..80).prop_map(Action::StepN),
        2 => (0.0f64..2.5, 1usize..24, 1usize..24, 0usize..400, 0u64..4)
            .prop_map(|(beta, keys, pairs, steps, seed)| Action::Apply { beta, keys, pairs, steps, seed }),
        2 => (0usize..TEXTS.len()).prop_map(Action::LoadText),
        1 => prop::option::of(prop_oneof![1.0f64..5000.0, Just(f64::NAN), Just(-3.0)]).prop_map(Action::Speed),
        1 => (prop::option::of(0usize..300), prop::option::of(0.0f64..2.0)).prop_map(|(a, b)| Action::Stop(a, b)),
        2 => (0usize..8).prop_map(Action::Section),
        1 => (0usize..6).prop_map(Action::Tab),
        1 => Just(Action::Sweep),
        1 => (0usize..20).prop_map(Action::BandArm),
        1 => any::<bool>().prop_map(Action::Norms),
        1 => any::<bool>().prop_map(Action::Dark),
        1 => Just(Action::Crash),
        2 => (1usize..6).prop_map(Action::Frames),
    ]
}

fn perform(h: &mut Harness<'static, State>, act: &Action) {
    let a = h.state_mut().as_mut().unwrap();
    match act {
        Action::Click(label) => {
            // Some buttons appear twice (toolbar and settings); either does the same.
            if let Some(node) = h.query_all_by_label(label).next() {
                node.click();
            }
        }
        Action::Key(k) => h.key_press(*k),
        Action::StepN(n) => a.lab.send(Command::Step(*n)),
        Action::Apply {
            beta,
            keys,
            pairs,
            steps,
            seed,
        } => {
            let mut p = a.lab.preset.clone();
            (p.beta, p.n_keys, p.pairs_per_episode, p.steps, p.seed) =
                (*beta, *keys, *pairs, *steps, *seed);
            p.baseline_rotations = 8;
            let before = a.lab.preset.clone();
            let ok = a.lab.apply_preset(p.clone());
            assert_eq!(ok, p.validate().is_ok());
            if !ok {
                assert_eq!(a.lab.preset, before, "a rejected preset changes nothing");
            }
        }
        Action::LoadText(i) => {
            let before = a.lab.preset.clone();
            if !a.lab.load_preset_text(TEXTS[*i], "typed") {
                assert_eq!(a.lab.preset, before);
            }
        }
        Action::Speed(s) => {
            a.lab.speed = *s;
            a.lab.send(Command::SetSpeed(*s));
        }
        Action::Stop(at, below) => {
            a.lab.stop.at_step = *at;
            a.lab.stop.heldout_loss_below = *below;
            a.lab.send(Command::SetStop(a.lab.stop));
        }
        Action::Section(i) => a.open = *i % a.sections.len(),
        Action::Tab(i) => {
            let test = a.panel_mut::<ControlledTest>("test").unwrap().0;
            let tabs = test.tabs_mut().unwrap();
            let ids: Vec<&str> = tabs.iter().map(|t| t.id()).collect();
            let id = ids[*i % ids.len()];
            tabs.select(id);
        }
        Action::Sweep => {
            let (sweep, lab) = a.panel_mut::<SeedSweep>("test/sweep").unwrap();
            if !sweep.analysis.is_running() {
                sweep.seeds = 2;
                sweep.start(lab);
            }
        }
        Action::BandArm(i) => {
            a.panel_mut::<Live>("test/live")
                .unwrap()
                .0
                .settings
                .band_arm = *i
        }
        Action::Norms(on) => {
            a.panel_mut::<Live>("test/live")
                .unwrap()
                .0
                .settings
                .show_norms = *on
        }
        Action::Dark(on) => a.lab.dark = *on,
        Action::Crash => a.lab.send(Command::InjectPanic),
        Action::Frames(n) => {
            for _ in 0..*n {
                h.step();
                std::thread::sleep(Duration::from_millis(3));
            }
        }
    }
    h.step();
    h.step();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig {
        cases: 48,
        failure_persistence: None,
        max_shrink_iters: 200,
        ..Default::default()
    })]

    #[test]
    fn random_user_actions_in_random_order_never_panic_or_corrupt_the_settings(
        actions in proptest::collection::vec(action(), 1..=30)
    ) {
        let mut s = settings("classroom");
        s.preset.steps = 300;
        s.preset.baseline_rotations = 8;
        s.speed = Some(2000.0);
        let mut h = harness(s);
        wait_for(&mut h, "the run to start", |a| a.lab.history.preset.is_some());
        // An injected panic not yet seen by the UI.
        let mut crash_pending = false;
        for act in &actions {
            perform(&mut h, act);
            let a = app(&h);
            crash_pending = (crash_pending || matches!(act, Action::Crash)) && a.lab.crashed.is_none();
            proptest::prop_assert_eq!(a.lab.preset.validate(), Ok(()), "after {:?}", act);
            if a.lab.crashed.is_none()
                && let Some(p) = &a.lab.history.preset
            {
                // What the worker runs is always a preset the user applied and that validated.
                proptest::prop_assert_eq!(p.validate(), Ok(()));
            }
        }
        // Whatever happened, the app can still be brought back to a running state.
        if crash_pending {
            wait_for(&mut h, "the crash report", |a| a.lab.crashed.is_some());
        }
        let a = h.state_mut().as_mut().unwrap();
        if a.lab.crashed.is_some() {
            a.lab.restart_worker();
        }
        let a = h.state_mut().as_mut().unwrap();
        a.open_section("test");
        a.lab.send(Command::Reset);
        wait_for(&mut h, "a reset run", |a| a.lab.history.step == 0 && a.lab.crashed.is_none());
        app(&h).lab.send(Command::Step(3));
        wait_for(&mut h, "three steps", |a| a.lab.history.step == 3);
    }
}

#[test]
fn panels_restore_their_own_settings_and_results_and_old_settings_files_still_load() {
    let ctx = egui::Context::default();
    let mut a = AppState::new(&ctx, settings("classroom"));
    a.open_tab("gauge", "dial");
    a.panel_mut::<SweepTab>("gauge/dial").unwrap().0.seeds = 7;
    a.panel_mut::<EpsSweep>("test/eps").unwrap().0.text = "1e-3, 1".into();
    a.panel_mut::<Live>("test/live")
        .unwrap()
        .0
        .settings
        .show_norms = true;
    let saved = a.settings();
    assert_eq!(saved.open, "gauge");
    assert!(saved.panels.contains_key("gauge/dial") && saved.panels.contains_key("test/eps"));
    // Through the RON text eframe stores.
    let text = ron::to_string(&saved).unwrap();
    let back: Settings = ron::from_str(&text).unwrap();
    assert_eq!(back, saved);
    let b = AppState::new(&ctx, back);
    assert_eq!(b.section().id(), "gauge");
    assert_eq!(b.panel::<SweepTab>("gauge/dial").unwrap().seeds, 7);
    assert_eq!(b.panel::<EpsSweep>("test/eps").unwrap().text, "1e-3, 1");
    assert!(b.panel::<Live>("test/live").unwrap().settings.show_norms);
    assert_eq!(b.settings(), saved);
    // A panel's damaged entry leaves that panel at its defaults, with a notice, and the rest as saved.
    let mut damaged = saved.clone();
    damaged
        .panels
        .insert("test/eps".into(), "(seeds: \"many\")".into());
    let c = AppState::new(&ctx, damaged);
    assert_eq!(c.panel::<EpsSweep>("test/eps").unwrap().seeds, 4);
    assert_eq!(c.panel::<SweepTab>("gauge/dial").unwrap().seeds, 7);
    assert!(c.lab.notice.as_ref().unwrap().text.contains("test/eps"));
    drop((a, b, c));
    // Settings saved by the version before the panels owned their state: the preset, theme and
    // speed come back; the fields that moved into panels are ignored.
    let old = format!(
        "(preset: {}, section: GaugeLab, tab: Eps, dark: true, speed: Some(20.0), step_n: 5, \
         gauge: (tab: Dial, seeds: 2, live_rules: [Gd, Muon]), analyses: (seeds: 3))",
        Preset::load("dk32").unwrap().to_ron()
    );
    let s: Settings = ron::from_str(&old).unwrap();
    assert_eq!(s.preset.name, "dk32");
    assert!(s.dark);
    assert_eq!(s.speed, Some(20.0));
    assert_eq!(s.open, "test");
}

#[test]
fn a_panel_keeps_working_while_another_section_is_shown() {
    let mut s = settings("classroom");
    s.preset.steps = 60;
    s.preset.baseline_rotations = 16;
    let mut h = harness_with(s, |a| {
        let (sweep, lab) = a.panel_mut::<SeedSweep>("test/sweep").unwrap();
        sweep.seeds = 2;
        sweep.start(lab);
        a.open_section("model");
    });
    let done = seed_sweep_done;
    wait_for(
        &mut h,
        "the sweep, collected while section 1 is shown",
        done,
    );
    assert_eq!(app(&h).section().id(), "model");
}

#[test]
fn every_section_and_tab_has_a_distinct_id() {
    let ids = basis_lab::app::panels::section_ids();
    let mut seen = ids.clone();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), ids.len(), "{ids:?}");
    for id in ids {
        let tabs = basis_lab::app::panels::tab_ids(id).unwrap();
        let mut unique = tabs.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), tabs.len(), "{id}: {tabs:?}");
    }
    assert_eq!(
        basis_lab::app::panels::tab_ids("test").unwrap(),
        ["live", "activations", "sweep", "eps", "matched", "dk"]
    );
    assert_eq!(
        basis_lab::app::panels::tab_ids("gauge").unwrap(),
        ["zoo", "dial", "tail", "hsi", "live"]
    );
}

/// A 46 × 46-pixel, 50-band scene in a MAT-file: three smooth spectra mixed per pixel, so a
/// fit goes deep.
fn write_scene(file: &std::path::Path) {
    let dims = [46, 46, 50];
    let cube: Vec<u16> = (0..dims[0] * dims[1] * dims[2])
        .map(|i| {
            let (p, b) = (i % (dims[0] * dims[1]), i / (dims[0] * dims[1]));
            let mix = [(p % 7) as f64, (p % 11) as f64, (p % 5) as f64];
            let spectra = [
                (b as f64 * 0.1).sin() + 1.5,
                (b as f64 * 0.05).cos() + 1.2,
                b as f64 / 50.0,
            ];
            (100.0 * mix.iter().zip(spectra).map(|(m, s)| m * s).sum::<f64>()) as u16
        })
        .collect();
    common::mat::write_mat(file, "cube", dims, &cube, &common::mat::D);
}

/// A harness on the gauge lab's hyperspectral tab, its first frames drawn.
fn hsi_harness() -> Harness<'static, State> {
    let s = Settings {
        open: "gauge".into(),
        panels: [("gauge".to_string(), "\"hsi\"".to_string())].into(),
        ..settings("classroom")
    };
    let mut h = harness(s);
    h.run_steps(2);
    h
}

/// Drops `file` on the window and draws two frames.
fn drop_file(h: &mut Harness<'static, State>, file: &std::path::Path) {
    let handle = std::sync::Arc::new(Dropped(file.to_path_buf()));
    h.input_mut().dropped_files.push(handle);
    h.run_steps(2);
}

/// A file dropped on the window, as eframe hands it over.
#[derive(Debug)]
struct Dropped(std::path::PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &std::path::Path {
        &self.0
    }

    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

/// The hsi.json of a grid run (`hsi --grid`, here or on a cluster) opens in the hyperspectral
/// tab when dropped on the window: its table, its settings as the tab's, and no run started; a
/// damaged file is refused with its name and the JSON's line, the tab keeping what it showed.
#[test]
fn a_dropped_hsi_json_opens_in_the_hyperspectral_tab() {
    use basis_lab::app::panels::gauge_lab::HsiTab;
    use basis_lab::sensing::hsi::grid::{GridPlan, run_grid};
    use basis_lab::sensing::hsi::{HsiConfig, Scene, report};
    let dir = tempfile::tempdir().unwrap();
    let scene_file = dir.path().join("scene.mat");
    write_scene(&scene_file);
    let cfg = HsiConfig {
        density: 0.3,
        width: 6,
        steps: 150,
        ..HsiConfig::default()
    };
    let plan = GridPlan {
        selection_seeds: vec![5],
        report_seeds: vec![6, 7],
        ..GridPlan::paper(vec!["gd".into(), "muon".into()])
    };
    let scene = Scene::read(&scene_file, None).unwrap();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    let made = run_grid(&scene, &cfg, &plan, &|_| {}, &cancel).unwrap();
    let mut set = basis_lab::output::OutputSet::new(dir.path(), "hsi");
    report::write_grid(&mut set, &made).unwrap();
    set.commit().unwrap();
    let json = dir.path().join("hsi.json");

    let mut h = hsi_harness();
    drop_file(&mut h, &json);
    let tab = panel::<HsiTab>(&h, "gauge/hsi");
    assert!(!tab.status(&app(&h).lab).busy, "opening runs nothing");
    let shown = &tab
        .analysis
        .last
        .as_ref()
        .expect("the report is shown")
        .result;
    assert_eq!(shown.summaries, made.summaries);
    assert_eq!(shown.plan, plan);
    assert_eq!(tab.inputs.scene, scene_file.display().to_string());
    assert_eq!((tab.inputs.density, tab.inputs.steps), (0.3, 150));
    assert_eq!(tab.inputs.plan, plan);
    let notice = app(&h).lab.notice.clone().expect("a notice");
    assert!(notice.text.contains("Opened"), "{notice:?}");
    h.get_by_label("At training loss ≤ 1e-5 (Table 5: RMSE ×1e-2)");
    // Folded for a projector: the settings go, the plots stay, and drops still work.
    h.get_by_label("Scene, protocol and run").click();
    h.run_steps(2);
    assert!(h.query_by_label("Open results…").is_none());
    h.get_by_label("held-out RMSE along the fit");

    // Cut short: refused, named, and the report stays.
    let text = std::fs::read_to_string(&json).unwrap();
    let cut = dir.path().join("cut.json");
    std::fs::write(&cut, &text[..text.len() / 2]).unwrap();
    drop_file(&mut h, &cut);
    let notice = app(&h).lab.notice.clone().expect("a notice");
    assert!(
        notice.text.contains(&cut.display().to_string()) && notice.text.contains("line"),
        "{notice:?}"
    );
    let tab = panel::<HsiTab>(&h, "gauge/hsi");
    let kept = &tab.analysis.last.as_ref().unwrap().result;
    assert_eq!(kept.summaries, made.summaries);

    // A dropped scene becomes the scene to run; anything else is named and left alone.
    let other = dir.path().join("other.mat");
    std::fs::copy(&scene_file, &other).unwrap();
    drop_file(&mut h, &other);
    assert_eq!(
        panel::<HsiTab>(&h, "gauge/hsi").inputs.scene,
        other.display().to_string()
    );
    drop_file(&mut h, &dir.path().join("notes.txt"));
    let notice = app(&h).lab.notice.clone().expect("a notice");
    assert!(notice.text.contains("notes.txt"), "{notice:?}");
}

/// The hyperspectral tab runs the Table 5 protocol on a scene file in the background and shows
/// its paths and table; without a scene it says what is missing; a saved run with a damaged
/// statistic is dropped on load.
#[test]
fn the_hyperspectral_tab_runs_a_scene_and_keeps_only_a_sound_result() {
    use basis_lab::app::panels::gauge_lab::HsiTab;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scene.mat");
    write_scene(&file);
    let mut h = hsi_harness();
    h.get_by_label("Run").click();
    h.run_steps(2);
    let notice = app(&h).lab.notice.clone().expect("a notice");
    assert!(notice.text.contains("choose a scene file"), "{notice:?}");
    assert!(!panel::<HsiTab>(&h, "gauge/hsi").status(&app(&h).lab).busy);

    if let Some(a) = h.state_mut().as_mut() {
        let (tab, _) = a.panel_mut::<HsiTab>("gauge/hsi").unwrap();
        tab.inputs.scene = file.display().to_string();
        tab.inputs.steps = 100;
        tab.inputs.plan.rules = vec!["adam".into()];
        tab.inputs.plan.selection_seeds = vec![1];
        tab.inputs.plan.report_seeds = vec![2];
    }
    // Before the first run, a trial in the background (it reads the scene) gives the estimate.
    for _ in 0..3000 {
        h.step();
        if h.query_by_label_contains("here (from a short trial run)")
            .is_some()
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    h.get_by_label_contains("here (from a short trial run)");
    h.get_by_label("Run").click();
    for _ in 0..12_000 {
        h.step();
        if panel::<HsiTab>(&h, "gauge/hsi").analysis.last.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    h.run_steps(2);
    let tab = panel::<HsiTab>(&h, "gauge/hsi");
    let report = &tab.analysis.last.as_ref().expect("the run finished").result;
    // Adam's three paper rates on the selection seed, the pick again on the report seed.
    assert_eq!(report.runs.len(), 4);
    assert!(
        report.runs.iter().all(|r| r.losses.is_empty()),
        "loss curves dropped"
    );
    let adam = &report.summaries[0];
    assert_eq!(
        (adam.rule.as_str(), adam.seeds.as_slice()),
        ("adam", &[1, 2][..])
    );
    let shallow = adam.levels[0].test_rmse.expect("both seeds reach 3e-3");
    assert_eq!(shallow.n, 2);
    assert!(shallow.mean > 0.0 && shallow.mean < 1.0, "{shallow:?}");
    h.get_by_label("held-out RMSE along the fit");
    h.get_by_label("effective rank of UVᵀ along the fit");
    h.get_by_label("At training loss ≤ 1e-5 (Table 5: RMSE ×1e-2)");

    // Saved and read back: kept whole; with a NaN mean, dropped with a line for the notice.
    let text = tab.save().unwrap();
    let mut back = HsiTab::default();
    assert_eq!(back.load(&text).unwrap(), Vec::<String>::new());
    assert_eq!(
        back.analysis.last.as_ref().unwrap().result.summaries,
        report.summaries
    );
    let at = text.find("mean:").unwrap() + "mean:".len();
    let end = at + text[at..].find(',').unwrap();
    let damaged = format!("{}NaN{}", &text[..at], &text[end..]);
    let mut back = HsiTab::default();
    let notes = back.load(&damaged).unwrap();
    assert!(back.analysis.last.is_none());
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with(
            "the saved hyperspectral run was dropped (summary 0 (adam): field `levels["
        ),
        "{notes:?}"
    );
}

/// Every view's link settings read back as themselves (a Copy link opens the same view), a
/// changed value reaches the view, values out of range are refused by name without changing
/// anything, and a parameter that is no setting of the view is only reported as not one.
#[test]
fn link_settings_round_trip_and_bad_values_are_refused_by_name() {
    use basis_lab::app::panels::{section_ids, tab_ids};
    let ctx = egui::Context::default();
    let mut a = AppState::new(&ctx, settings("classroom"));
    let mut with_settings = 0;
    for section in section_ids() {
        let tabs = tab_ids(section).unwrap();
        let views: Vec<String> = if tabs.is_empty() {
            vec![section.to_string()]
        } else {
            tabs.iter().map(|t| format!("{section}/{t}")).collect()
        };
        for view in views {
            let (s, t) = view.split_once('/').unwrap_or((&view, ""));
            assert!(a.open_section(s) && (t.is_empty() || a.open_tab(s, t)));
            let before = a.view().link_settings();
            with_settings += usize::from(!before.is_empty());
            for (name, value) in &before {
                assert_eq!(
                    a.set_from_link(name, value),
                    Ok(true),
                    "{view}: {name}={value}"
                );
            }
            assert_eq!(a.view().link_settings(), before, "{view}");
            assert_eq!(a.set_from_link("utm_source", "mail"), Ok(false), "{view}");
        }
    }
    assert_eq!(
        with_settings, 7,
        "sweep, eps, matched, dk, hsi, gauge live, optimizer"
    );

    a.open_tab("test", "sweep");
    assert_eq!(a.set_from_link("seeds", "3"), Ok(true));
    assert!(a.view().link_settings().contains(&("seeds", "3".into())));
    let refused = a.set_from_link("seeds", "1000").unwrap_err();
    assert_eq!(refused, "`seeds=1000` is not a whole number in 2..=256");
    assert!(a.view().link_settings().contains(&("seeds", "3".into())));

    a.open_tab("test", "eps");
    assert_eq!(a.set_from_link("values", "1e-8,1e-3"), Ok(true));
    assert_eq!(a.panel::<EpsSweep>("test/eps").unwrap().text, "1e-8, 1e-3");
    assert!(
        a.set_from_link("values", "1e-8,x")
            .unwrap_err()
            .contains("“x” is not a number")
    );
    // The reported fault: a decimal comma read as two values (ε = 0 and ε = 1).
    assert_eq!(
        a.set_from_link("values", "0,01").unwrap_err(),
        "`values`: `0,01`: use a decimal point (0.01); separate values with commas"
    );
    assert!(
        a.set_from_link("values", "1,5")
            .unwrap_err()
            .contains("(1.5)")
    );
    assert_eq!(a.panel::<EpsSweep>("test/eps").unwrap().text, "1e-8, 1e-3");
    // Two whole values keep the space that makes them two, in the tab's own link.
    assert_eq!(a.set_from_link("values", "1, 5"), Ok(true));
    let values = a.view().link_settings()[0].1.clone();
    assert_eq!(values, "1, 5");
    assert_eq!(a.set_from_link("values", &values), Ok(true));
    a.open_tab("test", "dk");
    assert_eq!(a.set_from_link("values", "4,8"), Ok(true));
    assert_eq!(a.view().link_settings()[0].1, "4,8");
    assert!(
        a.set_from_link("values", "4,08")
            .unwrap_err()
            .contains("`4,08`")
    );

    a.open_tab("gauge", "hsi");
    for (name, value, says) in [
        ("density", "2", "`density=2` is not a number in 0.01..=0.99"),
        (
            "steps",
            "5",
            "`steps=5` is not a whole number in 100..=100000",
        ),
        ("rules", "gd,nope", "`rules`: no rule `nope`"),
        ("grids", "mine", "`grids`: unknown grids `mine`"),
        ("selection", "1,x", "`selection`: “x” is not a whole number"),
        (
            "selection",
            "1,02",
            "`selection`: `1,02`: use a decimal point (1.02); separate values with commas",
        ),
        ("scene", " ", "`scene` is empty"),
    ] {
        let e = a.set_from_link(name, value).unwrap_err();
        assert!(e.starts_with(says), "{name}={value}: {e}");
    }
    assert_eq!(a.set_from_link("rules", "muon,gd"), Ok(true));
    let hsi = a.view().link_settings();
    assert!(
        hsi.contains(&("rules", "gd,muon".into())),
        "registry order: {hsi:?}"
    );
    assert!(
        !hsi.iter().any(|(n, _)| *n == "scene"),
        "no scene before a link names one"
    );
    assert_eq!(a.set_from_link("scene", "data/indian_pines.mat"), Ok(true));
    assert!(
        a.view()
            .link_settings()
            .contains(&("scene", "data/indian_pines.mat".into()))
    );

    a.open_tab("gauge", "live");
    assert!(
        a.set_from_link("rules", "")
            .unwrap_err()
            .contains("at least one rule")
    );
    assert!(
        a.set_from_link("rules", "gd,nope")
            .unwrap_err()
            .contains("no rule `nope`")
    );
    assert_eq!(a.set_from_link("rules", "muon"), Ok(true));
    assert!(a.view().link_settings().contains(&("rules", "muon".into())));
}

/// A page link is followed as the page does (app::follow): its view, a preset of the view's own
/// kind, its settings, play. Every problem of a link is told together, and a link with a problem
/// starts nothing; a link without one says what it opened and starts the view's run.
#[test]
fn a_link_is_followed_with_every_problem_told_and_a_bad_link_starts_nothing() {
    use basis_lab::app::follow::follow;
    use basis_lab::app::panels::attention::{AttentionTwins, Source};
    use basis_lab::link::parse_page_link;
    let ctx = egui::Context::default();
    let notice = |a: &AppState| a.lab.notice.clone().expect("a notice");

    let mut a = AppState::new(&ctx, settings("classroom"));
    let link = parse_page_link("?view=test/eps&values=1e-8,abc&seeds=500&play", "#bl1:x");
    let bad_preset = Some("The link's preset was not loaded (…).".to_string());
    assert!(!follow(&mut a, &link, bad_preset));
    let n = notice(&a);
    assert!(n.error);
    for part in [
        "preset was not loaded",
        "`values`",
        "`seeds=500`",
        "not started",
    ] {
        assert!(n.text.contains(part), "{part} in {}", n.text);
    }
    assert!(!a.view_busy() && !a.lab.history.running, "nothing runs");

    let mut a = AppState::new(&ctx, settings("classroom"));
    let link = parse_page_link("?view=test/sweeps&seeds=8&play", "");
    assert!(!follow(&mut a, &link, None));
    let n = notice(&a);
    assert!(
        n.error && n.text.contains("`test/sweeps` is not one of this page's"),
        "{}",
        n.text
    );
    assert!(!a.lab.history.running, "no run for a link to no view");

    let mut a = AppState::new(&ctx, settings("classroom"));
    let link = parse_page_link("?view=test/sweep&seeds=3&utm_source=mail", "#bl1:classroom");
    assert!(!follow(&mut a, &link, None), "no play asked");
    let n = notice(&a);
    assert!(!n.error, "{}", n.text);
    assert!(n.text.contains("Opened the preset") && n.text.contains("`utm_source`"));
    assert_eq!(a.panel::<SeedSweep>("test/sweep").unwrap().seeds, 3);

    // Curly quotes, percent-encoded by the browser, in a view's own preset.
    let mut a = AppState::new(&ctx, settings("classroom"));
    let link = parse_page_link(
        "?view=attention",
        "#ba1:attention-quick(name:%E2%80%9Cq%E2%80%9D)",
    );
    assert!(!follow(&mut a, &link, None), "no play asked");
    let n = notice(&a);
    assert!(!n.error && n.text.contains("`q`"), "{}", n.text);

    let mut a = AppState::new(&ctx, settings("classroom"));
    let link = parse_page_link("?view=attention&play", "#ba1:attention-quick");
    assert!(follow(&mut a, &link, None));
    assert!(notice(&a).text.contains("`attention-quick`"));
    let twins = a.panel::<AttentionTwins>("attention").unwrap();
    assert_eq!(
        twins.settings.source,
        Source::Bundled("attention-quick".into())
    );
}

/// The browser tab's name (the page sets it) is the open section's and tab's titles.
#[test]
fn the_view_title_names_the_section_and_the_tab() {
    let ctx = egui::Context::default();
    let mut a = AppState::new(&ctx, settings("classroom"));
    assert!(a.open_tab("test", "eps"));
    assert_eq!(
        a.view_title(),
        "basis-lab · 5 The controlled test · ε sweep"
    );
    assert!(a.open_section("attention"));
    assert_eq!(a.view_title(), "basis-lab · Attention twins");
}

/// The step the key lab's run reaches within `limit` of polling (every 10 ms), stopping early
/// once it passes `past`.
fn step_within(a: &mut AppState, past: usize, limit: Duration) -> usize {
    let deadline = std::time::Instant::now() + limit;
    while a.lab.history.step <= past && std::time::Instant::now() < deadline {
        a.logic();
        std::thread::sleep(Duration::from_millis(10));
    }
    a.lab.history.step
}

/// The classroom link `?view=test/live&play#bl1:classroom`, the section's `?view=test&play`,
/// memory & reads, and a link without a view all play the key lab's live run (their views
/// have no analysis of their own): it runs and passes step 50 within seconds, at the page's
/// default speed. A link to a view with an analysis of its own (the seed sweep, the gauge
/// lab's live runs) starts that instead and leaves the key lab paused at step 0.
#[test]
fn a_link_to_a_key_lab_view_without_an_analysis_plays_the_live_run() {
    use basis_lab::app::follow::follow;
    use basis_lab::link::parse_page_link;
    let ctx = egui::Context::default();
    let page = || Settings {
        preset: Preset::load("classroom").unwrap(),
        ..Settings::default()
    };
    assert_eq!(page().speed, Some(200.0), "the page's default speed");
    for (search, hash) in [
        ("?view=test/live&play", "#bl1:classroom"),
        ("?view=test&play", ""),
        ("?view=test/activations&play", ""),
        ("?play", "#bl1:classroom"),
    ] {
        let mut a = AppState::new(&ctx, page());
        assert!(follow(&mut a, &parse_page_link(search, hash), None));
        let step = step_within(&mut a, 50, Duration::from_secs(20));
        assert!(step > 50, "{search}: step {step} after 20 s");
        assert!(
            a.lab.history.running,
            "{search}: still playing at step {step}"
        );
    }
    for (search, path) in [
        ("?view=test/sweep&play&seeds=2", "test/sweep"),
        ("?view=gauge/live&play&budget=200", "gauge/live"),
    ] {
        let mut a = AppState::new(&ctx, page());
        assert!(follow(&mut a, &parse_page_link(search, ""), None));
        assert_eq!(a.view_path(), path);
        assert!(a.view_busy(), "{search}: the view's own analysis runs");
        let step = step_within(&mut a, 0, Duration::from_millis(500));
        assert_eq!(step, 0, "{search}: the key lab stays paused");
        assert!(!a.lab.history.running, "{search}");
    }
}

/// A link to a view that does not exist names where the sections are: on the left of a wide
/// window, under ☰ at the top left of one too narrow for the section list (1024 points).
#[test]
fn a_link_to_no_view_says_where_the_sections_are_at_the_window_s_width() {
    use basis_lab::app::follow::follow;
    use basis_lab::app::widgets::reflow;
    use basis_lab::link::parse_page_link;
    for (width, place) in [(1280.0, "on the left"), (1024.0, "under ☰ at the top left")] {
        let mut h = Harness::builder()
            .with_size(egui::vec2(width, 768.0))
            .build_ui_state(
                |ui, state: &mut State| {
                    let app =
                        state.get_or_insert_with(|| AppState::new(ui.ctx(), settings("classroom")));
                    app.logic();
                    app.ui(ui)
                },
                None,
            );
        h.run_steps(2);
        let a = h.state_mut().as_mut().expect("first frame ran");
        assert_eq!(a.nav_folded(), width < reflow::NAV_FOLD);
        assert!(!follow(a, &parse_page_link("?view=tests&play", ""), None));
        let notice = a.lab.notice.clone().expect("a notice");
        assert!(
            notice.error && notice.text.contains(&format!("see the sections {place})")),
            "{width}: {}",
            notice.text
        );
    }
}

#[test]
fn presentation_s_next_offers_to_run_or_skip_an_empty_analysis() {
    let mut s = settings("classroom");
    s.preset.steps = 40;
    s.preset.baseline_rotations = 8;
    let mut h = harness_with(s, |a| {
        a.presenting = true;
        a.open_tab("test", "activations");
        a.panel_mut::<SeedSweep>("test/sweep").unwrap().0.seeds = 2;
    });
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    // A view without an analysis of its own makes no offer.
    assert!(h.query_by_label("has not run yet:").is_none());
    h.key_press(egui::Key::ArrowRight);
    h.step();
    assert_eq!(
        app(&h).view_title(),
        "basis-lab · 5 The controlled test · Seed sweep"
    );
    h.get_by_label("has not run yet:");
    h.get_by_label("Run it").click();
    let done = seed_sweep_done;
    wait_for(&mut h, "the sweep result", done);
    h.step();
    assert!(h.query_by_label("has not run yet:").is_none());
    assert_eq!(
        panel::<SeedSweep>(&h, "test/sweep")
            .analysis
            .last
            .as_ref()
            .unwrap()
            .result
            .seeds,
        vec![0, 1]
    );
    // The ε sweep has not run: skipping it lands on the next view without starting it.
    h.key_press(egui::Key::ArrowRight);
    h.step();
    h.get_by_label("Skip it").click();
    h.step();
    assert_eq!(
        app(&h).view_title(),
        "basis-lab · 5 The controlled test · Matched loss"
    );
    assert!(
        panel::<EpsSweep>(&h, "test/eps").analysis.last.is_none()
            && !panel::<EpsSweep>(&h, "test/eps").analysis.is_running()
    );
}

#[test]
fn presentation_mode_at_1024x768_gives_the_live_plots_most_of_the_height() {
    let mut h = harness_sized(settings("classroom"), egui::vec2(1024.0, 768.0), |a| {
        a.presenting = true;
        a.open_tab("test", "live");
    });
    wait_for(&mut h, "the run to start", |a| {
        a.lab.history.preset.is_some()
    });
    // The run's controls stay; the seed, N and the preset's description fold away.
    h.get_by_label("▶ Play").click();
    wait_for(&mut h, "steps", |a| a.lab.history.step > 20);
    h.get_by_label("About this run");
    assert!(h.query_by_label("New seed").is_none());
    assert!(h.query_by_label_contains("preset “classroom”").is_none());
    // The first plot's title sits in the top third (it sat at half the height before).
    let title = h.get_by_label_contains("(a) Twin orientation divergence");
    let top = title.rect().top();
    assert!(top < 768.0 / 3.0, "plot (a) starts at {top} of 768 points");
    // Opening the fold shows what it holds.
    h.get_by_label("About this run").click();
    h.step();
    h.step();
    h.get_by_label_contains("preset “classroom”");
}

/// Issue 37 item 6: a restart keeps the run it replaces as faded curves, named by what differed
/// ("gd lr 1"), with a toggle that hides it from the plots and from Export CSV, and Forget.
#[test]
fn a_restart_keeps_the_earlier_run_faded_with_a_toggle_and_its_csv() {
    use basis_lab::app::panels::controlled_test::plot_csv;
    use basis_lab::experiment::figures::{LivePlot, PAST_OPACITY, RunView, run_figure};
    let mut h = harness(settings("classroom"));
    wait_for(&mut h, "the first snapshot", |a| a.lab.snapshot_serial >= 1);
    h.get_by_label("▶ Play").click();
    wait_for(&mut h, "50 steps", |a| a.lab.history.step >= 50);
    let slider = egui::Role::Slider;
    h.get_all_by_role_and_label(slider, "learning rate")
        .next()
        .unwrap()
        .set_value_accesskit(16.0);
    wait_for(&mut h, "the restarted run", |a| {
        a.lab.history.past.len() == 1 && a.lab.history.preset.is_some()
    });
    let a = app(&h);
    let run = &a.lab.history.past[0];
    assert_eq!(run.label, "gd lr 1");
    assert!(run.run.steps >= 50 && run.shown, "{} steps", run.run.steps);
    assert_eq!(a.lab.preset.arms[0].lr, 2.0);
    let (_, fig) = run_figure(
        &a.lab.history,
        Some(LivePlot::Orientation),
        RunView::default(),
        8,
    );
    let faded = |fig: &basis_lab::figure::Figure| match &fig.body {
        basis_lab::figure::Body::Plot { marks, .. } => marks
            .iter()
            .filter(|m| m.opacity == PAST_OPACITY)
            .map(|m| m.name.clone())
            .collect::<Vec<_>>(),
        _ => Vec::new(),
    };
    // One faded curve per arm, the legend naming the run once.
    assert_eq!(faded(&fig), ["earlier 1: gd lr 1", ""]);
    let csv = plot_csv(&a.lab.history, LivePlot::Orientation);
    assert!(
        csv.contains("\nearlier 1 [gd lr 1] gd_orientation_div,"),
        "{csv:.300}"
    );
    h.run_steps(2);
    h.get_by_label_contains("gd lr 1 (").click();
    h.run_steps(2);
    let a = app(&h);
    assert!(!a.lab.history.past[0].shown);
    let (_, fig) = run_figure(
        &a.lab.history,
        Some(LivePlot::Orientation),
        RunView::default(),
        8,
    );
    assert!(faded(&fig).is_empty());
    assert!(!plot_csv(&a.lab.history, LivePlot::Orientation).contains("earlier"));
    h.get_by_label("Forget").click();
    h.run_steps(2);
    assert!(app(&h).lab.history.past.is_empty());
}

/// Issue 37 item 6: Presets → a bundled preset over edited settings offers Undo, which brings
/// the edits back; over an unedited bundled preset it just loads.
#[test]
fn a_bundled_preset_over_edits_offers_undo_and_undo_restores_them() {
    let mut h = harness(settings("classroom"));
    wait_for(&mut h, "the first snapshot", |a| a.lab.snapshot_serial >= 1);
    h.get_all_by_role_and_label(egui::Role::Slider, "learning rate")
        .next()
        .unwrap()
        .set_value_accesskit(16.0);
    h.run_steps(2);
    assert_eq!(app(&h).lab.preset.arms[0].lr, 2.0);
    h.get_by_label("Presets").click();
    h.run_steps(2);
    h.get_by_label("dk32").click();
    h.run_steps(2);
    let a = app(&h);
    assert_eq!(a.lab.preset.name, "dk32");
    assert!(
        a.lab.notice.as_ref().is_some_and(|n| n.undo.is_some()),
        "{:?}",
        a.lab.notice
    );
    h.get_by_label("Undo").click();
    h.run_steps(2);
    let a = app(&h);
    assert_eq!(
        (a.lab.preset.name.as_str(), a.lab.preset.arms[0].lr),
        ("classroom", 2.0)
    );
    assert_eq!(
        a.lab.notice.as_ref().map(|n| n.text.as_str()),
        Some("Your settings are back.")
    );
    // Unedited settings: a bundled preset just loads, with nothing to undo.
    h.get_by_label("Presets").click();
    h.run_steps(2);
    h.get_by_label("default").click();
    h.run_steps(2);
    h.get_by_label("Presets").click();
    h.run_steps(2);
    h.get_by_label("dk32").click();
    h.run_steps(2);
    let a = app(&h);
    assert_eq!(a.lab.preset.name, "dk32");
    assert!(a.lab.notice.as_ref().is_some_and(|n| n.undo.is_none()));
}

/// In presentation mode the gauge lab's live tab folds its rules (and its Run live button)
/// away; the presentation bar offers to run it while it has not run, and starts it.
#[test]
fn presentation_runs_the_gauge_live_tab_with_its_settings_folded() {
    let mut h = harness_sized(settings("classroom"), egui::vec2(1024.0, 768.0), |a| {
        a.presenting = true;
        a.open_tab("gauge", "live");
        let live = a.panel_mut::<LiveRuns>("gauge/live").unwrap().0;
        live.settings.rules = vec![rule("gd")];
        live.settings.budget = 100;
    });
    h.run_steps(3);
    // The rules and their Run live button are under the folded header.
    assert!(h.query_by_label("Run live").is_none());
    h.get_by_label("has not run yet:");
    h.get_by_label("Run it").click();
    wait_for(&mut h, "the live run", |a| {
        a.panel::<LiveRuns>("gauge/live").unwrap().summaries()[0].is_some()
    });
    h.step();
    assert!(h.query_by_label("has not run yet:").is_none());
    assert!(h.query_by_label("Pick rules and press Run live.").is_none());
}

/// Issue 37 item 6 in the gauge lab's live tab: Run live again keeps the runs it replaces as
/// faded curves, named by what the new start changed, with a toggle and Forget.
#[test]
fn the_gauge_live_tab_keeps_the_runs_it_replaces_faded() {
    use basis_lab::figure::PAST_OPACITY;
    let mut h = harness_with(settings("classroom"), |a| {
        a.open_tab("gauge", "live");
        let live = a.panel_mut::<LiveRuns>("gauge/live").unwrap().0;
        live.settings.rules = vec![rule("gd"), rule("adam")];
        live.settings.budget = 200;
        live.settings.seed = 0;
    });
    h.run_steps(3);
    h.get_by_label("Run live").click();
    // Every run summarised and the job ended, so the button reads "Run live" again (its
    // thread can end a moment after the last summary, which a loaded machine makes visible).
    let both = |a: &AppState| {
        let live = a.panel::<LiveRuns>("gauge/live").unwrap();
        let sums = live.summaries();
        !sums.is_empty() && sums.iter().all(|s| s.is_some()) && !live.status(&a.lab).busy
    };
    wait_for(&mut h, "the first runs", both);
    h.state_mut()
        .as_mut()
        .unwrap()
        .panel_mut::<LiveRuns>("gauge/live")
        .unwrap()
        .0
        .settings
        .seed = 1;
    h.run_steps(2);
    h.get_by_label("Run live").click();
    wait_for(&mut h, "the second runs", both);
    h.step();
    h.get_by_label("1: seed 0");
    let faded = |h: &Harness<'static, State>| {
        let f = panel::<LiveRuns>(h, "gauge/live").figure(LivePlot::Loss);
        match f.body {
            basis_lab::figure::Body::Plot { marks, .. } => marks
                .iter()
                .filter(|m| m.opacity == PAST_OPACITY)
                .map(|m| m.name.clone())
                .collect::<Vec<_>>(),
            _ => Vec::new(),
        }
    };
    assert_eq!(faded(&h), ["earlier 1: seed 0", ""]);
    h.get_by_label("1: seed 0").click();
    h.run_steps(2);
    assert!(faded(&h).is_empty());
    h.get_by_label("Forget").click();
    h.run_steps(2);
    assert!(h.query_by_label("Earlier runs, faded:").is_none());
}
