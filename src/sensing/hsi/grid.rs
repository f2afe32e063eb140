//! The paper's Table 5 protocol: every rate of each rule's grid on two selection seeds, a rate
//! picked per rule from their training losses alone, then the picked rates on further report
//! seeds, summarised as mean ± sd over all seeds at each level of [`LEVELS`].
//!
//! Two selection rules are computed from the same runs and reported side by side:
//! [`Selection::Paper`] (the paper's code: the rate at which *both* selection seeds reach the
//! most levels, ties to the fewest mean steps) and [`Selection::Fastest`] (the project's earlier
//! rule: the single run that reaches the deepest level in the fewest steps). Neither reads a
//! held-out entry: they see only [`TrainTrace`]s, which hold nothing but training-loss crossings.

use serde::{Deserialize, Serialize};

use super::{HsiConfig, HsiError, HsiProblem, HsiRule, HsiRun, HsiSetup, LEVELS, Scene};
use super::{PAPER_GD_CPU_GRID, rule_by_name, run_until};
use crate::live::undeal;
use crate::metrics::mean_sd;
use crate::sensing::zoo::{Outcome, Rule};
use std::sync::atomic::{AtomicBool, Ordering};

/// The paper's selection seeds: every rate of every grid runs on each.
pub const PAPER_SELECTION_SEEDS: [u64; 2] = [42, 123];
/// The paper's further report seeds: the picked rates run on these too (4 seeds in all).
pub const PAPER_REPORT_SEEDS: [u64; 2] = [456, 789];

/// Which rate grids a grid run searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Grids {
    /// The paper's grids ([`HsiRule::paper_grid`]); for GD both its GPU grid and its CPU grid
    /// ([`PAPER_GD_CPU_GRID`], a subset) are searched.
    Paper,
    /// The project's own, wider grids ([`HsiRule::own_grid`]).
    Own,
}

impl Grids {
    /// Both choices.
    pub const ALL: [Grids; 2] = [Grids::Paper, Grids::Own];

    /// The name `--grids` and the app's links use (`paper`, `own`); [`std::str::FromStr`]
    /// reads it back.
    pub fn name(self) -> &'static str {
        match self {
            Grids::Paper => "paper",
            Grids::Own => "own",
        }
    }
}

impl std::str::FromStr for Grids {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        Grids::ALL
            .into_iter()
            .find(|g| g.name() == s)
            .ok_or_else(|| format!("unknown grids `{s}`; allowed: paper, own"))
    }
}

/// A rule that picks one rate from a grid by training loss alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Selection {
    /// The paper's: per rate, the number of levels that every selection seed reaches; the rate
    /// with the most, ties to the fewest steps to the deepest of them (mean over the seeds),
    /// then to the smaller rate. A rate at which a seed diverged is not eligible.
    Paper,
    /// The project's earlier rule: the single run (any selection seed) that reaches the deepest
    /// level, ties to the fewest steps to it, then to the smaller rate. Diverged runs are not
    /// eligible.
    Fastest,
}

impl Selection {
    /// Both rules, in the order reports list them.
    pub const ALL: [Selection; 2] = [Selection::Paper, Selection::Fastest];

    /// Short name used in files.
    pub fn name(self) -> &'static str {
        match self {
            Selection::Paper => "paper",
            Selection::Fastest => "fastest",
        }
    }
}

/// One grid searched for one rule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchedGrid {
    /// `paper`, `paper-cpu` (GD's CPU grid) or `own`.
    pub name: String,
    /// Its rates, ascending.
    pub rates: Vec<f64>,
}

/// The grids searched for `rule` under `grids`.
pub fn searched_grids(rule: &HsiRule, grids: Grids) -> Vec<SearchedGrid> {
    let grid = |name: &str, rates: &[f64]| SearchedGrid {
        name: name.into(),
        rates: rates.to_vec(),
    };
    match grids {
        Grids::Paper if rule.name == "gd" => vec![
            grid("paper", rule.paper_grid),
            grid("paper-cpu", PAPER_GD_CPU_GRID),
        ],
        Grids::Paper => vec![grid("paper", rule.paper_grid)],
        Grids::Own => vec![grid("own", rule.own_grid)],
    }
}

/// What a grid run does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridPlan {
    /// Rule names, in report order (see [`super::RULES`]).
    pub rules: Vec<String>,
    /// The grids searched.
    pub grids: Grids,
    /// Seeds that run every rate; the selection reads their training losses.
    pub selection_seeds: Vec<u64>,
    /// Seeds that run only the picked rates.
    pub report_seeds: Vec<u64>,
}

impl GridPlan {
    /// The paper's protocol for `rules`: its grids, seeds 42 and 123 for the selection, 456 and
    /// 789 added for the report.
    pub fn paper(rules: Vec<String>) -> Self {
        Self {
            rules,
            grids: Grids::Paper,
            selection_seeds: PAPER_SELECTION_SEEDS.to_vec(),
            report_seeds: PAPER_REPORT_SEEDS.to_vec(),
        }
    }

    /// Checks the plan: known rules, no rule twice, at least one selection seed, no seed twice
    /// (in or across the two lists). Errors name the field.
    pub fn validate(&self) -> Result<(), HsiError> {
        let bad = |field: &str, message: String| {
            Err(HsiError::Config {
                field: field.into(),
                message,
            })
        };
        if self.rules.is_empty() {
            return bad("rules", "at least one rule is needed".into());
        }
        for (i, name) in self.rules.iter().enumerate() {
            if let Err(e) = rule_by_name(name) {
                return bad("rules", e);
            }
            if self.rules[..i].contains(name) {
                return bad("rules", format!("`{name}` is listed twice"));
            }
        }
        if self.selection_seeds.is_empty() {
            return bad("selection_seeds", "at least one seed is needed".into());
        }
        let all: Vec<u64> = self.seeds();
        if let Some(dup) = all.iter().enumerate().find(|(i, s)| all[..*i].contains(s)) {
            return bad(
                "report_seeds",
                format!(
                    "seed {} is listed twice (selection and report seeds must all differ)",
                    dup.1
                ),
            );
        }
        Ok(())
    }

