//! Picking on the real screen (X11): an input-only, override-redirect window over the whole
//! root takes the pointer's motion and exactly one click or drag (nothing is grabbed: the
//! window is simply on top), four thin override-redirect windows beneath it draw the outline
//! of what is under the pointer (no compositor or SHAPE needed), and all of them are destroyed
//! before returning, so the pointer is the person's again. A right click cancels. Its own X
//! connection, so a pick never waits behind the backend's requests.

use std::time::{Duration, Instant};

use deskpilot_backend::{Error, Gesture, ScreenPick};
use deskpilot_types::{Point, Rect};
use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::xproto::{
    AtomEnum, ConfigureWindowAux, ConnectionExt, CreateWindowAux, EventMask, PropMode, StackMode,
    WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// The outline's colour (RGB) and thickness.
const OUTLINE_RGB: u32 = 0xe0_21_8a;
const THICK: u16 = 3;
/// The name `xdotool search --name` and tests find the catching window by.
pub const PICK_WINDOW_NAME: &str = "deskpilot pick on screen";
/// A press and release this far apart is a drag.
const DRAG: i32 = 5;

/// Picking on one X display.
#[derive(Debug, Clone)]
pub struct X11ScreenPick {
    pub display: String,
}

fn failed(e: impl std::fmt::Display) -> Error {
    Error::os("picking on screen", e.to_string())
}

impl ScreenPick for X11ScreenPick {
    fn pick_on_screen(
        &self,
        outline: &mut dyn FnMut(Point) -> Option<Rect>,
        timeout: Duration,
    ) -> Result<Option<Gesture>, Error> {
        let (conn, screen_num) = RustConnection::connect(Some(&self.display)).map_err(failed)?;
        let screen = &conn.setup().roots[screen_num];
        let (root, width, height) = (screen.root, screen.width_in_pixels, screen.height_in_pixels);
        // A crosshair from the cursor font.
        let font = conn.generate_id().map_err(failed)?;
        conn.open_font(font, b"cursor").map_err(failed)?;
        let cursor = conn.generate_id().map_err(failed)?;
        conn.create_glyph_cursor(cursor, font, font, 34, 35, 0, 0, 0, 0xffff, 0xffff, 0xffff)
            .map_err(failed)?;
        let mut edges = [0u32; 4];
        for e in &mut edges {
            *e = conn.generate_id().map_err(failed)?;
            conn.create_window(
                0,
                *e,
                root,
                0,
                0,
                1,
                1,
                0,
                WindowClass::INPUT_OUTPUT,
                0,
                &CreateWindowAux::new()
                    .override_redirect(1)
                    .background_pixel(OUTLINE_RGB),
            )
            .map_err(failed)?;
        }
        let catcher = conn.generate_id().map_err(failed)?;
        conn.create_window(
            0,
            catcher,
            root,
            0,
            0,
            width,
            height,
            0,
            WindowClass::INPUT_ONLY,
            0,
            &CreateWindowAux::new()
                .override_redirect(1)
                .cursor(cursor)
                .event_mask(
                    EventMask::BUTTON_PRESS | EventMask::BUTTON_RELEASE | EventMask::POINTER_MOTION,
                ),
        )
        .map_err(failed)?;
        conn.change_property8(
            PropMode::REPLACE,
            catcher,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            PICK_WINDOW_NAME.as_bytes(),
        )
        .map_err(failed)?;
        conn.map_window(catcher).map_err(failed)?;
        conn.configure_window(
            catcher,
            &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
        )
        .map_err(failed)?;
        conn.flush().map_err(failed)?;

        let show = |r: Option<Rect>| -> Result<(), Error> {
            match r {
                None => {
                    for e in edges {
                        conn.unmap_window(e).map_err(failed)?;
                    }
                }
                Some(r) => {
                    let t = i32::from(THICK);
                    let (w, h) = (r.width.max(1), r.height.max(1));
                    let sides = [
                        (r.x - t, r.y - t, w + 2 * THICK as u32, THICK as u32),
                        (r.x - t, r.y + h as i32, w + 2 * THICK as u32, THICK as u32),
                        (r.x - t, r.y, THICK as u32, h),
                        (r.x + w as i32, r.y, THICK as u32, h),
                    ];
                    for (e, (x, y, w, h)) in edges.iter().zip(sides) {
                        conn.configure_window(
                            *e,
                            &ConfigureWindowAux::new()
                                .x(x)
                                .y(y)
                                .width(w)
                                .height(h)
                                .sibling(catcher)
                                .stack_mode(StackMode::BELOW),
                        )
                        .map_err(failed)?;
                        conn.map_window(*e).map_err(failed)?;
                    }
                }
            }
            conn.flush().map_err(failed)
        };

        let deadline = Instant::now() + timeout;
        let mut pressed: Option<Point> = None;
        let mut pending: Option<Point> = None;
        let mut last_look = Instant::now() - Duration::from_secs(1);
        let result = loop {
            if Instant::now() >= deadline {
                break Ok(None);
            }
            let event = match conn.poll_for_event() {
                Ok(e) => e,
                Err(e) => break Err(failed(e)),
            };
            match event {
                Some(Event::MotionNotify(m)) => {
                    let p = Point::new(i32::from(m.root_x), i32::from(m.root_y));
                    match pressed {
                        Some(s) => {
                            let r = Rect::new(
                                s.x.min(p.x),
                                s.y.min(p.y),
                                s.x.abs_diff(p.x),
                                s.y.abs_diff(p.y),
                            );
                            if let Err(e) = show(Some(r)) {
                                break Err(e);
                            }
                        }
                        None => pending = Some(p),
                    }
                }
                Some(Event::ButtonPress(b)) if b.detail == 1 => {
                    pressed = Some(Point::new(i32::from(b.root_x), i32::from(b.root_y)));
                }
                Some(Event::ButtonPress(b)) if b.detail == 3 => break Ok(None),
                Some(Event::ButtonRelease(b)) if b.detail == 1 => {
                    let end = Point::new(i32::from(b.root_x), i32::from(b.root_y));
                    let start = pressed.unwrap_or(end);
                    let dragged = (start.x - end.x).abs() > DRAG || (start.y - end.y).abs() > DRAG;
                    break Ok(Some(if dragged {
                        Gesture::Drag(Rect::new(
                            start.x.min(end.x),
                            start.y.min(end.y),
                            start.x.abs_diff(end.x),
                            start.y.abs_diff(end.y),
                        ))
                    } else {
                        Gesture::Click(end)
                    }));
                }
                Some(_) => {}
                None => {
                    // Idle: outline what is under the latest position, at most every 60 ms
                    // (a hit test reads the accessibility tree).
                    if let Some(p) = pending
                        && pressed.is_none()
                        && last_look.elapsed() >= Duration::from_millis(60)
                    {
                        pending = None;
                        last_look = Instant::now();
                        if let Err(e) = show(outline(p)) {
                            break Err(e);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        };
        for w in edges.iter().chain([&catcher]) {
            let _ = conn.destroy_window(*w);
        }
        let _ = conn.free_cursor(cursor);
        let _ = conn.close_font(font);
        let _ = conn.flush();
        result
    }
}
