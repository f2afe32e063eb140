//! The key lab's tables: the CSV and JSON files of `sweep`, `eps-sweep`, `dk-sweep` and
//! `matched`, and the text tables the command line prints. One function per table, so a file
//! written by the app and one written by the command line are the same bytes.

use anyhow::Result;

use super::matched::MatchedReport;
use super::points::{Point, PointAxis};
use super::run::Summary;
use super::sweep::SweepResult;
use crate::figure::Figure;
use crate::metrics::StatBaseline;
use crate::optim::class_word;
use crate::output::{OutputSet, csv_num as num};

/// `x` as `1.23e-4`, or a dash for NaN.
pub fn sci(x: f64) -> String {
    if x.is_nan() {
        "—".into()
    } else {
        format!("{x:.2e}")
    }
}

/// `z` for a table: two decimals, or a dash when the baseline has no spread.
fn z_text(z: f64) -> String {
    if z.is_finite() {
        format!("{z:.2}")
    } else {
        "—".into()
    }
}

/// Width of the arm column: the longest arm name, at least 12.
fn arm_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.map(|n| n.chars().count()).max().unwrap_or(3).max(12)
}

/// The text table `basis-lab run` prints for a finished run: one row per arm with its twin
/// divergences, A(K) against its rotation baseline and held-out accuracy and loss; the noise
/// twins; the memory and reads against their baselines; and a note for every equivariant arm
/// whose twins drifted past 1e-10.
pub fn summary_text(s: &Summary) -> String {
    let mut out = String::new();
    let mut line = |l: String| {
        out.push_str(&l);
        out.push('\n');
    };
    line(format!(
        "{} steps, d_k {}, {} keys; isotropic A = 3/(d_k+2) = {:.4}",
        s.steps, s.preset.d_k, s.preset.n_keys, s.isotropic_axis_concentration
    ));
    let w = arm_width(s.arms.iter().map(|a| a.arm.as_str()));
    line(format!(
        "{:<w$} {:<15} {:>10} {:>10} {:>8} {:>17} {:>10} {:>7} {:>9} {:>9}",
        "arm",
        "class",
        "twin div",
        "gram div",
        "A(K)",
        "baseline mean±sd",
        "excess",
        "z",
        "held acc",
        "held loss"
    ));
    for a in &s.arms {
        let class = class_word(crate::optim::lookup(&a.optimizer).is_none(), a.equivariant);
        match (&a.final_metrics, &a.heldout, &a.baseline) {
            (Some(f), Some(h), Some(b)) => line(format!(
                "{:<w$} {:<15} {:>10} {:>10} {:>8.4} {:>8.4} ± {:<6.4} {:>10} {:>7} {:>9.3} {:>9.4}",
                a.arm,
                class,
                sci(f.orientation_div),
                sci(f.gram_div),
                f.axis_concentration[0],
                b[0].mean,
                b[0].sd,
                sci(b[0].excess),
                z_text(b[0].z),
                h.accuracy[0],
                h.loss[0]
            )),
            _ => line(format!("{:<w$} {:<15} {}", a.arm, class, a.status)),
        }
    }
    let noise: Vec<String> = s
        .arms
        .iter()
        .filter_map(|a| {
            let f = a.final_metrics.as_ref()?;
            f.noise_div
                .is_finite()
                .then(|| format!("{} {}", a.arm, sci(f.noise_div)))
        })
        .collect();
    if !noise.is_empty() {
        line(format!(
            "noise twins (W0 + 1e-12 noise, same basis), divergence from the run from W0: {}",
            noise.join(", ")
        ));
    }
    line(
        "memory S (rows, key space) and reads S·k (value space), each vs its rotation baseline mean ± sd:"
            .into(),
    );
    line(format!(
        "{:<w$} {:>28} {:>28} {:>28}",
        "arm", "kurtosis of S rows", "A(S rows)", "kurtosis of reads"
    ));
    let cell = |b: &StatBaseline| format!("{:>8.3} vs {:>7.3} ± {:<6.3}", b.value, b.mean, b.sd);
    for a in &s.arms {
        if let Some(act) = &a.activations {
            line(format!(
                "{:<w$} {:>28} {:>28} {:>28}",
                a.arm,
                cell(&act.s_kurtosis),
                cell(&act.s_axis),
                cell(&act.read_kurtosis)
            ));
        }
    }
    for a in &s.arms {
        if let Some(f) = &a.final_metrics
            && a.equivariant
            && f.orientation_div > 1e-10
        {
            line(format!(
                "note: {} is equivariant yet its twins drifted to {:.2e}; either the harness is at \
                 fault or the dynamics amplify rounding (too large a step, or Muon's orthogonalisation)",
                a.arm, f.orientation_div
            ));
        }
    }
    out
}

