//! The explainer sections other than the controlled test. Each gives its idea in a few lines;
//! the interactive demos arrive with the explainer issue.

use eframe::egui::{self, RichText};

use crate::app::state::Section;

/// Draws section `s`.
pub fn ui(s: Section, ui: &mut egui::Ui) {
    ui.add_space(8.0);
    ui.heading(s.title());
    ui.add_space(10.0);
    let paragraphs: &[&str] = match s {
        Section::Model => &[
            "One trainable matrix W_K (d_k × V). Its columns, scaled to unit length, are the keys k_a.",
            "An episode writes k key → value pairs into a memory S (V_b × d_k) that starts at zero, \
             each write correcting S by its own prediction error: δ = e_b − S k_a, then S ← S + β δ k_aᵀ. \
             Afterwards every key is read back, r = S k_a, and scored by softmax(g·r) against its value.",
            "Training moves only W_K, with the exact gradient through every write. The optimizer \
             decides where the keys go; the delta rule does the remembering.",
        ],
        Section::NoFavouriteAxes => &[
            "Rotate every key by the same orthogonal Q and rotate the memory back (S′ = S Qᵀ): \
             every read S′ Q k_a = S k_a is unchanged, and so are the Gram matrix KᵀK and the loss.",
            "So the model cannot tell which way its coordinate axes point. If trained keys end up \
             lined up with the axes, the loss did not ask for it — something in the training did.",
        ],
        Section::Step => &[
            "Gradient descent rotates with the problem: rotate, then step, and you land where \
             stepping then rotating would have put you. Twins started at W0 and Q·W0 stay exact \
             rotations of each other.",
            "Adam divides every coordinate by its own running gradient scale. Squaring coordinate \
             by coordinate does not commute with rotation, and its first step is exactly sign \
             descent: every coordinate moves by the learning rate.",
        ],
        Section::WhyAxes => &[
            "A GD step is steepest descent in the Euclidean norm, whose unit ball is a sphere; a \
             sign step is steepest descent in the max norm, whose unit ball is a cube. A cube has \
             corners, and its corners point along the coordinate axes.",
            "The symmetries Adam keeps are the cube's: permuting coordinates and flipping their \
             signs. So it cannot prefer one axis, but it can prefer the axes as a set — which is \
             why A(K) = (1/V) Σ_a Σ_j k_aj⁴, blind to permutations and sign flips, is the measurement.",
        ],
        Section::Reading => &[
            "A rotation alone cannot change recall, so more axis-aligned keys are a fingerprint, \
             not a performance effect. Orientation can matter only through the key geometry (the \
             Gram matrix) that training reaches.",
            "Compare at a matched budget and at matched held-out loss: an A(K) difference that \
             survives matched loss is about representation; one that vanishes was about speed.",
        ],
        Section::BlindSpots => &[
            "The question comes from transformers: outlier channels appear under Adam and not \
             under SGD (Elhage et al., Anthropic, 2023; Caples & Neuhaus, 2024). This toy has an \
             exact symmetry that a transformer only approximates.",
            "Related work measures Adam's rotation sensitivity directly (Maes et al., 2024; \
             DePavia et al., 2025). Stronger equivariant controls exist (Muon; Shampoo and SOAP \
             adapt in a learned basis), sign descent isolates the cube geometry (Balles & Hennig, \
             2018; Kunstner et al., 2023), and ε, column norms and small d_k are confounds to control.",
        ],
        Section::GaugeLab => &[
            "Factored matrix sensing, W = U Vᵀ: the loss is unchanged by (U, V) → (UQ, VQ), and \
             nine optimizers split into gauge-equivariant and coordinate-wise classes.",
        ],
        Section::ControlledTest => &[],
    };
    for p in paragraphs {
        ui.label(RichText::new(*p).size(18.0));
        ui.add_space(8.0);
    }
    ui.add_space(10.0);
    ui.label(
        RichText::new(
            "The interactive part of this section is not built yet. The live experiment is in \
             “5  The controlled test”.",
        )
        .weak(),
    );
}
