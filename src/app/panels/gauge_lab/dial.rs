//! The dial tab: recovery along the anisotropy dial p from Adam (1) to scalar-Adam (0), beside
//! the paper's envelope.

use super::SweepTab;
use crate::sensing::zoo::figures as zoo_figures;

/// The dial tab.
pub fn tab() -> SweepTab {
    SweepTab::new(
        ("dial", "Anisotropy dial"),
        "dial",
        "Adam's denominator turned from per-coordinate (p = 1, Adam) to one shared scale (p = 0, scalar-Adam), 3·10⁴ steps at the dial's rate 1e-3.",
        (zoo_figures::dial_figure, None),
    )
}
