//! Throughput workloads shared by `cargo bench` (benches/throughput.rs) and `basis-lab bench`,
//! and the operation counts their GFLOP/s figures are measured against.
//!
//! # Operation counts
//!
//! One multiply-add (a multiplication and an addition) counts as two floating-point operations.
//! Only the arithmetic of the model and of the sensing loss is counted; exponentials, divisions,
//! the optimizer's update and the twin metrics are not, so a figure is a lower bound on the work
//! done and heavy update rules (Muon, Shampoo) show a lower GFLOP/s.
//!
//! **Episode forward + backward** ([`episode_multiply_adds`]), with `d = d_k`, `V_b` value
//! classes and `k` pairs, from `Workspace::loss_and_grad` in `src/model`:
//! - each of the k writes computes `δ = e_b − S k` and `S ← S + β δ kᵀ`: 2·V_b·d;
//! - each of the k queries reads `r = S k_a`, then accumulates `dS += dr kᵀ` and `dk += Sᵀ dr`:
//!   3·V_b·d;
//! - each of the k writes, reversed, forms `dδ = β dS k`, then `dk += β dSᵀ δ − S_iᵀ dδ` (two)
//!   and `dS −= dδ kᵀ`: 4·V_b·d;
//!
//! in all **9·k·V_b·d** per episode. Once per step, normalising the columns of `W_K` and
//! projecting the key gradient back onto them adds **4·d·V** ([`step_multiply_adds`]).
//! At the default preset (d 16, V_b 8, k 16, V 32) that is 18,432 per episode and 2,048 per
//! step.
//!
//! **Sensing loss and gradient** ([`sensing_multiply_adds`]), from
//! `SensingProblem::loss_and_grad` in `src/sensing`, with side n and m measurements: `X = U Vᵀ`
//! (n³), for every measurement the residual `⟨A_i, X⟩` (n²) and the accumulation `M += c r_i A_i`
//! (n²), then `∇U = M V` and `∇V = Mᵀ U` (2·n³): **2·m·n² + 3·n³**. At n = 40 (m = 462) that is
//! 1,670,400; at n = 128 (m = 1518), 56,033,280. A twin run doubles it.
//!
//! **Newton–Schulz on the completion factor** ([`newton_schulz_multiply_adds`]): Muon
//! orthogonalises the 2000 × 48 factor U of hyperspectral completion every step. With the long
//! side t and the short side s, the direct form does five times a Gram matrix (t·s²/2, only
//! one triangle), `A²` (s³) and `Y·(bA + cA²)` (t·s²): **5·(1.5·t·s² + s³)**, 35,112,960 at
//! 2000 × 48. The Gram form (`optim::NsForm`) does one Gram matrix, seventeen s × s products
//! and one t × s × s product: **1.5·t·s² + 17·s³**, 8,792,064 at 2000 × 48.
//!
//! **Attention training step** ([`AttentionWorkload::multiply_adds`]), from
//! `attention::model::train_step_multiply_adds`: the forward pass over n sequences of 3 tokens,
//! whose `first` distinct first tokens share their position-0 columns (a = first + 2n columns),
//! costs, per layer, `2d²·a` (keys, values) `+ 2d²·c` (queries, `W_O`) `+ 2df·c` (MLP) `+ 2d·π`
//! (attention scores and weighted values), with c = a query columns and π = first + 5n causal
//! pairs, but c = n and π = 3n in the last layer (the loss reads the last position only), and
//! `3d²·m + d²·c` in place of `2d²·a + 2d²·c` in the first layer, whose queries, keys and values
//! are computed once for each of its m distinct (position, token) inputs; plus `p·d·n` for the
//! logits; the backward pass is twice
//! that, so a step is 3× the forward. At the paper's sizes (n 883 with all 47 tokens at each of
//! the first two positions, so first 47 and m 95, d 64, f 256, 2 layers, p 47) that is
//! 122,587,840 for the forward pass and 367,763,520 (0.74 GFLOP) per training step (431,095,872
//! with only the first positions shared, 575,235,648 with neither).
//!
//! # Memory bandwidth
//!
//! [`stream_sum`] sums an f64 buffer of the measurement operator's size (m·n² numbers) in eight
//! independent lanes; the time of one pass, after warm-up passes, is the time to stream the
//! operator once. At n = 40 the 5.9 MB operator (and the probe buffer) stay in a last-level cache
//! of 8 MB or more between passes, exactly as the operator does between sensing steps; at
//! n = 128 (199 MB) both come from main memory.

