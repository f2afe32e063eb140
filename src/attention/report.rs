//! The files `basis-lab attention` writes: `attention.csv` (one row per model and measured
//! step), `attention.md` (the paper's Table 3 layout beside its values) and `trace.json` (the
//! first seed's split, weights and metrics, for replay outside the program; schema in
//! docs/attention.md).

use std::io::{self, Write};
use std::path::Path;

use nalgebra::DMatrix;
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};

use super::data::SEQ_LEN;
use super::model::{Params, Stats};
use super::preset::{AttentionPreset, TwinKind};
use super::twins::{AttentionResult, Record, SeedResult};
use crate::output::{Committed, OutputSet, csv_num};

/// The paper's Table 3 (float32 CPU): rule (registry name), its rate, twin kind, and the relative
/// logit distance at steps 0, 1, 100 and 1500 ([`PAPER_STEPS`]).
pub const PAPER_TABLE3: &[(&str, f64, TwinKind, [f64; 4])] = &[
    (
        "adam",
        1e-3,
        TwinKind::Gauge,
        [1.8e-7, 3.6e-3, 6.5e-1, 7.7e-1],
    ),
    ("adam", 1e-3, TwinKind::Identity, [0.0, 0.0, 0.0, 0.0]),
    (
        "adam",
        1e-3,
        TwinKind::Noise,
        [2.6e-7, 2.9e-7, 1.7e-5, 1.6e-5],
    ),
    (
        "momentum",
        0.5,
        TwinKind::Gauge,
        [1.8e-7, 2.9e-7, 3.7e-5, 2.0e-5],
    ),
    (
        "scalar_adam",
        3e-3,
        TwinKind::Gauge,
        [1.8e-7, 1.6e-7, 4.1e-6, 4.3e-6],
    ),
    (
        "muon",
        0.02,
        TwinKind::Gauge,
        [1.8e-7, 2.2e-7, 2.3e-2, 8.5e-1],
    ),
    (
        "muon",
        0.02,
        TwinKind::Noise,
        [2.6e-7, 2.9e-7, 4.0e-2, 8.7e-1],
    ),
];

/// The steps at which the paper reads its Table 3.
pub const PAPER_STEPS: [usize; 4] = [0, 1, 100, 1500];

/// The paper's value for run `run` of `preset` and `kind` at `step`, if it reports one (same
/// rule, rate and step, on the paper's task and model).
pub fn paper_value(
    preset: &AttentionPreset,
    run: usize,
    kind: TwinKind,
    step: usize,
) -> Option<f64> {
    let spec = &preset.runs[run].rule;
    let default = AttentionPreset::default();
    let paper_setting = preset.task == default.task
        && preset.model == default.model
        && preset.noise_std == default.noise_std;
    let col = PAPER_STEPS.iter().position(|&s| s == step)?;
    PAPER_TABLE3
        .iter()
        .find(|(name, lr, k, _)| *name == spec.optimizer && *lr == spec.lr && *k == kind)
        .filter(|_| paper_setting)
        .map(|(.., values)| values[col])
}

/// The name of a record's model kind in outputs: `base` or the twin's name.
fn twin_name(twin: Option<TwinKind>) -> &'static str {
    twin.map_or("base", TwinKind::name)
}

/// `attention.csv`: one row per model and measured step of every seed, columns `seed, step,
/// rule, twin, logit_distance, qk_mean, qk_max, train_loss, train_accuracy, val_loss,
/// val_accuracy` (`twin` is `base` for the base model, whose distances are empty; empty also
/// for diverged models).
pub fn csv(result: &AttentionResult) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "seed",
        "step",
        "rule",
        "twin",
        "logit_distance",
        "qk_mean",
        "qk_max",
        "train_loss",
        "train_accuracy",
        "val_loss",
        "val_accuracy",
    ];
    w.write_record(header).expect("writing to memory");
    for s in &result.seeds {
        for r in &s.records {
            w.write_record([
                r.seed.to_string(),
                r.step.to_string(),
                result.preset.runs[r.run].name().to_string(),
                twin_name(r.twin).to_string(),
                csv_num(r.logit_distance),
                csv_num(r.qk_mean()),
                csv_num(r.qk_max()),
                csv_num(r.train.loss),
                csv_num(r.train.accuracy),
                csv_num(r.val.loss),
                csv_num(r.val.accuracy),
            ])
            .expect("writing to memory");
        }
    }
    w.into_inner().expect("writing to memory")
}

