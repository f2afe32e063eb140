//! A real window under Xvfb: `basis-lab --screenshot` runs 300 steps of the default preset and
//! saves a PNG, which must have the window's size and show the plots in the optimizers'
//! colours. Skipped (with a message) only where xvfb-run is missing outside CI.

use std::process::Command;

fn has_xvfb() -> bool {
    Command::new("sh")
        .args(["-c", "command -v xvfb-run"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Pixels within a small distance of `rgb`.
fn count_near(img: &image::RgbaImage, rgb: [u8; 3]) -> usize {
    img.pixels()
        .filter(|p| (0..3).all(|i| (p[i] as i32 - rgb[i] as i32).abs() <= 12))
        .count()
}

#[test]
fn screenshot_of_a_real_window_shows_populated_plots() {
    if !has_xvfb() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install xvfb (see .ci/run)"
        );
        eprintln!("xvfb-run not found: skipping the real-window smoke test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let out = Command::new("xvfb-run")
        .args(["-a", "-s", "-screen 0 2400x1600x24"])
        .arg(env!("CARGO_BIN_EXE_basis-lab"))
        .arg("--screenshot")
        .arg(&shot)
        .args(["--preset", "presets/default.ron", "--run-steps", "300"])
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let img = image::open(&shot).unwrap().to_rgba8();
    assert_eq!(img.dimensions(), (1920, 1200));
    let first = *img.get_pixel(0, 0);
    let differing = img.pixels().filter(|p| **p != first).count();
    assert!(differing > 100_000, "the screenshot is nearly blank");
    // GD blue and Adam vermilion lines, legends and table entries.
    assert!(
        count_near(&img, [0, 114, 178]) > 500,
        "no GD blue in the plots"
    );
    assert!(
        count_near(&img, [213, 94, 0]) > 500,
        "no Adam vermilion in the plots"
    );
}
