//! Hyperspectral completion (numerics §7, last bullet; the paper's Table 5): a pixels × bands matrix
//! from a hyperspectral cube, a Bernoulli mask of observed entries, and `W = U Vᵀ` fitted to the
//! observed entries by GD, Adam or Muon. Held-out RMSE (on the unobserved entries) and the
//! effective rank of `UVᵀ` are read at the first step the training loss falls below each level
//! of [`LEVELS`], so the rules are compared at matched training loss. [`grid`] runs the paper's
//! whole Table 5 protocol: rate grids, the train-only selection, several seeds.

pub mod figures;
pub mod grid;
pub mod report;
pub mod task;

use nalgebra::DMatrix;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use super::effective_rank;
use super::zoo::{DIVERGED, Outcome, Rule};
use crate::arith::Ops;
use crate::linalg::mul_into;
use crate::optim::Optimizer;
use crate::rng::gaussian_matrix;
use std::sync::atomic::{AtomicBool, Ordering};

/// Training-loss levels at which the metrics are read (numerics §7), from shallow to deep.
pub const LEVELS: [f64; 6] = [3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5];

/// Why a completion problem could not be set up.
#[derive(Debug, Error)]
pub enum HsiError {
    /// A setting is out of range.
    #[error("field `{field}`: {message}")]
    Config {
        /// The setting.
        field: String,
        /// What is wrong and the allowed range.
        message: String,
    },
    /// The scene cannot be used.
    #[error("scene: {0}")]
    Scene(String),
    /// The scene file could not be read.
    #[error(transparent)]
    Mat(#[from] crate::matv5::MatError),
    /// A saved report (`hsi.json`) cannot be read back.
    #[error("{file}: {message}")]
    Report {
        /// The file as given.
        file: String,
        /// What is wrong: the JSON's line and column, or the field that fails its check.
        message: String,
    },
    /// A cancel request stopped the work.
    #[error("cancelled")]
    Cancelled,
}

/// Settings of one completion problem (numerics §7). Defaults: the paper's width 48, init 1e-2,
/// 2000 pixels, ≤ 3·10⁴ steps, density 0.15.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HsiConfig {
    /// Probability that an entry is observed, (0, 1).
    pub density: f64,
    /// Width k of the factors U (pixels × k) and V (bands × k), 1..=1024.
    pub width: usize,
    /// Standard deviation of the factors' entries at initialisation, (0, 10].
    pub init: f64,
    /// Pixels kept after dropping all-zero ones, 1..=10⁶ (all of them if fewer remain).
    pub pixels: usize,
    /// Step budget, 1..=10⁷.
    pub steps: usize,
    /// Seed of the pixel choice, the mask and the initial factors.
    pub seed: u64,
}

impl Default for HsiConfig {
    fn default() -> Self {
        Self {
            density: 0.15,
            width: 48,
            init: 1e-2,
            pixels: 2000,
            steps: 30_000,
            seed: 0,
        }
    }
}

impl HsiConfig {
    /// Checks every field. Errors name the field and the allowed range.
    pub fn validate(&self) -> Result<(), HsiError> {
        let bad = |field: &str, message: String| {
            Err(HsiError::Config {
                field: field.into(),
                message,
            })
        };
        if !(self.density.is_finite() && self.density > 0.0 && self.density < 1.0) {
            return bad(
                "density",
                format!("{} is out of range; allowed (0, 1)", self.density),
            );
        }
        if !(1..=1024).contains(&self.width) {
            return bad(
                "width",
                format!("{} is out of range; allowed 1..=1024", self.width),
            );
        }
        if !(self.init.is_finite() && self.init > 0.0 && self.init <= 10.0) {
            return bad(
                "init",
                format!("{} is out of range; allowed (0, 10]", self.init),
            );
        }
        if !(1..=1_000_000).contains(&self.pixels) {
            return bad(
                "pixels",
                format!("{} is out of range; allowed 1..=1000000", self.pixels),
            );
        }
        // Each run keeps its loss curve (8 bytes a step), and a grid runs sixteen at once.
        if !(1..=1_000_000).contains(&self.steps) {
            return bad(
                "steps",
                format!("{} is out of range; allowed 1..=1000000", self.steps),
            );
        }
        Ok(())
    }
}

