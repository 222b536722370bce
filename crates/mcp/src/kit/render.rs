//! Turning engine errors into MCP tool results, and running blocking engine calls with a
//! deadline. The wording of hints comes from the profile ([`Wording`]); codes, messages and
//! the diagnosis come from below.

use deskpilot_engine::{Effect, Error, refused_effect};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

use super::Wording;

/// A tool that ran and failed: `isError: true`, a text the agent can act on
/// (`CODE: message` + `Hint: …`) and the same as `structuredContent.error`, with the
/// diagnosis the engine computed and `effect: refused` when nothing reached the desktop.
pub(crate) fn error(e: &Error, wording: &dyn Wording) -> CallToolResult {
    // Dry run is not a failure: the action passed every gate and stopped before the OS.
    if let Error::DryRun { would } = e {
        let mut result = CallToolResult::success(vec![ContentBlock::text(format!(
            "[dry run] Would {would}. Nothing was sent to the desktop (dryRun is on)."
        ))]);
        result.structured_content =
            Some(json!({ "dry_run": true, "would": would, "effect": Effect::Refused.as_str() }));
        return result;
    }
    let code = wording.code(e.code());
    let hint = wording.hint(code);
    let text = format!("{code}: {e}\nHint: {hint}");
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    let mut content =
        json!({ "error": { "code": code.as_str(), "message": e.to_string(), "hint": hint } });
    if let Some(effect) = refused_effect(e) {
        content["effect"] = json!(effect.as_str());
    }
    content["diagnosis"] = json!(e.diagnosis());
    result.structured_content = Some(content);
    result
}

/// The text of a result's text block, for adding lines to it.
pub(crate) fn text_mut(result: &mut CallToolResult) -> Option<&mut String> {
    result.content.iter_mut().find_map(|c| match c {
        ContentBlock::Text(t) => Some(&mut t.text),
        _ => None,
    })
}

/// Adds a line to a result's text.
pub(crate) fn append_text(result: &mut CallToolResult, line: &str) {
    if let Some(text) = text_mut(result) {
        text.push('\n');
        text.push_str(line);
    }
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
        Err(_) => Err(Error::Backend(deskpilot_backend::Error::Timeout {
            operation: what.to_string(),
            after: timeout,
        })),
    }
}
