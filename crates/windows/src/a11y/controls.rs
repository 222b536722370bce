//! What standard Win32 controls say about themselves through window messages, for the MSAA
//! fallback where the accessible object only says "client" (Wine): the class and style give
//! the role, `BM_GETCHECK` the check state, and list and combo boxes their items (the system
//! marshals `LB_GETTEXT`, `CB_GETLBTEXT` and `LB_GETITEMRECT` across processes).
//!
//! Every message is sent with `SendMessageTimeoutW(SMTO_ABORTIFHUNG)`, so a hung app costs
//! at most [`WAIT_MS`] per message.

use deskpilot_backend::Error;
use deskpilot_types::Rect;
use windows::Win32::Foundation::{HWND, LPARAM, POINT, RECT, WPARAM};
use windows::Win32::Graphics::Gdi::ClientToScreen;
use windows::Win32::UI::WindowsAndMessaging::{
    BM_CLICK, BM_GETCHECK, CB_GETCOUNT, CB_GETCURSEL, CB_GETLBTEXT, CB_GETLBTEXTLEN, CB_SETCURSEL,
    CBN_SELCHANGE, GWL_STYLE, GetClassNameW, GetClientRect, GetDlgCtrlID, GetMenu,
    GetMenuItemCount, GetMenuItemID, GetMenuItemRect, GetMenuState, GetMenuStringW, GetParent,
    GetSubMenu, GetWindowLongW, HMENU, LB_GETCOUNT, LB_GETITEMRECT, LB_GETSEL, LB_GETTEXT,
    LB_GETTEXTLEN, LB_SETCURSEL, LBN_SELCHANGE, MF_BYPOSITION, MF_CHECKED, MF_DISABLED, MF_GRAYED,
    MF_SEPARATOR, PostMessageW, SMTO_ABORTIFHUNG, SendMessageTimeoutW, WM_COMMAND,
};

/// The longest one message may block.
const WAIT_MS: u32 = 500;
/// Items read from one list.
const MAX_ITEMS: usize = 500;

fn send(hwnd: HWND, msg: u32, w: usize, l: isize) -> Option<isize> {
    let mut result = 0usize;
    // SAFETY: callers pass only messages whose pointer arguments (if any) point at buffers
    // that outlive the call; the timeout bounds the wait.
    let ok = unsafe {
        SendMessageTimeoutW(
            hwnd,
            msg,
            WPARAM(w),
            LPARAM(l),
            SMTO_ABORTIFHUNG,
            WAIT_MS,
            Some(&mut result),
        )
    };
    (ok.0 != 0).then_some(result as isize)
}

pub(crate) fn class_and_style(hwnd: HWND) -> (String, u32) {
    let mut class = [0u16; 128];
    // SAFETY: the buffer length is passed along; fails cleanly for a dead window.
    unsafe {
        let n = GetClassNameW(hwnd, &mut class).max(0) as usize;
        let style = GetWindowLongW(hwnd, GWL_STYLE) as u32;
        (String::from_utf16_lossy(&class[..n]), style)
    }
}

/// Whether the window is a standard button (push button, check box, radio button).
pub(crate) fn is_button(hwnd: HWND) -> bool {
    class_and_style(hwnd).0.eq_ignore_ascii_case("button")
}

/// Clicks a standard button as the user would (`BM_CLICK`: press and release, then the
/// owner's `BN_CLICKED`). Posted, not sent: what the click starts may take long (a modal
/// dialog, a busy handler), and a sent message that times out may still run later, so a
/// timeout could not say whether the click happened. The caller checks the effect.
pub(crate) fn click_button(hwnd: HWND) -> Result<(), Error> {
    // SAFETY: posts a message without pointers.
    unsafe { PostMessageW(Some(hwnd), BM_CLICK, WPARAM(0), LPARAM(0)) }
        .map_err(|e| Error::os("PostMessage BM_CLICK", e))
}

pub(crate) fn checked(hwnd: HWND) -> bool {
    send(hwnd, BM_GETCHECK, 0, 0) == Some(1)
}