use std::time::{Duration, Instant};

use nalgebra::DMatrix;

use crate::arith::{self, Arithmetic};
use crate::attention::{self, AttentionPreset, Params};
use crate::experiment::{PairedRun, scaled_to_dk, sweep};
use crate::model::{Episode, EpisodeSampler, MemoryConfig, Workspace};
use crate::optim::{Adam, NsForm, NsScratch, Optimizer, newton_schulz_in};
use crate::preset::Preset;
use crate::rng::{Stream, gaussian_matrix, stream};
use crate::sensing::hsi::{HsiConfig, HsiProblem, HsiWorkspace};
use crate::sensing::zoo::{FactorRun, Rule};
use crate::sensing::{SensingConfig, SensingProblem};

/// Multiply-adds of one episode's forward and backward pass: 9·k·V_b·d (see the module docs).
pub fn episode_multiply_adds(cfg: &MemoryConfig) -> u64 {
    9 * (cfg.pairs_per_episode * cfg.n_values * cfg.d_k) as u64
}

/// Multiply-adds done once per `loss_and_grad` call whatever the batch: 4·d·V (normalising the
/// columns and projecting the gradient back).
pub fn step_multiply_adds(cfg: &MemoryConfig) -> u64 {
    4 * (cfg.d_k * cfg.n_keys) as u64
}

/// Multiply-adds of one sensing loss-and-gradient evaluation at side `n` with `m`
/// measurements: 2·m·n² + 3·n³ (see the module docs).
pub fn sensing_multiply_adds(n: usize, m: usize) -> u64 {
    let (n, m) = (n as u64, m as u64);
    2 * m * n * n + 3 * n * n * n
}

/// Multiply-adds of one Newton–Schulz orthogonalisation of a `t × s` matrix (t ≥ s) in `form`
/// (see the module docs).
pub fn newton_schulz_multiply_adds(form: NsForm, t: usize, s: usize) -> u64 {
    let (t, s) = (t as u64, s as u64);
    match form {
        NsForm::Direct => 5 * (3 * t * s * s / 2 + s * s * s),
        NsForm::Gram => 3 * t * s * s / 2 + 17 * s * s * s,
    }
}

/// Muon's orthogonalisation of the hyperspectral factor's shape (2000 × 48) on a fixed Gaussian
/// matrix, in either form.
pub struct NewtonSchulzWorkload {
    b: DMatrix<f64>,
    out: DMatrix<f64>,
    scratch: NsScratch,
}

impl NewtonSchulzWorkload {
    /// Rows and columns of the workload: the completion factor U (pixels × width).
    pub const SHAPE: (usize, usize) = (2000, 48);

    /// The workload, its matrix drawn from seed 0.
    pub fn new() -> Self {
        let (rows, cols) = Self::SHAPE;
        Self {
            b: gaussian_matrix(&mut stream(0, Stream::InitialWeights), rows, cols, 1.0),
            out: DMatrix::zeros(rows, cols),
            scratch: NsScratch::new(rows, cols),
        }
    }

    /// One orthogonalisation in `form`; returns an entry of the result.
    pub fn run(&mut self, form: NsForm) -> f64 {
        newton_schulz_in(form, &self.b, &mut self.out, &mut self.scratch);
        self.out[(0, 0)]
    }
}

impl Default for NewtonSchulzWorkload {
    fn default() -> Self {
        Self::new()
    }
}

/// One step of hyperspectral completion at the paper's sizes (2000 pixels × 200 bands, width
/// 48, density 0.15) on smooth synthetic data: the masked loss and gradient, then the rule's
/// update.
pub struct CompletionWorkload {
    problem: HsiProblem,
    params: [DMatrix<f64>; 2],
    grads: [DMatrix<f64>; 2],
    ws: HsiWorkspace,
    opt: Box<dyn Optimizer>,
    lr: f64,
}

