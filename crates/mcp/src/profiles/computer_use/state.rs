//! `get_window_state`: a window's indexed element tree and its screenshot, recorded as the
//! window's latest state (what `element_index`, x/y and `screenshot_id` refer to).

use deskpilot_engine::{CaptureTarget, Note, ScreenshotRequest, TreeRequest, WindowRef};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::view::{self, MAX_ELEMENTS, MAX_TREE_CHARS, Views, WindowSel};
use super::wording::{image_head, image_json};
use super::{ComputerUseServer, MAX_EDGE, error};
use crate::kit::{Parameters, image, render};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowStateArgs {
    /// From list_windows/list_apps; or pass window.
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Codex form {app, id}; one of window_id/window is required.
    #[serde(default)]
    pub window: Option<WindowSel>,
    /// Window screenshot, longest edge ≤ 1600 px (default true).
    #[serde(default = "yes")]
    pub include_screenshot: bool,
    /// The indexed element tree (default true).
    #[serde(default = "yes")]
    pub include_text: bool,
}

fn yes() -> bool {
    true
}

/// A window as this profile's results show it.
pub(crate) fn window_json(w: &deskpilot_types::WindowInfo) -> serde_json::Value {
    json!({
        "window_id": w.id.0,
        "app": w.process,
        "pid": w.pid,
        "title": w.title,
        "class": w.class,
        "frame": w.frame,
        "active": w.state.active,
        "minimized": w.state.minimized,
        "maximized": w.state.maximized,
        "visible": w.state.visible,
    })
}

/// `Window 31457283 "Untitled - Mousepad" (mousepad, pid 4242) 802x633+10+20 active`.
pub(crate) fn window_line(w: &deskpilot_types::WindowInfo) -> String {
    let flags = render::state_flags(&w.state, "active");
    format!(
        "{} \"{}\" ({}, pid {}) {}{}",
        w.id.0,
        w.title,
        w.process.as_deref().unwrap_or("?"),
        w.pid.map_or("?".to_string(), |p| p.to_string()),
        w.frame,
        if flags.is_empty() {
            String::new()
        } else {
            format!(" {}", flags.join(" "))
        }
    )
}

/// Whether a tree note is worth a line here (budget notes of the engine's own rendering are
/// not: this profile renders the tree itself).
fn worth_saying(n: &Note) -> bool {
    !matches!(
        n,
        Note::TextTruncated { .. } | Note::Query { .. } | Note::TokensKept { .. }
    )
}

#[tool_router(router = state_router, vis = "pub(crate)")]
impl ComputerUseServer {
    /// The window's controls as an indexed tree (`<index> <ControlType> "<name>" value="…" flags
    /// actions=[…]`) and its screenshot: an expensive point-in-time snapshot; indexes are valid
    /// only for the latest one.
    #[tool(
        name = "get_window_state",
        annotations(
            title = "Get window state",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn get_window_state(
        &self,
        Parameters(a): Parameters<WindowStateArgs>,
    ) -> CallToolResult {
        let session = self.session();
        let read = render::blocking(
            self.request_timeout() + deskpilot_engine::TREE_TIMEOUT,
            "get_window_state",
            move || {
                let w = view::resolve(&session, a.window_id, a.window.as_ref())?;
                let shot = a.include_screenshot.then(|| {
                    session.screenshot_longest_edge(
                        &ScreenshotRequest {
                            target: CaptureTarget::Window(w.id),
                            max_width: None,
                            format: None,
                        },
                        MAX_EDGE,
                    )
                });
                let tree = if a.include_text {
                    let mut request = TreeRequest::new(WindowRef::Id(w.id));
                    request.include_screenshot = false;
                    request.max_elements = MAX_ELEMENTS;
                    request.max_chars = 1;
                    Some(session.window_state(&request)?)
                } else {
                    None
                };
                let shown = tree
                    .as_ref()
                    .map(|t| view::visible(&t.elements))
                    .unwrap_or_default();
                Views::update(&session, w.id, |v| {
                    if let Some(t) = &tree {
                        v.snapshot = Some(t.id);
                        v.visible = shown.iter().map(|(i, _)| *i).collect();
                    }
                    if let Some(Ok(s)) = &shot {
                        v.screenshot = Some(s.id);
                    }
                });
                Ok((w, tree, shown, shot))
            },
        )
        .await;
        let (w, tree, shown, shot) = match read {
            Ok(r) => r,
            Err(e) => return error(&e),
        };
        let mut text = format!("Window {}\n", window_line(&w));
        let mut structured = json!({ "window": window_json(&w) });
        if let Some(t) = &tree {
            let (lines, count) = view::render(&t.elements, &shown, MAX_TREE_CHARS);
            text.push_str(&lines);
            if count < shown.len() {
                text.push_str(&format!(
                    "[{} of {} elements shown: the text budget of {MAX_TREE_CHARS} characters ran out]\n",
                    count,
                    shown.len()
                ));
            }
            let image = shot.as_ref().and_then(|s| s.as_ref().ok()).map(|s| s.view);
            let elements: Vec<serde_json::Value> = shown
                .iter()
                .enumerate()
                .map(|(index, (i, depth))| {
                    let e = &t.elements[*i];
                    let actions: Vec<String> = view::actions(e)
                        .iter()
                        .map(|a| a.name().to_string())
                        .collect();
                    let in_image = e.bounds.zip(image).and_then(|(b, v)| {
                        let (x, y) = v.physical_to_image(deskpilot_types::Point::new(
                            b.x + b.width as i32 / 2,
                            b.y + b.height as i32 / 2,
                        ))?;
                        Some(json!({ "x": x, "y": y }))
                    });
                    let mut element = json!({
                        "index": index,
                        "depth": depth,
                        "control_type": view::control_type(e.role),
                        "name": e.name,
                        "value": view::shown_value(e),
                        "enabled": e.enabled,
                        "focusable": e.focusable,
                        "focused": e.focused,
                        "required": e.states.required,
                        "checked": e.checked,
                        "selected": e.selected,
                        "expanded": e.expanded,
                        "actions": actions,
                        "bounds": e.bounds,
                        "center_in_screenshot": in_image,
                    });
                    if e.password {
                        // Why it has no value: its text is never shown.
                        element["password"] = json!(true);
                    }
                    element
                })
                .collect();
            structured["elements"] = json!(elements);
            structured["source"] = json!(t.source);
            structured["complete"] = json!(t.complete);
            let notes: Vec<String> = t
                .notes
                .iter()
                .filter(|n| worth_saying(n))
                .map(ToString::to_string)
                .collect();
            for n in &notes {
                text.push_str("Note: ");
                text.push_str(n);
                text.push('\n');
            }
            structured["notes"] = json!(notes);
        }
        let mut images = Vec::new();
        match &shot {
            Some(Ok(s)) => {
                text.push_str(&image::text(image_head("Screenshot", s, "the window"), s));
                images.push(image::block(s));
                structured["screenshot"] = image_json(s);
            }
            Some(Err(e)) => {
                let code = super::wording::code_name(e.code());
                text.push_str(&format!("No screenshot ({code}): {e}"));
                structured["screenshot_error"] = json!({ "code": code, "message": e.to_string() });
            }
            None => {}
        }
        let mut content = vec![ContentBlock::text(text.trim_end().to_string())];
        content.extend(images);
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(structured);
        result
    }
}
