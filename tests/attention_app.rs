//! The "Attention twins" section driven as a user would (egui_kittest, no display): found in the
//! navigation, Play/Pause/Step/Reset, a bad pasted preset, the A = I twin at exactly 0, a
//! diverging rule reported while the others go on, and its saved settings checked on load. A
//! tiny preset keeps every run to a fraction of a second.

use std::time::Duration;

use basis_lab::app::panel::Panel;
use basis_lab::app::panels::attention::{AttentionTwins, Curves, RunView, Source, Update};
use basis_lab::app::{AppState, Settings};
use basis_lab::attention::{AttentionPreset, TwinKind};
use basis_lab::preset::Preset;
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

type State = Option<AppState>;

/// One layer, two heads of width 4, addition mod 7; Adam with all three twins, momentum SGD
/// with its gauge twin. 40 steps, measured at 0..=10 and every 5 after.
const TINY: &str = r#"(
    name: "tiny",
    task: (modulus: 7, train_fraction: 0.5),
    model: (layers: 1, heads: 2, d_model: 8, d_mlp: 16, norm_eps: 1e-6),
    steps: 40,
    dense_until: 10,
    measure_every: 5,
    runs: [
        (rule: (optimizer: "adam", lr: 1e-2), twins: [Gauge, Identity, Noise]),
        (rule: (optimizer: "momentum", lr: 0.1, momentum: 0.9), twins: [Gauge]),
    ],
)"#;

fn tiny() -> AttentionPreset {
    AttentionPreset::from_ron(TINY, "tiny").expect("the test preset is valid")
}

/// The app with `preset` in the attention section (not opened: the navigation opens it).
fn harness(preset: AttentionPreset) -> Harness<'static, State> {
    let mut s = Settings {
        preset: Preset::load("classroom").unwrap(),
        speed: Some(1.0),
        ..Settings::default()
    };
    s.panels.insert(
        "attention".into(),
        ron::to_string(&basis_lab::app::panels::attention::Settings {
            source: Source::Custom(preset),
            ..Default::default()
        })
        .unwrap(),
    );
    Harness::builder()
        .with_size(egui::vec2(1280.0, 900.0))
        .build_ui_state(
            move |ui, state: &mut State| {
                let app = state.get_or_insert_with(|| AppState::new(ui.ctx(), s.clone()));
                app.logic();
                app.ui(ui)
            },
            None,
        )
}

fn section<'a>(h: &'a Harness<'static, State>) -> &'a AttentionTwins {
    h.state()
        .as_ref()
        .expect("first frame ran")
        .panel::<AttentionTwins>("attention")
        .expect("the attention section")
}

