//! Update rules composed from transforms (docs/numerics.md, "Transforms and chains"): the text
//! form, its parser, the [`Chain`] optimizer and the predicted class per lab.
//!
//! Text form: transforms joined by `|`, applied left to right, each `name(args)` with
//! positional or named (`b1=0.9`) arguments; an argument left out takes its default; the
//! parentheses may be left out when there are no arguments. At most [`MAX_TRANSFORMS`].
//! Example: `clip_by_global_norm(1.0) | scale_by_adam(b1=0.9, b2=0.999, eps=1e-8)`.

use nalgebra::DMatrix;

use super::transforms::{Action, ArgKind, Context, TRANSFORMS, Transform, TransformInfo};
use super::{Optimizer, axpby, check_shapes, ensure_like};

/// The most transforms a chain may have.
pub const MAX_TRANSFORMS: usize = 16;

/// The longest chain text accepted, in bytes.
pub const MAX_CHAIN_BYTES: usize = 2000;

/// Chains the GUI and `basis-lab check --bundled` offer: (name, text, source). NAdam is left
/// out: Dozat's rule applies a momentum-decay schedule and a look-ahead bias correction inside
/// Adam's step, which `trace(nesterov=true)` before `scale_by_adam` does not reproduce.
pub const BUNDLED_CHAINS: &[(&str, &str, &str)] = &[
    (
        "adamw",
        "scale_by_adam() | add_decayed_weights(0.01)",
        "Loshchilov & Hutter 2019",
    ),
    (
        "lamb",
        "scale_by_adam(eps=1e-6) | add_decayed_weights(0.01) | scale_by_trust_ratio()",
        "You et al. 2020",
    ),
    (
        "lars",
        "add_decayed_weights(1e-4) | scale_by_trust_ratio() | trace(0.9)",
        "You et al. 2017",
    ),
    ("soap", "scale_by_soap()", "Vyas et al. 2024"),
    (
        "normalized_gd",
        "normalize()",
        "GD along the unit direction",
    ),
    (
        "adam_global_clip",
        "clip_by_global_norm(1) | scale_by_adam()",
        "Adam after a global-norm clip",
    ),
    (
        "adam_coordinate_clip",
        "clip(0.01) | scale_by_adam()",
        "Adam after a per-coordinate clip",
    ),
    (
        "gd_coordinate_clip",
        "clip(0.001)",
        "GD with a per-coordinate clip (the paper's Section 10)",
    ),
    (
        "gd_global_clip",
        "clip_by_global_norm(0.001)",
        "GD with a global-norm clip (Section 10's repair)",
    ),
];

/// A lab of basis-lab, for the predicted and measured classes of a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lab {
    /// The key lab (delta-rule memory): the gauge acts as `W_K ↦ Q·W_K`.
    Key,
    /// The gauge lab (factored sensing): `(U, V) ↦ (UQ, VQ)`.
    Gauge,
    /// Attention: each head's rows of `W_Q` and `W_K` from the left.
    Attention,
}

impl Lab {
    /// The three labs in the order tables list them.
    pub const ALL: [Lab; 3] = [Lab::Key, Lab::Gauge, Lab::Attention];

    /// How the lab's gauge acts on the matrices the optimizer updates.
    pub fn action(self) -> Action {
        match self {
            Lab::Key | Lab::Attention => Action::Left,
            Lab::Gauge => Action::Right,
        }
    }

    /// The name tables and JSON use.
    pub fn name(self) -> &'static str {
        match self {
            Lab::Key => "key",
            Lab::Gauge => "gauge",
            Lab::Attention => "attention",
        }
    }
}

/// A chain text that does not parse: which transform (1-based position and name), which
/// argument, and what is allowed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ChainError {
    /// Position of the transform in the chain, from 1 (`None` for the chain as a whole).
    pub index: Option<usize>,
    /// The argument's name, when one is at fault.
    pub argument: Option<String>,
    /// The whole message, naming transform, index, argument and range.
    pub message: String,
}

/// One transform of a parsed chain with every argument's value (defaults filled in).
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// The transform.
    pub info: &'static TransformInfo,
    /// One value per [`TransformInfo::args`].
    pub args: Vec<f64>,
}

