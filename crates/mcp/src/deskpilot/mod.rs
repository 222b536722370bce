//! The `deskpilot` profile: Codex-style granular tools.
//!
//! Tool groups live in their own modules (`windows`, `screenshot`, `status`, `pointer`,
//! `keyboard`, `manage`), each a
//! `#[tool_router(router = …)]`, merged in [`DeskpilotServer::new`] and trimmed by the
//! [`ToolFilter`] before the server answers anything.

mod approval;
mod check;
mod elements;
mod keyboard;
mod manage;
mod pointer;
mod screenshot;
mod shell;
mod status;
mod tree;
mod wait;
mod windows;

use std::sync::Arc;
use std::time::Duration;

use deskpilot_engine::Engine;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ProtocolVersion, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool_handler};

use crate::{ServerIdentity, ToolFilter};

/// How long one desktop call may take before the tool reports a timeout.
const DESKTOP_TIMEOUT: Duration = Duration::from_secs(30);

const INSTRUCTIONS: &str = "deskpilot drives this computer's desktop. Typical loop: list_windows to find a window id, \
screenshot (a window_id or the screen) to see it, then act. Coordinates you read off a screenshot are in that image's \
pixel space; deskpilot maps them back to the screen. Errors carry a stable code and a Hint line saying what to do next.";

/// The MCP server for the `deskpilot` profile.
#[derive(Clone)]
pub struct DeskpilotServer {
    engine: Arc<Engine>,
    identity: ServerIdentity,
    tool_router: ToolRouter<Self>,
    hidden: Arc<Vec<String>>,
    shells: Arc<deskpilot_shell::Shells>,
}

impl std::fmt::Debug for DeskpilotServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeskpilotServer")
            .field("identity", &self.identity)
            .field("tools", &self.tool_names())
            .field("hidden", &self.hidden)
            .finish()
    }
}

impl DeskpilotServer {
    /// A server over `engine` exposing the tools `filter` allows.
    pub fn new(engine: Arc<Engine>, identity: ServerIdentity, filter: &ToolFilter) -> Self {
        let mut router = Self::windows_router()
            + Self::screenshot_router()
            + Self::status_router()
            + Self::pointer_router()
            + Self::keyboard_router()
            + Self::manage_router()
            + Self::tree_router()
            + Self::elements_router()
            + Self::wait_router()
            + Self::shell_router();
        let known: Vec<String> = router
            .list_all()
            .into_iter()
            .map(|t| t.name.into_owned())
            .collect();
        for unknown in filter.unknown_names(&known) {
            tracing::warn!(tool = unknown, known = ?known, "tool filter names a tool this profile does not have");
        }
        let hidden: Vec<String> = known
            .iter()
            .filter(|n| !filter.allows(n))
            .cloned()
            .collect();
        for name in &hidden {
            router.remove_route(name);
        }
        DeskpilotServer {
            engine,
            identity,
            tool_router: router,
            hidden: Arc::new(hidden),
            shells: Arc::new(deskpilot_shell::Shells::detect()),
        }
    }

    /// Names of the tools this server exposes, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .tool_router
            .list_all()
            .into_iter()
            .map(|t| t.name.into_owned())
            .collect();
        names.sort();
        names
    }

    pub(crate) fn engine(&self) -> Arc<Engine> {
        self.engine.clone()
    }

    /// Takes down what the server started: the overlay, and every shell session with what it
    /// started. Call when the server stops, before its display goes.
    pub fn shutdown(&self) {
        self.engine.shutdown();
        self.shells.shutdown();
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for DeskpilotServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                self.identity.name.clone(),
                self.identity.version.clone(),
            ))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
            .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        tracing::info!("client initialized");
        self.engine
            .set_approver(Arc::new(approval::ElicitationApprover {
                peer: context.peer,
                runtime: tokio::runtime::Handle::current(),
            }));
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.hidden.iter().any(|h| *h == request.name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "tool {} is disabled on this server (--tools / --exclude-tools / DESKPILOT_TOOLS); available: {}",
                    request.name,
                    self.tool_names().join(", ")
                ),
                None,
            ));
        }
        let tcc = ToolCallContext::new(self, request, context);
        self.tool_router.call(tcc).await
    }
}