/// `sweep.csv`: one row per seed and arm with the final A(K) against its rotation baseline
/// (run from W0, and the excess and z of the run from Q·W0), the twin divergences and the
/// held-out loss and accuracy; empty cells for a diverged arm.
pub fn sweep_csv(r: &SweepResult) -> Result<Vec<u8>, csv::Error> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "seed",
        "arm",
        "diverged",
        "axis_concentration",
        "baseline_mean",
        "baseline_sd",
        "baseline_p5",
        "baseline_p95",
        "excess",
        "z",
        "excess_rot",
        "z_rot",
        "orientation_div",
        "gram_div",
        "heldout_loss",
        "heldout_accuracy",
    ])?;
    for s in &r.per_seed {
        let b = s.baseline.as_ref();
        let f = s.final_metrics.as_ref();
        let h = s.heldout.as_ref();
        let o = |x: Option<f64>| x.map_or(String::new(), num);
        csv.write_record([
            s.seed.to_string(),
            s.arm.clone(),
            (s.final_metrics.is_none() as u8).to_string(),
            o(b.map(|b| b[0].axis_concentration)),
            o(b.map(|b| b[0].mean)),
            o(b.map(|b| b[0].sd)),
            o(b.map(|b| b[0].p5)),
            o(b.map(|b| b[0].p95)),
            o(b.map(|b| b[0].excess)),
            o(b.map(|b| b[0].z)),
            o(b.map(|b| b[1].excess)),
            o(b.map(|b| b[1].z)),
            o(f.map(|f| f.orientation_div)),
            o(f.map(|f| f.gram_div)),
            o(h.map(|h| h.loss[0])),
            o(h.map(|h| h.accuracy[0])),
        ])?;
    }
    csv.into_inner().map_err(|e| e.into_error().into())
}

/// The text table `basis-lab sweep` prints: per arm the mean ± sd of the excess over seeds,
/// the baseline's spread, the seeds outside the 5–95% band and a verdict.
pub fn sweep_text(r: &SweepResult) -> String {
    let mut out = format!(
        "{} seeds × {} steps; excess = A(K) − mean A over {} random rotations of the same keys\n",
        r.seeds.len(),
        r.preset.steps,
        r.preset.baseline_rotations
    );
    let w = arm_width(r.aggregate.iter().map(|a| a.arm.as_str()));
    out.push_str(&format!(
        "{:<w$} {:>4} {:>22} {:>11} {:>9} {:>10} {:>10}  verdict\n",
        "arm", "ok", "excess mean ± sd", "baseline sd", "outside", "twin div", "held acc"
    ));
    for a in &r.aggregate {
        let verdict = a.verdict().short();
        out.push_str(&format!(
            "{:<w$} {:>4} {:>11} ± {:<8} {:>11} {:>6}/{:<2} {:>10} {:>10.3}  {verdict}\n",
            a.arm,
            a.seeds_ok,
            sci(a.excess_mean),
            sci(a.excess_sd),
            sci(a.baseline_sd_mean),
            a.outside_band,
            a.seeds_ok,
            sci(a.orientation_div_mean),
            a.heldout_accuracy_mean
        ));
    }
    out
}

/// The tables [`write_sweep`] writes.
pub const SWEEP_FILES: [&str; 2] = ["sweep.csv", "sweep.json"];

/// Stages `sweep.csv` ([`sweep_csv`]) and `sweep.json` (the whole result) in `set`. Errors name
/// the file that could not be written.
pub fn write_sweep(set: &mut OutputSet, r: &SweepResult) -> Result<()> {
    set.write(SWEEP_FILES[0], &sweep_csv(r)?)?;
    set.write(SWEEP_FILES[1], &serde_json::to_vec_pretty(r)?)?;
    Ok(())
}

/// One row group of a points sweep table: the point's own columns (name, value), then its
/// seed sweep.
pub struct PointRow<'a> {
    /// The point's columns, e.g. `("eps", "1e-8")`.
    pub columns: Vec<(&'static str, String)>,
    /// The seed sweep at that point.
    pub sweep: &'a SweepResult,
}

/// The row groups of a points sweep table, the columns of [`PointAxis::columns`] first.
pub fn point_rows<A: PointAxis>(points: &[Point<A>]) -> Vec<PointRow<'_>> {
    points
        .iter()
        .map(|p| PointRow {
            columns: A::columns(p.value, &p.sweep),
            sweep: &p.sweep,
        })
        .collect()
}

