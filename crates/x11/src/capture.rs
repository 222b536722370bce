//! Screen capture (and, through [`crate::composite`], a covered window's own pixels): MIT-SHM `ShmGetImage` into a reused shared segment, core `GetImage` when
//! shared memory is unavailable (remote display, no extension, attach refused).
//!
//! The segment is attached read-write (a read-only attach makes `ShmGetImage` fail with
//! `BadAccess`) and marked `IPC_RMID` as soon as the server has attached it, so it cannot
//! leak even if deskpilot is killed. Only 32-bit little-endian TrueColor (the layout of
//! every depth-24/32 X server deskpilot targets) is accepted; anything else is refused with
//! a clear message rather than returned with wrong colours.

use std::sync::Mutex;

use deskpilot_backend::{Capture, Error, Frame, FrameMut, PixelFormat, Screens, WindowCapture};
use deskpilot_types::{Rect, WindowInfo};
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::shm::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat, ImageOrder};
use x11rb::rust_connection::RustConnection;

use crate::desktop::X11Desktop;
use crate::error::x11_err;

/// A System V shared-memory segment attached both here and in the X server.
#[derive(Debug)]
struct Segment {
    seg: shm::Seg,
    addr: *mut u8,
    size: usize,
}

// SAFETY: the mapping is owned by this struct alone and only touched while the grabber's
// mutex is held, so moving it between threads is sound.
unsafe impl Send for Segment {}

impl Segment {
    fn create(conn: &RustConnection, size: usize) -> Result<Segment, String> {
        // SAFETY: plain System V calls; the id and address are checked before use.
        let shmid = unsafe { libc::shmget(libc::IPC_PRIVATE, size, libc::IPC_CREAT | 0o600) };
        if shmid < 0 {
            return Err(format!(
                "shmget({size}) failed: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: shmid was just created; a null address lets the kernel choose.
        let addr = unsafe { libc::shmat(shmid, std::ptr::null(), 0) };
        if addr as isize == -1 {
            let err = std::io::Error::last_os_error();
            // SAFETY: removing the segment we created and could not map.
            unsafe { libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut()) };
            return Err(format!("shmat failed: {err}"));
        }
        let attach = || -> Result<shm::Seg, String> {
            let seg = conn.generate_id().map_err(|e| e.to_string())?;
            conn.shm_attach(seg, shmid as u32, false)
                .map_err(|e| e.to_string())?
                .check()
                .map_err(|e| e.to_string())?;
            Ok(seg)
        };
        let result = attach();
        // Once the server holds the segment (or failed to), mark it for removal: it lives
        // exactly as long as the last attachment.
        // SAFETY: shmid is ours; IPC_RMID with a null buffer is the documented form.
        unsafe { libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut()) };
        match result {
            Ok(seg) => Ok(Segment {
                seg,
                addr: addr.cast(),
                size,
            }),
            Err(e) => {
                // SAFETY: addr came from shmat above and is detached once.
                unsafe { libc::shmdt(addr) };
                Err(format!("ShmAttach failed: {e}"))
            }
        }
    }

    fn release(self, conn: &RustConnection) {
        let _ = conn.shm_detach(self.seg).map(|c| c.ignore_error());
        let _ = conn.flush();
        // SAFETY: addr came from shmat and is detached exactly once, here.
        unsafe { libc::shmdt(self.addr.cast()) };
    }
}

#[derive(Debug)]
enum Method {
    /// Shared memory works; the segment is created lazily and grown when needed.
    Shm(Option<Segment>),
    /// Core protocol `GetImage`.
    GetImage { reason: String },
}

/// Grabs rectangles of the root window.
#[derive(Debug)]
pub(crate) struct Grabber {
    method: Mutex<Method>,
    layout_ok: Result<(), String>,
    /// Whether the server has Composite 0.2 or later, asked on the first window capture.
    pub(crate) composite: std::sync::OnceLock<bool>,
}

impl Grabber {
    pub(crate) fn new(conn: &RustConnection, screen_num: usize) -> Grabber {
        let layout_ok = check_layout(conn, screen_num);
        let method = match conn.extension_information(shm::X11_EXTENSION_NAME) {
            Ok(Some(_)) if std::env::var_os("DESKPILOT_NO_SHM").is_none() => Method::Shm(None),
            Ok(Some(_)) => Method::GetImage {
                reason: "DESKPILOT_NO_SHM is set".to_string(),
            },
            _ => Method::GetImage {
                reason: "the X server has no MIT-SHM extension".to_string(),
            },
        };
        Grabber {
            method: Mutex::new(method),
            layout_ok,
            composite: std::sync::OnceLock::new(),
        }
    }

    /// `"mit-shm"`, or `"getimage (<why shared memory is not used>)"`.
    pub(crate) fn method(&self) -> String {
        match &*self.method.lock().unwrap_or_else(|e| e.into_inner()) {
            Method::Shm(_) => "mit-shm".to_string(),
            Method::GetImage { reason } => format!("getimage ({reason})"),
        }
    }

    /// Grabs `rect` of `root` (the root window, or any drawable of the root's depth and
    /// layout such as a window's composite pixmap) into `buffer` (its allocation is reused).
    pub(crate) fn grab(
        &self,
        conn: &RustConnection,
        root: u32,
        rect: Rect,
        buffer: Vec<u8>,
    ) -> Result<Frame, Error> {
        let mut out = None;
        let mut buffer = Some(buffer);
        self.grab_with(conn, root, rect, &mut |frame| {
            let mut data = buffer.take().unwrap_or_default();
            data.clear();
            data.extend_from_slice(frame.data);
            out = Some(Frame {
                rect: frame.rect,
                format: frame.format,
                data,
            });
        })?;
        out.ok_or_else(|| Error::os("capture", "no frame was grabbed"))
    }

