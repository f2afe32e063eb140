//! The gauge lab's sweep figures as [`Figure`]s: the zoo's recovery per rule (Table 2), the
//! anisotropy dial and the spectral tail, each beside the paper's values. The app's gauge-lab
//! tabs and `basis-lab zoo --figures` draw these.

use super::reference::{RECOVERED, is_reference};
use super::report::{
    PAPER_DIAL, PAPER_TAIL, PAPER_TAIL_RULES, class_gap, paper_base, paper_dial, summarise,
};
use super::{RunResult, ZooPreset};
use crate::figure::GREY;
use crate::figure::{Axis, Body, Dash, Figure, Mark, Rgb, rule_rgb, rule_title};

/// Colour of the gap between the classes (bluish green).
pub const GAP: Rgb = [0, 158, 115];
/// Colour of the convex reference (near black, drawn dotted: not a class of rules).
pub const REFERENCE_RGB: Rgb = [40, 40, 40];

/// The convex reference's recoveries in `runs` by τ (sorted), each with its mean and how many
/// instances recovered X*, of how many.
fn reference_by_tau(runs: &[RunResult]) -> Vec<(f64, f64, usize, usize)> {
    let mut taus: Vec<f64> = runs
        .iter()
        .filter(|r| is_reference(r))
        .map(|r| r.tau)
        .collect();
    taus.sort_by(f64::total_cmp);
    taus.dedup_by(|a, b| a.to_bits() == b.to_bits());
    taus.into_iter()
        .map(|tau| {
            let rec: Vec<f64> = runs
                .iter()
                .filter(|r| is_reference(r) && r.tau.to_bits() == tau.to_bits())
                .map(|r| r.recovery)
                .collect();
            let hit = rec.iter().filter(|&&x| x < RECOVERED).count();
            (tau, crate::metrics::mean_sd(&rec).0, hit, rec.len())
        })
        .collect()
}

/// The convex reference as a dotted horizontal line at its mean recovery (one τ), and the
/// sentence the figure's title adds about it (its mean and on how many instances it was
/// exact; the legend's room in a paper's column is for the short name); nothing without
/// reference rows.
fn reference_line(runs: &[RunResult]) -> Option<(Mark, String)> {
    let &[(_, mean, hit, all)] = &reference_by_tau(runs)[..] else {
        return None;
    };
    Some((
        Mark::hline("convex reference", REFERENCE_RGB, mean, Dash::Dotted),
        format!("convex reference (dotted) {mean:.3}, exact on {hit} of {all} instances"),
    ))
}

/// The zoo: each rule's mean recovery as a bar in the rule's colour, its class told by the
/// line across the bar's top (solid: gauge-equivariant, dashed: coordinate-wise), every seed as
/// a dot, the empty gap between the classes shaded when there is one, and the convex
/// reference's mean as a dotted line across when the runs hold it.
pub fn zoo_figure(runs: &[RunResult]) -> Figure {
    let summaries = summarise(runs);
    let mut marks = Vec::new();
    if let Some((top, bottom)) = class_gap(&summaries)
        && top < bottom
    {
        let n = summaries.len() as f64;
        marks.push(Mark::band(
            format!("the empty gap between the classes ({top:.3} … {bottom:.3})"),
            GAP,
            vec![-0.5, n - 0.5],
            vec![top, top],
            vec![bottom, bottom],
        ));
    }
    for (i, s) in summaries.iter().enumerate() {
        let c = rule_rgb(&s.rule, i);
        let mut bar = Mark::bars("", c, vec![[i as f64, s.recovery[0]]], 0.6);
        bar.opacity = 0.55;
        marks.push(bar);
        let dash = if s.equivariant {
            Dash::Solid
        } else {
            Dash::Dashed
        };
        let x = i as f64;
        marks.push(Mark::line(
            "",
            c,
            vec![[x - 0.3, s.recovery[0]], [x + 0.3, s.recovery[0]]],
            2.5,
            dash,
        ));
    }
    // The legend's entries for the classes, grey: every rule draws them in its own colour.
    for (eq, dash) in [(true, Dash::Solid), (false, Dash::Dashed)] {
        if summaries.iter().any(|s| s.equivariant == eq) {
            let name = if eq {
                "equivariant, mean"
            } else {
                "coordinate-wise, mean"
            };
            marks.push(Mark::line(name, GREY, Vec::new(), 2.5, dash));
        }
    }
    for (i, s) in summaries.iter().enumerate() {
        let dots: Vec<[f64; 2]> = runs
            .iter()
            .filter(|r| r.rule == s.rule && r.lr == s.lr)
            .enumerate()
            .map(|(k, r)| {
                let jitter = (k as f64 / s.seeds.max(1) as f64 - 0.5) * 0.3;
                [i as f64 + jitter, r.recovery]
            })
            .collect();
        marks.push(Mark::points("", rule_rgb(&s.rule, i), dots, 3.0));
    }
    // The legend's entry for the dots, grey as on screen: every class draws them.
    marks.push(Mark::points("one seed", GREY, Vec::new(), 3.0));
    let mut title = String::from(
        "Recovery error ‖UVᵀ − X*‖F / ‖X*‖F after training, per update rule (Table 2)",
    );
    if let Some((line, words)) = reference_line(runs) {
        marks.push(line);
        title = format!("{title}; {words}");
    }
    let names = summaries.iter().map(|s| rule_title(&s.rule)).collect();
    Figure {
        title,
        body: Body::Plot {
            x: Axis::categories("update rule (at its selected learning rate)", names),
            y: Axis::linear("recovery error").including(0.0),
            marks,
        },
    }
}

