//! "Did it work?": the frame signature behind `verify`, `observe`, `compare` and `wait_for
//! stable`.
//!
//! A capture is reduced to a signature — the average colour of every 16×16-pixel cell (every
//! other row sampled), taken after the privacy masks and before any decoration. Two signatures
//! differ when the cells that moved do not fit in a caret-sized box (2 cells wide, 4 tall:
//! 32×64 pixels), leaving out cells the overlay paints: a blinking caret or a spinner is no
//! change, a typed word, a repaint or a new window is. The rule is in pixels rather than a share
//! of the frame (dsh-computer-use says 0.2 % of samples), because a share grows with the target: on a
//! full 1920×1080 screen 0.2 % is more than a typed word. `verify` samples the target just
//! before the action and again after it (after `actionDelayMs`, then for up to [`SETTLE`] while
//! nothing has moved yet, since apps repaint a little later than input lands): a change
//! confirms the action, none suggests it did nothing. `observe` adds a fresh screenshot of the
//! same target. Every capture also refreshes the reference signature of its target, which a
//! screenshot's `compare` is judged against.

use std::time::{Duration, Instant};

use deskpilot_types::{Rect, WindowId};

use crate::capture::{CaptureTarget, Screenshot, ScreenshotRequest};
use crate::note::{Fallback, Note};
use crate::registry::ScreenshotId;
use crate::signature::{Signature, difference, signature};
use crate::{error::Error, pipeline, session::Session};

/// How long `verify` keeps looking for a change that has not shown yet.
pub const SETTLE: Duration = Duration::from_millis(500);

impl Session {
    /// Captures `rect` (masked) and returns its signature, reusing the frame buffer.
    pub(crate) fn sample(&self, rect: Rect, buffer: &mut Vec<u8>) -> Result<Signature, Error> {
        let mut sig = None;
        *buffer =
            self.desktop()
                .capture
                .capture_with(rect, std::mem::take(buffer), &mut |frame| {
                    pipeline::apply_masks(frame, &self.config().mask_regions);
                    sig = Some(signature(frame));
                })?;
        sig.ok_or_else(|| Error::Internal {
            message: "the backend returned without lending the frame".to_string(),
        })
    }
}

/// What `verify` / `observe` look at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerifyTarget {
    /// The target the action itself resolved ([`Session::aim`]): the window of the
    /// screenshot its x/y were read in (else that screenshot's area), the window of its
    /// element, or the window under its physical point — never merely the last screenshot.
    Auto,
    Window(WindowId),
    /// The window a screenshot was pinned to (else that screenshot's area; else the screen).
    Screenshot(ScreenshotId),
    /// The window that has the keyboard focus (else the screen): where keys land.
    Focused,
    /// A physical rectangle (clipped to the desktop): only what happens there counts.
    Region(Rect),
    Screen,
}

