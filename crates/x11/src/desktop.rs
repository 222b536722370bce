//! `X11Desktop`: one X connection and the state each capability keeps. The capability traits
//! are implemented in their own modules (`monitors`: `Screens`, `windows`, `wm`:
//! `WindowControl`, `capture`, `input`, `keyboard`, `clipboard`, `a11y`), which reach the X
//! server through this connection; this module knows only their state types.

use std::sync::Arc;

use deskpilot_backend::{BackendInfo, Desktop, Error};
use x11rb::connection::Connection;
use x11rb::rust_connection::RustConnection;

use crate::atoms::Atoms;
use crate::capture::Grabber;
use crate::error::x11_err;

/// A connection to an X display and what deskpilot learned about it at connect time.
#[derive(Debug)]
pub struct X11Desktop {
    pub(crate) conn: RustConnection,
    pub(crate) root: u32,
    pub(crate) atoms: Atoms,
    pub(crate) display: String,
    pub(crate) grabber: Grabber,
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
        let pick = crate::screen_pick::X11ScreenPick {
            display: self.display.clone(),
        };
        Desktop::from_backend(info, Arc::new(self)).with_screen_pick(Arc::new(pick))
    }
}
