//! The zoo's tables: the paper's rate-selection rule, its Table 2 layout in Markdown, the
//! spectral-tail and dial tables, `zoo.csv`, and the paper's own numbers beside ours.

use super::reference::{PAPER_REFERENCE, RECOVERED, REFERENCE_CLASS, is_reference};
use super::{Outcome, Reading, Rule, RunResult, ZooPreset, ZooSchedule};
use crate::metrics::mean_sd;
use crate::optim::Schedule;
use crate::sensing::SensingConfig;
use serde::{Deserialize, Serialize};

/// One rule's summary at its selected rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RuleSummary {
    /// Rule name.
    pub rule: String,
    /// Spectral-tail amplitude τ.
    pub tau: f64,
    /// Equivariant class.
    pub equivariant: bool,
    /// Selected rate.
    pub lr: f64,
    /// Whether every seed interpolated at that rate (the selection rule's condition).
    pub all_interpolated: bool,
    /// Seeds at this rate.
    pub seeds: usize,
    /// Mean, sd, min, max of recovery.
    pub recovery: [f64; 4],
    /// Mean, sd of effective rank.
    pub erank: [f64; 2],
    /// Mean, sd of balancedness.
    pub balancedness: [f64; 2],
    /// Mean final training loss.
    pub train_loss: f64,
    /// Mean twin drift, if twins ran.
    pub twin_drift: Option<f64>,
    /// Problem size, when the preset sweeps sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<usize>,
    /// Init scale, when the preset sweeps init scales.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init: Option<f64>,
    /// Schedule choice (left out when it is the paper's).
    #[serde(default, skip_serializing_if = "ZooSchedule::is_paper")]
    pub schedule: ZooSchedule,
    /// Mean gradient evaluations per run at that rate (steps plus a flow's extra ones), when
    /// any run of the sweep evaluated extra gradients (FlowAdam), so rules compare at equal
    /// cost; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gradients: Option<f64>,
}

/// What identifies a run's group besides its rate and seed: rule, τ, size, init and schedule,
/// floats by their bits (`==` would never match a NaN read from a damaged file, and such a
/// group would come out empty).
type GroupKey = (String, u64, Option<usize>, Option<u64>, ZooSchedule);

fn group_key(r: &RunResult) -> GroupKey {
    (
        r.rule.clone(),
        r.tau.to_bits(),
        r.n,
        r.init.map(f64::to_bits),
        r.schedule,
    )
}

/// Whether `r` belongs to the group of `s`.
fn in_group(s: &RuleSummary, r: &RunResult) -> bool {
    s.rule == r.rule
        && s.tau.to_bits() == r.tau.to_bits()
        && s.n == r.n
        && s.init.map(f64::to_bits) == r.init.map(f64::to_bits)
        && s.schedule == r.schedule
}

