//! The attention section's figures and tables as the window shows and saves them: the logit
//! distance of every twin, the base models' training curves, the per-head query–key
//! difference of one twin, and their CSV tables (with the checkpoint table). The app draws
//! these very [`Figure`]s on screen and writes them with "Save figure…"; its series arrive
//! here as plain `[step, value]` points.

use nalgebra::DMatrix;
use serde::{Deserialize, Serialize};

use super::preset::{AttentionPreset, TwinKind};
use super::report::paper_value;
use super::twins::Record;
use crate::figure::{
    Axis, Body, Dash, Earlier, Figure, GREY, Heatmap, LOG_FLOOR, Mark, Rgb, arm_title, faded_line,
};
use crate::optim::optimizer_rgb;
use crate::output::csv_num;

/// Title of the logit-distance figure.
pub const DISTANCE_TITLE: &str = "Twin vs base model: logit distance";
/// Title of the per-head figure.
pub const HEADS_TITLE: &str = "Query–key form difference per head";

/// What the training-curve figure shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Curves {
    /// Training and validation accuracy.
    Accuracy,
    /// Training and validation loss (log scale).
    Loss,
}

impl Curves {
    /// The figure's title.
    pub fn title(self) -> &'static str {
        match self {
            Curves::Accuracy => "Base models' accuracy",
            Curves::Loss => "Base models' loss",
        }
    }
}

/// One model's series over training steps (`[step, value]`, in step order; non-finite values
/// left out).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModelCurves {
    /// Index of its run in the preset.
    pub run: usize,
    /// Its twin kind (`None`: the base model).
    pub twin: Option<TwinKind>,
    /// Relative logit distance from the base model (empty for the base model).
    pub distance: Vec<[f64; 2]>,
    /// Training accuracy.
    pub train_accuracy: Vec<[f64; 2]>,
    /// Validation accuracy.
    pub val_accuracy: Vec<[f64; 2]>,
    /// Training loss (nats).
    pub train_loss: Vec<[f64; 2]>,
    /// Validation loss (nats).
    pub val_loss: Vec<[f64; 2]>,
}

/// Run `run`'s colour: its rule's registry colour.
pub fn run_rgb(preset: &AttentionPreset, run: usize) -> Rgb {
    optimizer_rgb(&preset.runs[run].rule.optimizer, run)
}

/// The stroke of a twin kind's line: gauge solid, noise dotted, A = I dashed.
pub fn twin_dash(kind: TwinKind) -> Dash {
    match kind {
        TwinKind::Gauge => Dash::Solid,
        TwinKind::Noise => Dash::Dotted,
        TwinKind::Identity => Dash::Dashed,
    }
}

/// Every twin's relative logit distance (log axis; exact zeros, as the A = I twin's, drawn at
/// [`LOG_FLOOR`]), coloured by rule and stroked by [`twin_dash`]. With one rule each line is
/// named (`Adam, gauge twin`); with several, the legend names the rules by colour and the twin
/// kinds by stroke ([`factored_legend`]), so a paper's column still has room for the plot.
pub fn distance_figure(preset: &AttentionPreset, models: &[ModelCurves]) -> Figure {
    let twins: Vec<(&ModelCurves, TwinKind)> =
        models.iter().filter_map(|m| Some((m, m.twin?))).collect();
    let factored = runs_of(twins.iter().map(|t| t.0)) > 1;
    let mut marks: Vec<Mark> = twins
        .iter()
        .map(|&(m, kind)| {
            let name = if factored {
                String::new()
            } else {
                format!(
                    "{}, {} twin",
                    arm_title(preset.runs[m.run].name()),
                    kind.label()
                )
            };
            let points = m
                .distance
                .iter()
                .map(|p| [p[0], p[1].max(LOG_FLOOR)])
                .collect();
            Mark::line(name, run_rgb(preset, m.run), points, 2.0, twin_dash(kind))
        })
        .collect();
    if factored {
        let mut kinds: Vec<TwinKind> = Vec::new();
        for &(_, k) in &twins {
            if !kinds.contains(&k) {
                kinds.push(k);
            }
        }
        let strokes = kinds
            .iter()
            .map(|&k| (format!("{} twin", k.label()), twin_dash(k)))
            .collect::<Vec<_>>();
        factored_legend(&mut marks, preset, twins.iter().map(|t| t.0), &strokes);
    }
    Figure {
        title: DISTANCE_TITLE.into(),
        body: Body::Plot {
            x: Axis::linear("training step").including(0.0),
            y: Axis::log("relative logit distance"),
            marks,
        },
    }
}

