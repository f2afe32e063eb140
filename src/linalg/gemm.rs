//! A general matrix product `C ← A·B + β·C` on column-major slices, with register blocking and
//! no allocation per product: the attention model's products (`crate::attention::model`).
//!
//! Every entry is one sequential sum: `c_ij = s_k` with `s_0 = β·c_ij` (or `+0` when β = 0, and
//! then `C`'s old contents are never read, so a NaN there does not leak in) and
//! `s_{l+1} = madd(a_il, b_lj, s_l)` for `l = 0, 1, …, k−1` in the arithmetic in force
//! ([`crate::arith`]). Blocking only decides which entries advance together and when a partial
//! sum is parked in `C` (exactly) between blocks of `l`; it never changes an entry's operations,
//! so the result is bit-identical to the plain triple loop in the same arithmetic, whatever the
//! shapes (tests below, both arithmetics).
//!
//! The kernel keeps an 8 × 6 tile of `C` in registers (twelve vectors of four) while it runs
//! down a block of 256 values of `l`, reading eight values of `A` and six of `B` per step from
//! copies packed for it in [`GemmScratch`] (each block of both operands is copied once, in any
//! orientation, zero-padded to whole tiles). Tiles cut by the matrix edges run in a full tile
//! of their own and keep their part.

use rayon::prelude::*;

use crate::arith::Ops;

/// An operand of [`gemm`]: a column-major matrix (stored entry (r, c) at `r + c·ld`), used as
/// it is or transposed.
#[derive(Clone, Copy, Debug)]
pub struct Operand<'a> {
    /// The stored entries, column-major.
    pub data: &'a [f64],
    /// Rows as stored.
    pub rows: usize,
    /// Columns as stored.
    pub cols: usize,
    /// Distance between stored columns (at least `rows`).
    pub ld: usize,
    /// Use the transpose of the stored matrix.
    pub transposed: bool,
}

impl<'a> Operand<'a> {
    /// `data` as a `rows × cols` column-major matrix stored contiguously. Panics if the length
    /// differs.
    pub fn new(data: &'a [f64], rows: usize, cols: usize) -> Self {
        assert_eq!(data.len(), rows * cols, "operand length");
        Self {
            data,
            rows,
            cols,
            ld: rows,
            transposed: false,
        }
    }

    /// Columns `j0..j1` of the operand as used (a view, no copy). Panics if out of range.
    pub fn columns(self, j0: usize, j1: usize) -> Self {
        assert!(j0 <= j1 && j1 <= self.shape().1, "column range");
        if self.transposed {
            // Columns of the transpose are stored rows: start at row j0, keep the stride.
            let end = if j1 == j0 {
                j0
            } else {
                (self.cols - 1) * self.ld + j1
            };
            Self {
                data: &self.data[j0.min(end)..end],
                rows: j1 - j0,
                ..self
            }
        } else {
            let end = if j1 == j0 {
                j0 * self.ld
            } else {
                (j1 - 1) * self.ld + self.rows
            };
            Self {
                data: &self.data[j0 * self.ld..end],
                cols: j1 - j0,
                ..self
            }
        }
    }

    /// Rows `i0..i1` of the operand as used (a view, no copy). Panics if out of range.
    pub fn rows(self, i0: usize, i1: usize) -> Self {
        self.t().columns(i0, i1).t()
    }

    /// The transpose (no copy).
    pub fn t(self) -> Self {
        Self {
            transposed: !self.transposed,
            ..self
        }
    }

    /// Rows and columns of the operand as used.
    pub fn shape(&self) -> (usize, usize) {
        if self.transposed {
            (self.cols, self.rows)
        } else {
            (self.rows, self.cols)
        }
    }

    /// Offsets of entry (i, l) as used: `i·rs + l·cs`.
    fn strides(&self) -> (usize, usize) {
        if self.transposed {
            (self.ld, 1)
        } else {
            (1, self.ld)
        }
    }
}

/// Space for the packed copies of the operands' blocks (a block of `A`, one panel of `B`), one
/// set per thread a product is split over; sized on first use and then reused, so a model's
/// steps allocate nothing after its first.
#[derive(Clone, Debug, Default)]
pub struct GemmScratch {
    parts: Vec<Pack>,
}