/// Random streams of a completion seed (one per consumer, [`crate::rng::stream_id`]).
#[derive(Clone, Copy, Debug)]
#[repr(u64)]
pub enum HsiStream {
    /// The choice of pixels.
    Pixels = 21,
    /// The observation mask.
    Mask = 22,
    /// The initial factors.
    Init = 23,
}

fn stream(seed: u64, s: HsiStream) -> ChaCha8Rng {
    crate::rng::stream_id(seed, s as u64)
}

/// The pixels × bands matrix of a column-major `rows × cols × bands` cube (MATLAB's order):
/// pixel p = i + rows·j is row p, so the cube's data is already this matrix in column-major
/// order (MATLAB's `reshape(X, rows*cols, bands)`). Panics if `data` has the wrong length.
pub fn pixel_matrix(data: &[f64], dims: [usize; 3]) -> DMatrix<f64> {
    let [rows, cols, bands] = dims;
    assert_eq!(data.len(), rows * cols * bands, "cube data length");
    DMatrix::from_column_slice(rows * cols, bands, data)
}

/// What preprocessing kept, for the report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Preprocessed {
    /// The centred data, `kept × bands`.
    #[serde(skip)]
    pub x: DMatrix<f64>,
    /// Global maximum the scene was divided by.
    pub max: f64,
    /// Pixels in the scene.
    pub scene_pixels: usize,
    /// Pixels left after dropping all-zero ones.
    pub nonzero_pixels: usize,
    /// Original pixel index (row of the pixel matrix) of each kept row, ascending.
    pub kept: Vec<usize>,
}

/// numerics §7's preprocessing of a pixels × bands matrix `m`: divide by the global maximum, drop
/// pixels whose bands are all zero, keep `pixels` of the rest chosen uniformly without
/// replacement by the seed's pixel stream (all of them if fewer remain; kept in ascending
/// order), subtract each band's mean over the kept pixels. Errors: an empty matrix, a
/// non-finite or negative maximum, or no non-zero pixel.
pub fn preprocess(m: &DMatrix<f64>, pixels: usize, seed: u64) -> Result<Preprocessed, HsiError> {
    if m.is_empty() {
        return Err(HsiError::Scene(format!(
            "it is empty ({} pixels × {} bands); a scene needs at least one pixel and one band",
            m.nrows(),
            m.ncols()
        )));
    }
    if let Some(bad) = m.iter().find(|x| !x.is_finite()) {
        return Err(HsiError::Scene(format!(
            "it holds a non-finite value ({bad})"
        )));
    }
    let max = m.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max <= 0.0 {
        return Err(HsiError::Scene(format!(
            "its maximum is {max}; a positive maximum is needed to scale it"
        )));
    }
    let nonzero: Vec<usize> = (0..m.nrows())
        .filter(|&p| m.row(p).iter().any(|&x| x != 0.0))
        .collect();
    if nonzero.is_empty() {
        return Err(HsiError::Scene("every pixel is zero".into()));
    }
    let mut pool = nonzero.clone();
    let take = pixels.min(pool.len());
    let mut rng = stream(seed, HsiStream::Pixels);
    for i in 0..take {
        let j = rng.random_range(i..pool.len());
        pool.swap(i, j);
    }
    let mut kept = pool[..take].to_vec();
    kept.sort_unstable();
    let mut x = DMatrix::from_fn(take, m.ncols(), |r, b| m[(kept[r], b)] / max);
    for mut col in x.column_iter_mut() {
        let mean = col.sum() / take as f64;
        col.add_scalar_mut(-mean);
    }
    Ok(Preprocessed {
        x,
        max,
        scene_pixels: m.nrows(),
        nonzero_pixels: nonzero.len(),
        kept,
    })
}

