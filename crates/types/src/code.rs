//! Stable error codes, the strings agents match on, each with a one-line hint.
//!
//! Codes are part of the public contract: never rename one. Where a seed document names a
//! code (`WINDOW_NOT_FOUND`, `AMBIGUOUS_WINDOW`, …) the same spelling is used here.

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
        }
    }

    /// One line telling the agent what to do next.
    pub const fn hint(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "Fix the argument named in the message and call again.",
            ErrorCode::WindowNotFound => {
                "The window is gone or the id is wrong: call list_windows and use an id from its answer."
            }
            ErrorCode::WindowMinimized => {
                "Restore the window first (window action restore), or screenshot the screen instead."
            }
            ErrorCode::WindowNotVisible => {
                "The window is not shown on screen; focus or restore it, or screenshot the screen instead."
            }
            ErrorCode::RegionOutsideScreen => {
                "Pick a region inside a monitor: status lists the monitors and their bounds."
            }
            ErrorCode::UnknownScreenshot => {
                "That screenshot_id is unknown or too old: take a new screenshot and use its id."
            }
            ErrorCode::NoDisplay => {
                "Start deskpilot inside a desktop session (DISPLAY set), or use `deskpilot serve --virtual-display`; `deskpilot doctor` says what is missing."
            }
            ErrorCode::CaptureFailed => {
                "Retry once; if it fails again run `deskpilot doctor` and report its output."
            }
            ErrorCode::PlatformError => "Retry once; if it persists run `deskpilot doctor`.",
            ErrorCode::NoReferenceScreenshot => {
                "Take a screenshot first and read x/y off it, or pass coordinates \"physical\" with real screen pixels."
            }
            ErrorCode::TargetWindowGone => {
                "Nothing was performed. Take a fresh screenshot and act on what is actually there."
            }
            ErrorCode::TargetWindowChanged => {
                "Nothing was performed. Take a fresh screenshot; the old coordinates are meaningless."
            }
            ErrorCode::TargetWindowMoved => {
                "Nothing was performed. Take a fresh screenshot, then act."
            }
            ErrorCode::ClickWrongWindow => {
                "Nothing was performed. Bring the target window to the front (window focus), take a fresh screenshot, then act."
            }
            ErrorCode::OutsideTargetWindow => {
                "Nothing was performed. Pick a point inside the window, or take a screenshot of the screen to act elsewhere."
            }
            ErrorCode::PointOffScreen => {
                "Nothing was performed. Use a point inside a monitor; status lists their bounds."
            }
            ErrorCode::PointerNotLanded => {
                "Something moved or grabbed the pointer; take a fresh screenshot and retry once."
            }
            ErrorCode::ToolDisabled => {
                "This server was started without that tool (--tools / --exclude-tools); use another tool or ask the user to enable it."
            }
            ErrorCode::AmbiguousWindow => {
                "Pass the exact window_id from list_windows (the candidates are listed in the message)."
            }
            ErrorCode::FocusRefused => {
                "The window manager kept another window in front; restore the window (window action restore), or click inside it, then take a fresh screenshot."
            }
            ErrorCode::WindowOpFailed => {
                "The window manager did not apply it; take a screenshot to see the window's real state, then retry once or use another action."
            }
            ErrorCode::LaunchFailed => {
                "Check the command name or give its full path; arguments go in args, one per entry, without shell quoting."
            }
            ErrorCode::ClipboardUnavailable => {
                "Retry once; if the clipboard owner does not answer, set the text again with clipboard_write or type it with type_text."
            }
            ErrorCode::StaleElement => {
                "The window changed since that snapshot: take get_window_state again and use its indexes or tokens."
            }
            ErrorCode::ElementNotFound => {
                "Use an index or token listed in the latest get_window_state (or find_elements) answer."
            }
            ErrorCode::AccessibilityUnavailable => {
                "Work from the screenshot (click by coordinates) instead; `deskpilot doctor` checks the accessibility bus."
            }
            ErrorCode::BlockedTarget => {
                "This is the deployment's decision, not a bug. Stop and tell the human; do not try to reach the same target another way."
            }
            ErrorCode::ActionDisabled => {
                "Nothing was performed: the deployment does not allow this action. Tell the human, or reach the goal without it."
            }
            ErrorCode::WaitTimeout => {
                "The message says what kept changing or what exists instead: wait again with a longer timeout_ms, or take a screenshot and act on what is there."
            }
            ErrorCode::StoppedByHuman => {
                "Stop, report what you were doing and what is on screen, and wait. Call resume only when the human explicitly says to continue."
            }
            ErrorCode::ResumeTooSoon => {
                "Ask the human first, then retry: the delay exists so the agent cannot immediately undo a human stop."
            }
            ErrorCode::ApprovalUnavailable | ErrorCode::ApprovalDenied => {
                "Nothing was performed. Ask the human to approve, or operate differently."
            }
            ErrorCode::ShellUnavailable => {
                "Shell tools cannot work on this machine: install bash (or PowerShell on Windows), or do the step another way."
            }
            ErrorCode::CommandTimeout => {
                "The command was killed and the session restored (see what was lost); rerun it with a longer timeout_ms, or make it non-interactive."
            }
            ErrorCode::CommandFailed => {
                "Read the diagnosis: it says why and whether retrying helps; fix the command or the path first."
            }
            ErrorCode::VerificationFailed => {
                "The command ran but its effect is not there: read each failed check and the diagnosis, then change the command rather than repeating it."
            }
            ErrorCode::Internal => {
                "This is a deskpilot bug: retry once, then report it with the message."
            }
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
    fn serde_spelling_matches_as_str_and_hints_are_one_line() {
        for code in ErrorCode::ALL {
            let json = serde_json::to_value(code).unwrap();
            assert_eq!(json, serde_json::Value::from(code.as_str()));
            assert!(!code.hint().is_empty());
            assert!(!code.hint().contains('\n'), "hints are one line: {code}");
        }
    }
}