/// A list box or combo box.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum List {
    ListBox,
    ComboBox,
}

/// One item of a list box or combo box.
pub(crate) struct Item {
    pub text: String,
    pub bounds: Option<Rect>,
    pub selected: bool,
}

/// The text of item `index`.
pub(crate) fn item_text(hwnd: HWND, list: List, index: usize) -> String {
    let (len_msg, text_msg) = match list {
        List::ListBox => (LB_GETTEXTLEN, LB_GETTEXT),
        List::ComboBox => (CB_GETLBTEXTLEN, CB_GETLBTEXT),
    };
    let Some(len) = send(hwnd, len_msg, index, 0).filter(|l| *l >= 0) else {
        return String::new();
    };
    let mut buf = vec![0u16; len as usize + 1];
    match send(hwnd, text_msg, index, buf.as_mut_ptr() as isize) {
        Some(n) if n >= 0 => String::from_utf16_lossy(&buf[..(n as usize).min(len as usize)]),
        _ => String::new(),
    }
}

fn item_bounds(hwnd: HWND, index: usize) -> Option<Rect> {
    let mut r = RECT::default();
    send(hwnd, LB_GETITEMRECT, index, &mut r as *mut RECT as isize).filter(|v| *v != -1)?;
    let mut origin = POINT {
        x: r.left,
        y: r.top,
    };
    // SAFETY: a live out-pointer; fails cleanly for a dead window.
    unsafe { ClientToScreen(hwnd, &mut origin) }.ok().ok()?;
    let (w, h) = (r.right - r.left, r.bottom - r.top);
    (w > 0 && h > 0).then(|| Rect::new(origin.x, origin.y, w as u32, h as u32))
}

/// The items of a list box or combo box, with their state.
pub(crate) fn items(hwnd: HWND, list: List) -> Vec<Item> {
    let count = match list {
        List::ListBox => send(hwnd, LB_GETCOUNT, 0, 0),
        List::ComboBox => send(hwnd, CB_GETCOUNT, 0, 0),
    }
    .unwrap_or(0)
    .clamp(0, MAX_ITEMS as isize) as usize;
    let current = match list {
        List::ComboBox => send(hwnd, CB_GETCURSEL, 0, 0),
        List::ListBox => None,
    };
    (0..count)
        .map(|i| Item {
            text: item_text(hwnd, list, i),
            bounds: match list {
                List::ListBox => item_bounds(hwnd, i),
                List::ComboBox => None,
            },
            selected: match list {
                List::ListBox => item_selected(hwnd, list, i),
                // One question for the whole combo box rather than one per item.
                List::ComboBox => current == Some(i as isize),
            },
        })
        .collect()
}

/// Whether item `index` is selected.
pub(crate) fn item_selected(hwnd: HWND, list: List, index: usize) -> bool {
    match list {
        List::ListBox => send(hwnd, LB_GETSEL, index, 0).is_some_and(|s| s > 0),
        List::ComboBox => send(hwnd, CB_GETCURSEL, 0, 0) == Some(index as isize),
    }
}

/// Selects item `index` and tells the owner, as a click on the item would (`LBN_SELCHANGE`
/// / `CBN_SELCHANGE` in a `WM_COMMAND`).
pub(crate) fn select_item(hwnd: HWND, list: List, index: usize) -> Result<(), Error> {
    let (set, notify) = match list {
        List::ListBox => (LB_SETCURSEL, LBN_SELCHANGE),
        List::ComboBox => (CB_SETCURSEL, CBN_SELCHANGE),
    };
    match send(hwnd, set, index, 0) {
        Some(r) if r != -1 => {}
        _ => {
            return Err(Error::os(
                "selecting the list item",
                format!("the control refused item {index}"),
            ));
        }
    }
    // SAFETY: plain handle queries; fail cleanly for a dead window.
    let (parent, id) = unsafe { (GetParent(hwnd), GetDlgCtrlID(hwnd)) };
    if let Ok(parent) = parent {
        let w = (id as u32 & 0xffff) as usize | ((notify & 0xffff) as usize) << 16;
        send(parent, WM_COMMAND, w, hwnd.0 as isize);
    }
    Ok(())
}

