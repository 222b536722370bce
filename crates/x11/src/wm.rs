//! Window-manager requests: activate, minimize, maximize, restore, close, move/resize.
//!
//! With an EWMH window manager every operation is a client message to the root window, as a
//! pager would send it (source indication 2), so the window manager applies its own rules
//! (focus stealing, constraints, decorations). Without one, the same effect is approximated
//! with core requests (map, raise, `SetInputFocus`, `ConfigureWindow`, `WM_DELETE_WINDOW`).
//! Nothing here waits for the effect: the engine polls the window list for it.

use deskpilot_backend::{Error, WindowControl, WindowOp};
use deskpilot_types::{Rect, WindowId};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConfigureWindowAux, ConnectionExt as _, EventMask, InputFocus,
    StackMode,
};

use crate::desktop::X11Desktop;
use crate::error::x11_err;

/// EWMH source indication for requests from pagers and similar tools.
const SOURCE_PAGER: u32 = 2;
/// `_NET_WM_STATE` actions.
const STATE_REMOVE: u32 = 0;
const STATE_ADD: u32 = 1;
/// ICCCM `WM_CHANGE_STATE` value for iconify.
const ICONIC_STATE: u32 = 3;

impl X11Desktop {
    fn has_wm(&self) -> bool {
        crate::windows::window_manager_name(self).is_some()
    }

    fn send_root_message(&self, window: u32, kind: u32, data: [u32; 5]) -> Result<(), Error> {
        let event = ClientMessageEvent::new(32, window, kind, data);
        self.conn
            .send_event(
                false,
                self.root,
                EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                event,
            )
            .map_err(x11_err("SendEvent"))?;
        Ok(())
    }

    fn frame_extents(&self, window: u32) -> Result<[u32; 4], Error> {
        let reply = self
            .conn
            .get_property(
                false,
                window,
                self.atoms._NET_FRAME_EXTENTS,
                AtomEnum::CARDINAL,
                0,
                4,
            )
            .map_err(x11_err("GetProperty _NET_FRAME_EXTENTS"))?
            .reply()
            .map_err(x11_err("GetProperty _NET_FRAME_EXTENTS"))?;
        let v: Vec<u32> = reply.value32().map(|v| v.collect()).unwrap_or_default();
        Ok(match v.as_slice() {
            [l, r, t, b] => [*l, *r, *t, *b],
            _ => [0; 4],
        })
    }

    /// Fails with `WindowNotFound` unless `window` is a live window.
    fn check_exists(&self, id: WindowId, window: u32) -> Result<(), Error> {
        match self.conn.get_window_attributes(window) {
            Ok(cookie) => cookie
                .reply()
                .map(|_| ())
                .map_err(|_| Error::WindowNotFound(id)),
            Err(e) => Err(x11_err("GetWindowAttributes")(e)),
        }
    }

    pub(crate) fn apply_window_op(&self, id: WindowId, op: WindowOp) -> Result<(), Error> {
        let window = u32::try_from(id.0).map_err(|_| Error::WindowNotFound(id))?;
        self.check_exists(id, window)?;
        let a = &self.atoms;
        let wm = self.has_wm();
        match op {
            WindowOp::Activate if wm => {
                self.send_root_message(window, a._NET_ACTIVE_WINDOW, [SOURCE_PAGER, 0, 0, 0, 0])?
            }
            WindowOp::Activate => {
                self.conn.map_window(window).map_err(x11_err("MapWindow"))?;
                self.conn
                    .configure_window(
                        window,
                        &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
                    )
                    .map_err(x11_err("ConfigureWindow"))?;
                self.conn
                    .set_input_focus(InputFocus::PARENT, window, x11rb::CURRENT_TIME)
                    .map_err(x11_err("SetInputFocus"))?;
            }
            WindowOp::Minimize => {
                self.send_root_message(window, a.WM_CHANGE_STATE, [ICONIC_STATE, 0, 0, 0, 0])?
            }
            WindowOp::Maximize => self.send_root_message(
                window,
                a._NET_WM_STATE,
                [
                    STATE_ADD,
                    a._NET_WM_STATE_MAXIMIZED_VERT,
                    a._NET_WM_STATE_MAXIMIZED_HORZ,
                    SOURCE_PAGER,
                    0,
                ],
            )?,
            WindowOp::Restore => {
                self.send_root_message(
                    window,
                    a._NET_WM_STATE,
                    [
                        STATE_REMOVE,
                        a._NET_WM_STATE_MAXIMIZED_VERT,
                        a._NET_WM_STATE_MAXIMIZED_HORZ,
                        SOURCE_PAGER,
                        0,
                    ],
                )?;
                self.send_root_message(
                    window,
                    a._NET_WM_STATE,
                    [STATE_REMOVE, a._NET_WM_STATE_FULLSCREEN, 0, SOURCE_PAGER, 0],
                )?;
                // An iconified window comes back by being mapped (ICCCM) or activated (EWMH).
                self.conn.map_window(window).map_err(x11_err("MapWindow"))?;
                if wm {
                    self.send_root_message(
                        window,
                        a._NET_ACTIVE_WINDOW,
                        [SOURCE_PAGER, 0, 0, 0, 0],
                    )?;
                }
            }
            WindowOp::Close if wm => {
                self.send_root_message(window, a._NET_CLOSE_WINDOW, [0, SOURCE_PAGER, 0, 0, 0])?
            }
            WindowOp::Close => {
                let event = ClientMessageEvent::new(
                    32,
                    window,
                    a.WM_PROTOCOLS,
                    [a.WM_DELETE_WINDOW, 0, 0, 0, 0],
                );
                self.conn
                    .send_event(false, window, EventMask::NO_EVENT, event)
                    .map_err(x11_err("SendEvent WM_DELETE_WINDOW"))?;
            }
            WindowOp::SetFrame(frame) => self.set_frame(window, frame, wm)?,
        }
        self.conn.flush().map_err(x11_err("flush"))?;
        Ok(())
    }

    /// Places the outer frame at `frame`: the client gets the frame minus the decorations.
    fn set_frame(&self, window: u32, frame: Rect, wm: bool) -> Result<(), Error> {
        let [left, right, top, bottom] = self.frame_extents(window)?;
        let width = frame.width.saturating_sub(left + right).max(1);
        let height = frame.height.saturating_sub(top + bottom).max(1);
        if wm {
            // Gravity NorthWest (1): x/y are the frame's outer top-left corner.
            let flags = 1 | (0xf << 8) | (SOURCE_PAGER << 12);
            self.send_root_message(
                window,
                self.atoms._NET_MOVERESIZE_WINDOW,
                [flags, frame.x as u32, frame.y as u32, width, height],
            )
        } else {
            self.conn
                .configure_window(
                    window,
                    &ConfigureWindowAux::new()
                        .x(frame.x + left as i32)
                        .y(frame.y + top as i32)
                        .width(width)
                        .height(height),
                )
                .map_err(x11_err("ConfigureWindow"))?;
            Ok(())
        }
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

    /// The XDG desktop entries of this user and system.
    fn installed_apps(&self) -> Result<Vec<deskpilot_backend::apps::InstalledApp>, Error> {
        use deskpilot_backend::apps::{xdg_application_dirs, xdg_apps};
        Ok(xdg_apps(&xdg_application_dirs(|k| std::env::var(k).ok())))
    }
}
