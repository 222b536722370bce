//! A browser's tabs (new, select, close), where a page goes (a URL, back, forward, reload)
//! and how a page is shown (viewport size, colour scheme, reduced motion, print media), each
//! read back from the browser or the page after it is done.

use std::time::{Duration, Instant};

use deskpilot_browser::page::{self as cdp_page, Emulation, Step};
use deskpilot_browser::{script, target as cdp_target};
use deskpilot_types::ErrorCode;
use serde_json::json;

use super::launch::wait_loaded;
use super::pages::pages_of;
use super::{BrowserOutcome, coded, lock, unavailable};
use crate::{error::Error, safety::Mutation, session::Session};

/// Where `browser_navigate` goes when it is not to a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Go {
    Back,
    Forward,
    Reload,
}

/// How long a closed tab may take to leave the browser's list.
const CLOSING: Duration = Duration::from_secs(5);

impl Session {
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
            p.invalidate(format!("the page navigated to {url}"));
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

    /// Opens a new tab on `url` in the browser this client used last and makes it the
    /// current page.
    pub fn browser_tab_new(&self, url: &str) -> Result<BrowserOutcome, Error> {
        let url = if url.trim().is_empty() {
            "about:blank"
        } else {
            url.trim()
        };
        let shared = self.browsers();
        let (browser, cdp) = {
            let b = lock(&shared);
            let id = b
                .current
                .as_ref()
                .map(|c| c.0)
                .or(b.list.first().map(|x| x.id));
            id.and_then(|id| {
                b.list
                    .iter()
                    .find(|x| x.id == id)
                    .map(|x| (x.id, x.cdp.clone()))
            })
            .ok_or_else(|| {
                coded(
                    ErrorCode::PageNotFound,
                    "no browser yet: browser_launch or browser_attach first",
                )
            })?
        };
        self.gate(
            Mutation::Other,
            &format!(
                "open a tab on {} in browser {browser}",
                crate::safety::quoted(url)
            ),
        )?;
        // Blank first, attached with its network events on, then `url`: its document
        // request is logged like every later one.
        let id = cdp_target::new_page(&cdp, "about:blank").map_err(unavailable)?;
        let (cdp, session, _) = self.page_any(Some(&id))?;
        if url != "about:blank" {
            let _ = cdp_page::navigate(&cdp, &session, url).map_err(unavailable)?;
        }
        wait_loaded(&cdp, &session);
        let page = self.page_any(Some(&id))?.2;
        Ok(BrowserOutcome {
            detail: format!("opened tab {id}"),
            page,
            changed: Some(true),
            value: None,
            snapshot: None,
            mutation: true,
        })
    }

    /// Brings tab `page` to the front and makes it the current page.
    pub fn browser_tab_select(&self, page: &str) -> Result<BrowserOutcome, Error> {
        if page.trim().is_empty() {
            return Err(Error::InvalidArgument {
                message: "page: which tab (an id from browser_tabs)".into(),
            });
        }
        let (cdp, _, info) = self.page_any(Some(page))?;
        self.gate(
            Mutation::Other,
            &format!("bring tab \"{}\" ({}) to the front", info.title, info.url),
        )?;
        cdp_target::activate(&cdp, &info.id).map_err(unavailable)?;
        Ok(BrowserOutcome {
            detail: format!("selected tab {}", info.id),
            page: info,
            changed: Some(true),
            value: None,
            snapshot: None,
            mutation: true,
        })
    }

    /// Closes tab `page` (default: the current page) and waits until the browser no longer
    /// lists it; the current page becomes another tab of the same browser.
    pub fn browser_tab_close(&self, page: Option<&str>) -> Result<BrowserOutcome, Error> {
        let (cdp, _, info) = self.page_any(page)?;
        self.gate(
            Mutation::CloseWindow,
            &format!("close tab \"{}\" ({})", info.title, info.url),
        )?;
        cdp_target::close_page(&cdp, &info.id).map_err(unavailable)?;
        let deadline = Instant::now() + CLOSING;
        let left = loop {
            let left = pages_of(&cdp, info.browser)?;
            if !left.iter().any(|p| p.id == info.id) || Instant::now() >= deadline {
                break left;
            }
            std::thread::sleep(Duration::from_millis(30));
        };
        let gone = !left.iter().any(|p| p.id == info.id);
        let shared = self.browsers();
        {
            let mut b = lock(&shared);
            if let Some(br) = b.list.iter_mut().find(|x| x.id == info.browser) {
                br.pages.remove(&info.id);
            }
            if b.current.as_ref().is_some_and(|c| c.1 == info.id) {
                b.current = left.first().map(|p| (info.browser, p.id.clone()));
            }
        }
        Ok(BrowserOutcome {
            detail: if gone {
                format!("closed tab {}; {} tab(s) left", info.id, left.len())
            } else {
                format!(
                    "asked tab {} to close; it is still listed after {CLOSING:?}",
                    info.id
                )
            },
            page: info,
            changed: Some(gone),
            value: Some(json!(left)),
            snapshot: None,
            mutation: true,
        })
    }

