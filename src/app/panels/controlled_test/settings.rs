//! The settings column of the controlled test: every preset field, each marked with whether
//! changing it restarts the run.

use eframe::egui::{self, RichText};

use crate::app::lab::Lab;
use crate::app::widgets::colors::optimizer_color;
use crate::experiment::live::Command;
use crate::optim::{Hyper, OptimizerSpec, Polar, REGISTRY};
use crate::preset::ColumnNorms;

/// Marker shown beside controls that restart the run.
pub const RESTARTS: &str = "↻";
/// Marker shown beside controls that apply live.
pub const LIVE: &str = "●";

/// Draws the settings column; a changed numerics field restarts the run at once.
pub fn ui(ui: &mut egui::Ui, lab: &mut Lab) {
    egui::ScrollArea::vertical()
        .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
        .show(ui, |ui| {
            ui.add_space(6.0);
            ui.heading("Settings");
            ui.label(
                RichText::new(format!(
                    "{RESTARTS} restarts the run from step 0    {LIVE} applies without restarting"
                ))
                .small()
                .weak(),
            );
            ui.add_space(4.0);
            egui::CollapsingHeader::new("Run control")
                .default_open(true)
                .show(ui, |ui| run_control(lab, ui));
            let mut p = lab.preset.clone();
            egui::CollapsingHeader::new("Memory task")
                .default_open(true)
                .show(ui, |ui| {
                    int(ui, "d_k (key dimension)", &mut p.d_k, 1, 256);
                    int(ui, "keys V", &mut p.n_keys, 1, 1024);
                    int(ui, "value classes", &mut p.n_values, 1, 1024);
                    let k_max = p.n_keys;
                    int(
                        ui,
                        "pairs per episode k",
                        &mut p.pairs_per_episode,
                        1,
                        k_max,
                    );
                    real(ui, "write strength β", &mut p.beta, 0.0..=2.0, false);
                    real(ui, "softmax gain g", &mut p.gain, 0.01..=1000.0, true);
                });
            egui::CollapsingHeader::new("Training")
                .default_open(true)
                .show(ui, |ui| {
                    int(ui, "batch (episodes/step)", &mut p.batch, 1, 4096);
                    int(ui, "steps (budget)", &mut p.steps, 0, 100_000_000);
                    seed(ui, &mut p.seed);
                    init_std(ui, &mut p.init_std, p.d_k);
                    row(ui, RESTARTS, "noise twins", |ui, id| {
                        ui.checkbox(&mut p.noise_twins, "also from W0 + 1e-12 noise")
                            .on_hover_text("Plot (a) then shows, dashed, how far a run from a 1e-12 perturbation of W0 drifts: chaos shows there too, basis dependence only in the gauge twin.")
                            .labelled_by(id);
                    });
                    row(ui, RESTARTS, "column norms", |ui, id| {
                        egui::ComboBox::from_id_salt("column norms")
                            .selected_text(match p.column_norms {
                                ColumnNorms::Free => "free",
                                ColumnNorms::Renormalize => "renormalized each step",
                            })
                            .show_ui(ui, |ui| {
                                ui.selectable_value(&mut p.column_norms, ColumnNorms::Free, "free");
                                ui.selectable_value(
                                    &mut p.column_norms,
                                    ColumnNorms::Renormalize,
                                    "renormalized each step",
                                );
                            })
                            .response
                            .on_hover_text("Rescale every column of W_K to length 1 after each update, so no arm gains a larger effective learning rate from shrinking norms.")
                            .labelled_by(id);
                    });
                    int(ui, "held-out every", &mut p.eval_every, 1, 100_000_000);
                    int(ui, "held-out episodes", &mut p.n_heldout, 1, 100_000);
                    int(
                        ui,
                        "baseline rotations",
                        &mut p.baseline_rotations,
                        2,
                        100_000,
                    );
                });
            egui::CollapsingHeader::new("Arms")
                .default_open(true)
                .show(ui, |ui| arms(ui, &mut p.arms));
            if p != lab.preset {
                lab.apply_preset(p);
            }
        });
}

