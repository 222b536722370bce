//! A covered window's own pixels through the Composite extension: the window's top-level
//! (the window manager's frame, or the client itself when nothing reparents it) is redirected
//! `Automatic` (the X server keeps painting the screen itself, so nothing visible changes and
//! no compositor is needed), its backing pixmap named with `NameWindowPixmap` and read with the
//! screen grabber (MIT-SHM or `GetImage`), then freed and unredirected on every path.
//!
//! A window that was not redirected before gets a fresh pixmap that starts as a copy of the
//! screen under it (what covers it included) and is repainted by the server (backgrounds) and
//! the application (on `Expose`): the read is repeated (every 10 ms, for at most 500 ms) until
//! it differs from the screen, is not one flat colour, and a read 15 ms later agrees, so a
//! window caught half-way through its repaint (the background painted by the server, the
//! application's drawing not yet) is not taken for its content. A window that never repaints, is unmapped or
//! minimized, or that the server refuses to redirect, is an [`Outcome`] the caller turns into
//! the engine's screen fallback with its reason.

use std::time::{Duration, Instant};

use deskpilot_backend::{Error, Frame, WindowCapture};
use deskpilot_types::{Rect, WindowInfo};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::composite::{self, ConnectionExt as _, Redirect};
use x11rb::protocol::xproto::{ConnectionExt as _, MapState};

use crate::desktop::X11Desktop;
use crate::error::x11_err;

/// How long a freshly redirected window gets to repaint before the screen is used instead.
pub(crate) const REPAINT_DEADLINE: Duration = Duration::from_millis(500);
/// Between two reads of a window that has not repainted yet.
const POLL: Duration = Duration::from_millis(10);
/// Between the first read that shows the window's content and the one that confirms it.
const SETTLE: Duration = Duration::from_millis(15);

/// What one composite capture got, before it becomes a [`WindowCapture`] or an error.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The window's own pixels; `waited` is how long it took the window to repaint.
    Captured { frame: Frame, waited: Duration },
    /// The X server has no Composite extension (0.2 or later).
    NoExtension,
    /// The window is unmapped or minimized: it has no pixmap to read.
    NotViewable,
    /// The asked rectangle is not inside the window's top-level.
    OutsideWindow { rect: Rect, window: Rect },
    /// The server refused the redirect or the pixmap (`BadMatch`, `BadAccess`).
    Refused {
        request: &'static str,
        error: String,
    },
    /// Still one flat colour at the deadline.
    Blank,
    /// Still identical to the screen (what covers it) at the deadline: the app did not repaint.
    NoRepaint { waited: Duration },
}

impl Outcome {
    /// The engine's view: pixels, blank, unsupported, or an error whose text is the reason
    /// the screen is shown instead.
    pub(crate) fn into_capture(self) -> Result<WindowCapture, Error> {
        let refuse = |reason: String| {
            Err(Error::Unsupported {
                what: "composite capture of this window",
                reason,
            })
        };
        match self {
            Outcome::Captured { frame, waited } => {
                tracing::debug!(waited_ms = waited.as_millis() as u64, "composite capture");
                Ok(WindowCapture::Captured(frame))
            }
            Outcome::NoExtension => Ok(WindowCapture::Unsupported),
            Outcome::Blank => Ok(WindowCapture::Blank),
            Outcome::NotViewable => refuse("the window is unmapped or minimized".to_string()),
            Outcome::OutsideWindow { rect, window } => {
                refuse(format!("{rect} is not inside the window's frame {window}"))
            }
            Outcome::Refused { request, error } => {
                refuse(format!("the X server refused {request}: {error}"))
            }
            Outcome::NoRepaint { waited } => refuse(format!(
                "the window did not repaint within {} ms of being redirected",
                waited.as_millis()
            )),
        }
    }
}

/// `rect` (root coordinates) in the coordinates of a pixmap covering `outer` (root
/// coordinates of the window's outer edge, border included), or `None` when it sticks out.
pub(crate) fn pixmap_rect(rect: Rect, outer: Rect) -> Option<Rect> {
    if rect.is_empty() || rect.intersect(&outer) != Some(rect) {
        return None;
    }
    Some(Rect::new(
        rect.x - outer.x,
        rect.y - outer.y,
        rect.width,
        rect.height,
    ))
}

/// True when every pixel (4 bytes, the 4th ignored) has the colour of the first.
pub(crate) fn is_flat(data: &[u8]) -> bool {
    let mut px = data.chunks_exact(4);
    let Some(first) = px.next() else {
        return true;
    };
    px.all(|p| p[..3] == first[..3])
}

/// True when two BGRX frames show the same colours (the padding byte ignored).
pub(crate) fn same_pixels(a: &[u8], b: &[u8]) -> bool {
    a == b
        || a.len() == b.len()
            && a.chunks_exact(4)
                .zip(b.chunks_exact(4))
                .all(|(p, q)| p[..3] == q[..3])
}

