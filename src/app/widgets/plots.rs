//! Plot helpers: a log10 y axis (egui_plot has none), hover labels that show raw values, and
//! guards that keep non-finite numbers out of egui_plot.

use std::ops::RangeInclusive;

use eframe::egui::{self, Color32, RichText};
use egui_plot::{GridInput, GridMark, HoverPosition, Plot, PlotPoint};

use crate::app::files::save_dialog;
use crate::app::lab::Lab;

/// Grid marks for a log10 axis: a mark per decade, with 2…9 minor marks when few decades are
/// visible. Bails out on non-finite or absurd ranges instead of looping.
pub fn log_grid(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite()) || hi - lo > 400.0 || hi < lo {
        return Vec::new();
    }
    let decades = hi - lo;
    // At most about seven labelled marks: egui_plot hides labels that crowd, and a short plot
    // spanning many decades would otherwise show none.
    let step = (decades / 7.0).ceil().max(1.0);
    let mut out = Vec::new();
    let mut e = (lo / step).floor() * step;
    while e <= hi + 1.0 {
        out.push(GridMark {
            value: e,
            step_size: step,
        });
        if decades < 6.0 {
            for m in 2..10 {
                let v = e + (m as f64).log10();
                if v >= lo && v <= hi {
                    out.push(GridMark {
                        value: v,
                        step_size: step / 10.0,
                    });
                }
            }
        }
        e += step;
    }
    out
}

/// Tick label for a log10 axis value: `1e-12`; minor marks stay unlabelled, and so do marks
/// at the very ends of the visible `range`, whose labels would spill over the plot's title or
/// axis label.
pub fn log_tick(mark: GridMark, range: &RangeInclusive<f64>) -> String {
    let margin = (range.end() - range.start()) * 0.03;
    if mark.step_size < 1.0
        || mark.value < range.start() + margin
        || mark.value > range.end() - margin
    {
        return String::new();
    }
    format!("1e{}", mark.value.round() as i64)
}

/// A plot with a linear y axis; hovering shows step and value.
pub fn linear_plot<'a>(id: &'a str, y_label: &'a str) -> Plot<'a> {
    Plot::new(id)
        .include_x(0.0)
        .include_x(10.0)
        .grid_spacing(egui::Rangef::new(10.0, 80.0))
        .x_axis_label("training step")
        .y_axis_label(y_label)
        .label_formatter(|pos| {
            let (name, p) = hovered(pos);
            Some(match name {
                Some(name) => format!("{name}\nstep {:.0}\n{:.5}", p.x, p.y),
                None => format!("step {:.0}\n{:.5}", p.x, p.y),
            })
        })
}

/// The hovered item's name (if over a named item) and position.
fn hovered<'a>(pos: &HoverPosition<'a>) -> (Option<&'a str>, PlotPoint) {
    match *pos {
        HoverPosition::NearDataPoint {
            plot_name,
            position,
            ..
        } => ((!plot_name.is_empty()).then_some(plot_name), position),
        HoverPosition::Elsewhere { position } => (None, position),
    }
}

/// How a legend entry's swatch is drawn.
#[derive(Clone, Copy, PartialEq)]
pub enum Swatch {
    /// A thick line.
    Thick,
    /// A thin line.
    Thin,
    /// A dashed line.
    Dashed,
    /// A dotted line.
    Dotted,
    /// A filled dot.
    Dot,
    /// A filled block (a band or a bar).
    Block,
}

/// The run list of a live view's earlier runs ([`crate::figure::Earlier`]), when it has any:
/// a toggle per run, named by its number, its label and `detail` (its step count, say), and
/// Forget, which empties the list. `hover` says what the view keeps.
pub fn earlier_runs<T>(
    ui: &mut egui::Ui,
    list: &mut Vec<crate::figure::Earlier<T>>,
    hover: &str,
    detail: impl Fn(&T) -> String,
) {
    if list.is_empty() {
        return;
    }
    let mut forget = false;
    super::reflow::controls_row(ui, |ui| {
        ui.label("Earlier runs, faded:").on_hover_text(hover);
        for (k, e) in list.iter_mut().enumerate() {
            let text = format!("{}: {}{}", k + 1, e.label, detail(&e.run));
            ui.checkbox(&mut e.shown, text);
        }
        forget = ui.button("Forget").clicked();
    });
    if forget {
        list.clear();
    }
}

/// A legend drawn above the plot (never over the data), one entry per line style in use.
pub fn legend_row(ui: &mut egui::Ui, items: &[(Color32, String, Swatch)]) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 6.0;
        for (color, label, swatch) in items {
            legend_entry(ui, *color, label, *swatch);
        }
    });
}

