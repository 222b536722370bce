//! The `conformance` profile: the fixtures the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, run by `scripts/conformance`) asks a server for — tools,
//! resources, prompts, completions, tasks and input-required results — served by the same
//! [`Server`], hub and HTTP endpoint every real profile uses. Compiled in only with the
//! `conformance` feature, which the binary's test builds turn on and a release build never does.
//!
//! Each fixture does what its scenario asks and nothing more, through the kit's real paths:
//! logging is `tracing` events the kit forwards, subscriptions and tasks live in the endpoint's
//! [`Hub`](crate::kit::hub::Hub), list-changed notices go out through it. No fixture touches the
//! desktop.
//!
//! - `tools`: content of every kind, errors, progress, logging, sampling and elicitation back to
//!   the client, the JSON Schema 2020-12 tool, a header-mirrored parameter, the 2026-07-28
//!   diagnostics (a missing client capability, list-changed triggers).
//! - `resources`: static text and binary resources, a template, one resource that changes.
//! - `prompts`: prompts with arguments, an embedded resource, an image, and their completions.
//! - `mrtr`: input-required results (SEP-2322), in one or several rounds, with sealed state.
//! - `tasks`: task-augmented calls (SEP-2663): sync, slow, failing, parked on input.

mod mrtr;
mod prompts;
mod resources;
mod tasks;
mod tools;

use std::time::Duration;

use deskpilot_types::ErrorCode;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use crate::kit::Wording;
use crate::kit::server::{ProfileSpec, Server};

const INSTRUCTIONS: &str = "Fixtures for the MCP conformance suite: tools, resources, prompts and tasks that never touch the desktop.";

/// The `conformance` profile.
#[derive(Debug)]
pub struct Conformance;

/// The MCP server for the `conformance` profile.
pub type ConformanceServer = Server<Conformance>;

/// Errors come from the fixtures themselves; the kit words only argument errors here (no
/// fixture acts on the desktop or takes a screenshot: the kit's defaults say the rest).
#[derive(Debug)]
struct ConformanceWording;

static WORDING: ConformanceWording = ConformanceWording;

impl Wording for ConformanceWording {
    fn hint(&self, code: ErrorCode) -> &'static str {
        match code {
            ErrorCode::InvalidArgument => "Fix the argument named in the message and call again.",
            _ => "Read the message.",
        }
    }
}

impl ProfileSpec for Conformance {
    const NAME: &'static str = "conformance";
    const INSTRUCTIONS: &'static str = INSTRUCTIONS;
    const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    const SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(30);

    fn wording() -> &'static dyn Wording {
        &WORDING
    }

    fn router() -> ToolRouter<ConformanceServer> {
        ConformanceServer::content_router()
            + ConformanceServer::client_router()
            + ConformanceServer::resources_router()
            + ConformanceServer::prompts_router()
            + ConformanceServer::mrtr_router()
            + ConformanceServer::tasks_router()
    }

    /// Everything the suite checks a server for, and no list-changed flag for a list that never
    /// changes (tools, resources); the prompt list does (`test_trigger_prompt_change`).
    #[expect(deprecated, reason = "MCP logging is part of both revisions served")]
    fn capabilities() -> ServerCapabilities {
        ServerCapabilities::builder()
            .enable_completions()
            .enable_logging()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tasks()
            .build()
    }

    async fn list_resources(
        _server: &ConformanceServer,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(resources::list())
    }

    async fn list_resource_templates(
        _server: &ConformanceServer,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates())
    }

    async fn read_resource(
        _server: &ConformanceServer,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&request.uri).map(Into::into)
    }

    fn serves_uri(_server: &ConformanceServer, uri: &str) -> bool {
        resources::serves(uri)
    }

    async fn list_prompts(
        _server: &ConformanceServer,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(prompts::list())
    }

    async fn get_prompt(
        _server: &ConformanceServer,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        prompts::get(request)
    }

    async fn complete(
        _server: &ConformanceServer,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        prompts::complete(&request)
    }
}

/// Every tool as the router declares it, before compacting.
#[cfg(test)]
pub(crate) fn tools_list_raw() -> Vec<rmcp::model::Tool> {
    crate::kit::server::tools_list_raw::<Conformance>()
}

/// What `tools/list` answers with every tool exposed.
#[cfg(test)]
pub(crate) fn tools_list() -> Vec<rmcp::model::Tool> {
    crate::kit::server::tools_list::<Conformance>()
}
