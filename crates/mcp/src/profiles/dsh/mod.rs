//! The `dsh` profile: dsh-computer-use as a drop-in — five tools (`computer`,
//! `app_window`, `ui_element`, `clipboard`, `app_skill`), 38 actions, dsh-computer-use's parameter
//! names, defaults, ranges, error codes and envelopes.
//!
//! The profile only translates: each action maps its arguments to the same engine and session
//! calls the `deskpilot` profile makes, and renders the answer as one canonical JSON object
//! (`structuredContent`) plus a text block and an optional image block. Where dsh-computer-use's
//! meaning differs from deskpilot's (scroll sign, x/y omitted = the pointer, `type` counting
//! UTF-16 units, paths instead of tokens, `PATTERN_UNSUPPORTED`), the translation lives here.

mod computer;
mod elements;
mod envelope;
mod others;
mod windows;
mod wording;

use std::time::Duration;

use rmcp::handler::server::router::tool::ToolRouter;

use crate::kit::server::{ProfileSpec, Server};
use crate::kit::{self, Wording};

pub(crate) use wording::error;

/// dsh-computer-use's `requestTimeoutMs` default.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(20_000);
/// dsh-computer-use's `screenshotTimeoutMs` default.
const SCREENSHOT_TIMEOUT: Duration = Duration::from_millis(30_000);

const INSTRUCTIONS: &str = "dsh-computer-use tools drive this computer's real desktop. computer { action: \"screenshot\" } \
first: x/y of every later coordinate action are read in the pixel space of the last screenshot this tool returned (omit \
them to act at the pointer). Prefer app_window for windows (list, then act by hwnd) and ui_element for controls with a \
name (find or tree, then act by path). When a screenshot envelope says an app skill is available, app_skill get it \
before driving the app. observe: true appends a fresh screenshot, verify: true says whether the screen changed. A human \
can stop you with Esc (STOPPED_BY_HUMAN): stop, report, and wait until they ask you to continue.";

/// The `dsh` profile.
#[derive(Debug)]
pub struct Dsh;

/// The MCP server for the `dsh` profile: one per connection, over its own session.
pub type DshServer = Server<Dsh>;

const APP_SKILL: &str = "Per-app recipes (hotkeys, menus, pitfalls): list, get (before driving an app a \
screenshot hints at), save, append, remove.";

impl ProfileSpec for Dsh {
    const NAME: &'static str = "dsh";
    const INSTRUCTIONS: &'static str = INSTRUCTIONS;
    const REQUEST_TIMEOUT: Duration = REQUEST_TIMEOUT;
    const SCREENSHOT_TIMEOUT: Duration = SCREENSHOT_TIMEOUT;

    fn wording() -> &'static dyn Wording {
        &wording::WORDING
    }

    fn router() -> ToolRouter<DshServer> {
        DshServer::computer_router()
            + DshServer::windows_router()
            + DshServer::elements_router()
            + DshServer::others_router()
            + kit::skills::tool::<Self>(APP_SKILL)
    }
}

/// Every tool as the routers declare it, before compacting.
#[cfg(test)]
pub(crate) fn tools_list_raw() -> Vec<rmcp::model::Tool> {
    kit::server::tools_list_raw::<Dsh>()
}

/// What `tools/list` answers with every tool exposed.
#[cfg(test)]
pub(crate) fn tools_list() -> Vec<rmcp::model::Tool> {
    kit::server::tools_list::<Dsh>()
}
