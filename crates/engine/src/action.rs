//! The one pipeline every mutating request goes through: gates → act → verify/observe →
//! effect, returning a typed [`ActionReport`].
//!
//! The gates run inside each operation, at the point where its target is resolved and the
//! label a human would read is known (the window under the point, the element and its
//! window); an operation never reaches the OS before [`Session::gate`] let it through. This
//! module wraps the operation: it samples the verify target before, judges the screen after,
//! and decides the effect from typed facts — the outcome's own evidence first (an element's
//! states, the window manager's state), then the screen verdict, else `unverifiable`.
//! Surfaces render a report; they never decide an effect by reading text.

use serde::Serialize;

use crate::verify::{Verdict, VerifyTarget};
use crate::{error::Error, session::Session};

/// What a mutating action is known to have done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Evidence shows the action took effect.
    Confirmed,
    /// Nothing was checked; the action was sent.
    Unverifiable,
    /// Evidence shows nothing changed.
    SuspectedNoop,
    /// A gate or a check stopped the action before anything reached the desktop.
    Refused,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Confirmed => "confirmed",
            Effect::Unverifiable => "unverifiable",
            Effect::SuspectedNoop => "suspected_noop",
            Effect::Refused => "refused",
        }
    }
}

/// How an action reached the desktop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    Input,
    Accessibility,
    WindowManager,
    Process,
    Clipboard,
    Shell,
    /// A file deskpilot owns (an app skill in the user layer).
    File,
    /// The browser's DevTools protocol.
    Browser,
}

impl Route {
    pub fn as_str(self) -> &'static str {
        match self {
            Route::Input => "input",
            Route::Accessibility => "accessibility",
            Route::WindowManager => "window_manager",
            Route::Process => "process",
            Route::Clipboard => "clipboard",
            Route::Shell => "shell",
            Route::File => "file",
            Route::Browser => "browser",
        }
    }
}

/// What decided an [`ActionReport`]'s effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Evidence {
    /// The outcome's own check; the text names what was looked at ("the element's states").
    Outcome(&'static str),
    /// The frame-diff verdict of `verify` / `observe`.
    Screen,
    /// Nothing was checked.
    None,
}

/// An operation's result as the pipeline needs it.
pub trait Outcome {
    /// How the action reached the desktop.
    fn route(&self) -> Route;
    /// The operation's own judgement of its effect, when it checked one.
    fn judged(&self) -> Option<(Effect, &'static str)> {
        None
    }
    /// Whether the outcome judged from part of what the action may change, so that a change
    /// on screen (`verify` / `observe`) outweighs its own `SuspectedNoop`.
    fn screen_outweighs_noop(&self) -> bool {
        false
    }
}

/// What the caller asked to be checked after the action.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Check {
    /// Compare the target before and after (no image).
    pub verify: bool,
    /// Like `verify`, plus a fresh screenshot of the target.
    pub observe: bool,
}

impl Check {
    pub fn new(verify: bool, observe: bool) -> Self {
        Check { verify, observe }
    }

    fn on(self) -> bool {
        self.verify || self.observe
    }
}

/// Everything a surface renders about one mutating action.
#[derive(Debug)]
pub struct ActionReport<T> {
    pub outcome: T,
    pub route: Route,
    pub effect: Effect,
    pub evidence: Evidence,
    /// The screen verdict when `verify` / `observe` was asked (its screenshot with observe).
    pub verdict: Option<Verdict>,
    /// Why the verdict could not be had, when it could not.
    pub verdict_error: Option<Error>,
}

impl<T: Outcome> ActionReport<T> {
    /// Decides the effect: the outcome's own evidence, else the screen, else unverifiable.
    fn new(outcome: T, verdict: Option<Result<Verdict, Error>>) -> Self {
        let (verdict, verdict_error) = match verdict {
            Some(Ok(v)) => (Some(v), None),
            Some(Err(e)) => (None, Some(e)),
            None => (None, None),
        };
        let (effect, evidence) = match (outcome.judged(), &verdict) {
            (Some((Effect::SuspectedNoop, _)), Some(v))
                if v.changed && outcome.screen_outweighs_noop() =>
            {
                (Effect::Confirmed, Evidence::Screen)
            }
            (Some((effect, by)), _) => (effect, Evidence::Outcome(by)),
            (None, Some(v)) if v.changed => (Effect::Confirmed, Evidence::Screen),
            (None, Some(_)) => (Effect::SuspectedNoop, Evidence::Screen),
            (None, None) => (Effect::Unverifiable, Evidence::None),
        };
        ActionReport {
            route: outcome.route(),
            outcome,
            effect,
            evidence,
            verdict,
            verdict_error,
        }
    }
}

