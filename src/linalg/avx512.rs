//! AVX-512 copies of [`super::mul_with`] and [`super::tr_mul_with`], taken where the CPU has
//! AVX-512F: LLVM does not widen the portable loops to 512 bits by itself, so these are written
//! with intrinsics. Every entry still adds its terms one by one in the order of `l`, from the
//! same start, by the arithmetic's own operation (one fused rounding for
//! [`crate::arith::Fused`], a product then a sum for [`crate::arith::Plain`]), so the results
//! are bit-identical to the portable loops; only which entries advance together differs.

use std::arch::x86_64::{
    __m512d, __mmask8, _mm512_add_pd, _mm512_fmadd_pd, _mm512_loadu_pd, _mm512_mask_storeu_pd,
    _mm512_maskz_loadu_pd, _mm512_mul_pd, _mm512_permutex2var_pd, _mm512_set_epi64, _mm512_set1_pd,
    _mm512_setzero_pd, _mm512_shuffle_f64x2, _mm512_storeu_pd, _mm512_unpackhi_pd,
    _mm512_unpacklo_pd,
};
use std::mem::MaybeUninit;

use crate::arith::Ops;

/// Whether the CPU has AVX-512F (the standard library caches the answer).
#[inline]
pub(crate) fn detected() -> bool {
    std::is_x86_feature_detected!("avx512f")
}

/// Output columns per register tile; a divisor of 8, so that a tile's columns share the first
/// row block of the lower part (see [`sweep`]).
const COLS: usize = 4;
/// Rows of the output per pass of [`tr_mul`] (eight vectors).
const TR_ROWS: usize = 64;
/// Numbers in [`tr_mul`]'s transposed panel (32 KB on the stack).
const TR_PANEL: usize = 4096;

/// What each entry's sum starts from.
#[derive(Clone, Copy)]
enum Start {
    /// +0, as [`super::mul_with`].
    Zero,
    /// −0, as [`super::tr_mul_with`].
    NegZero,
    /// The partial sum parked in the output by the previous pass.
    Out,
}

/// Where a sweep reads and writes: the term `l` of output entry `(i, j)` is
/// `a[l·lda + i − row0]·b[j·ldb + l]`, and the entry is `out[j·ldo + i]`.
#[derive(Clone, Copy)]
struct Operands {
    out: *mut f64,
    ldo: usize,
    a: *const f64,
    lda: usize,
    row0: usize,
    b: *const f64,
    ldb: usize,
    /// Terms per entry.
    len: usize,
    start: Start,
}

/// `acc + x·y` in the arithmetic `A`, lane by lane.
#[target_feature(enable = "avx512f")]
#[inline]
pub(crate) fn madd<A: Ops>(x: __m512d, y: __m512d, acc: __m512d) -> __m512d {
    if A::FUSED {
        _mm512_fmadd_pd(x, y, acc)
    } else {
        _mm512_add_pd(_mm512_mul_pd(x, y), acc)
    }
}

