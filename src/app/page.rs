//! The page's browser services the app uses in the web build (wasm32): its address and
//! downloads. The page's start-up, which draws the app, is [`crate::web`].

use wasm_bindgen::JsCast;

/// The page's address without its query and fragment.
pub fn page_url() -> String {
    location()
        .and_then(|l| Some(l.origin().ok()? + &l.pathname().ok()?))
        .unwrap_or_default()
}

/// Hands `bytes` to the browser as a download called `name`.
///
/// # Errors
/// The browser refused to make the file (as text).
pub fn download(name: &str, bytes: &[u8]) -> Result<(), String> {
    let js = |e: wasm_bindgen::JsValue| format!("the browser refused the download ({e:?})");
    let document = document().ok_or("the page has no document")?;
    let parts = js_sys::Array::of1(&js_sys::Uint8Array::from(bytes));
    let blob = web_sys::Blob::new_with_u8_array_sequence(&parts).map_err(js)?;
    let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(js)?;
    let anchor: web_sys::HtmlAnchorElement = document
        .create_element("a")
        .map_err(js)?
        .dyn_into()
        .map_err(|_| "not an anchor element".to_string())?;
    anchor.set_href(&url);
    anchor.set_download(name);
    anchor.click();
    web_sys::Url::revoke_object_url(&url).map_err(js)
}

/// The page's document.
pub(crate) fn document() -> Option<web_sys::Document> {
    web_sys::window()?.document()
}

/// The page's address.
pub(crate) fn location() -> Option<web_sys::Location> {
    Some(web_sys::window()?.location())
}