impl CompletionWorkload {
    /// The workload of `rule` at rate `lr`, warmed up by a few steps.
    pub fn new(rule: Rule, lr: f64) -> Self {
        let (pixels, bands) = (2000, 200);
        let x = DMatrix::from_fn(pixels, bands, |p, b| {
            let (p, b) = (p as f64, b as f64);
            0.01 * ((p * 0.013).sin() * (b * 0.05).cos() + (p * 0.007 + b * 0.02).cos())
        });
        let problem = HsiProblem::new(x, &HsiConfig::default()).expect("valid settings");
        let (u, v) = problem.init();
        let k = u.ncols();
        let mut w = Self {
            grads: [DMatrix::zeros(pixels, k), DMatrix::zeros(bands, k)],
            ws: HsiWorkspace::new(pixels, bands, k),
            params: [u, v],
            problem,
            opt: rule.build(),
            lr,
        };
        for _ in 0..3 {
            w.step();
        }
        w
    }

    /// One step; returns the pre-update loss.
    pub fn step(&mut self) -> f64 {
        let [u, v] = &self.params;
        let loss = self
            .problem
            .loss_and_grad(u, v, &mut self.grads, &mut self.ws);
        self.opt.step(&mut self.params, &self.grads, self.lr);
        loss
    }
}

/// One optimizer's update alone on the gauge lab's factor shapes (two 40 × 40 matrices) with a
/// fixed gradient: what a chain adds over its hand-written rule (the `chains` group).
pub struct UpdateWorkload {
    params: [DMatrix<f64>; 2],
    grads: [DMatrix<f64>; 2],
    opt: Box<dyn Optimizer>,
}

impl UpdateWorkload {
    /// The workload of `spec` (a registered rule or a chain), after one warm-up step.
    pub fn new(spec: &crate::optim::OptimizerSpec) -> Self {
        let m = |k: f64| DMatrix::from_fn(40, 40, |i, j| ((i * 40 + j) as f64 * k).sin());
        let mut w = Self {
            params: [m(0.37), m(0.11)],
            grads: [m(0.013), m(0.029)],
            opt: spec.build(),
        };
        w.step();
        w
    }

    /// One update at rate 1e-6 (small, so the parameters stay put over a long timing).
    pub fn step(&mut self) {
        self.opt.step(&mut self.params, &self.grads, 1e-6);
    }
}

