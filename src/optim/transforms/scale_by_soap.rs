use super::{Arg, ArgKind, Context, DECAY, EPS, EVERY, Side, Transform, TransformInfo};
use crate::linalg::{mul_into, tr_mul_into};
use crate::optim::{Statistic, axpby, moments_representable};
use nalgebra::DMatrix;

/// SOAP (Vyas et al. 2024): Adam run in the eigenbasis of Shampoo's statistics. Per matrix u
/// (a × b), in the authors' order, so that a gradient is never projected on a basis made from
/// it: the first call only starts `L = (1−b2)·uuᵀ`, `R = (1−b2)·uᵀu` and their eigenvectors
/// `Q_L`, `Q_R`, and returns u = 0. Every later call: `m ← b1·m + (1−b1)·u` in the original
/// basis; `u′ = Q_Lᵀ u Q_R`, `v′ ← b2·v′ + (1−b2)·u′⊙u′` in the eigenbasis;
/// `u ← Q_L (m̂′/(√v̂′ + ε)) Q_Rᵀ` with `m′ = Q_Lᵀ m Q_R`, Adam's bias corrections counted from
/// the second call, an entry with denominator 0 giving 0; then `L ← b2·L + (1−b2)·uuᵀ`,
/// `R ← b2·R + (1−b2)·uᵀu`, and every `every` calls (counting the first) `Q_L`, `Q_R` ← their
/// eigenvectors, sorted by eigenvalue. The second moment is not re-rotated at a refresh.
/// Ours, so that neither the eigensolver's choices nor rounding is divided by ε ([`shrink`],
/// [`NULL`]; numerics §10): m′ is soft-thresholded at 1e-12·‖m‖F, and entries in a null row or
/// column of the statistics share one second moment. The eigenbases co-rotate with u and
/// Adam's squares do not see the eigenvectors' signs, so it commutes with both rotations while
/// no two nonzero eigenvalues tie. Allocates when it refreshes the bases (nalgebra's
/// eigendecomposition).
#[derive(Clone, Debug)]
pub struct ScaleBySoap {
    b1: f64,
    b2: f64,
    eps: f64,
    every: usize,
    t: i32,
    mats: Vec<SoapMatrix>,
}

/// One matrix's state and scratch.
#[derive(Clone, Debug)]
struct SoapMatrix {
    left: DMatrix<f64>,
    right: DMatrix<f64>,
    q_left: DMatrix<f64>,
    q_right: DMatrix<f64>,
    q_right_t: DMatrix<f64>,
    m: DMatrix<f64>,
    v: DMatrix<f64>,
    rotated: DMatrix<f64>,
    tmp: DMatrix<f64>,
    gram_left: DMatrix<f64>,
    gram_right: DMatrix<f64>,
    /// Eigenvectors of L (rows of u′) and of R (columns) whose eigenvalue is at most
    /// [`NULL`] times the largest: a space the statistics have not seen, whose basis the
    /// eigensolver picks.
    null_left: Vec<bool>,
    null_right: Vec<bool>,
    /// The second moment shared by every entry of u′ in a null row or column.
    v_null: f64,
}

/// Relative size below which an eigenvalue of a statistic counts as zero ([`SoapMatrix`]):
/// far above rounding (about 1e-16 of the largest), below what a gradient component of more
/// than 1e-5 of the largest adds.
const NULL: f64 = 1e-10;

/// Relative size, against the Frobenius norm, of the soft threshold [`shrink`] applies to m′.
const SHRINK: f64 = 1e-12;

/// Soft-thresholds every entry of `a` at `SHRINK·norm`: `x ← sign(x)·max(|x| − τ, 0)`. Exact
/// arithmetic leaves 0 where a gradient projected on a basis made from it is off the diagonal
/// (a full-batch lab's second gradient equals its first, which stepped nothing); rounding leaves
/// about 1e-16 of the norm there, which `x/(√v′ + ε)` would lift to about 1e-16·‖u‖/ε of the
/// step, differently in every twin. `norm` is a rotation-invariant Frobenius norm and the map
/// is continuous and odd, so it keeps the rotations' symmetry and changes real entries by at
/// most 1e-12 of the norm.
fn shrink(a: &mut DMatrix<f64>, norm: f64) {
    let tau = SHRINK * norm;
    for x in a.iter_mut() {
        let size = x.abs() - tau;
        *x = if size > 0.0 { size.copysign(*x) } else { 0.0 };
    }
}

