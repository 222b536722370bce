//! What a browser action did to its page: whether the page's state (URL, title, DOM size,
//! text, the focused value) moved within a short window after the input, and whether the
//! action opened a JavaScript dialog, which the outcome then names (the page waits on it).

use std::time::{Duration, Instant};

use deskpilot_browser::cdp::Connection;
use deskpilot_browser::script;
use serde_json::json;

use super::{BrowserOutcome, unavailable};
use crate::error::Error;

/// "an alert dialog \"Saved\"", "a prompt dialog \"Name?\"".
pub(super) fn dialog_words(d: &deskpilot_browser::cdp::Dialog) -> String {
    let article = if d.kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {} dialog \"{}\" is", d.kind, d.message)
}

/// Says in `o` that the action opened a dialog, when one opened since `mark`: the page waits
/// on it, so the agent must answer it next. No wait is needed: a dialog the action's own
/// handler opens holds the browser's answer to the input until it is seen
/// ([`Connection::input`] ends on it).
pub(super) fn dialog_after(cdp: &Connection, session: &str, mark: u64, o: &mut BrowserOutcome) {
    let Some(d) = cdp.dialog(session).filter(|d| d.seq > mark) else {
        return;
    };
    o.detail.push_str(&format!(
        "; then {} open{} — answer it with browser_dialog",
        dialog_words(&d).trim_end_matches(" is"),
        if d.default_prompt.is_empty() {
            String::new()
        } else {
            format!(" (default answer {:?})", d.default_prompt)
        }
    ));
    o.changed = Some(true);
    if o.value.is_none() {
        o.value = Some(json!({
            "dialog": { "type": d.kind, "message": d.message, "default": d.default_prompt }
        }));
    }
}

/// How long an action's effect on the page is looked for when nothing moves at once.
pub(super) const SETTLE: Duration = Duration::from_millis(500);

/// Sends `act` (input to the page) and judges it: whether the page's state moved within
/// `window`, and a dialog it raised, said in the outcome `finish` builds from that.
pub(super) fn judged(
    cdp: &Connection,
    session: &str,
    window: Duration,
    act: impl FnOnce() -> Result<(), deskpilot_browser::Error>,
    finish: impl FnOnce(Option<bool>) -> BrowserOutcome,
) -> Result<BrowserOutcome, Error> {
    let mark = cdp.log_mark(session);
    let before = script::page_state(cdp, session);
    act().map_err(unavailable)?;
    let mut o = finish(changed_within(cdp, session, before, window));
    dialog_after(cdp, session, mark, &mut o);
    Ok(o)
}

/// Whether the page's state moved within `window` of an action (a dialog the action opened
/// counts, and stops the reading: the page's scripts wait on it).
fn changed_within(
    cdp: &Connection,
    session: &str,
    before: Option<String>,
    window: Duration,
) -> Option<bool> {
    let before = before?;
    let deadline = Instant::now() + window;
    loop {
        if cdp.dialog(session).is_some() {
            return Some(true);
        }
        let now = script::page_state(cdp, session);
        if now.as_ref().is_some_and(|n| *n != before) {
            return Some(true);
        }
        if now.is_none() {
            // The page navigated away (its context went): that is a change.
            return Some(true);
        }
        if Instant::now() >= deadline {
            return Some(false);
        }
        std::thread::sleep(Duration::from_millis(30));
    }
}
