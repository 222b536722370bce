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
//!
//! The pointer mark (`cursor: agent | halo`) is a second window of the same kind, cut to a ring
//! (and, for `agent`, an arrow over the system arrow's place), moved to the pointer on the same
//! 20 ms tick (`GetCursorPos`). The system cursor is never replaced, so no exit path — a crash
//! included — can leave the user with the agent's cursor.

use std::cell::RefCell;
use std::io::{BufRead, Write};
use std::sync::mpsc;
use std::time::Duration;

use windows::Win32::Foundation::{COLORREF, HWND, LPARAM, LRESULT, POINT, RECT, WPARAM};
use windows::Win32::Graphics::Gdi::{
    BeginPaint, CombineRgn, CreateEllipticRgn, CreatePolygonRgn, CreateRectRgn, CreateSolidBrush,
    DT_CENTER, DT_SINGLELINE, DT_VCENTER, DeleteObject, DrawTextW, EndPaint, FillRect, GetDC,
    GetTextExtentPoint32W, InvalidateRect, PAINTSTRUCT, RGN_DIFF, RGN_OR, ReleaseDC, SetBkMode,
    SetTextColor, SetWindowRgn, TRANSPARENT, WINDING,
};
use windows::Win32::System::LibraryLoader::GetModuleHandleW;
use windows::Win32::UI::Input::KeyboardAndMouse::{GetAsyncKeyState, VK_ESCAPE};
use windows::Win32::UI::WindowsAndMessaging::{
    CreateWindowExW, DefWindowProcW, DispatchMessageW, GetCursorPos, GetSystemMetrics,
    HTTRANSPARENT, HWND_TOPMOST, LWA_ALPHA, MA_NOACTIVATE, MSG, PM_REMOVE, PeekMessageW,
    RegisterClassW, SM_CXVIRTUALSCREEN, SM_CYVIRTUALSCREEN, SM_XVIRTUALSCREEN, SM_YVIRTUALSCREEN,
    SW_HIDE, SW_SHOWNOACTIVATE, SWP_NOACTIVATE, SWP_NOMOVE, SWP_NOSIZE, SWP_SHOWWINDOW,
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
/// The pointer mark's window side (`deskpilot_backend::POINTER_MARK`) and its ring radii.
const MARK: i32 = deskpilot_backend::POINTER_MARK as i32;
const RING_OUTER: i32 = 21;
const RING_INNER: i32 = 17;

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
    let (hwnd, mark) = match create_window().and_then(|h| Ok((h, create_mark()?))) {
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
    let mut marking = false;
    let mut was_down = true;
    let mut pointer = POINT { x: i32::MIN, y: 0 };
    loop {
        pump_messages();
        while let Ok(command) = commands.try_recv() {
            let Some(line) = command else { return 0 };
            if let Some(args) = line.strip_prefix("show ") {
                let (mut reply, esc, look) = show(hwnd, args);
                listening = esc;
                marking = shape_mark(mark, look);
                if marking {
                    reply.push_str(&format!(" mark {MARK}"));
                    pointer.x = i32::MIN;
                }
                // A key already down (or pressed before) when listening starts is not a press.
                was_down = escape_down();
                say(&reply);
            } else if line == "hide" {
                listening = false;
                marking = false;
                // SAFETY: `hwnd` and `mark` are this thread's live windows.
                unsafe {
                    let _ = ShowWindow(mark, SW_HIDE);
                    let _ = ShowWindow(hwnd, SW_HIDE);
                }
                say("hidden");
            } else {
                say(&format!("error unknown command {line:?}"));
            }
        }
        if marking {
            follow(mark, &mut pointer);
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

/// Moves the mark onto the pointer when it moved, keeping it topmost.
fn follow(mark: HWND, last: &mut POINT) {
    let mut p = POINT::default();
    // SAFETY: an out-pointer to a local; `mark` is this thread's live window.
    unsafe {
        if GetCursorPos(&mut p).is_err() || (p.x == last.x && p.y == last.y) {
            return;
        }
        *last = p;
        let _ = SetWindowPos(
            mark,
            Some(HWND_TOPMOST),
            p.x - MARK / 2,
            p.y - MARK / 2,
            0,
            0,
            SWP_NOSIZE | SWP_NOACTIVATE | SWP_SHOWWINDOW,
        );
    }
}

/// The pointer mark's window: the overlay's kind, `MARK` square, painted in the frame colour.
fn create_mark() -> windows::core::Result<HWND> {
    // SAFETY: as in `create_window`: a static class name and procedure, one window of it.
    unsafe {
        let instance = GetModuleHandleW(PCWSTR::null())?;
        let class = w!("DeskpilotPointerMark");
        let wc = WNDCLASSW {
            lpfnWndProc: Some(mark_proc),
            hInstance: instance.into(),
            lpszClassName: class,
            ..Default::default()
        };
        RegisterClassW(&wc);
        CreateWindowExW(
            WS_EX_LAYERED | WS_EX_TRANSPARENT | WS_EX_TOPMOST | WS_EX_NOACTIVATE | WS_EX_TOOLWINDOW,
            class,
            w!("deskpilot pointer mark"),
            WS_POPUP,
            0,
            0,
            MARK,
            MARK,
            None,
            None,
            Some(instance.into()),
            None,
        )
    }
}

/// Cuts the mark to its look (`agent`: ring and arrow, `halo`: ring) and shows it, or hides it
/// for `off`; whether it is shown.
fn shape_mark(mark: HWND, look: &str) -> bool {
    let arrow = match look {
        "agent" => true,
        "halo" => false,
        _ => {
            // SAFETY: `mark` is this thread's live window.
            unsafe {
                let _ = ShowWindow(mark, SW_HIDE);
            }
            return false;
        }
    };
    let c = MARK / 2;
    // SAFETY: regions are created and combined; the window takes ownership of the result and
    // the temporary ones are deleted.
    unsafe {
        let ring = CreateEllipticRgn(
            c - RING_OUTER,
            c - RING_OUTER,
            c + RING_OUTER + 1,
            c + RING_OUTER + 1,
        );
        let hole = CreateEllipticRgn(
            c - RING_INNER,
            c - RING_INNER,
            c + RING_INNER + 1,
            c + RING_INNER + 1,
        );
        CombineRgn(Some(ring), Some(ring), Some(hole), RGN_DIFF);
        let _ = DeleteObject(hole.into());
        if arrow {
            let tip = [
                POINT { x: c, y: c },
                POINT { x: c, y: c + 16 },
                POINT {
                    x: c + 4,
                    y: c + 12,
                },
                POINT {
                    x: c + 7,
                    y: c + 17,
                },
                POINT {
                    x: c + 9,
                    y: c + 16,
                },
                POINT {
                    x: c + 6,
                    y: c + 11,
                },
                POINT {
                    x: c + 11,
                    y: c + 11,
                },
            ];
            let shape = CreatePolygonRgn(&tip, WINDING);
            CombineRgn(Some(ring), Some(ring), Some(shape), RGN_OR);
            let _ = DeleteObject(shape.into());
        }
        SetWindowRgn(mark, Some(ring), true);
        let _ = SetLayeredWindowAttributes(mark, COLORREF(0), 255, LWA_ALPHA);
        let _ = ShowWindow(mark, SW_SHOWNOACTIVATE);
        let _ = InvalidateRect(Some(mark), None, true);
    }
    pump_messages();
    true
}

extern "system" fn mark_proc(hwnd: HWND, msg: u32, wparam: WPARAM, lparam: LPARAM) -> LRESULT {
    match msg {
        WM_NCHITTEST => LRESULT(HTTRANSPARENT as isize),
        WM_MOUSEACTIVATE => LRESULT(MA_NOACTIVATE as isize),
        WM_PAINT => {
            let mut ps = PAINTSTRUCT::default();
            // SAFETY: the standard paint sequence; the brush is deleted after use.
            unsafe {
                let dc = BeginPaint(hwnd, &mut ps);
                let frame = CreateSolidBrush(FRAME);
                FillRect(dc, &ps.rcPaint, frame);
                let _ = DeleteObject(frame.into());
                let _ = EndPaint(hwnd, &ps);
            }
            LRESULT(0)
        }
        // SAFETY: default handling of every other message.
        _ => unsafe { DefWindowProcW(hwnd, msg, wparam, lparam) },
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

/// `show <opacity> <esc> <agent|halo|off> <message>`: shapes, shows and raises the window; the
/// reply lists the painted rectangles in virtual-screen coordinates. Also returns the esc flag
/// and the pointer look.
fn show(hwnd: HWND, args: &str) -> (String, bool, &str) {
    let mut parts = args.splitn(4, ' ');
    let opacity: f32 = parts.next().and_then(|o| o.parse().ok()).unwrap_or(0.85);
    let esc = parts.next() == Some("1");
    let look = parts.next().unwrap_or("off");
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
    (format!("shown {}", regions.join(";")), esc, look)
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
