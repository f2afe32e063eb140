//! Every view of the app. A section is one file or folder here plus one line in [`sections`];
//! a tab is one file in its section's folder plus one line in that section's list.

pub mod attention;
pub mod controlled_test;
pub mod desktop_only;
pub mod explainer;
pub mod gauge_lab;

use crate::app::panel::Panel;
pub use desktop_only::{DesktopOnly, desktop_only};

/// Why the attention twins are desktop-only in the web build.
pub const ATTENTION_WHY: &str = "The attention twins train about ten small transformers side by \
    side; one step of all of them takes seconds on a page's single thread, so the page would \
    freeze between frames. Every other section and tab runs here; this one waits for its training \
    to move into a Web Worker, as the sweeps' has.";

/// The sections of the navigation, in order.
pub fn sections() -> Vec<Box<dyn Panel>> {
    vec![
        Box::new(explainer::Chapter::model()),
        Box::new(explainer::Chapter::axes()),
        Box::new(explainer::Chapter::step()),
        Box::new(explainer::Chapter::why()),
        Box::new(controlled_test::ControlledTest::default()),
        Box::new(explainer::Chapter::reading()),
        Box::new(explainer::Chapter::blind_spots()),
        Box::new(gauge_lab::GaugeLab::default()),
        desktop_only(
            Box::new(attention::AttentionTwins::default()),
            ATTENTION_WHY,
        ),
    ]
}

/// The ids of the sections, in order (what `--panel` accepts).
pub fn section_ids() -> Vec<&'static str> {
    sections().iter().map(|s| s.id()).collect()
}

/// The ids of the tabs of section `section`, in order; `None` for an unknown section (empty
/// for one without tabs).
pub fn tab_ids(section: &str) -> Option<Vec<&'static str>> {
    let s = sections().into_iter().find(|s| s.id() == section)?;
    Some(
        s.tabs()
            .map_or(Vec::new(), |t| t.iter().map(|t| t.id()).collect()),
    )
}
