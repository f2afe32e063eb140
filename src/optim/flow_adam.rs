use super::dial::Dial;
use super::{
    Class, GradientOracle, Hyper, Optimizer, RuleInfo, Schedule, SensingDefaults, Statistic,
    check_shapes, ensure_like,
};
use crate::linalg::ode::DormandPrince;
use nalgebra::DMatrix;

/// Steps before the first flow step may be taken (a step needs `k > 10`).
pub const WARMUP: usize = 10;
/// Factor of the running gradient norm and running gradient change.
const AVERAGE: f64 = 0.9;
/// Relative and absolute tolerance of the integrator.
pub const TOLERANCE: f64 = 1e-4;
/// Weight γ of the flow's velocity in the first moment.
pub const BLEND: f64 = 0.5;
/// The velocity is capped at this multiple of the first moment's norm, per matrix.
pub const VELOCITY_CAP: f64 = 5.0;

/// When FlowAdam flows, for how long, and its clip's threshold (numerics §10).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowSettings {
    /// Plateau: a flow step when the gradient norm is below this fraction of its running
    /// average (current step included).
    pub plateau: f64,
    /// Stiffness: a flow step when the gradient change is above this multiple of its running
    /// average (current step included).
    pub stiff: f64,
    /// The flow runs over `t ∈ [0, lr·t_scale]`.
    pub t_scale: f64,
    /// The global-norm clip's threshold c (the per-coordinate clip is always to [−1, 1]).
    pub clip: f64,
}

impl FlowSettings {
    /// What the paper's Section 10 experiments ran (the authors' scripts override the
    /// package's defaults with these): plateau 0.9, stiffness 0.1, t_scale 0.5, and c = 10 for
    /// the global-norm clip (the per-coordinate clip stays at [−1, 1]). The registered rules
    /// use it: at the package's defaults no flow step is ever taken on the zoo protocol.
    pub const PAPER: FlowSettings = FlowSettings {
        plateau: 0.9,
        stiff: 0.1,
        t_scale: 0.5,
        clip: 10.0,
    };

    /// The authors' package defaults: plateau 0.5, stiffness 2, t_scale 1, c = 1. On the zoo protocol (n = 40, lr 1e-3) they never fire (numerics §10).
    pub const PACKAGE: FlowSettings = FlowSettings {
        plateau: 0.5,
        stiff: 2.0,
        t_scale: 1.0,
        clip: 1.0,
    };

    /// The threshold `clip` applies: 1 per coordinate (the paper's clamp to [−1, 1] whatever
    /// c), c for the global norm.
    fn threshold(&self, clip: FlowClip) -> f64 {
        match clip {
            FlowClip::PerCoordinate => 1.0,
            FlowClip::GlobalNorm => self.clip,
        }
    }
}

/// How FlowAdam clips the gradient inside its flow (numerics §10).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowClip {
    /// Each entry clamped to [−c, c]: a map of single coordinates, so it sees the basis.
    PerCoordinate,
    /// The whole gradient (every matrix together) scaled to norm ≤ c: it reads only the norm,
    /// so it commutes with any orthogonal change of basis.
    GlobalNorm,
}

impl FlowClip {
    /// Clips `g` (all matrices together) in place with threshold `c` (> 0): each entry to
    /// [−c, c], or the whole to norm ≤ c.
    pub fn apply(self, g: &mut [DMatrix<f64>], c: f64) {
        match self {
            FlowClip::PerCoordinate => {
                for x in g.iter_mut().flat_map(|m| m.iter_mut()) {
                    *x = x.clamp(-c, c);
                }
            }
            FlowClip::GlobalNorm => {
                let norm = global_norm(g);
                if norm > c {
                    let scale = c / norm;
                    for m in g.iter_mut() {
                        *m *= scale;
                    }
                }
            }
        }
    }
}

/// Frobenius norm of a list of matrices taken as one vector.
fn global_norm(g: &[DMatrix<f64>]) -> f64 {
    g.iter().map(|m| m.norm_squared()).sum::<f64>().sqrt()
}

