//! The convex reference's solver (numerics §9): optimality certified by a dual certificate,
//! feasibility, the stopping rule and determinism.

use std::sync::atomic::AtomicBool;

use basis_lab::sensing::nuclear::{
    MAX_ITERATIONS, NuclearSolve, TOLERANCE, min_nuclear_norm, misfit, nuclear_norm, recovery_of,
};
use basis_lab::sensing::{SensingConfig, SensingProblem};
use nalgebra::DMatrix;

fn problem(n: usize, rank: usize, ratio: f64, seed: u64) -> SensingProblem {
    let cfg = SensingConfig {
        n,
        rank,
        ratio,
        ..SensingConfig::default()
    };
    SensingProblem::new(&cfg, seed)
}

fn solve(p: &SensingProblem) -> NuclearSolve {
    min_nuclear_norm(p, MAX_ITERATIONS, TOLERANCE, &AtomicBool::new(false)).unwrap()
}

/// The measurement operator as an explicit m × n² matrix, one row per vec(A_i).
fn operator(p: &SensingProblem) -> DMatrix<f64> {
    let nn = p.cfg.n * p.cfg.n;
    DMatrix::from_fn(p.m(), nn, |i, j| p.measurement(i).as_slice()[j])
}

/// Checks the optimality conditions of `min ‖X‖* s.t. A(X) = y` at `s.x` with the certificate
/// `Y = s.certificate`, each to `tol`: Y = Aᵀλ for the least-squares λ (solved here by an SVD of
/// Aᵀ, independently of the solver's Cholesky), and with U, V the singular vectors of X's nonzero
/// singular values, UᵀYV = I, (I − UUᵀ)YV = 0, UᵀY(I − VVᵀ) = 0, ‖(I − UUᵀ)Y(I − VVᵀ)‖₂ ≤ 1.
/// Returns the spectral norm of that last block.
fn certify(p: &SensingProblem, s: &NuclearSolve, tol: f64) -> f64 {
    let n = p.cfg.n;
    let a = operator(p);
    let y = DMatrix::from_column_slice(n * n, 1, s.certificate.as_slice());
    let lambda = a.transpose().svd(true, true).solve(&y, 1e-12).unwrap();
    let back = a.transpose() * &lambda;
    assert!(
        (&back - &y).norm() <= tol * y.norm(),
        "Y is not in the range of Aᵀ"
    );
    let svd = s.x.clone().svd(true, true);
    let sigma = &svd.singular_values;
    let k = sigma.iter().filter(|&&x| x > 1e-8 * sigma[0]).count();
    let u = svd.u.unwrap().columns(0, k).into_owned();
    let v = svd.v_t.unwrap().transpose().columns(0, k).into_owned();
    let big = &s.certificate;
    let eye_n = DMatrix::<f64>::identity(n, n);
    let (pu, pv) = (&eye_n - &u * u.transpose(), &eye_n - &v * v.transpose());
    let core = u.transpose() * big * &v - DMatrix::<f64>::identity(k, k);
    assert!(core.norm() <= tol, "UᵀYV − I = {:e}", core.norm());
    let left = &pu * big * &v;
    assert!(left.norm() <= tol, "(I − UUᵀ)YV = {:e}", left.norm());
    let right = u.transpose() * big * &pv;
    assert!(right.norm() <= tol, "UᵀY(I − VVᵀ) = {:e}", right.norm());
    let w = &pu * big * &pv;
    let spectral = w.singular_values()[0];
    assert!(spectral <= 1.0 + tol, "‖W‖₂ = {spectral}");
    spectral
}

#[test]
fn an_exact_recovery_carries_a_dual_certificate() {
    // Three measurements per degree of freedom: the reference recovers X* exactly.
    let p = problem(12, 2, 3.0, 7);
    let s = solve(&p);
    assert!(s.converged && !s.cancelled, "{} iterations", s.iterations);
    assert!(s.primal < TOLERANCE && s.dual < TOLERANCE);
    assert!(misfit(&p, &s.x) / p.y.iter().map(|y| y * y).sum::<f64>().sqrt() < 1e-13);
    assert!(recovery_of(&p, &s.x) < 1e-9, "{}", recovery_of(&p, &s.x));
    let spectral = certify(&p, &s, 1e-8);
    // Strictly inside the unit ball off the support: the certificate makes X* the unique
    // minimiser.
    assert!(spectral < 1.0 - 1e-3, "{spectral}");
}

#[test]
fn a_failed_recovery_is_still_the_certified_minimum() {
    // At ratio 1.2 the measurements admit a matrix of smaller nuclear norm than X*: the
    // certificate shows the solver found it, not X*.
    let p = problem(12, 2, 1.2, 3);
    let s = solve(&p);
    assert!(s.converged, "{} iterations", s.iterations);
    assert!(recovery_of(&p, &s.x) > 1e-3, "{}", recovery_of(&p, &s.x));
    assert!(nuclear_norm(&s.x) < nuclear_norm(&p.target));
    certify(&p, &s, 1e-8);
}

#[test]
fn the_solve_is_deterministic_and_stops_at_its_cap_or_a_cancel() {
    let p = problem(10, 2, 2.0, 1);
    let (a, b) = (solve(&p), solve(&p));
    assert_eq!(a.iterations, b.iterations);
    assert!(
        a.x.iter()
            .zip(b.x.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits())
    );
    assert!(
        a.certificate
            .iter()
            .zip(b.certificate.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits())
    );
    let never = AtomicBool::new(false);
    let capped = min_nuclear_norm(&p, 3, TOLERANCE, &never).unwrap();
    assert_eq!(capped.iterations, 3);
    assert!(!capped.converged && !capped.cancelled);
    // The reported matrix is projected onto the measurements even when the cap stops it.
    assert!(misfit(&p, &capped.x) < 1e-10);
    let cancelled = min_nuclear_norm(&p, MAX_ITERATIONS, TOLERANCE, &AtomicBool::new(true));
    let cancelled = cancelled.unwrap();
    assert!(cancelled.cancelled && !cancelled.converged);
    assert_eq!(cancelled.iterations, 0);
}

#[test]
fn more_measurements_than_entries_have_no_exact_projection() {
    // m = 2·dof = 16 > n² = 9: A Aᵀ is singular.
    let p = problem(3, 2, 2.0, 0);
    assert!(p.m() > 9);
    assert!(min_nuclear_norm(&p, 10, TOLERANCE, &AtomicBool::new(false)).is_none());
}

#[test]
fn the_paper_size_instance_it_misses_is_certified_too() {
    // The zoo's first instance (n 40, rank 3, m = 2·dof, seed 0): the reference converges short
    // of X*, and its certificate shows that matrix is the minimum all the same.
    let p = SensingProblem::new(&SensingConfig::default(), 0);
    let s = solve(&p);
    assert!(s.converged, "{} iterations", s.iterations);
    assert!(recovery_of(&p, &s.x) > 1e-3);
    certify(&p, &s, 1e-8);
}