/// A completion problem: the data X (`P × B`), its observation mask, and the observed entries
/// grouped by pixel (row) for the gradient.
#[derive(Clone, Debug)]
pub struct HsiProblem {
    /// Settings.
    pub cfg: HsiConfig,
    /// The data X (`P × B`).
    pub x: DMatrix<f64>,
    /// `true` where an entry is observed (`P × B`).
    pub mask: DMatrix<bool>,
    /// Observed entries of row p are `row_start[p]..row_start[p + 1]` of `obs_band`/`obs_value`.
    row_start: Vec<usize>,
    obs_band: Vec<usize>,
    obs_value: Vec<f64>,
}

impl HsiProblem {
    /// Draws the mask of `cfg.seed`: each entry of `x` (`P × B`) observed independently with
    /// probability `cfg.density`, drawn in column-major order from the mask stream. Errors: an
    /// invalid config, or a mask with no observed or no held-out entry.
    pub fn new(x: DMatrix<f64>, cfg: &HsiConfig) -> Result<Self, HsiError> {
        cfg.validate()?;
        let mut rng = stream(cfg.seed, HsiStream::Mask);
        let mask = DMatrix::from_fn(x.nrows(), x.ncols(), |_, _| {
            rng.random::<f64>() < cfg.density
        });
        let observed = mask.iter().filter(|&&o| o).count();
        if observed == 0 || observed == mask.len() {
            return Err(HsiError::Config {
                field: "density".into(),
                message: format!(
                    "the mask of {} entries at density {} observes {observed}; at least one \
                     observed and one held-out entry are needed",
                    mask.len(),
                    cfg.density
                ),
            });
        }
        let mut row_start = Vec::with_capacity(x.nrows() + 1);
        let (mut obs_band, mut obs_value) = (Vec::new(), Vec::new());
        for p in 0..x.nrows() {
            row_start.push(obs_band.len());
            for b in 0..x.ncols() {
                if mask[(p, b)] {
                    obs_band.push(b);
                    obs_value.push(x[(p, b)]);
                }
            }
        }
        row_start.push(obs_band.len());
        Ok(Self {
            cfg: cfg.clone(),
            x,
            mask,
            row_start,
            obs_band,
            obs_value,
        })
    }

    /// Number of observed entries |Ω|.
    pub fn observed(&self) -> usize {
        self.obs_band.len()
    }

    /// Initial factors (U `P × k`, V `B × k`), i.i.d. N(0, init²), U drawn first.
    pub fn init(&self) -> (DMatrix<f64>, DMatrix<f64>) {
        let mut rng = stream(self.cfg.seed, HsiStream::Init);
        let k = self.cfg.width;
        let u = gaussian_matrix(&mut rng, self.x.nrows(), k, self.cfg.init);
        let v = gaussian_matrix(&mut rng, self.x.ncols(), k, self.cfg.init);
        (u, v)
    }

    /// Loss `L = (1/|Ω|) Σ_{(p,b)∈Ω} ((UVᵀ)_pb − X_pb)²` and its gradients `∇U = R V`,
    /// `∇V = Rᵀ U` with `R = (2/|Ω|)·(UVᵀ − X)` on Ω and 0 elsewhere, written into `grads`
    /// ([∇U `P × k`, ∇V `B × k`]). Only the observed entries are visited: each costs three
    /// length-k passes over contiguous rows of Uᵀ and Vᵀ held in `ws`. Fixed summation order;
    /// allocation-free with `ws` from [`HsiWorkspace::new`]. Panics on shape mismatches.
    pub fn loss_and_grad(
        &self,
        u: &DMatrix<f64>,
        v: &DMatrix<f64>,
        grads: &mut [DMatrix<f64>; 2],
        ws: &mut HsiWorkspace,
    ) -> f64 {
        hsi_loss_and_grad(self, u, v, grads, ws)
    }

