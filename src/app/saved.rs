//! The saved settings (eframe's `app.ron`) read as untrusted input, like a preset: a file that
//! cannot be read is kept aside under another name before the app starts (eframe would start
//! with defaults and overwrite it at the next save), and the values of one that can be read are
//! checked, what fails being reset or dropped with a notice.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::lab::default_preset;
use crate::experiment::live::StopRule;
use crate::preset::{Preset, without_bom};

/// Everything restored at the next start (eframe persistence).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The experiment.
    pub preset: Preset,
    /// The id of the section shown.
    pub open: String,
    /// Dark theme.
    pub dark: bool,
    /// Target speed of the live run in steps per second; `None` is as fast as possible.
    pub speed: Option<f64>,
    /// When the live run pauses by itself.
    pub stop: StopRule,
    /// Each panel's own settings and kept results, as RON, by path (`test`, `test/eps`).
    pub panels: BTreeMap<String, String>,
    /// The user's zoom of the whole UI (Ctrl + = / − / 0), within [`ZOOM_RANGE`]. Default 1.
    pub zoom: f32,
}

/// The zoom factors the user may choose (Ctrl + = / −), in steps of [`ZOOM_STEP`].
pub const ZOOM_RANGE: std::ops::RangeInclusive<f32> = 0.5..=3.0;
/// How much one Ctrl + = or Ctrl + − changes the zoom.
pub const ZOOM_STEP: f32 = 0.1;

impl Default for Settings {
    fn default() -> Self {
        Self {
            preset: default_preset(),
            open: "test".into(),
            dark: false,
            speed: Some(200.0),
            stop: StopRule::default(),
            panels: BTreeMap::new(),
            zoom: 1.0,
        }
    }
}

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
                Ok(_) => match crate::output::write_atomic(file, without_bom(&text).as_bytes()) {
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

/// Checks the shell's settings restored from disk as the controls would: a valid preset, a
/// positive speed, a stop rule within its fields' ranges, a zoom within
/// [`ZOOM_RANGE`]. What fails is reset to its default;
/// returns one line per problem, for a notice. Each panel checks its own part (and its kept
/// results) in [`super::panel::Panel::load`].
pub fn sanitize(s: &mut Settings) -> Vec<String> {
    let mut notes = Vec::new();
    let defaults = Settings::default();
    if let Err(e) = s.preset.validate() {
        notes.push(format!(
            "the preset ({e}) was replaced by the default preset"
        ));
        s.preset = defaults.preset.clone();
    }
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
    if !ZOOM_RANGE.contains(&s.zoom) {
        notes.push(format!(
            "`zoom` {} is outside {}..={}; reset to {}",
            s.zoom,
            ZOOM_RANGE.start(),
            ZOOM_RANGE.end(),
            defaults.zoom
        ));
        s.zoom = defaults.zoom;
    }
    notes
}
