//! Window operations (`WindowControl`): activate, minimize, maximize, restore, close, place;
//! and the catalog of apps to launch (`apps`: Start-menu shortcuts and the shell's
//! Applications folder).
//!
//! Focus uses `AttachThreadInput` to the foreground thread so `SetForegroundWindow` is
//! allowed; the engine verifies the result. Frames are placed in DWM extended-frame
//! coordinates (what `list` reports), converting to `GetWindowRect` space by the invisible
//! resize borders.

mod apps;

use deskpilot_backend::{Error, WindowControl, WindowOp};
use deskpilot_types::{Rect, WindowId};
use windows::Win32::Foundation::{HWND, LPARAM, RECT, WPARAM};
use windows::Win32::Graphics::Dwm::{DWMWA_EXTENDED_FRAME_BOUNDS, DwmGetWindowAttribute};
use windows::Win32::System::Threading::{AttachThreadInput, GetCurrentThreadId};
use windows::Win32::UI::WindowsAndMessaging::{
    BringWindowToTop, GetForegroundWindow, GetWindowRect, GetWindowThreadProcessId, IsIconic,
    IsWindow, PostMessageW, SW_MAXIMIZE, SW_MINIMIZE, SW_RESTORE, SWP_NOACTIVATE, SWP_NOZORDER,
    SetForegroundWindow, SetWindowPos, ShowWindow, WM_CLOSE,
};

use crate::desktop::WindowsDesktop;

impl WindowControl for WindowsDesktop {
    fn window_op(&self, id: WindowId, op: WindowOp) -> Result<(), Error> {
        window_op(id, op)
    }

    /// The Start-menu shortcuts of this user and of all users, and the apps the shell's
    /// Applications folder adds (packaged apps, started through `explorer.exe
    /// shell:AppsFolder\<AUMID>`). Never fails: what cannot be read is left out.
    fn installed_apps(&self) -> Result<Vec<deskpilot_backend::apps::InstalledApp>, Error> {
        Ok(apps::installed_apps())
    }
}

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
fn window_op(id: WindowId, op: WindowOp) -> Result<(), Error> {
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
