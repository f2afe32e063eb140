//! A whole paired run from a preset, written to a folder: `metrics.csv`, `summary.json` and
//! `trace.json` (numerics §3–§5). Used by `basis-lab run`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use nalgebra::DMatrix;
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

use super::activations::ActivationStats;
use super::figures::{self, LivePlot, RunView};
use super::paired::{ArmStatus, BASE, HeldOut, PairedRun, ROTATED, StepRecord};
use crate::experiment::live::{ArmLabel, Snapshot, Update};
use crate::history::RunHistory;
use crate::metrics::{RotationBaseline, isotropic_axis_concentration};
use crate::model::Episode;
use crate::optim::Hyper;
use crate::output::{Committed, OutputSet, csv_num};
use crate::preset::Preset;

/// Largest trace kept in memory, in episode pairs (steps × batch × k).
pub const MAX_TRACE_PAIRS: usize = 20_000_000;

/// The header of `metrics.csv`: one row per step per arm (numerics §3 step convention); the row at
/// s = steps is the final state, with empty loss. Held-out columns are filled every
/// `eval_every` steps and at the end, empty elsewhere; `noise_div` only with `noise_twins`; a
/// diverged arm has no rows after it diverged.
pub const METRICS_HEADER: [&str; 17] = [
    "step",
    "arm",
    "loss",
    "loss_rot",
    "orientation_div",
    "gram_div",
    "axis_concentration",
    "axis_concentration_rot",
    "mean_column_norm",
    "mean_column_norm_rot",
    "column_norm_sd",
    "column_norm_sd_rot",
    "heldout_loss",
    "heldout_accuracy",
    "heldout_loss_rot",
    "heldout_accuracy_rot",
    "noise_div",
];

/// The header of `activations.csv`: one row per arm at every `eval_every` steps and at the
/// end, measured on the run from W0 (see [`crate::experiment::activations`]). Each statistic
/// comes with the mean and sd of its random-rotation baseline.
pub const ACTIVATIONS_HEADER: [&str; 13] = [
    "step",
    "arm",
    "s_kurtosis",
    "s_kurtosis_baseline_mean",
    "s_kurtosis_baseline_sd",
    "s_axis_concentration",
    "s_axis_concentration_baseline_mean",
    "s_axis_concentration_baseline_sd",
    "read_kurtosis",
    "read_kurtosis_baseline_mean",
    "read_kurtosis_baseline_sd",
    "s_rows",
    "reads",
];

/// Final results of one arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArmSummary {
    /// Arm name (label or optimizer).
    pub arm: String,
    /// Registry name of the optimizer, or a chain's text.
    pub optimizer: String,
    /// Whether the optimizer is equivariant under W → QW.
    pub equivariant: bool,
    /// Running to the end, or diverged.
    pub status: ArmStatus,
    /// Training loss of both twins at the last step taken.
    pub last_train_loss: [f64; 2],
    /// Metrics of the final weights (after the last update); `None` if diverged.
    #[serde(rename = "final")]
    pub final_metrics: Option<StepRecord>,
    /// Held-out loss and accuracy of the final weights.
    pub heldout: Option<HeldOut>,
    /// Random-rotation baselines of both twins' final keys.
    pub baseline: Option<[RotationBaseline; 2]>,
    /// Axis structure of the final memory and reads (run from W0); absent in older files.
    #[serde(default)]
    pub activations: Option<ActivationStats>,
}

/// Contents of `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The preset that was run.
    pub preset: Preset,
    /// Updates applied.
    pub steps: usize,
    /// 3/(d_k + 2), the mean A of random directions.
    pub isotropic_axis_concentration: f64,
    /// One entry per arm, in preset order.
    pub arms: Vec<ArmSummary>,
}

/// What to write besides metrics and summary.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// Write `trace.json` (every episode, W0, Q, final weights and metrics).
    pub trace: bool,
    /// Also draw plots (a)–(d) of the live run as SVG, PNG and caption ([`super::figures`]),
    /// as these options say.
    pub figures: Option<crate::figure::FigureOptions>,
    /// Largest estimated output file, in bytes, a run may start ([`output_estimates`]).
    pub max_output_bytes: u64,
}

