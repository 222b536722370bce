//! The clipboard (`Clipboard`): `CF_UNICODETEXT` only, read and written under the shared
//! clipboard lock (retried briefly while another application holds it).

use deskpilot_backend::{Clipboard, Error};
use windows::Win32::Foundation::{GlobalFree, HANDLE, HGLOBAL};
use windows::Win32::System::DataExchange::{
    CloseClipboard, EmptyClipboard, GetClipboardData, IsClipboardFormatAvailable, OpenClipboard,
    SetClipboardData,
};
use windows::Win32::System::Memory::{GMEM_MOVEABLE, GlobalAlloc, GlobalLock, GlobalUnlock};
use windows::Win32::System::Ole::CF_UNICODETEXT;

use crate::desktop::WindowsDesktop;

impl Clipboard for WindowsDesktop {
    fn read_text(&self) -> Result<Option<String>, Error> {
        read_text()
    }

    fn write_text(&self, text: &str) -> Result<(), Error> {
        write_text(text)
    }
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

/// The clipboard's text, if it holds any.
fn read_text() -> Result<Option<String>, Error> {
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

/// Puts `text` on the clipboard, replacing what it held.
fn write_text(text: &str) -> Result<(), Error> {
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
