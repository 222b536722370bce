//! The Windows overlay process (`deskpilot __overlay`, see [`run_child`]): a click-through
//! border + label over the virtual screen, and the Esc that stops the agent. The engine side is
//! `deskpilot_backend::ProcessOverlay`, which starts this process and reads its protocol lines.
//!
//! One topmost popup window over the virtual screen, `WS_EX_LAYERED | WS_EX_TRANSPARENT`
//! (clicks pass through), `WS_EX_NOACTIVATE | WS_EX_TOOLWINDOW` (never focused, not in Alt-Tab),
//! cut by a window region to a frame plus a label — so only the frame is drawn even where
//! layered windows cannot be translucent (Wine without a compositor). The label is drawn with
//! GDI, so any Unicode `overlayMessage` shows. Esc is polled with `GetAsyncKeyState`
//! (edge-triggered, every 20 ms), never grabbed with a hotkey, so the app in front gets it too.

use std::cell::RefCell;
use std::io::{BufRead, Write};
use std::sync::mpsc;
use std::time::Duration;

use windows::Win32::Foundation::{COLORREF, HWND, LPARAM, LRESULT, RECT, WPARAM};
use windows::Win32::Graphics::Gdi::{
    BeginPaint, CombineRgn, CreateRectRgn, CreateSolidBrush, DT_CENTER, DT_SINGLELINE, DT_VCENTER,
    DeleteObject, DrawTextW, EndPaint, FillRect, GetDC, GetTextExtentPoint32W, InvalidateRect,
    PAINTSTRUCT, RGN_OR, ReleaseDC, SetBkMode, SetTextColor, SetWindowRgn, TRANSPARENT,
};
use windows::Win32::System::LibraryLoader::GetModuleHandleW;
use windows::Win32::UI::Input::KeyboardAndMouse::{GetAsyncKeyState, VK_ESCAPE};
use windows::Win32::UI::WindowsAndMessaging::{
    CreateWindowExW, DefWindowProcW, DispatchMessageW, GetSystemMetrics, HTTRANSPARENT,
    HWND_TOPMOST, LWA_ALPHA, MA_NOACTIVATE, MSG, PM_REMOVE, PeekMessageW, RegisterClassW,
    SM_CXVIRTUALSCREEN, SM_CYVIRTUALSCREEN, SM_XVIRTUALSCREEN, SM_YVIRTUALSCREEN, SW_HIDE,
    SW_SHOWNOACTIVATE, SWP_NOACTIVATE, SWP_NOMOVE, SWP_NOSIZE, SWP_SHOWWINDOW,
    SetLayeredWindowAttributes, SetWindowPos, ShowWindow, TranslateMessage, WM_MOUSEACTIVATE,
    WM_NCHITTEST, WM_PAINT, WNDCLASSW, WS_EX_LAYERED, WS_EX_NOACTIVATE, WS_EX_TOOLWINDOW,
    WS_EX_TOPMOST, WS_EX_TRANSPARENT, WS_POPUP,
};
use windows::core::{PCWSTR, w};

/// Thickness of the frame, in pixels.
const BORDER: i32 = 5;
/// Colours as GDI `COLORREF`s (0x00BBGGRR).
const FRAME: COLORREF = COLORREF(0x00ff_7b1e);
const LABEL_BG: COLORREF = COLORREF(0x008c_3f10);
const LABEL_FG: COLORREF = COLORREF(0x00ff_ffff);

thread_local! {
    /// The label text (UTF-16) and its rectangle in client coordinates.
    static LABEL: RefCell<(Vec<u16>, RECT)> = RefCell::new((Vec::new(), RECT::default()));
}

