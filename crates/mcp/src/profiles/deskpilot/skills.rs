//! `app_skill`: per-app recipes, through the kit's shared implementation.

use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};

use super::DeskpilotServer;
use super::wording::WORDING;
use crate::kit::Parameters;
use crate::kit::skills::{self, AppSkillArgs};

#[tool_router(router = skills_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Per-app recipes (hotkeys, menu paths, pitfalls): list, get (before driving an app a screenshot hints at),
    /// save, append, remove.
    #[tool(
        name = "app_skill",
        annotations(
            title = "App skills",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn app_skill(&self, Parameters(a): Parameters<AppSkillArgs>) -> CallToolResult {
        skills::app_skill(self.session(), &WORDING, self.request_timeout(), a).await
    }
}
