//! How the `dsh` profile words what the kit renders: dsh-computer-use's codes (`PATTERN_UNSUPPORTED`
//! for an action a control lacks, `BACKEND_START_FAILED` when there is no desktop to drive,
//! `ELEMENT_NOT_FOUND` for a stale path), its Troubleshooting table's "what to do" as hints,
//! and hints that name this profile's tools and parameters.

use deskpilot_engine::Screenshot;
use deskpilot_types::ErrorCode;
use rmcp::model::CallToolResult;

use crate::kit::Wording;

/// The `dsh` profile's wording.
#[derive(Debug)]
pub(crate) struct Dsh;

pub(crate) static WORDING: Dsh = Dsh;

/// An engine error as this profile renders it.
pub(crate) fn error(e: &deskpilot_engine::Error) -> CallToolResult {
    crate::kit::render::error(e, &WORDING)
}

impl Wording for Dsh {
    fn code(&self, code: ErrorCode) -> ErrorCode {
        match code {
            ErrorCode::ActionUnsupported => ErrorCode::PatternUnsupported,
            ErrorCode::NoDisplay => ErrorCode::BackendStartFailed,
            // ui_element addresses by path: an element that went away is a stale path.
            ErrorCode::StaleElement => ErrorCode::ElementNotFound,
            other => other,
        }
    }

