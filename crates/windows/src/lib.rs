//! deskpilot's Windows backend.
//!
//! [`WindowsDesktop`] (`desktop`) implements the capability traits of `deskpilot-backend` with
//! Win32, one module per trait as in the X11 backend: `EnumDisplayMonitors` ([`monitors`]),
//! `EnumWindows` in z-order with DWM extended frame bounds and `WindowFromPoint` ([`windows`]),
//! `BitBlt` of the virtual screen into a DIB section and `PrintWindow` of covered windows
//! ([`capture`]), `SendInput` pointer (`input`) and keyboard (`keyboard`) input, window
//! operations (`wm`), the clipboard (`clipboard`), and the overlay process ([`overlay`]).
//! Everything is in physical pixels: the process asks for per-monitor-v2 DPI awareness at
//! construction, else system awareness (failure is logged, not fatal).
//!
//! Accessibility (`a11y`) is UI Automation with a cache request, falling back to MSAA, on a
//! dedicated COM thread with hard timeouts (`a11y::com`).
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
mod clipboard;
#[cfg(windows)]
mod desktop;
#[cfg(windows)]
pub mod doctor;
#[cfg(windows)]
mod input;
#[cfg(windows)]
mod keyboard;
#[cfg(windows)]
pub mod monitors;
#[cfg(windows)]
pub mod overlay;
#[cfg(windows)]
pub mod windows;
#[cfg(windows)]
mod wm;

#[cfg(windows)]
pub use desktop::{Dpi, WindowsDesktop};
