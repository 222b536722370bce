//! How the `desktopos` profile words what the kit renders: hints that name DesktopOS's tools and
//! parameters (`handle`, `desktop_perceive`, `desktop_focus_window`), and its screenshot result
//! (`width`, `height`, `format`, the image).

use deskpilot_engine::{Screenshot, Verdict, VerifyTarget};
use deskpilot_types::ErrorCode;
use rmcp::model::CallToolResult;
use serde_json::json;

use crate::kit::{Wording, image};

/// The `desktopos` profile's wording.
#[derive(Debug)]
pub(crate) struct DesktopOsWording;

pub(crate) static WORDING: DesktopOsWording = DesktopOsWording;

/// An engine error as this profile renders it (with the diagnosis, as every profile's).
pub(crate) fn error(e: &deskpilot_engine::Error) -> CallToolResult {
    crate::kit::render::error(e, &WORDING)
}

impl Wording for DesktopOsWording {
    fn hint(&self, code: ErrorCode) -> &'static str {
        if let Some(hint) = crate::kit::render::common_hint(code) {
            return hint;
        }
        match code {
            ErrorCode::WindowNotFound | ErrorCode::TargetWindowGone => {
                "The handle is stale or wrong: call desktop_list_windows (or desktop_perceive) and use a handle from its answer."
            }
            ErrorCode::WindowMinimized | ErrorCode::WindowNotVisible => {
                "The window is minimized or not shown: desktop_focus_window { handle } restores it first."
            }
            ErrorCode::DesktopRestarting => {
                "Nothing was performed. A fresh desktop is coming up after the old one died: call desktop_perceive in a few seconds; handles from before are gone."
            }
            ErrorCode::NoDisplay => {
                "No desktop answers. If deskpilot started its own (--virtual-display), it is bringing a fresh one up: call desktop_perceive again in a few seconds. Otherwise start deskpilot inside a desktop session, or `deskpilot serve --profile desktopos --virtual-display`; `deskpilot doctor` says what is missing."
            }
            ErrorCode::ClickWrongWindow | ErrorCode::OutsideTargetWindow => {
                "Nothing was performed: another window is on top at that point. desktop_focus_window the target first, then desktop_perceive for its current rect."
            }
            ErrorCode::PointOffScreen => {
                "Nothing was performed: x/y are outside every monitor. desktop_perceive gives the windows' screen rects."
            }
            ErrorCode::PointerNotLanded => {
                "Something moved or grabbed the pointer; desktop_perceive and retry once."
            }
            ErrorCode::ToolDisabled => {
                "This server was started without that tool (DESKTOPOS_TOOLS / DESKTOPOS_TOOLS_EXCLUDE / --only); use another tool or ask the user to enable it."
            }
            ErrorCode::AmbiguousWindow | ErrorCode::AmbiguousElement => {
                "Several match: pick one of the candidates the message lists (a handle, or a more exact name)."
            }
            ErrorCode::FocusRefused => {
                "The window manager kept another window in front; click inside the window, then desktop_perceive."
            }
            ErrorCode::StaleElement | ErrorCode::ElementNotFound => {
                "Call desktop_elements { handle } again and use a name from its answer (or desktop_click with the control's rect centre)."
            }
            ErrorCode::ElementDisabled => {
                "Nothing was done: the element is greyed out now. Do what enables it first (fill the required fields, pick an item), then desktop_perceive again and act on it."
            }
            ErrorCode::ValueNotSet => {
                "Both routes were tried (the accessibility interface, then focus + ctrl+a + typing) and the field holds what the message says: desktop_perceive to see why (a validation message, a read-only field, a picker that wants a choice) and act on that."
            }
            ErrorCode::ElementCovered => {
                "Nothing was performed: a click there would not reach the control any more. Call desktop_elements { handle } (or the page's snapshot) again and act on what is there now."
            }
            ErrorCode::ActionUnsupported => {
                "The control has no invoke action: desktop_click at the centre of its rect instead."
            }
            ErrorCode::AccessibilityUnavailable => {
                "This app exposes no control tree (Electron/Chromium often): use desktop_cdp_* for Chromium pages, or desktop_click by coordinates."
            }
            ErrorCode::BlockedTarget => {
                "This is the deployment's decision, not a bug. Stop and tell the human; do not try to reach the same target another way."
            }
            ErrorCode::ActionDisabled => {
                "Nothing was performed: the deployment does not allow this action. Tell the human, or reach the goal without it."
            }
            ErrorCode::StoppedByHuman => {
                "Stop, report what you were doing, and wait until the human asks you to continue."
            }
            ErrorCode::ShellUnavailable => {
                "Shell tools cannot work on this machine: install bash (or PowerShell on Windows), or do the step another way."
            }
            ErrorCode::CommandTimeout => {
                "The command was killed and the session restored (see what was lost); rerun it with a longer timeout, or make it non-interactive."
            }
            ErrorCode::CommandFailed => {
                "Read the diagnosis: it says why and whether retrying helps; fix the command or the path first."
            }
            ErrorCode::VerificationFailed => {
                "The command ran but its effect is not there: read each failed check and the diagnosis, then change the command rather than repeating it."
            }
            ErrorCode::BrowserUnavailable => {
                "desktop_browser_launch a browser (or start one with --remote-debugging-port), then desktop_cdp_open."
            }
            ErrorCode::MemoryUnavailable => {
                "Work without memory: desktop_perceive shows what is there now; the message says how a human can turn memory on."
            }
            ErrorCode::Cancelled => {
                "The call was cancelled before it finished: what was still to come was not done. Call again if it is still wanted."
            }
            _ => {
                "Read the message and the diagnosis; retry once only when it says retrying can help."
            }
        }
    }

    fn unverifiable(&self, route: deskpilot_engine::Route) -> &'static str {
        match route {
            deskpilot_engine::Route::Shell => {
                "the exit code and output are the command's own word; shell_exec_verified checks the result"
            }
            _ => {
                "pass verify: true (with verifyRegion: the target's rect) to learn whether it changed anything"
            }
        }
    }

    fn image(&self, kind: &str, shot: &Screenshot, what: &str) -> CallToolResult {
        image_result(kind, shot, what)
    }

    /// DesktopOS's `diffRatio`, `changed` and `scope` (what `verifyRegion` made it sample).
    fn verdict_fields(&self, verdict: &Verdict, target: VerifyTarget) -> serde_json::Value {
        let scope = match target {
            VerifyTarget::Region(_) => "region",
            _ => "screen",
        };
        json!({ "diffRatio": verdict.ratio, "changed": verdict.changed, "scope": scope })
    }
}

/// DesktopOS's screenshot answer: the image with its size and format, and how its pixels map
/// to the screen.
pub(crate) fn image_result(kind: &str, shot: &Screenshot, what: &str) -> CallToolResult {
    let v = &shot.view;
    let head = format!(
        "{kind}: {w}x{h} {f} of {what} (screen area {cap}, scale {scale:.4}: screen = ({cx}, {cy}) + image / scale).",
        w = v.width,
        h = v.height,
        f = image::format_name(shot.image.format).to_uppercase(),
        cap = v.capture,
        scale = v.scale,
        cx = v.capture.x,
        cy = v.capture.y,
    );
    image::answer(head, shot, image_json(shot))
}

/// The structured part of DesktopOS's screenshot answer: size, format and the mapping.
pub(crate) fn image_json(shot: &Screenshot) -> serde_json::Value {
    let v = &shot.view;
    json!({
        "width": v.width,
        "height": v.height,
        "format": image::format_name(shot.image.format),
        "bytes": shot.image.bytes.len(),
        "screenArea": v.capture,
        "scale": v.scale,
        "screenshotId": shot.id,
    })
}