/// Selects each (rule, τ, size, init, schedule) group's rate by the paper's rule — the lowest
/// mean recovery among rates at which every seed interpolates; if no rate qualifies, the lowest
/// mean recovery overall, flagged — and summarises it. Groups in first-appearance order.
/// Convex-reference rows are left out: they are no rule's.
pub fn summarise(results: &[RunResult]) -> Vec<RuleSummary> {
    let results: Vec<RunResult> = results
        .iter()
        .filter(|r| !is_reference(r))
        .cloned()
        .collect();
    let results = &results[..];
    let flows = results.iter().any(|r| r.extra_gradients > 0);
    let mut groups: Vec<GroupKey> = Vec::new();
    for r in results {
        let key = group_key(r);
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    groups
        .iter()
        .map(|key| {
            let (name, tau) = (&key.0, &key.1);
            let mine: Vec<&RunResult> = results.iter().filter(|r| group_key(r) == *key).collect();
            let mut lrs: Vec<f64> = mine.iter().map(|r| r.lr).collect();
            lrs.sort_by(f64::total_cmp);
            lrs.dedup_by(|a, b| a.to_bits() == b.to_bits());
            let at = |lr: f64| -> Vec<&RunResult> {
                mine.iter()
                    .copied()
                    .filter(|r| r.lr.to_bits() == lr.to_bits())
                    .collect()
            };
            let mean_rec =
                |lr: f64| mean_sd(&at(lr).iter().map(|r| r.recovery).collect::<Vec<_>>()).0;
            let ok = |lr: f64| at(lr).iter().all(|r| r.outcome == Outcome::Interpolated);
            let best = |pool: &mut dyn Iterator<Item = f64>| {
                pool.filter(|&lr| mean_rec(lr).is_finite())
                    .min_by(|&a, &b| mean_rec(a).total_cmp(&mean_rec(b)))
            };
            // `mine` holds at least the run that opened the group, so `lrs` is not empty.
            let chosen = best(&mut lrs.iter().copied().filter(|&lr| ok(lr)))
                .or_else(|| best(&mut lrs.iter().copied()))
                .unwrap_or(lrs[0]);
            let runs = at(chosen);
            let col = |f: fn(&RunResult) -> f64| runs.iter().map(|r| f(r)).collect::<Vec<f64>>();
            let rec = col(|r| r.recovery);
            let (rm, rs) = mean_sd(&rec);
            let (em, es) = mean_sd(&col(|r| r.erank));
            let (bm, bs) = mean_sd(&col(|r| r.balancedness));
            let drifts: Vec<f64> = runs.iter().filter_map(|r| r.twin_drift).collect();
            RuleSummary {
                rule: name.clone(),
                tau: f64::from_bits(*tau),
                equivariant: runs[0].equivariant,
                lr: chosen,
                all_interpolated: ok(chosen),
                seeds: runs.len(),
                recovery: [
                    rm,
                    rs,
                    rec.iter().copied().fold(f64::INFINITY, f64::min),
                    rec.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                ],
                erank: [em, es],
                balancedness: [bm, bs],
                train_loss: mean_sd(&col(|r| r.train_loss)).0,
                twin_drift: (!drifts.is_empty()).then(|| mean_sd(&drifts).0),
                n: key.2,
                init: key.3.map(f64::from_bits),
                schedule: key.4,
                gradients: flows
                    .then(|| mean_sd(&col(|r| (r.steps as u64 + r.extra_gradients) as f64)).0),
            }
        })
        .collect()
}

/// The largest recovery of any equivariant rule and the smallest of any coordinate-wise one
/// over every seed at the selected rates: a gap exists when the first is below the second.
pub fn class_gap(summaries: &[RuleSummary]) -> Option<(f64, f64)> {
    let eq = summaries
        .iter()
        .filter(|s| s.equivariant)
        .map(|s| s.recovery[3]);
    let co = summaries
        .iter()
        .filter(|s| !s.equivariant)
        .map(|s| s.recovery[2]);
    let top = eq.fold(f64::NEG_INFINITY, f64::max);
    let bottom = co.fold(f64::INFINITY, f64::min);
    (top.is_finite() && bottom.is_finite()).then_some((top, bottom))
}

/// `zoo.csv`: one row per run in cell order (rule, class, then n, init and schedule when the
/// runs sweep them, τ, rate, seed, steps, outcome, final training loss, recovery, effective
/// rank, balancedness, twin drift), with `selected` 1 for the runs at the rate [`summarise`]
/// picked for their group, and `extra_gradients` last when a run evaluated any (FlowAdam). A convex-reference row ([`is_reference`]) comes after the runs, in
/// the class `reference`, with its iterations as steps, no rate, balancedness, twin drift or
/// selection, and the loss, recovery and effective rank of its matrix.
pub fn csv_bytes(results: &[RunResult], summaries: &[RuleSummary]) -> Result<Vec<u8>, csv::Error> {
    use crate::output::csv_num as num;
    let has_n = results.iter().any(|r| r.n.is_some());
    let has_init = results.iter().any(|r| r.init.is_some());
    let has_schedule = results.iter().any(|r| !r.schedule.is_paper());
    let has_flows = results.iter().any(|r| r.extra_gradients > 0);
    let mut csv = csv::Writer::from_writer(Vec::new());
    let mut head = vec!["rule", "class"];
    for (on, name) in [(has_n, "n"), (has_init, "init"), (has_schedule, "schedule")] {
        if on {
            head.push(name);
        }
    }
    head.extend([
        "tau",
        "lr",
        "seed",
        "steps",
        "outcome",
        "train_loss",
        "recovery",
        "erank",
        "balancedness",
        "twin_drift",
        "selected",
    ]);
    if has_flows {
        head.push("extra_gradients");
    }
    csv.write_record(&head)?;
    for r in results {
        if is_reference(r) {
            let mut row = vec![r.rule.clone(), REFERENCE_CLASS.to_string()];
            if has_n {
                row.push(r.n.map_or(String::new(), |n| n.to_string()));
            }
            row.extend(
                [has_init, has_schedule]
                    .iter()
                    .filter(|on| **on)
                    .map(|_| String::new()),
            );
            row.extend([
                num(r.tau),
                String::new(),
                r.seed.to_string(),
                r.steps.to_string(),
                format!("{:?}", r.outcome),
                num(r.train_loss),
                num(r.recovery),
                num(r.erank),
                String::new(),
                String::new(),
                String::new(),
            ]);
            if has_flows {
                row.push(String::new());
            }
            csv.write_record(&row)?;
            continue;
        }
        let selected = summaries
            .iter()
            .any(|s| in_group(s, r) && s.lr.to_bits() == r.lr.to_bits());
        let mut row = vec![
            r.rule.clone(),
            crate::optim::class_word(super::names_chain(&r.rule), r.equivariant).into(),
        ];
        if has_n {
            row.push(r.n.map_or(String::new(), |n| n.to_string()));
        }
        if has_init {
            row.push(r.init.map_or(String::new(), num));
        }
        if has_schedule {
            row.push(r.schedule.token().into());
        }
        row.extend([
            num(r.tau),
            num(r.lr),
            r.seed.to_string(),
            r.steps.to_string(),
            format!("{:?}", r.outcome),
            num(r.train_loss),
            num(r.recovery),
            num(r.erank),
            num(r.balancedness),
            r.twin_drift.map_or(String::new(), num),
            (selected as u8).to_string(),
        ]);
        if has_flows {
            row.push(r.extra_gradients.to_string());
        }
        csv.write_record(&row)?;
    }
    csv.into_inner().map_err(|e| e.into_error().into())
}

/// Writes `zoo.csv` ([`csv_bytes`]), `zoo.json` (the preset, every run, the summaries and the
/// wall time) and `zoo.md` ([`markdown`]) in `set`, to be renamed into place together; returns
/// the Markdown. Errors name the file.
pub fn write_report(
    set: &mut crate::output::OutputSet,
    preset: &ZooPreset,
    results: &[RunResult],
    seconds: f64,
) -> anyhow::Result<String> {
    let summaries = summarise(results);
    set.write("zoo.csv", &csv_bytes(results, &summaries)?)?;
    let json = serde_json::json!({"preset": preset, "runs": results, "summary": summaries, "seconds": seconds});
    set.write("zoo.json", &serde_json::to_vec_pretty(&json)?)?;
    let md = markdown(preset, &summaries, results);
    set.write("zoo.md", md.as_bytes())?;
    Ok(md)
}

/// A Markdown table in the shape of the paper's Table 2, with our spread beside its means, and
/// the convex reference's section after it when `results` hold reference rows.
pub fn markdown(preset: &ZooPreset, summaries: &[RuleSummary], results: &[RunResult]) -> String {
    let paper = paper_problem(preset, None, preset.tau_values()[0], ZooSchedule::Paper)
        && preset.problem.n == 40
        && preset.sizes.is_empty()
        && preset.tau_values() == [0.0];
    let runs: Vec<RunResult> = results
        .iter()
        .filter(|r| !is_reference(r))
        .cloned()
        .collect();
    runs_markdown(preset, summaries, &runs)
        + &readings_markdown(preset, &runs)
        + &reference_markdown(results, paper)
}

/// The fit read along the way ([`RunResult::readings`], the paper's Table 10): per rule and
/// rate, the mean recovery over the seeds that reached each of the preset's loss levels (and how
/// many did), then the effective rank at the deepest level reached by all of them. Empty
/// without levels.
fn readings_markdown(preset: &ZooPreset, runs: &[RunResult]) -> String {
    let levels = &preset.loss_levels;
    if levels.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\n## Recovery along the fit (read at the first check where the training loss is at or \
         below each level; mean over the seeds that got there)\n\n| rule | lr |",
    );
    for l in levels {
        s.push_str(&format!(" ≤ {l:e} |"));
    }
    s.push_str(" erank at the deepest |\n|---|---|");
    s.push_str(&"---|".repeat(levels.len() + 1));
    s.push('\n');
    // One row per group (rule, τ, size, init, schedule) and rate, in run order.
    let mut seen: Vec<(GroupKey, u64)> = Vec::new();
    let swept = preset.sizes.len() > 1
        || preset.inits.len() > 1
        || preset.schedules.len() > 1
        || preset.taus.len() > 1;
    for r in runs {
        let key = (group_key(r), r.lr.to_bits());
        if seen.contains(&key) {
            continue;
        }
        let at: Vec<&RunResult> = runs
            .iter()
            .filter(|x| group_key(x) == key.0 && x.lr.to_bits() == key.1)
            .collect();
        seen.push(key);
        let cell = if swept {
            let c: Column = (r.n, r.init.map(f64::to_bits), r.schedule);
            format!(" ({}, τ = {})", column_label(&c), r.tau)
        } else {
            String::new()
        };
        s.push_str(&format!("| {}{cell} | {} |", md(&r.rule), r.lr));
        let mut deepest = None;
        for (i, _) in levels.iter().enumerate() {
            let got: Vec<&Reading> = at.iter().filter_map(|x| x.readings.get(i)).collect();
            if got.is_empty() {
                s.push_str(" — |");
                continue;
            }
            let (m, _) = mean_sd(&got.iter().map(|g| g.recovery).collect::<Vec<_>>());
            s.push_str(&format!(" {} ({} of {}) |", fmt4(m), got.len(), at.len()));
            if got.len() == at.len() {
                deepest = Some(mean_sd(&got.iter().map(|g| g.erank).collect::<Vec<_>>()).0);
            }
        }
        let erank = deepest.map_or("—".to_string(), |e| format!("{e:.2}"));
        s.push_str(&format!(" {erank} |\n"));
    }
    s
}

