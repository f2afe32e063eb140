//! The hyperspectral tab: the paper's Table 5 protocol (`basis-lab hsi --grid`) on a scene the
//! user picks, run in the background, and its Figure 5 view: held-out RMSE and effective rank
//! of UVᵀ against the training loss at the six levels, mean ± 1 sd over the seeds, beside the
//! paper's values. In the page the scene is uploaded and the run goes to a Web Worker.

use eframe::egui::{self, RichText};
use serde::{Deserialize, Serialize};

use crate::app::analysis::{Analysis, Finished, threads};
use crate::app::lab::Lab;
use crate::app::panel::{Panel, Status, Table, from_ron, link_count, to_ron};
use crate::app::widgets::figure_plot;
use crate::app::widgets::plots::{export_button, export_table, plot_header, save_figure};
use crate::app::widgets::reflow::{self, Cells, PLOT_MIN_W};
use crate::app::widgets::status::progress_row;
use crate::sensing::hsi::figures;
use crate::sensing::hsi::grid::{GridPlan, GridReport, Grids, RateSummary};
use crate::sensing::hsi::report::{paper_entry, paper_rows, read_grid, summary_csv_bytes};
use crate::sensing::hsi::task::{HsiInputs, HsiTask, HsiTrial};
use crate::sensing::hsi::{HsiConfig, HsiError, RULES};
use crate::validate::{check_count, number_list};

/// The range of the step budget per run.
const STEPS: std::ops::RangeInclusive<usize> = 100..=100_000;
/// The range of the density field (and of a link's `density`).
const DENSITY: std::ops::RangeInclusive<f64> = 0.01..=0.99;

/// The hyperspectral tab: its settings and its last grid run.
#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct HsiTab {
    /// The inputs of the next run.
    pub inputs: HsiInputs,
    /// The last run (with its runs' loss curves dropped: the view reads the summaries).
    pub analysis: Analysis<HsiInputs, GridReport>,
    /// The uploaded scene file's bytes (the page cannot read a path), not saved.
    #[serde(skip)]
    pub uploaded: Option<Vec<u8>>,
    /// The scene a link named (its address, which a link to the tab can name again); `None`
    /// for a scene chosen on this computer, which another one could not open. Not saved.
    #[serde(skip)]
    linked_scene: Option<String>,
    /// The file being chosen in the page, and what it is for.
    #[cfg(target_arch = "wasm32")]
    #[serde(skip)]
    upload: Option<(Picking, crate::app::files::Upload)>,
    /// Whether the run starts once the scene being chosen is read (Run, or a link's `play`,
    /// before any scene was chosen in the page).
    #[cfg(target_arch = "wasm32")]
    #[serde(skip)]
    run_when_read: bool,
}

/// What a file chosen in the page is for.
#[cfg(target_arch = "wasm32")]
#[derive(Clone, Copy, PartialEq)]
enum Picking {
    /// The scene of the next run (a .mat file).
    Scene,
    /// Results to show (an hsi.json).
    Results,
}

impl Default for HsiTab {
    fn default() -> Self {
        Self {
            inputs: HsiInputs {
                scene: String::new(),
                var: String::new(),
                density: 0.15,
                steps: HsiConfig::default().steps,
                plan: GridPlan::paper(RULES.iter().map(|r| r.name.to_string()).collect()),
            },
            analysis: Analysis::default(),
            uploaded: None,
            linked_scene: None,
            #[cfg(target_arch = "wasm32")]
            upload: None,
            #[cfg(target_arch = "wasm32")]
            run_when_read: false,
        }
    }
}

/// Puts rule names in the registry's order (the report's), whatever order they were chosen in.
fn sort_rules(rules: &mut [String]) {
    rules.sort_by_key(|n| RULES.iter().position(|r| r.name == n));
}

