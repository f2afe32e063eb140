//! The key lab's figures as [`Figure`] descriptions: the live run's plots (a)–(d), the seed
//! sweep, and the points sweeps (ε, d_k). The app's "Save figure…" and the command line's
//! `--figures` both call these, with the optimizers' registry colours; the run's plots come from
//! one [`RunHistory`] through [`run_figure`] on both paths, so the two draw the same figure.

use nalgebra::DMatrix;

pub use super::points::{ACCURACY, EXCESS, GRAM, Metric, ORIENTATION};
use super::points::{Point, PointAxis};
use super::sweep::SweepResult;
pub use crate::figure::arm_title;
use crate::figure::{Axis, Body, Dash, Earlier, Figure, GREY, Heatmap, Mark, Rgb, faded_line};
use crate::history::{ArmHistory, LOSS_AVERAGE_STEPS, RunHistory};
use crate::metrics::isotropic_axis_concentration;
use crate::optim::optimizer_rgb;

/// One arm's curves over training steps (`[step, value]`), as the live run draws them.
#[derive(Clone, Debug, Default)]
pub struct ArmCurves {
    /// The arm's name.
    pub name: String,
    /// Its optimizer (for the colour).
    pub optimizer: String,
    /// Twin orientation divergence.
    pub orientation: Vec<[f64; 2]>,
    /// Noise-twin divergence (empty without noise twins).
    pub noise: Vec<[f64; 2]>,
    /// A(K) of the run from W0 and from Q·W0.
    pub axis: [Vec<[f64; 2]>; 2],
    /// Training loss of the run from W0, averaged over about [`LOSS_AVERAGE_STEPS`] steps
    /// ([`crate::history::loss_average`]), in the app and on the command line alike.
    pub loss: Vec<[f64; 2]>,
    /// Held-out loss of the run from W0.
    pub heldout: Vec<[f64; 2]>,
    /// Mean raw column norm of the run from W0.
    pub norm_mean: Vec<[f64; 2]>,
    /// Sample sd of the raw column norms of the run from W0.
    pub norm_sd: Vec<[f64; 2]>,
    /// The step at which the arm diverged, if it did.
    pub diverged_at: Option<usize>,
}

impl ArmCurves {
    fn color(&self, i: usize) -> Rgb {
        optimizer_rgb(&self.optimizer, i)
    }

    /// The arm's name as a reader sees it: the rule's title for an arm named after its rule.
    fn title(&self) -> String {
        arm_title(&self.name)
    }
}

/// Each arm's curves from a run's history, as the app and `run --figures` draw them.
pub fn arm_curves(arms: &[ArmHistory]) -> Vec<ArmCurves> {
    arms.iter()
        .map(|a| ArmCurves {
            name: a.name(),
            optimizer: a.label.optimizer.clone(),
            orientation: a.orientation_div.raw_points(),
            noise: a.noise_div.raw_points(),
            axis: [
                a.axis_concentration[0].raw_points(),
                a.axis_concentration[1].raw_points(),
            ],
            loss: a.loss_average.raw_points(),
            heldout: a.heldout_loss[0].raw_points(),
            norm_mean: a.column_norm[0].raw_points(),
            norm_sd: a.column_norm_sd.raw_points(),
            diverged_at: match a.status {
                super::ArmStatus::Diverged { step, .. } => Some(step),
                _ => None,
            },
        })
        .collect()
}

/// How the live run's plots are shown: what the app's tab settings hold and `run --figures`
/// takes at its defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunView {
    /// Plot (c) shows raw column norms instead of the loss.
    pub show_norms: bool,
    /// Arm whose random-rotation band plot (b) shades (the last arm when out of range).
    pub band_arm: usize,
}

impl Default for RunView {
    fn default() -> Self {
        Self {
            show_norms: false,
            band_arm: BAND_ARM,
        }
    }
}

