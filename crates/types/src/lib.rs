//! Plain data shared by every deskpilot crate: geometry, window descriptions, monitors and
//! the stable error codes agents see.
//!
//! This crate does no IO and knows no operating system. Everything here is `serde`-ready
//! so the MCP surface can render it, but nothing here knows about MCP or JSON-RPC.
//!
//! Invariant: every coordinate in these types is in physical virtual-desktop pixels.

mod affordance;
mod button;
mod code;
mod geometry;
mod key;
mod ocr;
pub mod redact;
mod role;
mod text;
mod window;

pub use affordance::Affordance;
pub use button::MouseButton;
pub use code::ErrorCode;
pub use geometry::{Point, Rect};
pub use key::{ChordError, ChordErrorKind, Key, UnknownKey};
pub use ocr::{OcrLine, OcrWord, is_cjk};
pub use role::Role;
pub use text::fold;
pub use window::{Monitor, WindowId, WindowInfo, WindowState};
