//! The figure builders' layout test: a figure drawn to SVG at every print size, each text's
//! box measured with the bundled font's metrics (advance widths and kerning across, the ink of
//! its glyphs up and down, after the SVG's anchor, baseline shift and rotation; the box covers
//! the text both as an SVG viewer draws it and as the PNG renderer does), and a failure
//! when a text leaves the canvas, overlaps another text, or prints smaller than the size's
//! floor. The labs' tests call [`assert_fits`] on their builders, with one-point, huge-range
//! and long-name inputs.

use ab_glyph::{Font, FontRef};

use super::{Figure, FigureOptions, FigureSize, svg_as};

/// A text's box in the SVG's user units: `[x0, y0, x1, y1]`.
type Box2 = [f64; 4];

/// One `<text>` of a drawn figure and its box.
#[derive(Debug)]
pub(crate) struct Placed {
    /// Its content.
    pub text: String,
    /// Its box.
    pub bbox: Box2,
    /// Its SVG font size (user units).
    pub size: f64,
}

fn font() -> FontRef<'static> {
    FontRef::try_from_slice(super::render::FONT_DATA).expect("the bundled font parses")
}

/// Advance width and ink extent above and below the baseline of `text`, in em.
fn measure(font: &FontRef<'_>, text: &str) -> (f64, f64, f64) {
    let em = font.units_per_em().unwrap_or(2048.0) as f64;
    let (mut w, mut up, mut down) = (0.0, 0.0f64, 0.0f64);
    let mut prev = None;
    for ch in text.chars() {
        let id = font.glyph_id(ch);
        if let Some(p) = prev {
            w += font.kern_unscaled(p, id) as f64;
        }
        w += font.h_advance_unscaled(id) as f64;
        // ab_glyph keeps the outline's top in `min.y` and its bottom in `max.y`.
        if let Some(o) = font.outline(id) {
            up = up.max(o.bounds.min.y as f64);
            down = down.min(o.bounds.max.y as f64);
        }
        prev = Some(id);
    }
    (w / em, up / em, down / em)
}

/// Every non-empty text of `svg` with its box.
///
/// # Panics
/// If `svg` is not well-formed or a text lacks its position or size.
pub(crate) fn texts(svg: &str) -> Vec<Placed> {
    let font = font();
    let em = font.units_per_em().unwrap_or(2048.0) as f64;
    let x_height = font
        .outline(font.glyph_id('x'))
        .map_or(0.55, |o| o.bounds.min.y as f64 / em);
    let em_per_height = em / font.height_unscaled() as f64;
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    let num = |n: &roxmltree::Node, a: &str| -> f64 {
        n.attribute(a)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("<text> without a numeric {a}"))
    };
    let mut out = Vec::new();
    for n in doc.descendants().filter(|n| n.has_tag_name("text")) {
        // plotters puts the text between newlines.
        let content = n.text().unwrap_or("").trim_matches('\n').to_string();
        if content.trim().is_empty() {
            continue;
        }
        let (x, y, size) = (num(&n, "x"), num(&n, "y"), num(&n, "font-size"));
        let (w, up, down) = measure(&font, &content);
        let anchor = n.attribute("text-anchor").unwrap_or("start");
        let start = |width: f64| match anchor {
            "middle" => x - width / 2.0,
            "end" => x - width,
            _ => x,
        };
        // As an SVG viewer draws it: `size` per em, the baseline shifted by `dy`.
        let dy = n.attribute("dy").unwrap_or("");
        let baseline = y + size
            * match dy {
                "0.76em" => 0.76,
                "0.5ex" => 0.5 * x_height,
                "-0.5ex" => -0.5 * x_height,
                _ => 0.0,
            };
        let (sx0, sx1) = (start(w * size), start(w * size) + w * size);
        let (sy0, sy1) = (baseline - up * size, baseline - down * size);
        // As plotters' bitmap backend draws it (the PNGs): its font size is 1.24 × `size`,
        // which ab_glyph takes as the font's ascent-to-descent height, the anchor moves the
        // text by its layout box (`size` tall), and the baseline sits half the font size
        // below the box's top.
        let px_size = 1.24 * size;
        let em = px_size * em_per_height;
        let top = y - match dy {
            "0.5ex" => size.trunc() / 2.0,
            "-0.5ex" => size.trunc(),
            _ => 0.0,
        };
        let base = top + px_size / 2.0;
        let (px0, px1) = (start(w * em), start(w * em) + w * em);
        let (py0, py1) = (base - up * em, base - down * em);
        let (bx0, bx1) = (sx0.min(px0), sx1.max(px1));
        let (by0, by1) = (sy0.min(py0), sy1.max(py1));
        let rotated = n
            .attribute("transform")
            .is_some_and(|t| t.starts_with("rotate(270"));
        let bbox = if rotated {
            // rotate(270) about (x, y): (dx, dy) → (dy, −dx).
            let (ax, ay) = (x + (by0 - y), y - (bx1 - x));
            let (cx, cy) = (x + (by1 - y), y - (bx0 - x));
            [ax.min(cx), ay.min(cy), ax.max(cx), ay.max(cy)]
        } else {
            [bx0, by0, bx1, by1]
        };
        out.push(Placed {
            text: content,
            bbox,
            size,
        });
    }
    out
}

