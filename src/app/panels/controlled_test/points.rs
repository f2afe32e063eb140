//! The points-sweep tabs (ε, d_k): one [`PointsTab`] over a [`PointAxis`], drawing each point (a
//! seed sweep of the current settings moved to one value) as mean ± sd over seeds against a log
//! x axis, one plot per aggregate. A tab's own wording is its [`TabAxis`] impl; the tab is a
//! type alias and one line in the section's tab list (see [`crate::experiment::points`]).

use std::fmt;
use std::marker::PhantomData;

use eframe::egui::{self, Color32, RichText};
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::app::analysis::{Analysis, paired_work, threads};
use crate::app::lab::Lab;
use crate::app::panel::{Panel, Status, Table, from_ron, link_count, to_ron};
use crate::app::widgets::figure_plot;
use crate::app::widgets::plots::{
    FigureFormat, Swatch, export_button, export_table, legend_row, plot_header, save_figure,
};
use crate::app::widgets::reflow::{self, Cells, PLOT_MIN_W};
use crate::app::widgets::status::{before_results, progress_row, stale_note};
use crate::experiment::figures::{self, ArmPoints, EXCESS, Metric, arm_points, points_figure};
use crate::experiment::{
    AdamEps, KeyDim, Point, PointAxis, PointsTask, SweepResult, check_points, report,
};
use crate::figure::Figure;
use crate::live::TRIAL_STEPS;
use crate::preset::Preset;
use crate::validate::{ListNumber, check_count, number_list};

/// The ε-sweep tab.
pub type EpsSweep = PointsTab<AdamEps>;
/// The d_k-sweep tab.
pub type DkSweep = PointsTab<KeyDim>;

/// What a points-sweep tab says and lays out for its axis.
pub trait TabAxis: PointAxis {
    /// The tab's title; also names the sweep in notices and on its Run button.
    const TITLE: &'static str;
    /// The saved field holding the values' text.
    const TEXT_FIELD: &'static str;
    /// The values a new tab holds.
    const DEFAULT_TEXT: &'static str;
    /// The explanation above the controls.
    const INTRO: &'static str;
    /// The label of the values field.
    const LABEL: &'static str;
    /// The values field's width, points.
    const TEXT_WIDTH: f32;
    /// The values in the notice of a list that does not parse.
    const VALUES_NAME: &'static str;
    /// Height kept free around the plots, and their largest height, points.
    const PLOT_HEIGHT: (f32, f32);
    /// Below the legend: what thick and dashed lines mean (empty: nothing).
    const EMPHASIS_NOTE: &'static str;

    /// The weak note after the seeds field.
    fn note(preset: &Preset) -> String;

    /// Drawn below the plots.
    fn details(_ui: &mut egui::Ui, _points: &[Point<Self>]) {}
}

impl TabAxis for AdamEps {
    const TITLE: &'static str = "ε sweep";
    const TEXT_FIELD: &'static str = "eps_text";
    const DEFAULT_TEXT: &'static str = "1e-12, 1e-8, 1e-6, 1e-4, 1e-2, 1";
    const INTRO: &'static str = "Adam divides each coordinate of its step by √v + ε. If its \
        fingerprint comes from that per-coordinate normalisation, it should fade as ε grows past \
        √v and Adam turns into momentum SGD. Each point is a seed sweep of the current settings \
        with every Adam arm's ε set to that value; the other arms do not read ε and serve as \
        references (dashed).";
    const LABEL: &'static str = "Adam's ε";
    const TEXT_WIDTH: f32 = 300.0;
    const VALUES_NAME: &'static str = "Adam's ε";
    const PLOT_HEIGHT: (f32, f32) = (80.0, 520.0);
    const EMPHASIS_NOTE: &'static str = "thick: Adam arms (read ε); dashed: references";

    fn note(preset: &Preset) -> String {
        format!("{} steps each", preset.steps)
    }
}

impl TabAxis for KeyDim {
    const TITLE: &'static str = "d_k sweep";
    const TEXT_FIELD: &'static str = "dk_text";
    const DEFAULT_TEXT: &'static str = "4, 8, 16, 32";
    const INTRO: &'static str = "A(K) is a coarse instrument at small d_k: random keys already \
        sit near the axes, so chance alone spreads A widely. Each point is a seed sweep of the \
        current settings moved to that d_k (keys and pairs per episode scaled along). Watch the \
        shaded spread shrink: an effect is only visible once it rises above it.";
    const LABEL: &'static str = "d_k values";
    const TEXT_WIDTH: f32 = 200.0;
    const VALUES_NAME: &'static str = "d_k";
    const PLOT_HEIGHT: (f32, f32) = (140.0, 640.0);
    const EMPHASIS_NOTE: &'static str = "";

