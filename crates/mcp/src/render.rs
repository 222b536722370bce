//! Turning engine results and errors into MCP tool results.

use deskpilot_engine::Error;
use deskpilot_types::ErrorCode;
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

/// A tool that ran and failed: `isError: true`, a text the agent can act on
/// (`CODE: message` + `Hint: …`) and the same as `structuredContent.error`.
pub(crate) fn error(e: &Error) -> CallToolResult {
    // Dry run is not a failure: the action passed every gate and stopped before the OS.
    if let Error::DryRun { would } = e {
        let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
            "[dry run] Would {would}. Nothing was sent to the desktop (dryRun is on)."
        ))]);
        result.structured_content =
            Some(json!({ "dry_run": true, "would": would, "effect": "refused" }));
        return result;
    }
    let code = e.code();
    let text = format!("{code}: {e}\nHint: {}", code.hint());
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    let mut content = json!({ "error": { "code": code.as_str(), "message": e.to_string(), "hint": code.hint() } });
    if refused_before_acting(code) {
        content["effect"] = json!("refused");
    }
    // Every error carries a diagnosis: category, whether retrying can help, what to do.
    let d = deskpilot_shell::diagnose(&format!("{code}: {e}"), "", "", None, None);
    content["diagnosis"] = json!(d);
    result.structured_content = Some(content);
    result
}

/// Codes that mean a mutating action was stopped before anything reached the desktop.
fn refused_before_acting(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::StoppedByHuman
            | ErrorCode::BlockedTarget
            | ErrorCode::ActionDisabled
            | ErrorCode::ApprovalUnavailable
            | ErrorCode::ApprovalDenied
            | ErrorCode::NoReferenceScreenshot
            | ErrorCode::TargetWindowGone
            | ErrorCode::TargetWindowChanged
            | ErrorCode::TargetWindowMoved
            | ErrorCode::ClickWrongWindow
            | ErrorCode::OutsideTargetWindow
            | ErrorCode::PointOffScreen
            | ErrorCode::StaleElement
            | ErrorCode::ElementNotFound
            | ErrorCode::AmbiguousWindow
            | ErrorCode::InvalidArgument
    )
}

/// The text of a result's text block, for adding lines to it.
pub(crate) fn text_mut(result: &mut CallToolResult) -> Option<&mut String> {
    result.content.iter_mut().find_map(|c| match c {
        ContentBlock::Text(t) => Some(&mut t.text),
        _ => None,
    })
}

/// Runs a blocking engine call on the blocking pool with a deadline.
pub(crate) async fn blocking<T, F>(
    timeout: std::time::Duration,
    what: &'static str,
    f: F,
) -> Result<T, Error>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, Error> + Send + 'static,
{
    match tokio::time::timeout(timeout, tokio::task::spawn_blocking(f)).await {
        Ok(Ok(result)) => result,
        Ok(Err(join)) => Err(Error::Internal {
            message: format!("{what} panicked: {join}"),
        }),
        Err(_) => Err(Error::Backend(deskpilot_backend::Error::os(
            what,
            format!(
                "no answer from the desktop within {} ms",
                timeout.as_millis()
            ),
        ))),
    }
}
