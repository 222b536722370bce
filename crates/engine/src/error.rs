//! The engine's error type: every failure a tool can report, each with a stable code.

use deskpilot_types::{ErrorCode, Rect, WindowId};

/// Why an engine operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument is malformed or out of range; the message names it.
    #[error("{message}")]
    InvalidArgument { message: String },
    /// The window id names no current window.
    #[error("no window with id {0} (it may have closed)")]
    WindowNotFound(WindowId),
    /// The window is minimized, so nothing of it is on screen.
    #[error("window {id} \"{title}\" is minimized")]
    WindowMinimized { id: WindowId, title: String },
    /// The window is not mapped or lies entirely off screen.
    #[error("window {id} \"{title}\" is not visible on any monitor")]
    WindowNotVisible { id: WindowId, title: String },
    /// A region that does not touch the desktop.
    #[error("region {region} is outside every monitor (the desktop is {desktop})")]
    RegionOutsideScreen { region: Rect, desktop: Rect },
    /// A `screenshot_id` that was never issued or was forgotten.
    #[error("screenshot {0} is unknown or too old")]
    UnknownScreenshot(u64),
    /// The platform backend failed.
    #[error(transparent)]
    Backend(#[from] deskpilot_backend::Error),
    /// A bug: an invariant did not hold.
    #[error("internal error: {message}")]
    Internal { message: String },
}

impl Error {
    /// The stable code agents match on.
    pub fn code(&self) -> ErrorCode {
        use deskpilot_backend::Error as B;
        match self {
            Error::InvalidArgument { .. } => ErrorCode::InvalidArgument,
            Error::WindowNotFound(_) | Error::Backend(B::WindowNotFound(_)) => {
                ErrorCode::WindowNotFound
            }
            Error::WindowMinimized { .. } => ErrorCode::WindowMinimized,
            Error::WindowNotVisible { .. } => ErrorCode::WindowNotVisible,
            Error::RegionOutsideScreen { .. } | Error::Backend(B::OutsideDesktop { .. }) => {
                ErrorCode::RegionOutsideScreen
            }
            Error::UnknownScreenshot(_) => ErrorCode::UnknownScreenshot,
            Error::Backend(B::NoDisplay { .. }) => ErrorCode::NoDisplay,
            Error::Backend(_) => ErrorCode::PlatformError,
            Error::Internal { .. } => ErrorCode::Internal,
        }
    }

    /// One line telling the agent what to do next.
    pub fn hint(&self) -> &'static str {
        self.code().hint()
    }
}
