//! Numerics of the explainer's small demos (the explainer §1–§3): a handful of keys written into
//! a delta-rule memory and read back, the same keys rotated, and one optimizer step in a
//! two-parameter world and its rotated copy. Headless; the app draws what these return.

use nalgebra::{DMatrix, Matrix2, Vector2};
use serde::{Deserialize, Serialize};

use crate::metrics::axis_concentration;
use crate::optim::{Adam, Optimizer};
use crate::validate::{FieldError, Range, check_int, check_real};

/// The state of the three demos, saved in presets so a teacher can reopen a configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DemoSettings {
    /// Demo 1: direction of each key in the plane, degrees; 2..=6 keys, each in [−360, 360].
    pub key_angles_deg: Vec<f64>,
    /// Demo 1: write strength β in [0, 2].
    pub beta: f64,
    /// Demo 2: rotation applied to every key, degrees in [−180, 180].
    pub rotation_deg: f64,
    /// Demo 3: the gradient g, each component in [−10, 10].
    pub gradient: [f64; 2],
    /// Demo 3: rotation φ of the world, degrees in [−180, 180].
    pub phi_deg: f64,
    /// Demo 3: show later Adam steps on a fixed quadratic.
    pub later_adam: bool,
    /// Demo 3: number of later Adam steps, 1..=1000.
    pub adam_steps: usize,
}

impl Default for DemoSettings {
    fn default() -> Self {
        Self {
            key_angles_deg: vec![15.0, 105.0, 230.0],
            beta: 1.0,
            rotation_deg: 37.0,
            gradient: [1.0, 0.3],
            phi_deg: 30.0,
            later_adam: false,
            adam_steps: 60,
        }
    }
}

impl DemoSettings {
    /// Checks every field against its range. Errors name the field (`key_angles_deg[1]`) and
    /// its range.
    pub fn validate(&self) -> Result<(), FieldError> {
        let n = self.key_angles_deg.len();
        if !(2..=6).contains(&n) {
            return Err(FieldError::new(
                "key_angles_deg",
                format!("{n} keys given; allowed 2..=6"),
            ));
        }
        for (i, &a) in self.key_angles_deg.iter().enumerate() {
            check_real(
                &format!("key_angles_deg[{i}]"),
                a,
                Range::closed(-360.0, 360.0),
            )?;
        }
        check_real("beta", self.beta, Range::closed(0.0, 2.0))?;
        check_real(
            "rotation_deg",
            self.rotation_deg,
            Range::closed(-180.0, 180.0),
        )?;
        check_real("gradient[0]", self.gradient[0], Range::closed(-10.0, 10.0))?;
        check_real("gradient[1]", self.gradient[1], Range::closed(-10.0, 10.0))?;
        check_real("phi_deg", self.phi_deg, Range::closed(-180.0, 180.0))?;
        check_int("adam_steps", self.adam_steps, 1, 1000)
    }

    /// The keys of Demo 1 as unit columns (`2 × n`).
    pub fn keys(&self) -> DMatrix<f64> {
        keys_from_angles(&self.key_angles_deg)
    }
}

/// Unit keys (`2 × n`) pointing at `angles_deg` (counter-clockwise from the first axis).
pub fn keys_from_angles(angles_deg: &[f64]) -> DMatrix<f64> {
    DMatrix::from_fn(2, angles_deg.len(), |i, a| {
        let t = angles_deg[a].to_radians();
        if i == 0 { t.cos() } else { t.sin() }
    })
}

/// The counter-clockwise rotation by `deg` degrees (`2 × 2`).
pub fn rotation(deg: f64) -> Matrix2<f64> {
    let (s, c) = deg.to_radians().sin_cos();
    Matrix2::new(c, -s, s, c)
}

/// What the memory holds after writing every key of a demo.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryReadout {
    /// Gram matrix `KᵀK` (`n × n`), signed overlaps.
    pub gram: DMatrix<f64>,
    /// Reads `r = S k_a` from the final memory: column a holds key a's scores over the n classes.
    pub reads: DMatrix<f64>,
    /// The final memory `S` (`n × d`).
    pub memory: DMatrix<f64>,
}

/// Writes keys `keys` (`d × n`, unit columns) in order K1 … Kn into an empty memory by the
/// delta rule with strength `beta`, key a storing value class a, then reads every key back
/// (the explainer §1: `δ = e_a − S k_a`, `S ← S + β δ k_aᵀ`, `r = S k_a`).
pub fn write_and_read(keys: &DMatrix<f64>, beta: f64) -> MemoryReadout {
    let (d, n) = keys.shape();
    let mut s = DMatrix::<f64>::zeros(n, d);
    for a in 0..n {
        let k = keys.column(a);
        let mut delta = -(&s * k);
        delta[a] += 1.0;
        s += beta * delta * k.transpose();
    }
    MemoryReadout {
        gram: keys.transpose() * keys,
        reads: &s * keys,
        memory: s,
    }
}