/// `deskpilot __overlay` on Windows: runs until stdin ends. Exit code 0 when told to end, 2
/// when it could not start.
pub fn run_child() -> i32 {
    let say = |line: &str| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    let hwnd = match create_window() {
        Ok(h) => h,
        Err(e) => {
            say(&format!("error cannot start: {e}"));
            return 2;
        }
    };
    let (tx, commands) = mpsc::channel::<Option<String>>();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(Some(line)).is_err() {
                return;
            }
        }
        let _ = tx.send(None);
    });
    let mut listening = false;
    let mut was_down = true;
    loop {
        pump_messages();
        while let Ok(command) = commands.try_recv() {
            let Some(line) = command else { return 0 };
            if let Some(args) = line.strip_prefix("show ") {
                let (reply, esc) = show(hwnd, args);
                listening = esc;
                // A key already down (or pressed before) when listening starts is not a press.
                was_down = escape_down();
                say(&reply);
            } else if line == "hide" {
                listening = false;
                // SAFETY: `hwnd` is this thread's live window.
                unsafe {
                    let _ = ShowWindow(hwnd, SW_HIDE);
                }
                say("hidden");
            } else {
                say(&format!("error unknown command {line:?}"));
            }
        }
        if listening {
            let down = escape_down();
            if down && !was_down {
                say("esc");
            }
            was_down = down;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether Esc is down now, or was pressed since the last poll (the low bit: a tap shorter
/// than the poll interval still counts).
fn escape_down() -> bool {
    // SAFETY: a plain query of the asynchronous key state.
    let state = unsafe { GetAsyncKeyState(i32::from(VK_ESCAPE.0)) } as u16;
    state & 0x8001 != 0
}

fn pump_messages() {
    let mut msg = MSG::default();
    // SAFETY: standard message loop on this thread's queue with a live `msg`.
    unsafe {
        while PeekMessageW(&mut msg, None, 0, 0, PM_REMOVE).as_bool() {
            let _ = TranslateMessage(&msg);
            DispatchMessageW(&msg);
        }
    }
}

fn virtual_screen() -> RECT {
    // SAFETY: metric queries without pointers.
    unsafe {
        let (x, y) = (
            GetSystemMetrics(SM_XVIRTUALSCREEN),
            GetSystemMetrics(SM_YVIRTUALSCREEN),
        );
        RECT {
            left: x,
            top: y,
            right: x + GetSystemMetrics(SM_CXVIRTUALSCREEN),
            bottom: y + GetSystemMetrics(SM_CYVIRTUALSCREEN),
        }
    }
}

fn create_window() -> windows::core::Result<HWND> {
    let screen = virtual_screen();
    // SAFETY: registering a class whose strings are static and whose procedure is `wndproc`,
    // then creating one window of it; every argument outlives the calls.
    unsafe {
        let instance = GetModuleHandleW(PCWSTR::null())?;
        let class = w!("DeskpilotOverlay");
        let wc = WNDCLASSW {
            lpfnWndProc: Some(wndproc),
            hInstance: instance.into(),
            lpszClassName: class,
            ..Default::default()
        };
        RegisterClassW(&wc);
        let hwnd = CreateWindowExW(
            WS_EX_LAYERED | WS_EX_TRANSPARENT | WS_EX_TOPMOST | WS_EX_NOACTIVATE | WS_EX_TOOLWINDOW,
            class,
            w!("deskpilot overlay"),
            WS_POPUP,
            screen.left,
            screen.top,
            screen.right - screen.left,
            screen.bottom - screen.top,
            None,
            None,
            Some(instance.into()),
            None,
        )?;
        Ok(hwnd)
    }
}

/// `show <opacity> <esc> <message>`: shapes, shows and raises the window; the reply lists the
/// painted rectangles in virtual-screen coordinates.
fn show(hwnd: HWND, args: &str) -> (String, bool) {
    let mut parts = args.splitn(3, ' ');
    let opacity: f32 = parts.next().and_then(|o| o.parse().ok()).unwrap_or(0.85);
    let esc = parts.next() == Some("1");
    let message: Vec<u16> = parts.next().unwrap_or_default().encode_utf16().collect();
    let screen = virtual_screen();
    let (w, h) = (screen.right - screen.left, screen.bottom - screen.top);
    // SAFETY: a screen DC measured and released at once; `message` lives across the call.
    let text = unsafe {
        let dc = GetDC(None);
        let mut size = windows::Win32::Foundation::SIZE::default();
        let _ = GetTextExtentPoint32W(dc, &message, &mut size);
        ReleaseDC(None, dc);
        size
    };
    let (lw, lh) = ((text.cx + 16).min(w), text.cy + 8);
    let label = RECT {
        left: (w - lw) / 2,
        top: BORDER,
        right: (w - lw) / 2 + lw,
        bottom: BORDER + lh,
    };
    let mut rects = vec![
        RECT {
            left: 0,
            top: 0,
            right: w,
            bottom: BORDER,
        },
        RECT {
            left: 0,
            top: h - BORDER,
            right: w,
            bottom: h,
        },
        RECT {
            left: 0,
            top: 0,
            right: BORDER,
            bottom: h,
        },
        RECT {
            left: w - BORDER,
            top: 0,
            right: w,
            bottom: h,
        },
    ];
    if !message.is_empty() {
        rects.push(label);
    }
    LABEL.with(|l| *l.borrow_mut() = (message, label));
    // SAFETY: regions are created, combined and handed to the window (which then owns the
    // result); the temporary ones are deleted; `hwnd` is this thread's live window.
    unsafe {
        let region = CreateRectRgn(0, 0, 0, 0);
        for r in &rects {
            let part = CreateRectRgn(r.left, r.top, r.right, r.bottom);
            CombineRgn(Some(region), Some(region), Some(part), RGN_OR);
            let _ = DeleteObject(part.into());
        }
        SetWindowRgn(hwnd, Some(region), true);
        let alpha = (opacity.clamp(0.05, 1.0) * 255.0) as u8;
        let _ = SetLayeredWindowAttributes(hwnd, COLORREF(0), alpha, LWA_ALPHA);
        let _ = ShowWindow(hwnd, SW_SHOWNOACTIVATE);
        let _ = SetWindowPos(
            hwnd,
            Some(HWND_TOPMOST),
            0,
            0,
            0,
            0,
            SWP_NOMOVE | SWP_NOSIZE | SWP_NOACTIVATE | SWP_SHOWWINDOW,
        );
        let _ = InvalidateRect(Some(hwnd), None, true);
    }
    pump_messages();
    let regions: Vec<String> = rects
        .iter()
        .map(|r| {
            format!(
                "{},{},{},{}",
                screen.left + r.left,
                screen.top + r.top,
                r.right - r.left,
                r.bottom - r.top
            )
        })
        .collect();
    (format!("shown {}", regions.join(";")), esc)
}

extern "system" fn wndproc(hwnd: HWND, msg: u32, wparam: WPARAM, lparam: LPARAM) -> LRESULT {
    match msg {
        WM_NCHITTEST => LRESULT(HTTRANSPARENT as isize),
        WM_MOUSEACTIVATE => LRESULT(MA_NOACTIVATE as isize),
        WM_PAINT => {
            let mut ps = PAINTSTRUCT::default();
            // SAFETY: the standard paint sequence on the window being painted; brushes are
            // deleted after use; the label text lives in this thread's state.
            unsafe {
                let dc = BeginPaint(hwnd, &mut ps);
                let frame = CreateSolidBrush(FRAME);
                FillRect(dc, &ps.rcPaint, frame);
                let _ = DeleteObject(frame.into());
                LABEL.with(|l| {
                    let (text, rect) = &mut *l.borrow_mut();
                    if !text.is_empty() {
                        let bg = CreateSolidBrush(LABEL_BG);
                        FillRect(dc, rect, bg);
                        let _ = DeleteObject(bg.into());
                        SetBkMode(dc, TRANSPARENT);
                        SetTextColor(dc, LABEL_FG);
                        let mut r = *rect;
                        DrawTextW(dc, text, &mut r, DT_CENTER | DT_VCENTER | DT_SINGLELINE);
                    }
                });
                let _ = EndPaint(hwnd, &ps);
            }
            LRESULT(0)
        }
        // SAFETY: default handling of every other message.
        _ => unsafe { DefWindowProcW(hwnd, msg, wparam, lparam) },
    }
}
