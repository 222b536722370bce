//! A window whose pixels the test controls: four coloured quadrants and a marker square,
//! painted into a background pixmap so the X server redraws it without an event loop.

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ConnectionExt as _, CreateGCAux, CreateWindowAux, PropMode, Rectangle, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

pub const RED: [u8; 3] = [255, 0, 0];
pub const GREEN: [u8; 3] = [0, 255, 0];
pub const BLUE: [u8; 3] = [0, 0, 255];
pub const YELLOW: [u8; 3] = [255, 255, 0];
pub const MAGENTA: [u8; 3] = [255, 0, 255];

/// A painted top-level window owned by the test process.
pub struct PaintedWindow {
    pub conn: RustConnection,
    pub id: u32,
}

fn pixel(rgb: [u8; 3]) -> u32 {
    (rgb[0] as u32) << 16 | (rgb[1] as u32) << 8 | rgb[2] as u32
}

impl PaintedWindow {
    /// Opens a `width`×`height` window titled `title` on `display`, asking for position `(x, y)`.
    pub fn open(
        display: &str,
        title: &str,
        x: i16,
        y: i16,
        width: u16,
        height: u16,
        marker: (i16, i16, u16),
    ) -> Self {
        let (hw, hh) = (width / 2, height / 2);
        Self::filled(
            display,
            title,
            (x, y, width, height),
            &[
                (RED, 0, 0, hw, hh),
                (GREEN, hw as i16, 0, width - hw, hh),
                (BLUE, 0, hh as i16, hw, height - hh),
                (YELLOW, hw as i16, hh as i16, width - hw, height - hh),
                (MAGENTA, marker.0, marker.1, marker.2, marker.2),
            ],
        )
    }

    /// Opens a `width`×`height` window at `(x, y)` painted all in `rgb`.
    pub fn solid(
        display: &str,
        title: &str,
        (x, y, width, height): (i16, i16, u16, u16),
        rgb: [u8; 3],
    ) -> Self {
        Self::filled(
            display,
            title,
            (x, y, width, height),
            &[(rgb, 0, 0, width, height)],
        )
    }

    /// Opens a window whose background pixmap has `fills` (colour, x, y, width, height) drawn in order.
    fn filled(
        display: &str,
        title: &str,
        (x, y, width, height): (i16, i16, u16, u16),
        fills: &[([u8; 3], i16, i16, u16, u16)],
    ) -> Self {
        let (conn, screen_num) =
            RustConnection::connect(Some(display)).expect("connect to the test display");
        let screen = conn.setup().roots[screen_num].clone();
        let pixmap = conn.generate_id().unwrap();
        conn.create_pixmap(screen.root_depth, pixmap, screen.root, width, height)
            .unwrap();
        let gc = conn.generate_id().unwrap();
        conn.create_gc(gc, pixmap, &CreateGCAux::new()).unwrap();
        for &(rgb, rx, ry, rw, rh) in fills {
            conn.change_gc(
                gc,
                &x11rb::protocol::xproto::ChangeGCAux::new().foreground(pixel(rgb)),
            )
            .unwrap();
            conn.poly_fill_rectangle(
                pixmap,
                gc,
                &[Rectangle {
                    x: rx,
                    y: ry,
                    width: rw,
                    height: rh,
                }],
            )
            .unwrap();
        }
        let id = conn.generate_id().unwrap();
        conn.create_window(
            screen.root_depth,
            id,
            screen.root,
            x,
            y,
            width,
            height,
            0,
            WindowClass::INPUT_OUTPUT,
            screen.root_visual,
            &CreateWindowAux::new().background_pixmap(pixmap),
        )
        .unwrap();
        let atom = |name: &str| {
            conn.intern_atom(false, name.as_bytes())
                .unwrap()
                .reply()
                .unwrap()
                .atom
        };
        let (net_wm_name, utf8, net_wm_pid, normal_hints) = (
            atom("_NET_WM_NAME"),
            atom("UTF8_STRING"),
            atom("_NET_WM_PID"),
            AtomEnum::WM_NORMAL_HINTS,
        );
        conn.change_property8(PropMode::REPLACE, id, net_wm_name, utf8, title.as_bytes())
            .unwrap();
        conn.change_property8(
            PropMode::REPLACE,
            id,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            title.as_bytes(),
        )
        .unwrap();
        conn.change_property8(
            PropMode::REPLACE,
            id,
            AtomEnum::WM_CLASS,
            AtomEnum::STRING,
            b"paint\0DeskpilotPaint\0",
        )
        .unwrap();
        conn.change_property32(
            PropMode::REPLACE,
            id,
            net_wm_pid,
            AtomEnum::CARDINAL,
            &[std::process::id()],
        )
        .unwrap();
        // WM_NORMAL_HINTS with USPosition | PPosition so the window manager keeps (x, y).
        let mut hints = [0u32; 18];
        hints[0] = 1 | 4;
        hints[1] = x as u32;
        hints[2] = y as u32;
        conn.change_property32(
            PropMode::REPLACE,
            id,
            normal_hints,
            AtomEnum::WM_SIZE_HINTS,
            &hints,
        )
        .unwrap();
        conn.map_window(id).unwrap();
        conn.flush().unwrap();
        PaintedWindow { conn, id }
    }