    #[inline(always)]
    fn loss_and_grad_impl<A: Ops>(
        &self,
        u: &DMatrix<f64>,
        v: &DMatrix<f64>,
        grads: &mut [DMatrix<f64>; 2],
        ws: &mut HsiWorkspace,
    ) -> f64 {
        let k = u.ncols();
        u.transpose_to(&mut ws.ut);
        v.transpose_to(&mut ws.vt);
        ws.gvt.fill(0.0);
        let (ut, vt) = (ws.ut.as_slice(), ws.vt.as_slice());
        let (gut, gvt) = (ws.gut.as_mut_slice(), ws.gvt.as_mut_slice());
        let scale = 2.0 / self.observed() as f64;
        let mut loss = 0.0;
        for (p, (ui, gui)) in ut.chunks_exact(k).zip(gut.chunks_exact_mut(k)).enumerate() {
            gui.fill(0.0);
            let entries = self.row_start[p]..self.row_start[p + 1];
            for (&b, &xv) in self.obs_band[entries.clone()]
                .iter()
                .zip(&self.obs_value[entries])
            {
                let vb = &vt[b * k..(b + 1) * k];
                let r = super::dot::<A>(ui, vb) - xv;
                loss += r * r;
                let c = scale * r;
                for (g, &y) in gui.iter_mut().zip(vb) {
                    *g = A::madd(c, y, *g);
                }
                for (g, &y) in gvt[b * k..(b + 1) * k].iter_mut().zip(ui) {
                    *g = A::madd(c, y, *g);
                }
            }
        }
        let [gu, gv] = grads;
        ws.gut.transpose_to(gu);
        ws.gvt.transpose_to(gv);
        loss / self.observed() as f64
    }

    /// Held-out RMSE of `w` (`P × B`): `√(mean over unobserved (p, b) of (w_pb − X_pb)²)`.
    pub fn test_rmse(&self, w: &DMatrix<f64>) -> f64 {
        let (mut sum, mut n) = (0.0, 0usize);
        for ((&wi, &xi), &o) in w.iter().zip(self.x.iter()).zip(self.mask.iter()) {
            if !o {
                sum += (wi - xi) * (wi - xi);
                n += 1;
            }
        }
        if crate::linalg::norm::in_plain_range(sum.sqrt()) {
            return (sum / n as f64).sqrt();
        }
        // Out of the plain sum's range: the range-safe norm over √n (numerics §9).
        let diffs = w.iter().zip(self.x.iter()).zip(self.mask.iter());
        let errors = diffs.filter(|(_, o)| !**o).map(|((wi, xi), _)| wi - xi);
        crate::linalg::norm::checked_norm(f64::NAN, errors) / (n as f64).sqrt()
    }
}

crate::linalg::dispatch! {
    /// [`HsiProblem::loss_and_grad`], compiled per arithmetic.
    fn hsi_loss_and_grad(
        problem: &HsiProblem,
        u: &DMatrix<f64>,
        v: &DMatrix<f64>,
        grads: &mut [DMatrix<f64>; 2],
        ws: &mut HsiWorkspace,
    ) -> f64 => HsiProblem::loss_and_grad_impl
}

/// Buffers for [`HsiProblem::loss_and_grad`] and the product `UVᵀ`.
#[derive(Clone, Debug)]
pub struct HsiWorkspace {
    ut: DMatrix<f64>,
    vt: DMatrix<f64>,
    gut: DMatrix<f64>,
    gvt: DMatrix<f64>,
    w: DMatrix<f64>,
}

impl HsiWorkspace {
    /// Buffers for `pixels × bands` data and width `k`.
    pub fn new(pixels: usize, bands: usize, k: usize) -> Self {
        Self {
            ut: DMatrix::zeros(k, pixels),
            vt: DMatrix::zeros(k, bands),
            gut: DMatrix::zeros(k, pixels),
            gvt: DMatrix::zeros(k, bands),
            w: DMatrix::zeros(pixels, bands),
        }
    }
}

/// The metrics at the first step whose pre-update training loss fell below a level.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Crossing {
    /// Updates applied before that step (the factors read are those after `step` updates).
    pub step: usize,
    /// The training loss there (a diverged run's last one may be infinite or NaN).
    #[serde(deserialize_with = "nan_if_null")]
    pub train_loss: f64,
    /// Held-out RMSE of `UVᵀ` there (NaN once a run diverged).
    #[serde(deserialize_with = "nan_if_null")]
    pub test_rmse: f64,
    /// Effective rank of `UVᵀ` there (NaN once a run diverged).
    #[serde(deserialize_with = "nan_if_null")]
    pub erank: f64,
}

