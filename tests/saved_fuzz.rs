//! Saved state and shards are input too: 10,000 mutations of real files — an `app.ron` holding
//! every kind of cached result, and the shard files of a zoo and of a seed sweep — never
//! panic, whether read as the app reads them (parse, check, then summarise what survives) or
//! merged as `merge` does. Whatever survives the checks is what an unmutated run could have
//! produced: in range, and consistent with its preset's cells. Mutated settings are also drawn
//! in every view that shows a cached result.

mod common;

use std::sync::atomic::AtomicBool;

use basis_lab::app::analysis::Finished;
use basis_lab::app::panel::Panel;
use basis_lab::app::panels::controlled_test::{DkSweep, EpsSweep, Matched, SeedSweep};
use basis_lab::app::panels::gauge_lab::SweepTab;
use basis_lab::app::panels::sections;
use basis_lab::app::saved::{parse_app_ron, sanitize};
use basis_lab::app::shell::{find_panel, find_panel_mut, load_panels, save_panels};
use basis_lab::app::{AppState, Settings};
use basis_lab::experiment::matched::matched_report;
use basis_lab::experiment::{AdamEps, KeyDim, SweepTask, points_sweep, sweep};
use basis_lab::preset::Preset;
use basis_lab::sensing::SensingConfig;
use basis_lab::sensing::zoo::{Rule, ZooPreset, ZooTask, class_gap, markdown, run_zoo, summarise};
use basis_lab::shard::{Job, Merged, Shard, ZooRuns, merge, parse_shard, run_shard};
use common::app_ron;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The zoo rules of registry entries `names`.
fn rules(names: &[&str]) -> Vec<Rule> {
    names.iter().map(|n| Rule::named(n).unwrap()).collect()
}

/// A tiny preset of the key lab: two arms, a few steps.
fn tiny() -> Preset {
    Preset {
        steps: 12,
        eval_every: 4,
        n_heldout: 8,
        baseline_rotations: 6,
        ..Preset::load("classroom").unwrap()
    }
}

fn zoo(rules: Vec<Rule>, taus: Vec<f64>, twins: bool) -> ZooPreset {
    ZooPreset {
        name: "z".into(),
        problem: SensingConfig {
            n: 6,
            rank: 1,
            ..SensingConfig::default()
        },
        budget: 40,
        seeds: 2,
        rules,
        taus,
        twins,
        ..ZooPreset::default()
    }
}

/// The gauge lab's sweep tabs, by path.
const GAUGE_TABS: [&str; 3] = ["gauge/zoo", "gauge/dial", "gauge/tail"];

/// An `app.ron` as eframe writes it, with a kept result in every tab that keeps one: the gauge
/// lab's zoo, dial and tail sweeps, and the seed, ε and d_k sweeps and matched comparison.
fn saved_app() -> String {
    let never = AtomicBool::new(false);
    let p = tiny();
    let mut panels = sections();
    let dial = vec![
        Rule::named("dial").unwrap().with_arg(1.0),
        Rule::named("dial").unwrap().with_arg(0.0),
    ];
    for (path, z) in GAUGE_TABS.into_iter().zip([
        zoo(rules(&["gd", "adam"]), Vec::new(), true),
        zoo(dial, Vec::new(), false),
        zoo(rules(&["gd"]), vec![0.0, 0.1], false),
    ]) {
        let result = run_zoo(&z, &|| {}, &never);
        find_panel_mut::<SweepTab>(&mut panels, path)
            .unwrap()
            .analysis
            .last = Some(Finished { inputs: z, result });
    }
    let keep = |p: &Preset| p.clone();
    find_panel_mut::<SeedSweep>(&mut panels, "test/sweep")
        .unwrap()
        .analysis
        .last = Some(Finished {
        inputs: keep(&p),
        result: sweep(&p, 2, &|| {}).unwrap(),
    });
    find_panel_mut::<EpsSweep>(&mut panels, "test/eps")
        .unwrap()
        .analysis
        .last = Some(Finished {
        inputs: keep(&p),
        result: points_sweep::<AdamEps>(&p, &[1e-8, 1e-2], 2, &|| {}, &never).unwrap(),
    });
    find_panel_mut::<DkSweep>(&mut panels, "test/dk")
        .unwrap()
        .analysis
        .last = Some(Finished {
        inputs: keep(&p),
        result: points_sweep::<KeyDim>(&p, &[4, 8], 2, &|| {}, &never).unwrap(),
    });
    find_panel_mut::<Matched>(&mut panels, "test/matched")
        .unwrap()
        .analysis
        .last = Some(Finished {
        inputs: keep(&p),
        result: matched_report(&p, 3).unwrap(),
    });
    app_ron(&Settings {
        panels: save_panels(&panels),
        ..Settings::default()
    })
}