/// FlowAdam (numerics §10; the paper §10): Adam, or the dial's denominator at anisotropy `p`,
/// whose step is replaced, when the gradient plateaus or turns stiff after [`WARMUP`] steps, by
/// a short gradient flow `dθ/dt = −clip(∇L(θ))` over `t ∈ [0, lr·t_scale]`, integrated by
/// adaptive Dormand–Prince 5(4) at tolerance [`TOLERANCE`] with a [`GradientOracle`].
///
/// Per step, with `g` the gradient over every matrix: `n = ‖g‖`, `c = ‖g − g_prev‖`, running
/// averages `n̄ ← 0.9 n̄ + 0.1 n`, `c̄ ← 0.9 c̄ + 0.1 c` (the first step sets them to `n`, `c`);
/// a flow step when `n < plateau·n̄` or `c > stiff·c̄` ([`FlowSettings`]; the paper's
/// experiments: 0.9 and 0.1), and more than [`WARMUP`] steps were taken.
/// A flow step moves θ to the flow's end, leaves the second moment and Adam's `t` alone, and
/// blends the velocity `u = (θ_start − θ_end)/lr`, capped per matrix at 5‖m‖, into the first
/// moment: `m ← ½m + ½u`. Any other step is the dial's:
/// `θ ← θ − lr·m̂ / ((√v̂ + ε)^p · (s̄ + ε)^(1−p))`, `s̄ = √(mean v̂)`; p = 1 is Adam.
///
/// Without an oracle ([`Optimizer::step`]) there is no flow: every step is the dial's. Every
/// gradient the flow evaluates is counted ([`Optimizer::oracle_evaluations`]).
/// With [`FlowClip::GlobalNorm`] and p = 0 the rule is equivariant: its triggers, clip, step
/// control and denominator read only norms; [`FlowClip::PerCoordinate`] breaks that.
#[derive(Clone, Debug)]
pub struct FlowAdam {
    /// The clip inside the flow.
    pub clip: FlowClip,
    /// Triggers, flow length and clip threshold.
    pub settings: FlowSettings,
    /// The steps that are not flow steps, with their moments and count (flow steps do not
    /// advance the count or the second moment).
    pub adam: Dial,
    /// Steps of either kind taken.
    k: usize,
    norm_avg: f64,
    change_avg: f64,
    g_prev: Vec<DMatrix<f64>>,
    /// θ at the start of a flow step, then the velocity.
    start: Vec<DMatrix<f64>>,
    /// `−clip(g)` at the start of a flow step, the integrator's first slope.
    slope: Vec<DMatrix<f64>>,
    flow: DormandPrince,
    evaluations: u64,
    flow_steps: u64,
}

impl FlowAdam {
    /// Zero-state FlowAdam with `clip`, denominator anisotropy `p` and the paper's settings
    /// ([`FlowSettings::PAPER`]).
    pub fn new(clip: FlowClip, p: f64, beta1: f64, beta2: f64, eps: f64) -> Self {
        Self {
            clip,
            settings: FlowSettings::PAPER,
            adam: Dial::new(p, beta1, beta2, eps),
            k: 0,
            norm_avg: 0.0,
            change_avg: 0.0,
            g_prev: Vec::new(),
            start: Vec::new(),
            slope: Vec::new(),
            flow: DormandPrince::new(),
            evaluations: 0,
            flow_steps: 0,
        }
    }

    /// Flow steps taken so far.
    pub fn flow_steps(&self) -> u64 {
        self.flow_steps
    }

    /// The first moment, one matrix per parameter (empty before the first step).
    pub fn first_moment(&self) -> &[DMatrix<f64>] {
        self.adam.first_moment()
    }

    /// Updates the running norm and change with `grads` and says whether this step is a flow
    /// step (before `g_prev` and `k` move on).
    fn triggered(&mut self, grads: &[DMatrix<f64>]) -> bool {
        let norm = global_norm(grads);
        let change = grads
            .iter()
            .zip(&self.g_prev)
            .map(|(g, p)| {
                g.iter()
                    .zip(p.iter())
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
            })
            .sum::<f64>()
            .sqrt();
        if self.k == 0 {
            (self.norm_avg, self.change_avg) = (norm, change);
        } else {
            self.norm_avg = AVERAGE * self.norm_avg + (1.0 - AVERAGE) * norm;
            self.change_avg = AVERAGE * self.change_avg + (1.0 - AVERAGE) * change;
        }
        let plateau = norm < self.settings.plateau * self.norm_avg;
        let stiff = change > self.settings.stiff * self.change_avg;
        (plateau || stiff) && self.k > WARMUP
    }

