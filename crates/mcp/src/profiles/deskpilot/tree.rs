//! `get_window_state`: the indexed element tree of a window plus its screenshot.

use std::time::Duration;

use crate::kit::Parameters;
use deskpilot_engine::{Snapshot, TREE_TIMEOUT, TreeRequest};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::targets::window_ref;
use super::wording::image_result;
use super::{DeskpilotServer, error};
use crate::kit::render;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowStateArgs {
    /// Default: last looked at, else active.
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Or title/process.
    #[serde(default, alias = "titleMatch")]
    pub title_match: String,
    /// + screenshot (default true).
    #[serde(default = "yes")]
    pub include_screenshot: bool,
    /// Element limit (default 600, max 10000).
    #[serde(default = "six_hundred")]
    pub max_elements: usize,
    /// Depth limit (default 64).
    #[serde(default = "sixty_four")]
    pub max_depth: u32,
    /// Text limit (default 40000 chars).
    #[serde(default = "forty_thousand")]
    pub max_chars: usize,
    /// Keep matches (name, value, role…) and ancestors.
    #[serde(default)]
    pub query: String,
    /// Widest image (default 1280).
    #[serde(default, alias = "maxWidth")]
    pub max_width: u32,
    /// Default 5000, max 30000; then a partial tree.
    #[serde(default = "five_seconds")]
    pub timeout_ms: u64,
    /// Re-read the whole tree.
    #[serde(default)]
    pub fresh: bool,
}

fn yes() -> bool {
    true
}
fn six_hundred() -> usize {
    600
}
fn sixty_four() -> u32 {
    64
}
fn forty_thousand() -> usize {
    40_000
}
fn five_seconds() -> u64 {
    TREE_TIMEOUT.as_millis() as u64
}

/// The text block (with the snapshot's notes appended) and the window's screenshot, when the
/// snapshot has one: the content blocks, and the screenshot's structured part.
pub(crate) fn with_notes_and_screenshot(
    mut text: String,
    snapshot: &Snapshot,
) -> (Vec<ContentBlock>, serde_json::Value) {
    for n in &snapshot.notes {
        text.push_str("Note: ");
        text.push_str(&n.to_string());
        text.push('\n');
    }
    let mut content = vec![ContentBlock::text(text)];
    let mut screenshot = serde_json::Value::Null;
    if let Some(shot) = &snapshot.screenshot {
        let rendered = image_result("Screenshot", shot, "the window");
        content.extend(rendered.content);
        screenshot = rendered.structured_content.unwrap_or_default();
    }
    (content, screenshot)
}

#[tool_router(router = tree_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// A window's controls as an indexed tree, and its screenshot; tokens s<snapshot>:<index> last
    /// while its structure does.
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
        let window = window_ref(a.window_id, &a.title_match);
        let request = TreeRequest {
            window,
            include_screenshot: a.include_screenshot,
            max_elements: a.max_elements,
            max_depth: a.max_depth,
            max_chars: a.max_chars,
            query: (!a.query.trim().is_empty()).then(|| a.query.trim().to_string()),
            max_width: (a.max_width != 0).then_some(a.max_width),
            timeout: Duration::from_millis(a.timeout_ms),
            fresh: a.fresh,
        };
        let timeout = request.read_timeout();
        let engine = self.session();
        let snapshot = match render::blocking(
            self.request_timeout() + timeout,
            "get_window_state",
            move || engine.window_state(&request),
        )
        .await
        {
            Ok(s) => s,
            Err(e) => return error(&e),
        };
        let w = &snapshot.window;
        let mut text = format!(
            "Snapshot s{id} of window {wid} \"{title}\" ({process}, pid {pid}): {n} elements from {source} in {ms:.0} ms{shown}.\n\
             Act on an element with its token s{id}:<index>; tokens of an older snapshot are refused.\n",
            id = snapshot.id,
            wid = w.id,
            title = w.title,
            process = w.process.as_deref().unwrap_or("?"),
            pid = w.pid.map_or("?".to_string(), |p| p.to_string()),
            n = snapshot.elements.len(),
            source = snapshot.source,
            ms = snapshot.tree_time.as_secs_f64() * 1e3,
            shown = if snapshot.shown < snapshot.elements.len() {
                format!(", {} shown", snapshot.shown)
            } else {
                String::new()
            },
        );
        text.push_str(&snapshot.text);
        let (content, screenshot) = with_notes_and_screenshot(text, &snapshot);
        let mut result = CallToolResult::success(content);
        result.structured_content = Some(json!({
            "snapshot_id": snapshot.id,
            "window": snapshot.window,
            "source": snapshot.source,
            "complete": snapshot.complete,
            "count": snapshot.elements.len(),
            "shown": snapshot.shown,
            "elements": snapshot.elements,
            "notes": snapshot.notes,
            "tree_ms": snapshot.tree_time.as_secs_f64() * 1e3,
            "screenshot": screenshot,
        }));
        result
    }
}
