//! The saved settings (eframe's `app.ron`) read as untrusted input, like a preset: a file that
//! cannot be read is kept aside under another name before the app starts (eframe would start
//! with defaults and overwrite it at the next save), and the values of one that can be read are
//! checked, what fails being reset or dropped with a notice.

use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use super::state::Settings;
use crate::preset::without_bom;
use crate::sensing::zoo::Rule;

/// Largest settings file read: with every cached sweep it stays far below this.
pub const MAX_SAVED_BYTES: usize = 256 << 20;

/// The settings in the text of an `app.ron` (eframe's map of keys to RON strings; ours under
/// [`eframe::APP_KEY`], parsed as eframe parses it). `Ok(None)` when the map holds no settings
/// (a first start). Errors: the parser's message.
pub fn parse_app_ron(text: &str) -> Result<Option<Settings>, String> {
    if text.len() > MAX_SAVED_BYTES {
        return Err(format!(
            "{} bytes; at most {MAX_SAVED_BYTES} are read",
            text.len()
        ));
    }
    let map: HashMap<String, String> =
        ron::from_str(without_bom(text)).map_err(|e| e.to_string())?;
    map.get(eframe::APP_KEY)
        .map(|s| ron::from_str::<Settings>(s).map_err(|e| format!("the settings: {e}")))
        .transpose()
}

/// Checks `file` before eframe reads it. A file that starts with a byte-order mark is rewritten
/// without it. One that cannot be read as settings is renamed to `app.ron.unreadable` (or
/// `….unreadable.2`, … when that name is taken), so the app starts with defaults and the old
/// file survives; the returned notice says so. `None` when nothing was moved.
pub fn keep_unreadable_aside(file: &Path) -> Option<String> {
    let problem = match std::fs::read(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => e.to_string(),
        Ok(bytes) => match String::from_utf8(bytes) {
            Err(_) => "it is not UTF-8 text".into(),
            Ok(text) => match parse_app_ron(&text) {
                Err(e) => e,
                Ok(_) if text.len() == without_bom(&text).len() => return None,
                Ok(_) => match crate::experiment::output::write_atomic(
                    file,
                    without_bom(&text).as_bytes(),
                ) {
                    Ok(()) => return None,
                    Err(e) => {
                        format!("it starts with a byte-order mark and cannot be rewritten: {e}")
                    }
                },
            },
        },
    };
    let aside = free_name(file);
    Some(match std::fs::rename(file, &aside) {
        Ok(()) => format!(
            "The saved settings {} could not be read ({problem}); the file was kept as {} and \
             the app started with the defaults.",
            file.display(),
            aside.display()
        ),
        Err(e) => format!(
            "The saved settings {} could not be read ({problem}) nor moved aside ({e}); the app \
             started with the defaults and will replace the file when it saves.",
            file.display()
        ),
    })
}

/// `file.unreadable`, or the first of `file.unreadable.2`, `.3`, … that does not exist.
fn free_name(file: &Path) -> PathBuf {
    let base = format!("{}.unreadable", file.display());
    let mut name = PathBuf::from(&base);
    let mut n = 2;
    while name.exists() {
        name = PathBuf::from(format!("{base}.{n}"));
        n += 1;
    }
    name
}

/// Checks settings restored from disk as the controls and the library would: a valid preset,
/// every number within its control's range, valid live rules, and every cached result valid for
/// the preset it ran (see [`crate::sensing::zoo::ZooPreset::check_runs`],
/// [`crate::experiment::check_eps_points`], [`crate::experiment::check_dk_points`],
/// [`crate::experiment::matched::MatchedReport::check`]); the sweeps' aggregates are computed
/// again from their per-seed rows. What fails is reset to its default or dropped; returns one
/// line per problem, for a notice.
pub fn sanitize(s: &mut Settings) -> Vec<String> {
    let mut notes = Vec::new();
    let defaults = Settings::default();
    if let Err((field, msg)) = s.preset.validate() {
        notes.push(format!(
            "the preset (field `{field}`: {msg}) was replaced by the default preset"
        ));
        s.preset = defaults.preset.clone();
    }
    let mut count =
        |value: &mut usize, range: RangeInclusive<usize>, default: usize, name: &str| {
            if !range.contains(value) {
                notes.push(format!(
                    "`{name}` {value} is outside {}..={}; reset to {default}",
                    range.start(),
                    range.end()
                ));
                *value = default;
            }
        };
    count(&mut s.step_n, 1..=1_000_000, defaults.step_n, "step_n");
    count(
        &mut s.sweep_seeds,
        2..=256,
        defaults.sweep_seeds,
        "sweep_seeds",
    );
    let (g, a) = (&defaults.gauge, &defaults.analyses);
    count(&mut s.gauge.seeds, 1..=50, g.seeds, "gauge.seeds");
    count(
        &mut s.gauge.live_budget,
        200..=100_000,
        g.live_budget,
        "gauge.live_budget",
    );
    count(&mut s.analyses.seeds, 2..=64, a.seeds, "analyses.seeds");
    count(&mut s.analyses.levels, 1..=50, a.levels, "analyses.levels");
    if let Some(at) = s.stop.at_step
        && !(1..=100_000_000).contains(&at)
    {
        notes.push(format!(
            "`stop.at_step` {at} is outside 1..=100000000; cleared"
        ));
        s.stop.at_step = None;
    }
    if let Some(l) = s.stop.heldout_loss_below
        && !(l.is_finite() && (1e-6..=100.0).contains(&l))
    {
        notes.push(format!(
            "`stop.heldout_loss_below` {l} is outside [1e-6, 100]; cleared"
        ));
        s.stop.heldout_loss_below = None;
    }
    if let Some(v) = s.speed
        && !(v.is_finite() && v > 0.0)
    {
        notes.push(format!("`speed` {v} is not a positive speed; reset"));
        s.speed = defaults.speed;
    }
    let before = s.gauge.live_rules.len();
    s.gauge
        .live_rules
        .retain(|r| !matches!(r, Rule::Dial(p) if !(p.is_finite() && (0.0..=1.0).contains(p))));
    if s.gauge.live_rules.len() != before {
        notes.push("a live-run dial rule with p outside [0, 1] was removed".into());
    }
    for (name, cache) in [
        ("zoo", &mut s.gauge.zoo),
        ("dial", &mut s.gauge.dial),
        ("tail", &mut s.gauge.tail),
    ] {
        if let Some(Err(e)) = cache.as_ref().map(|c| c.preset.check_runs(&c.runs)) {
            notes.push(format!(
                "the saved gauge-lab {name} sweep was dropped ({e})"
            ));
            *cache = None;
        }
    }
    let an = &mut s.analyses;
    an.eps = match an.eps.take().map(crate::experiment::check_eps_points) {
        Some(Err(e)) => {
            notes.push(format!("the saved ε sweep was dropped ({e})"));
            None
        }
        kept => kept.and_then(Result::ok),
    };
    an.dk = match an.dk.take().map(crate::experiment::check_dk_points) {
        Some(Err(e)) => {
            notes.push(format!("the saved d_k sweep was dropped ({e})"));
            None
        }
        kept => kept.and_then(Result::ok),
    };
    if let Some(Err(e)) = an.matched.as_ref().map(|(p, r)| r.check(p)) {
        notes.push(format!("the saved matched comparison was dropped ({e})"));
        an.matched = None;
    }
    notes
}