/// [`markdown`] of the rules' runs.
fn runs_markdown(preset: &ZooPreset, summaries: &[RuleSummary], results: &[RunResult]) -> String {
    let taus = preset.tau_values();
    let tau_text = taus
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let list = |v: Vec<String>| v.join(", ");
    let sizes = if preset.sizes.is_empty() {
        format!(
            "n = {}, r = {}, m = {} measurements (ratio {} × dof {})",
            preset.problem.n,
            preset.problem.rank,
            preset.problem.measurements(),
            preset.problem.ratio,
            preset.problem.dof()
        )
    } else {
        format!(
            "n = {}, r = {}, m = ratio {} × dof r(2n − r) measurements",
            list(preset.sizes.iter().map(|n| n.to_string()).collect()),
            preset.problem.rank,
            preset.problem.ratio
        )
    };
    let inits = list(preset.init_values().iter().map(|x| x.to_string()).collect());
    let own: Vec<String> = preset
        .rule_budgets
        .0
        .iter()
        .map(|(r, b)| format!(", {} {b}", r.name()))
        .collect();
    let mut s = format!(
        "# {}\n\n{}\n\n{sizes}, init {inits}, τ = {}, budget {} steps{}, {} seed(s) from {}; f64.\n\n",
        preset.name,
        preset.description,
        tau_text,
        preset.budget,
        own.concat(),
        preset.seeds,
        preset.seed
    );
    if !preset.schedules.is_empty() {
        s.push_str(&format!(
            "Schedules: {}.\n\n",
            list(
                preset
                    .schedules
                    .iter()
                    .map(|x| x.name().to_string())
                    .collect()
            )
        ));
    }
    if taus.len() > 1 {
        return s + &tail_markdown(preset, summaries, &taus);
    }
    if preset.sizes.len() > 1 || preset.inits.len() > 1 || preset.schedules.len() > 1 {
        s.push_str(&across_markdown(preset, summaries));
        if preset.grid || !preset.rates.is_empty() || !preset.rule_rates.is_empty() {
            s.push_str(&rates_markdown(preset, results));
        }
        return s;
    }
    let twins = summaries.iter().any(|r| r.twin_drift.is_some());
    let flows = summaries.iter().any(|r| r.gradients.is_some());
    s.push_str("| rule | class | lr | recovery mean ± sd [min, max] | erank | balancedness | train loss | interpolated |");
    s.push_str(if twins { " twin drift |" } else { "" });
    s.push_str(if flows { " gradients |" } else { "" });
    s.push_str(" paper rec / erank / bal |\n|---|---|---|---|---|---|---|---|");
    s.push_str(if twins { "---|" } else { "" });
    s.push_str(if flows { "---|" } else { "" });
    s.push_str("---|\n");
    for r in summaries {
        let drift = match (twins, r.twin_drift) {
            (false, _) => String::new(),
            (true, None) => " — |".to_string(),
            (true, Some(d)) => format!(" {d:.1e} |"),
        };
        let drift = match r.gradients {
            Some(g) if flows => format!("{drift} {g:.0} |"),
            _ => drift,
        };
        let paper = paper_row(preset, r).unwrap_or_else(|| "—".to_string());
        s.push_str(&format!(
            "| {} | {} | {} | {} ± {} [{}, {}] | {:.2} ± {:.2} | {:.2} ± {:.2} | {:.1e} | {} |{drift} {} |\n",
            md(&r.rule),
            crate::optim::class_word(super::names_chain(&r.rule), r.equivariant),
            r.lr,
            fmt4(r.recovery[0]),
            fmt4(r.recovery[1]),
            fmt4(r.recovery[2]),
            fmt4(r.recovery[3]),
            r.erank[0],
            r.erank[1],
            r.balancedness[0],
            r.balancedness[1],
            r.train_loss,
            if r.all_interpolated { "all seeds" } else { "not all" },
            paper
        ));
    }
    s.push_str(
        "\n*interpolated*: the pre-update training loss fell below 1e-7 at one of the checks made \
         every 200 steps before the budget ran out (a cosine-scheduled rule may only get there at \
         the last steps, after the final check). Each rule's rate is the paper's, or with a grid \
         the lowest mean recovery among rates at which every seed interpolated (if none did, the \
         lowest mean overall, marked *not all*).\n",
    );
    if !preset.rule_rates.is_empty() {
        s.push_str(&rates_markdown(preset, results));
    } else if preset.grid || !preset.rates.is_empty() {
        s.push_str("\n## Every rate\n\n| rule | lr | recovery mean ± sd | seeds interpolated |\n|---|---|---|---|\n");
        let mut seen: Vec<(String, u64)> = Vec::new();
        for r in results {
            let key = (r.rule.clone(), r.lr.to_bits());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let at: Vec<&RunResult> = results
                .iter()
                .filter(|x| x.rule == r.rule && x.lr.to_bits() == r.lr.to_bits())
                .collect();
            let (m, sd) = mean_sd(&at.iter().map(|x| x.recovery).collect::<Vec<_>>());
            let ok = at
                .iter()
                .filter(|x| x.outcome == Outcome::Interpolated)
                .count();
            s.push_str(&format!(
                "| {} | {} | {} ± {} | {ok} of {} |\n",
                md(&r.rule),
                r.lr,
                fmt4(m),
                fmt4(sd),
                at.len()
            ));
        }
    }
    // A preset of one rule at several values of its argument (the anisotropy dial).
    if preset.rules.iter().all(|r| r.arg().is_some()) {
        let paper_dial = paper_dial(preset);
        s.push_str("\n## Anisotropy dial\n\n| p | recovery mean ± sd | erank | paper envelope |\n|---|---|---|---|\n");
        for r in &preset.rules {
            let Some(p) = r.arg() else { continue };
            if let Some(x) = summaries.iter().find(|x| x.rule == r.name()) {
                let paper = PAPER_DIAL
                    .iter()
                    .find(|row| row.0 == p && paper_dial)
                    .map_or("—".to_string(), |row| format!("{:.3}", row.1));
                s.push_str(&format!(
                    "| {p} | {:.3} ± {:.3} | {:.2} | {paper} |\n",
                    x.recovery[0], x.recovery[1], x.erank[0]
                ));
            }
        }
        return s;
    }
    if let Some((top, bottom)) = class_gap(summaries) {
        if summaries.iter().any(|r| !r.all_interpolated) {
            s.push_str(
                "\nNot every selected run interpolated: the comparison below includes unfinished fits.\n",
            );
        }
        s.push_str(&format!(
            "\nWorst equivariant seed: {top:.4}; best coordinate-wise seed: {bottom:.4}. {}\n",
            if top < bottom {
                "The classes do not overlap: a gap separates them."
            } else {
                "The per-seed ranges of the two classes overlap."
            }
        ));
    }
    s
}

