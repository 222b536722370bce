//! The server every profile is: [`Server<P>`], one per connection over its own engine
//! [`Session`], with the `ServerHandler` all profiles share — identity and instructions, the
//! elicitation approver installed once the client is initialized, `tools/list` from the
//! profile's compacted tools, hidden tools refused on call, argument errors worded by the
//! profile.
//!
//! A profile is a [`ProfileSpec`]: its name, instructions, default timeouts, [`Wording`] and tool
//! router. Its tools are `#[tool_router]` impls on `Server<ItsProfile>`; tools that several
//! profiles offer (`kit::context`, `kit::skills`) are declared once on every `Server<P>` and
//! mounted by each profile with its own descriptions ([`describe`]).

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use deskpilot_engine::{Engine, Session};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::Tool;

use super::{ToolFilter, Wording};

/// Who the server says it is in the `initialize` handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    pub name: String,
    pub version: String,
}

/// One tool surface: what differs between profiles is wording, defaults and tools.
pub trait ProfileSpec: Send + Sync + Sized + 'static {
    /// The name `serve --profile` takes and logs carry.
    const NAME: &'static str;
    /// The `initialize` answer's instructions.
    const INSTRUCTIONS: &'static str;
    /// How long a desktop call may take when the deployment sets no `requestTimeoutMs`.
    const REQUEST_TIMEOUT: Duration;
    /// How long a capture may take when the deployment sets no `screenshotTimeoutMs`.
    const SCREENSHOT_TIMEOUT: Duration;
    /// Tool groups a filter may name instead of tools.
    const GROUPS: super::filter::Groups = &[];
    /// How this profile words what the kit renders.
    fn wording() -> &'static dyn Wording;
    /// Every tool of the profile, before filtering.
    fn router() -> ToolRouter<Server<Self>>;
}

/// The MCP server of profile `P`: one per connection, over its own [`Session`].
pub struct Server<P> {
    pub(crate) session: Arc<Session>,
    pub(crate) identity: ServerIdentity,
    tool_router: ToolRouter<Self>,
    /// What `tools/list` answers: the router's tools with compact schemas.
    tools: Arc<Vec<Tool>>,
    hidden: Arc<Vec<String>>,
    profile: PhantomData<fn() -> P>,
}

impl<P> Clone for Server<P> {
    fn clone(&self) -> Self {
        Server {
            session: self.session.clone(),
            identity: self.identity.clone(),
            tool_router: self.tool_router.clone(),
            tools: self.tools.clone(),
            hidden: self.hidden.clone(),
            profile: PhantomData,
        }
    }
}

impl<P: ProfileSpec> std::fmt::Debug for Server<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("profile", &P::NAME)
            .field("identity", &self.identity)
            .field("session", &self.session.id())
            .field("tools", &self.tool_names())
            .field("hidden", &self.hidden)
            .finish()
    }
}

impl<P: ProfileSpec> Server<P> {
    /// A server for one client of `engine`, exposing the tools `filter` allows.
    pub fn new(engine: Arc<Engine>, identity: ServerIdentity, filter: &ToolFilter) -> Self {
        let (tool_router, hidden) = filter.expand(P::GROUPS).apply(P::router());
        let tools = tool_router
            .list_all()
            .into_iter()
            .map(super::schema::compact)
            .collect();
        Server {
            session: Arc::new(Session::new(engine)),
            identity,
            tool_router,
            tools: Arc::new(tools),
            hidden: Arc::new(hidden),
            profile: PhantomData,
        }
    }

    /// Names of the tools this server exposes, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        super::filter::names(&self.tool_router)
    }

    /// This connection's session.
    pub fn client_session(&self) -> &Arc<Session> {
        &self.session
    }

    pub(crate) fn session(&self) -> Arc<Session> {
        self.session.clone()
    }

    /// How long a desktop call may take: the deployment's `requestTimeoutMs`, else the
    /// profile's default.
    pub(crate) fn request_timeout(&self) -> Duration {
        self.session
            .config()
            .request_timeout
            .unwrap_or(P::REQUEST_TIMEOUT)
    }

    /// How long a capture may take: the deployment's `screenshotTimeoutMs`, else the
    /// profile's default.
    pub(crate) fn screenshot_timeout(&self) -> Duration {
        self.session
            .config()
            .screenshot_timeout
            .unwrap_or(P::SCREENSHOT_TIMEOUT)
    }
}

