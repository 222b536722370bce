//! The gates every mutating action passes before anything reaches the operating system.
//!
//! dsh-computer-use's order: kill switch → policy (`allowLaunch`, `allowCloseWindow`) and blocklist →
//! approval → dry run → overlay arm. Each engine operation calls [`Session::gate`] once its
//! targets are resolved — the window under the point, the element and its window, the focused
//! window for keys — with a label that names them the way a person would read it: `click at
//! (512, 300) on "Invoice.pdf — Evince" (evince, pid 4242)`. The blocklist matches that label
//! case-insensitively, so an entry such as "1Password" stops every action whose target is named
//! so; approval shows the same label to the human.
//!
//! The kill switch lives here too. The backend's [`Overlay`](deskpilot_backend::Overlay)
//! reports a human's Esc (only while the indicator is up and `escStop` is on), its own
//! unexpected death (`guard-exited`) and the input host's (`host-exited`); any of them freezes
//! every later mutation (`STOPPED_BY_HUMAN`) while reads keep working, until [`Engine::resume`],
//! which is refused for 5 s after the stop (`RESUME_TOO_SOON`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use deskpilot_backend::OverlayStyle;
use deskpilot_types::WindowInfo;

pub use crate::guard::{
    APPROVAL_TIMEOUT, Approval, Approver, DEFAULT_OVERLAY_MESSAGE, GuardStatus, Mutation,
    OverlayMode, RESUME_COOLDOWN, SafetyConfig, SecretAnswer, SecretRequest, Stop, StopReason,
};
use crate::{engine::Engine, error::Error, session::Session};

/// ` on "title" (process, pid N)` for a label, or nothing when no window is known.
pub(crate) fn on(window: Option<&WindowInfo>) -> String {
    window
        .map(|w| format!(" on {}", w.label()))
        .unwrap_or_default()
}

/// A text for a label: quoted, cut at 60 characters.
pub(crate) fn quoted(text: &str) -> String {
    let mut s: String = text.chars().take(60).collect();
    if text.chars().count() > 60 {
        s.push('…');
    }
    format!("\"{}\"", s.replace('\n', "\\n"))
}

impl Session {
    /// Lets a mutating action through, or refuses it: `StoppedByHuman`, `ActionDisabled`,
    /// `BlockedTarget`, `ApprovalUnavailable` / `ApprovalDenied`, or `DryRun` (which surfaces
    /// render as "[dry run] Would …", not as a failure). Arms the indicator when it lets through.
    pub(crate) fn gate(&self, kind: Mutation, label: &str) -> Result<(), Error> {
        self.gate_approving(kind, label, false)
    }

    /// [`Session::gate`], asking the person also when `requireApproval` is off if `approve`
    /// says so (a secret whose scope wants every use approved).
    pub(crate) fn gate_approving(
        &self,
        kind: Mutation,
        label: &str,
        approve: bool,
    ) -> Result<(), Error> {
        self.check_stop(label)?;
        let safety = &self.config().safety;
        let disabled = match kind {
            Mutation::Launch if !safety.allow_launch => Some(("launching programs", "allowLaunch")),
            Mutation::CloseWindow if !safety.allow_close_window => {
                Some(("closing windows", "allowCloseWindow"))
            }
            _ => None,
        };
        if let Some((what, key)) = disabled {
            return Err(Error::ActionDisabled {
                what,
                key,
                label: label.to_string(),
            });
        }
        let lower = label.to_lowercase();
        if let Some(entry) = safety
            .blocklist
            .iter()
            .find(|b| !b.trim().is_empty() && lower.contains(&b.trim().to_lowercase()))
        {
            return Err(Error::BlockedTarget {
                label: label.to_string(),
                entry: entry.clone(),
            });
        }
        if safety.require_approval || approve {
            let approver = self.approver();
            let answer = match approver {
                Some(a) => a.approve(label, APPROVAL_TIMEOUT),
                None => Approval::Unavailable("no client is connected that could ask".into()),
            };
            match answer {
                Approval::Accepted => {}
                Approval::Declined(answer) => {
                    return Err(Error::ApprovalDenied {
                        label: label.to_string(),
                        answer,
                    });
                }
                Approval::Unavailable(reason) => {
                    return Err(Error::ApprovalUnavailable {
                        label: label.to_string(),
                        reason,
                    });
                }
            }
            // The human may have pressed Esc while the question was up.
            self.check_stop(label)?;
        }
        if safety.dry_run {
            return Err(Error::DryRun {
                would: label.to_string(),
            });
        }
        self.arm(true);
        Ok(())
    }

