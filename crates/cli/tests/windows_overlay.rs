//! The Windows overlay process (`deskpilot __overlay`) as Windows sees it: a visible topmost,
//! click-through, never-activated tool window with the asked opacity, and — where a compositor
//! blends layered windows (Windows; not Wine without one) — a frame that lets the screen behind
//! it show through. Run by `cargo test -p deskpilot --test windows_overlay` on Windows, and
//! under Wine by `scripts/test`.
#![cfg(windows)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use windows::Win32::Foundation::{COLORREF, HWND, LPARAM, RECT};
use windows::Win32::Graphics::Gdi::{GetDC, GetPixel, ReleaseDC};
use windows::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
use windows::Win32::UI::WindowsAndMessaging::{
    EnumWindows, GWL_EXSTYLE, GetLayeredWindowAttributes, GetWindowLongPtrW, GetWindowRect,
    GetWindowThreadProcessId, IsWindowVisible, LAYERED_WINDOW_ATTRIBUTES_FLAGS, LWA_ALPHA,
    WS_EX_LAYERED, WS_EX_NOACTIVATE, WS_EX_TOOLWINDOW, WS_EX_TOPMOST, WS_EX_TRANSPARENT,
};
use windows::core::{BOOL, s, w};

fn under_wine() -> bool {
    // SAFETY: looks up an export of an always-loaded module.
    unsafe {
        GetModuleHandleW(w!("ntdll.dll"))
            .ok()
            .and_then(|m| GetProcAddress(m, s!("wine_get_version")))
            .is_some()
    }
}

unsafe extern "system" fn collect(hwnd: HWND, data: LPARAM) -> BOOL {
    // SAFETY: `data` is the `&mut Vec<HWND>` passed below, alive for the synchronous call.
    unsafe { (*(data.0 as *mut Vec<HWND>)).push(hwnd) };
    BOOL(1)
}

/// The visible top-level windows of process `pid`.
fn windows_of(pid: u32) -> Vec<HWND> {
    let mut all: Vec<HWND> = Vec::new();
    // SAFETY: the callback only pushes into `all`, which outlives the call.
    let _ = unsafe { EnumWindows(Some(collect), LPARAM(&mut all as *mut _ as isize)) };
    all.into_iter()
        .filter(|h| {
            let mut owner = 0;
            // SAFETY: plain queries on a window handle.
            unsafe {
                GetWindowThreadProcessId(*h, Some(&mut owner));
                owner == pid && IsWindowVisible(*h).as_bool()
            }
        })
        .collect()
}

#[test]
fn the_overlay_is_a_topmost_click_through_window_with_its_opacity() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_deskpilot"))
        .arg("__overlay")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the overlay process");
    let mut stdin = child.stdin.take().unwrap();
    let mut replies = BufReader::new(child.stdout.take().unwrap()).lines();
    writeln!(stdin, "show 0.5 1 agent deskpilot overlay test").unwrap();
    let reply = replies.next().unwrap().unwrap();
    assert!(reply.starts_with("shown"), "{reply}");
    assert!(
        reply.ends_with(" mark 48"),
        "the pointer mark follows the pointer: {reply}"
    );

    // The frame and the pointer mark, both click-through and never focused.
    let windows = windows_of(child.id());
    assert_eq!(windows.len(), 2, "the overlay and the pointer mark");
    let area = |h: HWND| {
        let mut r = RECT::default();
        // SAFETY: an out-pointer to a local.
        let _ = unsafe { GetWindowRect(h, &mut r) };
        (r.right - r.left) * (r.bottom - r.top)
    };
    let hwnd = *windows.iter().max_by_key(|h| area(**h)).unwrap();
    let mark = *windows.iter().min_by_key(|h| area(**h)).unwrap();
    assert_eq!(area(mark), 48 * 48);
    // SAFETY: plain queries on live windows; the out-pointers are locals.
    unsafe {
        for w in [hwnd, mark] {
            let ex = GetWindowLongPtrW(w, GWL_EXSTYLE) as u32;
            for (flag, name) in [
                (WS_EX_LAYERED.0, "layered"),
                (WS_EX_TRANSPARENT.0, "click-through"),
                (WS_EX_TOPMOST.0, "topmost"),
                (WS_EX_NOACTIVATE.0, "never activated"),
                (WS_EX_TOOLWINDOW.0, "not in Alt-Tab"),
            ] {
                assert!(ex & flag != 0, "the overlay is not {name}: {ex:#x}");
            }
        }
        let mut alpha = 0u8;
        let mut flags = LAYERED_WINDOW_ATTRIBUTES_FLAGS(0);
        GetLayeredWindowAttributes(hwnd, None, Some(&mut alpha), Some(&mut flags)).unwrap();
        assert!(flags.0 & LWA_ALPHA.0 != 0);
        assert_eq!(alpha, 127, "opacity 0.5");
        if !under_wine() {
            // Composited: the frame's pixel is a blend, not the opaque frame colour.
            let dc = GetDC(None);
            let pixel = GetPixel(dc, 2, 300);
            ReleaseDC(None, dc);
            assert_ne!(pixel, COLORREF(0x00ff_7b1e), "the frame is drawn opaque");
        }
    }

    // cursor off: no mark.
    writeln!(stdin, "show 0.5 1 off deskpilot overlay test").unwrap();
    let reply = replies.next().unwrap().unwrap();
    assert!(!reply.contains(" mark "), "{reply}");
    assert_eq!(windows_of(child.id()).len(), 1, "the mark is hidden");

    writeln!(stdin, "hide").unwrap();
    assert_eq!(replies.next().unwrap().unwrap(), "hidden");
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}