/// How many distinct runs `models` come from.
fn runs_of<'a>(models: impl Iterator<Item = &'a ModelCurves>) -> usize {
    let mut runs: Vec<usize> = models.map(|m| m.run).collect();
    runs.sort_unstable();
    runs.dedup();
    runs.len()
}

/// Legend-only entries (no data): one per run of `models` in its rule's colour, then one per
/// stroke in grey (`("gauge twin", Dash::Solid)`).
fn factored_legend<'a>(
    marks: &mut Vec<Mark>,
    preset: &AttentionPreset,
    models: impl Iterator<Item = &'a ModelCurves>,
    strokes: &[(String, Dash)],
) {
    let mut seen = Vec::new();
    for m in models {
        if !seen.contains(&m.run) {
            seen.push(m.run);
            marks.push(Mark::line(
                arm_title(preset.runs[m.run].name()),
                run_rgb(preset, m.run),
                Vec::new(),
                2.0,
                Dash::Solid,
            ));
        }
    }
    for (name, dash) in strokes {
        marks.push(Mark::line(name.clone(), GREY, Vec::new(), 2.0, *dash));
    }
}

/// The base models' training (solid) and validation (dashed) accuracy over [0, 1], or loss on
/// a log axis; with several rules the legend is factored as in [`distance_figure`].
pub fn curves_figure(preset: &AttentionPreset, models: &[ModelCurves], curves: Curves) -> Figure {
    let loss = curves == Curves::Loss;
    let bases: Vec<&ModelCurves> = models.iter().filter(|m| m.twin.is_none()).collect();
    let factored = runs_of(bases.iter().copied()) > 1;
    let mut marks = Vec::new();
    for m in &bases {
        let name = arm_title(preset.runs[m.run].name());
        let (train, val) = if loss {
            (&m.train_loss, &m.val_loss)
        } else {
            (&m.train_accuracy, &m.val_accuracy)
        };
        let c = run_rgb(preset, m.run);
        let named = |what: &str| {
            if factored {
                String::new()
            } else {
                format!("{name}, {what}")
            }
        };
        marks.push(Mark::line(
            named("training"),
            c,
            train.clone(),
            2.0,
            Dash::Solid,
        ));
        marks.push(Mark::line(
            named("validation"),
            c,
            val.clone(),
            1.5,
            Dash::Dashed,
        ));
    }
    if factored {
        let strokes = [
            ("training".to_string(), Dash::Solid),
            ("validation".to_string(), Dash::Dashed),
        ];
        factored_legend(&mut marks, preset, bases.iter().copied(), &strokes);
    }
    let y = if loss {
        Axis::log("cross-entropy (nats)")
    } else {
        Axis::linear("accuracy").including(0.0).including(1.0)
    };
    Figure {
        title: curves.title().into(),
        body: Body::Plot {
            x: Axis::linear("training step").including(0.0),
            y,
            marks,
        },
    }
}

/// What the attention view keeps of an earlier run (labelled by what changed: `seed 0`,
/// `preset attention-quick`, `same settings`).
#[derive(Clone, Debug, PartialEq)]
pub struct PastRun {
    /// Its preset (for its rules' colours).
    pub preset: AttentionPreset,
    /// Its models' series.
    pub models: Vec<ModelCurves>,
}

/// How many earlier runs the attention view keeps.
pub const MAX_PAST_RUNS: usize = 3;

/// The shown earlier runs' curves ([`faded_line`]) for the distance figure (`curves` `None`:
/// each gauge twin's distance) or the base models' figure (training accuracy or loss), one
/// legend entry per run (`earlier 1: seed 0`); they go under the current run's curves.
pub fn past_marks(past: &[Earlier<PastRun>], curves: Option<Curves>) -> Vec<Mark> {
    let mut marks = Vec::new();
    for (k, e) in Earlier::shown(past) {
        let mut first = true;
        for m in &e.run.models {
            let points = match (curves, m.twin) {
                (None, Some(TwinKind::Gauge)) => m
                    .distance
                    .iter()
                    .map(|p| [p[0], p[1].max(LOG_FLOOR)])
                    .collect(),
                (Some(Curves::Accuracy), None) => m.train_accuracy.clone(),
                (Some(Curves::Loss), None) => m.train_loss.clone(),
                _ => continue,
            };
            let color = run_rgb(&e.run.preset, m.run);
            marks.push(faded_line(k, &e.label, first, color, points));
            first = false;
        }
    }
    marks
}

