//! `basis-lab check`: a chain's predicted class in each lab against a short measurement
//! (docs/numerics.md, "Transforms and chains"). Each lab runs the chain from its start, from
//! the gauge-rotated start (Haar Q) and from a noise-perturbed start, through the lab's own
//! twin machinery ([`PairedRun`]'s twins and noise twin, [`FactorRun`]'s twin, attention's
//! [`SeedRun`] twins), and compares the gauge twin's distance with [`FLOOR`] and with the noise
//! twin's ([`Verdict::of`]).
//!
//! Settings, where every registered rule's class is known (tests/chains.rs checks each):
//! - key lab: the default preset (d_k 16, 32 keys), one arm at [`KEY_LR`], [`KEY_STEPS`]
//!   steps, distance `‖W′ − QW‖/‖W‖` (the noise twin from W0 + 1e-12·E);
//! - gauge lab: n 12, rank 2, 2n² measurements, init 0.3, seed 3, [`GAUGE_LR`], constant
//!   schedule, [`GAUGE_STEPS`] steps, distance `‖U′V′ᵀ − UVᵀ‖/‖UVᵀ‖` (noise twin from
//!   U + 1e-12·E);
//! - attention: one layer, two heads, d_model 8, MLP 12, modulus 11, [`ATTENTION_LR`],
//!   [`ATTENTION_STEPS`] steps, distance between validation logits (noise twin 1e-12 on W_Q,
//!   W_K).

use crate::attention::{AttentionPreset, ModelConfig, RunSpec, SeedRun, TaskConfig, TwinKind};
use crate::experiment::PairedRun;
use crate::live::{Stop, Task};
use crate::optim::{BUNDLED_CHAINS, ChainError, ChainSpec, Lab, OptimizerSpec, lookup};
use crate::preset::Preset;
use crate::sensing::zoo::{FactorRun, Outcome, Rule};
use crate::sensing::{SensingConfig, SensingProblem};
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

/// The rounding floor: a gauge twin at most this far from its run is equivariant. GD's,
/// momentum's, scalar-Adam's, Muon's and Shampoo's stay below 1e-12 in the three settings;
/// the floor leaves room for transforms whose bases carry rounding over small gaps (SOAP's
/// eigenvectors: its twins end near 2e-9 in attention).
pub const FLOOR: f64 = 1e-7;

/// How many times the noise twin's distance a gauge twin must exceed to be basis-dependent.
pub const SEPARATION: f64 = 10.0;

/// Steps of the key lab's run.
pub const KEY_STEPS: usize = 100;
/// Steps of the gauge lab's run.
pub const GAUGE_STEPS: usize = 100;
/// Steps of the attention run.
pub const ATTENTION_STEPS: usize = 50;
/// The key lab's learning rate.
pub const KEY_LR: f64 = 0.01;
/// The gauge lab's learning rate (constant schedule).
pub const GAUGE_LR: f64 = 1e-3;
/// The attention run's learning rate.
pub const ATTENTION_LR: f64 = 1e-3;

/// What the measurement says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The gauge twin stayed within [`FLOOR`].
    Equivariant,
    /// The gauge twin left the floor and separated beyond [`SEPARATION`] × the noise twin.
    BasisDependent,
    /// The noise twin left the floor too, as far as the gauge twin within [`SEPARATION`]:
    /// rounding alone separates runs, so the gauge twin cannot tell.
    Chaotic,
    /// Neither.
    Inconclusive,
    /// A run diverged or could not start (the gauge twin's distance is NaN): nothing was
    /// measured, nothing contradicted. A twin that blew up beside a sound run is at +∞ instead.
    Diverged,
}

impl Verdict {
    /// The word tables use.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Equivariant => "equivariant",
            Verdict::BasisDependent => "basis-dependent",
            Verdict::Chaotic => "chaotic",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Diverged => "diverged",
        }
    }

    /// The verdict of a gauge twin at distance `gauge` and a noise twin at `noise`.
    pub fn of(gauge: f64, noise: f64) -> Verdict {
        if gauge.is_nan() {
            Verdict::Diverged
        } else if gauge <= FLOOR {
            Verdict::Equivariant
        } else if noise.is_nan() {
            Verdict::Inconclusive
        } else if gauge > SEPARATION * noise {
            Verdict::BasisDependent
        } else if noise > FLOOR {
            Verdict::Chaotic
        } else {
            Verdict::Inconclusive
        }
    }
}

