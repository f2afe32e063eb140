//! The seed sweep: the current settings over several seeds, each arm's final excess A(K)
//! against the spread random rotations of the same keys give (the library call of
//! `basis-lab sweep`).

use eframe::egui::{self, Color32, RichText};
use egui_plot::{FilledArea, HLine, Line, Points};
use serde::{Deserialize, Serialize};

use crate::app::analysis::Analysis;
use crate::app::lab::Lab;
use crate::app::panel::{Panel, from_ron, to_ron};
use crate::app::saved::check_count;
use crate::app::widgets::colors::{faded, optimizer_color};
use crate::app::widgets::plots::{
    Swatch, category_axis, export_button, export_table, figure_menu, legend_row, linear_plot,
    save_figure,
};
use crate::app::widgets::reflow;
use crate::app::widgets::status::{progress_row, stale_note};
use crate::experiment::figures;
use crate::experiment::{SweepResult, report, sweep_until};
use crate::preset::Preset;

/// The seed count's range.
const SEEDS: std::ops::RangeInclusive<usize> = 2..=256;

/// The seed-sweep tab: its seed count and its last sweep.
#[derive(Serialize, Deserialize)]
#[serde(default)]
pub struct SeedSweep {
    /// Seeds in a sweep.
    pub seeds: usize,
    /// The sweep and the preset it ran.
    pub analysis: Analysis<Preset, SweepResult>,
}

impl Default for SeedSweep {
    fn default() -> Self {
        Self {
            seeds: 8,
            analysis: Analysis::default(),
        }
    }
}

