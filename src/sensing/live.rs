//! The gauge lab's live runs: a few rules trained on one problem instance, each with its gauge
//! twin (from (UQ, VQ)) and its noise twin (from (U, V) moved by [`NOISE_TWIN`] in the same
//! basis), sampling loss, recovery and both twins' drift as they go and the singular values at
//! the end. The noise twin tells rounding amplified by the dynamics (both twins rise together)
//! from a rule that sees the basis (the gauge twin splits far beyond the noise twin). A [`LiveRun`] for the [`crate::live::Live`] driver: on a thread the rules step in
//! parallel over the pool; in the page's frame loop one step at a time, round-robin. Each run
//! depends only on its rule, so both report the same numbers.

use std::sync::Arc;
use std::time::Duration;

use rayon::prelude::*;
use web_time::Instant;

use super::zoo::{FactorRun, Outcome, Rule, RunResult};
use super::{SensingConfig, SensingProblem, SensingStream, sensing_stream};
use crate::figure::GREY;
use crate::figure::{Axis, Body, Dash, Earlier, Figure, Mark, faded_line, rule_title};
use crate::linalg::norm::frobenius;
use crate::live::{Failure, Host, LiveRun, Next, Outbox};
use crate::optim::optimizer_rgb;
use crate::rng::gaussian_matrix;

/// Samples per live run.
const LIVE_SAMPLES: usize = 200;

/// Relative size of the noise twin's move: every entry of U and V is multiplied by
/// `1 + NOISE_TWIN·ξ`, ξ ~ N(0, 1) from the seed's own stream. About ten times the rounding a
/// rotated start (UQ, VQ) carries at n = 40, so an equivariant rule's gauge twin and its noise
/// twin start at the same order of distance.
pub const NOISE_TWIN: f64 = 1e-14;

/// Most steps one frame takes, whatever the clock says: a page's clock can be coarse
/// (browsers that resist fingerprinting round it to 100 ms) or stand still (headless
/// Chromium's virtual time), and a frame must still end. At 9 ms per frame a page takes a few
/// dozen steps, far below this.
const MAX_FRAME_STEPS: usize = 256;

/// One sample of a live run.
#[derive(Clone, Copy, Debug)]
pub struct LiveSample {
    /// Index of the rule in the live runs' list.
    pub rule: usize,
    /// Step.
    pub step: usize,
    /// Pre-update training loss.
    pub loss: f64,
    /// Recovery error.
    pub recovery: f64,
    /// Twin drift ‖U′V′ᵀ − UVᵀ‖F / ‖UVᵀ‖F.
    pub twin_drift: f64,
    /// Factor drift ‖U′ − UQ‖F / ‖UQ‖F.
    pub factor_drift: f64,
    /// Noise-twin drift ‖U″V″ᵀ − UVᵀ‖F / ‖UVᵀ‖F (U″, V″ from the moved start).
    pub noise_drift: f64,
}

/// What the live runs report.
// One `Done` per rule and run against thousands of samples: boxing it would save nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Update {
    /// A sample.
    Sample(LiveSample),
    /// The runs stopped on a panic (its message); the app keeps running.
    Crashed(String),
    /// A rule finished: its singular values of UVᵀ (descending).
    Done {
        /// Index of the rule.
        rule: usize,
        /// Singular values of the final UVᵀ.
        spectrum: Vec<f64>,
        /// How it ended, with its final step.
        summary: RunResult,
        /// The noise twin's drift at the end (NaN if it diverged).
        noise_drift: f64,
    },
}

/// What the UI asks of the live runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Command {
    /// End every run now ([`Outcome::Cancelled`]).
    Cancel,
}

/// One rule of the live runs: its run (with its gauge twin), its noise twin, its place in the
/// list and how often it samples.
struct RuleRun {
    index: usize,
    seed: u64,
    every: usize,
    run: FactorRun<Arc<SensingProblem>>,
    /// The noise twin, stepped in lockstep with `run` on the same rate; `None` once it has
    /// stopped on its own (diverged).
    noise: Option<FactorRun<Arc<SensingProblem>>>,
}

