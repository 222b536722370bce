//! `clipboard` (get, set): the kit's clipboard in dsh-computer-use's words. (`app_skill` is the kit's
//! shared declaration, mounted in `mod.rs`.)

use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;

use super::wording::WORDING;
use super::{DshServer, error};
use crate::kit::{Parameters, clipboard};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ClipboardAction {
    Get,
    Set,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClipboardArgs {
    /// get or set.
    pub action: ClipboardAction,
    /// set: the exact text (overwrites the human's clipboard).
    pub text: Option<String>,
}

#[tool_router(router = others_router, vis = "pub(crate)")]
impl DshServer {
    /// Plain-text clipboard: get (previewed at 4000 characters when over 8000), set (overwrites it; paste with
    /// computer key ["ctrl","v"]).
    #[tool(
        name = "clipboard",
        annotations(
            title = "Clipboard",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn clipboard(&self, Parameters(a): Parameters<ClipboardArgs>) -> CallToolResult {
        match a.action {
            ClipboardAction::Get => {
                clipboard::read(
                    self.session(),
                    &WORDING,
                    self.request_timeout(),
                    "clipboard get",
                )
                .await
            }
            ClipboardAction::Set => {
                let Some(text) = a.text else {
                    return error(&deskpilot_engine::Error::InvalidArgument {
                        message: "text: set needs the exact text to place on the clipboard"
                            .to_string(),
                    });
                };
                clipboard::write(
                    self.session(),
                    &WORDING,
                    self.request_timeout(),
                    "clipboard set",
                    text,
                    "Paste with computer { \"action\": \"key\", \"keys\": [\"ctrl\",\"v\"] }.",
                )
                .await
            }
        }
    }
}
