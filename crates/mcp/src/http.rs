//! MCP over Streamable HTTP: a profile's servers behind rmcp's `StreamableHttpService` and its
//! in-memory session manager, erased to one request handler the HTTP server (in the binary)
//! calls for `/mcp`. Every MCP session gets its own server, so its own engine `Session`,
//! exactly as a stdio connection does; requests of the stateless 2026-07-28 revision get a
//! fresh one each. What must outlive a request — subscriptions, tasks — lives in the one hub
//! all servers of the endpoint share.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use deskpilot_engine::Engine;
use http_body_util::combinators::{BoxBody, UnsyncBoxBody};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::kit::ToolFilter;
use crate::kit::server::{ProfileSpec, Server, ServerIdentity};

/// A request body as the HTTP server hands it over.
pub type RequestBody = UnsyncBoxBody<Bytes, Box<dyn std::error::Error + Send + Sync>>;
/// A response body.
pub type ResponseBody = BoxBody<Bytes, Infallible>;

type Handler = dyn Fn(
        http::Request<RequestBody>,
    ) -> Pin<Box<dyn Future<Output = http::Response<ResponseBody>> + Send>>
    + Send
    + Sync;

/// How the MCP endpoint behaves.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// `Host` values accepted (names or `name:port`); rmcp's loopback list when empty.
    pub allowed_hosts: Vec<String>,
    /// `Origin` values accepted (with scheme); every present `Origin` is refused when empty.
    pub allowed_origins: Vec<String>,
    /// Largest request body.
    pub max_body_bytes: usize,
    /// A session with no request for this long is closed.
    pub idle_timeout: Duration,
    /// Messages a session queues before its sender waits.
    pub queue: usize,
    /// Cancelled at shutdown: every session ends and no request is taken.
    pub cancel: tokio_util::sync::CancellationToken,
}

/// The `/mcp` endpoint of one profile.
#[derive(Clone)]
pub struct McpHttp {
    handler: Arc<Handler>,
    manager: Arc<LocalSessionManager>,
}

impl std::fmt::Debug for McpHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHttp").finish_non_exhaustive()
    }
}

impl McpHttp {
    /// Answers one HTTP request to `/mcp`.
    pub fn handle(
        &self,
        request: http::Request<RequestBody>,
    ) -> Pin<Box<dyn Future<Output = http::Response<ResponseBody>> + Send>> {
        (self.handler)(request)
    }

    /// MCP sessions open now.
    pub async fn sessions(&self) -> usize {
        self.manager.sessions.read().await.len()
    }
}

/// The endpoint of profile `P` over `engine`.
pub(crate) fn endpoint<P: ProfileSpec>(
    engine: Arc<Engine>,
    identity: ServerIdentity,
    filter: &ToolFilter,
    options: &HttpOptions,
) -> McpHttp {
    let mut manager = LocalSessionManager::default();
    let mut session = SessionConfig::default();
    session.keep_alive = Some(options.idle_timeout);
    session.channel_capacity = options.queue.max(1);
    manager.session_config = session;
    let manager = Arc::new(manager);
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(options.cancel.clone())
        .with_max_request_body_bytes(options.max_body_bytes)
        .with_sse_keep_alive(Some(Duration::from_secs(15)));
    if !options.allowed_hosts.is_empty() {
        config = config.with_allowed_hosts(options.allowed_hosts.clone());
    }
    config = if options.allowed_origins.is_empty() {
        config.enforce_origin_validation()
    } else {
        config.with_allowed_origins(options.allowed_origins.clone())
    };
    let filter = filter.clone();
    // Subscriptions and tasks outlive the request (and, for 2026-07-28, the server) that
    // made them: every server of this endpoint shares one hub.
    let hub = Arc::new(crate::kit::hub::Hub::default());
    let service = StreamableHttpService::new(
        move || Ok(Server::<P>::new(engine.clone(), identity.clone(), &filter).in_hub(hub.clone())),
        manager.clone(),
        config,
    );
    McpHttp {
        handler: Arc::new(move |request| {
            let service = service.clone();
            Box::pin(async move {
                // Every byte of every answer and event stream, scrubbed of secret values.
                use http_body_util::BodyExt as _;
                service.handle(request).await.map(|body| {
                    body.map_frame(|f| f.map_data(crate::kit::scrub::bytes))
                        .boxed()
                })
            })
        }),
        manager,
    }
}