/// What to do after one read of the window's pixmap.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// This read is the window's content.
    Take,
    /// The earlier read that showed content (this one went back to the screen's pixels).
    TakeShown,
    /// Give up: one flat colour.
    Blank,
    /// Give up: still the screen's pixels.
    NoRepaint,
    /// Read again after this pause.
    Again(Duration),
}

/// The repaint wait as a decision: `flat` (one colour), `content` (not flat and not the
/// screen's pixels), `agrees` (content identical to the previous content read), `shown`
/// (some earlier read showed content), `waited` since the capture started.
pub(crate) fn next(flat: bool, content: bool, agrees: bool, shown: bool, waited: Duration) -> Next {
    let late = waited >= REPAINT_DEADLINE;
    match () {
        _ if content && (agrees || late) => Next::Take,
        _ if late && shown => Next::TakeShown,
        _ if late && flat => Next::Blank,
        _ if late => Next::NoRepaint,
        _ if content => Next::Again(SETTLE),
        _ => Next::Again(POLL),
    }
}

/// Frees the named pixmap and drops this client's redirect, whatever happened in between.
struct Redirected<'a> {
    conn: &'a x11rb::rust_connection::RustConnection,
    window: u32,
    pixmap: Option<u32>,
}

impl Drop for Redirected<'_> {
    fn drop(&mut self) {
        if let Some(p) = self.pixmap {
            let _ = self.conn.free_pixmap(p).map(|c| c.ignore_error());
        }
        let _ = self
            .conn
            .composite_unredirect_window(self.window, Redirect::AUTOMATIC)
            .map(|c| c.ignore_error());
        let _ = self.conn.flush();
    }
}

/// The child of the root that holds `window` (its frame), or `window` itself.
fn top_level(d: &X11Desktop, window: u32) -> Result<u32, Error> {
    let mut w = window;
    for _ in 0..32 {
        let tree = d
            .conn
            .query_tree(w)
            .map_err(x11_err("QueryTree"))?
            .reply()
            .map_err(x11_err("QueryTree"))?;
        if tree.parent == d.root || tree.parent == x11rb::NONE {
            return Ok(w);
        }
        w = tree.parent;
    }
    Ok(w)
}

/// Whether the server has Composite 0.2 (`NameWindowPixmap`); asked once per desktop.
fn has_composite(d: &X11Desktop) -> bool {
    *d.grabber.composite.get_or_init(|| {
        if !matches!(
            d.conn.extension_information(composite::X11_EXTENSION_NAME),
            Ok(Some(_))
        ) {
            return false;
        }
        d.conn
            .composite_query_version(0, 4)
            .ok()
            .and_then(|c| c.reply().ok())
            .is_some_and(|v| v.major_version > 0 || v.minor_version >= 2)
    })
}

