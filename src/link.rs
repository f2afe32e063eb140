//! Links to the web page that open an experiment: `PAGE?view=test&play#bl1:…`. The fragment
//! (after `#`) is the preset's share string ([`crate::share`]), which browsers never send to
//! the server; the query names the view to open (`section` or `section/tab`, as `--panel` and
//! `--tab` take them) and, with `play`, starts that view's own run (the sweep of
//! `?view=test/sweep&play`, the gauge lab's live runs of `?view=gauge/live&play`; the key lab's
//! live run in a view that has none of its own). With `csv`, the page downloads the view's table
//! once that run ends. Any other `name=value` is a setting of the view (`&seeds=8` for the seed
//! sweep, `&scene=indian_pines.mat` for the hyperspectral tab: see each panel's
//! `set_from_link`). Headless, so it is tested without a browser.

/// What a link asks the page for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageLink {
    /// The view to open: a section id, optionally `/` and one of its tab ids.
    pub view: Option<String>,
    /// Start the view's run as soon as the page opens.
    pub play: bool,
    /// Download the view's table (its Save-table CSV) once its run ends.
    pub csv: bool,
    /// The view's settings, `name=value` in the order given (values unescaped).
    pub settings: Vec<(String, String)>,
    /// The share string (or whatever followed `#`, for the share reader to judge).
    pub share: Option<String>,
}

/// The link to `page` (its query and fragment are dropped) that opens `view` with `settings`
/// and the preset whose share string is `share`, playing the view's run if `play`.
pub fn page_link(
    page: &str,
    view: &str,
    play: bool,
    settings: &[(&str, String)],
    share: &str,
) -> String {
    let base = page.split(['?', '#']).next().unwrap_or(page);
    let mut link = format!("{base}?view={}", escape(view, b"/-_"));
    if play {
        link.push_str("&play");
    }
    for (name, value) in settings {
        link.push_str(&format!(
            "&{}={}",
            escape(name, b"-_"),
            escape(value, b"-_.,:/")
        ));
    }
    link.push('#');
    link.push_str(share);
    link
}

/// A whole link as text (`PAGE?view=…&…#bl1:…`, the page's address optional): its query and
/// fragment read by [`parse_page_link`]. The desktop's `--link` reads links this way.
pub fn parse_link(text: &str) -> PageLink {
    let (before, hash) = text.split_once('#').unwrap_or((text, ""));
    let search = before.split_once('?').map_or("", |(_, q)| q);
    parse_page_link(search, hash)
}

/// Reads a page's `search` (the query with or without its `?`) and `hash` (the fragment with or
/// without its `#`). Query parameters other than `view`, `play` and `csv` are the view's
/// settings (the view judges them); an empty fragment is no preset.
pub fn parse_page_link(search: &str, hash: &str) -> PageLink {
    let mut link = PageLink::default();
    for pair in search.trim_start_matches('?').split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "view" if !value.is_empty() => link.view = Some(unescape(value)),
            "play" => link.play = !matches!(value, "0" | "false" | "no"),
            "csv" => link.csv = !matches!(value, "0" | "false" | "no"),
            "" | "view" => {}
            _ => link.settings.push((unescape(key), unescape(value))),
        }
    }
    // One `#` starts the fragment; a second is the share string's reader's to report.
    let hash = hash.strip_prefix('#').unwrap_or(hash);
    if !hash.is_empty() {
        link.share = Some(hash.to_string());
    }
    link
}

/// `text` with every byte but ASCII letters, digits and those of `keep` percent-escaped.
fn escape(text: &str, keep: &[u8]) -> String {
    text.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || keep.contains(&b) {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Undoes [`escape`] (and any browser's escaping); a broken escape is kept as it is.
fn unescape(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(b)) => {
                out.push(b);
                i += 3;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_reads_back_as_what_made_it() {
        let settings = [
            ("values", "1e-8,0.001".to_string()),
            ("scene", "data/a b&c.mat".to_string()),
        ];
        let link = page_link(
            "https://example.org/lab/index.html?view=old#bl1:x",
            "test/live",
            true,
            &settings,
            "bl1:(steps:40)",
        );
        assert_eq!(
            link,
            "https://example.org/lab/index.html?view=test/live&play&values=1e-8,0.001\
             &scene=data/a%20b%26c.mat#bl1:(steps:40)"
        );
        let (rest, hash) = link.split_once('#').unwrap();
        let search = &rest[rest.find('?').unwrap()..];
        assert_eq!(
            parse_page_link(search, hash),
            PageLink {
                view: Some("test/live".into()),
                play: true,
                csv: false,
                settings: settings.map(|(k, v)| (k.to_string(), v)).to_vec(),
                share: Some("bl1:(steps:40)".into()),
            }
        );
    }

    #[test]
    fn a_whole_link_splits_into_query_and_fragment() {
        let chain = "normalize_rows() | trace(0.9)";
        let made = page_link(
            "https://example.org/lab/",
            "optimizer",
            true,
            &[("chain", chain.to_string())],
            "bl1:default",
        );
        let link = parse_link(&made);
        assert_eq!(link.view.as_deref(), Some("optimizer"));
        assert!(link.play);
        assert_eq!(
            link.settings,
            vec![("chain".to_string(), chain.to_string())]
        );
        assert_eq!(link.share.as_deref(), Some("bl1:default"));
        // Without the page's address, and without a fragment.
        assert_eq!(
            parse_link("?view=gauge/zoo"),
            parse_page_link("view=gauge/zoo", "")
        );
        assert_eq!(parse_link("#bl1:x").share.as_deref(), Some("bl1:x"));
        assert_eq!(parse_link("https://example.org/"), PageLink::default());
    }

    #[test]
    fn missing_parts_are_ignored_and_other_ones_are_settings() {
        assert_eq!(parse_page_link("", ""), PageLink::default());
        assert_eq!(parse_page_link("?", "#"), PageLink::default());
        let l = parse_page_link("?utm=1&view=&play=0&&", "");
        assert_eq!(
            l,
            PageLink {
                settings: vec![("utm".into(), "1".into())],
                ..PageLink::default()
            }
        );
        let l = parse_page_link("play=yes&view=gauge%2Fzoo&view=test&csv", "#bl1:");
        assert_eq!(l.view.as_deref(), Some("test"));
        assert!(l.play && l.csv);
        assert_eq!(l.share.as_deref(), Some("bl1:"));
        // One `#` starts the fragment; a second is the share string's reader's to judge.
        let l = parse_page_link("", "##bl1:");
        assert_eq!(l.share.as_deref(), Some("#bl1:"));
    }

    #[test]
    fn odd_views_are_escaped_and_read_back() {
        let link = page_link("p", "a b&c%", false, &[], "s");
        assert_eq!(link, "p?view=a%20b%26c%25#s");
        assert_eq!(
            parse_page_link("view=a%20b%26c%25", "").view.as_deref(),
            Some("a b&c%")
        );
        assert_eq!(parse_page_link("view=%zz", "").view.as_deref(), Some("%zz"));
    }
}
