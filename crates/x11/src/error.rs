//! X11 failures as the engine needs them: x11rb errors mapped at the seam to the backend's
//! typed variants (a broken connection is `ConnectionLost`, an X error reply `Os`).

use deskpilot_backend::Error;

/// An x11rb error that may carry a broken connection.
pub(crate) trait X11Failure: std::error::Error + Send + Sync + 'static {
    /// The connection error inside, when the connection itself failed.
    fn connection(&self) -> Option<&x11rb::errors::ConnectionError>;
}

impl X11Failure for x11rb::errors::ConnectionError {
    fn connection(&self) -> Option<&x11rb::errors::ConnectionError> {
        Some(self)
    }
}

impl X11Failure for x11rb::errors::ReplyError {
    fn connection(&self) -> Option<&x11rb::errors::ConnectionError> {
        match self {
            x11rb::errors::ReplyError::ConnectionError(c) => Some(c),
            _ => None,
        }
    }
}

impl X11Failure for x11rb::errors::ReplyOrIdError {
    fn connection(&self) -> Option<&x11rb::errors::ConnectionError> {
        match self {
            x11rb::errors::ReplyOrIdError::ConnectionError(c) => Some(c),
            _ => None,
        }
    }
}

/// Maps an x11rb error into a backend error that keeps the source: a broken connection is
/// [`Error::ConnectionLost`], an X error reply is [`Error::Os`].
pub(crate) fn x11_err<E: X11Failure>(operation: &'static str) -> impl Fn(E) -> Error {
    move |e| match e.connection() {
        Some(
            x11rb::errors::ConnectionError::IoError(_)
            | x11rb::errors::ConnectionError::UnknownError,
        ) => Error::ConnectionLost {
            link: deskpilot_backend::Link::Display,
            message: format!("{operation}: {e}"),
        },
        _ => Error::os(operation, e),
    }
}
