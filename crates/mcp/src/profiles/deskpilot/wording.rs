//! How the `deskpilot` profile words what the kit renders: hints that name this profile's
//! tools and parameters, the advice for an unverified effect, and the screenshot text.

use deskpilot_engine::Screenshot;
use deskpilot_types::ErrorCode;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

use crate::kit::{Wording, image};

/// The `deskpilot` profile's wording.
#[derive(Debug)]
pub(crate) struct Deskpilot;

pub(crate) static WORDING: Deskpilot = Deskpilot;

/// An engine error as this profile renders it.
pub(crate) fn error(e: &deskpilot_engine::Error) -> CallToolResult {
    crate::kit::render::error(e, &WORDING)
}

impl Wording for Deskpilot {
    fn hint(&self, code: ErrorCode) -> &'static str {
        if let Some(hint) = crate::kit::render::common_hint(code) {
            return hint;
        }
        if let Some(hint) = crate::kit::context::pick_hint(code) {
            return hint;
        }
        match code {
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
            ErrorCode::DesktopRestarting => {
                "Nothing was performed. deskpilot is bringing a fresh virtual desktop up after the old one's X server died: call status in a few seconds, then take a new screenshot; windows, screenshot ids and element refs from before are gone."
            }
            ErrorCode::NoDisplay => {
                "No desktop answers. If deskpilot started its own (--virtual-display), it is bringing a fresh one up: call status again in a few seconds. Otherwise start deskpilot inside a desktop session (DISPLAY set), or use `deskpilot serve --virtual-display`; `deskpilot doctor` says what is missing."
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
                "The window's structure changed since that snapshot (the message says how): take get_window_state again and use its new tokens."
            }
            ErrorCode::ElementNotFound => {
                "Use an index or token listed in the latest get_window_state (or find_elements) answer."
            }
            ErrorCode::ElementDisabled => {
                "Nothing was done: the element is greyed out now. Do what enables it first (fill the required fields, pick an item), or wait_for it to become enabled, then act on it again."
            }
            ErrorCode::ValueNotSet => {
                "Both routes were tried (the accessibility interface, then focus + ctrl+a + typing) and the field holds what the message says: take a screenshot to see why (a validation message, a read-only field, a picker that wants a choice from its list) and act on that."
            }
            ErrorCode::ElementCovered => {
                "Nothing was performed: a click there would not reach the element any more. Read the window (get_window_state) or the page (browser_snapshot) again and act on the fresh tokens."
            }
            ErrorCode::ForeignReference => {
                "Take your own screenshot (or get_window_state) on this connection and use its screenshot_id or tokens."
            }
            ErrorCode::ActionUnsupported => {
                "Use perform_action with one of the actions the message lists, set_value only on editable elements, or click / type_text instead."
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
            ErrorCode::OcrUnavailable => {
                "Reading text off pixels does not work here (the message says why and how to fix it); use get_window_state or a screenshot instead."
            }
            ErrorCode::OcrLanguageMissing => {
                "Call ocr again with a lang from the installed list in the message (or leave lang out), or ask the human to install the language."
            }
            ErrorCode::SkillExists => {
                "Pass overwrite: true to replace it, or use action append to extend it."
            }
            ErrorCode::SkillTooLong => {
                "Shorten it to the hotkeys, menu paths and pitfalls that matter (4000 characters at most, the merged text for append)."
            }
            ErrorCode::SkillBuiltin => {
                "Built-in skills cannot be removed: save a user skill for the same app to override it."
            }
            ErrorCode::SkillsReadOnly => {
                "Skills cannot be written here (switched off, or no user directory); work without saving, or ask the human to set skillsDir."
            }
            ErrorCode::SkillsReloadFailed => {
                "The skill directory could not be read (the message says why); call app_skill again without refresh, or ask the human to fix the directory."
            }
            ErrorCode::MemoryUnavailable => {
                "Work without memory: list_windows and get_window_state show what is there now; the message says how a human can turn memory on or fix its directory."
            }
            ErrorCode::Cancelled => {
                "The call was cancelled before it finished: what was still to come was not done. Call again if it is still wanted."
            }
            _ => "Read the message; retry once, then report it.",
        }
    }

    fn unverifiable(&self, route: deskpilot_engine::Route) -> &'static str {
        match route {
            deskpilot_engine::Route::Shell => {
                "the exit code and output above are the command's own word; check the result with another command or shell_exec_verified"
            }
            _ => "pass verify: true, or take a screenshot, to see what changed",
        }
    }

    fn image(&self, kind: &str, shot: &Screenshot, what: &str) -> CallToolResult {
        image_result(kind, shot, what)
    }
}

/// A successful result: `text` for the model, `structured` as its structured content.
pub(crate) fn done(text: String, structured: serde_json::Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

/// The text + image + structured result every image-returning tool shares.
pub(crate) fn image_result(kind: &str, shot: &Screenshot, what: &str) -> CallToolResult {
    let v = &shot.view;
    let format = image::format_name(shot.image.format);
    let head = format!(
        "{kind} {id}: {w}x{h} {fmt} ({kb} KB) of {what} at {cap}, scale {scale:.4}.\n\
         Coordinates: x/y read off this image map to physical = ({cx}, {cy}) + image / {scale:.4}; \
         pass screenshot_id {id} with them.",
        kind = kind,
        id = shot.id,
        w = v.width,
        h = v.height,
        fmt = format.to_uppercase(),
        kb = shot.image.bytes.len().div_ceil(1024),
        cap = v.capture,
        scale = v.scale,
        cx = v.capture.x,
        cy = v.capture.y,
    );
    image::answer_linkable(
        head,
        shot,
        json!({
            "screenshot_id": shot.id,
            "view": v,
            "format": format,
            "bytes": shot.image.bytes.len(),
            "window": shot.window,
            "masked_regions": shot.masked_regions,
            "notes": shot.notes,
            "timings_ms": {
                "capture": shot.capture_time.as_secs_f64() * 1e3,
                "resize": shot.image.resize_time.as_secs_f64() * 1e3,
                "encode": shot.image.encode_time.as_secs_f64() * 1e3,
            },
        }),
    )
}
