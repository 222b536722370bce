//! Logging over MCP: `tracing` events at or above the level a client chose go to it as
//! `notifications/message`, with the logger name.
#![expect(
    deprecated,
    reason = "rmcp marks MCP logging deprecated (SEP-2577), yet both revisions served here have it"
)]

use rmcp::RoleServer;
use rmcp::model::LoggingLevel;
use rmcp::service::Peer;

use super::server::{ProfileSpec, Server};

/// `logging/setLevel`: from now on this connection hears events at `level` and above.
pub(crate) fn set_level<P: ProfileSpec>(
    server: &Server<P>,
    level: LoggingLevel,
    _peer: Peer<RoleServer>,
) {
    *server
        .log_level
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(level);
}

/// The span a request of `server` runs in: events inside it are this connection's.
pub(crate) fn span<P: ProfileSpec>(
    server: &Server<P>,
    _context: &rmcp::service::RequestContext<RoleServer>,
) -> tracing::Span {
    tracing::info_span!("mcp", session = server.session.id())
}
