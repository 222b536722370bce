//! Accessibility trees on Windows: UI Automation first, MSAA when UI Automation cannot be
//! created (Wine, stripped-down systems) or fails on a window.
//!
//! Everything runs on the [`ComThread`](com::ComThread). A tree read registers each
//! element's COM object in the thread's [`Session`] under a positional handle
//! (`uia:<window>.<n>`, `msaa:<window>.<n>`), so re-reading an unchanged window keeps the
//! engine's snapshot; actions look the object up again, so an element is acted on through the
//! very object the latest read found. Each window keeps only its latest read, and only the last 8 windows
//! are kept. A handle that is no longer registered is reported as `ElementGone`, which the
//! engine turns into `STALE_ELEMENT`.
//!
//! `DESKPILOT_WINDOWS_A11Y=msaa` skips UI Automation, so the fallback can be exercised on a
//! Windows that has UI Automation.
//!
//! `passwords` finds the password fields on screen for captures to paint over, without a tree.
//!
//! The modules form layers, each importing only those below it: this one (the `Accessibility`
//! impl: which reader, which action) over `uia` and `msaa` (the two readers), over `com` (the
//! thread and its `Variant`), over `session` (what the thread keeps), over `controls` (window
//! messages to standard controls).

pub(crate) mod com;
mod controls;
mod msaa;
mod passwords;
mod session;
mod uia;

use std::time::{Duration, Instant};

use deskpilot_backend::{
    Accessibility, ElementHandle, ElementStates, Error, LiveElement, NoUia, PasswordFields,
    RawTree, TreeLimits, TreeNote,
};
use deskpilot_types::{WindowId, WindowInfo};
use windows::Win32::Foundation::HWND;

use crate::desktop::WindowsDesktop;
use session::{Node, Session};

/// The limit for one action or state read on an element.
const ACTION_LIMIT: Duration = Duration::from_secs(5);

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
    let why_not_uia = match session.uia(uia::create) {
        Ok(automation) => {
            let automation = automation.clone();
            match uia::tree(session, &automation, hwnd(window.id), window, limits) {
                Ok(tree) => return Ok(tree),
                Err(e) => NoUia::Failed(e.to_string()),
            }
        }
        Err(reason) => NoUia::Unsupported(reason),
    };
    session.start_read(window.id);
    let mut tree = msaa::tree(session, hwnd(window.id), window, limits)?;
    tree.notes.insert(0, TreeNote::FromMsaa(why_not_uia));
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

impl WindowsDesktop {
    /// Whether UI Automation can be used here, or why not (trees then come from MSAA).
    pub fn ui_automation(&self) -> Result<(), String> {
        self.com
            .call(
                "creating the UI Automation client",
                Duration::from_secs(10),
                |session| Ok(session.uia(uia::create).map(|_| ())),
            )
            .map_err(|e| e.to_string())?
    }
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

    fn live(&self, element: &ElementHandle) -> Result<LiveElement, Error> {
        let handle = element.clone();
        self.com
            .call("re-reading the element", ACTION_LIMIT, move |session| {
                let automation = session.uia(uia::create).ok().cloned();
                match (session.node(&handle)?, automation) {
                    (Node::Uia(e), Some(automation)) => uia::live(&automation, e),
                    _ => Err(Error::Unsupported {
                        what: "re-reading elements",
                        reason: "only elements read through UI Automation can be re-read"
                            .to_string(),
                    }),
                }
            })
    }

    /// `ES_PASSWORD` edit controls and the focused UI Automation password field (see
    /// `passwords`); returns by `deadline`.
    fn password_fields(
        &self,
        windows: &[WindowInfo],
        deadline: Instant,
    ) -> Result<PasswordFields, Error> {
        self.find_password_fields(windows, deadline)
    }

    fn deselect(&self, element: &ElementHandle) -> Result<(), Error> {
        with_node(self, "deselecting an element", element, |node| match node {
            Node::Uia(e) => uia::select(e, false),
            Node::Msaa(acc, child) => msaa::select(acc, *child, msaa::Select::Remove),
            Node::Item(..) | Node::Menu(..) => Err(not_offered(node, "deselecting")),
        })
    }
}