fn row<R>(
    ui: &mut egui::Ui,
    marker: &str,
    text: &str,
    add: impl FnOnce(&mut egui::Ui, egui::Id) -> R,
) -> R {
    ui.horizontal(|ui| {
        let tip = if marker == RESTARTS {
            "Changing this restarts the run from step 0."
        } else {
            "Applies to the running experiment without restarting it."
        };
        ui.label(RichText::new(marker).weak()).on_hover_text(tip);
        let label = ui.label(text);
        add(ui, label.id)
    })
    .inner
}

fn int(ui: &mut egui::Ui, text: &str, value: &mut usize, lo: usize, hi: usize) {
    row(ui, RESTARTS, text, |ui, id| {
        ui.add(
            egui::DragValue::new(value)
                .range(lo..=hi.max(lo))
                .speed(0.2)
                .update_while_editing(false)
                .clamp_existing_to_range(false),
        )
        .labelled_by(id)
    });
}

fn real(
    ui: &mut egui::Ui,
    text: &str,
    value: &mut f64,
    range: std::ops::RangeInclusive<f64>,
    log: bool,
) {
    row(ui, RESTARTS, text, |ui, id| {
        ui.add(
            egui::Slider::new(value, range)
                .logarithmic(log)
                .clamping(egui::SliderClamping::Edits)
                .update_while_editing(false),
        )
        .labelled_by(id)
    });
}

fn seed(ui: &mut egui::Ui, seed: &mut u64) {
    row(ui, RESTARTS, "seed", |ui, id| {
        ui.add(
            egui::DragValue::new(seed)
                .speed(0.2)
                .update_while_editing(false),
        )
        .labelled_by(id);
        if ui
            .button("New seed")
            .on_hover_text("Draw new W0, Q and episodes (seed + 1).")
            .clicked()
        {
            *seed = seed.wrapping_add(1);
        }
    });
}

fn init_std(ui: &mut egui::Ui, init_std: &mut Option<f64>, d_k: usize) {
    row(ui, RESTARTS, "init std", |ui, id| {
        let mut auto = init_std.is_none();
        if ui
            .checkbox(&mut auto, "1/√d_k")
            .on_hover_text("Unit expected column norm.")
            .changed()
        {
            *init_std = if auto {
                None
            } else {
                Some(1.0 / (d_k as f64).sqrt())
            };
        }
        if let Some(s) = init_std {
            ui.add(
                egui::Slider::new(s, 1e-3..=100.0)
                    .logarithmic(true)
                    // A preset's value far outside the slider (1e-200) is shown as it is.
                    .custom_formatter(|v, _| crate::validate::real(v))
                    .clamping(egui::SliderClamping::Edits)
                    .update_while_editing(false),
            )
            .labelled_by(id);
        }
    });
}

fn arms(ui: &mut egui::Ui, arms: &mut Vec<OptimizerSpec>) {
    let mut remove = None;
    let n = arms.len();
    for (i, arm) in arms.iter_mut().enumerate() {
        let info = arm.info().expect("validated preset");
        ui.push_id(i, |ui| {
            ui.horizontal(|ui| {
                let (rect, _) =
                    ui.allocate_exact_size(egui::vec2(14.0, 14.0), egui::Sense::hover());
                ui.painter()
                    .rect_filled(rect, 3.0, optimizer_color(&arm.optimizer, i));
                ui.label(RichText::new(arm.arm_name()).strong());
                let chain = arm
                    .info()
                    .is_some_and(|i| i.class == crate::optim::Class::Chain);
                let class = crate::optim::class_word(chain, arm.equivariant());
                ui.label(RichText::new(class).small().weak());
                if n > 1
                    && ui
                        .small_button("✖")
                        .on_hover_text("Remove this arm")
                        .clicked()
                {
                    remove = Some(i);
                }
            });
            row(ui, RESTARTS, "optimizer", |ui, id| {
                egui::ComboBox::from_id_salt("optimizer")
                    .selected_text(info.title)
                    .show_ui(ui, |ui| {
                        for r in REGISTRY {
                            ui.selectable_value(&mut arm.optimizer, r.name.to_string(), r.title);
                        }
                    })
                    .response
                    .labelled_by(id);
            });
            row(ui, RESTARTS, "learning rate", |ui, id| {
                rate_control(ui, &mut arm.lr, id)
            });
            for &h in info.hypers {
                hyper_row(ui, arm, h);
            }
            ui.add_space(6.0);
        });
    }
    if let Some(i) = remove {
        arms.remove(i);
    }
    if arms.len() < 16 {
        ui.menu_button("Add arm", |ui| {
            for r in REGISTRY {
                if ui.button(r.title).clicked() {
                    let taken = |name: &str| arms.iter().any(|a| a.arm_name() == name);
                    let mut spec = OptimizerSpec::new(r.name, r.lr);
                    let mut k = 2;
                    while taken(spec.arm_name()) {
                        spec.label = Some(format!("{}_{k}", r.name));
                        k += 1;
                    }
                    arms.push(spec);
                    ui.close();
                }
            }
        });
    }
}