/// The checkpoints of the Table 3 layout: 0, 1, 100 and the last step, those within the run and
/// measured, without repeats.
pub fn checkpoints(preset: &AttentionPreset) -> Vec<usize> {
    let mut out: Vec<usize> = [0, 1, 100, preset.steps]
        .into_iter()
        .filter(|&s| s <= preset.steps && preset.is_measured(s))
        .collect();
    out.dedup();
    out
}

/// The values of `f` over seeds for run `run`, model kind `twin` at `step` (seeds without a
/// record there are skipped).
fn over_seeds(
    result: &AttentionResult,
    run: usize,
    twin: Option<TwinKind>,
    step: usize,
    f: impl Fn(&Record) -> f64,
) -> Vec<f64> {
    result
        .seeds
        .iter()
        .filter_map(|s| {
            s.records
                .iter()
                .find(|r| r.run == run && r.twin == twin && r.step == step)
        })
        .map(f)
        .collect()
}

/// `x` in short scientific notation, or `—` for NaN.
fn sci(x: f64) -> String {
    if x.is_nan() {
        "—".into()
    } else if x == 0.0 {
        "0".into()
    } else {
        format!("{x:.1e}")
    }
}

/// One value, or mean ± sd (sample standard deviation) of several; `—` for none.
fn mean_sd(values: &[f64], fmt: fn(f64) -> String) -> String {
    match values.len() {
        0 => "—".into(),
        1 => fmt(values[0]),
        n => {
            let mean = values.iter().sum::<f64>() / n as f64;
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            format!("{} ± {}", fmt(mean), fmt(var.sqrt()))
        }
    }
}

fn fixed3(x: f64) -> String {
    if x.is_nan() {
        "—".into()
    } else {
        format!("{x:.3}")
    }
}