/// Demo 2's three numbers for keys `keys` (`2 × n`) rotated by `deg`: the largest change in any
/// Gram entry, the largest change in any read score (both rounding noise), and A(K) of the
/// rotated keys (which does change).
pub fn rotation_effect(keys: &DMatrix<f64>, beta: f64, deg: f64) -> (f64, f64, f64) {
    let q = rotation(deg);
    let rotated = DMatrix::from_fn(2, keys.ncols(), |i, a| {
        (q * Vector2::new(keys[(0, a)], keys[(1, a)]))[i]
    });
    let (before, after) = (write_and_read(keys, beta), write_and_read(&rotated, beta));
    (
        (&after.gram - &before.gram).amax(),
        (&after.reads - &before.reads).amax(),
        axis_concentration(&rotated),
    )
}

/// A(Q(θ)K) over θ = −180° … 180° in `samples` steps, as (degrees, A) pairs.
pub fn axis_concentration_curve(keys: &DMatrix<f64>, samples: usize) -> Vec<[f64; 2]> {
    (0..samples)
        .map(|i| {
            let deg = -180.0 + 360.0 * i as f64 / (samples - 1).max(1) as f64;
            let q = rotation(deg);
            let rotated = DMatrix::from_fn(2, keys.ncols(), |r, a| {
                (q * Vector2::new(keys[(0, a)], keys[(1, a)]))[r]
            });
            [deg, axis_concentration(&rotated)]
        })
        .collect()
}

/// Angle between two plane vectors in degrees, in [0, 180]; NaN if either is zero.
pub fn angle_between_deg(a: Vector2<f64>, b: Vector2<f64>) -> f64 {
    use crate::linalg::norm::checked_norm;
    let (na, nb) = (
        checked_norm(a.norm(), a.as_slice().iter().copied()),
        checked_norm(b.norm(), b.as_slice().iter().copied()),
    );
    if na == 0.0 || nb == 0.0 {
        return f64::NAN;
    }
    // Out of the plain range the products below would underflow or overflow: use unit vectors.
    let (a, b) = if a.norm() != na || b.norm() != nb {
        (a / na, b / nb)
    } else {
        (a, b)
    };
    let cross = a.x * b.y - a.y * b.x;
    cross.abs().atan2(a.dot(&b)).to_degrees()
}

/// sign with sign(0) = 0, entrywise: Adam's first step direction at ε → 0.
pub fn sign_vec(v: Vector2<f64>) -> Vector2<f64> {
    v.map(crate::optim::sign0)
}

/// Demo 3: the first steps for gradient `g`: GD's −g and Adam's −sign(g) (its first step at
/// ε → 0, the explainer §3), and in the world rotated by `phi_deg` the same rules applied to
/// Qg. Returns (angle between Q·(−g) and −Qg, angle between Q·(−sign g) and −sign(Qg)), in
/// degrees: GD's is 0 up to rounding, Adam's generally is not.
pub fn step_angles(g: Vector2<f64>, phi_deg: f64) -> (f64, f64) {
    let q = rotation(phi_deg);
    let gd = angle_between_deg(q * (-g), -(q * g));
    let adam = angle_between_deg(q * (-sign_vec(g)), -sign_vec(q * g));
    (gd, adam)
}

/// The fixed quadratic of Demo 3's "later Adam steps": L(w) = ½ Σ_i h_i (w_i − c_i)².
pub const QUADRATIC_H: [f64; 2] = [1.0, 0.15];
/// Minimiser of [`QUADRATIC_H`]'s quadratic.
pub const QUADRATIC_C: [f64; 2] = [0.2, -0.3];
/// Start of the trajectories.
pub const QUADRATIC_W0: [f64; 2] = [-1.2, 1.0];

/// Runs `steps` Adam steps (lr `lr`, β1 0.9, β2 0.999, ε 1e-8) on the quadratic from
/// [`QUADRATIC_W0`], and on the same problem in the world rotated by `phi_deg` from Q·w0.
/// Returns (original trajectory carried over by Q, trajectory computed in the rotated world),
/// each `steps + 1` points; for GD they would coincide.
pub fn adam_trajectories(phi_deg: f64, steps: usize, lr: f64) -> (Vec<[f64; 2]>, Vec<[f64; 2]>) {
    let q = rotation(phi_deg);
    let (h, c) = (Vector2::from(QUADRATIC_H), Vector2::from(QUADRATIC_C));
    let grad = |w: Vector2<f64>| (w - c).component_mul(&h);
    let w0 = Vector2::from(QUADRATIC_W0);
    let to_m = |v: Vector2<f64>| DMatrix::from_column_slice(2, 1, v.as_slice());
    let to_v = |m: &DMatrix<f64>| Vector2::new(m[0], m[1]);
    let (mut a, mut b) = (Adam::new(0.9, 0.999, 1e-8), Adam::new(0.9, 0.999, 1e-8));
    let (mut w, mut w_rot) = ([to_m(w0)], [to_m(q * w0)]);
    let point = |v: Vector2<f64>| [v.x, v.y];
    let (mut carried, mut rotated) = (vec![point(q * w0)], vec![point(q * w0)]);
    for _ in 0..steps {
        let g = grad(to_v(&w[0]));
        a.step(&mut w, &[to_m(g)], lr);
        // In the rotated world L′(w′) = L(Qᵀw′), so ∇L′(w′) = Q ∇L(Qᵀw′).
        let g_rot = q * grad(q.transpose() * to_v(&w_rot[0]));
        b.step(&mut w_rot, &[to_m(g_rot)], lr);
        carried.push(point(q * to_v(&w[0])));
        rotated.push(point(to_v(&w_rot[0])));
    }
    (carried, rotated)
}
