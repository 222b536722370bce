//! The `computer-use` profile: computer-use-mcp (the Codex computer-use tool surface) as a
//! drop-in — `list_apps` → `get_window_state {window_id}` → `click {element_index}` →
//! `get_window_state` again, with its names, parameters, tree lines and error codes, over the
//! same engine, session and gates as every other profile.
//!
//! What the surface adds to the engine is wording and one per-session table ([`view`]): for
//! each window, the snapshot the agent last saw, which of its elements are visible (only those
//! get an `element_index`), and the window screenshot x/y are read in. An index resolves to the
//! engine's token of that snapshot, so the engine's rule holds: after the window's structure
//! changed, an index from before is refused with what changed, never re-resolved by position.

mod apps;
mod input;
mod state;
mod view;
mod wording;

use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;

use crate::kit::Wording;
use crate::kit::server::{ProfileSpec, Server};

pub(crate) use wording::error;

const INSTRUCTIONS: &str = "computer-use tools (served by deskpilot) drive this computer's apps through their \
accessibility trees. Typical loop: list_apps (pick the app and window_id) → get_window_state {window_id} (an \
indexed tree `<index> <ControlType> \"<name>\" value=… flags actions=[…]` and a screenshot) → click {window_id, \
element_index} → get_window_state again to verify. get_window_state is an expensive point-in-time snapshot: batch \
related actions, then capture again. Indexes are valid only for the window's latest state; after the window's \
structure changed an old index is refused (stale_element) — call get_window_state again. x/y are pixels of the \
window screenshot (pass its screenshot_id). Before input the window is brought to the foreground; a point covered by \
another window is point_obstructed, one outside it point_outside_window. Every window tool takes window_id or \
window: {app, id}. A human can stop you with Esc (stopped_by_human): stop and wait.";

/// The longest edge of a window screenshot, in image pixels.
pub(crate) const MAX_EDGE: u32 = 1600;

/// How long one desktop call may take before the tool reports a timeout.
const DESKTOP_TIMEOUT: Duration = Duration::from_secs(30);

/// The `computer-use` profile.
#[derive(Debug)]
pub struct ComputerUse;

/// The MCP server for the `computer-use` profile: one per connection, over its own session.
pub type ComputerUseServer = Server<ComputerUse>;

/// Tool groups for `--only` and the excludes.
pub(crate) const GROUPS: crate::kit::filter::Groups = &[
    (
        "apps",
        &[
            "list_apps",
            "list_windows",
            "get_window",
            "launch_app",
            "activate_window",
        ],
    ),
    ("state", &["get_window_state"]),
    (
        "input",
        &[
            "click",
            "perform_secondary_action",
            "set_value",
            "scroll",
            "drag",
            "press_key",
            "type_text",
            "type_secret",
        ],
    ),
];

impl ProfileSpec for ComputerUse {
    const NAME: &'static str = "computer-use";
    const INSTRUCTIONS: &'static str = INSTRUCTIONS;
    const REQUEST_TIMEOUT: Duration = DESKTOP_TIMEOUT;
    const SCREENSHOT_TIMEOUT: Duration = DESKTOP_TIMEOUT;
    const GROUPS: crate::kit::filter::Groups = GROUPS;

    fn wording() -> &'static dyn Wording {
        &wording::WORDING
    }

    fn router() -> ToolRouter<ComputerUseServer> {
        ComputerUseServer::apps_router()
            + crate::kit::apps::tool::<Self>()
            + ComputerUseServer::state_router()
            + ComputerUseServer::input_router()
    }
}

/// Every tool as the routers declare it, before compacting.
#[cfg(test)]
pub(crate) fn tools_list_raw() -> Vec<rmcp::model::Tool> {
    crate::kit::server::tools_list_raw::<ComputerUse>()
}

/// What `tools/list` answers with every tool exposed.
pub fn tools_list() -> Vec<rmcp::model::Tool> {
    crate::kit::server::tools_list::<ComputerUse>()
}
