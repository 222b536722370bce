//! The X11 overlay process (`deskpilot __overlay`, see [`run_child`]): a click-through border
//! and label that show a human the machine is being driven, and the global Esc that stops it.
//! The engine side is `deskpilot_backend::ProcessOverlay`, which starts this process and reads
//! its protocol lines.
//!
//! One override-redirect window over the whole root, shaped with SHAPE to a frame inside each
//! monitor (the heads `crate::monitors` reads, as the engine does) plus a label at the top
//! centre of the primary one (no compositor needed, unlike ARGB translucency), with
//! an empty SHAPE input region so every click passes through to what is beneath. It never takes
//! focus. Esc is *observed* through XInput2 raw key events on the root for all master devices —
//! nothing is grabbed, so the focused app still gets its Esc. When the X connection breaks, the
//! X server is gone: it says so (`host-lost`), which the engine side reports as `host-exited`.
//!
//! The pointer mark (`cursor: agent | halo`) is a second override-redirect window, shaped to a
//! ring (and, for `agent`, an arrow in the frame's colour over the system arrow's place), with
//! an empty input region. It follows the pointer on XInput2 raw motion events. The system
//! cursor is never touched, so nothing has to be restored however this process ends.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex, MutexGuard};

use deskpilot_types::Rect;
use x11rb::connection::Connection;
use x11rb::protocol::Event;
use x11rb::protocol::shape::{self, SK, SO};
use x11rb::protocol::xinput::{self, XIEventMask};
use x11rb::protocol::xproto::{
    self, AtomEnum, ChangeWindowAttributesAux, ClipOrdering, ConfigureWindowAux, ConnectionExt,
    CreateGCAux, CreateWindowAux, EventMask, PropMode, StackMode, WindowClass,
};
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// Thickness of the frame around the screen, in pixels.
const BORDER: u16 = 5;
/// Frame and label colours (RGB).
const FRAME_RGB: u32 = 0x1e_7b_ff;
const LABEL_BG_RGB: u32 = 0x10_3f_8c;
const LABEL_FG_RGB: u32 = 0xff_ff_ff;
/// XInput2's "every master device".
const ALL_MASTER_DEVICES: u16 = 1;
/// The Escape keysym.
const XK_ESCAPE: u32 = 0xff1b;
/// The pointer mark's window side (`deskpilot_backend::POINTER_MARK`) and its ring radii.
const MARK: u16 = deskpilot_backend::POINTER_MARK as u16;
const RING_OUTER: i32 = 21;
const RING_INNER: i32 = 17;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `deskpilot __overlay`: runs the indicator until stdin ends. Exit code 0 when told to end,
/// 3 when the X server went away, 2 when it could not start.
pub fn run_child() -> i32 {
    let out = Arc::new(Mutex::new(std::io::stdout()));
    let say = {
        let out = out.clone();
        move |line: &str| {
            let mut o = lock(&out);
            let _ = writeln!(o, "{line}");
            let _ = o.flush();
        }
    };
    let painter = match Painter::new() {
        Ok(p) => Arc::new(p),
        Err(e) => {
            say(&format!("error cannot start: {e}"));
            return 2;
        }
    };
    // Commands from the parent, on their own thread; X events on this one.
    let commands = {
        let painter = painter.clone();
        let say = say.clone();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                let reply = if let Some(rest) = line.strip_prefix("show ") {
                    painter.show(rest)
                } else if line == "hide" {
                    painter.hide()
                } else {
                    Ok(format!("error unknown command {line:?}"))
                };
                match reply {
                    Ok(r) => say(&r),
                    Err(e) => {
                        say(&format!("host-lost {e}"));
                        std::process::exit(3);
                    }
                }
            }
            std::process::exit(0);
        })
    };
    let result = painter.event_loop(&|| say("esc"));
    if let Err(e) = result {
        say(&format!("host-lost {e}"));
        return 3;
    }
    drop(commands);
    0
}

struct Painter {
    conn: RustConnection,
    root: u32,
    screen: (u16, u16),
    /// Monitor-name atoms seen so far (see `crate::monitors::read`).
    monitor_names: Mutex<HashMap<u32, String>>,
    window: u32,
    /// The pointer mark's window.
    mark: u32,
    gc: u32,
    font_ascent: i16,
    font_descent: i16,
    state: Mutex<PaintState>,
    escape_keycodes: Vec<u8>,
    xinput: bool,
}

