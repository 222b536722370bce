//! Synthetic pointer input: `SendInput` for moves (absolute virtual-desktop coordinates,
//! see [`crate::absolute`]), buttons and the wheel (vertical and horizontal); `GetCursorPos`
//! for receipts. A move that lands off by a pixel (rounding on odd layouts) is corrected with
//! `SetCursorPos`, so the receipt always shows the pixel asked for.

use deskpilot_backend::{Button, Error, Keyboard, Pointer};
use deskpilot_types::{Key, Point};
use windows::Win32::Foundation::POINT;
use windows::Win32::UI::Input::KeyboardAndMouse::{
    INPUT, INPUT_0, INPUT_KEYBOARD, INPUT_MOUSE, KEYBD_EVENT_FLAGS, KEYBDINPUT, KEYEVENTF_KEYUP,
    KEYEVENTF_UNICODE, MOUSE_EVENT_FLAGS, MOUSEEVENTF_ABSOLUTE, MOUSEEVENTF_HWHEEL,
    MOUSEEVENTF_LEFTDOWN, MOUSEEVENTF_LEFTUP, MOUSEEVENTF_MIDDLEDOWN, MOUSEEVENTF_MIDDLEUP,
    MOUSEEVENTF_MOVE, MOUSEEVENTF_RIGHTDOWN, MOUSEEVENTF_RIGHTUP, MOUSEEVENTF_VIRTUALDESK,
    MOUSEEVENTF_WHEEL, MOUSEINPUT, SendInput, VIRTUAL_KEY, VK_APPS, VK_BACK, VK_CAPITAL,
    VK_CONTROL, VK_DELETE, VK_DOWN, VK_END, VK_ESCAPE, VK_F1, VK_HOME, VK_INSERT, VK_LEFT, VK_LWIN,
    VK_MENU, VK_NEXT, VK_PRIOR, VK_RETURN, VK_RIGHT, VK_SHIFT, VK_SNAPSHOT, VK_SPACE, VK_TAB,
    VK_UP,
};
use windows::Win32::UI::WindowsAndMessaging::{GetCursorPos, SetCursorPos, WHEEL_DELTA};

use crate::WindowsDesktop;

fn send(flags: MOUSE_EVENT_FLAGS, data: i32) -> Result<(), Error> {
    send_at(flags, data, (0, 0))
}

fn send_at(flags: MOUSE_EVENT_FLAGS, data: i32, (dx, dy): (i32, i32)) -> Result<(), Error> {
    let input = INPUT {
        r#type: INPUT_MOUSE,
        Anonymous: INPUT_0 {
            mi: MOUSEINPUT {
                dx,
                dy,
                dwFlags: flags,
                mouseData: data as u32,
                ..Default::default()
            },
        },
    };
    // SAFETY: one fully initialised INPUT with its size passed alongside.
    let sent = unsafe { SendInput(&[input], size_of::<INPUT>() as i32) };
    if sent == 1 {
        Ok(())
    } else {
        Err(Error::os("SendInput", std::io::Error::last_os_error()))
    }
}

impl Pointer for WindowsDesktop {
    fn position(&self) -> Result<Point, Error> {
        let mut p = POINT::default();
        // SAFETY: `p` is a valid out pointer.
        unsafe { GetCursorPos(&mut p) }.map_err(|e| Error::os("GetCursorPos", e))?;
        Ok(Point::new(p.x, p.y))
    }

    fn move_to(&self, p: Point) -> Result<(), Error> {
        let desk = crate::monitors::virtual_screen();
        send_at(
            MOUSEEVENTF_MOVE | MOUSEEVENTF_ABSOLUTE | MOUSEEVENTF_VIRTUALDESK,
            0,
            crate::absolute::normalized(p, desk),
        )?;
        if self.position()? != p {
            // SAFETY: no pointer arguments.
            unsafe { SetCursorPos(p.x, p.y) }.map_err(|e| Error::os("SetCursorPos", e))?;
        }
        Ok(())
    }

    fn button(&self, button: Button, down: bool) -> Result<(), Error> {
        let flags = match (button, down) {
            (Button::Left, true) => MOUSEEVENTF_LEFTDOWN,
            (Button::Left, false) => MOUSEEVENTF_LEFTUP,
            (Button::Middle, true) => MOUSEEVENTF_MIDDLEDOWN,
            (Button::Middle, false) => MOUSEEVENTF_MIDDLEUP,
            (Button::Right, true) => MOUSEEVENTF_RIGHTDOWN,
            (Button::Right, false) => MOUSEEVENTF_RIGHTUP,
        };
        send(flags, 0)
    }

