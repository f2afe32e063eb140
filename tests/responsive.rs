//! Every section and tab at the reference window sizes, from a 1024 × 640 laptop to a
//! 1920 × 1080 monitor (egui_kittest, no display): every interactive widget can be brought
//! inside the window (its rectangle lies in it, after scrolling it into view when it sits below
//! the fold), no two text labels overlap, and the central area never needs a sideways scroll.

use basis_lab::app::panels::{section_ids, tab_ids};
use basis_lab::app::widgets::reflow;
use basis_lab::app::{AppState, Settings};
use basis_lab::experiment::live::Command;
use basis_lab::preset::Preset;
use eframe::egui::{self, Rect};
use egui_kittest::Harness;
use egui_kittest::kittest::{By, NodeT, Queryable};

type State = Option<AppState>;

/// The reference sizes (logical points) of the issue.
const SIZES: [[f32; 2]; 5] = [
    [1024.0, 640.0],
    [1280.0, 720.0],
    [1366.0, 768.0],
    [1440.0, 900.0],
    [1920.0, 1080.0],
];

fn harness(size: [f32; 2]) -> Harness<'static, State> {
    let settings = Settings {
        preset: Preset::load("default").unwrap(),
        speed: None,
        ..Settings::default()
    };
    Harness::builder()
        .with_size(egui::vec2(size[0], size[1]))
        .build_ui_state(
            move |ui, state: &mut State| {
                let app = state.get_or_insert_with(|| AppState::new(ui.ctx(), settings.clone()));
                app.logic();
                app.ui(ui)
            },
            None,
        )
}

fn app<'a>(h: &'a Harness<'static, State>) -> &'a AppState {
    h.state().as_ref().expect("first frame ran")
}

/// Roles of the widgets a user clicks, drags or types into.
fn interactive(role: egui::accesskit::Role) -> bool {
    use egui::accesskit::Role;
    matches!(
        role,
        Role::Button
            | Role::CheckBox
            | Role::RadioButton
            | Role::Slider
            | Role::SpinButton
            | Role::TextInput
            | Role::MultilineTextInput
            | Role::ComboBox
            | Role::Tab
            | Role::Link
    )
}

fn inside(r: Rect, window: Rect) -> bool {
    window.expand(0.5).contains_rect(r)
}

