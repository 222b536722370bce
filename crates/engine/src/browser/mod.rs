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

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use deskpilot_browser::cdp::Connection;
use deskpilot_browser::dom::{self, Quad, Selection};
use deskpilot_browser::input::{self, Key, modifier};
use deskpilot_browser::launch::{self, LaunchOptions, Launched};
use deskpilot_browser::script::{self, Evaluated};
use deskpilot_browser::snapshot::{self, RefTable, Target};
use deskpilot_browser::{page as cdp_page, target as cdp_target};
use deskpilot_types::ErrorCode;
use serde::Serialize;
use serde_json::{Value, json};

use crate::action::{Effect, Outcome, Route};
use crate::{Error, Mutation, Session};

mod forms;
mod logs;
mod pointer;
mod shot;
mod tabs;
mod wait;

pub use deskpilot_browser::cdp::{ConsoleMessage, Request};
pub use deskpilot_browser::input::Click;
pub use deskpilot_browser::page::Emulation;
pub use forms::FormField;
pub use logs::RequestDetail;
pub use shot::PageShot;
pub use tabs::Go;
pub use wait::Until;

/// How long one protocol call may take.
const CALL: Duration = deskpilot_browser::CALL;
/// How long a launch may take to announce its endpoint.
const START: Duration = Duration::from_secs(30);

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

/// One page this client has attached to.
#[derive(Debug)]
struct Page {
    session: String,
    refs: RefTable,
    /// The addressable nodes of the latest snapshot.
    latest: Vec<Target>,
    snapshots: u64,
    /// The last [`KEPT_SNAPSHOTS`] snapshots' whole text, oldest first.
    texts: std::collections::VecDeque<(u64, String)>,
    /// Why the latest snapshot's refs no longer hold (a navigation), when they do not.
    invalidated: Option<String>,
    attached_at: Instant,
    snapshot_at: Option<Instant>,
}

impl Page {
    fn new(session: String) -> Page {
        Page {
            session,
            refs: RefTable::default(),
            latest: Vec::new(),
            snapshots: 0,
            texts: std::collections::VecDeque::new(),
            invalidated: None,
            attached_at: Instant::now(),
            snapshot_at: None,
        }
    }
}

#[derive(Debug)]
struct Browser {
    id: u32,
    /// Launched without a window (its pages are not on the desktop).
    headless: bool,
    cdp: Arc<Connection>,
    launched: Option<Launched>,
    port: Option<u16>,
    pages: HashMap<String, Page>,
}

#[derive(Debug, Default)]
struct Browsers {
    list: Vec<Browser>,
    next: u32,
    /// The page this client used last: (browser id, target id).
    current: Option<(u32, String)>,
}

/// The session slot: shared so a protocol call never holds the session's slot lock.
#[derive(Debug, Default)]
struct Slot(Arc<Mutex<Browsers>>);

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

/// What part of a page's snapshot to show.
#[derive(Debug, Clone, Default)]
pub struct SnapshotView {
    /// Only the subtree of this ref ("" for the whole page).
    pub scope: String,
    /// Levels shown below the top (`None`: all).
    pub depth: Option<usize>,
    /// Only lines containing this, with their ancestors ("" for all).
    pub query: String,
    pub max_lines: usize,
    /// At most this many bytes of lines (`None`: no byte budget); whole lines only.
    pub max_bytes: Option<usize>,
    /// Only what changed since this snapshot of the page (with the ancestors that place it).
    pub since: Option<u64>,
    /// Continue a cut view: the snapshot and the line it stopped at (the other fields as
    /// they were for the first part).
    pub cursor: Option<(u64, usize)>,
}

/// How many snapshots of a page are kept for `since` and `cursor`.
const KEPT_SNAPSHOTS: usize = 8;

/// One actionable control of a page (a ref of its snapshot) with its role, accessible name
/// and depth in the tree; a control's own text is not another control (the snapshot's dedup).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageControl {
    pub r#ref: String,
    pub role: String,
    pub name: String,
    pub depth: usize,
}

/// The controls of a snapshot text (`- button "Submit" [ref=e2]`, indented two spaces per
/// level; a table row may hold several): the engine reads its own format back.
fn controls_of(text: &str) -> Vec<PageControl> {
    let mut out = Vec::new();
    for line in text.lines() {
        let depth = (line.len() - line.trim_start().len()) / 2;
        let mut rest = line.trim_start().trim_start_matches("- ");
        while let Some(at) = rest.find("[ref=") {
            let head = &rest[..at];
            let after = &rest[at + 5..];
            let Some(end) = after.find(']') else { break };
            let r = after[..end].to_string();
            rest = &after[end + 1..];
            // The part of `head` after the previous cell (`|`) is `role "name"`.
            let head = head.rsplit(" | ").next().unwrap_or(head).trim();
            let (role_part, name) = match (head.find('"'), head.rfind('"')) {
                (Some(a), Some(b)) if b > a => (&head[..a], head[a + 1..b].replace("\\\"", "\"")),
                _ => (head, String::new()),
            };
            let role = role_part
                .split_whitespace()
                .next_back()
                .unwrap_or("")
                .trim_end_matches(':')
                .to_string();
            out.push(PageControl {
                r#ref: r,
                role,
                name,
                depth,
            });
        }
    }
    out
}

