//! Small dense products written out on column-major slices: allocation-free and in a fixed
//! summation order (nalgebra's general products may allocate packing buffers per call). Sizes
//! here are tens to a few hundred, where these loops vectorise well. Where the CPU has
//! AVX-512F, [`mul_into`] and [`tr_mul_into`] run written-out 512-bit copies of the same sums
//! (`avx512`), bit for bit the same results.

use nalgebra::DMatrix;

use crate::arith::Ops;

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
pub mod gemm;
pub mod norm;
pub mod ode;

/// Defines `$name`, which runs `$imp` (a function generic over [`crate::arith::Ops`]) in one of
/// three copies, chosen per call: with [`crate::arith::Fused`] compiled for AVX2 and FMA when
/// [`crate::arith::fused`] says so; else with [`crate::arith::Plain`] compiled for AVX2 where
/// the CPU has it; else with `Plain` in the baseline build. The two `Plain` copies do the same
/// operations in the same order (Rust never fuses a multiply and an add unless asked), so they
/// give bit-identical results; only the vector width differs. `$imp` should be
/// `#[inline(always)]`, with its helpers, so that all of it is compiled for the copy's features.
macro_rules! dispatch {
    ($(#[$meta:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)? => $($imp:ident)::+) => {
        $(#[$meta])*
        $vis fn $name($($arg: $ty),*) $(-> $ret)? {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,fma")]
                fn fused($($arg: $ty),*) $(-> $ret)? {
                    $($imp)::+::<$crate::arith::Fused>($($arg),*)
                }
                #[target_feature(enable = "avx2")]
                fn avx2($($arg: $ty),*) $(-> $ret)? {
                    $($imp)::+::<$crate::arith::Plain>($($arg),*)
                }
                if $crate::arith::fused() {
                    // SAFETY: `fused` is true only on a CPU with AVX2 and FMA.
                    return unsafe { fused($($arg),*) };
                }
                if std::is_x86_feature_detected!("avx2") {
                    // SAFETY: the CPU supports AVX2, checked just above.
                    return unsafe { avx2($($arg),*) };
                }
            }
            $($imp)::+::<$crate::arith::Plain>($($arg),*)
        }
    };
}
pub(crate) use dispatch;

dispatch! {
    /// `out = a·b` for `a` (`m × k`), `b` (`k × n`), `out` (`m × n`). Each entry is summed over
    /// `l = 0..k` in order from 0 by multiply-adds of the arithmetic in force
    /// ([`crate::arith`]), skipping the terms where `b[l, j]` is 0. Panics on a shape mismatch.
    pub fn mul_into(out: &mut DMatrix<f64>, a: &DMatrix<f64>, b: &DMatrix<f64>) => mul_with
}

/// `a·b` (`m × k` times `k × n`, an `m × n` result) in a new matrix, by [`mul_into`]: for
/// products outside a training step (twin starts and distances). nalgebra's `*` hands large
/// products to matrixmultiply, whose kernel uses fused multiply-adds where the CPU has them
/// whatever arithmetic is in force, so the portable path and the web page would differ in the
/// last bits. Panics on a shape mismatch.
pub fn product(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
    let mut out = DMatrix::zeros(a.nrows(), b.ncols());
    mul_into(&mut out, a, b);
    out
}

/// `a·bᵀ` (`m × k` and `n × k`, an `m × n` result) in a new matrix ([`product`]). Panics on
/// a shape mismatch.
pub fn product_t(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
    product(a, &b.transpose())
}

/// Rows and columns of one register block of [`mul_into`].
const MUL_ROWS: usize = 8;
const MUL_COLS: usize = 4;

/// [`mul_into`] in the arithmetic `A`, for loops that are themselves dispatched.
#[inline(always)]
pub(crate) fn mul_with<A: Ops>(out: &mut DMatrix<f64>, a: &DMatrix<f64>, b: &DMatrix<f64>) {
    mul_impl::<A>(out, a, b, false);
}

/// `out = a·a` for an exactly symmetric `a`, bit for bit as [`mul_with`]`(out, a, a)`. When no
/// entry of `a` is 0, no term is skipped and entries `(i, j)` and `(j, i)` are the same products
/// in the same order, so the AVX-512 path computes the blocks on and below the diagonal only.
#[inline(always)]
pub(crate) fn mul_symmetric_with<A: Ops>(out: &mut DMatrix<f64>, a: &DMatrix<f64>) {
    debug_assert!(
        a.is_square()
            && (0..a.nrows()).all(|i| (0..i).all(|j| a[(i, j)].to_bits() == a[(j, i)].to_bits()))
    );
    mul_impl::<A>(out, a, a, true);
}

/// [`mul_with`], or with `symmetric` [`mul_symmetric_with`]: the AVX-512 copy where the CPU has
/// it and `b` has no zero entry, else [`mul_blocked`].
#[inline(always)]
fn mul_impl<A: Ops>(out: &mut DMatrix<f64>, a: &DMatrix<f64>, b: &DMatrix<f64>, symmetric: bool) {
    let (m, k) = a.shape();
    assert_eq!(b.nrows(), k, "inner dimensions");
    let n = b.ncols();
    assert_eq!(out.shape(), (m, n), "output shape");
    let (a, b, out) = (a.as_slice(), b.as_slice(), out.as_mut_slice());
    // Only the AVX-512 copy computes half of a symmetric product.
    #[cfg(not(target_arch = "x86_64"))]
    let _ = symmetric;
    #[cfg(target_arch = "x86_64")]
    if avx512::detected() {
        // SAFETY: the CPU has AVX-512F, checked just above.
        if unsafe { avx512::mul::<A>(out, a, b, (m, k, n), symmetric) } {
            return;
        }
    }
    mul_blocked::<A>(out, a, b, (m, k, n));
}

/// The portable loops of [`mul_into`] on column-major slices of shapes `(m, k, n)`.
#[inline(always)]
fn mul_blocked<A: Ops>(out: &mut [f64], a: &[f64], b: &[f64], (m, k, n): (usize, usize, usize)) {
    let full_rows = m - m % MUL_ROWS;
    let mut j = 0;
    // Blocks of 8 rows × 4 columns stay in registers over the whole sum; each entry still adds
    // its terms one by one in the order of `l`.
    while j + MUL_COLS <= n {
        let cols: [&[f64]; MUL_COLS] = std::array::from_fn(|c| &b[(j + c) * k..(j + c + 1) * k]);
        for i in (0..full_rows).step_by(MUL_ROWS) {
            let mut acc = [[0.0f64; MUL_ROWS]; MUL_COLS];
            for l in 0..k {
                let ar: &[f64; MUL_ROWS] = a[l * m + i..l * m + i + MUL_ROWS]
                    .try_into()
                    .expect("block length");
                for (acc_c, col) in acc.iter_mut().zip(&cols) {
                    let blj = col[l];
                    if blj != 0.0 {
                        for (o, &x) in acc_c.iter_mut().zip(ar) {
                            *o = A::madd(x, blj, *o);
                        }
                    }
                }
            }
            for (c, acc_c) in acc.iter().enumerate() {
                out[(j + c) * m + i..(j + c) * m + i + MUL_ROWS].copy_from_slice(acc_c);
            }
        }
        for (c, col) in cols.iter().enumerate() {
            mul_column::<A>(
                &mut out[(j + c) * m + full_rows..(j + c + 1) * m],
                a,
                col,
                m,
                full_rows,
            );
        }
        j += MUL_COLS;
    }
    for jj in j..n {
        mul_column::<A>(
            &mut out[jj * m..(jj + 1) * m],
            a,
            &b[jj * k..(jj + 1) * k],
            m,
            0,
        );
    }
}

/// Rows `first..m` of one column of `a·b`: `out` holds them, `col` is the column of `b`.
#[inline(always)]
fn mul_column<A: Ops>(out: &mut [f64], a: &[f64], col: &[f64], m: usize, first: usize) {
    out.fill(0.0);
    for (l, &blj) in col.iter().enumerate() {
        if blj != 0.0 {
            for (o, &x) in out.iter_mut().zip(&a[l * m + first..(l + 1) * m]) {
                *o = A::madd(x, blj, *o);
            }
        }
    }
}

dispatch! {
    /// `out = aᵀ·b` for `a` (`k × m`), `b` (`k × n`), `out` (`m × n`): dot products of columns,
    /// each summed over `l = 0..k` in order from −0 (as `Iterator::sum`) by multiply-adds of the
    /// arithmetic in force ([`crate::arith`]). Panics on a shape mismatch.
    pub fn tr_mul_into(out: &mut DMatrix<f64>, a: &DMatrix<f64>, b: &DMatrix<f64>) => tr_mul_with
}

/// Output rows per block of [`tr_mul_into`] (one vector of four lanes).
const TR_ROWS: usize = 4;
/// Output columns per block of [`tr_mul_into`].
const TR_COLS: usize = 8;
/// Terms per pass of [`tr_mul_into`]: the transposed panel of `a` lives on the stack.
const TR_PANEL: usize = 128;

/// [`tr_mul_into`] in the arithmetic `A`, for loops that are themselves dispatched.
#[inline(always)]
pub(crate) fn tr_mul_with<A: Ops>(out: &mut DMatrix<f64>, a: &DMatrix<f64>, b: &DMatrix<f64>) {
    let (k, m) = a.shape();
    assert_eq!(b.nrows(), k, "inner dimensions");
    let n = b.ncols();
    assert_eq!(out.shape(), (m, n), "output shape");
    // aᵀa is symmetric, and its entries (i, j) and (j, i) are the same products summed in the
    // same order: compute the blocks on and below the diagonal and mirror the rest.
    let symmetric = std::ptr::eq(a, b);
    let (a, b, out) = (a.as_slice(), b.as_slice(), out.as_mut_slice());
    #[cfg(target_arch = "x86_64")]
    if avx512::detected() {
        // SAFETY: the CPU has AVX-512F, checked just above.
        unsafe { avx512::tr_mul::<A>(out, a, b, (k, m, n), symmetric) };
        return;
    }
    tr_mul_blocked::<A>(out, a, b, (k, m, n), symmetric);
}

/// The portable loops of [`tr_mul_into`] on column-major slices of shapes `(k, m, n)`.
#[inline(always)]
fn tr_mul_blocked<A: Ops>(
    out: &mut [f64],
    a: &[f64],
    b: &[f64],
    (k, m, n): (usize, usize, usize),
    symmetric: bool,
) {
    if k == 0 {
        // Empty sums (the panels below would leave them unwritten).
        out.fill(-0.0);
        return;
    }
    let full_rows = m - m % TR_ROWS;
    // Four columns of `a` are copied into a row-major panel, so that one vector holds the
    // terms of four output rows for the same `l`: every entry keeps its own sequential sum
    // while 8 × 4 of them advance together. Long sums go panel by panel, parking the partial
    // sums in `out` (exact) between panels.
    let mut panel = [[0.0f64; TR_ROWS]; TR_PANEL];
    for i in (0..full_rows).step_by(TR_ROWS) {
        let n = if symmetric { n.min(i + TR_ROWS) } else { n };
        for l0 in (0..k).step_by(TR_PANEL) {
            let len = TR_PANEL.min(k - l0);
            for (l, row) in panel[..len].iter_mut().enumerate() {
                for (r, x) in row.iter_mut().enumerate() {
                    *x = a[(i + r) * k + l0 + l];
                }
            }
            let start = |o: &[f64]| -> [f64; TR_ROWS] {
                if l0 == 0 {
                    [-0.0; TR_ROWS]
                } else {
                    o.try_into().expect("block length")
                }
            };
            let mut j = 0;
            while j + TR_COLS <= n {
                let mut acc: [[f64; TR_ROWS]; TR_COLS] = std::array::from_fn(|c| {
                    start(&out[(j + c) * m + i..(j + c) * m + i + TR_ROWS])
                });
                for (l, p) in panel[..len].iter().enumerate() {
                    for (c, acc_c) in acc.iter_mut().enumerate() {
                        let blj = b[(j + c) * k + l0 + l];
                        for (o, &x) in acc_c.iter_mut().zip(p) {
                            *o = A::madd(x, blj, *o);
                        }
                    }
                }
                for (c, acc_c) in acc.iter().enumerate() {
                    out[(j + c) * m + i..(j + c) * m + i + TR_ROWS].copy_from_slice(acc_c);
                }
                j += TR_COLS;
            }
            for jj in j..n {
                let mut acc = start(&out[jj * m + i..jj * m + i + TR_ROWS]);
                for (l, p) in panel[..len].iter().enumerate() {
                    let blj = b[jj * k + l0 + l];
                    for (o, &x) in acc.iter_mut().zip(p) {
                        *o = A::madd(x, blj, *o);
                    }
                }
                out[jj * m + i..jj * m + i + TR_ROWS].copy_from_slice(&acc);
            }
        }
    }
    for j in 0..n {
        let bj = &b[j * k..(j + 1) * k];
        for i in full_rows..m {
            out[j * m + i] = a[i * k..(i + 1) * k]
                .iter()
                .zip(bj)
                .fold(-0.0, |s, (x, y)| A::madd(*x, *y, s));
        }
    }
    if symmetric {
        for i in 0..full_rows {
            for j in (i - i % TR_ROWS + TR_ROWS)..n {
                out[j * m + i] = out[i * m + j];
            }
        }
    }
}

/// `out += a·aᵀ` for `a` (`m × n`), `out` (`m × m`). Panics on a shape mismatch.
pub fn add_outer_into(out: &mut DMatrix<f64>, a: &DMatrix<f64>) {
    let (m, n) = a.shape();
    assert_eq!(out.shape(), (m, m), "output shape");
    let a = a.as_slice();
    for l in 0..n {
        let col = &a[l * m..(l + 1) * m];
        for (j, &x) in col.iter().enumerate() {
            if x != 0.0 {
                for (o, &y) in out.as_mut_slice()[j * m..(j + 1) * m].iter_mut().zip(col) {
                    *o += y * x;
                }
            }
        }
    }
}

/// `out += aᵀ·a` for `a` (`m × n`), `out` (`n × n`). Panics on a shape mismatch.
pub fn add_gram_into(out: &mut DMatrix<f64>, a: &DMatrix<f64>) {
    let (m, n) = a.shape();
    assert_eq!(out.shape(), (n, n), "output shape");
    let a = a.as_slice();
    for j in 0..n {
        let cj = &a[j * m..(j + 1) * m];
        for i in 0..n {
            let ci = &a[i * m..(i + 1) * m];
            out[(i, j)] += ci.iter().zip(cj).map(|(x, y)| x * y).sum::<f64>();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{Fused, Plain};

    fn m(r: usize, c: usize, seed: f64) -> DMatrix<f64> {
        DMatrix::from_fn(r, c, |i, j| ((i * 7 + j * 3) as f64 + seed).sin())
    }

    /// The plain loops of the blocked kernels, in the arithmetic `A`: the same sums in the
    /// same order.
    fn reference_mul<A: Ops>(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
        DMatrix::from_fn(a.nrows(), b.ncols(), |i, j| {
            let mut o = 0.0;
            for l in 0..a.ncols() {
                if b[(l, j)] != 0.0 {
                    o = A::madd(a[(i, l)], b[(l, j)], o);
                }
            }
            o
        })
    }

    fn reference_tr_mul<A: Ops>(a: &DMatrix<f64>, b: &DMatrix<f64>) -> DMatrix<f64> {
        DMatrix::from_fn(a.ncols(), b.ncols(), |i, j| {
            (0..a.nrows()).fold(-0.0, |s, l| A::madd(a[(l, i)], b[(l, j)], s))
        })
    }

    fn bits(m: &DMatrix<f64>) -> Vec<u64> {
        m.iter().map(|x| x.to_bits()).collect()
    }

    /// Whether this run checks the AVX-512 copies too (the CPU has AVX-512F, as the machine
    /// these products were tuned on does).
    fn avx512() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            avx512::detected()
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            false
        }
    }

    /// `out = a·b` by the portable loops and, with [`avx512`], the AVX-512 copy (which must
    /// take `b` exactly when it has no zero), each against the plain loops.
    fn check_mul<A: Ops>(a: &DMatrix<f64>, b: &DMatrix<f64>, symmetric: bool) {
        let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
        let want = bits(&reference_mul::<A>(a, b));
        let mut out = DMatrix::from_element(m, n, f64::NAN);
        mul_blocked::<A>(out.as_mut_slice(), a.as_slice(), b.as_slice(), (m, k, n));
        assert_eq!(bits(&out), want, "blocked mul {m}×{k}×{n}");
        #[cfg(target_arch = "x86_64")]
        if avx512() {
            let mut out = DMatrix::from_element(m, n, f64::NAN);
            let shape = (m, k, n);
            // SAFETY: the CPU has AVX-512F (`avx512`).
            let took = unsafe {
                avx512::mul::<A>(
                    out.as_mut_slice(),
                    a.as_slice(),
                    b.as_slice(),
                    shape,
                    symmetric,
                )
            };
            assert_eq!(took, !b.iter().any(|&x| x == 0.0), "a zero in b falls back");
            if took {
                assert_eq!(bits(&out), want, "AVX-512 mul {m}×{k}×{n} {symmetric}");
            }
        }
        let mut out = DMatrix::from_element(m, n, f64::NAN);
        if symmetric {
            mul_symmetric_with::<A>(&mut out, a);
        } else {
            mul_with::<A>(&mut out, a, b);
        }
        assert_eq!(bits(&out), want, "mul {m}×{k}×{n} {symmetric}");
    }

    /// `out = aᵀ·b` as [`check_mul`]; passing `a` for `b` checks the symmetric product.
    fn check_tr_mul<A: Ops>(a: &DMatrix<f64>, b: &DMatrix<f64>) {
        let (k, m, n) = (a.nrows(), a.ncols(), b.ncols());
        let symmetric = std::ptr::eq(a, b);
        let want = bits(&reference_tr_mul::<A>(a, b));
        let mut out = DMatrix::from_element(m, n, f64::NAN);
        tr_mul_blocked::<A>(
            out.as_mut_slice(),
            a.as_slice(),
            b.as_slice(),
            (k, m, n),
            symmetric,
        );
        assert_eq!(bits(&out), want, "blocked tr_mul {m}×{k}×{n} {symmetric}");
        #[cfg(target_arch = "x86_64")]
        if avx512() {
            let mut out = DMatrix::from_element(m, n, f64::NAN);
            let shape = (k, m, n);
            // SAFETY: the CPU has AVX-512F (`avx512`).
            unsafe {
                avx512::tr_mul::<A>(
                    out.as_mut_slice(),
                    a.as_slice(),
                    b.as_slice(),
                    shape,
                    symmetric,
                )
            };
            assert_eq!(bits(&out), want, "AVX-512 tr_mul {m}×{k}×{n} {symmetric}");
        }
        let mut out = DMatrix::from_element(m, n, f64::NAN);
        tr_mul_with::<A>(&mut out, a, b);
        assert_eq!(bits(&out), want, "tr_mul {m}×{k}×{n} {symmetric}");
    }

    fn check<A: Ops>() {
        // Shapes with and without remainders: row tails of every length, one to 17 vectors of
        // eight rows (tiles of up to five, passes of 64 rows in tr_mul), column counts not a
        // multiple of four, sums longer than a panel, and empty ones.
        for (m, k, n) in [
            (16, 16, 32),
            (40, 40, 40),
            (19, 23, 13),
            (9, 300, 11),
            (3, 2, 1),
            (50, 7, 6),
            (72, 33, 9),
            (130, 70, 5),
            (61, 100, 3),
            (0, 3, 2),
            (4, 0, 3),
            (4, 600, 0),
        ] {
            let a = m_(m, k, 0.3);
            let b = m_(k, n, 1.1);
            check_mul::<A>(&a, &b, false);
            if k > 1 && n > 0 {
                let mut b = b;
                b[(1, 0)] = 0.0;
                check_mul::<A>(&a, &b, false);
            }
            check_tr_mul::<A>(&m_(k, m, 0.9), &m_(k, n, 1.1));
        }
        // Gram matrices (the symmetric tr_mul), then their squares (the symmetric mul): sides
        // inside one diagonal block, across several, and across passes of 64 rows.
        for n in [1, 8, 13, 40, 48, 67, 130] {
            let y = m_(n + 3, n, 0.5);
            check_tr_mul::<A>(&y, &y);
            let mut g = DMatrix::zeros(n, n);
            tr_mul_with::<A>(&mut g, &y, &y);
            check_mul::<A>(&g, &g, true);
            if n > 1 {
                (g[(1, 0)], g[(0, 1)]) = (0.0, 0.0);
                check_mul::<A>(&g, &g, true);
            }
        }
    }

    #[test]
    fn blocked_products_are_bit_identical_to_the_plain_loops_in_both_arithmetics() {
        check::<Plain>();
        check::<Fused>();
    }

    fn m_(r: usize, c: usize, seed: f64) -> DMatrix<f64> {
        DMatrix::from_fn(r, c, |i, j| {
            ((i * 13 + j * 7) as f64 * 0.37 + seed).sin() * 1e3f64.powf(((i + j) % 5) as f64 - 2.0)
        })
    }

    #[test]
    fn products_match_nalgebra() {
        let (a, b) = (m(5, 3, 0.1), m(3, 4, 0.7));
        let mut out = DMatrix::zeros(5, 4);
        mul_into(&mut out, &a, &b);
        assert!((&out - &a * &b).amax() < 1e-14);
        let c = m(5, 4, 1.3);
        let mut out = DMatrix::zeros(3, 4);
        tr_mul_into(&mut out, &a, &c);
        assert!((&out - a.transpose() * &c).amax() < 1e-14);
        let mut outer = DMatrix::from_element(5, 5, 1.0);
        add_outer_into(&mut outer, &a);
        assert!((&outer - (&a * a.transpose()).add_scalar(1.0)).amax() < 1e-14);
        let mut gram = DMatrix::from_element(3, 3, 2.0);
        add_gram_into(&mut gram, &a);
        assert!((&gram - (a.transpose() * &a).add_scalar(2.0)).amax() < 1e-14);
    }
}
