//! DesktopOS's `memory` group: `memory_recall`, `memory_timeline`, `memory_stats`,
//! `memory_clear`, over the engine's memory and worded through `kit::memory` (windows named by
//! `handle`, the way back named `desktop_focus_window`).

use deskpilot_engine::{Check, VerifyTarget};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::desktop::NoArgs;
use super::wording::WORDING;
use super::{DesktopOsServer, error};
use crate::kit::report::{self, Body, Step};
use crate::kit::{Parameters, memory, render};

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// "刚才那个窗口", "钉钉", "the last button", an app or title word.
    pub query: String,
}

fn twenty() -> usize {
    20
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineArgs {
    /// Newest entries (default 20, max 500).
    #[serde(default = "twenty")]
    pub limit: usize,
    /// Only entries at or after this Unix time in ms.
    #[serde(default)]
    pub since: u64,
}

fn done(text: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

fn handle(id: deskpilot_types::WindowId) -> String {
    format!("handle={}", id.0)
}

#[tool_router(router = memory_router, vis = "pub(crate)")]
impl DesktopOsServer {
    /// 记忆层:把指代解析成坐标 / Resolve "刚才那个窗口", "钉钉", "the last button" to a window or control with its centre (screen pixels, for desktop_click); a minimized one says so with its handle, a closed one when it was last seen.
    #[tool(
        name = "memory_recall",
        annotations(
            title = "Recall",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn memory_recall(&self, Parameters(a): Parameters<RecallArgs>) -> CallToolResult {
        let session = self.session();
        let query = a.query.clone();
        match render::blocking(self.request_timeout(), "memory recall", move || {
            session.memory_recall(&query)
        })
        .await
        {
            Ok(r) => {
                let (text, mut structured) =
                    memory::recall(&a.query, &r, "desktop_focus_window", handle);
                if let Some(items) = structured["candidates"].as_array_mut() {
                    for c in items {
                        c["handle"] = c["window_id"].clone();
                    }
                }
                done(text, structured)
            }
            Err(e) => error(&e),
        }
    }

    /// 记忆层:最近的操作时间线 / What was perceived and done (perceive, click, type, command), oldest first.
    #[tool(
        name = "memory_timeline",
        annotations(
            title = "Timeline",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn memory_timeline(&self, Parameters(a): Parameters<TimelineArgs>) -> CallToolResult {
        let session = self.session();
        let since = (a.since > 0).then_some(a.since);
        match render::blocking(self.request_timeout(), "memory timeline", move || {
            session.memory_timeline(a.limit, since)
        })
        .await
        {
            Ok(read) => {
                let (text, structured) = memory::timeline(&read);
                done(text, structured)
            }
            Err(e) => error(&e),
        }
    }

    /// 记忆层:索引规模与最后更新时间 / Memory's counts, size on disk, last update and path.
    #[tool(
        name = "memory_stats",
        annotations(
            title = "Memory statistics",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn memory_stats(&self, Parameters(_): Parameters<NoArgs>) -> CallToolResult {
        let session = self.session();
        match render::blocking(self.request_timeout(), "memory stats", move || {
            session.memory_stats()
        })
        .await
        {
            Ok(r) => {
                let (text, structured) = memory::stats(&r);
                done(text, structured)
            }
            Err(e) => error(&e),
        }
    }

    /// 记忆层:清空时间线与窗口索引 / Forget the timeline, the window and control index and the focus history.
    #[tool(
        name = "memory_clear",
        annotations(
            title = "Clear memory",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn memory_clear(&self, Parameters(_): Parameters<NoArgs>) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            Step {
                what: "memory clear",
                timeout: self.request_timeout(),
                check: Check::default(),
                target: VerifyTarget::Screen,
            },
            |s| s.memory_clear(),
            |o| {
                let b = &o.before;
                Body::new(
                    format!(
                        "Memory cleared: forgot {} window(s), {} control(s), {} focus change(s) and {} bytes of timeline.",
                        b.windows, b.elements, b.focus_entries, b.timeline_bytes
                    ),
                    json!({
                        "forgot": {
                            "windows": b.windows,
                            "elements": b.elements,
                            "focus_entries": b.focus_entries,
                            "timeline_bytes": b.timeline_bytes,
                        },
                        "dir": b.dir.display().to_string(),
                    }),
                )
            },
        )
        .await
    }
}
