//! Real-window screenshots under Xvfb of every section and every tab at a laptop's 1280 × 720
//! and a projector's 1024 × 768 (issue #13): each PNG must have the window's size and must not
//! be blank. The tabs are photographed as they open (`--no-analysis`: their analyses would take
//! many minutes), the live runs after a few steps of the classroom preset. The PNGs stay in
//! `target/tmp/screenshots/` to be looked at.
//!
//! About a minute and a half on two cores, so it runs in CI (`.ci/run`) rather than with every
//! `cargo test`: `cargo test --release --test screenshots -- --ignored`.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use basis_lab::app::panels::{section_ids, tab_ids};

/// The sizes photographed, in points (one pixel per point).
const SIZES: [(u32, u32); 2] = [(1280, 720), (1024, 768)];

/// Every view as (section, tab), in navigation order.
fn views() -> Vec<(&'static str, Option<&'static str>)> {
    let mut out = Vec::new();
    for s in section_ids() {
        let tabs = tab_ids(s).unwrap();
        if tabs.is_empty() {
            out.push((s, None));
        }
        out.extend(tabs.into_iter().map(|t| (s, Some(t))));
    }
    out
}

/// Why the PNG at `path` is not a `w` × `h` screenshot with something on it, if it is not.
fn blank_or_wrong(path: &Path, w: u32, h: u32) -> Option<String> {
    let img = match image::open(path) {
        Ok(i) => i.to_rgba8(),
        Err(e) => return Some(format!("cannot read: {e}")),
    };
    if img.dimensions() != (w, h) {
        return Some(format!("size {:?}, not {w}x{h}", img.dimensions()));
    }
    let mut counts = std::collections::HashMap::new();
    for p in img.pixels() {
        *counts.entry(p.0).or_insert(0usize) += 1;
    }
    let background = counts.values().copied().max().unwrap_or(0);
    let ink = (w * h) as usize - background;
    // Text alone gives hundreds of anti-aliased shades; a blank or one-colour window a few.
    if counts.len() < 64 || ink < (w * h) as usize / 50 {
        return Some(format!(
            "nearly blank: {} colours, {ink} pixels off the background",
            counts.len()
        ));
    }
    None
}

#[test]
#[ignore = "a minute and a half of real windows: run by .ci/run"]
fn every_section_and_tab_at_laptop_and_projector_sizes() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("screenshots");
    let began = Instant::now();
    let mut problems = Vec::new();
    let mut shots = 0;
    for (w, h) in SIZES {
        let sub = dir.join(format!("{w}x{h}"));
        std::fs::create_dir_all(&sub).unwrap();
        for (section, tab) in views() {
            let name = match tab {
                Some(t) => format!("{section}-{t}.png"),
                None => format!("{section}.png"),
            };
            let path = sub.join(&name);
            let _ = std::fs::remove_file(&path);
            let data = tempfile::tempdir().unwrap();
            let mut cmd = Command::new("xvfb-run");
            cmd.args(["-a", "-s", "-screen 0 1600x1200x24"])
                .arg(env!("CARGO_BIN_EXE_basis-lab"))
                .arg("--screenshot")
                .arg(&path)
                .args(["--panel", section, "--size", &format!("{w}x{h}")])
                .args([
                    "--preset",
                    "classroom",
                    "--run-steps",
                    "20",
                    "--no-analysis",
                ])
                .env("XDG_DATA_HOME", data.path());
            if let Some(t) = tab {
                cmd.args(["--tab", t]);
            }
            let out = cmd
                .output()
                .expect("xvfb-run (CI installs xvfb, see .ci/run)");
            shots += 1;
            if !out.status.success() {
                problems.push(format!(
                    "{w}x{h} {name}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            } else if let Some(why) = blank_or_wrong(&path, w, h) {
                problems.push(format!("{w}x{h} {name}: {why}"));
            }
        }
    }
    println!(
        "{shots} screenshots in {:.0} s, kept in {}",
        began.elapsed().as_secs_f64(),
        dir.display()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