/// Reads a number, or the `null` that JSON writes for NaN and ±inf (`hsi.json` of a grid with a
/// diverged run) as NaN. Formats that write NaN themselves (RON) read it as written.
fn nan_if_null<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    struct Number;
    impl serde::de::Visitor<'_> for Number {
        type Value = f64;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a number or null")
        }
        fn visit_f64<E>(self, v: f64) -> Result<f64, E> {
            Ok(v)
        }
        fn visit_i64<E>(self, v: i64) -> Result<f64, E> {
            Ok(v as f64)
        }
        fn visit_u64<E>(self, v: u64) -> Result<f64, E> {
            Ok(v as f64)
        }
        fn visit_unit<E>(self) -> Result<f64, E> {
            Ok(f64::NAN)
        }
        fn visit_none<E>(self) -> Result<f64, E> {
            Ok(f64::NAN)
        }
    }
    d.deserialize_any(Number)
}

/// One rule's completion run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HsiRun {
    /// Rule name.
    pub rule: String,
    /// Learning rate (constant, numerics §7).
    pub lr: f64,
    /// Seed of the problem (pixels, mask, initial factors).
    pub seed: u64,
    /// Updates applied.
    pub steps: usize,
    /// How it ended: `Budget` (every step taken) or `Diverged`.
    pub outcome: Outcome,
    /// For each level of [`LEVELS`], the first crossing, if any.
    pub crossings: Vec<Option<Crossing>>,
    /// Metrics of the final factors (NaN RMSE and erank for a diverged run).
    pub last: Crossing,
    /// The pre-update training loss of every step taken, then the final one.
    #[serde(skip)]
    pub losses: Vec<f64>,
}

/// Runs `rule` at constant rate `lr` from the problem's initial factors for `cfg.steps`
/// updates. Each step computes the pre-update loss; at the first step it is below a level of
/// [`LEVELS`] (several levels may fall at once) the held-out RMSE and effective rank of the
/// current `UVᵀ` are recorded. The run goes on to the budget (so the final row shows the
/// deepest point of the fit) unless the loss turns non-finite or exceeds 1e8 (diverged).
/// `progress(n)` reports n more steps done, every 200 steps and once at the end, adding up to
/// `cfg.steps` in all.
pub fn run(problem: &HsiProblem, rule: Rule, lr: f64, progress: &(dyn Fn(u64) + Sync)) -> HsiRun {
    run_until(problem, rule, lr, progress, &AtomicBool::new(false))
}

/// [`run`] that stops within 200 steps of `cancel` being raised, with outcome `Cancelled` (its
/// last point measured where it stopped).
pub fn run_until(
    problem: &HsiProblem,
    rule: Rule,
    lr: f64,
    progress: &(dyn Fn(u64) + Sync),
    cancel: &AtomicBool,
) -> HsiRun {
    let budget = problem.cfg.steps;
    let (u, v) = problem.init();
    let (p, b, k) = (u.nrows(), v.nrows(), u.ncols());
    let mut params = [u, v];
    let mut grads = [DMatrix::zeros(p, k), DMatrix::zeros(b, k)];
    let mut ws = HsiWorkspace::new(p, b, k);
    let mut opt: Box<dyn Optimizer> = rule.build();
    let mut crossings: Vec<Option<Crossing>> = vec![None; LEVELS.len()];
    let mut losses = Vec::with_capacity(budget + 1);
    let mut reported = 0u64;
    let mut t = 0;
    let outcome = loop {
        let [u, v] = &params;
        let loss = problem.loss_and_grad(u, v, &mut grads, &mut ws);
        losses.push(loss);
        if !loss.is_finite() || loss > DIVERGED {
            break Outcome::Diverged;
        }
        if LEVELS
            .iter()
            .zip(&crossings)
            .any(|(&l, c)| c.is_none() && loss < l)
        {
            let at = measure(problem, &params, &mut ws, t, loss);
            for (&l, c) in LEVELS.iter().zip(crossings.iter_mut()) {
                if c.is_none() && loss < l {
                    *c = Some(at.clone());
                }
            }
        }
        if t >= budget {
            break Outcome::Budget;
        }
        opt.step(&mut params, &grads, lr);
        t += 1;
        if t % 200 == 0 {
            progress(200);
            reported += 200;
            if cancel.load(Ordering::Relaxed) {
                break Outcome::Cancelled;
            }
        }
    };
    progress(budget as u64 - reported.min(budget as u64));
    let final_loss = *losses.last().expect("at least one step");
    let last = if outcome == Outcome::Diverged {
        Crossing {
            step: t,
            train_loss: final_loss,
            test_rmse: f64::NAN,
            erank: f64::NAN,
        }
    } else {
        measure(problem, &params, &mut ws, t, final_loss)
    };
    HsiRun {
        rule: rule.name(),
        lr,
        seed: problem.cfg.seed,
        steps: t,
        outcome,
        crossings,
        last,
        losses,
    }
}