/// Runs the live run to a few snapshots so the plots, heatmaps and table are drawn full.
fn fill_live_run(h: &mut Harness<'static, State>) {
    h.run_steps(2);
    h.state_mut().as_mut().unwrap().lab.send(Command::Step(120));
    for _ in 0..2000 {
        h.step();
        let a = app(h);
        if a.lab.history.step >= 120 && a.lab.history.snapshot.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(
        app(h).lab.history.step >= 120,
        "the live run did not advance"
    );
    h.run_steps(3);
}

/// Checks the view on screen; `what` names it in failures.
fn check_view(h: &mut Harness<'static, State>, window: Rect, what: &str) {
    let excess = app(h).central_overflow;
    // Under a pixel of rounding at fractional zoom is not a scroll bar.
    assert!(
        excess < 1.0,
        "{what}: the central area's content is {excess} points wider than the area (it would \
         need a sideways scroll)"
    );
    // Text labels must not sit on one another (a wrapped title on a legend, say).
    let labels: Vec<(String, Rect)> = h
        .query_all(
            By::new()
                .include_labels()
                .predicate(|n| n.role() == egui::accesskit::Role::Label),
        )
        .map(|n| (n.accesskit_node().value().unwrap_or_default(), n.rect()))
        .filter(|(text, r)| !text.trim().is_empty() && r.intersects(window))
        .collect();
    assert!(
        labels.len() >= 5,
        "{what}: only {} labels found",
        labels.len()
    );
    for (i, (a, ra)) in labels.iter().enumerate() {
        for (b, rb) in &labels[i + 1..] {
            let overlap = ra.intersect(*rb);
            assert!(
                !(overlap.width() > 1.0 && overlap.height() > 1.0),
                "{what}: label {a:?} at {ra:?} overlaps label {b:?} at {rb:?}"
            );
        }
    }
    // Widgets outside the window must be below the fold of a scroll area and come into view.
    let outside: Vec<(_, String, Rect)> = h
        .query_all(By::new().predicate(|n| interactive(n.role())))
        .filter(|n| !inside(n.rect(), window))
        .map(|n| {
            let node = n.accesskit_node();
            let name = format!("{:?} {:?}", node.role(), node.label());
            (node.id(), name, n.rect())
        })
        .collect();
    for (id, name, rect) in outside {
        assert!(
            rect.left() >= window.left() - 0.5 && rect.right() <= window.right() + 0.5,
            "{what}: {name} at {rect:?} is cut off at the side of the {window:?} window"
        );
        let node = h
            .query_all(By::new().predicate(move |n| n.id() == id))
            .next();
        let Some(node) = node else { continue };
        node.scroll_to_me();
        // Scrolling is animated: let it finish.
        h.run_steps(40);
        if let Some(node) = h
            .query_all(By::new().predicate(move |n| n.id() == id))
            .next()
        {
            assert!(
                inside(node.rect(), window),
                "{what}: {name} stays out of reach at {:?} in the {window:?} window",
                node.rect()
            );
        }
    }
}

/// Every section, and every tab of a section that has them, at `size`.
fn visit_everything(size: [f32; 2]) -> usize {
    let mut h = harness(size);
    fill_live_run(&mut h);
    let window = Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size[0], size[1]));
    let mut views = 0;
    for section in section_ids() {
        let tabs = tab_ids(section).unwrap();
        let targets: Vec<Option<&str>> = if tabs.is_empty() {
            vec![None]
        } else {
            tabs.into_iter().map(Some).collect()
        };
        for tab in targets {
            {
                let a = h.state_mut().as_mut().unwrap();
                assert!(a.open_section(section));
                if let Some(t) = tab {
                    assert!(a.open_tab(section, t));
                }
            }
            h.run_steps(4);
            let what = format!("{}×{} {section}/{}", size[0], size[1], tab.unwrap_or("-"));
            check_view(&mut h, window, &what);
            views += 1;
            // Where the settings fold into a drawer, the view must also fit beside it open.
            if app(&h).section().has_side() && size[0] < reflow::SIDE_FOLD {
                h.state_mut().as_mut().unwrap().drawer_open = true;
                h.run_steps(4);
                check_view(
                    &mut h,
                    window,
                    &format!("{what} with the settings drawer open"),
                );
                h.state_mut().as_mut().unwrap().drawer_open = false;
                views += 1;
            }
        }
    }
    views
}

#[test]
fn every_view_fits_a_1024_by_640_laptop() {
    assert!(visit_everything(SIZES[0]) >= 14);
}

#[test]
fn every_view_fits_1280_by_720() {
    assert!(visit_everything(SIZES[1]) >= 14);
}

#[test]
fn every_view_fits_1366_by_768() {
    assert!(visit_everything(SIZES[2]) >= 14);
}

#[test]
fn every_view_fits_1440_by_900() {
    assert!(visit_everything(SIZES[3]) >= 14);
}

#[test]
fn every_view_fits_1920_by_1080() {
    assert!(visit_everything(SIZES[4]) >= 14);
}

#[test]
fn narrow_windows_fold_the_section_list_and_the_settings_into_a_drawer() {
    let mut h = harness(SIZES[0]);
    h.run_steps(3);
    // The section list is a menu: its button names the open section.
    h.get_by_label("☰ 5  The controlled test").click();
    h.run_steps(2);
    h.get_by_label("6  Reading results honestly").click();
    h.run_steps(2);
    assert_eq!(app(&h).section().id(), "reading");
    // The settings column opens as a drawer from its button, and F9 closes it.
    h.state_mut().as_mut().unwrap().open_section("test");
    h.run_steps(2);
    assert!(
        h.query_by_label("Run control").is_none(),
        "settings folded away"
    );
    h.get_by_label("⚙ Settings").click();
    h.run_steps(2);
    assert!(app(&h).drawer_open);
    assert!(
        h.query_by_label("Run control").is_some(),
        "the drawer shows the settings"
    );
    h.key_press(egui::Key::F9);
    h.run_steps(2);
    assert!(!app(&h).drawer_open);
    // A wide window pins both.
    let mut wide = harness(SIZES[4]);
    wide.run_steps(3);
    assert!(wide.query_by_label("Sections").is_some());
    assert!(wide.query_by_label("Run control").is_some());
}

