//! `app_window`: dsh-computer-use's list, focus, launch, minimize, maximize, restore, close — by `hwnd`
//! (preferred) or `titleMatch` (exactly one window, else `AMBIGUOUS_WINDOW`).

use std::time::Duration;

use deskpilot_engine::{
    Check, Error, LaunchOutcome, VerifyTarget, WindowAction, WindowFilter, WindowOutcome,
    WindowRef, describe_state,
};
use deskpilot_types::WindowId;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::envelope::{window_json, window_words};
use super::wording::WORDING;
use super::{DshServer, error};
use crate::kit::report::{self, Body};
use crate::kit::{Parameters, render};

/// How long `launch` waits for the new window.
const LAUNCH_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AppWindowAction {
    List,
    Focus,
    Launch,
    Minimize,
    Maximize,
    Restore,
    Close,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AppWindowArgs {
    /// What to do.
    pub action: AppWindowAction,
    /// Window handle from list (preferred over titleMatch).
    pub hwnd: Option<u64>,
    /// Case-insensitive substring of the title or process name; must match exactly one window.
    pub title_match: Option<String>,
    /// list: narrow the listing ("chrome", "记事本").
    pub filter: Option<String>,
    /// launch: executable name or full path (no shell).
    pub command: Option<String>,
    /// launch: one entry per argument.
    #[serde(default)]
    pub args: Vec<String>,
    /// Report whether the screen changed.
    #[serde(default)]
    pub verify: bool,
    /// Append a fresh screenshot.
    #[serde(default)]
    pub observe: bool,
}

impl AppWindowArgs {
    fn target(&self) -> Result<WindowRef, Error> {
        match (self.hwnd, self.title_match.as_deref().map(str::trim)) {
            (Some(h), _) => Ok(WindowRef::Id(WindowId(h))),
            (None, Some(t)) if !t.is_empty() => Ok(WindowRef::TitleMatch(t.to_string())),
            _ => Err(Error::InvalidArgument {
                message: format!(
                    "hwnd: {:?} needs hwnd (from app_window list) or titleMatch",
                    self.action
                )
                .to_lowercase(),
            }),
        }
    }
}

fn window_result(action: WindowAction, o: &WindowOutcome) -> Body {
    let verb = action.verb();
    let mut text = match &o.after {
        Some(after) => format!(
            "{verb}: {} is now {}.",
            window_words(after),
            describe_state(after)
        ),
        None => format!("{verb}: {} closed.", window_words(&o.before)),
    };
    for n in &o.notes {
        text.push_str("\nNote: ");
        text.push_str(&n.to_string());
    }
    let shown = o.after.as_ref().unwrap_or(&o.before);
    Body::new(
        text,
        json!({
            "action": verb,
            "hwnd": shown.id.0,
            "window": window_json(shown),
            "result": {
                "bounds": o.after.as_ref().map(|w| w.frame),
                "closed": o.after.is_none(),
                "minimized": o.after.as_ref().map(|w| w.state.minimized),
                "maximized": o.after.as_ref().map(|w| w.state.maximized),
                "foreground": o.after.as_ref().map(|w| w.state.active),
            },
            "notes": o.notes,
        }),
    )
}

fn launch_result(o: &LaunchOutcome) -> Body {
    let mut text = format!("Launched {} (pid {}).", o.command, o.pid);
    let all: Vec<_> = o.windows.iter().chain(&o.other_windows).collect();
    for w in &all {
        text.push_str(&format!(
            "\nWindow: {}, {}.",
            window_words(w),
            describe_state(w)
        ));
    }
    if all.is_empty() {
        match o.exited {
            Some(code) => text.push_str(&format!(
                "\nNo window appeared: the process exited with {} after {} ms.",
                code.map_or("a signal".to_string(), |c| format!("code {c}")),
                o.waited.as_millis()
            )),
            None => text.push_str(&format!(
                "\nNo window appeared within {} ms; the process is still running. Call app_window list later.",
                o.waited.as_millis()
            )),
        }
        if !o.stderr_tail.is_empty() {
            text.push_str("\nIts stderr ends with:\n");
            text.push_str(&o.stderr_tail);
        }
    }
    let first = all.first();
    Body::new(
        text,
        json!({
            "command": o.command,
            "pid": o.pid,
            "process": first.and_then(|w| w.process.clone()),
            "hwnd": first.map(|w| w.id.0),
            "window": first.map(|w| window_json(w)),
            "windows": all.iter().map(|w| window_json(w)).collect::<Vec<_>>(),
            "noWindow": all.is_empty(),
            "exited": o.exited.is_some(),
            "exitCode": o.exited.flatten(),
        }),
    )
}

#[tool_router(router = windows_router, vis = "pub(crate)")]
impl DshServer {
    /// Real windows: list (foreground first; use its hwnd), focus, launch (command + args, no shell), minimize,
    /// maximize, restore, close.
    #[tool(
        name = "app_window",
        annotations(
            title = "App windows",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn app_window(&self, Parameters(a): Parameters<AppWindowArgs>) -> CallToolResult {
        let check = Check::new(a.verify, a.observe);
        let step = |what| report::Step {
            what,
            timeout: self.request_timeout(),
            check,
            target: VerifyTarget::Screen,
        };
        let action = match a.action {
            AppWindowAction::List => return self.list(a.filter.unwrap_or_default()).await,
            AppWindowAction::Launch => {
                let Some(command) = a.command.filter(|c| !c.trim().is_empty()) else {
                    return error(&Error::InvalidArgument {
                        message: "command: launch needs an executable name or path".to_string(),
                    });
                };
                let args = a.args;
                let mut step = step("launch");
                step.timeout += LAUNCH_WAIT;
                return report::act(
                    self.session(),
                    &WORDING,
                    step,
                    move |s| s.launch(&command, &args, LAUNCH_WAIT),
                    launch_result,
                )
                .await;
            }
            AppWindowAction::Focus => WindowAction::Focus,
            AppWindowAction::Minimize => WindowAction::Minimize,
            AppWindowAction::Maximize => WindowAction::Maximize,
            AppWindowAction::Restore => WindowAction::Restore,
            AppWindowAction::Close => WindowAction::Close,
        };
        let target = match a.target() {
            Ok(t) => t,
            Err(e) => return error(&e),
        };
        report::act(
            self.session(),
            &WORDING,
            step("app_window"),
            move |s| s.window_action(&target, action),
            move |o| {
                let mut b = window_result(action, o);
                if action == WindowAction::Focus {
                    b.text.push_str(
                        "\nNote: focus is a read; another app may still take the foreground later.",
                    );
                }
                b
            },
        )
        .await
    }
}

impl DshServer {
    async fn list(&self, filter: String) -> CallToolResult {
        let session = self.session();
        let f = WindowFilter {
            text: filter.clone(),
        };
        let mut windows =
            match render::blocking(self.request_timeout(), "app_window list", move || {
                session.list_windows(&f)
            })
            .await
            {
                Ok(w) => w,
                Err(e) => return error(&e),
            };
        // Foreground first, then the stacking order.
        windows.sort_by_key(|w| (!w.state.active, w.z));
        let mut text = match (windows.len(), filter.trim().is_empty()) {
            (0, true) => "No windows.".to_string(),
            (0, false) => {
                format!("No window matches \"{filter}\"; list without a filter to see all.")
            }
            (n, _) => format!("{n} window(s), foreground first:"),
        };
        for w in &windows {
            text.push_str(&format!(
                "\nhwnd {}  pid {} {}  \"{}\"  class {}  {}{}",
                w.id.0,
                w.pid.map_or("?".to_string(), |p| p.to_string()),
                w.process.as_deref().unwrap_or("?"),
                w.title,
                w.class,
                w.frame,
                render::state_flags(&w.state, "foreground")
                    .iter()
                    .map(|flag| format!(" {flag}"))
                    .collect::<String>()
            ));
        }
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = Some(json!({
            "count": windows.len(),
            "windows": windows.iter().map(window_json).collect::<Vec<_>>(),
        }));
        r
    }
}
