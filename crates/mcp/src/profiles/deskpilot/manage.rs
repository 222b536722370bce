//! `window` (focus / minimize / maximize / restore / close / move / resize / launch) and the
//! clipboard tools.

use std::time::Duration;

use crate::kit::Parameters;
use deskpilot_engine::{
    Check, Error, LaunchOutcome, MAX_LAUNCH_WAIT, VerifyTarget, WindowAction, WindowOutcome,
    WindowRef, describe_state,
};
use deskpilot_types::{WindowId, WindowInfo};
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::wording::WORDING;
use super::{DeskpilotServer, error};
use crate::kit::clipboard;
use crate::kit::report::{self, Body};

/// Texts longer than this are previewed, not repeated in full, in the text block.

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WindowActionArg {
    /// To the front with keyboard focus (verified; FOCUS_REFUSED otherwise).
    Focus,
    Minimize,
    Maximize,
    /// Undo minimize / maximize.
    Restore,
    /// Like its close button (unsaved work may prompt).
    Close,
    /// Frame's top-left to x/y (physical pixels).
    Move,
    /// Make the frame width x height (physical pixels).
    Resize,
    /// Start command with args (no shell); reports its windows.
    Launch,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowArgs {
    /// close: like its close button (unsaved work may prompt).
    pub action: WindowActionArg,
    /// The window (list_windows id).
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Or title/process.
    #[serde(default, alias = "titleMatch")]
    pub title_match: String,
    /// move: frame's left edge (physical px).
    pub x: Option<i32>,
    /// move: frame's top edge (physical px).
    pub y: Option<i32>,
    /// resize: frame width (physical px).
    pub width: Option<u32>,
    /// resize: frame height (physical px).
    pub height: Option<u32>,
    /// launch: program on PATH, or a path.
    #[serde(default)]
    pub command: String,
    /// launch: one argument per entry (no shell quoting).
    #[serde(default)]
    pub args: Vec<String>,
    /// launch: ms to await a window (default 10000, max 60000).
    #[serde(default = "ten_seconds")]
    pub wait_ms: u64,
    #[serde(default)]
    pub verify: bool,
    #[serde(default)]
    pub observe: bool,
}

fn ten_seconds() -> u64 {
    10_000
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClipboardWriteArgs {
    /// Exact; any Unicode.
    pub text: String,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClipboardReadArgs {}

fn label(w: &WindowInfo) -> String {
    format!("{} {}", w.id, w.label())
}

impl WindowArgs {
    fn target(&self) -> Result<WindowRef, Error> {
        match (self.window_id, self.title_match.trim().is_empty()) {
            (0, true) => Err(Error::InvalidArgument {
                message: format!(
                    "{:?} needs window_id (from list_windows) or title_match",
                    self.action
                )
                .to_lowercase(),
            }),
            (0, false) => Ok(WindowRef::TitleMatch(self.title_match.clone())),
            (id, _) => Ok(WindowRef::Id(WindowId(id))),
        }
    }

    fn action(&self) -> Result<WindowAction, Error> {
        let missing = |what: &str| Error::InvalidArgument {
            message: format!("{what} needs {}", what_needs(what)),
        };
        Ok(match self.action {
            WindowActionArg::Focus => WindowAction::Focus,
            WindowActionArg::Minimize => WindowAction::Minimize,
            WindowActionArg::Maximize => WindowAction::Maximize,
            WindowActionArg::Restore => WindowAction::Restore,
            WindowActionArg::Close => WindowAction::Close,
            WindowActionArg::Move => match (self.x, self.y) {
                (Some(x), Some(y)) => WindowAction::Move { x, y },
                _ => return Err(missing("move")),
            },
            WindowActionArg::Resize => match (self.width, self.height) {
                (Some(width), Some(height)) => WindowAction::Resize { width, height },
                _ => return Err(missing("resize")),
            },
            WindowActionArg::Launch => {
                return Err(Error::Internal {
                    message: "launch is not a window action".to_string(),
                });
            }
        })
    }
}

fn what_needs(action: &str) -> &'static str {
    match action {
        "move" => "x and y (the frame's new top-left corner, physical pixels)",
        _ => "width and height (the frame's new size, physical pixels)",
    }
}

fn window_body(action: WindowAction, o: &WindowOutcome) -> Body {
    let verb = action.verb();
    let mut text = match &o.after {
        Some(after) => format!(
            "{verb}: window {} is now {}.",
            label(after),
            describe_state(after)
        ),
        None => format!("{verb}: window {} closed.", label(&o.before)),
    };
    for n in &o.notes {
        text.push_str("\nNote: ");
        text.push_str(&n.to_string());
    }
    Body::new(
        text,
        json!({
            "action": verb,
            "window": o.after,
            "before": o.before,
            "closed": o.after.is_none(),
            "notes": o.notes,
        }),
    )
}

fn launch_body(o: &LaunchOutcome, wait: Duration) -> Body {
    let mut text = format!("Launched {} (pid {}).", o.command, o.pid);
    for w in &o.windows {
        text.push_str(&format!("\nWindow {}: {}.", label(w), describe_state(w)));
    }
    for w in &o.other_windows {
        text.push_str(&format!(
            "\nNew window of another process {}: {} (the program may have handed off to a running instance).",
            label(w),
            describe_state(w)
        ));
    }
    let no_window = o.windows.is_empty() && o.other_windows.is_empty();
    if no_window {
        match o.exited {
            Some(code) => text.push_str(&format!(
                "\nNo window appeared; the process exited with {} after {} ms.",
                code.map_or("a signal".to_string(), |c| format!("code {c}")),
                o.waited.as_millis()
            )),
            None => text.push_str(&format!(
                "\nNo window appeared within {} ms; the process is still running. Call list_windows later, or launch with a longer wait_ms.",
                wait.as_millis()
            )),
        }
        if !o.stderr_tail.is_empty() {
            text.push_str("\nIts stderr ends with:\n");
            text.push_str(&o.stderr_tail);
        }
    }
    Body::new(
        text,
        json!({
            "action": "launch",
            "command": o.command,
            "pid": o.pid,
            "window": o.windows.first().or(o.other_windows.first()),
            "windows": o.windows,
            "other_windows": o.other_windows,
            "exited": o.exited.is_some(),
            "exit_code": o.exited.flatten(),
            "waited_ms": o.waited.as_millis() as u64,
        }),
    )
}

#[tool_router(router = manage_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Change or close a window (effect checked), or launch a program (no shell) and report its
    /// windows.
    #[tool(
        name = "window",
        annotations(
            title = "Window",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn window(&self, Parameters(a): Parameters<WindowArgs>) -> CallToolResult {
        if a.action == WindowActionArg::Launch {
            let wait = Duration::from_millis(a.wait_ms);
            if wait > MAX_LAUNCH_WAIT {
                return error(&Error::InvalidArgument {
                    message: format!(
                        "wait_ms {} is beyond {}",
                        a.wait_ms,
                        MAX_LAUNCH_WAIT.as_millis()
                    ),
                });
            }
            let (command, args) = (a.command, a.args);
            return report::act(
                self.session(),
                &WORDING,
                report::Step {
                    what: "launch",
                    timeout: wait + self.request_timeout(),
                    check: Check::new(a.verify, a.observe),
                    target: VerifyTarget::Screen,
                },
                move |s| s.launch(&command, &args, wait),
                |o| launch_body(o, wait),
            )
            .await;
        }
        let (target, action) = match (a.target(), a.action()) {
            (Ok(t), Ok(act)) => (t, act),
            (Err(e), _) | (_, Err(e)) => return error(&e),
        };
        report::act(
            self.session(),
            &WORDING,
            report::Step {
                what: "window",
                timeout: self.request_timeout(),
                check: Check::new(a.verify, a.observe),
                target: VerifyTarget::Screen,
            },
            move |s| s.window_action(&target, action),
            |o| window_body(action, o),
        )
        .await
    }

    /// Read the clipboard's text (plain text only).
    #[tool(
        name = "clipboard_read",
        annotations(
            title = "Read clipboard",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn clipboard_read(
        &self,
        Parameters(_a): Parameters<ClipboardReadArgs>,
    ) -> CallToolResult {
        clipboard::read(
            self.session(),
            &WORDING,
            self.request_timeout(),
            "clipboard_read",
        )
        .await
    }

    /// Set the clipboard to text; paste with press_key ["ctrl","v"].
    #[tool(
        name = "clipboard_write",
        annotations(
            title = "Write clipboard",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn clipboard_write(
        &self,
        Parameters(a): Parameters<ClipboardWriteArgs>,
    ) -> CallToolResult {
        clipboard::write(
            self.session(),
            &WORDING,
            self.request_timeout(),
            "clipboard_write",
            a.text,
            "Paste with press_key [\"ctrl\",\"v\"].",
        )
        .await
    }
}
