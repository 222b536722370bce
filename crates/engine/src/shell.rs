//! Shell commands as mutating actions of a session: every change to one of this client's
//! shell sessions passes the same gates as a desktop action (kill switch, blocklist on a label
//! that quotes the command, approval, dry run), runs on that session's lock, and comes back
//! as an [`Outcome`] whose effect is judged here from typed facts: the directory the shell
//! reports, a variable read back, a fresh shell answering, the expectations of a verified run.
//! A plain command's effect is `unverifiable` (its exit code is what it says about itself).
//!
//! Failures carry what a surface needs to show: the output so far of a command that timed
//! out, the diagnosis of a `cd` that failed.

use std::time::Duration;

use deskpilot_shell::{Expect, Output, ShellError, VerifiedRun};
use deskpilot_types::ErrorCode;

use crate::action::{Effect, Outcome, Route};
use crate::{Error, Session};

/// How long a session may take for deskpilot's own short commands (cd, variables, reset).
const QUICK: Duration = Duration::from_secs(10);

/// A command's text for a label a human reads: one line, at most 120 characters.
pub fn quoted_command(command: &str) -> String {
    let one_line = command.replace('\n', "\\n");
    let mut s: String = one_line.chars().take(120).collect();
    if one_line.chars().count() > 120 {
        s.push('…');
    }
    format!("\"{s}\"")
}

/// What one shell action did.
#[derive(Debug)]
pub struct ShellOutcome {
    /// The session it ran in.
    pub session: String,
    /// What was done, with its own facts.
    pub done: ShellDone,
}

/// The facts of one shell action.
#[derive(Debug)]
pub enum ShellDone {
    /// A command ran (whatever its exit code).
    Exec(Output),
    /// The working directory changed; the shell reports it.
    Cd(Output),
    /// A variable was set and read back as set.
    EnvSet { name: String },
    /// The session was restarted; the new shell answered from this directory.
    Reset { cwd: String },
    /// A verified run, every attempt of it.
    Verified(VerifiedRun),
}

impl Outcome for ShellOutcome {
    fn route(&self) -> Route {
        Route::Shell
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        match &self.done {
            ShellDone::Exec(_) => None,
            ShellDone::Cd(_) => Some((Effect::Confirmed, "the directory the shell reports")),
            ShellDone::EnvSet { .. } => Some((Effect::Confirmed, "the value read back")),
            ShellDone::Reset { .. } => Some((Effect::Confirmed, "the new shell answering")),
            ShellDone::Verified(run) if run.passed => Some((
                Effect::Confirmed,
                "the expectations checked on the filesystem",
            )),
            ShellDone::Verified(_) => Some((
                Effect::SuspectedNoop,
                "the expectations checked on the filesystem",
            )),
        }
    }
}

/// A shell failure as an engine error; `command` names what timed out.
pub fn shell_error(e: ShellError, command: &str) -> Error {
    match e {
        ShellError::Start(m) => Error::Coded {
            code: ErrorCode::ShellUnavailable,
            message: m,
        },
        ShellError::Io(m) => Error::Coded {
            code: ErrorCode::CommandFailed,
            message: m,
        },
        ShellError::Timeout { output } => Error::ShellTimeout {
            command: quoted_command(command),
            output,
        },
    }
}

impl Session {
    /// Passes the gates with `label`, then runs `f` on this client's shell session `name`
    /// (started when missing), holding its lock.
    fn in_shell<T>(
        &self,
        name: &str,
        label: &str,
        f: impl FnOnce(&mut deskpilot_shell::Session) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.gate_action(label)?;
        let session = self
            .shells()
            .session(name, true)
            .map_err(|e| shell_error(e, name))?
            .ok_or_else(|| Error::Internal {
                message: format!("shell session {name} was not created"),
            })?;
        let mut guard = session.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }

    /// Runs `command` in session `name`.
    pub fn shell_exec(
        &self,
        name: &str,
        command: &str,
        timeout: Duration,
    ) -> Result<ShellOutcome, Error> {
        let label = format!(
            "run shell command {} in session {name}",
            quoted_command(command)
        );
        let output = self.in_shell(name, &label, |s| {
            s.exec(command, timeout)
                .map_err(|e| shell_error(e, command))
        })?;
        Ok(ShellOutcome {
            session: name.to_string(),
            done: ShellDone::Exec(output),
        })
    }

    /// Changes session `name`'s directory; a `cd` the shell refuses is `COMMAND_FAILED` with
    /// its diagnosis.
    pub fn shell_cd(&self, name: &str, path: &str) -> Result<ShellOutcome, Error> {
        let label = format!(
            "change directory to {} in session {name}",
            quoted_command(path)
        );
        let output = self.in_shell(name, &label, |s| {
            s.cd(path, QUICK)
                .map_err(|e| shell_error(e, &format!("cd {path}")))
        })?;
        if output.exit_code != Some(0) {
            let diagnosis = deskpilot_shell::diagnose(
                &output.stderr.text,
                "",
                &format!("cd {path}"),
                output.exit_code,
                Some(std::path::Path::new(&output.cwd)),
            );
            return Err(Error::ShellFailed {
                message: format!(
                    "cannot change to {path}: {} (still in {})",
                    output.stderr.text.trim(),
                    output.cwd
                ),
                diagnosis: Box::new(diagnosis),
            });
        }
        Ok(ShellOutcome {
            session: name.to_string(),
            done: ShellDone::Cd(output),
        })
    }

    /// Sets and exports `var` in session `name` and reads it back.
    pub fn shell_env_set(&self, name: &str, var: &str, value: &str) -> Result<ShellOutcome, Error> {
        let label = format!("set environment variable {var} in session {name}");
        let (out, read) = self.in_shell(name, &label, |s| {
            let out = s
                .set_env(var, value, QUICK)
                .map_err(|e| shell_error(e, &format!("setting {var}")))?;
            let read = s
                .get_env(var, QUICK)
                .map_err(|e| shell_error(e, &format!("reading {var}")))?;
            Ok((out, read))
        })?;
        if read.as_deref() != Some(value) {
            return Err(Error::Coded {
                code: ErrorCode::CommandFailed,
                message: format!(
                    "{var} did not take the value (read back {read:?}): {}",
                    out.stderr.text.trim()
                ),
            });
        }
        Ok(ShellOutcome {
            session: name.to_string(),
            done: ShellDone::EnvSet {
                name: var.to_string(),
            },
        })
    }

    /// Restarts session `name` from scratch.
    pub fn shell_reset(&self, name: &str) -> Result<ShellOutcome, Error> {
        let label = format!("reset shell session {name}");
        let out = self.in_shell(name, &label, |s| {
            s.reset();
            s.exec("", QUICK)
                .map_err(|e| shell_error(e, "starting the new shell"))
        })?;
        Ok(ShellOutcome {
            session: name.to_string(),
            done: ShellDone::Reset { cwd: out.cwd },
        })
    }

    /// `shell_exec_verified`: runs `command` in session `name` until `expect` holds, as the
    /// shell crate's verified loop decides.
    pub fn shell_exec_verified(
        &self,
        name: &str,
        command: &str,
        expect: &Expect,
        retries: u32,
        timeout: Duration,
    ) -> Result<ShellOutcome, Error> {
        let label = format!(
            "run shell command {} in session {name}",
            quoted_command(command)
        );
        let run = self.in_shell(name, &label, |s| {
            Ok(deskpilot_shell::run_verified(
                s, command, expect, retries, timeout,
            ))
        })?;
        Ok(ShellOutcome {
            session: name.to_string(),
            done: ShellDone::Verified(run),
        })
    }
}