    /// The flow step: integrate, move θ to the end point, blend the velocity into `m`.
    fn flow_step(
        &mut self,
        params: &mut [DMatrix<f64>],
        grads: &[DMatrix<f64>],
        lr: f64,
        oracle: &mut dyn GradientOracle,
    ) {
        for ((s, p), (d, g)) in self
            .start
            .iter_mut()
            .zip(params.iter())
            .zip(self.slope.iter_mut().zip(grads))
        {
            s.copy_from(p);
            d.copy_from(g);
        }
        let (clip, c) = (self.clip, self.settings.threshold(self.clip));
        clip.apply(&mut self.slope, c);
        for d in &mut self.slope {
            d.neg_mut();
        }
        let mut field = |at: &[DMatrix<f64>], out: &mut [DMatrix<f64>]| {
            oracle.gradient(at, out);
            clip.apply(out, c);
            for o in out.iter_mut() {
                o.neg_mut();
            }
        };
        let stats = self.flow.integrate(
            params,
            lr * self.settings.t_scale,
            TOLERANCE,
            TOLERANCE,
            Some(&self.slope),
            &mut field,
        );
        self.evaluations += stats.evaluations as u64;
        self.flow_steps += 1;
        let moment = self.adam.first_moment_mut(params);
        for ((u, p), m) in self.start.iter_mut().zip(params.iter()).zip(moment) {
            // u ← (θ_start − θ_end)/lr, the velocity that would have moved θ there in one step.
            for (ui, &pi) in u.iter_mut().zip(p.iter()) {
                *ui = (*ui - pi) / lr;
            }
            let (un, mn) = (u.norm(), m.norm());
            if un > VELOCITY_CAP * mn {
                *u *= VELOCITY_CAP * mn / (un + 1e-8);
            }
            for (mi, &ui) in m.iter_mut().zip(u.iter()) {
                *mi = (1.0 - BLEND) * *mi + BLEND * ui;
            }
        }
    }

    fn step_inner(
        &mut self,
        params: &mut [DMatrix<f64>],
        grads: &[DMatrix<f64>],
        lr: f64,
        oracle: Option<&mut dyn GradientOracle>,
    ) {
        check_shapes(params, grads);
        for buf in [&mut self.g_prev, &mut self.start, &mut self.slope] {
            ensure_like(buf, params);
        }
        // Sized with the rest at the first step, so a later first flow step allocates nothing.
        self.flow.prepare(params);
        let flow = self.triggered(grads);
        match oracle {
            Some(oracle) if flow && lr > 0.0 => self.flow_step(params, grads, lr, oracle),
            _ => self.adam.step(params, grads, lr),
        }
        for (p, g) in self.g_prev.iter_mut().zip(grads) {
            p.copy_from(g);
        }
        self.k += 1;
    }
}

impl Optimizer for FlowAdam {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        self.step_inner(params, grads, lr, None);
    }

    fn step_with(
        &mut self,
        params: &mut [DMatrix<f64>],
        grads: &[DMatrix<f64>],
        lr: f64,
        oracle: &mut dyn GradientOracle,
    ) {
        self.step_inner(params, grads, lr, Some(oracle));
    }

    fn wants_oracle(&self) -> bool {
        true
    }

    fn oracle_evaluations(&self) -> u64 {
        self.evaluations
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        let title = match self.clip {
            FlowClip::PerCoordinate => INFO.title,
            FlowClip::GlobalNorm => P_TITLE,
        };
        let eps = self.adam.eps;
        super::moments_representable(title, grads, eps, Statistic::Squares)?;
        super::moments_representable(title, grads, eps, Statistic::SumOfSquares)
    }
}

/// The title of FlowAdam-p, the global-norm variant (its registry entry is `flow_adam_p.rs`),
/// here because a FlowAdam that refuses a step names the variant it runs as.
pub(super) const P_TITLE: &str = "FlowAdam-p (global-norm clip)";

/// The registry entry: the paper's FlowAdam, with the per-coordinate clip and Adam's denominator.
pub(super) static INFO: RuleInfo = RuleInfo {
    name: "flow_adam",
    variant: "FlowAdam",
    title: "FlowAdam (per-coordinate clip)",
    class: Class::CoordinateWise,
    hypers: &[Hyper::Beta1, Hyper::Beta2, Hyper::Eps],
    defaults: &[],
    zoo_arg: None,
    lr: 0.01,
    color: [150, 70, 20],
    // The paper runs it at the dial's anchor rate 1e-3; the grid is Adam's.
    sensing: SensingDefaults {
        lr: 1e-3,
        grid: &[1e-3, 1e-2, 3e-2],
        schedule: Schedule::Constant,
    },
    chain: None,
    build: |s| {
        Box::new(FlowAdam::new(
            FlowClip::PerCoordinate,
            1.0,
            s.beta1,
            s.beta2,
            s.eps,
        ))
    },
};
