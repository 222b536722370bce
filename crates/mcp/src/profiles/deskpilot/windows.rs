//! `list_windows`, and `list_apps` (the kit's) in this profile's words.

use crate::kit::Parameters;
use deskpilot_engine::{RunningApp, WindowFilter};
use deskpilot_types::WindowInfo;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::{Deskpilot, DeskpilotServer, error};
use crate::kit::apps::{AppsProfile, AppsWording};
use crate::kit::render;

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListWindowsArgs {
    /// Title/process/class substring ("记事本").
    #[serde(default)]
    pub filter: String,
}

/// One line per window: `0x1a00003  pid 123 mousepad  "Title"  800x600+10+20  active`.
pub(crate) fn window_line(w: &WindowInfo) -> String {
    let flags = render::state_flags(&w.state, "active");
    format!(
        "{}  pid {} {}  \"{}\"  {}{}",
        w.id,
        w.pid.map_or("?".to_string(), |p| p.to_string()),
        w.process.as_deref().unwrap_or("?"),
        w.title,
        w.frame,
        if flags.is_empty() {
            String::new()
        } else {
            format!("  {}", flags.join(" "))
        }
    )
}

impl AppsProfile for Deskpilot {
    const APPS: AppsWording = AppsWording {
        description: "Running apps with windows; installed apps to start with window launch.",
        filter: "Title/process/class substring (\"记事本\").",
        label: "list apps",
        running: |n| format!("{n} running app(s):"),
        app: app_line,
        app_json: |a| {
            json!({
                "process": a.process,
                "pid": a.pid,
                "windows": a.windows,
            })
        },
        installed: |n| {
            format!(
                "\n{n} installed app(s) (start one with window {{action: \"launch\", command, args}} from its exec):"
            )
        },
        exec: true,
    };
}

/// `\nmousepad (pid 123): 0x1a00003 "Title", 0x1a00007 "Other"`.
fn app_line(a: &RunningApp) -> String {
    format!(
        "\n{} (pid {}): {}",
        a.process.as_deref().unwrap_or("?"),
        a.pid.map_or("?".to_string(), |p| p.to_string()),
        a.windows
            .iter()
            .map(|w| format!("{} \"{}\"", w.id, w.title))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

#[tool_router(router = windows_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Top-level windows, topmost first: id, title, process, pid, class, rects, state.
    #[tool(
        name = "list_windows",
        annotations(
            title = "List windows",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn list_windows(
        &self,
        Parameters(args): Parameters<ListWindowsArgs>,
    ) -> CallToolResult {
        let engine = self.session();
        let filter = WindowFilter {
            text: args.filter.clone(),
        };
        let windows = match render::blocking(self.request_timeout(), "list windows", move || {
            engine.list_windows(&filter)
        })
        .await
        {
            Ok(w) => w,
            Err(e) => return error(&e),
        };
        let mut text = match (windows.len(), args.filter.trim().is_empty()) {
            (0, true) => "No windows.".to_string(),
            (0, false) => format!(
                "No window matches \"{}\". Call list_windows without a filter to see all.",
                args.filter
            ),
            (n, _) => format!(
                "{n} window{} (topmost first):",
                if n == 1 { "" } else { "s" }
            ),
        };
        for w in &windows {
            text.push('\n');
            text.push_str(&window_line(w));
        }
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({ "count": windows.len(), "windows": windows }));
        result
    }
}
