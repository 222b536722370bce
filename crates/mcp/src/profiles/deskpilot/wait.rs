//! `wait` and `wait_for`: pause, or poll the desktop until something holds.

use std::time::Duration;

use crate::kit::Parameters;
use deskpilot_engine::limits::PAUSE_SECONDS;
use deskpilot_engine::{Error, MAX_WAIT, WaitKind, WaitRequest};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::targets::window_ref;
use super::{DeskpilotServer, error};
use rmcp::RoleServer;
use rmcp::service::RequestContext;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// 0–30 (default 1).
    #[serde(default = "one")]
    pub seconds: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForArgs {
    /// stable (pixels quiet), window (title/process), element (in tree), text (tree, else OCR).
    #[serde(alias = "waitKind")]
    pub wait_kind: String,
    /// Give up after ms (default 10000, max 60000).
    #[serde(default = "ten_seconds", alias = "timeoutMs")]
    pub timeout_ms: u64,
    /// stable: quiet ms needed (default 500).
    #[serde(default = "half_second", alias = "stableMs")]
    pub stable_ms: u64,
    /// Default: screen for stable, else last looked at.
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Or title/process.
    #[serde(default, alias = "titleMatch")]
    pub title_match: String,
    /// element: name substring.
    #[serde(default)]
    pub name: String,
    /// window: title/process substring; text: what to find.
    #[serde(default)]
    pub text: String,
    /// text: OCR languages ("eng+chi_sim").
    #[serde(default)]
    pub lang: String,
}

fn ten_seconds() -> u64 {
    10_000
}
fn half_second() -> u64 {
    500
}

#[tool_router(router = wait_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Wait 0–30 seconds without touching anything.
    #[tool(
        name = "wait",
        annotations(
            title = "Wait",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn wait(
        &self,
        Parameters(a): Parameters<WaitArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        if !PAUSE_SECONDS.contains_f64(a.seconds) {
            return error(&Error::InvalidArgument {
                message: format!("seconds {} must be {}", a.seconds, PAUSE_SECONDS.words()),
            });
        }
        let length = Duration::from_secs_f64(a.seconds);
        // A cancelled call (`notifications/cancelled`, `tasks/cancel`) stops pausing.
        let pause = async {
            tokio::select! {
                () = tokio::time::sleep(length) => {}
                () = context.ct.cancelled() => {}
            }
        };
        crate::kit::progress::with_progress(&context, length, "waiting", pause).await;
        if context.ct.is_cancelled() {
            return error(&Error::Cancelled {
                doing: format!("pausing for {} s", a.seconds),
            });
        }
        let mut r =
            CallToolResult::success(vec![ContentBlock::text(format!("Waited {} s.", a.seconds))]);
        r.structured_content = Some(json!({ "waited_ms": (a.seconds * 1000.0).round() }));
        r
    }

    /// Poll until the screen is stable or a window, element or text appears; a timeout says what
    /// is there.
    #[tool(
        name = "wait_for",
        annotations(
            title = "Wait for",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn wait_for(
        &self,
        Parameters(a): Parameters<WaitForArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let window = if a.window_id == 0 && a.title_match.trim().is_empty() {
            None
        } else {
            Some(window_ref(a.window_id, &a.title_match))
        };
        let needed = |field: &str, v: &str| {
            if v.trim().is_empty() {
                Err(Error::InvalidArgument {
                    message: format!("wait_kind {} needs {field}", a.wait_kind),
                })
            } else {
                Ok(v.to_string())
            }
        };
        let kind = match a.wait_kind.trim().to_ascii_lowercase().as_str() {
            "stable" => Ok(WaitKind::Stable {
                quiet: Duration::from_millis(a.stable_ms),
            }),
            "window" => needed("text (part of the title)", &a.text).map(WaitKind::Window),
            "element" => needed("name", &a.name).map(WaitKind::Element),
            "text" => needed("text", &a.text).map(WaitKind::Text),
            other => Err(Error::InvalidArgument {
                message: format!(
                    "wait_kind \"{other}\" is not one of stable, window, element, text"
                ),
            }),
        };
        let kind = match kind {
            Ok(k) => k,
            Err(e) => return error(&e),
        };
        let request = WaitRequest {
            kind: kind.clone(),
            window,
            languages: super::ocr::languages(&a.lang),
            timeout: Duration::from_millis(a.timeout_ms),
        };
        let engine = self.session();
        let budget = MAX_WAIT + Duration::from_secs(10);
        let total = Duration::from_millis(a.timeout_ms);
        // A cancelled call ends the engine's polling (`CANCELLED`).
        let waiting = crate::kit::tasks::stoppable(&context.ct, budget, "wait_for", move || {
            engine.wait_for(&request)
        });
        let what = format!("waiting for {}", a.wait_kind.trim().to_ascii_lowercase());
        match crate::kit::progress::with_progress(&context, total, &what, waiting).await {
            Ok(o) => {
                let mut text = format!(
                    "{} after {} ms ({} {}).",
                    match &kind {
                        WaitKind::Stable { quiet } =>
                            format!("Stable: quiet for {} ms", quiet.as_millis()),
                        WaitKind::Window(_) => "The window is there".to_string(),
                        WaitKind::Element(_) => "The element is there".to_string(),
                        WaitKind::Text(_) => "The text is there".to_string(),
                    },
                    o.waited.as_millis(),
                    o.frames,
                    if matches!(kind, WaitKind::Stable { .. }) {
                        "frames"
                    } else {
                        "polls"
                    }
                );
                if let Some(m) = &o.matched {
                    text.push_str(&format!("\nMatched: {m}"));
                }
                if let Some(source) = o.source {
                    text.push_str(&format!("\nFound by: {source}"));
                }
                for n in &o.notes {
                    text.push_str(&format!("\nNote: {n}"));
                }
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(json!({
                    "kind": a.wait_kind.trim().to_ascii_lowercase(),
                    "waited_ms": o.waited.as_millis() as u64,
                    "frames": o.frames,
                    "ratio": o.ratio,
                    "matched": o.matched,
                    "source": o.source,
                    "notes": o.notes,
                }));
                r
            }
            Err(e) => error(&e),
        }
    }
}
