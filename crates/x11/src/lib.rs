//! deskpilot's Linux/X11 backend.
//!
//! [`X11Desktop`] implements the capability traits of `deskpilot-backend` over one x11rb
//! connection: EWMH window listing ([`windows`]), screen capture through MIT-SHM with a core
//! `GetImage` fallback ([`capture`]) and RandR monitors ([`monitors`]). [`doctor`] checks a
//! display for everything deskpilot needs and [`virtual_display`] brings up a complete
//! headless desktop (Xvfb + D-Bus + AT-SPI bus + openbox): it is the one owner of desktop
//! bring-up, used by `deskpilot serve --virtual-display`, by `deskpilot desktop` and by the
//! end-to-end tests alike.
//!
//! Invariant: requests for many windows are pipelined (all cookies first, then all replies),
//! never one round trip per property per window in sequence.
#![cfg(target_os = "linux")]

mod a11y;
mod a11y_changes;
mod atoms;
pub mod capture;
mod clipboard;
mod composite;
pub use clipboard::hold_clipboard;
mod desktop;
pub mod doctor;
mod error;
mod input;
pub mod keyboard;
pub mod monitors;
pub mod overlay;
pub mod screen_pick;
pub mod virtual_display;
pub mod windows;
mod wm;

pub use desktop::X11Desktop;
pub use virtual_display::{Heads, Health, HealthWatch, VirtualDisplay, VirtualDisplayOptions};