/// The rates the learning-rate slider stops at: 1, 2 and 5 per decade from 1e-5 to 10, each
/// the f64 its decimal text reads as (so a stop is the number a researcher would type).
pub fn rate_ladder() -> Vec<f64> {
    (-5..=1)
        .flat_map(|e| [1, 2, 5].map(|m| format!("{m}e{e}").parse::<f64>().expect("a number")))
        .take_while(|&x| x <= 10.0)
        .collect()
}

/// The stop of `ladder` nearest `lr` on a log scale (the first for a rate that is not positive).
pub fn nearest_stop(ladder: &[f64], lr: f64) -> usize {
    let off = |x: f64| (x.ln() - lr.ln()).abs();
    (0..ladder.len())
        .min_by(|&a, &b| off(ladder[a]).total_cmp(&off(ladder[b])))
        .filter(|_| lr > 0.0)
        .unwrap_or(0)
}

/// A learning rate: a slider over [`rate_ladder`]'s stops (a notch is one 1-2-5 step, not
/// half a decade) and a field that takes any rate the preset allows (up to 1e6), typed.
fn rate_control(ui: &mut egui::Ui, lr: &mut f64, label: egui::Id) -> egui::Response {
    let ladder = rate_ladder();
    let mut stop = nearest_stop(&ladder, *lr);
    let slider = ui
        .add(
            egui::Slider::new(&mut stop, 0..=ladder.len() - 1)
                .show_value(false)
                .clamping(egui::SliderClamping::Always),
        )
        .on_hover_text("Steps of 1, 2 and 5 per decade; type any rate in the field")
        .labelled_by(label);
    if slider.changed() {
        *lr = ladder[stop];
    }
    ui.add(
        egui::DragValue::new(lr)
            .range(f64::MIN_POSITIVE..=1e6)
            .clamp_existing_to_range(false)
            .speed(0.0)
            .custom_formatter(|v, _| crate::validate::real(v))
            .update_while_editing(false),
    )
    .labelled_by(label)
}

