//! The clipboard as every profile offers it: plain text, read with dsh-computer-use's preview rule (a
//! text over 8000 characters is shown as its first 4000; `structuredContent.clipboard` holds
//! it all), written through the engine's pipeline.

use std::sync::Arc;
use std::time::Duration;

use deskpilot_engine::{Check, Session, VerifyTarget};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::json;

use super::report::{self, Body};
use super::{Wording, render};

/// Texts longer than this are previewed.
pub(crate) const PREVIEW_OVER: usize = 8000;
/// How much of a long text the preview shows.
pub(crate) const PREVIEW_CHARS: usize = 4000;

/// Reads the clipboard's text.
pub(crate) async fn read(
    session: Arc<Session>,
    wording: &dyn Wording,
    timeout: Duration,
    what: &'static str,
) -> CallToolResult {
    match render::blocking(timeout, what, move || session.clipboard_read()).await {
        Ok(None) => {
            let mut r =
                CallToolResult::success(vec![ContentBlock::text("The clipboard holds no text.")]);
            r.structured_content = Some(json!({ "length": 0, "clipboard": null, "text": "" }));
            r
        }
        Ok(Some(text)) => {
            let length = text.chars().count();
            let shown = if length > PREVIEW_OVER {
                let head: String = text.chars().take(PREVIEW_CHARS).collect();
                format!(
                    "The clipboard holds {length} characters; the first {PREVIEW_CHARS} (structuredContent.clipboard has all):\n{head}"
                )
            } else {
                format!("The clipboard holds {length} characters:\n{text}")
            };
            let mut r = CallToolResult::success(vec![ContentBlock::text(shown.clone())]);
            r.structured_content =
                Some(json!({ "length": length, "clipboard": text, "text": shown }));
            r
        }
        Err(e) => render::error(&e, wording),
    }
}

/// Puts `text` on the clipboard; `paste` says how to paste it in the profile's words.
pub(crate) async fn write(
    session: Arc<Session>,
    wording: &dyn Wording,
    timeout: Duration,
    what: &'static str,
    text: String,
    paste: &'static str,
) -> CallToolResult {
    let length = text.chars().count();
    report::act(
        session,
        wording,
        report::Step {
            what,
            timeout,
            check: Check::default(),
            target: VerifyTarget::Screen,
        },
        move |s| s.clipboard_write(&text),
        |_| {
            Body::new(
                format!(
                    "Put {length} characters on the clipboard (the previous content is replaced). {paste}"
                ),
                json!({ "action": what, "length": length }),
            )
        },
    )
    .await
}