/// One lab's row of the check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LabCheck {
    /// The lab (`key`, `gauge`, `attention`).
    pub lab: String,
    /// Predicted equivariant: every transform commutes with the lab's action.
    pub predicted_equivariant: bool,
    /// The transforms that do not commute with the lab's action.
    pub not_commuting: Vec<String>,
    /// The gauge twin's relative distance at the end.
    pub gauge_distance: f64,
    /// The noise twin's relative distance at the end.
    pub noise_distance: f64,
    /// The measured verdict.
    pub verdict: Verdict,
    /// Whether prediction and measurement agree: a predicted-equivariant chain must measure
    /// equivariant; a chain not guaranteed agrees with any clear verdict (it may be either); a
    /// diverged run contradicts nothing. `false` is an error of a transform's declaration or
    /// of the numerics.
    pub agrees: bool,
}

/// The whole check of one chain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChainCheck {
    /// The registered rule's or bundled chain's name, when the chain was given by name.
    pub name: Option<String>,
    /// The chain's canonical text (for a registered rule without a chain, its name and the
    /// hyperparameters that differ from its defaults).
    pub chain: String,
    /// The rounding floor used ([`FLOOR`]).
    pub floor: f64,
    /// One row per lab, in [`Lab::ALL`] order.
    pub labs: Vec<LabCheck>,
}

/// What `check` measures: a chain of transforms, or a registered rule no chain expresses
/// (FlowAdam and FlowAdam-p, whose flow steps need the lab's gradient oracle).
#[derive(Clone, Debug, PartialEq)]
pub enum Subject {
    /// A chain; predicted from each transform's declared commuting side.
    Chain(ChainSpec),
    /// A registered rule without a chain; predicted from its registered class
    /// ([`OptimizerSpec::equivariant_under`]).
    Rule(OptimizerSpec),
}

impl Subject {
    fn predicted(&self, action: crate::optim::Action) -> bool {
        match self {
            Subject::Chain(c) => c.predicted(action),
            Subject::Rule(s) => s.equivariant_under(action),
        }
    }

    fn blocking(&self, action: crate::optim::Action) -> Vec<&'static str> {
        match self {
            Subject::Chain(c) => c.blocking(action),
            Subject::Rule(s) if !s.equivariant_under(action) => {
                s.info().map(|i| i.name).into_iter().collect()
            }
            Subject::Rule(_) => Vec::new(),
        }
    }

    /// The text the check reports: the chain's canonical text, or the rule with the
    /// hyperparameters that differ from its defaults (`flow_adam_p(p=0)`).
    fn text(&self) -> String {
        match self {
            Subject::Chain(c) => c.to_string(),
            Subject::Rule(s) => {
                let base = OptimizerSpec::new(&s.optimizer, s.lr);
                let info = s.info().expect("a registered rule");
                let args: Vec<String> = info
                    .hypers
                    .iter()
                    .filter(|&&h| s.value(h) != base.value(h))
                    .filter_map(|&h| s.value(h).map(|v| format!("{}={v}", h.name())))
                    .collect();
                if args.is_empty() {
                    s.optimizer.clone()
                } else {
                    format!("{}({})", s.optimizer, args.join(", "))
                }
            }
        }
    }

    fn spec(&self) -> OptimizerSpec {
        match self {
            Subject::Chain(c) => OptimizerSpec {
                label: Some("chain".into()),
                ..OptimizerSpec::new(&c.to_string(), 0.0)
            },
            Subject::Rule(s) => s.clone(),
        }
    }
}

