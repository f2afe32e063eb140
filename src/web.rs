//! The web build (wasm32): eframe's web runner drawing [`AppState`] on the page's canvas, the
//! link's view and preset ([`crate::link`]), the browser's local storage for the settings, and
//! downloads in place of saved files. Live runs step inside the frame loop
//! ([`crate::live::Live::in_frames`]) or, when a step outlasts a frame, in a Web Worker
//! ([`crate::live::Live::remote`], [`LiveHost`]); analyses run in Web Workers ([`run_task`]).

use eframe::egui;
use wasm_bindgen::JsCast;

use crate::app::page::{document, location};
use crate::app::{AppState, Settings};
use crate::link::{PageLink, parse_page_link};
use crate::preset::Preset;

/// The id of the canvas in `web/index.html`.
const CANVAS_ID: &str = "basis-lab-canvas";
/// The id of the page's loading line, replaced by an error if the app cannot start.
const STATUS_ID: &str = "basis-lab-status";

/// Starts the app on the page's canvas; called by `main` in the web build. If it cannot start
/// (no WebGL, say), the page's loading line says why. In a Web Worker (which has no window)
/// it does nothing: the worker only runs [`run_task`].
pub fn start() {
    if web_sys::window().is_none() {
        return;
    }
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

/// A Web Worker's work (`web/worker.js`): runs the analysis of kind `kind` from its RON text
/// `input` through the task registry ([`crate::tasks`]), posting its progress to the page
/// as it goes, and returns the output's RON text. A panic posts its message (`e…`) before the
/// worker's instance stops.
///
/// # Errors
/// An unknown kind or unreadable input, as text.
#[wasm_bindgen::prelude::wasm_bindgen(js_name = runTask)]
pub fn run_task(kind: &str, input: &str) -> Result<String, String> {
    post_panics();
    crate::tasks::run(kind, input, &crate::web_worker::report_progress)
}

/// In a Web Worker, a panic posts its message (`e…`) to the page before the instance stops
/// (a panic cannot be caught in the web build).
fn post_panics() {
    std::panic::set_hook(Box::new(|info| {
        let message = crate::live::panic_message(info.payload());
        crate::web_worker::post(&format!("e{message}"));
    }));
}

/// A live run in a Web Worker (`web/worker.js` drives it): each call posts the updates the run
/// sent (`u<RON>`) and returns what it wants next: `idle`, `busy`, `wait <ms>` or `done`.
#[wasm_bindgen::prelude::wasm_bindgen]
pub struct LiveHost(Box<dyn crate::live::TextRun>);

#[wasm_bindgen::prelude::wasm_bindgen]
impl LiveHost {
    /// The run's start.
    pub fn begin(&mut self) -> String {
        post_updates(self.0.begin())
    }

    /// The commands that arrived together (RON texts), in order.
    pub fn command(&mut self, commands: Vec<String>) -> String {
        post_updates(self.0.command(&commands))
    }

    /// A slice of work of about [`crate::live::SLICE`].
    pub fn work(&mut self) -> String {
        post_updates(self.0.work(crate::live::SLICE))
    }
}

/// Posts each update to the page; `next` as [`LiveHost`]'s words.
fn post_updates((updates, next): (Vec<String>, crate::live::Next)) -> String {
    for u in updates {
        crate::web_worker::post(&format!("u{u}"));
    }
    match next {
        crate::live::Next::Idle => "idle".into(),
        crate::live::Next::Busy => "busy".into(),
        crate::live::Next::Wait(d) => format!("wait {}", d.as_millis()),
        crate::live::Next::Done => "done".into(),
    }
}

/// A Web Worker's live run (`web/worker.js`): the run of kind `kind` built from its RON text
/// `args`, looked up in the task registry ([`crate::tasks::LIVE`]).
///
/// # Errors
/// An unknown kind.
#[wasm_bindgen::prelude::wasm_bindgen(js_name = startLive)]
pub fn start_live(kind: &str, args: &str) -> Result<LiveHost, String> {
    post_panics();
    crate::tasks::live(kind, args).map(LiveHost)
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

/// The app in the page: [`AppState`], the theme it last set, and whether the link asked for
/// the view's table once its run ends.
struct WebApp {
    state: AppState,
    theme: Option<bool>,
    csv: bool,
    /// The view the browser tab is named after (section and tab ids).
    named: (&'static str, &'static str),
    /// What [`WebApp::publish`] last wrote.
    published: Option<Progress>,
}

/// How the page's runs stand, as [`WebApp::publish`] writes it.
#[derive(PartialEq)]
struct Progress {
    step: usize,
    running: bool,
    live_step: Option<usize>,
    busy: bool,
    workers: usize,
}

impl WebApp {
    /// The saved settings (browser storage), then what the link asks for: its key-lab preset
    /// (a bad one is reported and the default preset loaded instead, as for a bad pasted
    /// preset), then the rest through [`crate::app::follow::follow`]: the view, a preset of
    /// the view's own kind, the view's settings and whether to play.
    fn new(cc: &eframe::CreationContext<'_>) -> Self {
        let link = this_link();
        let mut settings = cc
            .storage
            .and_then(|s| eframe::get_value::<Settings>(s, eframe::APP_KEY))
            .unwrap_or_default();
        let problem = crate::app::follow::load_key_preset(&link, &mut settings);
        let mut state = AppState::new(&cc.egui_ctx, settings);
        // The layout of the first frame, so that a notice about the link fits it (a point is a
        // CSS pixel over the app's zoom).
        if let Some(width) = web_sys::window()
            .and_then(|w| w.inner_width().ok())
            .and_then(|w| w.as_f64())
        {
            state.fit_width(width as f32 / state.zoom);
        }
        crate::app::follow::follow(&mut state, &link, problem);
        Self {
            state,
            theme: None,
            csv: link.csv,
            named: ("", ""),
            published: None,
        }
    }

    /// Writes how the runs stand onto the page's root element, for whoever drives the page
    /// (tests/web.rs reads it through DevTools): `data-step`, the key lab's step;
    /// `data-running`, whether it is playing; `data-live-step`, the open view's own live run's
    /// step ([`crate::app::panel::Status::live_step`], empty without one); `data-busy`, whether
    /// the view still works ([`AppState::view_busy`]); `data-workers`, how many Web Workers
    /// the page has started ([`crate::web_worker::started`]). Written when any of them changes.
    fn publish(&mut self) {
        let now = Progress {
            step: self.state.lab.history.step,
            running: self.state.lab.history.running,
            live_step: self.state.view().status(&self.state.lab).live_step,
            busy: self.state.view_busy(),
            workers: crate::web_worker::started(),
        };
        if self.published.as_ref() == Some(&now) {
            return;
        }
        let Some(root) = document().and_then(|d| d.document_element()) else {
            return;
        };
        let live_step = now.live_step.map_or(String::new(), |s| s.to_string());
        for (name, value) in [
            ("data-step", now.step.to_string()),
            ("data-running", now.running.to_string()),
            ("data-live-step", live_step),
            ("data-busy", now.busy.to_string()),
            ("data-workers", now.workers.to_string()),
        ] {
            let _ = root.set_attribute(name, &value);
        }
        self.published = Some(now);
    }

    /// Names the browser tab after the open view (`AppState::view_title`) when the view
    /// changes (compared by ids, so a frame allocates nothing).
    fn name_the_tab(&mut self) {
        let s = self.state.section();
        let shown = (s.id(), s.tabs().map_or("", |t| t.open().id()));
        if shown != self.named
            && let Some(d) = document()
        {
            d.set_title(&self.state.view_title());
            self.named = shown;
        }
    }

    /// Downloads the view's table once its run has ended, if the link asked for it (once: a
    /// run that failed or was cancelled leaves no table, and a later run is not downloaded).
    fn download_table(&mut self) {
        if !self.csv || self.state.view_busy() {
            return;
        }
        self.csv = false;
        let Some((name, bytes)) = self.state.view().table() else {
            return;
        };
        let outcome = bytes
            .map_err(|e| e.to_string())
            .and_then(|b| crate::app::files::write(std::path::Path::new(&name), &b));
        match outcome {
            Ok(said) => self.state.lab.inform(said),
            Err(e) => self
                .state
                .lab
                .error(format!("The table was not saved: {e}")),
        }
    }
}

impl eframe::App for WebApp {
    fn logic(&mut self, _ctx: &egui::Context, _frame: &mut eframe::Frame) {
        self.state.logic();
        self.download_table();
        self.name_the_tab();
        self.publish();
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.state.sync_theme(ui.ctx(), &mut self.theme);
        self.state.ui(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, eframe::APP_KEY, &self.state.settings());
    }
}
