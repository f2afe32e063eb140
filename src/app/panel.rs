//! The one shape every view has, in the manner of egui's demo library and Rerun's panels: a
//! [`Panel`] owns its settings and its runtime (jobs, textures) and draws itself from what it
//! owns and the shared [`Lab`]. Sections and their tabs are both panels; [`Tabs`] is the
//! ordered list a section steps through.

use std::any::Any;

use eframe::egui;

use super::lab::Lab;

/// A section of the navigation, or a tab of one.
pub trait Panel: Any {
    /// Short stable name: the command line's `--panel` and `--tab`, and the key its settings
    /// are saved under.
    fn id(&self) -> &'static str;

    /// The label in the navigation or the tab bar.
    fn title(&self) -> &'static str;

    /// Whether the navigation draws a line above this section (it starts a new group).
    fn separated(&self) -> bool {
        false
    }

    /// Runs every frame, shown or not: collects what background work has finished.
    fn logic(&mut self, _lab: &mut Lab) {}

    /// Draws the panel into the space it gets.
    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab);

    /// Whether the panel has a column on the right (the controlled test's settings).
    fn has_side(&self) -> bool {
        false
    }

    /// Draws that column.
    fn side_ui(&mut self, _ui: &mut egui::Ui, _lab: &mut Lab) {}

    /// Starts the panel's background analysis, as its main button does (screenshot mode opens a
    /// panel and starts it). Returns whether the panel has an analysis of its own (even when its
    /// settings kept it from starting, which the panel or a notice says); false for a panel
    /// without one, where nothing happened (a link's `play` then plays the key lab's live run,
    /// in the key lab's views).
    fn start(&mut self, _lab: &mut Lab) -> bool {
        false
    }

    /// Where the panel's work stands ([`Status`]): the default is idle, with nothing to run.
    fn status(&self, _lab: &Lab) -> Status {
        Status::default()
    }

    /// The table of the panel's last result as its Save-table button writes it (see
    /// [`Table`]); `None` without one. A page link with `&csv` downloads it once the run ends.
    fn table(&self) -> Option<Table> {
        None
    }

    /// Loads a link's share string of the panel's own preset kind (`ba1:…` for the attention
    /// twins); `None` if it is not of that kind, else the loaded preset's name or why it was
    /// refused. The key lab's presets (`bl1:…`) go to the lab itself, not to a panel.
    fn open_shared(&mut self, _text: &str) -> Option<Result<String, String>> {
        None
    }

    /// The share string of the panel's own preset (`ba1:…`, `bz1:…`), for a link to it; `None`
    /// for a panel that runs the key lab's preset (the link then carries that one).
    fn share(&self) -> Option<String> {
        None
    }

    /// The settings a link to the panel carries beside its preset (`&seeds=8`), as
    /// `(name, value)` pairs that [`Panel::set_from_link`] reads back.
    fn link_settings(&self) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    /// Applies the link setting `name=value` (see [`Panel::link_settings`]): `Ok(true)` once
    /// applied, `Ok(false)` for a name the panel has no setting of (a link may carry other
    /// parameters, such as a mail program's tracking ones).
    ///
    /// # Errors
    /// A value the panel does not take (the message names the setting and what it takes).
    fn set_from_link(&mut self, _name: &str, _value: &str, _lab: &mut Lab) -> Result<bool, String> {
        Ok(false)
    }

    /// The panel's tabs, for a section that has them.
    fn tabs(&self) -> Option<&Tabs> {
        None
    }

    /// The same, to change.
    fn tabs_mut(&mut self) -> Option<&mut Tabs> {
        None
    }

    /// The panel's settings and kept results as RON text, for the next start.
    fn save(&self) -> Option<String> {
        None
    }

    /// Restores what [`Panel::save`] wrote, checked like any input the user could have edited
    /// (see [`super::saved`]): values out of their control's range are reset and kept results
    /// that fail their check are dropped, one line per problem in the returned list. Errors
    /// (text that does not parse: an older or damaged file) leave the panel as it was.
    fn load(&mut self, _ron: &str) -> Result<Vec<String>, String> {
        Ok(Vec::new())
    }
}

/// Where a panel's work stands, as the shell, screenshot mode and the page read it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// The panel still waits for something: work it started, or the live run it shows.
    pub busy: bool,
    /// The panel is an analysis with nothing to show: never run (or cleared) and not running.
    /// Presentation mode's bar then offers to run it or to skip to the next view.
    pub awaits_run: bool,
    /// The step the panel's own live run has reached (the gauge lab's live runs, the attention
    /// twins); `None` for a panel without one, or before its first measured step. The page
    /// publishes it for the tests that drive it (`data-live-step`).
    pub live_step: Option<usize>,
}

/// A table a panel saves: the file name it proposes and its CSV bytes (or why they could not be
/// written).
pub type Table = (String, Result<Vec<u8>, csv::Error>);

/// A link's count setting `name=value` read as a whole number in `range`.
///
/// # Errors
/// Not a whole number, or outside `range`; the message names the setting and the range.
pub fn link_count(
    name: &str,
    value: &str,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize, String> {
    value
        .trim()
        .parse()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| {
            format!(
                "`{name}={value}` is not a whole number in {}..={}",
                range.start(),
                range.end()
            )
        })
}

/// A panel's settings as RON for [`Panel::save`].
pub fn to_ron<T: serde::Serialize>(value: &T) -> Option<String> {
    ron::to_string(value).ok()
}

/// Settings from RON for [`Panel::load`].
pub fn from_ron<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, String> {
    ron::from_str(text).map_err(|e| e.to_string())
}

/// The tabs of a section, in order, and which one is open.
pub struct Tabs {
    list: Vec<Box<dyn Panel>>,
    open: usize,
}

impl Tabs {
    /// The tabs in display order; the first is open. Panics on an empty list.
    pub fn new(list: Vec<Box<dyn Panel>>) -> Self {
        assert!(!list.is_empty(), "a section with tabs has at least one");
        Self { list, open: 0 }
    }

    /// Every tab, in order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn Panel> {
        self.list.iter().map(|t| t.as_ref())
    }

    /// Every tab, in order, to change.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Box<dyn Panel>> {
        self.list.iter_mut()
    }

    /// The open tab.
    pub fn open(&self) -> &dyn Panel {
        self.list[self.open].as_ref()
    }

    /// The open tab, to change.
    pub fn open_mut(&mut self) -> &mut dyn Panel {
        self.list[self.open].as_mut()
    }

    /// Opens the tab called `id`; false (and nothing changes) if there is none.
    pub fn select(&mut self, id: &str) -> bool {
        match self.list.iter().position(|t| t.id() == id) {
            Some(i) => {
                self.open = i;
                true
            }
            None => false,
        }
    }

    /// The tab called `id`.
    pub fn find_mut(&mut self, id: &str) -> Option<&mut dyn Panel> {
        self.list
            .iter_mut()
            .find(|t| t.id() == id)
            .map(|t| t.as_mut())
    }

    /// The tab bar: one selectable label per tab, wrapping onto a second line when narrow.
    pub fn bar(&mut self, ui: &mut egui::Ui) {
        super::widgets::reflow::controls_row(ui, |ui| {
            for (i, t) in self.list.iter().enumerate() {
                if ui.selectable_label(self.open == i, t.title()).clicked() {
                    self.open = i;
                }
            }
        });
    }

    /// Every tab's per-frame logic.
    pub fn logic(&mut self, lab: &mut Lab) {
        for t in &mut self.list {
            t.logic(lab);
        }
    }
}
