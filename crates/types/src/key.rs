//! Key names agents use (`"ctrl"`, `"F5"`, `"pagedown"`, `"a"`), parsed once into [`Key`].
//!
//! Names are case-insensitive and accept common aliases. A single character is a key of its
//! own (`"a"`, `"7"`, `"é"`). Unknown names are refused with the full list of valid ones.
//! A chord (`"ctrl+s"`, `"Return"`, `"+"`) is parsed by [`Key::parse_chord`], the one place
//! every profile's key text is split.

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

/// A chord with a part that is no key: `part` is the part as written (before trimming).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChordError {
    pub part: String,
    pub kind: ChordErrorKind,
}

/// What is wrong with a chord's part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChordErrorKind {
    /// Nothing between two `+` (or only spaces): `"ctrl+"`, `"ctrl++s"`.
    Empty,
    /// A name that is no key (its words list the valid ones).
    Unknown(UnknownKey),
}

impl ChordError {
    /// The part refused as an unknown key, as the profiles that have no word for an empty
    /// part say it (`unknown key ""; valid keys: …`).
    pub fn unknown(&self) -> UnknownKey {
        match &self.kind {
            ChordErrorKind::Unknown(u) => u.clone(),
            ChordErrorKind::Empty => UnknownKey(self.part.clone()),
        }
    }
}

impl Key {
    /// The keys of a chord in the order they are pressed: `"ctrl+s"` splits on `+`, while a
    /// text of one character (`"+"`, `" "`) is that key. A part of one character is that key;
    /// a longer part is read without its surrounding spaces (`"ctrl + s"`).
    pub fn parse_chord(text: &str) -> Result<Vec<Key>, ChordError> {
        let parts: Vec<&str> = if text.chars().count() > 1 && text.contains('+') {
            text.split('+').collect()
        } else {
            vec![text]
        };
        parts
            .into_iter()
            .map(|part| {
                let error = |kind| ChordError {
                    part: part.to_string(),
                    kind,
                };
                let name = if part.chars().count() == 1 {
                    part
                } else {
                    part.trim()
                };
                if name.is_empty() {
                    return Err(error(ChordErrorKind::Empty));
                }
                name.parse::<Key>()
                    .map_err(|e| error(ChordErrorKind::Unknown(e)))
            })
            .collect()
    }
}

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

    #[test]
    fn chords_split_on_plus_and_plus_alone_is_a_key() {
        assert_eq!(
            Key::parse_chord("Ctrl+S"),
            Ok(vec![Key::Ctrl, Key::Char('S')])
        );
        assert_eq!(
            Key::parse_chord("ctrl + s"),
            Ok(vec![Key::Ctrl, Key::Char('s')])
        );
        assert_eq!(Key::parse_chord("+"), Ok(vec![Key::Char('+')]));
        assert_eq!(Key::parse_chord("Return"), Ok(vec![Key::Enter]));
        assert_eq!(Key::parse_chord("ctrl+ "), Ok(vec![Key::Ctrl, Key::Space]));
        let empty = Key::parse_chord("ctrl+").unwrap_err();
        assert_eq!(empty.kind, ChordErrorKind::Empty);
        assert!(empty.unknown().to_string().starts_with("unknown key \"\";"));
        let unknown = Key::parse_chord("ctrl+hyper").unwrap_err();
        assert_eq!(unknown.part, "hyper");
        assert!(matches!(unknown.kind, ChordErrorKind::Unknown(_)));
    }
}