impl Panel for SeedSweep {
    fn id(&self) -> &'static str {
        "sweep"
    }

    fn title(&self) -> &'static str {
        "Seed sweep"
    }

    fn logic(&mut self, lab: &mut Lab) {
        self.analysis.poll("Sweep", lab);
    }

    /// Starts a seed sweep of the current preset.
    fn start(&mut self, lab: &mut Lab) {
        let (preset, seeds) = (lab.preset.clone(), self.seeds.max(1));
        let p = preset.clone();
        self.analysis.start(
            "basis-lab sweep",
            preset,
            seeds,
            lab.repaint_handle(),
            move |progress, cancel| Ok(sweep_until(&p, seeds, progress, cancel)?),
        );
    }

    fn busy(&self, _lab: &Lab) -> bool {
        self.analysis.is_running()
    }

    fn save(&self) -> Option<String> {
        to_ron(self)
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let mut s: SeedSweep = from_ron(ron)?;
        let mut notes = Vec::new();
        check_count(
            &mut notes,
            "seeds",
            &mut s.seeds,
            SEEDS,
            Self::default().seeds,
        );
        notes.extend(s.analysis.check_saved("seed sweep", |mut f| {
            f.result = f.result.checked()?;
            Ok(f)
        }));
        *self = s;
        Ok(notes)
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        ui.add_space(4.0);
        ui.label(
            "One seed proves nothing about A(K). The sweep repeats the current settings over several \
             seeds (in parallel) and compares each arm's final excess A(K) − baseline mean with the \
             spread that random rotations of the same keys produce.",
        );
        let mut start = false;
        let mut export = false;
        let mut figure = None;
        reflow::controls_row(ui, |ui| {
            let l = ui.label("seeds");
            ui.add(egui::DragValue::new(&mut self.seeds).range(SEEDS))
                .labelled_by(l.id);
            ui.label(
                RichText::new(format!(
                    "starting at seed {}, {} steps each",
                    lab.preset.seed, lab.preset.steps
                ))
                .weak(),
            );
            start = progress_row(ui, self.analysis.job(), "seeds", "Run sweep", true);
            if self.analysis.last.is_some() {
                export = export_button(ui, "Save the sweep's table (sweep.csv)");
                figure = figure_menu(ui);
            }
        });
        if start {
            self.start(lab);
        }
        let Some(last) = &self.analysis.last else {
            ui.label(RichText::new("No sweep yet.").weak());
            return;
        };
        let result = &last.result;
        if export {
            export_table(lab, "sweep.csv", "The sweep is still here", || {
                report::sweep_csv(result)
            });
        }
        if let Some(format) = figure {
            let size = egui::vec2(ui.available_width().min(900.0), 480.0);
            save_figure(lab, ui.ctx(), format, "sweep", size, || {
                figures::sweep_figure(result)
            });
        }
        if self.analysis.is_running() {
            ui.label(
                RichText::new("A new sweep is running; below are the previous results.").weak(),
            );
        }
        if !result.preset.same_experiment(&lab.preset) {
            let p = &result.preset;
            stale_note(
                ui,
                lab,
                format!(
                    "preset “{}”, seed {}, {} arms",
                    p.name,
                    p.seed,
                    p.arms.len()
                ),
            );
        }
        legend_row(
            ui,
            &[
                (Color32::GRAY, "one seed's excess".into(), Swatch::Dot),
                (Color32::GRAY, "mean ± sd over seeds".into(), Swatch::Thick),
                (
                    Color32::GRAY,
                    "± the baseline's own sd (shaded)".into(),
                    Swatch::Thin,
                ),
            ],
        );
        let hover = lab.hover;
        let n_arms = result.aggregate.len();
        linear_plot("sweep", "excess A(K) − baseline mean")
            .x_axis_label("arm")
            .height((ui.available_height() - 40.0 * n_arms as f32 - 60.0).max(reflow::PLOT_MIN_H))
            .x_axis_formatter(category_axis(
                result.aggregate.iter().map(|a| a.arm.clone()).collect(),
            ))
            .show_x(hover)
            .show_y(hover)
            .show(ui, |plot| {
                plot.hline(HLine::new("zero excess", 0.0).color(Color32::GRAY));
                for (i, agg) in result.aggregate.iter().enumerate() {
                    let optimizer = result
                        .preset
                        .arms
                        .get(i)
                        .map_or(agg.arm.as_str(), |a| a.optimizer.as_str());
                    let c = optimizer_color(optimizer, i);
                    let x = i as f64;
                    let sd = agg.baseline_sd_mean;
                    if !(sd.is_finite() && agg.excess_mean.is_finite()) {
                        continue;
                    }
                    plot.add(
                        FilledArea::new(
                            format!("{} ± baseline sd", agg.arm),
                            &[x - 0.35, x + 0.35],
                            &[-sd, -sd],
                            &[sd, sd],
                        )
                        .fill_color(faded(c, 35)),
                    );
                    let dots: Vec<[f64; 2]> = result
                        .per_seed
                        .iter()
                        .filter(|s| s.arm == agg.arm)
                        .enumerate()
                        .filter_map(|(k, s)| {
                            let b = s.baseline.as_ref()?;
                            let jitter = (k as f64 / result.seeds.len().max(1) as f64 - 0.5) * 0.4;
                            Some([x + jitter, b[0].excess])
                        })
                        .collect();
                    plot.points(
                        Points::new(format!("{} per seed", agg.arm), dots)
                            .color(c)
                            .radius(4.0)
                            .filled(true),
                    );
                    if agg.excess_mean.is_finite() {
                        let (m, s) = (agg.excess_mean, agg.excess_sd);
                        plot.line(
                            Line::new(
                                format!("{} mean ± sd", agg.arm),
                                vec![[x, m - s], [x, m + s]],
                            )
                            .color(c)
                            .width(reflow::line_width(plot.ctx(), 3.0)),
                        );
                        plot.line(
                            Line::new(
                                format!("{} mean ± sd", agg.arm),
                                vec![[x - 0.25, m], [x + 0.25, m]],
                            )
                            .color(c)
                            .width(reflow::line_width(plot.ctx(), 3.0)),
                        );
                    }
                }
            });
        ui.add_space(4.0);
        for (i, a) in result.aggregate.iter().enumerate() {
            let optimizer = result
                .preset
                .arms
                .get(i)
                .map_or(a.arm.as_str(), |s| s.optimizer.as_str());
            if a.seeds_ok < 2 {
                ui.label(
                    RichText::new(format!(
                        "{}: only {} of {} seeds finished without diverging — too few for a verdict",
                        a.arm,
                        a.seeds_ok,
                        result.seeds.len()
                    ))
                    .color(optimizer_color(optimizer, i)),
                );
                continue;
            }
            let verdict = if a.excess_is_outside_baseline() {
                "outside the baseline spread: the orientation is special"
            } else {
                "within the baseline spread: no more axis-aligned than chance"
            };
            ui.label(
                RichText::new(format!(
                    "{}: mean excess {:+.2e} ± {:.2e} over {} seeds; baseline sd {:.2e}; {} of {} seeds outside the 5–95% band; twin divergence {:.1e} → {verdict}",
                    a.arm,
                    a.excess_mean,
                    a.excess_sd,
                    a.seeds_ok,
                    a.baseline_sd_mean,
                    a.outside_band,
                    a.seeds_ok,
                    a.orientation_div_mean,
                ))
                .color(optimizer_color(optimizer, i)),
            );
        }
    }
}