/// The noise twin of `rule` on `problem`: the run of `seed` from its initial factors with every
/// entry moved by a relative [`NOISE_TWIN`], going on to the end of its budget (it stops only
/// with the run it shadows, or when it diverges).
fn noise_twin(
    problem: Arc<SensingProblem>,
    rule: Rule,
    lr: f64,
    budget: usize,
    seed: u64,
) -> FactorRun<Arc<SensingProblem>> {
    let n = problem.cfg.n;
    let mut run = FactorRun::new(problem, rule, lr, budget, seed, false).with_full_horizon(true);
    let mut rng = sensing_stream(seed, SensingStream::NoiseTwin);
    for p in &mut run.params {
        let xi = gaussian_matrix(&mut rng, n, n, NOISE_TWIN);
        p.zip_apply(&xi, |w, x| *w += *w * x);
    }
    run
}

/// `‖A Bᵀ − C Dᵀ‖F / ‖C Dᵀ‖F` for factors `[A, B]` against `[C, D]`.
fn product_drift(twin: &[nalgebra::DMatrix<f64>; 2], base: &[nalgebra::DMatrix<f64>; 2]) -> f64 {
    let w = crate::linalg::product_t(&base[0], &base[1]);
    let w2 = crate::linalg::product_t(&twin[0], &twin[1]);
    frobenius(&(w2 - &w)) / frobenius(&w)
}

impl RuleRun {
    /// The noise twin's drift now (NaN once it has diverged).
    fn noise_drift(&self) -> f64 {
        (self.noise.as_ref()).map_or(f64::NAN, |n| product_drift(&n.params, &self.run.params))
    }

    /// Takes one step, sampling W_t before the step computes its loss (so the sample's three
    /// numbers describe the same factors); `true` once the run has ended (its
    /// [`Update::Done`] sent).
    fn advance(&mut self, out: &Outbox<Update>) -> bool {
        let t = self.run.t;
        let sample = t.is_multiple_of(self.every).then(|| {
            let [u, v] = &self.run.params;
            (
                super::recovery(u, v, &self.run.problem().target),
                self.run.twin_drift().unwrap_or(f64::NAN),
                self.run.factor_drift().unwrap_or(f64::NAN),
                self.noise_drift(),
            )
        });
        let stepped = self.run.step();
        if stepped.is_none()
            && let Some(noise) = &mut self.noise
            && noise.step().is_some()
        {
            self.noise = None;
        }
        if let Some((recovery, twin_drift, factor_drift, noise_drift)) = sample {
            out.send(Update::Sample(LiveSample {
                rule: self.index,
                step: t,
                loss: self.run.loss,
                recovery,
                twin_drift,
                factor_drift,
                noise_drift,
            }));
        }
        match stepped {
            Some(outcome) => {
                self.end(outcome, out);
                true
            }
            None => false,
        }
    }

    /// Sends the run's [`Update::Done`], ended by `outcome`.
    fn end(&self, outcome: Outcome, out: &Outbox<Update>) {
        let [u, v] = &self.run.params;
        let mut spectrum: Vec<f64> = (u * v.transpose())
            .singular_values()
            .iter()
            .copied()
            .collect();
        spectrum.sort_by(|a, b| b.total_cmp(a));
        out.send(Update::Done {
            rule: self.index,
            spectrum,
            summary: self.run.summary(self.seed, outcome),
            noise_drift: self.noise_drift(),
        });
    }
}

/// Live runs of several rules on one problem instance, each with its gauge and noise twins.
pub struct GaugeLive {
    runs: Vec<RuleRun>,
    /// The rule a frame steps next.
    next: usize,
    target_spectrum: Vec<f64>,
}

