//! One session's element snapshots: the elements of each read (with their tokens
//! `s<snapshot>:<index>`), the last [`KEPT`] snapshots across windows, and the rule that a
//! token resolves only while its snapshot is the newest of its window (a structural change
//! supersedes it, and its tokens are then `STALE_ELEMENT` with what changed).
//!
//! Plain data below the session: it knows no session and no desktop.
//!
//! Invariant: a password field (`states.protected`) and everything inside it carry no value
//! from the moment an [`Element`] is made ([`Element::from_raw`], [`protect_descendants`]),
//! so no renderer, matcher, memory or snapshot above can show or match its text, its length
//! or its mask characters; [`Element::password`] says so instead.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use deskpilot_backend::{ElementHandle, ElementStates};
use deskpilot_types::{Rect, Role, WindowId, WindowInfo};
use serde::Serialize;

use crate::error::Error;

/// Snapshots remembered (across all windows), so a stale token is told apart from a made-up one.
pub(crate) const KEPT: usize = 32;
/// One element of a snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct Element {
    pub index: usize,
    pub token: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<usize>,
    pub depth: u32,
    pub role: Role,
    pub platform_role: String,
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    pub enabled: bool,
    pub focusable: bool,
    pub focused: bool,
    pub selected: bool,
    pub checked: bool,
    pub expanded: bool,
    pub editable: bool,
    pub onscreen: bool,
    /// A password field, or a part of one: it never carries a value (nor a name, for a part).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub password: bool,
    pub actions: Vec<String>,
    /// Physical pixels.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Rect>,
    #[serde(skip)]
    pub handle: ElementHandle,
    #[serde(skip)]
    pub states: ElementStates,
}

impl Element {
    /// Element `index` of a tree read as the backend reported it; the token is given when
    /// its snapshot is recorded. A password field's value (its mask characters, as many as
    /// were typed) is dropped here.
    pub fn from_raw(index: usize, r: deskpilot_backend::RawElement) -> Self {
        let password = r.states.protected;
        Element {
            index,
            token: String::new(),
            parent: r.parent,
            depth: r.depth,
            role: r.role,
            platform_role: r.platform_role,
            name: r.name,
            description: r.description,
            value: r.value.filter(|_| !password),
            enabled: r.states.enabled,
            focusable: r.states.focusable,
            focused: r.states.focused,
            selected: r.states.selected,
            checked: r.states.checked,
            expanded: r.states.expanded,
            editable: r.states.editable,
            onscreen: r.states.onscreen,
            password,
            actions: r.actions,
            bounds: r.bounds,
            handle: r.handle,
            states: r.states,
        }
    }
}

/// Marks everything inside a password field as part of it (`elements` in depth-first order,
/// parents first): a toolkit may put the field's text, or its mask characters, in a child
/// (a text leaf), so a part keeps neither its value nor its name.
pub fn protect_descendants(elements: &mut [Element]) {
    for i in 0..elements.len() {
        let inside = elements[i]
            .parent
            .filter(|p| *p < i)
            .is_some_and(|p| elements[p].password);
        let e = &mut elements[i];
        if inside && !e.password {
            e.password = true;
            e.value = None;
            e.name.clear();
        }
    }
}

/// Which element of a snapshot an action addresses: a token as handed out, or an index
/// into a snapshot the caller holds (no token text to build or parse).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ElementRef {
    /// A token as handed out (`s12:34`); a bare index means the newest snapshot.
    Token(String),
    /// Element `index` of snapshot `snapshot`, as that snapshot numbered its elements.
    At { snapshot: u64, index: usize },
}

impl From<&str> for ElementRef {
    fn from(token: &str) -> Self {
        ElementRef::Token(token.to_string())
    }
}

impl From<&String> for ElementRef {
    fn from(token: &String) -> Self {
        ElementRef::Token(token.clone())
    }
}

impl From<&ElementRef> for ElementRef {
    fn from(target: &ElementRef) -> Self {
        target.clone()
    }
}

impl From<String> for ElementRef {
    fn from(token: String) -> Self {
        ElementRef::Token(token)
    }
}

