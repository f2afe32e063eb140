//! Adaptive Dormand–Prince 5(4) for an autonomous ODE `y' = f(y)` whose state is a list of
//! matrices (FlowAdam's gradient flow, numerics §10).
//!
//! The tableau is Dormand and Prince's (J. Comput. Appl. Math. 6, 1980): seven stages, the
//! fifth-order solution propagated, the embedded fourth-order one used only for the error
//! estimate, the last stage reused as the next step's first ("first same as last"), so an
//! accepted or rejected step costs six evaluations of `f`.

use nalgebra::DMatrix;

/// Nodes `c₂..c₇` are implied by the rows of [`A`]; the rows sum to them.
const A: [[f64; 6]; 6] = [
    [1.0 / 5.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0],
    [44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0],
    [
        19372.0 / 6561.0,
        -25360.0 / 2187.0,
        64448.0 / 6561.0,
        -212.0 / 729.0,
        0.0,
        0.0,
    ],
    [
        9017.0 / 3168.0,
        -355.0 / 33.0,
        46732.0 / 5247.0,
        49.0 / 176.0,
        -5103.0 / 18656.0,
        0.0,
    ],
    // The seventh stage is evaluated at the fifth-order solution, so its row is the weights.
    [
        35.0 / 384.0,
        0.0,
        500.0 / 1113.0,
        125.0 / 192.0,
        -2187.0 / 6784.0,
        11.0 / 84.0,
    ],
];

/// Fifth-order weights minus fourth-order weights, over the seven stages: `h·Σ Eⱼ kⱼ` is the
/// local error estimate.
const E: [f64; 7] = [
    71.0 / 57600.0,
    0.0,
    -71.0 / 16695.0,
    71.0 / 1920.0,
    -17253.0 / 339200.0,
    22.0 / 525.0,
    -1.0 / 40.0,
];

/// The right-hand side `f(at, out)`: writes the slope at `at` into `out` (same shapes).
pub type Field<'a> = dyn FnMut(&[DMatrix<f64>], &mut [DMatrix<f64>]) + 'a;

/// Step attempts after which [`DormandPrince::integrate`] gives up short of the end time.
pub const MAX_ATTEMPTS: usize = 1000;

/// What one [`DormandPrince::integrate`] call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OdeStats {
    /// Evaluations of `f` (the first slope included when the caller did not supply it).
    pub evaluations: usize,
    /// Steps accepted.
    pub accepted: usize,
    /// Steps rejected by the error test and retried shorter.
    pub rejected: usize,
    /// Whether the end time was reached (false after [`MAX_ATTEMPTS`]).
    pub complete: bool,
}

/// Buffers of the integrator: seven stage slopes, a stage point and the candidate solution,
/// each shaped like the state. Sized at the first call; allocation-free after it while the
/// shapes stay the same.
#[derive(Clone, Debug, Default)]
pub struct DormandPrince {
    k: [Vec<DMatrix<f64>>; 7],
    stage: Vec<DMatrix<f64>>,
    next: Vec<DMatrix<f64>>,
}

/// Resizes `buf` to zero matrices shaped like `like` unless it already is.
fn shape_like(buf: &mut Vec<DMatrix<f64>>, like: &[DMatrix<f64>]) {
    let same = buf.len() == like.len() && buf.iter().zip(like).all(|(b, l)| b.shape() == l.shape());
    if !same {
        *buf = like
            .iter()
            .map(|l| DMatrix::zeros(l.nrows(), l.ncols()))
            .collect();
    }
}

/// `out = y + h·Σⱼ wⱼ kⱼ` over the first `w.len()` slopes, entry by entry in a fixed order.
fn combine(
    out: &mut [DMatrix<f64>],
    y: &[DMatrix<f64>],
    h: f64,
    w: &[f64],
    k: &[Vec<DMatrix<f64>>],
) {
    for (i, (o, yi)) in out.iter_mut().zip(y).enumerate() {
        for (e, (oe, &ye)) in o.iter_mut().zip(yi.iter()).enumerate() {
            let mut s = 0.0;
            for (wj, kj) in w.iter().zip(k) {
                s += wj * kj[i][e];
            }
            *oe = ye + h * s;
        }
    }
}

