//! `completion/complete` over real data: window titles, app names, skill names, monitor ids,
//! shell sessions.

use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult};

use super::server::{ProfileSpec, Server};

/// `completion/complete`.
pub(crate) async fn complete<P: ProfileSpec>(
    _server: &Server<P>,
    _request: CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    Ok(CompleteResult::default())
}