/// Runs every (rule, rate) in parallel (rayon; each run single-threaded, so results do not
/// depend on the thread count), in input order.
pub fn run_all(
    problem: &HsiProblem,
    rules: &[(Rule, f64)],
    progress: &(dyn Fn(u64) + Sync),
) -> Vec<HsiRun> {
    use rayon::prelude::*;
    rules
        .par_iter()
        .map(|&(rule, lr)| run(problem, rule, lr, progress))
        .collect()
}

/// A hyperspectral scene read from a MAT-file, as its pixels × bands matrix.
#[derive(Clone, Debug)]
pub struct Scene {
    /// The file as given.
    pub path: String,
    /// The variable read.
    pub var: String,
    /// Its dimensions (rows, columns, bands).
    pub dims: [usize; 3],
    /// Its MATLAB class.
    pub class: String,
    /// The pixels × bands matrix ([`pixel_matrix`]), `rows·columns × bands`.
    pub pixels: DMatrix<f64>,
}

impl Scene {
    /// Reads the 3-D variable `var` of the MAT-file `path` (with `None`, its only 3-D numeric
    /// array). Errors: the file (see [`crate::matv5::read_cube`]), and an empty cube (a
    /// dimension of 0), named with its dimensions.
    pub fn read(path: &std::path::Path, var: Option<&str>) -> Result<Self, HsiError> {
        Self::from_cube(path, crate::matv5::read_cube(path, var)?)
    }

    /// As [`Scene::read`] on the contents `bytes` of the file `path` (an upload in the page;
    /// `path` names it in errors and in the setup).
    pub fn from_bytes(
        path: &std::path::Path,
        bytes: Vec<u8>,
        var: Option<&str>,
    ) -> Result<Self, HsiError> {
        let cube = crate::matv5::MatFile::parse(path, bytes)?.read_cube(var)?;
        Self::from_cube(path, cube)
    }

    /// The scene in `cube`, the 3-D variable read from `path`.
    fn from_cube(path: &std::path::Path, cube: crate::matv5::MatArray) -> Result<Self, HsiError> {
        let dims = [cube.dims[0], cube.dims[1], cube.dims[2]];
        if dims.contains(&0) {
            return Err(HsiError::Scene(format!(
                "{}: variable `{}` is empty ({} × {} × {}); a scene needs at least one pixel \
                 and one band",
                path.display(),
                cube.name,
                dims[0],
                dims[1],
                dims[2]
            )));
        }
        Ok(Self {
            path: path.display().to_string(),
            var: cube.name.clone(),
            dims,
            class: cube.class.to_string(),
            pixels: pixel_matrix(&cube.data, dims),
        })
    }

    /// Preprocesses the scene and draws the mask, both by `cfg` (and its seed). Errors: the
    /// scene or `cfg`.
    pub fn problem(&self, cfg: &HsiConfig) -> Result<(HsiSetup, HsiProblem), HsiError> {
        cfg.validate()?;
        let pre = preprocess(&self.pixels, cfg.pixels, cfg.seed)?;
        let problem = HsiProblem::new(pre.x.clone(), cfg)?;
        let setup = HsiSetup {
            scene: self.path.clone(),
            var: self.var.clone(),
            dims: self.dims,
            class: self.class.clone(),
            observed: problem.observed(),
            held_out: problem.mask.len() - problem.observed(),
            pre,
            cfg: cfg.clone(),
        };
        Ok((setup, problem))
    }
}