/// What `tools/list` answers for profile `P` with every tool exposed.
pub fn tools_list<P: ProfileSpec>() -> Vec<Tool> {
    P::router()
        .list_all()
        .into_iter()
        .map(super::schema::compact)
        .collect()
}

/// Every tool of profile `P` as its router declares it, before compacting.
#[cfg(test)]
pub(crate) fn tools_list_raw<P: ProfileSpec>() -> Vec<Tool> {
    P::router().list_all()
}

/// Shows the parameter `from` of the shared tool `name` under the name `to` in its schema (the
/// argument struct must accept `to` as an alias), for a profile that spells it another way.
pub(crate) fn rename_param<S>(router: &mut ToolRouter<S>, name: &str, from: &str, to: &str) {
    let Some(route) = router.map.get_mut(name) else {
        return;
    };
    let mut schema = (*route.attr.input_schema).clone();
    if let Some(serde_json::Value::Object(props)) = schema.get_mut("properties")
        && let Some(p) = props.remove(from)
    {
        props.insert(to.to_string(), p);
    }
    if let Some(serde_json::Value::Array(required)) = schema.get_mut("required") {
        for r in required.iter_mut() {
            if r == from {
                *r = serde_json::Value::from(to);
            }
        }
    }
    route.attr.input_schema = Arc::new(schema);
}

/// Gives the parameter `param` of the shared tool `name` in `router` the profile's
/// `description`.
pub(crate) fn describe_param<S>(
    router: &mut ToolRouter<S>,
    name: &str,
    param: &str,
    description: &str,
) {
    let Some(route) = router.map.get_mut(name) else {
        return;
    };
    let mut schema = (*route.attr.input_schema).clone();
    if let Some(serde_json::Value::Object(props)) = schema.get_mut("properties")
        && let Some(serde_json::Value::Object(p)) = props.get_mut(param)
    {
        p.insert(
            "description".to_string(),
            serde_json::Value::from(description),
        );
    }
    route.attr.input_schema = Arc::new(schema);
}

/// Gives the shared tool `name` in `router` the profile's `description`.
pub(crate) fn describe<S>(router: &mut ToolRouter<S>, name: &str, description: &'static str) {
    if let Some(route) = router.map.get_mut(name) {
        route.attr.description = Some(description.into());
    }
}

impl<P: ProfileSpec> rmcp::ServerHandler for Server<P> {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
        .with_server_info(rmcp::model::Implementation::new(
            self.identity.name.clone(),
            self.identity.version.clone(),
        ))
        .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
        .with_instructions(P::INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<rmcp::RoleServer>) {
        tracing::info!(
            session = self.session.id(),
            profile = P::NAME,
            "client initialized"
        );
        super::approval::install(&self.session, context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        Ok(rmcp::model::ListToolsResult::with_all_items(
            self.tools.to_vec(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        super::filter::refuse_hidden(&self.hidden, &request.name, || self.tool_names())?;
        // rmcp serves a request and the `initialized` notification concurrently: a first
        // call may run before `on_initialized` installed the approver.
        if !self.session.has_approver() {
            super::approval::install(&self.session, context.peer.clone());
        }
        let name = request.name.to_string();
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let answer = super::render::CALLING
            .scope(name.clone(), self.tool_router.call(tcc))
            .await;
        let tool = self.tools.iter().find(|t| t.name == name);
        let answer = super::args::into_tool_error(answer, tool, P::wording());
        // A client whose apps died with an earlier desktop hears it once, with its first answer
        // that worked on the fresh one (an error while it starts keeps the news for later).
        match answer {
            Ok(rmcp::model::CallToolResponse::Complete(mut result)) => {
                if result.is_error != Some(true)
                    && let Some(restart) = self.session.take_restart()
                {
                    result
                        .content
                        .insert(0, rmcp::model::ContentBlock::text(restart.to_string()));
                }
                Ok(result.into())
            }
            other => other,
        }
    }
}