/// The effect of an action that failed with `error`: `Refused` when the error means nothing
/// reached the desktop, `None` when the action may have been partly done.
pub fn refused_effect(error: &Error) -> Option<Effect> {
    use deskpilot_types::ErrorCode as C;
    if matches!(error, Error::DryRun { .. }) {
        return Some(Effect::Refused);
    }
    matches!(
        error.code(),
        C::StoppedByHuman
            | C::BlockedTarget
            | C::ActionDisabled
            | C::ApprovalUnavailable
            | C::ApprovalDenied
            | C::NoReferenceScreenshot
            | C::TargetWindowGone
            | C::TargetWindowChanged
            | C::TargetWindowMoved
            | C::ClickWrongWindow
            | C::OutsideTargetWindow
            | C::PointOffScreen
            | C::StaleElement
            | C::ElementCovered
            | C::ElementDisabled
            | C::ElementNotFound
            | C::ForeignReference
            | C::ActionUnsupported
            | C::AmbiguousWindow
            | C::InvalidArgument
            | C::UnknownScreenshot
            | C::SkillExists
            | C::SkillTooLong
            | C::SkillBuiltin
            | C::SkillsReadOnly
    )
    .then_some(Effect::Refused)
}

impl Session {
    /// Runs a mutating operation through the pipeline: with a check, `target` is sampled
    /// before; `act` resolves its target, passes the gates and acts; then the screen is judged
    /// and the effect decided. A failed action returns its error (no verdict is taken).
    ///
    /// With [`VerifyTarget::Auto`] the sample is of what the operation resolved — the
    /// screenshot its x/y were read in, its element's window, the window under its point —
    /// taken the moment it resolved it, before anything reaches the desktop.
    pub fn act<T: Outcome>(
        &self,
        check: Check,
        target: VerifyTarget,
        act: impl FnOnce(&Session) -> Result<T, Error>,
    ) -> Result<ActionReport<T>, Error> {
        let (outcome, before) = match (check.on(), target) {
            (false, _) => (act(self), None),
            (true, VerifyTarget::Auto) => {
                let (outcome, before) = self.aimed(|| act(self));
                let before = before.unwrap_or_else(|| {
                    Err(Error::Internal {
                        message: "the action resolved no target to verify".to_string(),
                    })
                });
                (outcome, Some(before))
            }
            (true, target) => {
                let before = self.verify_before(target);
                (act(self), Some(before))
            }
        };
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                self.note_failure(&e);
                return Err(e);
            }
        };
        let verdict = before.map(|b| b.and_then(|b| self.verify_after(&b, check.observe)));
        let report = ActionReport::new(outcome, verdict);
        self.note_effect(report.route, report.effect);
        if report.effect != Effect::Refused {
            self.remember_acted();
        }
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_backend::{Button, FakeDesktop};
    use deskpilot_types::{ErrorCode, Rect};

    use super::*;
    use crate::{
        capture::{CaptureTarget, ScreenshotRequest},
        config::{EngineConfig, HitTestMode},
        pointer::{CoordinateSpace, PointerTarget},
        safety::{Approval, Approver, SafetyConfig},
    };

    struct Sent(Route);

    impl Outcome for Sent {
        fn route(&self) -> Route {
            self.0
        }
    }

    struct Checked(Effect);

    impl Outcome for Checked {
        fn route(&self) -> Route {
            Route::Accessibility
        }
        fn judged(&self) -> Option<(Effect, &'static str)> {
            Some((self.0, "the element's states"))
        }
    }

    /// Records every question and answers with a fixed approval.
    struct Asked(Mutex<Vec<String>>, bool);

    impl Approver for Asked {
        fn approve(&self, label: &str, _timeout: Duration) -> Approval {
            self.0.lock().unwrap().push(label.to_string());
            if self.1 {
                Approval::Accepted
            } else {
                Approval::Declined("declined".into())
            }
        }
    }

    fn session(fake: &FakeDesktop, safety: SafetyConfig) -> Session {
        let mut config = EngineConfig {
            safety,
            ..EngineConfig::default()
        };
        config.safety.action_delay = Duration::ZERO;
        Session::standalone(fake.desktop(), config)
    }

    fn click_at(
        s: &Session,
        x: f64,
        y: f64,
    ) -> Result<ActionReport<crate::pointer::PointerOutcome>, Error> {
        s.act(Check::default(), VerifyTarget::Auto, |s| {
            s.click(
                PointerTarget {
                    x,
                    y,
                    space: CoordinateSpace::Physical,
                },
                Button::Left,
                1,
                &[],
                HitTestMode::Off,
            )
        })
    }

    #[test]
    fn the_effect_comes_from_the_outcome_then_the_screen_then_nothing() {
        let fake = FakeDesktop::new(200, 100);
        fake.add_window(FakeWindow::new("Editor", Rect::new(0, 0, 100, 100)));
        let s = session(&fake, SafetyConfig::default());
        let plain = s
            .act(Check::default(), VerifyTarget::Screen, |_| {
                Ok(Sent(Route::Input))
            })
            .unwrap();
        assert_eq!(
            (plain.effect, plain.evidence),
            (Effect::Unverifiable, Evidence::None)
        );
        assert!(plain.verdict.is_none());

        let still = s
            .act(Check::new(true, false), VerifyTarget::Screen, |_| {
                Ok(Sent(Route::Input))
            })
            .unwrap();
        assert_eq!(
            (still.effect, still.evidence),
            (Effect::SuspectedNoop, Evidence::Screen)
        );

        let painted = s
            .act(Check::new(false, true), VerifyTarget::Screen, |_| {
                fake.paint(Rect::new(0, 0, 200, 100), [255, 0, 0]);
                Ok(Sent(Route::Input))
            })
            .unwrap();
        assert_eq!(painted.effect, Effect::Confirmed);
        assert!(
            painted.verdict.as_ref().unwrap().screenshot.is_some(),
            "observe adds an image"
        );

        // A click judged from part of what it may change: a change on screen outweighs its
        // suspected no-op.
        struct Partial;
        impl Outcome for Partial {
            fn route(&self) -> Route {
                Route::Input
            }
            fn judged(&self) -> Option<(Effect, &'static str)> {
                Some((Effect::SuspectedNoop, "the element's states"))
            }
            fn screen_outweighs_noop(&self) -> bool {
                true
            }
        }
        let moved = s
            .act(Check::new(true, false), VerifyTarget::Screen, |_| {
                fake.paint(Rect::new(0, 0, 200, 100), [0, 0, 255]);
                Ok(Partial)
            })
            .unwrap();
        assert_eq!(
            (moved.effect, moved.evidence),
            (Effect::Confirmed, Evidence::Screen)
        );

        // The outcome's own evidence wins over the screen.
        let own = s
            .act(Check::new(true, false), VerifyTarget::Screen, |_| {
                Ok(Checked(Effect::SuspectedNoop))
            })
            .unwrap();
        assert_eq!(own.effect, Effect::SuspectedNoop);
        assert_eq!(own.evidence, Evidence::Outcome("the element's states"));
    }

    /// Issue 22: a click read off window A's screenshot after a screenshot of window B was
    /// verified against B (B repainting made a false confirmation).
    #[test]
    fn verify_samples_the_screenshot_the_click_named_not_the_last_one() {
        let fake = FakeDesktop::new(400, 200);
        let a = fake.add_window(FakeWindow::new("Window A", Rect::new(0, 0, 200, 200)));
        let b = fake.add_window(FakeWindow::new("Window B", Rect::new(200, 0, 200, 200)));
        let s = session(&fake, SafetyConfig::default());
        let shot = |id| {
            s.screenshot(&ScreenshotRequest {
                target: CaptureTarget::Window(id),
                max_width: None,
                format: None,
            })
            .unwrap()
            .id
        };
        let of_a = shot(a);
        shot(b);
        let click_a = |paint: Rect| {
            s.act(Check::new(true, false), VerifyTarget::Auto, |s| {
                let out = s.click(
                    PointerTarget {
                        x: 50.0,
                        y: 50.0,
                        space: CoordinateSpace::Image {
                            screenshot_id: Some(of_a),
                        },
                    },
                    Button::Left,
                    1,
                    &[],
                    HitTestMode::Fail,
                )?;
                fake.paint(paint, [255, 0, 0]);
                Ok(out)
            })
            .unwrap()
        };
        // B repaints: nothing A shows changed.
        let r = click_a(Rect::new(200, 0, 200, 200));
        let v = r.verdict.unwrap();
        assert!(v.what.contains("\"Window A\""), "{}", v.what);
        assert!(!v.changed, "{v:?}");
        assert_eq!(r.effect, Effect::SuspectedNoop);
        // A repaints: confirmed.
        let r = click_a(Rect::new(0, 0, 200, 100));
        assert!(r.verdict.unwrap().changed);
        assert_eq!(r.effect, Effect::Confirmed);
        // A physical point is verified against the window under it.
        let r = s
            .act(Check::new(true, false), VerifyTarget::Auto, |s| {
                s.click(
                    PointerTarget {
                        x: 300.0,
                        y: 50.0,
                        space: CoordinateSpace::Physical,
                    },
                    Button::Left,
                    1,
                    &[],
                    HitTestMode::Fail,
                )
            })
            .unwrap();
        let what = r.verdict.unwrap().what;
        assert!(what.contains("\"Window B\""), "{what}");
        // An operation that resolves nothing has no verdict, and says why.
        let r = s
            .act(Check::new(true, false), VerifyTarget::Auto, |_| {
                Ok(Sent(Route::Input))
            })
            .unwrap();
        assert!(r.verdict.is_none() && r.verdict_error.is_some());
        assert_eq!(r.effect, Effect::Unverifiable);
    }

    #[test]
    fn every_gate_refuses_before_the_desktop_is_touched() {
        let fake = FakeDesktop::new(200, 100);
        fake.add_window(FakeWindow::new("Vault", Rect::new(0, 0, 100, 100)));
        let cases: Vec<(SafetyConfig, ErrorCode)> = vec![
            (
                SafetyConfig {
                    blocklist: vec!["vault".into()],
                    ..SafetyConfig::default()
                },
                ErrorCode::BlockedTarget,
            ),
            (
                SafetyConfig {
                    require_approval: true,
                    ..SafetyConfig::default()
                },
                ErrorCode::ApprovalUnavailable,
            ),
        ];
        for (safety, code) in cases {
            let s = session(&fake, safety);
            let err = click_at(&s, 10.0, 10.0).unwrap_err();
            assert_eq!(err.code(), code, "{err}");
            assert_eq!(refused_effect(&err), Some(Effect::Refused));
        }
        let dry = session(
            &fake,
            SafetyConfig {
                dry_run: true,
                ..SafetyConfig::default()
            },
        );
        let err = click_at(&dry, 10.0, 10.0).unwrap_err();
        assert!(matches!(err, Error::DryRun { .. }), "{err}");
        assert_eq!(refused_effect(&err), Some(Effect::Refused));
        // No screenshot at all: image coordinates are refused before any gate.
        let none = session(&fake, SafetyConfig::default());
        let err = none
            .act(Check::default(), VerifyTarget::Auto, |s| {
                s.click(
                    PointerTarget {
                        x: 1.0,
                        y: 1.0,
                        space: CoordinateSpace::Image {
                            screenshot_id: None,
                        },
                    },
                    Button::Left,
                    1,
                    &[],
                    HitTestMode::Off,
                )
            })
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::NoReferenceScreenshot);
        assert!(
            fake.pointer_events().is_empty(),
            "nothing reached the desktop"
        );
    }

    #[test]
    fn gates_run_in_order_stop_then_blocklist_then_approval_then_dry_run() {
        let fake = FakeDesktop::new(200, 100);
        fake.add_window(FakeWindow::new("Vault", Rect::new(0, 0, 100, 100)));
        let all_on = SafetyConfig {
            blocklist: vec!["vault".into()],
            require_approval: true,
            dry_run: true,
            ..SafetyConfig::default()
        };
        let asked = Arc::new(Asked(Mutex::new(Vec::new()), true));
        // The kill switch comes first: with the overlay up (after one approved click away
        // from the vault), Esc stops the next click before the blocklist or approval look.
        let s = session(
            &fake,
            SafetyConfig {
                blocklist: vec!["vault".into()],
                require_approval: true,
                ..SafetyConfig::default()
            },
        );
        s.set_approver(asked.clone());
        click_at(&s, 150.0, 50.0).unwrap();
        assert_eq!(asked.0.lock().unwrap().len(), 1);
        fake.overlay().press_escape();
        assert_eq!(
            click_at(&s, 10.0, 10.0).unwrap_err().code(),
            ErrorCode::StoppedByHuman
        );
        assert_eq!(asked.0.lock().unwrap().len(), 1, "stopped before asking");
        asked.0.lock().unwrap().clear();
        let sent = fake.pointer_events().len();
        let s = session(&fake, all_on);
        s.set_approver(asked.clone());
        assert_eq!(
            click_at(&s, 10.0, 10.0).unwrap_err().code(),
            ErrorCode::BlockedTarget
        );
        assert!(asked.0.lock().unwrap().is_empty(), "blocked before asking");
        let s = session(
            &fake,
            SafetyConfig {
                require_approval: true,
                dry_run: true,
                ..SafetyConfig::default()
            },
        );
        s.set_approver(asked.clone());
        assert!(matches!(
            click_at(&s, 10.0, 10.0).unwrap_err(),
            Error::DryRun { .. }
        ));
        assert_eq!(asked.0.lock().unwrap().len(), 1, "asked, then dry run");
        assert_eq!(
            fake.pointer_events().len(),
            sent,
            "nothing sent since the Esc"
        );
        // With everything passed, the click lands and the report says how.
        let s = session(&fake, SafetyConfig::default());
        s.screenshot(&ScreenshotRequest {
            target: CaptureTarget::Screen,
            max_width: None,
            format: None,
        })
        .unwrap();
        let report = click_at(&s, 10.0, 10.0).unwrap();
        assert_eq!(report.route, Route::Input);
        assert!(fake.pointer_events().len() > sent);
    }
}
