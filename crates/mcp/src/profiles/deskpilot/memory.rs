//! `perceive` (the window list checked against the pixels, worded through `kit::perceive`) and
//! `memory_recall`, `memory_timeline`, `memory_stats`, `memory_clear`: what deskpilot remembers
//! of this desktop, worded through `kit::memory`.

use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::Value;

use super::screenshot::{FormatArg, format};
use super::wording::WORDING;
use super::wording::image_result;
use super::{DeskpilotServer, done, error};
use crate::kit::report::{self, Body, Step};
use crate::kit::{Parameters, memory, perceive, render};
use deskpilot_engine::{Check, PerceiveRequest, VerifyTarget};

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PerceiveArgs {
    /// + the judged screenshot.
    #[serde(default, alias = "includeScreenshot")]
    pub include_screenshot: bool,
    /// Widest image, 64–8192.
    #[serde(default, alias = "maxWidth")]
    pub max_width: u32,
    #[serde(default)]
    pub format: Option<FormatArg>,
    /// Judge covered windows by their own drawing (slower).
    #[serde(default, alias = "ownPixels")]
    pub own_pixels: bool,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// App, title words, or "刚才那个按钮".
    pub query: String,
}

fn default_limit() -> usize {
    20
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineArgs {
    /// Newest entries (1-500).
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Only entries from this Unix time (ms) on.
    #[serde(default)]
    pub since: u64,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[tool_router(router = memory_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Check windows against the pixels: each consistent, minimized, hidden, offscreen, covered (by
    /// whom) or blank.
    #[tool(
        name = "perceive",
        annotations(
            title = "Perceive windows",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn perceive(&self, Parameters(a): Parameters<PerceiveArgs>) -> CallToolResult {
        let session = self.session();
        let request = PerceiveRequest {
            include_screenshot: a.include_screenshot,
            max_width: (a.max_width > 0).then_some(a.max_width),
            format: a.format.map(format),
            own_pixels: a.own_pixels,
        };
        match render::blocking(self.request_timeout(), "perceive", move || {
            session.perceive(&request)
        })
        .await
        {
            Ok(p) => {
                let (text, mut structured) =
                    perceive::perception(&p, "window focus", |id| id.to_string());
                match &p.screenshot {
                    Some(shot) => {
                        let mut r = image_result("Screenshot", shot, "the screen");
                        if let Some(t) = render::text_mut(&mut r) {
                            *t = format!("{text}\n{t}");
                        }
                        if let Some(Value::Object(m)) = r.structured_content.take() {
                            structured["screenshot"] = Value::Object(m);
                        }
                        r.structured_content = Some(structured);
                        r
                    }
                    None => done(text, structured),
                }
            }
            Err(e) => error(&e),
        }
    }

    /// Find a window or control seen before (app, title, "that window"); says if minimized or gone.
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
                let (text, structured) =
                    memory::recall(&a.query, &r, "window focus", |id| id.to_string());
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

    /// Memory's counts, disk size, path; saves pending changes first.
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

    /// Forget all remembered windows, controls and timeline.
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
