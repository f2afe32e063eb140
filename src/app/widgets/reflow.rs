//! Layout that follows the width a panel actually gets (`ui.available_width()`), never the
//! window's: plot grids that drop from two columns to one, blocks that stand side by side or
//! stack, and wide tables that scroll inside their own area. Every panel reflows through these,
//! so a new section or tab becomes responsive by calling them instead of dividing widths itself.

use eframe::egui;

/// Below this width (points) of the whole window the section list folds into a menu.
pub const NAV_FOLD: f32 = 1180.0;

/// Below this width of the whole window a section's side column (the controlled test's
/// settings) becomes a drawer, opened by a button or F9.
pub const SIDE_FOLD: f32 = 1420.0;

/// Narrowest a plot cell may get before its grid drops a column: titles, legends and axis
/// labels of the app's plots stay on their lines down to this.
pub const PLOT_MIN_W: f32 = 430.0;

/// Shortest a plot may get: its rotated y-axis label stays within its frame down to this.
pub const PLOT_MIN_H: f32 = 280.0;

/// Gap between cells of a grid.
pub const GAP: f32 = 12.0;

/// How many cells at least `min_w` wide fit side by side in `width` (1 to `max`).
pub fn columns(width: f32, min_w: f32, max: usize) -> usize {
    let fit = ((width + GAP) / (min_w + GAP)).floor() as usize;
    fit.clamp(1, max.max(1))
}

/// Whether the app is in presentation mode (set by the shell each frame): plots offer to fill
/// the screen and lines are drawn thicker.
pub fn presenting(ctx: &egui::Context) -> bool {
    ctx.data(|d| d.get_temp::<bool>(egui::Id::unique(PRESENTING)))
        .unwrap_or(false)
}

/// Sets [`presenting`].
pub fn set_presenting(ctx: &egui::Context, on: bool) {
    ctx.data_mut(|d| d.insert_temp(egui::Id::unique(PRESENTING), on));
}

const PRESENTING: &str = "basis-lab presenting";

/// A view's notes and settings above its plots: drawn as they are on a desk; in presentation
/// mode folded under one closed header called `title`, so the plots get the projector's
/// height. Returns what `add` returned, or `None` while folded.
pub fn fold_when_presenting<R>(
    ui: &mut egui::Ui,
    title: &str,
    add: impl FnOnce(&mut egui::Ui) -> R,
) -> Option<R> {
    if presenting(ui.ctx()) {
        egui::CollapsingHeader::new(title)
            .default_open(false)
            .show(ui, add)
            .body_returned
    } else {
        Some(add(ui))
    }
}

/// A plot line's width: `w` on a desk, twice that in presentation mode (on top of its larger
/// zoom), so lines read from the back of a room.
pub fn line_width(ctx: &egui::Context, w: f32) -> f32 {
    if presenting(ctx) {
        w * 2.0 / PRESENT_ZOOM
    } else {
        w
    }
}

/// How much presentation mode enlarges the whole UI (type, controls, plot frames).
pub const PRESENT_ZOOM: f32 = 1.4;

/// The geometry of a grid of `n` cells in the width the `ui` has: columns, cell width and
/// the number of rows; in presentation mode one chosen cell may fill the area alone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cells {
    /// Cells per row.
    pub cols: usize,
    /// Rows.
    pub rows: usize,
    /// Width of one cell (points).
    pub w: f32,
    /// The cell filling the area alone (presentation mode), if one was chosen.
    pub alone: Option<usize>,
    id: egui::Id,
}

impl Cells {
    /// `n` cells of at least `min_w` (at most `max_cols` per row) in `ui`'s available width,
    /// for the grid called `id`.
    pub fn fit(ui: &egui::Ui, id: &str, n: usize, min_w: f32, max_cols: usize) -> Self {
        let id = egui::Id::unique(("reflow grid", id));
        let alone = presenting(ui.ctx())
            .then(|| ui.data(|d| d.get_temp::<usize>(id)))
            .flatten()
            .filter(|&i| i < n);
        let width = ui.available_width();
        let mut cells = Self::in_width(width, n, min_w, max_cols);
        cells.id = id;
        if alone.is_some() {
            cells = Self {
                cols: 1,
                rows: 1,
                w: width.floor(),
                alone,
                id,
            };
        }
        cells
    }

    /// The same for a given `width`, with no cell alone.
    pub fn in_width(width: f32, n: usize, min_w: f32, max_cols: usize) -> Self {
        let cols = columns(width, min_w, max_cols.min(n.max(1)));
        let w = ((width - GAP * (cols - 1) as f32) / cols as f32).floor();
        Self {
            cols,
            rows: n.max(1).div_ceil(cols),
            w,
            alone: None,
            id: egui::Id::NULL,
        }
    }

    /// Height of one cell: the `avail` height less `reserved`, shared by the rows when they fit
    /// on screen, clamped to [`PLOT_MIN_H`] and `max`. One column scrolls, so there each cell
    /// gets at least a readable height rather than a share of the window; a cell alone gets
    /// all the height there is.
    pub fn height(&self, avail: f32, reserved: f32, max: f32) -> f32 {
        if self.alone.is_some() {
            return (avail - 40.0).max(PLOT_MIN_H);
        }
        let rows = if self.cols == 1 { 1 } else { self.rows };
        ((avail - reserved) / rows as f32).clamp(PLOT_MIN_H, max.max(PLOT_MIN_H))
    }
}

