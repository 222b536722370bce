//! How the `computer-use` profile words what the kit renders: computer-use-mcp's lower-case
//! error codes (`point_obstructed`, `point_outside_window`, `stale_element`, …), hints that name
//! its tools and parameters, and its screenshot answer (`screenshot_id`, `scale` = image pixels
//! / physical pixels).

use std::borrow::Cow;

use deskpilot_engine::Screenshot;
use deskpilot_types::ErrorCode;
use rmcp::model::CallToolResult;
use serde_json::json;

use crate::kit::{Wording, image};

/// The `computer-use` profile's wording.
#[derive(Debug)]
pub(crate) struct ComputerUseWording;

pub(crate) static WORDING: ComputerUseWording = ComputerUseWording;

/// An engine error as this profile renders it (with the diagnosis, as every profile's).
pub(crate) fn error(e: &deskpilot_engine::Error) -> CallToolResult {
    crate::kit::render::error(e, &WORDING)
}

/// This profile's name for an engine code: computer-use-mcp's input-safety codes for the hit
/// test's refusals, every other code in lower case.
pub(crate) fn code_name(code: ErrorCode) -> Cow<'static, str> {
    match code {
        ErrorCode::ClickWrongWindow => Cow::Borrowed("point_obstructed"),
        ErrorCode::OutsideTargetWindow => Cow::Borrowed("point_outside_window"),
        other => Cow::Owned(other.as_str().to_ascii_lowercase()),
    }
}

impl Wording for ComputerUseWording {
    fn code_name(&self, code: ErrorCode) -> Cow<'static, str> {
        code_name(code)
    }

    fn hint(&self, code: ErrorCode) -> &'static str {
        match code {
            ErrorCode::InvalidArgument => "Fix the argument named in the message and call again.",
            ErrorCode::WindowNotFound
            | ErrorCode::TargetWindowGone
            | ErrorCode::TargetWindowChanged => {
                "The window is gone or the id is wrong: call list_windows (or list_apps) and use a window_id from its answer."
            }
            ErrorCode::AmbiguousWindow => {
                "The app has several windows: pass window_id (or window: {app, id}) with one of the ids listed."
            }
            ErrorCode::WindowMinimized | ErrorCode::WindowNotVisible => {
                "activate_window {window_id} restores and raises it; then get_window_state."
            }
            ErrorCode::TargetWindowMoved => {
                "The window moved since its screenshot: get_window_state again and read x/y off the new image."
            }
            ErrorCode::ClickWrongWindow => {
                "Nothing was clicked: another window covers that point (the message names it). Close or move it, or activate_window the target, then get_window_state again."
            }
            ErrorCode::OutsideTargetWindow => {
                "Nothing was clicked: x/y must lie inside the window screenshot (0 ≤ x < width, 0 ≤ y < height). Prefer element_index."
            }
            ErrorCode::PointOffScreen => {
                "The point is off every monitor: activate_window, then get_window_state for a screenshot on screen."
            }
            ErrorCode::NoReferenceScreenshot | ErrorCode::UnknownScreenshot => {
                "Call get_window_state {window_id} (include_screenshot: true) and read x/y off that image, or use element_index."
            }
            ErrorCode::StaleElement | ErrorCode::ElementNotFound => {
                "Call get_window_state {window_id} again and use an element_index from its answer."
            }
            ErrorCode::ElementDisabled => {
                "Nothing was done: the element is greyed out now. Do what enables it first (fill the required fields, pick an item), then call get_window_state {window_id} again and act on it."
            }
            ErrorCode::ValueNotSet => {
                "Both routes were tried (the accessibility interface, then focus + ctrl+a + typing) and the field holds what the message says: call get_window_state {window_id} to see why (a validation message, a read-only field, a picker that wants a choice) and act on that."
            }
            ErrorCode::ElementCovered => {
                "Nothing was performed: a click there would not reach the element any more. Call get_window_state {window_id} again and use an element_index from its answer."
            }
            ErrorCode::ActionUnsupported => {
                "Use one of the actions listed for that element in get_window_state (or click it)."
            }
            ErrorCode::AccessibilityUnavailable => {
                "This app exposes no accessibility tree: click by x/y on the window screenshot instead."
            }
            ErrorCode::FocusRefused => {
                "The window manager kept another window in front: click inside the window by x/y, then get_window_state."
            }
            ErrorCode::PointerNotLanded => {
                "Something moved or grabbed the pointer; get_window_state and retry once."
            }
            ErrorCode::LaunchFailed => {
                "Check the app: an id or name from list_apps' installed apps, or a program path that exists."
            }
            ErrorCode::DesktopRestarting => {
                "Nothing was performed. A fresh desktop is coming up after the old one died: call list_windows in a few seconds; window ids, screenshot ids and element indexes from before are gone."
            }
            ErrorCode::NoDisplay => {
                "No desktop answers. If deskpilot started its own (--virtual-display), it is bringing a fresh one up: call list_windows again in a few seconds. Otherwise start deskpilot inside a desktop session, or `deskpilot serve --profile computer-use --virtual-display`; `deskpilot serve --profile computer-use --check` says what is missing."
            }
            ErrorCode::ToolDisabled => {
                "This server was started without that tool (--only / the excludes); use another tool or ask the user to enable it."
            }
            ErrorCode::BlockedTarget => {
                "This is the deployment's decision, not a bug. Stop and tell the human; do not reach the same target another way."
            }
            ErrorCode::ActionDisabled => {
                "Nothing was performed: the deployment does not allow this action. Tell the human, or reach the goal without it."
            }
            ErrorCode::StoppedByHuman => {
                "Stop, report what you were doing, and wait until the human asks you to continue."
            }
            ErrorCode::ApprovalUnavailable | ErrorCode::ApprovalDenied => {
                "Nothing was performed. Ask the human to approve, or operate differently."
            }
            ErrorCode::Internal => {
                "This is a deskpilot bug: retry once, then report it with the message."
            }
            ErrorCode::Cancelled => {
                "The call was cancelled before it finished: what was still to come was not done. Call again if it is still wanted."
            }
            _ => "Read the message; retry once only when it says retrying can help.",
        }
    }

    fn unverifiable(&self, _route: deskpilot_engine::Route) -> &'static str {
        "call get_window_state to see the effect"
    }

    fn image(&self, kind: &str, shot: &Screenshot, what: &str) -> CallToolResult {
        image::answer(image_head(kind, shot, what), shot, image_json(shot))
    }
}

