//! What the shell does when asked (by the menu, a key or a link): zoom, presentation mode,
//! screenshots, opening and pasting presets, copying the page's link. Each is one method the
//! drawing code ([`super::ui`]) and the tests call.

use std::path::{Path, PathBuf};

use eframe::egui;

use super::AppState;
use crate::app::saved::{ZOOM_RANGE, ZOOM_STEP};
use crate::app::widgets::reflow;

impl AppState {
    /// applies it, times presentation mode's zoom when presenting.
    pub fn set_zoom(&mut self, ctx: &egui::Context, zoom: f32) {
        let zoom = if zoom.is_finite() { zoom } else { 1.0 };
        self.zoom = ((zoom * 10.0).round() / 10.0).clamp(*ZOOM_RANGE.start(), *ZOOM_RANGE.end());
        self.apply_zoom(ctx);
    }

    /// Draws everything `base` times larger under the user's zoom (screenshot mode's
    /// `--scale`, which emulates a HiDPI screen).
    pub fn set_zoom_base(&mut self, ctx: &egui::Context, base: f32) {
        self.zoom_base = base;
        self.apply_zoom(ctx);
    }

    pub(super) fn apply_zoom(&self, ctx: &egui::Context) {
        let present = if self.presenting {
            reflow::PRESENT_ZOOM
        } else {
            1.0
        };
        ctx.set_zoom_factor(self.zoom_base * self.zoom * present);
    }

    /// Ctrl + = (or +) zooms in, Ctrl + − out, Ctrl + 0 back to 1, as in a browser.
    pub(super) fn zoom_keys(&mut self, ctx: &egui::Context) {
        use egui::gui_zoom::kb_shortcuts as keys;
        let (reset, zoom_in, zoom_out) = ctx.input_mut(|i| {
            (
                i.consume_shortcut(&keys::ZOOM_RESET),
                i.consume_shortcut(&keys::ZOOM_IN) | i.consume_shortcut(&keys::ZOOM_IN_SECONDARY),
                i.consume_shortcut(&keys::ZOOM_OUT),
            )
        });
        if reset {
            self.set_zoom(ctx, 1.0);
        } else if zoom_in {
            self.set_zoom(ctx, self.zoom + ZOOM_STEP);
        } else if zoom_out {
            self.set_zoom(ctx, self.zoom - ZOOM_STEP);
        }
    }

    /// Enters or leaves presentation mode: full screen (where allowed), side panels hidden, the
    /// whole UI enlarged by [`reflow::PRESENT_ZOOM`] and plot lines drawn twice as thick.
    pub fn set_presenting(&mut self, ctx: &egui::Context, on: bool) {
        if on == self.presenting {
            return;
        }
        self.presenting = on;
        self.apply_zoom(ctx);
        if self.fullscreen_allowed {
            ctx.send_viewport_cmd(egui::ViewportCommand::Fullscreen(on));
        }
        reflow::set_presenting(ctx, on);
    }

    /// Presentation mode's keys: F11 toggles it, Esc leaves it, Page Up/Down and the arrow
    /// keys step through the views (unless a widget has the keyboard).
    pub(super) fn presentation_keys(&mut self, ctx: &egui::Context) {
        if ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::F11)) {
            self.set_presenting(ctx, !self.presenting);
        }
        if !self.presenting || ctx.memory(|m| m.focused().is_some()) {
            return;
        }
        let any_popup = egui::Popup::is_any_open(ctx);
        let (esc, back, forward) = ctx.input_mut(|i| {
            let mut key = |k| i.consume_key(egui::Modifiers::NONE, k);
            (
                !any_popup && key(egui::Key::Escape),
                key(egui::Key::PageUp) | key(egui::Key::ArrowLeft) | key(egui::Key::ArrowUp),
                key(egui::Key::PageDown) | key(egui::Key::ArrowRight) | key(egui::Key::ArrowDown),
            )
        });
        if esc {
            self.set_presenting(ctx, false);
        }
        if back {
            self.step_view(-1);
        }
        if forward {
            self.step_view(1);
        }
    }

    /// Asks for a PNG of the next frame, saved into `path` (or a time-stamped file in
    /// [`AppState::screenshot_dir`]); the outcome arrives as a notice.
    pub fn request_screenshot(&self, ctx: &egui::Context, path: Option<PathBuf>) {
        let path = path.unwrap_or_else(|| {
            let secs = web_time::SystemTime::now()
                .duration_since(web_time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            self.screenshot_dir.join(format!("basis-lab-{secs}.png"))
        });
        let outcome = self.screenshot_outcome.clone();
        let ctx2 = ctx.clone();
        ctx.request_screenshot(move |img| {
            let save = move || {
                let r = save_png(&img, &path);
                *outcome.lock().expect("lock") = Some(r);
                ctx2.request_repaint();
            };
            // Encoding a full-window PNG takes a while: keep it off the UI thread.
            crate::live::detach(save);
        });
    }

    /// File → Open preset…: the desktop's open dialog, or the browser's file picker (whose
    /// file arrives in a later frame, see [`AppState::logic`]).
    pub(super) fn open_preset(&mut self) {
        #[cfg(not(target_arch = "wasm32"))]
        match crate::app::files::pick_file("RON preset", "ron") {
            Some(path) => {
                self.lab.load_preset_file(&path);
            }
            None => self.no_file_chosen(),
        }
        #[cfg(target_arch = "wasm32")]
        {
            let repaint = self.lab.repaint_handle();
            self.upload = Some(crate::app::files::Upload::start(
                "RON preset",
                "ron",
                repaint,
            ));
        }
    }

    /// Loads the preset file the browser's picker delivered, if it has.
    #[cfg(target_arch = "wasm32")]
    pub(super) fn collect_upload(&mut self) {
        if let Some((name, bytes)) = self.lab.collect_upload(&mut self.upload) {
            let text = String::from_utf8_lossy(&bytes);
            self.lab.load_preset_text(&text, &name);
        }
    }

    /// File → Copy link (web build): the page's link to this view with its settings and
    /// its preset (the view's own, else the key lab's).
    #[cfg(target_arch = "wasm32")]
    pub(super) fn copy_link(&mut self, ctx: &egui::Context) {
        let view = self.view();
        let share = view
            .share()
            .unwrap_or_else(|| crate::share::encode(&self.lab.preset));
        let link = crate::link::page_link(
            &crate::app::page::page_url(),
            &self.view_path(),
            self.lab.history.running,
            &view.link_settings(),
            &share,
        );
        self.lab
            .inform(format!("Link copied to the clipboard: {link}"));
        ctx.copy_text(link);
    }

    pub(super) fn no_file_chosen(&mut self) {
        self.lab.inform(
            "No file chosen. (If no dialog appeared, this desktop offers no file-dialog service; \
             File → Copy preset and Paste preset… work without one.)",
        );
    }
}

/// Encodes `img` as PNG and writes it atomically to `path` (in the web build: downloads it
/// under `path`'s file name); returns the sentence for the notice.
pub fn save_png(img: &egui::ColorImage, path: &Path) -> Result<String, String> {
    let [w, h] = img.size;
    let bytes: Vec<u8> = img.pixels.iter().flat_map(|c| c.to_array()).collect();
    let buffer = image::RgbaImage::from_raw(w as u32, h as u32, bytes)
        .ok_or_else(|| "screenshot has an unexpected size".to_string())?;
    let mut png = Vec::new();
    buffer
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .map_err(|e| e.to_string())?;
    crate::app::files::write(path, &png).map_err(|e| format!("{}: {e}", path.display()))
}
