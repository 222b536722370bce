//! `perceive` (the window list checked against the pixels, worded through `kit::perceive`) and
//! `memory_recall`, `memory_timeline`, `memory_stats`, `memory_clear`: what deskpilot remembers
//! of this desktop, the kit's memory tools (`kit::memory`) in deskpilot's words.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::Value;

use super::screenshot::{FormatArg, format};
use super::wording::image_result;
use super::{Deskpilot, DeskpilotServer, done, error};
use crate::kit::memory::{self, MemoryProfile, MemoryWording};
use crate::kit::{Parameters, perceive, render};
use deskpilot_engine::PerceiveRequest;

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

impl MemoryProfile for Deskpilot {
    const MEMORY: MemoryWording = MemoryWording {
        recall: "Find a window or control seen before (app, title, \"that window\"); says if minimized or gone.",
        recall_title: "Recall from memory",
        query: "App, title words, or \"刚才那个按钮\".",
        timeline: "What deskpilot saw and did, oldest first.",
        timeline_title: "Memory timeline",
        limit: "Newest entries (1-500).",
        since: "Only entries from this Unix time (ms) on.",
        stats: "Memory's counts, disk size, path; saves pending changes first.",
        clear: "Forget all remembered windows, controls and timeline.",
        focus: "window focus",
        window: |id| id.to_string(),
        window_key: None,
    };
}

impl DeskpilotServer {
    /// `perceive` and the memory tools.
    pub(crate) fn memory_router() -> ToolRouter<Self> {
        Self::perceive_router() + memory::tools::<Deskpilot>()
    }
}

#[tool_router(router = perceive_router)]
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
}
