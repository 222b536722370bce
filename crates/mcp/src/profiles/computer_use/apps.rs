//! Apps and windows: `list_apps` (the kit's, in this profile's words), `list_windows`, `get_window`, `launch_app`,
//! `activate_window`.

use std::time::Duration;

use deskpilot_backend::apps::InstalledApp;
use deskpilot_engine::{
    Check, Effect, Found, LaunchOutcome, MAX_LAUNCH_WAIT, Outcome, Route, RunningApp, VerifyTarget,
    WindowAction, WindowFilter,
};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::state::{window_json, window_line};
use super::view::{self, WindowSel};
use super::wording::WORDING;
use super::{ComputerUse, ComputerUseServer, error};
use crate::kit::apps::{AppsProfile, AppsWording};
use crate::kit::report::{self, Body};
use crate::kit::{Parameters, render};

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only apps/windows whose name, title or id contains this.
    #[serde(default)]
    pub filter: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowArgs {
    /// From list_windows/list_apps; or pass window.
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Codex form {app, id}; one of window_id/window is required.
    #[serde(default)]
    pub window: Option<WindowSel>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchArgs {
    /// An installed app's id or name from list_apps (any language), or a program path.
    #[serde(alias = "app_id", alias = "name", alias = "path")]
    pub app: String,
    /// ms to wait for its window (default 10000, max 60000).
    #[serde(default = "ten_seconds")]
    pub wait_ms: u64,
}

fn ten_seconds() -> u64 {
    10_000
}

/// A launch and the catalog entry it started, as the pipeline's outcome.
struct Launched(Option<(InstalledApp, Found)>, LaunchOutcome);

impl Outcome for Launched {
    fn route(&self) -> Route {
        Route::Process
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        self.1.judged()
    }
}

impl AppsProfile for ComputerUse {
    const APPS: AppsWording = AppsWording {
        description: "Running apps with their windows (window_id, title), then installed apps launch_app can start.",
        filter: "Only apps/windows whose name, title or id contains this.",
        label: "list_apps",
        running: |n| format!("Running apps ({n}):"),
        app: app_lines,
        app_json: |r| {
            json!({
                "app": r.process,
                "pid": r.pid,
                "windows": r.windows.iter().map(window_json).collect::<Vec<_>>(),
            })
        },
        installed: |n| format!("\nInstalled apps ({n}; launch_app {{app: <id or name>}}):"),
        exec: false,
    };
}

/// `\nmousepad (pid 4242)`, then a tab-indented `window_id …` line per window.
fn app_lines(r: &RunningApp) -> String {
    let mut text = format!(
        "\n{} (pid {})",
        r.process.as_deref().unwrap_or("?"),
        r.pid.map_or("?".to_string(), |p| p.to_string())
    );
    for w in &r.windows {
        text.push_str(&format!("\n\twindow_id {}", window_line(w)));
    }
    text
}

#[tool_router(router = apps_router, vis = "pub(crate)")]
impl ComputerUseServer {
    /// Top-level windows, topmost first: window_id, app, pid, title, frame, state.
    #[tool(
        name = "list_windows",
        annotations(
            title = "List windows",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn list_windows(&self, Parameters(a): Parameters<ListArgs>) -> CallToolResult {
        let session = self.session();
        let filter = WindowFilter { text: a.filter };
        let windows = match render::blocking(self.request_timeout(), "list_windows", move || {
            session.list_windows(&filter)
        })
        .await
        {
            Ok(w) => w,
            Err(e) => return error(&e),
        };
        let mut text = format!("{} window(s), topmost first:", windows.len());
        for w in &windows {
            text.push_str(&format!("\nwindow_id {}", window_line(w)));
        }
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({
            "windows": windows.iter().map(window_json).collect::<Vec<_>>(),
        }));
        result
    }

    /// One window as it is now: app, pid, title, frame, state.
    #[tool(
        name = "get_window",
        annotations(
            title = "Get window",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn get_window(&self, Parameters(a): Parameters<WindowArgs>) -> CallToolResult {
        let session = self.session();
        let w = match render::blocking(self.request_timeout(), "get_window", move || {
            view::resolve(&session, a.window_id, a.window.as_ref())
        })
        .await
        {
            Ok(w) => w,
            Err(e) => return error(&e),
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
            "Window {}",
            window_line(&w)
        ))]);
        result.structured_content = Some(json!({ "window": window_json(&w) }));
        result
    }

    /// Start an app by its list_apps id or name, or a program path; reports the window it opened.
    #[tool(
        name = "launch_app",
        annotations(
            title = "Launch app",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn launch_app(&self, Parameters(a): Parameters<LaunchArgs>) -> CallToolResult {
        let wait = Duration::from_millis(a.wait_ms);
        if wait > MAX_LAUNCH_WAIT {
            return error(&deskpilot_engine::Error::InvalidArgument {
                message: format!(
                    "wait_ms {} is beyond the {} ms maximum",
                    a.wait_ms,
                    MAX_LAUNCH_WAIT.as_millis()
                ),
            });
        }
        let query = a.app;
        report::act(
            self.session(),
            &WORDING,
            report::Step {
                what: "launch_app",
                timeout: self.request_timeout() + wait,
                check: Check::default(),
                target: VerifyTarget::Screen,
            },
            move |s| {
                let (app, outcome) = s.launch_app(&query, wait)?;
                Ok(Launched(app, outcome))
            },
            |Launched(app, o)| {
                let opened: Vec<_> = o.windows.iter().chain(&o.other_windows).collect();
                let what = match app {
                    Some((i, _)) => format!("{} ({})", i.name, i.id),
                    None => o.command.clone(),
                };
                let mut text = format!("Launched {what}: pid {}", o.pid);
                if opened.is_empty() {
                    text.push_str(&format!(
                        "; no window appeared within {} ms",
                        o.waited.as_millis()
                    ));
                    if let Some(code) = o.exited {
                        text.push_str(&format!(
                            "; it exited ({}){}",
                            code.map_or("killed by a signal".to_string(), |c| format!("code {c}")),
                            if o.stderr_tail.is_empty() {
                                String::new()
                            } else {
                                format!(": {}", o.stderr_tail.trim())
                            }
                        ));
                    }
                } else {
                    text.push_str(". Its window:");
                    for w in &opened {
                        text.push_str(&format!("\n\twindow_id {}", window_line(w)));
                    }
                }
                Body::new(
                    text,
                    json!({
                        "app": app.as_ref().map(|(i, _)| json!({ "id": i.id, "name": i.name })),
                        "found_by": app.as_ref().map(|(_, how)| format!("{how:?}").to_lowercase()),
                        "command": o.command,
                        "pid": o.pid,
                        "windows": opened.iter().map(|w| window_json(w)).collect::<Vec<_>>(),
                        "window_id": opened.first().map(|w| w.id.0),
                        "exited": o.exited,
                    }),
                )
            },
        )
        .await
    }

    /// Bring a window to the foreground (restoring it when minimized).
    #[tool(
        name = "activate_window",
        annotations(
            title = "Activate window",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn activate_window(&self, Parameters(a): Parameters<WindowArgs>) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            report::Step {
                what: "activate_window",
                timeout: self.request_timeout(),
                check: Check::default(),
                target: VerifyTarget::Auto,
            },
            move |s| {
                let target = view::target(a.window_id, a.window.as_ref())?;
                s.window_action(&target, WindowAction::Focus)
                    .map_err(view::in_words)
            },
            |o| {
                let now = o.after.as_ref().unwrap_or(&o.before);
                let mut text = format!("Activated window {}", window_line(now));
                for n in &o.notes {
                    text.push_str("\nNote: ");
                    text.push_str(&n.to_string());
                }
                Body::new(text, json!({ "window": window_json(now) }))
            },
        )
        .await
    }
}
