//! One module per view; each draws from [`crate::app::state::AppState`] and sends commands.

pub mod analyses;
pub mod controlled_test;
pub mod demos;
pub mod explainer_text;
pub mod gauge_lab;
pub mod settings;