impl PartialEq for TransformInfo {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

/// A parsed chain: its transforms and their arguments. [`std::fmt::Display`] writes the
/// canonical text (arguments that differ from their defaults, named), which parses back to an
/// equal spec.
#[derive(Clone, Debug, PartialEq)]
pub struct ChainSpec {
    /// The transforms, applied left to right.
    pub steps: Vec<Step>,
}

fn known() -> String {
    TRANSFORMS
        .iter()
        .map(|t| t.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl ChainSpec {
    /// Parses the text form (see the module documentation). Errors name the transform by its
    /// position and name, the argument and its allowed values; an unknown name lists the known
    /// transforms.
    pub fn parse(text: &str) -> Result<ChainSpec, ChainError> {
        let whole = |message: String| ChainError {
            index: None,
            argument: None,
            message,
        };
        if text.len() > MAX_CHAIN_BYTES {
            return Err(whole(format!(
                "a chain is at most {MAX_CHAIN_BYTES} bytes long; this one has {}",
                text.len()
            )));
        }
        let pieces: Vec<&str> = text.split('|').collect();
        if text.trim().is_empty() {
            return Err(whole(format!(
                "a chain needs at least one transform; known: {}",
                known()
            )));
        }
        if pieces.len() > MAX_TRANSFORMS {
            return Err(whole(format!(
                "a chain has at most {MAX_TRANSFORMS} transforms; this one has {}",
                pieces.len()
            )));
        }
        let steps = pieces
            .iter()
            .enumerate()
            .map(|(i, p)| parse_step(i + 1, p.trim()))
            .collect::<Result<_, _>>()?;
        Ok(ChainSpec { steps })
    }

    /// A zero-state optimizer running this chain.
    pub fn build(&self) -> Chain {
        Chain {
            transforms: self.steps.iter().map(|s| (s.info.build)(&s.args)).collect(),
            u: Vec::new(),
        }
    }

    /// The transforms that do not commute with `action` (their names, in chain order; empty
    /// when the chain is predicted equivariant).
    pub fn blocking(&self, action: Action) -> Vec<&'static str> {
        self.steps
            .iter()
            .filter(|s| !(s.info.side)(&s.args).commutes(action))
            .map(|s| s.info.name)
            .collect()
    }

    /// Predicted equivariant under `action`: every transform commutes with it (a composition
    /// of maps that each commute with a rotation commutes with it). `false` means only "not
    /// guaranteed": such a chain may still be equivariant.
    pub fn predicted(&self, action: Action) -> bool {
        self.blocking(action).is_empty()
    }
}

/// A `0,` followed by a digit with no space between (`0,9`, `0,01`): in the text form a comma
/// separates arguments, so this reads as two; a decimal comma is far likelier. Returns the
/// number as written.
fn decimal_comma(args: &str) -> Option<&str> {
    let b = args.as_bytes();
    (1..b.len().saturating_sub(1)).find_map(|i| {
        let starts = i == 1 || !(b[i - 2].is_ascii_alphanumeric() || b[i - 2] == b'.');
        (b[i] == b',' && b[i - 1] == b'0' && starts && b[i + 1].is_ascii_digit()).then(|| {
            let end = (i + 1..b.len())
                .find(|&j| !b[j].is_ascii_digit())
                .unwrap_or(b.len());
            &args[i - 1..end]
        })
    })
}

fn parse_step(index: usize, text: &str) -> Result<Step, ChainError> {
    let (name, inner) = match text.find('(') {
        Some(open) => {
            let Some(rest) = text[open + 1..].strip_suffix(')') else {
                return Err(ChainError {
                    index: Some(index),
                    argument: None,
                    message: format!(
                        "transform {index} (`{}`): its arguments must end with `)`",
                        text[..open].trim()
                    ),
                });
            };
            (text[..open].trim(), Some(rest))
        }
        None => (text, None),
    };
    let Some(info) = super::transforms::transform(name) else {
        let message = if name.is_empty() {
            format!(
                "transform {index} is empty (nothing between two `|`, or a `|` at an end); \
                 known: {}",
                known()
            )
        } else {
            format!(
                "transform {index}: unknown transform `{name}`; known: {}",
                known()
            )
        };
        return Err(ChainError {
            index: Some(index),
            argument: None,
            message,
        });
    };
    let err = |argument: Option<&str>, message: String| ChainError {
        index: Some(index),
        argument: argument.map(str::to_string),
        message: format!("transform {index} (`{}`): {message}", info.name),
    };
    let mut args: Vec<Option<f64>> = vec![None; info.args.len()];
    let mut named_seen = false;
    let items = inner
        .map(|s| s.split(',').map(str::trim).collect::<Vec<_>>())
        .unwrap_or_default();
    let items = if items.len() == 1 && items[0].is_empty() {
        Vec::new()
    } else {
        items
    };
    if let Some(comma) = inner.and_then(decimal_comma) {
        return Err(err(
            None,
            format!(
                "`{comma}` looks like a decimal comma: write decimals with a point (`{}`); for \
                 two arguments put a space after the comma",
                comma.replace(',', ".")
            ),
        ));
    }
    // Positional ones counted before any is read (named ones are checked by name).
    let positional = items.iter().take_while(|i| !i.contains('=')).count();
    if positional > info.args.len() {
        return Err(err(
            None,
            match info.args.len() {
                0 => format!("takes no arguments; got {positional}"),
                1 => format!("takes at most 1 argument; got {positional}"),
                n => format!("takes at most {n} arguments; got {positional}"),
            },
        ));
    }
    for (k, item) in items.iter().enumerate() {
        let (slot, value) = match item.split_once('=') {
            Some((n, v)) => {
                named_seen = true;
                let n = n.trim();
                let Some(slot) = info.args.iter().position(|a| a.name == n) else {
                    let names: Vec<_> = info.args.iter().map(|a| a.name).collect();
                    let allowed = if names.is_empty() {
                        "it takes no arguments".to_string()
                    } else {
                        format!("its arguments are {}", names.join(", "))
                    };
                    return Err(err(Some(n), format!("no argument `{n}`; {allowed}")));
                };
                (slot, v.trim())
            }
            None => {
                if named_seen {
                    return Err(err(
                        None,
                        format!("positional argument `{item}` after a named one"),
                    ));
                }
                (k, *item)
            }
        };
        let arg = &info.args[slot];
        if args[slot].is_some() {
            return Err(err(
                Some(arg.name),
                format!("argument `{}` is given twice", arg.name),
            ));
        }
        let bad = || {
            err(
                Some(arg.name),
                format!(
                    "argument `{}`: `{value}` is not allowed; allowed {}",
                    arg.name,
                    arg.allowed()
                ),
            )
        };
        let x = match arg.kind {
            ArgKind::Real(range) | ArgKind::Whole(range) => {
                let x: f64 = value.parse().map_err(|_| bad())?;
                let whole = matches!(arg.kind, ArgKind::Whole(_));
                if !range.contains(x) || (whole && x.fract() != 0.0) {
                    return Err(bad());
                }
                x
            }
            ArgKind::Flag => match value {
                "true" => 1.0,
                "false" => 0.0,
                _ => return Err(bad()),
            },
            ArgKind::Choice(words) => {
                words.iter().position(|w| *w == value).ok_or_else(bad)? as f64
            }
        };
        args[slot] = Some(x);
    }
    Ok(Step {
        info,
        args: args
            .iter()
            .zip(info.args)
            .map(|(x, a)| x.unwrap_or(a.default))
            .collect(),
    })
}

impl std::fmt::Display for ChainSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, s) in self.steps.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            let args: Vec<String> = s
                .info
                .args
                .iter()
                .zip(&s.args)
                .filter(|(a, x)| a.default != **x)
                .map(|(a, &x)| format!("{}={}", a.name, a.text(x)))
                .collect();
            write!(f, "{}({})", s.info.name, args.join(", "))?;
        }
        Ok(())
    }
}