/// `<ID>_sweep.csv` of a points sweep (e.g. `eps_sweep.csv`): one row per point and arm, the point's own columns first,
/// then the arm's aggregate over seeds (mean and sd of the excess, twin divergences and
/// held-out accuracy, and the seeds outside the baseline band).
pub fn points_csv(rows: &[PointRow]) -> Result<Vec<u8>, csv::Error> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = lead_names(rows);
    header.extend([
        "arm",
        "seeds_ok",
        "excess_mean",
        "excess_sd",
        "baseline_sd_mean",
        "outside_band",
        "orientation_div_mean",
        "orientation_div_sd",
        "gram_div_mean",
        "gram_div_sd",
        "heldout_accuracy_mean",
        "heldout_accuracy_sd",
    ]);
    csv.write_record(&header)?;
    for row in rows {
        for a in &row.sweep.aggregate {
            let mut record: Vec<String> = row.columns.iter().map(|c| c.1.clone()).collect();
            record.extend([
                a.arm.clone(),
                a.seeds_ok.to_string(),
                num(a.excess_mean),
                num(a.excess_sd),
                num(a.baseline_sd_mean),
                a.outside_band.to_string(),
                num(a.orientation_div_mean),
                num(a.orientation_div_sd),
                num(a.gram_div_mean),
                num(a.gram_div_sd),
                num(a.heldout_accuracy_mean),
                num(a.heldout_accuracy_sd),
            ]);
            csv.write_record(&record)?;
        }
    }
    csv.into_inner().map_err(|e| e.into_error().into())
}

fn lead_names(rows: &[PointRow]) -> Vec<&'static str> {
    rows.first()
        .map_or(Vec::new(), |r| r.columns.iter().map(|c| c.0).collect())
}

/// The text table of a points sweep: the rows of [`points_csv`] with the numbers rounded.
pub fn points_text(rows: &[PointRow]) -> String {
    let lead = lead_names(rows);
    let widths: Vec<usize> = lead.iter().map(|h| h.chars().count().max(10)).collect();
    let lead_text: String = lead
        .iter()
        .zip(&widths)
        .map(|(h, w)| format!("{h:>w$} "))
        .collect();
    let mut out = format!(
        "{lead_text}{:<12} {:>22} {:>11} {:>9} {:>10} {:>10} {:>9}\n",
        "arm", "excess mean ± sd", "baseline sd", "outside", "twin div", "gram div", "held acc"
    );
    for row in rows {
        let values: String = row
            .columns
            .iter()
            .zip(&widths)
            .map(|(c, w)| format!("{:>w$} ", c.1))
            .collect();
        for a in &row.sweep.aggregate {
            out.push_str(&format!(
                "{values}{:<12} {:>11} ± {:<8} {:>11} {:>6}/{:<2} {:>10} {:>10} {:>9.3}\n",
                a.arm,
                sci(a.excess_mean),
                sci(a.excess_sd),
                sci(a.baseline_sd_mean),
                a.outside_band,
                a.seeds_ok,
                sci(a.orientation_div_mean),
                sci(a.gram_div_mean),
                a.heldout_accuracy_mean
            ));
        }
    }
    out
}

/// Stages `<stem>.csv` ([`points_csv`] of `rows`) and `<stem>.json` (`all`) in `set`.
fn write_points<T: serde::Serialize + ?Sized>(
    set: &mut OutputSet,
    stem: &str,
    all: &T,
    rows: &[PointRow],
) -> Result<()> {
    set.write(&format!("{stem}.csv"), &points_csv(rows)?)?;
    set.write(&format!("{stem}.json"), &serde_json::to_vec_pretty(all)?)?;
    Ok(())
}

/// A finished points sweep whatever its axis: what the command line writes and prints for it,
/// run here or merged from shards.
pub trait PointsReport {
    /// Stages `<ID>_sweep.csv` ([`points_csv`]) and `<ID>_sweep.json` (every point) in `set`.
    /// Errors: a file (named) cannot be written.
    fn write(&self, set: &mut OutputSet) -> Result<()>;
    /// The files' stem, `<ID>_sweep` (also the name of the command's output set).
    fn stem(&self) -> String;
    /// The figures, named for files ([`super::figures::points_figures`]).
    fn figures(&self) -> Vec<(String, Figure)>;
    /// The text table ([`points_text`]).
    fn text(&self) -> String;
}

impl<A: PointAxis> PointsReport for Vec<Point<A>> {
    fn stem(&self) -> String {
        A::stem()
    }