#[test]
fn presentation_mode_enlarges_hides_the_side_panels_and_steps_through_the_views() {
    let mut h = harness(SIZES[1]);
    fill_live_run(&mut h);
    let zoom = h.ctx.zoom_factor();
    h.key_press(egui::Key::F11);
    h.run_steps(3);
    assert!(app(&h).presenting);
    assert!((h.ctx.zoom_factor() - zoom * reflow::PRESENT_ZOOM).abs() < 1e-4);
    assert!(h.query_by_label("Sections").is_none(), "no section list");
    assert!(
        h.query_by_label("Run control").is_none(),
        "no settings column"
    );
    assert!(h.query_by_label("Leave presentation (Esc)").is_some());
    // Page Down and → go forward through the tabs, in the registry's order.
    assert_eq!(app(&h).section().tabs().unwrap().open().id(), "live");
    h.key_press(egui::Key::PageDown);
    h.run_steps(2);
    assert_eq!(app(&h).section().tabs().unwrap().open().id(), "activations");
    h.key_press(egui::Key::ArrowRight);
    h.run_steps(2);
    assert_eq!(app(&h).section().tabs().unwrap().open().id(), "sweep");
    h.key_press(egui::Key::PageUp);
    h.key_press(egui::Key::ArrowLeft);
    h.run_steps(2);
    assert_eq!(app(&h).section().tabs().unwrap().open().id(), "live");
    // Back past the first tab is the section before.
    h.key_press(egui::Key::PageUp);
    h.run_steps(2);
    assert_eq!(app(&h).section().id(), "why");
    h.key_press(egui::Key::PageDown);
    h.run_steps(2);
    // Transport shortcuts keep working: Space plays, Space pauses.
    let before = app(&h).lab.history.step;
    h.key_press(egui::Key::Period);
    for _ in 0..500 {
        h.step();
        if app(&h).lab.history.step > before {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(app(&h).lab.history.step, before + 1, "'.' took one step");
    // A plot fills the screen and comes back.
    h.get_all_by_label("Fill the screen")
        .next()
        .unwrap()
        .click();
    h.run_steps(3);
    assert!(h.query_by_label("Fill the screen").is_none());
    let lone = h.get_by_label("All plots");
    lone.click();
    h.run_steps(3);
    assert_eq!(h.get_all_by_label("Fill the screen").count(), 4);
    // Esc leaves and restores the zoom.
    h.key_press(egui::Key::Escape);
    h.run_steps(3);
    assert!(!app(&h).presenting);
    assert!((h.ctx.zoom_factor() - zoom).abs() < 1e-4);
    assert!(h.query_by_label("Sections").is_some());
}

#[test]
fn presentation_mode_fits_1024_by_768_and_1280_by_720() {
    for size in [[1024.0, 768.0], [1280.0, 720.0]] {
        let mut h = harness(size);
        fill_live_run(&mut h);
        h.state_mut().as_mut().unwrap().fullscreen_allowed = false;
        h.key_press(egui::Key::F11);
        h.run_steps(4);
        let window = Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(size[0], size[1]));
        for tab in ["live", "activations"] {
            h.state_mut().as_mut().unwrap().open_tab("test", tab);
            h.run_steps(4);
            check_view(
                &mut h,
                window,
                &format!("presenting {}×{} test/{tab}", size[0], size[1]),
            );
        }
    }
}