/// The sections of the app, each a panel with its tabs.
type Panels = Vec<Box<dyn Panel>>;

/// The panels as the app restores them from the text of an `app.ron`, with the problems its
/// notice would list; `None` when the text is not a settings file (the app keeps it aside).
fn read_as_app(text: &str) -> Option<(Panels, Vec<String>)> {
    let mut s = parse_app_ron(text).ok()??;
    let mut notes = sanitize(&mut s);
    let mut panels = sections();
    notes.extend(load_panels(&mut panels, &s.panels));
    Some((panels, notes))
}

/// Both shards of a 2-way split of `job`, as text.
fn shards(job: &Job) -> [String; 2] {
    [0, 1].map(|index| {
        let out = run_shard(
            job,
            Shard { index, count: 2 },
            &|| {},
            &AtomicBool::new(false),
        );
        ron::ser::to_string(&out.unwrap()).unwrap()
    })
}

/// Start offsets of the numbers in `text` (a digit or a minus sign after a delimiter).
fn numbers(text: &str) -> Vec<usize> {
    let b = text.as_bytes();
    (1..b.len())
        .filter(|&i| {
            (b[i].is_ascii_digit() || b[i] == b'-')
                && matches!(b[i - 1], b':' | b',' | b'(' | b'[' | b' ')
        })
        .collect()
}

const REPLACEMENTS: [&str; 12] = [
    "NaN",
    "inf",
    "-inf",
    "-1",
    "0",
    "-0.0",
    "1e308",
    "1e-320",
    "2",
    "18446744073709551615",
    "0.5",
    "7",
];