/// Marks in `null` which of `eigenvalues` (in the order [`eigenvectors`] sorts them) are at
/// most [`NULL`] times the largest.
fn null_space(eigenvalues: &[f64], null: &mut [bool]) {
    let top = eigenvalues.iter().copied().fold(0.0, f64::max);
    for (n, &l) in null.iter_mut().zip(eigenvalues) {
        *n = l <= NULL * top;
    }
}

impl SoapMatrix {
    fn new(a: usize, b: usize) -> Self {
        let z = DMatrix::zeros;
        Self {
            left: z(a, a),
            right: z(b, b),
            q_left: DMatrix::identity(a, a),
            q_right: DMatrix::identity(b, b),
            q_right_t: DMatrix::identity(b, b),
            m: z(a, b),
            v: z(a, b),
            rotated: z(a, b),
            tmp: z(a, b),
            gram_left: z(a, a),
            gram_right: z(b, b),
            null_left: vec![false; a],
            null_right: vec![false; b],
            v_null: 0.0,
        }
    }

    /// `L ← b2·L + (1−b2)·uuᵀ`, `R ← b2·R + (1−b2)·uᵀu` (from zero at the first call).
    fn accumulate(&mut self, g: &DMatrix<f64>, b2: f64) {
        self.gram_left.fill(0.0);
        crate::linalg::add_outer_into(&mut self.gram_left, g);
        axpby(&mut self.left, 1.0 - b2, &self.gram_left, b2);
        self.gram_right.fill(0.0);
        crate::linalg::add_gram_into(&mut self.gram_right, g);
        axpby(&mut self.right, 1.0 - b2, &self.gram_right, b2);
    }

    /// New bases from the statistics, and the null sets with them. Entries that just joined
    /// the null set bring their history: the shared moment starts from the mean of them all
    /// (unchanged when the set is).
    fn refresh(&mut self) {
        self.q_left = eigenvectors(&self.left, &mut self.null_left);
        self.q_right = eigenvectors(&self.right, &mut self.null_right);
        self.q_right_t = self.q_right.transpose();
        let (mut sum, mut count) = (0.0, 0usize);
        for (k, &vi) in self.v.iter().enumerate() {
            if in_null(&self.null_left, &self.null_right, k) {
                sum += vi;
                count += 1;
            }
        }
        if count > 0 {
            self.v_null = sum / count as f64;
        }
    }
}

/// Whether entry `k` (column-major) of an a × b matrix lies in a null row (`null_left`, length
/// a) or a null column (`null_right`, length b) of the statistics.
fn in_null(null_left: &[bool], null_right: &[bool], k: usize) -> bool {
    let rows = null_left.len();
    null_left[k % rows] || null_right[k / rows]
}

/// Eigenvectors of a symmetric matrix, as columns in decreasing order of their eigenvalues, so
/// that a rotated matrix's come in the same order (nalgebra's order is not defined; allocates),
/// and which of them span its null space ([`null_space`]).
fn eigenvectors(a: &DMatrix<f64>, null: &mut [bool]) -> DMatrix<f64> {
    let eig = a.clone().symmetric_eigen();
    let mut order: Vec<usize> = (0..a.nrows()).collect();
    order.sort_by(|&i, &j| eig.eigenvalues[j].total_cmp(&eig.eigenvalues[i]));
    let sorted: Vec<f64> = order.iter().map(|&i| eig.eigenvalues[i]).collect();
    null_space(&sorted, null);
    DMatrix::from_fn(a.nrows(), a.nrows(), |r, c| eig.eigenvectors[(r, order[c])])
}

