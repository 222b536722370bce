//! The engine's error type: every failure a tool can report, each with a stable code.

use deskpilot_types::{ErrorCode, Point, Rect, WindowId};

/// Why an engine operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument is malformed or out of range; the message names it.
    #[error("{message}")]
    InvalidArgument { message: String },
    /// The window id names no current window.
    #[error("no window with id {0} (it may have closed)")]
    WindowNotFound(WindowId),
    /// The window is minimized, so nothing of it is on screen.
    #[error("window {id} \"{title}\" is minimized")]
    WindowMinimized { id: WindowId, title: String },
    /// The window is not mapped or lies entirely off screen.
    #[error("window {id} \"{title}\" is not visible on any monitor")]
    WindowNotVisible { id: WindowId, title: String },
    /// A region that does not touch the desktop.
    #[error("region {region} is outside every monitor (the desktop is {desktop})")]
    RegionOutsideScreen { region: Rect, desktop: Rect },
    /// A `screenshot_id` that was never issued or was forgotten.
    #[error("screenshot {0} is unknown or too old")]
    UnknownScreenshot(u64),
    /// Image coordinates were given but no screenshot was taken yet.
    #[error("no screenshot has been taken yet, so image coordinates mean nothing")]
    NoReferenceScreenshot,
    /// The window the reference screenshot was pinned to is gone.
    #[error("window {0} (the screenshot's target) no longer exists")]
    TargetWindowGone(WindowId),
    /// The pinned window id now belongs to another process.
    #[error("window {id} belonged to pid {was:?} at the screenshot, now to pid {now:?}")]
    TargetWindowChanged {
        id: WindowId,
        was: Option<u32>,
        now: Option<u32>,
    },
    /// The pinned window moved or was resized.
    #[error("window {id} was at {was} in the screenshot and is at {now} now")]
    TargetWindowMoved { id: WindowId, was: Rect, now: Rect },
    /// Another application's window is under the point.
    #[error("the point ({}, {}) is covered by {other}", point.x, point.y)]
    ClickWrongWindow { point: Point, other: String },
    /// The point is outside the pinned window.
    #[error("the point ({}, {}) is outside the target window {window}", point.x, point.y)]
    OutsideTargetWindow { point: Point, window: Rect },
    /// The point is outside every monitor.
    #[error("the point ({}, {}) is outside every monitor", point.x, point.y)]
    PointOffScreen { point: Point },
    /// The pointer did not land, even after one retry.
    #[error("the pointer was sent to ({}, {}) but is at ({}, {})", requested.x, requested.y, landed.x, landed.y)]
    PointerNotLanded { requested: Point, landed: Point },
    /// A `title_match` that matches no window.
    #[error("no window's title or process name contains \"{needle}\"; windows now: {}", titles.join(", "))]
    NoWindowMatches { needle: String, titles: Vec<String> },
    /// A `title_match` that matches several windows.
    #[error("\"{needle}\" matches {} windows: {}", candidates.len(), candidates.join("; "))]
    AmbiguousWindow {
        needle: String,
        candidates: Vec<String>,
    },
    /// The window did not become active, even after a retry.
    #[error("window {id} \"{title}\" did not become the active window after two requests; active now: {}", active.as_deref().unwrap_or("none"))]
    FocusRefused {
        id: WindowId,
        title: String,
        active: Option<String>,
    },
    /// The window manager did not apply an operation.
    #[error("{op} of window {id} was not applied: {message}")]
    WindowOpFailed {
        op: &'static str,
        id: WindowId,
        message: String,
    },
    /// A program could not be started, or died before showing a window.
    #[error("cannot launch \"{command}\": {message}")]
    LaunchFailed { command: String, message: String },
    /// An element token from a snapshot that is no longer the newest of its window; `why`
    /// says what changed.
    #[error("{token} is from an older snapshot of its window: {why}")]
    StaleElement { token: String, why: String },
    /// A pointer click at the element's centre would not reach it: the toolkit's hit test
    /// there answers another element (the window changed under the snapshot).
    #[error("a click at ({}, {}), the centre of {token} ({role} \"{name}\") when it was read, would not reach it: the application says something else is there now", point.x, point.y)]
    ElementNotAtPoint {
        token: String,
        role: String,
        name: String,
        point: Point,
    },
    /// The element is disabled now (read again just before acting): a person's click or
    /// typing would do nothing, so nothing was done.
    #[error("{token} ({role} \"{name}\") is disabled now: nothing was done")]
    ElementDisabled {
        token: String,
        role: String,
        name: String,
    },
    /// `set_value` did not take: after the accessibility interface (when it had one) and
    /// after typing, the element reads otherwise; the payload says what it holds.
    #[error("{0}")]
    ValueNotSet(Box<NotSet>),
    /// The element does not support the action; the payload lists what it does offer.
    #[error("{0}")]
    ActionUnsupported(Box<Unsupported>),
    /// A screenshot id or element token that another client (another session) was issued.
    #[error("{what} belongs to another client's session; ids and tokens are per connection")]
    ForeignReference { what: String },
    /// No such element.
    #[error("no such element: {what}")]
    ElementNotFound { what: String },
    /// The clipboard failed.
    #[error("clipboard: {0}")]
    Clipboard(#[source] deskpilot_backend::Error),
    /// The platform backend failed.
    #[error(transparent)]
    Backend(#[from] deskpilot_backend::Error),
    /// An app-skill operation failed.
    #[error(transparent)]
    Skill(#[from] deskpilot_skills::SkillError),
    /// A bug: an invariant did not hold.
    #[error("internal error: {message}")]
    Internal { message: String },

    /// Memory is off, has no directory, or its files could not be read or written.
    #[error("{message}")]
    Memory { message: String },
    /// The action's label matched a blocklist entry.
    #[error("refused by the deployment's blocklist (entry \"{entry}\"): {label}")]
    BlockedTarget { label: String, entry: String },
    /// The deployment switched this kind of action off.
    #[error("{what} is switched off by the deployment ({key} = false): {label}")]
    ActionDisabled {
        what: &'static str,
        key: &'static str,
        label: String,
    },
    /// A wait ran out of time; `what` says what was last seen.
    #[error("gave up after {} ms: {what}", waited.as_millis())]
    WaitTimeout {
        waited: std::time::Duration,
        what: String,
    },
    /// The kill switch is tripped.
    #[error("mutating actions are stopped: {why}. Not performed: {label}")]
    StoppedByHuman { why: String, label: String },
    /// `resume` inside the cooldown.
    #[error("resume is refused for {} more ms: {why}; the pause gives the human time to read why the agent stopped", remaining.as_millis())]
    ResumeTooSoon {
        why: String,
        remaining: std::time::Duration,
    },
    /// Approval is required and nobody can be asked.
    #[error("requireApproval is on, but nobody can be asked ({reason}). Not performed: {label}")]
    ApprovalUnavailable { label: String, reason: String },
    /// Approval is required and the human did not accept.
    #[error("the human did not approve ({answer}). Not performed: {label}")]
    ApprovalDenied { label: String, answer: String },
    /// A failure a surface detected itself (shell sessions), with its code.
    #[error("{message}")]
    Coded { code: ErrorCode, message: String },
    /// A shell command outlived its timeout: it was killed with everything it started and the
    /// session restarted; `output` is what it printed until then.
    #[error("{command} did not finish within {} ms and was killed with everything it started; {}", output.duration.as_millis(), output.restart_note.as_deref().unwrap_or("the session was restarted"))]
    ShellTimeout {
        command: String,
        output: Box<deskpilot_shell::Output>,
    },
    /// A shell step deskpilot depends on failed (a `cd` into a missing directory); the
    /// diagnosis says why.
    #[error("{message}")]
    ShellFailed {
        message: String,
        diagnosis: Box<deskpilot_shell::Diagnosis>,
    },
    /// Dry run: the action passed every gate and stopped before reaching the OS. Not a
    /// failure; surfaces render it as "[dry run] Would …".
    #[error("[dry run] Would {would}")]
    DryRun { would: String },
    /// `WindowRef::App` names an app none of whose windows is open.
    #[error("no window of an app called \"{app}\" is open")]
    NoAppWindow { app: String },
    /// `WindowRef::App` names an app with several windows; `windows` are they.
    #[error("\"{app}\" has {} windows: {}", windows.len(), windows.iter().map(|w| format!("{} {}", w.id, w.label())).collect::<Vec<_>>().join("; "))]
    AmbiguousApp {
        app: String,
        windows: Vec<deskpilot_types::WindowInfo>,
    },
    /// Image coordinates outside the image they were read in; `point` is where they would be
    /// on screen, `capture` what the image shows.
    #[error("point ({x}, {y}) is outside the {width}x{height} image; image coordinates run from (0, 0) to ({}, {})", width.saturating_sub(1), height.saturating_sub(1))]
    OutsideImage {
        x: f64,
        y: f64,
        width: u32,
        height: u32,
        point: Point,
        capture: Rect,
    },
    /// A count outside the range its limit allows; `what` names the argument (`count`).
    #[error("{what} {} must be {}", range.value, range.limit.words())]
    OutOfRange {
        what: &'static str,
        range: crate::limits::OutOfRange,
    },
    /// The client took the call back while it was `doing` something; what was still to come
    /// was not done.
    #[error("cancelled by the client while {doing}")]
    Cancelled { doing: String },
    /// `WindowRef::App` with a window id that belongs to another app.
    #[error("window {id} belongs to {}, not to \"{app}\"", process.as_deref().unwrap_or("an unknown process"))]
    NotAppWindow {
        id: WindowId,
        app: String,
        process: Option<String>,
    },
}

impl Error {
    /// The stable code agents match on.
    pub fn code(&self) -> ErrorCode {
        use deskpilot_backend::Error as B;
        match self {
            Error::InvalidArgument { .. } => ErrorCode::InvalidArgument,
            Error::WindowNotFound(_)
            | Error::NoWindowMatches { .. }
            | Error::Backend(B::WindowNotFound(_)) => ErrorCode::WindowNotFound,
            Error::AmbiguousWindow { .. } => ErrorCode::AmbiguousWindow,
            Error::FocusRefused { .. } => ErrorCode::FocusRefused,
            Error::WindowOpFailed { .. } => ErrorCode::WindowOpFailed,
            Error::LaunchFailed { .. } => ErrorCode::LaunchFailed,
            Error::StaleElement { .. } => ErrorCode::StaleElement,
            Error::ForeignReference { .. } => ErrorCode::ForeignReference,
            Error::ActionUnsupported(_) => ErrorCode::ActionUnsupported,
            Error::ElementNotAtPoint { .. } => ErrorCode::ElementCovered,
            Error::ValueNotSet(_) => ErrorCode::ValueNotSet,
            Error::ElementDisabled { .. } => ErrorCode::ElementDisabled,
            Error::Cancelled { .. } => ErrorCode::Cancelled,
            Error::Backend(B::ConnectionLost {
                link: deskpilot_backend::Link::Display,
                ..
            }) => ErrorCode::NoDisplay,
            Error::Backend(B::ConnectionLost { .. }) => ErrorCode::AccessibilityUnavailable,
            Error::Backend(B::ElementGone { .. }) => ErrorCode::StaleElement,
            Error::ElementNotFound { .. } => ErrorCode::ElementNotFound,
            Error::Clipboard(B::NoDisplay { .. }) => ErrorCode::NoDisplay,
            Error::Clipboard(B::DesktopRestarting { .. }) => ErrorCode::DesktopRestarting,
            Error::Clipboard(_) => ErrorCode::ClipboardUnavailable,
            Error::WindowMinimized { .. } => ErrorCode::WindowMinimized,
            Error::WindowNotVisible { .. } => ErrorCode::WindowNotVisible,
            Error::RegionOutsideScreen { .. } | Error::Backend(B::OutsideDesktop { .. }) => {
                ErrorCode::RegionOutsideScreen
            }
            Error::UnknownScreenshot(_) => ErrorCode::UnknownScreenshot,
            Error::NoReferenceScreenshot => ErrorCode::NoReferenceScreenshot,
            Error::TargetWindowGone(_) => ErrorCode::TargetWindowGone,
            Error::TargetWindowChanged { .. } => ErrorCode::TargetWindowChanged,
            Error::TargetWindowMoved { .. } => ErrorCode::TargetWindowMoved,
            Error::ClickWrongWindow { .. } => ErrorCode::ClickWrongWindow,
            Error::OutsideTargetWindow { .. } => ErrorCode::OutsideTargetWindow,
            Error::PointOffScreen { .. } => ErrorCode::PointOffScreen,
            Error::PointerNotLanded { .. } => ErrorCode::PointerNotLanded,
            Error::Backend(B::NoDisplay { .. }) => ErrorCode::NoDisplay,
            Error::Backend(B::DesktopRestarting { .. }) => ErrorCode::DesktopRestarting,
            Error::Backend(B::OcrUnavailable { .. }) => ErrorCode::OcrUnavailable,
            Error::Backend(B::OcrLanguageMissing { .. }) => ErrorCode::OcrLanguageMissing,
            Error::Backend(_) => ErrorCode::PlatformError,
            Error::Internal { .. } => ErrorCode::Internal,
            Error::Memory { .. } => ErrorCode::MemoryUnavailable,
            Error::BlockedTarget { .. } => ErrorCode::BlockedTarget,
            Error::WaitTimeout { .. } => ErrorCode::WaitTimeout,
            Error::ActionDisabled { .. } => ErrorCode::ActionDisabled,
            Error::StoppedByHuman { .. } => ErrorCode::StoppedByHuman,
            Error::ResumeTooSoon { .. } => ErrorCode::ResumeTooSoon,
            Error::ApprovalUnavailable { .. } => ErrorCode::ApprovalUnavailable,
            Error::ApprovalDenied { .. } => ErrorCode::ApprovalDenied,
            Error::Coded { code, .. } => *code,
            Error::Skill(e) => {
                use deskpilot_skills::SkillError as S;
                match e {
                    S::Exists { .. } => ErrorCode::SkillExists,
                    S::TooLong { .. } => ErrorCode::SkillTooLong,
                    S::Builtin { .. } => ErrorCode::SkillBuiltin,
                    S::ReadOnly { .. } => ErrorCode::SkillsReadOnly,
                    S::ReloadFailed { .. } => ErrorCode::SkillsReloadFailed,
                    S::NotFound { .. } => ErrorCode::ElementNotFound,
                    S::Invalid(_) => ErrorCode::InvalidArgument,
                    S::Io { .. } => ErrorCode::PlatformError,
                }
            }
            Error::ShellTimeout { .. } => ErrorCode::CommandTimeout,
            Error::ShellFailed { .. } => ErrorCode::CommandFailed,
            // Never rendered as an error; a code is still needed for completeness.
            Error::DryRun { .. } => ErrorCode::InvalidArgument,
            Error::NoAppWindow { .. } => ErrorCode::WindowNotFound,
            Error::AmbiguousApp { .. } => ErrorCode::AmbiguousWindow,
            Error::NotAppWindow { .. } => ErrorCode::InvalidArgument,
            Error::OutsideImage { .. } => ErrorCode::InvalidArgument,
            Error::OutOfRange { .. } => ErrorCode::InvalidArgument,
        }
    }

    pub(crate) fn clipboard(e: deskpilot_backend::Error) -> Error {
        Error::Clipboard(e)
    }
}

impl Error {
    /// Why the error happened and what to do, from the diagnoser's rule table (category,
    /// whether retrying as is can help, a safe fix where one exists).
    pub fn diagnosis(&self) -> deskpilot_shell::Diagnosis {
        match self {
            Error::ShellFailed { diagnosis, .. } => (**diagnosis).clone(),
            _ => deskpilot_shell::diagnose(&format!("{}: {self}", self.code()), "", "", None, None),
        }
    }
}

/// An action an element does not support, and what it does offer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{token} ({role} \"{name}\") does not support {action}: {reason}; it offers [{}]{}", offered.join(", "), if *editable { " and editable text" } else { "" })]
pub struct Unsupported {
    pub token: String,
    pub role: String,
    pub name: String,
    pub action: String,
    /// The actions the element advertises.
    pub offered: Vec<String>,
    /// Whether it takes text (`set_value`).
    pub editable: bool,
    pub reason: String,
}

/// A value `set_value` could not make an element hold, and what it holds instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{token} ({role} \"{name}\") holds \"{read}\", not \"{wanted}\", {how}")]
pub struct NotSet {
    pub token: String,
    pub role: String,
    pub name: String,
    pub wanted: String,
    pub read: String,
    /// What was tried ("after setting it through the accessibility interface and after typing it").
    pub how: &'static str,
}
