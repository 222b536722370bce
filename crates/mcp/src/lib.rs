//! deskpilot's MCP surfaces: the only crate that knows MCP, JSON-RPC or JSON.
//!
//! `kit` is what every profile shares: deadlines, rendering of engine reports and errors into
//! text + image + `structuredContent`, argument errors that name the field, tool filtering,
//! elicitation and progress. `profiles` holds one module per tool surface and the table
//! `serve --profile` reads. A profile is a thin adapter: it maps its arguments to engine
//! requests and the engine's answers to its own wording. No desktop logic lives here.
//!
//! Invariant: tool filtering ([`ToolFilter`]) is applied to the router itself, so a hidden
//! tool is absent from `tools/list` *and* refused by `tools/call`, whatever the client cached.

pub mod http;
mod kit;
mod profiles;

pub use kit::logging::layer as logging_layer;
pub use kit::schema::wire_line as tools_list_line;
pub use kit::scrub::ScrubbedWriter;
pub use kit::server::{ProfileSpec, Server, ServerIdentity};
pub use kit::spill::set_root as set_spill_root;
pub use kit::{Parameters, ToolFilter, Wording};
pub use profiles::computer_use::{ComputerUseServer, tools_list as computer_use_tools_list};
pub use profiles::deskpilot::{DeskpilotServer, tools_list as deskpilot_tools_list};
pub use profiles::desktopos::DesktopOsServer;
pub use profiles::dsh::DshServer;
pub use profiles::{PROFILES, Profile, Surface, UnknownProfile, profile};
