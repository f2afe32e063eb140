//! Files in and out of the app. On the desktop: the system's file dialogs and atomic writes. In
//! the web build a page cannot name a path on the user's disk, so saving is a browser download
//! (the name is the one the dialog would have proposed) and opening is an upload.

use std::path::{Path, PathBuf};

/// Where to save a `kind` file (`"CSV"`, extension `ext`) proposed as `name`. Desktop: the save
/// dialog, `None` if the user cancelled or there is no dialog service. Web: `name` itself (the
/// browser decides the folder of a download).
pub fn save_dialog(kind: &str, ext: &str, name: &str) -> Option<PathBuf> {
    #[cfg(not(target_arch = "wasm32"))]
    return rfd::FileDialog::new()
        .add_filter(kind, &[ext])
        .set_file_name(name)
        .save_file();
    #[cfg(target_arch = "wasm32")]
    {
        let _ = (kind, ext);
        Some(PathBuf::from(name))
    }
}

/// The desktop's open dialog for a `kind` file with extension `ext`; `None` if cancelled, if
/// there is no dialog service, and always in the web build (which uploads with [`Upload`]).
pub fn pick_file(kind: &str, ext: &str) -> Option<PathBuf> {
    #[cfg(not(target_arch = "wasm32"))]
    return rfd::FileDialog::new().add_filter(kind, &[ext]).pick_file();
    #[cfg(target_arch = "wasm32")]
    {
        let _ = (kind, ext);
        None
    }
}

/// Writes `bytes` to `path`: atomically on the desktop (temp file + rename), as a download
/// called by `path`'s file name in the web build. Returns the sentence for the notice.
///
/// # Errors
/// The file system's (or the browser's) error, as text.
pub fn write(path: &Path, bytes: &[u8]) -> Result<String, String> {
    #[cfg(not(target_arch = "wasm32"))]
    return crate::output::write_atomic(path, bytes)
        .map(|()| format!("Saved {}.", path.display()))
        .map_err(|e| e.to_string());
    #[cfg(target_arch = "wasm32")]
    {
        let name = path.file_name().map_or_else(
            || "basis-lab-file".to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        super::page::download(&name, bytes)
            .map(|()| format!("Downloaded {name} (the browser's downloads folder)."))
    }
}

/// A file the user is choosing in the browser: the page's file picker runs asynchronously,
/// and the frame loop collects the outcome with [`Upload::take`].
#[cfg(target_arch = "wasm32")]
pub struct Upload {
    /// `None` while the picker is open; then the file's name and bytes, or `None` if cancelled.
    slot: std::rc::Rc<std::cell::RefCell<Option<Picked>>>,
}

/// A chosen file's name and bytes; `None` when the user cancelled the picker.
#[cfg(target_arch = "wasm32")]
type Picked = Option<(String, Vec<u8>)>;

#[cfg(target_arch = "wasm32")]
impl Upload {
    /// Opens the browser's file picker for a `kind` file with extension `ext`; `repaint` is
    /// called once the user has chosen or cancelled.
    pub fn start(kind: &str, ext: &str, repaint: std::sync::Arc<dyn Fn() + Send + Sync>) -> Self {
        let slot = std::rc::Rc::new(std::cell::RefCell::new(None));
        let filled = slot.clone();
        let dialog = rfd::AsyncFileDialog::new().add_filter(kind, &[ext]);
        wasm_bindgen_futures::spawn_local(async move {
            let picked = match dialog.pick_file().await {
                Some(file) => Some((file.file_name(), file.read().await)),
                None => None,
            };
            *filled.borrow_mut() = Some(picked);
            repaint();
        });
        Self { slot }
    }

    /// `Some(Some((name, bytes)))` once a file was read, `Some(None)` if the user cancelled,
    /// `None` while the picker is open.
    pub fn take(&self) -> Option<Option<(String, Vec<u8>)>> {
        self.slot.borrow_mut().take()
    }
}
