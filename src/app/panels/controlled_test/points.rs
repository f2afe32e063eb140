//! What the ε and d_k tabs share: a list of points (each a seed sweep of the current
//! settings, changed at one value) drawn as mean ± sd over seeds against a log x axis, one plot
//! per aggregate, and the rows that set the points and seeds.

use eframe::egui::{self, Color32, RichText};

use crate::app::widgets::figure_plot;
use crate::app::widgets::plots::{FigureFormat, Swatch, legend_row, plot_header};
use crate::experiment::SweepResult;
pub(super) use crate::experiment::figures::{
    ACCURACY, ArmPoints, EXCESS, GRAM, Metric, ORIENTATION, SweepAxis, arm_points, points_figure,
};
use crate::figure::Figure;

fn to_color(c: crate::figure::Rgb) -> Color32 {
    Color32::from_rgb(c[0], c[1], c[2])
}

/// The seeds-per-point field.
/// The range of the seeds per point of the ε and d_k sweeps.
pub(super) const SEEDS: std::ops::RangeInclusive<usize> = 2..=64;

pub(super) fn seeds_row(ui: &mut egui::Ui, seeds: &mut usize) {
    let l = ui.label("seeds per point");
    ui.add(
        egui::DragValue::new(seeds)
            .range(SEEDS)
            .update_while_editing(false),
    )
    .labelled_by(l.id);
}

/// Parses a comma-separated list; errors name the offending entry.
pub(super) fn parse_list<T: std::str::FromStr>(text: &str) -> Result<Vec<T>, String> {
    let out: Vec<T> = text
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().map_err(|_| format!("“{s}” is not a number")))
        .collect::<Result<_, _>>()?;
    if out.is_empty() {
        return Err("the list is empty".into());
    }
    Ok(out)
}

/// The finished points of one sweep tab and how to draw them.
pub(super) struct SweepView<'a> {
    pub(super) axis: SweepAxis,
    /// (x, sweep) per point.
    pub(super) sweeps: Vec<(f64, &'a SweepResult)>,
    /// Arms drawn thick (the others dashed, as references).
    pub(super) emphasise: fn(&str) -> bool,
    pub(super) size: (f32, f32),
    pub(super) hover: bool,
}

impl SweepView<'_> {
    pub(super) fn arms(&self, m: &Metric) -> Vec<ArmPoints> {
        arm_points(&self.sweeps, m, self.emphasise)
    }

    /// Draws `m`'s plot under its title row; returns the format chosen in its "Save figure…"
    /// menu.
    pub(super) fn plot(
        &self,
        ui: &mut egui::Ui,
        m: &Metric,
        zero_band: Option<&[(f64, f64)]>,
    ) -> Option<FigureFormat> {
        let axis = match self.axis {
            SweepAxis::Eps => "eps",
            SweepAxis::Dk => "dk",
        };
        let id = format!("{axis} {}", m.id);
        ui.vertical(|ui| {
            ui.set_width(self.size.0);
            let clicked = plot_header(ui, m.title, None, true);
            let size = [Some(self.size.0), Some(self.size.1)];
            figure_plot::plot(ui, &id, &self.figure(m, zero_band), size, self.hover);
            clicked.figure
        })
        .inner
    }

    /// `m`'s plot as a figure (what "Save figure…" writes).
    pub(super) fn figure(&self, m: &Metric, zero_band: Option<&[(f64, f64)]>) -> Figure {
        points_figure(self.axis, &self.arms(m), m, zero_band)
    }
}

pub(super) fn sweep_legend(ui: &mut egui::Ui, arms: &[ArmPoints], emphasis_note: &str) {
    let mut items: Vec<(Color32, String, Swatch)> = arms
        .iter()
        .map(|a| {
            let swatch = if a.emphasised {
                Swatch::Thick
            } else {
                Swatch::Dashed
            };
            (to_color(a.color), a.name.clone(), swatch)
        })
        .collect();
    items.push((Color32::GRAY, "bars: ± sd over seeds".into(), Swatch::Thin));
    legend_row(ui, &items);
    if !emphasis_note.is_empty() {
        ui.label(RichText::new(emphasis_note).small().weak());
    }
}