/// A registered rule, written as its name with optional named hyperparameters in parentheses
/// (`adam(eps=1e-3)`, `flow_adam_p(p=0, beta1=0.9)`); `Ok(None)` when `text` is not such a rule
/// (a chain has a `|` or a transform's name). Errors name the rule, the argument and the
/// allowed range.
fn registered_rule(text: &str) -> Result<Option<OptimizerSpec>, ChainError> {
    if text.contains('|') {
        return Ok(None);
    }
    let (name, args) = match text.split_once('(') {
        Some((n, rest)) => (n.trim(), Some(rest)),
        None => (text, None),
    };
    let Some(info) = lookup(name) else {
        return Ok(None);
    };
    let fail = |argument: Option<&str>, message: String| ChainError {
        index: None,
        argument: argument.map(str::to_string),
        message,
    };
    let mut spec = OptimizerSpec::new(info.name, info.lr);
    let Some(rest) = args else {
        return Ok(Some(spec));
    };
    let inner = rest.trim_end().strip_suffix(')').ok_or_else(|| {
        fail(
            None,
            format!("{name}: the arguments' parenthesis is not closed"),
        )
    })?;
    let known = || {
        info.hypers
            .iter()
            .map(|h| h.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, value)) = part.split_once('=') else {
            return Err(fail(
                None,
                format!(
                    "{name}: `{part}`: write arguments as name=value ({})",
                    known()
                ),
            ));
        };
        let key = key.trim();
        let Some(&h) = info.hypers.iter().find(|h| h.name() == key) else {
            return Err(fail(
                Some(key),
                format!("{name}: no argument `{key}` (it takes {})", known()),
            ));
        };
        let value: f64 = value.trim().parse().map_err(|_| {
            fail(
                Some(key),
                format!("{name}: {key} = `{}` is not a number", value.trim()),
            )
        })?;
        if let Some(range) = h.range().filter(|r| !r.contains(value)) {
            return Err(fail(
                Some(key),
                format!("{name}: {key} = {value} is outside {range}"),
            ));
        }
        if let Some(slot) = spec.value_mut(h) {
            *slot = value;
        }
    }
    Ok(Some(spec))
}

/// What `text` names: a registered rule's name gives that rule's chain at its default
/// hyperparameters (`adam`) or at those given (`adam(eps=1e-3)`), a bundled chain's name its
/// text (`adamw`, [`crate::optim::BUNDLED_CHAINS`]), a registered rule no chain expresses the
/// rule itself (`flow_adam`, `flow_adam_p(p=0)`), anything else is read as a chain. Returns
/// the name (when a name was given) and the subject. Errors: the text does not parse, or a
/// rule's argument is unknown, not a number or out of its range.
pub fn resolve(text: &str) -> Result<(Option<String>, Subject), ChainError> {
    let name = text.trim();
    if let Some(spec) = registered_rule(name)? {
        let info = lookup(&spec.optimizer).expect("a registered rule");
        return Ok(match info.chain {
            None => (Some(spec.optimizer.clone()), Subject::Rule(spec)),
            Some(chain) => (
                Some(info.name.into()),
                Subject::Chain(ChainSpec::parse(&chain(&spec))?),
            ),
        });
    }
    if let Some(&(n, chain, _)) = BUNDLED_CHAINS.iter().find(|b| b.0 == name) {
        return Ok((Some(n.into()), Subject::Chain(ChainSpec::parse(chain)?)));
    }
    Ok((None, Subject::Chain(ChainSpec::parse(text)?)))
}

/// Checks `text` ([`resolve`]: a chain, a registered rule's name or a bundled chain's) in the
/// three labs. Errors: the text does not parse. Deterministic: the same text gives the same
/// bits. Well under a second in a release build for a chain; FlowAdam's flow steps take
/// longer.
pub fn check_chain(text: &str) -> Result<ChainCheck, ChainError> {
    let check = check_chain_with(text, &|| {}, &AtomicBool::new(false))?;
    Ok(check.expect("never cancelled"))
}

