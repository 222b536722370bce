//! The one error type backends return.

use std::time::Duration;

use deskpilot_types::{Rect, WindowId};

/// A link to another process that a backend depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Link {
    /// The display server or window system session.
    Display,
    /// The accessibility bus (AT-SPI's D-Bus) or provider.
    Accessibility,
}

impl std::fmt::Display for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Link::Display => "display",
            Link::Accessibility => "accessibility bus",
        })
    }
}

/// Why a backend call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The window id names no window (it closed, or never existed).
    #[error("no window with id {0}")]
    WindowNotFound(WindowId),
    /// The display / desktop session cannot be reached (connection refused, DISPLAY unset,
    /// the X server went away).
    #[error("cannot reach the display: {message}")]
    NoDisplay { message: String },
    /// The desktop went away and a fresh one is being brought up in its place (a virtual
    /// display whose X server died); calls work again once it is up.
    #[error("the desktop is being brought up again: {message}")]
    DesktopRestarting { message: String },
    /// A capture rectangle that is not inside the desktop bounds.
    #[error("{rect} is outside the desktop {desktop}")]
    OutsideDesktop { rect: Rect, desktop: Rect },
    /// The platform cannot do this at all here (missing extension, old OS).
    #[error("{what} is not supported here: {reason}")]
    Unsupported { what: &'static str, reason: String },
    /// The element no longer exists in its application: it was destroyed, or its handle is
    /// from a read the backend has since forgotten.
    #[error("the element is gone: {reason}")]
    ElementGone { reason: String },
    /// A connection the backend needs broke after it was made (the X server or the
    /// accessibility bus went away).
    #[error("the connection to the {link} is lost: {message}")]
    ConnectionLost { link: Link, message: String },
    /// The other side did not answer in time (a busy or stopped application).
    #[error("{operation} did not finish within {} ms (the application may be busy or stopped)", after.as_millis())]
    Timeout { operation: String, after: Duration },
    /// No OCR engine can run: its library or the platform API is missing.
    #[error("OCR is not available: {reason}{}", fix.as_ref().map(|f| format!("; to fix: {f}")).unwrap_or_default())]
    OcrUnavailable { reason: String, fix: Option<String> },
    /// Language data an OCR call asked for is not installed.
    #[error("OCR language {language:?} is not installed (installed: {}){}", if installed.is_empty() { "none".to_string() } else { installed.join(", ") }, fix.as_ref().map(|f| format!("; to add it: {f}")).unwrap_or_default())]
    OcrLanguageMissing {
        language: String,
        installed: Vec<String>,
        fix: Option<String>,
    },
    /// An operating-system call failed; the OS error is kept as the source.
    #[error("{operation} failed: {source}")]
    Os {
        operation: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl Error {
    /// Wraps an OS-level error with the operation that produced it.
    pub fn os(
        operation: &'static str,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Error::Os {
            operation,
            source: source.into(),
        }
    }
}
