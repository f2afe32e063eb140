//! The tail tab: recovery against the spectral-tail amplitude τ for GD, Adam, Muon and
//! Shampoo, beside the paper's Table 4.

use super::SweepTab;
use crate::sensing::zoo::figures as zoo_figures;

/// The tail tab.
pub fn tab() -> SweepTab {
    SweepTab::new(
        ("tail", "Spectral tail"),
        "tail",
        "Targets with τ² of their energy outside rank 3; GD, Adam, Muon and Shampoo at their Table 2 rates.",
        (zoo_figures::tail_figure, None),
    )
}
