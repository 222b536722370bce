//! `X11Desktop`: one X connection implementing every capability trait.

use std::sync::Arc;

use deskpilot_backend::{
    BackendInfo, Capture, Desktop, Error, Frame, Screens, WindowControl, WindowOp, Windows,
};
use deskpilot_types::{Monitor, Rect, WindowId, WindowInfo};
use x11rb::connection::Connection;
use x11rb::rust_connection::RustConnection;

use crate::atoms::Atoms;
use crate::capture::Grabber;

/// A connection to an X display and what deskpilot learned about it at connect time.
#[derive(Debug)]
pub struct X11Desktop {
    pub(crate) conn: RustConnection,
    pub(crate) root: u32,
    pub(crate) atoms: Atoms,
    pub(crate) display: String,
    grabber: Grabber,
    /// Spare keycodes temporarily bound to characters, unbound after their settle.
    pub(crate) pending_keymap: Arc<std::sync::Mutex<crate::keyboard::Binding>>,
    pub(crate) clipboard: crate::clipboard::ClipboardHost,
    /// Names of atoms seen so far (monitor names), so they cost a round trip only once.
    pub(crate) atom_names: std::sync::Mutex<std::collections::HashMap<u32, String>>,
    pub(crate) a11y: crate::a11y::A11y,
}

impl X11Desktop {
    /// Connects to `display` (or `$DISPLAY` when `None`).
    pub fn connect(display: Option<&str>) -> Result<Self, Error> {
        let name = display
            .map(str::to_string)
            .or_else(|| std::env::var("DISPLAY").ok())
            .unwrap_or_default();
        if name.is_empty() {
            return Err(Error::NoDisplay {
                message: "DISPLAY is not set".to_string(),
            });
        }
        let (conn, screen_num) =
            RustConnection::connect(Some(&name)).map_err(|e| Error::NoDisplay {
                message: format!("cannot connect to X display {name}: {e}"),
            })?;
        let root = conn.setup().roots[screen_num].root;
        let atoms = Atoms::new(&conn)
            .map_err(x11_err("intern atoms"))?
            .reply()
            .map_err(x11_err("intern atoms"))?;
        let grabber = Grabber::new(&conn, screen_num);
        Ok(X11Desktop {
            conn,
            root,
            atoms,
            display: name,
            grabber,
            pending_keymap: Default::default(),
            clipboard: Default::default(),
            atom_names: Default::default(),
            a11y: Default::default(),
        })
    }

    /// The name of the display this desktop is connected to.
    pub fn display_name(&self) -> &str {
        &self.display
    }

    /// What `status` shows about this backend.
    pub fn info(&self) -> BackendInfo {
        BackendInfo {
            platform: "x11",
            display: self.display.clone(),
            capture_method: self.grabber.method(),
            window_manager: crate::windows::window_manager_name(self),
        }
    }

    /// Wraps this connection as the engine's [`Desktop`].
    pub fn into_desktop(self) -> Desktop {
        let info = self.info();
        Desktop::from_backend(info, Arc::new(self))
    }
}

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

impl Screens for X11Desktop {
    fn monitors(&self) -> Result<Vec<Monitor>, Error> {
        crate::monitors::monitors(self)
    }

    fn desktop_bounds(&self) -> Result<Rect, Error> {
        use x11rb::protocol::xproto::ConnectionExt as _;
        let g = self
            .conn
            .get_geometry(self.root)
            .map_err(x11_err("GetGeometry"))?
            .reply()
            .map_err(x11_err("GetGeometry"))?;
        Ok(Rect::new(0, 0, g.width as u32, g.height as u32))
    }
}

impl Windows for X11Desktop {
    fn list_windows(&self) -> Result<Vec<WindowInfo>, Error> {
        crate::windows::list(self)
    }
}

impl WindowControl for X11Desktop {
    fn window_op(&self, id: WindowId, op: WindowOp) -> Result<(), Error> {
        self.apply_window_op(id, op)
    }

    /// `DISPLAY` of this connection, and the switches that make GTK and Qt apps join the
    /// accessibility bus unless the caller's environment already says otherwise.
    fn launch_env(&self) -> Vec<(String, String)> {
        let mut env = vec![("DISPLAY".to_string(), self.display.clone())];
        for (key, value) in [
            ("GTK_MODULES", "gail:atk-bridge"),
            ("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1"),
        ] {
            if std::env::var_os(key).is_none() {
                env.push((key.to_string(), value.to_string()));
            }
        }
        env
    }
}

impl Capture for X11Desktop {
    fn capture(&self, rect: Rect) -> Result<Frame, Error> {
        self.capture_into(rect, Vec::new())
    }

    fn capture_into(&self, rect: Rect, buffer: Vec<u8>) -> Result<Frame, Error> {
        let desktop = self.desktop_bounds()?;
        if rect.is_empty() || rect.intersect(&desktop) != Some(rect) {
            return Err(Error::OutsideDesktop { rect, desktop });
        }
        self.grabber.grab(&self.conn, self.root, rect, buffer)
    }

    /// Lends the MIT-SHM segment itself: no copy of the frame.
    fn capture_with(
        &self,
        rect: Rect,
        buffer: Vec<u8>,
        f: &mut dyn FnMut(&mut deskpilot_backend::FrameMut<'_>),
    ) -> Result<Vec<u8>, Error> {
        let desktop = self.desktop_bounds()?;
        if rect.is_empty() || rect.intersect(&desktop) != Some(rect) {
            return Err(Error::OutsideDesktop { rect, desktop });
        }
        self.grabber.grab_with(&self.conn, self.root, rect, f)?;
        Ok(buffer)
    }
}