impl GaugeLive {
    /// Every (rule, lr) of `rules` on the instance of `cfg` and `seed`, each on its own schedule
    /// ([`Rule::schedule`], as the zoo runs it), for at most `budget` steps, sampling about 200
    /// times each. Panics if `cfg` does not validate.
    pub fn new(cfg: &SensingConfig, rules: &[(Rule, f64)], seed: u64, budget: usize) -> Self {
        let problem = Arc::new(SensingProblem::new(cfg, seed));
        let target_spectrum = problem.target.singular_values().iter().copied().collect();
        let every = (budget / LIVE_SAMPLES).max(1);
        let runs = rules
            .iter()
            .enumerate()
            .map(|(index, &(rule, lr))| RuleRun {
                index,
                seed,
                every,
                run: FactorRun::new(problem.clone(), rule, lr, budget, seed, true),
                noise: Some(noise_twin(problem.clone(), rule, lr, budget, seed)),
            })
            .collect();
        Self {
            runs,
            next: 0,
            target_spectrum,
        }
    }

    /// Singular values of the target X* (in nalgebra's order).
    pub fn target_spectrum(&self) -> &[f64] {
        &self.target_spectrum
    }

    fn state(&self) -> Next {
        if self.runs.is_empty() {
            Next::Done
        } else {
            Next::Busy
        }
    }
}

impl LiveRun for GaugeLive {
    type Command = Command;
    type Update = Update;

    fn begin(&mut self, _out: &Outbox<Update>) -> Next {
        self.state()
    }

    fn command(&mut self, cmds: Vec<Command>, out: &Outbox<Update>) -> Next {
        if cmds.contains(&Command::Cancel) {
            for r in self.runs.drain(..) {
                r.end(Outcome::Cancelled, out);
            }
        }
        self.state()
    }

    /// On a thread every rule steps for the whole budget in parallel; in a frame one step at
    /// a time round-robin, so the frame overruns the budget by at most one step of one rule.
    fn work(&mut self, budget: Duration, host: Host, out: &Outbox<Update>) -> Next {
        let started = Instant::now();
        match host {
            Host::Thread => {
                let ended: Vec<bool> = self
                    .runs
                    .par_iter_mut()
                    .map(|r| {
                        while started.elapsed() < budget {
                            if r.advance(out) {
                                return true;
                            }
                        }
                        false
                    })
                    .collect();
                let mut ended = ended.into_iter();
                self.runs.retain(|_| !ended.next().unwrap_or(false));
            }
            Host::Frame => {
                let (mut i, mut steps) = (self.next, 0);
                while !self.runs.is_empty() && started.elapsed() < budget && steps < MAX_FRAME_STEPS
                {
                    steps += 1;
                    i %= self.runs.len();
                    if self.runs[i].advance(out) {
                        self.runs.remove(i);
                    } else {
                        i += 1;
                    }
                }
                self.next = i;
            }
        }
        self.state()
    }

    fn failed(why: Failure) -> Update {
        match why {
            Failure::Refused(m) | Failure::Panicked(m) => Update::Crashed(m),
        }
    }
}

/// A live plot of the gauge lab's live runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LivePlot {
    /// Training loss over steps.
    Loss,
    /// Recovery error over steps.
    Recovery,
    /// The gauge twins' drift, product and factors.
    Drift,
    /// Singular values at the end against the target's.
    Spectrum,
}

impl LivePlot {
    /// Every plot, in the tab's order.
    pub const ALL: [LivePlot; 4] = [
        LivePlot::Loss,
        LivePlot::Recovery,
        LivePlot::Drift,
        LivePlot::Spectrum,
    ];

    /// The plot's title.
    pub fn title(self) -> &'static str {
        match self {
            LivePlot::Loss => "training loss (log)",
            LivePlot::Recovery => "recovery ‖UVᵀ − X*‖F/‖X*‖F (log)",
            LivePlot::Drift => "twin drift: gauge (solid), noise (dotted), factors (dashed)",
            LivePlot::Spectrum => "singular values of UVᵀ at the end vs X* (grey, dashed)",
        }
    }

    /// The file name stem of its saved figure.
    pub fn stem(self) -> &'static str {
        match self {
            LivePlot::Loss => "gauge_live_loss",
            LivePlot::Recovery => "gauge_live_recovery",
            LivePlot::Drift => "gauge_live_drift",
            LivePlot::Spectrum => "gauge_live_spectrum",
        }
    }
}