/// Where a distance sits on the per-head colour scale: log10 from 1e-16 (0) to 1 (1); NaN
/// stays NaN.
pub fn heat_level(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    ((x.max(1e-16).log10() + 16.0) / 16.0).clamp(0.0, 1.0)
}

/// The query–key difference per head of run `run`'s `twin` in its record `latest` (rows:
/// layers, columns: heads, coloured by [`heat_level`]); no map before a record arrives.
pub fn heads_figure(
    preset: &AttentionPreset,
    run: usize,
    twin: TwinKind,
    latest: Option<&Record>,
) -> Figure {
    let arch = preset.arch();
    let maps = latest
        .map(|rec| {
            let values = DMatrix::from_fn(arch.layers, arch.heads, |l, hd| {
                heat_level(
                    rec.qk_distance
                        .get(l * arch.heads + hd)
                        .copied()
                        .unwrap_or(f64::NAN),
                )
            });
            vec![Heatmap {
                title: format!(
                    "{}, {} twin, step {}",
                    arm_title(preset.runs[run].name()),
                    twin.label(),
                    rec.step
                ),
                values,
            }]
        })
        .unwrap_or_default();
    Figure {
        title: HEADS_TITLE.into(),
        body: Body::Heatmaps {
            maps,
            caption: "log10 scale: 0 = 1e-16, 1 = 1".into(),
            x_label: "head".into(),
            y_label: "layer".into(),
        },
    }
}

