//! The `deskpilot` profile: Codex-style granular tools.
//!
//! Tool groups live in their own modules (`windows`, `screenshot`, `status`, `pointer`,
//! `keyboard`, `manage`, `tree`, `elements`, `wait`, `shell`), each a
//! `#[tool_router(router = …)]`, merged in [`DeskpilotServer::new`] and trimmed by the
//! [`ToolFilter`] before the server answers anything. A tool maps its arguments to an engine
//! request and the engine's answer to text through the kit; `wording` says everything in
//! this profile's words.

mod browser;
mod context;
mod elements;
mod keyboard;
mod manage;
mod ocr;
mod pointer;
mod screenshot;
mod shell;
mod skills;
mod status;
mod targets;
mod tree;
mod wait;
mod windows;
pub(crate) mod wording;

use std::sync::Arc;
use std::time::Duration;

use deskpilot_engine::{Engine, Session};
use rmcp::handler::server::router::tool::ToolRouter;

use crate::ServerIdentity;
use crate::kit::{self, ToolFilter};

pub(crate) use wording::error;

/// How long one desktop call may take before the tool reports a timeout.
const DESKTOP_TIMEOUT: Duration = Duration::from_secs(30);

impl DeskpilotServer {
    /// How long a desktop call may take: the deployment's `requestTimeoutMs`, else 30 s.
    fn request_timeout(&self) -> Duration {
        self.session()
            .config()
            .request_timeout
            .unwrap_or(DESKTOP_TIMEOUT)
    }

    /// How long a capture may take: the deployment's `screenshotTimeoutMs`, else 30 s.
    fn screenshot_timeout(&self) -> Duration {
        self.session()
            .config()
            .screenshot_timeout
            .unwrap_or(DESKTOP_TIMEOUT)
    }
}

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

/// The MCP server for the `deskpilot` profile: one per connection, over its own [`Session`].
#[derive(Clone)]
pub struct DeskpilotServer {
    session: Arc<Session>,
    identity: ServerIdentity,
    tool_router: ToolRouter<Self>,
    /// What `tools/list` answers: the router's tools with compact schemas.
    tools: Arc<Vec<rmcp::model::Tool>>,
    hidden: Arc<Vec<String>>,
}

impl std::fmt::Debug for DeskpilotServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeskpilotServer")
            .field("identity", &self.identity)
            .field("session", &self.session.id())
            .field("tools", &self.tool_names())
            .field("hidden", &self.hidden)
            .finish()
    }
}

impl DeskpilotServer {
    /// A server for one client of `engine`, exposing the tools `filter` allows.
    pub fn new(engine: Arc<Engine>, identity: ServerIdentity, filter: &ToolFilter) -> Self {
        let router = Self::router();
        let (tool_router, hidden) = filter.apply(router);
        let tools = tool_router
            .list_all()
            .into_iter()
            .map(kit::schema::compact)
            .collect();
        DeskpilotServer {
            session: Arc::new(Session::new(engine)),
            identity,
            tool_router,
            tools: Arc::new(tools),
            hidden: Arc::new(hidden),
        }
    }

    fn router() -> ToolRouter<Self> {
        Self::windows_router()
            + Self::screenshot_router()
            + Self::ocr_router()
            + Self::skills_router()
            + Self::status_router()
            + Self::pointer_router()
            + Self::keyboard_router()
            + Self::manage_router()
            + Self::tree_router()
            + Self::elements_router()
            + Self::wait_router()
            + Self::shell_router()
            + Self::browser_router()
            + Self::context_router()
    }

    /// Names of the tools this server exposes, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        kit::filter::names(&self.tool_router)
    }

    pub(crate) fn session(&self) -> Arc<Session> {
        self.session.clone()
    }

    /// This connection's session.
    pub fn client_session(&self) -> &Arc<Session> {
        &self.session
    }
}

/// Every tool as the routers declare it, before compacting.
#[cfg(test)]
pub(crate) fn tools_list_raw() -> Vec<rmcp::model::Tool> {
    DeskpilotServer::router().list_all()
}

/// What `tools/list` answers with every tool exposed (for the snapshot test and the
/// benchmark's size row).
pub fn tools_list() -> Vec<rmcp::model::Tool> {
    DeskpilotServer::router()
        .list_all()
        .into_iter()
        .map(kit::schema::compact)
        .collect()
}

crate::kit::handler::profile_handler!(
    DeskpilotServer,
    "deskpilot",
    INSTRUCTIONS,
    &wording::WORDING
);
