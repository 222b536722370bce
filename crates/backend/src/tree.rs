//! What a backend reports about a window's accessibility tree.
//!
//! A tree is a flat list in depth-first order, each element pointing at its parent, with
//! everything the engine needs to render, search and act on it: normalized role (plus the
//! platform's own name), name, value, description, states, the actions the element
//! advertises and its bounds in physical pixels. Hidden elements are left out by the
//! backend. Each element carries an opaque handle only the backend that issued it can use.

use std::time::{Duration, Instant};

use deskpilot_types::{Point, Rect, Role, WindowId, WindowInfo};

use crate::error::Error;

/// A backend's reference to one element (e.g. an AT-SPI bus name and object path).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ElementHandle(pub String);

/// State flags the engine shows and ranks on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ElementStates {
    pub enabled: bool,
    pub focusable: bool,
    pub focused: bool,
    pub selected: bool,
    pub checked: bool,
    pub expandable: bool,
    pub expanded: bool,
    pub editable: bool,
    /// A form field that must be filled in (AT-SPI `required`, UIA `IsRequiredForForm`).
    pub required: bool,
    /// A password field: its text is a secret (AT-SPI `PASSWORD_TEXT`, MSAA `PROTECTED`, UIA
    /// `IsPassword`). Its value, length and mask are never shown, and captures paint it over.
    pub protected: bool,
    /// On screen (not scrolled out of view).
    pub onscreen: bool,
}

/// One element of a tree.
#[derive(Debug, Clone, PartialEq)]
pub struct RawElement {
    /// Index of the parent in [`RawTree::elements`]; `None` for the root.
    pub parent: Option<usize>,
    pub depth: u32,
    pub role: Role,
    /// The platform's own role name (`"push button"`, `"ButtonControl"`).
    pub platform_role: String,
    pub name: String,
    pub description: String,
    /// Current value or a text excerpt.
    pub value: Option<String>,
    pub states: ElementStates,
    /// The actions the element advertises, exactly as the platform names them.
    pub actions: Vec<String>,
    /// Bounds in physical pixels, when the element has any.
    pub bounds: Option<Rect>,
    pub handle: ElementHandle,
}

/// A window's tree as one backend call returned it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RawTree {
    /// Depth-first order; parents come before their children.
    pub elements: Vec<RawElement>,
    /// How it was read (`"atspi-cache"`, `"atspi-walk"`, `"uia"`, `"msaa"`).
    pub source: String,
    /// Whether every element within the limits was read (false after a timeout or budget stop).
    pub complete: bool,
    /// What the caller should know (elements skipped, a slow app, …).
    pub notes: Vec<TreeNote>,
}

/// A backend's remark about a tree it read. `Display` is the default wording.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum TreeNote {
    /// The time limit ran out while reading: the elements read so far are returned.
    TimedOut { limit: Duration, read: usize },
    /// The time limit ran out before some elements told their bounds, actions and values.
    Unanswered {
        limit: Duration,
        unanswered: usize,
        elements: usize,
    },
    /// The application reports logical coordinates; bounds were converted to physical pixels.
    LogicalCoordinates { scale: f64 },
    /// Containers not fully in the application's cache were read directly.
    ReadDirectly { containers: usize },
    /// The read stopped at `max_elements`.
    StoppedAtMaxElements { max_elements: usize },
    /// The read stopped at the time limit: the application answers slowly.
    StoppedSlow { limit: Duration },
    /// The window's menu bar items cannot be read from another process.
    MenuBarUnreadable,
    /// The tree comes from MSAA because UI Automation could not read it.
    FromMsaa(NoUia),
}

/// Why UI Automation did not read a window. The text is the platform's own error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoUia {
    /// UI Automation is available but failed on this window.
    Failed(String),
    /// UI Automation is not available here at all.
    Unsupported(String),
}

