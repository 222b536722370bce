//! The resources deskpilot serves: screenshots by id, a window's last tree and outline, the
//! memory timeline, the app skills. Any profile that declares `resources` mounts these hooks.

use rmcp::ErrorData;
use rmcp::model::{ListResourceTemplatesResult, ListResourcesResult, ReadResourceResponse};

use super::server::{ProfileSpec, Server};

/// `resources/list`.
pub(crate) async fn list<P: ProfileSpec>(
    _server: &Server<P>,
) -> Result<ListResourcesResult, ErrorData> {
    Ok(ListResourcesResult::default())
}

/// `resources/templates/list`.
pub(crate) async fn templates<P: ProfileSpec>(
    _server: &Server<P>,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    Ok(ListResourceTemplatesResult::default())
}

/// `resources/read`.
pub(crate) async fn read<P: ProfileSpec>(
    _server: &Server<P>,
    uri: &str,
) -> Result<ReadResourceResponse, ErrorData> {
    Err(ErrorData::resource_not_found(
        format!("no resource {uri}"),
        None,
    ))
}

/// Whether `uri` names a resource served here.
pub(crate) fn serves<P: ProfileSpec>(_server: &Server<P>, _uri: &str) -> bool {
    false
}