/// A page's snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct PageSnapshot {
    pub page: PageInfo,
    pub text: String,
    pub refs: usize,
    pub lines: usize,
    /// Lines of the view after this part (cut by `max_lines` or `max_bytes`).
    pub omitted: usize,
    pub snapshot: u64,
    /// Where the next part starts, when the view was cut: `cursor` for the next call.
    pub next: Option<(u64, usize)>,
    /// The view shows only what changed since this snapshot; `gone` of its lines went.
    pub since: Option<u64>,
    pub gone: usize,
    /// Why a view asked as changes shows the whole page instead.
    pub whole_because: Option<String>,
    /// Page texts cut to [`PROSE_CHARS`] characters in this view (a scope or a query shows
    /// them whole).
    pub shortened: usize,
}

/// The characters of page text (prose) a whole-page snapshot shows per text.
pub const PROSE_CHARS: usize = 200;

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

/// The modifier bit of the browser's input events a name means (`ctrl`, `shift`, `alt`,
/// `meta` and their aliases).
pub fn browser_modifier(name: &str) -> Option<i64> {
    modifier::named(name)
}

/// The ports of `ports` on which a DevTools endpoint answers on 127.0.0.1 (any browser or
/// Electron app started with `--remote-debugging-port`), read-only.
pub fn devtools_ports(ports: std::ops::RangeInclusive<u16>) -> Vec<u16> {
    ports
        .filter(|p| launch::endpoint(*p, Duration::from_millis(300)).is_ok())
        .collect()
}

impl Session {
    fn browsers(&self) -> Arc<Mutex<Browsers>> {
        self.with_slot::<Slot, _>(|s| s.0.clone())
    }

    fn add_browser(
        &self,
        cdp: Connection,
        launched: Option<Launched>,
        port: Option<u16>,
        headless: bool,
    ) -> Result<BrowserInfo, Error> {
        let shared = self.browsers();
        let mut b = lock(&shared);
        b.next += 1;
        let id = b.next;
        b.list.push(Browser {
            id,
            headless,
            cdp: Arc::new(cdp),
            launched,
            port,
            pages: HashMap::new(),
        });
        drop(b);
        let info = self.browser_info(id)?;
        if let Some(first) = info.pages.first() {
            lock(&shared).current = Some((id, first.id.clone()));
        }
        Ok(info)
    }

    fn browser_info(&self, id: u32) -> Result<BrowserInfo, Error> {
        let shared = self.browsers();
        let (cdp, pid, launched, port) = {
            let b = lock(&shared);
            let br = b
                .list
                .iter()
                .find(|x| x.id == id)
                .ok_or_else(|| coded(ErrorCode::PageNotFound, format!("no browser {id}")))?;
            (
                br.cdp.clone(),
                br.launched.as_ref().map(Launched::pid),
                br.launched.is_some(),
                br.port,
            )
        };
        Ok(BrowserInfo {
            id,
            pid,
            launched,
            port,
            pages: pages_of(&cdp, id)?,
            window: None,
        })
    }

    /// Launches the installed Chromium on `url` (on this desktop, or headless) with a
    /// throw-away profile.
    pub fn browser_launch(&self, url: &str, headless: bool) -> Result<BrowserInfo, Error> {
        self.browser_launch_with(url, headless, None, 0)
    }

