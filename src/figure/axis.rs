//! Mapping an [`Axis`] to the linear coordinate every renderer draws on (log10 for log axes,
//! negated for reversed ones), its ticks and their labels: shared by the plotters renderer and
//! the app's on-screen plots, so a saved figure and the plot on screen read alike.

use super::{Axis, Mark, Shape};

impl Axis {
    /// The drawing coordinate of the data value `v`: log10 on a log axis, negated on a
    /// reversed one, so every renderer draws on a plain linear coordinate. None if `v` cannot
    /// be drawn (not finite, or not positive on a log axis).
    pub fn to_drawing(&self, v: f64) -> Option<f64> {
        if !v.is_finite() || (self.log && v <= 0.0) {
            return None;
        }
        let t = if self.log { v.log10() } else { v };
        Some(if self.reversed { -t } else { t })
    }

    /// The label of the tick at drawing coordinate `t`: the data value there (`1e-6` on log
    /// axes, the category's name on categorical ones); `step` is the ticks' spacing as
    /// [`Axis::tick_marks`] returns it, 0 for ticks given explicitly.
    pub fn tick_label(&self, t: f64, step: f64) -> String {
        let t = if self.reversed { -t } else { t };
        if step == 0.0 {
            return significant(if self.log { 10f64.powf(t) } else { t });
        }
        if !self.categories.is_empty() {
            let i = t.round();
            return if (t - i).abs() < 1e-6 && i >= 0.0 {
                self.categories.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            };
        }
        if self.log {
            if step >= 1.0 {
                format!("1e{}", t.round() as i64)
            } else {
                significant(10f64.powf(t))
            }
        } else {
            number(t, step)
        }
    }

    /// The data value at drawing coordinate `t` for a hover label: four significant digits
    /// (`2.5e-8`, `0.1235`, `1500`), or the nearest category's name.
    pub fn value_label(&self, t: f64) -> String {
        if self.categories.is_empty() {
            significant(self.from_drawing(t))
        } else {
            self.tick_label(t.round(), 1.0)
        }
    }

    /// The minor marks of a log axis in `[lo, hi]` (drawing coordinates): 2…9 times each
    /// power of ten, the partial decades at both ends included; none on other axes.
    pub fn minor_marks(&self, lo: f64, hi: f64) -> Vec<f64> {
        if !(self.log && lo.is_finite() && hi.is_finite()) || hi - lo > 400.0 {
            return Vec::new();
        }
        // Decade exponents in data space (a reversed axis negates them).
        let (a, b) = if self.reversed { (-hi, -lo) } else { (lo, hi) };
        let mut out = Vec::new();
        for k in (a.floor() as i64)..=(b.ceil() as i64) {
            for d in 2..10 {
                let e = k as f64 + (d as f64).log10();
                let t = if self.reversed { -e } else { e };
                if t >= lo && t <= hi {
                    out.push(t);
                }
            }
        }
        out
    }

    /// The data value at drawing coordinate `t` (the inverse of [`Axis::to_drawing`]).
    pub fn from_drawing(&self, t: f64) -> f64 {
        let t = if self.reversed { -t } else { t };
        if self.log { 10f64.powf(t) } else { t }
    }

    /// Tick positions (drawing coordinates) in `[lo, hi]` and their spacing: the axis's own
    /// `ticks` when it has any (spacing 0), integers for categories, decades for log axes
    /// spanning at least one, otherwise 1-2-5 steps.
    pub fn tick_marks(&self, lo: f64, hi: f64) -> (Vec<f64>, f64) {
        let axis = self;
        if !axis.ticks.is_empty() {
            let v = axis
                .ticks
                .iter()
                .filter_map(|&t| axis.to_drawing(t))
                .filter(|t| *t >= lo && *t <= hi)
                .collect();
            return (v, 0.0);
        }
        if !axis.categories.is_empty() {
            let v = (0..axis.categories.len())
                .map(|i| if axis.reversed { -(i as f64) } else { i as f64 })
                .filter(|t| *t >= lo && *t <= hi)
                .collect();
            return (v, 1.0);
        }
        let span = hi - lo;
        if axis.log && span < 1.5 {
            return (narrow_log_ticks(axis, lo, hi), 0.5);
        }
        let step = if axis.log && span >= 1.5 {
            // Decades in steps of 1, 2, 3 or 5 times a power of ten (or 2.5 × one).
            let raw = span / 8.0;
            let mag = 10f64.powf(raw.log10().floor().max(0.0));
            [1.0, 2.0, 2.5, 3.0, 5.0, 10.0]
                .into_iter()
                .map(|f| f * mag)
                .find(|s| *s >= raw && s.fract() == 0.0)
                .unwrap_or(10.0 * mag)
        } else {
            let raw = span / 6.0;
            let mag = 10f64.powf(raw.log10().floor());
            let f = raw / mag;
            mag * if f < 1.5 {
                1.0
            } else if f < 3.5 {
                2.0
            } else if f < 7.5 {
                5.0
            } else {
                10.0
            }
        };
        let mut out = Vec::new();
        let mut t = (lo / step).ceil() * step;
        while t <= hi + step * 1e-9 && out.len() < 64 {
            out.push(t);
            t += step;
        }
        (out, step)
    }
}