/// Sum of `buf` in eight independent lanes: the memory-bandwidth probe. Reads every element once.
pub fn stream_sum(buf: &[f64]) -> f64 {
    let mut acc = [0.0f64; 8];
    let chunks = buf.chunks_exact(8);
    let tail: f64 = chunks.remainder().iter().sum();
    for c in chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += x;
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// The default preset moved to key dimension `d_k` (keys and pairs scaled as `dk-sweep` does).
pub fn default_at_dk(d_k: usize) -> Preset {
    scaled_to_dk(
        &Preset::load("default").expect("the default preset is bundled"),
        d_k,
    )
}

/// One episode's forward and backward pass at a preset's sizes, on a fixed weight matrix and a
/// fixed episode.
pub struct EpisodeWorkload {
    ws: Workspace,
    w: DMatrix<f64>,
    grad: DMatrix<f64>,
    episode: [Episode; 1],
}

impl EpisodeWorkload {
    /// The workload of `preset` (its seed draws W and the episode). Panics on an invalid preset.
    pub fn new(preset: &Preset) -> Self {
        preset.validate().expect("a valid preset");
        let cfg = preset.memory();
        let w = gaussian_matrix(
            &mut stream(preset.seed, Stream::InitialWeights),
            cfg.d_k,
            cfg.n_keys,
            preset.init_std(),
        );
        let mut sampler = EpisodeSampler::new(
            stream(preset.seed, Stream::Training),
            cfg.n_keys,
            cfg.n_values,
        );
        Self {
            ws: Workspace::new(cfg),
            grad: DMatrix::zeros(cfg.d_k, cfg.n_keys),
            episode: [sampler.sample(cfg.pairs_per_episode)],
            w,
        }
    }

    /// Runs the pass once; returns the loss.
    pub fn run(&mut self) -> f64 {
        self.ws
            .loss_and_grad(&self.w, &self.episode, &mut self.grad)
            .expect("random weights have no zero column")
    }

    /// Multiply-adds of one [`EpisodeWorkload::run`]: one episode plus the per-step work.
    pub fn multiply_adds(&self) -> u64 {
        let cfg = self.ws.config();
        episode_multiply_adds(cfg) + step_multiply_adds(cfg)
    }
}

/// A paired run of the default preset at `batch` episodes per step (all four arms).
pub fn paired_run(batch: usize) -> PairedRun {
    let mut p = Preset::load("default").expect("the default preset is bundled");
    p.batch = batch;
    PairedRun::new(&p).expect("the default preset is valid")
}

/// One training step of the attention model on its training set, at the sizes of the bundled
/// `attention` preset (the paper's: 883 sequences, 2 layers, d 64, MLP 256): the forward and
/// backward pass and an Adam update (lr 1e-3) of every parameter, as `benches/attention_jax.py`
/// times JAX doing.
pub struct AttentionWorkload {
    ws: attention::Workspace,
    params: Params,
    grads: Params,
    train: attention::Batch,
    adam: Adam,
}

impl AttentionWorkload {
    /// The workload of the bundled `attention` preset, seed 0.
    pub fn new() -> Self {
        let p = AttentionPreset::load("attention").expect("the attention preset is bundled");
        let arch = p.arch();
        let train = attention::split(&p.task, p.seed).train;
        let params = Params::init(arch, p.init, &mut stream(p.seed, Stream::AttentionInit));
        Self {
            ws: attention::Workspace::new(arch, train.n, true),
            grads: Params::zeros(arch),
            params,
            train,
            adam: Adam::new(0.9, 0.999, 1e-8),
        }
    }

    /// Runs one step; returns the loss before it.
    pub fn run(&mut self) -> f64 {
        let loss = self.ws.forward(&self.params, &self.train).loss;
        self.ws.backward(&self.params, &self.train, &mut self.grads);
        self.adam
            .step(&mut self.params.mats, &self.grads.mats, 1e-3);
        loss
    }

    /// Multiply-adds of one [`AttentionWorkload::run`] (documented in `attention::model`).
    pub fn multiply_adds(&self) -> u64 {
        attention::model::train_step_multiply_adds(&self.params.arch, &self.train)
    }
}

impl Default for AttentionWorkload {
    fn default() -> Self {
        Self::new()
    }
}

/// Multiply-adds of the model work in one paired step of `run`: two twins per arm, each a batch
/// of episodes plus the per-step work (optimizers and metrics not counted).
pub fn paired_step_multiply_adds(run: &PairedRun) -> u64 {
    let cfg = run.memory();
    let p = run.preset();
    let per_twin = p.batch as u64 * episode_multiply_adds(cfg) + step_multiply_adds(cfg);
    2 * p.arms.len() as u64 * per_twin
}

/// Wall time of a `seeds`-seed sweep of the default preset at `steps` steps on a fresh rayon
/// pool of `threads` threads (the faster of two runs).
pub fn sweep_seconds(seeds: usize, steps: usize, threads: usize) -> f64 {
    (0..2)
        .map(|_| sweep_once(seeds, steps, threads))
        .fold(f64::INFINITY, f64::min)
}

fn sweep_once(seeds: usize, steps: usize, threads: usize) -> f64 {
    let mut p = Preset::load("default").expect("the default preset is bundled");
    p.steps = steps;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    let start = Instant::now();
    pool.install(|| sweep(&p, seeds, &|| {}))
        .expect("the default preset is valid");
    start.elapsed().as_secs_f64()
}

/// The paper's sensing problem (r 3, m/dof 2, init 1e-3) at side `n`, seed 0.
pub fn sensing_problem(n: usize) -> SensingProblem {
    let cfg = SensingConfig {
        n,
        ..SensingConfig::default()
    };
    SensingProblem::new(&cfg, 0)
}

/// Seconds per pair of [`MAX_SHARED`](crate::sensing::MAX_SHARED) loss-and-gradient
/// evaluations on `problem` in the arithmetic in force: each pair reading the operator itself
/// ([`SensingProblem::loss_and_grad`]), then all of them in one shared pass
/// ([`SensingProblem::loss_and_grad_shared`]), as the zoo steps the runs of one instance.
/// Factors from seeds 0, 1, ….
pub fn shared_pass_seconds(problem: &SensingProblem, budget: Duration) -> (f64, f64) {
    use crate::sensing::{MAX_SHARED, PassItem, SensingWorkspace};
    let n = problem.cfg.n;
    let factors: [(DMatrix<f64>, DMatrix<f64>); MAX_SHARED] =
        std::array::from_fn(|s| problem.init(s as u64));
    let mut grads: [[DMatrix<f64>; 2]; MAX_SHARED] =
        std::array::from_fn(|_| [DMatrix::zeros(n, n), DMatrix::zeros(n, n)]);
    let mut ws: [SensingWorkspace; MAX_SHARED] = std::array::from_fn(|_| SensingWorkspace::new(n));
    let (alone, _) = time_per_call(budget, || {
        for ((f, g), w) in factors.iter().zip(&mut grads).zip(&mut ws) {
            std::hint::black_box(problem.loss_and_grad(&f.0, &f.1, g, w));
        }
    });
    let (shared, _) = time_per_call(budget, || {
        let (mut g, mut w) = (grads.iter_mut(), ws.iter_mut());
        let items: [PassItem<'_>; MAX_SHARED] = std::array::from_fn(|k| PassItem {
            u: &factors[k].0,
            v: &factors[k].1,
            grads: g.next().expect("a pair's gradients"),
            ws: w.next().expect("a pair's buffers"),
        });
        std::hint::black_box(problem.loss_and_grad_shared(items));
    });
    (alone / MAX_SHARED as f64, shared / MAX_SHARED as f64)
}

