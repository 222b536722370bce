//! The prompts deskpilot serves: one per app skill, one to inspect a window, one to fill a form.

use rmcp::ErrorData;
use rmcp::model::{GetPromptRequestParams, GetPromptResponse, ListPromptsResult};

use super::server::{ProfileSpec, Server};

/// `prompts/list`.
pub(crate) async fn list<P: ProfileSpec>(
    _server: &Server<P>,
) -> Result<ListPromptsResult, ErrorData> {
    Ok(ListPromptsResult::default())
}

/// `prompts/get`.
pub(crate) async fn get<P: ProfileSpec>(
    _server: &Server<P>,
    request: GetPromptRequestParams,
) -> Result<GetPromptResponse, ErrorData> {
    Err(ErrorData::invalid_params(
        format!("no prompt {}", request.name),
        None,
    ))
}