impl Transform for ScaleBySoap {
    fn apply(&mut self, u: &mut [DMatrix<f64>], ctx: &Context<'_>) {
        let fits = self.mats.len() == u.len()
            && self
                .mats
                .iter()
                .zip(ctx.params)
                .all(|(s, p)| s.m.shape() == p.shape());
        if !fits {
            self.t = 0;
            self.mats = ctx
                .params
                .iter()
                .map(|p| SoapMatrix::new(p.nrows(), p.ncols()))
                .collect();
        }
        self.t = self.t.saturating_add(1);
        if self.t == 1 {
            for (g, s) in u.iter_mut().zip(&mut self.mats) {
                s.accumulate(g, self.b2);
                s.refresh();
                g.fill(0.0);
            }
            return;
        }
        let (b1, b2, eps) = (self.b1, self.b2, self.eps);
        // Adam's count starts at the second call, the first that steps.
        let adam_t = self.t - 1;
        let (bc1, bc2) = (1.0 - b1.powi(adam_t), 1.0 - b2.powi(adam_t));
        let refresh = (self.t as usize - 1).is_multiple_of(self.every);
        for (g, s) in u.iter_mut().zip(&mut self.mats) {
            s.accumulate(g, b2);
            let SoapMatrix {
                q_left,
                q_right,
                q_right_t,
                m,
                v,
                rotated,
                tmp,
                null_left,
                null_right,
                v_null,
                ..
            } = s;
            axpby(m, 1.0 - b1, g, b1);
            // u′ = Q_Lᵀ u Q_R feeds the second moment in the eigenbasis.
            tr_mul_into(tmp, q_left, g);
            mul_into(rotated, tmp, q_right);
            // An entry in a null row or column shares one second moment (the mean square of
            // those entries): a rotation of the null space, which the eigensolver's choice of
            // basis there amounts to, leaves it unchanged.
            let in_null = |k: usize| in_null(null_left, null_right, k);
            let (mut sum, mut count) = (0.0, 0usize);
            for (k, (vi, &x)) in v.iter_mut().zip(rotated.iter()).enumerate() {
                if in_null(k) {
                    sum += x * x;
                    count += 1;
                } else {
                    *vi = b2 * *vi + (1.0 - b2) * x * x;
                }
            }
            if count > 0 {
                *v_null = b2 * *v_null + (1.0 - b2) * sum / count as f64;
                for (k, vi) in v.iter_mut().enumerate() {
                    if in_null(k) {
                        *vi = *v_null;
                    }
                }
            }
            // m′ = Q_Lᵀ m Q_R, divided entry by entry, and rotated back.
            tr_mul_into(tmp, q_left, m);
            mul_into(rotated, tmp, q_right);
            shrink(rotated, m.norm());
            for (x, &vi) in rotated.iter_mut().zip(v.iter()) {
                let denom = (vi / bc2).sqrt() + eps;
                *x = if denom != 0.0 {
                    (*x / bc1) / denom
                } else {
                    0.0
                };
            }
            mul_into(tmp, q_left, rotated);
            mul_into(g, tmp, q_right_t);
            if refresh {
                s.refresh();
            }
        }
    }

    fn clone_box(&self) -> Box<dyn Transform> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        moments_representable("scale_by_soap", grads, self.eps, Statistic::Squares)
    }
}

/// The registry entry.
pub(super) static INFO: TransformInfo = TransformInfo {
    name: "scale_by_soap",
    summary: "SOAP: Adam's m̂/(√v̂ + ε) in the eigenbasis of Shampoo's EMA statistics",
    args: &[
        Arg {
            name: "b1",
            kind: ArgKind::Real(DECAY),
            default: 0.9,
        },
        Arg {
            name: "b2",
            kind: ArgKind::Real(DECAY),
            default: 0.999,
        },
        Arg {
            name: "eps",
            kind: ArgKind::Real(EPS),
            default: 1e-8,
        },
        Arg {
            name: "every",
            kind: ArgKind::Whole(EVERY),
            default: 10.0,
        },
    ],
    side: |_| Side::Both,
    why: "its eigenbases co-rotate with u and Adam's squares ignore eigenvector signs",
    build: |a| {
        Box::new(ScaleBySoap {
            b1: a[0],
            b2: a[1],
            eps: a[2],
            every: a[3] as usize,
            t: 0,
            mats: Vec::new(),
        })
    },
};