    /// Grabs `rect` of the root window and lends the pixels to `f`: the shared-memory segment
    /// itself (no copy; the segment stays locked until `f` returns), or GetImage's reply.
    pub(crate) fn grab_with(
        &self,
        conn: &RustConnection,
        root: u32,
        rect: Rect,
        f: &mut dyn FnMut(&mut FrameMut<'_>),
    ) -> Result<(), Error> {
        if let Err(reason) = &self.layout_ok {
            return Err(Error::Unsupported {
                what: "capture of this X visual",
                reason: reason.clone(),
            });
        }
        let (x, y) = (i16::try_from(rect.x), i16::try_from(rect.y));
        let (w, h) = (u16::try_from(rect.width), u16::try_from(rect.height));
        let (Ok(x), Ok(y), Ok(w), Ok(h)) = (x, y, w, h) else {
            return Err(Error::OutsideDesktop {
                rect,
                desktop: Rect::new(0, 0, u16::MAX as u32, u16::MAX as u32),
            });
        };
        let size = rect.area() as usize * 4;
        let mut method = self.method.lock().unwrap_or_else(|e| e.into_inner());
        if let Method::Shm(slot) = &mut *method {
            if slot.as_ref().is_some_and(|s| s.size < size)
                && let Some(old) = slot.take()
            {
                old.release(conn);
            }
            if slot.is_none() {
                match Segment::create(conn, size) {
                    Ok(seg) => *slot = Some(seg),
                    Err(reason) => {
                        tracing::warn!(%reason, "MIT-SHM unusable, falling back to GetImage");
                        *method = Method::GetImage { reason };
                    }
                }
            }
        }
        match &*method {
            Method::Shm(Some(seg)) => {
                let reply = conn
                    .shm_get_image(
                        root,
                        x,
                        y,
                        w,
                        h,
                        !0,
                        ImageFormat::Z_PIXMAP.into(),
                        seg.seg,
                        0,
                    )
                    .map_err(x11_err("ShmGetImage"))?
                    .reply()
                    .map_err(x11_err("ShmGetImage"))?;
                if (reply.size as usize) < size {
                    return Err(Error::Unsupported {
                        what: "ShmGetImage",
                        reason: format!("the server returned {} bytes for {size}", reply.size),
                    });
                }
                // SAFETY: the segment is at least `size` bytes (checked when chosen), the
                // server finished writing before it sent the reply we just read, and the
                // grabber's lock (held until `f` returns) keeps every other use out.
                let pixels = unsafe { std::slice::from_raw_parts_mut(seg.addr, size) };
                f(&mut Frame {
                    rect,
                    format: PixelFormat::Bgrx,
                    data: pixels,
                });
                // Between captures the segment's pages belong to the X server: drop this
                // process's mappings of them (the contents stay in the segment; the next read
                // maps them back), so an idle server does not hold a full screen of pixels.
                // SAFETY: the range lies inside our own shared mapping, which stays attached;
                // nothing borrows it any more (`f` has returned).
                unsafe { libc::madvise(seg.addr.cast(), size, libc::MADV_DONTNEED) };
                Ok(())
            }
            _ => {
                let reply = conn
                    .get_image(ImageFormat::Z_PIXMAP, root, x, y, w, h, !0)
                    .map_err(x11_err("GetImage"))?
                    .reply()
                    .map_err(x11_err("GetImage"))?;
                let mut data = reply.data;
                data.truncate(size);
                if data.len() < size {
                    return Err(Error::Unsupported {
                        what: "GetImage",
                        reason: format!("the server returned {} bytes for {size}", data.len()),
                    });
                }
                f(&mut Frame {
                    rect,
                    format: PixelFormat::Bgrx,
                    data: data.as_mut_slice(),
                });
                Ok(())
            }
        }
    }
}

/// Checks the root visual is 32-bit little-endian BGRX.
fn check_layout(conn: &RustConnection, screen_num: usize) -> Result<(), String> {
    let setup = conn.setup();
    let screen = &setup.roots[screen_num];
    let depth = screen.root_depth;
    let bpp = setup
        .pixmap_formats
        .iter()
        .find(|f| f.depth == depth)
        .map(|f| f.bits_per_pixel);
    let visual = screen
        .allowed_depths
        .iter()
        .flat_map(|d| d.visuals.iter())
        .find(|v| v.visual_id == screen.root_visual);
    let masks = visual.map(|v| (v.red_mask, v.green_mask, v.blue_mask));
    if bpp == Some(32)
        && setup.image_byte_order == ImageOrder::LSB_FIRST
        && masks == Some((0xff0000, 0xff00, 0xff))
    {
        Ok(())
    } else {
        Err(format!(
            "root depth {depth} with {bpp:?} bits per pixel, byte order {:?}, masks {masks:x?}; deskpilot needs 24/32-bit little-endian TrueColor (start Xvfb with -screen 0 WxHx24)",
            setup.image_byte_order
        ))
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
        f: &mut dyn FnMut(&mut FrameMut<'_>),
    ) -> Result<Vec<u8>, Error> {
        let desktop = self.desktop_bounds()?;
        if rect.is_empty() || rect.intersect(&desktop) != Some(rect) {
            return Err(Error::OutsideDesktop { rect, desktop });
        }
        self.grabber.grab_with(&self.conn, self.root, rect, f)?;
        Ok(buffer)
    }

    /// The window's composite pixmap (see [`crate::composite`]).
    fn capture_window(&self, window: &WindowInfo, rect: Rect) -> Result<WindowCapture, Error> {
        crate::composite::capture(self, window, rect)?.into_capture()
    }

    fn window_capture_method(&self) -> &'static str {
        "composite"
    }
}