/// Draws `n` cells in rows of `cells.cols`: `cell(ui, i)` draws cell `i` in a column
/// `cells.w` wide. In presentation mode each cell has a button to fill the area alone (and
/// the lone cell one to bring the others back).
pub fn grid(ui: &mut egui::Ui, n: usize, cells: Cells, mut cell: impl FnMut(&mut egui::Ui, usize)) {
    let presenting = presenting(ui.ctx());
    let toggle = |ui: &mut egui::Ui, i: usize| {
        if !presenting {
            return;
        }
        let (label, next) = match cells.alone {
            Some(_) => ("All plots", None),
            None => ("Fill the screen", Some(i)),
        };
        if ui.small_button(label).clicked() {
            ui.data_mut(|d| match next {
                Some(i) => {
                    d.insert_temp(cells.id, i);
                }
                None => d.remove::<usize>(cells.id),
            });
        }
    };
    if let Some(i) = cells.alone {
        toggle(ui, i);
        cell(ui, i);
        return;
    }
    egui::Grid::new(cells.id)
        .num_columns(cells.cols)
        .spacing([GAP, 6.0])
        .show(ui, |ui| {
            for i in 0..n {
                ui.vertical(|ui| {
                    ui.set_width(cells.w);
                    toggle(ui, i);
                    cell(ui, i);
                });
                if (i + 1) % cells.cols == 0 {
                    ui.end_row();
                }
            }
        });
}

/// Draws two blocks side by side when widths `need[0]` and `need[1]` both fit the available
/// width, else one above the other; `part(ui, k, beside)` draws block `k` (0 or 1), told
/// whether they stand side by side. Returns whether they did.
pub fn pair(
    ui: &mut egui::Ui,
    need: [f32; 2],
    mut part: impl FnMut(&mut egui::Ui, usize, bool),
) -> bool {
    let beside = need[0] + need[1] + GAP <= ui.available_width();
    if beside {
        ui.horizontal_top(|ui| {
            ui.vertical(|ui| {
                ui.set_width(need[0]);
                part(ui, 0, true);
            });
            ui.vertical(|ui| part(ui, 1, true));
        });
    } else {
        part(ui, 0, false);
        ui.add_space(6.0);
        part(ui, 1, false);
    }
    beside
}

/// A side of at most `max` that fits the available width, for square canvases.
pub fn side(ui: &egui::Ui, max: f32) -> f32 {
    max.min(ui.available_width() - 4.0).max(120.0)
}

/// A row of controls (labels, buttons, fields) that wraps onto more lines when narrow, each
/// item moving whole: a label never starts at the end of one line and runs on under the next.
pub fn controls_row<R>(ui: &mut egui::Ui, add: impl FnOnce(&mut egui::Ui) -> R) -> R {
    ui.horizontal_wrapped(|ui| {
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
        add(ui)
    })
    .inner
}

/// A section's heading with a weak subtitle: on one line when both fit, else the subtitle
/// wraps on its own lines below (never starting beside the heading and wrapping under it).
pub fn heading_row(ui: &mut egui::Ui, heading: &str, subtitle: &str) {
    let width = |text: &str, style: egui::TextStyle| {
        let font = style.resolve(ui.style());
        ui.painter()
            .layout_no_wrap(text.to_string(), font, egui::Color32::WHITE)
            .size()
            .x
    };
    let need = width(heading, egui::TextStyle::Heading)
        + width(subtitle, egui::TextStyle::Body)
        + ui.spacing().item_spacing.x
        + 4.0;
    let sub = egui::RichText::new(subtitle).weak();
    if need <= ui.available_width() {
        ui.horizontal(|ui| {
            ui.heading(heading);
            ui.label(sub);
        });
    } else {
        ui.heading(heading);
        ui.add(egui::Label::new(sub).wrap());
    }
}

/// A wide table: scrolls sideways inside its own area when its columns are wider than the
/// panel, with the header row in the same grid so it stays above its columns. `header(ui)`
/// draws the header cells, `body(ui)` the rows (each ended by `ui.end_row()`); `id` names it.
pub fn table(
    ui: &mut egui::Ui,
    id: &str,
    header: impl FnOnce(&mut egui::Ui),
    body: impl FnOnce(&mut egui::Ui),
) {
    egui::ScrollArea::horizontal()
        .id_salt((id, "scroll"))
        .auto_shrink([false, true])
        .show(ui, |ui| {
            egui::Grid::new(id)
                .striped(true)
                .spacing([12.0, 4.0])
                .show(ui, |ui| {
                    header(ui);
                    ui.end_row();
                    body(ui);
                });
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_columns_fit_only_when_both_reach_the_minimum() {
        assert_eq!(columns(2.0 * PLOT_MIN_W + GAP, PLOT_MIN_W, 2), 2);
        assert_eq!(columns(2.0 * PLOT_MIN_W + GAP - 1.0, PLOT_MIN_W, 2), 1);
        assert_eq!(columns(100.0, PLOT_MIN_W, 2), 1);
        assert_eq!(columns(5000.0, PLOT_MIN_W, 3), 3);
    }

    #[test]
    fn cells_fill_the_width_and_one_column_gets_a_readable_height() {
        let c = Cells::in_width(1000.0, 4, PLOT_MIN_W, 2);
        assert_eq!(c.alone, None);
        assert_eq!((c.cols, c.rows), (2, 2));
        assert_eq!(c.w, 494.0);
        assert_eq!(c.height(700.0, 100.0, 500.0), 300.0);
        let one = Cells::in_width(700.0, 4, PLOT_MIN_W, 2);
        assert_eq!((one.cols, one.rows, one.w), (1, 4, 700.0));
        assert_eq!(one.height(400.0, 100.0, 500.0), 300.0);
        assert_eq!(one.height(200.0, 100.0, 500.0), PLOT_MIN_H);
    }
}