/// The figure of live plot `plot` of `history` ((d), the keys of its latest snapshot, for
/// `None`) and its file name stem: what the app's Save figure… and `run --figures` write.
pub fn run_figure(
    history: &RunHistory,
    plot: Option<LivePlot>,
    view: RunView,
    d_k: usize,
) -> (&'static str, Figure) {
    let arms = &history.arms;
    let Some(plot) = plot else {
        let keys: Vec<(String, DMatrix<f64>)> = history
            .snapshot
            .iter()
            .flat_map(|snap| {
                arms.iter()
                    .zip(&snap.keys)
                    .filter_map(move |(a, k)| Some((a.name(), k.clone()?)))
            })
            .collect();
        let step = history.snapshot.as_ref().map(|s| s.step);
        return ("keys", keys_figure(&keys, step));
    };
    let curves = arm_curves(arms);
    let (stem, mut figure) = match plot {
        LivePlot::Orientation => ("orientation_divergence", orientation_figure(&curves)),
        LivePlot::Axis => {
            let shown = view.band_arm.min(arms.len().saturating_sub(1));
            let band = arms.get(shown).map(|a| BandRows {
                name: &a.label.name,
                color: optimizer_rgb(&a.label.optimizer, shown),
                rows: a.band.finite_points().map(|p| [p[0], p[2], p[4]]).collect(),
            });
            ("axis_concentration", axis_figure(&curves, d_k, band))
        }
        LivePlot::Loss if view.show_norms => ("column_norms", norms_figure(&curves)),
        LivePlot::Loss => ("loss", loss_figure(&curves)),
    };
    if let Body::Plot { marks, .. } = &mut figure.body {
        // Earlier runs go under the current one, so its curves stay on top.
        let faded = past_marks(history, plot, view);
        marks.splice(0..0, faded);
    }
    (stem, figure)
}

pub use crate::figure::PAST_OPACITY;

/// The faded curves of `history`'s earlier runs that are shown, for live plot `plot`: the
/// quantity each arm's main curve draws (the gauge twin's divergence, A(K) from W0, held-out
/// loss, mean column norm), thin, in the arm's colour at [`PAST_OPACITY`]; one legend entry
/// per run, numbered as the run list and the CSV number them (`earlier 1: adam lr 0.01`).
pub fn past_marks(history: &RunHistory, plot: LivePlot, view: RunView) -> Vec<Mark> {
    let mut marks = Vec::new();
    for (k, e) in Earlier::shown(&history.past) {
        for (i, a) in arm_curves(&e.run.arms).iter().enumerate() {
            let (points, log) = match plot {
                LivePlot::Orientation => (&a.orientation, true),
                LivePlot::Axis => (&a.axis[0], false),
                LivePlot::Loss if view.show_norms => (&a.norm_mean, false),
                LivePlot::Loss => (&a.heldout, false),
            };
            let points = if log { floored(points) } else { points.clone() };
            marks.push(faded_line(k, &e.label, i == 0, a.color(i), points));
        }
    }
    marks
}

/// The arm whose random-rotation band plot (b) shows unless the reader picks another (the
/// second, the first coordinate-wise rule in every bundled preset).
pub const BAND_ARM: usize = 1;

/// Lighter version of `c` (mixed with white by `t` in [0, 1]) for rotated twins.
fn lighter(c: Rgb, t: f64) -> Rgb {
    c.map(|v| (v as f64 + (255.0 - v as f64) * t).round() as u8)
}

/// Title of plot (a).
pub const ORIENTATION_TITLE: &str = "(a) Twin orientation divergence ‖W′ − QW‖F / ‖W‖F";
/// Title of plot (b).
pub const AXIS_TITLE: &str = "(b) Axis concentration A(K): thick from W0, thin from Q·W0";
/// Title of plot (c), loss view.
pub const LOSS_TITLE: &str = "(c) Runs from W0: loss";
/// Title of plot (c), column-norm view.
pub const NORMS_TITLE: &str = "(c) Runs from W0: raw column norms";
/// Title of plot (d).
pub const KEYS_TITLE: &str = "(d) Learned |K| of each arm's run from W0";

pub use crate::figure::LOG_FLOOR;

/// `points` with values at or below [`LOG_FLOOR`] raised to it.
fn floored(points: &[[f64; 2]]) -> Vec<[f64; 2]> {
    points.iter().map(|p| [p[0], p[1].max(LOG_FLOOR)]).collect()
}

/// The dotted grey line at [`LOG_FLOOR`] that says which values a log axis draws there
/// (`what`: "exact 0", say).
fn floor_line(what: &str) -> Mark {
    Mark::hline(
        format!("{what}, drawn at {LOG_FLOOR:.0e}"),
        GREY,
        LOG_FLOOR,
        Dash::Dotted,
    )
}

