//! `list_windows` and `list_apps`.

use crate::kit::Parameters;
use deskpilot_engine::WindowFilter;
use deskpilot_types::WindowInfo;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::{DeskpilotServer, error};
use crate::kit::render;

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListWindowsArgs {
    /// Title, process or class substring ("记事本").
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

#[tool_router(router = windows_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Running apps with windows; installed apps to start with window launch.
    #[tool(
        name = "list_apps",
        annotations(
            title = "List apps",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn list_apps(&self, Parameters(args): Parameters<ListWindowsArgs>) -> CallToolResult {
        let session = self.session();
        let list = match render::blocking(self.request_timeout(), "list apps", move || {
            session.list_apps()
        })
        .await
        {
            Ok(l) => l,
            Err(e) => return error(&e),
        };
        let list = list.matching(&args.filter);
        let (running, installed) = (list.running.as_slice(), list.installed.as_slice());
        let mut text = format!("{} running app(s):", running.len());
        for a in running {
            text.push_str(&format!(
                "\n{} (pid {}): {}",
                a.process.as_deref().unwrap_or("?"),
                a.pid.map_or("?".to_string(), |p| p.to_string()),
                a.windows
                    .iter()
                    .map(|w| format!("{} \"{}\"", w.id, w.title))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        text.push_str(&format!(
            "\n{} installed app(s) (start one with window {{action: \"launch\", command, args}} from its exec):",
            installed.len()
        ));
        for a in installed {
            let local: Vec<&str> = a.localized.values().map(String::as_str).collect();
            text.push_str(&format!(
                "\n{}: {}{} — {}",
                a.id,
                a.name,
                if local.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", local.join(", "))
                },
                a.exec.join(" ")
            ));
        }
        if let Some(e) = &list.catalog_error {
            text.push_str(&format!("\nThe installed apps could not be read: {e}"));
        }
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({
            "running": running.iter().map(|a| json!({
                "process": a.process,
                "pid": a.pid,
                "windows": a.windows,
            })).collect::<Vec<_>>(),
            "installed": installed.iter().map(|a| json!({
                "id": a.id,
                "name": a.name,
                "localized": a.localized,
                "exec": a.exec,
                "icon": a.icon,
                "keywords": a.keywords,
                "source": a.source,
            })).collect::<Vec<_>>(),
            "catalog_error": list.catalog_error,
        }));
        result
    }

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