/// What is wrong with the texts of an SVG `w × h` user units: texts outside the canvas,
/// overlapping pairs, and texts below `min_size`; empty when nothing is.
pub(crate) fn problems(svg: &str, (w, h): (f64, f64), min_size: f64) -> Vec<String> {
    let placed = texts(svg);
    let mut out = Vec::new();
    // Half a unit of slack: positions are whole pixels.
    let slack = 0.5;
    for p in &placed {
        let [x0, y0, x1, y1] = p.bbox;
        if x0 < -slack || y0 < -slack || x1 > w + slack || y1 > h + slack {
            out.push(format!("`{}` leaves the canvas: {:?}", p.text, p.bbox));
        }
        if p.size < min_size - 1e-9 {
            out.push(format!(
                "`{}` is {} units, below {min_size}",
                p.text, p.size
            ));
        }
    }
    for (i, a) in placed.iter().enumerate() {
        for b in &placed[i + 1..] {
            let ox = a.bbox[2].min(b.bbox[2]) - a.bbox[0].max(b.bbox[0]);
            let oy = a.bbox[3].min(b.bbox[3]) - a.bbox[1].max(b.bbox[1]);
            if ox > slack && oy > slack {
                out.push(format!(
                    "`{}` {:?} overlaps `{}` {:?}",
                    a.text, a.bbox, b.text, b.bbox
                ));
            }
        }
    }
    out
}

/// The smallest SVG font size (user units) a text may print at: 85% of 8 pt for papers
/// (the renderer shrinks a text that does not fit by up to 15%), 85% of 20 pt for slides.
fn floor(size: FigureSize) -> f64 {
    let pt = |p: f64| p * 96.0 / 72.0;
    match size {
        FigureSize::Single | FigureSize::Double => 0.85 * pt(8.0),
        FigureSize::Slide => 0.85 * pt(20.0),
        FigureSize::Screen(..) => 0.0,
    }
}

