//! Checking an [`OptimizerSpec`] read from a preset, shared by the labs that take one.

use super::{Hyper, OptimizerSpec, REGISTRY};
use crate::validate::{FieldError, Range, check_real};

/// Checks one optimizer spec (registry name or chain, label, rate, hyperparameters) as every
/// lab's presets take it (a key-lab arm, an attention run's rule); fields are named
/// `{prefix}.lr` and so on.
///
/// # Errors
/// The first field out of its range, named, with the allowed values (for an unknown name, the
/// registered rules; for a chain that does not parse, the chain's error).
pub fn validate_spec(prefix: &str, arm: &OptimizerSpec) -> Result<(), FieldError> {
    let field = |f: &str| format!("{prefix}.{f}");
    if arm.info().is_none() {
        let text = &arm.optimizer;
        // Text with parentheses or `|`, or a transform's name, is meant as a chain.
        let chain_like =
            text.contains(['(', '|']) || super::transforms::transform(text.trim()).is_some();
        let message = match super::ChainSpec::parse(text) {
            Err(e) if chain_like => format!("chain: {e}"),
            _ => {
                let names: Vec<_> = REGISTRY.iter().map(|r| r.name).collect();
                format!(
                    "unknown optimizer `{text}`; allowed: {}, or a chain of transforms \
                     such as `clip_by_global_norm(1.0) | scale_by_adam()`",
                    names.join(", ")
                )
            }
        };
        return Err(FieldError::new(field("optimizer"), message));
    }
    if let Some(label) = &arm.label {
        let ok = !label.is_empty()
            && label.len() <= 32
            && !label.ends_with("_rot")
            && label
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
        if !ok {
            return Err(FieldError::new(
                field("label"),
                format!(
                    "label `{label}` must be 1..=32 characters of a-z, 0-9, _ or - and must not \
                     end in `_rot` (the suffix of rotated twins)"
                ),
            ));
        }
    }
    check_real(&field("lr"), arm.lr, Range::above(0.0, 1e6))?;
    // Every field, also those the rule ignores: a saved preset must load under any rule.
    for h in Hyper::ALL {
        if let (Some(range), Some(x)) = (h.range(), arm.value(h)) {
            check_real(&field(h.name()), x, range)?;
        }
    }
    Ok(())
}
