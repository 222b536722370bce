//! The `deskpilot` profile: Codex-style granular tools.
//!
//! Tool groups live in their own modules (`windows`, `screenshot`, `status`, `pointer`,
//! `keyboard`, `manage`, `tree`, `elements`, `wait`, `shell`, `ocr`, `browser`, `memory`), each a
//! `#[tool_router(router = …)]` on [`DeskpilotServer`], merged in [`ProfileSpec::router`] with the
//! kit's shared tools (`app_skill`, the UI context tools) in this profile's words, and
//! trimmed by the tool filter before the server answers anything. A tool maps its arguments
//! to an engine request and the engine's answer to text through the kit; `wording` says
//! everything in this profile's words.

mod browser;
mod elements;
mod keyboard;
mod manage;
mod memory;
mod ocr;
mod page_tools;
mod pointer;
mod screenshot;
mod status;
mod targets;
mod tree;
mod wait;
mod windows;
pub(crate) mod wording;

use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;

use crate::kit::context::ContextWording;
use crate::kit::server::{ProfileSpec, Server};
use crate::kit::{self, Wording};

pub(crate) use wording::{done, error};

/// How long one desktop call may take before the tool reports a timeout.
const DESKTOP_TIMEOUT: Duration = Duration::from_secs(30);

const INSTRUCTIONS: &str = "deskpilot drives this computer's desktop. Typical loop: list_windows, then screenshot \
(a window_id or the screen) or get_window_state (its controls, with tokens like s3:12), then act. \
Coordinates: x/y are read in the pixel space of the last screenshot (or of screenshot_id) and map back to the exact \
screen pixel; coordinates \"physical\" takes screen pixels. A pointer action is refused when there is no screenshot, \
when its window moved or vanished, or when another window covers the point. Element tokens stay valid while the \
window's structure is unchanged; STALE_ELEMENT says what changed. Without a window, get_window_state, find_elements and \
wait_for use the window of your last screenshot or snapshot, else the active one. Every mutating result has route and \
effect (confirmed, unverifiable, suspected_noop, refused); verify: true compares the target's pixels before and after, \
observe: true adds a fresh screenshot. A human can stop you with Esc (STOPPED_BY_HUMAN): stop and wait for them. \
Errors carry a stable code and a Hint line saying what to do next.";

/// The `deskpilot` profile's tool groups, for `--tools` / `DESKPILOT_TOOLS` and the excludes;
/// every tool is in exactly one.
pub(crate) const GROUPS: kit::filter::Groups = &[
    ("screen", &["screenshot", "zoom", "perceive"]),
    (
        "input",
        &[
            "click",
            "double_click",
            "right_click",
            "move_cursor",
            "scroll",
            "drag",
            "press_key",
            "type_text",
            "type_secret",
        ],
    ),
    (
        "elements",
        &[
            "get_window_state",
            "find_elements",
            "set_value",
            "perform_action",
            "get_element_text",
        ],
    ),
    (
        "windows",
        &[
            "list_windows",
            "list_apps",
            "window",
            "wait",
            "wait_for",
            "status",
            "resume",
        ],
    ),
    (
        "browser",
        &[
            "browser_launch",
            "browser_attach",
            "browser_tabs",
            "browser_navigate",
            "browser_snapshot",
            "browser_click",
            "browser_type",
            "browser_fill",
            "browser_dialog",
            "browser_log",
            "browser_emulate",
            "browser_screenshot",
            "browser_press_key",
            "browser_wait_for",
            "browser_eval",
            "browser_close",
        ],
    ),
    (
        "shell",
        &[
            "shell_exec",
            "shell_exec_verified",
            "shell_cd",
            "shell_cwd",
            "shell_env_get",
            "shell_env_set",
            "shell_reset",
            "diagnose",
        ],
    ),
    ("ocr", &["ocr"]),
    (
        "memory",
        &[
            "memory_recall",
            "memory_timeline",
            "memory_stats",
            "memory_clear",
        ],
    ),
    (
        "context",
        &["ui_context_pick", "ui_context_current", "ui_context_clear"],
    ),
    ("skills", &["app_skill"]),
    ("clipboard", &["clipboard_read", "clipboard_write"]),
];

