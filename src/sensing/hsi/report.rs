//! The `hsi` command's files. One seed with given rates: `hsi.csv` and `hsi.md` ([`csv_bytes`],
//! [`markdown`]). A grid run ([`super::grid::run_grid`]): `hsi.csv` (every run at every level),
//! `hsi_summary.csv` (each picked rate over seeds), `hsi.md` (the selection, Table 5 beside the
//! paper's, the Figure 5 path, every run) and `hsi.json` (the whole [`GridReport`]); see
//! [`write_grid`].

use std::path::Path;

use super::grid::{GridReport, LevelStats, Role, Selection, Stat, TrainTrace};
use super::{HsiError, HsiRun, HsiSetup, LEVELS, PAPER_TABLE5, PaperRow};
use crate::output::{OutputSet, csv_num as num};
use crate::sensing::zoo::Outcome;

/// The paper's Table 5 rows for this setup's density and scene: Indian Pines or Pavia
/// University when the scene's variable or file name says which (`indian`, `pavia`), both
/// otherwise.
pub fn paper_rows(setup: &HsiSetup) -> Vec<&'static PaperRow> {
    let name = format!("{} {}", setup.var, setup.scene).to_lowercase();
    let wanted = if name.contains("indian") {
        Some("Indian Pines")
    } else if name.contains("pavia") {
        Some("Pavia Univ.")
    } else {
        None
    };
    PAPER_TABLE5
        .iter()
        .filter(|r| r.density == setup.cfg.density && wanted.is_none_or(|w| r.dataset == w))
        .collect()
}

/// The paper's mean and sd for `rule` in `row` (GD, Adam and Muon; the paper has no
/// scalar-Adam entry).
pub fn paper_entry(row: &PaperRow, rule: &str) -> Option<[f64; 2]> {
    match rule {
        "gd" => Some(row.gd),
        "adam" => Some(row.adam),
        "muon" => Some(row.muon),
        _ => None,
    }
}

/// A run's CSV rows: each level of [`LEVELS`] (then `final`, the last step) with the step,
/// training loss, held-out RMSE and effective rank there (empty where never reached).
fn csv_level_rows(r: &HsiRun) -> Vec<[String; 5]> {
    LEVELS
        .iter()
        .map(|l| num(*l))
        .zip(r.crossings.iter().map(Option::as_ref))
        .chain([("final".to_string(), Some(&r.last))])
        .map(|(level, c)| {
            let [step, loss, rmse, erank] = c.map_or_else(Default::default, |c| {
                [
                    c.step.to_string(),
                    num(c.train_loss),
                    num(c.test_rmse),
                    num(c.erank),
                ]
            });
            [level, step, loss, rmse, erank]
        })
        .collect()
}

/// A run's Markdown cells after its leading columns: held-out RMSE ×1e-2 / effective rank at
/// each level ("—" where never reached), at the last step, and the outcome; ends the row.
fn run_cells(r: &HsiRun) -> String {
    let mut s = String::new();
    for x in &r.crossings {
        match x {
            Some(x) => s.push_str(&format!(" {:.3} / {:.1} |", 100.0 * x.test_rmse, x.erank)),
            None => s.push_str(" — |"),
        }
    }
    let outcome = match r.outcome {
        Outcome::Diverged => format!("diverged at step {}", r.steps),
        _ => format!("{} steps", r.steps),
    };
    s.push_str(&format!(
        " {:.3} / {:.1} | {outcome} |\n",
        100.0 * r.last.test_rmse,
        r.last.erank
    ));
    s
}

/// A Markdown table header: `lead`, a column per level of [`LEVELS`], `tail`, then the rule.
fn level_header(s: &mut String, lead: &str, tail: &str) {
    s.push_str(lead);
    for l in LEVELS {
        s.push_str(&format!(" ≤ {l:e} |"));
    }
    s.push_str(tail);
    s.push('\n');
    let columns = lead.matches('|').count() - 1 + LEVELS.len() + tail.matches('|').count();
    s.push('|');
    s.push_str(&"---|".repeat(columns));
    s.push('\n');
}