/// The `rows` (in `8·(V − 1) + 1 ..= 8·V`) × `C` tile of the output at `(i, j)`, its
/// accumulators in registers over the whole sum; the last vector of each column is masked to
/// the rows that exist.
///
/// # Safety
/// AVX-512F, and `o` must address every entry and term of the tile in bounds (the masked-off
/// lanes are never touched).
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn tile<A: Ops, const V: usize, const C: usize>(
    o: &Operands,
    i: usize,
    j: usize,
    rows: usize,
) {
    let tail: __mmask8 = (((1u16) << (rows - 8 * (V - 1))) - 1) as u8;
    // SAFETY (whole body): the caller keeps every full vector and the tail's unmasked lanes
    // within `out`, `a` and `b`; the masked loads and stores read and write only those lanes.
    unsafe {
        let out = |c: usize, v: usize| o.out.add((j + c) * o.ldo + i + 8 * v);
        let load = |p: *const f64, v: usize| {
            if v + 1 == V {
                _mm512_maskz_loadu_pd(tail, p)
            } else {
                _mm512_loadu_pd(p)
            }
        };
        let mut acc: [[__m512d; V]; C] = std::array::from_fn(|c| {
            std::array::from_fn(|v| match o.start {
                Start::Zero => _mm512_setzero_pd(),
                Start::NegZero => _mm512_set1_pd(-0.0),
                Start::Out => load(out(c, v), v),
            })
        });
        let a = o.a.add(i - o.row0);
        let b = o.b.add(j * o.ldb);
        for l in 0..o.len {
            let x: [__m512d; V] = std::array::from_fn(|v| load(a.add(l * o.lda + 8 * v), v));
            for (c, acc_c) in acc.iter_mut().enumerate() {
                let y = _mm512_set1_pd(*b.add(c * o.ldb + l));
                for (s, &xv) in acc_c.iter_mut().zip(&x) {
                    *s = madd::<A>(xv, y, *s);
                }
            }
        }
        for (c, acc_c) in acc.iter().enumerate() {
            for (v, &s) in acc_c.iter().enumerate() {
                if v + 1 == V {
                    _mm512_mask_storeu_pd(out(c, v), tail, s);
                } else {
                    _mm512_storeu_pd(out(c, v), s);
                }
            }
        }
    }
}

/// Rows `rows` of the `C` output columns from `j`, in tiles of at most five vectors (40 rows:
/// 20 accumulators, five operand vectors and a broadcast fit the 32 registers).
///
/// # Safety
/// As [`tile`], for every row in `rows` and column in `j..j + C`.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn columns<A: Ops, const C: usize>(o: &Operands, j: usize, rows: std::ops::Range<usize>) {
    let mut i = rows.start;
    while i < rows.end {
        let vectors = (rows.end - i).div_ceil(8);
        let v = if vectors <= 5 { vectors } else { 4 };
        let r = (rows.end - i).min(8 * v);
        // SAFETY: rows i..i + r lie in `rows`, and r is in 8·(v − 1) + 1 ..= 8·v.
        unsafe {
            match v {
                1 => tile::<A, 1, C>(o, i, j, r),
                2 => tile::<A, 2, C>(o, i, j, r),
                3 => tile::<A, 3, C>(o, i, j, r),
                4 => tile::<A, 4, C>(o, i, j, r),
                _ => tile::<A, 5, C>(o, i, j, r),
            }
        }
        i += r;
    }
}

/// Rows `rows` of output columns `0..cols`, or with `lower` only the rows from the start of
/// each column's diagonal block of eight (`j − j % 8`) on: the blocks on and below the
/// diagonal, which [`mirror`] completes.
///
/// # Safety
/// As [`tile`], for every row in `rows` and column below `cols`.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn sweep<A: Ops>(o: &Operands, rows: std::ops::Range<usize>, cols: usize, lower: bool) {
    let mut j = 0;
    while j < cols {
        let first = if lower {
            rows.start.max(j - j % 8)
        } else {
            rows.start
        };
        let wide = j + COLS <= cols;
        // SAFETY: the rows first..rows.end and the columns j..j + COLS (or j) are in range.
        unsafe {
            if wide {
                columns::<A, COLS>(o, j, first..rows.end);
            } else {
                columns::<A, 1>(o, j, first..rows.end);
            }
        }
        j += if wide { COLS } else { 1 };
    }
}