/// The default [`RunOptions::max_output_bytes`]: 2 GB, far above any preset the lab ships
/// (the full argument writes about 60 MB) and below what a laptop's disk notices.
pub const MAX_OUTPUT_BYTES: u64 = 2_000_000_000;

/// The figures `run --figures` draws, by file stem.
pub const RUN_FIGURES: [&str; 5] = [
    "orientation_divergence",
    "axis_concentration",
    "loss",
    "column_norms",
    "keys",
];

/// Bytes a column of `metrics.csv` and `activations.csv` takes in a row, on average: a number
/// is the shortest decimal that reads back (typically 16–22 characters), but the held-out
/// and noise-twin columns are empty on most rows (`run classroom` writes 212 bytes a row).
const CSV_NUMBER_BYTES: u64 = 14;

/// Estimated sizes, in bytes, of the files a run of `preset` with `opts` writes that grow with
/// its length: `metrics.csv` (a row per step and arm, plus the final rows), `activations.csv`
/// (a row per held-out evaluation and arm) and, with a trace, `trace.json` (about 13 bytes per
/// episode pair, plus the metrics again as JSON, 1.7 times their CSV). Typically within 20% of
/// what is written (`run default`: 1.69 MB and 5.17 MB written, 1.75 MB and 6.3 MB estimated).
pub fn output_estimates(preset: &Preset, opts: RunOptions) -> Vec<(&'static str, u64)> {
    let arms = preset.arms.len() as u64;
    let name = preset
        .arms
        .iter()
        .map(|a| a.arm_name().len() as u64)
        .max()
        .unwrap_or(0);
    let steps = preset.steps as u64;
    let digits = steps.max(1).ilog10() as u64 + 2;
    let row = |numbers: usize| name + digits + numbers as u64 * CSV_NUMBER_BYTES;
    let metrics = (steps + 1) * arms * row(METRICS_HEADER.len() - 2);
    let evaluations = steps / preset.eval_every.max(1) as u64 + 1;
    let activations = evaluations * arms * row(ACTIVATIONS_HEADER.len() - 2);
    let mut out = vec![("metrics.csv", metrics), ("activations.csv", activations)];
    if opts.trace {
        let pairs = steps * preset.batch as u64 * preset.pairs_per_episode as u64;
        out.push(("trace.json", pairs * 13 + metrics * 17 / 10));
    }
    out
}

/// Refuses a run whose estimated output ([`output_estimates`]) passes `opts.max_output_bytes`,
/// naming the file, its estimate and the limit.
pub fn check_output_size(preset: &Preset, opts: RunOptions) -> Result<()> {
    for (file, bytes) in output_estimates(preset, opts) {
        if bytes > opts.max_output_bytes {
            bail!(
                "{file} would be about {} for {} steps × {} arms, above the {} limit \
                 (nothing was run; raise it with --max-output-gb, or use fewer steps{})",
                human_bytes(bytes),
                preset.steps,
                preset.arms.len(),
                human_bytes(opts.max_output_bytes),
                if file == "trace.json" {
                    " or --no-trace"
                } else {
                    ""
                }
            );
        }
    }
    Ok(())
}

/// `bytes` as `1.2 GB`, `340 MB` or `12 kB` (powers of 1000, as disks are sold).
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.0} kB", (b / 1e3).max(1.0))
    }
}

