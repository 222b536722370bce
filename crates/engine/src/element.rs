//! Acting on elements of a snapshot by token: semantic first, pixels as the fallback.
//!
//! `click` on a token runs the element's default action (click / press / activate …) through
//! the accessibility API; when the element has none, or the app refuses it, the pointer
//! clicks the element's centre — after checking the window has not moved since the snapshot
//! and that no other app covers the point. Every result says which route ran.
//!
//! A token whose element no longer exists in the app (the window changed under it) is
//! `STALE_ELEMENT`, like a token from an older snapshot.

use deskpilot_backend::Button;
use deskpilot_types::{Point, WindowInfo};

use crate::pointer::Receipt;
use crate::tree::Element;
use crate::{Engine, Error, HitTestMode};

/// Action names that mean "click", best first.
const CLICK_ACTIONS: &[&str] = &[
    "click", "press", "activate", "jump", "toggle", "open", "select", "invoke",
];

/// What an element action did.
#[derive(Debug, Clone)]
pub struct ElementOutcome {
    pub element: Element,
    pub window: WindowInfo,
    /// `"accessibility"` or `"input"`.
    pub route: &'static str,
    /// The action that ran (`"click"`), or what the pointer did.
    pub detail: String,
    pub receipt: Option<Receipt>,
    pub notes: Vec<String>,
}

/// Backend failures that mean the element is gone from the app.
fn stale_or(token: &str, e: deskpilot_backend::Error) -> Error {
    let text = e.to_string();
    if text.contains("UnknownObject")
        || text.contains("UnknownMethod")
        || text.contains("defunct")
        || text.contains("ServiceUnknown")
    {
        Error::StaleElement {
            token: token.to_string(),
        }
    } else {
        Error::Backend(e)
    }
}

impl Engine {
    /// Resolves `token` and checks its window still exists with the same owner.
    fn live_element(&self, token: &str) -> Result<(WindowInfo, WindowInfo, Element), Error> {
        let (seen, element) = self.element(token)?;
        let windows = self.desktop.windows.list_windows()?;
        let now = windows
            .into_iter()
            .find(|w| w.id == seen.id)
            .ok_or(Error::TargetWindowGone(seen.id))?;
        if now.pid != seen.pid {
            return Err(Error::TargetWindowChanged {
                id: seen.id,
                was: seen.pid,
                now: now.pid,
            });
        }
        Ok((seen, now, element))
    }

    /// Clicks an element: its default action, else the pointer at its centre.
    pub fn click_element(
        &self,
        token: &str,
        button: Button,
        count: u8,
        mode: HitTestMode,
    ) -> Result<ElementOutcome, Error> {
        let (seen, now, element) = self.live_element(token)?;
        let mut notes = Vec::new();
        if button == Button::Left && count == 1 {
            let action = CLICK_ACTIONS.iter().find_map(|want| {
                element
                    .actions
                    .iter()
                    .find(|a| a.eq_ignore_ascii_case(want))
                    .cloned()
            });
            if let Some(action) = action {
                match self
                    .desktop
                    .accessibility
                    .do_action(&element.handle, &action)
                {
                    Ok(()) => {
                        return Ok(ElementOutcome {
                            element,
                            window: now,
                            route: "accessibility",
                            detail: action,
                            receipt: None,
                            notes,
                        });
                    }
                    Err(e) => {
                        let e = stale_or(token, e);
                        if matches!(e, Error::StaleElement { .. }) {
                            return Err(e);
                        }
                        notes.push(format!(
                            "the accessibility action \"{action}\" failed ({e}); clicked with the pointer instead"
                        ));
                    }
                }
            } else {
                notes.push(format!(
                    "the element advertises no click action (it has [{}]); clicked with the pointer",
                    element.actions.join(", ")
                ));
            }
        }
        let receipt = self.click_centre(token, &seen, &element, button, count, mode)?;
        Ok(ElementOutcome {
            detail: format!("{} click", format!("{button:?}").to_lowercase()),
            element,
            window: now,
            route: "input",
            receipt: Some(receipt),
            notes,
        })
    }

    fn click_centre(
        &self,
        token: &str,
        seen: &WindowInfo,
        element: &Element,
        button: Button,
        count: u8,
        mode: HitTestMode,
    ) -> Result<Receipt, Error> {
        let Some(b) = element.bounds else {
            return Err(Error::ElementNotFound {
                what: format!("{token} has no position on screen to click"),
            });
        };
        let centre = Point::new(b.x + b.width as i32 / 2, b.y + b.height as i32 / 2);
        // The same checks as a screenshot click, pinned to the window as the snapshot saw it:
        // moved → TARGET_WINDOW_MOVED, covered → CLICK_WRONG_WINDOW.
        let mut checked = self.hit_check(&[centre], Some((seen.id, seen.pid, seen.frame)), mode)?;
        let outcome = self.click_checked(checked.remove(0), button, count, &[])?;
        Ok(outcome.receipt)
    }

    /// Runs one of the actions the element advertises.
    pub fn perform_action(&self, token: &str, action: &str) -> Result<ElementOutcome, Error> {
        let (_, now, element) = self.live_element(token)?;
        let Some(name) = element
            .actions
            .iter()
            .find(|a| a.eq_ignore_ascii_case(action.trim()))
            .cloned()
        else {
            return Err(Error::InvalidArgument {
                message: format!(
                    "{token} ({} \"{}\") has no action \"{action}\"; its actions are [{}]",
                    element.role,
                    element.name,
                    element.actions.join(", ")
                ),
            });
        };
        self.desktop
            .accessibility
            .do_action(&element.handle, &name)
            .map_err(|e| stale_or(token, e))?;
        Ok(ElementOutcome {
            element,
            window: now,
            route: "accessibility",
            detail: name,
            receipt: None,
            notes: Vec::new(),
        })
    }

    /// Sets an element's text or value and reads it back.
    pub fn set_element_value(
        &self,
        token: &str,
        value: &str,
    ) -> Result<(ElementOutcome, String), Error> {
        let (_, now, element) = self.live_element(token)?;
        self.desktop
            .accessibility
            .set_value(&element.handle, value)
            .map_err(|e| stale_or(token, e))?;
        let read = self
            .desktop
            .accessibility
            .read_text(&element.handle)
            .map_err(|e| stale_or(token, e))?;
        let mut notes = Vec::new();
        if read != value {
            notes.push(format!(
                "the element now reads \"{read}\", not exactly what was set (the app may format or limit it)"
            ));
        }
        Ok((
            ElementOutcome {
                element,
                window: now,
                route: "accessibility",
                detail: "set_value".to_string(),
                receipt: None,
                notes,
            },
            read,
        ))
    }

    /// An element's full text (or value) as it is now.
    pub fn element_text(&self, token: &str) -> Result<(Element, String), Error> {
        let (_, _, element) = self.live_element(token)?;
        let text = self
            .desktop
            .accessibility
            .read_text(&element.handle)
            .map_err(|e| stale_or(token, e))?;
        Ok((element, text))
    }

    /// Gives an element keyboard focus.
    pub fn focus_element(&self, token: &str) -> Result<ElementOutcome, Error> {
        let (_, now, element) = self.live_element(token)?;
        self.desktop
            .accessibility
            .focus(&element.handle)
            .map_err(|e| stale_or(token, e))?;
        Ok(ElementOutcome {
            element,
            window: now,
            route: "accessibility",
            detail: "focus".to_string(),
            receipt: None,
            notes: Vec::new(),
        })
    }
}