/// Plot (a): each arm's twin divergence (log axis), noise twins dashed, and where an arm
/// diverged. Exact zeros are drawn at [`LOG_FLOOR`], marked by a dotted line.
pub fn orientation_figure(arms: &[ArmCurves]) -> Figure {
    let mut marks = Vec::new();
    let at_floor = arms
        .iter()
        .flat_map(|a| a.orientation.iter().chain(&a.noise))
        .any(|p| p[1] <= LOG_FLOOR);
    if at_floor {
        marks.push(floor_line("exact 0"));
    }
    for (i, a) in arms.iter().enumerate() {
        let c = a.color(i);
        marks.push(Mark::line(
            format!("{}, gauge twin", a.title()),
            c,
            floored(&a.orientation),
            2.5,
            Dash::Solid,
        ));
        if !a.noise.is_empty() {
            marks.push(Mark::line(
                format!("{}, noise twin", a.title()),
                c,
                floored(&a.noise),
                1.5,
                Dash::Dashed,
            ));
        }
        if let Some(step) = a.diverged_at {
            marks.push(Mark::vline(
                format!("{} diverged", a.title()),
                c,
                step as f64,
                Dash::Dashed,
            ));
        }
    }
    Figure {
        title: ORIENTATION_TITLE.into(),
        body: Body::Plot {
            x: Axis::linear("training step").including(0.0),
            y: Axis::log("‖W′ − QW‖F / ‖W‖F"),
            marks,
        },
    }
}

/// A band of one arm: its name, colour and `[step, p5, p95]` rows.
pub struct BandRows<'a> {
    /// The arm's name.
    pub name: &'a str,
    /// Its colour.
    pub color: Rgb,
    /// `[step, low, high]`.
    pub rows: Vec<[f64; 3]>,
}

/// Plot (b): A(K) of each arm from W0 (thick) and from Q·W0 (thin, lighter), the isotropic
/// 3/(d_k + 2) dashed, and optionally one arm's random-rotation 5–95% band.
pub fn axis_figure(arms: &[ArmCurves], d_k: usize, band: Option<BandRows>) -> Figure {
    let mut marks = Vec::new();
    if let Some(b) = band {
        let x = b.rows.iter().map(|r| r[0]).collect();
        let lo = b.rows.iter().map(|r| r[1]).collect();
        let hi = b.rows.iter().map(|r| r[2]).collect();
        marks.push(Mark::band(
            format!("{}: random rotations, 5–95%", arm_title(b.name)),
            b.color,
            x,
            lo,
            hi,
        ));
    }
    for (i, a) in arms.iter().enumerate() {
        let c = a.color(i);
        marks.push(Mark::line(
            format!("{} from Q·W0", a.title()),
            lighter(c, 0.45),
            a.axis[1].clone(),
            1.0,
            Dash::Solid,
        ));
        marks.push(Mark::line(
            format!("{} from W0", a.title()),
            c,
            a.axis[0].clone(),
            2.5,
            Dash::Solid,
        ));
    }
    marks.push(Mark::hline(
        "random directions, 3/(d_k+2)",
        GREY,
        isotropic_axis_concentration(d_k),
        Dash::Dashed,
    ));
    Figure {
        title: AXIS_TITLE.into(),
        body: Body::Plot {
            x: Axis::linear("training step").including(0.0),
            y: Axis::linear("A(K) = (1/V) Σ k⁴"),
            marks,
        },
    }
}

/// Plot (c), loss view: training loss averaged over about [`LOSS_AVERAGE_STEPS`] steps (thin,
/// lighter; the window in its legend) and held-out loss (thick, with dots).
pub fn loss_figure(arms: &[ArmCurves]) -> Figure {
    let mut marks = Vec::new();
    for (i, a) in arms.iter().enumerate() {
        let c = a.color(i);
        marks.push(Mark::line(
            format!(
                "{}, training ({LOSS_AVERAGE_STEPS}-step average)",
                a.title()
            ),
            lighter(c, 0.35),
            a.loss.clone(),
            1.2,
            Dash::Solid,
        ));
        marks.push(Mark::line(
            format!("{}, held-out", a.title()),
            c,
            a.heldout.clone(),
            2.5,
            Dash::Solid,
        ));
        marks.push(Mark::points(String::new(), c, a.heldout.clone(), 3.0));
    }
    Figure {
        title: LOSS_TITLE.into(),
        body: Body::Plot {
            x: Axis::linear("training step").including(0.0),
            y: Axis::linear("cross-entropy (nats)").including(0.0),
            marks,
        },
    }
}

