//! basis-lab: does the optimizer you train with leave fingerprints in the coordinate basis of
//! what a model learns, when the model itself cannot see the basis?
//!
//! The numerics (`model`, `optim`, `metrics`, `experiment`, `sensing`, `attention`, `preset`,
//! `share`, `rng`) are headless and import nothing from the GUI; `app` renders state and sends
//! commands.
//!
//! Doc comments cite the numerics reference in the repository, `docs/numerics.md`, as
//! "numerics §n": the model, every update rule, every metric, the twin protocol and the gauge
//! lab, with the formulas and a glossary of the names used here.
#![warn(missing_docs)]
// Printing goes through `console`, which reports a full or closed output instead of panicking.
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod app;
pub mod arith;
pub mod attention;
pub mod bench;
pub mod console;
pub mod experiment;
pub mod explainer;
pub mod figure;
pub mod history;
pub mod linalg;
pub mod link;
pub mod live;
pub mod matv5;
pub mod metrics;
pub mod model;
pub mod optim;
pub mod output;
pub mod preset;
pub mod reading;
pub mod rng;
pub mod sensing;
pub mod shard;
pub mod share;
pub mod tasks;
pub mod validate;
#[cfg(target_arch = "wasm32")]
pub mod web;
#[cfg(target_arch = "wasm32")]
pub mod web_worker;