/// A run's column in [`across_markdown`]: its size, init scale (bits) and schedule choice.
type Column = (Option<usize>, Option<u64>, ZooSchedule);

fn column_of(s: &RuleSummary) -> Column {
    (s.n, s.init.map(f64::to_bits), s.schedule)
}

/// A column's heading: the values the preset sweeps.
fn column_label(c: &Column) -> String {
    let mut parts = Vec::new();
    if let Some(n) = c.0 {
        parts.push(format!("n = {n}"));
    }
    if let Some(x) = c.1 {
        parts.push(format!("init {}", f64::from_bits(x)));
    }
    if !c.2.is_paper() {
        parts.push(c.2.name().to_string());
    }
    parts.join(", ")
}

/// Whether the sensing problems of `p` have the paper's shape whatever their size, init and τ:
/// rank 3, m = 2·dof measurements.
fn paper_sensing(p: &SensingConfig) -> bool {
    p.rank == 3 && p.ratio == 2.0
}

/// Whether a cell of `preset` (its init and schedule, if swept, and τ) is the paper's problem
/// apart from the size: [`paper_sensing`], τ = 0, init 1e-3, each rule's paper schedule.
fn paper_problem(preset: &ZooPreset, init: Option<f64>, tau: f64, schedule: ZooSchedule) -> bool {
    paper_sensing(&preset.problem)
        && tau == 0.0
        && init.unwrap_or(preset.problem.init) == 1e-3
        && schedule.is_paper()
}

/// Whether `preset` runs the problem of the paper's Table 4, whose curves its figure and table
/// draw beside ours: n = 40, [`paper_sensing`], init 1e-3, the paper's schedules, no size or
/// init sweep, any τ (Table 4 sweeps it).
pub fn paper_base(preset: &ZooPreset) -> bool {
    let p = &preset.problem;
    p.n == 40
        && paper_sensing(p)
        && p.init == 1e-3
        && preset.sizes.is_empty()
        && preset.inits.is_empty()
        && preset.schedules.iter().all(|x| x.is_paper())
}

/// Whether `preset` runs the problem of the paper's anisotropy dial: [`paper_base`] at τ = 0.
pub fn paper_dial(preset: &ZooPreset) -> bool {
    paper_base(preset) && preset.tau_values() == [0.0]
}

/// Table 11's recovery of `rule` at size `n`, three decimals. Its signum column is the paper's
/// long-anneal variant, not Table 2's signum that the zoo runs, and the value says so.
fn table11(rule: &str, n: usize) -> Option<String> {
    let col = PAPER_TABLE11_RULES.iter().position(|r| *r == rule)?;
    let row = PAPER_TABLE11.iter().find(|r| r.0 == n)?;
    let x = format!("{:.3}", row.1[col]);
    Some(if rule == "signum" {
        format!("{x}, long-anneal variant")
    } else {
        x
    })
}

/// The paper's "rec / erank / bal" for the summary `r` of a one-table preset: Table 2 for its
/// problem (n = 40, [`paper_problem`]), Table 11's recovery (it gives no rank or balancedness)
/// at another of its sizes with that problem otherwise the same, and `None` for any other
/// problem, which the paper never ran.
fn paper_row(preset: &ZooPreset, r: &RuleSummary) -> Option<String> {
    let n = r.n.unwrap_or(preset.problem.n);
    if !paper_problem(preset, r.init, r.tau, r.schedule) {
        return None;
    }
    if n == 40 {
        let (a, b, c) = paper_table2(&r.rule)?;
        return Some(format!("{a:.4} / {b:.2} / {c:.2}"));
    }
    table11(&r.rule, n).map(|x| format!("{x} / — / — (Table 11)"))
}

/// The paper's recovery for `rule` in the column `c` of `preset` (whose cells share one τ):
/// Table 6 for a schedule and Table 8 for an init scale, both at n = 40; at init 1e-3 and the
/// paper's schedules Table 2 at n = 40 and Table 11 at its sizes; `None` when the cell is not
/// a problem the paper ran.
fn paper_across(preset: &ZooPreset, rule: &str, c: &Column) -> Option<String> {
    let p = &preset.problem;
    let n = c.0.unwrap_or(p.n);
    let init = c.1.map(f64::from_bits);
    if !paper_sensing(p) || preset.tau_values()[0] != 0.0 {
        return None;
    }
    let paper_init = init.unwrap_or(p.init) == 1e-3;
    if !c.2.is_paper() {
        if n != 40 || !paper_init {
            return None;
        }
        let col = [
            ZooSchedule::Constant,
            ZooSchedule::Cosine,
            ZooSchedule::CosineFullHorizon,
        ]
        .iter()
        .position(|x| *x == c.2)?;
        let row = PAPER_TABLE6.iter().find(|r| r.0 == rule)?;
        return Some(row.1[col].to_string());
    }
    if let Some(x) = init
        && n == 40
    {
        let col = PAPER_TABLE8_RULES.iter().position(|r| *r == rule)?;
        let row = PAPER_TABLE8.iter().find(|r| r.0 == x)?;
        return Some(format!("{:.3}", row.1[col]));
    }
    if !paper_init {
        return None;
    }
    if n == 40 {
        return paper_table2(rule).map(|(x, _, _)| format!("{x:.3}"));
    }
    table11(rule, n)
}

/// Recovery per rule (rows) across the preset's sizes, init scales or schedules (columns), at
/// each cell's selected rate, with the paper's value (Tables 6, 8, 11) beside ours.
fn across_markdown(preset: &ZooPreset, summaries: &[RuleSummary]) -> String {
    let mut columns: Vec<Column> = Vec::new();
    for x in summaries {
        if !columns.contains(&column_of(x)) {
            columns.push(column_of(x));
        }
    }
    let mut s = String::from(
        "## Recovery mean ± sd at the selected rate (lr), the paper's value beside ours\n\n| rule |",
    );
    for c in &columns {
        s.push_str(&format!(" {} |", column_label(c)));
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(columns.len()));
    s.push('\n');
    for rule in &preset.rules {
        let name = rule.name();
        s.push_str(&format!("| {} |", md(&name)));
        for c in &columns {
            match summaries
                .iter()
                .find(|x| x.rule == name && column_of(x) == *c)
            {
                Some(x) => s.push_str(&format!(
                    " {} ± {}{} (lr {}; paper {}) |",
                    fmt3(x.recovery[0]),
                    fmt3(x.recovery[1]),
                    if x.all_interpolated { "" } else { " †" },
                    x.lr,
                    paper_across(preset, &name, c).unwrap_or_else(|| "—".into())
                )),
                None => s.push_str(" — |"),
            }
        }
        s.push('\n');
    }
    if summaries.iter().any(|x| !x.all_interpolated) {
        s.push_str(
            "\n† not every seed interpolated at the selected rate (no rate of the cell had every \
             seed interpolate): the recovery is that of an unfinished fit.\n",
        );
    }
    s
}

