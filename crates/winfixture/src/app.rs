//! The fixture's window, controls and event log.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::sync::Mutex;

use windows::Win32::Foundation::{HWND, LPARAM, LRESULT, WPARAM};
use windows::Win32::Graphics::Gdi::{COLOR_WINDOW, DEFAULT_GUI_FONT, GetStockObject, HBRUSH};
use windows::Win32::System::LibraryLoader::GetModuleHandleW;
use windows::Win32::UI::Input::KeyboardAndMouse::{ReleaseCapture, SetCapture, SetFocus};
use windows::Win32::UI::WindowsAndMessaging::*;
use windows::core::{PCWSTR, w};

const ID_OK: i32 = 101;
const ID_CJK: i32 = 102;
const ID_CHECK: i32 = 103;
const ID_EDIT: i32 = 104;
const ID_LIST: i32 = 105;
const ID_COMBO: i32 = 106;
const ID_STATUS: i32 = 107;
const ID_HANG: i32 = 108;
const ID_NEW: i32 = 201;
const ID_EXIT: i32 = 202;
const ID_ABOUT: i32 = 203;

/// How long the "Hang" button blocks the window's thread.
const HANG_SECONDS: u64 = 5;

/// The title tests look for.
pub const TITLE: &str = "deskpilot Win32 fixture";

static LOG: Mutex<Option<File>> = Mutex::new(None);

fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// Appends one event to the log and shows it on the status line.
fn report(window: HWND, event: &str) {
    if let Some(f) = LOG.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        let _ = writeln!(f, "{event}");
        let _ = f.flush();
    }
    // SAFETY: the status control belongs to `window`; the text outlives the call.
    unsafe {
        if let Ok(status) = GetDlgItem(Some(window), ID_STATUS) {
            let text = wide(event);
            let _ = SetWindowTextW(status, PCWSTR(text.as_ptr()));
        }
    }
}

fn text_of(control: HWND) -> String {
    // SAFETY: the buffer is sized from the control's own length.
    unsafe {
        let len = GetWindowTextLengthW(control).max(0) as usize;
        let mut buf = vec![0u16; len + 1];
        let n = GetWindowTextW(control, &mut buf).max(0) as usize;
        String::from_utf16_lossy(&buf[..n])
    }
}

/// The text of item `index` of a list box (`LB_GETTEXT`) or combo box (`CB_GETLBTEXT`).
fn item_text(control: HWND, index: usize, len_msg: u32, text_msg: u32) -> String {
    // SAFETY: the buffer is sized from the item's own length.
    unsafe {
        let len = SendMessageW(control, len_msg, Some(WPARAM(index)), None).0;
        if len < 0 {
            return String::new();
        }
        let mut buf = vec![0u16; len as usize + 1];
        SendMessageW(
            control,
            text_msg,
            Some(WPARAM(index)),
            Some(LPARAM(buf.as_mut_ptr() as isize)),
        );
        String::from_utf16_lossy(&buf[..len as usize])
    }
}

fn command(window: HWND, id: i32, code: u32, control: HWND) {
    // SAFETY: every handle is a child of `window` or the window itself.
    unsafe {
        match (id, code) {
            (ID_OK | ID_CJK, BN_CLICKED) => report(window, &format!("click {}", text_of(control))),
            (ID_HANG, BN_CLICKED) => {
                // A stuck app: nothing of this window answers for a while.
                report(window, "hang start");
                std::thread::sleep(std::time::Duration::from_secs(HANG_SECONDS));
                report(window, "hang end");
            }
            (ID_CHECK, BN_CLICKED) => {
                let on = SendMessageW(control, BM_GETCHECK, None, None).0 == 1;
                let state = if on { "on" } else { "off" };
                report(window, &format!("check {} {state}", text_of(control)));
            }
            (ID_EDIT, EN_CHANGE) => report(window, &format!("edit {}", text_of(control))),
            (ID_LIST, LBN_SELCHANGE) => {
                let i = SendMessageW(control, LB_GETCURSEL, None, None).0;
                if i >= 0 {
                    let item = item_text(control, i as usize, LB_GETTEXTLEN, LB_GETTEXT);
                    report(window, &format!("list {item}"));
                }
            }
            (ID_COMBO, CBN_SELCHANGE) => {
                let i = SendMessageW(control, CB_GETCURSEL, None, None).0;
                if i >= 0 {
                    let item = item_text(control, i as usize, CB_GETLBTEXTLEN, CB_GETLBTEXT);
                    report(window, &format!("combo {item}"));
                }
            }
            (ID_NEW, _) => report(window, "menu New"),
            (ID_ABOUT, _) => report(window, "menu About"),
            (ID_EXIT, _) => {
                report(window, "menu Exit");
                let _ = DestroyWindow(window);
            }
            _ => {}
        }
    }
}