    /// [`Session::browser_launch`] with a browser of the caller's choice (`program`) and a fixed
    /// DevTools `port` (0: any).
    pub fn browser_launch_with(
        &self,
        url: &str,
        headless: bool,
        program: Option<&std::path::Path>,
        port: u16,
    ) -> Result<BrowserInfo, Error> {
        let url = if url.trim().is_empty() {
            "about:blank"
        } else {
            url.trim()
        };
        self.gate(
            Mutation::Launch,
            &format!("launch a browser on {}", crate::safety::quoted(url)),
        )?;
        // The browser starts on a blank page that is attached, with its network events on,
        // before it goes to `url`: the document request of `url` itself is then logged (a
        // page attached after its first navigation never sees it).
        let launched = launch::launch(&LaunchOptions {
            url: "about:blank".to_string(),
            headless,
            program: program.map(std::path::Path::to_path_buf),
            port,
            env: self.desktop().window_control.launch_env(),
            timeout: START,
        })
        .map_err(unavailable)?;
        let cdp = Connection::open(&launched.ws_url, CALL).map_err(unavailable)?;
        // The first page appears shortly after the endpoint does.
        let deadline = Instant::now() + Duration::from_secs(10);
        while pages_of(&cdp, 0)?.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let pid = launched.pid();
        // ws://127.0.0.1:PORT/devtools/browser/…
        let port = launched
            .ws_url
            .rsplit_once(':')
            .and_then(|(_, rest)| rest.split('/').next()?.parse::<u16>().ok());
        let mut info = self.add_browser(cdp, Some(launched), port, headless)?;
        if url != "about:blank" && !info.pages.is_empty() {
            let (cdp, session, _) = self.page_any(None)?;
            // A URL the browser cannot load shows its error page, as it would when given on
            // the command line.
            let _ = cdp_page::navigate(&cdp, &session, url).map_err(unavailable)?;
            wait_loaded(&cdp, &session);
            info.pages = pages_of(&cdp, info.id)?;
        }
        if !headless {
            // Its window maps a moment after its first page exists.
            let deadline = Instant::now() + Duration::from_secs(10);
            while info.window.is_none() && Instant::now() < deadline {
                info.window = self
                    .list_windows(&crate::WindowFilter::default())
                    .ok()
                    .and_then(|w| w.into_iter().find(|w| w.pid == Some(pid)));
                if info.window.is_none() {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
        Ok(info)
    }

    /// Attaches to a browser (or Electron app) listening on DevTools `port`, or to the one
    /// owning the process `pid` (its `--remote-debugging-port`).
    pub fn browser_attach(
        &self,
        port: Option<u16>,
        pid: Option<u32>,
    ) -> Result<BrowserInfo, Error> {
        let port = match (port, pid) {
            (Some(p), _) => p,
            (None, Some(pid)) => launch::debug_port_of(pid).ok_or_else(|| {
                coded(
                    ErrorCode::BrowserUnavailable,
                    format!(
                        "process {pid} was not started with --remote-debugging-port; restart it with --remote-debugging-port=9222 (Electron apps too) and attach by port"
                    ),
                )
            })?,
            (None, None) => {
                return Err(Error::InvalidArgument {
                    message: "pass port (the browser's --remote-debugging-port) or window_id".into(),
                });
            }
        };
        let ws = launch::endpoint(port, Duration::from_secs(5)).map_err(unavailable)?;
        let cdp = Connection::open(&ws, CALL).map_err(unavailable)?;
        self.add_browser(cdp, None, Some(port), false)
    }

    /// This client's browser listening on DevTools `port`, when it has one.
    pub fn browser_on_port(&self, port: u16) -> Option<u32> {
        lock(&self.browsers())
            .list
            .iter()
            .find(|b| b.port == Some(port))
            .map(|b| b.id)
    }

    /// Every page of this client's browsers.
    pub fn browser_targets(&self) -> Result<Vec<PageInfo>, Error> {
        let shared = self.browsers();
        let list: Vec<(u32, Arc<Connection>)> = lock(&shared)
            .list
            .iter()
            .map(|b| (b.id, b.cdp.clone()))
            .collect();
        let mut out = Vec::new();
        for (id, cdp) in list {
            out.extend(pages_of(&cdp, id)?);
        }
        Ok(out)
    }

    /// The page `page` names (a target id), else the one this client used last, attached;
    /// refused while a JavaScript dialog holds it (every script and input waits on it).
    fn page(&self, page: Option<&str>) -> Result<(Arc<Connection>, String, PageInfo), Error> {
        let (cdp, session, info) = self.page_any(page)?;
        if let Some(d) = cdp.dialog(&session) {
            return Err(coded(
                ErrorCode::ElementCovered,
                format!(
                    "{} open on \"{}\" ({}); the page waits for it: answer it with browser_dialog (accept or dismiss) first",
                    dialog_words(&d),
                    info.title,
                    info.url
                ),
            ));
        }
        Ok((cdp, session, info))
    }

    /// [`Session::page`] even while a dialog is open.
    fn page_any(&self, page: Option<&str>) -> Result<(Arc<Connection>, String, PageInfo), Error> {
        let shared = self.browsers();
        let (browser, target) = {
            let b = lock(&shared);
            if b.list.is_empty() {
                return Err(coded(
                    ErrorCode::PageNotFound,
                    "no browser yet: browser_launch or browser_attach first",
                ));
            }
            match page.filter(|p| !p.trim().is_empty()) {
                Some(p) => {
                    let owner = b
                        .list
                        .iter()
                        .find(|br| br.pages.contains_key(p))
                        .map(|br| br.id)
                        .or_else(|| b.current.as_ref().map(|c| c.0))
                        .unwrap_or(b.list[0].id);
                    (owner, p.trim().to_string())
                }
                None => match &b.current {
                    Some(c) => c.clone(),
                    None => {
                        return Err(coded(
                            ErrorCode::PageNotFound,
                            "no page chosen: pass page (an id from browser_tabs)",
                        ));
                    }
                },
            }
        };
        let cdp = lock(&shared)
            .list
            .iter()
            .find(|b| b.id == browser)
            .map(|b| b.cdp.clone())
            .ok_or_else(|| coded(ErrorCode::PageNotFound, format!("no browser {browser}")))?;
        let info = pages_of(&cdp, browser)?
            .into_iter()
            .find(|p| p.id == target)
            .ok_or_else(|| {
                coded(
                    ErrorCode::PageNotFound,
                    format!("no page {target} (it may have closed); browser_tabs lists them"),
                )
            })?;
        let known = lock(&shared)
            .list
            .iter()
            .find(|b| b.id == browser)
            .and_then(|b| b.pages.get(&target).map(|p| p.session.clone()));
        let session = match known {
            Some(s) => s,
            None => {
                let s = cdp_target::attach(&cdp, &target).map_err(unavailable)?;
                // Network events are counted by the connection for browser_wait_for's idle.
                cdp_page::enable(&cdp, &s);
                let mut b = lock(&shared);
                if let Some(br) = b.list.iter_mut().find(|b| b.id == browser) {
                    br.pages.insert(target.clone(), Page::new(s.clone()));
                }
                s
            }
        };
        lock(&shared).current = Some((browser, target));
        Ok((cdp, session, info))
    }

    fn with_page<R>(
        &self,
        browser: u32,
        target: &str,
        f: impl FnOnce(&mut Page) -> R,
    ) -> Option<R> {
        let shared = self.browsers();
        let mut b = lock(&shared);
        b.list
            .iter_mut()
            .find(|x| x.id == browser)
            .and_then(|x| x.pages.get_mut(target))
            .map(f)
    }

    /// Loads `url` in the page and waits for it to finish loading.
    pub fn browser_navigate(&self, page: Option<&str>, url: &str) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info) = self.page(page)?;
        self.gate(
            Mutation::Other,
            &format!(
                "navigate \"{}\" ({}) to {}",
                info.title,
                info.url,
                crate::safety::quoted(url)
            ),
        )?;
        if let Some(e) = cdp_page::navigate(&cdp, &session, url).map_err(unavailable)? {
            return Err(coded(ErrorCode::BrowserUnavailable, format!("{url}: {e}")));
        }
        wait_loaded(&cdp, &session);
        self.with_page(info.browser, &info.id, |p| {
            p.latest.clear();
            p.invalidated = Some(format!("the page navigated to {url}"));
        });
        let now = self.page(Some(&info.id))?.2;
        Ok(BrowserOutcome {
            changed: Some(now.url != info.url || now.title != info.title),
            detail: format!("navigated to {}", now.url),
            page: now,
            value: None,
            snapshot: None,
            mutation: true,
        })
    }

    /// The page's accessibility tree (child frames included) as text with refs. The whole
    /// page is read and its refs all hold; what is shown can be scoped to the subtree of one
    /// ref (`scope`), cut below `depth` levels, projected to the lines containing `query`
    /// (with their ancestors), and is then cut at `max_lines`.
    pub fn browser_snapshot(
        &self,
        page: Option<&str>,
        view: &SnapshotView,
    ) -> Result<PageSnapshot, Error> {
        let (cdp, session, info) = self.page(page)?;
        let gone = || coded(ErrorCode::PageNotFound, "the page went away");
        // The whole text this view is cut from, its snapshot, its refs, and the earlier
        // snapshot's text to compare with.
        let (full, n, refs, before, from) = match view.cursor {
            Some((n, from)) => self
                .with_page(info.browser, &info.id, |p| {
                    let latest = p.texts.back().filter(|(m, _)| *m == n && p.snapshots == n);
                    latest.map(|(_, text)| {
                        let before = view.since.and_then(|s| {
                            p.texts.iter().find(|(m, _)| *m == s).map(|(_, t)| t.clone())
                        });
                        (text.clone(), n, p.latest.len(), before, from)
                    })
                })
                .ok_or_else(gone)?
                .ok_or_else(|| Error::InvalidArgument {
                    message: format!(
                        "cursor: snapshot {n} is no longer the page's latest; take browser_snapshot again"
                    ),
                })?,
            None => {
                let trees = cdp_page::frame_trees(&cdp, &session).map_err(unavailable)?;
                self.with_page(info.browser, &info.id, |p| {
                    let before = view.since.and_then(|s| {
                        p.texts.iter().find(|(m, _)| *m == s).map(|(_, t)| t.clone())
                    });
                    let r = snapshot::render(&trees, &mut p.refs, usize::MAX);
                    p.latest = r.targets.clone();
                    p.snapshots += 1;
                    p.invalidated = None;
                    p.snapshot_at = Some(Instant::now());
                    if p.texts.len() == KEPT_SNAPSHOTS {
                        p.texts.pop_front();
                    }
                    p.texts.push_back((p.snapshots, r.text.clone()));
                    (r.text, p.snapshots, r.targets.len(), before, 0)
                })
                .ok_or_else(gone)?
            }
        };
        let shown = |text: &str| -> Result<(String, usize), Error> {
            let scope = view.scope.trim();
            let scoped = snapshot::scope(text, Some(scope), view.depth).ok_or_else(|| {
                Error::ElementNotFound {
                    what: format!(
                        "ref {scope} in the page's snapshot (it is gone, or never was a ref of this page); take browser_snapshot without scope"
                    ),
                }
            })?;
            let projected = snapshot::project(&scoped, &view.query).unwrap_or_else(|| {
                format!(
                    "(nothing matches {:?}; every ref of the page is still valid)\n",
                    view.query
                )
            });
            // The whole page's long prose is shortened; a scope or a query shows it whole.
            Ok(if scope.is_empty() && view.query.trim().is_empty() {
                snapshot::shorten(&projected, PROSE_CHARS)
            } else {
                (projected, 0)
            })
        };
        let (whole, shortened) = shown(&full)?;
        let (mut since, mut removed, mut whole_because) = (None, 0, None);
        let viewed = match (view.since, before) {
            (None, _) => whole,
            (Some(s), None) => {
                whole_because = Some(format!(
                    "snapshot {s} of this page is not kept (the last {KEPT_SNAPSHOTS} are)"
                ));
                whole
            }
            (Some(s), Some(before)) => {
                let before = shown(&before).unwrap_or_default().0;
                match snapshot::changes(&before, &whole) {
                    (Some(diff), g) if diff.len() < whole.len() => {
                        since = Some(s);
                        removed = g;
                        diff
                    }
                    (None, g) => {
                        since = Some(s);
                        removed = g;
                        String::new()
                    }
                    _ => {
                        whole_because =
                            Some("the changes would be longer than the page".to_string());
                        whole
                    }
                }
            }
        };
        let (text, next) = snapshot::page(
            &viewed,
            from,
            view.max_lines.max(1),
            view.max_bytes.unwrap_or(usize::MAX),
        );
        let lines = text.lines().count();
        let omitted = viewed.lines().count().saturating_sub(from + lines);
        Ok(PageSnapshot {
            page: info,
            refs,
            lines,
            text,
            omitted,
            snapshot: n,
            next: next.map(|line| (n, line)),
            since,
            gone: removed,
            whole_because,
            shortened,
        })
    }

    /// The page's actionable controls from a fresh snapshot (their refs work for
    /// `browser_click` / `browser_type` like the snapshot's own).
    pub fn browser_controls(
        &self,
        page: Option<&str>,
    ) -> Result<(PageInfo, Vec<PageControl>), Error> {
        let snap = self.browser_snapshot(
            page,
            &SnapshotView {
                max_lines: usize::MAX,
                ..SnapshotView::default()
            },
        )?;
        Ok((snap.page, controls_of(&snap.text)))
    }

    /// The page `page` names (default: the one this client used last).
    pub fn browser_page(&self, page: Option<&str>) -> Result<PageInfo, Error> {
        self.page_any(page).map(|p| p.2)
    }

    /// The number of the page's latest snapshot (0: none yet), for a diff against it.
    pub fn browser_snapshot_number(&self, page: &PageInfo) -> u64 {
        self.with_page(page.browser, &page.id, |p| p.snapshots)
            .unwrap_or(0)
    }

    /// The node a ref names in the latest snapshot of its page.
    fn resolve_ref(&self, r: &str) -> Result<(Arc<Connection>, String, PageInfo, Target), Error> {
        let r = r.trim();
        let shared = self.browsers();
        let found = {
            let b = lock(&shared);
            let mut hit = None;
            let mut stale = None;
            for br in &b.list {
                for (id, p) in &br.pages {
                    if let Some(t) = p.latest.iter().find(|t| t.r#ref == r) {
                        hit = Some((br.id, id.clone(), t.clone()));
                    } else if p.refs_known(r) {
                        stale = Some(p.invalidated.clone().unwrap_or_else(|| {
                            "the element is not in the page's latest snapshot".to_string()
                        }));
                    }
                }
            }
            (hit, stale)
        };
        match found {
            (Some((browser, target, t)), _) => {
                let (cdp, session, info) = self.page(Some(&target))?;
                // A new document since the snapshot: its refs name nodes that are gone, even
                // when the new page has a control of the same name.
                let since = self
                    .with_page(browser, &target, |p| p.snapshot_at)
                    .flatten();
                let went = since.and_then(|since| {
                    cdp.activity(&session)
                        .navigations
                        .into_iter()
                        .rfind(|n| n.at > since && !n.child && !n.same_document)
                });
                if let Some(n) = went {
                    self.with_page(browser, &target, |p| {
                        p.latest.clear();
                        p.invalidated = Some(format!("the page navigated to {}", n.url));
                    });
                    return Err(Error::StaleElement {
                        token: r.to_string(),
                        why: format!(
                            "the page navigated to {} since that snapshot; take browser_snapshot again",
                            n.url
                        ),
                    });
                }
                // An element of an out-of-process frame is reached through that frame's session.
                let session =
                    cdp_page::session_of(&cdp, &session, cdp_page::walker_frame(&t.frame));
                let t = if t.walker {
                    // The walker's id: the element it names now, as the browser numbers it.
                    let frame = cdp_page::walker_frame(&t.frame);
                    match cdp_page::walker_backend(&cdp, &session, frame, t.backend)
                        .map_err(unavailable)?
                    {
                        Some(backend) => Target {
                            backend,
                            walker: false,
                            ..t
                        },
                        None => {
                            return Err(Error::StaleElement {
                                token: r.to_string(),
                                why: "the element was removed from the page since that snapshot; take browser_snapshot again".to_string(),
                            });
                        }
                    }
                } else {
                    t
                };
                Ok((cdp, session, info, t))
            }
            (None, Some(why)) => Err(Error::StaleElement {
                token: r.to_string(),
                why: format!("{why}; take browser_snapshot again"),
            }),
            (None, None) => Err(Error::ElementNotFound {
                what: format!("ref {r} (use a ref from the latest browser_snapshot)"),
            }),
        }
    }

    /// Clicks the element `r` names: scrolled into view, then real mouse events at its visible
    /// centre, once the point is known to hit it.
    pub fn browser_click(&self, r: &str) -> Result<BrowserOutcome, Error> {
        self.browser_click_with(r, &Click::default())
    }

    /// [`Session::browser_click`] with a button, a count (2: a double click) and modifiers.
    pub fn browser_click_with(&self, r: &str, how: &Click) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info, t) = self.resolve_ref(r)?;
        let what = click_words(how);
        self.gate(
            Mutation::Other,
            &format!(
                "{what} {} \"{}\" in \"{}\" ({})",
                t.role, t.name, info.title, info.url
            ),
        )?;
        let (x, y) = hit_point(&cdp, &session, &t, &what)?;
        judged(
            &cdp,
            &session,
            SETTLE,
            || input::click_with(&cdp, &session, x, y, how),
            |changed| BrowserOutcome {
                // `click` → `clicked`, `ctrl+double-click` → `ctrl+double-clicked`.
                detail: format!("{what}ed {} \"{}\" at ({x:.0}, {y:.0})", t.role, t.name),
                page: self.page_any(Some(&info.id)).map(|p| p.2).unwrap_or(info),
                changed,
                value: None,
                snapshot: None,
                mutation: true,
            },
        )
    }

    /// Types `text` into the element `r` names (focus, then `insertText`), optionally pressing
    /// Enter after it; the element's value is read back.
    pub fn browser_type(&self, r: &str, text: &str, submit: bool) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info, t) = self.resolve_ref(r)?;
        self.gate(
            Mutation::Other,
            &format!(
                "type {} into {} \"{}\" in \"{}\" ({})",
                crate::safety::quoted(text),
                t.role,
                t.name,
                info.title,
                info.url
            ),
        )?;
        let stale = |e: deskpilot_browser::Error| Error::StaleElement {
            token: t.r#ref.clone(),
            why: format!("the element is gone from the page ({e}); take browser_snapshot again"),
        };
        dom::focus(&cdp, &session, t.backend).map_err(stale)?;
        let mark = cdp.log_mark(&session);
        input::insert_text(&cdp, &session, text).map_err(unavailable)?;
        let value = dom::read_value(&cdp, &session, t.backend);
        if submit && let Some(enter) = Key::named("Enter") {
            input::press(&cdp, &session, &enter, 0).map_err(unavailable)?;
        }
        let mut o = BrowserOutcome {
            changed: value.as_ref().map(|v| v.contains(text)),
            detail: format!("typed into {} \"{}\"", t.role, t.name),
            page: info,
            value: value.map(Value::from),
            snapshot: None,
            mutation: true,
        };
        dialog_after(&cdp, &session, mark, &mut o);
        Ok(o)
    }

    /// Types `text` into whatever has the focus in `page` (`insertText`: no keyboard layout,
    /// any Unicode).
    pub fn browser_insert_text(
        &self,
        page: Option<&str>,
        text: &str,
    ) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info) = self.page(page)?;
        self.gate(
            Mutation::Other,
            &format!(
                "type {} into the focused element of \"{}\" ({})",
                crate::safety::quoted(text),
                info.title,
                info.url
            ),
        )?;
        judged(
            &cdp,
            &session,
            SETTLE,
            || input::insert_text(&cdp, &session, text),
            |changed| BrowserOutcome {
                changed,
                detail: "typed into the focused element".into(),
                page: info,
                value: None,
                snapshot: None,
                mutation: true,
            },
        )
    }

    /// Chooses the options of the `<select>` that `r` names whose value or label is in
    /// `values` (one, or several for a multiple select), as a person picking them would:
    /// `input` and `change` fire. What is selected afterwards is read back.
    pub fn browser_select(&self, r: &str, values: &[String]) -> Result<BrowserOutcome, Error> {
        if values.is_empty() {
            return Err(Error::InvalidArgument {
                message: "values: name at least one option (its value or its label)".into(),
            });
        }
        let (cdp, session, info, t) = self.resolve_ref(r)?;
        self.gate(
            Mutation::Other,
            &format!(
                "select {} in {} \"{}\" in \"{}\" ({})",
                crate::safety::quoted(&values.join(", ")),
                t.role,
                t.name,
                info.title,
                info.url
            ),
        )?;
        let quoted = |v: &[String]| {
            v.iter()
                .map(|m| format!("{m:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (selected, changed) = match dom::select_options(&cdp, &session, t.backend, values)
            .map_err(unavailable)?
        {
            Selection::Gone => {
                return Err(Error::StaleElement {
                    token: t.r#ref.clone(),
                    why: "the element is gone from the page; take browser_snapshot again".into(),
                });
            }
            Selection::NotSelect => {
                return Err(coded(
                    ErrorCode::ActionUnsupported,
                    format!(
                        "{} \"{}\" is not a <select>; open it with browser_click and click the option's ref",
                        t.role, t.name
                    ),
                ));
            }
            Selection::Missing { missing, options } => {
                return Err(Error::InvalidArgument {
                    message: format!(
                        "{} \"{}\" has no option {}; its options: {}",
                        t.role,
                        t.name,
                        quoted(&missing),
                        quoted(&options)
                    ),
                });
            }
            Selection::Single => {
                return Err(Error::InvalidArgument {
                    message: format!(
                        "{} \"{}\" takes one option, not {}",
                        t.role,
                        t.name,
                        values.len()
                    ),
                });
            }
            Selection::Selected { selected, changed } => (selected, changed),
        };
        Ok(BrowserOutcome {
            changed: Some(changed),
            detail: format!(
                "selected {} in {} \"{}\"",
                quoted(&selected),
                t.role,
                t.name
            ),
            page: info,
            value: Some(json!(selected)),
            snapshot: None,
            mutation: true,
        })
    }

    /// Presses a key or chord (`Enter`, `ctrl+a`, `Shift+Tab`) in the page's focused element.
    pub fn browser_press_key(
        &self,
        page: Option<&str>,
        keys: &str,
    ) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info) = self.page(page)?;
        let parts: Vec<&str> = keys
            .split('+')
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .collect();
        let Some((key, mods)) = parts.split_last() else {
            return Err(Error::InvalidArgument {
                message: "keys: name a key, e.g. \"Enter\" or \"ctrl+a\"".into(),
            });
        };
        let mut modifiers = 0;
        for m in mods {
            modifiers |= modifier::named(m).ok_or_else(|| Error::InvalidArgument {
                message: format!(
                    "keys: {:?} is not a modifier (ctrl, alt, shift, meta)",
                    m.to_ascii_lowercase()
                ),
            })?;
        }
        let key = Key::named(key).ok_or_else(|| Error::InvalidArgument {
            message: format!(
                "keys: unknown key {key:?}; use Enter, Tab, Escape, Backspace, Delete, Arrow keys, Home, End, PageUp, PageDown, Space or one character"
            ),
        })?;
        self.gate(
            Mutation::Other,
            &format!("press {keys} in \"{}\" ({})", info.title, info.url),
        )?;
        judged(
            &cdp,
            &session,
            SETTLE,
            || input::press(&cdp, &session, &key, modifiers),
            |changed| BrowserOutcome {
                changed,
                detail: format!("pressed {keys}"),
                page: info,
                value: None,
                snapshot: None,
                mutation: true,
            },
        )
    }

    /// Evaluates `expression` in the page (promises awaited) and returns its JSON value.
    pub fn browser_eval(
        &self,
        page: Option<&str>,
        expression: &str,
    ) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info) = self.page(page)?;
        self.gate(
            Mutation::Other,
            &format!("run a script in \"{}\" ({})", info.title, info.url),
        )?;
        let value = match script::evaluate(&cdp, &session, expression).map_err(unavailable)? {
            Evaluated::Value(v) => v,
            Evaluated::Threw(message) => return Err(coded(ErrorCode::ScriptFailed, message)),
        };
        Ok(BrowserOutcome {
            page: info,
            detail: "evaluated".into(),
            changed: None,
            value: Some(value),
            snapshot: None,
            mutation: true,
        })
    }

    /// Closes a browser this client launched (its process and profile go), or detaches from
    /// one it attached to (left running). `None`: every browser of this client.
    pub fn browser_close(&self, browser: Option<u32>) -> Result<Vec<(u32, bool)>, Error> {
        let shared = self.browsers();
        let ids: Vec<u32> = {
            let b = lock(&shared);
            b.list
                .iter()
                .filter(|x| browser.is_none_or(|id| id == x.id))
                .map(|x| x.id)
                .collect()
        };
        if ids.is_empty() {
            return Err(coded(
                ErrorCode::PageNotFound,
                "no such browser in this session",
            ));
        }
        self.gate(
            Mutation::CloseWindow,
            &format!(
                "close browser{} {ids:?}",
                if ids.len() == 1 { "" } else { "s" }
            ),
        )?;
        let mut done = Vec::new();
        let taken: Vec<Browser> = {
            let mut b = lock(&shared);
            let (take, keep): (Vec<Browser>, Vec<Browser>) = std::mem::take(&mut b.list)
                .into_iter()
                .partition(|x| ids.contains(&x.id));
            b.list = keep;
            if b.current.as_ref().is_some_and(|c| ids.contains(&c.0)) {
                b.current = None;
            }
            take
        };
        for br in taken {
            let launched = br.launched.is_some();
            if launched {
                let _ = cdp_target::close_browser(&br.cdp, Duration::from_secs(3));
            }
            done.push((br.id, launched));
            drop(br); // a launched browser is killed and its profile removed here
        }
        Ok(done)
    }
}

