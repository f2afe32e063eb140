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

/// A number type of the comma-separated lists the user types ([`number_list`]).
pub trait ListNumber: std::str::FromStr {
    /// Whether the list holds real numbers, so that `1,5` may be 1.5 with a decimal comma.
    const REAL: bool;
    /// What one element must be, for errors.
    const WHAT: &'static str;
}

impl ListNumber for f64 {
    const REAL: bool = true;
    const WHAT: &'static str = "a number";
}

impl ListNumber for usize {
    const REAL: bool = false;
    const WHAT: &'static str = "a whole number";
}

impl ListNumber for u64 {
    const REAL: bool = false;
    const WHAT: &'static str = "a whole number";
}

/// Reads `text`, numbers separated by commas, the one way every list the user types is read
/// (the command line's list flags, a link's list settings, the app's list fields). Spaces
/// around an element and empty elements are ignored; a Unicode minus (U+2212, as PDFs write
/// `1e−8`) reads as `-`. The list may be empty (callers that need a value say so).
///
/// Errors: a decimal comma ([`decimal_comma`]), and an element that is not a `T`, by name.
pub fn number_list<T: ListNumber>(text: &str) -> Result<Vec<T>, String> {
    if let Some(hint) = decimal_comma(text, T::REAL) {
        // Say how to write two values when a space after the comma makes them two (`1, 5`).
        let two = text.trim().split_once(',').map(|(a, b)| (a, b.trim()));
        let two = two.filter(|(a, b)| decimal_comma(&format!("{a}, {b}"), T::REAL).is_none());
        let two = two.map(|(a, b)| format!(" (for the two values write `{a}, {b}`)"));
        return Err(hint + &two.unwrap_or_default());
    }
    text.split(',')
        .map(str::trim)
        .filter(|item| !item.is_empty())
        .map(|item| {
            item.replace('\u{2212}', "-")
                .parse()
                .map_err(|_| format!("“{item}” is not {}", T::WHAT))
        })
        .collect()
}

/// `s` without a leading sign.
fn unsigned(s: &str) -> &str {
    s.strip_prefix(['-', '+', '\u{2212}']).unwrap_or(s)
}

/// A hint about the decimal point when a comma of `text`, a comma-separated list of numbers
/// (of reals if `real`), is a decimal comma, which would otherwise read as two values: an
/// element starting with 0 and another digit (`0,01` is not 0 and 1), or, in a list of reals,
/// exactly two elements of bare digits with no space between them (`1,5`; the two values 1 and
/// 5 are `1, 5` or `1.0,5`). None for any other list.
pub fn decimal_comma(text: &str, real: bool) -> Option<String> {
    let text = text.trim();
    let items: Vec<&str> = text.split(',').collect();
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let hint = |whole: &str, number: &str| {
        format!("`{whole}`: use a decimal point ({number}); separate values with commas")
    };
    let zero = items.iter().enumerate().find_map(|(i, item)| {
        let item = item.trim();
        let bare = unsigned(item);
        let zero = bare.starts_with('0') && bare[1..].starts_with(|c: char| c.is_ascii_digit());
        zero.then(|| match i.checked_sub(1).map(|j| items[j].trim()) {
            Some(b) if digits(unsigned(b)) => hint(&format!("{b},{item}"), &format!("{b}.{item}")),
            _ => format!(
                "`{item}` starts with 0 and another digit: write decimals with a point (0.01), \
                 and commas only between values"
            ),
        })
    });
    if zero.is_some() {
        return zero;
    }
    match items[..] {
        [a, b] if real && digits(unsigned(a)) && digits(b) => Some(hint(text, &format!("{a}.{b}"))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decimal_comma_is_refused_with_a_hint_and_lists_read_otherwise() {
        assert_eq!(
            number_list::<f64>("0,01").unwrap_err(),
            "`0,01`: use a decimal point (0.01); separate values with commas"
        );
        assert_eq!(
            number_list::<f64>(" 1,5 ").unwrap_err(),
            "`1,5`: use a decimal point (1.5); separate values with commas (for the two values \
             write `1, 5`)"
        );
        assert_eq!(
            number_list::<f64>("-2,5").unwrap_err(),
            "`-2,5`: use a decimal point (-2.5); separate values with commas (for the two \
             values write `-2, 5`)"
        );
        assert!(
            number_list::<f64>("1e-8,007")
                .unwrap_err()
                .starts_with("`007` starts with 0")
        );
        assert_eq!(
            number_list::<usize>("4,08").unwrap_err(),
            "`4,08`: use a decimal point (4.08); separate values with commas"
        );
        assert_eq!(
            number_list::<u64>("01").unwrap_err(),
            "`01` starts with 0 and another digit: write decimals with a point (0.01), and \
             commas only between values"
        );
        // Two bare digits are two values in an integer list, or with a space, or with a point.
        assert_eq!(number_list::<usize>("4,8").unwrap(), [4, 8]);
        assert_eq!(number_list::<f64>("1, 5").unwrap(), [1.0, 5.0]);
        assert_eq!(number_list::<f64>("1.0,5").unwrap(), [1.0, 5.0]);
        assert_eq!(number_list::<f64>("0.01,0.1").unwrap(), [0.01, 0.1]);
        assert_eq!(number_list::<f64>("1,5,2").unwrap(), [1.0, 5.0, 2.0]);
        assert_eq!(number_list::<f64>("0,1e-3").unwrap(), [0.0, 1e-3]);
        assert_eq!(number_list::<f64>("1e\u{2212}8, 1,").unwrap(), [1e-8, 1.0]);
        assert_eq!(number_list::<u64>(" ").unwrap(), Vec::<u64>::new());
        assert_eq!(
            number_list::<u64>("1,x").unwrap_err(),
            "“x” is not a whole number"
        );
        // The rates of `--lr gd=1,5`: one number split at its comma.
        assert!(decimal_comma("1,5", true).is_some() && decimal_comma("1,5", false).is_none());
    }

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
