//! deskpilot's Chromium channel: a thin DevTools protocol client ([`cdp`]), finding, launching
//! and attaching to a browser ([`launch`]), and page snapshots with refs ([`snapshot`]).
//!
//! **Why not chromiumoxide:** it builds in ~450 s cold (one 5.2 MB generated file), pins one
//! protocol revision and fails to decode events newer Chromiums changed; this client decodes only
//! the responses it asks for and ignores events it does not use.

pub mod cdp;
#[cfg(windows)]
mod job;
pub mod launch;
pub mod snapshot;

use std::time::Duration;

/// What can go wrong talking to a browser.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    #[error("no Chromium-family browser is installed: {hint}")]
    NoBrowser { hint: String },
    #[error("cannot launch the browser: {0}")]
    Launch(String),
    #[error("cannot reach the browser's DevTools endpoint: {0}")]
    Connect(String),
    #[error("the browser connection ended: {0}")]
    Closed(String),
    #[error("{method}: {message}")]
    Protocol { method: String, message: String },
    #[error("{what} did not answer within {after:?}")]
    Timeout { what: String, after: Duration },
}
