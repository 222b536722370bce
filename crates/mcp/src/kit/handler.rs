//! The `ServerHandler` every profile's server shares, as a macro: its identity and
//! instructions, the elicitation approver installed once the client is initialized,
//! `tools/list` from the profile's compacted tools, hidden tools refused on call, and argument
//! errors worded by the profile. A profile's server type has the fields `session`, `identity`,
//! `tool_router`, `tools` and `hidden`, and a `tool_names()`; what differs is only wording.

/// `profile_handler!(Server, "name", INSTRUCTIONS, &WORDING)` implements `rmcp::ServerHandler`.
macro_rules! profile_handler {
    ($server:ty, $profile:literal, $instructions:expr, $wording:expr) => {
        impl rmcp::ServerHandler for $server {
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
                .with_instructions($instructions)
            }

            async fn on_initialized(
                &self,
                context: rmcp::service::NotificationContext<rmcp::RoleServer>,
            ) {
                tracing::info!(
                    session = self.session.id(),
                    profile = $profile,
                    "client initialized"
                );
                $crate::kit::approval::install(&self.session, context.peer);
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

            fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
                self.tools.iter().find(|t| t.name == name).cloned()
            }

            async fn call_tool(
                &self,
                request: rmcp::model::CallToolRequestParams,
                context: rmcp::service::RequestContext<rmcp::RoleServer>,
            ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
                $crate::kit::filter::refuse_hidden(&self.hidden, &request.name, || {
                    self.tool_names()
                })?;
                // rmcp serves a request and the `initialized` notification concurrently: a
                // first call may run before `on_initialized` installed the approver.
                if !self.session.has_approver() {
                    $crate::kit::approval::install(&self.session, context.peer.clone());
                }
                let name = request.name.to_string();
                let tcc = rmcp::handler::server::tool::ToolCallContext::new(self, request, context);
                let answer = self.tool_router.call(tcc).await;
                let tool = self.tools.iter().find(|t| t.name == name);
                $crate::kit::args::into_tool_error(answer, tool, $wording)
            }
        }
    };
}

pub(crate) use profile_handler;
