//! deskpilot's Windows backend.
//!
//! [`WindowsDesktop`] implements the capability traits of `deskpilot-backend` with Win32:
//! `EnumWindows` in z-order with DWM extended frame bounds ([`windows`]), `BitBlt` +
//! `GetDIBits` capture of the virtual screen ([`capture`]) and `EnumDisplayMonitors`
//! ([`monitors`]). Everything is in physical pixels: the process asks for per-monitor-v2 DPI
//! awareness at construction (failure is logged, not fatal).
//!
//! Invariant: every `unsafe` Win32 call is wrapped in a safe function of this crate with a
//! `// SAFETY:` note; handles are released by guards, never by hand on each return path.
#![cfg(windows)]

pub mod capture;
mod control;
mod input;
pub mod monitors;
pub mod overlay;
pub mod windows;

use std::sync::Arc;

use deskpilot_backend::{
    Accessibility, BackendInfo, Capture, Clipboard, Desktop, Error, Frame, RawTree, Screens,
    TreeLimits, WindowControl, WindowOp, Windows,
};
use deskpilot_types::{Monitor, Rect, WindowId, WindowInfo};

/// The interactive Windows desktop of this session.
#[derive(Debug)]
pub struct WindowsDesktop {
    _private: (),
}

impl WindowsDesktop {
    /// Attaches to the interactive desktop and asks for per-monitor-v2 DPI awareness.
    pub fn new() -> Result<Self, Error> {
        use ::windows::Win32::UI::HiDpi::{
            DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2, SetProcessDpiAwarenessContext,
        };
        // SAFETY: a process-wide setting with no pointer arguments; failure only means the
        // awareness was already set (by a manifest) or the OS is too old.
        let awareness =
            unsafe { SetProcessDpiAwarenessContext(DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2) };
        if let Err(e) = awareness {
            tracing::warn!("per-monitor-v2 DPI awareness unavailable: {e}");
        }
        Ok(WindowsDesktop { _private: () })
    }

    /// What `status` shows about this backend.
    pub fn info(&self) -> BackendInfo {
        BackendInfo {
            platform: "windows",
            display: "WinSta0\\Default".to_string(),
            capture_method: "bitblt".to_string(),
            window_manager: Some("dwm".to_string()),
        }
    }

    /// Wraps this backend as the engine's [`Desktop`].
    pub fn into_desktop(self) -> Desktop {
        let info = self.info();
        Desktop::from_backend(info, Arc::new(self))
    }
}

impl Screens for WindowsDesktop {
    fn monitors(&self) -> Result<Vec<Monitor>, Error> {
        monitors::monitors()
    }

    fn desktop_bounds(&self) -> Result<Rect, Error> {
        Ok(monitors::virtual_screen())
    }
}

impl Windows for WindowsDesktop {
    fn list_windows(&self) -> Result<Vec<WindowInfo>, Error> {
        windows::list()
    }
}

impl Capture for WindowsDesktop {
    fn capture(&self, rect: Rect) -> Result<Frame, Error> {
        let desktop = monitors::virtual_screen();
        if rect.is_empty() || rect.intersect(&desktop) != Some(rect) {
            return Err(Error::OutsideDesktop { rect, desktop });
        }
        capture::bitblt(rect)
    }
}

impl WindowControl for WindowsDesktop {
    fn window_op(&self, id: WindowId, op: WindowOp) -> Result<(), Error> {
        control::window_op(id, op)
    }
}

impl Clipboard for WindowsDesktop {
    fn read_text(&self) -> Result<Option<String>, Error> {
        control::read_text()
    }

    fn write_text(&self, text: &str) -> Result<(), Error> {
        control::write_text(text)
    }
}

impl Accessibility for WindowsDesktop {
    fn tree(&self, _window: &WindowInfo, _limits: &TreeLimits) -> Result<RawTree, Error> {
        Err(Error::Unsupported {
            what: "accessibility tree",
            reason: "UI Automation trees are not implemented on Windows yet".to_string(),
        })
    }
}