/// The `deskpilot` profile.
#[derive(Debug)]
pub struct Deskpilot;

/// The MCP server for the `deskpilot` profile: one per connection, over its own session.
pub type DeskpilotServer = Server<Deskpilot>;

/// The UI context tools in this profile's words.
const CONTEXT: ContextWording = ContextWording {
    pick: "The user points at a window, control or region and approves it; returns that context.",
    current: "The latest approved UI context and its directory (empty when none).",
    clear: "Forget the latest UI context (its files stay on disk).",
};

const APP_SKILL: &str = "Per-app recipes (hotkeys, menus, pitfalls): list, get (before driving an app a \
screenshot hints at), save, append, remove.";

impl ProfileSpec for Deskpilot {
    const NAME: &'static str = "deskpilot";
    const INSTRUCTIONS: &'static str = INSTRUCTIONS;
    const REQUEST_TIMEOUT: Duration = DESKTOP_TIMEOUT;
    const SCREENSHOT_TIMEOUT: Duration = DESKTOP_TIMEOUT;
    const GROUPS: kit::filter::Groups = GROUPS;

    fn wording() -> &'static dyn Wording {
        &wording::WORDING
    }

    fn router() -> ToolRouter<DeskpilotServer> {
        // Every tool's images are kept for deskpilot://screenshot/{id} (and answered as links
        // under `--images link`): the kit needs the calling session for that.
        kit::image::in_session(
            DeskpilotServer::windows_router()
                + kit::apps::tool::<Self>()
                + DeskpilotServer::screenshot_router()
                + DeskpilotServer::ocr_router()
                + kit::skills::tool::<Self>(APP_SKILL)
                + DeskpilotServer::status_router()
                + DeskpilotServer::pointer_router()
                + DeskpilotServer::keyboard_router()
                + DeskpilotServer::manage_router()
                + DeskpilotServer::tree_router()
                + DeskpilotServer::elements_router()
                + DeskpilotServer::wait_router()
                + kit::shell::tools::<Self>("diagnose")
                + DeskpilotServer::browser_router()
                + DeskpilotServer::page_router()
                + DeskpilotServer::memory_router()
                + kit::context::tools::<Self>(&CONTEXT),
        )
    }

    #[expect(deprecated, reason = "MCP logging is part of both revisions served")]
    fn capabilities() -> rmcp::model::ServerCapabilities {
        rmcp::model::ServerCapabilities::builder()
            .enable_completions()
            .enable_logging()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tasks()
            .build()
    }

    async fn list_resources(
        server: &DeskpilotServer,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListResourcesResult, rmcp::ErrorData> {
        kit::resources::list(server).await
    }

    async fn list_resource_templates(
        server: &DeskpilotServer,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, rmcp::ErrorData> {
        kit::resources::templates(server).await
    }

    async fn read_resource(
        server: &DeskpilotServer,
        request: rmcp::model::ReadResourceRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, rmcp::ErrorData> {
        kit::resources::read(server, &request.uri).await
    }

    fn serves_uri(server: &DeskpilotServer, uri: &str) -> bool {
        kit::resources::serves(server, uri)
    }

    async fn watch_from_now(server: &DeskpilotServer, uri: &str) {
        kit::resources::baseline(server, uri).await;
    }

    async fn list_prompts(
        server: &DeskpilotServer,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, rmcp::ErrorData> {
        kit::prompts::list(server).await
    }

    async fn get_prompt(
        server: &DeskpilotServer,
        request: rmcp::model::GetPromptRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, rmcp::ErrorData> {
        kit::prompts::get(server, request).await
    }

    async fn complete(
        server: &DeskpilotServer,
        request: rmcp::model::CompleteRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CompleteResult, rmcp::ErrorData> {
        kit::complete::complete(server, request).await
    }
}

/// Every tool as the routers declare it, before compacting.
#[cfg(test)]
pub(crate) fn tools_list_raw() -> Vec<rmcp::model::Tool> {
    kit::server::tools_list_raw::<Deskpilot>()
}

/// What `tools/list` answers with every tool exposed (for the snapshot test and the
/// benchmark's size row).
pub fn tools_list() -> Vec<rmcp::model::Tool> {
    kit::server::tools_list::<Deskpilot>()
}