impl std::fmt::Display for TreeNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TreeNote::TimedOut { limit, read } => write!(
                f,
                "the {} ms time limit ran out while reading the tree: showing the {read} elements read so far",
                limit.as_millis()
            ),
            TreeNote::Unanswered {
                limit,
                unanswered,
                elements,
            } => write!(
                f,
                "the {} ms time limit ran out before {unanswered} of {elements} elements told their bounds, actions and values; they are listed without them",
                limit.as_millis()
            ),
            TreeNote::LogicalCoordinates { scale } => write!(
                f,
                "the application reports logical coordinates (scale {scale:.2}); element bounds were converted to physical pixels"
            ),
            TreeNote::ReadDirectly { containers } => write!(
                f,
                "{containers} containers not fully in the application's cache were read directly"
            ),
            TreeNote::StoppedAtMaxElements { max_elements } => {
                write!(f, "stopped at {max_elements} elements (max_elements)")
            }
            TreeNote::StoppedSlow { limit } => write!(
                f,
                "stopped after {} ms (the application answers slowly)",
                limit.as_millis()
            ),
            TreeNote::MenuBarUnreadable => f.write_str(
                "the window has a menu bar whose items cannot be read from another process \
                 here; click it and read the screenshot",
            ),
            TreeNote::FromMsaa(why) => {
                match why {
                    NoUia::Failed(e) => {
                        write!(f, "UI Automation could not read this window ({e})")?
                    }
                    NoUia::Unsupported(reason) => {
                        write!(f, "UI Automation is unsupported here ({reason})")?
                    }
                }
                f.write_str(
                    "; this tree comes from MSAA (source: msaa): names, roles, states, \
                     values and positions, with fewer actions",
                )
            }
        }
    }
}

/// How much of a tree to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeLimits {
    pub max_elements: usize,
    pub max_depth: u32,
    /// The backend returns what it has when this runs out.
    pub timeout: Duration,
    /// Read everything from the application again, reusing nothing from earlier reads.
    pub fresh: bool,
}

/// An element as its application describes it right now: what acting on a token re-checks
/// before it acts (the element may have moved, been renamed or been re-used for another item).
#[derive(Debug, Clone, PartialEq)]
pub struct LiveElement {
    pub role: Role,
    pub name: String,
    pub states: ElementStates,
    /// Bounds in physical pixels, translated the same way as the tree's.
    pub bounds: Option<Rect>,
}

/// A password field showing on screen, as [`Accessibility::password_fields`] found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PasswordField {
    /// The top-level window it belongs to.
    pub window: WindowId,
    /// Its bounds in physical pixels, placed like a tree's.
    pub bounds: Rect,
}

/// What a look for password fields found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PasswordFields {
    pub fields: Vec<PasswordField>,
    /// Windows whose application did not answer before the deadline and of which nothing is
    /// known from an earlier look: their password fields, if any, are not in `fields`.
    pub unanswered: Vec<WindowId>,
}

/// Accessibility trees and the semantic operations on their elements.
///
/// Operations other than [`Accessibility::tree`] default to `Unsupported`, so a backend
/// without them still builds and the engine falls back to pointer and keyboard input.
pub trait Accessibility: Send + Sync {
    /// The tree of `window` (its frame element and everything showing under it).
    fn tree(&self, window: &WindowInfo, limits: &TreeLimits) -> Result<RawTree, Error>;

    /// Performs one of the actions the element advertises, by its name.
    fn do_action(&self, element: &ElementHandle, action: &str) -> Result<(), Error> {
        let _ = (element, action);
        Err(Error::Unsupported {
            what: "accessibility actions",
            reason: "this platform backend has none".to_string(),
        })
    }

    /// Replaces an element's text (editable text) or sets its numeric value.
    fn set_value(&self, element: &ElementHandle, value: &str) -> Result<(), Error> {
        let _ = (element, value);
        Err(Error::Unsupported {
            what: "setting values",
            reason: "this platform backend cannot".to_string(),
        })
    }

    /// The element's full text (or value), as it is now.
    fn read_text(&self, element: &ElementHandle) -> Result<String, Error> {
        let _ = element;
        Err(Error::Unsupported {
            what: "reading element text",
            reason: "this platform backend cannot".to_string(),
        })
    }

