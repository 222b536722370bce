//! Keyboard actions: chords and text.
//!
//! Chords press in order and release in reverse, and every pressed key is released even
//! when a later press fails, so no modifier is ever left held. Text has a documented maximum
//! ([`MAX_TEXT_CHARS`]) beyond which the call refuses instead of typing for minutes.

use deskpilot_types::Key;

use crate::{Engine, Error};

/// Longest text one `type_text` call accepts.
pub const MAX_TEXT_CHARS: usize = 20_000;

/// Most keys in one chord.
pub const MAX_CHORD: usize = 8;

impl Engine {
    /// Presses `keys` in order, then releases them in reverse.
    pub fn press_key(&self, keys: &[Key]) -> Result<(), Error> {
        if keys.is_empty() || keys.len() > MAX_CHORD {
            return Err(Error::InvalidArgument {
                message: format!("a chord has 1 to {MAX_CHORD} keys, not {}", keys.len()),
            });
        }
        let keyboard = &self.desktop.keyboard;
        let mut pressed = Vec::with_capacity(keys.len());
        let mut outcome = Ok(());
        for key in keys {
            match keyboard.key(*key, true) {
                Ok(()) => pressed.push(*key),
                Err(e) => {
                    outcome = Err(e.into());
                    break;
                }
            }
        }
        for key in pressed.iter().rev() {
            let released = keyboard.key(*key, false);
            if outcome.is_ok() {
                outcome = released.map_err(Error::from);
            }
        }
        outcome
    }

    /// Types `text` exactly; returns how many characters were typed.
    pub fn type_text(&self, text: &str) -> Result<usize, Error> {
        let count = text.chars().count();
        if count == 0 {
            return Err(Error::InvalidArgument {
                message: "text is empty".to_string(),
            });
        }
        if count > MAX_TEXT_CHARS {
            return Err(Error::InvalidArgument {
                message: format!(
                    "text has {count} characters; one call types at most {MAX_TEXT_CHARS}: split it, or paste it with clipboard_write + ctrl+v"
                ),
            });
        }
        self.desktop.keyboard.type_text(text)?;
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_types::ErrorCode;

    use super::*;
    use crate::EngineConfig;

    #[test]
    fn chords_release_in_reverse_and_text_is_bounded() {
        let fake = FakeDesktop::new(100, 100);
        let e = Engine::new(fake.desktop(), EngineConfig::default());
        e.press_key(&[Key::Ctrl, Key::Shift, Key::Char('t')])
            .unwrap();
        assert_eq!(
            fake.key_events(),
            [
                (Key::Ctrl, true),
                (Key::Shift, true),
                (Key::Char('t'), true),
                (Key::Char('t'), false),
                (Key::Shift, false),
                (Key::Ctrl, false)
            ]
        );
        assert_eq!(
            e.press_key(&[]).unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
        assert_eq!(e.type_text("Hello é 中文 😀\n").unwrap(), 13);
        assert_eq!(fake.typed(), "Hello é 中文 😀\n");
        let long = "x".repeat(MAX_TEXT_CHARS + 1);
        let err = e.type_text(&long).unwrap_err();
        assert!(err.to_string().contains("at most 20000"), "{err}");
        assert_eq!(
            e.type_text("").unwrap_err().code(),
            ErrorCode::InvalidArgument
        );
    }
}
