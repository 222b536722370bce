//! Persistent shell sessions for deskpilot: a shell that remembers `cd`, environment variables
//! and activated virtual environments between calls, survives hangs, and explains failures.
//!
//! - [`framing`]: how a command reaches the shell (base64, decoded inside it) and how its end,
//!   exit code and working directory come back (random-nonce markers on stdout and stderr).
//! - [`Session`]: one shell process; timeouts kill its process group, restart it and replay the
//!   working directory and the variables set with `set_env`.
//! - [`Shells`]: named sessions; calls to one run one at a time, different ones in parallel.
//! - [`Expect`]: checks of a command's effect through the filesystem, never through the shell.
//! - [`diagnose`]: a rule table that says why something failed and whether retrying makes sense.

pub mod diagnose;
mod expect;
pub mod framing;
mod session;
mod shells;
mod verified;

pub use diagnose::{Diagnosis, Fix, diagnose};
pub use expect::{Check, Expect};
pub use framing::{Dialect, valid_env_name};
pub use session::{
    Captured, HEAD_BYTES, LOST_STATE, Output, Session, ShellError, ShellProgram, TAIL_BYTES,
};
pub use shells::{MAX_SESSIONS, Shells, valid_session_name};
pub use verified::{Attempt, VerifiedRun, run_verified};