#[derive(Default)]
struct PaintState {
    label: Vec<u8>,
    label_rect: (i16, i16, u16, u16),
    shown: bool,
    listening: bool,
    /// The pointer mark is mapped and follows the pointer.
    marking: bool,
}

type XResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

impl Painter {
    fn new() -> XResult<Self> {
        let (conn, screen_num) = RustConnection::connect(None)?;
        let screen = &conn.setup().roots[screen_num];
        let root = screen.root;
        let size = (screen.width_in_pixels, screen.height_in_pixels);
        let depth = screen.root_depth;
        let visual = screen.root_visual;
        let window = conn.generate_id()?;
        conn.create_window(
            depth,
            window,
            root,
            0,
            0,
            size.0,
            size.1,
            0,
            WindowClass::INPUT_OUTPUT,
            visual,
            &CreateWindowAux::new()
                .background_pixel(FRAME_RGB)
                .override_redirect(1)
                .event_mask(EventMask::EXPOSURE),
        )?;
        conn.change_property8(
            PropMode::REPLACE,
            window,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            b"deskpilot overlay",
        )?;
        conn.change_property8(
            PropMode::REPLACE,
            window,
            AtomEnum::WM_CLASS,
            AtomEnum::STRING,
            b"deskpilot-overlay\0deskpilot-overlay\0",
        )?;
        // Never focusable: WM_HINTS input = False.
        conn.change_property32(
            PropMode::REPLACE,
            window,
            AtomEnum::WM_HINTS,
            AtomEnum::WM_HINTS,
            &[1, 0, 0, 0, 0, 0, 0, 0, 0],
        )?;
        // Click-through: an empty input region.
        shape::rectangles(
            &conn,
            SO::SET,
            SK::INPUT,
            ClipOrdering::UNSORTED,
            window,
            0,
            0,
            &[],
        )?;
        let mark = conn.generate_id()?;
        conn.create_window(
            depth,
            mark,
            root,
            0,
            0,
            MARK,
            MARK,
            0,
            WindowClass::INPUT_OUTPUT,
            visual,
            &CreateWindowAux::new()
                .background_pixel(FRAME_RGB)
                .override_redirect(1),
        )?;
        conn.change_property8(
            PropMode::REPLACE,
            mark,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            b"deskpilot pointer mark",
        )?;
        conn.change_property32(
            PropMode::REPLACE,
            mark,
            AtomEnum::WM_HINTS,
            AtomEnum::WM_HINTS,
            &[1, 0, 0, 0, 0, 0, 0, 0, 0],
        )?;
        shape::rectangles(
            &conn,
            SO::SET,
            SK::INPUT,
            ClipOrdering::UNSORTED,
            mark,
            0,
            0,
            &[],
        )?;
        // Keep on top of windows mapped later.
        conn.change_window_attributes(
            root,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::SUBSTRUCTURE_NOTIFY),
        )?;
        let font = conn.generate_id()?;
        let mut opened = false;
        for name in [
            "-*-helvetica-bold-r-normal--17-*-*-*-*-*-iso8859-1",
            "-*-dejavu sans-bold-r-normal--16-*-*-*-*-*-iso8859-1",
            "fixed",
        ] {
            if conn.open_font(font, name.as_bytes())?.check().is_ok() {
                opened = true;
                break;
            }
        }
        let gc = conn.generate_id()?;
        let mut aux = CreateGCAux::new()
            .foreground(LABEL_FG_RGB)
            .background(LABEL_BG_RGB);
        if opened {
            aux = aux.font(font);
        }
        conn.create_gc(gc, window, &aux)?;
        let (ascent, descent) = if opened {
            let q = conn.query_font(font)?.reply()?;
            (q.font_ascent, q.font_descent)
        } else {
            (10, 3)
        };
        let escape_keycodes = escape_keycodes(&conn)?;
        let xinput = xinput::xi_query_version(&conn, 2, 0)?
            .reply()
            .map(|r| r.major_version >= 2)
            .unwrap_or(false);
        if !xinput {
            tracing::warn!("XInput2 is missing: the overlay cannot observe Esc");
        }
        conn.flush()?;
        Ok(Painter {
            conn,
            root,
            screen: size,
            monitor_names: Mutex::default(),
            window,
            mark,
            gc,
            font_ascent: ascent,
            font_descent: descent,
            state: Mutex::new(PaintState::default()),
            escape_keycodes,
            xinput,
        })
    }

    /// `show <opacity> <esc> <agent|halo|off> <message>`.
    fn show(&self, args: &str) -> XResult<String> {
        let mut parts = args.splitn(4, ' ');
        let opacity: f32 = parts.next().and_then(|o| o.parse().ok()).unwrap_or(0.85);
        let esc = parts.next() == Some("1");
        let look = parts.next().unwrap_or("off");
        let message = parts.next().unwrap_or_default();
        // The mark follows raw motion events: without XInput2 it would be left behind.
        let marking = self.xinput && matches!(look, "agent" | "halo");
        // The core font is Latin-1: anything else shows as '?'.
        let label: Vec<u8> = message
            .chars()
            .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
            .take(200)
            .collect();
        let conn = &self.conn;
        let (sw, sh) = self.screen;
        let width = if label.is_empty() {
            0
        } else {
            let chars: Vec<xproto::Char2b> = label
                .iter()
                .map(|&b| xproto::Char2b { byte1: 0, byte2: b })
                .collect();
            conn.query_text_extents(self.gc, &chars)?
                .reply()
                .map(|r| r.overall_width.max(0) as u16)
                .unwrap_or(label.len() as u16 * 8)
        };
        let pad = 8u16;
        let lh = (self.font_ascent + self.font_descent).max(1) as u16 + 2 * 4;
        // A frame inside every head, so a human sees it on each monitor (a frame around the
        // root leaves parts of a smaller head's edges in the dead area beside it).
        let heads: Vec<Rect> = crate::monitors::read(conn, self.root, &self.monitor_names)
            .map(|monitors| monitors.into_iter().map(|m| m.rect).collect())
            .unwrap_or_default();
        let label_size = (!label.is_empty()).then_some((width + 2 * pad, lh));
        let (mut rects, label_rect) = frame_shape(&heads, (sw, sh), label_size);
        let (lx, ly, lw, lh) = label_rect.map_or((0, 0, 0, 0), |r| (r.x, r.y, r.width, r.height));
        if let Some(r) = label_rect {
            rects.push(r);
        }
        shape::rectangles(
            conn,
            SO::SET,
            SK::BOUNDING,
            ClipOrdering::UNSORTED,
            self.window,
            0,
            0,
            &rects,
        )?;
        let opacity_atom = conn
            .intern_atom(false, b"_NET_WM_WINDOW_OPACITY")?
            .reply()?
            .atom;
        conn.change_property32(
            PropMode::REPLACE,
            self.window,
            opacity_atom,
            AtomEnum::CARDINAL,
            &[(f64::from(opacity.clamp(0.05, 1.0)) * f64::from(u32::MAX)) as u32],
        )?;
        {
            let mut s = lock(&self.state);
            s.label = label;
            s.label_rect = (lx, ly, lw, lh);
            s.shown = true;
            s.listening = esc && self.xinput;
            s.marking = marking;
        }
        conn.map_window(self.window)?;
        conn.configure_window(
            self.window,
            &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
        )?;
        if marking {
            shape::rectangles(
                conn,
                SO::SET,
                SK::BOUNDING,
                ClipOrdering::UNSORTED,
                self.mark,
                0,
                0,
                &mark_shape(look == "agent"),
            )?;
            self.follow()?;
            conn.map_window(self.mark)?;
        } else {
            conn.unmap_window(self.mark)?;
        }
        self.select_events(esc && self.xinput, marking)?;
        self.paint()?;
        // A round trip: once answered, the server has mapped and painted the window.
        conn.get_input_focus()?.reply()?;
        let regions: Vec<String> = rects
            .iter()
            .map(|r| format!("{},{},{},{}", r.x, r.y, r.width, r.height))
            .collect();
        Ok(if marking {
            format!("shown {} mark {MARK}", regions.join(";"))
        } else {
            format!("shown {}", regions.join(";"))
        })
    }

    fn hide(&self) -> XResult<String> {
        {
            let mut s = lock(&self.state);
            s.shown = false;
            s.listening = false;
            s.marking = false;
        }
        self.select_events(false, false)?;
        self.conn.unmap_window(self.mark)?;
        self.conn.unmap_window(self.window)?;
        self.conn.get_input_focus()?.reply()?;
        Ok("hidden".to_string())
    }

    /// Raw key presses (for Esc) and raw motion (for the pointer mark) from every master device.
    fn select_events(&self, keys: bool, motion: bool) -> XResult<()> {
        if !self.xinput {
            return Ok(());
        }
        let mut mask = XIEventMask::from(0u32);
        if keys {
            mask |= XIEventMask::RAW_KEY_PRESS;
        }
        if motion {
            mask |= XIEventMask::RAW_MOTION;
        }
        xinput::xi_select_events(
            &self.conn,
            self.root,
            &[xinput::EventMask {
                deviceid: ALL_MASTER_DEVICES,
                mask: vec![mask],
            }],
        )?;
        Ok(())
    }

    fn paint(&self) -> XResult<()> {
        let s = lock(&self.state);
        if !s.shown || s.label.is_empty() {
            return Ok(());
        }
        let (x, y, w, h) = s.label_rect;
        let conn = &self.conn;
        conn.change_gc(
            self.gc,
            &xproto::ChangeGCAux::new().foreground(LABEL_BG_RGB),
        )?;
        conn.poly_fill_rectangle(
            self.window,
            self.gc,
            &[xproto::Rectangle {
                x,
                y,
                width: w,
                height: h,
            }],
        )?;
        conn.change_gc(
            self.gc,
            &xproto::ChangeGCAux::new().foreground(LABEL_FG_RGB),
        )?;
        conn.image_text8(
            self.window,
            self.gc,
            x + 8,
            y + 4 + self.font_ascent,
            &s.label,
        )?;
        conn.flush()?;
        Ok(())
    }

    fn event_loop(&self, escape: &dyn Fn()) -> XResult<()> {
        loop {
            let event = self.conn.wait_for_event()?;
            match event {
                Event::Expose(e) if e.window == self.window && e.count == 0 => self.paint()?,
                Event::XinputRawKeyPress(e) => {
                    let key = u8::try_from(e.detail).unwrap_or(0);
                    if self.escape_keycodes.contains(&key) && lock(&self.state).listening {
                        escape();
                    }
                }
                Event::XinputRawMotion(_) if lock(&self.state).marking => self.follow()?,
                Event::MapNotify(e) if e.window != self.window && e.window != self.mark => {
                    self.raise()?
                }
                Event::ConfigureNotify(e) if e.window != self.window && e.window != self.mark => {
                    self.raise()?
                }
                _ => {}
            }
        }
    }

    fn raise(&self) -> XResult<()> {
        let (shown, marking) = {
            let s = lock(&self.state);
            (s.shown, s.marking)
        };
        if shown {
            self.conn.configure_window(
                self.window,
                &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
            )?;
        }
        if marking {
            self.conn.configure_window(
                self.mark,
                &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
            )?;
        }
        self.conn.flush()?;
        Ok(())
    }

    /// Centres the pointer mark on the pointer, above everything.
    fn follow(&self) -> XResult<()> {
        let p = self.conn.query_pointer(self.root)?.reply()?;
        let half = i32::from(MARK / 2);
        self.conn.configure_window(
            self.mark,
            &ConfigureWindowAux::new()
                .x(i32::from(p.root_x) - half)
                .y(i32::from(p.root_y) - half)
                .stack_mode(StackMode::ABOVE),
        )?;
        self.conn.flush()?;
        Ok(())
    }
}