unsafe extern "system" fn procedure(window: HWND, msg: u32, w: WPARAM, l: LPARAM) -> LRESULT {
    match msg {
        WM_COMMAND => {
            let id = (w.0 & 0xffff) as i32;
            let code = ((w.0 >> 16) & 0xffff) as u32;
            command(window, id, code, HWND(l.0 as *mut _));
            LRESULT(0)
        }
        WM_LBUTTONDOWN => {
            let (x, y) = ((l.0 & 0xffff) as i16, ((l.0 >> 16) & 0xffff) as i16);
            report(window, &format!("mouse {x} {y}"));
            // SAFETY: plain calls on our own window: take the keyboard focus (so the wheel
            // comes here, not to a control) and follow the drag even off the window.
            unsafe {
                let _ = SetFocus(Some(window));
                SetCapture(window);
            }
            LRESULT(0)
        }
        WM_LBUTTONUP => {
            let (x, y) = ((l.0 & 0xffff) as i16, ((l.0 >> 16) & 0xffff) as i16);
            report(window, &format!("up {x} {y}"));
            // SAFETY: releases the capture taken above.
            let _ = unsafe { ReleaseCapture() };
            LRESULT(0)
        }
        WM_MOUSEWHEEL | WM_MOUSEHWHEEL => {
            let delta = ((w.0 >> 16) & 0xffff) as i16;
            let name = if msg == WM_MOUSEWHEEL {
                "wheel"
            } else {
                "hwheel"
            };
            report(window, &format!("{name} {delta}"));
            LRESULT(0)
        }
        WM_KEYDOWN => {
            report(window, &format!("key {}", w.0));
            LRESULT(0)
        }
        WM_DESTROY => {
            report(window, "closed");
            // SAFETY: ends this thread's message loop.
            unsafe { PostQuitMessage(0) };
            LRESULT(0)
        }
        // SAFETY: the default handling for everything else.
        _ => unsafe { DefWindowProcW(window, msg, w, l) },
    }
}

/// Creates one child control with the GUI font.
fn control(
    parent: HWND,
    class: PCWSTR,
    text: &str,
    style: u32,
    (x, y, w, h): (i32, i32, i32, i32),
    id: i32,
) -> HWND {
    let text = wide(text);
    // SAFETY: plain window creation under `parent`; the strings outlive the call.
    unsafe {
        let child = CreateWindowExW(
            WINDOW_EX_STYLE(0),
            class,
            PCWSTR(text.as_ptr()),
            WS_CHILD | WS_VISIBLE | WINDOW_STYLE(style),
            x,
            y,
            w,
            h,
            Some(parent),
            Some(HMENU(id as isize as *mut _)),
            None,
            None,
        )
        .unwrap_or_default();
        let font = GetStockObject(DEFAULT_GUI_FONT);
        SendMessageW(
            child,
            WM_SETFONT,
            Some(WPARAM(font.0 as usize)),
            Some(LPARAM(1)),
        );
        child
    }
}

/// Fills a list box (`LB_ADDSTRING`) or combo box (`CB_ADDSTRING`).
fn add_items(control: HWND, add: u32, items: &[&str]) {
    for item in items {
        let item = wide(item);
        // SAFETY: the string outlives the synchronous call.
        unsafe { SendMessageW(control, add, None, Some(LPARAM(item.as_ptr() as isize))) };
    }
}