/// Captures `rect` (root coordinates) of `window` as it draws itself.
pub(crate) fn capture(d: &X11Desktop, window: &WindowInfo, rect: Rect) -> Result<Outcome, Error> {
    if !has_composite(d) {
        return Ok(Outcome::NoExtension);
    }
    let started = Instant::now();
    let Ok(client) = u32::try_from(window.id.0) else {
        return Ok(Outcome::NotViewable);
    };
    let top = top_level(d, client)?;
    let c = &d.conn;
    let attrs = c
        .get_window_attributes(top)
        .map_err(x11_err("GetWindowAttributes"))?;
    let geometry = c.get_geometry(top).map_err(x11_err("GetGeometry"))?;
    let attrs = attrs.reply().map_err(x11_err("GetWindowAttributes"))?;
    let geometry = geometry.reply().map_err(x11_err("GetGeometry"))?;
    if attrs.map_state != MapState::VIEWABLE {
        return Ok(Outcome::NotViewable);
    }
    let border = 2 * geometry.border_width as u32;
    let outer = Rect::new(
        geometry.x as i32,
        geometry.y as i32,
        geometry.width as u32 + border,
        geometry.height as u32 + border,
    );
    let Some(local) = pixmap_rect(rect, outer) else {
        return Ok(Outcome::OutsideWindow {
            rect,
            window: outer,
        });
    };
    if let Err(e) = c
        .composite_redirect_window(top, Redirect::AUTOMATIC)
        .map_err(x11_err("CompositeRedirectWindow"))?
        .check()
    {
        return Ok(Outcome::Refused {
            request: "CompositeRedirectWindow",
            error: e.to_string(),
        });
    }
    let mut guard = Redirected {
        conn: c,
        window: top,
        pixmap: None,
    };
    let pixmap = c.generate_id().map_err(x11_err("generate id"))?;
    if let Err(e) = c
        .composite_name_window_pixmap(top, pixmap)
        .map_err(x11_err("CompositeNameWindowPixmap"))?
        .check()
    {
        return Ok(Outcome::Refused {
            request: "CompositeNameWindowPixmap",
            error: e.to_string(),
        });
    }
    guard.pixmap = Some(pixmap);
    // What the screen shows there now: a fresh pixmap starts as a copy of it.
    let screen = d.grabber.grab(c, d.root, rect, Vec::new())?;
    // The last read that showed content, to tell a finished repaint (two reads `SETTLE`
    // apart agree) from one caught half-way (the server painted the background, the
    // application has not drawn on it yet).
    let mut shown: Option<Frame> = None;
    let mut buffer = Vec::new();
    loop {
        let mut frame = d.grabber.grab(c, pixmap, local, buffer)?;
        frame.rect = rect;
        let flat = is_flat(&frame.data);
        let content = !flat && !same_pixels(&frame.data, &screen.data);
        let waited = started.elapsed();
        let agrees = content
            && shown
                .as_ref()
                .is_some_and(|s| same_pixels(&s.data, &frame.data));
        let pause = match next(flat, content, agrees, shown.is_some(), waited) {
            Next::Take => return Ok(Outcome::Captured { frame, waited }),
            Next::TakeShown => {
                let frame = shown.take().unwrap_or(frame);
                return Ok(Outcome::Captured { frame, waited });
            }
            Next::Blank => return Ok(Outcome::Blank),
            Next::NoRepaint => return Ok(Outcome::NoRepaint { waited }),
            Next::Again(pause) => pause,
        };
        buffer = match (content, shown.take()) {
            (true, old) => {
                shown = Some(frame);
                old.map(|f| f.data).unwrap_or_default()
            }
            (false, old) => {
                shown = old;
                frame.data
            }
        };
        std::thread::sleep(pause);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixmap_rect_is_relative_to_the_outer_edge_and_must_fit() {
        let outer = Rect::new(100, 50, 400, 300);
        assert_eq!(
            pixmap_rect(Rect::new(100, 50, 400, 300), outer),
            Some(Rect::new(0, 0, 400, 300))
        );
        assert_eq!(
            pixmap_rect(Rect::new(150, 60, 10, 20), outer),
            Some(Rect::new(50, 10, 10, 20))
        );
        assert_eq!(pixmap_rect(Rect::new(90, 50, 20, 20), outer), None);
        assert_eq!(pixmap_rect(Rect::new(100, 50, 401, 300), outer), None);
        assert_eq!(pixmap_rect(Rect::new(100, 50, 0, 0), outer), None);
    }

    #[test]
    fn flat_and_same_ignore_the_padding_byte() {
        assert!(is_flat(&[]));
        assert!(is_flat(&[1, 2, 3, 0, 1, 2, 3, 255]));
        assert!(!is_flat(&[1, 2, 3, 0, 1, 2, 4, 0]));
        assert!(same_pixels(&[1, 2, 3, 0], &[1, 2, 3, 9]));
        assert!(!same_pixels(&[1, 2, 3, 0], &[1, 2, 4, 0]));
        assert!(!same_pixels(&[1, 2, 3, 0], &[1, 2, 3, 0, 1, 2, 3, 0]));
    }

    #[test]
    fn the_repaint_wait_confirms_content_and_gives_up_at_the_deadline() {
        let early = Duration::from_millis(3);
        let late = REPAINT_DEADLINE;
        // Content seen once is confirmed by a second read before it is taken.
        assert_eq!(next(false, true, false, false, early), Next::Again(SETTLE));
        assert_eq!(next(false, true, true, true, early), Next::Take);
        // Content that changed between reads: read again.
        assert_eq!(next(false, true, false, true, early), Next::Again(SETTLE));
        // Still the screen's pixels or flat: poll.
        assert_eq!(next(false, false, false, false, early), Next::Again(POLL));
        assert_eq!(next(true, false, false, false, early), Next::Again(POLL));
        // At the deadline: the latest content, else the earlier content, else why not.
        assert_eq!(next(false, true, false, true, late), Next::Take);
        assert_eq!(next(false, false, false, true, late), Next::TakeShown);
        assert_eq!(next(true, false, false, false, late), Next::Blank);
        assert_eq!(next(false, false, false, false, late), Next::NoRepaint);
    }

    #[test]
    fn outcomes_map_to_the_engine_fallbacks() {
        assert!(matches!(
            Outcome::NoExtension.into_capture(),
            Ok(WindowCapture::Unsupported)
        ));
        assert!(matches!(
            Outcome::Blank.into_capture(),
            Ok(WindowCapture::Blank)
        ));
        let reason = |o: Outcome| match o.into_capture() {
            Err(Error::Unsupported { reason, .. }) => reason,
            other => panic!("{other:?}"),
        };
        assert!(reason(Outcome::NotViewable).contains("minimized"));
        assert!(
            reason(Outcome::NoRepaint {
                waited: Duration::from_millis(500)
            })
            .contains("did not repaint within 500 ms")
        );
        assert!(
            reason(Outcome::Refused {
                request: "CompositeNameWindowPixmap",
                error: "BadMatch".to_string()
            })
            .contains("refused CompositeNameWindowPixmap: BadMatch")
        );
        let frame = Frame {
            rect: Rect::new(0, 0, 1, 1),
            format: deskpilot_backend::PixelFormat::Bgrx,
            data: vec![0; 4],
        };
        assert!(matches!(
            Outcome::Captured {
                frame,
                waited: Duration::ZERO
            }
            .into_capture(),
            Ok(WindowCapture::Captured(_))
        ));
    }
}