/// Reads the 3-D variable `var` of the MAT-file `scene` (with `None`, its only 3-D numeric
/// array), preprocesses it and draws the mask (all by `cfg`). Errors: the file (see
/// [`crate::matv5::read_cube`]), the scene, or `cfg`.
pub fn load(
    scene: &std::path::Path,
    var: Option<&str>,
    cfg: &HsiConfig,
) -> Result<(HsiSetup, HsiProblem), HsiError> {
    cfg.validate()?;
    Scene::read(scene, var)?.problem(cfg)
}

/// Held-out RMSE and effective rank of `UVᵀ` at step `t` (allocates for the SVD; called at
/// most once per level and once at the end).
fn measure(
    problem: &HsiProblem,
    params: &[DMatrix<f64>; 2],
    ws: &mut HsiWorkspace,
    t: usize,
    loss: f64,
) -> Crossing {
    params[1].transpose_to(&mut ws.vt);
    mul_into(&mut ws.w, &params[0], &ws.vt);
    Crossing {
        step: t,
        train_loss: loss,
        test_rmse: problem.test_rmse(&ws.w),
        erank: effective_rank(&ws.w),
    }
}

/// One row of the paper's Table 5: held-out RMSE ×1e-2 at training loss ≤ 1e-5, mean and sd
/// over 4 seeds, float64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaperRow {
    /// Scene.
    pub dataset: &'static str,
    /// Observed entries per degree of freedom of a rank-24 2000 × 200 matrix.
    pub m_over_dof: f64,
    /// The density that gives it.
    pub density: f64,
    /// GD mean, sd.
    pub gd: [f64; 2],
    /// Adam mean, sd.
    pub adam: [f64; 2],
    /// Muon mean, sd.
    pub muon: [f64; 2],
    /// Muon's effective rank at the deepest point of its fit.
    pub muon_rank: f64,
}

/// The paper's Table 5. m/dof 1.15 and 1.9 are densities 0.15 and 0.25 of 2000 × 200 entries
/// against rank 24 (dof 24·(2000 + 200 − 24)).
pub const PAPER_TABLE5: [PaperRow; 4] = [
    PaperRow {
        dataset: "Indian Pines",
        m_over_dof: 1.15,
        density: 0.15,
        gd: [1.481, 0.013],
        adam: [2.600, 0.047],
        muon: [3.397, 0.082],
        muon_rank: 36.0,
    },
    PaperRow {
        dataset: "Indian Pines",
        m_over_dof: 1.9,
        density: 0.25,
        gd: [1.244, 0.012],
        adam: [1.718, 0.035],
        muon: [3.210, 0.122],
        muon_rank: 35.0,
    },
    PaperRow {
        dataset: "Pavia Univ.",
        m_over_dof: 1.15,
        density: 0.15,
        gd: [0.819, 0.026],
        adam: [1.458, 0.123],
        muon: [1.260, 0.121],
        muon_rank: 10.0,
    },
    PaperRow {
        dataset: "Pavia Univ.",
        m_over_dof: 1.9,
        density: 0.25,
        gd: [0.615, 0.010],
        adam: [0.798, 0.023],
        muon: [0.770, 0.017],
        muon_rank: 8.0,
    },
];

/// A rule of the `hsi` command with its default constant rate and its rate grids.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HsiRule {
    /// The update rule's registry name ([`HsiRule::rule`]).
    pub name: &'static str,
    /// Rate of a run without `--lr` or `--grid`: the rate the paper's protocol picks at
    /// density 0.15 (docs/gauge-lab.md, "The paper's whole protocol, density 0.15").
    pub default_lr: f64,
    /// Rate with `--rates fastest`: the fastest stable rate of [`HsiRule::own_grid`] (the
    /// project's first choice, far from Table 5 for GD and Muon at ≤ 1e-5).
    pub fastest_lr: f64,
    /// The rate grid of the paper's code (for GD its GPU grid; see [`PAPER_GD_CPU_GRID`]).
    pub paper_grid: &'static [f64],
    /// The project's own, wider grid (searched by the rule's fastest fit before the paper's
    /// grids were known; docs/gauge-lab.md).
    pub own_grid: &'static [f64],
}

