//! deskpilot's platform-neutral core.
//!
//! The engine owns observation state (which screenshots were handed out and what geometry
//! they had), turns requests into backend calls and raw frames into budgeted images. It
//! talks to the operating system only through the capability traits of `deskpilot-backend`
//! and knows nothing about MCP or JSON-RPC: surfaces in `deskpilot-mcp` render its results.
//!
//! Invariants:
//! - every coordinate inside the engine is a physical virtual-desktop pixel; conversion to
//!   and from image space happens only in [`coords`];
//! - every capture passes through [`pipeline`], which applies privacy masks before anything
//!   else sees the pixels;
//! - engine methods block (backends talk to other processes); async callers run them on a
//!   blocking pool.

mod action;
mod affordance;
mod apps;
mod browser;
mod cancel;
mod capture;
mod clipboard;
mod config;
pub mod coords;
mod decorate;
mod element;
mod engine;
mod error;
mod find;
mod guard;
mod ids;
mod keyboard;
mod keyring;
mod labels;
mod launch;
pub mod limits;
mod matcher;
mod note;
mod ocr;
mod outline;
pub mod paths;
mod perceive;
pub mod pick;
pub mod pipeline;
mod pointer;
mod registry;
mod remember;
mod safety;
mod secret_input;
pub mod secrets;
mod session;
mod shell;
mod shots;
mod signature;
mod skills;
mod snapshots;
mod status;
mod tree;
mod verify;
mod wait;
mod window;
mod zoom;

pub use action::{ActionReport, Check, Effect, Evidence, Outcome, Route, refused_effect};
pub use apps::{AppList, Found, RunningApp};
pub use browser::{
    BrowserInfo, BrowserOutcome, Click, ConsoleMessage, Emulation, FormField, Go, PROSE_CHARS,
    PageControl, PageInfo, PageShot, PageSnapshot, Request, RequestDetail, SNAPSHOT_LINES,
    SnapshotAfter, SnapshotView, Until, browser_modifier, devtools_ports,
};
pub use cancel::Cancel;
pub use capture::{CaptureTarget, Change, Screenshot, ScreenshotRequest};
pub use clipboard::{ClipboardWrite, MAX_CLIPBOARD_BYTES};
pub use config::{
    EngineConfig, HitTestMode, ImageDelivery, MemorySettings, OutlineConfig, OutlineMode,
    SkillsSettings,
};
pub use decorate::{Decorations, Marker};
/// Where the binary finds the memory directory for the deployment's [`MemorySettings`].
pub use deskpilot_memory::{PathConvention, default_dir};
pub use element::{ElementNote, ElementOp, ElementOutcome};
pub use engine::{DesktopRestart, Engine, WindowFilter};
pub use error::{Error, Unsupported};
pub use find::{ByName, Candidate, FindRequest};
pub use keyboard::{KeyboardNote, KeyboardOutcome, MAX_CHORD, MAX_TEXT_CHARS};
pub use labels::NameFrom;
pub use launch::{LaunchOutcome, MAX_LAUNCH_WAIT};
pub use matcher::fold;
pub use note::{Chosen, Cover, Fallback, MAX_WIDTH_RANGE, NearlyEmpty, Note};
pub use ocr::{DEFAULT_MIN_CONFIDENCE, OcrRequest, OcrResult, TextLine};
pub use outline::{Outline, OutlineItem};
pub use perceive::{
    BLANK_STDDEV, COVERED, Coverer, OFFSCREEN, OwnPixels, PerceiveRequest, Perception, TINY,
    WindowPerception, WindowVerdict,
};
pub use pointer::{Aim, CoordinateSpace, HitWarning, PointerOutcome, PointerTarget, Receipt};
pub use registry::{Pin, ScreenshotId, ScreenshotRecord};
pub use remember::{LiveToken, MAX_TIMELINE_READ, MemoryCleared, MemoryReport, Recollection};
pub use safety::{
    APPROVAL_TIMEOUT, Approval, Approver, DEFAULT_OVERLAY_MESSAGE, GuardStatus, Mutation,
    OverlayMode, RESUME_COOLDOWN, SafetyConfig, SecretAnswer, SecretRequest, Stop, StopReason,
};
pub use secret_input::{SecretEffect, SecretTarget, SecretTyped};
pub use session::{Session, SessionId};
pub use shell::{
    Attempt, Captured, Diagnosis, Expect, Fix, Output, ShellDone, ShellOutcome, ShellPlace,
    VerifiedRun, quoted_command, shell_error,
};
pub use shots::{KEPT_BYTES, KEPT_SHOTS, KeptShot};
pub use signature::Difference;
pub use skills::SkillWrite;
pub use status::{Readiness, StatusReport};
pub use tree::{
    Element, ElementRef, Snapshot, TREE_TIMEOUT, Tokens, TreeRequest, line as tree_line,
    parse_token,
};
pub use verify::{Before, SETTLE, Verdict, VerifyTarget};
pub use wait::{MAX_WAIT, WaitKind, WaitOutcome, WaitRequest};
pub use window::{WindowAction, WindowNote, WindowOutcome, WindowRef, describe_state};
pub use zoom::ZoomRequest;