/// `attention.md`: the Table 3 layout (relative logit distance per run and twin at steps 0, 1,
/// 100 and the last, with the paper's value beside ours where it reports one), then per model
/// the final query–key form distance and losses and accuracies.
pub fn markdown(result: &AttentionResult) -> String {
    let p = &result.preset;
    let seeds = result.seeds.len();
    let mut md = String::new();
    let mut line = |s: String| {
        md.push_str(&s);
        md.push('\n');
    };
    line(format!("# Attention twins: {}", p.name));
    line(String::new());
    let arch = p.arch();
    line(format!(
        "Addition mod {} ({} training / {} validation pairs), {} layer{}, {} heads, d_model {}, \
         MLP {}, {:?} initialisation; {} steps; {} seed{} from {}; {} models per seed; {:.1} s.",
        p.task.modulus,
        p.task.train_count(),
        p.task.modulus * p.task.modulus - p.task.train_count(),
        arch.layers,
        if arch.layers == 1 { "" } else { "s" },
        arch.heads,
        arch.d_model,
        arch.d_mlp,
        p.init,
        p.steps,
        seeds,
        if seeds == 1 { "" } else { "s" },
        p.seed,
        p.models_per_seed(),
        result.seconds
    ));
    line(String::new());
    line(
        "Relative logit distance between base model and twin on the validation set, \
         ‖l₁ − l₂‖ / (½(‖l₁‖ + ‖l₂‖)); in brackets the paper's value (float32, so its floor is \
         about 2e-7), where it reports one."
            .into(),
    );
    if seeds > 1 {
        line("Mean ± sd over seeds.".into());
    }
    line(String::new());
    let steps = checkpoints(p);
    let mut header = "| rule | twin |".to_string();
    let mut rule = "|---|---|".to_string();
    for &s in &steps {
        header.push_str(&format!(
            " step {s}{} |",
            if s == p.steps { " (final)" } else { "" }
        ));
        rule.push_str("---|");
    }
    line(header);
    line(rule);
    for (i, run) in p.runs.iter().enumerate() {
        for &kind in &run.twins {
            let mut row = format!("| {} | {} |", run.name(), kind.label());
            for &s in &steps {
                let ours = mean_sd(
                    &over_seeds(result, i, Some(kind), s, |r| r.logit_distance),
                    sci,
                );
                match paper_value(p, i, kind, s) {
                    Some(v) => row.push_str(&format!(" {ours} ({}) |", sci(v))),
                    None => row.push_str(&format!(" {ours} |")),
                }
            }
            line(row);
        }
    }
    line(String::new());
    line(format!(
        "At step {}: per model, the query–key form distance between twin and base model \
         (mean and max over the {} heads), and loss and accuracy.",
        p.steps,
        arch.layers * arch.heads
    ));
    line(String::new());
    line(
        "| rule | model | QK mean | QK max | train loss | train acc | val loss | val acc |".into(),
    );
    line("|---|---|---|---|---|---|---|---|".into());
    for (i, run) in p.runs.iter().enumerate() {
        let kinds = std::iter::once(None).chain(run.twins.iter().copied().map(Some));
        for twin in kinds {
            let get = |f: fn(&Record) -> f64| over_seeds(result, i, twin, p.steps, f);
            let (qk_mean, qk_max) = if twin.is_some() {
                (
                    mean_sd(&get(Record::qk_mean), sci),
                    mean_sd(&get(Record::qk_max), sci),
                )
            } else {
                ("".into(), "".into())
            };
            line(format!(
                "| {} | {} | {qk_mean} | {qk_max} | {} | {} | {} | {} |",
                run.name(),
                twin.map_or("base", TwinKind::label),
                mean_sd(&get(|r| r.train.loss), fixed3),
                mean_sd(&get(|r| r.train.accuracy), fixed3),
                mean_sd(&get(|r| r.val.loss), fixed3),
                mean_sd(&get(|r| r.val.accuracy), fixed3),
            ));
        }
    }
    let diverged: Vec<String> = result
        .seeds
        .iter()
        .flat_map(|s| {
            s.models.iter().filter_map(move |m| {
                m.diverged_at.map(|at| {
                    format!(
                        "{} {} (seed {}) diverged at step {at}",
                        p.runs[m.run].name(),
                        twin_name(m.twin),
                        s.seed
                    )
                })
            })
        })
        .collect();
    if !diverged.is_empty() {
        line(String::new());
        line(format!("Diverged: {}.", diverged.join("; ")));
    }
    md
}

/// A matrix serialised as a list of its rows.
struct RowMajor<'a>(&'a DMatrix<f64>);

impl Serialize for RowMajor<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = self.0;
        let mut seq = s.serialize_seq(Some(m.nrows()))?;
        for i in 0..m.nrows() {
            let row: Vec<f64> = m.row(i).iter().copied().collect();
            seq.serialize_element(&row)?;
        }
        seq.end()
    }
}

/// Every matrix of a parameter set, by name, as rows.
struct Named<'a>(&'a Params);

impl Serialize for Named<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let params = self.0.arch.params();
        let mut map = s.serialize_map(Some(params.len()))?;
        for (p, m) in params.into_iter().zip(&self.0.mats) {
            map.serialize_entry(&p.name(), &RowMajor(m))?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct TraceArch {
    vocab: usize,
    classes: usize,
    seq_len: usize,
    layers: usize,
    heads: usize,
    head_dim: usize,
    d_model: usize,
    d_mlp: usize,
    norm_eps: f64,
}

#[derive(Serialize)]
struct TraceModel<'a> {
    rule: &'a str,
    twin: &'static str,
    initial_w_q: Vec<RowMajor<'a>>,
    initial_w_k: Vec<RowMajor<'a>>,
    #[serde(rename = "final")]
    final_params: Named<'a>,
    diverged_at: Option<usize>,
}