impl HsiRule {
    /// The update rule (the registry entry `name`, which every entry of [`RULES`] names).
    pub fn rule(&self) -> Rule {
        Rule::named(self.name).expect("RULES names registered rules")
    }
}

/// GD's rate grid in the paper's code when run on a CPU (its GPU grid, [`HsiRule::paper_grid`],
/// adds 0.3 and 30).
pub const PAPER_GD_CPU_GRID: &[f64] = &[1.0, 3.0, 10.0];

/// Rules the `hsi` command runs: the paper's Table 5 columns (GD, Adam, Muon) and scalar-Adam,
/// whose grid the paper calls undersampled. Default rates: the picks of the paper's protocol
/// (its grids, its train-only rule, `--grid`) on Indian Pines at density 0.15; fastest rates:
/// the fastest stable rate of the project's own grids (docs/gauge-lab.md, "Rates").
pub const RULES: [HsiRule; 4] = [
    HsiRule {
        name: "gd",
        default_lr: 30.0,
        fastest_lr: 1e4,
        paper_grid: &[0.3, 1.0, 3.0, 10.0, 30.0],
        own_grid: &[3e1, 1e2, 3e2, 1e3, 3e3, 1e4],
    },
    HsiRule {
        name: "adam",
        default_lr: 1e-2,
        fastest_lr: 1e-2,
        paper_grid: &[1e-3, 3e-3, 1e-2],
        own_grid: &[1e-4, 3e-4, 1e-3, 3e-3, 1e-2],
    },
    HsiRule {
        name: "scalar_adam",
        default_lr: 3e-2,
        fastest_lr: 1e-2,
        paper_grid: &[3e-3, 1e-2, 3e-2],
        own_grid: &[1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2],
    },
    HsiRule {
        name: "muon",
        default_lr: 0.1,
        fastest_lr: 1e-2,
        paper_grid: &[0.01, 0.03, 0.1],
        own_grid: &[1e-4, 3e-4, 1e-3, 3e-3, 1e-2],
    },
];

/// The rule named `name` among [`RULES`]. Errors list the names.
pub fn rule_by_name(name: &str) -> Result<&'static HsiRule, String> {
    RULES.iter().find(|r| r.name == name).ok_or_else(|| {
        let names: Vec<&str> = RULES.iter().map(|r| r.name).collect();
        format!("unknown rule `{name}`; allowed: {}", names.join(", "))
    })
}

/// Where the data of a report came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HsiSetup {
    /// The scene file as given.
    pub scene: String,
    /// The variable read.
    pub var: String,
    /// Its dimensions (rows, columns, bands).
    pub dims: [usize; 3],
    /// Its MATLAB class.
    pub class: String,
    /// Preprocessing summary.
    pub pre: Preprocessed,
    /// Observed entries |Ω|.
    pub observed: usize,
    /// Held-out entries.
    pub held_out: usize,
    /// Settings.
    pub cfg: HsiConfig,
}

/// A small synthetic scene for the tests of this module and its submodules.
#[cfg(test)]
pub(crate) fn tiny_scene() -> Scene {
    // 6 × 5 pixels, 8 bands: two smooth rank-one patterns on a positive offset, no zero pixel.
    let dims = [6, 5, 8];
    let pixels = DMatrix::from_fn(30, 8, |p, b| {
        let (p, b) = (p as f64, b as f64);
        3000.0
            + 800.0 * (p * 0.4).sin() * (b * 0.3).cos()
            + 500.0 * (p * 0.9).cos() * (b * 0.7).sin()
    });
    Scene {
        path: "tiny.mat".into(),
        var: "tiny".into(),
        dims,
        class: "double".into(),
        pixels,
    }
}