/// One legend entry, its swatch and its name allocated as one widget, so a wrapping legend
/// moves them to the next line together; readers of the accessibility tree get the name.
fn legend_entry(ui: &mut egui::Ui, color: Color32, label: &str, swatch: Swatch) {
    let font = egui::TextStyle::Small.resolve(ui.style());
    let text_color = ui.visuals().text_color();
    let galley = ui
        .painter()
        .layout_no_wrap(label.to_string(), font, text_color);
    let size = egui::vec2(
        26.0 + 6.0 + galley.size().x + 12.0,
        galley.size().y.max(14.0),
    );
    let (entry, response) = ui.allocate_exact_size(size, egui::Sense::hover());
    response.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, label.to_string()));
    let rect = egui::Rect::from_min_size(
        egui::pos2(entry.left(), entry.center().y - 7.0),
        egui::vec2(26.0, 14.0),
    );
    ui.painter().galley(
        egui::pos2(rect.right() + 6.0, entry.center().y - galley.size().y / 2.0),
        galley,
        text_color,
    );
    let p = ui.painter();
    let (l, r, y) = (rect.left(), rect.right(), rect.center().y);
    let seg = |w: f32| {
        p.line_segment(
            [egui::pos2(l, y), egui::pos2(r, y)],
            egui::Stroke::new(w, color),
        )
    };
    match swatch {
        Swatch::Thick => {
            seg(3.0);
        }
        Swatch::Thin => {
            seg(1.2);
        }
        Swatch::Dashed | Swatch::Dotted => {
            let dash = if swatch == Swatch::Dashed { 6.0 } else { 2.0 };
            p.extend(egui::Shape::dashed_line(
                &[egui::pos2(l, y), egui::pos2(r, y)],
                egui::Stroke::new(1.5, color),
                dash,
                3.0,
            ));
        }
        Swatch::Dot => {
            p.circle_filled(rect.center(), 4.0, color);
        }
        Swatch::Block => {
            p.rect_filled(rect.shrink2(egui::vec2(0.0, 2.0)), 1.0, color);
        }
    }
}

/// What was clicked on a plot's title row.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Clicked {
    /// "Export CSV".
    pub csv: bool,
    /// An entry of the "Save figure…" menu.
    pub figure: Option<FigureFormat>,
}

/// A format offered by "Save figure…".
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FigureFormat {
    /// PNG at this multiple (1, 2 or 3) of the screen's pixel density.
    Png(u8),
    /// SVG: vectors, for papers.
    Svg,
    /// A figure for a paper or a slide at this size, as the command line's `--figures`
    /// draws it, in this file format.
    Print(crate::figure::FigureSize, PrintFile),
}

/// The file a print-sized figure is saved as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrintFile {
    /// PNG at 3 pixels per point.
    Png,
    /// SVG.
    Svg,
    /// PDF (vectors, text as text; not in the web build).
    Pdf,
}

/// A plot with its title, "Save figure…" (with `figure`; a table has none) and an "Export
/// CSV" button on one row above it; `draw(ui, w, h)` draws the plot in the `w × (h − 24)`
/// below. Returns what was clicked.
pub fn plot_cell(
    ui: &mut egui::Ui,
    (w, h): (f32, f32),
    title: &str,
    figure: bool,
    draw: impl FnOnce(&mut egui::Ui, f32, f32),
) -> Clicked {
    let mut clicked = Clicked::default();
    ui.vertical(|ui| {
        ui.set_width(w);
        clicked = plot_header(
            ui,
            title,
            Some("Save this plot's data (min/max per bucket) as CSV"),
            figure,
        );
        draw(ui, w, h - 24.0);
    });
    clicked
}

/// Room kept for the buttons on the right of a plot's title row.
const HEADER_BUTTONS_W: f32 = 215.0;

/// The row above a plot: its title, and on the right "Save figure…" (with `figure`) and, with
/// `csv` (its hover text), an "Export CSV" button. Every titled plot draws its title through
/// here, so a control every plot gets goes in one place.
pub fn plot_header(ui: &mut egui::Ui, title: &str, csv: Option<&str>, figure: bool) -> Clicked {
    let mut clicked = Clicked::default();
    if csv.is_none() && !figure {
        ui.add(egui::Label::new(RichText::new(title).strong()).wrap());
        return clicked;
    }
    // The title wraps beside the buttons rather than running under them.
    ui.horizontal_top(|ui| {
        let title_w = (ui.available_width() - HEADER_BUTTONS_W).max(120.0);
        ui.allocate_ui_with_layout(
            egui::vec2(title_w, 0.0),
            egui::Layout::top_down(egui::Align::Min),
            |ui| ui.add(egui::Label::new(RichText::new(title).strong()).wrap()),
        );
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Min), |ui| {
            if let Some(hover) = csv {
                clicked.csv = export_button(ui, hover);
            }
            if figure {
                clicked.figure = figure_menu(ui);
            }
        });
    });
    clicked
}

/// The small "Export CSV" button with its hover text; returns whether it was clicked.
pub fn export_button(ui: &mut egui::Ui, hover: &str) -> bool {
    ui.small_button("Export CSV").on_hover_text(hover).clicked()
}

