//! The browsers and pages of a session: the session slot holding this client's browsers,
//! the state kept per attached page (its refs, latest snapshots, why its refs no longer hold),
//! and how a call's `page` argument becomes an attached page (the one this client used last
//! when none is named; refused while a JavaScript dialog holds it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use deskpilot_browser::cdp::Connection;
use deskpilot_browser::launch::Launched;
use deskpilot_browser::snapshot::{RefTable, Target};
use deskpilot_browser::view::Snapshots;
use deskpilot_browser::{page as cdp_page, target as cdp_target};
use deskpilot_types::ErrorCode;

use super::effects::dialog_words;
use super::{PageInfo, coded, lock, unavailable};
use crate::{error::Error, session::Session};

/// One page this client has attached to.
#[derive(Debug)]
pub(super) struct Page {
    pub(super) session: String,
    pub(super) refs: RefTable,
    /// The addressable nodes of the latest snapshot.
    pub(super) latest: Vec<Target>,
    /// The page's latest snapshots, for a diff and a cursor.
    pub(super) snapshots: Snapshots,
    /// Why the latest snapshot's refs no longer hold (a navigation), when they do not.
    pub(super) invalidated: Option<String>,
    pub(super) attached_at: Instant,
    pub(super) snapshot_at: Option<Instant>,
}

impl Page {
    fn new(session: String) -> Page {
        Page {
            session,
            refs: RefTable::default(),
            latest: Vec::new(),
            snapshots: Snapshots::default(),
            invalidated: None,
            attached_at: Instant::now(),
            snapshot_at: None,
        }
    }

    /// The latest snapshot's refs no longer hold, for `why` (the page navigated).
    pub(super) fn invalidate(&mut self, why: String) {
        self.latest.clear();
        self.invalidated = Some(why);
    }

    /// Whether `r` was ever a ref of this page.
    pub(super) fn refs_known(&self, r: &str) -> bool {
        self.refs.knows(r)
    }
}

/// A browser this client launched or attached to, and its pages it attached to.
#[derive(Debug)]
pub(super) struct Browser {
    pub(super) id: u32,
    /// Launched without a window (its pages are not on the desktop).
    pub(super) headless: bool,
    pub(super) cdp: Arc<Connection>,
    pub(super) launched: Option<Launched>,
    pub(super) port: Option<u16>,
    pub(super) pages: HashMap<String, Page>,
}

/// This client's browsers.
#[derive(Debug, Default)]
pub(super) struct Browsers {
    pub(super) list: Vec<Browser>,
    pub(super) next: u32,
    /// The page this client used last: (browser id, target id).
    pub(super) current: Option<(u32, String)>,
}

/// The session slot: shared so a protocol call never holds the session's slot lock.
#[derive(Debug, Default)]
struct Slot(Arc<Mutex<Browsers>>);

impl Session {
    /// This client's browsers.
    pub(super) fn browsers(&self) -> Arc<Mutex<Browsers>> {
        self.with_slot::<Slot, _>(|s| s.0.clone())
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

    /// The page `page` names (default: the one this client used last).
    pub fn browser_page(&self, page: Option<&str>) -> Result<PageInfo, Error> {
        self.page_any(page).map(|p| p.2)
    }

    /// The page `page` names (a target id), else the one this client used last, attached;
    /// refused while a JavaScript dialog holds it (every script and input waits on it).
    pub(super) fn page(
        &self,
        page: Option<&str>,
    ) -> Result<(Arc<Connection>, String, PageInfo), Error> {
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
    pub(super) fn page_any(
        &self,
        page: Option<&str>,
    ) -> Result<(Arc<Connection>, String, PageInfo), Error> {
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

    pub(super) fn with_page<R>(
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
}

/// The page targets of one browser.
pub(super) fn pages_of(cdp: &Connection, browser: u32) -> Result<Vec<PageInfo>, Error> {
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