    fn note(_: &Preset) -> String {
        "d_k = 64 takes minutes per seed on a laptop".into()
    }

    /// Per d_k: its sizes, the largest baseline sd and the arms outside it.
    fn details(ui: &mut egui::Ui, points: &[Point<Self>]) {
        ui.add_space(4.0);
        for p in points {
            let s = &p.sweep;
            let spread = s
                .aggregate
                .iter()
                .map(|a| a.baseline_sd_mean)
                .fold(f64::NAN, f64::max);
            let beyond: Vec<&str> = s
                .aggregate
                .iter()
                .filter(|a| a.excess_is_outside_baseline())
                .map(|a| a.arm.as_str())
                .collect();
            ui.label(format!(
                "d_k {:>3} ({} keys, {} pairs): baseline sd up to {:.4}; {}",
                p.value,
                s.preset.n_keys,
                s.preset.pairs_per_episode,
                spread,
                if beyond.is_empty() {
                    "every arm within the spread".to_string()
                } else {
                    format!("outside the spread: {}", beyond.join(", "))
                }
            ));
        }
    }
}

/// A points-sweep tab: its settings and its last sweep. Saved as `(seeds, <TEXT_FIELD>,
/// analysis)`; a missing field keeps its default, an unknown one is ignored.
pub struct PointsTab<A: TabAxis> {
    /// Seeds per value.
    pub seeds: usize,
    /// The values, comma-separated.
    pub text: String,
    /// The sweep and the preset it ran.
    pub analysis: Analysis<Preset, Vec<Point<A>>>,
}

impl<A: TabAxis> Default for PointsTab<A> {
    fn default() -> Self {
        Self {
            seeds: 4,
            text: A::DEFAULT_TEXT.into(),
            analysis: Analysis::default(),
        }
    }
}

impl<A: TabAxis> PointsTab<A> {
    const FIELDS: &'static [&'static str] = &["seeds", A::TEXT_FIELD, "analysis"];

    /// Starts the sweep of the current preset, or says why it cannot.
    fn launch(&mut self, lab: &Lab) -> Result<(), String> {
        let values: Vec<A::Value> =
            parse_list(&self.text).map_err(|e| format!("{}: {e}", A::VALUES_NAME))?;
        let (preset, seeds) = (lab.preset.clone(), self.seeds.max(2));
        let total = values.len() * seeds;
        let task = PointsTask::<A>::new(preset.clone(), values, seeds);
        task.validate().map_err(|e| format!("{}: {e}", A::TITLE))?;
        let work = paired_work(&preset, total);
        self.analysis
            .start(preset, total, work, lab.repaint_handle(), task);
        Ok(())
    }
}

impl<A: TabAxis> Serialize for PointsTab<A> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("PointsTab", 3)?;
        st.serialize_field("seeds", &self.seeds)?;
        st.serialize_field(A::TEXT_FIELD, &self.text)?;
        st.serialize_field("analysis", &self.analysis)?;
        st.end()
    }
}

impl<'de, A: TabAxis> Deserialize<'de> for PointsTab<A> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct TabVisitor<A>(PhantomData<A>);
        impl<'de, A: TabAxis> Visitor<'de> for TabVisitor<A> {
            type Value = PointsTab<A>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "the settings of the {} tab", A::TITLE)
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<PointsTab<A>, M::Error> {
                let mut tab = PointsTab::<A>::default();
                let mut seen = [false; 3];
                while let Some(key) = map.next_key::<String>()? {
                    let Some(i) = PointsTab::<A>::FIELDS.iter().position(|f| *f == key) else {
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    };
                    if std::mem::replace(&mut seen[i], true) {
                        return Err(de::Error::duplicate_field(PointsTab::<A>::FIELDS[i]));
                    }
                    match i {
                        0 => tab.seeds = map.next_value()?,
                        1 => tab.text = map.next_value()?,
                        _ => tab.analysis = map.next_value()?,
                    }
                }
                Ok(tab)
            }
        }
        d.deserialize_struct("PointsTab", Self::FIELDS, TabVisitor(PhantomData))
    }
}