    /// Goes back or forward in the page's history, or reloads it, and waits for it to load.
    pub fn browser_go(&self, page: Option<&str>, go: Go) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info) = self.page(page)?;
        let verb = match go {
            Go::Back => "go back",
            Go::Forward => "go forward",
            Go::Reload => "reload",
        };
        self.gate(
            Mutation::Other,
            &format!("{verb} in \"{}\" ({})", info.title, info.url),
        )?;
        match go {
            Go::Reload => cdp_page::reload(&cdp, &session).map_err(unavailable)?,
            Go::Back | Go::Forward => {
                let step = if go == Go::Back {
                    Step::Back
                } else {
                    Step::Forward
                };
                if cdp_page::history(&cdp, &session, step)
                    .map_err(unavailable)?
                    .is_none()
                {
                    return Err(Error::InvalidArgument {
                        message: format!(
                            "\"{}\" has no page to {verb} to in its history",
                            info.title
                        ),
                    });
                }
            }
        }
        // The history entry loads after the call returns: wait for the URL to move first.
        let deadline = Instant::now() + Duration::from_secs(5);
        while go != Go::Reload && Instant::now() < deadline {
            if self.page_any(Some(&info.id))?.2.url != info.url {
                break;
            }
            std::thread::sleep(Duration::from_millis(30));
        }
        wait_loaded(&cdp, &session);
        self.with_page(info.browser, &info.id, |p| {
            p.invalidate(format!("the page went {}", verb.trim_start_matches("go ")));
        });
        let now = self.page_any(Some(&info.id))?.2;
        Ok(BrowserOutcome {
            changed: Some(go == Go::Reload || now.url != info.url),
            detail: format!("{} — now at {}", verb.replace("go ", "went "), now.url),
            page: now,
            value: None,
            snapshot: None,
            mutation: true,
        })
    }

    /// Shows the page as `e` says and reads back what the page sees (its viewport and media
    /// features).
    pub fn browser_emulate(
        &self,
        page: Option<&str>,
        e: &Emulation,
    ) -> Result<BrowserOutcome, Error> {
        for (name, v, allowed) in [
            ("color_scheme", &e.color_scheme, &["light", "dark"][..]),
            (
                "reduced_motion",
                &e.reduced_motion,
                &["reduce", "no-preference"][..],
            ),
            ("media", &e.media, &["screen", "print"][..]),
        ] {
            if !v.is_empty() && !allowed.contains(&v.as_str()) {
                return Err(Error::InvalidArgument {
                    message: format!(
                        "{name}: {v:?} is not one of {allowed:?} (\"\" puts the browser's own back)"
                    ),
                });
            }
        }
        if let Some((w, h)) = e.viewport
            && (!(100..=10_000).contains(&w) || !(100..=10_000).contains(&h))
        {
            return Err(Error::InvalidArgument {
                message: format!(
                    "width/height {w}×{h}: each 100–10000 CSS pixels (0 and 0: the window's own)"
                ),
            });
        }
        let (cdp, session, info) = self.page(page)?;
        self.gate(
            Mutation::Other,
            &format!("change how \"{}\" ({}) is shown", info.title, info.url),
        )?;
        cdp_page::emulate(&cdp, &session, e).map_err(unavailable)?;
        let seen = script::media(&cdp, &session);
        let holds = seen.as_ref().is_some_and(|m| {
            e.viewport
                .is_none_or(|(w, h)| (m.width, m.height) == (w, h))
                && (e.color_scheme.is_empty() || m.color_scheme == e.color_scheme)
        });
        Ok(BrowserOutcome {
            detail: match &seen {
                Some(m) => format!(
                    "the page now sees a {}×{} viewport, {} colour scheme{}{}",
                    m.width,
                    m.height,
                    m.color_scheme,
                    if m.reduced_motion {
                        ", reduced motion"
                    } else {
                        ""
                    },
                    if m.print { ", print media" } else { "" }
                ),
                None => "shown as asked (the page did not answer how it looks)".into(),
            },
            page: info,
            changed: Some(holds),
            value: seen.map(|m| {
                json!({ "width": m.width, "height": m.height, "color_scheme": m.color_scheme,
                        "reduced_motion": m.reduced_motion, "print": m.print })
            }),
            snapshot: None,
            mutation: true,
        })
    }
}
