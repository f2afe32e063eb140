//! The zoo's tables: the paper's rate-selection rule, its Table 2 layout in Markdown, the
//! spectral-tail and dial tables, `zoo.csv`, and the paper's own numbers beside ours.

use super::{Outcome, Rule, RunResult, ZooPreset};
use crate::metrics::mean_sd;
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
}

/// Selects each (rule, τ)'s rate by the paper's rule — the lowest mean recovery among rates at which
/// every seed interpolates; if no rate qualifies, the lowest mean recovery overall, flagged —
/// and summarises it. Rules in first-appearance order.
pub fn summarise(results: &[RunResult]) -> Vec<RuleSummary> {
    // Groups are keyed by the exact bits of τ and the rate: `==` would never match a NaN read
    // from a damaged file, and such a group would come out empty.
    let mut groups: Vec<(String, u64)> = Vec::new();
    for r in results {
        if !groups
            .iter()
            .any(|(n, t)| *n == r.rule && *t == r.tau.to_bits())
        {
            groups.push((r.rule.clone(), r.tau.to_bits()));
        }
    }
    groups
        .iter()
        .map(|(name, tau)| {
            let mine: Vec<&RunResult> = results
                .iter()
                .filter(|r| &r.rule == name && r.tau.to_bits() == *tau)
                .collect();
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

/// `zoo.csv`: one row per run in cell order (rule, class, τ, rate, seed, steps, outcome, final
/// training loss, recovery, effective rank, balancedness, twin drift), with `selected` 1 for the
/// runs at the rate [`summarise`] picked for their rule and τ.
pub fn csv_bytes(results: &[RunResult], summaries: &[RuleSummary]) -> Result<Vec<u8>, csv::Error> {
    use crate::experiment::output::csv_num as num;
    let mut csv = csv::Writer::from_writer(Vec::new());
    csv.write_record([
        "rule",
        "class",
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
    ])?;
    for r in results {
        let selected = summaries.iter().any(|s| {
            s.rule == r.rule
                && s.tau.to_bits() == r.tau.to_bits()
                && s.lr.to_bits() == r.lr.to_bits()
        });
        csv.write_record([
            r.rule.clone(),
            crate::optim::class_name(r.equivariant).into(),
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
        ])?;
    }
    csv.into_inner().map_err(|e| e.into_error().into())
}

/// Writes `zoo.csv` ([`csv_bytes`]), `zoo.json` (the preset, every run, the summaries and the
/// wall time) and `zoo.md` ([`markdown`]) into `dir`, each atomically; returns the Markdown.
pub fn write_report(
    dir: &std::path::Path,
    preset: &ZooPreset,
    results: &[RunResult],
    seconds: f64,
) -> anyhow::Result<String> {
    use crate::experiment::output::write_atomic;
    let summaries = summarise(results);
    write_atomic(&dir.join("zoo.csv"), &csv_bytes(results, &summaries)?)?;
    let json = serde_json::json!({"preset": preset, "runs": results, "summary": summaries, "seconds": seconds});
    write_atomic(&dir.join("zoo.json"), &serde_json::to_vec_pretty(&json)?)?;
    let md = markdown(preset, &summaries, results);
    write_atomic(&dir.join("zoo.md"), md.as_bytes())?;
    Ok(md)
}

/// A Markdown table in the shape of the paper's Table 2, with our spread beside its means.
pub fn markdown(preset: &ZooPreset, summaries: &[RuleSummary], results: &[RunResult]) -> String {
    let taus = preset.tau_values();
    let tau_text = taus
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let mut s = format!(
        "# {}\n\n{}\n\nn = {}, r = {}, m = {} measurements (ratio {} × dof {}), init {}, τ = {}, budget {} steps, {} seed(s) from {}; f64.\n\n",
        preset.name,
        preset.description,
        preset.problem.n,
        preset.problem.rank,
        preset.problem.measurements(),
        preset.problem.ratio,
        preset.problem.dof(),
        preset.problem.init,
        tau_text,
        preset.budget,
        preset.seeds,
        preset.seed
    );
    if taus.len() > 1 {
        return s + &tail_markdown(preset, summaries, &taus);
    }
    let twins = summaries.iter().any(|r| r.twin_drift.is_some());
    s.push_str("| rule | class | lr | recovery mean ± sd [min, max] | erank | balancedness | train loss | interpolated |");
    s.push_str(if twins { " twin drift |" } else { "" });
    s.push_str(" paper rec / erank / bal |\n|---|---|---|---|---|---|---|---|");
    s.push_str(if twins { "---|" } else { "" });
    s.push_str("---|\n");
    for r in summaries {
        let paper = paper_table2(&r.rule).map_or("—".to_string(), |(a, b, c)| {
            format!("{a:.4} / {b:.2} / {c:.2}")
        });
        let drift = if twins {
            r.twin_drift
                .map_or(" — |".to_string(), |d| format!(" {d:.1e} |"))
        } else {
            String::new()
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} ± {} [{}, {}] | {:.2} ± {:.2} | {:.2} ± {:.2} | {:.1e} | {} |{drift} {} |\n",
            r.rule,
            if r.equivariant { "equivariant" } else { "coordinate-wise" },
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
    if preset.grid || !preset.rates.is_empty() {
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
                r.rule,
                r.lr,
                fmt4(m),
                fmt4(sd),
                at.len()
            ));
        }
    }
    // A preset of one rule at several values of its argument (the anisotropy dial).
    if preset.rules.iter().all(|r| r.arg().is_some()) {
        s.push_str("\n## Anisotropy dial\n\n| p | recovery mean ± sd | erank | paper envelope |\n|---|---|---|---|\n");
        for r in &preset.rules {
            let Some(p) = r.arg() else { continue };
            if let Some(x) = summaries.iter().find(|x| x.rule == r.name()) {
                let paper = PAPER_DIAL
                    .iter()
                    .find(|row| row.0 == p)
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
        s.push_str(&format!(" {r} |"));
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
            .find(|row| row.0 == tau)
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
            outcome,
            train_loss: 1e-8,
            recovery,
            erank: 3.0,
            balancedness: 0.5,
            twin_drift: None,
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
}
