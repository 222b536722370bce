//! deskpilot's Chromium channel: a thin DevTools protocol client ([`cdp`]), finding, launching
//! and attaching to a browser ([`launch`]), page snapshots with refs ([`snapshot`]) and the
//! views an agent asks of them (scope, query, diff, parts: [`view`]), and the typed protocol
//! calls the engine makes, one module per concern: the browser's pages ([`target`]), a page's
//! frames, trees, navigation and pixels ([`page`]), its nodes ([`dom`]), input ([`input`]) and
//! the JavaScript deskpilot runs in it ([`script`], kept in `.js` files).
//!
//! Every DevTools method name and every line of page JavaScript deskpilot uses lives in this
//! crate; the engine keeps the session logic (which page, which ref, gates, effects).
//!
//! **Why not chromiumoxide:** it builds in ~450 s cold (one 5.2 MB generated file), pins one
//! protocol revision and fails to decode events newer Chromiums changed; this client decodes only
//! the responses it asks for and ignores events it does not use.
//!
//! Modules use [`cdp`] and the crate's [`Error`], never each other, except [`page`] reading into
//! [`snapshot`]'s `FrameTree` and [`view`] shaping its `Rendered`: no import circle
//! (`tests/no_import_cycle.rs` holds it so).

pub mod cdp;
pub mod dom;
pub mod input;
pub mod launch;
pub mod page;
pub mod script;
pub mod snapshot;
pub mod target;
pub mod view;

use std::time::Duration;

/// How long one protocol call may take, unless a call says otherwise.
pub const CALL: Duration = Duration::from_secs(15);

/// What can go wrong talking to a browser.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No Chromium, Chrome or Edge was found to launch.
    #[error("no Chromium-family browser is installed: {hint}")]
    NoBrowser { hint: String },
    /// The browser did not start or announce its endpoint.
    #[error("cannot launch the browser: {0}")]
    Launch(String),
    /// The DevTools endpoint could not be reached or spoke no WebSocket.
    #[error("cannot reach the browser's DevTools endpoint: {0}")]
    Connect(String),
    /// The connection ended (the browser closed it, or a read of the socket failed); every
    /// later call fails the same way.
    #[error("the browser connection ended: {0}")]
    Closed(String),
    /// The browser answered the call with a protocol error.
    #[error("{method}: {message}")]
    Protocol { method: String, message: String },
    /// The call's answer was larger than [`cdp::MAX_RESPONSE`]; the connection stays open.
    #[error(
        "{method}: the browser's answer is {size} bytes, more than the {limit} deskpilot reads; the connection stays open"
    )]
    TooLarge {
        method: String,
        size: usize,
        limit: usize,
    },
    /// The call's answer was not JSON; the connection stays open.
    #[error(
        "{method}: the browser's answer could not be read ({message}); the connection stays open"
    )]
    Undecodable { method: String, message: String },
    /// No answer within the call's deadline.
    #[error("{what} did not answer within {after:?}")]
    Timeout { what: String, after: Duration },
}
