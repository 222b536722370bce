//! `BitBlt` capture of a virtual-screen rectangle into a top-down 32-bit DIB section (BGRX), and
//! `PrintWindow` (`PW_RENDERFULLCONTENT`) of one window for when others cover it, with a
//! blank result detected so the engine can fall back to the screen.

use deskpilot_backend::{Capture, Error, Frame, PixelFormat, WindowCapture};
use deskpilot_types::{Rect, WindowInfo};
use windows::Win32::Foundation::{HWND, RECT};
use windows::Win32::Graphics::Gdi::{
    BI_RGB, BITMAPINFO, BITMAPINFOHEADER, BitBlt, CAPTUREBLT, CreateCompatibleDC, CreateDIBSection,
    DIB_RGB_COLORS, DeleteDC, DeleteObject, GdiFlush, GetDC, HBITMAP, HDC, HGDIOBJ, ReleaseDC,
    SRCCOPY, SelectObject,
};
use windows::Win32::Storage::Xps::{PRINT_WINDOW_FLAGS, PrintWindow};
use windows::Win32::UI::WindowsAndMessaging::{GetWindowRect, PW_RENDERFULLCONTENT};

use crate::desktop::WindowsDesktop;

impl Capture for WindowsDesktop {
    fn capture(&self, rect: Rect) -> Result<Frame, Error> {
        self.capture_into(rect, Vec::new())
    }

    fn capture_into(&self, rect: Rect, buffer: Vec<u8>) -> Result<Frame, Error> {
        let desktop = crate::monitors::virtual_screen();
        if rect.is_empty() || rect.intersect(&desktop) != Some(rect) {
            return Err(Error::OutsideDesktop { rect, desktop });
        }
        bitblt(rect, buffer)
    }

    fn capture_window(&self, window: &WindowInfo, rect: Rect) -> Result<WindowCapture, Error> {
        print_window(window, rect)
    }
}

/// Releases the screen DC on drop.
struct ScreenDc(HDC);
impl Drop for ScreenDc {
    fn drop(&mut self) {
        // SAFETY: the DC came from GetDC(None) and is released once.
        unsafe { ReleaseDC(None, self.0) };
    }
}

/// Deletes a memory DC on drop.
struct MemDc(HDC);
impl Drop for MemDc {
    fn drop(&mut self) {
        // SAFETY: the DC came from CreateCompatibleDC and is deleted once.
        let _ = unsafe { DeleteDC(self.0) };
    }
}

/// Deletes a bitmap (a DIB section) on drop.
struct Bitmap(HBITMAP);
impl Drop for Bitmap {
    fn drop(&mut self) {
        // SAFETY: the bitmap came from CreateDIBSection and is no longer selected.
        let _ = unsafe { DeleteObject(HGDIOBJ(self.0.0)) };
    }
}

/// Grabs `rect` (virtual-screen physical pixels) from the screen into `data`'s allocation.
pub fn bitblt(rect: Rect, mut data: Vec<u8>) -> Result<Frame, Error> {
    draw(
        rect.width,
        rect.height,
        |mem, screen| {
            // SAFETY: both DCs are live for the call; the bitmap is selected into `mem`.
            unsafe {
                BitBlt(
                    mem,
                    0,
                    0,
                    rect.width as i32,
                    rect.height as i32,
                    Some(screen),
                    rect.x,
                    rect.y,
                    SRCCOPY | CAPTUREBLT,
                )
            }
            .map_err(|e| Error::os("BitBlt", e))
        },
        &mut data,
    )?;
    Ok(Frame {
        rect,
        format: PixelFormat::Bgrx,
        data,
    })
}