/// Three decimals, or two significant digits in scientific notation below 1e-3.
fn fmt3(x: f64) -> String {
    if x != 0.0 && x.abs() < 1e-3 {
        format!("{x:.1e}")
    } else {
        format!("{x:.3}")
    }
}

/// The mark of one rate of a rule's row (the paper's Table 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RateMark {
    /// Nothing to mark: every seed interpolated.
    None,
    /// `→fl`: on a row run at a constant rate, the lowest rate at which every seed
    /// interpolates, when it lies below the rule's benchmark rate (the flow-limit-aligned
    /// column beside the benchmark one).
    FlowLimit,
    /// `n/i`: not every seed interpolated within the budget and none diverged; the recovery
    /// is that of an unfinished fit.
    NotInterpolated,
    /// `div`: at least one seed diverged.
    Diverged,
}

impl RateMark {
    /// As the paper writes it.
    pub fn text(self) -> &'static str {
        match self {
            RateMark::None => "",
            RateMark::FlowLimit => "→fl",
            RateMark::NotInterpolated => "n/i",
            RateMark::Diverged => "div",
        }
    }
}

/// One rate of one group (rule, τ, size, init, schedule) over its seeds.
#[derive(Clone, Debug, PartialEq)]
pub struct RateRow {
    /// Rule name.
    pub rule: String,
    /// Index into the results of the group's first run (for its τ, size, init, schedule).
    pub first: usize,
    /// Peak rate.
    pub lr: f64,
    /// Mean and sd of recovery over the seeds.
    pub recovery: [f64; 2],
    /// Seeds that interpolated, diverged, and in all.
    pub interpolated: usize,
    /// Seeds that diverged.
    pub diverged: usize,
    /// Seeds at this rate.
    pub seeds: usize,
    /// Its mark.
    pub mark: RateMark,
}

/// Every (group, rate) of `results` in first-appearance order, with the paper's Table 7 marks:
/// `div` when a seed diverged, `n/i` when not every seed interpolated, `→fl` on the lowest
/// rate at which every seed interpolated when the row runs at a constant rate and that rate
/// lies below the rule's benchmark rate ([`Rule::default_lr`]). `preset` gives each rule's
/// schedule and benchmark rate.
pub fn rate_rows(preset: &ZooPreset, results: &[RunResult]) -> Vec<RateRow> {
    let mut rows: Vec<(GroupKey, RateRow)> = Vec::new();
    for (i, r) in results.iter().enumerate() {
        let key = group_key(r);
        if rows
            .iter()
            .any(|(k, row)| *k == key && row.lr.to_bits() == r.lr.to_bits())
        {
            continue;
        }
        let at: Vec<&RunResult> = results
            .iter()
            .filter(|x| group_key(x) == key && x.lr.to_bits() == r.lr.to_bits())
            .collect();
        let (m, sd) = mean_sd(&at.iter().map(|x| x.recovery).collect::<Vec<_>>());
        let count = |o: Outcome| at.iter().filter(|x| x.outcome == o).count();
        let (interpolated, diverged) = (count(Outcome::Interpolated), count(Outcome::Diverged));
        let mark = if diverged > 0 {
            RateMark::Diverged
        } else if interpolated < at.len() {
            RateMark::NotInterpolated
        } else {
            RateMark::None
        };
        rows.push((
            key,
            RateRow {
                rule: r.rule.clone(),
                first: i,
                lr: r.lr,
                recovery: [m, sd],
                interpolated,
                diverged,
                seeds: at.len(),
                mark,
            },
        ));
    }
    let mut keys: Vec<GroupKey> = Vec::new();
    for (k, _) in &rows {
        if !keys.contains(k) {
            keys.push(k.clone());
        }
    }
    for key in &keys {
        let Some(rule) = preset.rules.iter().find(|r| r.name() == key.0) else {
            continue;
        };
        let constant = match key.4 {
            ZooSchedule::Paper => rule.schedule() == Schedule::Constant,
            ZooSchedule::Constant => true,
            ZooSchedule::Cosine | ZooSchedule::CosineFullHorizon => false,
        };
        if !constant {
            continue;
        }
        let lowest = rows
            .iter_mut()
            .filter(|(k, row)| k == key && row.mark == RateMark::None)
            .min_by(|a, b| a.1.lr.total_cmp(&b.1.lr));
        if let Some((_, row)) = lowest
            && row.lr < rule.default_lr()
        {
            row.mark = RateMark::FlowLimit;
        }
    }
    rows.into_iter().map(|(_, row)| row).collect()
}

/// Every rate of every rule with its Table 7 mark and the paper's recovery at that rate.
fn rates_markdown(preset: &ZooPreset, results: &[RunResult]) -> String {
    let swept = preset.sizes.len() > 1 || preset.inits.len() > 1 || preset.schedules.len() > 1;
    let mut s = String::from(
        "\n## Every rate (→fl: lowest interpolating rate below the benchmark one, at a constant \
         rate; n/i: not every seed interpolated; div: a seed diverged)\n\n| rule |",
    );
    s.push_str(if swept { " cell |" } else { "" });
    s.push_str(
        " lr | recovery mean ± sd | seeds interpolated | mark | paper |\n|---|---|---|---|---|---|",
    );
    s.push_str(if swept { "---|\n" } else { "\n" });
    for row in rate_rows(preset, results) {
        let r = &results[row.first];
        let table7 = r.n.unwrap_or(preset.problem.n) == 40
            && paper_problem(preset, r.init, r.tau, r.schedule);
        let paper = if table7 {
            paper_table7(&row.rule, row.lr)
        } else {
            None
        };
        let paper = paper.map_or("—".to_string(), |(x, mark)| match (x, mark) {
            (Some(x), "") => format!("{x:.3}"),
            (Some(x), "n/i") => format!("({x:.3} n/i)"),
            (Some(x), m) => format!("{x:.3} {m}"),
            (None, m) => m.to_string(),
        });
        let ours = match row.mark {
            RateMark::Diverged => "div".to_string(),
            RateMark::NotInterpolated => format!(
                "({} ± {} n/i)",
                fmt3(row.recovery[0]),
                fmt3(row.recovery[1])
            ),
            _ => format!("{} ± {}", fmt3(row.recovery[0]), fmt3(row.recovery[1])),
        };
        let cell = if swept {
            let c: Column = (r.n, r.init.map(f64::to_bits), r.schedule);
            format!(" {} |", column_label(&c))
        } else {
            String::new()
        };
        s.push_str(&format!(
            "| {} |{cell} {} | {ours} | {} of {} | {} | {paper} |\n",
            md(&row.rule),
            row.lr,
            row.interpolated,
            row.seeds,
            row.mark.text()
        ));
    }
    s
}

/// A rule's name in a Markdown table cell: a chain's `|` escaped, so the row keeps its cells.
fn md(name: &str) -> String {
    name.replace('|', "\\|")
}

