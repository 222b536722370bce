//! Accessibility trees on Windows: UI Automation first, MSAA when UI Automation cannot be
//! created (Wine, stripped-down systems) or fails on a window.
//!
//! Everything runs on the [`ComThread`]. A tree read registers each element's COM object in
//! the thread's [`Session`] under a numbered handle (`uia:N`, `msaa:N`); actions look the
//! object up again, so an element is acted on through the very object that was read. Each
//! window keeps only its latest read, and only the last [`KEPT_WINDOWS`] windows are kept.
//! A handle that is no longer registered is reported as `ElementGone`, which the engine turns into
//! `STALE_ELEMENT`.
//!
//! `DESKPILOT_WINDOWS_A11Y=msaa` skips UI Automation, so the fallback can be exercised on a
//! Windows that has UI Automation.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use deskpilot_backend::{Accessibility, ElementHandle, ElementStates, Error, RawTree, TreeLimits};
use deskpilot_types::{WindowId, WindowInfo};
use windows::Win32::Foundation::HWND;
use windows::Win32::System::Variant::{
    VARENUM, VARIANT, VT_BOOL, VT_BSTR, VT_I2, VT_I4, VT_INT, VT_UI4, VariantClear,
};
use windows::Win32::UI::Accessibility::{IAccessible, IUIAutomationElement};

use crate::WindowsDesktop;
use crate::{controls, msaa, uia};

/// How many windows' element handles stay usable.
const KEPT_WINDOWS: usize = 8;
/// The limit for one action or state read on an element.
const ACTION_LIMIT: Duration = Duration::from_secs(5);

/// One element as the COM thread holds it.
pub(crate) enum Node {
    Uia(IUIAutomationElement),
    /// An `IAccessible` and the child id inside it (`0` is the object itself).
    Msaa(IAccessible, i32),
    /// Item `usize` of a standard list or combo box, read through window messages.
    Item(HWND, controls::List, usize),
    /// An entry of a window's menu, with the command it sends when it is a leaf.
    Menu(HWND, Option<u32>),
}

/// The COM thread's state: the UI Automation client (created once) and the elements of the
/// latest reads.
#[derive(Default)]
pub(crate) struct Session {
    uia: Option<Result<windows::Win32::UI::Accessibility::IUIAutomation, String>>,
    nodes: HashMap<u64, Node>,
    windows: VecDeque<(WindowId, Vec<u64>)>,
    next: u64,
}

impl Session {
    /// The UI Automation client, or why there is none here.
    pub(crate) fn uia(
        &mut self,
    ) -> Result<&windows::Win32::UI::Accessibility::IUIAutomation, String> {
        if std::env::var("DESKPILOT_WINDOWS_A11Y").as_deref() == Ok("msaa") {
            return Err("DESKPILOT_WINDOWS_A11Y=msaa asks for MSAA".to_string());
        }
        self.uia
            .get_or_insert_with(uia::create)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Forgets the window's earlier read before a new one.
    pub(crate) fn start_read(&mut self, window: WindowId) {
        if let Some(i) = self.windows.iter().position(|(w, _)| *w == window)
            && let Some((_, old)) = self.windows.remove(i)
        {
            for n in old {
                self.nodes.remove(&n);
            }
        }
        while self.windows.len() >= KEPT_WINDOWS {
            if let Some((_, old)) = self.windows.pop_front() {
                for n in old {
                    self.nodes.remove(&n);
                }
            }
        }
        self.windows.push_back((window, Vec::new()));
    }

    /// Registers an element of the window being read.
    pub(crate) fn register(&mut self, node: Node) -> ElementHandle {
        self.next += 1;
        let n = self.next;
        let prefix = match node {
            Node::Uia(_) => "uia",
            Node::Msaa(..) | Node::Item(..) | Node::Menu(..) => "msaa",
        };
        self.nodes.insert(n, node);
        if let Some((_, list)) = self.windows.back_mut() {
            list.push(n);
        }
        ElementHandle(format!("{prefix}:{n}"))
    }

    pub(crate) fn node(&self, handle: &ElementHandle) -> Result<&Node, Error> {
        handle
            .0
            .split_once(':')
            .and_then(|(_, n)| n.parse::<u64>().ok())
            .and_then(|n| self.nodes.get(&n))
            .ok_or_else(|| Error::ElementGone {
                reason: format!("element {} is from an older read of its window", handle.0),
            })
    }
}

/// A VARIANT that is cleared when dropped.
pub(crate) struct Variant(pub VARIANT);

impl Drop for Variant {
    fn drop(&mut self) {
        // SAFETY: the VARIANT is owned here and cleared once.
        let _ = unsafe { VariantClear(&mut self.0) };
    }
}

impl Variant {
    /// A `VT_I4` holding `n` (an MSAA child id).
    pub(crate) fn i4(n: i32) -> Variant {
        let mut v = VARIANT::default();
        // SAFETY: writes the tag and the matching union member of a zeroed VARIANT.
        unsafe {
            (*v.Anonymous.Anonymous).vt = VT_I4;
            (*v.Anonymous.Anonymous).Anonymous.lVal = n;
        }
        Variant(v)
    }