/// Plot (c), column-norm view: mean raw column norm (solid) and its sd over keys (dashed).
pub fn norms_figure(arms: &[ArmCurves]) -> Figure {
    let mut marks = Vec::new();
    for (i, a) in arms.iter().enumerate() {
        let c = a.color(i);
        marks.push(Mark::line(
            format!("{}, mean", a.title()),
            c,
            a.norm_mean.clone(),
            2.5,
            Dash::Solid,
        ));
        marks.push(Mark::line(
            format!("{}, sd over keys", a.title()),
            c,
            a.norm_sd.clone(),
            1.2,
            Dash::Dashed,
        ));
    }
    Figure {
        title: NORMS_TITLE.into(),
        body: Body::Plot {
            x: Axis::linear("training step").including(0.0),
            y: Axis::linear("raw column norm ‖w‖").including(0.0),
            marks,
        },
    }
}

/// Plot (d): |K| of each arm (`d_k × V`, one column per key), named, at training step `step`
/// (said in the key axis's label, so the maps' titles stay short); arms without keys (not
/// finite) are left out.
pub fn keys_figure(keys: &[(String, DMatrix<f64>)], step: Option<usize>) -> Figure {
    Figure {
        title: KEYS_TITLE.into(),
        body: Body::Heatmaps {
            maps: keys
                .iter()
                .map(|(name, k)| Heatmap {
                    title: arm_title(name),
                    values: k.abs(),
                })
                .collect(),
            caption: "|k| (unit-norm keys)".into(),
            x_label: step.map_or("key".into(), |t| format!("key (at step {t})")),
            y_label: "coordinate".into(),
        },
    }
}

/// A plot of the live run with data to export: which series "Export CSV" saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LivePlot {
    /// Plot (a): twin orientation divergence.
    Orientation,
    /// Plot (b): axis concentration and the baseline band.
    Axis,
    /// Plot (c): training and held-out loss.
    Loss,
}

/// One arm's series as the live run's CSV export writes them: its name, the decimated
/// `[step, value]` points the app keeps, and its baseline band's rows.
#[derive(Clone, Debug, Default)]
pub struct ArmSeries {
    /// The arm's name.
    pub name: String,
    /// Twin orientation divergence.
    pub orientation: Vec<[f64; 2]>,
    /// A(K) of the run from W0 and from Q·W0.
    pub axis: [Vec<[f64; 2]>; 2],
    /// Raw training loss of the run from W0.
    pub train_loss: Vec<[f64; 2]>,
    /// Held-out loss of the run from W0.
    pub heldout: Vec<[f64; 2]>,
    /// The random-rotation baseline of A(K) from W0: `[step, p5, mean, p95]` rows.
    pub band: Vec<[f64; 4]>,
}

/// The data of live plot `plot` as CSV: one `series,step,value` row per point of every series
/// the plot holds (series named `<arm>_orientation_div`, `<arm>_axis_concentration`,
/// `<arm>_rot_axis_concentration`, `<arm>_train_loss`, `<arm>_heldout_loss`), and for plot (b)
/// the band as `<arm>_baseline_p5`, `_mean` and `_p95`.
pub fn live_csv(arms: &[ArmSeries], plot: LivePlot) -> String {
    let mut csv = String::from("series,step,value\n");
    for a in arms {
        let name = &a.name;
        let series: Vec<(String, &[[f64; 2]])> = match plot {
            LivePlot::Orientation => {
                vec![(format!("{name}_orientation_div"), a.orientation.as_slice())]
            }
            LivePlot::Axis => vec![
                (format!("{name}_axis_concentration"), a.axis[0].as_slice()),
                (
                    format!("{name}_rot_axis_concentration"),
                    a.axis[1].as_slice(),
                ),
            ],
            LivePlot::Loss => vec![
                (format!("{name}_train_loss"), a.train_loss.as_slice()),
                (format!("{name}_heldout_loss"), a.heldout.as_slice()),
            ],
        };
        for (label, points) in series {
            for [x, y] in points {
                csv.push_str(&format!("{label},{x},{y}\n"));
            }
        }
        if plot == LivePlot::Axis {
            for [step, p5, mean, p95] in &a.band {
                csv.push_str(&format!("{name}_baseline_p5,{step},{p5}\n"));
                csv.push_str(&format!("{name}_baseline_mean,{step},{mean}\n"));
                csv.push_str(&format!("{name}_baseline_p95,{step},{p95}\n"));
            }
        }
    }
    csv
}

