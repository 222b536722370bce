//! deskpilot's Win32 fixture: one window with the common controls the Windows backend must
//! read and drive — push buttons (one with a CJK label), a check box, an edit with a label,
//! a list box, a drop-down combo box and a menu bar — that reports every event it gets.
//!
//! Events go, one UTF-8 line each, to the file named by the first argument (appended and
//! flushed at once, so a test can poll it) and to the status line at the bottom of the window:
//! `ready`, `click OK`, `check Enable logging on`, `edit <text>`, `list Banana`,
//! `combo Green`, `menu New`, `mouse <x> <y>` / `up <x> <y>` (the left button pressed / released
//! on the window's background, in client coordinates), `wheel <delta>` / `hwheel <delta>`, `key <virtual key>`, `closed`. The "Hang 5 s" button blocks the window's
//! thread for five seconds (`hang start` … `hang end`): a stuck app on demand.
//!
//! Only Windows builds the app; elsewhere the binary says so and exits with code 2.
#![cfg_attr(windows, windows_subsystem = "windows")]

#[cfg(windows)]
mod app;

fn main() {
    #[cfg(windows)]
    app::run();
    #[cfg(not(windows))]
    #[allow(clippy::print_stderr)]
    {
        eprintln!("winfixture is a Windows application; cross-build it for x86_64-pc-windows-gnu");
        std::process::exit(2);
    }
}
