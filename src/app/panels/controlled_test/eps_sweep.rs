//! The ε sweep: Adam's axis excess, twin divergences and accuracy against its ε, each point a
//! seed sweep of the current settings (the library call of `basis-lab eps-sweep`).

use eframe::egui::{self, RichText};
use serde::{Deserialize, Serialize};

use super::points::{
    ACCURACY, EXCESS, GRAM, ORIENTATION, SEEDS, SweepAxis, SweepView, parse_list, seeds_row,
    sweep_legend,
};
use crate::app::analysis::Analysis;
use crate::app::lab::Lab;
use crate::app::panel::{Panel, from_ron, to_ron};
use crate::app::widgets::plots::{export_button, export_table, save_figure};
use crate::app::widgets::reflow::{self, Cells, PLOT_MIN_W};
use crate::app::widgets::status::{progress_row, stale_note};
use crate::experiment::figures;
use crate::experiment::{EpsPoint, eps_sweep, report, with_adam_eps};
use crate::preset::Preset;
use crate::shard::Job;
use crate::validate::check_count;

/// The ε-sweep tab: its settings and its last sweep.
#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct EpsSweep {
    /// Seeds per ε.
    pub seeds: usize,
    /// Adam's ε values, comma-separated.
    pub eps_text: String,
    /// The sweep and the preset it ran.
    pub analysis: Analysis<Preset, Vec<EpsPoint>>,
}

impl Default for EpsSweep {
    fn default() -> Self {
        Self {
            seeds: 4,
            eps_text: "1e-12, 1e-8, 1e-6, 1e-4, 1e-2, 1".into(),
            analysis: Analysis::default(),
        }
    }
}

impl Panel for EpsSweep {
    fn id(&self) -> &'static str {
        "eps"
    }

    fn title(&self) -> &'static str {
        "ε sweep"
    }

    fn logic(&mut self, lab: &mut Lab) {
        self.analysis.poll("Sweep", lab);
    }

    /// Starts the ε sweep of the current preset; a list that does not parse or a sweep the
    /// command line would refuse ([`Job::validate`]) becomes an error notice instead.
    fn start(&mut self, lab: &mut Lab) {
        let eps = match parse_list(&self.eps_text) {
            Ok(e) => e,
            Err(e) => return lab.error(format!("Adam's ε: {e}")),
        };
        let (preset, seeds) = (lab.preset.clone(), self.seeds.max(2));
        let job = Job::EpsSweep {
            preset: preset.clone(),
            eps: eps.clone(),
            seeds,
        };
        if let Err(e) = job.validate() {
            return lab.error(format!("ε sweep: {e}"));
        }
        let p = preset.clone();
        self.analysis.start(
            "basis-lab eps sweep",
            preset,
            eps.len() * seeds,
            lab.repaint_handle(),
            move |progress, cancel| Ok(eps_sweep(&p, &eps, seeds, progress, cancel)?),
        );
    }

    fn busy(&self, _lab: &Lab) -> bool {
        self.analysis.is_running()
    }

    fn save(&self) -> Option<String> {
        to_ron(self)
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let mut s: EpsSweep = from_ron(ron)?;
        let mut notes = Vec::new();
        check_count(
            &mut notes,
            "seeds",
            &mut s.seeds,
            SEEDS,
            Self::default().seeds,
        );
        notes.extend(s.analysis.check_saved("ε sweep", |mut f| {
            f.result = crate::experiment::check_eps_points(f.result)?;
            Ok(f)
        }));
        *self = s;
        Ok(notes)
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        ui.label(
            "Adam divides each coordinate of its step by √v + ε. If its fingerprint comes from that \
             per-coordinate normalisation, it should fade as ε grows past √v and Adam turns into \
             momentum SGD. Each point is a seed sweep of the current settings with every Adam arm's ε \
             set to that value; the other arms do not read ε and serve as references (dashed).",
        );
        let mut start = false;
        let mut export = false;
        reflow::controls_row(ui, |ui| {
            let l = ui.label("Adam's ε");
            ui.add(egui::TextEdit::singleline(&mut self.eps_text).desired_width(300.0))
                .labelled_by(l.id);
            seeds_row(ui, &mut self.seeds);
            ui.label(RichText::new(format!("{} steps each", lab.preset.steps)).weak());
            start = progress_row(ui, self.analysis.job(), "seeds", "Run ε sweep", true);
            if self.analysis.last.is_some() {
                export = export_button(ui, "Save the sweep's table (eps_sweep.csv)");
            }
        });
        if start {
            self.start(lab);
        }
        let Some(last) = &self.analysis.last else {
            ui.label(RichText::new("No ε sweep yet.").weak());
            return;
        };
        let points = &last.result;
        if export {
            export_table(lab, "eps_sweep.csv", "The sweep is still here", || {
                report::points_csv(&report::eps_points(points))
            });
        }
        // Every point must be what the current settings give at its ε.
        if let Some(p) = points
            .iter()
            .find(|p| !with_adam_eps(&lab.preset, p.eps).same_experiment(&p.sweep.preset))
        {
            let ran = &p.sweep.preset;
            stale_note(ui, lab, format!("preset “{}”, seed {}", ran.name, ran.seed));
        }
        if points.iter().any(|p| p.eps <= 0.0) {
            ui.label(RichText::new("ε = 0 has no place on a log axis; its numbers are in the CSV of `basis-lab eps-sweep`.").weak());
        }
        let cells = Cells::fit(ui, "eps plots", 4, PLOT_MIN_W, 2);
        let view = SweepView {
            axis: SweepAxis::Eps,
            sweeps: points.iter().map(|p| (p.eps, &p.sweep)).collect(),
            emphasise: |o| o == "adam",
            size: (cells.w, cells.height(ui.available_height(), 80.0, 520.0)),
            hover: lab.hover,
        };
        let band = figures::eps_band(points);
        sweep_legend(
            ui,
            &view.arms(&EXCESS),
            "thick: Adam arms (read ε); dashed: references",
        );
        let metrics = [&EXCESS, &ORIENTATION, &GRAM, &ACCURACY];
        let mut figure = None;
        reflow::grid(ui, 4, cells, |ui, i| {
            if let Some(f) = view.plot(ui, metrics[i], (i == 0).then_some(&band[..])) {
                figure = Some((i, f));
            }
        });
        if let Some((i, format)) = figure {
            let m = metrics[i];
            let fig = view.figure(m, (i == 0).then_some(&band[..]));
            let stem = format!("eps_{}", m.id);
            let size = egui::vec2(cells.w, view.size.1);
            save_figure(lab, ui.ctx(), format, &stem, size, || fig);
        }
    }
}
