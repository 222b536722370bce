//! The COM thread's state between jobs: the UI Automation client (created once) and the
//! elements of each window's latest read, registered under positional handles
//! (`uia:<window>.<n>`, `msaa:<window>.<n>`: the n-th element of the window's read), plus the
//! budget every tree walk stops at.
//!
//! Positional handles make two reads of an unchanged window name their elements alike, so the
//! engine keeps one snapshot (and its element tokens) across re-reads, as it does with AT-SPI's
//! object paths; a read whose structure differs is a new snapshot there.
//!
//! Each window keeps only its latest read, and only the last [`KEPT_WINDOWS`] windows are
//! kept; a handle that is no longer registered reads as `ElementGone`. Nothing here calls UI
//! Automation or MSAA: the readers (`uia`, `msaa`) register what they read, and the client is
//! made by the function the caller hands in, so this module imports neither reader.

use std::collections::{HashMap, VecDeque};

use deskpilot_backend::{ElementHandle, Error, TreeLimits, TreeNote};
use deskpilot_types::WindowId;
use windows::Win32::Foundation::HWND;
use windows::Win32::UI::Accessibility::{IAccessible, IUIAutomation, IUIAutomationElement};

use super::controls;

/// How many windows' element handles stay usable.
const KEPT_WINDOWS: usize = 8;

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
    uia: Option<Result<IUIAutomation, String>>,
    nodes: HashMap<String, Node>,
    windows: VecDeque<(WindowId, Vec<String>)>,
    next: u64,
}

impl Session {
    /// The UI Automation client, made by `create` on first use, or why there is none here.
    pub(crate) fn uia(
        &mut self,
        create: fn() -> Result<IUIAutomation, String>,
    ) -> Result<&IUIAutomation, String> {
        if std::env::var("DESKPILOT_WINDOWS_A11Y").as_deref() == Ok("msaa") {
            return Err("DESKPILOT_WINDOWS_A11Y=msaa asks for MSAA".to_string());
        }
        self.uia
            .get_or_insert_with(create)
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

    /// Registers an element of the window being read, under its position in the read.
    pub(crate) fn register(&mut self, node: Node) -> ElementHandle {
        let prefix = match node {
            Node::Uia(_) => "uia",
            Node::Msaa(..) | Node::Item(..) | Node::Menu(..) => "msaa",
        };
        let key = match self.windows.back() {
            Some((window, list)) => format!("{prefix}:{:x}.{}", window.0, list.len()),
            None => {
                self.next += 1;
                format!("{prefix}:{}", self.next)
            }
        };
        self.nodes.insert(key.clone(), node);
        if let Some((_, list)) = self.windows.back_mut() {
            list.push(key.clone());
        }
        ElementHandle(key)
    }

    pub(crate) fn node(&self, handle: &ElementHandle) -> Result<&Node, Error> {
        self.nodes.get(&handle.0).ok_or_else(|| Error::ElementGone {
            reason: format!("element {} is from an older read of its window", handle.0),
        })
    }
}

/// Why a tree walk must stop now, if it must: `max_elements` read, or `limits.timeout` spent
/// since `started`.
pub(crate) fn out_of_budget(
    count: usize,
    started: std::time::Instant,
    limits: &TreeLimits,
) -> Option<TreeNote> {
    if count >= limits.max_elements {
        Some(TreeNote::StoppedAtMaxElements {
            max_elements: limits.max_elements,
        })
    } else if started.elapsed() >= limits.timeout {
        Some(TreeNote::StoppedSlow {
            limit: limits.timeout,
        })
    } else {
        None
    }
}