/// The "Save figure…" menu: PNG at 1×, 2× or 3× the screen's pixel density, or SVG.
pub fn figure_menu(ui: &mut egui::Ui) -> Option<FigureFormat> {
    let mut chosen = None;
    ui.menu_button(RichText::new("Save figure…").small(), |ui| {
        // The web build draws figures as SVG only (see `figure::png`).
        let densities = if cfg!(target_arch = "wasm32") { 0 } else { 3 };
        for k in 1..=densities {
            if ui
                .button(format!("PNG at {k}× screen density"))
                .on_hover_text("This plot alone, light theme, for slides and documents")
                .clicked()
            {
                chosen = Some(FigureFormat::Png(k));
                ui.close();
            }
        }
        if ui
            .button("SVG (vectors)")
            .on_hover_text("This plot alone as vectors, for papers")
            .clicked()
        {
            chosen = Some(FigureFormat::Svg);
            ui.close();
        }
        ui.separator();
        for size in crate::figure::FigureSize::PRINT {
            let what = match size {
                crate::figure::FigureSize::Single => "One column (3.5 in)",
                crate::figure::FigureSize::Double => "Two columns (7 in)",
                _ => "Slide (16:9)",
            };
            let kinds: &[(PrintFile, &str)] = if cfg!(target_arch = "wasm32") {
                &[(PrintFile::Svg, "SVG")]
            } else {
                &[
                    (PrintFile::Png, "PNG"),
                    (PrintFile::Svg, "SVG"),
                    (PrintFile::Pdf, "PDF"),
                ]
            };
            for &(file, kind) in kinds {
                if ui
                    .button(format!("{what}: {kind}"))
                    .on_hover_text(
                        "Sized for print, text 8–9 pt (20 pt on slides), as `--figures` writes it",
                    )
                    .clicked()
                {
                    chosen = Some(FigureFormat::Print(size, file));
                    ui.close();
                }
            }
        }
    })
    .response
    .on_hover_text("Save this plot alone as PNG, SVG or PDF");
    chosen
}

/// Asks where to save the figure `stem` (.png or .svg by `format`), draws `figure` at `size`
/// points (PNG: times the screen's pixels per point and the chosen multiple) and writes it;
/// the outcome becomes a notice.
pub fn save_figure(
    lab: &mut Lab,
    ctx: &egui::Context,
    format: FigureFormat,
    stem: &str,
    size: egui::Vec2,
    figure: impl FnOnce() -> crate::figure::Figure,
) {
    let ext = match format {
        FigureFormat::Png(_) | FigureFormat::Print(_, PrintFile::Png) => "png",
        FigureFormat::Svg | FigureFormat::Print(_, PrintFile::Svg) => "svg",
        FigureFormat::Print(_, PrintFile::Pdf) => "pdf",
    };
    let Some(path) = save_dialog(&ext.to_uppercase(), ext, &format!("{stem}.{ext}")) else {
        return;
    };
    write_figure(lab, ctx, format, &path, size, &figure());
}

/// Draws `figure` in `format` at `size` points and writes it to `path` (the dialog's part
/// of [`save_figure`] left out, so tests can call it); the outcome becomes a notice.
pub fn write_figure(
    lab: &mut Lab,
    ctx: &egui::Context,
    format: FigureFormat,
    path: &std::path::Path,
    size: egui::Vec2,
    figure: &crate::figure::Figure,
) -> bool {
    let size = (
        size.x.round().clamp(200.0, 4000.0) as u32,
        size.y.round().clamp(150.0, 4000.0) as u32,
    );
    let bytes = match format {
        FigureFormat::Png(k) => {
            // The screen's own density, without the user's zoom or presentation mode's.
            let density = ctx
                .native_pixels_per_point()
                .unwrap_or_else(|| ctx.pixels_per_point());
            let scale = (density as f64 * k as f64).min(crate::figure::MAX_SCALE);
            crate::figure::png(figure, size, scale)
        }
        FigureFormat::Svg => crate::figure::svg(figure, size).map(String::into_bytes),
        FigureFormat::Print(at, file) => {
            let opts = crate::figure::FigureOptions::new(at);
            match file {
                PrintFile::Svg => crate::figure::svg_as(figure, &opts).map(String::into_bytes),
                PrintFile::Png => crate::figure::png_as(figure, &opts, crate::figure::CLI_SCALE),
                #[cfg(not(target_arch = "wasm32"))]
                PrintFile::Pdf => crate::figure::pdf_as(figure, &opts),
                // The page never offers PDF (no svg2pdf in the web build).
                #[cfg(target_arch = "wasm32")]
                PrintFile::Pdf => Err(crate::figure::FigureError::Pdf(
                    "PDF is saved by the desktop app only".into(),
                )),
            }
        }
    };
    match bytes {
        Ok(bytes) => lab.write_file(path, &bytes, "The plot is still here"),
        Err(e) => {
            lab.error(format!("Could not draw the figure: {e}"));
            false
        }
    }
}

/// Asks where to save the table `name` (a CSV the command line writes too), makes it with
/// `table` and writes it; the outcome becomes a notice, which on failure says `kept`.
pub fn export_table(
    lab: &mut Lab,
    name: &str,
    kept: &str,
    table: impl FnOnce() -> Result<Vec<u8>, csv::Error>,
) {
    let Some(path) = save_dialog("CSV", "csv", name) else {
        return;
    };
    match table() {
        Ok(bytes) => {
            lab.write_file(&path, &bytes, kept);
        }
        Err(e) => lab.error(format!("Could not write the table: {e}")),
    }
}
