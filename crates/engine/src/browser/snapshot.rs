//! A page's snapshot for the agent: its accessibility tree (child frames included) read afresh
//! and rendered with refs, then shown as the view asks — scoped, cut by depth, projected to a
//! query, as only what changed since an earlier snapshot, in parts a cursor continues (the
//! text shaping is `deskpilot_browser::view`, over the page's kept renders). Also the page's
//! controls as typed rows, and the snapshot an action's answer may carry ([`SnapshotAfter`]).

use std::time::Instant;

use deskpilot_browser::page as cdp_page;
use deskpilot_browser::snapshot::{self, Target};
use deskpilot_browser::view::{Refused, Shown, View};
use deskpilot_types::ErrorCode;
use serde::Serialize;

use super::{BrowserOutcome, PageInfo, coded, unavailable};
use crate::{error::Error, session::Session};

/// One actionable control of a page (a ref of its snapshot) with its role, accessible name
/// and depth in the tree; a control's own text is not another control (the snapshot's dedup).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageControl {
    pub r#ref: String,
    pub role: String,
    pub name: String,
    pub depth: usize,
}

impl PageControl {
    fn of(t: &Target) -> PageControl {
        PageControl {
            r#ref: t.r#ref.clone(),
            role: t.role.clone(),
            name: t.name.clone(),
            depth: t.depth,
        }
    }
}

/// A page's snapshot, as its view shows it.
#[derive(Debug, Clone)]
pub struct PageSnapshot {
    pub page: PageInfo,
    /// The refs of the whole snapshot (a view may show fewer).
    pub refs: usize,
    pub shown: Shown,
}

/// What an action's answer adds after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SnapshotAfter {
    #[default]
    Nothing,
    /// The page's whole snapshot.
    Whole,
    /// Only what changed since the page's latest snapshot before the action (the whole page
    /// when it had none).
    Diff,
}

impl Session {
    /// The page's accessibility tree (child frames included) as text with refs. The whole
    /// page is read and its refs all hold; what is shown can be scoped to the subtree of one
    /// ref (`scope`), cut below `depth` levels, projected to the lines containing `query`
    /// (with their ancestors), and is then cut at `max_lines`. A `cursor` shows the next
    /// part of the snapshot it names, without reading the page again.
    pub fn browser_snapshot(&self, page: Option<&str>, view: &View) -> Result<PageSnapshot, Error> {
        let (cdp, session, info) = self.page(page)?;
        let gone = || coded(ErrorCode::PageNotFound, "the page went away");
        let (shown, refs) = match view.cursor {
            Some(_) => self
                .with_page(info.browser, &info.id, |p| {
                    (p.snapshots.resume(view), p.latest.len())
                })
                .ok_or_else(gone)?,
            None => {
                let trees = cdp_page::frame_trees(&cdp, &session).map_err(unavailable)?;
                self.with_page(info.browser, &info.id, |p| {
                    let r = snapshot::render(&trees, &mut p.refs, usize::MAX);
                    p.latest = r.targets.clone();
                    p.invalidated = None;
                    p.snapshot_at = Some(Instant::now());
                    (p.snapshots.take(r, view), p.latest.len())
                })
                .ok_or_else(gone)?
            }
        };
        let shown = shown.map_err(|refused| match refused {
            Refused::NoScope(scope) => Error::ElementNotFound {
                what: format!(
                    "ref {scope} in the page's snapshot (it is gone, or never was a ref of this page); take browser_snapshot without scope"
                ),
            },
            Refused::NotLatest(n) => Error::InvalidArgument {
                message: format!(
                    "cursor: snapshot {n} is no longer the page's latest; take browser_snapshot again"
                ),
            },
        })?;
        Ok(PageSnapshot {
            page: info,
            refs,
            shown,
        })
    }

    /// The page's actionable controls from a fresh snapshot (their refs work for
    /// `browser_click` / `browser_type` like the snapshot's own), in the snapshot's order.
    pub fn browser_controls(
        &self,
        page: Option<&str>,
    ) -> Result<(PageInfo, Vec<PageControl>), Error> {
        let snap = self.browser_snapshot(
            page,
            &View {
                max_lines: usize::MAX,
                ..View::default()
            },
        )?;
        let controls = self
            .with_page(snap.page.browser, &snap.page.id, |p| {
                p.latest.iter().map(PageControl::of).collect()
            })
            .unwrap_or_default();
        Ok((snap.page, controls))
    }

    /// Runs `act`, an action on the page `page` names (default: the one this client used
    /// last), and adds to its outcome the snapshot `after` asks for, of the page the action
    /// ended on, in the default view; a snapshot that cannot be taken is left out.
    pub fn browser_then(
        &self,
        page: Option<&str>,
        after: SnapshotAfter,
        act: impl FnOnce(&Session) -> Result<BrowserOutcome, Error>,
    ) -> Result<BrowserOutcome, Error> {
        // Looked up only for a diff: it costs a round trip to the browser.
        let before = match after {
            SnapshotAfter::Diff => self
                .page_any(page)
                .ok()
                .and_then(|(_, _, p)| self.with_page(p.browser, &p.id, |p| p.snapshots.taken()))
                .filter(|n| *n != 0),
            _ => None,
        };
        let mut o = act(self)?;
        if after != SnapshotAfter::Nothing {
            let view = View {
                since: before,
                ..View::default()
            };
            o.snapshot = self.browser_snapshot(Some(&o.page.id), &view).ok();
        }
        Ok(o)
    }
}