/// Seeds as the fields show them.
fn seeds_text(seeds: &[u64]) -> String {
    seeds
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl Panel for HsiTab {
    fn id(&self) -> &'static str {
        "hsi"
    }

    fn title(&self) -> &'static str {
        "Hyperspectral"
    }

    fn logic(&mut self, lab: &mut Lab) {
        self.analysis.poll("Hyperspectral run", lab);
        #[cfg(target_arch = "wasm32")]
        self.collect_upload(lab);
    }

    /// Starts the grid run ([`HsiTab::launch`]).
    fn start(&mut self, lab: &mut Lab) -> bool {
        self.launch(lab);
        true
    }

    fn table(&self) -> Option<Table> {
        let report = &self.analysis.last.as_ref()?.result;
        Some(("hsi_summary.csv".into(), summary_csv_bytes(report)))
    }

    /// The analysis's, busy also while a linked scene is fetched.
    fn status(&self, _lab: &Lab) -> Status {
        let s = self.analysis.status();
        Status {
            busy: s.busy || self.fetching(),
            ..s
        }
    }

    fn link_settings(&self) -> Vec<(&'static str, String)> {
        let i = &self.inputs;
        let mut out = Vec::new();
        if let Some(scene) = &self.linked_scene {
            out.push(("scene", scene.clone()));
        }
        if !i.var.trim().is_empty() {
            out.push(("var", i.var.trim().to_string()));
        }
        let seeds = |s: &[u64]| s.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        out.extend([
            ("density", i.density.to_string()),
            ("steps", i.steps.to_string()),
            ("rules", i.plan.rules.join(",")),
            ("grids", i.plan.grids.name().to_string()),
            ("selection", seeds(&i.plan.selection_seeds)),
            ("report", seeds(&i.plan.report_seeds)),
        ]);
        out
    }

    /// `scene` (in the page: the address of a scene file, relative to the page, which is
    /// fetched; on the desktop: a path), `var`, `density`, `steps`, `rules` (comma-separated),
    /// `grids` (`paper` or `own`), `selection` and `report` (comma-separated seeds). Each is
    /// checked as the tab's own field is; the plan as a whole is checked when the run starts.
    fn set_from_link(&mut self, name: &str, value: &str, lab: &mut Lab) -> Result<bool, String> {
        let i = &mut self.inputs;
        let v = value.trim();
        match name {
            "scene" if v.is_empty() => return Err("`scene` is empty: name the scene file".into()),
            "scene" => {
                i.scene = v.to_string();
                self.uploaded = None;
                self.linked_scene = Some(v.to_string());
                #[cfg(target_arch = "wasm32")]
                {
                    let fetch = crate::app::files::Upload::fetch(v, lab.repaint_handle());
                    self.upload = Some((Picking::Scene, fetch));
                }
                #[cfg(not(target_arch = "wasm32"))]
                let _ = lab;
            }
            "var" => i.var = v.to_string(),
            "density" => {
                i.density = v
                    .parse()
                    .ok()
                    .filter(|d: &f64| DENSITY.contains(d))
                    .ok_or_else(|| {
                        let (lo, hi) = (DENSITY.start(), DENSITY.end());
                        format!("`density={value}` is not a number in {lo}..={hi}")
                    })?;
            }
            "steps" => i.steps = link_count(name, value, STEPS)?,
            "rules" => {
                let rules: Vec<String> = (v.split(',').map(str::trim))
                    .filter(|r| !r.is_empty())
                    .map(String::from)
                    .collect();
                if let Some(bad) = rules.iter().find(|r| !RULES.iter().any(|k| k.name == *r)) {
                    let names: Vec<&str> = RULES.iter().map(|r| r.name).collect();
                    return Err(format!(
                        "`rules`: no rule `{bad}` (rules: {})",
                        names.join(", ")
                    ));
                }
                i.plan.rules = rules;
                sort_rules(&mut i.plan.rules);
            }
            "grids" => i.plan.grids = v.parse().map_err(|e| format!("`grids`: {e}"))?,
            "selection" => {
                i.plan.selection_seeds = number_list(v).map_err(|e| format!("`selection`: {e}"))?
            }
            "report" => {
                i.plan.report_seeds = number_list(v).map_err(|e| format!("`report`: {e}"))?
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn save(&self) -> Option<String> {
        to_ron(self)
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let mut s: HsiTab = from_ron(ron)?;
        let mut notes = Vec::new();
        let defaults = HsiTab::default().inputs;
        check_count(
            &mut notes,
            "steps",
            &mut s.inputs.steps,
            STEPS,
            defaults.steps,
        );
        if !(s.inputs.density.is_finite() && s.inputs.density > 0.0 && s.inputs.density < 1.0) {
            notes.push(format!(
                "`density` {} is outside (0, 1); reset to {}",
                s.inputs.density, defaults.density
            ));
            s.inputs.density = defaults.density;
        }
        if let Err(e) = s.inputs.plan.validate() {
            notes.push(format!("the plan ({e}) was reset to the paper's"));
            s.inputs.plan = defaults.plan;
        }
        notes.extend(
            s.analysis
                .check_saved("hyperspectral run", |f| f.result.check().map(|()| f)),
        );
        *self = s;
        Ok(notes)
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        let mut start = false;
        let mut export = false;
        // Folding the text and the settings leaves the plots room on a projector.
        egui::CollapsingHeader::new("Scene, protocol and run")
            .default_open(true)
            .show(ui, |ui| {
                ui.label(
                    "Completion of a hyperspectral scene, as in the paper's Table 5: every rate \
                     of each rule's grid on the selection seeds, one rate per rule picked from \
                     their training losses alone, that rate again on the report seeds. The plots \
                     follow each rule along its fit: held-out error and effective rank where the \
                     training loss first drops below each of six levels (deeper to the right), \
                     mean ± 1 sd over the seeds.",
                );
                self.settings_ui(ui, lab, &mut start, &mut export);
            });
        self.dropped_files(ui, lab);
        if start {
            self.start(lab);
        }
        let Some(last) = &self.analysis.last else {
            let text = if self.status(lab).busy {
                "Running: the plots and the table appear when every run has ended."
            } else {
                "No results yet: choose a scene and press Run, or open the hsi.json of a run \
                 made elsewhere (Open results…; the repository keeps one in docs/results)."
            };
            ui.label(RichText::new(text).weak());
            return;
        };
        let (inputs, report) = (&last.inputs, &last.result);
        if export && let Some((name, bytes)) = self.table() {
            export_table(lab, &name, "The run is still here", || bytes);
        }
        ui.label(
            RichText::new(format!(
                "Last run: {} (density {}, {} steps per run, seeds {} for the selection and {} \
                 for the report; {:.0} s).",
                inputs.scene,
                inputs.density,
                inputs.steps,
                seeds_text(&inputs.plan.selection_seeds),
                seeds_text(&inputs.plan.report_seeds),
                report.seconds
            ))
            .weak(),
        );
        let paper = report
            .setups
            .first()
            .and_then(|s| paper_rows(s).first().copied());
        let shown = figures::shown(report);
        let figs = [
            figures::path_figure(report, true),
            figures::path_figure(report, false),
        ];
        // One legend for both plots: they draw the same rules in the same colours.
        figure_plot::legend(ui, &figs[0]);
        let cells = Cells::fit(ui, "hsi paths", 2, PLOT_MIN_W, 2);
        let h = cells.height(ui.available_height(), 120.0, 380.0);
        let mut save = None;
        reflow::grid(ui, 2, cells, |ui, k| {
            let fig = &figs[k];
            if let Some(f) = plot_header(ui, &fig.title, None, true).figure {
                save = Some((k, f));
            }
            figure_plot::plot(ui, &fig.title, fig, [Some(cells.w), Some(h)], lab.hover);
        });
        if let Some((k, format)) = save {
            let stem = ["hsi_rmse", "hsi_erank"][k];
            let fig = figs[k].clone();
            save_figure(lab, ui.ctx(), format, stem, egui::vec2(cells.w, h), || fig);
        }
        table(ui, &shown, paper);
    }
}

impl HsiTab {
    /// Starts the grid run, unless one is running; settings a run cannot use become an error
    /// notice instead.
    fn launch(&mut self, lab: &mut Lab) {
        if self.analysis.is_running() {
            return;
        }
        // A scene on its way (a link's `scene`, or one being chosen) starts the run once read.
        #[cfg(target_arch = "wasm32")]
        if matches!(self.upload, Some((Picking::Scene, _))) {
            self.run_when_read = true;
            return;
        }
        // A page reads no path: without an uploaded scene, ask for one first (a picker opens
        // only on a click, so not from here).
        #[cfg(target_arch = "wasm32")]
        if self.uploaded.is_none() {
            self.run_when_read = true;
            return lab.inform(
                "Hyperspectral: choose the scene file (a MATLAB v5 .mat file) with Choose…; the \
                 run starts once it is read.",
            );
        }
        if let Err(e) = self.inputs.validate() {
            return lab.error(format!("Hyperspectral: {e}"));
        }
        let inputs = self.inputs.clone();
        let total = inputs.planned_steps();
        let task = HsiTask {
            inputs: inputs.clone(),
            bytes: self.uploaded.clone(),
        };
        self.analysis
            .start(inputs, total, total as f64, lab.repaint_handle(), task);
    }

    /// Whether a run waits for the scene on its way (fetched for a link, or being chosen).
    fn fetching(&self) -> bool {
        #[cfg(target_arch = "wasm32")]
        return self.run_when_read && self.upload.is_some();
        #[cfg(not(target_arch = "wasm32"))]
        false
    }

    /// Shows `report` (read by [`read_grid`], e.g. a cluster's `hsi --grid` run) as the last
    /// run, and takes its scene, density, budget and plan as the tab's settings (a budget
    /// outside the tab's range clamped into it). The loss curves are dropped, as after a run.
    ///
    /// # Panics
    /// If `report` has no setup; [`read_grid`] guarantees one per seed of its plan.
    pub fn open_report(&mut self, mut report: GridReport) {
        let cfg = &report.setups[0].cfg;
        let inputs = HsiInputs {
            scene: report.setups[0].scene.clone(),
            var: report.setups[0].var.clone(),
            density: cfg.density,
            steps: cfg.steps.clamp(*STEPS.start(), *STEPS.end()),
            plan: report.plan.clone(),
        };
        for r in &mut report.runs {
            r.losses = Vec::new();
        }
        self.inputs = inputs.clone();
        self.linked_scene = None;
        self.analysis.last = Some(Finished {
            inputs: HsiInputs {
                steps: cfg.steps,
                ..inputs
            },
            result: report,
        });
    }

    /// Reads and shows the report in `file`; a file that fails becomes an error notice naming
    /// it, and the tab keeps what it showed.
    fn open_file(&mut self, file: &std::path::Path, lab: &mut Lab) {
        self.open_read(&file.display().to_string(), || read_grid(file), lab);
    }

    /// Shows the report `read` gives from the file `name`, as [`HsiTab::open_file`] does.
    fn open_read(
        &mut self,
        name: &str,
        read: impl FnOnce() -> Result<GridReport, HsiError>,
        lab: &mut Lab,
    ) {
        if self.analysis.is_running() {
            // The run's result would replace the opened one when it ends.
            return lab.error(format!(
                "Hyperspectral: {name} was not opened: a run is going; cancel it first"
            ));
        }
        match read() {
            Ok(report) => {
                self.open_report(report);
                lab.inform(format!("Opened {name}."));
            }
            Err(e) => lab.error(format!("Hyperspectral: {e}")),
        }
    }

    fn settings_ui(
        &mut self,
        ui: &mut egui::Ui,
        lab: &mut Lab,
        start: &mut bool,
        export: &mut bool,
    ) {
        let mut choose = false;
        let inputs = &mut self.inputs;
        reflow::controls_row(ui, |ui| {
            let l = ui.label("scene");
            // A page cannot read a path: the field names the uploaded file.
            let web = cfg!(target_arch = "wasm32");
            ui.add(
                egui::TextEdit::singleline(&mut inputs.scene)
                    .hint_text(if web {
                        "choose a .mat file"
                    } else {
                        "path to a .mat file"
                    })
                    .interactive(!web)
                    .desired_width(360.0),
            )
            .labelled_by(l.id);
            choose = ui.button("Choose…").clicked();
            let l = ui.label("variable");
            ui.add(
                egui::TextEdit::singleline(&mut inputs.var)
                    .hint_text("the only 3-D array")
                    .desired_width(160.0),
            )
            .labelled_by(l.id);
        });
        reflow::controls_row(ui, |ui| {
            let l = ui.label("density");
            ui.add(
                egui::DragValue::new(&mut inputs.density)
                    .range(DENSITY)
                    .speed(0.01)
                    .max_decimals(3),
            )
            .labelled_by(l.id);
            let l = ui.label("steps per run");
            ui.add(
                egui::DragValue::new(&mut inputs.steps)
                    .range(STEPS)
                    .update_while_editing(false),
            )
            .labelled_by(l.id);
            egui::ComboBox::from_label("grids")
                .selected_text(match inputs.plan.grids {
                    Grids::Paper => "the paper's",
                    Grids::Own => "the project's",
                })
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut inputs.plan.grids, Grids::Paper, "the paper's");
                    ui.selectable_value(&mut inputs.plan.grids, Grids::Own, "the project's");
                });
            for (label, seeds) in [
                ("selection seeds", &mut inputs.plan.selection_seeds),
                ("report seeds", &mut inputs.plan.report_seeds),
            ] {
                let l = ui.label(label);
                let mut text = seeds_text(seeds);
                let r = ui
                    .add(egui::TextEdit::singleline(&mut text).desired_width(90.0))
                    .labelled_by(l.id);
                if r.changed() {
                    match number_list(&text) {
                        Ok(s) => *seeds = s,
                        Err(e) => lab.error(format!("Hyperspectral {label}: {e}")),
                    }
                }
            }
        });
        if choose {
            self.choose_scene(lab);
        }
        // The page reads no path: its trial waits for the uploaded scene.
        let readable = !cfg!(target_arch = "wasm32") || self.uploaded.is_some();
        if readable && self.inputs.validate().is_ok() {
            // What the trial reads: the scene, the completion settings, the first selection run.
            let i = &self.inputs;
            let first = (i
                .plan
                .selection_rates()
                .first()
                .map(|(r, lr)| (r.name, *lr)))
            .zip(i.plan.selection_seeds.first());
            let upload = self.uploaded.as_ref().map(Vec::len);
            let key = (&i.scene, &i.var, i.density, i.steps, first, upload);
            self.analysis
                .calibrate_in_background(&key, &lab.repaint_handle(), || {
                    HsiTrial(HsiTask {
                        inputs: self.inputs.clone(),
                        bytes: self.uploaded.clone(),
                    })
                });
        }
        let runs_at_once =
            self.inputs.plan.selection_rates().len() * self.inputs.plan.selection_seeds.len();
        let estimate = self.analysis.estimate(
            self.inputs.planned_steps() as f64,
            threads().min(runs_at_once),
        );
        let inputs = &mut self.inputs;
        let mut open = false;
        reflow::controls_row(ui, |ui| {
            ui.label("rules");
            for r in RULES {
                let mut on = inputs.plan.rules.iter().any(|n| n == r.name);
                if ui.checkbox(&mut on, r.name).changed() {
                    if on {
                        inputs.plan.rules.push(r.name.into());
                    } else {
                        inputs.plan.rules.retain(|n| n != r.name);
                    }
                    sort_rules(&mut inputs.plan.rules);
                }
            }
            let runs = if inputs.plan.validate().is_ok() {
                inputs.plan.selection_rates().len() * inputs.plan.selection_seeds.len()
                    + inputs.plan.rules.len() * inputs.plan.report_seeds.len()
            } else {
                0
            };
            // A rule whose two grids pick two rates (GD) runs both on the report seeds.
            ui.label(RichText::new(format!("at least {runs} runs")).weak());
            *start = progress_row(ui, self.analysis.job(), "steps", "Run", true, estimate);
            if self.analysis.last.is_some() {
                *export = export_button(ui, "Save the picked rates' paths (hsi_summary.csv)");
            }
            if ui
                .button("Open results…")
                .on_hover_text(
                    "Show the hsi.json of a `basis-lab hsi --grid` run (from this machine or a \
                     cluster) here; a .json or .mat file dropped on the window works too.",
                )
                .clicked()
            {
                open = true;
            }
        });
        if open {
            self.choose_results(lab);
        }
    }

    /// Results to show: the desktop's open dialog, the page's upload.
    fn choose_results(&mut self, lab: &mut Lab) {
        #[cfg(target_arch = "wasm32")]
        self.pick(Picking::Results, lab);
        #[cfg(not(target_arch = "wasm32"))]
        match crate::app::files::pick_file("hsi.json of basis-lab hsi --grid", "json") {
            Some(p) => self.open_file(&p, lab),
            None => lab.inform(
                "No file chosen. (Without a file-dialog service, drop the file on the window or \
                 start the app with --open FILE.)",
            ),
        }
    }

    /// The scene file: the desktop's open dialog (its path), the page's upload (its bytes).
    fn choose_scene(&mut self, lab: &mut Lab) {
        #[cfg(target_arch = "wasm32")]
        self.pick(Picking::Scene, lab);
        #[cfg(not(target_arch = "wasm32"))]
        match crate::app::files::pick_file("MATLAB v5 file", "mat") {
            Some(p) => {
                self.inputs.scene = p.display().to_string();
                self.uploaded = None;
                self.linked_scene = None;
            }
            None => lab.inform(
                "No file chosen. (Without a file-dialog service, type the path into the field.)",
            ),
        }
    }

    /// Opens the page's file picker for `what`.
    #[cfg(target_arch = "wasm32")]
    fn pick(&mut self, what: Picking, lab: &Lab) {
        let (kind, ext) = match what {
            Picking::Scene => ("MATLAB v5 file", "mat"),
            Picking::Results => ("hsi.json of basis-lab hsi --grid", "json"),
        };
        let upload = crate::app::files::Upload::start(kind, ext, lab.repaint_handle());
        self.upload = Some((what, upload));
    }

    /// A file chosen in the page: a scene becomes the scene of the next run (which starts if
    /// it was asked for), results are shown; a cancelled picker drops a waiting run.
    #[cfg(target_arch = "wasm32")]
    fn collect_upload(&mut self, lab: &mut Lab) {
        let Some(picked) = self.upload.as_ref().and_then(|(_, u)| u.take()) else {
            return;
        };
        let (what, _) = self.upload.take().expect("checked above");
        let run = std::mem::take(&mut self.run_when_read);
        let (name, bytes) = match picked {
            Ok(Some(file)) => file,
            Ok(None) => return,
            Err(why) => return lab.error(format!("Hyperspectral: {why}")),
        };
        match what {
            Picking::Scene => {
                lab.inform(format!("Scene {name} ({} bytes) read.", bytes.len()));
                if self.linked_scene.as_ref() != Some(&name) {
                    self.linked_scene = None;
                }
                self.inputs.scene = name;
                self.uploaded = Some(bytes);
                if run {
                    self.start(lab);
                }
            }
            Picking::Results => {
                let path = std::path::PathBuf::from(&name);
                let read = || crate::sensing::hsi::report::parse_grid(&path, &bytes);
                self.open_read(&name, read, lab);
            }
        }
    }

    /// Files dropped on the window while the tab is shown: a `.json` report is opened, a
    /// `.mat` file becomes the scene (the desktop's: a page uploads with Choose…).
    fn dropped_files(&mut self, ui: &egui::Ui, lab: &mut Lab) {
        if cfg!(target_arch = "wasm32") {
            return;
        }
        let dropped = ui.ctx().input(|i| i.raw.dropped_files.clone());
        for path in dropped.iter().map(|f| f.path().to_path_buf()) {
            match path.extension().and_then(|e| e.to_str()) {
                Some(e) if e.eq_ignore_ascii_case("json") => self.open_file(&path, lab),
                Some(e) if e.eq_ignore_ascii_case("mat") => {
                    self.inputs.scene = path.display().to_string();
                    self.linked_scene = None;
                }
                _ => lab.error(format!(
                    "Hyperspectral: {} is neither a scene (.mat) nor a report (.json)",
                    path.display()
                )),
            }
        }
    }
}

