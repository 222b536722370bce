//! `status`: what this server is attached to and what it last did.

use crate::kit::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::{DeskpilotServer, error};
use crate::kit::render;

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResumeArgs {}

#[tool_router(router = status_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Clear the kill switch after a human's Esc ONLY when they say so; refused for 5 s after.
    #[tool(
        name = "resume",
        annotations(
            title = "Resume after a stop",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn resume(&self, Parameters(_): Parameters<ResumeArgs>) -> CallToolResult {
        let engine = self.session();
        match render::blocking(self.request_timeout(), "resume", move || engine.resume()).await {
            Ok(None) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(
                    "Nothing to resume: the kill switch is not tripped.",
                )]);
                r.structured_content = Some(json!({ "resumed": false, "was_stopped": false }));
                r
            }
            Ok(Some(stop)) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
                    "Resumed: mutating actions run again (the stop was: {}).",
                    stop.describe()
                ))]);
                r.structured_content = Some(json!({
                    "resumed": true,
                    "was_stopped": true,
                    "reason": stop.reason.name(),
                }));
                r
            }
            Err(e) => error(&e),
        }
    }

    /// Platform, display, monitors, active window, guard state, shells, tools.
    #[tool(
        name = "status",
        annotations(
            title = "Status",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn status(&self, Parameters(_): Parameters<StatusArgs>) -> CallToolResult {
        let engine = self.session();
        let report =
            match render::blocking(self.request_timeout(), "status", move || engine.status()).await
            {
                Ok(r) => r,
                Err(e) => return error(&e),
            };
        let b = &report.backend;
        let mut text = format!(
            "{} {} on {} display {} (capture: {}; window manager: {}).\nDesktop {} with {} monitor(s):",
            self.identity.name,
            self.identity.version,
            b.platform,
            b.display,
            b.capture_method,
            b.window_manager.as_deref().unwrap_or("none"),
            report.desktop,
            report.monitors.len()
        );
        render::monitor_lines(&mut text, &report.monitors);
        text.push_str(&format!("\n{} window(s)", report.window_count));
        if let Some(w) = &report.active_window {
            text.push_str(&format!("; active: {}", super::windows::window_line(w)));
        }
        let cursor_in_image = report
            .cursor
            .and_then(|c| report.last_screenshot.as_ref()?.view.physical_to_image(c));
        if let Some(c) = report.cursor {
            text.push_str(&format!("\nCursor at physical ({}, {})", c.x, c.y));
            if let Some((ix, iy)) = cursor_in_image {
                text.push_str(&format!(", image ({ix}, {iy}) in the last screenshot"));
            }
        }
        if let Some(s) = &report.last_screenshot {
            text.push_str(&format!(
                "\nLast screenshot: {} ({}x{} of {})",
                s.id, s.view.width, s.view.height, s.view.capture
            ));
        }
        if report.mask_regions > 0 {
            text.push_str(&format!(
                "\n{} privacy mask region(s) apply to every capture.",
                report.mask_regions
            ));
        }
        let safety = &report.safety;
        text.push_str(&format!(
            "\nGates: dry run {}; blocklist {} entr{}; launch {}; closing windows {}.",
            if safety.dry_run {
                "ON (nothing reaches the desktop)"
            } else {
                "off"
            },
            safety.blocklist.len(),
            if safety.blocklist.len() == 1 {
                "y"
            } else {
                "ies"
            },
            if safety.allow_launch {
                "allowed"
            } else {
                "off"
            },
            if safety.allow_close_window {
                "allowed"
            } else {
                "off"
            },
        ));
        let g = &report.guard;
        let kill_switch = match &g.stop {
            Some(stop) => format!(
                "TRIPPED ({}: {}) — every mutating action fails with STOPPED_BY_HUMAN until resume",
                stop.reason.name(),
                stop.describe()
            ),
            None if g.esc_armed => "armed (Esc stops the agent)".to_string(),
            None if !safety.esc_stop => "off (escStop = false)".to_string(),
            None => "not armed (armed while the overlay is visible)".to_string(),
        };
        text.push_str(&format!(
            "\nHost: {}. Overlay: {} (mode {}{}){}. Kill switch: {kill_switch}. Approval: {}. Mutating actions so far: {}. Coordinates: x/y are read in the last screenshot's image pixels unless coordinates = \"physical\".",
            if g.stop.as_ref().is_some_and(|s| matches!(s.reason, deskpilot_engine::StopReason::HostExited(_))) {
                "exited"
            } else {
                "running"
            },
            if g.overlay_visible { "visible" } else { "hidden" },
            safety.overlay.as_str(),
            g.overlay_pid.map(|p| format!(", pid {p}")).unwrap_or_default(),
            g.overlay_error
                .as_ref()
                .map(|e| format!("; overlay guard unavailable: {e}"))
                .unwrap_or_default(),
            if safety.require_approval {
                "every mutating action asks the human (requireApproval = mutating)"
            } else {
                "not required"
            },
            g.mutations,
        ));
        let shells = self.session.shells();
        let shell = shells
            .program()
            .map(|p| p.program.to_string_lossy().into_owned());
        let sessions = shells.names();
        text.push_str(&format!(
            "\nShell: {}; sessions: {}.",
            shell
                .as_deref()
                .unwrap_or("none found (shell tools answer SHELL_UNAVAILABLE)"),
            if sessions.is_empty() {
                "none yet".to_string()
            } else {
                sessions.join(", ")
            }
        ));
        let tools = self.tool_names();
        text.push_str(&format!("\nTools: {}", tools.join(", ")));
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({
            "server": { "name": self.identity.name, "version": self.identity.version },
            "platform": b.platform,
            "display": b.display,
            "capture_method": b.capture_method,
            "window_manager": b.window_manager,
            "desktop": report.desktop,
            "monitors": report.monitors,
            "window_count": report.window_count,
            "active_window": report.active_window,
            "last_screenshot": report.last_screenshot.as_ref().map(|s| json!({ "screenshot_id": s.id, "view": s.view })),
            "mask_regions": report.mask_regions,
            "dry_run": safety.dry_run,
            "blocklist_entries": safety.blocklist.len(),
            "allow_launch": safety.allow_launch,
            "allow_close_window": safety.allow_close_window,
            "host": if g.stop.as_ref().is_some_and(|s| matches!(s.reason, deskpilot_engine::StopReason::HostExited(_))) { "exited" } else { "running" },
            "overlay": {
                "mode": safety.overlay.as_str(),
                "visible": g.overlay_visible,
                "pid": g.overlay_pid,
                "error": g.overlay_error,
                "escapes": { "own": g.escapes.own, "human": g.escapes.human },
            },
            "kill_switch": {
                "state": if g.stop.is_some() { "tripped" } else if g.esc_armed { "armed" } else { "idle" },
                "reason": g.stop.as_ref().map(|s| s.reason.name()),
                "message": g.stop.as_ref().map(|s| s.describe()),
                "esc_stop": safety.esc_stop,
            },
            "require_approval": safety.require_approval,
            "mutating_actions": g.mutations,
            "coordinate_space": "image",
            "shell": { "program": shell, "sessions": sessions },
            "cursor": report.cursor,
            "cursor_in_last_screenshot": cursor_in_image.map(|(x, y)| json!({ "x": x, "y": y })),
            "tools": tools,
        }));
        result
    }
}