/// [`check_chain`] for a background job: calls `progress` after each lab and gives `Ok(None)`
/// when `cancel` is raised before the last lab has run (the app's Check button).
pub fn check_chain_with(
    text: &str,
    progress: &(dyn Fn() + Sync),
    cancel: &AtomicBool,
) -> Result<Option<ChainCheck>, ChainError> {
    let (name, subject) = resolve(text)?;
    let spec = subject.spec();
    let mut labs = Vec::with_capacity(Lab::ALL.len());
    for lab in Lab::ALL {
        if cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let (gauge, noise) = lab_twins(lab, &spec);
        let predicted = subject.predicted(lab.action());
        let verdict = Verdict::of(gauge, noise);
        labs.push(LabCheck {
            lab: lab.name().into(),
            predicted_equivariant: predicted,
            not_commuting: (subject.blocking(lab.action()).iter())
                .map(|s| s.to_string())
                .collect(),
            gauge_distance: gauge,
            noise_distance: noise,
            verdict,
            agrees: !predicted || matches!(verdict, Verdict::Equivariant | Verdict::Diverged),
        });
        progress();
    }
    Ok(Some(ChainCheck {
        name,
        chain: subject.text(),
        floor: FLOOR,
        labs,
    }))
}

/// The gauge twin's and the noise twin's distances in `lab` at its documented learning rate.
fn lab_twins(lab: Lab, spec: &OptimizerSpec) -> (f64, f64) {
    let at = |lr: f64| OptimizerSpec { lr, ..spec.clone() };
    match lab {
        Lab::Key => key_twins(&at(KEY_LR)),
        Lab::Gauge => gauge_twins(&at(GAUGE_LR)),
        Lab::Attention => attention_twins(&at(ATTENTION_LR)),
    }
}

/// The gauge twin's and the noise twin's distances at the end of the check's run in each lab
/// ([`Lab::ALL`] order) for `spec`, a registered rule or a chain (its own learning rate is
/// replaced by each lab's documented one, see the module documentation). NaN where the run
/// could not start or diverged. Lets a registered rule be measured beside its chain.
pub fn twin_distances(spec: &OptimizerSpec) -> [(f64, f64); 3] {
    Lab::ALL.map(|lab| lab_twins(lab, spec))
}

fn key_twins(spec: &OptimizerSpec) -> (f64, f64) {
    let mut p = Preset::load("default").expect("the default preset is bundled");
    p.arms = vec![spec.clone()];
    p.noise_twins = true;
    let Ok(mut run) = PairedRun::new(&p) else {
        return (f64::NAN, f64::NAN);
    };
    for _ in 0..KEY_STEPS {
        run.step();
    }
    match run.snapshot().first() {
        Some(r) => (r.orientation_div, r.noise_div),
        None => (f64::NAN, f64::NAN),
    }
}

fn gauge_twins(spec: &OptimizerSpec) -> (f64, f64) {
    let cfg = SensingConfig {
        n: 12,
        rank: 2,
        ratio: 2.0,
        init: 0.3,
        tau: 0.0,
    };
    let problem = SensingProblem::new(&cfg, 3);
    let carrier = Rule::named("gd").expect("registered");
    let make = || spec.build();
    let run = |noise: bool| {
        let run = FactorRun::new(&problem, carrier, spec.lr, GAUGE_STEPS, 3, true)
            .with_schedule(crate::optim::Schedule::Constant)
            .with_optimizer(&make);
        let mut run = if noise {
            run.with_noise_twin(1e-12, 3)
        } else {
            run
        };
        for _ in 0..GAUGE_STEPS {
            match run.step() {
                Some(Outcome::Diverged) => return f64::NAN,
                Some(_) => break,
                None => {}
            }
        }
        // The twin is not checked as it steps: one that blew up beside a sound run is as far
        // from it as can be, not "nothing measured".
        match run.twin_drift() {
            Some(d) if d.is_nan() || d.is_infinite() => f64::INFINITY,
            Some(d) => d,
            None => f64::NAN,
        }
    };
    (run(false), run(true))
}

/// The check's attention setting (module documentation): one layer, two heads, d_model 8,
/// MLP 12, modulus 11 with half the pairs for training, one seed, [`ATTENTION_STEPS`] steps
/// measured at the end, noise twins at 1e-12; no runs (the caller adds them).
pub fn attention_setting() -> AttentionPreset {
    AttentionPreset {
        task: TaskConfig {
            modulus: 11,
            train_fraction: 0.5,
        },
        model: ModelConfig {
            layers: 1,
            heads: 2,
            d_model: 8,
            d_mlp: 12,
            norm_eps: 1e-6,
        },
        steps: ATTENTION_STEPS,
        seeds: 1,
        dense_until: 0,
        measure_every: ATTENTION_STEPS,
        noise_std: 1e-12,
        runs: Vec::new(),
        ..AttentionPreset::load("attention").expect("bundled")
    }
}

