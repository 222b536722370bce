//! Turning engine errors into MCP tool results, and running blocking engine calls with a
//! deadline. The wording of hints comes from the profile ([`Wording`]); codes, messages and
//! the diagnosis come from below. Also the lines several tools print the same way — a
//! screenshot's masks and notes, the monitor list, a window's state flags — written once
//! here, each profile passing its own words.

use deskpilot_engine::{Effect, Error, Note, refused_effect};
use deskpilot_types::{ErrorCode, Monitor, WindowState};
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
    let name = wording.code_name(code);
    let text = format!("{name}: {e}\nHint: {hint}");
    let mut result = CallToolResult::error(vec![ContentBlock::text(text)]);
    let mut content = json!({ "error": { "code": name, "message": e.to_string(), "hint": hint } });
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

tokio::task_local! {
    /// The name of the tool whose call is running on this task (set by the server's `call_tool`).
    pub(crate) static CALLING: String;
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
    // The timeline names the tool the call came from; its events stay in the request's span
    // (the client that asked for log messages hears them).
    let tool = CALLING.try_with(Clone::clone).ok();
    let span = tracing::Span::current();
    // An approval this work asks for goes to the call's human the call's way.
    let asker = super::approval::current();
    let f = move || {
        let _in_request = span.enter();
        super::approval::within(asker, || match tool {
            Some(tool) => deskpilot_memory::traced(&tool, f),
            None => f(),
        })
    };
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

/// The lines after a screenshot's head: how many privacy masks were painted (in the profile's
/// words, only when any were) and one `Note:` line per engine note.
pub(crate) fn masks_and_notes(
    text: &mut String,
    masked_regions: usize,
    notes: &[Note],
    masked: impl Fn(usize) -> String,
) {
    if masked_regions > 0 {
        text.push('\n');
        text.push_str(&masked(masked_regions));
    }
    for note in notes {
        text.push_str("\nNote: ");
        text.push_str(&note.to_string());
    }
}

/// The hint several profiles give in the same words — an argument to fix, an approval refused,
/// a bug — for a profile's [`Wording::hint`] to answer first; `None` for the codes each
/// profile words itself.
pub(crate) fn common_hint(code: ErrorCode) -> Option<&'static str> {
    Some(match code {
        ErrorCode::InvalidArgument => "Fix the argument named in the message and call again.",
        ErrorCode::ApprovalUnavailable | ErrorCode::ApprovalDenied => {
            "Nothing was performed. Ask the human to approve, or operate differently."
        }
        ErrorCode::Internal => {
            "This is a deskpilot bug: retry once, then report it with the message."
        }
        _ => return None,
    })
}

/// One indented line per monitor: `  0 HDMI-1 1920x1080+0+0 primary`.
pub(crate) fn monitor_lines(text: &mut String, monitors: &[Monitor]) {
    for m in monitors {
        text.push_str(&format!(
            "\n  {} {} {}{}",
            m.index,
            m.name,
            m.rect,
            if m.primary { " primary" } else { "" }
        ));
    }
}

/// A window's state as flags, in a fixed order: the active window (named by the profile:
/// `active`, `foreground`), `minimized`, `maximized`, `hidden` (not shown, not minimized).
pub(crate) fn state_flags(state: &WindowState, active: &'static str) -> Vec<&'static str> {
    [
        state.active.then_some(active),
        state.minimized.then_some("minimized"),
        state.maximized.then_some("maximized"),
        (!state.visible && !state.minimized).then_some("hidden"),
    ]
    .into_iter()
    .flatten()
    .collect()
}