/// The pointer mark's shape in its window (the pointer at the centre): a ring, and for
/// `agent` an arrow whose tip is the pointer, one rectangle per row.
/// The frame's shape in the overlay window (which spans the root, `screen` = its size): a
/// `BORDER`-wide frame just inside each head (the whole window when `heads` is empty), and the
/// label box (`label` = its size) at the top centre of the first head, the primary one. Heads
/// are clipped to the window.
fn frame_shape(
    heads: &[Rect],
    screen: (u16, u16),
    label: Option<(u16, u16)>,
) -> (Vec<xproto::Rectangle>, Option<xproto::Rectangle>) {
    let window = Rect::new(0, 0, u32::from(screen.0), u32::from(screen.1));
    let mut clipped: Vec<Rect> = heads.iter().filter_map(|h| h.intersect(&window)).collect();
    if clipped.is_empty() {
        clipped.push(window);
    }
    let mut rects = Vec::with_capacity(clipped.len() * 4);
    for h in &clipped {
        let (x, y) = (h.x as i16, h.y as i16);
        let (w, ht) = (h.width as u16, h.height as u16);
        let b = BORDER.min(w).min(ht);
        rects.extend([
            xproto::Rectangle {
                x,
                y,
                width: w,
                height: b,
            },
            xproto::Rectangle {
                x,
                y: y + (ht - b) as i16,
                width: w,
                height: b,
            },
            xproto::Rectangle {
                x,
                y,
                width: b,
                height: ht,
            },
            xproto::Rectangle {
                x: x + (w - b) as i16,
                y,
                width: b,
                height: ht,
            },
        ]);
    }
    let label = label.map(|(lw, lh)| {
        let head = clipped[0];
        let (hx, hw) = (head.x as i16, head.width as u16);
        let lw = lw.min(hw);
        xproto::Rectangle {
            x: hx + ((hw - lw) / 2) as i16,
            y: head.y as i16 + BORDER as i16,
            width: lw,
            height: lh,
        }
    });
    (rects, label)
}