impl DormandPrince {
    /// Empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sizes the buffers like `like` (nothing to do when they already are), so that a caller
    /// can keep its later calls allocation-free.
    pub fn prepare(&mut self, like: &[DMatrix<f64>]) {
        for k in &mut self.k {
            shape_like(k, like);
        }
        shape_like(&mut self.stage, like);
        shape_like(&mut self.next, like);
    }

    /// Integrates `y' = f(y)` from `y` over `t ∈ [0, t_end]` and leaves the end point in `y`.
    /// `f(at, out)` writes the slope at `at` into `out` (shapes of `y`). `first`, when given,
    /// is `f(y)` already known (it is copied, and not counted as an evaluation).
    ///
    /// Step control: the first attempt spans the whole interval; a step is accepted when
    /// `rms(err) ≤ atol + rtol·max(rms(y), rms(y_new))`, with `rms` the root mean square over
    /// every entry of every matrix, and the next step is scaled by `0.9·ratio^(−1/5)` within
    /// [0.2, 10]. The test uses norms of the whole state rather than per-entry scales, so an
    /// orthogonal change of basis of the state leaves every decision the same. A non-finite
    /// error estimate ends the integration at that step's candidate (so the caller sees the
    /// non-finite state); after [`MAX_ATTEMPTS`] attempts it stops short and says so.
    /// Panics if `t_end` is negative or not finite.
    pub fn integrate(
        &mut self,
        y: &mut [DMatrix<f64>],
        t_end: f64,
        rtol: f64,
        atol: f64,
        first: Option<&[DMatrix<f64>]>,
        f: &mut Field<'_>,
    ) -> OdeStats {
        assert!(t_end.is_finite() && t_end >= 0.0, "end time {t_end}");
        self.prepare(y);
        let mut stats = OdeStats::default();
        match first {
            Some(slope) => {
                for (k, s) in self.k[0].iter_mut().zip(slope) {
                    k.copy_from(s);
                }
            }
            None => {
                f(y, &mut self.k[0]);
                stats.evaluations += 1;
            }
        }
        let count: usize = y.iter().map(|m| m.len()).sum::<usize>().max(1);
        let rms = |sq: f64| (sq / count as f64).sqrt();
        let (mut t, mut h) = (0.0, t_end);
        while t < t_end {
            if stats.accepted + stats.rejected >= MAX_ATTEMPTS {
                return stats;
            }
            let last = h >= t_end - t;
            if last {
                h = t_end - t;
            }
            for s in 1..7 {
                let (done, rest) = self.k.split_at_mut(s);
                let point = if s == 6 {
                    &mut self.next
                } else {
                    &mut self.stage
                };
                combine(point, y, h, &A[s - 1][..s], done);
                f(point, &mut rest[0]);
                stats.evaluations += 1;
            }
            let (mut err_sq, mut y_sq, mut next_sq) = (0.0, 0.0, 0.0);
            for (i, (yi, ni)) in y.iter().zip(&self.next).enumerate() {
                for (e, (&ye, &ne)) in yi.iter().zip(ni.iter()).enumerate() {
                    let mut s = 0.0;
                    for (ej, kj) in E.iter().zip(&self.k) {
                        s += ej * kj[i][e];
                    }
                    err_sq += (h * s) * (h * s);
                    y_sq += ye * ye;
                    next_sq += ne * ne;
                }
            }
            let ratio = rms(err_sq) / (atol + rtol * rms(y_sq).max(rms(next_sq)));
            if !ratio.is_finite() || ratio <= 1.0 {
                for (yi, ni) in y.iter_mut().zip(&self.next) {
                    yi.copy_from(ni);
                }
                stats.accepted += 1;
                if !ratio.is_finite() {
                    return stats;
                }
                self.k.swap(0, 6);
                if last {
                    break;
                }
                t += h;
                h *= if ratio == 0.0 {
                    10.0
                } else {
                    (0.9 * ratio.powf(-0.2)).clamp(0.2, 10.0)
                };
            } else {
                stats.rejected += 1;
                h *= (0.9 * ratio.powf(-0.2)).max(0.2);
            }
        }
        stats.complete = true;
        stats
    }
}
