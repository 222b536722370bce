//! The guard: an indicator that shows a human the machine is being driven, and the Esc that
//! stops it.
//!
//! A platform shows a click-through, never-focused border and label while the engine says so,
//! and reports to a listener what must stop the agent: a human's Esc (observed, never grabbed),
//! the indicator dying unexpectedly, or the input host dying. What a stop means — refusing every
//! later mutation until `resume` — is the engine's business, the same on every platform.

use std::sync::Arc;

use deskpilot_types::Rect;

use crate::error::Error;

/// Something that stops the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardEvent {
    /// A human pressed Esc while the indicator was up.
    Escape,
    /// The indicator went away without being asked to; the text says how.
    GuardExited(String),
    /// The connection that injects input died; the text says how.
    HostExited(String),
}

/// Who hears about [`GuardEvent`]s. Called from the guard's own threads.
pub type GuardListener = Arc<dyn Fn(GuardEvent) + Send + Sync>;

/// How the indicator looks and whether it listens for Esc.
#[derive(Debug, Clone, PartialEq)]
pub struct OverlayStyle {
    /// The label's text.
    pub message: String,
    /// 0.05–1; platforms without translucency draw it opaque.
    pub opacity: f32,
    /// Listen for a global Esc while shown.
    pub esc_stop: bool,
    /// How the pointer is marked while shown.
    pub cursor: PointerLook,
}

/// How the indicator marks the pointer while it is up (dsh-computer-use's `cursor`). The mark is
/// drawn by the indicator beside the system cursor — the user's cursor itself is never
/// changed, so there is nothing to restore on any exit path — and it never takes a click.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PointerLook {
    /// A ring around the pointer and an arrow in the indicator's colour over the system's.
    #[default]
    Agent,
    /// The ring only.
    Halo,
    /// No mark.
    Off,
}

impl PointerLook {
    /// `agent`, `halo` or `off` (the protocol word and the config value).
    pub fn as_str(self) -> &'static str {
        match self {
            PointerLook::Agent => "agent",
            PointerLook::Halo => "halo",
            PointerLook::Off => "off",
        }
    }

    /// The look a word names.
    pub fn parse(word: &str) -> Option<PointerLook> {
        match word.trim().to_ascii_lowercase().as_str() {
            "agent" => Some(PointerLook::Agent),
            "halo" => Some(PointerLook::Halo),
            "off" => Some(PointerLook::Off),
            _ => None,
        }
    }
}

/// The side of the square the pointer mark occupies, centred on the pointer.
pub const POINTER_MARK: u32 = 48;

/// Esc presses an indicator heard, counted by whose they were.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Escapes {
    /// deskpilot's own (announced with `expect_own_escape`): never a stop.
    pub own: u64,
    /// A human's while the indicator was up: each one stops.
    pub human: u64,
}

/// The indicator and kill-switch listener of one platform.
pub trait Overlay: Send + Sync {
    /// Registers who hears about stops. Called once, before anything is shown.
    fn set_listener(&self, listener: GuardListener);
    /// Shows the indicator (starting it when needed) and, with `style.esc_stop`, listens for a
    /// global Esc. Returns once it is up.
    fn show(&self, style: &OverlayStyle) -> Result<(), Error>;
    /// Hides the indicator; Esc is no longer listened for.
    fn hide(&self) -> Result<(), Error>;
    /// Whether the indicator is up.
    fn visible(&self) -> bool;
    /// The screen rectangles the indicator paints while visible, so frame comparisons can
    /// ignore them.
    fn regions(&self) -> Vec<Rect>;
    /// The side of the square around the pointer the indicator's pointer mark occupies while
    /// visible (it follows the pointer, so frame comparisons ignore that square wherever the
    /// pointer is); `None` when no mark is drawn.
    fn pointer_mark(&self) -> Option<u32> {
        None
    }
    /// deskpilot itself is about to press Esc: that press is not a human's.
    fn expect_own_escape(&self) {}
    /// The Esc presses heard so far, by whose they were.
    fn escapes(&self) -> Escapes {
        Escapes::default()
    }
    /// The indicator's process id, when it runs as a process of its own.
    fn pid(&self) -> Option<u32> {
        None
    }
    /// Takes the indicator down for good (the server is stopping): what follows is no death.
    fn shutdown(&self) {}
}

/// For platforms (and deployments) without an indicator: nothing is ever shown, so no Esc is
/// listened for either.
#[derive(Debug, Default)]
pub struct NoOverlay {
    /// Why there is none, for `status`.
    pub reason: String,
}

impl Overlay for NoOverlay {
    fn set_listener(&self, _listener: GuardListener) {}

    fn show(&self, _style: &OverlayStyle) -> Result<(), Error> {
        Err(Error::Unsupported {
            what: "overlay",
            reason: self.reason.clone(),
        })
    }

    fn hide(&self) -> Result<(), Error> {
        Ok(())
    }

    fn visible(&self) -> bool {
        false
    }

    fn regions(&self) -> Vec<Rect> {
        Vec::new()
    }
}
