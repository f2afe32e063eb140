//! Figure export: PNG sizes follow size × scale, SVGs parse as XML and name every series,
//! log and reversed axes and heatmaps draw, bad sizes are errors.

use basis_lab::figure::{self, Axis, Body, Dash, Figure, Heatmap, Mark};
use nalgebra::DMatrix;

fn plot() -> Figure {
    let xs: Vec<f64> = (0..50).map(|i| i as f64 * 20.0).collect();
    let curve = |k: f64| -> Vec<[f64; 2]> {
        xs.iter()
            .map(|&x| [x, 10f64.powf(-12.0 + k * x / 1000.0)])
            .collect()
    };
    Figure {
        title: "(a) Twin orientation divergence".into(),
        body: Body::Plot {
            x: Axis::linear("training step").including(0.0),
            y: Axis::log("‖W′ − QW‖F / ‖W‖F"),
            marks: vec![
                Mark::band(
                    "Adam 5–95% band",
                    [214, 39, 40],
                    xs.clone(),
                    xs.iter().map(|x| 1e-9 * (1.0 + x / 100.0)).collect(),
                    xs.iter().map(|x| 1e-7 * (1.0 + x / 100.0)).collect(),
                ),
                Mark::line("GD twins", [31, 119, 180], curve(0.5), 2.5, Dash::Solid),
                Mark::line("Adam twins", [214, 39, 40], curve(10.0), 2.5, Dash::Solid),
                Mark::line(
                    "Adam noise twin",
                    [214, 39, 40],
                    curve(8.0),
                    1.5,
                    Dash::Dashed,
                ),
                Mark::points("held-out", [44, 160, 44], curve(4.0), 3.0),
                Mark::hline(
                    "exact 0, drawn at 1e-16",
                    [128, 128, 128],
                    1e-16,
                    Dash::Dotted,
                ),
                Mark::vline("Lion diverged", [148, 103, 189], 700.0, Dash::Dashed),
            ],
        },
    }
}

fn heatmaps() -> Figure {
    let m = |k: usize| DMatrix::from_fn(16, 32, |r, c| ((r * 7 + c * k) % 17) as f64 / 16.0);
    Figure {
        title: "(d) Learned |K|".into(),
        body: Body::Heatmaps {
            maps: vec![
                Heatmap {
                    title: "GD".into(),
                    values: m(3),
                },
                Heatmap {
                    title: "Adam".into(),
                    values: m(5),
                },
            ],
            caption: "|k|".into(),
            x_label: "item".into(),
            y_label: "coordinate".into(),
        },
    }
}

fn png_size(bytes: &[u8]) -> (u32, u32, Option<png::PixelDimensions>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let reader = decoder.read_info().expect("a PNG");
    let info = reader.info();
    (info.width, info.height, info.pixel_dims)
}

/// Distinct colours in an RGB PNG (a blank image has one).
fn colours(bytes: &[u8]) -> usize {
    let img = image::load_from_memory(bytes).expect("decodes").to_rgb8();
    let mut seen: Vec<[u8; 3]> = img.pixels().map(|p| p.0).collect();
    seen.sort_unstable();
    seen.dedup();
    seen.len()
}

#[test]
fn png_is_size_times_scale_and_not_blank() {
    for fig in [plot(), heatmaps()] {
        for scale in [1.0, 2.0, 3.0] {
            let bytes = figure::png(&fig, (640, 400), scale).unwrap();
            let (w, h, dims) = png_size(&bytes);
            assert_eq!((w, h), ((640.0 * scale) as u32, (400.0 * scale) as u32));
            // pHYs: 96·scale dots per inch.
            let d = dims.expect("pHYs written");
            assert_eq!(d.xppu, (96.0 * scale / 0.0254_f64).round() as u32);
            assert!(colours(&bytes) > 20, "a blank figure at scale {scale}");
        }
    }
    // A fractional screen density (1.25 pixels per point) rounds the pixel size.
    let bytes = figure::png(&plot(), (641, 401), 1.25).unwrap();
    assert_eq!(png_size(&bytes).0, 801);
}

#[test]
fn svg_parses_and_names_every_series() {
    for fig in [plot(), heatmaps()] {
        let text = figure::svg(&fig, (640, 400)).unwrap();
        let doc = roxmltree::Document::parse(&text).expect("the SVG is well-formed XML");
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(str::trim))
            .collect();
        for name in figure::names(&fig) {
            assert!(texts.contains(&name), "{name} missing from {texts:?}");
        }
        assert!(texts.contains(&fig.title.as_str()));
    }
    // Log axis labels are decades, written as a paper writes them.
    let text = figure::svg(&plot(), (640, 400)).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let has = |label: &str| {
        doc.descendants()
            .any(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(label))
    };
    assert!(
        has("10⁻⁸") && has("10⁻¹²") && !has("10⁻⁹") && !has("1e-8"),
        "decade labels"
    );
}