/// One thread's packing space, and its rows of `C` when a product is split by rows.
#[derive(Clone, Debug)]
struct Pack {
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
}

impl Pack {
    fn new() -> Self {
        Self {
            a: vec![0.0; MC * KC],
            b: vec![0.0; NR_MAX * KC],
            c: Vec::new(),
        }
    }
}

impl GemmScratch {
    /// Scratch for products of any size, split over up to `threads` threads.
    pub fn new(threads: usize) -> Self {
        Self {
            parts: (0..threads.max(1)).map(|_| Pack::new()).collect(),
        }
    }
}

/// Rows of the register tile.
const MR: usize = 8;
/// Columns of the register tile: six with fused multiply-adds (twelve accumulators), four
/// without, where each product needs a register of its own until it is added.
const NR_FUSED: usize = 6;
const NR_PLAIN: usize = 4;
const NR_MAX: usize = 6;
/// Values of `l` per block: a packed panel of `B` (12 kB) stays in L1 while the panels of `A`
/// come from L2.
const KC: usize = 256;
/// Rows of `A` per packed block (256 × 256 values, 512 kB: measured faster than 128 rows for
/// every product of the attention model, whose 256-row operands then pack once per block).
const MC: usize = 256;
/// Multiply-adds per thread at least (about 10 µs): a smaller share costs more to hand over
/// than it saves.
const PART_MIN: usize = 1 << 17;

/// `c ← a·b + beta·c`, `c` an `m × n` column-major slice (`m` = rows of `a`, `n` = columns of
/// `b`), each entry summed as the module documentation says, in the arithmetic in force. A
/// large product is split over the threads of the current rayon pool in whole register tiles,
/// along the longer side of `c` (so each thread packs its share of the operand along that side
/// and the whole of the other, the smaller); every entry is still computed whole by one thread,
/// so the result does not depend on the thread count. Panics if the inner dimensions or `c`'s
/// length do not match.
pub fn gemm(c: &mut [f64], a: Operand<'_>, b: Operand<'_>, beta: f64, scratch: &mut GemmScratch) {
    let (m, k) = a.shape();
    let (kb, n) = b.shape();
    assert_eq!(k, kb, "inner dimensions");
    assert_eq!(c.len(), m * n, "output length");
    let by_rows = m >= n;
    // Whole tiles only, so no thread runs a tile cut short where the single thread would not.
    let width = if by_rows {
        MR
    } else if crate::arith::fused() {
        NR_FUSED
    } else {
        NR_PLAIN
    };
    let tiles = if by_rows { m } else { n }.div_ceil(width);
    let parts = rayon::current_num_threads()
        .min(m * n * k / PART_MIN)
        .min(tiles)
        .max(1);
    if scratch.parts.len() < parts {
        scratch.parts.resize_with(parts, Pack::new);
    }
    let packs = &mut scratch.parts[..parts];
    if parts == 1 {
        serial(c, a, b, beta, &mut packs[0]);
    } else if by_rows {
        split_rows(c, a, b, beta, tiles, packs);
    } else {
        split_columns(c, m, a, b, beta, (0, tiles), width, packs);
    }
}

/// The columns of tiles `t0..t1` (`width` columns each, the last cut at `b`'s edge) of the
/// product into `c` (those columns only), over `parts.len()` threads.
#[allow(clippy::too_many_arguments)]
fn split_columns(
    c: &mut [f64],
    m: usize,
    a: Operand<'_>,
    b: Operand<'_>,
    beta: f64,
    (t0, t1): (usize, usize),
    width: usize,
    parts: &mut [Pack],
) {
    let n = b.shape().1;
    let (j0, j1) = (t0 * width, (t1 * width).min(n));
    if let [pack] = parts {
        serial(c, a, b.columns(j0, j1), beta, pack);
        return;
    }
    let half = parts.len() / 2;
    let mid = t0 + (t1 - t0) * half / parts.len();
    let (lo, hi) = c.split_at_mut((mid * width - j0) * m);
    let (first, second) = parts.split_at_mut(half);
    rayon::join(
        || split_columns(lo, m, a, b, beta, (t0, mid), width, first),
        || split_columns(hi, m, a, b, beta, (mid, t1), width, second),
    );
}

