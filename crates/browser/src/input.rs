//! Input a page receives as if from a person: mouse clicks at viewport points, typed text,
//! keys and chords (the DevTools key names, codes and Windows virtual keys).

use serde_json::json;

use crate::cdp::Connection;
use crate::{CALL, Error};

/// A left click at viewport point (`x`, `y`), CSS pixels: move there, press, release.
pub fn click(cdp: &Connection, session: &str, x: f64, y: f64) -> Result<(), Error> {
    for (kind, buttons) in [("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)] {
        cdp.call(
            "Input.dispatchMouseEvent",
            json!({ "type": kind, "x": x, "y": y, "button": if kind == "mouseMoved" { "none" } else { "left" }, "buttons": buttons, "clickCount": 1 }),
            Some(session),
            CALL,
        )?;
    }
    Ok(())
}

/// Types `text` into the focused element in one go (as an input method commits it).
pub fn insert_text(cdp: &Connection, session: &str, text: &str) -> Result<(), Error> {
    cdp.call(
        "Input.insertText",
        json!({ "text": text }),
        Some(session),
        CALL,
    )
    .map(|_| ())
}

/// One key as the DevTools protocol names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Key {
    /// `key` (`"Enter"`, `"a"`).
    pub key: String,
    /// `code` (`"Enter"`, `"KeyA"`; empty for punctuation).
    pub code: String,
    /// The Windows virtual key code (0 when there is none).
    pub vk: i64,
    /// The text the key types on its own (empty for keys that type nothing).
    pub text: String,
}

impl Key {
    /// The key a name means: `Enter`, `Tab`, `Escape`, `Backspace`, `Delete`, `Space`, the
    /// arrows, `Home`, `End`, `PageUp`, `PageDown` (any case, a few aliases), or one character.
    pub fn named(name: &str) -> Option<Key> {
        let named = |key: &str, code: &str, vk: i64, text: &str| {
            Some(Key {
                key: key.to_string(),
                code: code.to_string(),
                vk,
                text: text.to_string(),
            })
        };
        match name.to_ascii_lowercase().as_str() {
            "enter" | "return" => named("Enter", "Enter", 13, "\r"),
            "tab" => named("Tab", "Tab", 9, ""),
            "escape" | "esc" => named("Escape", "Escape", 27, ""),
            "backspace" => named("Backspace", "Backspace", 8, ""),
            "delete" => named("Delete", "Delete", 46, ""),
            "space" => named(" ", "Space", 32, " "),
            "arrowup" | "up" => named("ArrowUp", "ArrowUp", 38, ""),
            "arrowdown" | "down" => named("ArrowDown", "ArrowDown", 40, ""),
            "arrowleft" | "left" => named("ArrowLeft", "ArrowLeft", 37, ""),
            "arrowright" | "right" => named("ArrowRight", "ArrowRight", 39, ""),
            "home" => named("Home", "Home", 36, ""),
            "end" => named("End", "End", 35, ""),
            "pageup" => named("PageUp", "PageUp", 33, ""),
            "pagedown" => named("PageDown", "PageDown", 34, ""),
            _ => {
                let mut chars = name.chars();
                let c = chars.next()?;
                if chars.next().is_some() {
                    return None;
                }
                let upper = c.to_ascii_uppercase();
                let code = if c.is_ascii_alphabetic() {
                    format!("Key{upper}")
                } else if c.is_ascii_digit() {
                    format!("Digit{c}")
                } else {
                    String::new()
                };
                let vk = if c.is_ascii_alphanumeric() {
                    upper as i64
                } else {
                    0
                };
                Some(Key {
                    key: c.to_string(),
                    code,
                    vk,
                    text: c.to_string(),
                })
            }
        }
    }
}

/// The modifier bits of the protocol's key and mouse events.
pub mod modifier {
    pub const ALT: i64 = 1;
    pub const CTRL: i64 = 2;
    pub const META: i64 = 4;
    pub const SHIFT: i64 = 8;

    /// The bit a modifier's name means (`ctrl`/`control`, `alt`, `shift`, `meta`/`cmd`/`super`;
    /// any case).
    pub fn named(name: &str) -> Option<i64> {
        match name.to_ascii_lowercase().as_str() {
            "alt" => Some(ALT),
            "ctrl" | "control" => Some(CTRL),
            "meta" | "cmd" | "super" => Some(META),
            "shift" => Some(SHIFT),
            _ => None,
        }
    }
}

/// Presses and releases `key` with `modifiers` held (bits of [`modifier`]). A chord with
/// anything but Shift types no text (Ctrl+A selects, it does not type "a").
pub fn press(cdp: &Connection, session: &str, key: &Key, modifiers: i64) -> Result<(), Error> {
    let text = if modifiers & !modifier::SHIFT != 0 {
        ""
    } else {
        key.text.as_str()
    };
    for kind in ["keyDown", "keyUp"] {
        cdp.call(
            "Input.dispatchKeyEvent",
            json!({
                "type": if kind == "keyDown" && text.is_empty() { "rawKeyDown" } else { kind },
                "key": key.key, "code": key.code, "windowsVirtualKeyCode": key.vk, "modifiers": modifiers,
                "text": if kind == "keyDown" { text } else { "" },
            }),
            Some(session),
            CALL,
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keys_and_modifiers() {
        let enter = Key::named("return").unwrap();
        assert_eq!(
            (enter.key.as_str(), enter.vk, enter.text.as_str()),
            ("Enter", 13, "\r")
        );
        let a = Key::named("a").unwrap();
        assert_eq!((a.code.as_str(), a.vk), ("KeyA", 65));
        assert_eq!(Key::named("7").unwrap().code, "Digit7");
        assert_eq!(Key::named("nope"), None);
        assert_eq!(modifier::named("Control"), Some(modifier::CTRL));
        assert_eq!(modifier::named("hyper"), None);
    }
}
