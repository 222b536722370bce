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
//!
//! What a profile serves beside tools — resources, prompts, completions, logging, tasks — it
//! declares in [`ProfileSpec::capabilities`] and answers through the `ProfileSpec` hooks; every
//! hook defaults to "not offered" (-32601). State that outlives one request (subscriptions,
//! tasks) lives in the [`Hub`] all servers of one endpoint share: a stdio connection has its
//! own, an HTTP endpoint one for every session and stateless request it serves.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use deskpilot_engine::{Engine, Session};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CompleteRequestMethod, CompleteRequestParams, CompleteResult, GetPromptRequestMethod,
    GetPromptRequestParams, GetPromptResponse, ListPromptsRequestMethod, ListPromptsResult,
    ListResourceTemplatesRequestMethod, ListResourceTemplatesResult, ListResourcesRequestMethod,
    ListResourcesResult, PaginatedRequestParams, ReadResourceRequestMethod,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::hub::Hub;
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

    /// What `initialize` (and `server/discover`) declares: tools only by default. A profile
    /// that declares `resources`, `prompts` or `completions` answers them through the hooks
    /// below; `logging`, `resources.subscribe`, list-changed flags and tasks are served by the
    /// kit once declared.
    fn capabilities() -> ServerCapabilities {
        ServerCapabilities::builder().enable_tools().build()
    }

    /// `resources/list`.
    fn list_resources(
        _server: &Server<Self>,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourcesResult, ErrorData>> + Send {
        std::future::ready(Err(
            ErrorData::method_not_found::<ListResourcesRequestMethod>(),
        ))
    }

    /// `resources/templates/list`.
    fn list_resource_templates(
        _server: &Server<Self>,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourceTemplatesResult, ErrorData>> + Send {
        std::future::ready(Err(ErrorData::method_not_found::<
            ListResourceTemplatesRequestMethod,
        >()))
    }

    /// `resources/read`: an unknown URI is `ErrorData::resource_not_found` (rmcp gives a
    /// 2026-07-28 client the revision's code for it).
    fn read_resource(
        _server: &Server<Self>,
        _request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, ErrorData>> + Send {
        std::future::ready(Err(
            ErrorData::method_not_found::<ReadResourceRequestMethod>(),
        ))
    }

    /// Whether `uri` names a resource this profile serves, so that `resources/subscribe` may
    /// watch it: none by default.
    fn serves_uri(_server: &Server<Self>, _uri: &str) -> bool {
        false
    }

    /// Takes what `uri` holds now as the point its changes are measured from, before a
    /// subscription to it is confirmed: nothing to do by default.
    fn watch_from_now(_server: &Server<Self>, _uri: &str) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }

    /// `prompts/list`.
    fn list_prompts(
        _server: &Server<Self>,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListPromptsResult, ErrorData>> + Send {
        std::future::ready(Err(
            ErrorData::method_not_found::<ListPromptsRequestMethod>(),
        ))
    }

    /// `prompts/get`.
    fn get_prompt(
        _server: &Server<Self>,
        _request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, ErrorData>> + Send {
        std::future::ready(Err(ErrorData::method_not_found::<GetPromptRequestMethod>()))
    }

    /// `completion/complete`.
    fn complete(
        _server: &Server<Self>,
        _request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CompleteResult, ErrorData>> + Send {
        std::future::ready(Err(ErrorData::method_not_found::<CompleteRequestMethod>()))
    }
}

/// The MCP server of profile `P`: one per connection, over its own [`Session`].
pub struct Server<P> {
    pub(crate) session: Arc<Session>,
    pub(crate) identity: ServerIdentity,
    tool_router: ToolRouter<Self>,
    /// What `tools/list` answers: the router's tools with compact schemas.
    tools: Arc<Vec<Tool>>,
    hidden: Arc<Vec<String>>,
    /// What outlives one request: subscriptions, tasks.
    pub(crate) hub: Arc<Hub>,
    /// The level `logging/setLevel` set for this connection (none: nothing is sent).
    #[expect(deprecated, reason = "MCP logging is part of both revisions served")]
    pub(crate) log_level: Arc<std::sync::Mutex<Option<rmcp::model::LoggingLevel>>>,
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
            hub: self.hub.clone(),
            log_level: self.log_level.clone(),
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
            .map(|t| super::output::declare(P::NAME, t))
            .collect();
        Server {
            session: Arc::new(Session::new(engine)),
            identity,
            tool_router,
            tools: Arc::new(tools),
            hidden: Arc::new(hidden),
            hub: Arc::new(Hub::default()),
            log_level: Arc::default(),
            profile: PhantomData,
        }
    }

    /// Whether the profile declared `resources.subscribe`.
    fn hub_subscribes(&self) -> bool {
        P::capabilities()
            .resources
            .is_some_and(|r| r.subscribe == Some(true))
    }

    /// This server sharing `hub` with the other servers of its endpoint.
    pub(crate) fn in_hub(mut self, hub: Arc<Hub>) -> Self {
        self.hub = hub;
        self
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
        .map(|t| super::output::declare(P::NAME, t))
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
        rmcp::model::ServerConfig::new(P::capabilities())
            .with_server_info(rmcp::model::Implementation::new(
                self.identity.name.clone(),
                self.identity.version.clone(),
            ))
            .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
            .with_instructions(P::INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: rmcp::service::NotificationContext<RoleServer>) {
        tracing::info!(
            session = self.session.id(),
            profile = P::NAME,
            "client initialized"
        );
        // A 2025-11-25 session has no subscription for list changes: it hears them all, when
        // its profile declared them.
        let capabilities = P::capabilities();
        if capabilities
            .prompts
            .is_some_and(|p| p.list_changed == Some(true))
            || capabilities
                .resources
                .is_some_and(|r| r.list_changed == Some(true))
        {
            self.hub.join(self.session.id(), context.peer.clone());
        }
        super::approval::install(&self.session, context.peer);
    }

    #[expect(deprecated, reason = "MCP logging is part of both revisions served")]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if P::capabilities().logging.is_none() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::SetLevelRequestMethod,
            >());
        }
        super::logging::set_level(self, request.level, context.peer);
        Ok(())
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        P::list_resources(self, request, context).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        P::list_resource_templates(self, request, context).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let span = super::logging::span(self, &context);
        tracing::Instrument::instrument(P::read_resource(self, request, context), span).await
    }

    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.hub_subscribes() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::SubscribeRequestMethod,
            >());
        }
        if !P::serves_uri(self, &request.uri) {
            return Err(ErrorData::resource_not_found(
                format!(
                    "no resource {}: resources/list and resources/templates/list name those there are",
                    request.uri
                ),
                None,
            ));
        }
        P::watch_from_now(self, &request.uri).await;
        self.hub
            .subscribe(self.session.id(), context.peer, request.uri);
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if !self.hub_subscribes() {
            return Err(ErrorData::method_not_found::<
                rmcp::model::UnsubscribeRequestMethod,
            >());
        }
        self.hub.unsubscribe(self.session.id(), &request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        Some(requested.supported_by(&P::capabilities()))
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), ErrorData> {
        let uris = context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default();
        for uri in &uris {
            P::watch_from_now(self, uri).await;
        }
        self.hub.listen(context).await;
        Ok(())
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        P::list_prompts(self, request, context).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let span = super::logging::span(self, &context);
        tracing::Instrument::instrument(P::get_prompt(self, request, context), span).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        P::complete(self, request, context).await
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        Ok(rmcp::model::GetTaskResult::new(
            self.hub.tasks.get_task(&request.task_id)?,
        ))
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.hub
            .tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.hub.tasks.cancel_task(&request.task_id)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
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
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, ErrorData> {
        super::filter::refuse_hidden(&self.hidden, &request.name, || self.tool_names())?;
        // rmcp serves a request and the `initialized` notification concurrently: a first
        // call may run before `on_initialized` installed the approver.
        if !self.session.has_approver() {
            super::approval::install(&self.session, context.peer.clone());
        }
        // Events this call logs reach this client when it asked for them.
        let span = super::logging::span(self, &context);
        // A client that declared tasks gets a task for a long tool; one that ends within a
        // moment answers as an ordinary call.
        let started = {
            let _entered = span.enter();
            super::tasks::start(self, request, &context)
        };
        let request = match started {
            super::tasks::Start::Task(task) => {
                return tracing::Instrument::instrument(
                    super::tasks::answer(&self.hub, task),
                    span,
                )
                .await;
            }
            super::tasks::Start::Refused(error) => return Err(error),
            super::tasks::Start::Now(request) => request,
        };
        // Who asks the human if this call needs an approval: elicitation (2025-11-25), an
        // input-required round (2026-07-28), the task's input requests (a task).
        let approval = super::approval::begin(self, &request, &context)?;
        let name = request.name.to_string();
        let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
        let answer = tracing::Instrument::instrument(
            super::render::CALLING.scope(name.clone(), approval.scope(self.tool_router.call(tcc))),
            span.clone(),
        )
        .await;
        // A stateless response stream closes with the answer: the call's log messages go first.
        super::logging::flush(&span).await;
        let tool = self.tools.iter().find(|t| t.name == name);
        let answer = super::args::into_tool_error(answer, tool, P::wording());
        let answer = approval.finish(answer);
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
