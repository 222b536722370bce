//! The `dsh` profile: seed 004 (dsh-computer-use) as a drop-in — five tools (`computer`,
//! `app_window`, `ui_element`, `clipboard`, `app_skill`), 38 actions, seed 004's parameter
//! names, defaults, ranges, error codes and envelopes.
//!
//! The profile only translates: each action maps its arguments to the same engine and session
//! calls the `deskpilot` profile makes, and renders the answer as one canonical JSON object
//! (`structuredContent`) plus a text block and an optional image block. Where seed 004's
//! meaning differs from deskpilot's (scroll sign, x/y omitted = the pointer, `type` counting
//! UTF-16 units, paths instead of tokens, `PATTERN_UNSUPPORTED`), the translation lives here.

mod computer;
mod elements;
mod envelope;
mod others;
mod windows;
mod wording;

use std::sync::Arc;
use std::time::Duration;

use deskpilot_engine::{Engine, Session};
use rmcp::handler::server::router::tool::ToolRouter;

use crate::ServerIdentity;
use crate::kit::{self, ToolFilter};

pub(crate) use wording::error;

/// Seed 004's `requestTimeoutMs` default.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(20_000);
/// Seed 004's `screenshotTimeoutMs` default.
const SCREENSHOT_TIMEOUT: Duration = Duration::from_millis(30_000);

const INSTRUCTIONS: &str = "dsh-computer-use tools drive this computer's real desktop. computer { action: \"screenshot\" } \
first: x/y of every later coordinate action are read in the pixel space of the last screenshot this tool returned (omit \
them to act at the pointer). Prefer app_window for windows (list, then act by hwnd) and ui_element for controls with a \
name (find or tree, then act by path). When a screenshot envelope says an app skill is available, app_skill get it \
before driving the app. observe: true appends a fresh screenshot, verify: true says whether the screen changed. A human \
can stop you with Esc (STOPPED_BY_HUMAN): stop, report, and wait until they ask you to continue.";

/// The MCP server for the `dsh` profile: one per connection, over its own [`Session`].
#[derive(Clone)]
pub struct DshServer {
    session: Arc<Session>,
    identity: ServerIdentity,
    tool_router: ToolRouter<Self>,
    tools: Arc<Vec<rmcp::model::Tool>>,
    hidden: Arc<Vec<String>>,
}

impl std::fmt::Debug for DshServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DshServer")
            .field("identity", &self.identity)
            .field("session", &self.session.id())
            .field("tools", &self.tool_names())
            .finish()
    }
}

impl DshServer {
    /// A server for one client of `engine`, exposing the tools `filter` allows.
    pub fn new(engine: Arc<Engine>, identity: ServerIdentity, filter: &ToolFilter) -> Self {
        let (tool_router, hidden) = filter.apply(Self::router());
        let tools = tool_router
            .list_all()
            .into_iter()
            .map(kit::schema::compact)
            .collect();
        DshServer {
            session: Arc::new(Session::new(engine)),
            identity,
            tool_router,
            tools: Arc::new(tools),
            hidden: Arc::new(hidden),
        }
    }

    fn router() -> ToolRouter<Self> {
        Self::computer_router()
            + Self::windows_router()
            + Self::elements_router()
            + Self::others_router()
    }

    /// Names of the tools this server exposes, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        kit::filter::names(&self.tool_router)
    }

    pub(crate) fn session(&self) -> Arc<Session> {
        self.session.clone()
    }

    /// How long a desktop call may take: `requestTimeoutMs`, else seed 004's 20 s.
    fn request_timeout(&self) -> Duration {
        self.session
            .config()
            .request_timeout
            .unwrap_or(REQUEST_TIMEOUT)
    }

    /// How long a capture may take: `screenshotTimeoutMs`, else seed 004's 30 s.
    fn screenshot_timeout(&self) -> Duration {
        self.session
            .config()
            .screenshot_timeout
            .unwrap_or(SCREENSHOT_TIMEOUT)
    }
}

/// Every tool as the routers declare it, before compacting.
#[cfg(test)]
pub(crate) fn tools_list_raw() -> Vec<rmcp::model::Tool> {
    DshServer::router().list_all()
}

/// What `tools/list` answers with every tool exposed.
#[cfg(test)]
pub(crate) fn tools_list() -> Vec<rmcp::model::Tool> {
    DshServer::router()
        .list_all()
        .into_iter()
        .map(kit::schema::compact)
        .collect()
}

crate::kit::handler::profile_handler!(DshServer, "dsh", INSTRUCTIONS, &wording::WORDING);
