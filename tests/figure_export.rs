//! Figure export from the window: every live plot has "Save figure…", and what it writes is
//! the plot alone at the plot's size times the screen's pixel density times the chosen
//! multiple (PNG), or an SVG that parses and names every series on screen.

use basis_lab::app::panels::controlled_test::{Export, LiveSettings, live_figure};
use basis_lab::app::widgets::plots::{FigureFormat, PrintFile, write_figure};
use basis_lab::app::{AppState, Settings};
use basis_lab::experiment::live::Command;
use basis_lab::experiment::run::run_history;
use basis_lab::experiment::{MAX_OUTPUT_BYTES, RunOptions, run_to_dir};
use basis_lab::figure;
use basis_lab::preset::Preset;
use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;

type State = Option<AppState>;

fn harness(ppp: f32) -> Harness<'static, State> {
    let settings = Settings {
        preset: Preset::load("default").unwrap(),
        speed: None,
        ..Settings::default()
    };
    Harness::builder()
        .with_size(egui::vec2(1600.0, 1000.0))
        .with_pixels_per_point(ppp)
        .build_ui_state(
            move |ui, state: &mut State| {
                let app = state.get_or_insert_with(|| AppState::new(ui.ctx(), settings.clone()));
                app.logic();
                app.ui(ui)
            },
            None,
        )
}

fn run_to(h: &mut Harness<'static, State>, steps: usize) {
    h.run_steps(2);
    h.state_mut()
        .as_mut()
        .unwrap()
        .lab
        .send(Command::Step(steps));
    for _ in 0..4000 {
        h.step();
        let a = h.state().as_ref().unwrap();
        if a.lab.history.step >= steps && a.lab.history.snapshot.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(h.state().as_ref().unwrap().lab.history.step >= steps);
    h.run_steps(3);
}

fn png_dims(path: &std::path::Path) -> (u32, u32) {
    let d = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let r = d.read_info().unwrap();
    (r.info().width, r.info().height)
}

#[test]
fn every_live_plot_offers_save_figure() {
    let mut h = harness(1.0);
    run_to(&mut h, 60);
    // (a), (b), (c) and the heatmaps (d).
    let menus = h.query_all_by_label("Save figure…").count();
    assert_eq!(menus, 4, "one Save figure… per live plot");
}

#[test]
fn saved_live_figures_have_the_plot_size_times_the_scale_and_name_every_series() {
    let mut h = harness(1.5);
    run_to(&mut h, 80);
    let dir = tempfile::tempdir().unwrap();
    let ctx = h.ctx.clone();
    let size = egui::vec2(520.0, 340.0);
    let app = h.state_mut().as_mut().unwrap();
    let d_k = app.lab.preset.d_k;
    let arms: Vec<String> = app
        .lab
        .history
        .arms
        .iter()
        .map(|a| a.label.name.clone())
        .collect();
    assert_eq!(arms.len(), 4);
    let settings = LiveSettings::default();
    for kind in [
        Some(Export::Orientation),
        Some(Export::Axis),
        Some(Export::Loss),
        None,
    ] {
        let (stem, fig) = live_figure(&app.lab, kind, &settings, d_k);
        for k in [1u8, 3] {
            let path = dir.path().join(format!("{stem}-{k}.png"));
            assert!(write_figure(
                &mut app.lab,
                &ctx,
                FigureFormat::Png(k),
                &path,
                size,
                &fig
            ));
            // 1.5 pixels per point × k.
            let scale = 1.5 * k as f32;
            assert_eq!(
                png_dims(&path),
                ((520.0 * scale) as u32, (340.0 * scale) as u32),
                "{stem} at {k}×"
            );
        }
        let path = dir.path().join(format!("{stem}.svg"));
        assert!(write_figure(
            &mut app.lab,
            &ctx,
            FigureFormat::Svg,
            &path,
            size,
            &fig
        ));
        let text = std::fs::read_to_string(&path).unwrap();
        let doc = roxmltree::Document::parse(&text).expect("well-formed SVG");
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(str::trim))
            .collect();
        for name in figure::names(&fig) {
            assert!(texts.contains(&name), "{stem}: {name} missing");
        }
        // Every arm appears by its display name in every figure of the run.
        for arm in &arms {
            let title = figure::arm_title(arm);
            assert!(
                texts.iter().any(|t| t.starts_with(title.as_str())),
                "{stem}: arm {title} missing from {texts:?}"
            );
        }
        // Sized for a paper: one column, 3.5 in wide whatever the plot's size on screen.
        let path = dir.path().join(format!("{stem}-single.svg"));
        let single = FigureFormat::Print(figure::FigureSize::Single, PrintFile::Svg);
        assert!(write_figure(&mut app.lab, &ctx, single, &path, size, &fig));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#"width="336" height="260""#), "{stem}");
        // The same as a PDF: a 3.5 × 2.7 in page (252 × 195 pt).
        let pdf_path = dir.path().join(format!("{stem}-single.pdf"));
        let pdf = FigureFormat::Print(figure::FigureSize::Single, PrintFile::Pdf);
        assert!(write_figure(&mut app.lab, &ctx, pdf, &pdf_path, size, &fig));
        let bytes = std::fs::read(&pdf_path).unwrap();
        assert!(bytes.starts_with(b"%PDF-"), "{stem}");
        let raw = String::from_utf8_lossy(&bytes);
        assert!(raw.contains("/MediaBox [0 0 252 195]"), "{stem}");
    }
}

