//! Screenshots handed out so far: their id, geometry and the window they were pinned to.
//!
//! Later actions read coordinates "in the pixel space of the last screenshot (or of
//! `screenshot_id`)"; this registry is where that space is looked up. It keeps the most
//! recent [`CAPACITY`] records; older ids are refused as unknown rather than guessed.

use std::collections::VecDeque;
use std::time::SystemTime;

use deskpilot_types::{Rect, WindowId, WindowInfo};

use crate::coords::ViewGeometry;
use crate::error::Error;
use crate::signature::Signature;

/// How many screenshots are remembered.
pub const CAPACITY: usize = 64;

/// The id of a screenshot, unique for the life of the server process (the engine issues them;
/// each session keeps its own).
pub type ScreenshotId = u64;

/// What the engine remembers about one screenshot.
#[derive(Debug, Clone, PartialEq)]
pub struct ScreenshotRecord {
    pub id: ScreenshotId,
    pub view: ViewGeometry,
    /// The window the screenshot was pinned to, as it was at capture time.
    pub window: Option<Pin>,
    pub taken_at: SystemTime,
}

/// The window an observation was pinned to: its id, its owner and its frame when it was
/// taken. Points read off the observation are valid while [`recheck_pin`] passes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pin {
    pub window: WindowId,
    pub pid: Option<u32>,
    pub frame: Rect,
}

impl Pin {
    /// `w` as it is now.
    pub fn of(w: &WindowInfo) -> Pin {
        Pin {
            window: w.id,
            pid: w.pid,
            frame: w.frame,
        }
    }
}

/// Where a client's keys go when no window is named: what it last looked at or brought
/// forward. Keys re-check it before they are sent ([`recheck_pin`]; a move does not matter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyTarget {
    /// A screenshot: the window it was pinned to (none for the screen or a region).
    Screenshot(ScreenshotId),
    /// A window this client focused, restored, launched or read the tree of.
    Window(Pin),
}

/// The window `pin` names must still be there, with the same owner, at the same place
/// (`TARGET_WINDOW_GONE` / `_CHANGED` / `_MOVED`). Returns it as it is now.
pub(crate) fn recheck_pin(
    windows: &[WindowInfo],
    pin: Option<Pin>,
) -> Result<Option<WindowInfo>, Error> {
    let Some(Pin {
        window: id,
        pid,
        frame,
    }) = pin
    else {
        return Ok(None);
    };
    let now = windows
        .iter()
        .find(|w| w.id == id)
        .ok_or(Error::TargetWindowGone(id))?;
    if now.pid != pid {
        return Err(Error::TargetWindowChanged {
            id,
            was: pid,
            now: now.pid,
        });
    }
    if now.frame != frame {
        return Err(Error::TargetWindowMoved {
            id,
            was: frame,
            now: now.frame,
        });
    }
    Ok(Some(now.clone()))
}

/// What a capture's reference signature is kept under: its window, or its rectangle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum RefKey {
    Window(WindowId),
    Area(Rect),
}

/// The newest signature of one capture target, which `compare` measures against.
#[derive(Debug)]
pub(crate) struct Reference {
    pub(crate) id: ScreenshotId,
    pub(crate) rect: Rect,
    pub(crate) signature: Signature,
}

#[derive(Debug, Default)]
pub(crate) struct Registry {
    records: VecDeque<ScreenshotRecord>,
}

impl Registry {
    pub(crate) fn insert(
        &mut self,
        id: ScreenshotId,
        view: ViewGeometry,
        window: Option<Pin>,
    ) -> ScreenshotId {
        if self.records.len() == CAPACITY {
            self.records.pop_front();
        }
        self.records.push_back(ScreenshotRecord {
            id,
            view,
            window,
            taken_at: SystemTime::now(),
        });
        id
    }

    pub(crate) fn get(&self, id: ScreenshotId) -> Option<&ScreenshotRecord> {
        self.records.iter().rev().find(|r| r.id == id)
    }

    pub(crate) fn last(&self) -> Option<&ScreenshotRecord> {
        self.records.back()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forgets_the_oldest_beyond_capacity() {
        let mut r = Registry::default();
        let view = ViewGeometry::new(Rect::new(0, 0, 10, 10), 10, 10);
        let first = r.insert(1, view, None);
        for id in 2..=CAPACITY as u64 + 1 {
            r.insert(id, view, None);
        }
        assert!(r.get(first).is_none());
        assert_eq!(r.get(first + 1).map(|x| x.id), Some(first + 1));
        assert_eq!(r.last().map(|x| x.id), Some(first + CAPACITY as u64));
    }
}
