//! Seed 000's UI context tools in the `deskpilot` profile: `ui_context_pick`,
//! `ui_context_current`, `ui_context_clear` (the same as the `ui-context` profile's).

use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::DeskpilotServer;
use super::wording::WORDING;
use crate::kit::Parameters;
use crate::kit::context::{self, NoArgs, PickArgs};

#[tool_router(router = context_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// The user points at a window, control or region and approves it; returns that context.
    #[tool(
        name = "ui_context_pick",
        annotations(
            title = "Pick UI context",
            read_only_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn ui_context_pick(&self, Parameters(a): Parameters<PickArgs>) -> CallToolResult {
        context::pick(self.session(), &WORDING, a).await
    }

    /// The latest approved UI context and its directory (empty when none).
    #[tool(
        name = "ui_context_current",
        annotations(
            title = "Current UI context",
            read_only_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn ui_context_current(&self, Parameters(_a): Parameters<NoArgs>) -> CallToolResult {
        context::current()
    }

    /// Forget the latest UI context (its files stay on disk).
    #[tool(
        name = "ui_context_clear",
        annotations(
            title = "Clear UI context",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn ui_context_clear(&self, Parameters(_a): Parameters<NoArgs>) -> CallToolResult {
        context::clear()
    }
}