/// A sensing run of `rule` at its paper rate on `problem` with a budget no benchmark reaches,
/// warmed up by a few steps.
pub fn sensing_run(problem: &SensingProblem, rule: Rule) -> FactorRun<&SensingProblem> {
    let mut run = FactorRun::new(problem, rule, rule.default_lr(), usize::MAX, 0, false);
    for _ in 0..3 {
        run.step();
    }
    run
}

/// Seconds per call of `f`: a few warm-up calls, then 30 batches of calls, each lasting about
/// a 30th of `budget` (at least 3 calls); returns the fastest batch's mean, so that other
/// programs briefly taking the core do not count, and the calls timed in all.
pub fn time_per_call(budget: Duration, mut f: impl FnMut()) -> (f64, u64) {
    for _ in 0..3 {
        f();
    }
    let slice = budget / 30;
    let (mut best, mut total) = (f64::INFINITY, 0u64);
    for _ in 0..30 {
        let start = Instant::now();
        let mut calls = 0u64;
        while calls < 3 || start.elapsed() < slice {
            f();
            calls += 1;
        }
        best = best.min(start.elapsed().as_secs_f64() / calls as f64);
        total += calls;
    }
    (best, total)
}

/// One row of the `basis-lab bench` table.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// What was timed.
    pub name: String,
    /// Unit of `per_second`: "steps/s", "episodes/s", "GB/s" or "×".
    pub unit: &'static str,
    /// Throughput in `unit`, in the fast arithmetic.
    pub per_second: f64,
    /// Seconds per step, episode, pass or run, in the fast arithmetic.
    pub seconds: f64,
    /// Achieved GFLOP/s against the documented count, where one applies.
    pub gflops: Option<f64>,
    /// Seconds per step, episode or pass in the portable arithmetic, timed in the same run
    /// (for the figures the arithmetic changes).
    pub portable: Option<f64>,
    /// Target and verdict, or other remark.
    pub note: String,
}

/// The groups of figures, as `basis-lab bench --only` names them.
pub const GROUPS: [&str; 8] = [
    "episode",
    "paired",
    "attention",
    "sweep",
    "newton-schulz",
    "completion",
    "sensing",
    "chains",
];

/// How long `run_figures` measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BenchOptions {
    /// Time budget of each timed figure (in each arithmetic).
    pub per_figure: Duration,
    /// Steps per seed of the sweep figures.
    pub sweep_steps: usize,
    /// Whether to time the sensing steps and operator stream at n = 64, 96 and 128 too (the size
    /// ladder; slow to set up: 199 MB at n = 128).
    pub large: bool,
    /// Only this group of [`GROUPS`], or all.
    pub only: Option<&'static str>,
}