/// The Table 5 view: each shown rule at ≤ 1e-5 beside the paper.
fn table(ui: &mut egui::Ui, shown: &[&RateSummary], paper: Option<&crate::sensing::hsi::PaperRow>) {
    let fmt = |s: Option<crate::sensing::hsi::grid::Stat>, scale: f64, digits: usize| {
        s.map_or("—".to_string(), |s| {
            format!("{:.digits$} ± {:.digits$}", s.mean * scale, s.sd * scale)
        })
    };
    ui.add_space(6.0);
    ui.label(RichText::new("At training loss ≤ 1e-5 (Table 5: RMSE ×1e-2)").strong());
    reflow::table(
        ui,
        "hsi table",
        |ui| {
            for h in [
                "rule",
                "rate",
                "picked by",
                "seeds at ≤ 1e-5",
                "RMSE ours",
                "RMSE paper",
                "rank ours",
                "rank paper",
            ] {
                let l = ui.label(RichText::new(h).strong());
                if h == "picked by" {
                    l.on_hover_text(
                        "selection rule:grid. `paper` is the paper's rule (most levels on every \
                         selection seed, then fewest steps), `fastest` the project's (the one \
                         run reaching the deepest level first); after the colon the grid \
                         searched (`paper-cpu`: GD's CPU grid).",
                    );
                }
            }
        },
        |ui| {
            for s in shown {
                let d = s.deepest();
                ui.label(&s.rule);
                ui.label(format!("{}", s.lr));
                ui.label(s.picked_by.join(", "));
                ui.label(format!("{} of {}", d.reached, s.seeds.len()));
                ui.label(fmt(d.test_rmse, 100.0, 3));
                ui.label(
                    paper
                        .and_then(|r| paper_entry(r, &s.rule))
                        .map_or("—".into(), |[m, sd]| format!("{m:.3} ± {sd:.3}")),
                );
                ui.label(fmt(d.erank, 1.0, 1));
                ui.label(match paper {
                    Some(r) if s.rule == "muon" => format!("{}", r.muon_rank),
                    _ => "—".into(),
                });
                ui.end_row();
            }
        },
    );
}