/// The dial: recovery (mean ± sd over seeds) along the anisotropy p, the paper's curve when
/// the preset runs the paper's problem (`paper_dial`), and the convex reference's mean dotted.
pub fn dial_figure(preset: &ZooPreset, runs: &[RunResult]) -> Figure {
    let summaries = summarise(runs);
    let mut pts: Vec<(f64, f64, f64)> = preset
        .rules
        .iter()
        .filter_map(|r| {
            let p = r.arg()?;
            let s = summaries.iter().find(|s| s.rule == r.name())?;
            Some((p, s.recovery[0], s.recovery[1]))
        })
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    let line: Vec<[f64; 2]> = pts.iter().map(|p| [p.0, p.1]).collect();
    // The dial's own colour (the registry's, as every view draws the dial).
    let c = rule_rgb("dial", 0);
    let mut marks = vec![
        Mark::band(
            "ours, ± sd",
            c,
            pts.iter().map(|p| p.0).collect(),
            pts.iter().map(|p| p.1 - p.2).collect(),
            pts.iter().map(|p| p.1 + p.2).collect(),
        ),
        Mark::line("ours, mean", c, line.clone(), 2.5, Dash::Solid),
        Mark::points(String::new(), c, line, 3.5),
    ];
    if paper_dial(preset) {
        marks.push(Mark::line(
            "the paper (3 seeds)",
            GREY,
            PAPER_DIAL.iter().rev().map(|p| [p.0, p.1]).collect(),
            1.5,
            Dash::Dashed,
        ));
    }
    let mut title = String::from("Recovery along the anisotropy dial");
    if let Some((line, words)) = reference_line(runs) {
        marks.push(line);
        title = format!("{title}; {words}");
    }
    Figure {
        title,
        body: Body::Plot {
            x: Axis::linear("anisotropy p (0 = scalar-Adam, 1 = Adam)"),
            y: Axis::linear("recovery").including(0.0),
            marks,
        },
    }
}

/// The spectral tail: each rule's recovery (mean ± sd) against the tail amplitude τ, for the
/// paper's problem (`paper_base`) the paper's curve dashed in the same colour, and the convex
/// reference's mean per τ dotted.
pub fn tail_figure(preset: &ZooPreset, runs: &[RunResult]) -> Figure {
    let summaries = summarise(runs);
    let with_paper = paper_base(preset);
    let mut marks = Vec::new();
    let mut paper_shown = false;
    for r in &preset.rules {
        let c = r.info().color;
        let mut pts: Vec<(f64, f64, f64)> = summaries
            .iter()
            .filter(|s| s.rule == r.name())
            .map(|s| (s.tau, s.recovery[0], s.recovery[1]))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        marks.push(Mark::band(
            String::new(),
            c,
            pts.iter().map(|p| p.0).collect(),
            pts.iter().map(|p| p.1 - p.2).collect(),
            pts.iter().map(|p| p.1 + p.2).collect(),
        ));
        marks.push(Mark::line(
            rule_title(&r.name()),
            c,
            pts.iter().map(|p| [p.0, p.1]).collect(),
            2.5,
            Dash::Solid,
        ));
        if let Some(k) = PAPER_TAIL_RULES
            .iter()
            .position(|n| *n == r.info().name)
            .filter(|_| with_paper)
        {
            let paper = PAPER_TAIL
                .iter()
                .map(|row| [row.0, [row.1, row.2, row.3, row.4][k]])
                .collect();
            // One legend entry for all the paper's curves keeps the legend short.
            marks.push(Mark::line(
                String::new(),
                lighter(c),
                paper,
                1.2,
                Dash::Dashed,
            ));
            paper_shown = true;
        }
    }
    if paper_shown {
        marks.push(Mark::line(
            "the paper (dashed)",
            GREY,
            Vec::new(),
            1.2,
            Dash::Dashed,
        ));
    }
    let reference = reference_by_tau(runs);
    if !reference.is_empty() {
        marks.push(Mark::line(
            "convex reference",
            REFERENCE_RGB,
            reference.iter().map(|r| [r.0, r.1]).collect(),
            1.5,
            Dash::Dotted,
        ));
    }
    Figure {
        title: "Recovery against the spectral tail".into(),
        body: Body::Plot {
            x: Axis::linear("tail amplitude τ"),
            y: Axis::linear("recovery").including(0.0),
            marks,
        },
    }
}

