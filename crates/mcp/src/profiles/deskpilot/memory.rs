//! `memory_recall`, `memory_timeline`, `memory_stats`, `memory_clear`: what deskpilot remembers
//! of this desktop, worded through `kit::memory`.

use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;

use super::wording::WORDING;
use super::{DeskpilotServer, error};
use crate::kit::report::{self, Body, Step};
use crate::kit::{Parameters, memory, render};
use deskpilot_engine::{Check, VerifyTarget};

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// App, title words, or "that window" / "刚才那个按钮".
    pub query: String,
}

fn default_limit() -> usize {
    20
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineArgs {
    /// Newest entries to return (1-500).
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Only entries at or after this Unix time in ms.
    #[serde(default)]
    pub since: u64,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

fn done(text: String, structured: serde_json::Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

#[tool_router(router = memory_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Find a window or control seen before, by app, title or "that window"; says if minimized or gone.
    #[tool(
        name = "memory_recall",
        annotations(
            title = "Recall from memory",
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
                let (text, structured) = memory::recall(&a.query, &r, "window focus");
                done(text, structured)
            }
            Err(e) => error(&e),
        }
    }

    /// What deskpilot saw and did, oldest first.
    #[tool(
        name = "memory_timeline",
        annotations(
            title = "Memory timeline",
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

    /// Memory's counts, size on disk, path; saves pending changes first.
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

    /// Forget every remembered window, control and timeline entry.
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
                    serde_json::json!({
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
