//! Tick labels as a printed figure writes them: powers of ten as 10ⁿ (superscript digits, in
//! the bundled font), linear ticks with one number of decimals for the whole axis and a common
//! power of ten moved into the axis title. The app's on-screen plots keep
//! [`Axis::tick_label`] (its screen font has no superscripts).

use super::Axis;

/// `n` in superscript digits (`-3` → `⁻³`).
pub fn superscript(n: i64) -> String {
    n.to_string()
        .chars()
        .map(|c| match c {
            '-' => '⁻',
            '0' => '⁰',
            '1' => '¹',
            '2' => '²',
            '3' => '³',
            '4' => '⁴',
            '5' => '⁵',
            '6' => '⁶',
            '7' => '⁷',
            '8' => '⁸',
            _ => '⁹',
        })
        .collect()
}

/// `10ⁿ`.
pub fn power_of_ten(n: i64) -> String {
    format!("10{}", superscript(n))
}

/// `v` for a log axis's label: `10ⁿ` for a power of ten, plain digits from 0.001 to 9999
/// (`0.25`, `2`), otherwise `m×10ⁿ` with up to three significant digits.
pub fn log_value(v: f64) -> String {
    if !(v.is_finite() && v > 0.0) {
        return format!("{v}");
    }
    let e = v.log10().round();
    if (v / 10f64.powf(e) - 1.0).abs() < 1e-9 {
        return power_of_ten(e as i64);
    }
    let e = v.log10().floor();
    if (-3.0..4.0).contains(&e) {
        let decimals = (2.0 - e).max(0.0) as usize;
        return trim(format!("{v:.decimals$}"));
    }
    let m = trim(format!("{:.2}", v / 10f64.powf(e)));
    format!("{m}×{}", power_of_ten(e as i64))
}

/// A decimal number without trailing zeros after its point (`2.50` → `2.5`, `3.0` → `3`).
fn trim(text: String) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The labels of ticks `ticks` (drawing coordinates, spacing `step` as [`Axis::tick_marks`]
/// returns it) and the power of ten factored out of a linear axis's labels (None when the
/// numbers print as they are).
pub fn tick_labels(axis: &Axis, ticks: &[f64], step: f64) -> (Vec<String>, Option<i64>) {
    let value = |t: f64| axis.from_drawing(t);
    if !axis.categories.is_empty() || (step == 0.0 && !axis.log) {
        let labels = ticks.iter().map(|&t| axis.tick_label(t, step)).collect();
        return (labels, None);
    }
    if axis.log && step >= 1.0 {
        // Whole decades: the exponent itself (10^t may not be representable).
        let exp = |t: f64| (if axis.reversed { -t } else { t }).round() as i64;
        return (ticks.iter().map(|&t| power_of_ten(exp(t))).collect(), None);
    }
    if axis.log {
        return (ticks.iter().map(|&t| log_value(value(t))).collect(), None);
    }
    // A linear axis: one power of ten for all labels when they are large or tiny.
    let largest = ticks.iter().fold(0f64, |m, &t| m.max(value(t).abs()));
    let exp =
        (largest > 0.0 && !(1e-3..1e5).contains(&largest)).then(|| largest.log10().floor() as i64);
    let unit = 10f64.powi(exp.unwrap_or(0) as i32);
    let decimals = (-(step / unit).log10().floor()).clamp(0.0, 6.0) as usize;
    let labels = ticks
        .iter()
        .map(|&t| {
            let v = value(t) / unit;
            let v = if v.abs() < step / unit * 1e-9 { 0.0 } else { v };
            // A minus sign, not a hyphen.
            format!("{v:.decimals$}").replace('-', "−")
        })
        .collect();
    (labels, exp)
}

/// An axis title with the power of ten its tick labels leave out (`loss (×10⁻³)`).
pub fn axis_title(label: &str, exp: Option<i64>) -> String {
    match exp {
        Some(e) if label.is_empty() => format!("×{}", power_of_ten(e)),
        Some(e) => format!("{label} (×{})", power_of_ten(e)),
        None => label.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_of_ten_print_as_superscripts() {
        assert_eq!(power_of_ten(-3), "10⁻³");
        assert_eq!(power_of_ten(12), "10¹²");
        assert_eq!(log_value(1e-8), "10⁻⁸");
        assert_eq!(log_value(2e-9), "2×10⁻⁹");
        assert_eq!(log_value(0.25), "0.25");
        assert_eq!(log_value(5.0), "5");
        assert_eq!(log_value(1.0), "10⁰");
    }

    #[test]
    fn log_axes_label_decades_as_powers() {
        let axis = Axis::log("y");
        let (t, step) = axis.tick_marks(-12.3, -0.2);
        let (labels, exp) = tick_labels(&axis, &t, step);
        assert_eq!(labels, ["10⁻¹²", "10⁻¹⁰", "10⁻⁸", "10⁻⁶", "10⁻⁴", "10⁻²"]);
        assert_eq!(exp, None);
        // Explicit ticks (an ε sweep) too.
        let mut eps = Axis::log("ε");
        eps.ticks = vec![1e-8, 1e-6, 3e-4];
        let (t, step) = eps.tick_marks(-9.0, -3.0);
        assert_eq!(tick_labels(&eps, &t, step).0, ["10⁻⁸", "10⁻⁶", "3×10⁻⁴"]);
    }

    #[test]
    fn linear_labels_share_decimals_and_one_power_of_ten() {
        let axis = Axis::linear("x");
        let (t, step) = axis.tick_marks(-0.03, 1.03);
        let (labels, exp) = tick_labels(&axis, &t, step);
        assert_eq!(labels, ["0.0", "0.2", "0.4", "0.6", "0.8", "1.0"]);
        assert_eq!(exp, None);
        let (t, step) = axis.tick_marks(0.0, 3e-5);
        let (labels, exp) = tick_labels(&axis, &t, step);
        assert_eq!(exp, Some(-5));
        assert_eq!(labels, ["0.0", "0.5", "1.0", "1.5", "2.0", "2.5", "3.0"]);
        assert_eq!(axis_title("loss", exp), "loss (×10⁻⁵)");
        let (t, step) = axis.tick_marks(-2.0, 2.0);
        assert_eq!(tick_labels(&axis, &t, step).0[0], "−2.0");
    }
}