/// CSV rows into bytes (header first).
fn csv_bytes(header: &[&str], rows: Vec<Vec<String>>) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(header)?;
    for r in rows {
        w.write_record(r)?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// The distance figure's data: `rule,twin,step,logit_distance`, one row per twin and point.
///
/// # Errors
/// The CSV writer's (none in practice: it writes to memory).
pub fn distance_csv(
    preset: &AttentionPreset,
    models: &[ModelCurves],
) -> Result<Vec<u8>, csv::Error> {
    let mut rows = Vec::new();
    for m in models {
        let Some(kind) = m.twin else { continue };
        for [step, v] in &m.distance {
            rows.push(vec![
                preset.runs[m.run].name().to_string(),
                kind.name().to_string(),
                step.to_string(),
                csv_num(*v),
            ]);
        }
    }
    csv_bytes(&["rule", "twin", "step", "logit_distance"], rows)
}

/// The base models' curves: `rule,metric,step,value` with metrics `train_accuracy`,
/// `val_accuracy`, `train_loss` and `val_loss`.
///
/// # Errors
/// The CSV writer's (none in practice: it writes to memory).
pub fn curves_csv(preset: &AttentionPreset, models: &[ModelCurves]) -> Result<Vec<u8>, csv::Error> {
    let mut rows = Vec::new();
    for m in models.iter().filter(|m| m.twin.is_none()) {
        for (what, series) in [
            ("train_accuracy", &m.train_accuracy),
            ("val_accuracy", &m.val_accuracy),
            ("train_loss", &m.train_loss),
            ("val_loss", &m.val_loss),
        ] {
            for [step, v] in series {
                rows.push(vec![
                    preset.runs[m.run].name().to_string(),
                    what.to_string(),
                    step.to_string(),
                    csv_num(*v),
                ]);
            }
        }
    }
    csv_bytes(&["rule", "metric", "step", "value"], rows)
}

/// The per-head figure's data: `rule,twin,step,layer,head,qk_distance` (layers and heads from
/// 1) of run `run`'s `twin` in `latest`; the header alone before a record arrives.
///
/// # Errors
/// The CSV writer's (none in practice: it writes to memory).
pub fn heads_csv(
    preset: &AttentionPreset,
    run: usize,
    twin: TwinKind,
    latest: Option<&Record>,
) -> Result<Vec<u8>, csv::Error> {
    let heads = preset.arch().heads;
    let mut rows = Vec::new();
    if let Some(rec) = latest {
        for (i, v) in rec.qk_distance.iter().enumerate() {
            rows.push(vec![
                preset.runs[run].name().to_string(),
                twin.name().to_string(),
                rec.step.to_string(),
                (i / heads + 1).to_string(),
                (i % heads + 1).to_string(),
                csv_num(*v),
            ]);
        }
    }
    csv_bytes(
        &["rule", "twin", "step", "layer", "head", "qk_distance"],
        rows,
    )
}

/// The checkpoint table: `rule,twin,step,logit_distance,paper` for every twin of `roles`
/// (`(run, twin)`, in order) at every step of `checkpoints`, ours from the records `kept`
/// (empty until one arrives), the paper's where [`paper_value`] has one.
///
/// # Errors
/// The CSV writer's (none in practice: it writes to memory).
pub fn table_csv(
    preset: &AttentionPreset,
    roles: &[(usize, Option<TwinKind>)],
    checkpoints: &[usize],
    kept: &[Record],
) -> Result<Vec<u8>, csv::Error> {
    let mut rows = Vec::new();
    for &(run, twin) in roles {
        let Some(kind) = twin else { continue };
        for &s in checkpoints {
            let ours = kept
                .iter()
                .find(|r| (r.run, r.twin, r.step) == (run, twin, s))
                .map(|r| r.logit_distance);
            rows.push(vec![
                preset.runs[run].name().to_string(),
                kind.name().to_string(),
                s.to_string(),
                ours.map_or(String::new(), csv_num),
                paper_value(preset, run, kind, s).map_or(String::new(), csv_num),
            ]);
        }
    }
    csv_bytes(&["rule", "twin", "step", "logit_distance", "paper"], rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::Stats;
    use crate::figure::Shape;

    const PRESET: &str = r#"(
        name: "t",
        task: (modulus: 7, train_fraction: 0.5),
        model: (layers: 1, heads: 2, d_model: 8, d_mlp: 16, norm_eps: 1e-6),
        steps: 10,
        runs: [(rule: (optimizer: "adam", lr: 1e-3), twins: [Gauge, Identity])],
    )"#;

    fn models() -> Vec<ModelCurves> {
        let base = ModelCurves {
            run: 0,
            twin: None,
            train_accuracy: vec![[0.0, 0.1], [5.0, 0.5]],
            val_accuracy: vec![[0.0, 0.2], [5.0, 0.4]],
            train_loss: vec![[0.0, 2.0]],
            val_loss: vec![[0.0, 2.5]],
            ..ModelCurves::default()
        };
        let gauge = ModelCurves {
            run: 0,
            twin: Some(TwinKind::Gauge),
            distance: vec![[0.0, 1e-7], [5.0, 3e-3]],
            ..ModelCurves::default()
        };
        let identity = ModelCurves {
            run: 0,
            twin: Some(TwinKind::Identity),
            distance: vec![[0.0, 0.0]],
            ..ModelCurves::default()
        };
        vec![base, gauge, identity]
    }

    #[test]
    fn distance_figure_draws_every_twin_with_zeros_at_the_floor() {
        let p = AttentionPreset::from_ron(PRESET, "t").unwrap();
        let f = distance_figure(&p, &models());
        let Body::Plot { y, marks, .. } = &f.body else {
            panic!("a plot")
        };
        assert!(y.log);
        assert_eq!(y.label, "relative logit distance");
        assert_eq!(marks.len(), 2);
        assert_eq!(marks[0].name, "Adam, gauge twin");
        assert_eq!(marks[1].name, "Adam, A = I twin");
        let Shape::Line { points, dash, .. } = &marks[1].shape else {
            panic!("a line")
        };
        assert_eq!(points, &vec![[0.0, LOG_FLOOR]]);
        assert_eq!(*dash, Dash::Dashed);
    }

    #[test]
    fn curves_figure_and_tables_read_the_base_models() {
        let p = AttentionPreset::from_ron(PRESET, "t").unwrap();
        let f = curves_figure(&p, &models(), Curves::Accuracy);
        assert_eq!(f.title, "Base models' accuracy");
        assert_eq!(
            crate::figure::names(&f),
            ["Adam, training", "Adam, validation"]
        );
        let Body::Plot { y, marks, .. } = &f.body else {
            panic!("a plot")
        };
        assert_eq!(y.include, [0.0, 1.0]);
        assert!(matches!(&marks[1].shape, Shape::Line { points, .. } if points[1] == [5.0, 0.4]));
        let csv = String::from_utf8(curves_csv(&p, &models()).unwrap()).unwrap();
        assert_eq!(csv.lines().count(), 1 + 6);
        assert!(csv.contains("adam,val_accuracy,5,0.4\n"));
        let csv = String::from_utf8(distance_csv(&p, &models()).unwrap()).unwrap();
        assert_eq!(
            csv,
            "rule,twin,step,logit_distance\nadam,gauge,0,1e-7\nadam,gauge,5,0.003\nadam,identity,0,0\n"
        );
    }

    /// Issue 38 item 4: the attention figures fit at every print size, for one point, for a
    /// range of hundreds of decades and for several rules with every kind of twin.
    #[test]
    fn attention_figures_fit_at_every_size() {
        use crate::figure::check::assert_fits;
        let p = AttentionPreset::from_ron(PRESET, "t").unwrap();
        let one = models();
        let mut many = AttentionPreset::from_ron(PRESET, "t").unwrap();
        let mut curves = Vec::new();
        for (run, rule) in ["adam", "scalar_adam", "muon", "shampoo"]
            .iter()
            .enumerate()
        {
            if run > 0 {
                let mut r = many.runs[0].clone();
                r.rule.optimizer = (*rule).into();
                many.runs.push(r);
            }
            for twin in [
                None,
                Some(TwinKind::Gauge),
                Some(TwinKind::Noise),
                Some(TwinKind::Identity),
            ] {
                let wild: Vec<[f64; 2]> = (0..50)
                    .map(|t| [t as f64 * 1e4, 10f64.powi(-300 + 12 * t)])
                    .collect();
                curves.push(ModelCurves {
                    run,
                    twin,
                    distance: if twin.is_some() {
                        wild.clone()
                    } else {
                        Vec::new()
                    },
                    train_accuracy: vec![[0.0, 0.01], [5e5, 1.0]],
                    val_accuracy: vec![[0.0, 0.0], [5e5, 0.99]],
                    train_loss: wild.clone(),
                    val_loss: wild,
                });
            }
        }
        for (preset, m) in [(&p, &one), (&many, &curves)] {
            assert_fits(&distance_figure(preset, m), "distance");
            assert_fits(&curves_figure(preset, m, Curves::Accuracy), "accuracy");
            assert_fits(&curves_figure(preset, m, Curves::Loss), "loss");
        }
    }

    #[test]
    fn heads_figure_and_tables_read_the_latest_record() {
        let p = AttentionPreset::from_ron(PRESET, "t").unwrap();
        let rec = Record {
            seed: 0,
            step: 4,
            run: 0,
            twin: Some(TwinKind::Gauge),
            logit_distance: 0.5,
            qk_distance: vec![1.0, 1e-8],
            train: Stats {
                loss: 1.0,
                accuracy: 0.5,
            },
            val: Stats {
                loss: 1.0,
                accuracy: 0.5,
            },
        };
        let f = heads_figure(&p, 0, TwinKind::Gauge, Some(&rec));
        crate::figure::check::assert_fits(&f, "heads");
        let Body::Heatmaps { maps, .. } = &f.body else {
            panic!("heatmaps")
        };
        assert_eq!(maps[0].values.shape(), (1, 2));
        assert_eq!(maps[0].values[(0, 0)], 1.0);
        assert!((maps[0].values[(0, 1)] - 0.5).abs() < 1e-12);
        assert!(maps[0].title.starts_with("Adam, gauge twin, step 4"));
        let csv =
            String::from_utf8(heads_csv(&p, 0, TwinKind::Gauge, Some(&rec)).unwrap()).unwrap();
        assert!(csv.ends_with("adam,gauge,4,1,2,1e-8\n"), "{csv}");
        let roles = [(0, None), (0, Some(TwinKind::Gauge))];
        let csv = String::from_utf8(table_csv(&p, &roles, &[0, 4], &[rec]).unwrap()).unwrap();
        assert_eq!(
            csv,
            "rule,twin,step,logit_distance,paper\nadam,gauge,0,,\nadam,gauge,4,0.5,\n"
        );
    }
}