    /// The plan of rules `k, k + n, …` of this one's (a part of the grid the page runs in a
    /// worker of its own: a rule's selection and report read only that rule's runs).
    pub fn part(&self, k: usize, n: usize) -> GridPlan {
        GridPlan {
            rules: self
                .rules
                .iter()
                .skip(k)
                .step_by(n.max(1))
                .cloned()
                .collect(),
            ..self.clone()
        }
    }

    /// Every seed: the selection seeds, then the report seeds.
    pub fn seeds(&self) -> Vec<u64> {
        self.selection_seeds
            .iter()
            .chain(&self.report_seeds)
            .copied()
            .collect()
    }

    /// The (rule, rate) pairs every selection seed runs: per rule in order, the union of its
    /// searched grids, ascending. Panics on an unknown rule (validate first).
    pub fn selection_rates(&self) -> Vec<(&'static HsiRule, f64)> {
        let mut out = Vec::new();
        for name in &self.rules {
            let rule = rule_by_name(name).expect("a validated plan");
            let mut rates: Vec<f64> = searched_grids(rule, self.grids)
                .into_iter()
                .flat_map(|g| g.rates)
                .collect();
            rates.sort_by(f64::total_cmp);
            rates.dedup_by(|a, b| a.to_bits() == b.to_bits());
            out.extend(rates.into_iter().map(|lr| (rule, lr)));
        }
        out
    }
}

/// What the selection rules read of a run: its training-loss crossings and whether it diverged,
/// nothing else (no held-out error, no effective rank).
#[derive(Clone, Debug, PartialEq)]
pub struct TrainTrace {
    /// Rule name.
    pub rule: String,
    /// Learning rate.
    pub lr: f64,
    /// Problem seed.
    pub seed: u64,
    /// Whether the training loss became non-finite or exceeded 1e8.
    pub diverged: bool,
    /// For each level of [`LEVELS`], the step of the first pre-update training loss below it.
    pub first_step: Vec<Option<usize>>,
}

impl TrainTrace {
    /// The training-loss part of `run`.
    pub fn of(run: &HsiRun) -> Self {
        Self {
            rule: run.rule.clone(),
            lr: run.lr,
            seed: run.seed,
            diverged: run.outcome == Outcome::Diverged,
            first_step: run
                .crossings
                .iter()
                .map(|c| c.as_ref().map(|c| c.step))
                .collect(),
        }
    }

    /// Levels reached: one more than the index of the deepest level crossed (a loss below a
    /// level is below every shallower one), 0 if none.
    pub fn levels(&self) -> usize {
        self.first_step
            .iter()
            .rposition(Option::is_some)
            .map_or(0, |d| d + 1)
    }

    /// The step of the first crossing of the `levels`-th level (1-based); `None` if not reached.
    fn step_at(&self, levels: usize) -> Option<usize> {
        levels.checked_sub(1).and_then(|i| self.first_step[i])
    }
}

/// The rate `selection` picks for `rule` from `rates`, reading the traces of that rule on
/// `seeds`; `None` when no eligible rate reaches a level. For [`Selection::Paper`] a rate needs
/// a trace for every seed.
pub fn select_rate(
    selection: Selection,
    traces: &[TrainTrace],
    rule: &str,
    rates: &[f64],
    seeds: &[u64],
) -> Option<f64> {
    let runs_at = |lr: f64| -> Vec<&TrainTrace> {
        traces
            .iter()
            .filter(|t| t.rule == rule && t.lr.to_bits() == lr.to_bits() && seeds.contains(&t.seed))
            .collect()
    };
    // Candidates as (levels, steps, rate): the most levels, then the fewest steps, then the
    // smaller rate wins.
    let candidates: Vec<(usize, f64, f64)> = match selection {
        Selection::Paper => rates
            .iter()
            .filter_map(|&lr| {
                let runs = runs_at(lr);
                let complete = seeds.iter().all(|s| runs.iter().any(|t| t.seed == *s));
                if !complete || runs.iter().any(|t| t.diverged) {
                    return None;
                }
                let levels = runs.iter().map(|t| t.levels()).min()?;
                let steps: Vec<f64> = runs
                    .iter()
                    .map(|t| t.step_at(levels).map_or(0.0, |s| s as f64))
                    .collect();
                Some((levels, mean_sd(&steps).0, lr))
            })
            .collect(),
        Selection::Fastest => rates
            .iter()
            .flat_map(|&lr| runs_at(lr))
            .filter(|t| !t.diverged)
            .map(|t| {
                let levels = t.levels();
                (levels, t.step_at(levels).map_or(0.0, |s| s as f64), t.lr)
            })
            .collect(),
    };
    candidates
        .into_iter()
        .filter(|c| c.0 > 0)
        .min_by(|a, b| {
            b.0.cmp(&a.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.total_cmp(&b.2))
        })
        .map(|c| c.2)
}

/// The project's train-only choice for single-seed runs ([`Selection::Fastest`]): for
/// each rule, among its runs that did not diverge, the one that reached the deepest level of
/// [`LEVELS`], ties to the fewest steps to get there, then to the smaller rate. It reads
/// training losses only. Returns indices into `runs`, one per rule in first-appearance order
/// (the first run at the picked rate); a rule whose every run diverged has none.
pub fn select(runs: &[HsiRun]) -> Vec<usize> {
    let traces: Vec<TrainTrace> = runs.iter().map(TrainTrace::of).collect();
    let mut names: Vec<&str> = Vec::new();
    for r in runs {
        if !names.contains(&r.rule.as_str()) {
            names.push(&r.rule);
        }
    }
    names
        .iter()
        .filter_map(|name| {
            let mine = || runs.iter().enumerate().filter(|(_, r)| r.rule == *name);
            let rates: Vec<f64> = mine().map(|(_, r)| r.lr).collect();
            let seeds: Vec<u64> = mine().map(|(_, r)| r.seed).collect();
            let lr = select_rate(Selection::Fastest, &traces, name, &rates, &seeds)?;
            mine()
                .find(|(_, r)| r.lr.to_bits() == lr.to_bits())
                .map(|(i, _)| i)
        })
        .collect()
}

