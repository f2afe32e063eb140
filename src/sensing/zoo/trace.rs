//! `zoo --trace`: everything needed to replay a small zoo's runs step by step outside this
//! program (the schema is in docs/numerics.md, "Zoo traces").

use nalgebra::DMatrix;
use serde_json::{Value, json};

use super::{Cell, FactorRun, ZooPreset};
use crate::optim::Hyper;
use crate::sensing::SensingProblem;

/// Largest problem side `zoo --trace` accepts: a trace holds every measurement matrix
/// (m·n² numbers per cell), so it is meant for small problems.
pub const MAX_TRACE_N: usize = 12;

/// Steps whose factors a trace records one by one (then only the final factors).
pub const TRACE_STEPS: usize = 10;

/// Version written into every trace.
pub const TRACE_SCHEMA: &str = "basis-lab zoo trace 1";

/// Checks that `preset` is small enough to trace: every size at most [`MAX_TRACE_N`]. The error
/// names the field and the size.
pub fn check_traceable(preset: &ZooPreset) -> Result<(), String> {
    let field = if preset.sizes.is_empty() {
        "problem.n"
    } else {
        "sizes"
    };
    match preset.size_values().into_iter().max() {
        Some(n) if n > MAX_TRACE_N => Err(format!(
            "--trace is for small problems (n ≤ {MAX_TRACE_N}, since a trace holds every \
             measurement matrix); this preset's `{field}` has n = {n}"
        )),
        _ => Ok(()),
    }
}

/// A matrix as a list of rows.
fn rows(a: &DMatrix<f64>) -> Value {
    Value::from(
        (0..a.nrows())
            .map(|i| Value::from(a.row(i).iter().copied().collect::<Vec<f64>>()))
            .collect::<Vec<Value>>(),
    )
}

/// The trace of every cell of `preset` (in [`ZooPreset::cells`] order): the JSON document
/// `zoo --trace` writes as `trace.json`. Errors when the preset is too large
/// ([`check_traceable`]).
pub fn trace_zoo(preset: &ZooPreset) -> Result<Value, String> {
    check_traceable(preset)?;
    let cells: Vec<Value> = preset
        .cells()
        .into_iter()
        .enumerate()
        .map(|(i, c)| trace_cell(preset, i, c))
        .collect();
    Ok(json!({
        "schema": TRACE_SCHEMA,
        "preset": preset,
        "cells": cells,
    }))
}

/// One cell: its problem, settings, initial factors, the factors after each of the first
/// [`TRACE_STEPS`] updates and at the end. The run is the same as the zoo's (same problem,
/// same seed, same stopping rules), so its end matches `zoo.csv`.
fn trace_cell(preset: &ZooPreset, index: usize, c: Cell) -> Value {
    let cfg = preset.config(c.size, c.tau, c.init);
    let problem = SensingProblem::new(&cfg, c.seed);
    let spec = c.rule.spec();
    let hypers: serde_json::Map<String, Value> = c
        .rule
        .info()
        .hypers
        .iter()
        .map(|&h| {
            let v = match h {
                Hyper::Polar => Value::from(format!("{:?}", spec.polar)),
                _ => Value::from(spec.value(h).unwrap_or(f64::NAN)),
            };
            (h.name().to_string(), v)
        })
        .collect();
    let budget = preset.budget_of(c.rule);
    let mut run = FactorRun::new(&problem, c.rule, c.lr, budget, c.seed, false)
        .with_schedule(c.schedule)
        .with_full_horizon(c.choice.full_horizon());
    let (u0, v0) = (rows(&run.params[0]), rows(&run.params[1]));
    let mut steps = Vec::new();
    let outcome = loop {
        let t = run.t;
        let lr = run.schedule.lr_at(c.lr, t, budget);
        if let Some(o) = run.step() {
            break o;
        }
        if steps.len() < TRACE_STEPS {
            steps.push(json!({
                "t": run.t,
                "lr": lr,
                "loss": run.loss,
                "u": rows(&run.params[0]),
                "v": rows(&run.params[1]),
            }));
        }
    };
    let operator: Vec<Value> = (0..problem.m())
        .map(|i| rows(&problem.measurement(i)))
        .collect();
    json!({
        "index": index,
        "rule": c.rule.name(),
        "optimizer": c.rule.info().name,
        "hypers": hypers,
        "schedule": format!("{:?}", c.schedule).to_lowercase(),
        "full_horizon": c.choice.full_horizon(),
        "lr": c.lr,
        "budget": budget,
        "check_every": super::CHECK_EVERY,
        "interpolated_below": super::INTERPOLATED,
        "diverged_above": super::DIVERGED,
        "seed": c.seed,
        "n": cfg.n,
        "rank": cfg.rank,
        "tau": cfg.tau,
        "init": cfg.init,
        "operator": operator,
        "y": problem.y,
        "target": rows(&problem.target),
        "u0": u0,
        "v0": v0,
        "steps": steps,
        "end": {
            "steps": run.t,
            "outcome": format!("{outcome:?}"),
            "loss": run.loss,
            "u": rows(&run.params[0]),
            "v": rows(&run.params[1]),
        },
    })
}
