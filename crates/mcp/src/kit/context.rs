//! The UI Context Protocol's three tools as every profile offers them: `ui_context_pick` (a person picks a
//! window, control or region and approves it), `ui_context_current`, `ui_context_clear`.
//!
//! One picker per server process, started on first use (`deskpilot-picker`). A result never
//! carries the page's address or token: only the person approves.
//!
//! The tools are declared once, on every profile's [`Server`]; a profile mounts them with
//! [`tools`] in its own words ([`ContextWording`]).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use deskpilot_engine::{Error, Session};
use deskpilot_picker::{
    Approved, DEFAULT_TIMEOUT, PickError, Picker, TIMEOUT_RANGE, default_root, port_from_env,
};
use deskpilot_types::ErrorCode;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::server::{ProfileSpec, Server, describe};
use super::{Parameters, Wording, render};

/// How a profile describes the three tools.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ContextWording {
    pub pick: &'static str,
    pub current: &'static str,
    pub clear: &'static str,
}

/// The three tools for profile `P`'s server, described in `w`'s words.
pub(crate) fn tools<P: ProfileSpec>(w: &ContextWording) -> ToolRouter<Server<P>> {
    let mut router = Server::<P>::context_router();
    describe(&mut router, "ui_context_pick", w.pick);
    describe(&mut router, "ui_context_current", w.current);
    describe(&mut router, "ui_context_clear", w.clear);
    router
}