/// `hsi.csv` of one seed: one row per (run, level) with the first crossing's step, training
/// loss, held-out RMSE and effective rank (empty where never reached), then a `final` row per
/// run; `selected` is 1 for the runs at indices `selected` (see [`super::grid::select`]).
pub fn csv_bytes(
    setup: &HsiSetup,
    runs: &[HsiRun],
    selected: &[usize],
) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "rule",
        "lr",
        "density",
        "seed",
        "level",
        "step",
        "train_loss",
        "test_rmse",
        "erank",
        "outcome",
        "selected",
    ])?;
    for (i, r) in runs.iter().enumerate() {
        for [level, step, loss, rmse, erank] in csv_level_rows(r) {
            w.write_record([
                r.rule.clone(),
                num(r.lr),
                num(setup.cfg.density),
                setup.cfg.seed.to_string(),
                level,
                step,
                loss,
                rmse,
                erank,
                format!("{:?}", r.outcome),
                u8::from(selected.contains(&i)).to_string(),
            ])?;
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// `hsi.md` of one seed: the setup, then held-out RMSE ×1e-2 / effective rank at each level per
/// rule ("—" where never reached), the crossing steps, and the paper's Table 5 rows for this
/// density and scene ([`paper_rows`]). With several rates per rule, the runs at indices `selected` are marked ✓.
pub fn markdown(setup: &HsiSetup, runs: &[HsiRun], selected: &[usize], seconds: f64) -> String {
    let c = &setup.cfg;
    let [h, w, b] = setup.dims;
    let mut s = format!(
        "# Hyperspectral completion\n\n{} (`{}`, {h} × {w} × {b} {}): divided by its maximum {}, \
         {} of {} pixels non-zero, {} kept (seed {}), band means removed. Density {}: {} entries \
         observed, {} held out. W = UVᵀ of width {}, init {}, constant rate, ≤ {} steps; f64.\n\n",
        setup.scene,
        setup.var,
        setup.class,
        setup.pre.max,
        setup.pre.nonzero_pixels,
        setup.pre.scene_pixels,
        setup.pre.kept.len(),
        c.seed,
        c.density,
        setup.observed,
        setup.held_out,
        c.width,
        c.init,
        c.steps,
    );
    s.push_str(
        "Held-out RMSE ×1e-2 / effective rank of UVᵀ at the first step the training loss is \
         below each level, and at the last step:\n\n",
    );
    level_header(&mut s, "| rule | lr |", " last step | outcome |");
    let grid = runs
        .iter()
        .enumerate()
        .any(|(i, r)| runs[..i].iter().any(|q| q.rule == r.rule));
    for (i, r) in runs.iter().enumerate() {
        let mark = if grid && selected.contains(&i) {
            " ✓"
        } else {
            ""
        };
        s.push_str(&format!("| {} | {}{mark} |", r.rule, r.lr));
        s.push_str(&run_cells(r));
    }
    if grid {
        s.push_str(
            "\n✓: the rate the train-only rule picks for that rule — the deepest level reached, \
             then the fewest steps to reach it (held-out entries are never read).\n",
        );
    }
    s.push_str("\nStep of each first crossing:\n\n");
    level_header(&mut s, "| rule | lr |", " final loss |");
    for r in runs {
        s.push_str(&format!("| {} | {} |", r.rule, r.lr));
        for x in &r.crossings {
            match x {
                Some(x) => s.push_str(&format!(" {} |", x.step)),
                None => s.push_str(" — |"),
            }
        }
        s.push_str(&format!(" {:.2e} |\n", r.last.train_loss));
    }
    for row in paper_rows(setup) {
        s.push_str(&format!(
            "\nThe paper's Table 5, {} at density {} (m/dof {}; 4 seeds, ≤ 1e-5): GD {:.3} ± {:.3}, \
             Adam {:.3} ± {:.3}, Muon {:.3} ± {:.3} (Muon's effective rank {}).\n",
            row.dataset,
            row.density,
            row.m_over_dof,
            row.gd[0],
            row.gd[1],
            row.adam[0],
            row.adam[1],
            row.muon[0],
            row.muon[1],
            row.muon_rank
        ));
    }
    let plural = if runs.len() == 1 { "" } else { "s" };
    s.push_str(&format!(
        "\n{} run{plural} in {seconds:.1} s.\n",
        runs.len()
    ));
    s
}

/// `hsi.csv` of a grid run: one row per run and level with the first crossing's step, training
/// loss, held-out RMSE and effective rank (empty where never reached), then a `final` row per
/// run; `role` is `selection` or `report`, `picked_by` the picks that chose the run's rate
/// (`selection:grid`, `;`-separated).
pub fn grid_csv_bytes(report: &GridReport) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "rule",
        "lr",
        "density",
        "seed",
        "role",
        "level",
        "step",
        "train_loss",
        "test_rmse",
        "erank",
        "outcome",
        "picked_by",
    ])?;
    let density = report.setups.first().map_or(f64::NAN, |s| s.cfg.density);
    for r in &report.runs {
        let role = match report.role(r) {
            Role::Selection => "selection",
            Role::Report => "report",
        };
        let picked = report.picked_by(&r.rule, r.lr).join(";");
        for [level, step, loss, rmse, erank] in csv_level_rows(r) {
            w.write_record([
                r.rule.clone(),
                num(r.lr),
                num(density),
                r.seed.to_string(),
                role.into(),
                level,
                step,
                loss,
                rmse,
                erank,
                format!("{:?}", r.outcome),
                picked.clone(),
            ])?;
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// `hsi_summary.csv`: per picked (rule, rate) and level (then `final`), the seeds that reached
/// it and the mean and sample sd over them of the step, held-out RMSE and effective rank.
pub fn summary_csv_bytes(report: &GridReport) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "rule",
        "lr",
        "picked_by",
        "seeds",
        "level",
        "reached",
        "step_mean",
        "step_sd",
        "test_rmse_mean",
        "test_rmse_sd",
        "erank_mean",
        "erank_sd",
    ])?;
    let pair =
        |s: &Option<Stat>| s.map_or([String::new(), String::new()], |s| [num(s.mean), num(s.sd)]);
    for s in &report.summaries {
        let seeds: Vec<String> = s.seeds.iter().map(u64::to_string).collect();
        for l in s.levels.iter().chain([&s.last]) {
            let [step_mean, step_sd] = pair(&l.step);
            let [rmse_mean, rmse_sd] = pair(&l.test_rmse);
            let [erank_mean, erank_sd] = pair(&l.erank);
            w.write_record([
                s.rule.clone(),
                num(s.lr),
                s.picked_by.join(";"),
                seeds.join(";"),
                l.level.map_or("final".into(), num),
                l.reached.to_string(),
                step_mean,
                step_sd,
                rmse_mean,
                rmse_sd,
                erank_mean,
                erank_sd,
            ])?;
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// `mean ± sd` of an RMSE (×1e-2, three decimals) or `—`.
fn rmse_cell(s: &Option<Stat>) -> String {
    s.map_or("—".into(), |s| {
        format!("{:.3} ± {:.3}", 100.0 * s.mean, 100.0 * s.sd)
    })
}

/// `mean ± sd` with one decimal, or `—`.
fn one_decimal(s: &Option<Stat>) -> String {
    s.map_or("—".into(), |s| format!("{:.1} ± {:.1}", s.mean, s.sd))
}

/// The cell of one level on the Figure 5 path: RMSE ×1e-2 mean ± sd / mean effective rank,
/// with the number of seeds when not all reached it.
fn path_cell(l: &LevelStats, seeds: usize) -> String {
    match (&l.test_rmse, &l.erank) {
        (Some(r), Some(e)) => {
            let partial = if l.reached < seeds {
                format!(" ({} of {seeds})", l.reached)
            } else {
                String::new()
            };
            format!(
                "{:.3} ± {:.3} / {:.1}{partial}",
                100.0 * r.mean,
                100.0 * r.sd,
                e.mean
            )
        }
        _ => "—".into(),
    }
}

/// `hsi.md` of a grid run: the setup, the selection (levels and steps per rate and selection
/// seed, then every pick side by side), Table 5 (each picked rate at ≤ 1e-5 over all seeds,
/// beside the paper's value and the distance in the paper's sd), the Figure 5 path (every
/// level), and every run.
pub fn grid_markdown(report: &GridReport) -> String {
    let Some(first) = report.setups.first() else {
        return "# Hyperspectral completion\n\nNo seeds were run.\n".into();
    };
    let plan = &report.plan;
    let c = &first.cfg;
    let [h, w, b] = first.dims;
    let seeds = plan.seeds();
    let list = |xs: &[u64]| xs.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let mut s = format!(
        "# Hyperspectral completion: rate grids, train-only selection, {} seeds\n\n{} (`{}`, \
         {h} × {w} × {b} {}): divided by its maximum {}, {} of {} pixels non-zero. Each seed \
         keeps {} pixels (its own choice), removes the band means and draws its own mask at \
         density {}:",
        seeds.len(),
        first.scene,
        first.var,
        first.class,
        first.pre.max,
        first.pre.nonzero_pixels,
        first.pre.scene_pixels,
        first.pre.kept.len(),
        c.density,
    );
    for (i, setup) in report.setups.iter().enumerate() {
        let sep = if i == 0 { " " } else { "; " };
        s.push_str(&format!(
            "{sep}seed {} {} observed, {} held out",
            setup.cfg.seed, setup.observed, setup.held_out
        ));
    }
    s.push_str(&format!(
        ". W = UVᵀ of width {}, init {}, constant rate, ≤ {} steps; f64. Grids: {:?}; selection \
         seeds {}; report seeds {}.\n\n",
        c.width,
        c.init,
        c.steps,
        plan.grids,
        list(&plan.selection_seeds),
        list(&plan.report_seeds),
    ));

    s.push_str(
        "## Selection\n\nTraining loss only: the levels each selection seed reaches (of the six) \
         and the step at which it reaches the deepest; a diverged run shows `div`.\n\n| rule | lr |",
    );
    for seed in &plan.selection_seeds {
        s.push_str(&format!(" seed {seed} |"));
    }
    s.push_str(" levels all reach | mean steps |\n|---|---|");
    s.push_str(&"---|".repeat(plan.selection_seeds.len() + 2));
    s.push('\n');
    let selection_runs: Vec<&HsiRun> = report
        .runs
        .iter()
        .filter(|r| report.role(r) == Role::Selection)
        .collect();
    let mut seen: Vec<(&str, u64)> = Vec::new();
    for r in &selection_runs {
        if seen.contains(&(r.rule.as_str(), r.lr.to_bits())) {
            continue;
        }
        seen.push((&r.rule, r.lr.to_bits()));
        let mine: Vec<&&HsiRun> = selection_runs
            .iter()
            .filter(|q| q.rule == r.rule && q.lr.to_bits() == r.lr.to_bits())
            .collect();
        s.push_str(&format!("| {} | {} |", r.rule, r.lr));
        let traces: Vec<TrainTrace> = mine.iter().map(|q| TrainTrace::of(q)).collect();
        for t in &traces {
            if t.diverged {
                s.push_str(" div |");
            } else {
                let levels = t.levels();
                let step = levels
                    .checked_sub(1)
                    .and_then(|i| t.first_step[i])
                    .map_or(String::new(), |st| format!(" (step {st})"));
                s.push_str(&format!(" {levels}{step} |"));
            }
        }
        let all = traces.iter().map(|t| t.levels()).min().unwrap_or(0);
        if traces.iter().any(|t| t.diverged) || all == 0 {
            s.push_str(" — | — |\n");
        } else {
            let steps: Vec<f64> = traces
                .iter()
                .filter_map(|t| t.first_step[all - 1])
                .map(|st| st as f64)
                .collect();
            s.push_str(&format!(
                " {all} | {} |\n",
                crate::metrics::mean_sd(&steps).0
            ));
        }
    }
    s.push_str("\nThe rate each rule picks from each grid:\n\n| rule | grid | rates |");
    for sel in Selection::ALL {
        s.push_str(&format!(" {} rule |", sel.name()));
    }
    s.push_str("\n|---|---|---|");
    s.push_str(&"---|".repeat(Selection::ALL.len()));
    s.push('\n');
    for (i, p) in report.picks.iter().enumerate() {
        if p.selection != Selection::ALL[0] {
            continue;
        }
        let rates: Vec<String> = p.grid.rates.iter().map(f64::to_string).collect();
        s.push_str(&format!(
            "| {} | {} | {} |",
            p.rule,
            p.grid.name,
            rates.join(", ")
        ));
        for q in report.picks[i..]
            .iter()
            .filter(|q| q.rule == p.rule && q.grid == p.grid)
        {
            s.push_str(&q.lr.map_or(" none |".into(), |lr| format!(" {lr} |")));
        }
        s.push('\n');
    }
    s.push_str(
        "\nPaper rule: the rate at which every selection seed reaches the most levels, ties to \
         the fewest mean steps to the deepest of them. Fastest rule (the project's earlier one): \
         the single run that reaches the deepest level in the fewest steps. Both then prefer the \
         smaller rate; neither reads a held-out entry.\n",
    );

    let n_seeds = seeds.len();
    let paper = paper_rows(first);
    s.push_str(&format!(
        "\n## Table 5\n\nHeld-out RMSE ×1e-2 at training loss ≤ 1e-5, mean ± sample sd over \
         seeds {}, with the effective rank of UVᵀ and the step there. Distance: |ours − the \
         paper's mean| in units of the paper's sd (within 2 sd: ≤ 2).\n\n| rule | lr | picked by \
         | RMSE ×1e-2 | erank | step |",
        list(&seeds)
    ));
    for row in &paper {
        s.push_str(&format!(" paper, {} | distance |", row.dataset));
    }
    s.push_str("\n|---|---|---|---|---|---|");
    s.push_str(&"---|---|".repeat(paper.len()));
    s.push('\n');
    for sum in &report.summaries {
        let d = sum.deepest();
        let partial = if d.reached < n_seeds {
            format!(" ({} of {n_seeds} seeds)", d.reached)
        } else {
            String::new()
        };
        s.push_str(&format!(
            "| {} | {} | {} | {}{partial} | {} | {} |",
            sum.rule,
            sum.lr,
            sum.picked_by.join(", "),
            rmse_cell(&d.test_rmse),
            one_decimal(&d.erank),
            d.step
                .map_or("—".into(), |st| format!("{:.0} ± {:.0}", st.mean, st.sd)),
        ));
        for row in &paper {
            match (paper_entry(row, &sum.rule), &d.test_rmse) {
                (Some([mean, sd]), Some(ours)) => {
                    let rank = if sum.rule == "muon" {
                        format!(" (rank {})", row.muon_rank)
                    } else {
                        String::new()
                    };
                    let dist = (100.0 * ours.mean - mean).abs() / sd;
                    s.push_str(&format!(" {mean:.3} ± {sd:.3}{rank} | {dist:.1} sd |"));
                }
                (Some([mean, sd]), None) => s.push_str(&format!(" {mean:.3} ± {sd:.3} | — |")),
                (None, _) => s.push_str(" — | — |"),
            }
        }
        s.push('\n');
    }

    s.push_str(
        "\n## Along the path (Figure 5)\n\nHeld-out RMSE ×1e-2 mean ± sd / mean effective rank \
         over the seeds, at the first step below each training-loss level and at the last \
         step:\n\n",
    );
    level_header(&mut s, "| rule | lr |", " last step |");
    for sum in &report.summaries {
        s.push_str(&format!("| {} | {} |", sum.rule, sum.lr));
        for l in sum.levels.iter().chain([&sum.last]) {
            s.push_str(&format!(" {} |", path_cell(l, sum.seeds.len())));
        }
        s.push('\n');
    }

    s.push_str(
        "\n## Every run\n\nHeld-out RMSE ×1e-2 / effective rank at the first step below each \
         level, and at the last step:\n\n",
    );
    level_header(&mut s, "| rule | lr | seed |", " last step | outcome |");
    for r in &report.runs {
        s.push_str(&format!("| {} | {} | {} |", r.rule, r.lr, r.seed));
        s.push_str(&run_cells(r));
    }
    s.push_str(&format!(
        "\n{} runs in {:.1} s.\n",
        report.runs.len(),
        report.seconds
    ));
    s
}

/// The files [`write_grid`] writes.
pub const GRID_FILES: [&str; 4] = ["hsi.csv", "hsi_summary.csv", "hsi.md", "hsi.json"];

/// Stages `hsi.csv`, `hsi_summary.csv`, `hsi.md` and `hsi.json` of `report` in `set` and
/// returns the Markdown. Errors: a file (named) cannot be written.
pub fn write_grid(set: &mut OutputSet, report: &GridReport) -> std::io::Result<String> {
    let md = grid_markdown(report);
    set.write(GRID_FILES[0], &grid_csv_bytes(report)?)?;
    set.write(GRID_FILES[1], &summary_csv_bytes(report)?)?;
    set.write(GRID_FILES[2], md.as_bytes())?;
    let json = serde_json::to_vec_pretty(report).map_err(std::io::Error::other)?;
    set.write(GRID_FILES[3], &json)?;
    Ok(md)
}

/// Reads back the `hsi.json` that [`write_grid`] wrote (a run of `hsi --grid`, on this machine
/// or a cluster's), checked as the app checks a kept result ([`GridReport::check`]) and, in
/// addition, for one setup per seed of the plan, in its order, with valid settings and the same
/// density and budget. The runs' loss
/// curves are not in the file (views read the summaries).
///
/// # Errors
/// [`HsiError::Report`] naming the file and what is wrong: it cannot be read, is not a grid
/// report's JSON (the line and column of the first problem), or fails a check (the summary or
/// setup and the field).
pub fn read_grid(path: &Path) -> Result<GridReport, HsiError> {
    let bytes = std::fs::read(path).map_err(|e| HsiError::Report {
        file: path.display().to_string(),
        message: e.to_string(),
    })?;
    parse_grid(path, &bytes)
}

/// As [`read_grid`] on the contents `bytes` of the file `path` (an upload in the page; `path`
/// names it in errors).
///
/// # Errors
/// As [`read_grid`], but for reading the file.
pub fn parse_grid(path: &Path, bytes: &[u8]) -> Result<GridReport, HsiError> {
    let fail = |message: String| HsiError::Report {
        file: path.display().to_string(),
        message,
    };
    let mut json = serde_json::Deserializer::from_slice(bytes);
    let report: GridReport = serde_path_to_error::deserialize(&mut json).map_err(|e| {
        let at = e.path().to_string();
        let at = if at == "." {
            String::new()
        } else {
            format!("field `{at}`: ")
        };
        fail(format!(
            "not the hsi.json of `basis-lab hsi --grid` ({at}{})",
            e.into_inner()
        ))
    })?;
    report.check().map_err(fail)?;
    let seeds = report.plan.seeds();
    if report.setups.len() != seeds.len() {
        return Err(fail(format!(
            "field `setups`: {} entries; one per seed of the plan ({}) expected",
            report.setups.len(),
            seeds.len()
        )));
    }
    let first = &report.setups[0].cfg;
    for (i, (s, seed)) in report.setups.iter().zip(&seeds).enumerate() {
        let at = |field: &str, message: String| {
            fail(format!("setups[{i}].cfg: field `{field}`: {message}"))
        };
        s.cfg
            .validate()
            .map_err(|e| fail(format!("setups[{i}].cfg: {e}")))?;
        if s.cfg.seed != *seed {
            return Err(at(
                "seed",
                format!("{}; the plan's seed {seed} expected", s.cfg.seed),
            ));
        }
        if (s.cfg.density, s.cfg.steps) != (first.density, first.steps) {
            return Err(at(
                "density",
                format!(
                    "density {} and steps {} differ from the first setup's ({} and {})",
                    s.cfg.density, s.cfg.steps, first.density, first.steps
                ),
            ));
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensing::hsi::grid::tiny_grid;
    use crate::sensing::hsi::{HsiConfig, run, tiny_scene};
    use crate::sensing::zoo::Rule;

    fn tiny_report() -> GridReport {
        tiny_grid(0.3, vec![1, 2], vec![3, 4])
    }

    fn records(bytes: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
        let mut r = csv::Reader::from_reader(bytes);
        let header = r.headers().unwrap().iter().map(String::from).collect();
        let rows = r
            .records()
            .map(|x| x.unwrap().iter().map(String::from).collect())
            .collect();
        (header, rows)
    }

    #[test]
    fn the_grid_csv_has_every_run_at_every_level() {
        let report = tiny_report();
        let (header, rows) = records(&grid_csv_bytes(&report).unwrap());
        assert_eq!(
            header.join(","),
            "rule,lr,density,seed,role,level,step,train_loss,test_rmse,erank,outcome,picked_by"
        );
        assert_eq!(rows.len(), report.runs.len() * (LEVELS.len() + 1));
        for (run, chunk) in report.runs.iter().zip(rows.chunks(LEVELS.len() + 1)) {
            let last = &chunk[LEVELS.len()];
            assert_eq!(last[0], run.rule);
            assert_eq!(last[3], run.seed.to_string());
            assert_eq!(last[5], "final");
            assert_eq!(last[8], num(run.last.test_rmse));
            let role = if [1, 2].contains(&run.seed) {
                "selection"
            } else {
                "report"
            };
            assert!(chunk.iter().all(|row| row[4] == role));
            assert_eq!(last[11], report.picked_by(&run.rule, run.lr).join(";"));
            for (row, c) in chunk.iter().zip(&run.crossings) {
                assert_eq!(
                    row[6],
                    c.as_ref().map_or(String::new(), |c| c.step.to_string())
                );
            }
        }
        assert!(rows.iter().any(|r| r[4] == "report" && !r[11].is_empty()));
    }

    #[test]
    fn the_summary_csv_has_each_picked_rate_at_every_level() {
        let report = tiny_report();
        let (header, rows) = records(&summary_csv_bytes(&report).unwrap());
        assert_eq!(header[0], "rule");
        assert_eq!(header[8], "test_rmse_mean");
        assert_eq!(rows.len(), report.summaries.len() * (LEVELS.len() + 1));
        for (sum, chunk) in report.summaries.iter().zip(rows.chunks(LEVELS.len() + 1)) {
            assert_eq!(chunk[0][3], "1;2;3;4");
            let deep = &chunk[LEVELS.len() - 1];
            assert_eq!(deep[4], num(1e-5));
            assert_eq!(deep[5], sum.deepest().reached.to_string());
            let want = sum
                .deepest()
                .test_rmse
                .map_or(String::new(), |s| num(s.mean));
            assert_eq!(deep[8], want);
            assert_eq!(chunk[LEVELS.len()][4], "final");
        }
    }

    #[test]
    fn table5_sits_beside_the_papers_values_with_the_distance_in_its_sd() {
        let mut report = tiny_report();
        for s in &mut report.setups {
            s.var = "indian_pines_corrected".into();
            s.cfg.density = 0.15;
        }
        let gd = report
            .summaries
            .iter_mut()
            .find(|s| s.rule == "gd")
            .unwrap();
        let lr = gd.lr;
        let deepest = gd.levels.last_mut().unwrap();
        deepest.reached = 3;
        deepest.test_rmse = Some(Stat {
            n: 3,
            mean: 0.01507,
            sd: 0.0002,
        });
        let md = grid_markdown(&report);
        assert!(md.contains(&format!("| gd | {lr} |")), "{md}");
        assert!(md.contains("| 1.507 ± 0.020 (3 of 4 seeds) |"), "{md}");
        // |1.507 − 1.481| / 0.013 = 2.0 paper sd.
        assert!(md.contains("| 1.481 ± 0.013 | 2.0 sd |"), "{md}");
        assert!(md.contains("paper, Indian Pines | distance |"));
        assert!(!md.contains("Pavia"), "only the scene's own row");
        assert!(md.contains("| muon | paper | 0.01, 0.03, 0.1 |"), "{md}");
        assert!(md.contains("| gd | paper-cpu | 1, 3, 10 |"), "{md}");
        assert!(md.contains("(rank 36)"));
        let runs_table = md.split("## Every run").nth(1).unwrap();
        assert_eq!(
            runs_table
                .lines()
                .filter(|l| l.starts_with("| gd |") || l.starts_with("| muon |"))
                .count(),
            report.runs.len()
        );
    }

    #[test]
    fn paper_rows_follow_the_scene_and_density() {
        let mut setup = tiny_report().setups.remove(0);
        setup.cfg.density = 0.25;
        let names =
            |s: &HsiSetup| -> Vec<&str> { paper_rows(s).iter().map(|r| r.dataset).collect() };
        assert_eq!(
            names(&setup),
            ["Indian Pines", "Pavia Univ."],
            "unknown scene: both"
        );
        setup.var = "paviaU".into();
        assert_eq!(names(&setup), ["Pavia Univ."]);
        setup.cfg.density = 0.2;
        assert!(names(&setup).is_empty());
        assert_eq!(paper_entry(&PAPER_TABLE5[0], "muon"), Some([3.397, 0.082]));
        assert_eq!(paper_entry(&PAPER_TABLE5[0], "scalar_adam"), None);
    }

    #[test]
    fn the_single_seed_files_list_each_run() {
        let cfg = HsiConfig {
            density: 0.3,
            width: 4,
            steps: 100,
            seed: 5,
            ..HsiConfig::default()
        };
        let (setup, problem) = tiny_scene().problem(&cfg).unwrap();
        let runs = vec![
            run(&problem, Rule::named("gd").unwrap(), 10.0, &|_| {}),
            run(&problem, Rule::named("gd").unwrap(), 30.0, &|_| {}),
            run(&problem, Rule::named("adam").unwrap(), 1e-2, &|_| {}),
        ];
        let selected = crate::sensing::hsi::grid::select(&runs);
        assert_eq!(selected.len(), 2, "one pick per rule");
        let (header, rows) = records(&csv_bytes(&setup, &runs, &selected).unwrap());
        assert_eq!(header.last().unwrap(), "selected");
        assert_eq!(rows.len(), 3 * (LEVELS.len() + 1));
        for (i, chunk) in rows.chunks(LEVELS.len() + 1).enumerate() {
            let want = u8::from(selected.contains(&i)).to_string();
            assert!(chunk.iter().all(|r| r[3] == "5" && r[10] == want));
        }
        let md = markdown(&setup, &runs, &selected, 1.25);
        // At the paper's density, only the scene the file names is quoted.
        let indian = HsiSetup {
            scene: "indian_pines_corrected.mat".into(),
            cfg: HsiConfig {
                density: 0.15,
                ..setup.cfg.clone()
            },
            ..setup.clone()
        };
        let quoted = markdown(&indian, &runs, &selected, 1.25);
        assert!(quoted.contains("The paper's Table 5, Indian Pines at density 0.15"));
        assert!(!quoted.contains("Pavia"), "{quoted}");
        let rule_line = "|---|---|---|---|---|---|---|---|---|---|";
        assert!(
            md.contains(&format!("| last step | outcome |\n{rule_line}\n")),
            "{md}"
        );
        assert_eq!(md.matches(" ✓ |").count(), 2, "{md}");
        assert!(md.ends_with("\n3 runs in 1.2 s.\n"), "{md}");
    }

    #[test]
    fn a_written_grid_reads_back_and_damage_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut report = tiny_report();
        // A diverged run's last metrics are not finite; JSON writes them as null.
        let diverged = &mut report.runs[0];
        diverged.outcome = Outcome::Diverged;
        diverged.last.train_loss = f64::INFINITY;
        diverged.last.test_rmse = f64::NAN;
        diverged.last.erank = f64::NAN;
        let summaries: Vec<_> = (report.summaries.iter())
            .map(|s| report.summary_of(&s.rule, s.lr))
            .collect();
        report.summaries = summaries;
        let mut set = OutputSet::new(dir.path(), "hsi");
        write_grid(&mut set, &report).unwrap();
        set.commit().unwrap();
        let file = dir.path().join("hsi.json");
        let back = read_grid(&file).unwrap();
        assert_eq!(back.summaries, report.summaries);
        // The preprocessed matrix is not written; what identifies a setup is.
        let ids = |r: &GridReport| -> Vec<(String, usize, HsiConfig)> {
            r.setups
                .iter()
                .map(|s| (s.scene.clone(), s.observed, s.cfg.clone()))
                .collect()
        };
        assert_eq!(ids(&back), ids(&report));
        assert_eq!(back.plan, report.plan);
        assert_eq!(back.runs.len(), report.runs.len());
        let last = &back.runs[0].last;
        assert_eq!(back.runs[0].outcome, Outcome::Diverged);
        assert!(last.train_loss.is_nan() && last.test_rmse.is_nan() && last.erank.is_nan());
        assert_eq!(back.runs[1].last, report.runs[1].last);
        // The app keeps runs in RON, which writes NaN and inf as such and reads them back.
        let ron_text = ron::to_string(&report.runs[0].last).unwrap();
        let kept: crate::sensing::hsi::Crossing = ron::from_str(&ron_text).unwrap();
        assert!(
            kept.test_rmse.is_nan() && kept.train_loss == f64::INFINITY,
            "{ron_text}"
        );
        let kept: crate::sensing::hsi::Crossing =
            ron::from_str(&ron::to_string(&report.runs[1].last).unwrap()).unwrap();
        assert_eq!(kept, report.runs[1].last);

        let text = std::fs::read_to_string(&file).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        let fails = |v: &serde_json::Value| {
            let f = dir.path().join("damaged.json");
            std::fs::write(&f, serde_json::to_vec(v).unwrap()).unwrap();
            let e = read_grid(&f).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{}: ", f.display())), "{e}");
            e
        };
        let mut v = value.clone();
        v["setups"][1]["cfg"]["seed"] = 99.into();
        let e = fails(&v);
        assert!(
            e.ends_with("setups[1].cfg: field `seed`: 99; the plan's seed 2 expected"),
            "{e}"
        );
        let mut v = value.clone();
        v["setups"][2]["cfg"]["density"] = 0.5.into();
        assert!(fails(&v).contains("setups[2].cfg: field `density`: density 0.5"));
        let mut v = value.clone();
        v["setups"].as_array_mut().unwrap().pop();
        assert!(fails(&v).contains("field `setups`: 3 entries; one per seed of the plan (4)"));
        let mut v = value.clone();
        v["setups"][0]["cfg"]["width"] = 0.into();
        assert!(fails(&v).contains("setups[0].cfg: field `width`: 0 is out of range"));
        let mut v = value.clone();
        v["summaries"][0]["lr"] = (-1.0).into();
        assert!(fails(&v).contains("summary 0 (gd): field `lr`"));
        // A summary's statistics are over the finite values only: a null there is damage.
        let mut v = value.clone();
        let mean = &mut v["summaries"][0]["last"]["test_rmse"]["mean"];
        assert!(mean.is_f64(), "{mean}");
        *mean = serde_json::Value::Null;
        assert!(fails(&v).contains("not the hsi.json of `basis-lab hsi --grid`"));
        let mut v = value.clone();
        v["runs"][1]["last"]["erank"] = "many".into();
        let e = fails(&v);
        assert!(
            e.contains("field `runs[1].last.erank`: invalid type: string \"many\", expected a number or null"),
            "{e}"
        );
        // A number edited to read better than the runs it summarises.
        let mut v = value.clone();
        let mean = &mut v["summaries"][1]["levels"][2]["test_rmse"]["mean"];
        *mean = (mean.as_f64().unwrap() * 0.5).into();
        let e = fails(&v);
        assert!(
            e.contains("summary 1 (")
                && e.contains("field `levels[2]`: not what the report's runs"),
            "{e}"
        );
        let mut v = value;
        v["runs"][3]["crossings"].as_array_mut().unwrap().pop();
        let e = fails(&v);
        assert!(
            e.contains("run 3 (") && e.contains("field `crossings`: 5 entries"),
            "{e}"
        );
        let cut = dir.path().join("cut.json");
        std::fs::write(&cut, &text[..text.len() / 3]).unwrap();
        let e = read_grid(&cut).unwrap_err().to_string();
        assert!(e.contains("line") && e.contains("column"), "{e}");
        let e = read_grid(&dir.path().join("missing.json")).unwrap_err();
        assert!(e.to_string().contains("missing.json"), "{e}");
    }
}
