//! What the page does with its link once the app has started ([`follow`]): open the view, load
//! the view's own preset, apply the view's settings, start the run. Written for the web build
//! and compiled everywhere, so the tests read its notices without a browser.

use super::AppState;
use crate::experiment::live::Command;
use crate::link::PageLink;
use crate::preset::Preset;

/// The link's share string by kind: the key lab's preset (`bl1:…` of any version, a broken one
/// such as `%23bl1:…`, or any text that is no share string at all, which the key lab's reader
/// then refuses with its reason), or a preset of a view's own kind (`ba1:…`, `bz1:…`), which the
/// linked view reads.
pub fn shares(link: &PageLink) -> (Option<&str>, Option<&str>) {
    let Some(text) = link.share.as_deref() else {
        return (None, None);
    };
    if crate::share::is_share_string(text) && !crate::share::is_kind::<Preset>(text) {
        (None, Some(text))
    } else {
        (Some(text), None)
    }
}

/// Loads the link's key-lab preset into `settings` ([`shares`]); a share string that does not
/// read leaves the default preset there and returns the problem for [`follow`] to tell. Used by
/// the page at start and by the desktop's `--link`.
pub fn load_key_preset(link: &PageLink, settings: &mut super::Settings) -> Option<String> {
    let (Some(text), _) = shares(link) else {
        return None;
    };
    match crate::share::decode::<Preset>(text) {
        Ok(p) => {
            settings.preset = p;
            None
        }
        Err(e) => {
            settings.preset = super::lab::default_preset();
            Some(format!(
                "The link's preset was not loaded ({e}); the default preset is loaded instead."
            ))
        }
    }
}

/// Follows `link` in `state`: opens its view, loads a preset of the view's own kind ([`shares`];
/// the key lab's was loaded with the settings, and `preset_problem` says why it was not),
/// applies the view's settings and, with `play`, starts the view's run: its own analysis if it
/// has one ([`crate::app::panel::Panel::start`]), else the key lab's live run (in the key lab's
/// views, and for a link without a view). Every problem of the link is told in one error
/// notice, and a link with a problem does not start anything (what it would run is not what it
/// asked for); otherwise what was opened is told in one notice. Returns whether a run was
/// started.
pub fn follow(state: &mut AppState, link: &PageLink, preset_problem: Option<String>) -> bool {
    let (key_share, view_share) = shares(link);
    let mut problems: Vec<String> = preset_problem.into_iter().collect();
    let mut news = Vec::new();
    if key_share.is_some() && problems.is_empty() {
        news.push("Opened the preset in the link.".to_string());
    }
    let mut opened = false;
    if let Some(view) = &link.view {
        let (section, tab) = view.split_once('/').unwrap_or((view, ""));
        opened = state.open_section(section) && (tab.is_empty() || state.open_tab(section, tab));
        if !opened {
            let sections = if state.nav_folded() {
                "under ☰ at the top left"
            } else {
                "on the left"
            };
            problems.push(format!(
                "The link's view `{view}` is not one of this page's (see the sections \
                 {sections}); its settings were not applied."
            ));
        }
    }
    if let Some(text) = view_share {
        match state.view_mut().open_shared(text) {
            Some(Ok(name)) => news.push(format!("Opened the link's preset `{name}`.")),
            Some(Err(e)) => problems.push(format!("The link's preset was not loaded: {e}.")),
            None => problems.push(
                "The link's preset is of a kind this view does not read; nothing was loaded."
                    .into(),
            ),
        }
    }
    let mut ignored = Vec::new();
    for (name, value) in link.settings.iter().filter(|_| opened) {
        match state.set_from_link(name, value) {
            Ok(true) => {}
            Ok(false) => ignored.push(format!("`{name}`")),
            Err(e) => problems.push(format!("The link's setting `{name}` was not applied: {e}.")),
        }
    }
    if !ignored.is_empty() {
        news.push(format!(
            "Not settings of this view, so ignored: {}.",
            ignored.join(", ")
        ));
    }
    if !problems.is_empty() {
        if link.play {
            problems.push("So the link's run was not started.".into());
        }
        state.lab.error(problems.join(" "));
        return false;
    }
    if !news.is_empty() {
        state.lab.inform(news.join(" "));
    }
    if !link.play {
        return false;
    }
    // `play` starts the linked view's own run as its main button would (a sweep, the gauge
    // lab's live runs); a key-lab view without one (the live tab, memory & reads), or no view,
    // plays the key lab's run. Not both, which would share each frame's time between them.
    let own = opened && state.start_open();
    let key_lab = !opened || (state.section().id() == "test" && !own);
    if key_lab {
        state.lab.send(Command::Play);
    }
    own || key_lab
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::link::parse_page_link;

    #[test]
    fn shares_go_to_the_key_lab_or_to_the_view_by_kind() {
        let by = |hash: &str| {
            let link = parse_page_link("", hash);
            let (key, view) = shares(&link);
            (key.map(str::to_string), view.map(str::to_string))
        };
        assert_eq!(by(""), (None, None));
        assert_eq!(by("#bl1:classroom"), (Some("bl1:classroom".into()), None));
        assert_eq!(
            by("#ba1:attention-quick"),
            (None, Some("ba1:attention-quick".into()))
        );
        assert_eq!(by("#bz1:tail"), (None, Some("bz1:tail".into())));
        // Not a share string at all: the key lab's reader refuses it with its reason.
        assert_eq!(by("#hello"), (Some("hello".into()), None));
        // A broken key-lab share string is the key lab's reader's to report, too.
        assert_eq!(by("#%23bl1:x"), (Some("%23bl1:x".into()), None));
        assert_eq!(by("#bl1:x#y"), (Some("bl1:x#y".into()), None));
    }
}
