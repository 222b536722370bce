//! The kill switch and the deployment's gates as plain values: [`SafetyConfig`], the
//! [`Guard`] (stopped or not, the overlay's health, the actions counted), and the
//! [`Approver`] a surface installs in a session.
//!
//! The backend's [`Overlay`] reports a human's Esc (only while the indicator is up and
//! `escStop` is on), its own unexpected death (`guard-exited`) and the input host's
//! (`host-exited`); any of them freezes every later mutation until `Engine::resume`. This
//! module knows no session and no engine: the gate that consults it is `safety`.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use deskpilot_backend::{GuardEvent, Overlay};
/// How long after a stop `resume` is refused.
pub const RESUME_COOLDOWN: Duration = Duration::from_secs(5);

/// How long a human has to answer an approval question before it counts as declined. Shorter
/// than a tool call's deadline, so an action is never performed after its call gave up.
pub const APPROVAL_TIMEOUT: Duration = Duration::from_secs(25);

/// When the indicator is shown (dsh-computer-use's `overlay`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OverlayMode {
    /// Only while mutating actions run; hidden after `idle_disarm` without one.
    #[default]
    Auto,
    /// Shown by the first desktop call of any kind, and kept up.
    Always,
    /// Never shown — and so no Esc kill switch either.
    Never,
}

impl OverlayMode {
    pub fn as_str(self) -> &'static str {
        match self {
            OverlayMode::Auto => "auto",
            OverlayMode::Always => "always",
            OverlayMode::Never => "never",
        }
    }
}

/// The default label of the indicator.
pub const DEFAULT_OVERLAY_MESSAGE: &str =
    "deskpilot is controlling your computer - press Esc to stop";

/// The deployment's safety settings (dsh-computer-use's `dryRun`, `blocklist`, `allowLaunch`,
/// `allowCloseWindow`, `requireApproval`, `overlay*`, `escStop`, `idleDisarmMs`, `actionDelayMs`).
#[derive(Debug, Clone, PartialEq)]
pub struct SafetyConfig {
    pub dry_run: bool,
    /// Case-insensitive substrings of action labels that are refused.
    pub blocklist: Vec<String>,
    pub allow_launch: bool,
    pub allow_close_window: bool,
    /// Ask the human (MCP elicitation) before every mutating action.
    pub require_approval: bool,
    pub overlay: OverlayMode,
    pub overlay_message: String,
    pub overlay_opacity: f32,
    /// Listen for a global Esc while the indicator is up.
    pub esc_stop: bool,
    /// With `overlay: auto`, how long after the last mutating action the indicator hides;
    /// zero keeps it up.
    pub idle_disarm: Duration,
    /// Pause after a mutating action before `verify` / `observe` look at the screen.
    pub action_delay: Duration,
    /// `cursor`: how the indicator marks the pointer while it is up.
    pub cursor: deskpilot_backend::PointerLook,
}

impl Default for SafetyConfig {
    fn default() -> Self {
        SafetyConfig {
            dry_run: false,
            blocklist: Vec::new(),
            allow_launch: true,
            allow_close_window: true,
            require_approval: false,
            overlay: OverlayMode::Auto,
            overlay_message: DEFAULT_OVERLAY_MESSAGE.to_string(),
            overlay_opacity: 0.85,
            esc_stop: true,
            idle_disarm: Duration::from_secs(60),
            action_delay: Duration::from_millis(60),
            cursor: deskpilot_backend::PointerLook::Agent,
        }
    }
}

/// What kind of mutation is asked for, where a policy switch governs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutation {
    Launch,
    CloseWindow,
    Other,
}

/// Why mutations are frozen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// A human pressed Esc.
    Escape,
    /// The indicator died unexpectedly.
    GuardExited(String),
    /// The input host died.
    HostExited(String),
}

impl StopReason {
    /// The short name `status` shows: `esc`, `guard-exited`, `host-exited`.
    pub fn name(&self) -> &'static str {
        match self {
            StopReason::Escape => "esc",
            StopReason::GuardExited(_) => "guard-exited",
            StopReason::HostExited(_) => "host-exited",
        }
    }

    fn describe(&self) -> String {
        match self {
            StopReason::Escape => "a human pressed Esc".to_string(),
            StopReason::GuardExited(why) => {
                format!("the overlay exited unexpectedly (guard-exited: {why})")
            }
            StopReason::HostExited(why) => {
                format!("the input host exited unexpectedly (host-exited: {why})")
            }
        }
    }
}

/// A tripped kill switch.
#[derive(Debug, Clone)]
pub struct Stop {
    pub reason: StopReason,
    pub at: Instant,
}

impl Stop {
    /// "a human pressed Esc 3.2 s ago".
    pub fn describe(&self) -> String {
        format!(
            "{} {:.1} s ago",
            self.reason.describe(),
            self.at.elapsed().as_secs_f64()
        )
    }
}