    /// The gates for an action that is not the desktop's (a shell command): kill switch,
    /// blocklist on `label`, approval, dry run — and the overlay, since the agent is at work.
    pub fn gate_action(&self, label: &str) -> Result<(), Error> {
        self.gate(Mutation::Other, label)
    }
}

impl Engine {
    pub(crate) fn check_stop(&self, label: &str) -> Result<(), Error> {
        match &self.guard.lock().stop {
            Some(stop) => Err(Error::StoppedByHuman {
                why: stop.describe(),
                label: label.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// Shows the indicator when the mode says so; `mutation` counts an action and restarts
    /// the idle timer.
    pub(crate) fn arm(&self, mutation: bool) {
        let safety = &self.config().safety;
        let show = match safety.overlay {
            OverlayMode::Never => false,
            OverlayMode::Always => true,
            OverlayMode::Auto => mutation,
        };
        {
            let mut s = self.guard.lock();
            if mutation {
                s.mutations += 1;
                s.last_mutation = Some(Instant::now());
            }
            if !show {
                return;
            }
            if safety.overlay == OverlayMode::Auto
                && !safety.idle_disarm.is_zero()
                && !s.keeper_started
            {
                s.keeper_started = true;
                self.start_idle_keeper();
            }
        }
        self.guard.wake.notify_all();
        let overlay = &self.desktop().overlay;
        if overlay.visible() {
            return;
        }
        let style = OverlayStyle {
            message: safety.overlay_message.clone(),
            opacity: safety.overlay_opacity,
            esc_stop: safety.esc_stop,
            cursor: safety.cursor,
        };
        let result = overlay.show(&style);
        let mut s = self.guard.lock();
        match result {
            Ok(()) => s.overlay_error = None,
            Err(e) => {
                if s.overlay_error.is_none() {
                    tracing::warn!("overlay guard unavailable: {e}");
                }
                s.overlay_error = Some(e.to_string());
            }
        }
    }

    /// A thread that hides the indicator `idle_disarm` after the last mutating action. It ends
    /// with the engine.
    fn start_idle_keeper(&self) {
        let weak = Arc::downgrade(&self.guard);
        let overlay = self.desktop().overlay.clone();
        let idle = self.config().safety.idle_disarm;
        let spawned = std::thread::Builder::new()
            .name("overlay-idle".into())
            .spawn(move || {
                loop {
                    let Some(guard) = weak.upgrade() else { return };
                    let s = guard.lock();
                    let due = s.last_mutation.map(|t| t + idle);
                    let now = Instant::now();
                    let wait = match due {
                        Some(due) if due <= now => {
                            drop(s);
                            if overlay.visible() {
                                tracing::debug!(
                                    "no mutating action for {idle:?}: hiding the overlay"
                                );
                                if let Err(e) = overlay.hide() {
                                    tracing::warn!("hiding the overlay failed: {e}");
                                }
                            }
                            // Sleep until the next mutation wakes us (checking now and then
                            // whether the engine is gone).
                            let s = guard.lock();
                            let _ = guard.wake.wait_timeout(s, Duration::from_secs(1));
                            continue;
                        }
                        Some(due) => (due - now).min(Duration::from_secs(1)),
                        None => Duration::from_secs(1),
                    };
                    let _ = guard.wake.wait_timeout(s, wait);
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the overlay idle timer: {e}");
        }
    }

    /// Clears the kill switch, at least [`RESUME_COOLDOWN`] after the stop. `Ok(None)` when
    /// nothing was stopped; `Ok(Some(stop))` names what was cleared.
    pub fn resume(&self) -> Result<Option<Stop>, Error> {
        let mut s = self.guard.lock();
        let Some(stop) = s.stop.clone() else {
            return Ok(None);
        };
        let elapsed = stop.at.elapsed();
        if elapsed < RESUME_COOLDOWN {
            return Err(Error::ResumeTooSoon {
                why: stop.describe(),
                remaining: RESUME_COOLDOWN - elapsed,
            });
        }
        s.stop = None;
        tracing::info!(reason = stop.reason.name(), "kill switch cleared by resume");
        Ok(Some(stop))
    }

    /// Takes the overlay down for good and writes memory; call when the server stops, before
    /// its display goes.
    pub fn shutdown(&self) {
        self.desktop().overlay.shutdown();
        self.memory_flush();
    }

    /// deskpilot is about to press Esc itself.
    pub(crate) fn own_escape(&self) {
        self.desktop().overlay.expect_own_escape();
    }

    /// The gates' state for `status`.
    pub fn guard_status(&self) -> GuardStatus {
        let s = self.guard.lock();
        let overlay = &self.desktop().overlay;
        let visible = overlay.visible();
        GuardStatus {
            stop: s.stop.clone(),
            mutations: s.mutations,
            overlay_visible: visible,
            overlay_pid: overlay.pid(),
            overlay_error: s.overlay_error.clone(),
            esc_armed: visible && self.config().safety.esc_stop,
            escapes: overlay.escapes(),
            approver: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use deskpilot_backend::{FakeDesktop, Overlay};
    use deskpilot_types::ErrorCode;

    use super::*;
    use crate::config::EngineConfig;

    fn engine(safety: SafetyConfig) -> Session {
        Session::standalone(
            FakeDesktop::new(100, 100).desktop(),
            EngineConfig {
                safety,
                ..EngineConfig::default()
            },
        )
    }

    #[test]
    fn gates_in_order_policy_then_blocklist_then_dry_run() {
        let label = "window close \"Vault — 1Password\" (1password, pid 7)";
        let e = engine(SafetyConfig::default());
        assert!(e.gate(Mutation::CloseWindow, label).is_ok());

        let e = engine(SafetyConfig {
            allow_close_window: false,
            blocklist: vec!["1password".into()],
            dry_run: true,
            ..SafetyConfig::default()
        });
        let err = e.gate(Mutation::CloseWindow, label).unwrap_err();
        assert_eq!(err.code(), ErrorCode::ActionDisabled);
        assert!(err.to_string().contains("allowCloseWindow"), "{err}");
        let err = e.gate(Mutation::Other, label).unwrap_err();
        assert_eq!(err.code(), ErrorCode::BlockedTarget);
        assert!(err.to_string().contains("1password"), "{err}");
        let err = e.gate(Mutation::Other, "click at (1, 2)").unwrap_err();
        assert!(matches!(err, Error::DryRun { ref would } if would == "click at (1, 2)"));
        // Blank entries never match everything.
        let e = engine(SafetyConfig {
            blocklist: vec!["  ".into()],
            ..SafetyConfig::default()
        });
        assert!(e.gate(Mutation::Other, "anything").is_ok());
    }

    struct Scripted(Mutex<Vec<Approval>>, Mutex<Vec<String>>);

    impl Approver for Scripted {
        fn approve(&self, label: &str, _timeout: Duration) -> Approval {
            self.1.lock().unwrap().push(label.to_string());
            self.0.lock().unwrap().remove(0)
        }
    }

    fn fake_engine(safety: SafetyConfig) -> (FakeDesktop, Session) {
        let fake = FakeDesktop::new(100, 100);
        let e = Session::standalone(
            fake.desktop(),
            EngineConfig {
                safety,
                ..EngineConfig::default()
            },
        );
        (fake, e)
    }

    #[test]
    fn escape_while_armed_stops_every_mutation_until_a_late_resume() {
        let (fake, e) = fake_engine(SafetyConfig::default());
        // Before anything ran the indicator is down, so an Esc is nobody's business.
        fake.overlay().press_escape();
        assert!(e.gate(Mutation::Other, "click at (1, 1)").is_ok());
        assert!(
            fake.overlay().visible(),
            "the first mutation shows the indicator"
        );
        assert_eq!(
            fake.overlay().last_style().unwrap().message,
            DEFAULT_OVERLAY_MESSAGE
        );
        // deskpilot's own Esc does not count.
        e.own_escape();
        fake.overlay().press_escape();
        assert!(e.gate(Mutation::Other, "press escape").is_ok());
        fake.overlay().press_escape();
        let err = e.gate(Mutation::Other, "click at (2, 2)").unwrap_err();
        assert_eq!(err.code(), ErrorCode::StoppedByHuman);
        assert!(err.to_string().contains("a human pressed Esc"), "{err}");
        assert!(err.to_string().contains("click at (2, 2)"), "{err}");
        // The kill switch comes first: even a blocklisted or dry-run action says STOPPED_BY_HUMAN.
        let status = e.guard_status();
        assert_eq!(status.stop.as_ref().unwrap().reason, StopReason::Escape);
        assert_eq!(status.mutations, 2);
        let err = e.resume().unwrap_err();
        assert_eq!(err.code(), ErrorCode::ResumeTooSoon);
        // Age the stop past the cooldown.
        e.guard.lock().stop.as_mut().unwrap().at -= RESUME_COOLDOWN;
        let cleared = e.resume().unwrap().unwrap();
        assert_eq!(cleared.reason, StopReason::Escape);
        assert!(e.resume().unwrap().is_none(), "nothing left to resume");
        assert!(e.gate(Mutation::Other, "click at (3, 3)").is_ok());
    }

    #[test]
    fn deaths_fail_closed_and_esc_stop_false_never_listens() {
        let (fake, e) = fake_engine(SafetyConfig::default());
        assert!(e.gate(Mutation::Other, "click").is_ok());
        fake.overlay().die();
        let err = e.gate(Mutation::Other, "click").unwrap_err();
        assert!(err.to_string().contains("guard-exited"), "{err}");
        e.guard.lock().stop.as_mut().unwrap().at -= RESUME_COOLDOWN;
        e.resume().unwrap();
        assert!(e.gate(Mutation::Other, "click").is_ok());
        assert!(
            fake.overlay().visible(),
            "the next mutation brings the indicator back"
        );
        assert_eq!(fake.overlay().shows(), 2);
        fake.overlay().host_dies();
        let err = e.gate(Mutation::Other, "click").unwrap_err();
        assert!(err.to_string().contains("host-exited"), "{err}");

        let (fake, e) = fake_engine(SafetyConfig {
            esc_stop: false,
            ..SafetyConfig::default()
        });
        assert!(e.gate(Mutation::Other, "click").is_ok());
        fake.overlay().press_escape();
        assert!(e.gate(Mutation::Other, "click").is_ok());
        assert!(!e.guard_status().esc_armed);
    }

    #[test]
    fn overlay_modes() {
        let (fake, e) = fake_engine(SafetyConfig {
            overlay: OverlayMode::Never,
            ..SafetyConfig::default()
        });
        assert!(e.gate(Mutation::Other, "click").is_ok());
        assert!(!fake.overlay().visible());
        fake.overlay().press_escape();
        assert!(
            e.gate(Mutation::Other, "click").is_ok(),
            "no indicator, no Esc"
        );

        let (fake, e) = fake_engine(SafetyConfig {
            overlay: OverlayMode::Always,
            ..SafetyConfig::default()
        });
        fake.add_window(deskpilot_backend::fake::FakeWindow::new(
            "w",
            deskpilot_types::Rect::new(0, 0, 50, 50),
        ));
        e.screenshot(&crate::capture::ScreenshotRequest {
            target: crate::capture::CaptureTarget::Screen,
            max_width: None,
            format: None,
        })
        .unwrap();
        assert!(fake.overlay().visible(), "always: a read lights it too");
        assert_eq!(e.guard_status().mutations, 0);

        // auto hides after idle_disarm without a mutation.
        let (fake, e) = fake_engine(SafetyConfig {
            idle_disarm: Duration::from_millis(50),
            ..SafetyConfig::default()
        });
        assert!(e.gate(Mutation::Other, "click").is_ok());
        assert!(fake.overlay().visible());
        let deadline = Instant::now() + Duration::from_secs(5);
        while fake.overlay().visible() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(!fake.overlay().visible(), "hidden after idle_disarm");
        // A broken indicator does not stop the work; status says why.
        fake.overlay().break_with("no X server");
        assert!(e.gate(Mutation::Other, "click").is_ok());
        assert!(
            e.guard_status()
                .overlay_error
                .unwrap()
                .contains("no X server")
        );
    }

    #[test]
    fn approval_sits_between_blocklist_and_dry_run() {
        let (_fake, e) = fake_engine(SafetyConfig {
            require_approval: true,
            blocklist: vec!["secret".into()],
            dry_run: true,
            ..SafetyConfig::default()
        });
        // No approver: fail closed.
        let err = e.gate(Mutation::Other, "click").unwrap_err();
        assert_eq!(err.code(), ErrorCode::ApprovalUnavailable);
        let approver = Arc::new(Scripted(
            Mutex::new(vec![
                Approval::Declined("declined".into()),
                Approval::Accepted,
                Approval::Unavailable("the client has no elicitation".into()),
            ]),
            Mutex::new(Vec::new()),
        ));
        e.set_approver(approver.clone());
        // The blocklist comes first: the human is not even asked.
        assert_eq!(
            e.gate(Mutation::Other, "type into Secret Vault")
                .unwrap_err()
                .code(),
            ErrorCode::BlockedTarget
        );
        let err = e.gate(Mutation::Other, "click at (1, 2)").unwrap_err();
        assert_eq!(err.code(), ErrorCode::ApprovalDenied);
        // Accepted → dry run still stops it before the OS.
        let err = e.gate(Mutation::Other, "click at (3, 4)").unwrap_err();
        assert!(matches!(err, Error::DryRun { .. }), "{err}");
        let err = e.gate(Mutation::Other, "click at (5, 6)").unwrap_err();
        assert_eq!(err.code(), ErrorCode::ApprovalUnavailable);
        assert!(err.to_string().contains("no elicitation"), "{err}");
        assert_eq!(
            *approver.1.lock().unwrap(),
            ["click at (1, 2)", "click at (3, 4)", "click at (5, 6)"]
        );
    }
}