    /// Where the window's client area is on the root window right now, asked of the X server directly.
    pub fn client_origin(&self) -> (i32, i32) {
        let root = self.conn.setup().roots[0].root;
        let t = self
            .conn
            .translate_coordinates(self.id, root, 0, 0)
            .unwrap()
            .reply()
            .unwrap();
        (t.dst_x as i32, t.dst_y as i32)
    }

    /// Raises the window above the others.
    pub fn raise(&self) {
        use x11rb::protocol::xproto::{ConfigureWindowAux, StackMode};
        self.conn
            .configure_window(
                self.id,
                &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
            )
            .unwrap();
        self.conn.flush().unwrap();
    }
}

/// Asks the window manager of `display` to keep window `id` (any client's) above the others
/// (`_NET_WM_STATE_ABOVE`), as an always-on-top palette does: activating another window does
/// not cover it.
pub fn keep_above(display: &str, id: u32) {
    use x11rb::protocol::xproto::{ClientMessageEvent, EventMask};
    let (conn, screen) =
        RustConnection::connect(Some(display)).expect("connect to the test display");
    let atom = |name: &str| {
        conn.intern_atom(false, name.as_bytes())
            .unwrap()
            .reply()
            .unwrap()
            .atom
    };
    let (state, above) = (atom("_NET_WM_STATE"), atom("_NET_WM_STATE_ABOVE"));
    let root = conn.setup().roots[screen].root;
    // data: action 1 = add, the property, no second property, source 1 = application.
    let event = ClientMessageEvent::new(32, id, state, [1, above, 0, 1, 0]);
    conn.send_event(
        false,
        root,
        EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
        event,
    )
    .unwrap();
    conn.flush().unwrap();
}

impl Drop for PaintedWindow {
    fn drop(&mut self) {
        let _ = self.conn.destroy_window(self.id);
        let _ = self.conn.flush();
    }
}

/// A button event the painted window received, in window coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Press {
    pub button: u8,
    pub down: bool,
    pub x: i16,
    pub y: i16,
    /// Keyboard modifiers held (X core mask: shift 1, control 4, mod1/alt 8, mod4/super 64).
    pub mods: u16,
}

impl PaintedWindow {
    /// Asks the X server to deliver this window's button events to the test.
    pub fn listen(&self) {
        use x11rb::protocol::xproto::{ChangeWindowAttributesAux, EventMask};
        let mask = EventMask::BUTTON_PRESS | EventMask::BUTTON_RELEASE;
        self.conn
            .change_window_attributes(self.id, &ChangeWindowAttributesAux::new().event_mask(mask))
            .unwrap();
        self.conn.flush().unwrap();
    }

    /// Button events received so far (non-blocking).
    pub fn presses(&self) -> Vec<Press> {
        use x11rb::protocol::Event;
        let mut out = Vec::new();
        while let Ok(Some(event)) = self.conn.poll_for_event() {
            match event {
                Event::ButtonPress(e) => out.push(Press {
                    button: e.detail,
                    down: true,
                    x: e.event_x,
                    y: e.event_y,
                    mods: u16::from(e.state) & 0xff,
                }),
                Event::ButtonRelease(e) => out.push(Press {
                    button: e.detail,
                    down: false,
                    x: e.event_x,
                    y: e.event_y,
                    mods: u16::from(e.state) & 0xff,
                }),
                _ => {}
            }
        }
        out
    }

    /// Moves the window to (x, y) (a request the window manager carries out).
    pub fn move_to(&self, x: i32, y: i32) {
        use x11rb::protocol::xproto::ConfigureWindowAux;
        self.conn
            .configure_window(self.id, &ConfigureWindowAux::new().x(x).y(y))
            .unwrap();
        self.conn.flush().unwrap();
    }
}
