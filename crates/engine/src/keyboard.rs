//! Keyboard actions: chords and text.
//!
//! Chords press in order and release in reverse, and every pressed key is released even
//! when a later press fails, so no modifier is ever left held. Keys follow the agent: the
//! window it last looked at or brought forward (a screenshot, a tree read, `window focus` /
//! `restore`, a launch) is the one re-checked before they are sent. Text has a documented maximum
//! ([`MAX_TEXT_CHARS`]) beyond which the call refuses instead of typing for minutes.

use crate::action::{Outcome, Route};
use deskpilot_types::{Key, WindowInfo};

use crate::registry::{KeyTarget, recheck_pin};
use crate::safety::{on, quoted};
use crate::verify::VerifyTarget;
use crate::{error::Error, safety::Mutation, session::Session};

/// Longest text one `type_text` call accepts.
pub const MAX_TEXT_CHARS: usize = 20_000;

/// Most keys in one chord.
pub const MAX_CHORD: usize = 8;

/// Where keys went.
#[derive(Debug, Clone, Default)]
pub struct KeyboardOutcome {
    /// The window that had keyboard focus when the keys were sent.
    pub active: Option<WindowInfo>,
    /// Characters typed (`type_text`) or keys pressed (`press_key`).
    pub count: usize,
    /// Things the caller should know (keys went to another app than the screenshot showed).
    pub warnings: Vec<KeyboardNote>,
}

/// A fact beside a keyboard action's outcome. `Display` is the default wording; it serializes
/// as that wording.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyboardNote {
    /// The keys went to another app's window than the one last screenshotted, read or
    /// brought forward (the field keeps its name: it was the screenshot's).
    OtherWindow {
        focused: WindowInfo,
        screenshot: WindowInfo,
    },
}

impl std::fmt::Display for KeyboardNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyboardNote::OtherWindow {
                focused: a,
                screenshot: p,
            } => write!(
                f,
                "the keys went to the focused window \"{}\" ({}), not to \"{}\" ({}), the window last screenshotted, read or brought forward; focus it first (window action focus) if that was the target",
                a.title, a.id, p.title, p.id
            ),
        }
    }
}

impl serde::Serialize for KeyboardNote {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl Outcome for KeyboardOutcome {
    fn route(&self) -> Route {
        Route::Input
    }
}

impl Session {
    /// Keys go to whichever window has focus, so before any key is sent the window this client
    /// last aimed at is re-checked (gone / other process; a move does not matter to keys): the
    /// last screenshot's pinned window, or a window it focused, restored, launched or read the
    /// tree of since, whichever came last. The focused window is reported.
    fn keyboard_target(&self, into: Option<&WindowInfo>) -> Result<KeyboardOutcome, Error> {
        let pin = match into {
            // Keys aimed at a named window: that window is re-checked and sampled, whatever
            // the last screenshot showed.
            Some(w) => {
                self.aim(VerifyTarget::Window(w.id));
                Some(crate::registry::Pin::of(w))
            }
            // Keys aimed where this client last looked or what it brought forward: a
            // screenshot's pinned window, or a window it focused, restored, launched or read.
            None => match self.keys_aim() {
                Some(KeyTarget::Screenshot(id)) => {
                    // What `verify` samples: the screenshot the keys were aimed by.
                    self.aim(VerifyTarget::Screenshot(id));
                    self.shots_now().get(id).and_then(|r| r.window)
                }
                Some(KeyTarget::Window(pin)) => {
                    self.aim(VerifyTarget::Window(pin.window));
                    Some(pin)
                }
                None => {
                    self.aim(VerifyTarget::Focused);
                    None
                }
            },
        };
        let windows = self.desktop().windows.list_windows()?;
        let pinned = match recheck_pin(&windows, pin) {
            Err(Error::TargetWindowMoved { .. }) => windows
                .iter()
                .find(|w| Some(w.id) == pin.map(|p| p.window))
                .cloned(),
            other => other?,
        };
        let active = windows.iter().find(|w| w.state.active).cloned();
        if let Some(w) = pinned.as_ref().or(active.as_ref()) {
            self.note_window(w);
        }
        let mut warnings = Vec::new();
        if let (Some(p), Some(a)) = (&pinned, &active)
            && p.pid != a.pid
        {
            warnings.push(KeyboardNote::OtherWindow {
                focused: a.clone(),
                screenshot: p.clone(),
            });
        }
        Ok(KeyboardOutcome {
            active,
            count: 0,
            warnings,
        })
    }