/// An update rule made of transforms: `u ← G`, each transform in turn, then
/// `W ← W − lr·u` (the learning rate and its schedule stay the caller's). Allocation-free after
/// the first call unless a transform says otherwise (Shampoo's and SOAP's refreshes, the SVD
/// polar factor).
#[derive(Clone)]
pub struct Chain {
    transforms: Vec<Box<dyn Transform>>,
    u: Vec<DMatrix<f64>>,
}

impl Optimizer for Chain {
    fn step(&mut self, params: &mut [DMatrix<f64>], grads: &[DMatrix<f64>], lr: f64) {
        check_shapes(params, grads);
        ensure_like(&mut self.u, params);
        for (u, g) in self.u.iter_mut().zip(grads) {
            u.copy_from(g);
        }
        let ctx = Context { params };
        for t in &mut self.transforms {
            t.apply(&mut self.u, &ctx);
        }
        for (p, u) in params.iter_mut().zip(&self.u) {
            axpby(p, -lr, u, 1.0);
        }
    }

    fn clone_box(&self) -> Box<dyn Optimizer> {
        Box::new(self.clone())
    }

    fn representable(&self, grads: &[DMatrix<f64>]) -> Result<(), String> {
        self.transforms
            .iter()
            .try_for_each(|t| t.representable(grads))
    }
}
