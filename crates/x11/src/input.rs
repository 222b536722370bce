//! Synthetic pointer input through XTEST (and a pointer warp where XTEST motion cannot cross
//! from one Xinerama head to the next).
//!
//! Every method but a button press ends with a round trip (`GetInputFocus`), so when it
//! returns the server has processed the event and a pointer query reads the new state. A
//! press is covered by the round trip of whatever follows it (its release, a move, a key).

use deskpilot_backend::{Button, Error, Pointer};
use deskpilot_types::Point;
use x11rb::connection::Connection as _;
use x11rb::protocol::xproto::{
    BUTTON_PRESS_EVENT, BUTTON_RELEASE_EVENT, ConnectionExt as _, MOTION_NOTIFY_EVENT,
};
use x11rb::protocol::xtest::ConnectionExt as _;

use crate::desktop::X11Desktop;
use crate::error::x11_err;

/// X11 core button numbers.
fn button_number(b: Button) -> u8 {
    match b {
        Button::Left => 1,
        Button::Middle => 2,
        Button::Right => 3,
    }
}

impl X11Desktop {
    /// Waits until the server has processed everything sent so far.
    pub(crate) fn sync(&self) -> Result<(), Error> {
        self.conn
            .get_input_focus()
            .map_err(x11_err("GetInputFocus"))?
            .reply()
            .map_err(x11_err("GetInputFocus"))?;
        Ok(())
    }

    fn fake(&self, kind: u8, detail: u8, x: i16, y: i16) -> Result<(), Error> {
        self.conn
            .xtest_fake_input(kind, detail, 0, self.root, x, y, 0)
            .map_err(x11_err("XTestFakeInput"))?;
        Ok(())
    }

    fn click_button(&self, number: u8) -> Result<(), Error> {
        self.fake(BUTTON_PRESS_EVENT, number, 0, 0)?;
        self.fake(BUTTON_RELEASE_EVENT, number, 0, 0)
    }
}

impl Pointer for X11Desktop {
    fn position(&self) -> Result<Point, Error> {
        let r = self
            .conn
            .query_pointer(self.root)
            .map_err(x11_err("QueryPointer"))?
            .reply()
            .map_err(x11_err("QueryPointer"))?;
        Ok(Point::new(r.root_x as i32, r.root_y as i32))
    }

    fn move_to(&self, p: Point) -> Result<(), Error> {
        let (Ok(x), Ok(y)) = (i16::try_from(p.x), i16::try_from(p.y)) else {
            return Err(Error::Unsupported {
                what: "pointer move",
                reason: format!("({}, {}) is beyond X11's 16-bit range", p.x, p.y),
            });
        };
        // Detail 0: absolute coordinates on the root window. The pointer query is the round
        // trip that proves the server processed it.
        self.fake(MOTION_NOTIFY_EVENT, 0, x, y)?;
        if self.position()? == p {
            return Ok(());
        }
        // XTEST motion does not cross heads on every server: on Xephyr's Xinerama the pointer
        // stays on its screen (sent to x 1280, it rests at 1279). A warp crosses them.
        self.conn
            .warp_pointer(x11rb::NONE, self.root, 0, 0, 0, 0, x, y)
            .map_err(x11_err("WarpPointer"))?;
        self.sync()
    }

    /// A press is only sent: every later request (the release, a move, a key) is processed
    /// after it, and those end with a round trip. A release waits for the server.
    fn button(&self, button: Button, down: bool) -> Result<(), Error> {
        if down {
            self.fake(BUTTON_PRESS_EVENT, button_number(button), 0, 0)?;
            self.conn.flush().map_err(x11_err("flush"))?;
            return Ok(());
        }
        self.fake(BUTTON_RELEASE_EVENT, button_number(button), 0, 0)?;
        self.sync()
    }

    fn wheel(&self, dx: i32, dy: i32) -> Result<(), Error> {
        // Buttons 4/5 scroll up/down, 6/7 left/right: one press+release per notch.
        let vertical = if dy < 0 { 4 } else { 5 };
        for _ in 0..dy.unsigned_abs() {
            self.click_button(vertical)?;
        }
        let horizontal = if dx < 0 { 6 } else { 7 };
        for _ in 0..dx.unsigned_abs() {
            self.click_button(horizontal)?;
        }
        self.sync()
    }
}