impl BenchOptions {
    /// About ten seconds in all.
    pub fn quick() -> Self {
        Self {
            per_figure: Duration::from_millis(150),
            sweep_steps: 50,
            large: false,
            only: None,
        }
    }

    /// About four minutes: longer timings, longer sweeps, the n = 64, 96 and 128 figures.
    pub fn long() -> Self {
        Self {
            per_figure: Duration::from_secs(2),
            sweep_steps: 400,
            large: true,
            only: None,
        }
    }

    fn wants(&self, group: &str) -> bool {
        self.only.is_none_or(|g| g == group)
    }
}

/// Times `f` in the fast and then the portable arithmetic ([`time_per_call`] each), and leaves
/// the arithmetic as it found it: (fast seconds, portable seconds).
fn time_both(budget: Duration, mut f: impl FnMut()) -> (f64, f64) {
    let before = arith::current();
    arith::set(Arithmetic::Fast);
    let (fast, _) = time_per_call(budget, &mut f);
    arith::set(Arithmetic::Portable);
    let (portable, _) = time_per_call(budget, &mut f);
    arith::set(before);
    (fast, portable)
}

/// Runs `f` on a fresh rayon pool of `threads` threads.
fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
        .install(f)
}

/// Measures every figure (or those of `opts.only`), calling `report` as each is ready (so a
/// table can print as it goes).
pub fn run_figures(opts: BenchOptions, report: &mut dyn FnMut(&Figure)) -> Vec<Figure> {
    let mut out = Vec::new();
    let mut push = |f: Figure| {
        report(&f);
        out.push(f);
    };
    let gflops = |ma: u64, secs: f64| Some(2.0 * ma as f64 / secs / 1e9);
    let timed = |name: String, unit, (secs, portable): (f64, f64), gflops, note: String| Figure {
        name,
        unit,
        per_second: 1.0 / secs,
        seconds: secs,
        gflops,
        portable: Some(portable),
        note,
    };
    if opts.wants("episode") {
        for d_k in [16, 64] {
            let mut w = EpisodeWorkload::new(&default_at_dk(d_k));
            let both = time_both(opts.per_figure, || {
                std::hint::black_box(w.run());
            });
            push(timed(
                format!("episode fwd+bwd, d_k {d_k}"),
                "episodes/s",
                both,
                gflops(w.multiply_adds(), both.0),
                String::new(),
            ));
        }
    }
    if opts.wants("paired") {
        for batch in [8, 1] {
            let mut run = paired_run(batch);
            let both = time_both(opts.per_figure, || {
                run.step();
            });
            let note = if batch == 1 {
                verdict(1.0 / both.0 >= 20_000.0, "target ≥ 20000 steps/s")
            } else {
                "the default preset".into()
            };
            push(timed(
                format!("paired step, 4 arms, batch {batch}"),
                "steps/s",
                both,
                gflops(paired_step_multiply_adds(&run), both.0),
                note,
            ));
        }
    }
    if opts.wants("attention") {
        let mut secs = [0.0; 2];
        for (threads, secs) in [1, 2].into_iter().zip(&mut secs) {
            let (both, ma) = in_pool(threads, || {
                let mut w = AttentionWorkload::new();
                let both = time_both(opts.per_figure.max(Duration::from_secs(1)), || {
                    std::hint::black_box(w.run());
                });
                (both, w.multiply_adds())
            });
            *secs = both.0;
            push(timed(
                format!("attention train step, {threads} thread(s)"),
                "steps/s",
                both,
                gflops(ma, both.0),
                "883 sequences, with Adam".into(),
            ));
        }
        let [one, two] = secs;
        push(Figure {
            name: "attention speed-up, 2 threads over 1".into(),
            unit: "×",
            per_second: one / two,
            seconds: two,
            gflops: None,
            portable: None,
            note: verdict(one / two >= 1.8, "target ≥ 1.8× on a quiet machine"),
        });
    }
    if opts.wants("sweep") {
        let sweep_steps = opts.sweep_steps;
        let one = sweep_seconds(16, sweep_steps, 1);
        let two = sweep_seconds(16, sweep_steps, 2);
        for (threads, secs) in [(1, one), (2, two)] {
            push(Figure {
                name: format!("16-seed sweep × {sweep_steps} steps, {threads} thread(s)"),
                unit: "steps/s",
                per_second: (16 * sweep_steps) as f64 / secs,
                seconds: secs,
                gflops: None,
                portable: None,
                note: String::new(),
            });
        }
        push(Figure {
            name: "sweep speed-up, 2 threads over 1".into(),
            unit: "×",
            per_second: one / two,
            seconds: two,
            gflops: None,
            portable: None,
            note: verdict(one / two >= 1.8, "target ≥ 1.8×"),
        });
    }
    if opts.wants("newton-schulz") {
        let mut ns = NewtonSchulzWorkload::new();
        let (t, s) = NewtonSchulzWorkload::SHAPE;
        let mut ns_secs = [0.0; 2];
        for (i, form) in [NsForm::Direct, NsForm::Gram].into_iter().enumerate() {
            let both = time_both(opts.per_figure, || {
                std::hint::black_box(ns.run(form));
            });
            ns_secs[i] = both.0;
            let gram = form == NsForm::Gram;
            push(timed(
                format!(
                    "Newton–Schulz {t} × {s}, {} form",
                    if gram { "Gram" } else { "direct" }
                ),
                "calls/s",
                both,
                gflops(newton_schulz_multiply_adds(form, t, s), both.0),
                if gram {
                    "what Muon uses at this shape".into()
                } else {
                    String::new()
                },
            ));
        }
        push(Figure {
            name: "Newton–Schulz speed-up, Gram over direct".into(),
            unit: "×",
            per_second: ns_secs[0] / ns_secs[1],
            seconds: ns_secs[1],
            gflops: None,
            portable: None,
            note: verdict(ns_secs[0] / ns_secs[1] >= 2.0, "target ≥ 2×"),
        });
    }
    if opts.wants("completion") {
        for (name, lr) in [("gd", 30.0), ("muon", 0.1)] {
            let rule = Rule::named(name).expect("a registered rule");
            let mut w = CompletionWorkload::new(rule, lr);
            let both = time_both(opts.per_figure, || {
                std::hint::black_box(w.step());
            });
            push(timed(
                format!("completion step 2000 × 200, {}", rule.name()),
                "steps/s",
                both,
                None,
                "density 0.15, width 48".into(),
            ));
        }
    }
    if opts.wants("sensing") {
        let sizes: &[usize] = if opts.large {
            &[40, 64, 96, 128]
        } else {
            &[40]
        };
        for &n in sizes {
            let problem = sensing_problem(n);
            let m = problem.m();
            let ma = sensing_multiply_adds(n, m);
            let buf: Vec<f64> = (0..m * n * n).map(|i| (i % 7) as f64).collect();
            let (stream_secs, _) = time_per_call(opts.per_figure, || {
                std::hint::black_box(stream_sum(std::hint::black_box(&buf)));
            });
            drop(buf);
            let bytes = (m * n * n * 8) as f64;
            push(Figure {
                name: format!("stream m·n² f64 once, n {n} ({:.1} MB)", bytes / 1e6),
                unit: "GB/s",
                per_second: bytes / stream_secs / 1e9,
                seconds: stream_secs,
                gflops: None,
                portable: None,
                note: "memory-bandwidth probe".into(),
            });
            let (alone, shared) = shared_pass_seconds(&problem, opts.per_figure);
            push(Figure {
                name: format!(
                    "sensing pass n {n}, {} pairs shared",
                    crate::sensing::MAX_SHARED
                ),
                unit: "pairs/s",
                per_second: 1.0 / shared,
                seconds: shared,
                gflops: gflops(ma, shared),
                portable: None,
                note: format!(
                    "per pair {:.2}× the stream; alone {:.2}×",
                    shared / stream_secs,
                    alone / stream_secs
                ),
            });
            for (k, name) in ["gd", "adam", "muon", "shampoo"].into_iter().enumerate() {
                let rule = Rule::named(name).expect("registered");
                let mut run = sensing_run(&problem, rule);
                let both = time_both(opts.per_figure, || {
                    run.step();
                });
                let ratio = both.0 / stream_secs;
                let note = if n == 40 && k == 0 {
                    verdict(
                        ratio <= 1.5,
                        &format!("{ratio:.2}× the stream; target ≤ 1.5×"),
                    )
                } else {
                    format!("{ratio:.2}× the stream")
                };
                push(timed(
                    format!("sensing step n {n}, {}", rule.name()),
                    "steps/s",
                    both,
                    gflops(ma, both.0),
                    note,
                ));
            }
        }
    }
    if opts.wants("chains") {
        // A rule no chain expresses (FlowAdam) has no comparison to time.
        for (info, to_chain) in crate::optim::REGISTRY
            .iter()
            .filter_map(|i| Some((i, i.chain?)))
        {
            let spec = crate::optim::OptimizerSpec::new(info.name, info.lr);
            let chain = crate::optim::OptimizerSpec {
                optimizer: to_chain(&spec),
                ..spec.clone()
            };
            let (mut rule, mut composed) =
                (UpdateWorkload::new(&spec), UpdateWorkload::new(&chain));
            let (rule_secs, _) = time_per_call(opts.per_figure, || rule.step());
            let (chain_secs, _) = time_per_call(opts.per_figure, || composed.step());
            let ratio = chain_secs / rule_secs;
            push(Figure {
                name: format!("update 2 × 40², {} as a chain", info.name),
                unit: "steps/s",
                per_second: 1.0 / chain_secs,
                seconds: chain_secs,
                gflops: None,
                portable: None,
                note: verdict(
                    ratio <= 1.1,
                    &format!("{ratio:.2}× the rule's step; target ≤ 1.10×"),
                ),
            });
        }
    }
    out
}