/// The seed sweep: per arm, each seed's final excess A(K) − baseline mean (dots), mean ± sd
/// over seeds (bar and whisker), ± the baseline's own sd (shaded), zero dashed.
pub fn sweep_figure(r: &SweepResult) -> Figure {
    let names: Vec<String> = r.aggregate.iter().map(|a| arm_title(&a.arm)).collect();
    let mut marks = vec![Mark::hline("zero excess", GREY, 0.0, Dash::Solid)];
    for (i, agg) in r.aggregate.iter().enumerate() {
        let optimizer = r
            .preset
            .arms
            .get(i)
            .map_or(agg.arm.as_str(), |a| a.optimizer.as_str());
        let c = optimizer_rgb(optimizer, i);
        let x = i as f64;
        let sd = agg.baseline_sd_mean;
        if !(sd.is_finite() && agg.excess_mean.is_finite()) {
            continue;
        }
        marks.push(Mark::band(
            String::new(),
            c,
            vec![x - 0.35, x + 0.35],
            vec![-sd, -sd],
            vec![sd, sd],
        ));
        let dots: Vec<[f64; 2]> = r
            .per_seed
            .iter()
            .filter(|s| s.arm == agg.arm)
            .enumerate()
            .filter_map(|(k, s)| {
                let b = s.baseline.as_ref()?;
                let jitter = (k as f64 / r.seeds.len().max(1) as f64 - 0.5) * 0.4;
                Some([x + jitter, b[0].excess])
            })
            .collect();
        marks.push(Mark::points(String::new(), c, dots, 3.5));
        let (m, s) = (agg.excess_mean, agg.excess_sd);
        marks.push(Mark::line(
            String::new(),
            c,
            vec![[x, m - s], [x, m + s]],
            3.0,
            Dash::Solid,
        ));
        marks.push(Mark::line(
            String::new(),
            c,
            vec![[x - 0.25, m], [x + 0.25, m]],
            3.0,
            Dash::Solid,
        ));
        // Caps on the whisker's ends.
        for end in [m - s, m + s] {
            marks.push(Mark::line(
                String::new(),
                c,
                vec![[x - 0.1, end], [x + 0.1, end]],
                2.0,
                Dash::Solid,
            ));
        }
    }
    // The legend names what every arm draws, in grey; the arms are named on the x axis.
    marks.push(Mark::points("one seed", GREY, Vec::new(), 3.5));
    marks.push(Mark::line("mean ± sd", GREY, Vec::new(), 3.0, Dash::Solid));
    marks.push(Mark::band(
        "baseline's sd",
        GREY,
        Vec::new(),
        Vec::new(),
        Vec::new(),
    ));
    Figure {
        title: format!(
            "Seed sweep: final A(K) excess over the rotation baseline ({} seeds)",
            r.seeds.len()
        ),
        body: Body::Plot {
            x: Axis::categories("arm", names),
            y: Axis::linear("excess A(K) − baseline mean"),
            marks,
        },
    }
}

/// One arm of a points figure: name, optimizer, drawn thick, and `(x, mean, sd)` points.
pub struct ArmPoints {
    /// The arm's name.
    pub name: String,
    /// Its colour.
    pub color: Rgb,
    /// Drawn thick and solid (the arms the sweep is about); the others dashed.
    pub emphasised: bool,
    /// `(x, mean, sd)` per point where the arm has finished seeds.
    pub points: Vec<(f64, f64, f64)>,
}