    pub(crate) fn vt(&self) -> VARENUM {
        // SAFETY: every VARIANT starts with its tag.
        unsafe { self.0.Anonymous.Anonymous.vt }
    }

    /// The integer inside, read from the union directly (Wine 8 lacks `VariantToInt32`).
    pub(crate) fn as_i32(&self) -> Option<i32> {
        // SAFETY: the member read matches the tag.
        unsafe {
            let inner = &self.0.Anonymous.Anonymous;
            match inner.vt {
                VT_I4 | VT_INT => Some(inner.Anonymous.lVal),
                VT_UI4 => Some(inner.Anonymous.ulVal as i32),
                VT_I2 => Some(i32::from(inner.Anonymous.iVal)),
                _ => None,
            }
        }
    }

    pub(crate) fn as_bool(&self) -> Option<bool> {
        // SAFETY: the member read matches the tag.
        unsafe {
            let inner = &self.0.Anonymous.Anonymous;
            (inner.vt == VT_BOOL).then(|| inner.Anonymous.boolVal.0 != 0)
        }
    }

    pub(crate) fn as_string(&self) -> Option<String> {
        // SAFETY: the member read matches the tag; the BSTR stays owned by the VARIANT.
        unsafe {
            let inner = &self.0.Anonymous.Anonymous;
            (inner.vt == VT_BSTR).then(|| inner.Anonymous.bstrVal.to_string())
        }
    }
}

/// Why a tree walk must stop now, if it must: `max_elements` read, or `limits.timeout` spent
/// since `started`.
pub(crate) fn out_of_budget(
    count: usize,
    started: std::time::Instant,
    limits: &TreeLimits,
) -> Option<String> {
    if count >= limits.max_elements {
        Some(format!(
            "stopped at {} elements (max_elements)",
            limits.max_elements
        ))
    } else if started.elapsed() >= limits.timeout {
        Some(format!(
            "stopped after {} ms (the application answers slowly)",
            limits.timeout.as_millis()
        ))
    } else {
        None
    }
}

fn hwnd(id: WindowId) -> HWND {
    HWND(id.0 as usize as *mut _)
}

/// Reads a window's tree on the COM thread: UI Automation, else MSAA with a note saying why.
fn read_tree(
    session: &mut Session,
    window: &WindowInfo,
    limits: &TreeLimits,
) -> Result<RawTree, Error> {
    session.start_read(window.id);
    let why_not_uia = match session.uia() {
        Ok(automation) => {
            let automation = automation.clone();
            match uia::tree(session, &automation, hwnd(window.id), window, limits) {
                Ok(tree) => return Ok(tree),
                Err(e) => format!("UI Automation could not read this window ({e})"),
            }
        }
        Err(reason) => format!("UI Automation is unsupported here ({reason})"),
    };
    session.start_read(window.id);
    let mut tree = msaa::tree(session, hwnd(window.id), window, limits)?;
    tree.notes.insert(
        0,
        format!(
            "{why_not_uia}; this tree comes from MSAA (source: msaa): names, roles, states, \
             values and positions, with fewer actions"
        ),
    );
    Ok(tree)
}

/// What list items and menu entries read through window messages do not offer.
fn not_offered(node: &Node, what: &'static str) -> Error {
    let reason = match node {
        Node::Menu(..) => {
            "a menu entry read from the window's menu offers only \"invoke\" on items that \
             run a command; click the menu bar to open a menu"
        }
        _ => "a list item read from its control offers only \"select\"",
    };
    Error::Unsupported {
        what,
        reason: reason.to_string(),
    }
}

fn with_node<T: Send + 'static>(
    desktop: &WindowsDesktop,
    what: &'static str,
    handle: &ElementHandle,
    f: impl FnOnce(&Node) -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    let handle = handle.clone();
    desktop
        .com
        .call(what, ACTION_LIMIT, move |session| f(session.node(&handle)?))
}