thread_local! {
    /// The checks of the actions running on this thread whose target is
    /// [`VerifyTarget::Auto`], innermost last: [`Session::act`] runs its operation on its own
    /// thread, so the operation's [`Session::aim`] finds its own action's check here.
    static AIMING: std::cell::RefCell<Vec<Option<Result<Before, Error>>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl Session {
    /// Runs `op` as an action whose verify target is the one it resolves: the first
    /// [`Session::aim`] inside it samples that target. `None` when `op` aimed at nothing.
    pub(crate) fn aimed<T>(
        &self,
        op: impl FnOnce() -> Result<T, Error>,
    ) -> (Result<T, Error>, Option<Result<Before, Error>>) {
        AIMING.with(|a| a.borrow_mut().push(None));
        // Popped even when `op` panics, so a later action on this thread starts clean.
        struct Pop;
        impl Drop for Pop {
            fn drop(&mut self) {
                AIMING.with(|a| a.borrow_mut().pop());
            }
        }
        let pop = Pop;
        let outcome = op();
        let before = AIMING.with(|a| a.borrow_mut().last_mut().and_then(Option::take));
        drop(pop);
        (outcome, before)
    }

    /// Says which target the running action resolved (the window its screenshot or element
    /// was pinned to, the window under its point, …). Within a [`Session::act`] whose
    /// target is [`VerifyTarget::Auto`] and that wants a check, the first call samples it;
    /// otherwise this does nothing.
    pub(crate) fn aim(&self, target: VerifyTarget) {
        let wanted = AIMING.with(|a| matches!(a.borrow().last(), Some(None)));
        if !wanted || target == VerifyTarget::Auto {
            return;
        }
        let before = self.verify_before(target);
        AIMING.with(|a| {
            if let Some(slot @ None) = a.borrow_mut().last_mut() {
                *slot = Some(before);
            }
        });
    }
}

/// The target as sampled just before an action.
#[derive(Debug, Clone)]
pub struct Before {
    rect: Rect,
    /// The overlay's pixels when the signature was taken.
    overlay: Vec<Rect>,
    window: Option<WindowId>,
    signature: Signature,
    /// "window \"Untitled - Mousepad\"" or "screen".
    pub what: String,
}

/// What the screen did after an action.
#[derive(Debug, Clone)]
pub struct Verdict {
    pub changed: bool,
    /// Share of signature cells that moved.
    pub ratio: f64,
    /// From the end of the action to the deciding capture.
    pub waited: Duration,
    pub what: String,
    /// With `observe`: a fresh screenshot of the same target.
    pub screenshot: Option<Screenshot>,
}

impl Session {
    /// Samples the target of a coming action.
    pub fn verify_before(&self, target: VerifyTarget) -> Result<Before, Error> {
        let desktop = self.desktop().screens.desktop_bounds()?;
        let windows = || self.desktop().windows.list_windows();
        let (rect, window, what) = match target {
            VerifyTarget::Screen => (desktop, None, "screen".to_string()),
            VerifyTarget::Region(r) => (r, None, format!("region {r}")),
            VerifyTarget::Window(id) => {
                let w = windows()?
                    .into_iter()
                    .find(|w| w.id == id)
                    .ok_or(Error::WindowNotFound(id))?;
                (w.frame, Some(id), format!("window {}", w.label()))
            }
            VerifyTarget::Screenshot(id) => {
                let shot = self.screenshot_record(id)?;
                let pinned = match shot.window {
                    Some(pin) => windows()?.into_iter().find(|w| w.id == pin.window),
                    None => None,
                };
                match pinned {
                    Some(w) => (w.frame, Some(w.id), format!("window {}", w.label())),
                    None if shot.view.capture != desktop => (
                        shot.view.capture,
                        None,
                        format!("area {} of screenshot {}", shot.view.capture, shot.id),
                    ),
                    None => (desktop, None, "screen".to_string()),
                }
            }
            VerifyTarget::Focused => match windows()?.into_iter().find(|w| w.state.active) {
                Some(w) => (w.frame, Some(w.id), format!("window {}", w.label())),
                None => (desktop, None, "screen".to_string()),
            },
            VerifyTarget::Auto => {
                return Err(Error::Internal {
                    message: "the action named no target to verify".to_string(),
                });
            }
        };
        let rect = rect.intersect(&desktop).ok_or(Error::RegionOutsideScreen {
            region: rect,
            desktop,
        })?;
        let overlay = self.overlay_regions();
        let signature = self.sample(rect, &mut Vec::new())?;
        Ok(Before {
            rect,
            overlay,
            window,
            signature,
            what,
        })
    }

    /// Judges the screen after an action against `before`; with `observe`, adds a screenshot.
    pub fn verify_after(&self, before: &Before, observe: bool) -> Result<Verdict, Error> {
        let started = Instant::now();
        std::thread::sleep(self.config().safety.action_delay);
        let mut buffer = Vec::new();
        let diff = loop {
            let mut ignore = self.overlay_regions();
            ignore.extend_from_slice(&before.overlay);
            let now = self.sample(before.rect, &mut buffer)?;
            let diff = difference(&before.signature, &now, &ignore);
            if diff.changed || started.elapsed() >= SETTLE {
                break diff;
            }
            std::thread::sleep(Duration::from_millis(40));
        };
        let waited = started.elapsed();
        let screenshot = if observe {
            let target = match before.window {
                Some(id) => CaptureTarget::Window(id),
                None => CaptureTarget::Region(before.rect),
            };
            let shot = self.screenshot(&ScreenshotRequest {
                target,
                max_width: None,
                format: None,
            });
            // The window may have gone (a close, a minimize): show its area instead.
            let shot = match (shot, before.window) {
                (Err(e @ (Error::WindowNotFound(_) | Error::WindowMinimized { .. })), Some(id)) => {
                    let mut area = self.screenshot(&ScreenshotRequest {
                        target: CaptureTarget::Region(before.rect),
                        max_width: None,
                        format: None,
                    })?;
                    let instead = Fallback::AreaInstead {
                        window: id,
                        minimized: matches!(e, Error::WindowMinimized { .. }),
                        area: before.rect,
                    };
                    area.notes.insert(0, Note::Fallback(instead));
                    Ok(area)
                }
                (other, _) => other,
            };
            Some(shot?)
        } else {
            None
        };
        Ok(Verdict {
            changed: diff.changed,
            ratio: diff.ratio,
            waited,
            what: before.what.clone(),
            screenshot,
        })
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;

    use deskpilot_backend::Frame;

    use super::*;
    use crate::config::EngineConfig;

    fn blank(w: u32, h: u32) -> Frame {
        Frame {
            rect: Rect::new(0, 0, w, h),
            format: deskpilot_backend::PixelFormat::Bgrx,
            data: vec![255; (w * h * 4) as usize],
        }
    }

    #[test]
    fn a_word_is_a_change_and_a_caret_or_the_overlay_is_not() {
        // A full HD screen: a caret, then ten 6-pixel glyphs (a terminal's "verify me ").
        let base = signature(&blank(1920, 1080));
        let mut caret = blank(1920, 1080);
        caret.fill(Rect::new(100, 100, 2, 20), [0, 0, 0]);
        let d = difference(&base, &signature(&caret), &[]);
        assert!(!d.changed && d.ratio > 0.0, "{d:?}");
        let mut word = blank(1920, 1080);
        for k in 0..10 {
            word.fill(Rect::new(100 + k * 6, 100, 1, 9), [0, 0, 0]);
        }
        assert!(difference(&base, &signature(&word), &[]).changed);
        // The overlay's frame and label appearing is not a change.
        let mut overlay = blank(1920, 1080);
        let regions = [Rect::new(0, 0, 1920, 5), Rect::new(700, 5, 500, 24)];
        for r in regions {
            overlay.fill(r, [30, 123, 255]);
        }
        assert!(difference(&base, &signature(&overlay), &[]).changed);
        assert!(!difference(&base, &signature(&overlay), &regions).changed);
        // Another rectangle is all change.
        assert!(difference(&base, &signature(&blank(800, 600)), &[]).changed);
    }

    #[test]
    fn verify_sees_a_repaint_and_no_change_and_observe_adds_a_screenshot() {
        let fake = FakeDesktop::new(200, 100);
        let id = fake.add_window(FakeWindow::new("Editor", Rect::new(0, 0, 100, 100)));
        let mut config = EngineConfig::default();
        config.safety.action_delay = Duration::ZERO;
        let e = Session::standalone(fake.desktop(), config);
        let shot = e
            .screenshot(&ScreenshotRequest {
                target: CaptureTarget::Window(id),
                max_width: None,
                format: None,
            })
            .unwrap();
        let before = e.verify_before(VerifyTarget::Screenshot(shot.id)).unwrap();
        assert!(before.what.contains("\"Editor\""), "{}", before.what);
        let v = e.verify_after(&before, false).unwrap();
        assert!(
            !v.changed && v.ratio == 0.0 && v.screenshot.is_none(),
            "{v:?}"
        );
        assert!(
            v.waited >= SETTLE,
            "a quiet screen is watched for the settle time"
        );

        let before = e.verify_before(VerifyTarget::Screenshot(shot.id)).unwrap();
        fake.paint(Rect::new(0, 0, 100, 50), [255, 0, 0]);
        let v = e.verify_after(&before, true).unwrap();
        assert!(v.changed && v.ratio > 0.3, "{v:?}");
        assert!(v.waited < SETTLE);
        let shot = v.screenshot.unwrap();
        assert_eq!(shot.window.as_ref().unwrap().id, id);
        assert_eq!(shot.fallback(), None);

        // Minimized meanwhile: the observation shows its area instead, and says so.
        let before = e.verify_before(VerifyTarget::Window(id)).unwrap();
        let state = e.window(id).unwrap().state;
        fake.set_state(
            id,
            deskpilot_types::WindowState {
                minimized: true,
                ..state
            },
        );
        let shot = e.verify_after(&before, true).unwrap().screenshot.unwrap();
        assert_eq!(
            shot.fallback(),
            Some(&Fallback::AreaInstead {
                window: id,
                minimized: true,
                area: Rect::new(0, 0, 100, 100)
            })
        );
        fake.set_state(id, state);
        // Gone meanwhile: the same, and it says gone.
        let before = e.verify_before(VerifyTarget::Window(id)).unwrap();
        fake.remove_window(id);
        let shot = e.verify_after(&before, true).unwrap().screenshot.unwrap();
        assert!(
            matches!(
                shot.fallback(),
                Some(Fallback::AreaInstead {
                    minimized: false,
                    ..
                })
            ),
            "{:?}",
            shot.notes
        );
        let id = fake.add_window(FakeWindow::new("Editor", Rect::new(0, 0, 100, 100)));

        // Outside the target, nothing counts.
        let before = e.verify_before(VerifyTarget::Window(id)).unwrap();
        fake.paint(Rect::new(150, 0, 50, 100), [0, 255, 0]);
        assert!(!e.verify_after(&before, false).unwrap().changed);
        let before = e.verify_before(VerifyTarget::Screen).unwrap();
        fake.paint(Rect::new(150, 0, 50, 100), [0, 0, 255]);
        assert!(e.verify_after(&before, false).unwrap().changed);
    }
}
