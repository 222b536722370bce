//! From a ref to the node it names: a ref of its page's latest snapshot only (a ref the page
//! had before is `STALE_ELEMENT` with the reason, such as a navigation since the snapshot),
//! reached through its frame's session, and, for an action at a point, the visible centre of
//! the node once the point is known to hit it (else `ELEMENT_COVERED` names what covers it).

use std::sync::Arc;

use deskpilot_browser::cdp::Connection;
use deskpilot_browser::dom::{self, Quad};
use deskpilot_browser::page as cdp_page;
use deskpilot_browser::snapshot::Target;
use deskpilot_types::ErrorCode;

use super::{PageInfo, coded, lock, unavailable};
use crate::{error::Error, session::Session};

impl Session {
    /// The node a ref names in the latest snapshot of its page.
    pub(super) fn resolve_ref(
        &self,
        r: &str,
    ) -> Result<(Arc<Connection>, String, PageInfo, Target), Error> {
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
                        p.invalidate(format!("the page navigated to {}", n.url));
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
}

/// The element scrolled into view and its first content quad (viewport CSS pixels); a node
/// that is gone is `STALE_ELEMENT`, one without a box `ELEMENT_COVERED`.
pub(super) fn visible_quad(
    cdp: &Connection,
    session: &str,
    t: &Target,
    purpose: &str,
) -> Result<Quad, Error> {
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
pub(super) fn hit_point(
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