/// The rate one selection rule picked for one rule from one grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pick {
    /// Rule name.
    pub rule: String,
    /// The selection rule.
    pub selection: Selection,
    /// The grid searched.
    pub grid: SearchedGrid,
    /// The rate picked; `None` if no eligible rate reached a level.
    pub lr: Option<f64>,
}

impl Pick {
    /// `selection:grid`, as files list picks.
    pub fn label(&self) -> String {
        format!("{}:{}", self.selection.name(), self.grid.name)
    }
}

/// Every pick of `plan` from the selection runs' `traces`: per rule, per searched grid, per
/// selection rule.
pub fn picks(plan: &GridPlan, traces: &[TrainTrace]) -> Vec<Pick> {
    let mut out = Vec::new();
    for name in &plan.rules {
        let rule = rule_by_name(name).expect("a validated plan");
        for grid in searched_grids(rule, plan.grids) {
            for selection in Selection::ALL {
                out.push(Pick {
                    rule: name.clone(),
                    selection,
                    lr: select_rate(selection, traces, name, &grid.rates, &plan.selection_seeds),
                    grid: grid.clone(),
                });
            }
        }
    }
    out
}

/// Mean and sample sd of one quantity over the seeds that have it.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stat {
    /// Seeds counted.
    pub n: usize,
    /// Their mean.
    pub mean: f64,
    /// Their sample standard deviation (n − 1; 0 for one seed).
    pub sd: f64,
}

impl Stat {
    /// The statistics of the finite values among `xs`; `None` if there are none.
    pub fn of(xs: impl IntoIterator<Item = f64>) -> Option<Self> {
        let v: Vec<f64> = xs.into_iter().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        let (mean, sd) = mean_sd(&v);
        Some(Self {
            n: v.len(),
            mean,
            sd,
        })
    }
}

/// One (rule, rate)'s metrics at a level (or at the last step), over seeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LevelStats {
    /// The level of [`LEVELS`]; `None` for the last step of each run.
    pub level: Option<f64>,
    /// Seeds that reached it.
    pub reached: usize,
    /// Step of the first crossing.
    pub step: Option<Stat>,
    /// Held-out RMSE there.
    pub test_rmse: Option<Stat>,
    /// Effective rank of UVᵀ there.
    pub erank: Option<Stat>,
}

/// One picked (rule, rate) over every seed it ran on: the Figure 5 path and the Table 5 entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RateSummary {
    /// Rule name.
    pub rule: String,
    /// Learning rate.
    pub lr: f64,
    /// The picks that chose it ([`Pick::label`]).
    pub picked_by: Vec<String>,
    /// Seeds it ran on, in plan order.
    pub seeds: Vec<u64>,
    /// Runs that diverged.
    pub diverged: usize,
    /// One entry per level of [`LEVELS`].
    pub levels: Vec<LevelStats>,
    /// The final factors of the runs that did not diverge.
    pub last: LevelStats,
}

impl RateSummary {
    /// The summary of `runs` (those of one rule and rate).
    pub fn of(rule: &str, lr: f64, picked_by: Vec<String>, runs: &[&HsiRun]) -> Self {
        let levels = (0..LEVELS.len())
            .map(|i| {
                let at: Vec<_> = runs
                    .iter()
                    .filter_map(|r| r.crossings[i].as_ref())
                    .collect();
                LevelStats {
                    level: Some(LEVELS[i]),
                    reached: at.len(),
                    step: Stat::of(at.iter().map(|c| c.step as f64)),
                    test_rmse: Stat::of(at.iter().map(|c| c.test_rmse)),
                    erank: Stat::of(at.iter().map(|c| c.erank)),
                }
            })
            .collect();
        let ok: Vec<_> = runs
            .iter()
            .filter(|r| r.outcome != Outcome::Diverged)
            .map(|r| &r.last)
            .collect();
        Self {
            rule: rule.into(),
            lr,
            picked_by,
            seeds: runs.iter().map(|r| r.seed).collect(),
            diverged: runs.len() - ok.len(),
            levels,
            last: LevelStats {
                level: None,
                reached: ok.len(),
                step: Stat::of(ok.iter().map(|c| c.step as f64)),
                test_rmse: Stat::of(ok.iter().map(|c| c.test_rmse)),
                erank: Stat::of(ok.iter().map(|c| c.erank)),
            },
        }
    }

    /// The entry at the deepest level (≤ 1e-5, where Table 5 reads).
    pub fn deepest(&self) -> &LevelStats {
        self.levels.last().expect("one entry per level")
    }
}

/// Whether a run of a grid search belongs to the selection or only to the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// A selection seed: it runs every rate, and the selection reads its training losses.
    Selection,
    /// A report seed: it runs only the picked rates.
    Report,
}

/// Everything a grid run produced.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GridReport {
    /// What was run.
    pub plan: GridPlan,
    /// One setup per seed, in [`GridPlan::seeds`] order (pixels and mask differ by seed).
    pub setups: Vec<HsiSetup>,
    /// Selection runs (per rule, per rate, per seed), then report runs (per picked rate, per
    /// seed).
    pub runs: Vec<HsiRun>,
    /// Every pick ([`picks`]).
    pub picks: Vec<Pick>,
    /// Each picked (rule, rate) over every seed, in rule order.
    pub summaries: Vec<RateSummary>,
    /// Wall time in seconds.
    pub seconds: f64,
}

