//! What the web build shows in place of a section that does not fit in a page yet: the
//! attention twins, whose training steps would block the page's frame loop. Same id and
//! title as the panel it replaces (so links, saved settings and the navigation stay the same),
//! and a note saying why and how to get the desktop app.

use eframe::egui::{self, RichText};

use crate::app::lab::Lab;
use crate::app::panel::Panel;

/// Where the desktop app's two set-up commands are explained.
pub const INSTALL_URL: &str = "https://rustup.rs";

/// A note standing in for a panel that runs in the desktop app only.
pub struct DesktopOnly {
    id: &'static str,
    title: &'static str,
    separated: bool,
    why: &'static str,
}

impl DesktopOnly {
    /// A note in place of `panel`, saying `why` it needs the desktop app.
    pub fn new(panel: &dyn Panel, why: &'static str) -> Self {
        Self {
            id: panel.id(),
            title: panel.title(),
            separated: panel.separated(),
            why,
        }
    }

    /// Why the panel needs the desktop app.
    pub fn why(&self) -> &'static str {
        self.why
    }
}

impl Panel for DesktopOnly {
    fn id(&self) -> &'static str {
        self.id
    }

    fn title(&self) -> &'static str {
        self.title
    }

    fn separated(&self) -> bool {
        self.separated
    }

    fn ui(&mut self, ui: &mut egui::Ui, _lab: &mut Lab) {
        ui.add_space(8.0);
        ui.label(RichText::new(self.title.trim()).heading());
        ui.add_space(6.0);
        ui.label(RichText::new("Desktop only").strong());
        ui.label(self.why);
        ui.add_space(6.0);
        ui.horizontal_wrapped(|ui| {
            ui.label("The desktop app runs it: install Rust from");
            ui.hyperlink_to("rustup.rs", INSTALL_URL);
            ui.label("then, in a clone of basis-lab, `cargo run --release`.");
        });
    }
}

/// `panel` as it is in the desktop build; in the web build, a [`DesktopOnly`] note in its
/// place saying `why`.
pub fn desktop_only(panel: Box<dyn Panel>, why: &'static str) -> Box<dyn Panel> {
    if cfg!(target_arch = "wasm32") {
        Box::new(DesktopOnly::new(panel.as_ref(), why))
    } else {
        panel
    }
}