/// The arms of `sweeps` (one sweep per x) with `m`'s (mean, sd).
pub fn arm_points(
    sweeps: &[(f64, &SweepResult)],
    m: &Metric,
    emphasise: fn(&str) -> bool,
) -> Vec<ArmPoints> {
    let Some((_, first)) = sweeps.first() else {
        return Vec::new();
    };
    first
        .aggregate
        .iter()
        .enumerate()
        .map(|(i, agg)| {
            let optimizer = first
                .preset
                .arms
                .get(i)
                .map_or(agg.arm.as_str(), |a| a.optimizer.as_str());
            ArmPoints {
                name: agg.arm.clone(),
                color: optimizer_rgb(optimizer, i),
                emphasised: emphasise(optimizer),
                points: sweeps
                    .iter()
                    .filter_map(|(x, s)| {
                        let a = s.aggregate.iter().find(|a| a.arm == agg.arm)?;
                        (a.seeds_ok > 0).then(|| {
                            let (mean, sd) = (m.value)(a);
                            (*x, mean, sd)
                        })
                    })
                    .collect(),
            }
        })
        .collect()
}

/// The chance spread of each point ([`PointAxis::band_sd`]), as `(x, sd)`.
pub fn band<A: PointAxis>(points: &[Point<A>]) -> Vec<(f64, f64)> {
    points
        .iter()
        .map(|p| (A::x(p.value), A::band_sd(&p.sweep)))
        .collect()
}

/// A mean ± sd plot of `m` over `A`'s log x axis: emphasised arms thick, the others dashed,
/// whiskers of ± sd over seeds; with `zero_band`, ± the baseline's sd shaded around 0.
pub fn points_figure<A: PointAxis>(
    arms: &[ArmPoints],
    m: &Metric,
    zero_band: Option<&[(f64, f64)]>,
) -> Figure {
    let mut marks = Vec::new();
    if let Some(band) = zero_band {
        let mut pts: Vec<(f64, f64)> = band
            .iter()
            .copied()
            .filter(|p| p.0 > 0.0 && p.1.is_finite())
            .collect();
        // One swept value: its band spans the decade drawn around it (see below).
        if let [(x, sd)] = pts[..] {
            pts = vec![(x / 10f64.sqrt(), sd), (x * 10f64.sqrt(), sd)];
        }
        if pts.len() >= 2 {
            marks.push(Mark::band(
                "± the baseline's sd",
                GREY,
                pts.iter().map(|p| p.0).collect(),
                pts.iter().map(|p| -p.1).collect(),
                pts.iter().map(|p| p.1).collect(),
            ));
        }
        marks.push(Mark::hline("zero excess", GREY, 0.0, Dash::Solid));
    }
    // On a log y axis, zeros (and whisker ends at or below zero) are drawn at the floor, as
    // on screen.
    let y = |v: f64| if m.log_y { v.max(LOG_FLOOR) } else { v };
    let mut floored_any = false;
    let mut ticks = Vec::new();
    // The decades the x axis spans (one around a single value), for offsets that show at
    // any width.
    let xs: Vec<f64> = arms
        .iter()
        .flat_map(|a| a.points.iter().map(|p| p.0))
        .filter(|x| *x > 0.0)
        .collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, 0f64), |(l, h), &x| (l.min(x), h.max(x)));
    let decades = if hi > lo { (hi / lo).log10() } else { 1.0 };
    for (i, a) in arms.iter().enumerate() {
        // Arms sharing an x are dodged: each arm's whiskers 2% of the axis apart, capped.
        let offset = (i as f64 - (arms.len() as f64 - 1.0) / 2.0) * 0.02 * decades;
        let nudge = 10f64.powf(offset);
        let cap = 10f64.powf(0.008 * decades);
        let pts: Vec<(f64, f64, f64)> = a
            .points
            .iter()
            .copied()
            .filter(|p| p.0 > 0.0 && p.1.is_finite())
            .collect();
        ticks.extend(pts.iter().map(|p| p.0));
        let (width, dash) = if a.emphasised {
            (3.0, Dash::Solid)
        } else {
            (1.5, Dash::Dashed)
        };
        floored_any |= m.log_y && pts.iter().any(|p| p.1 - p.2 <= LOG_FLOOR);
        marks.push(Mark::line(
            arm_title(&a.name),
            a.color,
            pts.iter().map(|p| [p.0, y(p.1)]).collect(),
            width,
            dash,
        ));
        for &(x, mean, sd) in &pts {
            if sd.is_finite() && sd > 0.0 {
                let xn = x * nudge;
                marks.push(Mark::line(
                    String::new(),
                    a.color,
                    vec![[xn, y(mean - sd)], [xn, y(mean + sd)]],
                    width.min(2.0),
                    Dash::Solid,
                ));
                for end in [y(mean - sd), y(mean + sd)] {
                    marks.push(Mark::line(
                        String::new(),
                        a.color,
                        vec![[xn / cap, end], [xn * cap, end]],
                        width.min(2.0),
                        Dash::Solid,
                    ));
                }
            }
        }
    }
    if floored_any {
        marks.push(floor_line("0 or below"));
    }
    let mut x = Axis::log(A::X_LABEL);
    ticks.sort_by(f64::total_cmp);
    ticks.dedup();
    // One swept value: a decade around it, so the arms' nudged whiskers and their means sit in
    // the middle rather than at the edges of a range only the nudge spans.
    if let [only] = ticks[..] {
        x = x
            .including(only / 10f64.sqrt())
            .including(only * 10f64.sqrt());
    }
    if A::TICK_EACH {
        x.ticks = ticks;
    }
    let y = if m.log_y {
        Axis::log(m.y_label)
    } else {
        Axis::linear(m.y_label)
    };
    Figure {
        title: m.title.into(),
        body: Body::Plot { x, y, marks },
    }
}