impl GridReport {
    /// Whether `run` (one of [`GridReport::runs`]) belongs to the selection.
    pub fn role(&self, run: &HsiRun) -> Role {
        if self.plan.selection_seeds.contains(&run.seed) {
            Role::Selection
        } else {
            Role::Report
        }
    }

    /// The summary of every run of `rule` at `lr` (bit for bit), in run order, labelled with
    /// the picks that chose it. Panics if such a run has fewer crossings than [`LEVELS`]
    /// ([`GridReport::check`] refuses those).
    pub fn summary_of(&self, rule: &str, lr: f64) -> RateSummary {
        let mine: Vec<&HsiRun> = self
            .runs
            .iter()
            .filter(|r| r.rule == rule && r.lr.to_bits() == lr.to_bits())
            .collect();
        RateSummary::of(rule, lr, self.picked_by(rule, lr), &mine)
    }

    /// The labels of the picks that chose `rule` at `lr`.
    pub fn picked_by(&self, rule: &str, lr: f64) -> Vec<String> {
        self.picks
            .iter()
            .filter(|p| p.rule == rule && p.lr.map(f64::to_bits) == Some(lr.to_bits()))
            .map(Pick::label)
            .collect()
    }
}

impl GridReport {
    /// Checks a report read back from disk (the app keeps the last one): a valid plan and, for
    /// every summary, a rule of [`super::RULES`] in the plan, a finite positive rate, one entry
    /// per level of [`LEVELS`] in order and a last one, counts within the seeds run, and every
    /// statistic over 1 ..= seeds values with a finite mean and sd ≥ 0 (steps, RMSE and rank are
    /// never negative); then every run with one crossing per level and a seed of the plan, and
    /// every summary equal to the one its runs give ([`GridReport::summary_of`]), so an edited
    /// number cannot pass. Errors name the summary or run and the field.
    pub fn check(&self) -> Result<(), String> {
        self.plan
            .validate()
            .map_err(|e| format!("the plan's {e}"))?;
        for (i, s) in self.summaries.iter().enumerate() {
            let at = |field: &str, message: String| {
                Err(format!(
                    "summary {i} ({}): field `{field}`: {message}",
                    s.rule
                ))
            };
            if !self.plan.rules.contains(&s.rule) {
                return at("rule", "not a rule of the plan".into());
            }
            if !(s.lr.is_finite() && s.lr > 0.0) {
                return at("lr", format!("{} is not a positive rate", s.lr));
            }
            let seeds = s.seeds.len();
            if seeds == 0 || s.diverged > seeds {
                return at("seeds", format!("{seeds} seeds, {} diverged", s.diverged));
            }
            if s.levels.len() != LEVELS.len() {
                return at(
                    "levels",
                    format!(
                        "{} entries; one per level ({}) expected",
                        s.levels.len(),
                        LEVELS.len()
                    ),
                );
            }
            let wanted = LEVELS.iter().map(|&l| Some(l)).chain([None]);
            for (k, (l, want)) in s.levels.iter().chain([&s.last]).zip(wanted).enumerate() {
                if l.level.map(f64::to_bits) != want.map(f64::to_bits) {
                    return at(&format!("levels[{k}].level"), format!("{:?}", l.level));
                }
                if l.reached > seeds {
                    return at(
                        &format!("levels[{k}].reached"),
                        format!("{} of {seeds} seeds", l.reached),
                    );
                }
                for (name, stat) in [
                    ("step", l.step),
                    ("test_rmse", l.test_rmse),
                    ("erank", l.erank),
                ] {
                    let Some(st) = stat else { continue };
                    let ok = (1..=seeds).contains(&st.n)
                        && st.mean.is_finite()
                        && st.mean >= 0.0
                        && st.sd.is_finite()
                        && st.sd >= 0.0;
                    if !ok {
                        return at(
                            &format!("levels[{k}].{name}"),
                            format!("n {}, mean {}, sd {}", st.n, st.mean, st.sd),
                        );
                    }
                }
            }
        }
        let seeds = self.plan.seeds();
        for (i, r) in self.runs.iter().enumerate() {
            if r.crossings.len() != LEVELS.len() {
                return Err(format!(
                    "run {i} ({} at {}): field `crossings`: {} entries; one per level ({}) expected",
                    r.rule,
                    r.lr,
                    r.crossings.len(),
                    LEVELS.len()
                ));
            }
            if !seeds.contains(&r.seed) {
                return Err(format!(
                    "run {i} ({} at {}): field `seed`: {} is not a seed of the plan",
                    r.rule, r.lr, r.seed
                ));
            }
        }
        for (i, s) in self.summaries.iter().enumerate() {
            let want = self.summary_of(&s.rule, s.lr);
            let field = if s.seeds != want.seeds || s.diverged != want.diverged {
                "seeds".to_string()
            } else if s.picked_by != want.picked_by {
                "picked_by".to_string()
            } else if let Some(k) = (0..LEVELS.len()).find(|&k| s.levels[k] != want.levels[k]) {
                format!("levels[{k}]")
            } else if s.last != want.last {
                "last".to_string()
            } else {
                continue;
            };
            return Err(format!(
                "summary {i} ({}): field `{field}`: not what the report's runs of {} at {} give",
                s.rule, s.rule, s.lr
            ));
        }
        Ok(())
    }
}

/// Progress of [`run_grid`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridProgress {
    /// This many more steps are planned (sent before the selection and again once the picks
    /// are known).
    Planned(u64),
    /// This many more steps are done.
    Steps(u64),
}