/// Rows `MR·t0 .. MR·t1` (cut at `a`'s edge) of part `p` of `parts`, the row panels dealt out
/// evenly in order.
fn part_rows(p: usize, parts: usize, panels: usize, m: usize) -> (usize, usize) {
    let t = |p: usize| (panels * p / parts * MR).min(m);
    (t(p), t(p + 1))
}

/// The product with the `tiles` row panels of `c` dealt over `parts.len()` threads: each
/// computes its rows into its own contiguous block (from `c`'s rows when β ≠ 0), then the
/// blocks are copied into `c`.
fn split_rows(
    c: &mut [f64],
    a: Operand<'_>,
    b: Operand<'_>,
    beta: f64,
    tiles: usize,
    parts: &mut [Pack],
) {
    let (m, n) = (a.shape().0, b.shape().1);
    let count = parts.len();
    let old: &[f64] = c;
    parts.par_iter_mut().enumerate().for_each(|(p, pack)| {
        let (i0, i1) = part_rows(p, count, tiles, m);
        let rows = i1 - i0;
        let mut block = std::mem::take(&mut pack.c);
        if block.len() < rows * n {
            block.resize(rows * n, 0.0);
        }
        let block_c = &mut block[..rows * n];
        if beta != 0.0 {
            for (dst, src) in block_c.chunks_exact_mut(rows).zip(old.chunks_exact(m)) {
                dst.copy_from_slice(&src[i0..i1]);
            }
        }
        serial(block_c, a.rows(i0, i1), b, beta, pack);
        pack.c = block;
    });
    for (p, pack) in parts.iter().enumerate() {
        let (i0, i1) = part_rows(p, count, tiles, m);
        let rows = i1 - i0;
        for (dst, src) in c
            .chunks_exact_mut(m)
            .zip(pack.c[..rows * n].chunks_exact(rows))
        {
            dst[i0..i1].copy_from_slice(src);
        }
    }
}

crate::linalg::dispatch! {
    /// One thread's [`gemm`].
    fn serial(c: &mut [f64], a: Operand<'_>, b: Operand<'_>, beta: f64, pack: &mut Pack)
        => gemm_with
}

/// One thread's [`gemm`] in the arithmetic `A`.
#[inline(always)]
fn gemm_with<A: Ops>(c: &mut [f64], a: Operand<'_>, b: Operand<'_>, beta: f64, pack: &mut Pack) {
    if A::FUSED {
        blocked::<A, NR_FUSED>(c, a, b, beta, pack);
    } else {
        blocked::<A, NR_PLAIN>(c, a, b, beta, pack);
    }
}