/// `text` with 1 to 3 random changes: a number replaced by an extreme one, bytes deleted,
/// duplicated or replaced, or the text cut short.
fn mutate(text: &str, spots: &[usize], rng: &mut ChaCha8Rng) -> String {
    let mut t = text.as_bytes().to_vec();
    for _ in 0..rng.random_range(1..=3) {
        let n = t.len().max(1);
        match rng.random_range(0..10) {
            0..=5 => {
                let at = spots[rng.random_range(0..spots.len())].min(t.len());
                let end = (at..t.len())
                    .find(|&i| !matches!(t[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'-' | b'+'))
                    .unwrap_or(t.len());
                let with = REPLACEMENTS[rng.random_range(0..REPLACEMENTS.len())];
                t.splice(at..end, with.bytes());
            }
            6 => {
                let at = rng.random_range(0..n);
                let end = (at + rng.random_range(1..8)).min(t.len());
                t.drain(at.min(end)..end);
            }
            7 => {
                let at = rng.random_range(0..n);
                let end = (at + rng.random_range(1..40)).min(t.len());
                let piece = t[at.min(end)..end].to_vec();
                t.splice(end..end, piece);
            }
            8 => {
                let at = rng.random_range(0..n).min(t.len().saturating_sub(1));
                if let Some(c) = t.get_mut(at) {
                    *c = b"()[],:\"0123456789.eN-"[rng.random_range(0..21)];
                }
            }
            _ => t.truncate(rng.random_range(0..n)),
        }
    }
    String::from_utf8_lossy(&t).into_owned()
}

#[test]
fn ten_thousand_mutated_saved_files_never_panic() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let app = saved_app();
    let zoo_job = Job::Zoo(ZooTask::new(zoo(rules(&["gd", "adam"]), Vec::new(), false)));
    let sweep_job = Job::Sweep(SweepTask::new(tiny(), 2));
    let files = [
        (app.clone(), None),
        (
            shards(&zoo_job)[0].clone(),
            Some(shards(&zoo_job)[1].clone()),
        ),
        (
            shards(&sweep_job)[1].clone(),
            Some(shards(&sweep_job)[0].clone()),
        ),
    ];
    // The unmutated files are read whole and kept whole.
    let (panels, notes) = read_as_app(&app).unwrap();
    assert_eq!(notes, Vec::<String>::new());
    for path in GAUGE_TABS {
        assert!(
            find_panel::<SweepTab>(&panels, path)
                .unwrap()
                .analysis
                .last
                .is_some()
        );
    }
    assert!(
        find_panel::<SeedSweep>(&panels, "test/sweep")
            .unwrap()
            .analysis
            .last
            .is_some()
    );
    assert!(
        find_panel::<EpsSweep>(&panels, "test/eps")
            .unwrap()
            .analysis
            .last
            .is_some()
    );
    assert!(
        find_panel::<DkSweep>(&panels, "test/dk")
            .unwrap()
            .analysis
            .last
            .is_some()
    );
    assert!(
        find_panel::<Matched>(&panels, "test/matched")
            .unwrap()
            .analysis
            .last
            .is_some()
    );

    let (mut kept, mut dropped, mut merged, mut refused) = (0, 0, 0, 0);
    let spots: Vec<Vec<usize>> = files.iter().map(|(t, _)| numbers(t)).collect();
    for i in 0..10_000 {
        let which = i % files.len();
        let (base, other) = &files[which];
        let text = mutate(base, &spots[which], &mut rng);
        match other {
            None => {
                let Some((panels, notes)) = read_as_app(&text) else {
                    continue;
                };
                if notes.is_empty() {
                    kept += 1;
                } else {
                    dropped += 1;
                }
                for path in GAUGE_TABS {
                    let tab = find_panel::<SweepTab>(&panels, path).unwrap();
                    let Some(last) = &tab.analysis.last else {
                        continue;
                    };
                    let (preset, runs) = (&last.inputs, &last.result);
                    let sums = summarise(runs);
                    assert_eq!(sums.len(), preset.rules.len() * preset.tau_values().len());
                    let _ = class_gap(&sums);
                    let _ = markdown(preset, &sums, runs);
                }
            }
            Some(other) => {
                let pair = parse_shard(&text, "mutated").and_then(|m| {
                    let o = parse_shard(other, "other").unwrap();
                    merge(vec![("mutated".into(), m), ("other".into(), o)])
                });
                match pair {
                    Ok(Merged::Zoo(ZooRuns {
                        preset, results, ..
                    })) => {
                        preset.check_runs(&results).unwrap();
                        let sums = summarise(&results);
                        let _ = markdown(&preset, &sums, &results);
                        merged += 1;
                    }
                    Ok(_) => merged += 1,
                    Err(e) => {
                        assert!(e.contains("mutated") || e.contains("other"), "{e}");
                        refused += 1;
                    }
                }
            }
        }
    }
    // The mutations reach the checks, not only the parser.
    assert!(
        kept > 100 && dropped > 100,
        "kept {kept}, dropped {dropped}"
    );
    assert!(
        merged > 100 && refused > 1000,
        "merged {merged}, refused {refused}"
    );
}

/// Mutated settings that parse are drawn in every view that shows a kept result (the gauge
/// lab's zoo, dial and tail; the seed, ε, matched and d_k tabs), as the app draws them at start.
#[test]
fn mutated_settings_that_parse_draw_in_every_view_without_a_panic() {
    use eframe::egui;
    let app = saved_app();
    let spots = numbers(&app);
    let mut rng = ChaCha8Rng::seed_from_u64(16);
    let mut drawn = 0;
    while drawn < 24 {
        let Ok(Some(s)) = parse_app_ron(&mutate(&app, &spots, &mut rng)) else {
            continue;
        };
        let mut h = egui_kittest::Harness::builder()
            .with_size(egui::vec2(1600.0, 1000.0))
            .build_ui_state(
                move |ui, state: &mut Option<AppState>| {
                    let a = state.get_or_insert_with(|| AppState::new(ui.ctx(), s.clone()));
                    a.logic();
                    a.ui(ui)
                },
                None,
            );
        for view in
            GAUGE_TABS
                .into_iter()
                .chain(["test/sweep", "test/eps", "test/matched", "test/dk"])
        {
            let (section, tab) = view.split_once('/').unwrap();
            if let Some(a) = h.state_mut().as_mut() {
                assert!(a.open_tab(section, tab), "{view}");
            }
            h.run_steps(2);
        }
        drawn += 1;
    }
}