fn menu() -> HMENU {
    // SAFETY: plain menu construction; the menu is handed to the window, which owns it.
    unsafe {
        let bar = CreateMenu().unwrap_or_default();
        let file = CreatePopupMenu().unwrap_or_default();
        let _ = AppendMenuW(file, MF_STRING, ID_NEW as usize, w!("New"));
        let _ = AppendMenuW(file, MF_STRING, ID_EXIT as usize, w!("Exit"));
        let help = CreatePopupMenu().unwrap_or_default();
        let _ = AppendMenuW(help, MF_STRING, ID_ABOUT as usize, w!("About"));
        let _ = AppendMenuW(bar, MF_POPUP, file.0 as usize, w!("File"));
        let _ = AppendMenuW(bar, MF_POPUP, help.0 as usize, w!("Help"));
        bar
    }
}

pub fn run() {
    if let Some(path) = std::env::args_os().nth(1) {
        let file = OpenOptions::new().create(true).append(true).open(path);
        *LOG.lock().unwrap_or_else(|e| e.into_inner()) = file.ok();
    }
    // SAFETY: standard window class registration, creation and message loop on this thread.
    unsafe {
        let instance = GetModuleHandleW(None).unwrap_or_default();
        let class = w!("DeskpilotFixture");
        let wc = WNDCLASSW {
            lpfnWndProc: Some(procedure),
            hInstance: instance.into(),
            lpszClassName: class,
            hCursor: LoadCursorW(None, IDC_ARROW).unwrap_or_default(),
            hbrBackground: HBRUSH((COLOR_WINDOW.0 + 1) as usize as *mut _),
            ..Default::default()
        };
        RegisterClassW(&wc);
        let title = wide(TITLE);
        let Ok(window) = CreateWindowExW(
            WINDOW_EX_STYLE(0),
            class,
            PCWSTR(title.as_ptr()),
            WS_OVERLAPPEDWINDOW | WS_VISIBLE,
            120,
            80,
            480,
            340,
            None,
            Some(menu()),
            Some(instance.into()),
            None,
        ) else {
            std::process::exit(1);
        };
        let button = (BS_PUSHBUTTON | WS_TABSTOP.0 as i32) as u32;
        control(window, w!("BUTTON"), "OK", button, (10, 10, 100, 30), ID_OK);
        control(
            window,
            w!("BUTTON"),
            "确定",
            button,
            (120, 10, 100, 30),
            ID_CJK,
        );
        control(
            window,
            w!("BUTTON"),
            "Hang 5 s",
            button,
            (230, 10, 100, 30),
            ID_HANG,
        );
        control(
            window,
            w!("BUTTON"),
            "Enable logging",
            (BS_AUTOCHECKBOX | WS_TABSTOP.0 as i32) as u32,
            (10, 50, 200, 24),
            ID_CHECK,
        );
        control(window, w!("STATIC"), "Name:", 0, (10, 88, 50, 20), 0);
        control(
            window,
            w!("EDIT"),
            "",
            (WS_BORDER | WS_TABSTOP).0 | ES_AUTOHSCROLL as u32,
            (64, 84, 300, 24),
            ID_EDIT,
        );
        let list = control(
            window,
            w!("LISTBOX"),
            "",
            (WS_BORDER | WS_VSCROLL | WS_TABSTOP).0 | LBS_NOTIFY as u32,
            (10, 120, 150, 90),
            ID_LIST,
        );
        add_items(list, LB_ADDSTRING, &["Apple", "Banana", "Cherry"]);
        let combo = control(
            window,
            w!("COMBOBOX"),
            "",
            (WS_TABSTOP | WS_VSCROLL).0 | CBS_DROPDOWNLIST as u32,
            (180, 120, 150, 120),
            ID_COMBO,
        );
        add_items(combo, CB_ADDSTRING, &["Red", "Green", "Blue"]);
        control(
            window,
            w!("STATIC"),
            "ready",
            0,
            (10, 220, 440, 20),
            ID_STATUS,
        );
        report(window, "ready");
        let mut msg = MSG::default();
        while GetMessageW(&mut msg, None, 0, 0).as_bool() {
            if !IsDialogMessageW(window, &msg).as_bool() {
                let _ = TranslateMessage(&msg);
                DispatchMessageW(&msg);
            }
        }
    }
}