/// As a token: what an error names the element by.
impl std::fmt::Display for ElementRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ElementRef::Token(token) => f.write_str(token),
            ElementRef::At { snapshot, index } => write!(f, "s{snapshot}:{index}"),
        }
    }
}

/// One kept snapshot.
#[derive(Debug)]
struct Kept {
    id: u64,
    window: WindowInfo,
    elements: Vec<Element>,
    taken: Instant,
    /// The read's element and depth limits (a re-read for [`ElementRef::At`] uses the same).
    max_elements: usize,
    max_depth: u32,
    /// What changed when a newer snapshot of the same window replaced this one.
    superseded: Option<String>,
}

/// One session's snapshots (ids come from the engine, unique in the process).
#[derive(Debug, Default)]
pub(crate) struct Snapshots {
    kept: VecDeque<Kept>,
}

/// Roles whose name says *which* item an element is (a list row, a table cell, a tab, a menu
/// item): toolkits re-use these elements by position (AT-SPI's list and table cells are
/// positional), so the same handle at the same place naming another item is another element.
pub(crate) fn item_like(role: Role) -> bool {
    matches!(
        role,
        Role::ListItem
            | Role::Cell
            | Role::Row
            | Role::TreeItem
            | Role::Tab
            | Role::MenuItem
            | Role::CheckMenuItem
            | Role::RadioMenuItem
    )
}

/// Whether `new` is still the element `old` was: the same role, and for an item-like role the
/// same name. A label's text, a field's value or a status bar's message may change freely.
pub(crate) fn same_element(old_role: Role, old_name: &str, new_role: Role, new_name: &str) -> bool {
    old_role == new_role && (!item_like(old_role) || old_name == new_name)
}

/// The structure of a tree: what an element token stands for. Two reads with the same
/// structure are the same snapshot (names of other than item-like elements, values, bounds
/// and states may differ).
fn same_structure(a: &[Element], b: &[Element]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x.handle == y.handle
                && x.parent == y.parent
                && same_element(x.role, &x.name, y.role, &y.name)
        })
}

/// What differs between two structures, in a few words.
fn structure_change(old: &[Element], new: &[Element]) -> String {
    let old_handles: std::collections::HashSet<&ElementHandle> =
        old.iter().map(|e| &e.handle).collect();
    let new_handles: std::collections::HashSet<&ElementHandle> =
        new.iter().map(|e| &e.handle).collect();
    let added = new
        .iter()
        .filter(|e| !old_handles.contains(&e.handle))
        .count();
    let removed = old
        .iter()
        .filter(|e| !new_handles.contains(&e.handle))
        .count();
    // The same handle at the same place holding another item or another kind of element.
    let in_place: Vec<(&Element, &Element)> = old
        .iter()
        .zip(new)
        .filter(|(x, y)| x.handle == y.handle)
        .collect();
    let retyped = in_place.iter().filter(|(x, y)| x.role != y.role).count();
    let renamed: Vec<&(&Element, &Element)> = in_place
        .iter()
        .filter(|(x, y)| x.role == y.role && !same_element(x.role, &x.name, y.role, &y.name))
        .collect();
    let mut parts = Vec::new();
    if added > 0 {
        parts.push(format!("{added} elements appeared"));
    }
    if removed > 0 {
        parts.push(format!("{removed} elements went away"));
    }
    if let Some((x, y)) = renamed.first() {
        parts.push(format!(
            "{} elements were renamed: {} {} \"{}\" now reads \"{}\"",
            renamed.len(),
            x.role,
            x.index,
            x.name,
            y.name
        ));
    }
    if retyped > 0 {
        parts.push(format!("{retyped} elements changed role"));
    }
    if parts.is_empty() {
        parts.push("its elements were reordered or re-parented".to_string());
    }
    format!(
        "the window's structure changed ({}; {} elements then, {} now)",
        parts.join(", "),
        old.len(),
        new.len()
    )
}