fn attention_twins(spec: &OptimizerSpec) -> (f64, f64) {
    let preset = AttentionPreset {
        runs: vec![RunSpec {
            rule: spec.clone(),
            rest: None,
            twins: vec![TwinKind::Gauge, TwinKind::Noise],
        }],
        ..attention_setting()
    };
    let Ok(mut run) = SeedRun::new(&preset, 0) else {
        return (f64::NAN, f64::NAN);
    };
    while !run.finished() {
        run.step();
    }
    let last = |kind: TwinKind| {
        run.records()
            .iter()
            .rfind(|r| r.twin == Some(kind))
            .map_or(f64::NAN, |r| r.logit_distance)
    };
    (last(TwinKind::Gauge), last(TwinKind::Noise))
}

/// The labs where prediction and measurement disagree, as one line naming each lab and its
/// verdict (`None` when they agree everywhere): `basis-lab check` reports it as an error.
pub fn disagreements(c: &ChainCheck) -> Option<String> {
    let bad: Vec<String> = c
        .labs
        .iter()
        .filter(|l| !l.agrees)
        .map(|l| format!("{} lab measured {}", l.lab, l.verdict.name()))
        .collect();
    (!bad.is_empty()).then(|| {
        format!(
            "`{}`{}: predicted equivariant, but the {}",
            c.chain,
            c.name.as_ref().map_or(String::new(), |n| format!(" ({n})")),
            bad.join(", the ")
        )
    })
}

/// A lab row's "agree" cell: a short form for the app's table (the long one on hover) and the
/// long one the CLI prints: `yes` (with the transforms that do not commute when the chain is
/// not guaranteed), nothing measured when a run diverged, or what the disagreement means.
pub fn agreement(l: &LabCheck) -> (String, String) {
    let (short, why) = match (l.agrees, l.verdict) {
        (_, Verdict::Diverged) => (
            "nothing measured (diverged)",
            "a run diverged or could not start at this setting (a smaller scale may converge)",
        ),
        (true, _) if l.predicted_equivariant => return ("yes".into(), "yes".into()),
        (true, _) => {
            let text = format!("yes (not commuting: {})", l.not_commuting.join(", "));
            return (text.clone(), text);
        }
        (false, Verdict::Chaotic) => (
            "NO: measured chaotic",
            "rounding alone separates the runs as far, so the numerics (not the declared maps) \
             break the symmetry here",
        ),
        (false, _) => (
            "NO: measured not",
            "a transform's declaration or the numerics is wrong",
        ),
    };
    let long = match l.verdict {
        Verdict::Diverged => format!("nothing measured: {why}"),
        v => format!("NO: predicted equivariant, measured {}: {why}", v.name()),
    };
    (short.into(), long)
}

/// The checks of several chains as one Markdown table (the README's): per chain and lab the
/// prediction and the measured verdict, `eq` / `not guaranteed` and `equivariant` /
/// `basis-dependent` / `chaotic` / `inconclusive`, a disagreement marked `≠`.
pub fn markdown(rows: &[ChainCheck]) -> String {
    let mut out =
        String::from("| chain | text | key lab | gauge lab | attention |\n|---|---|---|---|---|\n");
    for c in rows {
        let cells: Vec<String> = c
            .labs
            .iter()
            .map(|l| {
                let p = if l.predicted_equivariant {
                    "eq"
                } else {
                    "not guaranteed"
                };
                let mark = if l.agrees { "" } else { " ≠" };
                format!("{p} / {}{mark}", l.verdict.name())
            })
            .collect();
        out.push_str(&format!(
            "| {} | `{}` | {} |\n",
            c.name.as_deref().unwrap_or("—"),
            c.chain.replace('|', "\\|"),
            cells.join(" | ")
        ));
    }
    out
}