/// The header of the `basis-lab bench` table, matching [`table_row`].
pub fn table_header() -> String {
    format!(
        "{:<40} {:>12} {:<10} {:>10} {:>8} {:>12} {:>7}  note",
        "workload", "fast", "unit", "time", "GFLOP/s", "portable", "ratio"
    )
}

/// One figure as a row of the `basis-lab bench` table: rate and time per unit in the fast
/// arithmetic, GFLOP/s, the rate in the portable arithmetic and fast over portable, note.
pub fn table_row(f: &Figure) -> String {
    let time = if f.seconds >= 1.0 {
        format!("{:.2} s", f.seconds)
    } else if f.seconds >= 1e-3 {
        format!("{:.2} ms", f.seconds * 1e3)
    } else {
        format!("{:.1} µs", f.seconds * 1e6)
    };
    let rate = |r: f64| {
        if r >= 100.0 {
            format!("{r:.0}")
        } else {
            format!("{r:.2}")
        }
    };
    let gflops = f.gflops.map_or("—".into(), |g| format!("{g:.2}"));
    let (portable, ratio) = match f.portable {
        Some(p) => (rate(1.0 / p), format!("{:.2}×", p / f.seconds)),
        None => ("—".into(), "—".into()),
    };
    format!(
        "{:<40} {:>12} {:<10} {:>10} {:>8} {:>12} {:>7}  {}",
        f.name,
        rate(f.per_second),
        f.unit,
        time,
        gflops,
        portable,
        ratio,
        f.note
    )
}