/// Runs `preset` for its `steps` and writes the output files into `out` (created if missing)
/// as one set ([`OutputSet`]): nothing replaces an earlier run's files until every file is
/// complete, and an earlier run's trace or figures that this run does not write are removed.
/// `progress(s)` is called after each step. Returns the summary and what was written and
/// removed.
///
/// Errors: an invalid preset; a trace larger than [`MAX_TRACE_PAIRS`]; an output estimated
/// above `opts.max_output_bytes`; an unwritable folder or file, named (the earlier files stay
/// as they were; none is ever half-written).
pub fn run_to_dir(
    preset: &Preset,
    out: &Path,
    opts: RunOptions,
    progress: &dyn Fn(usize),
) -> Result<(Summary, Committed)> {
    preset.validate()?;
    let pairs = preset
        .steps
        .saturating_mul(preset.batch)
        .saturating_mul(preset.pairs_per_episode);
    if opts.trace && pairs > MAX_TRACE_PAIRS {
        bail!(
            "a trace of {} steps × {} episodes × {} pairs = {pairs} pairs exceeds {MAX_TRACE_PAIRS}; \
             run with --no-trace or fewer steps",
            preset.steps,
            preset.batch,
            preset.pairs_per_episode
        );
    }
    crate::output::ensure_writable_dir(out).with_context(|| {
        format!(
            "cannot write to {} (nothing was run; choose another --out)",
            out.display()
        )
    })?;
    check_output_size(preset, opts)?;
    crate::output::check_set(
        out,
        "run",
        &[
            "metrics.csv",
            "activations.csv",
            "summary.json",
            "trace.json",
        ],
    )
    .map_err(|e| anyhow::anyhow!("{e} (nothing was run)"))?;
    let mut set = OutputSet::new(out, "run");
    let mut csv_file = set.create("metrics.csv")?;
    let mut act_file = set.create("activations.csv")?;
    let Ran {
        run,
        finals,
        names,
        summary,
        trace,
        history,
    } = run_core(preset, opts, csv_file.writer(), act_file.writer(), progress)?;
    set.stage(csv_file)?;
    set.stage(act_file)?;
    let mut summary_file = set.create("summary.json")?;
    serde_json::to_writer_pretty(summary_file.writer(), &summary)?;
    set.stage(summary_file)?;
    if let Some(mut t) = trace {
        t.finish(&run, &finals, &names);
        let mut f = set.create("trace.json")?;
        serde_json::to_writer(f.writer(), &t.as_json(preset, &run, &names))?;
        f.writer().write_all(b"\n")?;
        set.stage(f)?;
    }
    if let (Some(history), Some(look)) = (history, opts.figures) {
        crate::figure::write_all(&mut set, &run_figures(&history, preset.d_k), &look)?;
    }
    let done = set.commit()?;
    Ok((summary, done))
}

/// A finished run and what [`run_core`] collected on the way.
struct Ran {
    run: PairedRun,
    finals: Vec<StepRecord>,
    names: Vec<String>,
    summary: Summary,
    trace: Option<TraceLog>,
    /// What the app would hold of the run, when its figures are asked for.
    history: Option<RunHistory>,
}

/// The figures `run --figures` writes ([`RUN_FIGURES`], in order) from `history`: the app's
/// live plots at the tab's default view ([`figures::run_figure`]), plot (c) in both its views.
fn run_figures(history: &RunHistory, d_k: usize) -> Vec<(String, crate::figure::Figure)> {
    let view = RunView::default();
    let norms = RunView {
        show_norms: true,
        ..view
    };
    [
        (Some(LivePlot::Orientation), view),
        (Some(LivePlot::Axis), view),
        (Some(LivePlot::Loss), view),
        (Some(LivePlot::Loss), norms),
        (None, view),
    ]
    .into_iter()
    .map(|(plot, v)| {
        let (stem, figure) = figures::run_figure(history, plot, v, d_k);
        (stem.to_string(), figure)
    })
    .collect()
}

/// The history `run --figures` draws its figures from, made in memory (the tables go
/// nowhere): what the app's history holds after the same run when it snapshots at every
/// held-out evaluation and at the end.
///
/// # Errors
/// An invalid preset.
pub fn run_history(preset: &Preset) -> Result<RunHistory> {
    preset.validate()?;
    let opts = RunOptions {
        trace: false,
        figures: Some(crate::figure::FigureOptions::new(
            crate::figure::FigureSize::Single,
        )),
        max_output_bytes: MAX_OUTPUT_BYTES,
    };
    let ran = run_core(preset, opts, std::io::sink(), std::io::sink(), &|_| {})?;
    Ok(ran.history.expect("kept when figures are asked for"))
}