    fn hint(&self, code: ErrorCode) -> &'static str {
        if let Some(hint) = crate::kit::render::common_hint(code) {
            return hint;
        }
        match code {
            ErrorCode::DesktopRestarting => {
                "Nothing was performed. A fresh desktop is coming up after the old one died: take a screenshot in a few seconds; element paths and coordinates from before are gone."
            }
            ErrorCode::BackendStartFailed | ErrorCode::NoDisplay => {
                "No desktop answers. If deskpilot started its own (--virtual-display), it is bringing a fresh one up: call computer { \"action\": \"screenshot\" } again in a few seconds. Otherwise start deskpilot inside a desktop session (DISPLAY set) or with `deskpilot serve --profile dsh --virtual-display`; `deskpilot doctor` says what is missing."
            }
            ErrorCode::NoReferenceScreenshot => {
                "Call computer { \"action\": \"screenshot\" } first. Or set coordinates: physical and pass real screen pixels."
            }
            ErrorCode::StoppedByHuman => {
                "Stop, report what you were doing and what is on screen, and wait. Call computer { \"action\": \"resume\" } only when the human explicitly says to continue."
            }
            ErrorCode::ResumeTooSoon => {
                "Ask the human first, then retry — the delay exists so the agent cannot immediately undo a human stop."
            }
            ErrorCode::BlockedTarget => {
                "This is the deployment's decision, not a bug. Stop and tell the human; do not try to reach the same target another way."
            }
            ErrorCode::PatternUnsupported
            | ErrorCode::ActionUnsupported
            | ErrorCode::ElementNotFound
            | ErrorCode::StaleElement => {
                "Take ui_element { \"action\": \"tree\" } again and use a fresh path; fall back to computer coordinates."
            }
            ErrorCode::ElementDisabled => {
                "Nothing was done: the element is greyed out now. Do what enables it first (fill the required fields, pick an item), then ui_element tree again and act on it."
            }
            ErrorCode::ValueNotSet => {
                "Both routes were tried (the accessibility interface, then focus + ctrl+a + typing) and the field holds what the message says: take computer { \"action\": \"screenshot\" } to see why (a validation message, a read-only field, a picker that wants a choice) and act on that."
            }
            ErrorCode::ElementCovered => {
                "Nothing was performed: a click there would not reach the element any more. Take ui_element { \"action\": \"tree\" } again and act on a fresh path."
            }
            ErrorCode::AmbiguousWindow => {
                "Pass the exact hwnd from app_window { \"action\": \"list\" }."
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
                "Nothing was performed. Bring the target window to the front (app_window focus), take a fresh screenshot, then act."
            }
            ErrorCode::OutsideTargetWindow => {
                "Nothing was performed. Pick a point inside the window, or take a screenshot of the whole screen to act elsewhere."
            }
            ErrorCode::PointOffScreen => {
                "Nothing was performed. Use a point inside a display; computer { \"action\": \"status\" } lists them."
            }
            ErrorCode::PointerNotLanded => {
                "Something moved or grabbed the pointer; take a fresh screenshot and retry once."
            }
            ErrorCode::FocusRefused => {
                "Another window kept the foreground; restore the window (app_window restore) or click inside it, then take a fresh screenshot."
            }
            ErrorCode::WindowNotFound => {
                "The window is gone or the hwnd is wrong: call app_window { \"action\": \"list\" } and use an hwnd from it."
            }
            ErrorCode::WindowMinimized => {
                "Restore the window first (app_window restore), or take a screenshot of the screen instead."
            }
            ErrorCode::WindowNotVisible => {
                "The window is not shown on screen; focus or restore it, or take a screenshot of the screen instead."
            }
            ErrorCode::RegionOutsideScreen => {
                "Pick a region inside a display: computer { \"action\": \"status\" } lists them."
            }
            ErrorCode::WindowOpFailed => {
                "The window manager did not apply it; take a screenshot to see the window's real state, then retry once."
            }
            ErrorCode::LaunchFailed => {
                "Check the command name or give its full path; arguments go in args, one per entry, without shell quoting."
            }
            ErrorCode::ClipboardUnavailable => {
                "Retry once; if the clipboard owner does not answer, type the text with computer type instead."
            }
            ErrorCode::AccessibilityUnavailable => {
                "Work from the screenshot (computer click by coordinates, computer ocr) instead; `deskpilot doctor` checks the accessibility bus."
            }
            ErrorCode::ActionDisabled => {
                "Nothing was performed: the deployment does not allow this action (allowLaunch / allowCloseWindow). Tell the human, or reach the goal without it."
            }
            ErrorCode::WaitTimeout => {
                "The message says what kept changing or what exists instead: wait again with a longer timeoutMs, or take a screenshot and act on what is there."
            }
            ErrorCode::OcrUnavailable => {
                "Reading text off pixels does not work here (the message says why); use ui_element tree or a screenshot instead."
            }
            ErrorCode::OcrLanguageMissing => {
                "Call ocr again with a lang from the installed list in the message (or leave lang out), or ask the human to install it."
            }
            ErrorCode::SkillExists => {
                "Pass overwrite: true to replace it, or use action append to extend it."
            }
            ErrorCode::SkillTooLong => {
                "Keep it to the hotkeys, menu paths and pitfalls that matter: 4000 characters at most (the merged text for append)."
            }
            ErrorCode::SkillBuiltin => {
                "Built-in skills cannot be removed: save a user skill with the same app to override it."
            }
            ErrorCode::SkillsReadOnly => {
                "Skills cannot be written here (skills: false, or no user directory); work without saving, or ask the human to set skillsDir."
            }
            ErrorCode::SkillsReloadFailed => {
                "The skill directory could not be read (the message says why); call app_skill again without refresh, or ask the human to fix it."
            }
            ErrorCode::CaptureFailed | ErrorCode::PlatformError => {
                "Retry once; if it fails again run `deskpilot doctor` and report its output."
            }
            ErrorCode::ForeignReference => "Take your own screenshot on this connection, then act.",
            ErrorCode::Cancelled => {
                "The call was cancelled before it finished: what was still to come was not done. Call again if it is still wanted."
            }
            _ => "Read the message; retry once, then report it.",
        }
    }

    fn unverifiable(&self, _route: deskpilot_engine::Route) -> &'static str {
        "pass verify: true or observe: true, or take a screenshot, to see what changed"
    }

    fn image(&self, kind: &str, shot: &Screenshot, what: &str) -> CallToolResult {
        super::envelope::observation(kind, shot, what)
    }
}
