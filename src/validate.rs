//! Validation shared by every reader of user input (presets, zoo presets, shards, the command
//! line, the app's fields): one error type that names the field by its path (`arms[1].lr`,
//! `problem.n`) and says what is allowed, and the range checks that produce it.

/// A value that failed validation: where it is and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("field `{field}`: {message}")]
pub struct FieldError {
    /// The field's path, e.g. `arms[1].lr` or `problem.n`.
    pub field: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl FieldError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }

    /// The same error seen from the enclosing struct: `field` becomes `parent.field`.
    pub fn within(self, parent: &str) -> Self {
        Self {
            field: format!("{parent}.{}", self.field),
            ..self
        }
    }
}

/// The values a real setting may take: `lo`..`hi`, each end open or closed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// Lower end.
    pub lo: f64,
    /// Upper end.
    pub hi: f64,
    /// Whether `lo` itself is allowed.
    pub lo_closed: bool,
    /// Whether `hi` itself is allowed.
    pub hi_closed: bool,
}

impl Range {
    /// `[lo, hi]`.
    pub const fn closed(lo: f64, hi: f64) -> Self {
        Self {
            lo,
            hi,
            lo_closed: true,
            hi_closed: true,
        }
    }

    /// `(lo, hi]`.
    pub const fn above(lo: f64, hi: f64) -> Self {
        Self {
            lo,
            hi,
            lo_closed: false,
            hi_closed: true,
        }
    }

    /// `[lo, hi)`.
    pub const fn below(lo: f64, hi: f64) -> Self {
        Self {
            lo,
            hi,
            lo_closed: true,
            hi_closed: false,
        }
    }

    /// Whether `x` is finite and inside.
    pub fn contains(self, x: f64) -> bool {
        x.is_finite()
            && (if self.lo_closed {
                x >= self.lo
            } else {
                x > self.lo
            })
            && (if self.hi_closed {
                x <= self.hi
            } else {
                x < self.hi
            })
    }
}

impl std::fmt::Display for Range {
    /// `[0, 1)` style; ends far from 1 in scientific notation (`[1e-300, 1e300]`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let open = if self.lo_closed { "[" } else { "(" };
        let close = if self.hi_closed { "]" } else { ")" };
        write!(f, "{open}{}, {}{close}", real(self.lo), real(self.hi))
    }
}

/// `x` as a reader types it: plain decimals in [1e-4, 1e15), scientific notation outside
/// (`1e-300` rather than 300 zeros).
pub fn real(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || (1e-4..1e15).contains(&x.abs()) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Errors unless `x` lies in `range`: "`x` is out of range; allowed `range`".
pub fn check_real(field: &str, x: f64, range: Range) -> Result<(), FieldError> {
    if range.contains(x) {
        Ok(())
    } else {
        Err(FieldError::new(
            field,
            format!("{} is out of range; allowed {range}", real(x)),
        ))
    }
}

/// Errors unless `lo ≤ x ≤ hi`: "`x` is out of range; allowed lo..=hi".
pub fn check_int(field: &str, x: usize, lo: usize, hi: usize) -> Result<(), FieldError> {
    if (lo..=hi).contains(&x) {
        Ok(())
    } else {
        Err(FieldError::new(
            field,
            format!("{x} is out of range; allowed {lo}..={hi}"),
        ))
    }
}

/// Resets `value`, a count restored from disk, to `default` when it lies outside `range` (its
/// control's range), with a line for `notes` naming it as `name`.
pub fn check_count(
    notes: &mut Vec<String>,
    name: &str,
    value: &mut usize,
    range: std::ops::RangeInclusive<usize>,
    default: usize,
) {
    if !range.contains(value) {
        notes.push(format!(
            "`{name}` {value} is outside {}..={}; reset to {default}",
            range.start(),
            range.end()
        ));
        *value = default;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_say_which_ends_are_allowed() {
        let r = Range::below(0.0, 1.0);
        assert!(r.contains(0.0) && r.contains(0.999) && !r.contains(1.0));
        assert!(!r.contains(f64::NAN) && !Range::closed(0.0, f64::MAX).contains(f64::INFINITY));
        assert_eq!(r.to_string(), "[0, 1)");
        assert_eq!(Range::above(0.0, 1e6).to_string(), "(0, 1000000]");
        let e = check_real("beta", 2.5, Range::closed(0.0, 2.0)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "field `beta`: 2.5 is out of range; allowed [0, 2]"
        );
        let e = check_int("n", 1, 2, 256).unwrap_err().within("problem");
        assert_eq!(
            e.to_string(),
            "field `problem.n`: 1 is out of range; allowed 2..=256"
        );
    }
}
