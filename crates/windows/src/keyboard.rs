//! Synthetic keyboard input: `SendInput` with virtual-key codes for named keys and
//! `KEYEVENTF_UNICODE` for every character (surrogate pairs for characters beyond the BMP),
//! so typed text never depends on the keyboard layout.

use deskpilot_backend::{Error, Keyboard};
use deskpilot_types::Key;
use windows::Win32::UI::Input::KeyboardAndMouse::{
    INPUT, INPUT_0, INPUT_KEYBOARD, KEYBD_EVENT_FLAGS, KEYBDINPUT, KEYEVENTF_KEYUP,
    KEYEVENTF_UNICODE, SendInput, VIRTUAL_KEY, VK_APPS, VK_BACK, VK_CAPITAL, VK_CONTROL, VK_DELETE,
    VK_DOWN, VK_END, VK_ESCAPE, VK_F1, VK_HOME, VK_INSERT, VK_LEFT, VK_LWIN, VK_MENU, VK_NEXT,
    VK_PRIOR, VK_RETURN, VK_RIGHT, VK_SHIFT, VK_SNAPSHOT, VK_SPACE, VK_TAB, VK_UP,
};

use crate::desktop::WindowsDesktop;

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
