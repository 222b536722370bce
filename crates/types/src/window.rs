//! What deskpilot knows about a top-level window and a monitor.
//!
//! A `WindowId` is the platform handle (an X11 XID or a Win32 HWND) widened to `u64`; it is
//! opaque to everything but the backend that issued it, and 0 is never a valid id.

use serde::{Deserialize, Serialize};

use crate::geometry::Rect;

/// A platform window handle (XID on X11, HWND on Windows). Never 0.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(transparent)]
pub struct WindowId(pub u64);

impl std::fmt::Display for WindowId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// Window manager state flags.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct WindowState {
    /// Iconified / minimized.
    pub minimized: bool,
    /// Maximized in both directions (or full screen).
    pub maximized: bool,
    /// The window manager's active (focused, foreground) window.
    pub active: bool,
    /// Mapped and not minimized: some part of it may be on screen.
    pub visible: bool,
}

/// A top-level application window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowInfo {
    pub id: WindowId,
    pub title: String,
    /// Window class (X11 `WM_CLASS` class part, Win32 class name).
    pub class: String,
    /// Owning process id when the platform reports it.
    pub pid: Option<u32>,
    /// Owning process' executable name when known.
    pub process: Option<String>,
    /// Outer bounds including the window manager's decorations.
    pub frame: Rect,
    /// The client area (what the application draws).
    pub client: Rect,
    #[serde(flatten)]
    pub state: WindowState,
    /// Position in the stacking order: 0 is the topmost window.
    pub z: u32,
    /// Index of the monitor holding most of the window, when it is on one.
    pub monitor: Option<u32>,
}

impl WindowInfo {
    /// `"Untitled - Mousepad" (mousepad, pid 4242)`: how results and errors name a window.
    pub fn label(&self) -> String {
        format!(
            "\"{}\" ({}, pid {})",
            self.title,
            self.process.as_deref().unwrap_or("?"),
            self.pid.map_or("?".to_string(), |p| p.to_string())
        )
    }
}

/// One monitor of the virtual desktop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Monitor {
    pub index: u32,
    pub name: String,
    /// Bounds in physical virtual-desktop pixels; origins may be negative.
    pub rect: Rect,
    pub primary: bool,
    /// Logical-to-physical scale factor (1.0 when the platform has none).
    pub scale: f64,
}

impl Monitor {
    /// Puts monitors in the order every backend reports them — primary first, then left to
    /// right, top to bottom — and numbers them in that order.
    pub fn order(monitors: &mut [Monitor]) {
        monitors.sort_by_key(|m| (!m.primary, m.rect.x, m.rect.y));
        for (i, m) in monitors.iter_mut().enumerate() {
            m.index = i as u32;
        }
    }
}
