//! Top-level window listing: `EnumWindows` (z-order, topmost first) with DWM frame bounds.
//!
//! Listed: visible or minimized unowned windows that are not tool windows and not cloaked
//! (hidden UWP frames, windows on other virtual desktops) — what Alt-Tab would show.

use deskpilot_backend::{Error, Windows};
use deskpilot_types::{Rect, WindowId, WindowInfo, WindowState};
use windows::Win32::Foundation::{CloseHandle, HWND, LPARAM, POINT, RECT};
use windows::Win32::Graphics::Dwm::{
    DWMWA_CLOAKED, DWMWA_EXTENDED_FRAME_BOUNDS, DwmGetWindowAttribute,
};
use windows::Win32::Graphics::Gdi::ClientToScreen;
use windows::Win32::System::Threading::{
    OpenProcess, PROCESS_NAME_WIN32, PROCESS_QUERY_LIMITED_INFORMATION, QueryFullProcessImageNameW,
};
use windows::Win32::UI::WindowsAndMessaging::{
    EnumWindows, GW_OWNER, GWL_EXSTYLE, GetClassNameW, GetClientRect, GetForegroundWindow,
    GetWindow, GetWindowLongPtrW, GetWindowRect, GetWindowTextLengthW, GetWindowTextW,
    GetWindowThreadProcessId, IsIconic, IsWindowVisible, IsZoomed, WS_EX_TOOLWINDOW,
};
use windows::core::{BOOL, PWSTR};

use crate::desktop::WindowsDesktop;
use crate::monitors::rect_of;

impl Windows for WindowsDesktop {
    fn list_windows(&self) -> Result<Vec<WindowInfo>, Error> {
        list()
    }

    fn window_at(&self, p: deskpilot_types::Point) -> Result<Option<WindowId>, Error> {
        Ok(at(p))
    }

    /// The frame's invisible resize border runs below the window as well as at its sides.
    fn resize_border_below(&self) -> bool {
        true
    }
}

unsafe extern "system" fn collect(hwnd: HWND, data: LPARAM) -> BOOL {
    // SAFETY: `data` is the `&mut Vec<HWND>` passed by `list`, alive for the synchronous call.
    let list = unsafe { &mut *(data.0 as *mut Vec<HWND>) };
    list.push(hwnd);
    BOOL(1)
}

/// Every Alt-Tab-style window, topmost first.
pub fn list() -> Result<Vec<WindowInfo>, Error> {
    let mut handles: Vec<HWND> = Vec::new();
    // SAFETY: the callback only pushes into `handles`, which outlives the call.
    unsafe { EnumWindows(Some(collect), LPARAM(&mut handles as *mut _ as isize)) }
        .map_err(|e| Error::os("EnumWindows", e))?;
    // SAFETY: no preconditions.
    let foreground = unsafe { GetForegroundWindow() };
    let monitors = crate::monitors::monitors().unwrap_or_default();
    let mut out = Vec::new();
    for hwnd in handles {
        let Some(mut info) = describe(hwnd, foreground) else {
            continue;
        };
        info.z = out.len() as u32;
        info.monitor = monitors
            .iter()
            .filter_map(|m| m.rect.intersect(&info.frame).map(|r| (r.area(), m.index)))
            .max()
            .map(|(_, i)| i);
        out.push(info);
    }
    Ok(out)
}

fn describe(hwnd: HWND, foreground: HWND) -> Option<WindowInfo> {
    // SAFETY: every call below takes a window handle that may have died meanwhile; Win32
    // then fails the call, which is handled, never undefined behaviour.
    unsafe {
        let minimized = IsIconic(hwnd).as_bool();
        if !IsWindowVisible(hwnd).as_bool() {
            return None;
        }
        if GetWindow(hwnd, GW_OWNER).is_ok_and(|o| !o.is_invalid()) {
            return None;
        }
        if GetWindowLongPtrW(hwnd, GWL_EXSTYLE) as u32 & WS_EX_TOOLWINDOW.0 != 0 {
            return None;
        }
        let mut cloaked = 0u32;
        if DwmGetWindowAttribute(hwnd, DWMWA_CLOAKED, &mut cloaked as *mut u32 as *mut _, 4).is_ok()
            && cloaked != 0
        {
            return None;
        }
        let len = GetWindowTextLengthW(hwnd).max(0) as usize;
        let mut title = vec![0u16; len + 1];
        let n = GetWindowTextW(hwnd, &mut title).max(0) as usize;
        let title = String::from_utf16_lossy(&title[..n]);
        let mut class = [0u16; 256];
        let n = GetClassNameW(hwnd, &mut class).max(0) as usize;
        let class = String::from_utf16_lossy(&class[..n]);
        let mut pid = 0u32;
        GetWindowThreadProcessId(hwnd, Some(&mut pid));

        let mut frame = RECT::default();
        let dwm = DwmGetWindowAttribute(
            hwnd,
            DWMWA_EXTENDED_FRAME_BOUNDS,
            &mut frame as *mut RECT as *mut _,
            size_of::<RECT>() as u32,
        );
        if dwm.is_err() {
            GetWindowRect(hwnd, &mut frame).ok()?;
        }
        let mut client = RECT::default();
        let _ = GetClientRect(hwnd, &mut client);
        let mut origin = POINT::default();
        let _ = ClientToScreen(hwnd, &mut origin);
        let client = Rect::new(
            origin.x,
            origin.y,
            client.right.max(0) as u32,
            client.bottom.max(0) as u32,
        );

        Some(WindowInfo {
            id: WindowId(hwnd.0 as usize as u64),
            title,
            class,
            pid: (pid != 0).then_some(pid),
            process: (pid != 0).then(|| process_name(pid)).flatten(),
            frame: rect_of(&frame),
            client,
            state: WindowState {
                minimized,
                maximized: IsZoomed(hwnd).as_bool(),
                active: hwnd == foreground,
                visible: !minimized,
            },
            z: 0,
            monitor: None,
        })
    }
}

/// The top-level window under `p`, as a click there would find it.
pub fn at(p: deskpilot_types::Point) -> Option<WindowId> {
    use windows::Win32::UI::WindowsAndMessaging::{GA_ROOT, GetAncestor, WindowFromPoint};
    // SAFETY: plain queries without pointers.
    unsafe {
        let hit = WindowFromPoint(POINT { x: p.x, y: p.y });
        if hit.is_invalid() {
            return None;
        }
        let root = GetAncestor(hit, GA_ROOT);
        let root = if root.is_invalid() { hit } else { root };
        Some(WindowId(root.0 as usize as u64))
    }
}

/// The executable file name of a process, e.g. `notepad.exe`.
fn process_name(pid: u32) -> Option<String> {
    // SAFETY: the handle is checked and closed once; the buffer length is passed in.
    unsafe {
        let process = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, false, pid).ok()?;
        let mut buf = [0u16; 1024];
        let mut len = buf.len() as u32;
        let ok = QueryFullProcessImageNameW(
            process,
            PROCESS_NAME_WIN32,
            PWSTR(buf.as_mut_ptr()),
            &mut len,
        );
        let _ = CloseHandle(process);
        ok.ok()?;
        let path = String::from_utf16_lossy(&buf[..len as usize]);
        path.rsplit(['\\', '/']).next().map(str::to_string)
    }
}