/// `run --figures` and the app's Save figure… draw the same figure from the same run: each SVG
/// the command line writes is, byte for byte, what the app's builder draws from the history
/// the command line kept, with the rotation band, the 50-step loss average and the reference
/// lines the app shows.
#[test]
fn the_command_line_draws_the_apps_figures() {
    let mut preset = Preset::load("classroom").unwrap();
    preset.steps = 60;
    preset.eval_every = 20;
    let dir = tempfile::tempdir().unwrap();
    let opts = figure::FigureOptions::new(figure::FigureSize::Single);
    let run = RunOptions {
        trace: false,
        figures: Some(opts),
        max_output_bytes: MAX_OUTPUT_BYTES,
    };
    run_to_dir(&preset, dir.path(), run, &|_| {}).unwrap();
    let mut h = harness(1.0);
    h.run_steps(1);
    let app = h.state_mut().as_mut().unwrap();
    app.lab.history = run_history(&preset).unwrap();
    let norms = LiveSettings {
        show_norms: true,
        ..LiveSettings::default()
    };
    let views = [
        (Some(Export::Orientation), LiveSettings::default()),
        (Some(Export::Axis), LiveSettings::default()),
        (Some(Export::Loss), LiveSettings::default()),
        (Some(Export::Loss), norms),
        (None, LiveSettings::default()),
    ];
    let mut stems = Vec::new();
    for (kind, settings) in views {
        let (stem, fig) = live_figure(&app.lab, kind, &settings, preset.d_k);
        let cli = std::fs::read_to_string(dir.path().join(format!("{stem}.svg"))).unwrap();
        assert_eq!(figure::svg_as(&fig, &opts).unwrap(), cli, "{stem}");
        let names = figure::names(&fig).join("; ");
        match stem {
            "axis_concentration" => {
                // Arm 1's band (the app's default), over every evaluation and the end.
                assert!(names.contains("random rotations, 5–95%"), "{names}");
                assert!(names.contains("random directions, 3/(d_k+2)"), "{names}");
                let figure::Body::Plot { marks, .. } = &fig.body else {
                    panic!("a plot")
                };
                let figure::Shape::Band { x, .. } = &marks[0].shape else {
                    panic!("the band first: {:?}", marks[0].name)
                };
                assert_eq!(x, &[0.0, 20.0, 40.0, 60.0]);
            }
            "loss" => assert!(names.contains("training (50-step average)"), "{names}"),
            _ => {}
        }
        stems.push(stem);
    }
    assert_eq!(stems, basis_lab::experiment::run::RUN_FIGURES);
}