    fn write(&self, set: &mut OutputSet) -> Result<()> {
        write_points(set, &A::stem(), self, &point_rows(self))
    }

    fn figures(&self) -> Vec<(String, Figure)> {
        super::figures::points_figures(self)
    }

    fn text(&self) -> String {
        points_text(&point_rows(self))
    }
}

/// `matched.csv`: every row of the report (kind, level, arm, step, held-out loss, excess and
/// its baseline sd, twin divergences); an empty step where the arm never reached the level.
pub fn matched_csv(report: &MatchedReport) -> Result<Vec<u8>, csv::Error> {
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "kind",
        "level",
        "arm",
        "step",
        "heldout_loss",
        "excess",
        "baseline_sd",
        "gram_div",
        "orientation_div",
    ])?;
    for r in &report.rows {
        csv.write_record([
            r.kind.clone(),
            num(r.level),
            r.arm.clone(),
            r.step.map_or(String::new(), |s| s.to_string()),
            num(r.heldout_loss),
            num(r.excess),
            num(r.baseline_sd),
            num(r.gram_div),
            num(r.orientation_div),
        ])?;
    }
    csv.into_inner().map_err(|e| e.into_error().into())
}

/// The text table `basis-lab matched` prints: every row, then each arm's verdict at the
/// deepest level.
pub fn matched_text(report: &MatchedReport) -> String {
    let mut out = format!(
        "{:<7} {:>9} {:<12} {:>6} {:>9} {:>10} {:>11} {:>10} {:>10}\n",
        "match",
        "level",
        "arm",
        "step",
        "held loss",
        "excess",
        "baseline sd",
        "gram div",
        "twin div"
    );
    for r in &report.rows {
        out.push_str(&format!(
            "{:<7} {:>9.4} {:<12} {:>6} {:>9.4} {:>10} {:>11} {:>10} {:>10}\n",
            r.kind,
            r.level,
            r.arm,
            r.step.map_or("—".into(), |s| s.to_string()),
            r.heldout_loss,
            sci(r.excess),
            sci(r.baseline_sd),
            sci(r.gram_div),
            sci(r.orientation_div)
        ));
    }
    out.push_str(&format!(
        "\nAt the deepest level ({:.4}), excess A(K) against {}:\n",
        report.levels.last().copied().unwrap_or(f64::NAN),
        report.reference
    ));
    for v in &report.verdicts {
        out.push_str(&format!(
            "{:<12} {:>10} at matched budget, {:>10} at matched loss (baseline sd {}): {}\n",
            v.arm,
            sci(v.diff_budget),
            sci(v.diff_loss),
            sci(v.yardstick),
            v.label
        ));
    }
    out
}