/// Steps frames until `cond` holds; fails after ~30 s.
fn wait_for(h: &mut Harness<'static, State>, what: &str, cond: impl Fn(&AttentionTwins) -> bool) {
    for _ in 0..3000 {
        h.step();
        if cond(section(h)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let v = &section(h).view;
    panic!(
        "timed out waiting for: {what} (step {:?}, running {}, failed {:?})",
        v.step, v.running, v.failed
    );
}

/// Opens the section from the navigation and waits for step 0's metrics.
fn open(h: &mut Harness<'static, State>) {
    h.run_steps(2);
    h.get_by_label("Attention twins").click();
    h.run_steps(2);
    let app = h.state().as_ref().unwrap();
    assert_eq!(app.section().id(), "attention");
    assert_eq!(app.lab.notice, None, "the preset was restored as saved");
    wait_for(h, "step 0", |s| s.view.step == Some(0));
}

#[test]
fn the_section_is_in_the_navigation_and_play_pause_step_reset_drive_the_run() {
    // Long enough that Pause lands mid-run.
    let mut p = tiny();
    p.steps = 100_000;
    let mut h = harness(p);
    open(&mut h);
    assert!(!section(&h).view.running);
    let at0 = section(&h).view.latest(0, Some(TwinKind::Gauge)).unwrap();
    assert_eq!(at0.step, 0);
    assert!(
        at0.logit_distance < 1e-13,
        "the gauge twin computes the same logits at step 0: {:e}",
        at0.logit_distance
    );
    h.get_by_label("▶ Play").click();
    wait_for(&mut h, "step 12", |s| s.view.step.is_some_and(|t| t >= 12));
    h.get_by_label("❚❚ Pause").click();
    wait_for(&mut h, "the pause", |s| !s.view.running);
    let paused = section(&h).view.step.unwrap();
    assert!(paused < 100_000, "paused before the end, at {paused}");
    for _ in 0..20 {
        h.step();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(section(&h).view.step, Some(paused), "Pause stops the run");
    // The plot has every measured step up to the pause: 0..=10, then multiples of 5.
    let measured: Vec<usize> = (0..=paused).filter(|&s| s <= 10 || s % 5 == 0).collect();
    let view_points = {
        let a = h.state_mut().as_mut().unwrap();
        let (s, _) = a.panel_mut::<AttentionTwins>("attention").unwrap();
        s.view.distance_points(0, TwinKind::Gauge)
    };
    let steps: Vec<usize> = view_points.iter().map(|p| p[0] as usize).collect();
    assert_eq!(steps, measured);
    let adam = section(&h).view.latest(0, Some(TwinKind::Gauge)).unwrap();
    let sgd = section(&h).view.latest(1, Some(TwinKind::Gauge)).unwrap();
    assert!(
        adam.logit_distance > 1e-6,
        "Adam's twins split: {:e}",
        adam.logit_distance
    );
    assert!(
        sgd.logit_distance < 1e-9,
        "momentum SGD's twins stay together: {:e}",
        sgd.logit_distance
    );
    h.get_by_label("Step").click();
    wait_for(&mut h, "one more step", |s| {
        s.view.step == Some(paused + 1) && !s.view.running
    });
    h.get_by_label("⟲ Reset").click();
    wait_for(&mut h, "step 0 again", |s| s.view.step == Some(0));
    let again = {
        let a = h.state_mut().as_mut().unwrap();
        let (s, _) = a.panel_mut::<AttentionTwins>("attention").unwrap();
        s.view.distance_points(0, TwinKind::Gauge)
    };
    assert_eq!(again.len(), 1, "only step 0 is left");
    assert_eq!(again[0][0], 0.0);
}

#[test]
fn the_identity_twin_reads_exactly_zero_to_the_end() {
    let mut h = harness(tiny());
    open(&mut h);
    h.get_by_label("▶ Play").click();
    wait_for(&mut h, "the last step", |s| {
        s.view.step == Some(40) && !s.view.running
    });
    let s = section(&h);
    for step in [0, 1, 40] {
        let r = s.view.at(0, Some(TwinKind::Identity), step).unwrap();
        assert_eq!(r.logit_distance, 0.0, "step {step}");
        assert!(r.qk_distance.iter().all(|&d| d == 0.0), "step {step}");
    }
    h.run_steps(2);
    let zeros = h.query_all_by_label("0").count();
    assert_eq!(zeros, 3, "the A = I row reads 0 at steps 0, 1 and 40");
    let floor = basis_lab::history::LOG_FLOOR.log10();
    let a = h.state_mut().as_mut().unwrap();
    let (panel, _) = a.panel_mut::<AttentionTwins>("attention").unwrap();
    let points = panel.view.distance_points(0, TwinKind::Identity);
    assert_eq!(points.len(), 17, "steps 0..=10 and 15, 20, .., 40");
    assert!(
        points.iter().all(|p| p[1] == floor),
        "drawn at the floor: {points:?}"
    );
}

#[test]
fn a_bad_pasted_preset_names_its_field_and_changes_nothing() {
    let mut h = harness(tiny());
    open(&mut h);
    h.get_by_label("Paste…").click();
    h.run_steps(2);
    h.get_by_label("Attention preset text").focus();
    h.step();
    h.get_by_label("Attention preset text")
        .type_text("(\n  steps: 500000,\n)");
    h.step();
    h.get_by_label("Load attention preset").click();
    h.run_steps(2);
    let app = h.state().as_ref().unwrap();
    let notice = app.lab.notice.clone().expect("an error notice");
    assert!(notice.error);
    assert!(
        notice.text.contains("Attention preset not loaded") && notice.text.contains("steps"),
        "{}",
        notice.text
    );
    let s = section(&h);
    assert_eq!(s.preset(), &tiny(), "the preset is unchanged");
    assert_eq!(s.view.step, Some(0), "the run is untouched");
    assert!(
        s.paste_text.is_some(),
        "the window stays open to fix the text"
    );
}

#[test]
fn a_diverging_rule_is_reported_while_the_others_go_on() {
    let mut p = tiny();
    p.runs[1].rule.lr = 1e6;
    p.runs[1].rule.label = Some("momentum-1e6".into());
    let mut h = harness(p.clone());
    open(&mut h);
    h.get_by_label("▶ Play").click();
    wait_for(&mut h, "the last step", |s| {
        s.view.step == Some(40) && !s.view.running
    });
    let s = section(&h);
    assert!(s.view.failed.is_none());
    let lines = s.view.divergence_lines(&p);
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("momentum-1e6 base model diverged at step")),
        "{lines:?}"
    );
    let adam = s.view.latest(0, None).unwrap();
    assert!(adam.train.loss.is_finite(), "Adam trains on");
    h.get_by_label_contains("momentum-1e6 base model diverged");
}

#[test]
fn saved_settings_come_back_and_bad_ones_are_reset_with_a_note() {
    let mut s = AttentionTwins::default();
    s.set_source(Source::Custom(tiny())).unwrap();
    s.set_seed(5).unwrap();
    s.settings.curves = Curves::Loss;
    s.settings.heat_run = "momentum".into();
    s.settings.heat_twin = TwinKind::Noise;
    let text = s.save().unwrap();
    let mut back = AttentionTwins::default();
    assert_eq!(back.load(&text).unwrap(), Vec::<String>::new());
    assert_eq!(back.settings, s.settings);
    assert_eq!(back.preset().seed, 5);
    assert_eq!(back.preset().name, "tiny");
    // An unknown bundled preset and a heatmap run that is not in the preset.
    let bad = "(source: Bundled(\"gone\"), seed: 3, curves: Loss, heat_run: \"nobody\", \
               heat_twin: Gauge)";
    let mut c = AttentionTwins::default();
    let notes = c.load(bad).unwrap();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].contains("gone") && notes[0].contains("attention-quick"));
    assert!(notes[1].contains("heat_run"));
    assert_eq!(c.settings.source, Source::Bundled("attention-quick".into()));
    assert_eq!(c.settings.heat_run, "adam");
    assert_eq!(c.settings.curves, Curves::Loss);
    // A custom preset with a field out of range is not run.
    let mut wide = tiny();
    wide.steps = 1_000_000;
    let damaged = ron::to_string(&basis_lab::app::panels::attention::Settings {
        source: Source::Custom(wide),
        ..Default::default()
    })
    .unwrap();
    let notes = c.load(&damaged).unwrap();
    assert!(notes[0].contains("steps"), "{notes:?}");
    assert_eq!(c.preset().name, "attention-quick");
    assert!(c.load("(seed: \"x\")").is_err(), "text that does not parse");
}

