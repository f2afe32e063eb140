//! The memory `S` and its reads `S·k` over training, each against its random-rotation baseline:
//! the model's analogue of hidden activations.

use eframe::egui::{self, Color32, RichText};

use super::{arm_legend, band_arm_picker};
use crate::app::lab::Lab;
use crate::app::panel::{Panel, Status, from_ron, to_ron};
use crate::app::widgets::colors::{optimizer_color, text_color};
use crate::app::widgets::figure_plot;
use crate::app::widgets::plots::{Swatch, legend_row, plot_header, save_figure};
use crate::app::widgets::reflow::{self, Cells};
use crate::figure::GREY;
use crate::figure::{Axis, Body, Dash, Figure, Mark};
use crate::optim::optimizer_rgb;

/// The memory-and-reads tab.
pub struct Activations {
    /// Arm whose rotation baseline is shaded.
    pub band_arm: usize,
}

impl Default for Activations {
    fn default() -> Self {
        Self { band_arm: 1 }
    }
}

impl Panel for Activations {
    fn id(&self) -> &'static str {
        "activations"
    }

    fn title(&self) -> &'static str {
        "Memory & reads"
    }

    /// Busy until the statistics on screen are those of the current step.
    fn status(&self, lab: &Lab) -> Status {
        Status {
            busy: super::snapshot_behind(lab),
            ..Status::default()
        }
    }

    fn save(&self) -> Option<String> {
        to_ron(&self.band_arm)
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        self.band_arm = from_ron(ron)?;
        Ok(Vec::new())
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        self.draw(ui, lab);
    }
}

impl Activations {
    fn draw(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        ui.label(
        "In this model the analogue of a hidden activation is the memory S after an episode and \
         the read S·k (measured on 64 held-out episodes with each snapshot of the keys). The rows of S live in key space, which the loss cannot see: any axis \
         structure there comes from the optimizer. The reads live in value space, whose axes the \
         one-hot targets single out, so every arm's reads are heavy-tailed: that panel is the \
         task's own privileged basis, a reference for the other two.",
    );
        let Some(preset) = lab.history.preset.clone() else {
            ui.label("Starting…");
            return;
        };
        let arms = &lab.history.arms;
        let band_arm = self.band_arm.min(arms.len().saturating_sub(1));
        let mut items = arm_legend(arms, " (run from W0)");
        if let Some(a) = arms.get(band_arm) {
            items.push((
                Color32::GRAY,
                format!(
                    "rotation baseline of {}: mean (dashed), 5–95% (shaded)",
                    a.label.name
                ),
                Swatch::Dashed,
            ));
        }
        legend_row(ui, &items);
        reflow::controls_row(ui, |ui| {
            band_arm_picker(
                ui,
                "activation band arm",
                "baseline shown for",
                arms,
                &mut self.band_arm,
            );
        });
        let titles = [
            (
                "Excess kurtosis of the rows of S (key space)",
                "mean excess kurtosis",
            ),
            (
                "Axis concentration A of the rows of S (key space)",
                "A(S rows)",
            ),
            (
                "Excess kurtosis of the reads S·k (value space)",
                "mean excess kurtosis",
            ),
        ];
        let cells = Cells::fit(ui, "activation plots", 3, 320.0, 3);
        let (w, h) = (cells.w, cells.height(ui.available_height(), 120.0, 640.0));
        // Drawn from the figure Save figure… writes: one description of each plot.
        let figs: Vec<Figure> = (0..3)
            .map(|k| activation_figure(lab, band_arm, k, titles[k], preset.d_k))
            .collect();
        let mut figure = None;
        reflow::grid(ui, 3, cells, |ui, k| {
            let (title, _) = titles[k];
            if let Some(f) = plot_header(ui, title, None, true).figure {
                figure = Some((k, f));
            }
            figure_plot::plot(ui, title, &figs[k], [Some(w), Some(h)], lab.hover);
        });
        if let Some((k, format)) = figure {
            let fig = figs[k].clone();
            let stem = [
                "activations_s_kurtosis",
                "activations_s_axis",
                "activations_reads_kurtosis",
            ][k];
            save_figure(lab, ui.ctx(), format, stem, egui::vec2(w, h), || fig);
        }
        latest_table(lab, ui);
    }
}

/// Activation plot `k` as a figure: the band arm's rotation baseline (5–95% shaded, mean
/// dashed), each arm's value, and for A the isotropic level.
fn activation_figure(
    lab: &Lab,
    band_arm: usize,
    k: usize,
    (title, y_label): (&str, &str),
    d_k: usize,
) -> Figure {
    let arms = &lab.history.arms;
    let mut marks = Vec::new();
    if let Some(a) = arms.get(band_arm) {
        let rows: Vec<&[f64; 5]> = a.activations[k].finite_points().collect();
        let name = &a.label.name;
        marks.push(Mark::band(
            format!("{name} rotation baseline 5–95%"),
            GREY,
            rows.iter().map(|p| p[0]).collect(),
            rows.iter().map(|p| p[2]).collect(),
            rows.iter().map(|p| p[4]).collect(),
        ));
        marks.push(Mark::line(
            format!("{name} rotation baseline mean"),
            GREY,
            rows.iter().map(|p| [p[0], p[3]]).collect(),
            1.5,
            Dash::Dashed,
        ));
    }
    if k == 1 {
        marks.push(Mark::hline(
            "3/(d_k+2), random directions",
            GREY,
            crate::metrics::isotropic_axis_concentration(d_k),
            Dash::Dotted,
        ));
    }
    for (i, a) in arms.iter().enumerate() {
        marks.push(Mark::line(
            a.label.name.clone(),
            optimizer_rgb(&a.label.optimizer, i),
            a.activations[k]
                .finite_points()
                .map(|p| [p[0], p[1]])
                .collect(),
            2.5,
            Dash::Solid,
        ));
    }
    Figure {
        title: title.into(),
        body: Body::Plot {
            x: Axis::linear("training step").including(0.0),
            y: Axis::linear(y_label),
            marks,
        },
    }
}

fn latest_table(lab: &Lab, ui: &mut egui::Ui) {
    let Some(snap) = &lab.history.snapshot else {
        return;
    };
    ui.add_space(4.0);
    ui.label(
        RichText::new(format!(
            "At step {} (value, baseline mean ± sd, z):",
            snap.step
        ))
        .strong(),
    );
    reflow::table(
        ui,
        "activation table",
        |ui| {
            for h in [
                "arm",
                "kurtosis of S rows",
                "A(S rows)",
                "kurtosis of reads",
            ] {
                ui.label(RichText::new(h).strong());
            }
        },
        |ui| {
            for (i, (a, act)) in lab.history.arms.iter().zip(&snap.activations).enumerate() {
                ui.label(RichText::new(&a.label.name).color(text_color(
                    optimizer_color(&a.label.optimizer, i),
                    ui.visuals(),
                )));
                match act {
                    Some(act) => {
                        for b in [&act.s_kurtosis, &act.s_axis, &act.read_kurtosis] {
                            ui.monospace(format!(
                                "{:>7.3}  {:>7.3} ± {:<6.3} z {:>+6.1}",
                                b.value, b.mean, b.sd, b.z
                            ));
                        }
                    }
                    None => {
                        ui.label("diverged");
                    }
                }
                ui.end_row();
            }
        },
    );
}