/// Stages `matched.csv` ([`matched_csv`]) and `matched.json` (the report but its
/// evaluations, which only join the parts of a split comparison) in `set`.
pub fn write_matched(set: &mut OutputSet, report: &MatchedReport) -> Result<()> {
    set.write("matched.csv", &matched_csv(report)?)?;
    let levels_and_rows = MatchedReport {
        evaluations: Vec::new(),
        ..report.clone()
    };
    set.write(
        "matched.json",
        &serde_json::to_vec_pretty(&levels_and_rows)?,
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::matched::{MatchedRow, MatchedVerdict};
    use crate::experiment::{KeyDim, points_sweep, sweep};
    use crate::preset::{BUNDLED, Preset};

    fn tiny() -> Preset {
        let mut p = Preset::from_ron(BUNDLED[1].1, "classroom").unwrap();
        (p.steps, p.baseline_rotations, p.n_heldout) = (15, 8, 20);
        p
    }

    fn rows(bytes: &[u8]) -> Vec<Vec<String>> {
        csv::Reader::from_reader(bytes)
            .records()
            .map(|r| r.unwrap().iter().map(String::from).collect())
            .collect()
    }

    #[test]
    fn sweep_csv_holds_every_seed_and_arm_with_numbers_that_read_back_exactly() {
        let r = sweep(&tiny(), 2, &|| {}).unwrap();
        let bytes = sweep_csv(&r).unwrap();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(text.starts_with("seed,arm,diverged,axis_concentration,baseline_mean,"));
        let rows = rows(&bytes);
        assert_eq!(rows.len(), 4, "2 seeds × 2 arms");
        for (row, s) in rows.iter().zip(&r.per_seed) {
            assert_eq!(
                (row[0].as_str(), row[1].as_str()),
                (&*s.seed.to_string(), &*s.arm)
            );
            assert_eq!(row[2], "0");
            let b = &s.baseline.as_ref().unwrap()[0];
            assert_eq!(row[3].parse::<f64>().unwrap(), b.axis_concentration);
            assert_eq!(row[8].parse::<f64>().unwrap(), b.excess);
            let f = s.final_metrics.as_ref().unwrap();
            assert_eq!(row[12].parse::<f64>().unwrap(), f.orientation_div);
        }
        let table = sweep_text(&r);
        assert!(table.starts_with("2 seeds × 15 steps; excess = A(K) − mean A over 8 random"));
        assert!(table.contains("too few seeds") || table.contains("the baseline spread"));
        assert_eq!(
            table.lines().count(),
            2 + 2,
            "two header lines, one row per arm"
        );
    }

    #[test]
    fn dk_points_lead_with_the_point_columns_in_the_csv_and_the_table() {
        let never = std::sync::atomic::AtomicBool::new(false);
        let points = points_sweep::<KeyDim>(&tiny(), &[4, 8], 2, &|| {}, &never).unwrap();
        let rows_in = point_rows(&points);
        let bytes = points_csv(&rows_in).unwrap();
        let header = String::from_utf8(bytes.clone()).unwrap();
        assert!(header.starts_with("d_k,n_keys,pairs_per_episode,isotropic,arm,seeds_ok,"));
        let rows = rows(&bytes);
        assert_eq!(rows.len(), 4, "2 points × 2 arms");
        // d_k 4 halves the classroom's 16 keys and 8 pairs; 3/(4+2) = 0.5.
        assert_eq!(rows[0][..5], ["4", "8", "4", "0.5000", "gd"]);
        assert_eq!(rows[3][..5], ["8", "16", "8", "0.3000", "adam"]);
        let agg = &points[1].sweep.aggregate[1];
        assert_eq!(rows[3][6].parse::<f64>().unwrap(), agg.excess_mean);
        let table = points_text(&rows_in);
        let first = table.lines().nth(1).unwrap();
        assert!(
            first.starts_with("         4          8                 4     0.5000 gd"),
            "{first}"
        );
    }

    #[test]
    fn matched_rows_without_a_crossing_leave_the_step_empty_and_print_a_dash() {
        let row = |kind: &str, step| MatchedRow {
            kind: kind.into(),
            level: 0.5,
            arm: "adam".into(),
            step,
            heldout_loss: 0.49,
            excess: 1e-3,
            baseline_sd: 2e-3,
            gram_div: 0.1,
            orientation_div: 0.2,
        };
        let report = MatchedReport {
            reference: "gd".into(),
            levels: vec![0.5],
            rows: vec![row("budget", Some(40)), row("loss", None)],
            verdicts: vec![MatchedVerdict {
                arm: "adam".into(),
                diff_budget: 1e-3,
                diff_loss: -2e-3,
                yardstick: 2e-3,
                label: "speed effect".into(),
            }],
            evaluations: Vec::new(),
        };
        let rows = rows(&matched_csv(&report).unwrap());
        assert_eq!(rows[0][..4], ["budget", "0.5", "adam", "40"]);
        assert_eq!(rows[1][..4], ["loss", "0.5", "adam", ""]);
        let text = matched_text(&report);
        assert!(
            text.contains("loss       0.5000 adam              —"),
            "{text}"
        );
        assert!(text.contains("At the deepest level (0.5000), excess A(K) against gd:"));
        assert!(text.contains("-2.00e-3 at matched loss (baseline sd 2.00e-3): speed effect"));
    }

    #[test]
    fn the_run_table_flags_an_equivariant_arm_whose_twins_drifted() {
        let dir = tempfile::tempdir().unwrap();
        let opts = crate::experiment::RunOptions {
            trace: false,
            figures: None,
            max_output_bytes: crate::experiment::MAX_OUTPUT_BYTES,
        };
        let (mut s, _) = crate::experiment::run_to_dir(&tiny(), dir.path(), opts, &|_| {}).unwrap();
        let text = summary_text(&s);
        assert!(text.starts_with("15 steps, d_k 8, 16 keys; isotropic A = 3/(d_k+2) = 0.3000"));
        assert!(text.contains("gd           equivariant"));
        assert!(text.contains("adam         coordinate-wise"));
        assert!(!text.contains("note:"), "GD's twins stay at rounding noise");
        s.arms[0].final_metrics.as_mut().unwrap().orientation_div = 1e-3;
        assert!(
            summary_text(&s).contains("note: gd is equivariant yet its twins drifted to 1.00e-3")
        );
    }
}
