//! Every view of the app. A section is one file or folder here plus one line in [`sections`];
//! a tab is one file in its section's folder plus one line in that section's list.

pub mod attention;
pub mod controlled_test;
pub mod explainer;
pub mod gauge_lab;
pub mod workbench;

use crate::app::panel::Panel;

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
        Box::new(attention::AttentionTwins::default()),
        Box::new(workbench::Workbench::default()),
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
