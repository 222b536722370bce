//! What a backend reports about a window's accessibility tree.
//!
//! A tree is a flat list in depth-first order, each element pointing at its parent, with
//! everything the engine needs to render, search and act on it: normalized role (plus the
//! platform's own name), name, value, description, states, the actions the element
//! advertises and its bounds in physical pixels. Hidden elements are left out by the
//! backend. Each element carries an opaque handle only the backend that issued it can use.

use std::time::Duration;

use deskpilot_types::{Rect, Role, WindowInfo};

use crate::Error;

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
    pub notes: Vec<String>,
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
}
