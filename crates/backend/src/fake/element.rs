//! The elements and trees tests script: `element(Role::Button, "OK").parent(0).actions(&["click"])`
//! instead of a `RawElement` literal with every field spelled out.
//!
//! An element starts as a backend would report a plain, usable control: enabled and on screen,
//! no parent, no bounds, no actions, no value, no platform role, its handle `h-<name>`. Each
//! setter changes one thing, so a test shows only what matters to it.

use deskpilot_types::{Rect, Role};

use crate::tree::{ElementHandle, ElementStates, RawElement, RawTree};

/// A scripted element being described; [`FakeElement::build`] (or `.into()`) gives the
/// [`RawElement`].
#[derive(Debug, Clone)]
#[must_use]
pub struct FakeElement(RawElement);

/// An enabled, on-screen element of `role` called `name` (see the module doc for the rest).
pub fn element(role: Role, name: &str) -> FakeElement {
    FakeElement(RawElement {
        parent: None,
        depth: 0,
        role,
        platform_role: String::new(),
        name: name.to_string(),
        description: String::new(),
        value: None,
        states: ElementStates {
            enabled: true,
            onscreen: true,
            ..Default::default()
        },
        actions: Vec::new(),
        bounds: None,
        handle: ElementHandle(format!("h-{name}")),
    })
}

/// A complete tree of `elements` (parents before their children), read from `"fake"`.
pub fn tree(elements: impl IntoIterator<Item = impl Into<RawElement>>) -> RawTree {
    RawTree {
        elements: elements.into_iter().map(Into::into).collect(),
        source: "fake".into(),
        complete: true,
        notes: Vec::new(),
    }
}

impl FakeElement {
    /// Its parent's index in the tree (`None`: a root).
    pub fn parent(mut self, index: impl Into<Option<usize>>) -> Self {
        self.0.parent = index.into();
        self
    }

    /// Its depth below the root (the root is 0).
    pub fn depth(mut self, depth: u32) -> Self {
        self.0.depth = depth;
        self
    }

    /// Its parent's index and its depth at once.
    pub fn child_of(self, index: usize, depth: u32) -> Self {
        self.parent(index).depth(depth)
    }

    /// Where it is, in physical pixels.
    pub fn bounds(mut self, bounds: Rect) -> Self {
        self.0.bounds = Some(bounds);
        self
    }

    /// The actions it advertises, as a platform names them.
    pub fn actions(mut self, actions: &[&str]) -> Self {
        self.0.actions = actions.iter().map(|a| a.to_string()).collect();
        self
    }

    /// A password field (`states.protected`, editable) holding `value`, as a toolkit reports
    /// one: the mask characters, one per character typed.
    pub fn password(mut self, typed: &str) -> Self {
        self.0.states.protected = true;
        self.0.states.editable = true;
        self.0.states.focusable = true;
        self.0.platform_role = "password text".to_string();
        self.0.value = Some("●".repeat(typed.chars().count()));
        self
    }

    /// Its value or text.
    pub fn value(mut self, value: &str) -> Self {
        self.0.value = Some(value.to_string());
        self
    }

    /// Changes its states (enabled and on screen to start with).
    pub fn states(mut self, change: impl FnOnce(&mut ElementStates)) -> Self {
        change(&mut self.0.states);
        self
    }

    /// The platform's own role name (`"push button"`).
    pub fn platform_role(mut self, name: &str) -> Self {
        self.0.platform_role = name.to_string();
        self
    }

    /// Its description.
    pub fn description(mut self, text: &str) -> Self {
        self.0.description = text.to_string();
        self
    }

    /// Its handle, when `h-<name>` will not do (two elements of one name).
    pub fn handle(mut self, handle: &str) -> Self {
        self.0.handle = ElementHandle(handle.to_string());
        self
    }

    /// The element.
    pub fn build(self) -> RawElement {
        self.0
    }
}

impl From<FakeElement> for RawElement {
    fn from(e: FakeElement) -> Self {
        e.0
    }
}