/// The figures of a points sweep, one per [`PointAxis::METRICS`] (the excess with the band),
/// named for files `<ID>_<metric>`.
pub fn points_figures<A: PointAxis>(points: &[Point<A>]) -> Vec<(String, Figure)> {
    let sweeps: Vec<(f64, &SweepResult)> =
        points.iter().map(|p| (A::x(p.value), &p.sweep)).collect();
    let band = band(points);
    A::METRICS
        .iter()
        .map(|&m| {
            let arms = arm_points(&sweeps, m, A::emphasised);
            let zero = (m.id == "excess").then_some(&band[..]);
            (
                format!("{}_{}", A::ID, m.id),
                points_figure::<A>(&arms, m, zero),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::experiment::{AdamEps, KeyDim, points_sweep, sweep};
    use crate::figure::{Shape, assert_readable};
    use crate::preset::Preset;

    fn quick() -> Preset {
        let mut p = Preset::load("classroom").unwrap();
        p.steps = 12;
        p.eval_every = 4;
        p
    }

    /// One evaluation per arm: every curve is a single point.
    fn one_point(name: &str, optimizer: &str, v: f64) -> ArmCurves {
        ArmCurves {
            name: name.into(),
            optimizer: optimizer.into(),
            orientation: vec![[10.0, v * 1e-3]],
            noise: vec![],
            axis: [vec![[10.0, v]], vec![[10.0, v]]],
            loss: vec![[10.0, 2.0 + v]],
            heldout: vec![[10.0, 2.5 + v]],
            norm_mean: vec![[10.0, 1.0 + v]],
            norm_sd: vec![[10.0, v]],
            diverged_at: None,
        }
    }

    #[test]
    fn live_csv_names_every_series_and_the_band() {
        let arm = ArmSeries {
            name: "gd".into(),
            orientation: vec![[0.0, 0.0], [5.0, 1e-15]],
            axis: [vec![[5.0, 0.3]], vec![[5.0, 0.25]]],
            train_loss: vec![[1.0, 2.5]],
            heldout: vec![[4.0, 2.0]],
            band: vec![[5.0, 0.1, 0.2, 0.3]],
        };
        assert_eq!(
            live_csv(std::slice::from_ref(&arm), LivePlot::Orientation),
            "series,step,value\ngd_orientation_div,0,0\ngd_orientation_div,5,0.000000000000001\n"
        );
        assert_eq!(
            live_csv(std::slice::from_ref(&arm), LivePlot::Axis),
            "series,step,value\ngd_axis_concentration,5,0.3\ngd_rot_axis_concentration,5,0.25\n\
             gd_baseline_p5,5,0.1\ngd_baseline_mean,5,0.2\ngd_baseline_p95,5,0.3\n"
        );
        assert_eq!(
            live_csv(&[arm], LivePlot::Loss),
            "series,step,value\ngd_train_loss,1,2.5\ngd_heldout_loss,4,2\n"
        );
    }

    #[test]
    fn every_run_figure_of_one_evaluation_reads() {
        let arms = [one_point("gd", "gd", 0.2), one_point("adam", "adam", 0.4)];
        assert_readable(&orientation_figure(&arms));
        assert_readable(&axis_figure(&arms, 16, None));
        assert_readable(&loss_figure(&arms));
        assert_readable(&norms_figure(&arms));
        // All-equal values over many steps read too.
        let flat: Vec<ArmCurves> = arms
            .iter()
            .map(|a| {
                let mut a = a.clone();
                a.loss = (0..5).map(|i| [i as f64, 2.0]).collect();
                a
            })
            .collect();
        assert_readable(&loss_figure(&flat));
    }

    /// Long arm names, a range of 600 decades and a diverged arm: every run figure and the
    /// keys fit at every size.
    #[test]
    fn run_figures_with_long_names_and_huge_ranges_fit() {
        let long = "adam with a label far longer than any legend column holds (β₂ = 0.999)";
        let steps: Vec<f64> = (0..200).map(|i| i as f64 * 5e4).collect();
        let wild = |k: f64| -> Vec<[f64; 2]> {
            steps
                .iter()
                .map(|&x| [x, 10f64.powf(-300.0 + k * x / 1e7 * 600.0)])
                .collect()
        };
        let arm = |name: &str, optimizer: &str, k: f64| ArmCurves {
            name: name.into(),
            optimizer: optimizer.into(),
            orientation: wild(k),
            noise: wild(k / 2.0),
            axis: [wild(k / 600.0), wild(k / 700.0)],
            loss: wild(k),
            heldout: wild(k),
            norm_mean: wild(k),
            norm_sd: wild(k),
            diverged_at: Some(3_000_000),
        };
        let arms = [
            arm(long, "adam", 1.0),
            arm("scalar_adam", "scalar_adam", 0.5),
        ];
        let band = BandRows {
            name: long,
            color: [0, 0, 0],
            rows: steps.iter().map(|&x| [x, 0.1, 0.9]).collect(),
        };
        for f in [
            orientation_figure(&arms),
            axis_figure(&arms, 16, Some(band)),
            loss_figure(&arms),
            norms_figure(&arms),
        ] {
            crate::figure::check::assert_fits(&f, &f.title);
        }
        // The code name never reaches the reader.
        let f = loss_figure(&arms);
        let names = crate::figure::names(&f);
        assert!(names.contains(&"Scalar-Adam, held-out"), "{names:?}");
        assert!(names.iter().all(|n| !n.contains("scalar_adam")));
        let keys = keys_figure(
            &[
                (long.to_string(), DMatrix::from_element(16, 64, 0.5)),
                ("gd".into(), DMatrix::from_element(1, 1, 1.0)),
            ],
            Some(40),
        );
        crate::figure::check::assert_fits(&keys, "keys");
    }

    #[test]
    fn a_sweep_over_one_value_has_its_means_and_bars_inside_the_plot() {
        let p = quick();
        let cancel = AtomicBool::new(false);
        let eps = points_sweep::<AdamEps>(&p, &[1e-3], 2, &|| {}, &cancel).unwrap();
        let dks = points_sweep::<KeyDim>(&p, &[16], 2, &|| {}, &cancel).unwrap();
        let figures: Vec<(String, Figure)> = points_figures(&eps)
            .into_iter()
            .chain(points_figures(&dks))
            .collect();
        assert_eq!(figures.len(), 6);
        for (name, f) in &figures {
            assert_readable(f);
            let Body::Plot { x, y, marks } = &f.body else {
                panic!("{name}: a plot")
            };
            // A decade around the one value, the value in the middle.
            let ([x0, x1], _) = crate::figure::plot_ranges(x, y, marks);
            let only: f64 = if name.starts_with("eps") { 1e-3 } else { 16.0 };
            assert!((x1 - x0 - 1.08).abs() < 1e-9, "{name}: {x0}..{x1}");
            assert!(((x0 + x1) / 2.0 - only.log10()).abs() < 1e-9, "{name}");
            // Every arm's mean is drawn (a one-point line, shown as a dot).
            let means = marks
                .iter()
                .filter(|m| matches!(&m.shape, Shape::Line { points, .. } if points.len() == 1))
                .count();
            assert_eq!(means, p.arms.len(), "{name}");
        }
        assert_readable(&sweep_figure(&sweep(&p, 1, &|| {}).unwrap()));
    }
}