/// `rect` (physical pixels, inside the window) as `window` draws itself, whatever covers it.
pub fn print_window(window: &WindowInfo, rect: Rect) -> Result<WindowCapture, Error> {
    let hwnd = HWND(window.id.0 as usize as *mut _);
    let mut outer = RECT::default();
    // SAFETY: a live out-pointer; fails cleanly for a dead window.
    unsafe { GetWindowRect(hwnd, &mut outer) }.map_err(|e| Error::os("GetWindowRect", e))?;
    let (w, h) = (
        (outer.right - outer.left).max(0) as u32,
        (outer.bottom - outer.top).max(0) as u32,
    );
    let whole = Rect::new(outer.left, outer.top, w, h);
    let Some(part) = rect.intersect(&whole).filter(|p| *p == rect) else {
        return Ok(WindowCapture::Unsupported);
    };
    let mut data = Vec::new();
    draw(
        w,
        h,
        |mem, _| {
            // SAFETY: `mem` holds a bitmap the size of the whole window.
            let ok = unsafe { PrintWindow(hwnd, mem, PRINT_WINDOW_FLAGS(PW_RENDERFULLCONTENT)) };
            if ok.as_bool() {
                Ok(())
            } else {
                Err(Error::os("PrintWindow", std::io::Error::last_os_error()))
            }
        },
        &mut data,
    )?;
    // Crop the window's drawing to the asked part.
    let (dx, dy) = ((part.x - whole.x) as usize, (part.y - whole.y) as usize);
    let stride = w as usize * 4;
    let mut out = Vec::with_capacity(part.area() as usize * 4);
    for row in dy..dy + part.height as usize {
        let start = row * stride + dx * 4;
        out.extend_from_slice(&data[start..start + part.width as usize * 4]);
    }
    if crate::blank::is_blank(&out) {
        return Ok(WindowCapture::Blank);
    }
    Ok(WindowCapture::Captured(Frame {
        rect: part,
        format: PixelFormat::Bgrx,
        data: out,
    }))
}

/// Makes a `w`×`h` top-down 32-bit DIB section selected into a memory DC, lets `paint` fill
/// it, and copies its pixels (BGRX) into `out` — no `GetDIBits` conversion, and `out`'s
/// allocation is reused.
fn draw(
    w: u32,
    h: u32,
    paint: impl FnOnce(HDC, HDC) -> Result<(), Error>,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let (wi, hi) = (w as i32, h as i32);
    let len = w as usize * h as usize * 4;
    // SAFETY: each handle is checked and owned by a guard that releases it; `bits` points at
    // the section's `len` bytes while the bitmap lives, and GdiFlush makes GDI finish drawing
    // into it before it is read.
    unsafe {
        let screen = ScreenDc(GetDC(None));
        if screen.0.is_invalid() {
            return Err(Error::os("GetDC", std::io::Error::last_os_error()));
        }
        let mem = MemDc(CreateCompatibleDC(Some(screen.0)));
        if mem.0.is_invalid() {
            return Err(Error::os(
                "CreateCompatibleDC",
                std::io::Error::last_os_error(),
            ));
        }
        let info = BITMAPINFO {
            bmiHeader: BITMAPINFOHEADER {
                biSize: size_of::<BITMAPINFOHEADER>() as u32,
                biWidth: wi,
                biHeight: -hi, // top-down rows
                biPlanes: 1,
                biBitCount: 32,
                biCompression: BI_RGB.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut bits = std::ptr::null_mut();
        let bitmap = Bitmap(
            CreateDIBSection(Some(screen.0), &info, DIB_RGB_COLORS, &mut bits, None, 0)
                .map_err(|e| Error::os("CreateDIBSection", e))?,
        );
        if bits.is_null() {
            return Err(Error::os("CreateDIBSection", "no pixel memory"));
        }
        let previous = SelectObject(mem.0, HGDIOBJ(bitmap.0.0));
        let painted = paint(mem.0, screen.0);
        SelectObject(mem.0, previous);
        painted?;
        let _ = GdiFlush();
        out.clear();
        out.extend_from_slice(std::slice::from_raw_parts(bits.cast::<u8>(), len));
        Ok(())
    }
}