    /// Gives the element keyboard focus.
    fn focus(&self, element: &ElementHandle) -> Result<(), Error> {
        let _ = element;
        Err(Error::Unsupported {
            what: "focusing elements",
            reason: "this platform backend cannot".to_string(),
        })
    }

    /// The element's state flags as they are now (`onscreen` is not computed here).
    fn states(&self, element: &ElementHandle) -> Result<ElementStates, Error> {
        let _ = element;
        Err(Error::Unsupported {
            what: "reading element states",
            reason: "this platform backend cannot".to_string(),
        })
    }

    /// Takes the element out of its container's selection; for the open menu of a menu bar
    /// this closes the menu.
    fn deselect(&self, element: &ElementHandle) -> Result<(), Error> {
        let _ = element;
        Err(Error::Unsupported {
            what: "deselecting elements",
            reason: "this platform backend cannot".to_string(),
        })
    }

    /// Selects the element in its container (a list row, a tab, a tree item) through the
    /// container's selection interface.
    fn select(&self, element: &ElementHandle) -> Result<(), Error> {
        let _ = element;
        Err(Error::Unsupported {
            what: "selecting elements",
            reason: "this platform backend cannot".to_string(),
        })
    }

    /// The element's role, name, states and bounds as they are now (one round trip where the
    /// platform allows): acting on a token re-checks the element with it first.
    fn live(&self, element: &ElementHandle) -> Result<LiveElement, Error> {
        let _ = element;
        Err(Error::Unsupported {
            what: "re-reading elements",
            reason: "this platform backend cannot".to_string(),
        })
    }

    /// The password fields showing in `windows` (top-level windows on screen, topmost first),
    /// for captures to paint over. It must be cheap — a capture waits for it — so a backend
    /// asks each application once for its password fields (never walks a tree) and may answer
    /// from what it found before while the application reported no change. It returns by
    /// `deadline`: an application that has not answered by then is listed in
    /// [`PasswordFields::unanswered`] (or answered from its last known fields).
    ///
    /// The default finds none.
    ///
    /// # Platform-specific
    ///
    /// - **X11**: AT-SPI `Collection.GetMatches` (role `PASSWORD_TEXT`, state `SHOWING`) on
    ///   the application of each window, cached until the application sends an event.
    /// - **Windows**: standard `Edit` controls with `ES_PASSWORD` and the focused UI
    ///   Automation element when it is a password field.
    fn password_fields(
        &self,
        windows: &[WindowInfo],
        deadline: Instant,
    ) -> Result<PasswordFields, Error> {
        let _ = (windows, deadline);
        Ok(PasswordFields::default())
    }

    /// Whether the toolkit's own hit test at `at` (physical pixels) lands on the element or
    /// one of its descendants: a pointer click there would reach it.
    fn hits(&self, element: &ElementHandle, at: Point) -> Result<bool, Error> {
        let _ = (element, at);
        Err(Error::Unsupported {
            what: "hit-testing elements",
            reason: "this platform backend cannot".to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_notes_word_what_the_backend_saw() {
        assert_eq!(
            TreeNote::FromMsaa(NoUia::Unsupported("no COM".to_string())).to_string(),
            "UI Automation is unsupported here (no COM); this tree comes from MSAA (source: msaa): \
             names, roles, states, values and positions, with fewer actions"
        );
        assert_eq!(
            TreeNote::MenuBarUnreadable.to_string(),
            "the window has a menu bar whose items cannot be read from another process here; \
             click it and read the screenshot"
        );
        assert_eq!(
            TreeNote::TimedOut {
                limit: Duration::from_millis(1500),
                read: 7
            }
            .to_string(),
            "the 1500 ms time limit ran out while reading the tree: showing the 7 elements read so far"
        );
        assert_eq!(
            TreeNote::LogicalCoordinates { scale: 1.5 }.to_string(),
            "the application reports logical coordinates (scale 1.50); element bounds were \
             converted to physical pixels"
        );
    }
}
