//! The browser channel as operations of a session: Chromium (or an Electron app) through its
//! DevTools protocol (`deskpilot-browser`). Every browser a client launched or attached to is
//! that client's (a session slot); launched ones die with the session, attached ones are only
//! detached.
//!
//! Pages are addressed by their target id (or the page this client last used); elements by the
//! refs of the page's latest snapshot. A ref that is not in the latest snapshot of its page —
//! the page changed, or navigated — is refused (`STALE_ELEMENT`), never re-resolved to a
//! neighbour. Clicks are real mouse events at the element's visible centre after checking that
//! the point hits the element (`ELEMENT_COVERED` names what covers it); typing is `insertText`.
//! Every action passes the same gates as desktop actions, labelled with the page's title and URL.
//!
//! This module names no DevTools method and holds no page JavaScript: each protocol call is a
//! typed function of `deskpilot-browser` (`target`, `page`, `dom`, `input`, `script`), and a
//! test below fails when a method name shows up anywhere in the engine.
//!
//! One file per concern: the session's browsers and pages ([`pages`]), launch, attach and close
//! ([`launch`]), refs to nodes ([`refs`]), an action's effect ([`effects`]), snapshots
//! ([`snapshot`]), ref and focus actions ([`actions`]), pointing ([`pointer`]), forms
//! ([`forms`]), tabs and navigation ([`tabs`]), waits ([`wait`]), logs and dialogs ([`logs`]),
//! screenshots ([`shot`]), named secrets typed into password fields ([`secret`]).
//!
//! Secrets: a password field's value never comes back from the page (snapshots mark it
//! `[password]`, a read-back says only filled or empty, screenshots paint it over), and what
//! deskpilot reads of a page (a script's value, logged requests) has every known secret value
//! replaced by `<secret NAME>` here, whatever the surfaces scrub besides.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use deskpilot_browser::input::modifier;
use deskpilot_types::ErrorCode;
use serde::Serialize;
use serde_json::Value;

use crate::action::{Effect, Outcome, Route};
use crate::error::Error;

mod actions;
mod effects;
mod forms;
mod launch;
mod logs;
mod pages;
mod pointer;
mod refs;
mod secret;
mod shot;
mod snapshot;
mod tabs;
mod wait;

pub use deskpilot_browser::cdp::{ConsoleMessage, Request};
pub use deskpilot_browser::input::Click;
pub use deskpilot_browser::page::Emulation;
pub use deskpilot_browser::view::{LINES as SNAPSHOT_LINES, PROSE_CHARS, View as SnapshotView};
pub use forms::FormField;
pub use launch::devtools_ports;
pub use logs::RequestDetail;
pub use shot::PageShot;
pub use snapshot::{PageControl, PageSnapshot, SnapshotAfter};
pub use tabs::Go;
pub use wait::Until;

/// How long one protocol call may take.
const CALL: Duration = deskpilot_browser::CALL;

fn coded(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::Coded {
        code,
        message: message.into(),
    }
}

fn unavailable(e: deskpilot_browser::Error) -> Error {
    coded(ErrorCode::BrowserUnavailable, e.to_string())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A page as results name it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PageInfo {
    pub id: String,
    pub browser: u32,
    pub title: String,
    pub url: String,
}

/// A browser of this session.
#[derive(Debug, Clone, Serialize)]
pub struct BrowserInfo {
    pub id: u32,
    /// Its process, when deskpilot launched it.
    pub pid: Option<u32>,
    pub launched: bool,
    pub port: Option<u16>,
    pub pages: Vec<PageInfo>,
    /// The window it opened on the desktop (a launch that is not headless).
    pub window: Option<deskpilot_types::WindowInfo>,
}

/// What a browser action did.
#[derive(Debug, Clone, Serialize)]
pub struct BrowserOutcome {
    pub page: PageInfo,
    pub detail: String,
    /// The page's URL, title or DOM changed (`None`: not checked).
    pub changed: Option<bool>,
    /// A script's value (`browser_eval`).
    pub value: Option<Value>,
    /// The page's snapshot after the action, when the caller asked for one.
    #[serde(skip)]
    pub snapshot: Option<PageSnapshot>,
    #[serde(skip)]
    pub mutation: bool,
}

impl Outcome for BrowserOutcome {
    fn route(&self) -> Route {
        Route::Browser
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        match self.changed {
            Some(true) => Some((Effect::Confirmed, "the page's URL, title, DOM or value")),
            Some(false) => Some((Effect::SuspectedNoop, "the page's URL, title, DOM or value")),
            None => None,
        }
    }
}

impl Outcome for BrowserInfo {
    fn route(&self) -> Route {
        Route::Browser
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        Some((Effect::Confirmed, "the browser's DevTools endpoint"))
    }
}

/// `v` with every known secret value in its strings read as `<secret NAME>`.
pub(crate) fn scrubbed(v: Value) -> Value {
    if !deskpilot_types::redact::any() {
        return v;
    }
    let text = v.to_string();
    match deskpilot_types::redact::scrub(&text) {
        std::borrow::Cow::Borrowed(_) => v,
        std::borrow::Cow::Owned(clean) => serde_json::from_str(&clean).unwrap_or(Value::Null),
    }
}

/// The modifier bit of the browser's input events a name means (`ctrl`, `shift`, `alt`,
/// `meta` and their aliases).
pub fn browser_modifier(name: &str) -> Option<i64> {
    modifier::named(name)
}

#[cfg(test)]
mod tests {
    /// Every DevTools method name and all page JavaScript live in `crates/browser`; the
    /// engine keeps the session logic and calls its typed functions.
    #[test]
    fn no_devtools_method_is_named_in_the_engine() {
        fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    sources(&path, out);
                } else if path.extension().is_some_and(|e| e == "rs" || e == "js") {
                    out.push(path);
                }
            }
        }
        let domains = [
            "Page",
            "DOM",
            "Runtime",
            "Input",
            "Target",
            "Accessibility",
            "Network",
            "Browser",
            "Emulation",
        ];
        let needles: Vec<String> = domains.iter().map(|d| format!("\"{d}.")).collect();
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        sources(&root.join("src"), &mut files);
        assert!(files.len() > 10, "{files:?}");
        let mut found = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in text.lines().enumerate() {
                if needles.iter().any(|needle| line.contains(needle.as_str())) {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
        assert!(
            found.is_empty(),
            "DevTools methods named in the engine (move them into crates/browser):\n{}",
            found.join("\n")
        );
    }
}