/// Runs `preset` to its end, writing `metrics.csv` into `metrics` and `activations.csv` into
/// `activations` (headers included), keeping the trace and the curves if `opts` asks for them.
fn run_core(
    preset: &Preset,
    opts: RunOptions,
    metrics: impl Write,
    activations: impl Write,
    progress: &dyn Fn(usize),
) -> Result<Ran> {
    let mut run = PairedRun::new(preset)?;
    let names: Vec<String> = run.arms().iter().map(|a| a.name().to_string()).collect();
    let mut csv = csv::Writer::from_writer(metrics);
    csv.write_record(METRICS_HEADER)?;
    let mut act_csv = csv::Writer::from_writer(activations);
    act_csv.write_record(ACTIVATIONS_HEADER)?;
    let mut trace = opts.trace.then(|| TraceLog::new(&run));
    let mut last_loss = vec![[f64::NAN; 2]; names.len()];
    // The app's history of the run, fed the updates its worker would send, snapshotting at
    // every held-out evaluation (the app snapshots on a timer).
    let mut history = opts.figures.is_some().then(|| {
        let mut h = RunHistory::default();
        h.apply(Update::Started {
            preset: Box::new(preset.clone()),
            arms: ArmLabel::of(&run),
        });
        h
    });
    for s in 0..preset.steps {
        let heldout = (s % preset.eval_every == 0).then(|| run.evaluate_heldout());
        if let Some(values) = &heldout {
            write_activations(&mut act_csv, s, &names, &run.activations())?;
            if let Some(h) = history.as_mut() {
                h.apply(Update::HeldOut {
                    step: s,
                    values: values.clone(),
                });
                h.apply(Update::Snapshot(Box::new(Snapshot::of(&mut run))));
            }
        }
        run.step();
        let records = run.last_records();
        for r in records {
            write_row(
                &mut csv,
                &names[r.arm],
                r,
                heldout.as_ref().and_then(|h| h[r.arm]),
            )?;
            last_loss[r.arm] = r.loss;
        }
        if let Some(h) = history.as_mut() {
            h.apply(Update::Steps(records.to_vec()));
        }
        if let Some(t) = trace.as_mut() {
            t.push_step(run.last_batch(), records, &names);
        }
        progress(s + 1);
    }
    let finals = run.snapshot();
    let heldout = run.evaluate_heldout();
    for r in &finals {
        write_row(&mut csv, &names[r.arm], r, heldout[r.arm])?;
    }
    if let Some(h) = history.as_mut() {
        let step = run.step_index();
        h.apply(Update::HeldOut {
            step,
            values: heldout.clone(),
        });
        h.apply(Update::Snapshot(Box::new(Snapshot::of(&mut run))));
        h.apply(Update::Status {
            step,
            running: false,
            steps_per_sec: 0.0,
            arms: run.arms().iter().map(|a| a.status().clone()).collect(),
        });
    }
    csv.flush()?;
    drop(csv);
    let activations = run.activations();
    write_activations(&mut act_csv, run.step_index(), &names, &activations)?;
    act_csv.flush()?;
    drop(act_csv);
    let baselines = run.baselines();
    let summary = Summary {
        preset: preset.clone(),
        steps: run.step_index(),
        isotropic_axis_concentration: isotropic_axis_concentration(preset.d_k),
        arms: run
            .arms()
            .iter()
            .enumerate()
            .map(|(i, arm)| {
                let running = *arm.status() == ArmStatus::Running;
                ArmSummary {
                    arm: names[i].clone(),
                    // A chain is named by its text, a registered rule by its name.
                    optimizer: if arm.info().class == crate::optim::Class::Chain {
                        preset.arms[i].optimizer.clone()
                    } else {
                        arm.info().name.into()
                    },
                    equivariant: arm.equivariant(),
                    status: arm.status().clone(),
                    last_train_loss: last_loss[i],
                    final_metrics: finals.iter().find(|r| r.arm == i && running).copied(),
                    heldout: heldout[i],
                    baseline: baselines[i].clone(),
                    activations: activations[i].clone(),
                }
            })
            .collect(),
    };
    Ok(Ran {
        run,
        finals,
        names,
        summary,
        trace,
        history,
    })
}