/// The control of hyperparameter `h` of `arm`, from the registry's label and range.
fn hyper_row(ui: &mut egui::Ui, arm: &mut OptimizerSpec, h: Hyper) {
    row(ui, RESTARTS, h.label(), |ui, id| match h {
        Hyper::Polar => {
            let text = |p: Polar| match p {
                Polar::NewtonSchulz => "Newton–Schulz (5 steps)",
                Polar::Svd => "exact (SVD)",
            };
            egui::ComboBox::from_id_salt("polar")
                .selected_text(text(arm.polar))
                .show_ui(ui, |ui| {
                    for p in [Polar::NewtonSchulz, Polar::Svd] {
                        ui.selectable_value(&mut arm.polar, p, text(p));
                    }
                })
                .response
                .labelled_by(id);
        }
        Hyper::RootEvery => {
            ui.add(
                egui::DragValue::new(&mut arm.root_every)
                    .range(1..=1_000_000)
                    .update_while_editing(false),
            )
            .labelled_by(id);
        }
        Hyper::Eps => {
            ui.add(
                egui::Slider::new(&mut arm.eps, 0.0..=1.0)
                    .logarithmic(true)
                    .smallest_positive(1e-16)
                    .clamping(egui::SliderClamping::Edits)
                    .update_while_editing(false)
                    .custom_formatter(|v, _| format!("{v:.1e}")),
            )
            .labelled_by(id);
        }
        _ => {
            let hi = match h.range() {
                Some(r) if r.hi_closed => r.hi.min(100.0),
                _ => 0.9999,
            };
            if let Some(v) = arm.value_mut(h) {
                ui.add(
                    egui::Slider::new(v, 0.0..=hi)
                        .clamping(egui::SliderClamping::Edits)
                        .update_while_editing(false),
                )
                .labelled_by(id);
            }
        }
    });
}

fn run_control(lab: &mut Lab, ui: &mut egui::Ui) {
    let before = (lab.speed, lab.stop);
    row(ui, LIVE, "speed", |ui, id| {
        let text = |s: Option<f64>| match s {
            None => "as fast as possible".to_string(),
            Some(v) => format!("{v} steps/s"),
        };
        egui::ComboBox::from_id_salt("speed")
            .selected_text(text(lab.speed))
            .show_ui(ui, |ui| {
                for s in [Some(5.0), Some(20.0), Some(200.0), Some(2000.0), None] {
                    ui.selectable_value(&mut lab.speed, s, text(s));
                }
            })
            .response
            .labelled_by(id);
    });
    let budget = lab.preset.steps;
    row(ui, LIVE, "stop at step", |ui, id| {
        let mut custom = lab.stop.at_step.is_some();
        if ui
            .checkbox(&mut custom, "custom")
            .on_hover_text(format!("Otherwise the preset's budget of {budget} steps."))
            .changed()
        {
            lab.stop.at_step = custom.then_some(budget);
        }
        if let Some(s) = &mut lab.stop.at_step {
            ui.add(
                egui::DragValue::new(s)
                    .range(1..=100_000_000)
                    .speed(1.0)
                    .update_while_editing(false),
            )
            .labelled_by(id);
        }
    });
    row(ui, LIVE, "stop at held-out loss", |ui, id| {
        let mut on = lab.stop.heldout_loss_below.is_some();
        if ui.checkbox(&mut on, "below").changed() {
            lab.stop.heldout_loss_below = on.then_some(0.3);
        }
        if let Some(l) = &mut lab.stop.heldout_loss_below {
            ui.add(
                egui::DragValue::new(l)
                    .range(1e-6..=100.0)
                    .speed(0.005)
                    .update_while_editing(false),
            )
            .labelled_by(id);
        }
    });
    if (lab.speed, lab.stop) != before {
        lab.send(Command::SetSpeed(lab.speed));
        lab.send(Command::SetStop(lab.stop));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_slider_stops_at_1_2_5_per_decade() {
        let ladder = rate_ladder();
        assert_eq!(ladder.len(), 19);
        assert_eq!(ladder[..4], [1e-5, 2e-5, 5e-5, 1e-4]);
        assert_eq!(*ladder.last().unwrap(), 10.0);
        // Each stop is the typed decimal's f64, not 2·10⁻⁵ computed (which rounds differently).
        assert_eq!(ladder[1].to_string(), "0.00002");
        assert_eq!(nearest_stop(&ladder, 0.1), 12);
        assert_eq!(
            nearest_stop(&ladder, 0.003),
            7,
            "3e-3 is nearer 2e-3 than 5e-3 in log"
        );
        assert_eq!(nearest_stop(&ladder, 0.004), 8);
        assert_eq!(nearest_stop(&ladder, 1e-9), 0);
        assert_eq!(nearest_stop(&ladder, 1e6), 18);
        assert_eq!(nearest_stop(&ladder, 0.0), 0);
    }
}
