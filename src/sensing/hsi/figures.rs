//! Figure 5's view of Table 5 as [`Figure`]s: held-out RMSE and effective rank along the fit,
//! against the training loss (log axis, deeper to the right), mean ± sd bands over seeds, the
//! six levels marked, the paper's values just past the deepest level as dots with their sd.
//! The app's Hyperspectral tab and `basis-lab hsi --grid --figures` draw these.

use super::LEVELS;
use super::grid::{GridReport, RateSummary};
use super::report::{paper_entry, paper_rows};
use crate::figure::GREY;
use crate::figure::{Axis, Body, Dash, Figure, Mark, rule_title};
use crate::optim::optimizer_rgb;

/// The summaries a report shows: the rates the paper's rule picked, or every summary when no
/// pick is the paper's.
pub fn shown(report: &GridReport) -> Vec<&RateSummary> {
    let picked: Vec<&RateSummary> = report
        .summaries
        .iter()
        .filter(|s| s.picked_by.iter().any(|p| p.starts_with("paper")))
        .collect();
    if picked.is_empty() {
        report.summaries.iter().collect()
    } else {
        picked
    }
}

/// Whether the `i`-th shown summary repeats an earlier one's rule (GD's two grids may pick two
/// rates): drawn dashed so the two stay apart.
fn repeat(shown: &[&RateSummary], i: usize) -> bool {
    shown[..i].iter().any(|s| s.rule == shown[i].rule)
}

/// Title of the RMSE figure.
const RMSE_TITLE: &str = "held-out RMSE along the fit";
/// Title of the effective-rank figure.
const RANK_TITLE: &str = "effective rank of UVᵀ along the fit";

/// One path figure: `rmse` picks held-out RMSE (×1e-2) over effective rank.
pub fn path_figure(report: &GridReport, rmse: bool) -> Figure {
    let shown = shown(report);
    let paper = report
        .setups
        .first()
        .and_then(|s| paper_rows(s).first().copied());
    let scale = if rmse { 100.0 } else { 1.0 };
    let mut marks: Vec<Mark> = LEVELS
        .iter()
        .map(|&l| Mark::vline(String::new(), [190, 190, 190], l, Dash::Dotted))
        .collect();
    let deepest = LEVELS[LEVELS.len() - 1];
    for (i, s) in shown.iter().enumerate() {
        let c = optimizer_rgb(&s.rule, i);
        let pts: Vec<(f64, f64, f64)> = s
            .levels
            .iter()
            .filter_map(|l| {
                let stat = if rmse { l.test_rmse } else { l.erank }?;
                let x = l.level?;
                let ok = x > 0.0 && stat.mean.is_finite() && stat.sd.is_finite();
                ok.then_some((x, stat.mean * scale, stat.sd * scale))
            })
            .collect();
        let name = format!("{}, lr {}", rule_title(&s.rule), s.lr);
        if pts.len() >= 2 {
            marks.push(Mark::band(
                String::new(),
                c,
                pts.iter().map(|p| p.0).collect(),
                pts.iter().map(|p| p.1 - p.2).collect(),
                pts.iter().map(|p| p.1 + p.2).collect(),
            ));
        }
        let line: Vec<[f64; 2]> = pts.iter().map(|p| [p.0, p.1]).collect();
        let dash = if repeat(&shown, i) {
            Dash::Dashed
        } else {
            Dash::Solid
        };
        marks.push(Mark::line(name, c, line.clone(), 2.5, dash));
        marks.push(Mark::points(String::new(), c, line, 3.0));
        // The paper has one value per rule: drawn once, beside the rule's first rate.
        let entry = paper.filter(|_| !repeat(&shown, i)).and_then(|row| {
            if rmse {
                paper_entry(row, &s.rule)
            } else {
                (s.rule == "muon").then_some([row.muon_rank, 0.0])
            }
        });
        if let Some([m, sd]) = entry {
            // Just past the deepest level, one step per rule so the dots stay apart.
            let x = deepest / 10f64.powf(0.06 * (i as f64 + 1.0));
            marks.push(Mark::points(String::new(), c, vec![[x, m]], 5.0));
            if sd > 0.0 {
                marks.push(Mark::line(
                    String::new(),
                    c,
                    vec![[x, m - sd], [x, m + sd]],
                    1.5,
                    Dash::Solid,
                ));
            }
        }
    }
    // Legend entries for what every rule draws, grey: its band and the paper's value.
    marks.push(Mark::band(
        "± 1 sd (seeds)",
        GREY,
        Vec::new(),
        Vec::new(),
        Vec::new(),
    ));
    if paper.is_some() {
        marks.push(Mark::points(
            "the paper (≤ 1e-5, ± sd)",
            GREY,
            Vec::new(),
            5.0,
        ));
    }
    let y = if rmse {
        Axis::linear("held-out RMSE (×10⁻²)").including(0.0)
    } else {
        Axis::linear("effective rank").including(0.0)
    };
    Figure {
        title: if rmse { RMSE_TITLE } else { RANK_TITLE }.into(),
        body: Body::Plot {
            x: Axis::log("training loss (log scale, deeper to the right)").reversed(),
            y,
            marks,
        },
    }
}