/// What [`run_to_dir`] writes as `metrics.csv`, `activations.csv` and `summary.json`, byte for
/// byte, made in memory (no trace, no figures). The web build's numerics check compares it
/// with the desktop's files.
///
/// # Errors
/// An invalid preset.
pub fn run_tables(preset: &Preset) -> Result<[String; 3]> {
    preset.validate()?;
    let (mut metrics, mut activations) = (Vec::new(), Vec::new());
    let opts = RunOptions {
        trace: false,
        figures: None,
        max_output_bytes: MAX_OUTPUT_BYTES,
    };
    let ran = run_core(preset, opts, &mut metrics, &mut activations, &|_| {})?;
    let summary = serde_json::to_string_pretty(&ran.summary)?;
    let text = |b: Vec<u8>| String::from_utf8(b).expect("CSV of numbers and names is UTF-8");
    Ok([text(metrics), text(activations), summary])
}

fn write_row<W: Write>(
    csv: &mut csv::Writer<W>,
    name: &str,
    r: &StepRecord,
    h: Option<HeldOut>,
) -> Result<()> {
    let hv = |f: fn(&HeldOut) -> f64| h.as_ref().map_or(String::new(), |h| csv_num(f(h)));
    csv.write_record([
        r.step.to_string(),
        name.to_string(),
        csv_num(r.loss[BASE]),
        csv_num(r.loss[ROTATED]),
        csv_num(r.orientation_div),
        csv_num(r.gram_div),
        csv_num(r.axis_concentration[BASE]),
        csv_num(r.axis_concentration[ROTATED]),
        csv_num(r.mean_column_norm[BASE]),
        csv_num(r.mean_column_norm[ROTATED]),
        csv_num(r.column_norm_sd[BASE]),
        csv_num(r.column_norm_sd[ROTATED]),
        hv(|h| h.loss[BASE]),
        hv(|h| h.accuracy[BASE]),
        hv(|h| h.loss[ROTATED]),
        hv(|h| h.accuracy[ROTATED]),
        csv_num(r.noise_div),
    ])?;
    Ok(())
}

fn write_activations<W: Write>(
    csv: &mut csv::Writer<W>,
    step: usize,
    names: &[String],
    stats: &[Option<ActivationStats>],
) -> Result<()> {
    for (name, a) in names.iter().zip(stats) {
        let Some(a) = a else { continue };
        let mut row = vec![step.to_string(), name.clone()];
        for b in [&a.s_kurtosis, &a.s_axis, &a.read_kurtosis] {
            row.extend([csv_num(b.value), csv_num(b.mean), csv_num(b.sd)]);
        }
        row.extend([a.s_rows.to_string(), a.reads.to_string()]);
        csv.write_record(row)?;
    }
    Ok(())
}

/// One record of the trace's `metrics` list (numerics §5): pair metrics repeated for both twins,
/// each with its own loss and A.
#[derive(Clone, Debug, Serialize)]
struct TraceMetric {
    step: usize,
    arm: String,
    loss: Option<f64>,
    orientation_div: f64,
    gram_div: f64,
    axis_concentration: f64,
}

/// Everything a trace needs that the run does not keep.
struct TraceLog {
    episodes: Vec<Vec<Episode>>,
    metrics: Vec<TraceMetric>,
    finals: BTreeMap<String, DMatrix<f64>>,
}

impl TraceLog {
    fn new(run: &PairedRun) -> Self {
        Self {
            episodes: Vec::with_capacity(run.preset().steps),
            metrics: Vec::new(),
            finals: BTreeMap::new(),
        }
    }

    fn push_step(&mut self, batch: &[Episode], records: &[StepRecord], names: &[String]) {
        self.episodes.push(batch.to_vec());
        self.push_metrics(records, names);
    }

