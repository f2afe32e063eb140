//! The operator pass of the sensing loss (numerics §7) for one factor pair or several pairs of
//! the same instance at once: each block of measurements is read once for all of them.
//!
//! Every pair's numbers are those of the plain pass: for each measurement i in order,
//! `r = ⟨A_i, x⟩ − y_i` (a four-lane dot product, [`super::dot`]), `loss += r²` and
//! `gx += (c·r)·A_i` entry by entry. Which pairs, rows and entries advance together only
//! decides the speed. On CPUs with AVX-512 a kernel holds two rows' four lanes in one 512-bit
//! register and serves every pair from the same loaded rows; elsewhere (and in the web build)
//! each pair runs [`super::residual_pass`] by itself.

#[cfg(target_arch = "x86_64")]
use crate::arith::Ops;
#[cfg(target_arch = "x86_64")]
use crate::linalg::avx512::madd;

/// Most pairs one call serves ([`shared_pass`]); a group of runs is passed in chunks of this.
pub const MAX_SHARED: usize = 4;

/// The pass for `P` pairs `(x, gx)` (1 ≤ P ≤ [`MAX_SHARED`]) on `operator` (m rows of n²,
/// row-major) and measurements `y` (m): for each pair, `gx += (c·r_i)·A_i` over i in order,
/// with `r_i = ⟨A_i, x⟩ − y_i`; returns each pair's loss sum `Σ r_i²`. Every x and gx has n²
/// entries. Allocation-free. Panics on a length mismatch.
pub(crate) fn shared_pass<const P: usize>(
    operator: &[f64],
    y: &[f64],
    pairs: [(&[f64], &mut [f64]); P],
    c: f64,
) -> [f64; P] {
    let x: [&[f64]; P] = std::array::from_fn(|p| pairs[p].0);
    let mut gx = pairs.map(|(_, g)| g);
    let nn = x.first().map_or(0, |x| x.len());
    assert!(x.iter().all(|x| x.len() == nn), "every x has n² entries");
    assert!(gx.iter().all(|g| g.len() == nn), "every gx has n² entries");
    assert_eq!(operator.len(), y.len() * nn, "operator is m × n²");
    #[cfg(target_arch = "x86_64")]
    if crate::linalg::avx512::detected() && std::is_x86_feature_detected!("fma") {
        // SAFETY (both): AVX-512F and FMA are checked just above.
        return if crate::arith::fused() {
            unsafe { pass512::<crate::arith::Fused, P>(operator, y, x, gx, c) }
        } else {
            unsafe { pass512::<crate::arith::Plain, P>(operator, y, x, gx, c) }
        };
    }
    std::array::from_fn(|p| super::residual_pass(operator, y, x[p], &mut *gx[p], c))
}

/// The blocks of [`super::residual_pass`] (eight rows for n² ≤ [`super::SMALL`], else four),
/// then its last rows one at a time, for every pair. Compiled with FMA too (every AVX-512 CPU
/// has it), which the fused arithmetic's scalar tails use; the plain arithmetic never fuses.
///
/// # Safety
/// The CPU must support AVX-512F and FMA; lengths as [`shared_pass`] checks them.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn pass512<A: Ops, const P: usize>(
    operator: &[f64],
    y: &[f64],
    x: [&[f64]; P],
    mut gx: [&mut [f64]; P],
    c: f64,
) -> [f64; P] {
    let nn = x[0].len();
    let block = if nn <= super::SMALL { 8 } else { 4 };
    let full = y.len() - y.len() % block;
    let mut loss = [0.0; P];
    for (rows, ys) in operator[..full * nn]
        .chunks_exact(block * nn)
        .zip(y[..full].chunks_exact(block))
    {
        // SAFETY (both): the caller guarantees the features; `rows` holds `block` rows of nn.
        if block == 8 {
            unsafe { block512::<A, P, 4>(rows, ys, &x, &mut gx, c, &mut loss) };
        } else {
            unsafe { block512::<A, P, 2>(rows, ys, &x, &mut gx, c, &mut loss) };
        }
    }
    for (ai, yi) in operator[full * nn..].chunks_exact(nn).zip(&y[full..]) {
        for p in 0..P {
            let r = super::dot::<A>(ai, x[p]) - yi;
            loss[p] += r * r;
            let cr = c * r;
            for (g, a) in gx[p].iter_mut().zip(ai) {
                *g = A::madd(cr, *a, *g);
            }
        }
    }
    loss
}

