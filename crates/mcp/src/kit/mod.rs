//! The kit every profile is built from: blocking calls with deadlines (`render::blocking`),
//! rendering of engine reports and errors into text + image + `structuredContent`
//! (`render`, `report`), tool filtering (`filter`), argument parsing that names the field
//! (`args`), elicitation (`approval`) and progress notifications (`progress`); the server every
//! profile is (`server`: [`server::Server`] over a [`server::ProfileSpec`]), and the tools several
//! profiles offer, declared once (`apps`, `context`, `memory`, `shell`, `skills`).
//!
//! Nothing here words a tool for a profile: a profile supplies its [`Wording`] (hints, the
//! "unverifiable" advice, how an image is described), the descriptions of the shared tools it
//! mounts, and its own tool routers.

pub(crate) mod approval;
pub(crate) mod apps;
pub(crate) mod args;
pub(crate) mod capture;
pub(crate) mod clipboard;
pub(crate) mod complete;
pub(crate) mod context;
pub(crate) mod filter;
pub(crate) mod hub;
pub(crate) mod image;
pub(crate) mod logging;
pub(crate) mod memory;
pub(crate) mod output;
pub use filter::ToolFilter;
pub(crate) mod perceive;
pub(crate) mod pick;
pub(crate) mod pointer;
pub(crate) mod progress;
pub(crate) mod prompts;
pub(crate) mod render;
pub(crate) mod report;
pub(crate) mod resources;
pub(crate) mod schema;
pub(crate) mod scrub;
pub(crate) mod server;
pub(crate) mod shell;
pub(crate) mod skills;
pub(crate) mod spill;
pub(crate) mod tasks;

pub use args::Parameters;

use deskpilot_engine::Screenshot;
use deskpilot_types::ErrorCode;
use rmcp::model::CallToolResult;

/// How a profile words what the kit renders: the text is the profile's, so its hints name its
/// own tools and parameters.
pub trait Wording: Send + Sync + 'static {
    /// The code this profile reports for an engine code (a system a profile stands in for may name a failure
    /// differently); the same code by default.
    fn code(&self, code: ErrorCode) -> ErrorCode {
        code
    }
    /// How this profile spells `code` (after [`Wording::code`]) in texts and
    /// `structuredContent.error.code`: the code's own string by default.
    fn code_name(&self, code: ErrorCode) -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed(code.as_str())
    }
    /// One line telling the agent what to do next after an error with `code`.
    fn hint(&self, code: ErrorCode) -> &'static str;
    /// What to do when nothing checked the effect of an action that took `route` ("take a
    /// screenshot …"); by default only that nothing did, for a profile whose tools act on nothing.
    fn unverifiable(&self, _route: deskpilot_engine::Route) -> &'static str {
        "nothing checked the effect"
    }
    /// The text + image + structured result for a screenshot (`kind`: "Screenshot",
    /// "Observation", …; `what`: what it shows); by default one line naming it, for a profile
    /// that never renders a screenshot.
    fn image(&self, kind: &str, shot: &Screenshot, what: &str) -> CallToolResult {
        CallToolResult::success(vec![rmcp::model::ContentBlock::text(format!(
            "{kind} {} of {what}",
            shot.id
        ))])
    }
    /// Fields this profile's answers carry beside the engine's screen verdict of an action
    /// whose check sampled `target` (an object, added to `structuredContent`): none by default.
    fn verdict_fields(
        &self,
        _verdict: &deskpilot_engine::Verdict,
        _target: deskpilot_engine::VerifyTarget,
    ) -> serde_json::Value {
        serde_json::Value::Null
    }
}