/// A screenshot's first line in this profile's words: its id, size and scale, and that x/y
/// are read in it (the kit's [`image`] adds the masks and notes).
pub(crate) fn image_head(kind: &str, shot: &Screenshot, what: &str) -> String {
    let v = &shot.view;
    format!(
        "{kind} {id}: {w}x{h} {f} of {what}, scale {scale:.4} (image pixels / physical pixels). x/y for click, \
         scroll and drag are pixels of this image; pass screenshot_id {id} with them.",
        id = shot.id,
        w = v.width,
        h = v.height,
        f = image::format_name(shot.image.format).to_uppercase(),
        scale = v.scale,
    )
}

/// A screenshot's structured part: its id, size, scale, format and where it lies on screen.
pub(crate) fn image_json(shot: &Screenshot) -> serde_json::Value {
    let v = &shot.view;
    json!({
        "screenshot_id": shot.id,
        "width": v.width,
        "height": v.height,
        "scale": v.scale,
        "format": image::format_name(shot.image.format),
        "bytes": shot.image.bytes.len(),
        "origin": { "x": v.capture.x, "y": v.capture.y },
        "masked_regions": shot.masked_regions,
        "notes": shot.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hit_test_refusals_have_the_codes_computer_use_mcp_names() {
        assert_eq!(code_name(ErrorCode::ClickWrongWindow), "point_obstructed");
        assert_eq!(
            code_name(ErrorCode::OutsideTargetWindow),
            "point_outside_window"
        );
        assert_eq!(code_name(ErrorCode::StaleElement), "stale_element");
        assert_eq!(code_name(ErrorCode::WindowNotFound), "window_not_found");
    }
}
