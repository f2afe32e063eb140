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

/// A file coming into the page: one the user is choosing in the browser's file picker, or one
/// fetched from the page's server. Both run asynchronously, and the frame loop collects the
/// outcome with [`Upload::take`].
#[cfg(target_arch = "wasm32")]
pub struct Upload {
    /// `None` while the file is on its way; then what [`Upload::take`] gives.
    slot: std::rc::Rc<std::cell::RefCell<Option<Picked>>>,
}

/// A file's name and bytes; `Ok(None)` when the user cancelled the picker, `Err` with the
/// sentence to show when a fetch failed.
#[cfg(target_arch = "wasm32")]
pub type Picked = Result<Option<(String, Vec<u8>)>, String>;

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
            *filled.borrow_mut() = Some(Ok(picked));
            repaint();
        });
        Self { slot }
    }

    /// Fetches the file at `url` (relative to the page: a scene published beside it), named
    /// by `url` as given; `repaint` is called once it has arrived or failed.
    pub fn fetch(url: &str, repaint: std::sync::Arc<dyn Fn() + Send + Sync>) -> Self {
        let slot = std::rc::Rc::new(std::cell::RefCell::new(None));
        let filled = slot.clone();
        let url = url.to_string();
        wasm_bindgen_futures::spawn_local(async move {
            let got = fetch_bytes(&url)
                .await
                .map_err(|why| format!("{url} could not be fetched: {why}"));
            *filled.borrow_mut() = Some(got.map(|bytes| Some((url, bytes))));
            repaint();
        });
        Self { slot }
    }

    /// `Some(Ok(Some((name, bytes))))` once a file was read, `Some(Ok(None))` if the user
    /// cancelled, `Some(Err(why))` if a fetch failed, `None` while the file is on its way.
    pub fn take(&self) -> Option<Picked> {
        self.slot.borrow_mut().take()
    }
}

/// The bytes at `url`, or why not (no window, a refused request, an HTTP error status).
#[cfg(target_arch = "wasm32")]
async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    let window = web_sys::window().ok_or("the page has no window")?;
    let response = JsFuture::from(window.fetch_with_str(url))
        .await
        .map_err(|e| format!("{e:?}"))?;
    let response: web_sys::Response = response.dyn_into().map_err(|e| format!("{e:?}"))?;
    if !response.ok() {
        return Err(format!(
            "HTTP {} {}",
            response.status(),
            response.status_text()
        ));
    }
    let buffer = response.array_buffer().map_err(|e| format!("{e:?}"))?;
    let buffer = JsFuture::from(buffer).await.map_err(|e| format!("{e:?}"))?;
    Ok(js_sys::Uint8Array::new(&buffer).to_vec())
}
