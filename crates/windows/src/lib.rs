//! deskpilot's Windows backend.
//!
//! [`WindowsDesktop`] implements the capability traits of `deskpilot-backend` with Win32:
//! `EnumWindows` in z-order with DWM extended frame bounds and `WindowFromPoint` ([`windows`]),
//! `BitBlt` of the virtual screen into a DIB section and `PrintWindow` of covered windows
//! ([`capture`]), `SendInput` (`input`), window operations and the clipboard (`control`),
//! `EnumDisplayMonitors` ([`monitors`]) and the overlay process ([`overlay`]). Everything is in
//! physical pixels: the process asks for per-monitor-v2 DPI awareness at construction, else
//! system awareness (failure is logged, not fatal).
//!
//! Accessibility (`a11y`) is UI Automation with a cache request, falling back to MSAA, on a
//! dedicated COM thread with hard timeouts (`com`).
//!
//! The pure parts (role tables, `SendInput` coordinates, blank-capture detection) build and
//! are unit-tested on every platform; everything that calls Win32 is `cfg(windows)`.
//!
//! Invariant: every `unsafe` Win32 call is wrapped in a safe function of this crate with a
//! `// SAFETY:` note; handles are released by guards, never by hand on each return path.

pub mod absolute;
pub mod blank;
pub mod roles;

#[cfg(windows)]
mod a11y;
#[cfg(windows)]
pub mod capture;
#[cfg(windows)]
mod com;
#[cfg(windows)]
mod control;
#[cfg(windows)]
mod controls;
#[cfg(windows)]
mod input;
#[cfg(windows)]
pub mod monitors;
#[cfg(windows)]
mod msaa;
#[cfg(windows)]
pub mod overlay;
#[cfg(windows)]
mod uia;
#[cfg(windows)]
pub mod windows;

#[cfg(windows)]
pub mod doctor;

#[cfg(windows)]
pub use desktop::{Dpi, WindowsDesktop};

#[cfg(windows)]
mod desktop {
    use std::sync::Arc;

    use deskpilot_backend::{
        BackendInfo, Capture, Clipboard, Desktop, Error, Frame, Screens, WindowCapture,
        WindowControl, WindowOp, Windows,
    };
    use deskpilot_types::{Monitor, Point, Rect, WindowId, WindowInfo};

    /// The interactive Windows desktop of this session.
    #[derive(Debug)]
    pub struct WindowsDesktop {
        /// Where accessibility calls run.
        pub(crate) com: crate::com::ComThread,
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
            use ::windows::Win32::UI::HiDpi::{
                DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2, SetProcessDpiAwarenessContext,
            };
            // SAFETY: a process-wide setting with no pointer arguments; failure only means the
            // awareness was already set (by a manifest) or the OS is too old.
            let awareness = unsafe {
                SetProcessDpiAwarenessContext(DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2)
            };
            let dpi = match awareness {
                Ok(()) => Dpi::PerMonitorV2,
                Err(e) => {
                    // System awareness at least keeps the primary monitor's coordinates
                    // physical.
                    // SAFETY: a process-wide setting with no arguments.
                    let system =
                        unsafe { ::windows::Win32::UI::WindowsAndMessaging::SetProcessDPIAware() };
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
                com: crate::com::ComThread::default(),
                dpi,
            })
        }

        /// The DPI awareness this process got.
        pub fn dpi(&self) -> &Dpi {
            &self.dpi
        }

        /// Whether UI Automation can be used here, or why not (trees then come from MSAA).
        pub fn ui_automation(&self) -> Result<(), String> {
            self.com
                .call(
                    "creating the UI Automation client",
                    std::time::Duration::from_secs(10),
                    |session| Ok(session.uia().map(|_| ())),
                )
                .map_err(|e| e.to_string())?
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
            crate::monitors::monitors()
        }

        fn desktop_bounds(&self) -> Result<Rect, Error> {
            Ok(crate::monitors::virtual_screen())
        }
    }

    impl Windows for WindowsDesktop {
        fn list_windows(&self) -> Result<Vec<WindowInfo>, Error> {
            crate::windows::list()
        }

        fn window_at(&self, p: Point) -> Result<Option<WindowId>, Error> {
            Ok(crate::windows::at(p))
        }
    }

    impl Capture for WindowsDesktop {
        fn capture(&self, rect: Rect) -> Result<Frame, Error> {
            self.capture_into(rect, Vec::new())
        }

        fn capture_into(&self, rect: Rect, buffer: Vec<u8>) -> Result<Frame, Error> {
            let desktop = crate::monitors::virtual_screen();
            if rect.is_empty() || rect.intersect(&desktop) != Some(rect) {
                return Err(Error::OutsideDesktop { rect, desktop });
            }
            crate::capture::bitblt(rect, buffer)
        }

        fn capture_window(&self, window: &WindowInfo, rect: Rect) -> Result<WindowCapture, Error> {
            crate::capture::print_window(window, rect)
        }
    }

    impl WindowControl for WindowsDesktop {
        fn window_op(&self, id: WindowId, op: WindowOp) -> Result<(), Error> {
            crate::control::window_op(id, op)
        }
    }

    impl Clipboard for WindowsDesktop {
        fn read_text(&self) -> Result<Option<String>, Error> {
            crate::control::read_text()
        }

        fn write_text(&self, text: &str) -> Result<(), Error> {
            crate::control::write_text(text)
        }
    }
}