impl Snapshots {
    /// Records a read of `window`. When the newest snapshot of the window has the same
    /// structure, that snapshot is refreshed in place and keeps its id (its tokens stay
    /// valid); otherwise `issue` gives a new id and the old snapshot is marked superseded.
    pub(crate) fn record(
        &mut self,
        window: WindowInfo,
        mut elements: Vec<Element>,
        (max_elements, max_depth): (usize, u32),
        issue: impl FnOnce() -> u64,
    ) -> (u64, Vec<Element>, bool) {
        let previous = self
            .kept
            .iter_mut()
            .rev()
            .find(|k| k.window.id == window.id);
        if let Some(k) = previous {
            if same_structure(&k.elements, &elements) {
                for (e, old) in elements.iter_mut().zip(&k.elements) {
                    e.token = old.token.clone();
                }
                k.elements = elements.clone();
                k.window = window;
                k.taken = Instant::now();
                (k.max_elements, k.max_depth) = (max_elements, max_depth);
                return (k.id, elements, true);
            }
            k.superseded = Some(structure_change(&k.elements, &elements));
        }
        let id = issue();
        for e in &mut elements {
            e.token = format!("s{id}:{}", e.index);
        }
        if self.kept.len() == KEPT {
            self.kept.pop_front();
        }
        self.kept.push_back(Kept {
            id,
            window,
            elements: elements.clone(),
            taken: Instant::now(),
            max_elements,
            max_depth,
            superseded: None,
        });
        (id, elements, false)
    }

    /// The newest snapshot of `window`: its id, elements and age.
    pub(crate) fn newest_of(&self, window: WindowId) -> Option<(u64, Vec<Element>, Duration)> {
        let k = self.kept.iter().rev().find(|k| k.window.id == window)?;
        Some((k.id, k.elements.clone(), k.taken.elapsed()))
    }

    /// The element `target` names and its window as the snapshot saw it, if its snapshot is
    /// the newest of its window. `Err(None)` for a snapshot this session does not hold.
    pub(crate) fn resolve(
        &self,
        target: &ElementRef,
    ) -> Result<(WindowInfo, Element), Option<Error>> {
        let (snapshot, index) = match target {
            ElementRef::At { snapshot, index } => (*snapshot, *index),
            // A bare index means an element of the newest snapshot (of any window).
            ElementRef::Token(token) => match token.trim().parse::<usize>() {
                Ok(index) => match self.kept.back() {
                    Some(k) => (k.id, index),
                    None => {
                        return Err(Some(Error::ElementNotFound {
                            what: format!(
                                "element {index}: no snapshot yet (read the window's tree first)"
                            ),
                        }));
                    }
                },
                Err(_) => parse_token(token).map_err(Some)?,
            },
        };
        let Some(k) = self.kept.iter().find(|k| k.id == snapshot) else {
            return Err(None);
        };
        if let Some(why) = &k.superseded {
            return Err(Some(Error::StaleElement {
                token: format!("s{snapshot}:{index}"),
                why: why.clone(),
            }));
        }
        k.elements
            .get(index)
            .cloned()
            .map(|e| (k.window.clone(), e))
            .ok_or_else(|| {
                Some(Error::ElementNotFound {
                    what: format!(
                        "snapshot {snapshot} has no element {index} (it has {})",
                        k.elements.len()
                    ),
                })
            })
    }

    /// The window and read limits of snapshot `id`, while this session holds it.
    pub(crate) fn read_of(&self, id: u64) -> Option<(WindowInfo, usize, u32)> {
        let k = self.kept.iter().find(|k| k.id == id)?;
        Some((k.window.clone(), k.max_elements, k.max_depth))
    }
}

/// `s12:34` → (12, 34).
pub fn parse_token(token: &str) -> Result<(u64, usize), Error> {
    let bad = || Error::InvalidArgument {
        message: format!(
            "\"{token}\" is not an element token; tokens look like s12:34 (snapshot 12, element 34)"
        ),
    };
    let rest = token.trim().strip_prefix('s').ok_or_else(bad)?;
    let (s, i) = rest.split_once(':').ok_or_else(bad)?;
    Ok((s.parse().map_err(|_| bad())?, i.parse().map_err(|_| bad())?))
}