/// What one live run has reported, as plain points: `[step, value]` series (in step order,
/// non-finite values left out) and the final singular values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RuleCurves {
    /// Pre-update training loss.
    pub loss: Vec<[f64; 2]>,
    /// Recovery error.
    pub recovery: Vec<[f64; 2]>,
    /// Twin drift of the product.
    pub drift: Vec<[f64; 2]>,
    /// Twin drift of the factors.
    pub factor_drift: Vec<[f64; 2]>,
    /// The noise twin's drift of the product.
    pub noise_drift: Vec<[f64; 2]>,
    /// Singular values of the final UVᵀ (descending), once the run has ended.
    pub spectrum: Option<Vec<f64>>,
}

/// Singular values below this are drawn at it (a rank-3 target's tail is exactly 0).
pub const SPECTRUM_FLOOR: f64 = 1e-12;

/// Singular values as `[index from 1, value]` points, floored at [`SPECTRUM_FLOOR`].
fn spectrum_points(values: &[f64]) -> Vec<[f64; 2]> {
    values
        .iter()
        .enumerate()
        .map(|(k, v)| [(k + 1) as f64, v.max(SPECTRUM_FLOOR)])
        .collect()
}

/// Live plot `plot` of the runs of `rules` (their curves `runs`, in the same order; the
/// target's singular values `target` for the spectrum) as the window shows and saves it: one
/// line per rule in its registry colour, log y axes, the spectrum against the index from 1
/// with X* grey and dashed and values below [`SPECTRUM_FLOOR`] drawn at it.
pub fn live_figure(
    rules: &[(Rule, f64)],
    runs: &[RuleCurves],
    target: &[f64],
    plot: LivePlot,
) -> Figure {
    let rgb = |r: &Rule, i: usize| optimizer_rgb(r.info().name, i);
    let spectrum = spectrum_points;
    let mut marks = Vec::new();
    for (i, ((r, _), s)) in rules.iter().zip(runs).enumerate() {
        let title = rule_title(&r.name());
        match plot {
            LivePlot::Loss | LivePlot::Recovery => {
                let data = if plot == LivePlot::Loss {
                    &s.loss
                } else {
                    &s.recovery
                };
                marks.push(Mark::line(
                    title.clone(),
                    rgb(r, i),
                    data.clone(),
                    2.0,
                    Dash::Solid,
                ));
            }
            LivePlot::Drift => {
                marks.push(Mark::line(
                    title.clone(),
                    rgb(r, i),
                    s.drift.clone(),
                    2.0,
                    Dash::Solid,
                ));
                // The strokes are named once, in grey, after the rules (a legend of three
                // entries per rule would fill a paper's column).
                marks.push(Mark::line(
                    String::new(),
                    rgb(r, i),
                    s.noise_drift.clone(),
                    2.0,
                    Dash::Dotted,
                ));
                marks.push(Mark::line(
                    String::new(),
                    rgb(r, i),
                    s.factor_drift.clone(),
                    1.5,
                    Dash::Dashed,
                ));
            }
            LivePlot::Spectrum => {
                if let Some(sp) = &s.spectrum {
                    marks.push(Mark::line(
                        title.clone(),
                        rgb(r, i),
                        spectrum(sp),
                        2.0,
                        Dash::Solid,
                    ));
                }
            }
        }
    }
    let step = || Axis::linear("training step").including(0.0);
    let (x, y) = match plot {
        LivePlot::Loss => (step(), Axis::log("loss (log scale)")),
        LivePlot::Recovery => (step(), Axis::log("recovery (log scale)")),
        LivePlot::Drift => {
            if runs.iter().any(|s| !s.noise_drift.is_empty()) {
                marks.push(Mark::line(
                    "noise twin",
                    GREY,
                    Vec::new(),
                    2.0,
                    Dash::Dotted,
                ));
            }
            marks.push(Mark::line(
                "factors U, V",
                GREY,
                Vec::new(),
                1.5,
                Dash::Dashed,
            ));
            (step(), Axis::log("relative drift (log scale)"))
        }
        LivePlot::Spectrum => {
            marks.insert(
                0,
                Mark::line("X*", GREY, spectrum(target), 2.0, Dash::Dashed),
            );
            marks.push(Mark::hline(
                "floor 1e-12",
                GREY,
                SPECTRUM_FLOOR,
                Dash::Dotted,
            ));
            (Axis::linear("index"), Axis::log("σ"))
        }
    };
    Figure {
        title: plot.title().into(),
        body: Body::Plot { x, y, marks },
    }
}

