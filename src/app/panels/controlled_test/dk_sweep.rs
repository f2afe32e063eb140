//! The d_k sweep: the axis excess against its baseline's spread as the key dimension grows,
//! each point a seed sweep of the current settings scaled to that d_k (the library call of
//! `basis-lab dk-sweep`).

use eframe::egui::{self, RichText};
use serde::{Deserialize, Serialize};

use super::points::{
    EXCESS, ORIENTATION, SEEDS, SweepAxis, SweepView, parse_list, seeds_row, sweep_legend,
};
use crate::app::analysis::Analysis;
use crate::app::lab::Lab;
use crate::app::panel::{Panel, from_ron, to_ron};
use crate::app::widgets::plots::{export_button, export_table, save_figure};
use crate::app::widgets::reflow::{self, Cells, PLOT_MIN_W};
use crate::app::widgets::status::{progress_row, stale_note};
use crate::experiment::figures;
use crate::experiment::{DkPoint, dk_sweep, report, scaled_to_dk};
use crate::preset::Preset;
use crate::shard::Job;
use crate::validate::check_count;

/// The d_k-sweep tab: its settings and its last sweep.
#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct DkSweep {
    /// Seeds per d_k.
    pub seeds: usize,
    /// Key dimensions, comma-separated.
    pub dk_text: String,
    /// The sweep and the preset it ran.
    pub analysis: Analysis<Preset, Vec<DkPoint>>,
}

impl Default for DkSweep {
    fn default() -> Self {
        Self {
            seeds: 4,
            dk_text: "4, 8, 16, 32".into(),
            analysis: Analysis::default(),
        }
    }
}

impl Panel for DkSweep {
    fn id(&self) -> &'static str {
        "dk"
    }

    fn title(&self) -> &'static str {
        "d_k sweep"
    }

    fn logic(&mut self, lab: &mut Lab) {
        self.analysis.poll("Sweep", lab);
    }

    /// Starts the d_k sweep of the current preset; a list that does not parse or a sweep the
    /// command line would refuse (every scaled preset is checked first) becomes an error notice.
    fn start(&mut self, lab: &mut Lab) {
        let dks = match parse_list(&self.dk_text) {
            Ok(d) => d,
            Err(e) => return lab.error(format!("d_k: {e}")),
        };
        let (preset, seeds) = (lab.preset.clone(), self.seeds.max(2));
        let job = Job::DkSweep {
            preset: preset.clone(),
            dks: dks.clone(),
            seeds,
        };
        if let Err(e) = job.validate() {
            return lab.error(format!("d_k sweep: {e}"));
        }
        let p = preset.clone();
        self.analysis.start(
            "basis-lab dk sweep",
            preset,
            dks.len() * seeds,
            lab.repaint_handle(),
            move |progress, cancel| Ok(dk_sweep(&p, &dks, seeds, progress, cancel)?),
        );
    }

    fn busy(&self, _lab: &Lab) -> bool {
        self.analysis.is_running()
    }

    fn save(&self) -> Option<String> {
        to_ron(self)
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let mut s: DkSweep = from_ron(ron)?;
        let mut notes = Vec::new();
        check_count(
            &mut notes,
            "seeds",
            &mut s.seeds,
            SEEDS,
            Self::default().seeds,
        );
        notes.extend(s.analysis.check_saved("d_k sweep", |mut f| {
            f.result = crate::experiment::check_dk_points(f.result)?;
            Ok(f)
        }));
        *self = s;
        Ok(notes)
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        ui.label(
            "A(K) is a coarse instrument at small d_k: random keys already sit near the axes, so \
             chance alone spreads A widely. Each point is a seed sweep of the current settings moved \
             to that d_k (keys and pairs per episode scaled along). Watch the shaded spread shrink: an \
             effect is only visible once it rises above it.",
        );
        let mut start = false;
        let mut export = false;
        reflow::controls_row(ui, |ui| {
            let l = ui.label("d_k values");
            ui.add(egui::TextEdit::singleline(&mut self.dk_text).desired_width(200.0))
                .labelled_by(l.id);
            seeds_row(ui, &mut self.seeds);
            ui.label(RichText::new("d_k = 64 takes minutes per seed on a laptop").weak());
            start = progress_row(ui, self.analysis.job(), "seeds", "Run d_k sweep", true);
            if self.analysis.last.is_some() {
                export = export_button(ui, "Save the sweep's table (dk_sweep.csv)");
            }
        });
        if start {
            self.start(lab);
        }
        let Some(last) = &self.analysis.last else {
            ui.label(RichText::new("No d_k sweep yet.").weak());
            return;
        };
        let points = &last.result;
        if export {
            export_table(lab, "dk_sweep.csv", "The sweep is still here", || {
                report::points_csv(&report::dk_points(points))
            });
        }
        // Every point must be what the current settings scale to.
        if let Some(p) = points
            .iter()
            .find(|p| !scaled_to_dk(&lab.preset, p.d_k).same_experiment(&p.sweep.preset))
        {
            let ran = &p.sweep.preset;
            stale_note(ui, lab, format!("preset “{}”, seed {}", ran.name, ran.seed));
        }
        let cells = Cells::fit(ui, "dk plots", 2, PLOT_MIN_W, 2);
        let view = SweepView {
            axis: SweepAxis::Dk,
            sweeps: points.iter().map(|p| (p.d_k as f64, &p.sweep)).collect(),
            emphasise: |_| true,
            size: (cells.w, cells.height(ui.available_height(), 140.0, 640.0)),
            hover: lab.hover,
        };
        let band = figures::dk_band(points);
        sweep_legend(ui, &view.arms(&EXCESS), "");
        let metrics = [&EXCESS, &ORIENTATION];
        let mut figure = None;
        reflow::grid(ui, 2, cells, |ui, i| {
            if let Some(f) = view.plot(ui, metrics[i], (i == 0).then_some(&band[..])) {
                figure = Some((i, f));
            }
        });
        if let Some((i, format)) = figure {
            let m = metrics[i];
            let fig = view.figure(m, (i == 0).then_some(&band[..]));
            let stem = format!("dk_{}", m.id);
            let size = egui::vec2(cells.w, view.size.1);
            save_figure(lab, ui.ctx(), format, &stem, size, || fig);
        }
        ui.add_space(4.0);
        for (d, (_, s)) in points.iter().zip(&view.sweeps) {
            let spread = s
                .aggregate
                .iter()
                .map(|a| a.baseline_sd_mean)
                .fold(f64::NAN, f64::max);
            let beyond: Vec<&str> = s
                .aggregate
                .iter()
                .filter(|a| a.excess_is_outside_baseline())
                .map(|a| a.arm.as_str())
                .collect();
            ui.label(format!(
                "d_k {:>3} ({} keys, {} pairs): baseline sd up to {:.4}; {}",
                d.d_k,
                s.preset.n_keys,
                s.preset.pairs_per_episode,
                spread,
                if beyond.is_empty() {
                    "every arm within the spread".to_string()
                } else {
                    format!("outside the spread: {}", beyond.join(", "))
                }
            ));
        }
    }
}
