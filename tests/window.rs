//! The first window fits the monitor, and the UI zoom (Ctrl + = / − / 0) composes with
//! presentation mode's and is saved and checked like the other settings.

mod common;

use basis_lab::app::shell::ZOOM_RANGE;
use basis_lab::app::{
    AppState, MIN_WINDOW, MONITOR_SHARE, Settings, fit_window, place_window, saved,
};
use eframe::egui::{Key, Modifiers, Rect, pos2, vec2};
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

#[test]
fn a_window_saved_on_a_second_monitor_opens_centred_on_the_one_left() {
    let laptop = vec2(1280.0, 800.0);
    // Saved at x = 2200 on a projector to the right of the laptop: entirely off this monitor.
    let inner = vec2(1200.0, 700.0);
    let title = vec2(0.0, 30.0);
    let off = Rect::from_min_size(pos2(2200.0, 100.0), inner + title);
    let (pos, size) = place_window(off, inner, laptop).expect("moved");
    assert_eq!(size, inner);
    assert_eq!(pos, pos2(40.0, 35.0));
    // Mostly off the left edge (only a corner visible): centred too, at the fitted size.
    let big = vec2(1600.0, 1000.0);
    let corner = Rect::from_min_size(pos2(-1400.0, -900.0), big + title);
    let (pos, size) = place_window(corner, big, laptop).expect("moved");
    assert_eq!(size, fit_window(big, laptop));
    assert!(
        pos.x >= 0.0 && pos.y >= 0.0 && pos.x + size.x <= laptop.x,
        "{pos:?}"
    );
    // A window on the monitor at a size that fits stays exactly where it is.
    let home = Rect::from_min_size(pos2(30.0, 20.0), inner + title);
    assert_eq!(place_window(home, inner, laptop), None);
    // On the monitor but too large for it: shrunk, and kept inside the monitor.
    let wide = Rect::from_min_size(pos2(200.0, 20.0), big + title);
    let (pos, size) = place_window(wide, big, laptop).expect("shrunk");
    assert_eq!(size, fit_window(big, laptop));
    assert!(pos.x + size.x <= laptop.x && pos.y + size.y + title.y <= laptop.y);
}

proptest! {
    #[test]
    fn a_placed_window_is_on_its_monitor(
        x in -5000.0f32..5000.0, y in -3000.0f32..3000.0,
        w in 100.0f32..4000.0, h in 100.0f32..3000.0,
        mw in 800.0f32..3840.0, mh in 600.0f32..2160.0,
    ) {
        let monitor = vec2(mw, mh);
        let inner = vec2(w, h);
        let outer = Rect::from_min_size(pos2(x, y), inner + vec2(0.0, 30.0));
        let (min, size) = match place_window(outer, inner, monitor) {
            Some((p, s)) => (p, s),
            None => (outer.min, inner),
        };
        let placed = Rect::from_min_size(min, size + vec2(0.0, 30.0));
        let shown = placed.intersect(Rect::from_min_size(pos2(0.0, 0.0), monitor));
        prop_assert!(shown.is_positive() && shown.area() >= 0.5 * placed.area());
    }
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