impl<A: TabAxis> Panel for PointsTab<A> {
    fn id(&self) -> &'static str {
        A::ID
    }

    fn title(&self) -> &'static str {
        A::TITLE
    }

    fn logic(&mut self, lab: &mut Lab) {
        self.analysis.poll("Sweep", lab);
    }

    /// Starts the sweep of the current preset; a list that does not parse or a sweep the
    /// command line would refuse ([`PointsTask::validate`]) becomes an error notice
    /// instead.
    fn start(&mut self, lab: &mut Lab) -> bool {
        if let Err(e) = self.launch(lab) {
            lab.error(e);
        }
        true
    }

    fn table(&self) -> Option<Table> {
        let points = &self.analysis.last.as_ref()?.result;
        let rows = report::point_rows(points);
        Some((format!("{}.csv", A::stem()), report::points_csv(&rows)))
    }

    fn link_settings(&self) -> Vec<(&'static str, String)> {
        let items: Vec<&str> = self.text.split(',').map(str::trim).collect();
        let mut values = items.join(",");
        // Two bare digits (`1,5`) read back as one number with a decimal comma: keep the space.
        if parse_list::<A::Value>(&values).is_err() {
            values = items.join(", ");
        }
        vec![("values", values), ("seeds", self.seeds.to_string())]
    }

    /// `values` (comma-separated, as the tab's field) and `seeds` (per value).
    fn set_from_link(&mut self, name: &str, value: &str, _lab: &mut Lab) -> Result<bool, String> {
        match name {
            "values" => {
                parse_list::<A::Value>(value).map_err(|e| format!("`values`: {e}"))?;
                self.text = value
                    .split(',')
                    .map(str::trim)
                    .collect::<Vec<_>>()
                    .join(", ");
            }
            "seeds" => self.seeds = link_count(name, value, SEEDS)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn status(&self, _lab: &Lab) -> Status {
        self.analysis.status()
    }

    fn save(&self) -> Option<String> {
        to_ron(self)
    }

    fn load(&mut self, ron: &str) -> Result<Vec<String>, String> {
        let mut s: PointsTab<A> = from_ron(ron)?;
        let mut notes = Vec::new();
        check_count(
            &mut notes,
            "seeds",
            &mut s.seeds,
            SEEDS,
            Self::default().seeds,
        );
        notes.extend(s.analysis.check_saved(A::TITLE, |mut f| {
            f.result = check_points(f.result)?;
            Ok(f)
        }));
        *self = s;
        Ok(notes)
    }

    fn ui(&mut self, ui: &mut egui::Ui, lab: &mut Lab) {
        ui.label(A::INTRO);
        let mut start = false;
        let mut export = false;
        let table = format!("{}.csv", A::stem());
        reflow::controls_row(ui, |ui| {
            let l = ui.label(A::LABEL);
            ui.add(egui::TextEdit::singleline(&mut self.text).desired_width(A::TEXT_WIDTH))
                .labelled_by(l.id);
            seeds_row(ui, &mut self.seeds);
            ui.label(RichText::new(A::note(&lab.preset)).weak());
            let run = format!("Run {}", A::TITLE);
            let runs = parse_list::<A::Value>(&self.text).map(|v| v.len() * self.seeds.max(2));
            let runs = runs.ok();
            let parallel = threads().min(runs.unwrap_or(1));
            self.analysis.calibrate(&lab.preset, || {
                crate::experiment::sweep::trial_pace(&lab.preset, TRIAL_STEPS)
            });
            let estimate = runs.and_then(|n| {
                self.analysis
                    .estimate(paired_work(&lab.preset, n), parallel)
            });
            start = progress_row(ui, self.analysis.job(), "seeds", &run, true, estimate);
            if self.analysis.last.is_some() {
                export = export_button(ui, &format!("Save the sweep's table ({table})"));
            }
        });
        if start {
            self.start(lab);
        }
        let Some(last) = &self.analysis.last else {
            before_results(
                ui,
                self.analysis.is_running(),
                &format!("No {} yet.", A::TITLE),
            );
            return;
        };
        let points = &last.result;
        if export && let Some((name, bytes)) = self.table() {
            export_table(lab, &name, "The sweep is still here", || bytes);
        }
        // Every point must be what the current settings give at its value.
        if let Some(p) = points
            .iter()
            .find(|p| !A::apply(&lab.preset, p.value).same_experiment(&p.sweep.preset))
        {
            let ran = &p.sweep.preset;
            stale_note(ui, lab, format!("preset “{}”, seed {}", ran.name, ran.seed));
        }
        if points.iter().any(|p| A::x(p.value) <= 0.0) {
            ui.label(
                RichText::new(format!(
                    "{} = 0 has no place on a log axis; its numbers are in the CSV of `basis-lab {}`.",
                    A::SYMBOL,
                    A::COMMAND
                ))
                .weak(),
            );
        }
        let metrics = A::METRICS;
        let n = metrics.len();
        let cells = Cells::fit(ui, &format!("{} plots", A::ID), n, PLOT_MIN_W, 2);
        let (reserved, max) = A::PLOT_HEIGHT;
        let view = SweepView::<A> {
            sweeps: points.iter().map(|p| (A::x(p.value), &p.sweep)).collect(),
            size: (cells.w, cells.height(ui.available_height(), reserved, max)),
            hover: lab.hover,
            axis: PhantomData,
        };
        let band = figures::band(points);
        sweep_legend(ui, &view.arms(&EXCESS), A::EMPHASIS_NOTE);
        let mut figure = None;
        reflow::grid(ui, n, cells, |ui, i| {
            if let Some(f) = view.plot(ui, metrics[i], (i == 0).then_some(&band[..])) {
                figure = Some((i, f));
            }
        });
        if let Some((i, format)) = figure {
            let m = metrics[i];
            let fig = view.figure(m, (i == 0).then_some(&band[..]));
            let stem = format!("{}_{}", A::ID, m.id);
            let size = egui::vec2(cells.w, view.size.1);
            save_figure(lab, ui.ctx(), format, &stem, size, || fig);
        }
        A::details(ui, points);
    }
}

fn to_color(c: crate::figure::Rgb) -> Color32 {
    Color32::from_rgb(c[0], c[1], c[2])
}

/// The range of the seeds per point of the points sweeps.
const SEEDS: std::ops::RangeInclusive<usize> = 2..=64;

/// The seeds-per-point field.
fn seeds_row(ui: &mut egui::Ui, seeds: &mut usize) {
    let l = ui.label("seeds per point");
    ui.add(
        egui::DragValue::new(seeds)
            .range(SEEDS)
            .update_while_editing(false),
    )
    .labelled_by(l.id);
}

/// Parses the values field ([`number_list`]); errors name the offending entry or an empty list.
fn parse_list<T: ListNumber>(text: &str) -> Result<Vec<T>, String> {
    let out = number_list(text)?;
    if out.is_empty() {
        return Err("the list is empty".into());
    }
    Ok(out)
}

/// The finished points of one sweep tab and how to draw them.
struct SweepView<'a, A> {
    /// (x, sweep) per point.
    sweeps: Vec<(f64, &'a SweepResult)>,
    size: (f32, f32),
    hover: bool,
    axis: PhantomData<A>,
}

impl<A: PointAxis> SweepView<'_, A> {
    fn arms(&self, m: &Metric) -> Vec<ArmPoints> {
        arm_points(&self.sweeps, m, A::emphasised)
    }

    /// Draws `m`'s plot under its title row; returns the format chosen in its "Save figure…"
    /// menu.
    fn plot(
        &self,
        ui: &mut egui::Ui,
        m: &Metric,
        zero_band: Option<&[(f64, f64)]>,
    ) -> Option<FigureFormat> {
        let id = format!("{} {}", A::ID, m.id);
        ui.vertical(|ui| {
            ui.set_width(self.size.0);
            let clicked = plot_header(ui, m.title, None, true);
            let size = [Some(self.size.0), Some(self.size.1)];
            figure_plot::plot(ui, &id, &self.figure(m, zero_band), size, self.hover);
            clicked.figure
        })
        .inner
    }

    /// `m`'s plot as a figure (what "Save figure…" writes).
    fn figure(&self, m: &Metric, zero_band: Option<&[(f64, f64)]>) -> Figure {
        points_figure::<A>(&self.arms(m), m, zero_band)
    }
}

fn sweep_legend(ui: &mut egui::Ui, arms: &[ArmPoints], emphasis_note: &str) {
    let mut items: Vec<(Color32, String, Swatch)> = arms
        .iter()
        .map(|a| {
            let swatch = if a.emphasised {
                Swatch::Thick
            } else {
                Swatch::Dashed
            };
            (to_color(a.color), a.name.clone(), swatch)
        })
        .collect();
    items.push((Color32::GRAY, "bars: ± sd over seeds".into(), Swatch::Thin));
    legend_row(ui, &items);
    if !emphasis_note.is_empty() {
        ui.label(RichText::new(emphasis_note).small().weak());
    }
}
