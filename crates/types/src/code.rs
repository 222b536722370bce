//! Stable error codes, the strings agents match on. What to do about one is worded by each
//! MCP profile (its hints name its own tools).
//!
//! Codes are part of the public contract: never rename one. Where a system deskpilot stands
//! in for (dsh-computer-use, DesktopOS, computer-use-mcp) names a code (`WINDOW_NOT_FOUND`,
//! `AMBIGUOUS_WINDOW`, …) the same spelling is used here.

use serde::{Deserialize, Serialize};

/// Every error code a deskpilot tool can return.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum ErrorCode {
    /// An argument is missing, malformed or out of range.
    InvalidArgument,
    /// No window with the given id exists (any more).
    WindowNotFound,
    /// The window exists but is minimized, so it has no pixels on screen.
    WindowMinimized,
    /// The window exists but is not mapped / shown.
    WindowNotVisible,
    /// A requested region lies outside every monitor.
    RegionOutsideScreen,
    /// A `screenshot_id` that was never issued or has been forgotten.
    UnknownScreenshot,
    /// No display / desktop session can be reached.
    NoDisplay,
    /// The desktop went away and deskpilot is bringing a fresh one up in its place.
    DesktopRestarting,
    /// Grabbing pixels failed.
    CaptureFailed,
    /// The platform refused or failed a call in a way not covered above.
    PlatformError,
    /// A coordinate action ran before any screenshot, so image space is undefined.
    NoReferenceScreenshot,
    /// The window the screenshot was pinned to no longer exists.
    TargetWindowGone,
    /// The pinned window id now belongs to another process (the app restarted).
    TargetWindowChanged,
    /// The pinned window moved or was resized since the screenshot.
    TargetWindowMoved,
    /// Another application's window is under the point.
    ClickWrongWindow,
    /// The point lies outside the window the screenshot was pinned to.
    OutsideTargetWindow,
    /// The point lies outside every monitor.
    PointOffScreen,
    /// The pointer did not reach the requested point, even after a retry.
    PointerNotLanded,
    /// The tool is disabled by `--tools` / `--exclude-tools`.
    ToolDisabled,
    /// A `titleMatch` matched several windows.
    AmbiguousWindow,
    /// The window did not become the active window, even after a retry.
    FocusRefused,
    /// The window manager did not apply a window operation in time.
    WindowOpFailed,
    /// A `launch` command could not be started.
    LaunchFailed,
    /// The clipboard could not be read or written (no answer from its owner, or no selection support).
    ClipboardUnavailable,
    /// An element index or token from an older snapshot.
    StaleElement,
    /// No element with that index or token in the snapshot.
    ElementNotFound,
    /// A screenshot id or element token that another client's session was issued.
    ForeignReference,
    /// The element does not support that action (e.g. setting the value of a label).
    ActionUnsupported,
    /// No OCR engine can run here (its library is not installed, or the platform has none).
    OcrUnavailable,
    /// An OCR language was asked for whose data is not installed.
    OcrLanguageMissing,
    /// A user skill for that app exists and `overwrite` was not given.
    SkillExists,
    /// A skill body (or the merged body of an append) is over 4000 characters.
    SkillTooLong,
    /// A built-in skill cannot be removed, only overridden.
    SkillBuiltin,
    /// The skill library has no writable user directory (switched off, or none configured).
    SkillsReadOnly,
    /// The skill directories could not be re-read.
    SkillsReloadFailed,
    /// The window's accessibility tree cannot be read (no bus, the app is not accessible, it timed out).
    AccessibilityUnavailable,
    /// The action's label matched an entry of the deployment's `blocklist`.
    BlockedTarget,
    /// The deployment switched this kind of action off (`allowLaunch`, `allowCloseWindow`).
    ActionDisabled,
    /// `wait_for` ran out of time.
    WaitTimeout,
    /// A human pressed Esc (or the overlay / input host died): mutating actions are frozen until `resume`.
    StoppedByHuman,
    /// `resume` was called less than 5 seconds after the stop.
    ResumeTooSoon,
    /// `requireApproval` is on but the client cannot ask the human (no MCP elicitation).
    ApprovalUnavailable,
    /// `requireApproval` is on and the human did not accept the action.
    ApprovalDenied,
    /// No shell could be started (none on PATH, or it would not run).
    ShellUnavailable,
    /// A shell command outlived its timeout; it was killed and the session restored.
    CommandTimeout,
    /// A shell command the tool depends on failed (e.g. `cd` into a missing directory).
    CommandFailed,
    /// `shell_exec_verified`: the expectations still did not hold after the retries.
    VerificationFailed,
    /// A bug in deskpilot.
    Internal,
    /// The element lacks the control pattern the action needs (dsh-computer-use's name for
    /// `ACTION_UNSUPPORTED`, used by the `dsh` profile).
    PatternUnsupported,
    /// The desktop host could not be started (dsh-computer-use's name for `NO_DISPLAY`, used by the
    /// `dsh` profile).
    BackendStartFailed,
    /// No browser can be launched or reached (none installed, it would not start, or nothing
    /// listens on the DevTools port).
    BrowserUnavailable,
    /// No page (browser target) with that id in this session's browsers.
    PageNotFound,
    /// Another element covers the point a browser click would land on.
    ElementCovered,
    /// A page script (`browser_eval`) threw.
    ScriptFailed,
    /// The person cancelled a UI context pick.
    PickCancelled,
    /// Nobody picked and approved a UI context within the time.
    PickTimeout,
    /// The person closed the UI context control window without approving.
    PickWindowClosed,
    /// The UI context endpoint cannot serve (its port is taken, or it cannot start).
    PickerUnavailable,
    /// Memory is switched off, has no directory, or its files cannot be read or written.
    MemoryUnavailable,
    /// A control named by its text matches several controls: the candidates are listed, none is guessed.
    AmbiguousElement,
    /// `set_value` did not take: the element read otherwise after the accessibility interface
    /// and after typing the text; the message says what it holds.
    ValueNotSet,
    /// The element is disabled (greyed out) now: a click or a value would do nothing.
    ElementDisabled,
    /// The client took the call back (`notifications/cancelled`, `tasks/cancel`) before it
    /// finished: what was still to come was not done.
    Cancelled,
    /// The secret's scope (`[secrets.NAME]` windows / origins) does not include the target.
    SecretOutOfScope,
    /// A secret goes only into a password field unless its scope says `anyField = true`.
    SecretNotPasswordField,
    /// No secret of that name in the file, the environment, the keyring, or from the person.
    SecretUnknown,
    /// The secrets file can be read by other users (or is not a plain file): it is refused.
    SecretsFilePermissions,
}

