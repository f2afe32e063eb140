//! The two arithmetics of the numerics (numerics §8): **fast** (the default on the desktop and
//! the command line) and **portable** (always in the web build; on the desktop with
//! `--portable` or the cargo feature `portable`).
//!
//! Both do the same operations in the same order, so each gives bit-identical results from run
//! to run and whatever the thread count. They differ in two places only:
//!
//! - a multiply-add `a·b + c` in the hot loops is one fused operation (FMA, one rounding) in the
//!   fast arithmetic on a CPU that has it, and a product then a sum (two roundings) in the
//!   portable one;
//! - `exp` and `ln` there come from the platform's maths library (glibc on Linux) in the fast
//!   arithmetic and from the `libm` crate, the same code on every target, in the portable one.
//!
//! So the portable arithmetic gives the same bits on every CPU and in the browser, and the fast
//! one the same bits on one machine (and on machines with the same CPU features and maths
//! library). How far apart the two are is measured in docs/numerics.md §8.
//!
//! A hot loop is written once, generic over [`Ops`], and instantiated twice by
//! [`crate::linalg::dispatch`]: with [`Fused`] in a copy compiled for AVX2 and FMA, and with
//! [`Plain`] for AVX2 or the baseline; which copy runs is decided per call by [`fused`].

use std::sync::atomic::{AtomicBool, Ordering};

/// Which arithmetic the numerics use (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arithmetic {
    /// Fused multiply-adds where the CPU has them, the platform's `exp` and `ln`.
    Fast,
    /// No fused multiply-adds, `libm`'s `exp` and `ln`: the same bits on every CPU and target.
    Portable,
}

/// The arithmetic in force; starts portable in the web build and with the cargo feature.
static PORTABLE: AtomicBool =
    AtomicBool::new(cfg!(any(feature = "portable", target_arch = "wasm32")));

/// Selects the arithmetic for every computation started afterwards. Set it before starting work:
/// a computation running on another thread while it changes may use either. In the web build
/// the arithmetic stays portable whatever is asked.
pub fn set(arithmetic: Arithmetic) {
    let portable = arithmetic == Arithmetic::Portable || cfg!(target_arch = "wasm32");
    PORTABLE.store(portable, Ordering::Relaxed);
}

/// The arithmetic in force.
pub fn current() -> Arithmetic {
    if PORTABLE.load(Ordering::Relaxed) {
        Arithmetic::Portable
    } else {
        Arithmetic::Fast
    }
}

/// Whether the hot loops take their fused copy: the fast arithmetic on a CPU with AVX2 and FMA.
/// (Elsewhere the fast arithmetic computes as the portable one.)
#[inline]
pub fn fused() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !PORTABLE.load(Ordering::Relaxed)
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `eˣ` of the arithmetic in force, for code outside the dispatched loops (a branch per call).
#[inline]
pub fn exp(x: f64) -> f64 {
    if fused() {
        Fused::exp(x)
    } else {
        Plain::exp(x)
    }
}

/// The natural logarithm of the arithmetic in force, as [`exp`].
#[inline]
pub fn ln(x: f64) -> f64 {
    if fused() { Fused::ln(x) } else { Plain::ln(x) }
}

/// The operations a hot loop takes from its arithmetic. Implemented by [`Fused`] and [`Plain`]
/// only; a loop generic over it is compiled once per arithmetic.
pub trait Ops: Copy + 'static {
    /// Whether `madd` is fused (the copy runs on a CPU with FMA).
    const FUSED: bool;
    /// `a·b + c`: one rounding ([`Fused`]) or two ([`Plain`]).
    fn madd(a: f64, b: f64, c: f64) -> f64;
    /// `eˣ`.
    fn exp(x: f64) -> f64;
    /// The natural logarithm.
    fn ln(x: f64) -> f64;
}

/// The fast arithmetic's operations. `madd` is `f64::mul_add`, a single instruction only inside
/// code compiled with the `fma` target feature (as [`crate::linalg::dispatch`] does); elsewhere
/// it would call a slow software routine, so use it there only.
#[derive(Clone, Copy, Debug)]
pub struct Fused;

/// The portable arithmetic's operations.
#[derive(Clone, Copy, Debug)]
pub struct Plain;

impl Ops for Fused {
    const FUSED: bool = true;
    #[inline(always)]
    fn madd(a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    #[inline(always)]
    fn exp(x: f64) -> f64 {
        x.exp()
    }
    #[inline(always)]
    fn ln(x: f64) -> f64 {
        x.ln()
    }
}

impl Ops for Plain {
    const FUSED: bool = false;
    #[inline(always)]
    fn madd(a: f64, b: f64, c: f64) -> f64 {
        a * b + c
    }
    #[inline(always)]
    fn exp(x: f64) -> f64 {
        libm::exp(x)
    }
    #[inline(always)]
    fn ln(x: f64) -> f64 {
        libm::log(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fused_rounds_once_and_plain_twice() {
        // (1 + 2⁻³⁰)² − 1 = 2⁻²⁹ + 2⁻⁶⁰: the product rounded first loses the 2⁻⁶⁰.
        let a = 1.0 + 2f64.powi(-30);
        assert_eq!(Plain::madd(a, a, -1.0), 2f64.powi(-29));
        assert_eq!(Fused::madd(a, a, -1.0), 2f64.powi(-29) + 2f64.powi(-60));
    }
}
