//! The web build (wasm32): eframe's web runner drawing [`AppState`] on the page's canvas, the
//! link's view and preset ([`crate::link`]), the browser's local storage for the settings, and
//! downloads in place of saved files. Training steps inside the frame loop
//! ([`crate::worker::Trainer::in_frames`]): a page has no threads.

use eframe::egui;
use wasm_bindgen::JsCast;

use crate::app::page::{document, location};
use crate::app::{AppState, Settings};
use crate::link::{PageLink, parse_page_link};
use crate::preset::Preset;
use crate::worker::Command;

/// The id of the canvas in `web/index.html`.
const CANVAS_ID: &str = "basis-lab-canvas";
/// The id of the page's loading line, replaced by an error if the app cannot start.
const STATUS_ID: &str = "basis-lab-status";

/// Starts the app on the page's canvas; called by `main` in the web build. If it cannot start
/// (no WebGL, say), the page's loading line says why.
pub fn start() {
    let runner = eframe::WebRunner::new();
    wasm_bindgen_futures::spawn_local(async move {
        let outcome = match canvas() {
            Some(canvas) => runner
                .start(
                    canvas,
                    eframe::WebOptions::default(),
                    Box::new(|cc| Ok(Box::new(WebApp::new(cc)))),
                )
                .await
                .map_err(|e| format!("{e:?}")),
            None => Err(format!("the page has no canvas `{CANVAS_ID}`")),
        };
        set_status(
            outcome
                .err()
                .map(|e| format!("basis-lab could not start: {e}")),
        );
    });
}

/// The web build's numerics check: runs `preset` (a bundled preset's name or a share string)
/// for `steps` steps as `basis-lab run --no-trace` does and returns its `metrics.csv`,
/// `activations.csv` and `summary.json`, each after a line `--- NAME`. A test compares the text
/// with the desktop's files byte for byte (`tests/web.rs`).
///
/// # Errors
/// An unknown or invalid preset, as text.
#[wasm_bindgen::prelude::wasm_bindgen(js_name = runTables)]
pub fn run_tables(preset: &str, steps: usize) -> Result<String, String> {
    let mut p = Preset::load(preset).map_err(|e| e.to_string())?;
    p.steps = steps;
    let [metrics, activations, summary] =
        crate::experiment::run::run_tables(&p).map_err(|e| format!("{e:#}"))?;
    Ok(format!(
        "--- metrics.csv\n{metrics}--- activations.csv\n{activations}--- summary.json\n{summary}"
    ))
}

fn canvas() -> Option<web_sys::HtmlCanvasElement> {
    document()?.get_element_by_id(CANVAS_ID)?.dyn_into().ok()
}

/// Hides the page's loading line, or shows `error` in it.
fn set_status(error: Option<String>) {
    let Some(status) = document().and_then(|d| d.get_element_by_id(STATUS_ID)) else {
        return;
    };
    match error {
        Some(e) => status.set_text_content(Some(&e)),
        None => status.remove(),
    }
}

/// What the page's address asks for.
fn this_link() -> PageLink {
    let Some(l) = location() else {
        return PageLink::default();
    };
    parse_page_link(
        &l.search().unwrap_or_default(),
        &l.hash().unwrap_or_default(),
    )
}

/// The app in the page: [`AppState`] and the theme it last set.
struct WebApp {
    state: AppState,
    theme: Option<bool>,
}

impl WebApp {
    /// The saved settings (browser storage), then what the link asks for: its preset (a bad
    /// one is reported and the default preset loaded instead, as for a bad pasted preset), its
    /// view, and whether to play.
    fn new(cc: &eframe::CreationContext<'_>) -> Self {
        let link = this_link();
        let mut settings = cc
            .storage
            .and_then(|s| eframe::get_value::<Settings>(s, eframe::APP_KEY))
            .unwrap_or_default();
        let mut problem = None;
        if let Some(text) = &link.share {
            match crate::share::decode::<Preset>(text) {
                Ok(p) => settings.preset = p,
                Err(e) => {
                    problem = Some(format!(
                        "The link's preset was not loaded ({e}); the default preset is loaded."
                    ));
                    settings.preset = crate::app::lab::default_preset();
                }
            }
        }
        let mut state = AppState::new(&cc.egui_ctx, settings);
        if let Some(text) = problem {
            state.lab.error(text);
        } else if link.share.is_some() {
            state.lab.inform("Opened the preset in the link.");
        }
        // The key lab, unless the link opens another view.
        let mut key_lab = true;
        if let Some(view) = &link.view {
            let (section, tab) = view.split_once('/').unwrap_or((view, ""));
            let opened =
                state.open_section(section) && (tab.is_empty() || state.open_tab(section, tab));
            key_lab = !opened || section == "test";
        }
        if link.play {
            // `play` plays the key lab's run, or starts the linked view's own runs (the gauge
            // lab's live runs, say) as its main button would; not both, which would share
            // each frame's time between them.
            if key_lab {
                state.lab.send(Command::Play);
            } else {
                state.start_open();
            }
        }
        Self { state, theme: None }
    }
}

impl eframe::App for WebApp {
    fn logic(&mut self, _ctx: &egui::Context, _frame: &mut eframe::Frame) {
        self.state.logic();
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.state.sync_theme(ui.ctx(), &mut self.theme);
        self.state.ui(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.state.settings());
    }
}