/// Asserts that `figure` draws at every print size, with and without its title, with every
/// text inside the canvas, no two texts overlapping and none below its size's floor.
///
/// # Panics
/// With every problem found, naming the figure (`what`) and the size.
pub(crate) fn assert_fits(figure: &Figure, what: &str) {
    let mut all = Vec::new();
    for size in FigureSize::PRINT {
        for titles in [true, false] {
            let opts = FigureOptions { size, titles };
            let svg = svg_as(figure, &opts).unwrap_or_else(|e| panic!("{what}: {e}"));
            let (w, h) = size.points();
            for p in problems(&svg, (w as f64, h as f64), floor(size)) {
                all.push(format!("{} (titles {titles}): {p}", size.name()));
            }
        }
    }
    assert!(all.is_empty(), "{what}:\n{}", all.join("\n"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::{Axis, Body, Dash, Heatmap, Mark, svg};
    use nalgebra::DMatrix;

    /// A plot whose texts are placed by hand, to check the measuring itself.
    #[test]
    fn boxes_follow_anchor_baseline_and_rotation() {
        let svg = r#"<svg xmlns="http://www.w3.org/2000/svg" width="200" height="100">
            <text x="10" y="20" dy="0.76em" text-anchor="start" font-size="10">HH</text>
            <text x="100" y="50" dy="0.5ex" text-anchor="end" font-size="10">HH</text>
            <text x="50" y="50" dy="0.5ex" text-anchor="middle" font-size="10"
                transform="rotate(270, 50, 50)">HH</text>
            </svg>"#;
        let t = texts(svg);
        let font = font();
        let (w, up, _) = measure(&font, "HH");
        // Two H's: 1.504 em across, the cap height 0.729 em up, nothing below the baseline.
        assert!(
            (w - 1.504).abs() < 0.01 && (up - 0.729).abs() < 0.01,
            "{w} {up}"
        );
        assert!((t[0].bbox[0] - 10.0).abs() < 1e-9);
        assert!((t[0].bbox[3] - 27.6).abs() < 1e-9);
        assert!((t[1].bbox[2] - 100.0).abs() < 1e-9);
        // Upright: as tall as the text is wide (a little wider in the bitmap's font scale),
        // centred on its anchor.
        let r = t[2].bbox;
        assert!((w * 10.0..w * 11.0).contains(&(r[3] - r[1])), "{r:?}");
        assert!(((r[1] + r[3]) / 2.0 - 50.0).abs() < 1e-9);
        assert!(r[2] - r[0] < 10.0);
        let problems = problems(svg, (200.0, 100.0), 0.0);
        assert!(problems.is_empty(), "{problems:?}");
        // Moved onto each other, or off the canvas, they are reported.
        let bad = svg
            .replace("x=\"100\"", "x=\"30\"")
            .replace("y=\"20\"", "y=\"45\"");
        assert_eq!(super::problems(&bad, (200.0, 100.0), 0.0).len(), 1);
        let off = svg.replace("x=\"10\"", "x=\"190\"");
        assert_eq!(super::problems(&off, (200.0, 100.0), 0.0).len(), 1);
    }

    /// The old fixed layout clipped long colour-bar captions; every piece is now measured.
    #[test]
    fn long_names_huge_ranges_and_one_point_fit_at_every_size() {
        let long = "a very long series name that no legend row can hold in one column";
        let wide = Figure {
            title: "A title far longer than a single column can hold, which must shrink".into(),
            body: Body::Plot {
                x: Axis::linear("a long axis title that describes the steps in some detail"),
                y: Axis::log("a long vertical axis title over the range of values"),
                marks: vec![
                    Mark::line(
                        long,
                        [0, 0, 0],
                        vec![[0.0, 1e-300], [1e6, 1e300]],
                        2.0,
                        Dash::Solid,
                    ),
                    Mark::line("b", [9, 9, 9], vec![[5.0, 1.0]], 2.0, Dash::Dashed),
                    Mark::hline("reference", [128; 3], 1.0, Dash::Dotted),
                ],
            },
        };
        assert_fits(&wide, "huge range");
        let cats = Figure {
            title: String::new(),
            body: Body::Plot {
                x: Axis::categories(
                    "rule",
                    (0..12)
                        .map(|i| format!("a rule with a long name {i}"))
                        .collect(),
                ),
                y: Axis::linear("recovery").including(0.0),
                marks: vec![Mark::bars("mean", [0, 114, 178], vec![[0.0, 0.5]], 0.6)],
            },
        };
        assert_fits(&cats, "long categories");
        let maps = Figure {
            title: "(d) Learned |K|".into(),
            body: Body::Heatmaps {
                maps: (0..5)
                    .map(|k| Heatmap {
                        title: format!("{long} {k}"),
                        values: DMatrix::from_fn(8, 32, |r, c| ((r + c * k) % 7) as f64 / 6.0),
                    })
                    .collect(),
                caption: "|k| of each key's coordinates (unit-norm keys)".into(),
                x_label: "key".into(),
                y_label: "coordinate".into(),
            },
        };
        assert_fits(&maps, "heatmaps");
        // The screen size keeps its text sizes; the measuring applies there too.
        let text = svg(&maps, (640, 400)).unwrap();
        let found = problems(&text, (640.0, 400.0), 0.0);
        assert!(found.is_empty(), "{found:?}");
        if let Ok(dir) = std::env::var("FIGDUMP") {
            for (name, f) in [("wide", &wide), ("cats", &cats), ("maps", &maps)] {
                for size in FigureSize::PRINT {
                    let o = FigureOptions::new(size);
                    let b = crate::figure::png_as(f, &o, 2.0).unwrap();
                    std::fs::write(format!("{dir}/{name}-{}.png", size.name()), b).unwrap();
                }
            }
        }
    }
}
