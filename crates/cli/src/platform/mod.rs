//! Everything in the binary that differs by operating system, behind one set of functions.
//!
//! The backend (`connect`, with the virtual display on Linux), `doctor`'s checks, the hidden
//! process entries (`overlay` for `__overlay`, `hold_clipboard` for `__hold-clipboard`,
//! `ocr_worker` for `__ocr`), the clipboard hand-over after `call clipboard_write`, the
//! virtual display of `deskpilot desktop`, the signals that stop a command, the allocator
//! tuning and where the configuration file lives. One file per operating system (`linux`,
//! `windows`) implements them; any other target gets `unsupported`, whose every entry answers
//! with the same one message.
//!
//! Invariant: this is the only module of the binary that names a platform — no
//! `cfg(target_os …)`, `cfg(windows)` or `cfg(unix)` anywhere else in `src/` (a test below
//! reads the sources and fails on one). Callers never learn which file answered.
//!
//! An unreachable desktop is not fatal: the server starts and every tool answers `NO_DISPLAY`
//! with the reason.

#[cfg(any(target_os = "linux", windows))]
mod checks;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(any(target_os = "linux", windows)))]
mod unsupported;
#[cfg(windows)]
mod windows;

#[cfg(target_os = "linux")]
use linux as os;
#[cfg(not(any(target_os = "linux", windows)))]
use unsupported as os;
#[cfg(windows)]
use windows as os;

use std::path::PathBuf;
use std::process::ExitCode;

use deskpilot_backend::{Check, Desktop};

use crate::args::DesktopArgs;

/// Holds whatever must live as long as the desktop is used (on Linux, a virtual display);
/// drop it after the last use of the desktop.
pub use os::Session;

/// A private headless desktop and the environment that reaches it.
///
/// # Platform-specific
/// - Linux: Xvfb + D-Bus + the AT-SPI bus + openbox (`deskpilot_x11::VirtualDisplay`);
///   dropping it tears them down.
/// - Elsewhere: no value of this type exists; [`start_virtual`] says why.
pub use os::VirtualDisplay;

/// Starts the virtual display when asked, then connects the platform backend.
///
/// # Platform-specific
/// - Linux: X11 through `$DISPLAY`; `--virtual-display` starts Xvfb + openbox + D-Bus + AT-SPI
///   and exports their environment to this process (and so to every app it launches).
/// - Windows: the interactive desktop; `--virtual-display` is refused.
/// - Other targets: a desktop whose every tool answers `NO_DISPLAY` with the unsupported
///   message.
pub fn connect(args: &DesktopArgs) -> anyhow::Result<(Desktop, Session)> {
    os::connect(args)
}

/// Keeps `engine` on a desktop that answers: when the virtual display `session` holds loses
/// its X server and brings a fresh desktop up, calls fail at once with `DESKTOP_RESTARTING`
/// until it is up, then go to the fresh one — the server is not restarted. Returns at once.
///
/// # Platform-specific
/// Linux with `--virtual-display` only; elsewhere, and on a desktop deskpilot did not start,
/// nothing to do.
pub fn supervise(session: &Session, engine: &std::sync::Arc<deskpilot_engine::Engine>) {
    os::supervise(session, engine)
}

/// `deskpilot doctor`'s checks for this platform, in the order they are printed.
///
/// # Platform-specific
/// - Linux: the X11 backend's checks (display, extensions, window manager, accessibility
///   bus) on the desktop `args` reach, then OCR.
/// - Windows: the backend's checks (monitors, DPI awareness, capture, UI Automation), OCR,
///   the overlay process shown and hidden, and one PowerShell command.
/// - Other targets: one failed check with the unsupported message.
pub fn doctor(args: &DesktopArgs) -> anyhow::Result<Vec<Check>> {
    os::doctor(args)
}

/// Starts a virtual display of `screen` pixels and exports its environment into this
/// process. Call it before the async runtime starts.
///
/// # Platform-specific
/// Linux only; elsewhere an error saying so.
pub fn start_virtual(screen: (u32, u32)) -> anyhow::Result<VirtualDisplay> {
    os::start_virtual(screen, false)
}

/// Asks a child of `deskpilot desktop` to stop.
///
/// # Platform-specific
/// - Linux: `SIGTERM`, so the command can clean up.
/// - Elsewhere: the child is killed.
pub fn stop_child(child: &mut tokio::process::Child) {
    os::stop_child(child)
}

/// `deskpilot __overlay`: the on-screen indicator and Esc listener the server starts for
/// itself; runs until its parent closes stdin.
///
/// # Platform-specific
/// X11's override-redirect overlay on Linux, the layered topmost window on Windows; an error
/// elsewhere.
pub fn overlay() -> anyhow::Result<ExitCode> {
    os::overlay()
}