impl Accessibility for WindowsDesktop {
    fn tree(&self, window: &WindowInfo, limits: &TreeLimits) -> Result<RawTree, Error> {
        let (window, limits) = (window.clone(), *limits);
        // The reader stops itself at `limits.timeout`; the thread limit is the backstop for a
        // provider that blocks inside one call.
        let backstop = limits.timeout + Duration::from_secs(2);
        self.com
            .call("reading the accessibility tree", backstop, move |s| {
                read_tree(s, &window, &limits)
            })
    }

    fn do_action(&self, element: &ElementHandle, action: &str) -> Result<(), Error> {
        let action = action.to_string();
        with_node(
            self,
            "an accessibility action",
            element,
            move |node| match node {
                Node::Uia(e) => uia::do_action(e, &action),
                Node::Msaa(acc, child) => msaa::do_action(acc, *child, &action),
                Node::Item(h, kind, i) if action.eq_ignore_ascii_case("select") => {
                    controls::select_item(*h, *kind, *i)
                }
                Node::Item(..) => Err(not_offered(node, "this action")),
                Node::Menu(h, Some(id)) if action.eq_ignore_ascii_case("invoke") => {
                    controls::run_command(*h, *id)
                }
                Node::Menu(..) => Err(not_offered(node, "this action")),
            },
        )
    }

    fn set_value(&self, element: &ElementHandle, value: &str) -> Result<(), Error> {
        let value = value.to_string();
        with_node(self, "setting a value", element, move |node| match node {
            Node::Uia(e) => uia::set_value(e, &value),
            Node::Msaa(acc, child) => msaa::set_value(acc, *child, &value),
            Node::Item(..) | Node::Menu(..) => Err(not_offered(node, "setting a value")),
        })
    }

    fn read_text(&self, element: &ElementHandle) -> Result<String, Error> {
        with_node(self, "reading element text", element, |node| match node {
            Node::Uia(e) => uia::read_text(e),
            Node::Msaa(acc, child) => msaa::read_text(acc, *child),
            Node::Item(h, kind, i) => Ok(controls::item_text(*h, *kind, *i)),
            Node::Menu(..) => Err(not_offered(node, "reading text")),
        })
    }

    fn focus(&self, element: &ElementHandle) -> Result<(), Error> {
        with_node(self, "focusing an element", element, |node| match node {
            Node::Uia(e) => uia::focus(e),
            Node::Msaa(acc, child) => msaa::select(acc, *child, msaa::Select::Focus),
            Node::Item(..) | Node::Menu(..) => Err(not_offered(node, "focusing")),
        })
    }

    fn states(&self, element: &ElementHandle) -> Result<ElementStates, Error> {
        with_node(self, "reading element states", element, |node| match node {
            Node::Uia(e) => uia::states(e),
            Node::Msaa(acc, child) => msaa::states(acc, *child),
            Node::Item(h, kind, i) => Ok(ElementStates {
                enabled: true,
                selected: controls::item_selected(*h, *kind, *i),
                ..ElementStates::default()
            }),
            Node::Menu(..) => Err(not_offered(node, "reading states")),
        })
    }

    fn select(&self, element: &ElementHandle) -> Result<(), Error> {
        with_node(self, "selecting an element", element, |node| match node {
            Node::Uia(e) => uia::select(e, true),
            Node::Msaa(acc, child) => msaa::select(acc, *child, msaa::Select::Take),
            Node::Item(h, kind, i) => controls::select_item(*h, *kind, *i),
            Node::Menu(..) => Err(not_offered(node, "selecting")),
        })
    }

    fn deselect(&self, element: &ElementHandle) -> Result<(), Error> {
        with_node(self, "deselecting an element", element, |node| match node {
            Node::Uia(e) => uia::select(e, false),
            Node::Msaa(acc, child) => msaa::select(acc, *child, msaa::Select::Remove),
            Node::Item(..) | Node::Menu(..) => Err(not_offered(node, "deselecting")),
        })
    }
}
