//! The attention model's matrix products, through the `matrixmultiply` crate's f64 kernel.
//!
//! Why this crate: its packed micro-kernels use AVX2 with FMA where the CPU has them and run at
//! roughly 30 GFLOP/s per core on this model's shapes (three to four times the hand-written,
//! FMA-free loops of [`crate::linalg`]); it is single-threaded without its `threading` feature
//! (not enabled here), so each product sums in one fixed order and the results do not depend on
//! how many threads run other models; and it is already a dependency of nalgebra. Its one cost:
//! it allocates a packing buffer inside every product, which the model's own code does not (see
//! [`crate::attention::model`]).

/// An operand of [`gemm`]: a column-major matrix stored contiguously (leading dimension = its
/// stored row count), used as it is or transposed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Operand<'a> {
    /// The stored entries, column-major.
    pub data: &'a [f64],
    /// Rows as stored.
    pub rows: usize,
    /// Columns as stored.
    pub cols: usize,
    /// Use the transpose of the stored matrix.
    pub transposed: bool,
}

impl<'a> Operand<'a> {
    /// `data` as a `rows × cols` column-major matrix. Panics if the length differs.
    pub fn new(data: &'a [f64], rows: usize, cols: usize) -> Self {
        assert_eq!(data.len(), rows * cols, "operand length");
        Self {
            data,
            rows,
            cols,
            transposed: false,
        }
    }

    /// The transpose (no copy).
    pub fn t(self) -> Self {
        Self {
            transposed: !self.transposed,
            ..self
        }
    }

    /// Rows and columns of the operand as used.
    fn shape(&self) -> (usize, usize) {
        if self.transposed {
            (self.cols, self.rows)
        } else {
            (self.rows, self.cols)
        }
    }

    /// Row and column strides of the operand as used.
    fn strides(&self) -> (isize, isize) {
        if self.transposed {
            (self.rows as isize, 1)
        } else {
            (1, self.rows as isize)
        }
    }
}

/// `c ← a·b + beta·c` with `c` an `m × n` column-major slice (`m` = rows of `a`, `n` = columns of
/// `b`). With `beta = 0`, `c`'s old contents are not read (NaN there does not leak in).
/// Panics if the inner dimensions or `c`'s length do not match.
pub(crate) fn gemm(c: &mut [f64], a: Operand<'_>, b: Operand<'_>, beta: f64) {
    let (m, k) = a.shape();
    let (kb, n) = b.shape();
    assert_eq!(k, kb, "inner dimensions");
    assert_eq!(c.len(), m * n, "output length");
    let (rsa, csa) = a.strides();
    let (rsb, csb) = b.strides();
    // SAFETY: every index the kernel forms lies inside the slices: `a` has rows·cols entries
    // addressed with the strides of its stored shape, likewise `b`, and `c` has m·n entries
    // with row stride 1 and column stride m (all lengths asserted above). `c` is a unique
    // borrow, so it cannot alias `a` or `b`.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            1.0,
            a.data.as_ptr(),
            rsa,
            csa,
            b.data.as_ptr(),
            rsb,
            csb,
            beta,
            c.as_mut_ptr(),
            1,
            m as isize,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_matches_a_naive_product_for_every_transpose() {
        let (m, k, n) = (5, 3, 4);
        let a: Vec<f64> = (0..m * k).map(|i| (i as f64 * 0.37).sin()).collect();
        let b: Vec<f64> = (0..k * n).map(|i| (i as f64 * 0.71).cos()).collect();
        let at: Vec<f64> = (0..m * k).map(|i| a[(i % k) * m + i / k]).collect();
        let bt: Vec<f64> = (0..k * n).map(|i| b[(i % n) * k + i / n]).collect();
        let mut want = vec![0.0; m * n];
        for j in 0..n {
            for i in 0..m {
                want[j * m + i] = (0..k).map(|l| a[l * m + i] * b[j * k + l]).sum::<f64>() + 0.5;
            }
        }
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            let oa = if ta {
                Operand::new(&at, k, m).t()
            } else {
                Operand::new(&a, m, k)
            };
            let ob = if tb {
                Operand::new(&bt, n, k).t()
            } else {
                Operand::new(&b, k, n)
            };
            let mut c = vec![0.25; m * n];
            gemm(&mut c, oa, ob, 2.0);
            for (x, y) in c.iter().zip(&want) {
                assert!((x - y).abs() < 1e-14, "{ta} {tb}: {x} vs {y}");
            }
        }
    }
}
