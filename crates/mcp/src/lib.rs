//! deskpilot's MCP surfaces: the only crate that knows MCP, JSON-RPC or JSON.
//!
//! A surface is a thin adapter: it parses tool arguments into engine requests, runs them on
//! the blocking pool, and renders engine results as MCP content (text for every model, an
//! image where there are pixels, `structuredContent` for programs). No desktop logic lives
//! here. Each tool group is its own `#[tool_router(router = …)]` in a module of the surface,
//! merged with `+`.
//!
//! Invariant: tool filtering ([`ToolFilter`]) is applied to the router itself, so a hidden
//! tool is absent from `tools/list` *and* refused by `tools/call`, whatever the client cached.

mod deskpilot;
mod filter;
mod render;

pub use deskpilot::DeskpilotServer;
pub use filter::ToolFilter;

/// Who the server says it is in the `initialize` handshake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    pub name: String,
    pub version: String,
}