#[derive(Serialize)]
struct TraceMetric<'a> {
    step: usize,
    rule: &'a str,
    twin: &'static str,
    logit_distance: f64,
    qk_distance: &'a [f64],
    train: Stats,
    val: Stats,
}

#[derive(Serialize)]
struct Trace<'a> {
    schema: &'static str,
    preset: &'a AttentionPreset,
    arch: TraceArch,
    seed: u64,
    train_pairs: &'a [(u32, u32)],
    val_pairs: &'a [(u32, u32)],
    initial: Named<'a>,
    rotations: Vec<RowMajor<'a>>,
    models: Vec<TraceModel<'a>>,
    metrics: Vec<TraceMetric<'a>>,
}

/// The `schema` value of `trace.json`.
pub const TRACE_SCHEMA: &str = "basis-lab attention trace 1";

/// Writes `trace.json` for `seed` of `result` to `w`: one JSON object, matrices as lists of
/// rows, every number written so that it reads back to the same f64 (NaN as null). The layout
/// is documented in docs/attention.md.
pub fn write_trace(result: &AttentionResult, seed: &SeedResult, w: impl Write) -> io::Result<()> {
    let p = &result.preset;
    let arch = p.arch();
    let name = |run: usize| p.runs[run].name();
    let trace = Trace {
        schema: TRACE_SCHEMA,
        preset: p,
        arch: TraceArch {
            vocab: arch.vocab,
            classes: arch.classes,
            seq_len: SEQ_LEN,
            layers: arch.layers,
            heads: arch.heads,
            head_dim: arch.head_dim(),
            d_model: arch.d_model,
            d_mlp: arch.d_mlp,
            norm_eps: arch.norm_eps,
        },
        seed: seed.seed,
        train_pairs: &seed.split.train.pairs,
        val_pairs: &seed.split.val.pairs,
        initial: Named(&seed.initial),
        rotations: seed.rotations.iter().map(RowMajor).collect(),
        models: seed
            .models
            .iter()
            .map(|m| TraceModel {
                rule: name(m.run),
                twin: twin_name(m.twin),
                initial_w_q: m.initial_qk.iter().map(|(q, _)| RowMajor(q)).collect(),
                initial_w_k: m.initial_qk.iter().map(|(_, k)| RowMajor(k)).collect(),
                final_params: Named(&m.final_params),
                diverged_at: m.diverged_at,
            })
            .collect(),
        metrics: seed
            .records
            .iter()
            .map(|r| TraceMetric {
                step: r.step,
                rule: name(r.run),
                twin: twin_name(r.twin),
                logit_distance: r.logit_distance,
                qk_distance: &r.qk_distance,
                train: r.train,
                val: r.val,
            })
            .collect(),
    };
    serde_json::to_writer(w, &trace).map_err(io::Error::other)
}

/// The files [`write_outputs`] writes (`trace.json` when there is a first seed).
pub const FILES: [&str; 3] = ["attention.csv", "attention.md", "trace.json"];

/// Writes `attention.csv`, `attention.md` and `trace.json` (the first seed) into `dir` as the
/// `attention` command's set ([`OutputSet`]: all complete before any replaces an older file);
/// returns the Markdown text and what was written and removed. Errors: a file (named) cannot be written.
pub fn write_outputs(result: &AttentionResult, dir: &Path) -> io::Result<(String, Committed)> {
    let mut set = OutputSet::new(dir, "attention");
    set.write(FILES[0], &csv(result))?;
    let md = markdown(result);
    set.write(FILES[1], md.as_bytes())?;
    if let Some(first) = result.seeds.first() {
        let mut f = set.create(FILES[2])?;
        write_trace(result, first, f.writer())?;
        set.stage(f)?;
    }
    Ok((md, set.commit()?))
}
