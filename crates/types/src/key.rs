//! Key names agents use (`"ctrl"`, `"F5"`, `"pagedown"`, `"a"`), parsed once into [`Key`].
//!
//! Names are case-insensitive and accept common aliases. A single character is a key of its
//! own (`"a"`, `"7"`, `"é"`). Unknown names are refused with the full list of valid ones.

use std::str::FromStr;

/// A key on a neutral keyboard; backends map it to their own codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Key {
    Ctrl,
    Shift,
    Alt,
    Super,
    Enter,
    Tab,
    Escape,
    Backspace,
    Delete,
    Insert,
    Home,
    End,
    PageUp,
    PageDown,
    Up,
    Down,
    Left,
    Right,
    Space,
    CapsLock,
    Menu,
    PrintScreen,
    /// F1–F24.
    F(u8),
    /// A printable character.
    Char(char),
}

const NAMES: &[(&str, Key)] = &[
    ("ctrl", Key::Ctrl),
    ("control", Key::Ctrl),
    ("shift", Key::Shift),
    ("alt", Key::Alt),
    ("option", Key::Alt),
    ("super", Key::Super),
    ("win", Key::Super),
    ("meta", Key::Super),
    ("cmd", Key::Super),
    ("enter", Key::Enter),
    ("return", Key::Enter),
    ("tab", Key::Tab),
    ("esc", Key::Escape),
    ("escape", Key::Escape),
    ("backspace", Key::Backspace),
    ("delete", Key::Delete),
    ("del", Key::Delete),
    ("insert", Key::Insert),
    ("ins", Key::Insert),
    ("home", Key::Home),
    ("end", Key::End),
    ("pageup", Key::PageUp),
    ("page_up", Key::PageUp),
    ("pgup", Key::PageUp),
    ("pagedown", Key::PageDown),
    ("page_down", Key::PageDown),
    ("pgdn", Key::PageDown),
    ("up", Key::Up),
    ("down", Key::Down),
    ("left", Key::Left),
    ("right", Key::Right),
    ("arrowup", Key::Up),
    ("arrowdown", Key::Down),
    ("arrowleft", Key::Left),
    ("arrowright", Key::Right),
    ("space", Key::Space),
    ("capslock", Key::CapsLock),
    ("menu", Key::Menu),
    ("printscreen", Key::PrintScreen),
    ("print", Key::PrintScreen),
];

impl Key {
    /// Whether this key is a modifier that may be held during a click, drag or scroll.
    pub const fn is_modifier(self) -> bool {
        matches!(self, Key::Ctrl | Key::Shift | Key::Alt | Key::Super)
    }
}

/// A key name that is not one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey(pub String);

impl std::fmt::Display for UnknownKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<_> = NAMES.iter().map(|(n, _)| *n).collect();
        write!(
            f,
            "unknown key \"{}\"; valid keys: {}, f1–f24, or any single character",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownKey {}

impl FromStr for Key {
    type Err = UnknownKey;

    fn from_str(s: &str) -> Result<Key, UnknownKey> {
        let mut chars = s.chars();
        if let (Some(c), None) = (chars.next(), chars.clone().next()) {
            return Ok(match c {
                ' ' => Key::Space,
                '\n' => Key::Enter,
                '\t' => Key::Tab,
                c => Key::Char(c),
            });
        }
        let lower = s.trim().to_lowercase();
        if let Some((_, k)) = NAMES.iter().find(|(n, _)| *n == lower) {
            return Ok(*k);
        }
        if let Some(n) = lower
            .strip_prefix('f')
            .and_then(|n| n.parse::<u8>().ok())
            .filter(|n| (1..=24).contains(n))
        {
            return Ok(Key::F(n));
        }
        Err(UnknownKey(s.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_aliases_and_characters() {
        assert_eq!("CTRL".parse(), Ok(Key::Ctrl));
        assert_eq!("Return".parse(), Ok(Key::Enter));
        assert_eq!("PgDn".parse(), Ok(Key::PageDown));
        assert_eq!("f12".parse(), Ok(Key::F(12)));
        assert_eq!("F24".parse(), Ok(Key::F(24)));
        assert_eq!("a".parse(), Ok(Key::Char('a')));
        assert_eq!("中".parse(), Ok(Key::Char('中')));
        assert_eq!(" ".parse(), Ok(Key::Space));
        let err = "f25".parse::<Key>().unwrap_err().to_string();
        assert!(
            err.contains("unknown key \"f25\"") && err.contains("pagedown"),
            "{err}"
        );
        assert!("ctrl+s".parse::<Key>().is_err());
    }
}
