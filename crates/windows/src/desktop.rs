//! `WindowsDesktop`: the interactive desktop of this session, the DPI awareness the process
//! got, and the COM thread accessibility calls run on.
//!
//! The capability traits are implemented in their own modules (`monitors`: `Screens`,
//! `windows`, `capture`, `input`, `keyboard`, `wm`: `WindowControl`, `clipboard`, `a11y`),
//! so this module calls into none of them; it only holds the state they share.

use std::sync::Arc;

use deskpilot_backend::{BackendInfo, Desktop, Error};

use crate::a11y::com::ComThread;

/// The interactive Windows desktop of this session.
#[derive(Debug)]
pub struct WindowsDesktop {
    /// Where accessibility calls run.
    pub(crate) com: ComThread,
    /// The DPI awareness this process got, for `doctor`.
    dpi: Dpi,
}

/// The DPI awareness the process got at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dpi {
    /// Physical pixels on every monitor.
    PerMonitorV2,
    /// Physical pixels on the primary monitor's scale only; why per-monitor-v2 was refused.
    System(String),
    /// Neither could be set.
    Unaware(String),
}

impl WindowsDesktop {
    /// Attaches to the interactive desktop and asks for per-monitor-v2 DPI awareness.
    pub fn new() -> Result<Self, Error> {
        use windows::Win32::UI::HiDpi::{
            DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2, SetProcessDpiAwarenessContext,
        };
        // SAFETY: a process-wide setting with no pointer arguments; failure only means the
        // awareness was already set (by a manifest) or the OS is too old.
        let awareness =
            unsafe { SetProcessDpiAwarenessContext(DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2) };
        let dpi = match awareness {
            Ok(()) => Dpi::PerMonitorV2,
            Err(e) => {
                // System awareness at least keeps the primary monitor's coordinates
                // physical.
                // SAFETY: a process-wide setting with no arguments.
                let system =
                    unsafe { windows::Win32::UI::WindowsAndMessaging::SetProcessDPIAware() };
                tracing::warn!(
                    "per-monitor-v2 DPI awareness unavailable ({e}); system DPI awareness: {}",
                    if system.as_bool() {
                        "set"
                    } else {
                        "unavailable too"
                    }
                );
                if system.as_bool() {
                    Dpi::System(e.to_string())
                } else {
                    Dpi::Unaware(e.to_string())
                }
            }
        };
        Ok(WindowsDesktop {
            com: ComThread::default(),
            dpi,
        })
    }

    /// The DPI awareness this process got.
    pub fn dpi(&self) -> &Dpi {
        &self.dpi
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
