//! The desktop app in an egui_kittest harness, as the UI tests drive it.

use std::time::Duration;

use basis_lab::app::{AppState, Settings};
use eframe::egui;
use egui_kittest::Harness;

/// What a harness holds: the app, once its first frame has built it.
pub type State = Option<AppState>;

/// The app with settings `s` in a window of `size` points, set up by `setup` before its first
/// frame; every frame runs the app's logic, then draws it (as eframe does).
pub fn harness_sized(
    s: Settings,
    size: egui::Vec2,
    setup: fn(&mut AppState),
) -> Harness<'static, State> {
    Harness::builder().with_size(size).build_ui_state(
        move |ui, state: &mut State| {
            let app = state.get_or_insert_with(|| {
                let mut app = AppState::new(ui.ctx(), s.clone());
                setup(&mut app);
                app
            });
            app.logic();
            app.ui(ui)
        },
        None,
    )
}

/// The app after its first frame. Panics before it.
pub fn app<'a>(h: &'a Harness<'static, State>) -> &'a AppState {
    h.state().as_ref().expect("first frame ran")
}

/// Steps frames until `cond` holds; fails after ~20 s, naming `what` and the key lab's state.
pub fn wait_for(h: &mut Harness<'static, State>, what: &str, cond: impl Fn(&AppState) -> bool) {
    for _ in 0..2000 {
        h.step();
        if h.state().as_ref().is_some_and(&cond) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let a = h.state().as_ref();
    panic!(
        "timed out waiting for: {what} (step {:?}, running {:?}, crashed {:?})",
        a.map(|a| a.lab.history.step),
        a.map(|a| a.lab.history.running),
        a.map(|a| a.lab.crashed.clone())
    );
}
