//! Plain-text clipboard: read and write, with a size limit.

use crate::action::{Effect, Outcome, Route};
use crate::{error::Error, safety::Mutation, session::Session};

/// Largest text `clipboard_write` accepts, in bytes of UTF-8.
pub const MAX_CLIPBOARD_BYTES: usize = 16 * 1024 * 1024;

impl Session {
    /// The clipboard's text; `None` when it is empty or holds something other than text.
    pub fn clipboard_read(&self) -> Result<Option<String>, Error> {
        self.desktop()
            .clipboard
            .read_text()
            .map_err(Error::clipboard)
    }

    /// Puts `text` on the clipboard; it stays pasteable while this process runs.
    pub fn clipboard_write(&self, text: &str) -> Result<ClipboardWrite, Error> {
        if text.len() > MAX_CLIPBOARD_BYTES {
            return Err(Error::InvalidArgument {
                message: format!(
                    "text is {} bytes; the clipboard takes at most {MAX_CLIPBOARD_BYTES}",
                    text.len()
                ),
            });
        }
        self.gate(
            Mutation::Other,
            &format!("put {} on the clipboard", crate::safety::quoted(text)),
        )?;
        self.desktop()
            .clipboard
            .write_text(text)
            .map_err(Error::clipboard)?;
        let read = self.desktop().clipboard.read_text().ok().flatten();
        Ok(ClipboardWrite {
            bytes: text.len(),
            chars: text.chars().count(),
            read_back: read.as_deref() == Some(text),
        })
    }
}

/// What `clipboard_write` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClipboardWrite {
    pub bytes: usize,
    pub chars: usize,
    /// The clipboard read back exactly the text written.
    pub read_back: bool,
}

impl Outcome for ClipboardWrite {
    fn route(&self) -> Route {
        Route::Clipboard
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        Some(if self.read_back {
            (Effect::Confirmed, "the clipboard read back")
        } else {
            (Effect::SuspectedNoop, "the clipboard read back")
        })
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;

    use super::*;
    use crate::config::EngineConfig;

    #[test]
    fn round_trip_and_limit() {
        let fake = FakeDesktop::new(10, 10);
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        assert_eq!(e.clipboard_read().unwrap(), None);
        e.clipboard_write("中文 😀\nline").unwrap();
        assert_eq!(
            e.clipboard_read().unwrap().as_deref(),
            Some("中文 😀\nline")
        );
        let big = "x".repeat(MAX_CLIPBOARD_BYTES + 1);
        assert!(e.clipboard_write(&big).is_err());
    }
}
