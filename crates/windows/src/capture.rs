//! `BitBlt` capture of a virtual-screen rectangle into a top-down 32-bit DIB (BGRX).

use deskpilot_backend::{Error, Frame, PixelFormat};
use deskpilot_types::Rect;
use windows::Win32::Graphics::Gdi::{
    BI_RGB, BITMAPINFO, BITMAPINFOHEADER, BitBlt, CAPTUREBLT, CreateCompatibleBitmap,
    CreateCompatibleDC, DIB_RGB_COLORS, DeleteDC, DeleteObject, GetDC, GetDIBits, HBITMAP, HDC,
    HGDIOBJ, ReleaseDC, SRCCOPY, SelectObject,
};

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

/// Deletes a bitmap on drop.
struct Bitmap(HBITMAP);
impl Drop for Bitmap {
    fn drop(&mut self) {
        // SAFETY: the bitmap came from CreateCompatibleBitmap and is no longer selected.
        let _ = unsafe { DeleteObject(HGDIOBJ(self.0.0)) };
    }
}

/// Grabs `rect` (virtual-screen physical pixels) from the screen.
pub fn bitblt(rect: Rect) -> Result<Frame, Error> {
    let (w, h) = (rect.width as i32, rect.height as i32);
    // SAFETY: each handle is checked and owned by a guard that releases it.
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
        let bitmap = Bitmap(CreateCompatibleBitmap(screen.0, w, h));
        if bitmap.0.is_invalid() {
            return Err(Error::os(
                "CreateCompatibleBitmap",
                std::io::Error::last_os_error(),
            ));
        }
        let previous = SelectObject(mem.0, HGDIOBJ(bitmap.0.0));
        let blit = BitBlt(
            mem.0,
            0,
            0,
            w,
            h,
            Some(screen.0),
            rect.x,
            rect.y,
            SRCCOPY | CAPTUREBLT,
        );
        SelectObject(mem.0, previous);
        blit.map_err(|e| Error::os("BitBlt", e))?;
        let mut info = BITMAPINFO {
            bmiHeader: BITMAPINFOHEADER {
                biSize: size_of::<BITMAPINFOHEADER>() as u32,
                biWidth: w,
                biHeight: -h, // top-down rows
                biPlanes: 1,
                biBitCount: 32,
                biCompression: BI_RGB.0,
                ..Default::default()
            },
            ..Default::default()
        };
        let mut data = vec![0u8; rect.area() as usize * 4];
        let rows = GetDIBits(
            mem.0,
            bitmap.0,
            0,
            h as u32,
            Some(data.as_mut_ptr().cast()),
            &mut info,
            DIB_RGB_COLORS,
        );
        if rows != h {
            return Err(Error::os("GetDIBits", format!("copied {rows} of {h} rows")));
        }
        Ok(Frame {
            rect,
            format: PixelFormat::Bgrx,
            data,
        })
    }
}