impl ErrorCode {
    /// The stable string, e.g. `"WINDOW_NOT_FOUND"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::WindowNotFound => "WINDOW_NOT_FOUND",
            ErrorCode::WindowMinimized => "WINDOW_MINIMIZED",
            ErrorCode::WindowNotVisible => "WINDOW_NOT_VISIBLE",
            ErrorCode::RegionOutsideScreen => "REGION_OUTSIDE_SCREEN",
            ErrorCode::UnknownScreenshot => "UNKNOWN_SCREENSHOT",
            ErrorCode::NoDisplay => "NO_DISPLAY",
            ErrorCode::DesktopRestarting => "DESKTOP_RESTARTING",
            ErrorCode::CaptureFailed => "CAPTURE_FAILED",
            ErrorCode::PlatformError => "PLATFORM_ERROR",
            ErrorCode::NoReferenceScreenshot => "NO_REFERENCE_SCREENSHOT",
            ErrorCode::TargetWindowGone => "TARGET_WINDOW_GONE",
            ErrorCode::TargetWindowChanged => "TARGET_WINDOW_CHANGED",
            ErrorCode::TargetWindowMoved => "TARGET_WINDOW_MOVED",
            ErrorCode::ClickWrongWindow => "CLICK_WRONG_WINDOW",
            ErrorCode::OutsideTargetWindow => "OUTSIDE_TARGET_WINDOW",
            ErrorCode::PointOffScreen => "POINT_OFF_SCREEN",
            ErrorCode::PointerNotLanded => "POINTER_NOT_LANDED",
            ErrorCode::ToolDisabled => "TOOL_DISABLED",
            ErrorCode::AmbiguousWindow => "AMBIGUOUS_WINDOW",
            ErrorCode::FocusRefused => "FOCUS_REFUSED",
            ErrorCode::WindowOpFailed => "WINDOW_OP_FAILED",
            ErrorCode::LaunchFailed => "LAUNCH_FAILED",
            ErrorCode::ClipboardUnavailable => "CLIPBOARD_UNAVAILABLE",
            ErrorCode::StaleElement => "STALE_ELEMENT",
            ErrorCode::ElementNotFound => "ELEMENT_NOT_FOUND",
            ErrorCode::ForeignReference => "FOREIGN_REFERENCE",
            ErrorCode::ActionUnsupported => "ACTION_UNSUPPORTED",
            ErrorCode::OcrUnavailable => "OCR_UNAVAILABLE",
            ErrorCode::OcrLanguageMissing => "OCR_LANGUAGE_MISSING",
            ErrorCode::SkillExists => "SKILL_EXISTS",
            ErrorCode::SkillTooLong => "SKILL_TOO_LONG",
            ErrorCode::SkillBuiltin => "SKILL_BUILTIN",
            ErrorCode::SkillsReadOnly => "SKILLS_READ_ONLY",
            ErrorCode::SkillsReloadFailed => "SKILLS_RELOAD_FAILED",
            ErrorCode::AccessibilityUnavailable => "ACCESSIBILITY_UNAVAILABLE",
            ErrorCode::BlockedTarget => "BLOCKED_TARGET",
            ErrorCode::ActionDisabled => "ACTION_DISABLED",
            ErrorCode::WaitTimeout => "WAIT_TIMEOUT",
            ErrorCode::StoppedByHuman => "STOPPED_BY_HUMAN",
            ErrorCode::ResumeTooSoon => "RESUME_TOO_SOON",
            ErrorCode::ApprovalUnavailable => "APPROVAL_UNAVAILABLE",
            ErrorCode::ApprovalDenied => "APPROVAL_DENIED",
            ErrorCode::ShellUnavailable => "SHELL_UNAVAILABLE",
            ErrorCode::CommandTimeout => "COMMAND_TIMEOUT",
            ErrorCode::CommandFailed => "COMMAND_FAILED",
            ErrorCode::VerificationFailed => "VERIFICATION_FAILED",
            ErrorCode::Internal => "INTERNAL",
            ErrorCode::PatternUnsupported => "PATTERN_UNSUPPORTED",
            ErrorCode::BackendStartFailed => "BACKEND_START_FAILED",
            ErrorCode::BrowserUnavailable => "BROWSER_UNAVAILABLE",
            ErrorCode::PageNotFound => "PAGE_NOT_FOUND",
            ErrorCode::ElementCovered => "ELEMENT_COVERED",
            ErrorCode::ScriptFailed => "SCRIPT_FAILED",
            ErrorCode::PickCancelled => "PICK_CANCELLED",
            ErrorCode::PickTimeout => "PICK_TIMEOUT",
            ErrorCode::PickWindowClosed => "PICK_WINDOW_CLOSED",
            ErrorCode::PickerUnavailable => "PICKER_UNAVAILABLE",
            ErrorCode::MemoryUnavailable => "MEMORY_UNAVAILABLE",
            ErrorCode::AmbiguousElement => "AMBIGUOUS_ELEMENT",
            ErrorCode::ValueNotSet => "VALUE_NOT_SET",
            ErrorCode::ElementDisabled => "ELEMENT_DISABLED",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::SecretOutOfScope => "SECRET_OUT_OF_SCOPE",
            ErrorCode::SecretNotPasswordField => "SECRET_NOT_PASSWORD_FIELD",
            ErrorCode::SecretUnknown => "SECRET_UNKNOWN",
            ErrorCode::SecretsFilePermissions => "SECRETS_FILE_PERMISSIONS",
        }
    }

    /// Every code, for documentation and tests.
    pub const ALL: &'static [ErrorCode] = &[
        ErrorCode::InvalidArgument,
        ErrorCode::WindowNotFound,
        ErrorCode::WindowMinimized,
        ErrorCode::WindowNotVisible,
        ErrorCode::RegionOutsideScreen,
        ErrorCode::UnknownScreenshot,
        ErrorCode::NoDisplay,
        ErrorCode::DesktopRestarting,
        ErrorCode::CaptureFailed,
        ErrorCode::PlatformError,
        ErrorCode::NoReferenceScreenshot,
        ErrorCode::TargetWindowGone,
        ErrorCode::TargetWindowChanged,
        ErrorCode::TargetWindowMoved,
        ErrorCode::ClickWrongWindow,
        ErrorCode::OutsideTargetWindow,
        ErrorCode::PointOffScreen,
        ErrorCode::PointerNotLanded,
        ErrorCode::ToolDisabled,
        ErrorCode::AmbiguousWindow,
        ErrorCode::FocusRefused,
        ErrorCode::WindowOpFailed,
        ErrorCode::LaunchFailed,
        ErrorCode::ClipboardUnavailable,
        ErrorCode::StaleElement,
        ErrorCode::ElementNotFound,
        ErrorCode::ForeignReference,
        ErrorCode::ActionUnsupported,
        ErrorCode::OcrUnavailable,
        ErrorCode::OcrLanguageMissing,
        ErrorCode::SkillExists,
        ErrorCode::SkillTooLong,
        ErrorCode::SkillBuiltin,
        ErrorCode::SkillsReadOnly,
        ErrorCode::SkillsReloadFailed,
        ErrorCode::AccessibilityUnavailable,
        ErrorCode::BlockedTarget,
        ErrorCode::ActionDisabled,
        ErrorCode::WaitTimeout,
        ErrorCode::StoppedByHuman,
        ErrorCode::ResumeTooSoon,
        ErrorCode::ApprovalUnavailable,
        ErrorCode::ApprovalDenied,
        ErrorCode::ShellUnavailable,
        ErrorCode::CommandTimeout,
        ErrorCode::CommandFailed,
        ErrorCode::VerificationFailed,
        ErrorCode::Internal,
        ErrorCode::PatternUnsupported,
        ErrorCode::BackendStartFailed,
        ErrorCode::BrowserUnavailable,
        ErrorCode::PageNotFound,
        ErrorCode::ElementCovered,
        ErrorCode::ScriptFailed,
        ErrorCode::PickCancelled,
        ErrorCode::PickTimeout,
        ErrorCode::PickWindowClosed,
        ErrorCode::PickerUnavailable,
        ErrorCode::MemoryUnavailable,
        ErrorCode::AmbiguousElement,
        ErrorCode::ValueNotSet,
        ErrorCode::ElementDisabled,
        ErrorCode::Cancelled,
        ErrorCode::SecretOutOfScope,
        ErrorCode::SecretNotPasswordField,
        ErrorCode::SecretUnknown,
        ErrorCode::SecretsFilePermissions,
    ];
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_spelling_matches_as_str() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::Value::from(code.as_str()));
        }
    }
}