    fn wheel(&self, dx: i32, dy: i32) -> Result<(), Error> {
        // Windows: positive wheel data scrolls up, so a downward notch is negative.
        if dy != 0 {
            send(MOUSEEVENTF_WHEEL, -dy * WHEEL_DELTA as i32)?;
        }
        if dx != 0 {
            send(MOUSEEVENTF_HWHEEL, dx * WHEEL_DELTA as i32)?;
        }
        Ok(())
    }
}

/// The virtual-key code of a named key; characters go through `KEYEVENTF_UNICODE`.
fn virtual_key(key: Key) -> Option<VIRTUAL_KEY> {
    Some(match key {
        Key::Ctrl => VK_CONTROL,
        Key::Shift => VK_SHIFT,
        Key::Alt => VK_MENU,
        Key::Super => VK_LWIN,
        Key::Enter => VK_RETURN,
        Key::Tab => VK_TAB,
        Key::Escape => VK_ESCAPE,
        Key::Backspace => VK_BACK,
        Key::Delete => VK_DELETE,
        Key::Insert => VK_INSERT,
        Key::Home => VK_HOME,
        Key::End => VK_END,
        Key::PageUp => VK_PRIOR,
        Key::PageDown => VK_NEXT,
        Key::Up => VK_UP,
        Key::Down => VK_DOWN,
        Key::Left => VK_LEFT,
        Key::Right => VK_RIGHT,
        Key::Space => VK_SPACE,
        Key::CapsLock => VK_CAPITAL,
        Key::Menu => VK_APPS,
        Key::PrintScreen => VK_SNAPSHOT,
        Key::F(n) => VIRTUAL_KEY(VK_F1.0 + (n.clamp(1, 24) as u16 - 1)),
        Key::Char(c) if c.is_ascii_alphanumeric() => VIRTUAL_KEY(c.to_ascii_uppercase() as u16),
        Key::Char(_) => return None,
    })
}

fn send_keys(inputs: &[INPUT]) -> Result<(), Error> {
    // SAFETY: fully initialised INPUTs with their size passed alongside.
    let sent = unsafe { SendInput(inputs, size_of::<INPUT>() as i32) };
    if sent as usize == inputs.len() {
        Ok(())
    } else {
        Err(Error::os("SendInput", std::io::Error::last_os_error()))
    }
}

fn key_input(vk: VIRTUAL_KEY, scan: u16, flags: KEYBD_EVENT_FLAGS) -> INPUT {
    INPUT {
        r#type: INPUT_KEYBOARD,
        Anonymous: INPUT_0 {
            ki: KEYBDINPUT {
                wVk: vk,
                wScan: scan,
                dwFlags: flags,
                ..Default::default()
            },
        },
    }
}

impl Keyboard for WindowsDesktop {
    fn key(&self, key: Key, down: bool) -> Result<(), Error> {
        let up = if down {
            KEYBD_EVENT_FLAGS(0)
        } else {
            KEYEVENTF_KEYUP
        };
        match (virtual_key(key), key) {
            (Some(vk), _) => send_keys(&[key_input(vk, 0, up)]),
            (None, Key::Char(c)) => {
                let mut units = [0u16; 2];
                let inputs: Vec<_> = c
                    .encode_utf16(&mut units)
                    .iter()
                    .map(|u| key_input(VIRTUAL_KEY(0), *u, KEYEVENTF_UNICODE | up))
                    .collect();
                send_keys(&inputs)
            }
            (None, _) => Err(Error::Unsupported {
                what: "press_key",
                reason: format!("no virtual key for {key:?}"),
            }),
        }
    }

    fn type_text(&self, text: &str) -> Result<(), Error> {
        // Every UTF-16 unit (surrogate pairs for emoji) as a Unicode key down + up.
        let mut inputs = Vec::with_capacity(text.len() * 4);
        for unit in text.replace("\r\n", "\n").encode_utf16() {
            if unit == u16::from(b'\n') {
                inputs.push(key_input(VK_RETURN, 0, KEYBD_EVENT_FLAGS(0)));
                inputs.push(key_input(VK_RETURN, 0, KEYEVENTF_KEYUP));
                continue;
            }
            inputs.push(key_input(VIRTUAL_KEY(0), unit, KEYEVENTF_UNICODE));
            inputs.push(key_input(
                VIRTUAL_KEY(0),
                unit,
                KEYEVENTF_UNICODE | KEYEVENTF_KEYUP,
            ));
        }
        for chunk in inputs.chunks(512) {
            send_keys(chunk)?;
        }
        Ok(())
    }
}
