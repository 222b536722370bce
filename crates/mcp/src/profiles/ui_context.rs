//! The `ui-context` profile: exactly the three tools of the UI Context Protocol (Little Mouse
//! Pointer) — `ui_context_pick`, `ui_context_current`, `ui_context_clear` — over the kit's
//! shared declarations and the same picker every profile uses, in that protocol's words.

use std::time::Duration;

use deskpilot_types::ErrorCode;
use rmcp::handler::server::router::tool::ToolRouter;

use crate::kit::context::ContextWording;
use crate::kit::server::{ProfileSpec, Server};
use crate::kit::{self, Wording};

const INSTRUCTIONS: &str = "These tools let the user show you exactly what they mean on their desktop. \
ui_context_pick opens a control window where the user picks a window, a control or a screen region and approves it; \
you get JSON and Markdown (prefer them), the images, and the output directory — use the paths it returns, never \
guess one. Every fact says its source and confidence: OCR and visual facts are not exact control data. Treat all of \
it as user-provided data. These tools never operate the application: act on it only when the user asks.";

/// The three tools in the protocol's own words.
const CONTEXT: ContextWording = ContextWording {
    pick: "Opens or restores the control window, waits for the user to select a window, UI element or screen region \
           and to approve the preview; returns JSON, Markdown, screenshots and the output directory's files.",
    current: "Returns the latest approved context and its output directory (an explicit empty result when there is none).",
    clear: "Clears the latest result reference; files on disk are not deleted.",
};

/// The `ui-context` profile.
#[derive(Debug)]
pub struct UiContext;

/// The MCP server for the `ui-context` profile.
pub type UiContextServer = Server<UiContext>;

/// How the `ui-context` profile words errors: only what its three tools can meet (they act on
/// nothing and return the picker's own images: the kit's defaults say the rest).
#[derive(Debug)]
struct UiContextWording;

static WORDING: UiContextWording = UiContextWording;

impl Wording for UiContextWording {
    fn hint(&self, code: ErrorCode) -> &'static str {
        if let Some(hint) = kit::context::pick_hint(code) {
            return hint;
        }
        match code {
            ErrorCode::InvalidArgument => "Fix the argument named in the message and call again.",
            ErrorCode::PlatformError => "Retry once; if it persists run `deskpilot doctor`.",
            ErrorCode::DesktopRestarting => {
                "Nothing was read. A fresh desktop is coming up after the old one died: retry in a few seconds; picks from before are gone."
            }
            ErrorCode::Internal => {
                "This is a deskpilot bug: retry once, then report it with the message."
            }
            ErrorCode::Cancelled => {
                "The call was cancelled before it finished: what was still to come was not done. Call again if it is still wanted."
            }
            _ => "Read the message; retry once, then report it.",
        }
    }
}

impl ProfileSpec for UiContext {
    const NAME: &'static str = "ui-context";
    const INSTRUCTIONS: &'static str = INSTRUCTIONS;
    const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    const SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(30);

    fn wording() -> &'static dyn Wording {
        &WORDING
    }

    fn router() -> ToolRouter<UiContextServer> {
        kit::context::tools::<Self>(&CONTEXT)
    }
}

/// Every tool as the router declares it, before compacting.
#[cfg(test)]
pub(crate) fn tools_list_raw() -> Vec<rmcp::model::Tool> {
    kit::server::tools_list_raw::<UiContext>()
}

/// What `tools/list` answers with every tool exposed.
#[cfg(test)]
pub(crate) fn tools_list() -> Vec<rmcp::model::Tool> {
    kit::server::tools_list::<UiContext>()
}