/// Both path figures, named for files.
pub fn figures(report: &GridReport) -> Vec<(String, Figure)> {
    vec![
        ("hsi_rmse".into(), path_figure(report, true)),
        ("hsi_erank".into(), path_figure(report, false)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figure::Shape;
    use crate::sensing::hsi::grid::tiny_grid;

    /// A density-0.25 grid on the tiny scene (so the paper has a row for it), GD picked at a
    /// second rate too, as its two grids can give.
    fn report() -> GridReport {
        let mut r = tiny_grid(0.25, vec![1], vec![2]);
        let mut second = r.summaries[0].clone();
        second.lr *= 3.0;
        second.picked_by = vec!["paper:paper-cpu".into()];
        r.summaries.insert(1, second);
        r
    }

    fn paper_dots(f: &Figure) -> Vec<(&Mark, &[[f64; 2]])> {
        let Body::Plot { marks, .. } = &f.body else {
            panic!("a plot")
        };
        marks
            .iter()
            .filter_map(|m| match &m.shape {
                // The paper's dots are the large ones (the paths' markers are 3.0), the legend's
                // swatch has none.
                Shape::Points { points, radius } if *radius == 5.0 && !points.is_empty() => {
                    Some((m, &points[..]))
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_paper_is_drawn_once_per_rule_and_a_second_rate_dashed() {
        let r = report();
        let row = paper_rows(&r.setups[0])[0];
        let rmse = path_figure(&r, true);
        // The paper's dots: GD's and Muon's value once each, not one per GD rate.
        let paper: Vec<f64> = paper_dots(&rmse).iter().map(|(_, p)| p[0][1]).collect();
        assert_eq!(paper, vec![row.gd[0], row.muon[0]]);
        let rank = path_figure(&r, false);
        let paper: Vec<f64> = paper_dots(&rank).iter().map(|(_, p)| p[0][1]).collect();
        assert_eq!(paper, vec![row.muon_rank]);
        let Body::Plot { marks, .. } = &rmse.body else {
            unreachable!()
        };
        let dash = |name: &str| {
            marks.iter().find_map(|m| match m.shape {
                Shape::Line { dash, .. } if m.name == name => Some(dash),
                _ => None,
            })
        };
        let (first, second) = (r.summaries[0].lr, r.summaries[1].lr);
        assert_eq!(
            dash(&format!("Gradient descent, lr {first}")),
            Some(Dash::Solid)
        );
        assert_eq!(
            dash(&format!("Gradient descent, lr {second}")),
            Some(Dash::Dashed)
        );
        assert!(marks.iter().any(|m| m.name == "± 1 sd (seeds)"));
    }

    #[test]
    fn a_fit_that_reached_one_level_reads() {
        let mut r = report();
        for s in &mut r.summaries {
            s.levels.truncate(1);
        }
        for rmse in [true, false] {
            crate::figure::assert_readable(&path_figure(&r, rmse));
        }
    }
}