#[tool_router(router = context_router, vis = "pub(crate)")]
impl<P: ProfileSpec> Server<P> {
    /// The user picks a window, control or region and approves it; returns that context.
    #[tool(
        name = "ui_context_pick",
        annotations(
            title = "Pick UI context",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn ui_context_pick(&self, Parameters(a): Parameters<PickArgs>) -> CallToolResult {
        pick(self.session(), P::wording(), a).await
    }

    /// The latest approved UI context.
    #[tool(
        name = "ui_context_current",
        annotations(
            title = "Current UI context",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn ui_context_current(&self, Parameters(_a): Parameters<NoArgs>) -> CallToolResult {
        current()
    }

    /// Forget the latest UI context.
    #[tool(
        name = "ui_context_clear",
        annotations(
            title = "Clear UI context",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn ui_context_clear(&self, Parameters(_a): Parameters<NoArgs>) -> CallToolResult {
        clear()
    }
}

/// `ui_context_pick`'s argument (the UI Context Protocol's name).
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PickArgs {
    /// 1000–600000 ms (default 120000).
    #[serde(rename = "timeoutMs", default)]
    pub timeout_ms: Option<u64>,
}

/// No arguments.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

static PICKER: Mutex<Option<Arc<Picker>>> = Mutex::new(None);

/// The server's picker, started on first use over a session of its own.
fn picker(session: &Session) -> Result<Arc<Picker>, Error> {
    let mut slot = PICKER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = slot.as_ref() {
        return Ok(p.clone());
    }
    let unavailable = |message: String| Error::Coded {
        code: ErrorCode::PickerUnavailable,
        message,
    };
    let port = port_from_env().map_err(unavailable)?;
    let own = Arc::new(Session::new(session.engine().clone()));
    let p = Picker::start(own, port, default_root(), super::pick::render).map_err(unavailable)?;
    *slot = Some(p.clone());
    Ok(p)
}

/// The already started picker, if any.
fn started() -> Option<Arc<Picker>> {
    PICKER.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn approved_result(a: &Approved, intro: &str) -> CallToolResult {
    let files: Vec<String> = a
        .files
        .iter()
        .map(|f| a.dir.join(f).display().to_string())
        .collect();
    let text = format!(
        "{intro}\n\n{}\nOutput directory: {}\nFiles: {}",
        a.markdown.trim_end(),
        a.dir.display(),
        a.files.join(", ")
    );
    let mut r = CallToolResult::success(vec![
        ContentBlock::text(text),
        ContentBlock::image(
            base64::engine::general_purpose::STANDARD.encode(&a.crop_png),
            "image/png",
        ),
    ]);
    r.structured_content = Some(json!({
        "kind": a.kind,
        "json": a.json,
        "markdown": a.markdown,
        "directory": a.dir,
        "files": files,
    }));
    r
}

/// `ui_context_pick`.
pub(crate) async fn pick(
    session: Arc<Session>,
    wording: &dyn Wording,
    args: PickArgs,
) -> CallToolResult {
    let timeout = match args.timeout_ms {
        None => DEFAULT_TIMEOUT,
        Some(ms) if (TIMEOUT_RANGE.0..=TIMEOUT_RANGE.1).contains(&ms) => Duration::from_millis(ms),
        Some(ms) => {
            return render::error(
                &Error::InvalidArgument {
                    message: format!(
                        "timeoutMs {ms} is outside {}–{}",
                        TIMEOUT_RANGE.0, TIMEOUT_RANGE.1
                    ),
                },
                wording,
            );
        }
    };
    let run = render::blocking(
        timeout + Duration::from_secs(30),
        "ui_context_pick",
        move || {
            let p = picker(&session)?;
            let how = |p: &Picker| p.control_window().unwrap_or_else(|| "none".into());
            p.pick(session.clone(), timeout)
                .map(|a| (a, how(&p)))
                .map_err(|e| Error::Coded {
                    code: match e {
                        PickError::Cancelled | PickError::Superseded => ErrorCode::PickCancelled,
                        PickError::TimedOut(_) => ErrorCode::PickTimeout,
                        PickError::WindowClosed => ErrorCode::PickWindowClosed,
                    },
                    message: format!("{e} (control window: {})", how(&p)),
                })
        },
    )
    .await;
    match run {
        Ok((a, how)) => {
            let mut r = approved_result(&a, "The user picked and approved this UI context.");
            if let Some(s) = r.structured_content.as_mut() {
                s["controlWindow"] = json!(how);
            }
            r
        }
        Err(e) => render::error(&e, wording),
    }
}

/// `ui_context_current`.
pub(crate) fn current() -> CallToolResult {
    match started().and_then(|p| p.current()) {
        Some(a) => approved_result(&a, "The latest UI context the user approved."),
        None => {
            let mut r = CallToolResult::success(vec![ContentBlock::text(
                "No approved UI context: none was picked since the server started, or it was cleared. Call ui_context_pick when the user wants to point at something.",
            )]);
            r.structured_content = Some(
                json!({ "empty": true, "json": null, "markdown": null, "directory": null, "files": [] }),
            );
            r
        }
    }
}

/// `ui_context_clear`.
pub(crate) fn clear() -> CallToolResult {
    let cleared = started().is_some_and(|p| p.clear());
    let mut r = CallToolResult::success(vec![ContentBlock::text(if cleared {
        "Forgot the latest UI context; its files stay on disk."
    } else {
        "There was no UI context to forget."
    })]);
    r.structured_content = Some(json!({ "cleared": cleared }));
    r
}

/// What to do after a pick failed, the same in every profile that offers the UI context tools
/// (they all name `ui_context_pick`); `None` for codes a pick does not produce.
pub(crate) fn pick_hint(code: ErrorCode) -> Option<&'static str> {
    match code {
        ErrorCode::PickCancelled => Some(
            "The user chose not to share anything: ask them what they meant instead; do not pick again unasked.",
        ),
        ErrorCode::PickTimeout => Some(
            "Nobody approved in time: tell the user the control window is waiting and call ui_context_pick again (a longer timeoutMs) when they are ready.",
        ),
        ErrorCode::PickWindowClosed => {
            Some("The user closed the control window: ask before opening it again.")
        }
        ErrorCode::PickerUnavailable => Some(
            "The endpoint cannot serve: the message names the port; ask the human to free it or set MOUSE_POINTER_HTTP_PORT.",
        ),
        _ => None,
    }
}