/// A prediction in words, as the tables write it: `equivariant` or `not guaranteed` (a chain
/// with a transform that does not commute may still be equivariant).
pub fn predicted_word(equivariant: bool) -> &'static str {
    crate::optim::class_word(true, equivariant)
}

/// The check as a plain-text table: per lab the prediction, both distances, the verdict and
/// whether they agree; a disagreement says so in words.
pub fn table(c: &ChainCheck) -> String {
    let named = c.name.as_ref().map_or(String::new(), |n| format!(" ({n})"));
    let mut out = format!(
        "chain: {}{named}\nrounding floor {:e}; basis-dependent past {}× the noise twin\n\n",
        c.chain, c.floor, SEPARATION
    );
    out.push_str(&format!(
        "{:<10} {:<15} {:>12} {:>12} {:<16} {}\n",
        "lab", "predicted", "gauge twin", "noise twin", "measured", "agree"
    ));
    for l in &c.labs {
        let predicted = predicted_word(l.predicted_equivariant);
        let (_, agree) = agreement(l);
        out.push_str(&format!(
            "{:<10} {:<15} {:>12.2e} {:>12.2e} {:<16} {}\n",
            l.lab,
            predicted,
            l.gauge_distance,
            l.noise_distance,
            l.verdict.name(),
            agree
        ));
    }
    out
}

/// The check as CSV (the app's Save table): one row per lab with the prediction, both
/// distances (shortest round-trip text), the verdict and whether they agree.
pub fn csv_bytes(c: &ChainCheck) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "chain",
        "lab",
        "predicted",
        "gauge_distance",
        "noise_distance",
        "verdict",
        "agrees",
        "not_commuting",
    ])?;
    for l in &c.labs {
        let predicted = if l.predicted_equivariant {
            "equivariant"
        } else {
            "not_guaranteed"
        };
        w.write_record([
            c.chain.as_str(),
            &l.lab,
            predicted,
            &l.gauge_distance.to_string(),
            &l.noise_distance.to_string(),
            l.verdict.name(),
            &l.agrees.to_string(),
            &l.not_commuting.join(" "),
        ])?;
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

/// The check of a chain as data, for a thread or a Web Worker ([`check_chain_with`]):
/// one progress item per lab.
#[derive(Serialize, Deserialize)]
pub struct CheckTask(pub String);

impl Task for CheckTask {
    type Output = Result<ChainCheck, Stop>;
    const KIND: &'static str = "check";

    fn run(self, progress: &(dyn Fn() + Sync), cancel: &AtomicBool) -> Self::Output {
        match check_chain_with(&self.0, progress, cancel) {
            Ok(Some(c)) => Ok(c),
            Ok(None) => Err(Stop::Cancelled),
            Err(e) => Err(Stop::Failed(e.message)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The background form reports each lab, stops when cancelled, and gives what
    /// [`check_chain`] gives; its CSV has a row per lab with the verdict.
    #[test]
    fn the_background_check_counts_labs_stops_on_cancel_and_writes_its_table() {
        let text = "clip(0.01) | scale_by_adam()";
        let cancelled = check_chain_with(text, &|| {}, &AtomicBool::new(true)).unwrap();
        assert_eq!(cancelled, None);
        let count = std::sync::atomic::AtomicUsize::new(0);
        let progress = || {
            count.fetch_add(1, Ordering::Relaxed);
        };
        let c = check_chain_with(text, &progress, &AtomicBool::new(false))
            .unwrap()
            .unwrap();
        assert_eq!(count.into_inner(), 3, "one call per lab");
        assert_eq!(c, check_chain(text).unwrap());
        let csv = String::from_utf8(csv_bytes(&c).unwrap()).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 4, "{csv}");
        assert!(
            lines[1].starts_with("clip(max=0.01) | scale_by_adam(),key,not_guaranteed,"),
            "{csv}"
        );
        assert!(
            lines[1].ends_with(",basis-dependent,true,clip scale_by_adam"),
            "{csv}"
        );
        let back: ChainCheck = ron::from_str(&ron::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c, "the check travels as RON (a Web Worker's answer)");
    }
}
