//! Pointing without clicking: hovering over an element and dragging one element onto
//! another, as real mouse events at their visible centres once each point is known to hit
//! its element.

use std::time::Duration;

use deskpilot_browser::input;

use super::BrowserOutcome;
use super::effects::{SETTLE, judged};
use super::refs::hit_point;
use crate::{error::Error, safety::Mutation, session::Session};

/// How long a hover's effect is looked for.
const HOVER_WINDOW: Duration = Duration::from_millis(100);

impl Session {
    /// Moves the pointer over the element `r` names (menus and tooltips that open on hover
    /// open).
    pub fn browser_hover(&self, r: &str) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info, t) = self.resolve_ref(r)?;
        self.gate(
            Mutation::Other,
            &format!(
                "hover over {} \"{}\" in \"{}\" ({})",
                t.role, t.name, info.title, info.url
            ),
        )?;
        let (x, y) = hit_point(&cdp, &session, &t, "hover over")?;
        // A hover changes a page at once (a menu, a tooltip) or not at all.
        judged(
            &cdp,
            &session,
            HOVER_WINDOW,
            || input::hover(&cdp, &session, x, y),
            |changed| BrowserOutcome {
                detail: format!(
                    "hovering over {} \"{}\" at ({x:.0}, {y:.0})",
                    t.role, t.name
                ),
                changed,
                page: info,
                value: None,
                snapshot: None,
                mutation: true,
            },
        )
    }

    /// Drags the element `from` names onto the element `to` names (both refs of the same
    /// page's latest snapshot): press on the first, move, release on the second.
    pub fn browser_drag(&self, from: &str, to: &str) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info, a) = self.resolve_ref(from)?;
        let (_, to_session, _, b) = self.resolve_ref(to)?;
        if to_session != session {
            return Err(Error::InvalidArgument {
                message: format!("to: {to} is on another page than {from}; drag within one page"),
            });
        }
        self.gate(
            Mutation::Other,
            &format!(
                "drag {} \"{}\" onto {} \"{}\" in \"{}\" ({})",
                a.role, a.name, b.role, b.name, info.title, info.url
            ),
        )?;
        let start = hit_point(&cdp, &session, &a, "drag")?;
        let end = hit_point(&cdp, &session, &b, "drop onto")?;
        judged(
            &cdp,
            &session,
            SETTLE,
            || input::drag(&cdp, &session, start, end),
            |changed| BrowserOutcome {
                detail: format!(
                    "dragged {} \"{}\" onto {} \"{}\"",
                    a.role, a.name, b.role, b.name
                ),
                changed,
                page: info,
                value: None,
                snapshot: None,
                mutation: true,
            },
        )
    }
}
