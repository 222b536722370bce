//! Input a page receives as if from a person: mouse clicks at viewport points, typed text,
//! keys and chords (the DevTools key names, codes and Windows virtual keys).

use serde_json::json;

use crate::cdp::Connection;
use crate::{CALL, Error};

/// A left click at viewport point (`x`, `y`), CSS pixels: move there, press, release.
pub fn click(cdp: &Connection, session: &str, x: f64, y: f64) -> Result<(), Error> {
    click_with(cdp, session, x, y, &Click::default())
}

/// Which button, how many times and with which modifiers a click presses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Click {
    /// `left`, `right` or `middle`.
    pub button: &'static str,
    /// 1, or 2 for a double click (each press counts up, as a person's do).
    pub count: u32,
    /// Bits of [`modifier`] held through the click.
    pub modifiers: i64,
}

impl Default for Click {
    fn default() -> Click {
        Click {
            button: "left",
            count: 1,
            modifiers: 0,
        }
    }
}

/// The `buttons` bit of a mouse button.
fn button_bit(button: &str) -> i64 {
    match button {
        "right" => 2,
        "middle" => 4,
        _ => 1,
    }
}

fn mouse(
    cdp: &Connection,
    session: &str,
    kind: &str,
    (x, y): (f64, f64),
    button: &str,
    count: u32,
    modifiers: i64,
) -> Result<(), Error> {
    let buttons = if kind == "mousePressed" || (kind == "mouseMoved" && button != "none") {
        button_bit(button)
    } else {
        0
    };
    cdp.input(
        "Input.dispatchMouseEvent",
        json!({ "type": kind, "x": x, "y": y, "button": button, "buttons": buttons, "clickCount": count, "modifiers": modifiers }),
        session,
    )
    .map(|_| ())
}

/// A click as `how` says at viewport point (`x`, `y`): move there, then press and release
/// `how.count` times.
pub fn click_with(
    cdp: &Connection,
    session: &str,
    x: f64,
    y: f64,
    how: &Click,
) -> Result<(), Error> {
    mouse(cdp, session, "mouseMoved", (x, y), "none", 0, how.modifiers)?;
    for n in 1..=how.count.max(1) {
        for kind in ["mousePressed", "mouseReleased"] {
            mouse(cdp, session, kind, (x, y), how.button, n, how.modifiers)?;
        }
    }
    Ok(())
}

/// Moves the pointer to viewport point (`x`, `y`) without pressing anything.
pub fn hover(cdp: &Connection, session: &str, x: f64, y: f64) -> Result<(), Error> {
    mouse(cdp, session, "mouseMoved", (x, y), "none", 0, 0)
}

/// Steps the pointer takes between a drag's ends (pages that track `mousemove` see a path).
const DRAG_STEPS: u32 = 8;

/// Drags from `from` to `to` (viewport points) with the left button: press, move in steps,
/// release. An HTML drag and drop (`draggable`) the page starts is carried through the
/// browser's drag events, as a person's drag would be; a page that follows the mouse itself
/// sees the moves.
pub fn drag(
    cdp: &Connection,
    session: &str,
    from: (f64, f64),
    to: (f64, f64),
) -> Result<(), Error> {
    let since = std::time::Instant::now();
    cdp.call(
        "Input.setInterceptDrags",
        json!({ "enabled": true }),
        Some(session),
        CALL,
    )?;
    let result = (|| {
        mouse(cdp, session, "mouseMoved", from, "none", 0, 0)?;
        mouse(cdp, session, "mousePressed", from, "left", 1, 0)?;
        let mut data = None;
        for i in 1..=DRAG_STEPS {
            let t = f64::from(i) / f64::from(DRAG_STEPS);
            let at = (from.0 + (to.0 - from.0) * t, from.1 + (to.1 - from.1) * t);
            mouse(cdp, session, "mouseMoved", at, "left", 0, 0)?;
            if data.is_none() {
                data = cdp
                    .events("Input.dragIntercepted", Some(session), since)
                    .pop()
                    .map(|e| e.params["data"].clone());
            }
        }
        match data {
            Some(data) => {
                for kind in ["dragEnter", "dragOver", "drop"] {
                    cdp.call(
                        "Input.dispatchDragEvent",
                        json!({ "type": kind, "x": to.0, "y": to.1, "data": data, "modifiers": 0 }),
                        Some(session),
                        CALL,
                    )?;
                }
                mouse(cdp, session, "mouseReleased", to, "left", 1, 0)
            }
            None => mouse(cdp, session, "mouseReleased", to, "left", 1, 0),
        }
    })();
    let _ = cdp.call(
        "Input.setInterceptDrags",
        json!({ "enabled": false }),
        Some(session),
        CALL,
    );
    result
}

/// Types `text` into the focused element in one go (as an input method commits it).
pub fn insert_text(cdp: &Connection, session: &str, text: &str) -> Result<(), Error> {
    cdp.input("Input.insertText", json!({ "text": text }), session)
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
        cdp.input(
            "Input.dispatchKeyEvent",
            json!({
                "type": if kind == "keyDown" && text.is_empty() { "rawKeyDown" } else { kind },
                "key": key.key, "code": key.code, "windowsVirtualKeyCode": key.vk, "modifiers": modifiers,
                "text": if kind == "keyDown" { text } else { "" },
            }),
            session,
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
