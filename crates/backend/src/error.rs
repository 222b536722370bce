//! The one error type backends return.

use deskpilot_types::{Rect, WindowId};

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
    /// A capture rectangle that is not inside the desktop bounds.
    #[error("{rect} is outside the desktop {desktop}")]
    OutsideDesktop { rect: Rect, desktop: Rect },
    /// The platform cannot do this at all here (missing extension, old OS).
    #[error("{what} is not supported here: {reason}")]
    Unsupported { what: &'static str, reason: String },
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