/// What the live tab keeps of an earlier set of runs (labelled by what the next start
/// changed: `seed 0`, `budget 2000`, `rules GD, Adam`).
#[derive(Clone, Debug, PartialEq)]
pub struct PastLive {
    /// Its rules with their rates, in display order.
    pub rules: Vec<(Rule, f64)>,
    /// Its curves, one per rule.
    pub curves: Vec<RuleCurves>,
}

/// How many earlier sets of live runs the tab keeps.
pub const MAX_PAST_LIVE: usize = 3;

/// The faded curves of the shown earlier runs for `plot` ([`faded_line`]): each rule's main
/// curve (loss, recovery, the gauge twin's drift, the spectrum), one legend entry per earlier
/// set (`earlier 1: seed 0`). They go under the current runs' curves.
pub fn past_live_marks(past: &[Earlier<PastLive>], plot: LivePlot) -> Vec<Mark> {
    let mut marks = Vec::new();
    for (k, e) in Earlier::shown(past) {
        for (i, ((r, _), c)) in e.run.rules.iter().zip(&e.run.curves).enumerate() {
            let points = match plot {
                LivePlot::Loss => c.loss.clone(),
                LivePlot::Recovery => c.recovery.clone(),
                LivePlot::Drift => c.drift.clone(),
                LivePlot::Spectrum => c.spectrum.as_deref().map_or(Vec::new(), spectrum_points),
            };
            let color = optimizer_rgb(r.info().name, i);
            marks.push(faded_line(k, &e.label, i == 0, color, points));
        }
    }
    marks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::Shape;

    /// The drifts `rule` reports on a small instance after `steps` steps: (gauge twin, noise twin).
    fn drifts(rule: &str, steps: usize) -> (f64, f64) {
        let cfg = SensingConfig {
            n: 16,
            rank: 2,
            ..SensingConfig::default()
        };
        let rule = Rule::named(rule).unwrap();
        let mut live = GaugeLive::new(&cfg, &[(rule, rule.default_lr())], 3, steps);
        let (tx, rx) = crossbeam_channel::unbounded();
        let out = Outbox::new(tx);
        while !live.runs.is_empty() {
            if live.runs[0].advance(&out) {
                live.runs.clear();
            }
        }
        let done = rx.try_iter().find_map(|u| match u {
            Update::Done {
                summary,
                noise_drift,
                ..
            } => Some((summary.twin_drift.unwrap(), noise_drift)),
            _ => None,
        });
        done.expect("the run ended")
    }

    #[test]
    fn the_noise_twin_separates_amplified_rounding_from_a_rule_that_sees_the_basis() {
        // GD: both twins stay at rounding noise (measured 3.1e-16 and 2.7e-16).
        let (gauge, noise) = drifts("gd", 3000);
        assert!(gauge < 1e-13 && noise < 1e-13, "gd {gauge:e} {noise:e}");
        // Adam sees the basis: its gauge twin splits (0.34) while its noise twin stays (8.5e-15).
        let (gauge, noise) = drifts("adam", 3000);
        assert!(
            gauge > 1e-2 && gauge > 1e8 * noise,
            "adam {gauge:e} {noise:e}"
        );
        // Muon is equivariant but its dynamics amplify rounding: both twins rise together, far
        // above GD's (4.9e-6 and 4.4e-6), which only the noise twin can tell from a broken rule.
        let (gauge, noise) = drifts("muon", 3000);
        assert!(gauge > 1e-9 && noise > 1e-9, "muon {gauge:e} {noise:e}");
        assert!(
            (0.1..10.0).contains(&(gauge / noise)),
            "muon {gauge:e} {noise:e}"
        );
    }

    #[test]
    fn live_figures_draw_every_rule_and_the_spectrum_against_the_target() {
        let rules: Vec<(Rule, f64)> = ["gd", "adam"]
            .iter()
            .map(|n| (Rule::named(n).unwrap(), 0.1))
            .collect();
        let run = |v: f64| RuleCurves {
            loss: vec![[0.0, v], [10.0, v / 2.0]],
            drift: vec![[0.0, 1e-16]],
            factor_drift: vec![[0.0, 1e-15]],
            spectrum: Some(vec![3.0, 0.0]),
            ..RuleCurves::default()
        };
        let runs = [run(4.0), run(8.0)];
        let f = live_figure(&rules, &runs, &[2.0, 0.0], LivePlot::Loss);
        assert_eq!(f.title, "training loss (log)");
        let Body::Plot { y, marks, .. } = &f.body else {
            panic!("a plot")
        };
        assert!(y.log);
        assert_eq!(marks.len(), 2);
        assert!(matches!(&marks[1].shape, Shape::Line { points, .. } if points[1] == [10.0, 4.0]));
        let f = live_figure(&rules, &runs, &[2.0, 0.0], LivePlot::Drift);
        assert_eq!(
            crate::figure::names(&f),
            ["Gradient descent", "Adam", "factors U, V"]
        );
        let f = live_figure(&rules, &runs, &[2.0, 0.0], LivePlot::Spectrum);
        assert_eq!(
            crate::figure::names(&f),
            ["X*", "Gradient descent", "Adam", "floor 1e-12"]
        );
        let Body::Plot { x, marks, .. } = &f.body else {
            panic!("a plot")
        };
        assert_eq!(x.label, "index");
        let Shape::Line { points, dash, .. } = &marks[0].shape else {
            panic!("a line")
        };
        assert_eq!(points, &vec![[1.0, 2.0], [2.0, SPECTRUM_FLOOR]]);
        assert_eq!(*dash, Dash::Dashed);
        assert_eq!(LivePlot::Spectrum.stem(), "gauge_live_spectrum");
    }

    /// Issue 38 item 4 for the live tab's figures: two rules, and five (the zoo's first five,
    /// each with its noise twin and factors), fit at every print size.
    #[test]
    fn live_figures_fit_at_every_size() {
        let all = Rule::all();
        for count in [2, 5] {
            let rules: Vec<(Rule, f64)> = all.iter().take(count).map(|&r| (r, 0.01)).collect();
            let runs: Vec<RuleCurves> = (0..count)
                .map(|k| RuleCurves {
                    loss: (0..40)
                        .map(|t| [t as f64 * 500.0, 10f64.powi(2 - t / 4)])
                        .collect(),
                    drift: vec![[0.0, 1e-16], [2e4, 10f64.powi(-(k as i32))]],
                    factor_drift: vec![[0.0, 1e-15], [2e4, 0.3]],
                    noise_drift: vec![[0.0, 1e-16], [2e4, 1e-12]],
                    spectrum: Some(vec![3.0, 1.0, 1e-9]),
                    ..RuleCurves::default()
                })
                .collect();
            for plot in LivePlot::ALL {
                let f = live_figure(&rules, &runs, &[3.0, 1.0, 0.0], plot);
                crate::figure::check::assert_fits(&f, &format!("{count} rules: {}", f.title));
            }
        }
    }
}