/// Aggregates are derived from the per-seed rows, so they are computed again rather than read:
/// an edited mean, or one missing from a file saved before the field existed, comes back as
/// the rows give it, with no notice.
#[test]
fn saved_sweep_aggregates_are_computed_again_from_their_rows() {
    let s = parse_app_ron(&saved_app()).unwrap().unwrap();
    let eps_of = |panels: &[Box<dyn Panel>]| {
        let tab = find_panel::<EpsSweep>(panels, "test/eps").unwrap();
        tab.analysis.last.as_ref().unwrap().result.clone()
    };
    let mut panels = sections();
    assert!(load_panels(&mut panels, &s.panels).is_empty());
    let want = eps_of(&panels);
    let tab = find_panel_mut::<EpsSweep>(&mut panels, "test/eps").unwrap();
    let agg = &mut tab.analysis.last.as_mut().unwrap().result[0]
        .sweep
        .aggregate[1];
    agg.excess_mean = 123.0;
    agg.orientation_div_sd = 0.0;
    let edited = app_ron(&Settings {
        panels: save_panels(&panels),
        ..Settings::default()
    });
    let (back, notes) = read_as_app(&edited).unwrap();
    assert_eq!(notes, Vec::<String>::new());
    let got = eps_of(&back);
    assert_eq!(
        ron::ser::to_string(&got).unwrap(),
        ron::ser::to_string(&want).unwrap()
    );
    assert_ne!(got[0].sweep.aggregate[1].excess_mean, 123.0);
}

/// The ε and d_k tabs are one generic tab, saved in the layout of the two tabs it replaced: the
/// values' text under `eps_text` or `dk_text`, each point's value under `eps` or `d_k`. Text in
/// that layout loads; a missing field keeps its default and an unknown one is ignored, as
/// before.
#[test]
fn the_points_tabs_save_and_load_the_layout_of_the_tabs_before_them() {
    let p = tiny();
    let never = AtomicBool::new(false);
    let mut eps = EpsSweep {
        seeds: 3,
        text: "1e-8, 0.5".into(),
        ..EpsSweep::default()
    };
    eps.analysis.last = Some(Finished {
        inputs: p.clone(),
        result: points_sweep::<AdamEps>(&p, &[1e-8, 0.5], 2, &|| {}, &never).unwrap(),
    });
    let text = eps.save().unwrap();
    assert!(text.starts_with("(seeds:3,eps_text:\"1e-8, 0.5\",analysis:(last:Some((inputs:("));
    assert!(text.contains("result:[(eps:1e-8,sweep:(preset:("), "{text}");
    assert!(text.contains("),(eps:0.5,sweep:(preset:("));
    let mut back = EpsSweep::default();
    assert_eq!(back.load(&text).unwrap(), Vec::<String>::new());
    assert_eq!((back.seeds, back.text.as_str()), (3, "1e-8, 0.5"));
    // Compared as text: the records hold NaN losses, and a step record's arm index is not saved.
    let result = |t: &EpsSweep| ron::ser::to_string(&t.analysis.last.as_ref().unwrap().result);
    assert_eq!(result(&back).unwrap(), result(&eps).unwrap());

    let mut dk = DkSweep::default();
    dk.analysis.last = Some(Finished {
        inputs: p.clone(),
        result: points_sweep::<KeyDim>(&p, &[4], 2, &|| {}, &never).unwrap(),
    });
    let text = dk.save().unwrap();
    assert!(text.starts_with("(seeds:4,dk_text:\"4, 8, 16, 32\",analysis:"));
    assert!(text.contains("result:[(d_k:4,sweep:(preset:("), "{text}");
    let mut back = DkSweep::default();
    assert_eq!(back.load(&text).unwrap(), Vec::<String>::new());
    assert_eq!(back.analysis.last.unwrap().result[0].value, 4);

    // Written by hand as the old tabs read it: fields in any order, one of them unknown.
    let mut old = EpsSweep::default();
    let notes = old
        .load("(eps_text: \"1e-3\", retired: [1, 2], analysis: (last: None))")
        .unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!((old.seeds, old.text.as_str()), (4, "1e-3"));
    let mut old = DkSweep::default();
    old.load("(seeds: 9, dk_text: \"8, 16\")").unwrap();
    assert_eq!((old.seeds, old.text.as_str()), (9, "8, 16"));
    // The other tab's field is not this tab's.
    old.load("(eps_text: \"1\")").unwrap();
    assert_eq!(old.text, DkSweep::default().text);
    let twice = DkSweep::default().load("(seeds: 2, seeds: 3)").unwrap_err();
    assert!(twice.contains("duplicate field named `seeds`"), "{twice}");
}