/// `deskpilot __hold-clipboard`: owns the clipboard with stdin's text until something else
/// is copied.
///
/// # Platform-specific
/// Only X11 needs a holder (its clipboard lives in its owner); an error elsewhere.
pub fn hold_clipboard() -> anyhow::Result<ExitCode> {
    os::hold_clipboard()
}

/// This process is about to exit, and with it the clipboard it owns: hands `text` to a
/// detached `deskpilot __hold-clipboard` that keeps it pasteable until something else is
/// copied (what `xclip` does by forking).
///
/// # Platform-specific
/// Linux only; on Windows the system keeps the clipboard, so nothing is done.
pub fn hand_over_clipboard(text: &str) {
    os::hand_over_clipboard(text)
}

/// `deskpilot __ocr`: the OCR worker the server starts for itself; answers requests until its
/// parent closes stdin.
///
/// # Platform-specific
/// Linux runs Tesseract in this worker; Windows reads text in process, so there it is an
/// error.
pub fn ocr_worker() -> anyhow::Result<ExitCode> {
    os::ocr_worker()
}

/// Resolves when the user or the system asks this process to stop; names the signal.
///
/// # Platform-specific
/// `SIGINT`, `SIGTERM` or `SIGHUP` on Linux; Ctrl-C elsewhere.
pub async fn shutdown_signal() -> &'static str {
    os::shutdown_signal().await
}

/// Tunes the allocator for a long-running server; call it first thing in `main`.
///
/// # Platform-specific
/// With glibc: at most two malloc arenas and a fixed mmap threshold, so idle memory after a
/// few hundred screenshots stays near the working set. Nothing elsewhere.
pub fn tune_allocator() {
    os::tune_allocator()
}

/// The directory the `deskpilot/config.toml` of this user lives in, when none is named.
///
/// # Platform-specific
/// `%APPDATA%` on Windows; `$XDG_CONFIG_HOME`, else `~/.config`, elsewhere.
pub fn config_dir() -> Option<PathBuf> {
    os::config_dir()
}

/// `$XDG_CONFIG_HOME`, else `~/.config`.
#[cfg(not(windows))]
fn xdg_config_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    /// The words that make a `cfg` depend on the target platform.
    const PLATFORM: [&str; 5] = [
        "target_os",
        "target_family",
        "target_vendor",
        "windows",
        "unix",
    ];

    /// The 1-based lines of `text` where a `cfg(…)`, `cfg!(…)` or `cfg_attr(…)` naming a
    /// platform starts; its parentheses may span lines. Line comments are skipped.
    fn platform_cfgs(text: &str) -> Vec<usize> {
        let code: String = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n");
        let mut found = Vec::new();
        for (start, _) in code.match_indices("cfg") {
            let rest = &code[start + 3..];
            let rest = rest
                .strip_prefix('!')
                .or_else(|| rest.strip_prefix("_attr"))
                .unwrap_or(rest);
            let Some(inside) = rest.strip_prefix('(') else {
                continue;
            };
            let mut depth = 1;
            let end = inside
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(inside.len(), |(i, _)| i);
            let mut words = inside[..end].split(|c: char| !(c.is_alphanumeric() || c == '_'));
            if words.any(|w| PLATFORM.contains(&w)) {
                found.push(code[..start].matches('\n').count() + 1);
            }
        }
        found
    }

    fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("read src/") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                sources(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn no_module_outside_platform_names_a_platform() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let platform = src.join("platform");
        let mut files = Vec::new();
        sources(&src, &mut files);
        assert!(
            files.len() > 5,
            "found only {files:?} under {}",
            src.display()
        );
        let mut found = Vec::new();
        for file in files.iter().filter(|f| !f.starts_with(&platform)) {
            let text = std::fs::read_to_string(file).expect("read a source file");
            let lines: Vec<&str> = text.lines().collect();
            for n in platform_cfgs(&text) {
                found.push(format!("{}:{n}: {}", file.display(), lines[n - 1].trim()));
            }
        }
        assert!(
            found.is_empty(),
            "platform choices belong in src/platform/:\n{}",
            found.join("\n")
        );
    }

    #[test]
    fn every_form_of_a_platform_cfg_is_seen() {
        let named = "#[cfg(target_os = \"linux\")]\n\
                     #[cfg(not(any(target_os = \"linux\", windows)))]\n\
                     #[cfg(windows)]\n\
                     #[cfg(unix)]\n\
                     if cfg!(windows) {\n\
                     #[cfg_attr(unix, allow(dead_code))]\n\
                     #[cfg(all(\n    test,\n    target_family = \"unix\"\n))]\n";
        assert_eq!(platform_cfgs(named), [1, 2, 3, 4, 5, 6, 7]);
        let neutral = "#[cfg(test)]\n\
                       // #[cfg(windows)] in a comment\n\
                       use deskpilot_windows::WindowsDesktop;\n\
                       let config = cfg(windows_size);\n";
        assert_eq!(platform_cfgs(neutral), [] as [usize; 0]);
    }
}