    fn push_metrics(&mut self, records: &[StepRecord], names: &[String]) {
        for r in records {
            for t in [BASE, ROTATED] {
                let arm = if t == BASE {
                    names[r.arm].clone()
                } else {
                    format!("{}_rot", names[r.arm])
                };
                self.metrics.push(TraceMetric {
                    step: r.step,
                    arm,
                    loss: r.loss[t].is_finite().then_some(r.loss[t]),
                    orientation_div: r.orientation_div,
                    gram_div: r.gram_div,
                    axis_concentration: r.axis_concentration[t],
                });
            }
        }
    }

    fn finish(&mut self, run: &PairedRun, finals: &[StepRecord], names: &[String]) {
        self.push_metrics(finals, names);
        for (i, arm) in run.arms().iter().enumerate() {
            self.finals
                .insert(names[i].clone(), arm.weights(BASE).clone());
            self.finals
                .insert(format!("{}_rot", names[i]), arm.weights(ROTATED).clone());
        }
    }

    fn as_json<'a>(
        &'a self,
        preset: &Preset,
        run: &'a PairedRun,
        names: &[String],
    ) -> TraceJson<'a> {
        let optimizers = preset
            .arms
            .iter()
            .zip(names)
            .map(|(spec, name)| {
                let info = spec.info().expect("validated");
                let mut hp = serde_json::Map::new();
                hp.insert("optimizer".into(), spec.optimizer.clone().into());
                hp.insert("lr".into(), spec.lr.into());
                for &h in info.hypers {
                    let value = match spec.value(h) {
                        Some(x) => x.into(),
                        None if h == Hyper::Polar => format!("{:?}", spec.polar).into(),
                        None => serde_json::Value::Null,
                    };
                    hp.insert(h.name().into(), value);
                }
                (name.clone(), serde_json::Value::Object(hp))
            })
            .collect();
        let status = run
            .arms()
            .iter()
            .zip(names)
            .map(|(a, n)| (n.clone(), a.status().clone()))
            .collect();
        TraceJson {
            config: TraceConfig {
                d_k: preset.d_k,
                n_keys: preset.n_keys,
                n_values: preset.n_values,
                pairs_per_episode: preset.pairs_per_episode,
                batch: preset.batch,
                beta: preset.beta,
                gain: preset.gain,
                steps: preset.steps,
                seed: preset.seed,
                init_std: preset.init_std(),
                optimizers,
            },
            w0: Rows(run.w0()),
            q: Rows(run.q()),
            w0_rot: Rows(run.w0_rot()),
            status,
            episodes: &self.episodes,
            final_weights: self
                .finals
                .iter()
                .map(|(k, v)| (k.as_str(), Rows(v)))
                .collect(),
            metrics: &self.metrics,
        }
    }
}

#[derive(Serialize)]
struct TraceConfig {
    d_k: usize,
    n_keys: usize,
    n_values: usize,
    pairs_per_episode: usize,
    batch: usize,
    beta: f64,
    gain: f64,
    steps: usize,
    seed: u64,
    init_std: f64,
    optimizers: serde_json::Map<String, serde_json::Value>,
}

#[derive(Serialize)]
struct TraceJson<'a> {
    config: TraceConfig,
    w0: Rows<'a>,
    q: Rows<'a>,
    /// Q·W0 exactly as the rotated twins started (a product recomputed elsewhere may round
    /// differently).
    w0_rot: Rows<'a>,
    /// Per arm: "Running", or {"Diverged": {step, reason}} (diverged arms have no `final`).
    status: BTreeMap<String, ArmStatus>,
    episodes: &'a [Vec<Episode>],
    #[serde(rename = "final")]
    final_weights: BTreeMap<&'a str, Rows<'a>>,
    metrics: &'a [TraceMetric],
}

/// A matrix serialised as row-major nested lists.
struct Rows<'a>(&'a DMatrix<f64>);

impl Serialize for Rows<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.nrows()))?;
        for row in self.0.row_iter() {
            seq.serialize_element(&row.iter().copied().collect::<Vec<f64>>())?;
        }
        seq.end()
    }
}
