//! Waiting in a page: for text, for a selector, for a navigation, for the network to go quiet.
//!
//! Navigations and network requests are counted by the DevTools connection as their events
//! arrive (`Connection::activity`), so a wait started after the fact still sees a navigation
//! that a click set off a moment before.

use std::time::{Duration, Instant};

use deskpilot_browser::script;

use super::PageInfo;
use crate::{error::Error, session::Session};

/// How long the network must stay quiet to count as idle (playwright's `networkidle` too).
pub const QUIET: Duration = Duration::from_millis(500);

/// A page condition to wait for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Until {
    /// The page's text contains this.
    Text(String),
    /// A CSS selector matches an element.
    Selector(String),
    /// The page's top frame navigated (new document or history API) since its latest
    /// snapshot (since deskpilot attached, when there is none) and the document has loaded.
    Navigation,
    /// The document has loaded and no request has been in flight for [`QUIET`].
    NetworkIdle,
}

impl Until {
    fn describe(&self) -> String {
        match self {
            Until::Text(t) => format!("the text {t:?}"),
            Until::Selector(s) => format!("an element matching {s:?}"),
            Until::Navigation => "a navigation".into(),
            Until::NetworkIdle => format!("{} ms without network requests", QUIET.as_millis()),
        }
    }
}

/// What a wait found.
#[derive(Debug, Clone)]
pub struct Waited {
    pub page: PageInfo,
    pub waited: Duration,
    /// Where a navigation went.
    pub url: Option<String>,
}

impl Session {
    /// Waits until `until` holds in the page, polling every 50 ms up to `timeout`.
    pub fn browser_wait_for(
        &self,
        page: Option<&str>,
        until: &Until,
        timeout: Duration,
    ) -> Result<Waited, Error> {
        let (cdp, session, info) = self.page(page)?;
        let since = self
            .with_page(info.browser, &info.id, |p| {
                p.snapshot_at.unwrap_or(p.attached_at)
            })
            .unwrap_or_else(Instant::now);
        let loaded = || script::loaded(&cdp, &session);
        let started = Instant::now();
        loop {
            let (done, url) = match until {
                Until::Text(t) => (script::has_text(&cdp, &session, t), None),
                Until::Selector(sel) => (script::has_selector(&cdp, &session, sel), None),
                Until::Navigation => {
                    let went = cdp.activity(&session).navigations.into_iter().rfind(|n| {
                        n.at >= since && !n.child && (!n.same_document || n.frame == info.id)
                    });
                    match went {
                        Some(n) => (loaded(), Some(n.url)),
                        None => (false, None),
                    }
                }
                Until::NetworkIdle => {
                    let a = cdp.activity(&session);
                    (
                        a.in_flight == 0 && a.last_network.elapsed() >= QUIET && loaded(),
                        None,
                    )
                }
            };
            if done {
                let page = self.page(Some(&info.id)).map(|p| p.2).unwrap_or(info);
                return Ok(Waited {
                    page,
                    waited: started.elapsed(),
                    url,
                });
            }
            if started.elapsed() >= timeout {
                let busy = match until {
                    Until::NetworkIdle => format!(
                        " ({} requests still in flight)",
                        cdp.activity(&session).in_flight
                    ),
                    _ => String::new(),
                };
                return Err(Error::WaitTimeout {
                    what: format!(
                        "{} in \"{}\" ({}){busy}",
                        until.describe(),
                        info.title,
                        info.url
                    ),
                    waited: started.elapsed(),
                });
            }
            crate::cancel::pause(Duration::from_millis(50), "waiting in the page")?;
        }
    }
}