impl Page {
    fn refs_known(&self, r: &str) -> bool {
        self.refs.knows(r)
    }
}

/// The page targets of one browser.
fn pages_of(cdp: &Connection, browser: u32) -> Result<Vec<PageInfo>, Error> {
    Ok(cdp_target::pages(cdp)
        .map_err(unavailable)?
        .into_iter()
        .map(|t| PageInfo {
            id: t.id,
            browser,
            title: t.title,
            url: t.url,
        })
        .collect())
}

fn wait_loaded(cdp: &Connection, session: &str) {
    let deadline = Instant::now() + CALL;
    while Instant::now() < deadline {
        if script::loaded(cdp, session) {
            return;
        }
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// The element scrolled into view and its first content quad (viewport CSS pixels); a node
/// that is gone is `STALE_ELEMENT`, one without a box `ELEMENT_COVERED`.
fn visible_quad(cdp: &Connection, session: &str, t: &Target, purpose: &str) -> Result<Quad, Error> {
    dom::visible_quad(cdp, session, t.backend)
        .map_err(|e| Error::StaleElement {
            token: t.r#ref.clone(),
            why: format!("the element is gone from the page ({e}); take browser_snapshot again"),
        })?
        .ok_or_else(|| {
            coded(
                ErrorCode::ElementCovered,
                format!("{} \"{}\" has no visible box {purpose}", t.role, t.name),
            )
        })
}

/// The viewport point at the centre of the element `t` names, scrolled into view, once it is
/// known to hit it (else `ELEMENT_COVERED` names what covers it).
fn hit_point(
    cdp: &Connection,
    session: &str,
    t: &Target,
    purpose: &str,
) -> Result<(f64, f64), Error> {
    let (x, y) = visible_quad(cdp, session, t, &format!("to {purpose}"))?.center();
    let hit =
        dom::node_at(cdp, session, x.round() as i64, y.round() as i64).map_err(unavailable)?;
    if let Some(hit) = hit
        && hit != t.backend
        && !dom::contains(cdp, session, t.backend, hit)
    {
        let what = dom::describe(cdp, session, hit);
        return Err(coded(
            ErrorCode::ElementCovered,
            format!(
                "{} \"{}\" is covered at its centre ({x:.0}, {y:.0}) by {what}; nothing was done. Close or dismiss it first",
                t.role, t.name
            ),
        ));
    }
    Ok((x, y))
}

/// A click's verb: `click`, `double-click`, `right-click`, with its modifiers (`ctrl+click`).
fn click_words(how: &Click) -> String {
    let mut mods = Vec::new();
    for (bit, name) in [
        (modifier::CTRL, "ctrl"),
        (modifier::ALT, "alt"),
        (modifier::SHIFT, "shift"),
        (modifier::META, "meta"),
    ] {
        if how.modifiers & bit != 0 {
            mods.push(name);
        }
    }
    let verb = match (how.button, how.count) {
        ("right", _) => "right-click",
        ("middle", _) => "middle-click",
        (_, 2) => "double-click",
        _ => "click",
    };
    mods.push(verb);
    mods.join("+")
}

/// "an alert dialog \"Saved\"", "a prompt dialog \"Name?\"".
fn dialog_words(d: &deskpilot_browser::cdp::Dialog) -> String {
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
fn dialog_after(cdp: &Connection, session: &str, mark: u64, o: &mut BrowserOutcome) {
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
const SETTLE: Duration = Duration::from_millis(500);

/// Sends `act` (input to the page) and judges it: whether the page's state moved within
/// `window`, and a dialog it raised, said in the outcome `finish` builds from that.
fn judged(
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

#[cfg(test)]
mod tests {
    #[test]
    fn snapshot_lines_become_controls_with_depth() {
        let text = "- RootWebArea \"Fixture\"\n  - button \"Submit\" [ref=e1]\n  - textbox \"名前\" [ref=e2]\n  - heading > link \"News \\\"today\\\"\" [ref=e3]\n    - row: link \"Q1\" [ref=e4] | \"1.20\" | link \"Q2\" [ref=e5]\n";
        let got: Vec<(String, String, String, usize)> = super::controls_of(text)
            .into_iter()
            .map(|c| (c.r#ref, c.role, c.name, c.depth))
            .collect();
        let want: Vec<(String, String, String, usize)> = [
            ("e1", "button", "Submit", 1),
            ("e2", "textbox", "名前", 1),
            ("e3", "link", "News \"today\"", 1),
            ("e4", "link", "Q1", 2),
            ("e5", "link", "Q2", 2),
        ]
        .into_iter()
        .map(|(r, role, n, d)| (r.to_string(), role.to_string(), n.to_string(), d))
        .collect();
        assert_eq!(got, want);
    }

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