/// The Markdown section of the reference rows in `results` (empty when there are none): one
/// line per instance, the fraction recovered and the means, and the paper's seeds beside them
/// when `paper` (the preset runs the paper's problem).
pub fn reference_markdown(results: &[RunResult], paper: bool) -> String {
    let rows: Vec<&RunResult> = results.iter().filter(|r| is_reference(r)).collect();
    if rows.is_empty() {
        return String::new();
    }
    let sized = rows.iter().any(|r| r.n.is_some());
    let mut s = String::from(
        "\n## Convex reference: the minimum-nuclear-norm matrix of the measurements\n\n\
         Not an optimizer: per instance, argmin ‖X‖* subject to ⟨A_i, X⟩ = y_i, by \
         Douglas–Rachford (ρ = 1) to ‖X − Z‖F, ‖Z_new − Z‖F < 1e-11 or 2·10⁴ iterations; the \
         matrix reported is its projection onto the measurements.\n\n| seed |",
    );
    s.push_str(if sized { " n |" } else { "" });
    s.push_str(
        " τ | iterations | stopped | primal / dual residual | feasibility | ‖X‖* / ‖X*‖* | \
         recovery | erank |\n|---|---|---|---|---|---|---|---|---|",
    );
    s.push_str(if sized { "---|\n" } else { "\n" });
    for r in &rows {
        let st = r.reference.as_ref().expect("a reference row");
        let size = r.n.map_or(String::new(), |n| format!(" {n} |"));
        s.push_str(&format!(
            "| {} |{size} {} | {} | {} | {:.1e} / {:.1e} | {:.1e} | {:.4} / {:.4} | {} | {:.2} |\n",
            r.seed,
            r.tau,
            r.steps,
            match r.outcome {
                Outcome::Converged => "tolerance",
                Outcome::Budget => "iteration cap",
                Outcome::Cancelled => "cancelled",
                _ => "A Aᵀ singular",
            },
            st.primal,
            st.dual,
            st.feasibility,
            st.nuclear_norm,
            st.target_nuclear_norm,
            fmt4(r.recovery),
            r.erank
        ));
    }
    let mut groups: Vec<(Option<usize>, u64)> = Vec::new();
    for r in &rows {
        if !groups.contains(&(r.n, r.tau.to_bits())) {
            groups.push((r.n, r.tau.to_bits()));
        }
    }
    s.push('\n');
    for (n, tau) in groups {
        let mine: Vec<&&RunResult> = rows
            .iter()
            .filter(|r| r.n == n && r.tau.to_bits() == tau)
            .collect();
        let rec: Vec<f64> = mine.iter().map(|r| r.recovery).collect();
        let (m, sd) = mean_sd(&rec);
        let (e, _) = mean_sd(&mine.iter().map(|r| r.erank).collect::<Vec<_>>());
        let hit = rec.iter().filter(|&&x| x < RECOVERED).count();
        s.push_str(&format!(
            "{}τ = {}: X* recovered (recovery < {RECOVERED:e}) in {hit} of {} instances; \
             recovery {} ± {} [{}, {}], erank {e:.2}.\n",
            n.map_or(String::new(), |n| format!("n = {n}, ")),
            f64::from_bits(tau),
            rec.len(),
            fmt4(m),
            fmt4(sd),
            fmt4(rec.iter().copied().fold(f64::INFINITY, f64::min)),
            fmt4(rec.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
        ));
    }
    if paper {
        s.push_str(&format!(
            "\nThe paper (its own generator, seeds {}): recovery {}, erank {} — exact on two \
             instances of three, mean 0.0335.\n",
            PAPER_REFERENCE.map(|r| r.0.to_string()).join(", "),
            PAPER_REFERENCE.map(|r| format!("{:.4}", r.1)).join(", "),
            PAPER_REFERENCE.map(|r| format!("{:.2}", r.2)).join(", "),
        ));
    }
    s
}

/// Four decimals, or two significant digits in scientific notation below 1e-3.
pub fn fmt4(x: f64) -> String {
    if x != 0.0 && x.abs() < 1e-3 {
        format!("{x:.1e}")
    } else {
        format!("{x:.4}")
    }
}

/// The spectral-tail table: recovery mean ± sd per (τ, rule), beside the paper's Table 4.
fn tail_markdown(preset: &ZooPreset, summaries: &[RuleSummary], taus: &[f64]) -> String {
    let mut s = String::new();
    s.push_str("\n## Spectral tail: recovery mean ± sd against τ\n\n| τ |");
    let rules: Vec<String> = preset.rules.iter().map(|r| r.name()).collect();
    for r in &rules {
        s.push_str(&format!(" {} |", md(r)));
    }
    s.push_str(" paper GD / Adam / Muon / Shampoo |\n|---|");
    s.push_str(&"---|".repeat(rules.len() + 1));
    s.push('\n');
    for &tau in taus {
        s.push_str(&format!("| {tau} |"));
        for r in &rules {
            match summaries.iter().find(|x| &x.rule == r && x.tau == tau) {
                Some(x) => s.push_str(&format!(
                    " {:.3} ± {:.3}{} |",
                    x.recovery[0],
                    x.recovery[1],
                    if x.all_interpolated { "" } else { " †" }
                )),
                None => s.push_str(" — |"),
            }
        }
        let paper = PAPER_TAIL
            .iter()
            .find(|row| row.0 == tau && paper_base(preset))
            .map_or("—".to_string(), |row| {
                format!("{:.3} / {:.3} / {:.3} / {:.3}", row.1, row.2, row.3, row.4)
            });
        s.push_str(&format!(" {paper} |\n"));
    }
    if summaries.iter().any(|x| !x.all_interpolated) {
        s.push_str(
            "\n† not every seed interpolated within the budget: the recovery is that of an \
             unfinished fit (with a tail, τ > 0, the target has full rank).\n",
        );
    }
    s
}

/// The paper's Table 2 in its order of recovery: rule, mean recovery, effective rank and
/// balancedness over 3 seeds (float32).
pub const PAPER_TABLE2: [(&str, f64, f64, f64); 9] = [
    ("muon", 0.0000, 2.95, 1.65),
    ("gd", 0.1312, 4.51, 0.06),
    ("scalar_adam", 0.2010, 5.43, 0.14),
    ("shampoo", 0.2856, 6.95, 1.47),
    ("lion", 0.4248, 10.58, 7.35),
    ("signum", 0.4454, 7.83, 1.79),
    ("rmsprop", 0.5266, 12.80, 4.74),
    ("adafactor", 0.5430, 10.72, 3.40),
    ("adam", 0.5734, 14.37, 5.37),
];

/// The paper's Table 2 means (recovery, erank, balancedness) of the rule named `rule`.
pub fn paper_table2(rule: &str) -> Option<(f64, f64, f64)> {
    PAPER_TABLE2
        .iter()
        .find(|row| row.0 == rule)
        .map(|row| (row.1, row.2, row.3))
}

/// The nine rules of the paper's Table 2, in its order of recovery.
pub fn table2_rules() -> Vec<Rule> {
    PAPER_TABLE2
        .iter()
        .map(|row| Rule::named(row.0).expect("every Table 2 rule is registered"))
        .collect()
}

/// The rules of the paper's Table 4, in the order of [`PAPER_TAIL`]'s columns.
pub const PAPER_TAIL_RULES: [&str; 4] = ["gd", "adam", "muon", "shampoo"];

/// The paper's Table 4: recovery at τ for GD, Adam, Muon, Shampoo (3-seed means, float32).
pub const PAPER_TAIL: [(f64, f64, f64, f64, f64); 6] = [
    (0.0, 0.112, 0.542, 0.000, 0.334),
    (0.05, 0.150, 0.543, 0.095, 0.343),
    (0.1, 0.214, 0.555, 0.191, 0.375),
    (0.2, 0.351, 0.597, 0.354, 0.449),
    (0.35, 0.549, 0.685, 0.580, 0.576),
    (0.5, 0.727, 0.776, 0.752, 0.723),
];

/// The paper's Table 6: recovery of five reference methods under a constant rate, the cosine
/// schedule, and the cosine over the full horizon (3 seeds, best-recovery rate per cell). The
/// paper marks Muon's constant-rate value † (in parentheses).
pub const PAPER_TABLE6: [(&str, [&str; 3]); 5] = [
    ("gd", ["0.1312", "0.1312", "0.1312"]),
    ("adam", ["0.5734", "0.5734", "0.5764"]),
    ("scalar_adam", ["0.2010", "0.2010", "0.2010"]),
    ("muon", ["(0.0084†)", "0.0000", "0.0000"]),
    ("shampoo", ["0.2856", "0.2856", "0.2856"]),
];

/// The paper's Table 7: recovery against the learning rate (3-seed means) with its marks
/// (`→fl`, `n/i`, `div`; a diverged rate has no recovery).
pub const PAPER_TABLE7: [(&str, f64, Option<f64>, &str); 21] = [
    ("gd", 0.003, Some(0.113), "→fl"),
    ("gd", 0.01, Some(0.131), ""),
    ("gd", 0.03, Some(0.437), ""),
    ("gd", 0.1, None, "div"),
    ("adam", 0.0003, Some(0.560), "→fl"),
    ("adam", 0.001, Some(0.576), ""),
    ("adam", 0.003, Some(0.570), ""),
    ("adam", 0.01, Some(0.573), ""),
    ("adam", 0.03, Some(0.581), ""),
    ("scalar_adam", 0.0003, Some(0.165), "→fl"),
    ("scalar_adam", 0.001, Some(0.201), ""),
    ("scalar_adam", 0.003, Some(0.256), ""),
    ("scalar_adam", 0.01, Some(0.357), ""),
    ("muon", 0.003, Some(0.915), ""),
    ("muon", 0.01, Some(0.748), ""),
    ("muon", 0.03, Some(0.000), ""),
    ("muon", 0.1, Some(0.000), ""),
    ("shampoo", 0.01, Some(0.881), "n/i"),
    ("shampoo", 0.03, Some(0.286), ""),
    ("shampoo", 0.1, None, "div"),
    ("shampoo", 0.3, None, "div"),
];

/// The paper's Table 7 entry of `rule` at rate `lr`: recovery (none when diverged) and mark.
pub fn paper_table7(rule: &str, lr: f64) -> Option<(Option<f64>, &'static str)> {
    PAPER_TABLE7
        .iter()
        .find(|row| row.0 == rule && row.1 == lr)
        .map(|row| (row.2, row.3))
}

/// The rules of the paper's Table 8, in the order of [`PAPER_TABLE8`]'s columns.
pub const PAPER_TABLE8_RULES: [&str; 5] = ["gd", "adam", "scalar_adam", "muon", "shampoo"];

/// The paper's Table 8: recovery against the init scale (3 seeds).
// 0.318 is GD's measured recovery, not an approximation of 1/π.
#[allow(clippy::approx_constant)]
pub const PAPER_TABLE8: [(f64, [f64; 5]); 3] = [
    (1e-3, [0.131, 0.573, 0.201, 0.000, 0.286]),
    (3e-3, [0.203, 0.575, 0.260, 0.000, 0.352]),
    (1e-2, [0.318, 0.584, 0.358, 0.000, 0.575]),
];

/// The rules of the paper's Table 11, in the order of [`PAPER_TABLE11`]'s columns.
pub const PAPER_TABLE11_RULES: [&str; 9] = [
    "gd",
    "scalar_adam",
    "muon",
    "shampoo",
    "adam",
    "rmsprop",
    "lion",
    "adafactor",
    "signum",
];

/// The paper's Table 11: recovery against the size n (10 seeds, 4·10⁴ steps). Its n = 192 and
/// 256 rows need a bigger machine than the ladder preset assumes.
pub const PAPER_TABLE11: [(usize, [f64; 9]); 5] = [
    (
        64,
        [
            0.143, 0.195, 0.000, 0.646, 0.574, 0.596, 0.483, 0.612, 0.000,
        ],
    ),
    (
        96,
        [
            0.202, 0.279, 0.000, 0.595, 0.609, 0.615, 0.548, 0.687, 0.000,
        ],
    ),
    (
        128,
        [
            0.248, 0.345, 0.000, 0.659, 0.643, 0.617, 0.602, 0.745, 0.000,
        ],
    ),
    (
        192,
        [
            0.346, 0.468, 0.000, 0.838, 0.696, 0.669, 0.760, 0.817, 0.000,
        ],
    ),
    (
        256,
        [
            0.410, 0.548, 0.000, 0.918, 0.741, 0.708, 0.895, 0.867, 0.000,
        ],
    ),
];

/// The paper's dial envelope: recovery at p (3-seed means, float32).
pub const PAPER_DIAL: [(f64, f64); 5] = [
    (1.0, 0.570),
    (0.75, 0.459),
    (0.5, 0.348),
    (0.25, 0.260),
    (0.0, 0.201),
];

#[cfg(test)]
mod tests {
    use super::*;

    fn result(rule: &str, lr: f64, seed: u64, recovery: f64, outcome: Outcome) -> RunResult {
        RunResult {
            rule: rule.into(),
            equivariant: rule == "gd",
            lr,
            seed,
            tau: 0.0,
            steps: 200,
            extra_gradients: 0,
            outcome,
            train_loss: 1e-8,
            recovery,
            erank: 3.0,
            balancedness: 0.5,
            twin_drift: None,
            n: None,
            init: None,
            schedule: ZooSchedule::Paper,
            reference: None,
            readings: Vec::new(),
        }
    }

    #[test]
    fn the_csv_marks_the_selected_rate_of_each_rule() {
        use Outcome::{Budget, Interpolated};
        let results = [
            result("gd", 0.01, 0, 0.2, Interpolated),
            result("gd", 0.1, 0, 0.1, Interpolated),
            result("adam", 0.01, 0, 0.05, Budget),
            result("adam", 0.03, 0, 0.5, Interpolated),
        ];
        let bytes = csv_bytes(&results, &summarise(&results)).unwrap();
        let text = String::from_utf8(bytes).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "rule,class,tau,lr,seed,steps,outcome,train_loss,recovery,erank,balancedness,twin_drift,selected"
        );
        // GD's lower recovery wins; Adam's only rate where every seed interpolated wins.
        let selected: Vec<&str> = lines[1..].iter().map(|l| &l[l.len() - 1..]).collect();
        assert_eq!(selected, ["0", "1", "0", "1"]);
        assert_eq!(
            lines[1],
            "gd,equivariant,0,0.01,0,200,Interpolated,1e-8,0.2,3,0.5,,0"
        );
        assert!(lines[3].starts_with("adam,coordinate-wise,0,0.01,0,200,Budget,"));
    }

    #[test]
    fn the_paper_column_quotes_only_the_problem_the_paper_ran() {
        let preset = ZooPreset::default();
        let mut runs = [result("gd", 0.01, 0, 0.2, Outcome::Interpolated)];
        let at = |runs: &[RunResult], preset: &ZooPreset| {
            paper_row(preset, &summarise(runs)[0]).unwrap_or_default()
        };
        assert_eq!(at(&runs, &preset), "0.1312 / 4.51 / 0.06");
        // A one-size ladder rung at n = 64 is Table 11's row, not Table 2's n = 40.
        runs[0].n = Some(64);
        assert_eq!(at(&runs, &preset), "0.143 / — / — (Table 11)");
        runs[0].n = Some(20);
        assert_eq!(at(&runs, &preset), "");
        runs[0].n = None;
        runs[0].init = Some(1e-2);
        assert_eq!(at(&runs, &preset), "");
        runs[0].init = None;
        let mut other = preset.clone();
        other.problem.n = 96;
        runs[0].rule = "muon".into();
        assert_eq!(at(&runs, &other), "0.000 / — / — (Table 11)");
        other.problem.rank = 5;
        assert_eq!(at(&runs, &other), "");

        // The across tables and the rate table follow the same rule.
        let bits = |x: f64| Some(f64::to_bits(x));
        let cell = |p: &ZooPreset, c: Column| paper_across(p, "gd", &c);
        assert_eq!(
            cell(&preset, (Some(64), None, ZooSchedule::Paper)).as_deref(),
            Some("0.143")
        );
        assert_eq!(
            cell(&preset, (None, bits(1e-2), ZooSchedule::Paper)).as_deref(),
            Some("0.318")
        );
        assert_eq!(
            cell(&preset, (Some(64), bits(1e-2), ZooSchedule::Paper)),
            None
        );
        assert!(cell(&preset, (None, None, ZooSchedule::Constant)).is_some());
        assert_eq!(cell(&preset, (Some(64), None, ZooSchedule::Constant)), None);
        let mut tail = preset.clone();
        tail.problem.tau = 0.2;
        assert_eq!(cell(&tail, (Some(64), None, ZooSchedule::Paper)), None);
        // The one τ of `taus` is the runs' τ, whatever `problem.tau` says.
        tail.taus = vec![0.0];
        assert!(cell(&tail, (Some(64), None, ZooSchedule::Paper)).is_some());
        tail.problem.tau = 0.0;
        tail.taus = vec![0.2];
        assert_eq!(cell(&tail, (Some(64), None, ZooSchedule::Paper)), None);
        // A size-and-init sweep: init 1e-3 away from n = 40 is Table 11's problem.
        assert_eq!(
            cell(&preset, (Some(64), bits(1e-3), ZooSchedule::Paper)).as_deref(),
            Some("0.143")
        );
        // The ladder's n = 40 column is Table 2's problem.
        assert_eq!(
            cell(&preset, (Some(40), None, ZooSchedule::Paper)).as_deref(),
            Some("0.131")
        );
        assert_eq!(
            paper_across(&preset, "signum", &(Some(64), None, ZooSchedule::Paper)).as_deref(),
            Some("0.000, long-anneal variant")
        );
        let gd = [result("gd", 0.01, 0, 0.2, Outcome::Interpolated)];
        let last_cell = |p: &ZooPreset| {
            let md = rates_markdown(p, &gd);
            let row = md
                .lines()
                .find(|l| l.starts_with("| gd |"))
                .unwrap()
                .to_string();
            row.rsplit('|').nth(1).unwrap().trim().to_string()
        };
        assert_eq!(last_cell(&preset), "0.131");
        let mut n64 = preset.clone();
        n64.problem.n = 64;
        assert_eq!(last_cell(&n64), "—");
    }

    #[test]
    fn the_dial_and_tail_draw_the_paper_only_beside_its_own_problem() {
        use crate::figure::Body;
        use crate::sensing::zoo::bundled_zoo;
        use crate::sensing::zoo::figures::{dial_figure, tail_figure};
        // The paper's curves: dashed lines with data (the legend's "the paper" entry has none).
        let names = |f: crate::figure::Figure| match f.body {
            Body::Plot { marks, .. } => marks
                .into_iter()
                .filter(|m| {
                    matches!(&m.shape, crate::figure::Shape::Line { points, dash, .. }
                        if *dash == crate::figure::Dash::Dashed && !points.is_empty())
                })
                .count(),
            _ => panic!("a plot"),
        };
        let tail = bundled_zoo("tail");
        let dial = bundled_zoo("dial");
        assert!(paper_base(&tail) && paper_dial(&dial));
        let runs: Vec<RunResult> = tail
            .rules
            .iter()
            .map(|r| {
                let mut x = result(&r.name(), 0.01, 0, 0.2, Outcome::Interpolated);
                x.tau = 0.1;
                x
            })
            .collect();
        // Table 4's GD, Adam, Muon and Shampoo curves, only at the paper's n = 40.
        assert_eq!(names(tail_figure(&tail, &runs)), 4);
        let mut tail64 = tail.clone();
        tail64.problem.n = 64;
        assert!(!paper_base(&tail64));
        assert_eq!(names(tail_figure(&tail64, &runs)), 0);
        assert!(markdown(&tail, &summarise(&runs), &runs).contains("0.542"));
        assert!(!markdown(&tail64, &summarise(&runs), &runs).contains("0.542"));
        let dial_runs: Vec<RunResult> = dial
            .rules
            .iter()
            .map(|r| result(&r.name(), 0.01, 0, 0.3, Outcome::Interpolated))
            .collect();
        assert_eq!(names(dial_figure(&dial, &dial_runs)), 1);
        let mut dial_tail = dial.clone();
        dial_tail.problem.tau = 0.1;
        assert!(paper_base(&dial_tail) && !paper_dial(&dial_tail));
        assert_eq!(names(dial_figure(&dial_tail, &dial_runs)), 0);
        let md = markdown(&dial_tail, &summarise(&dial_runs), &dial_runs);
        assert!(
            md.contains("## Anisotropy dial") && !md.contains("0.570"),
            "{md}"
        );
        assert!(markdown(&dial, &summarise(&dial_runs), &dial_runs).contains("0.570"));
    }
}
