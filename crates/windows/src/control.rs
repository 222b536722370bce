//! Window operations and the clipboard.
//!
//! Focus uses `AttachThreadInput` to the foreground thread so `SetForegroundWindow` is
//! allowed; the engine verifies the result. Frames are placed in DWM extended-frame
//! coordinates (what `list` reports), converting to `GetWindowRect` space by the invisible
//! resize borders. The clipboard holds `CF_UNICODETEXT` only.

use deskpilot_backend::{Error, WindowOp};
use deskpilot_types::{Rect, WindowId};
use windows::Win32::Foundation::{GlobalFree, HANDLE, HGLOBAL, HWND, LPARAM, RECT, WPARAM};
use windows::Win32::Graphics::Dwm::{DWMWA_EXTENDED_FRAME_BOUNDS, DwmGetWindowAttribute};
use windows::Win32::System::DataExchange::{
    CloseClipboard, EmptyClipboard, GetClipboardData, IsClipboardFormatAvailable, OpenClipboard,
    SetClipboardData,
};
use windows::Win32::System::Memory::{GMEM_MOVEABLE, GlobalAlloc, GlobalLock, GlobalUnlock};
use windows::Win32::System::Ole::CF_UNICODETEXT;
use windows::Win32::System::Threading::{AttachThreadInput, GetCurrentThreadId};
use windows::Win32::UI::WindowsAndMessaging::{
    BringWindowToTop, GetForegroundWindow, GetWindowRect, GetWindowThreadProcessId, IsIconic,
    IsWindow, PostMessageW, SW_MAXIMIZE, SW_MINIMIZE, SW_RESTORE, SWP_NOACTIVATE, SWP_NOZORDER,
    SetForegroundWindow, SetWindowPos, ShowWindow, WM_CLOSE,
};

fn hwnd(id: WindowId) -> Result<HWND, Error> {
    let h = HWND(id.0 as usize as *mut _);
    // SAFETY: IsWindow accepts any value and only reports whether it names a window.
    if unsafe { IsWindow(Some(h)) }.as_bool() {
        Ok(h)
    } else {
        Err(Error::WindowNotFound(id))
    }
}

/// Sends `op` to the window; the engine checks the effect.
pub fn window_op(id: WindowId, op: WindowOp) -> Result<(), Error> {
    let h = hwnd(id)?;
    // SAFETY: `h` was a live window a moment ago; every call below fails cleanly (returns
    // FALSE / an error) when it has died since.
    unsafe {
        match op {
            WindowOp::Activate => {
                if IsIconic(h).as_bool() {
                    let _ = ShowWindow(h, SW_RESTORE);
                }
                let foreground = GetForegroundWindow();
                let theirs = GetWindowThreadProcessId(foreground, None);
                let ours = GetCurrentThreadId();
                let attached = theirs != 0
                    && theirs != ours
                    && AttachThreadInput(ours, theirs, true).as_bool();
                let _ = BringWindowToTop(h);
                let _ = SetForegroundWindow(h);
                if attached {
                    let _ = AttachThreadInput(ours, theirs, false);
                }
            }
            WindowOp::Minimize => {
                let _ = ShowWindow(h, SW_MINIMIZE);
            }
            WindowOp::Maximize => {
                let _ = ShowWindow(h, SW_MAXIMIZE);
            }
            WindowOp::Restore => {
                let _ = ShowWindow(h, SW_RESTORE);
            }
            WindowOp::Close => PostMessageW(Some(h), WM_CLOSE, WPARAM(0), LPARAM(0))
                .map_err(|e| Error::os("PostMessage WM_CLOSE", e))?,
            WindowOp::SetFrame(frame) => set_frame(h, frame)?,
        }
    }
    Ok(())
}

fn set_frame(h: HWND, frame: Rect) -> Result<(), Error> {
    let mut outer = RECT::default();
    let mut visible = RECT::default();
    // SAFETY: both out-pointers are live locals of the right size.
    unsafe {
        GetWindowRect(h, &mut outer).map_err(|e| Error::os("GetWindowRect", e))?;
        if DwmGetWindowAttribute(
            h,
            DWMWA_EXTENDED_FRAME_BOUNDS,
            &mut visible as *mut RECT as *mut _,
            size_of::<RECT>() as u32,
        )
        .is_err()
        {
            visible = outer;
        }
    }
    // The invisible resize borders around the visible frame.
    let (left, top) = (visible.left - outer.left, visible.top - outer.top);
    let (right, bottom) = (outer.right - visible.right, outer.bottom - visible.bottom);
    // SAFETY: plain values; fails cleanly for a dead window.
    unsafe {
        SetWindowPos(
            h,
            None,
            frame.x - left,
            frame.y - top,
            frame.width as i32 + left + right,
            frame.height as i32 + top + bottom,
            SWP_NOZORDER | SWP_NOACTIVATE,
        )
    }
    .map_err(|e| Error::os("SetWindowPos", e))
}

/// Closes the clipboard when dropped.
struct Opened;

impl Opened {
    fn open() -> Result<Opened, Error> {
        // The clipboard is a shared lock: another app may hold it for a moment.
        for _ in 0..20 {
            // SAFETY: no owner window; the lock is released by `Drop`.
            if unsafe { OpenClipboard(None) }.is_ok() {
                return Ok(Opened);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        Err(Error::os(
            "OpenClipboard",
            "another application keeps the clipboard open",
        ))
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        // SAFETY: this process opened the clipboard in `open`.
        let _ = unsafe { CloseClipboard() };
    }
}

pub fn read_text() -> Result<Option<String>, Error> {
    let _open = Opened::open()?;
    // SAFETY: the clipboard is open; the handle is owned by the clipboard and only locked
    // for the copy, then unlocked.
    unsafe {
        if IsClipboardFormatAvailable(CF_UNICODETEXT.0 as u32).is_err() {
            return Ok(None);
        }
        let handle = GetClipboardData(CF_UNICODETEXT.0 as u32)
            .map_err(|e| Error::os("GetClipboardData", e))?;
        let global = HGLOBAL(handle.0);
        let ptr = GlobalLock(global) as *const u16;
        if ptr.is_null() {
            return Ok(None);
        }
        let mut len = 0;
        while *ptr.add(len) != 0 {
            len += 1;
        }
        let text = String::from_utf16_lossy(std::slice::from_raw_parts(ptr, len));
        let _ = GlobalUnlock(global);
        Ok(Some(text))
    }
}

pub fn write_text(text: &str) -> Result<(), Error> {
    let wide: Vec<u16> = text.encode_utf16().chain(std::iter::once(0)).collect();
    let _open = Opened::open()?;
    // SAFETY: the clipboard is open; the allocation is sized for `wide`, written while
    // locked, and handed to the clipboard (which then owns it) or freed on failure.
    unsafe {
        EmptyClipboard().map_err(|e| Error::os("EmptyClipboard", e))?;
        let global =
            GlobalAlloc(GMEM_MOVEABLE, wide.len() * 2).map_err(|e| Error::os("GlobalAlloc", e))?;
        let ptr = GlobalLock(global) as *mut u16;
        if ptr.is_null() {
            let _ = GlobalFree(Some(global));
            return Err(Error::os("GlobalLock", "null"));
        }
        std::ptr::copy_nonoverlapping(wide.as_ptr(), ptr, wide.len());
        let _ = GlobalUnlock(global);
        if let Err(e) = SetClipboardData(CF_UNICODETEXT.0 as u32, Some(HANDLE(global.0))) {
            let _ = GlobalFree(Some(global));
            return Err(Error::os("SetClipboardData", e));
        }
    }
    Ok(())
}