/// Ticks of a log axis spanning less than a decade and a half: 1, 2 and 5 times powers of ten
/// (every digit when that gives fewer than two), as drawing coordinates in `[lo, hi]`.
fn narrow_log_ticks(axis: &Axis, lo: f64, hi: f64) -> Vec<f64> {
    let (a, b) = if axis.reversed { (-hi, -lo) } else { (lo, hi) };
    let pick = |digits: &[f64]| -> Vec<f64> {
        let mut out = Vec::new();
        for k in (a.floor() as i64)..=(b.ceil() as i64) {
            for d in digits {
                let v = d * 10f64.powi(k as i32);
                if let Some(t) = axis.to_drawing(v)
                    && t >= lo
                    && t <= hi
                {
                    out.push(t);
                }
            }
        }
        out
    };
    let ticks = pick(&[1.0, 2.0, 5.0]);
    if ticks.len() >= 2 {
        ticks
    } else {
        pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    }
}

/// The drawable runs of `points` (data `[x, y]`) in drawing coordinates: maximal stretches of
/// points both axes can show, so a line breaks at gaps instead of jumping across them.
pub fn pieces(points: &[[f64; 2]], x: &Axis, y: &Axis) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for p in points {
        match (x.to_drawing(p[0]), y.to_drawing(p[1])) {
            (Some(a), Some(b)) => cur.push((a, b)),
            _ => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The ranges a plot of `marks` shows, `([x_lo, x_hi], [y_lo, y_hi])` in drawing coordinates
/// ([`Axis::to_drawing`]): every drawable value of the marks, the bars' base (0 on a linear
/// y axis), the axes' `include` values and categories, padded by 4% of the span on each side.
/// A degenerate range gets a fixed pad instead, so its values sit in the middle of a plot of
/// sensible size: one value or all values equal (within 1e-12 relative) are padded by 10% of
/// the value, at least 0.5 (half a decade on a log axis); categories by 0.6 of a slot; no
/// drawable value at all gives [0, 1]. Used by the saved figure and the on-screen plot alike.
pub fn plot_ranges(x: &Axis, y: &Axis, marks: &[Mark]) -> ([f64; 2], [f64; 2]) {
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for m in marks {
        mark_values(m, x, y, &mut xs, &mut ys);
        if let Shape::Bars { .. } = m.shape
            && !y.log
        {
            ys.push(0.0);
        }
    }
    xs.extend(x.include.iter().filter_map(|v| x.to_drawing(*v)));
    ys.extend(y.include.iter().filter_map(|v| y.to_drawing(*v)));
    if !x.categories.is_empty() {
        xs.extend(
            [0.0, x.categories.len() as f64 - 1.0]
                .iter()
                .filter_map(|v| x.to_drawing(*v)),
        );
    }
    (
        padded(&xs, !x.categories.is_empty()),
        padded(&ys, !y.categories.is_empty()),
    )
}

/// The padded range of `values` (drawing coordinates), as [`plot_ranges`] describes.
fn padded(values: &[f64], categorical: bool) -> [f64; 2] {
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    if !(lo.is_finite() && hi.is_finite()) {
        return [0.0, 1.0];
    }
    if categorical {
        return [lo - 0.6, hi + 0.6];
    }
    if hi - lo < 1e-12 * lo.abs().max(1.0) {
        let d = (lo.abs() * 0.1).max(0.5);
        return [lo - d, hi + d];
    }
    let pad = (hi - lo) * 0.04;
    [lo - pad, hi + pad]
}

/// Every drawable value of `m` in drawing coordinates, appended to `xs` and `ys`.
fn mark_values(m: &Mark, x: &Axis, y: &Axis, xs: &mut Vec<f64>, ys: &mut Vec<f64>) {
    let mut push = |px: f64, py: f64| {
        if let (Some(a), Some(b)) = (x.to_drawing(px), y.to_drawing(py)) {
            xs.push(a);
            ys.push(b);
        }
    };
    match &m.shape {
        Shape::Line { points, .. } | Shape::Points { points, .. } | Shape::Bars { points, .. } => {
            for p in points {
                push(p[0], p[1]);
            }
        }
        Shape::Band { x: bx, lo, hi } => {
            for i in 0..bx.len().min(lo.len()).min(hi.len()) {
                push(bx[i], lo[i]);
                push(bx[i], hi[i]);
            }
        }
        Shape::HLine { y: v, .. } => ys.extend(y.to_drawing(*v)),
        Shape::VLine { x: v, .. } => xs.extend(x.to_drawing(*v)),
    }
}

/// The radius (points) of the dot that stands for a one-point line of stroke `width`: a
/// line needs two points to show, and a sweep over one value has one.
pub fn dot_radius(width: f64) -> f64 {
    (width * 1.5).max(3.0)
}

/// `v` printed with as many decimals as `step` needs; large or tiny magnitudes in e-notation
/// with as many digits as `step` needs.
fn number(v: f64, step: f64) -> String {
    let v = if v.abs() < step * 1e-9 { 0.0 } else { v };
    if v != 0.0 && (v.abs() >= 1e5 || v.abs() < 1e-3) {
        let digits = (v.abs().log10().floor() - step.log10().floor()).clamp(0.0, 6.0) as usize;
        return format!("{v:.digits$e}");
    }
    let decimals = (-step.log10().floor()).clamp(0.0, 6.0) as usize;
    format!("{v:.decimals$}")
}

/// `v` to four significant digits, trailing zeros dropped: `0.25`, `1500`, `2e-9`.
fn significant(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let mag = v.abs().log10().floor();
    if (-3.0..5.0).contains(&mag) {
        let decimals = (3.0 - mag).max(0.0) as usize;
        let text = format!("{v:.decimals$}");
        if text.contains('.') {
            text.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            text
        }
    } else {
        let text = format!("{v:.3e}");
        let (m, e) = text.split_once('e').unwrap_or((&text, "0"));
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.')
        } else {
            m
        };
        format!("{m}e{e}")
    }
}

/// Asserts that every value `figure` draws lies inside its plot ranges ([`plot_ranges`]),
/// at least 3% of the span from each edge, and that both spans are positive: a figure of one
/// point, one swept value or all-equal values reads like any other; and that its texts fit
/// ([`super::check::assert_fits`]). For the figure builders' tests.
#[cfg(test)]
pub(crate) fn assert_readable(figure: &super::Figure) {
    // Every builder's test comes here: its texts must fit at every print size too.
    super::check::assert_fits(figure, &figure.title);
    let super::Body::Plot { x, y, marks } = &figure.body else {
        return;
    };
    let (rx, ry) = plot_ranges(x, y, marks);
    for (r, name) in [(rx, "x"), (ry, "y")] {
        assert!(
            r[0].is_finite() && r[1].is_finite() && r[1] > r[0],
            "{}: {name} range {r:?}",
            figure.title
        );
    }
    let inside = |v: f64, r: [f64; 2]| {
        let m = 0.03 * (r[1] - r[0]);
        v >= r[0] + m && v <= r[1] - m
    };
    for m in marks
        .iter()
        .filter(|m| !matches!(m.shape, Shape::HLine { .. } | Shape::VLine { .. }))
    {
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        mark_values(m, x, y, &mut xs, &mut ys);
        for (a, b) in xs.iter().zip(&ys) {
            assert!(
                inside(*a, rx) && inside(*b, ry),
                "{}: mark `{}` at ({a}, {b}) is at the edge of {rx:?} × {ry:?}",
                figure.title,
                m.name
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_ticks_are_round_numbers() {
        let (t, step) = Axis::linear("x").tick_marks(-0.03, 1.03);
        assert_eq!(step, 0.2);
        assert_eq!(t.len(), 6);
        assert!((t[5] - 1.0).abs() < 1e-12);
        assert_eq!(number(0.4000000001, 0.2), "0.4");
        assert_eq!(number(25000.0, 5000.0), "25000");
        assert_eq!(number(2.5e-5, 5e-6), "2.5e-5");
    }

    #[test]
    fn log_ticks_are_decades() {
        let axis = Axis::log("y");
        let (t, step) = axis.tick_marks(-12.3, -0.2);
        assert_eq!(step, 2.0);
        assert_eq!(t, vec![-12.0, -10.0, -8.0, -6.0, -4.0, -2.0]);
        let m = &axis;
        assert_eq!(m.tick_label(-6.0, step), "1e-6");
        assert_eq!(m.to_drawing(0.0), None);
        assert_eq!(m.to_drawing(100.0), Some(2.0));
    }

    #[test]
    fn narrow_log_axes_tick_at_one_two_five() {
        let axis = Axis::log("y");
        let m = &axis;
        let (t, step) = axis.tick_marks(1e-9f64.log10(), 3e-9f64.log10());
        let labels: Vec<String> = t.iter().map(|t| m.tick_label(*t, step)).collect();
        assert_eq!(labels, ["1e-9", "2e-9"]);
        let (t, step) = axis.tick_marks(2f64.log10(), 6f64.log10());
        let labels: Vec<String> = t.iter().map(|t| m.tick_label(*t, step)).collect();
        assert_eq!(labels, ["2", "5"]);
        // Less than a 1-2-5 step apart: every digit.
        let (t, step) = axis.tick_marks(3.5f64.log10(), 4.6f64.log10());
        let labels: Vec<String> = t.iter().map(|t| m.tick_label(*t, step)).collect();
        assert_eq!(labels, ["4"]);
        assert_eq!(significant(0.25), "0.25");
        assert_eq!(significant(1500.0), "1500");
        assert_eq!(significant(1.9999999999e-9), "2e-9");
        assert_eq!(significant(123456.0), "1.235e5");
        assert_eq!(number(100_000.0, 10.0), "1.0000e5");
    }

    #[test]
    fn reversed_log_axis_maps_and_labels_back() {
        let axis = Axis::log("loss").reversed();
        let m = &axis;
        assert_eq!(m.to_drawing(1e-3), Some(3.0));
        assert_eq!(m.tick_label(3.0, 1.0), "1e-3");
    }

    #[test]
    fn pieces_break_at_gaps() {
        let (x, y) = (Axis::linear("x"), Axis::log("y"));
        let pts = [
            [0.0, 1.0],
            [1.0, 10.0],
            [2.0, 0.0],
            [3.0, f64::NAN],
            [4.0, 100.0],
        ];
        let p = pieces(&pts, &x, &y);
        assert_eq!(p, vec![vec![(0.0, 0.0), (1.0, 1.0)], vec![(4.0, 2.0)]]);
    }

    #[test]
    fn minor_marks_fill_every_decade_in_view() {
        let axis = Axis::log("y");
        // 3.5e-9 … 2e-7: 4…9 of the first decade, 2…9 of the second, 2 of the third.
        let m = axis.minor_marks(3.5e-9f64.log10(), 2e-7f64.log10() + 1e-12);
        let values: Vec<String> = m.iter().map(|t| significant(10f64.powf(*t))).collect();
        assert_eq!(values.len(), 6 + 8 + 1, "{values:?}");
        assert_eq!(values[0], "4e-9");
        assert_eq!(values[6], "2e-8");
        assert_eq!(values.last().unwrap(), "2e-7");
        let reversed = Axis::log("loss").reversed();
        let m = reversed.minor_marks(-4.0, -3.0);
        assert_eq!(m.len(), 8);
        assert!(m.iter().all(|t| (-4.0..=-3.0).contains(t)));
        assert!(Axis::linear("x").minor_marks(0.0, 1.0).is_empty());
        assert!(axis.minor_marks(f64::NEG_INFINITY, 0.0).is_empty());
    }

    #[test]
    fn hover_values_keep_their_digits() {
        assert_eq!(Axis::log("eps").value_label(-8.0), "1e-8");
        assert_eq!(Axis::log("loss").reversed().value_label(5.0), "1e-5");
        assert_eq!(Axis::linear("x").value_label(0.123456), "0.1235");
        assert_eq!(Axis::linear("x").value_label(3.2e-5), "3.2e-5");
    }

    #[test]
    fn from_drawing_inverts_to_drawing() {
        let axis = Axis::log("loss").reversed();
        for v in [1e-7, 3e-3, 2.5] {
            let t = axis.to_drawing(v).unwrap();
            assert!((axis.from_drawing(t) / v - 1.0).abs() < 1e-12);
        }
        let lin = Axis::linear("x").reversed();
        assert_eq!(lin.from_drawing(lin.to_drawing(-4.0).unwrap()), -4.0);
    }
}