/// `c` mixed a third of the way to white (the paper's curves beside ours).
fn lighter(c: Rgb) -> Rgb {
    c.map(|v| (v as f64 + (255.0 - v as f64) / 3.0).round() as u8)
}

/// The figure that fits a sweep, named for its file: the dial's when its rules are dial
/// settings, the tail's when it sweeps τ, otherwise the zoo's bars.
pub fn figure(preset: &ZooPreset, runs: &[RunResult]) -> (String, Figure) {
    if preset.rules.iter().any(|r| r.arg().is_some()) {
        ("zoo_dial".into(), dial_figure(preset, runs))
    } else if preset.taus.len() > 1 {
        ("zoo_tail".into(), tail_figure(preset, runs))
    } else {
        ("zoo".into(), zoo_figure(runs))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::figure::assert_readable;
    use crate::sensing::zoo::{bundled_zoo, run_zoo};

    /// `name`'s bundled preset cut to one rule, one τ and one seed on a small problem.
    fn one_cell(name: &str) -> (ZooPreset, Vec<RunResult>) {
        let mut p = bundled_zoo(name);
        p.rules.truncate(1);
        p.taus.truncate(1);
        p.seeds = 1;
        p.budget = 30;
        p.problem.n = 8;
        p.problem.rank = 2;
        p.sizes.clear();
        p.validate().unwrap();
        let runs = run_zoo(&p, &|| {}, &AtomicBool::new(false));
        // One run and its instance's convex reference.
        assert_eq!(runs.len(), 2, "{name}");
        (p, runs)
    }

    #[test]
    fn every_zoo_figure_of_one_run_reads() {
        let (p, runs) = one_cell("zoo-paper");
        assert_readable(&zoo_figure(&runs));
        let (p_dial, dial) = one_cell("dial");
        assert_readable(&dial_figure(&p_dial, &dial));
        let (p_tail, tail) = one_cell("tail");
        assert_readable(&tail_figure(&p_tail, &tail));
        // The dispatcher picks the figure each preset is about (one τ is no tail).
        assert_eq!(figure(&p_tail, &tail).0, "zoo");
        assert_eq!(figure(&p, &runs).0, "zoo");
        assert_eq!(figure(&p_dial, &dial).0, "zoo_dial");
    }

    /// Every rule of the paper's zoo and of the tail at once (all the legend entries, names
    /// and paper curves a reader sees), small and short.
    #[test]
    fn the_whole_zoo_and_tail_figures_fit() {
        for name in ["zoo-paper", "tail"] {
            let mut p = bundled_zoo(name);
            p.seeds = 1;
            p.budget = 20;
            // The tail keeps the paper's problem, so its curves and their legend entry show.
            if name == "zoo-paper" {
                p.problem.n = 8;
                p.problem.rank = 2;
            }
            p.taus.truncate(2);
            p.rule_rates.0.clear();
            p.sizes.clear();
            p.validate().unwrap();
            let runs = run_zoo(&p, &|| {}, &AtomicBool::new(false));
            let (stem, f) = figure(&p, &runs);
            assert_eq!(stem, if name == "tail" { "zoo_tail" } else { "zoo" });
            let names = crate::figure::names(&f);
            assert_eq!(
                names.contains(&"the paper (dashed)"),
                name == "tail",
                "{names:?}"
            );
            assert_readable(&f);
        }
    }
}