/// [`gemm`] with `NR`-column tiles.
#[inline(always)]
fn blocked<A: Ops, const NR: usize>(
    c: &mut [f64],
    a: Operand<'_>,
    b: Operand<'_>,
    beta: f64,
    scratch: &mut Pack,
) {
    let (m, k) = a.shape();
    let (kb, n) = b.shape();
    assert_eq!(k, kb, "inner dimensions");
    assert_eq!(c.len(), m * n, "output length");
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        for x in c.iter_mut() {
            *x = if beta == 0.0 { 0.0 } else { beta * *x };
        }
        return;
    }
    for pc in (0..k).step_by(KC) {
        let kc = KC.min(k - pc);
        let start = if pc > 0 {
            Start::Partial
        } else if beta == 0.0 {
            Start::Zero
        } else {
            Start::Scaled(beta)
        };
        for ic in (0..m).step_by(MC) {
            let m_panels = MC.min(m - ic).div_ceil(MR);
            let pa = &mut scratch.a[..m_panels * MR * kc];
            for (p, panel) in pa.chunks_exact_mut(MR * kc).enumerate() {
                pack::<MR>(panel, a, ic + p * MR, pc, false);
            }
            let pa = &scratch.a[..m_panels * MR * kc];
            let b_panel = &mut scratch.b[..NR * kc];
            let (rsb, csb) = b.strides();
            for j0 in (0..n).step_by(NR) {
                let cols = NR.min(n - j0);
                let panel = if rsb == 1 {
                    // B's columns are contiguous in l: the tile reads them in place (a column
                    // past the edge repeats the last one; its results are dropped).
                    Panel::Columns(std::array::from_fn(|j| {
                        let col = (j0 + j.min(cols - 1)) * csb + pc;
                        &b.data[col..col + kc]
                    }))
                } else {
                    // Packed just before use, the panel is in L1 for every tile of its column.
                    pack::<NR>(b_panel, b, j0, pc, true);
                    Panel::Packed(b_panel)
                };
                for (p, a_panel) in pa.chunks_exact(MR * kc).enumerate() {
                    let (i0, rows) = (ic + p * MR, MR.min(m - ic - p * MR));
                    if rows == MR && cols == NR {
                        tile::<A, NR>(&mut c[j0 * m + i0..], m, a_panel, &panel, start);
                    } else {
                        // A tile cut by the edge runs in a full tile of its own, keeping its part.
                        let mut t = [[0.0; MR]; NR];
                        for (j, tj) in t.iter_mut().enumerate().take(cols) {
                            let src = &c[(j0 + j) * m + i0..(j0 + j) * m + i0 + rows];
                            tj[..rows].copy_from_slice(src);
                        }
                        tile::<A, NR>(t.as_flattened_mut(), MR, a_panel, &panel, start);
                        for (j, tj) in t.iter().enumerate().take(cols) {
                            let dst = &mut c[(j0 + j) * m + i0..(j0 + j) * m + i0 + rows];
                            dst.copy_from_slice(&tj[..rows]);
                        }
                    }
                }
            }
        }
    }
}

/// Copies the block `l ∈ pc..pc+kc` of `W` consecutive rows of `x` from `first` (or, with
/// `by_column`, of `W` consecutive columns) into `panel`, `W` values per `l`, zeros past the
/// matrix's edge.
#[inline(always)]
fn pack<const W: usize>(
    panel: &mut [f64],
    x: Operand<'_>,
    first: usize,
    pc: usize,
    by_column: bool,
) {
    let (rs, cs) = x.strides();
    let (rows, cols) = x.shape();
    let (along, across) = if by_column { (rs, cs) } else { (cs, rs) };
    let count = if by_column { cols } else { rows };
    let valid = W.min(count - first);
    let kc = panel.len() / W;
    if across == 1 {
        // The W values of one l are contiguous: a copy per l.
        for (l, out) in panel.chunks_exact_mut(W).enumerate() {
            let base = (pc + l) * along + first;
            if valid == W {
                // A fixed-size copy: a few vector moves, not a call to memmove per l.
                let out: &mut [f64; W] = out.try_into().expect("panel width");
                *out = x.data[base..base + W].try_into().expect("panel width");
            } else {
                out[..valid].copy_from_slice(&x.data[base..base + valid]);
                out[valid..].fill(0.0);
            }
        }
    } else {
        // Each of the W lines is contiguous in l (along = 1): read them side by side.
        debug_assert_eq!(along, 1);
        let lines: [&[f64]; W] = std::array::from_fn(|r| {
            let start = (first + r.min(valid.saturating_sub(1))) * across + pc;
            &x.data[start..start + kc]
        });
        for (l, out) in panel.chunks_exact_mut(W).enumerate() {
            for (o, line) in out.iter_mut().zip(&lines) {
                *o = line[l];
            }
            out[valid..].fill(0.0);
        }
    }
}