    /// Presses `keys` in order, then releases them in reverse.
    pub fn press_key(&self, keys: &[Key]) -> Result<KeyboardOutcome, Error> {
        self.press_key_into(keys, None)
    }

    /// [`press_key`](Self::press_key) aimed at window `into` (the caller brought it to the
    /// front): that window, not the last screenshot's, is re-checked and reported.
    pub fn press_key_into(
        &self,
        keys: &[Key],
        into: Option<&WindowInfo>,
    ) -> Result<KeyboardOutcome, Error> {
        if keys.is_empty() || keys.len() > MAX_CHORD {
            return Err(Error::InvalidArgument {
                message: format!("a chord has 1 to {MAX_CHORD} keys, not {}", keys.len()),
            });
        }
        let chord: Vec<String> = keys
            .iter()
            .map(|k| format!("{k:?}").to_lowercase())
            .collect();
        // The kill switch comes before the stale-observation checks of the key target.
        self.check_stop(&format!("press {}", chord.join("+")))?;
        let mut target = self.keyboard_target(into)?;
        target.count = keys.len();
        self.gate(
            Mutation::Other,
            &format!("press {}{}", chord.join("+"), on(target.active.as_ref())),
        )?;
        if keys.contains(&Key::Escape) {
            self.own_escape();
        }
        self.send_chord(keys).map(|()| target)
    }

