//! Small dense products written out on column-major slices: allocation-free and in a fixed
//! summation order (nalgebra's general products may allocate packing buffers per call). Sizes
//! here are tens to a few hundred, where these loops vectorise well.

use nalgebra::DMatrix;

/// `out = a·b` for `a` (`m × k`), `b` (`k × n`), `out` (`m × n`). Panics on a shape mismatch.
pub fn mul_into(out: &mut DMatrix<f64>, a: &DMatrix<f64>, b: &DMatrix<f64>) {
    let (m, k) = a.shape();
    assert_eq!(b.nrows(), k, "inner dimensions");
    assert_eq!(out.shape(), (m, b.ncols()), "output shape");
    let (a, b) = (a.as_slice(), b.as_slice());
    for (j, col) in out.as_mut_slice().chunks_exact_mut(m).enumerate() {
        col.fill(0.0);
        for (l, &blj) in b[j * k..(j + 1) * k].iter().enumerate() {
            if blj != 0.0 {
                for (o, &x) in col.iter_mut().zip(&a[l * m..(l + 1) * m]) {
                    *o += x * blj;
                }
            }
        }
    }
}

/// `out = aᵀ·b` for `a` (`k × m`), `b` (`k × n`), `out` (`m × n`): dot products of columns.
/// Panics on a shape mismatch.
pub fn tr_mul_into(out: &mut DMatrix<f64>, a: &DMatrix<f64>, b: &DMatrix<f64>) {
    let (k, m) = a.shape();
    assert_eq!(b.nrows(), k, "inner dimensions");
    assert_eq!(out.shape(), (m, b.ncols()), "output shape");
    let (a, b) = (a.as_slice(), b.as_slice());
    for (j, col) in out.as_mut_slice().chunks_exact_mut(m).enumerate() {
        let bj = &b[j * k..(j + 1) * k];
        for (i, o) in col.iter_mut().enumerate() {
            *o = a[i * k..(i + 1) * k]
                .iter()
                .zip(bj)
                .map(|(x, y)| x * y)
                .sum();
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

    fn m(r: usize, c: usize, seed: f64) -> DMatrix<f64> {
        DMatrix::from_fn(r, c, |i, j| ((i * 7 + j * 3) as f64 + seed).sin())
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