/// One entry of a window's menu bar or of one of its menus, depth first.
pub(crate) struct MenuEntry {
    /// 0 for the bar, 1 for its items, 2 for the items of their menus …
    pub depth: u32,
    pub text: String,
    /// On screen only for the bar and its items (menus are closed).
    pub bounds: Option<Rect>,
    /// The command a leaf item sends; `None` for the bar and for items that open a menu.
    pub command: Option<u32>,
    pub enabled: bool,
    pub checked: bool,
}

/// The window's menu bar and every menu under it, depth first (at most 3 levels, 300 items).
pub(crate) fn menu(hwnd: HWND) -> Vec<MenuEntry> {
    // SAFETY: menu handles are system objects readable from any process; every call fails
    // cleanly for a destroyed menu.
    unsafe {
        let bar = GetMenu(hwnd);
        if bar.is_invalid() {
            return Vec::new();
        }
        let mut bounds = None;
        let mut first = RECT::default();
        if GetMenuItemRect(Some(hwnd), bar, 0, &mut first).is_ok() {
            // The bar spans the window's client width above the client area.
            let mut client = RECT::default();
            let _ = GetClientRect(hwnd, &mut client);
            let mut origin = POINT::default();
            let _ = ClientToScreen(hwnd, &mut origin);
            let height = (first.bottom - first.top).max(1) as u32;
            bounds = Some(Rect::new(
                origin.x,
                first.top,
                client.right.max(1) as u32,
                height,
            ));
        }
        let mut out = vec![MenuEntry {
            depth: 0,
            text: String::new(),
            bounds,
            command: None,
            enabled: true,
            checked: false,
        }];
        entries(hwnd, bar, 1, true, &mut out);
        out
    }
}

unsafe fn entries(hwnd: HWND, menu: HMENU, depth: u32, on_bar: bool, out: &mut Vec<MenuEntry>) {
    // SAFETY: see `menu`.
    unsafe {
        let count = GetMenuItemCount(Some(menu)).clamp(0, 100);
        for pos in 0..count {
            if out.len() >= 300 {
                return;
            }
            let state = GetMenuState(menu, pos as u32, MF_BYPOSITION);
            if state & MF_SEPARATOR.0 != 0 {
                continue;
            }
            let mut buf = [0u16; 256];
            let n = GetMenuStringW(menu, pos as u32, Some(&mut buf), MF_BYPOSITION).max(0);
            let text = String::from_utf16_lossy(&buf[..n as usize]).replace('&', "");
            let sub = GetSubMenu(menu, pos);
            let mut r = RECT::default();
            let bounds = (on_bar && GetMenuItemRect(Some(hwnd), menu, pos as u32, &mut r).is_ok())
                .then(|| {
                    Rect::new(
                        r.left,
                        r.top,
                        (r.right - r.left).max(1) as u32,
                        (r.bottom - r.top).max(1) as u32,
                    )
                });
            let id = GetMenuItemID(menu, pos);
            out.push(MenuEntry {
                depth,
                text,
                bounds,
                command: (sub.is_invalid() && id != u32::MAX).then_some(id),
                enabled: state & (MF_GRAYED.0 | MF_DISABLED.0) == 0,
                checked: state & MF_CHECKED.0 != 0,
            });
            if !sub.is_invalid() && depth < 3 {
                entries(hwnd, sub, depth + 1, false, out);
            }
        }
    }
}

/// Runs a menu command as choosing the item would: `WM_COMMAND` with its id, posted.
pub(crate) fn run_command(hwnd: HWND, id: u32) -> Result<(), Error> {
    // SAFETY: posts a plain message without pointers.
    unsafe {
        PostMessageW(
            Some(hwnd),
            WM_COMMAND,
            WPARAM(id as usize & 0xffff),
            LPARAM(0),
        )
    }
    .map_err(|e| Error::os("PostMessage WM_COMMAND", e))
}