/// Writes the 8 × 8 block at `dst` (rows `ld_dst` apart) as the transpose of the one at `src`
/// (rows `ld_src` apart): `dst[c·ld_dst + r] = src[r·ld_src + c]`, in registers (a scalar copy
/// of a strided block showed in profiles). Moves numbers, so bits are kept.
///
/// # Safety
/// AVX-512F; `src[r·ld_src..][..8]` readable and `dst[c·ld_dst..][..8]` writable for r, c < 8,
/// the two not overlapping.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn transpose8(src: *const f64, ld_src: usize, dst: *mut f64, ld_dst: usize) {
    // SAFETY: the caller's bounds, eight numbers from each of the eight row starts.
    let r: [__m512d; 8] = std::array::from_fn(|r| unsafe { _mm512_loadu_pd(src.add(r * ld_src)) });
    // Pairs of rows interleaved: t[2p] holds columns 0, 2, 4, 6 of rows 2p and 2p + 1, t[2p + 1]
    // columns 1, 3, 5, 7.
    let t: [__m512d; 8] = std::array::from_fn(|q| {
        let (x, y) = (r[q - q % 2], r[q - q % 2 + 1]);
        if q % 2 == 0 {
            _mm512_unpacklo_pd(x, y)
        } else {
            _mm512_unpackhi_pd(x, y)
        }
    });
    // Then quads: u[4h + c] holds columns c and c + 4 of rows 4h..4h + 4.
    let low = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
    let high = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
    let u: [__m512d; 8] = std::array::from_fn(|q| {
        let base = q - q % 4 + q % 2;
        _mm512_permutex2var_pd(t[base], if q % 4 < 2 { low } else { high }, t[base + 2])
    });
    for c in 0..4 {
        let column = _mm512_shuffle_f64x2::<0x44>(u[c], u[4 + c]);
        let shifted = _mm512_shuffle_f64x2::<0xEE>(u[c], u[4 + c]);
        // SAFETY: the caller's bounds, rows c and c + 4 of `dst`.
        unsafe {
            _mm512_storeu_pd(dst.add(c * ld_dst), column);
            _mm512_storeu_pd(dst.add((c + 4) * ld_dst), shifted);
        }
    }
}

/// Copies the entries above the rows [`sweep`] computes with `lower` from their mirror images:
/// `out` is `n × n` and the product symmetric entry for entry. Whole blocks of eight by
/// [`transpose8`], the last columns' (if n is not a multiple of 8) one by one.
#[target_feature(enable = "avx512f")]
fn mirror(out: &mut [f64], n: usize) {
    assert_eq!(out.len(), n * n);
    let full = n - n % 8;
    let p = out.as_mut_ptr();
    for j0 in (8..full).step_by(8) {
        for i0 in (0..j0).step_by(8) {
            // SAFETY: rows i0..i0 + 8 of columns j0..j0 + 8 from rows j0..j0 + 8 of columns
            // i0..i0 + 8, all below full ≤ n; the blocks are apart as i0 < j0.
            unsafe { transpose8(p.add(i0 * n + j0), n, p.add(j0 * n + i0), n) };
        }
    }
    for j in full..n {
        for i in 0..full {
            out[j * n + i] = out[i * n + j];
        }
    }
}

/// [`super::mul_with`] (`out = a·b`, `a` `m × k`, `b` `k × n`, column-major), when no entry of
/// `b` is 0 (so no term is skipped); returns false, having written nothing, when one is. With
/// `lower` (`b` is `a`, square and exactly symmetric) only the blocks on and below the diagonal
/// are computed and the rest mirrored: with no term skipped, entries `(i, j)` and `(j, i)` are
/// then the same products in the same order.
#[target_feature(enable = "avx512f")]
pub(super) fn mul<A: Ops>(
    out: &mut [f64],
    a: &[f64],
    b: &[f64],
    (m, k, n): (usize, usize, usize),
    lower: bool,
) -> bool {
    assert!(a.len() == m * k && b.len() == k * n && out.len() == m * n);
    assert!(!lower || (m == k && k == n));
    // Without an early exit, so that the test vectorises.
    if b.iter().fold(false, |zero, &x| zero | (x == 0.0)) {
        return false;
    }
    let o = Operands {
        out: out.as_mut_ptr(),
        ldo: m,
        a: a.as_ptr(),
        lda: m,
        row0: 0,
        b: b.as_ptr(),
        ldb: k,
        len: k,
        start: Start::Zero,
    };
    // SAFETY: entry (i, j) is out[j·m + i] and its terms a[l·m + i], b[j·k + l] for i < m,
    // j < n, l < k: in bounds by the lengths asserted above.
    unsafe { sweep::<A>(&o, 0..m, n, lower) };
    if lower {
        mirror(out, n);
    }
    true
}