fn verdict(met: bool, target: &str) -> String {
    format!("{target}: {}", if met { "met" } else { "missed" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operation_counts_follow_the_documented_formulas() {
        let cfg = default_at_dk(16).memory();
        assert_eq!(episode_multiply_adds(&cfg), 18_432);
        assert_eq!(step_multiply_adds(&cfg), 2_048);
        assert_eq!(sensing_multiply_adds(40, 462), 1_670_400);
        assert_eq!(sensing_problem(40).m(), 462);
        assert_eq!(sensing_multiply_adds(128, 1518), 56_033_280);
        let run = paired_run(1);
        assert_eq!(paired_step_multiply_adds(&run), 8 * (18_432 + 2_048));
        assert_eq!(
            newton_schulz_multiply_adds(NsForm::Direct, 2000, 48),
            35_112_960
        );
        assert_eq!(
            newton_schulz_multiply_adds(NsForm::Gram, 2000, 48),
            8_792_064
        );
        assert_eq!(AttentionWorkload::new().multiply_adds(), 3 * 122_587_840);
    }

    #[test]
    fn stream_sum_adds_every_element() {
        let buf: Vec<f64> = (1..=1001).map(f64::from).collect();
        assert_eq!(stream_sum(&buf), 1001.0 * 1002.0 / 2.0);
    }
}