/// The `NR` columns of `B` a tile reads, for `l` in its block.
enum Panel<'a, const NR: usize> {
    /// Packed: `NR` values per `l`.
    Packed(&'a [f64]),
    /// In place: each column's values for the block.
    Columns([&'a [f64]; NR]),
}

/// Where an entry's sum starts in a block of `l`.
#[derive(Clone, Copy)]
enum Start {
    /// `+0` (first block, β = 0): `C` is not read.
    Zero,
    /// `β·c` (first block).
    Scaled(f64),
    /// The partial sum parked in `C` by the previous block.
    Partial,
}

impl Start {
    #[inline(always)]
    fn value(self, c: f64) -> f64 {
        match self {
            Start::Zero => 0.0,
            Start::Scaled(beta) => beta * c,
            Start::Partial => c,
        }
    }
}

/// One 8 × `NR` tile of `c` (its column j at `j·ldc`) over one block: the packed panels hold
/// eight values of `A` and `NR` of `B` per `l`.
#[inline(always)]
fn tile<A: Ops, const NR: usize>(
    c: &mut [f64],
    ldc: usize,
    a_panel: &[f64],
    b: &Panel<'_, NR>,
    start: Start,
) {
    let mut acc = [[0.0f64; MR]; NR];
    for (j, acc_j) in acc.iter_mut().enumerate() {
        for (o, &x) in acc_j.iter_mut().zip(&c[j * ldc..j * ldc + MR]) {
            *o = start.value(x);
        }
    }
    match b {
        Panel::Packed(b_panel) => {
            for (ar, br) in a_panel.chunks_exact(MR).zip(b_panel.chunks_exact(NR)) {
                for (acc_j, &blj) in acc.iter_mut().zip(br) {
                    for (o, &x) in acc_j.iter_mut().zip(ar) {
                        *o = A::madd(x, blj, *o);
                    }
                }
            }
        }
        Panel::Columns(cols) => {
            let kc = a_panel.len() / MR;
            assert!(cols.iter().all(|col| col.len() == kc), "panel length");
            for (l, ar) in a_panel.chunks_exact(MR).enumerate() {
                for (acc_j, col) in acc.iter_mut().zip(cols) {
                    let blj = col[l];
                    for (o, &x) in acc_j.iter_mut().zip(ar) {
                        *o = A::madd(x, blj, *o);
                    }
                }
            }
        }
    }
    for (j, acc_j) in acc.iter().enumerate() {
        c[j * ldc..j * ldc + MR].copy_from_slice(acc_j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{Fused, Plain};

    /// The plain triple loop of the module documentation.
    fn reference<A: Ops>(c: &mut [f64], a: Operand<'_>, b: Operand<'_>, beta: f64) {
        let ((m, k), n) = (a.shape(), b.shape().1);
        let (rsa, csa) = a.strides();
        let (rsb, csb) = b.strides();
        for j in 0..n {
            for i in 0..m {
                let mut s = if beta == 0.0 {
                    0.0
                } else {
                    beta * c[j * m + i]
                };
                for l in 0..k {
                    s = A::madd(a.data[i * rsa + l * csa], b.data[l * rsb + j * csb], s);
                }
                c[j * m + i] = s;
            }
        }
    }

    /// A `rows × cols` operand over `data`, stored as it is or as the transpose of a
    /// `cols × rows` matrix.
    fn operand(data: &[f64], rows: usize, cols: usize, transposed: bool) -> Operand<'_> {
        if transposed {
            Operand::new(data, cols, rows).t()
        } else {
            Operand::new(data, rows, cols)
        }
    }

    fn values(len: usize, seed: f64) -> Vec<f64> {
        (0..len)
            .map(|i| ((i as f64 * 0.37 + seed).sin()) * 10f64.powi((i % 7) as i32 - 3))
            .collect()
    }

    fn check<A: Ops>() {
        let mut pack = Pack::new();
        // Shapes below, at and above the tile and block sizes, with remainders in every direction.
        for (m, k, n) in [
            (1, 1, 1),
            (8, 4, 6),
            (9, 3, 7),
            (16, 600, 12),
            (47, 64, 13),
            (64, 257, 64),
            (300, 20, 9),
            (3, 5, 2),
        ] {
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                for beta in [0.0, 1.0, -0.5] {
                    let ad = values(m * k, 0.1);
                    let bd = values(k * n, 0.7);
                    let (a, b) = (operand(&ad, m, k, ta), operand(&bd, k, n, tb));
                    let mut got = values(m * n, 2.3);
                    if beta == 0.0 {
                        got[0] = f64::NAN;
                    }
                    let mut want = got.clone();
                    gemm_with::<A>(&mut got, a, b, beta, &mut pack);
                    reference::<A>(&mut want, a, b, beta);
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got), bits(&want), "{m}×{k}×{n} {ta} {tb} β {beta}");
                }
            }
        }
    }

    #[test]
    fn the_blocked_product_is_the_plain_loop_bit_for_bit_in_both_arithmetics() {
        check::<Plain>();
        check::<Fused>();
    }

    #[test]
    fn the_dispatched_product_matches_a_naive_one() {
        let (m, k, n) = (13, 300, 11);
        let (ad, bd) = (values(m * k, 0.2), values(k * n, 0.9));
        let mut c = vec![0.0; m * n];
        gemm(
            &mut c,
            Operand::new(&ad, m, k),
            Operand::new(&bd, k, n),
            0.0,
            &mut GemmScratch::new(1),
        );
        for j in 0..n {
            for i in 0..m {
                let want: f64 = (0..k).map(|l| ad[l * m + i] * bd[j * k + l]).sum();
                assert!((c[j * m + i] - want).abs() <= 1e-12 * want.abs().max(1.0));
            }
        }
    }

    #[test]
    fn a_product_split_over_threads_is_the_one_thread_product_bit_for_bit() {
        // Wide (split by columns) and tall (split by rows), each large enough to split; both
        // operands both ways, so row and column views of a transpose are exercised.
        for (m, k, n) in [(40, 300, 203), (203, 300, 40)] {
            let (ad, bd) = (values(m * k, 0.4), values(k * n, 1.7));
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                let (a, b) = (operand(&ad, m, k, ta), operand(&bd, k, n, tb));
                for beta in [0.0, 0.5] {
                    let run = |threads: usize| {
                        let pool = rayon::ThreadPoolBuilder::new()
                            .num_threads(threads)
                            .build()
                            .unwrap();
                        let mut c = values(m * n, 3.1);
                        let mut scratch = GemmScratch::new(1);
                        pool.install(|| gemm(&mut c, a, b, beta, &mut scratch));
                        (c, scratch.parts.len())
                    };
                    let (one, used) = run(1);
                    assert_eq!(used, 1);
                    for threads in [2, 3, 8] {
                        let (many, used) = run(threads);
                        assert_eq!(used, threads, "parts used");
                        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                        assert_eq!(
                            bits(&one),
                            bits(&many),
                            "{m}×{k}×{n}, {threads} threads, transposed {ta} {tb}, β {beta}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_row_view_holds_those_rows() {
        let data: Vec<f64> = (0..12).map(f64::from).collect();
        // Stored 3 × 4: entry (r, c) = r + 3c; rows 1..3 keep the stride of 3.
        let v = Operand::new(&data, 3, 4).rows(1, 3);
        assert_eq!((v.shape(), v.strides()), ((2, 4), (1, 3)));
        assert_eq!((v.data[0], v.data[1 + 3 * 3]), (1.0, 11.0));
        // As used transposed, 4 × 3: rows 1..3 are stored columns 1 and 2.
        let t = Operand::new(&data, 3, 4).t().rows(1, 3);
        assert_eq!((t.shape(), t.strides()), ((2, 3), (3, 1)));
        assert_eq!((t.data[0], t.data[3 + 2]), (3.0, 8.0));
    }

    #[test]
    fn a_column_view_holds_those_columns() {
        let data: Vec<f64> = (0..12).map(f64::from).collect();
        // Stored 3 × 4: entry (r, c) = r + 3c.
        let x = Operand::new(&data, 3, 4);
        let v = x.columns(1, 3);
        assert_eq!((v.shape(), v.strides()), ((3, 2), (1, 3)));
        assert_eq!(v.data[0], 3.0);
        assert_eq!(v.data[2 + 3], 8.0);
        // As used transposed, 4 × 3: columns 1..3 are stored rows 1 and 2.
        let t = x.t().columns(1, 3);
        assert_eq!((t.shape(), t.strides()), ((4, 2), (3, 1)));
        assert_eq!(t.data[0], 1.0);
        assert_eq!(t.data[3 * 3 + 1], 11.0);
    }
}