/// One block of `2·H` measurements for every pair: their dot products (one register holds the
/// four lanes of two rows, and each pair's x is broadcast to both halves, so every loaded row
/// serves every pair), the residuals and loss terms in row order, then one sweep adding the
/// scaled rows to each pair's gx, eight entries per register, rows in order.
///
/// # Safety
/// The CPU must support AVX-512F (and FMA when `A` is fused); `rows` holds `2·H` rows of n²,
/// `ys` `2·H` values, every `x[p]` and `gx[p]` n² entries.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn block512<A: Ops, const P: usize, const H: usize>(
    rows: &[f64],
    ys: &[f64],
    x: &[&[f64]; P],
    gx: &mut [&mut [f64]; P],
    c: f64,
    loss: &mut [f64; P],
) {
    use std::arch::x86_64::{
        __m512d, _mm256_loadu_pd, _mm512_broadcast_f64x4, _mm512_castpd256_pd512,
        _mm512_insertf64x4, _mm512_loadu_pd, _mm512_set1_pd, _mm512_setzero_pd, _mm512_storeu_pd,
    };
    let nn = x[0].len();
    let full4 = nn - nn % 4;
    let row = |b: usize| &rows[b * nn..(b + 1) * nn];
    // SAFETY (whole body): the caller guarantees the features; every index below is under
    // full4 ≤ nn (dots) or full8 ≤ nn (updates) of a row, an x or a gx.
    unsafe {
        let mut acc = [[_mm512_setzero_pd(); P]; H];
        for j in (0..full4).step_by(4) {
            let pair: [__m512d; H] = std::array::from_fn(|h| {
                let lo = _mm256_loadu_pd(rows.as_ptr().add(2 * h * nn + j));
                let hi = _mm256_loadu_pd(rows.as_ptr().add((2 * h + 1) * nn + j));
                _mm512_insertf64x4::<1>(_mm512_castpd256_pd512(lo), hi)
            });
            for (p, xp) in x.iter().enumerate() {
                let xs = _mm512_broadcast_f64x4(_mm256_loadu_pd(xp.as_ptr().add(j)));
                for (acc_h, rows_h) in acc.iter_mut().zip(&pair) {
                    acc_h[p] = madd::<A>(*rows_h, xs, acc_h[p]);
                }
            }
        }
        let mut cr = [[0.0f64; 8]; P];
        for (p, (cr_p, loss_p)) in cr.iter_mut().zip(loss.iter_mut()).enumerate() {
            for (h, acc_h) in acc.iter().enumerate() {
                let mut lanes = [0.0f64; 8];
                _mm512_storeu_pd(lanes.as_mut_ptr(), acc_h[p]);
                for (half, four) in lanes.chunks_exact(4).enumerate() {
                    let b = 2 * h + half;
                    let four = four.try_into().expect("four lanes");
                    let dot = super::finish_dot::<A>(four, &row(b)[full4..], &x[p][full4..]);
                    let r = dot - ys[b];
                    *loss_p += r * r;
                    cr_p[b] = c * r;
                }
            }
        }
        let full8 = nn - nn % 8;
        let crv: [[__m512d; 8]; P] =
            std::array::from_fn(|p| std::array::from_fn(|b| _mm512_set1_pd(cr[p][b])));
        for idx in (0..full8).step_by(8) {
            let a: [__m512d; 8] = std::array::from_fn(|b| {
                if b < 2 * H {
                    _mm512_loadu_pd(rows.as_ptr().add(b * nn + idx))
                } else {
                    _mm512_setzero_pd()
                }
            });
            for (crv_p, g) in crv.iter().zip(gx.iter_mut()) {
                let at = g.as_mut_ptr().add(idx);
                let mut v = _mm512_loadu_pd(at);
                for (c_b, a_b) in crv_p.iter().zip(&a[..2 * H]) {
                    v = madd::<A>(*c_b, *a_b, v);
                }
                _mm512_storeu_pd(at, v);
            }
        }
        // The entries past the last eight, each with the same terms in the same order.
        for (cr_p, g) in cr.iter().zip(gx.iter_mut()) {
            for (idx, g_i) in g.iter_mut().enumerate().skip(full8) {
                let mut v = *g_i;
                for (b, c_b) in cr_p[..2 * H].iter().enumerate() {
                    v = A::madd(*c_b, row(b)[idx], v);
                }
                *g_i = v;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{Fused, Plain};

    /// An operator of `m` rows of `nn` and `P` points, entries spread over six decades.
    fn inputs(m: usize, nn: usize, p: usize) -> (Vec<f64>, Vec<f64>, Vec<Vec<f64>>) {
        let f = |i: usize, s: f64| (i as f64 * 0.61 + s).sin() * 1e3f64.powf((i % 4) as f64 - 1.5);
        let op = (0..m * nn).map(|i| f(i, 0.3)).collect();
        let y = (0..m).map(|i| f(i, 1.7)).collect();
        let xs = (0..p)
            .map(|k| (0..nn).map(|i| f(i, 2.9 + k as f64)).collect())
            .collect();
        (op, y, xs)
    }

    /// Every pair of a `P`-pair pass in arithmetic `A` against the plain loops of one pair
    /// alone in `A` (the generic pass, compiled without wider vectors), bit for bit.
    #[cfg(target_arch = "x86_64")]
    fn check<A: Ops, const P: usize>() {
        // Blocks of eight with a tail of rows and of entries; blocks of four past SMALL.
        // Rows shorter than a vector (1, 4, 7 entries) and fewer rows than a block too.
        for (m, nn) in [
            (19, 30),
            (16, 64),
            (5, 9),
            (17, 1),
            (17, 4),
            (17, 7),
            (3, 12),
            (7, super::super::SMALL + 6),
        ] {
            let (op, y, xs) = inputs(m, nn, P);
            let mut gx: Vec<Vec<f64>> = (0..P).map(|k| vec![0.5 * k as f64; nn]).collect();
            let mut refs = gx.clone();
            let pairs: [(&[f64], &mut [f64]); P] = {
                let mut g = gx.iter_mut();
                std::array::from_fn(|k| (xs[k].as_slice(), g.next().expect("P").as_mut_slice()))
            };
            // SAFETY: called only where AVX-512F and FMA are detected.
            let losses = unsafe {
                let x: [&[f64]; P] = std::array::from_fn(|k| pairs[k].0);
                pass512::<A, P>(&op, &y, x, pairs.map(|(_, g)| g), 0.37)
            };
            for k in 0..P {
                let loss =
                    super::super::residual_pass_with::<A>(&op, &y, &xs[k], &mut refs[k], 0.37);
                assert_eq!(
                    loss.to_bits(),
                    losses[k].to_bits(),
                    "loss {m}×{nn}, pair {k}"
                );
                let same = refs[k]
                    .iter()
                    .zip(&gx[k])
                    .all(|(a, b)| a.to_bits() == b.to_bits());
                assert!(same, "gx {m}×{nn}, pair {k}");
            }
        }
    }

    #[test]
    fn a_shared_pass_gives_every_pair_the_bits_of_its_own_pass_in_both_arithmetics() {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("fma") {
            check::<Fused, 1>();
            check::<Fused, 2>();
            check::<Fused, 3>();
            check::<Fused, 4>();
            check::<Plain, 1>();
            check::<Plain, 3>();
        }
        // Without AVX-512 each pair runs `residual_pass` itself: nothing of this file runs.
    }
}