/// What the human answered to an approval question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// An explicit accept: the action proceeds.
    Accepted,
    /// Declined, cancelled or no answer in time; the text says which.
    Declined(String),
    /// Nobody can be asked (the client has no elicitation); the text says why.
    Unavailable(String),
}

/// Asks a human whether an action may run. Blocking; the MCP surface implements it with
/// elicitation.
pub trait Approver: Send + Sync {
    fn approve(&self, label: &str, timeout: Duration) -> Approval;

    /// Asks the person for the value of a secret nobody configured, on a page of deskpilot's
    /// own that the client opens for them (URL-mode elicitation): the value reaches deskpilot
    /// from the person's browser and never crosses the MCP channel. Blocking.
    fn ask_secret(&self, request: &SecretRequest, timeout: Duration) -> SecretAnswer {
        let _ = (request, timeout);
        SecretAnswer::Unavailable("this surface cannot ask for secrets".to_string())
    }
}

/// A secret the person is asked for, and what for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretRequest {
    /// The secret's name.
    pub name: String,
    /// Where it will go (`Edit "Password" in "Sign in" (zenity, pid 42)`).
    pub purpose: String,
}

/// The person's answer to a [`SecretRequest`].
pub enum SecretAnswer {
    /// The value, and whether to keep it in the desktop keyring.
    Given { value: String, keep: bool },
    /// Declined, cancelled or no answer in time; the text says which.
    Declined(String),
    /// Nobody can be asked this way; the text says why.
    Unavailable(String),
}

impl std::fmt::Debug for SecretAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SecretAnswer::Given { keep, .. } => f
                .debug_struct("Given")
                .field("keep", keep)
                .finish_non_exhaustive(),
            SecretAnswer::Declined(why) => f.debug_tuple("Declined").field(why).finish(),
            SecretAnswer::Unavailable(why) => f.debug_tuple("Unavailable").field(why).finish(),
        }
    }
}

/// The guard's state: kill switch, the mutation count, the indicator's idle deadline.
#[derive(Default)]
pub(crate) struct Guard {
    pub(crate) state: Mutex<GuardState>,
    pub(crate) wake: Condvar,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("state", &*self.lock())
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Default)]
pub(crate) struct GuardState {
    pub(crate) stop: Option<Stop>,
    pub(crate) mutations: u64,
    pub(crate) last_mutation: Option<Instant>,
    /// Why the indicator could not be shown the last time it was asked for.
    pub(crate) overlay_error: Option<String>,
    pub(crate) keeper_started: bool,
}

impl Guard {
    pub(crate) fn lock(&self) -> MutexGuard<'_, GuardState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Hooks the guard to the backend's indicator. Events hold only a weak reference.
    pub(crate) fn listen(self: &Arc<Self>, overlay: &dyn Overlay) {
        let weak: Weak<Guard> = Arc::downgrade(self);
        overlay.set_listener(Arc::new(move |event| {
            if let Some(guard) = weak.upgrade() {
                guard.trip(event);
            }
        }));
    }

    /// Lifts a stop the indicator's or input host's death caused, after the desktop they ran
    /// on was replaced and fresh ones took over; a human's Esc stays.
    pub(crate) fn forget_deaths(&self) {
        let mut s = self.lock();
        if s.stop
            .as_ref()
            .is_some_and(|stop| stop.reason != StopReason::Escape)
        {
            tracing::info!(
                "the overlay's death went with the old desktop: the kill switch is armed again"
            );
            s.stop = None;
        }
    }

    fn trip(&self, event: GuardEvent) {
        let reason = match event {
            GuardEvent::Escape => StopReason::Escape,
            GuardEvent::GuardExited(why) => StopReason::GuardExited(why),
            GuardEvent::HostExited(why) => StopReason::HostExited(why),
        };
        tracing::warn!(
            reason = reason.name(),
            "kill switch tripped: {}",
            reason.describe()
        );
        let mut s = self.lock();
        match &s.stop {
            // Another Esc restarts the cooldown; a death after a stop keeps the first reason.
            Some(stop) if reason != StopReason::Escape && stop.reason == StopReason::Escape => {}
            _ => {
                s.stop = Some(Stop {
                    reason,
                    at: Instant::now(),
                })
            }
        }
    }
}

/// What `status` reports about the gates.
#[derive(Debug, Clone)]
pub struct GuardStatus {
    pub stop: Option<Stop>,
    pub mutations: u64,
    pub overlay_visible: bool,
    pub overlay_pid: Option<u32>,
    /// Why the indicator could not be shown, when it could not.
    pub overlay_error: Option<String>,
    /// Whether an Esc would stop the agent right now.
    pub esc_armed: bool,
    /// The Esc presses the indicator heard, deskpilot's own and a human's.
    pub escapes: deskpilot_backend::Escapes,
    pub approver: bool,
}