fn mark_shape(arrow: bool) -> Vec<xproto::Rectangle> {
    let c = i32::from(MARK / 2);
    let mut rects = Vec::new();
    for dy in -RING_OUTER..=RING_OUTER {
        let outer = f64::from(RING_OUTER * RING_OUTER - dy * dy).sqrt() as i32;
        let inner_sq = RING_INNER * RING_INNER - dy * dy;
        let y = (c + dy) as i16;
        if inner_sq <= 0 {
            rects.push(xproto::Rectangle {
                x: (c - outer) as i16,
                y,
                width: (2 * outer + 1) as u16,
                height: 1,
            });
        } else {
            let inner = f64::from(inner_sq).sqrt() as i32;
            for x0 in [c - outer, c + inner + 1] {
                rects.push(xproto::Rectangle {
                    x: x0 as i16,
                    y,
                    width: (outer - inner).max(1) as u16,
                    height: 1,
                });
            }
        }
    }
    if arrow {
        // A classic arrow, 12 wide and 17 tall, tip at the pointer.
        for row in 0..17i32 {
            let width = if row < 12 {
                row + 1
            } else {
                5 - (row - 12) / 2
            };
            let x0 = if row < 12 { 0 } else { 3 + (row - 12) / 2 };
            rects.push(xproto::Rectangle {
                x: (c + x0) as i16,
                y: (c + row) as i16,
                width: width.max(1) as u16,
                height: 1,
            });
        }
    }
    rects
}

