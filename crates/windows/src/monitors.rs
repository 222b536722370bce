//! Monitors through `EnumDisplayMonitors`, and the virtual-screen bounds (`Screens`).

use deskpilot_backend::{Error, Screens};
use deskpilot_types::{Monitor, Rect};
use windows::Win32::Foundation::{LPARAM, RECT};
use windows::Win32::Graphics::Gdi::{
    EnumDisplayMonitors, GetMonitorInfoW, HDC, HMONITOR, MONITORINFO, MONITORINFOEXW,
};
use windows::Win32::UI::WindowsAndMessaging::{
    GetSystemMetrics, MONITORINFOF_PRIMARY, SM_CXVIRTUALSCREEN, SM_CYVIRTUALSCREEN,
    SM_XVIRTUALSCREEN, SM_YVIRTUALSCREEN,
};
use windows::core::BOOL;

use crate::desktop::WindowsDesktop;

impl Screens for WindowsDesktop {
    fn monitors(&self) -> Result<Vec<Monitor>, Error> {
        monitors()
    }

    fn desktop_bounds(&self) -> Result<Rect, Error> {
        Ok(virtual_screen())
    }
}

/// The bounding box of every monitor, in physical pixels.
pub fn virtual_screen() -> Rect {
    // SAFETY: GetSystemMetrics has no preconditions.
    let (x, y, w, h) = unsafe {
        (
            GetSystemMetrics(SM_XVIRTUALSCREEN),
            GetSystemMetrics(SM_YVIRTUALSCREEN),
            GetSystemMetrics(SM_CXVIRTUALSCREEN),
            GetSystemMetrics(SM_CYVIRTUALSCREEN),
        )
    };
    Rect::new(x, y, w.max(0) as u32, h.max(0) as u32)
}

pub(crate) fn rect_of(r: &RECT) -> Rect {
    Rect::new(
        r.left,
        r.top,
        (r.right - r.left).max(0) as u32,
        (r.bottom - r.top).max(0) as u32,
    )
}

unsafe extern "system" fn collect(monitor: HMONITOR, _: HDC, _: *mut RECT, data: LPARAM) -> BOOL {
    // SAFETY: `data` is the `&mut Vec<HMONITOR>` passed by `monitors` below, alive for the
    // whole synchronous enumeration.
    let list = unsafe { &mut *(data.0 as *mut Vec<HMONITOR>) };
    list.push(monitor);
    BOOL(1)
}

/// Every monitor, primary first.
pub fn monitors() -> Result<Vec<Monitor>, Error> {
    let mut handles: Vec<HMONITOR> = Vec::new();
    // SAFETY: the callback only pushes into `handles`, which outlives the call.
    let ok = unsafe {
        EnumDisplayMonitors(
            None,
            None,
            Some(collect),
            LPARAM(&mut handles as *mut _ as isize),
        )
    };
    if !ok.as_bool() {
        return Err(Error::os(
            "EnumDisplayMonitors",
            std::io::Error::last_os_error(),
        ));
    }
    let mut out = Vec::new();
    for handle in handles {
        let mut info = MONITORINFOEXW::default();
        info.monitorInfo.cbSize = size_of::<MONITORINFOEXW>() as u32;
        // SAFETY: `info` is a MONITORINFOEXW with cbSize set, as GetMonitorInfoW requires.
        let ok = unsafe {
            GetMonitorInfoW(handle, &mut info as *mut MONITORINFOEXW as *mut MONITORINFO)
        };
        if !ok.as_bool() {
            continue;
        }
        let name_len = info
            .szDevice
            .iter()
            .position(|c| *c == 0)
            .unwrap_or(info.szDevice.len());
        out.push(Monitor {
            index: 0,
            name: String::from_utf16_lossy(&info.szDevice[..name_len]),
            rect: rect_of(&info.monitorInfo.rcMonitor),
            primary: info.monitorInfo.dwFlags & MONITORINFOF_PRIMARY != 0,
            scale: 1.0,
        });
    }
    if out.is_empty() {
        out.push(Monitor {
            index: 0,
            name: "screen".into(),
            rect: virtual_screen(),
            primary: true,
            scale: 1.0,
        });
    }
    Monitor::order(&mut out);
    Ok(out)
}