    /// Presses `keys` in order and releases them in reverse, every pressed key released even
    /// when a later press failed. No checks and no gate: the caller passed them.
    pub(crate) fn send_chord(&self, keys: &[Key]) -> Result<(), Error> {
        let keyboard = &self.desktop().keyboard;
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

    /// Types `text` exactly; the outcome counts the characters typed.
    pub fn type_text(&self, text: &str) -> Result<KeyboardOutcome, Error> {
        self.type_text_into(text, None)
    }

    /// [`type_text`](Self::type_text) aimed at window `into`, as
    /// [`press_key_into`](Self::press_key_into).
    pub fn type_text_into(
        &self,
        text: &str,
        into: Option<&WindowInfo>,
    ) -> Result<KeyboardOutcome, Error> {
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
        // The kill switch comes before the stale-observation checks of the key target.
        self.check_stop(&format!("type {}", quoted(text)))?;
        let mut target = self.keyboard_target(into)?;
        target.count = count;
        self.gate(
            Mutation::Other,
            &format!("type {}{}", quoted(text), on(target.active.as_ref())),
        )?;
        self.desktop().keyboard.type_text(text)?;
        Ok(target)
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_types::ErrorCode;

    use super::*;
    use crate::config::EngineConfig;

    #[test]
    fn chords_release_in_reverse_and_text_is_bounded() {
        let fake = FakeDesktop::new(100, 100);
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
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
        assert_eq!(e.type_text("Hello é 中文 😀\n").unwrap().count, 13);
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

#[cfg(test)]
mod pin_tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_types::{ErrorCode, Rect};

    use super::*;
    use crate::{
        capture::{CaptureTarget, ScreenshotRequest},
        config::EngineConfig,
    };

    #[test]
    fn keys_recheck_the_pinned_window_and_name_the_focused_one() {
        let fake = FakeDesktop::new(800, 600);
        let editor = fake.add_window(FakeWindow {
            pid: 10,
            ..FakeWindow::new("editor", Rect::new(0, 0, 400, 300))
        });
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        e.screenshot(&ScreenshotRequest {
            target: CaptureTarget::Window(editor),
            max_width: None,
            format: None,
        })
        .unwrap();
        let out = e.type_text("a").unwrap();
        assert_eq!(out.active.unwrap().id, editor);
        assert!(out.warnings.is_empty());
        fake.move_window(editor, Rect::new(10, 10, 400, 300));
        assert!(
            e.press_key(&[Key::Enter]).is_ok(),
            "a move does not matter to keys"
        );
        fake.add_window(FakeWindow {
            pid: 20,
            ..FakeWindow::new("popup", Rect::new(500, 0, 100, 100))
        });
        let out = e.type_text("b").unwrap();
        assert!(
            out.warnings[0].to_string().contains("\"popup\""),
            "{:?}",
            out.warnings
        );
        fake.remove_window(editor);
        let err = e.press_key(&[Key::Enter]).unwrap_err();
        assert_eq!(err.code(), ErrorCode::TargetWindowGone);
        assert_eq!(
            fake.typed(),
            "ab",
            "nothing typed after the window went away"
        );
        // Keys aimed at a named window re-check that one, not the last screenshot's.
        let popup = e
            .resolve_window(&crate::window::WindowRef::TitleMatch("popup".to_string()))
            .unwrap();
        let out = e.type_text_into("c", Some(&popup)).unwrap();
        assert_eq!(out.active.unwrap().id, popup.id);
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
        fake.remove_window(popup.id);
        let err = e.press_key_into(&[Key::Enter], Some(&popup)).unwrap_err();
        assert_eq!(err.code(), ErrorCode::TargetWindowGone);
        assert_eq!(fake.typed(), "abc");
        // A human's Esc outranks the stale target: the kill switch is the first gate.
        fake.overlay().press_escape();
        let err = e.type_text("d").unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoppedByHuman, "{err}");
        let err = e.press_key_into(&[Key::Enter], Some(&popup)).unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoppedByHuman, "{err}");
        assert_eq!(fake.typed(), "abc");
    }

    /// Screenshot A, close A, focus B, type: the keys were refused with TARGET_WINDOW_GONE
    /// naming A, even after a tree read of B. Focusing, restoring, launching, reading the tree
    /// of or screenshotting a window makes it where keys go.
    #[test]
    fn keys_follow_the_window_last_focused_read_or_screenshotted() {
        let fake = FakeDesktop::new(800, 600);
        let a = fake.add_window(FakeWindow {
            pid: 10,
            ..FakeWindow::new("a", Rect::new(0, 0, 300, 300))
        });
        let b = fake.add_window(FakeWindow {
            pid: 20,
            ..FakeWindow::new("b", Rect::new(400, 0, 300, 300))
        });
        let e = Session::standalone(fake.desktop(), EngineConfig::default());
        let shot = |id| {
            e.screenshot(&ScreenshotRequest {
                target: CaptureTarget::Window(id),
                max_width: None,
                format: None,
            })
            .unwrap()
        };
        shot(a);
        fake.remove_window(a);
        assert_eq!(
            e.type_text("x").unwrap_err().code(),
            ErrorCode::TargetWindowGone
        );
        e.window_action(
            &crate::window::WindowRef::Id(b),
            crate::window::WindowAction::Focus,
        )
        .unwrap();
        let out = e.type_text("y").unwrap();
        assert_eq!(out.active.unwrap().id, b);
        assert!(out.warnings.is_empty(), "{:?}", out.warnings);
        // A tree read makes its window the target too.
        let c = fake.add_window(FakeWindow {
            pid: 30,
            ..FakeWindow::new("c", Rect::new(0, 300, 300, 200))
        });
        shot(c);
        fake.remove_window(c);
        fake.set_tree(
            b,
            deskpilot_backend::RawTree {
                source: "fake".into(),
                complete: true,
                ..Default::default()
            },
        );
        assert!(e.press_key(&[Key::Enter]).is_err(), "c is gone");
        e.window_state(&crate::tree::TreeRequest {
            include_screenshot: false,
            ..crate::tree::TreeRequest::new(crate::window::WindowRef::Id(b))
        })
        .unwrap();
        e.press_key(&[Key::Enter]).unwrap();
        assert_eq!(fake.typed(), "y");
    }
}