#[test]
fn reversed_axis_puts_small_values_on_the_right() {
    let fig = Figure {
        title: "reversed".into(),
        body: Body::Plot {
            x: Axis::log("training loss").reversed(),
            y: Axis::linear("RMSE"),
            marks: vec![Mark::line(
                "GD",
                [0, 0, 0],
                vec![[1.0, 3.0], [1e-5, 1.5]],
                2.0,
                Dash::Solid,
            )],
        },
    };
    let text = figure::svg(&fig, (640, 400)).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let x_of = |label: &str| -> f64 {
        doc.descendants()
            .find(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(label))
            .and_then(|n| n.attribute("x"))
            .unwrap_or_else(|| panic!("tick {label}"))
            .parse()
            .unwrap()
    };
    assert!(x_of("10⁻⁵") > x_of("10⁰"));
}

#[test]
fn empty_and_degenerate_figures_draw_and_bad_sizes_are_errors() {
    let empty = Figure {
        title: "nothing yet".into(),
        body: Body::Plot {
            x: Axis::linear("x"),
            y: Axis::log("y"),
            marks: vec![Mark::line(
                "all NaN",
                [0, 0, 0],
                vec![[f64::NAN, 1.0], [1.0, -1.0]],
                1.0,
                Dash::Solid,
            )],
        },
    };
    assert!(figure::svg(&empty, (300, 200)).is_ok());
    assert!(figure::png(&empty, (300, 200), 1.0).is_ok());
    assert!(figure::png(&plot(), (0, 200), 1.0).is_err());
    assert!(figure::png(&plot(), (300, 200), 0.0).is_err());
    assert!(figure::png(&plot(), (300, 200), f64::NAN).is_err());
    assert!(figure::svg(&plot(), (30000, 200)).is_err());
    assert!(
        figure::png(&plot(), (10_000, 10_000), 1.0).is_err(),
        "100 million pixels"
    );
}

#[test]
fn write_pair_writes_the_figure_its_pdf_its_png_and_its_caption() {
    let dir = tempfile::tempdir().unwrap();
    let mut set = basis_lab::output::OutputSet::new(dir.path(), "figures");
    let opts = figure::FigureOptions::new(figure::FigureSize::Double);
    figure::write_pair(&plot(), &mut set, "orientation", &opts).unwrap();
    let paths = set.commit().unwrap().written;
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    // (then the set's own list of the files it wrote)
    assert_eq!(
        names[..4],
        [
            "orientation.svg",
            "orientation.pdf",
            "orientation.png",
            "orientation.txt"
        ]
    );
    // The PDF's page is the double-column size: 7 × 3.5 in.
    let pdf = std::fs::read(&paths[1]).unwrap();
    assert!(String::from_utf8_lossy(&pdf).contains("/MediaBox [0 0 504 252]"));
    let png_bytes = std::fs::read(&paths[2]).unwrap();
    let (w, h, _) = png_size(&png_bytes);
    // Double column: 672 × 336 points at 3 pixels per point.
    assert_eq!((w, h), (2016, 1008));
    let caption = std::fs::read_to_string(&paths[3]).unwrap();
    assert!(caption.contains("Horizontal axis: "), "{caption}");
}

#[test]
fn a_line_of_one_point_is_drawn_as_a_dot_in_the_middle_of_the_plot() {
    let one = |points: Vec<[f64; 2]>| Figure {
        title: "one ε".into(),
        body: Body::Plot {
            x: Axis::log("ε"),
            y: Axis::linear("excess"),
            marks: vec![Mark::line("adam", [213, 94, 0], points, 3.0, Dash::Solid)],
        },
    };
    let svg = figure::svg(&one(vec![[1e-3, 0.25]]), (400, 300)).unwrap();
    assert_eq!(svg.matches("<circle").count(), 1, "{svg}");
    // Two points are a line, no dot.
    let svg = figure::svg(&one(vec![[1e-3, 0.25], [1e-2, 0.5]]), (400, 300)).unwrap();
    assert_eq!(svg.matches("<circle").count(), 0);
    // The one point sits in the middle of a padded range on both axes.
    let Body::Plot { x, y, marks } = &one(vec![[1e-3, 0.25]]).body else {
        unreachable!()
    };
    let ([x0, x1], [y0, y1]) = figure::plot_ranges(x, y, marks);
    assert_eq!(((x0 + x1) / 2.0, (y0 + y1) / 2.0), (-3.0, 0.25));
    assert!(x1 - x0 >= 1.0 && y1 - y0 >= 1.0, "{x0}..{x1}, {y0}..{y1}");
}