/// Runs `plan` on `scene` with `cfg`'s density, sizes and budget (its seed is ignored): the
/// selection runs on every selection seed, [`picks`] from their training losses, then every
/// picked rate on the report seeds; runs go in parallel (rayon, each run single-threaded, so
/// nothing depends on the thread count). Errors: the plan, `cfg`, the scene, or
/// [`HsiError::Cancelled`] once `cancel` is raised.
pub fn run_grid(
    scene: &Scene,
    cfg: &HsiConfig,
    plan: &GridPlan,
    progress: &(dyn Fn(GridProgress) + Sync),
    cancel: &AtomicBool,
) -> Result<GridReport, HsiError> {
    plan.validate()?;
    cfg.validate()?;
    let prepared = plan
        .seeds()
        .into_iter()
        .map(|seed| {
            scene.problem(&HsiConfig {
                seed,
                ..cfg.clone()
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    run_prepared(plan, prepared, progress, cancel).ok_or(HsiError::Cancelled)
}

/// Seconds per training step of one run on one thread (the unit of a grid's work:
/// [`GridProgress::Planned`] counts steps) on this computer, from two short trials of the
/// plan's first selection rule and rate on its first selection seed: `steps` and `2·steps`
/// steps, whose difference is the steps' cost and whose rest a run's one-off cost (its
/// initial factors, its final measurement), counted once over `cfg.steps`. Setting up the
/// problem is not counted (the grid does it once per seed). `None` for an invalid plan or
/// `cfg`, or a clock too coarse to time it. For the estimate before a first run; slow for a
/// large scene, so run it off the UI's thread.
pub fn trial_pace(scene: &Scene, cfg: &HsiConfig, plan: &GridPlan, steps: usize) -> Option<f64> {
    plan.validate().ok()?;
    let &(rule, lr) = plan.selection_rates().first()?;
    let seed = *plan.selection_seeds.first()?;
    let total = cfg.steps.max(1);
    let short = steps.clamp(1, total);
    let (_, problem) = scene
        .problem(&HsiConfig {
            seed,
            steps: short,
            ..cfg.clone()
        })
        .ok()?;
    let mut problem = problem;
    let mut timed = |n: usize| {
        problem.cfg.steps = n;
        let t = web_time::Instant::now();
        run_until(&problem, rule.rule(), lr, &|_| {}, &AtomicBool::new(false));
        t.elapsed().as_secs_f64()
    };
    let (once, twice) = (timed(short), timed(2 * short));
    if twice <= 0.0 {
        return None;
    }
    let per_step = ((twice - once) / short as f64).max(0.0);
    let fixed = (once - per_step * short as f64).max(0.0);
    Some((fixed + per_step * total as f64) / total as f64)
}

/// [`run_grid`] on problems already set up: one per seed of [`GridPlan::seeds`], in that order,
/// all with the same budget. `None` when `cancel` was raised. Panics if the plan is invalid or
/// the count differs.
pub fn run_prepared(
    plan: &GridPlan,
    prepared: Vec<(HsiSetup, HsiProblem)>,
    progress: &(dyn Fn(GridProgress) + Sync),
    cancel: &AtomicBool,
) -> Option<GridReport> {
    use rayon::prelude::*;
    plan.validate().expect("a valid plan");
    assert_eq!(prepared.len(), plan.seeds().len(), "one problem per seed");
    let started = web_time::Instant::now();
    let (setups, problems): (Vec<HsiSetup>, Vec<HsiProblem>) = prepared.into_iter().unzip();
    let cfg = &problems[0].cfg;
    let steps = cfg.steps as u64;
    let report_steps = |runs: usize| (runs * plan.report_seeds.len()) as u64 * steps;
    let done = |n| progress(GridProgress::Steps(n));
    let rates = plan.selection_rates();
    let selection_seeds = plan.selection_seeds.len();
    progress(GridProgress::Planned(
        (rates.len() * selection_seeds) as u64 * steps + report_steps(plan.rules.len()),
    ));
    let jobs: Vec<(Rule, f64, &HsiProblem)> = rates
        .iter()
        .flat_map(|&(r, lr)| {
            problems[..selection_seeds]
                .iter()
                .map(move |p| (r.rule(), lr, p))
        })
        .collect();
    let mut runs: Vec<HsiRun> = jobs
        .par_iter()
        .map(|&(rule, lr, p)| run_until(p, rule, lr, &done, cancel))
        .collect();
    if cancel.load(Ordering::Relaxed) {
        return None;
    }
    let traces: Vec<TrainTrace> = runs.iter().map(TrainTrace::of).collect();
    let picks = picks(plan, &traces);
    let picked: Vec<(Rule, f64)> = plan
        .rules
        .iter()
        .flat_map(|name| {
            let rule = rule_by_name(name).expect("a validated plan").rule();
            let mut rates: Vec<f64> = picks
                .iter()
                .filter(|p| p.rule == *name)
                .filter_map(|p| p.lr)
                .collect();
            rates.sort_by(f64::total_cmp);
            rates.dedup_by(|a, b| a.to_bits() == b.to_bits());
            rates.into_iter().map(move |lr| (rule, lr))
        })
        .collect();
    // The first plan assumed one picked rate per rule; correct it now the picks are known.
    if picked.len() > plan.rules.len() {
        progress(GridProgress::Planned(report_steps(
            picked.len() - plan.rules.len(),
        )));
    }
    let jobs: Vec<(Rule, f64, &HsiProblem)> = picked
        .iter()
        .flat_map(|&(rule, lr)| {
            problems[selection_seeds..]
                .iter()
                .map(move |p| (rule, lr, p))
        })
        .collect();
    runs.extend(
        jobs.par_iter()
            .map(|&(rule, lr, p)| run_until(p, rule, lr, &done, cancel))
            .collect::<Vec<_>>(),
    );
    if cancel.load(Ordering::Relaxed) {
        return None;
    }
    let mut report = GridReport {
        plan: plan.clone(),
        setups,
        runs,
        picks,
        summaries: Vec::new(),
        seconds: 0.0,
    };
    report.summaries = picked
        .iter()
        .map(|&(rule, lr)| report.summary_of(&rule.name(), lr))
        .collect();
    report.seconds = started.elapsed().as_secs_f64();
    Some(report)
}

/// The report of the whole plan from the reports of its parts ([`GridPlan::part`] `k` of `n`
/// for `k = 0, 1, …`, in that order): the rules dealt back into order, each rule's runs,
/// picks and summaries where the whole run puts them, so the report is the whole's but for its
/// wall time, which is the longest part's. `None` without parts.
pub fn merge_parts(parts: Vec<GridReport>) -> Option<GridReport> {
    let first = parts.first()?;
    let rules = undeal(parts.iter().map(|p| p.plan.rules.clone()).collect());
    let plan = GridPlan {
        rules,
        ..first.plan.clone()
    };
    let setups = first.setups.clone();
    let seconds = parts.iter().map(|p| p.seconds).fold(0.0, f64::max);
    let (mut runs, mut picks, mut summaries) = (Vec::new(), Vec::new(), Vec::new());
    for p in parts {
        runs.extend(p.runs);
        picks.extend(p.picks);
        summaries.extend(p.summaries);
    }
    // The selection runs of every rule in order, then their report runs; picks and summaries
    // rule by rule.
    let selection = |r: &HsiRun| plan.selection_seeds.contains(&r.seed);
    let runs = &runs;
    let ordered: Vec<HsiRun> = [true, false]
        .into_iter()
        .flat_map(|role| {
            plan.rules.iter().flat_map(move |name| {
                runs.iter()
                    .filter(move |r| selection(r) == role && r.rule == *name)
                    .cloned()
            })
        })
        .collect();
    let picks = plan
        .rules
        .iter()
        .flat_map(|name| picks.iter().filter(move |p| p.rule == *name).cloned())
        .collect();
    let summaries = plan
        .rules
        .iter()
        .flat_map(|name| summaries.iter().filter(move |s| s.rule == *name).cloned())
        .collect();
    Some(GridReport {
        plan,
        setups,
        runs: ordered,
        picks,
        summaries,
        seconds,
    })
}

/// The paper's grids for GD and Muon run on the tests' tiny scene (width 4, 200 steps) at
/// `density`, with the given selection and report seeds: a small real [`GridReport`] for the
/// tests of this module and its neighbours.
#[cfg(test)]
pub(crate) fn tiny_grid(
    density: f64,
    selection_seeds: Vec<u64>,
    report_seeds: Vec<u64>,
) -> GridReport {
    let cfg = HsiConfig {
        density,
        width: 4,
        steps: 200,
        ..HsiConfig::default()
    };
    let plan = GridPlan {
        selection_seeds,
        report_seeds,
        ..GridPlan::paper(vec!["gd".into(), "muon".into()])
    };
    run_grid(
        &super::tiny_scene(),
        &cfg,
        &plan,
        &|_| {},
        &AtomicBool::new(false),
    )
    .expect("a tiny grid runs")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensing::hsi::tiny_scene;
    use std::sync::atomic::Ordering;

    /// The trial measures real work and grows with the run's size: a scene with more pixels
    /// costs more per step.
    #[test]
    fn a_trial_measures_the_pace_of_a_step() {
        let scene = tiny_scene();
        let plan = GridPlan {
            rules: vec!["adam".into()],
            ..GridPlan::paper(vec!["adam".into()])
        };
        let cfg = HsiConfig {
            width: 4,
            steps: 400,
            ..HsiConfig::default()
        };
        let pace = trial_pace(&scene, &cfg, &plan, 20).expect("a pace");
        assert!(pace > 0.0 && pace < 1e-2, "{pace} s per step");
        let bad = GridPlan {
            rules: vec!["nope".into()],
            ..plan.clone()
        };
        assert_eq!(trial_pace(&scene, &cfg, &bad, 20), None);
        let mut big = tiny_scene();
        big.pixels = nalgebra::DMatrix::from_fn(3000, 64, |p, b| {
            1.0 + ((p * 7 + b * 13) % 101) as f64 / 101.0
        });
        let wide = HsiConfig {
            width: 16,
            ..cfg.clone()
        };
        let slow = trial_pace(&big, &wide, &plan, 20).expect("a pace");
        assert!(slow > 5.0 * pace, "{slow} against {pace}");
    }

    /// A trace of `rule` at `lr` on `seed` that reaches a level at each of `steps` (in order).
    fn trace(rule: &str, lr: f64, seed: u64, steps: &[usize]) -> TrainTrace {
        let mut first_step = vec![None; LEVELS.len()];
        for (slot, &s) in first_step.iter_mut().zip(steps) {
            *slot = Some(s);
        }
        TrainTrace {
            rule: rule.into(),
            lr,
            seed,
            diverged: false,
            first_step,
        }
    }

    const SEEDS: [u64; 2] = [42, 123];

    #[test]
    fn the_paper_rule_takes_the_most_levels_both_seeds_reach_then_the_fewest_mean_steps() {
        let traces = [
            // 0.1: both seeds reach 6 levels, mean 150 steps to the sixth.
            trace("gd", 0.1, 42, &[0, 10, 20, 30, 40, 100]),
            trace("gd", 0.1, 123, &[0, 10, 20, 30, 40, 200]),
            // 1: seed 42 is fastest of all (6 levels at step 50), seed 123 reaches only 5.
            trace("gd", 1.0, 42, &[0, 5, 10, 20, 30, 50]),
            trace("gd", 1.0, 123, &[0, 5, 10, 20, 30]),
            // 0.3: 6 levels on both, mean 150 as well: a tie the smaller rate 0.1 wins.
            trace("gd", 0.3, 42, &[0, 1, 2, 3, 4, 140]),
            trace("gd", 0.3, 123, &[0, 1, 2, 3, 4, 160]),
            // Another rule's traces are not read.
            trace("adam", 0.5, 42, &[0, 1, 2, 3, 4, 5]),
            trace("adam", 0.5, 123, &[0, 1, 2, 3, 4, 5]),
        ];
        let rates = [0.1, 0.3, 1.0];
        assert_eq!(
            select_rate(Selection::Paper, &traces, "gd", &rates, &SEEDS),
            Some(0.1)
        );
        // The project's rule looks at single runs: seed 42 at rate 1 is the fastest to 6 levels.
        assert_eq!(
            select_rate(Selection::Fastest, &traces, "gd", &rates, &SEEDS),
            Some(1.0)
        );
        // Fewer mean steps at 0.3 once its seed 123 is faster.
        let mut faster = traces.clone();
        faster[5] = trace("gd", 0.3, 123, &[0, 1, 2, 3, 4, 150]);
        assert_eq!(
            select_rate(Selection::Paper, &faster, "gd", &rates, &SEEDS),
            Some(0.3)
        );
        // Restricted to a sub-grid (as GD's CPU grid is), only its rates compete.
        assert_eq!(
            select_rate(Selection::Paper, &traces, "gd", &[0.3, 1.0], &SEEDS),
            Some(0.3)
        );
        assert_eq!(
            select_rate(Selection::Paper, &traces, "gd", &[1.0], &SEEDS),
            Some(1.0),
            "five levels on both seeds is the best rate 1 offers"
        );
    }

    #[test]
    fn diverged_or_missing_runs_make_a_rate_ineligible() {
        let mut traces = vec![
            trace("muon", 0.01, 42, &[0, 50, 90]),
            trace("muon", 0.01, 123, &[0, 60, 95]),
            trace("muon", 0.1, 42, &[0, 5, 9, 12]),
            trace("muon", 0.1, 123, &[0, 6, 9, 13]),
        ];
        let rates = [0.01, 0.1];
        assert_eq!(
            select_rate(Selection::Paper, &traces, "muon", &rates, &SEEDS),
            Some(0.1)
        );
        traces[3].diverged = true;
        assert_eq!(
            select_rate(Selection::Paper, &traces, "muon", &rates, &SEEDS),
            Some(0.01),
            "a seed that diverged rules its rate out"
        );
        assert_eq!(
            select_rate(Selection::Fastest, &traces, "muon", &rates, &SEEDS),
            Some(0.1),
            "the fastest rule still takes seed 42's run at 0.1"
        );
        traces.remove(3);
        assert_eq!(
            select_rate(Selection::Paper, &traces, "muon", &rates, &SEEDS),
            Some(0.01),
            "a rate without a run on every seed is not eligible"
        );
        let none = [trace("muon", 0.01, 42, &[]), trace("muon", 0.01, 123, &[])];
        assert_eq!(
            select_rate(Selection::Paper, &none, "muon", &[0.01], &SEEDS),
            None
        );
        assert_eq!(
            select_rate(Selection::Fastest, &none, "muon", &[0.01], &SEEDS),
            None
        );
    }

    #[test]
    fn plans_are_checked_and_searched_grids_follow_the_paper() {
        let plan = GridPlan::paper(vec!["gd".into(), "muon".into()]);
        plan.validate().unwrap();
        assert_eq!(plan.seeds(), vec![42, 123, 456, 789]);
        let rates: Vec<(String, f64)> = plan
            .selection_rates()
            .into_iter()
            .map(|(r, lr)| (r.rule().name(), lr))
            .collect();
        let want: Vec<(String, f64)> = [0.3, 1.0, 3.0, 10.0, 30.0]
            .map(|lr| ("gd".to_string(), lr))
            .into_iter()
            .chain([0.01, 0.03, 0.1].map(|lr| ("muon".to_string(), lr)))
            .collect();
        assert_eq!(rates, want, "GD's CPU grid lies inside its GPU grid");
        let gd = rule_by_name("gd").unwrap();
        let names: Vec<String> = searched_grids(gd, Grids::Paper)
            .into_iter()
            .map(|g| g.name)
            .collect();
        assert_eq!(names, ["paper", "paper-cpu"]);
        assert_eq!(searched_grids(gd, Grids::Own)[0].rates, gd.own_grid);
        assert_eq!("own".parse::<Grids>(), Ok(Grids::Own));
        assert!("gpu".parse::<Grids>().unwrap_err().contains("paper, own"));

        let field = |p: &GridPlan| match p.validate() {
            Err(HsiError::Config { field, message }) => format!("{field}: {message}"),
            other => panic!("{other:?}"),
        };
        let mut bad = plan.clone();
        bad.report_seeds = vec![123];
        assert!(field(&bad).contains("seed 123 is listed twice"));
        bad = plan.clone();
        bad.rules.push("lion".into());
        assert!(field(&bad).starts_with("rules: unknown rule `lion`"));
        bad = plan.clone();
        bad.rules.push("gd".into());
        assert!(field(&bad).contains("`gd` is listed twice"));
        bad = plan.clone();
        bad.selection_seeds.clear();
        assert!(field(&bad).starts_with("selection_seeds"));
    }

    fn tiny_cfg() -> HsiConfig {
        HsiConfig {
            density: 0.3,
            width: 4,
            steps: 300,
            ..HsiConfig::default()
        }
    }

    #[test]
    fn permuting_held_out_values_changes_no_selected_rate() {
        let scene = tiny_scene();
        let cfg = tiny_cfg();
        let plan = GridPlan::paper(RULES_ALL.map(String::from).to_vec());
        let prepared: Vec<(HsiSetup, HsiProblem)> = plan
            .seeds()
            .into_iter()
            .map(|seed| {
                scene
                    .problem(&HsiConfig {
                        seed,
                        ..cfg.clone()
                    })
                    .unwrap()
            })
            .collect();
        // Each seed's held-out entries rotated by one place (column-major order); the mask is
        // drawn from the seed alone, so it is the same for the permuted data.
        let permuted: Vec<(HsiSetup, HsiProblem)> = prepared
            .iter()
            .map(|(setup, problem)| {
                let held: Vec<usize> = (0..problem.mask.len())
                    .filter(|&i| !problem.mask[i])
                    .collect();
                let mut x = problem.x.clone();
                for (i, &at) in held.iter().enumerate() {
                    x[at] = problem.x[held[(i + 1) % held.len()]];
                }
                let again = HsiProblem::new(x, &problem.cfg).unwrap();
                assert_eq!(again.mask, problem.mask);
                (setup.clone(), again)
            })
            .collect();
        let never = AtomicBool::new(false);
        let before = run_prepared(&plan, prepared, &|_| {}, &never).unwrap();
        let after = run_prepared(&plan, permuted, &|_| {}, &never).unwrap();
        assert_eq!(before.picks, after.picks);
        assert!(before.picks.iter().all(|p| p.lr.is_some()));
        let traces = |r: &GridReport| r.runs.iter().map(TrainTrace::of).collect::<Vec<_>>();
        assert_eq!(
            traces(&before),
            traces(&after),
            "the training losses are untouched"
        );
        let rmse = |r: &GridReport| -> Vec<u64> {
            r.runs.iter().map(|x| x.last.test_rmse.to_bits()).collect()
        };
        let changed = rmse(&before)
            .iter()
            .zip(rmse(&after))
            .filter(|(a, b)| **a != *b)
            .count();
        assert_eq!(changed, before.runs.len(), "every held-out RMSE moved");
    }

    const RULES_ALL: [&str; 4] = ["gd", "adam", "scalar_adam", "muon"];

    #[test]
    fn a_grid_run_summarises_the_picked_rates_over_every_seed() {
        let scene = tiny_scene();
        let cfg = tiny_cfg();
        let plan = GridPlan {
            selection_seeds: vec![1, 2],
            report_seeds: vec![3],
            ..GridPlan::paper(vec!["adam".into(), "gd".into()])
        };
        let planned = std::sync::atomic::AtomicU64::new(0);
        let done = std::sync::atomic::AtomicU64::new(0);
        let report = run_grid(
            &scene,
            &cfg,
            &plan,
            &|p| match p {
                GridProgress::Planned(n) => {
                    planned.fetch_add(n, Ordering::Relaxed);
                }
                GridProgress::Steps(n) => {
                    done.fetch_add(n, Ordering::Relaxed);
                }
            },
            &AtomicBool::new(false),
        )
        .unwrap();
        let steps = cfg.steps as u64;
        let picked: Vec<(String, f64)> = report
            .summaries
            .iter()
            .map(|s| (s.rule.clone(), s.lr))
            .collect();
        // Adam's 3 rates and GD's 5 on two seeds, then each picked rate on the third seed.
        assert_eq!(report.runs.len(), 2 * (3 + 5) + picked.len());
        assert_eq!(
            done.load(Ordering::Relaxed),
            report.runs.len() as u64 * steps
        );
        assert_eq!(
            planned.load(Ordering::Relaxed),
            done.load(Ordering::Relaxed)
        );
        assert_eq!(
            picked[0].0, "adam",
            "summaries follow the plan's rule order"
        );
        for s in &report.summaries {
            assert_eq!(s.seeds, vec![1, 2, 3]);
            assert!(!s.picked_by.is_empty());
            let runs: Vec<&HsiRun> = report
                .runs
                .iter()
                .filter(|r| r.rule == s.rule && r.lr.to_bits() == s.lr.to_bits())
                .collect();
            for (i, level) in s.levels.iter().enumerate() {
                let values: Vec<f64> = runs
                    .iter()
                    .filter_map(|r| r.crossings[i].as_ref().map(|c| c.test_rmse))
                    .collect();
                assert_eq!(level.reached, values.len());
                if let Some(stat) = level.test_rmse {
                    assert_eq!((stat.mean, stat.sd), mean_sd(&values));
                }
            }
        }
        for p in &report.picks {
            let lr = p.lr.expect("every rule reaches a level here");
            assert!(p.grid.rates.contains(&lr));
            assert!(picked.contains(&(p.rule.clone(), lr)));
        }
        assert_eq!(report.role(&report.runs[0]), Role::Selection);
        assert_eq!(report.role(report.runs.last().unwrap()), Role::Report);
    }

    /// The page deals a grid's rules over its workers: every split, run apart and merged,
    /// gives the whole grid's report (runs, picks, summaries) bit for bit but its wall time.
    #[test]
    fn a_grid_split_by_rules_merges_to_the_whole_bit_for_bit() {
        let scene = tiny_scene();
        let cfg = HsiConfig {
            density: 0.5,
            width: 4,
            steps: 150,
            ..HsiConfig::default()
        };
        let plan = GridPlan {
            selection_seeds: vec![1],
            report_seeds: vec![2],
            ..GridPlan::paper(vec!["gd".into(), "adam".into(), "muon".into()])
        };
        let run = |plan: &GridPlan| {
            run_grid(&scene, &cfg, plan, &|_| {}, &AtomicBool::new(false)).unwrap()
        };
        let timeless = |mut r: GridReport| {
            r.seconds = 0.0;
            format!("{r:?}")
        };
        let whole = run(&plan);
        assert!(whole.summaries.len() >= 3, "a pick per rule at least");
        for n in [1, 2, 3] {
            let parts: Vec<GridReport> = (0..n).map(|k| run(&plan.part(k, n))).collect();
            let longest = parts.iter().map(|p| p.seconds).fold(0.0, f64::max);
            let merged = merge_parts(parts).unwrap();
            assert_eq!(merged.seconds, longest);
            assert_eq!(timeless(merged), timeless(whole.clone()), "{n} parts");
        }
        assert_eq!(merge_parts(Vec::new()), None);
    }
}
