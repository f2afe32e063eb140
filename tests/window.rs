//! The first window fits the monitor, and the UI zoom (Ctrl + = / − / 0) composes with
//! presentation mode's and is saved and checked like the other settings.

mod common;

use basis_lab::app::shell::ZOOM_RANGE;
use basis_lab::app::{AppState, MIN_WINDOW, MONITOR_SHARE, Settings, fit_window, saved};
use eframe::egui::{Key, Modifiers, vec2};
use egui_kittest::Harness;
use proptest::prelude::*;

#[test]
fn a_desk_sized_window_shrinks_to_a_laptop_and_stays_on_a_large_monitor() {
    // A 2x HiDPI laptop of 2560 x 1600 pixels is 1280 x 800 points.
    let fitted = fit_window(vec2(1680.0, 1050.0), vec2(1280.0, 800.0));
    assert_eq!(fitted, vec2(1280.0 * 0.96, 720.0));
    assert_eq!(
        fit_window(vec2(1680.0, 1050.0), vec2(2560.0, 1440.0)),
        vec2(1680.0, 1050.0)
    );
    // A saved size from a larger monitor is clamped the same way.
    assert_eq!(
        fit_window(vec2(2400.0, 1500.0), vec2(1920.0, 1080.0)),
        vec2(1920.0 * 0.96, 972.0)
    );
    // A monitor smaller than the smallest window gets the whole monitor.
    assert_eq!(
        fit_window(vec2(1680.0, 1050.0), vec2(600.0, 400.0)),
        vec2(600.0, 400.0)
    );
}

proptest! {
    #[test]
    fn a_fitted_window_is_never_larger_than_its_monitor(
        w in 64.0f32..8000.0, h in 64.0f32..8000.0, mw in 200.0f32..8000.0, mh in 200.0f32..8000.0,
    ) {
        let monitor = vec2(mw, mh);
        let f = fit_window(vec2(w, h), monitor);
        prop_assert!(f.x <= mw && f.y <= mh, "{f:?} on {monitor:?}");
        // Never smaller than asked unless the monitor's share forces it, and never below the
        // smallest window the monitor has room for.
        let room = monitor * MONITOR_SHARE;
        prop_assert!(f.x >= w.min(room.x).min(mw) && f.y >= h.min(room.y).min(mh));
        prop_assert!(f.x >= MIN_WINDOW.x.min(mw) && f.y >= MIN_WINDOW.y.min(mh));
    }
}

type State = Option<AppState>;

fn harness(settings: Settings) -> Harness<'static, State> {
    Harness::builder()
        .with_size(vec2(1280.0, 720.0))
        .build_ui_state(
            move |ui, state: &mut State| {
                let app = state.get_or_insert_with(|| AppState::new(ui.ctx(), settings.clone()));
                app.logic();
                app.ui(ui);
            },
            None,
        )
}

fn app<'a>(h: &'a Harness<'static, State>) -> &'a AppState {
    h.state().as_ref().unwrap()
}

fn paused() -> Settings {
    Settings {
        speed: Some(1.0),
        ..Settings::default()
    }
}

/// Presses `key` with `modifiers` and lets the next frame apply the zoom.
fn press(h: &mut Harness<'static, State>, modifiers: Modifiers, key: Key) {
    h.key_press_modifiers(modifiers, key);
    h.run_steps(2);
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-4
}

#[test]
fn ctrl_plus_minus_and_zero_zoom_and_compose_with_presentation_mode() {
    let mut h = harness(paused());
    h.run_steps(2);
    assert!(close(h.ctx.zoom_factor(), 1.0));
    press(&mut h, Modifiers::COMMAND, Key::Equals);
    press(&mut h, Modifiers::COMMAND, Key::Plus);
    assert!(close(app(&h).zoom, 1.2), "{}", app(&h).zoom);
    assert!(close(h.ctx.zoom_factor(), 1.2));
    press(&mut h, Modifiers::NONE, Key::F11);
    assert!(close(h.ctx.zoom_factor(), 1.2 * 1.4));
    // Zooming while presenting changes the user's zoom under presentation mode's.
    press(&mut h, Modifiers::COMMAND, Key::Minus);
    assert!(close(app(&h).zoom, 1.1));
    assert!(
        close(h.ctx.zoom_factor(), 1.1 * 1.4),
        "{}",
        h.ctx.zoom_factor()
    );
    press(&mut h, Modifiers::NONE, Key::Escape);
    assert!(close(h.ctx.zoom_factor(), 1.1));
    press(&mut h, Modifiers::COMMAND, Key::Num0);
    assert!(close(app(&h).zoom, 1.0) && close(h.ctx.zoom_factor(), 1.0));
    for _ in 0..40 {
        h.key_press_modifiers(Modifiers::COMMAND, Key::Minus);
        h.step();
    }
    h.run_steps(2);
    assert!(close(app(&h).zoom, *ZOOM_RANGE.start()));
}

#[test]
fn the_zoom_is_saved_and_restored_with_the_settings() {
    let mut h = harness(paused());
    h.run_steps(2);
    for _ in 0..3 {
        press(&mut h, Modifiers::COMMAND, Key::Equals);
    }
    let saved = app(&h).settings();
    assert!(close(saved.zoom, 1.3));
    // Through the settings file as eframe writes it and the app reads it back.
    let text = common::app_ron(&saved);
    let mut read = saved::parse_app_ron(&text).unwrap().unwrap();
    assert!(saved::sanitize(&mut read).is_empty());
    let mut h2 = harness(read);
    h2.run_steps(2);
    assert!(close(app(&h2).zoom, 1.3));
    assert!(close(h2.ctx.zoom_factor(), 1.3));
}

#[test]
fn a_saved_zoom_out_of_range_is_reset_with_a_notice() {
    for bad in [7.0, 0.01, f32::NAN, f32::INFINITY] {
        let mut s = Settings {
            zoom: bad,
            ..paused()
        };
        let notes = saved::sanitize(&mut s);
        assert_eq!(s.zoom, 1.0);
        assert!(
            notes.len() == 1 && notes[0].contains("`zoom`"),
            "{bad}: {notes:?}"
        );
    }
    let mut h = harness(Settings {
        zoom: 9.0,
        ..paused()
    });
    h.run_steps(2);
    assert!(close(h.ctx.zoom_factor(), 1.0));
    let notice = app(&h).lab.notice.clone().expect("a notice");
    assert!(notice.text.contains("`zoom` 9"), "{}", notice.text);
}

#[test]
fn settings_written_before_the_zoom_existed_read_as_zoom_one() {
    let text = common::app_ron(&Settings::default()).replace(",zoom:1.0", "");
    assert!(!text.contains("zoom"));
    let read = saved::parse_app_ron(&text).unwrap().unwrap();
    assert_eq!(read.zoom, 1.0);
}