#[test]
fn a_run_that_cannot_start_is_reported_and_the_section_keeps_working() {
    // The job checks its preset itself; a failure (as a panic would) arrives as a message.
    let mut p = tiny();
    p.steps = 1_000_000;
    let job = basis_lab::attention::live::start(p, 0, std::sync::Arc::new(|| {}));
    let mut view = RunView::new(&tiny());
    for _ in 0..3000 {
        job.drain().into_iter().for_each(|m| view.apply(m));
        if view.failed.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let why = view.failed.clone().expect("the failure is reported");
    assert!(why.contains("steps"), "{why}");
    assert!(!view.running);
    for _ in 0..300 {
        if job.is_finished() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(job.is_finished(), "the thread has ended");
    // In the app: the banner shows and Reset starts a good run again.
    let mut h = harness(tiny());
    open(&mut h);
    {
        let a = h.state_mut().as_mut().unwrap();
        let (s, _) = a.panel_mut::<AttentionTwins>("attention").unwrap();
        s.view
            .apply(Update::Failed("the run panicked: test".into()));
    }
    h.run_steps(2);
    h.get_by_label_contains("The attention run stopped: the run panicked: test");
    h.get_by_label("⟲ Reset").click();
    wait_for(&mut h, "a fresh step 0", |s| {
        s.view.step == Some(0) && s.view.failed.is_none()
    });
}

/// Issue 37 item 6 in the attention twins: Reset (or a new seed or preset) keeps the run it
/// replaces as faded curves, named by what changed, with a toggle and Forget.
#[test]
fn a_reset_keeps_the_run_it_replaces_faded() {
    use basis_lab::attention::figures::past_marks;
    let mut p = tiny();
    p.steps = 100_000;
    let mut h = harness(p);
    open(&mut h);
    h.get_by_label("▶ Play").click();
    wait_for(&mut h, "step 6", |s| s.view.step.is_some_and(|t| t >= 6));
    h.get_by_label("❚❚ Pause").click();
    wait_for(&mut h, "the pause", |s| !s.view.running);
    h.get_by_label("⟲ Reset").click();
    wait_for(&mut h, "step 0 again", |s| s.view.step == Some(0));
    let past = &section(&h).view.past;
    assert_eq!(past.len(), 1);
    assert_eq!(
        (past[0].label.as_str(), past[0].shown),
        ("same settings", true)
    );
    // One faded gauge-twin distance per rule, the legend naming the run once.
    let marks = past_marks(past, None);
    assert!(!marks.is_empty() && marks[0].name == "earlier 1: same settings");
    assert!(marks[1..].iter().all(|m| m.name.is_empty()));
    h.run_steps(2);
    h.get_by_label("1: same settings").click();
    h.run_steps(2);
    assert!(past_marks(&section(&h).view.past, None).is_empty());
    h.get_by_label("Forget").click();
    h.run_steps(2);
    assert!(section(&h).view.past.is_empty());
}