/// Every keycode whose keysyms include Escape.
fn escape_keycodes(conn: &RustConnection) -> XResult<Vec<u8>> {
    let setup = conn.setup();
    let (min, max) = (setup.min_keycode, setup.max_keycode);
    let map = conn.get_keyboard_mapping(min, max - min + 1)?.reply()?;
    let per = usize::from(map.keysyms_per_keycode).max(1);
    Ok(map
        .keysyms
        .chunks(per)
        .enumerate()
        .filter(|(_, syms)| syms.contains(&XK_ESCAPE))
        .map(|(i, _)| min + i as u8)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rectangles as tuples (x11rb's `Rectangle` has no `PartialEq` without its extra traits).
    fn t(rects: &[xproto::Rectangle]) -> Vec<(i16, i16, u16, u16)> {
        rects
            .iter()
            .map(|r| (r.x, r.y, r.width, r.height))
            .collect()
    }

    /// A frame around the root of a 2304x800 two-head desktop left the second head's bottom
    /// edge (y 768) bare: the root's bottom border ran through the dead area below it.
    #[test]
    fn every_head_gets_its_own_frame_and_the_label_sits_on_the_primary() {
        let heads = [Rect::new(0, 0, 1280, 800), Rect::new(1280, 0, 1024, 768)];
        let (rects, label) = frame_shape(&heads, (2304, 800), Some((200, 24)));
        assert_eq!(
            t(&rects),
            vec![
                (0, 0, 1280, 5),
                (0, 795, 1280, 5),
                (0, 0, 5, 800),
                (1275, 0, 5, 800),
                (1280, 0, 1024, 5),
                (1280, 763, 1024, 5),
                (1280, 0, 5, 768),
                (2299, 0, 5, 768),
            ]
        );
        assert_eq!(t(label.as_slice()), [(540, 5, 200, 24)]);
    }

    #[test]
    fn no_heads_frame_the_window_and_heads_are_clipped_to_it() {
        let (rects, label) = frame_shape(&[], (640, 480), None);
        assert_eq!(t(&rects)[1], (0, 475, 640, 5));
        assert!(label.is_none());
        let (rects, label) =
            frame_shape(&[Rect::new(600, 0, 400, 480)], (640, 480), Some((90, 20)));
        assert_eq!(t(&rects)[3], (635, 0, 5, 480));
        assert_eq!(t(label.as_slice()), [(600, 5, 40, 20)]);
    }
}