/// [`super::tr_mul_with`] (`out = aᵀ·b`, `a` `k × m`, `b` `k × n`, column-major). With
/// `symmetric` (`b` is `a`) only the blocks on and below the diagonal are computed and the rest
/// mirrored. Up to 64 rows of the output at a time: their columns of `a` are copied into a
/// transposed panel, at most [`TR_PANEL`] numbers, so that a vector holds eight rows' terms for
/// one `l`; longer sums go panel by panel, parking the partial sums in `out` (exact).
#[target_feature(enable = "avx512f")]
pub(super) fn tr_mul<A: Ops>(
    out: &mut [f64],
    a: &[f64],
    b: &[f64],
    (k, m, n): (usize, usize, usize),
    symmetric: bool,
) {
    assert!(a.len() == k * m && b.len() == k * n && out.len() == m * n);
    assert!(!symmetric || m == n);
    if k == 0 {
        // Empty sums (the passes below would leave them unwritten).
        out.fill(-0.0);
        return;
    }
    if n == 0 {
        return;
    }
    // Not zeroed: the tiles read only the lanes written below (a 32 KB memset per call showed).
    let mut panel = [MaybeUninit::<f64>::uninit(); TR_PANEL];
    for i0 in (0..m).step_by(TR_ROWS) {
        let i1 = m.min(i0 + TR_ROWS);
        let lda = (i1 - i0).next_multiple_of(8);
        let cols = if symmetric { n.min(i1) } else { n };
        for l0 in (0..k).step_by(TR_PANEL / lda) {
            let len = (TR_PANEL / lda).min(k - l0);
            // panel[l·lda + r] = a[(i0 + r)·k + l0 + l]: blocks of eight by eight in
            // registers, the edges one by one.
            let (rows, terms) = (i1 - i0, len - len % 8);
            for r0 in (0..rows - rows % 8).step_by(8) {
                for l in (0..terms).step_by(8) {
                    // SAFETY: reads a[(i0 + r)·k + l0 + l + c] for r < r0 + 8 ≤ i1 − i0 and
                    // c < 8 (l + 8 ≤ len ≤ k − l0), below m·k; writes panel[(l + c)·lda + r]
                    // for l + c < len and r < r0 + 8 ≤ lda, below len·lda ≤ TR_PANEL.
                    unsafe {
                        transpose8(
                            a.as_ptr().add((i0 + r0) * k + l0 + l),
                            k,
                            panel.as_mut_ptr().add(l * lda + r0).cast(),
                            lda,
                        )
                    };
                }
            }
            for r in 0..rows {
                let col = &a[(i0 + r) * k + l0..(i0 + r) * k + l0 + len];
                let edge = if r < rows - rows % 8 { terms } else { 0 };
                for (l, &x) in col.iter().enumerate().skip(edge) {
                    panel[l * lda + r] = MaybeUninit::new(x);
                }
            }
            let o = Operands {
                out: out.as_mut_ptr(),
                ldo: m,
                a: panel.as_ptr().cast(),
                lda,
                row0: i0,
                b: b[l0..].as_ptr(),
                ldb: k,
                len,
                start: if l0 == 0 { Start::NegZero } else { Start::Out },
            };
            // SAFETY: entry (i, j) is out[j·m + i] for i0 ≤ i < i1 ≤ m, j < cols ≤ n; its
            // terms are panel[l·lda + i − i0] with l < len and i < i1, written just above
            // (len·lda ≤ TR_PANEL, and the unwritten lanes i1 − i0 .. lda are masked off), and
            // b[l0 + j·k + l] with l0 + l < k.
            unsafe { sweep::<A>(&o, i0..i1, cols, symmetric) };
        }
    }
    if symmetric {
        mirror(out, n);
    }
}
