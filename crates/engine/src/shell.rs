//! Shell commands as mutating actions of a session: every change to one of this client's
//! shell sessions passes the same gates as a desktop action (kill switch, blocklist on a label
//! that quotes the command, approval, dry run), runs on that session's lock, and comes back
//! as an [`Outcome`] whose effect is judged here from typed facts: the directory the shell
//! reports, a variable read back, a fresh shell answering, the expectations of a verified run.
//! A plain command's effect is `unverifiable` (its exit code is what it says about itself).
//!
//! Failures carry what a surface needs to show: the output so far of a command that timed
//! out, the diagnosis of a `cd` that failed. A command whose call is cancelled
//! ([`crate::Cancel`]) is killed with what it started, as on a timeout (`CANCELLED`).
//!
//! The reads are here too, as typed results a surface only words: where a session is
//! ([`Session::shell_cwd`]), a variable as its shell sees it ([`Session::shell_env_get`]), and
//! the diagnoser run against this client's `main` directory ([`Session::diagnose`]). Names a
//! surface passes in (variables) are checked here, once.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deskpilot_shell::ShellError;
pub use deskpilot_shell::{Attempt, Captured, Diagnosis, Expect, Fix, Output, VerifiedRun};
use deskpilot_types::ErrorCode;

use crate::action::{Effect, Outcome, Route};
use crate::{error::Error, session::Session};

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

/// Where one of this client's shell sessions is, as [`Session::shell_cwd`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellPlace {
    /// The session asked about.
    pub session: String,
    /// Its shell's working directory, or the directory it will start in.
    pub cwd: String,
    /// Whether the session has a shell yet (it starts on its first command).
    pub started: bool,
    /// How many variables `shell_env_set` recorded for it (replayed after a restart).
    pub recorded_vars: usize,
    /// Every session this client has, by name.
    pub sessions: Vec<String>,
}

/// The session the diagnoser takes its directory from.
const DIAGNOSE_SESSION: &str = "main";

/// `var` as a variable name, or `INVALID_ARGUMENT` saying what one is.
fn check_env_name(var: &str) -> Result<(), Error> {
    if deskpilot_shell::valid_env_name(var) {
        return Ok(());
    }
    Err(Error::Coded {
        code: ErrorCode::InvalidArgument,
        message: format!(
            "{var:?} is not a variable name (letters, digits, underscore; not starting with a digit)"
        ),
    })
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
        ShellError::Stopped { .. } => Error::Cancelled {
            doing: format!(
                "running {} (it was killed with what it started)",
                quoted_command(command)
            ),
        },
    }
}

impl Session {
    /// This client's shell session `name`, created when missing.
    fn shell_session(&self, name: &str) -> Result<Arc<Mutex<deskpilot_shell::Session>>, Error> {
        self.shells()
            .session(name, true)
            .map_err(|e| shell_error(e, name))?
            .ok_or_else(|| Error::Internal {
                message: format!("shell session {name} was not created"),
            })
    }

    /// Passes the gates with `label`, then runs `f` on this client's shell session `name`
    /// (started when missing), holding its lock.
    fn in_shell<T>(
        &self,
        name: &str,
        label: &str,
        f: impl FnOnce(&mut deskpilot_shell::Session) -> Result<T, Error>,
    ) -> Result<T, Error> {
        self.gate_action(label)?;
        let session = self.shell_session(name)?;
        let mut guard = session.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut guard)
    }

    /// Where session `name` is: its shell's directory once it has run something (waiting
    /// for a command running there to end), else the directory it will start in. A read:
    /// no gate, and no session is created.
    pub fn shell_cwd(&self, name: &str) -> Result<ShellPlace, Error> {
        let shells = self.shells();
        let found = shells
            .session(name, false)
            .map_err(|e| shell_error(e, "the command"))?;
        let (cwd, started, recorded_vars) = match found {
            Some(s) => {
                let g = s.lock().unwrap_or_else(|e| e.into_inner());
                (g.cwd().to_string(), true, g.recorded_env().len())
            }
            None => (shells.start_dir().to_string_lossy().into_owned(), false, 0),
        };
        Ok(ShellPlace {
            session: name.to_string(),
            cwd,
            started,
            recorded_vars,
            sessions: shells.names(),
        })
    }

    /// Variable `var` as session `name`'s shell sees it (`None` when unset); the session is
    /// started when missing. A read: no gate.
    pub fn shell_env_get(&self, name: &str, var: &str) -> Result<Option<String>, Error> {
        check_env_name(var)?;
        let session = self.shell_session(name)?;
        let mut guard = session.lock().unwrap_or_else(|e| e.into_inner());
        guard
            .get_env(var, QUICK)
            .map_err(|e| shell_error(e, "the command"))
    }

    /// The diagnoser's reading of a failure (`error`, the `output` around it, the `command`
    /// that failed), with paths taken relative to this client's `main` session when it is
    /// idle, else the server's own directory.
    pub fn diagnose(&self, error: &str, output: &str, command: &str) -> Diagnosis {
        let cwd = self
            .shells()
            .session(DIAGNOSE_SESSION, false)
            .ok()
            .flatten()
            .and_then(|s| s.try_lock().ok().map(|g| g.cwd().to_string()))
            .or_else(|| {
                std::env::current_dir()
                    .ok()
                    .map(|d| d.to_string_lossy().into_owned())
            });
        deskpilot_shell::diagnose(error, output, command, None, cwd.as_deref().map(Path::new))
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
            s.exec_until(command, timeout, &crate::cancel::cancelled)
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
                Some(Path::new(&output.cwd)),
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
        check_env_name(var)?;
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
    /// shell crate's verified loop decides; `auto_fix` allows its additive fix (a missing
    /// parent directory created).
    pub fn shell_exec_verified(
        &self,
        name: &str,
        command: &str,
        expect: &Expect,
        retries: u32,
        timeout: Duration,
        auto_fix: bool,
    ) -> Result<ShellOutcome, Error> {
        let label = format!(
            "run shell command {} in session {name}",
            quoted_command(command)
        );
        let run = self.in_shell(name, &label, |s| {
            let run = deskpilot_shell::run_verified(
                s,
                command,
                expect,
                retries,
                timeout,
                auto_fix,
                &crate::cancel::cancelled,
            );
            crate::cancel::check(&format!("running {}", quoted_command(command)))?;
            Ok(run)
        })?;
        Ok(ShellOutcome {
            session: name.to_string(),
            done: ShellDone::Verified(run),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use deskpilot_backend::FakeDesktop;
    use deskpilot_shell::{ShellProgram, Shells};

    use super::*;
    use crate::{config::EngineConfig, engine::Engine};

    /// A session whose shells start in `dir` (no shell program: nothing here starts one).
    fn session(dir: &Path) -> Session {
        let engine = Arc::new(Engine::new(
            FakeDesktop::new(10, 10).desktop(),
            EngineConfig::default(),
        ));
        Session::with_shells(engine, Shells::new(None::<ShellProgram>, dir.to_path_buf()))
    }

    #[test]
    fn a_session_that_never_ran_is_where_it_will_start() {
        let dir = std::env::temp_dir();
        let place = session(&dir).shell_cwd("build").unwrap();
        assert_eq!(
            place,
            ShellPlace {
                session: "build".into(),
                cwd: dir.to_string_lossy().into_owned(),
                started: false,
                recorded_vars: 0,
                sessions: vec![],
            }
        );
    }

    #[test]
    fn a_bad_variable_name_is_refused_before_any_shell_starts() {
        let s = session(&std::env::temp_dir());
        for bad in ["1X", "A-B", ""] {
            let e = s.shell_env_get("main", bad).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
            let e = s.shell_env_set("main", bad, "v").unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument, "{bad}");
        }
        assert!(s.shells().names().is_empty());
    }

    #[test]
    fn diagnose_reads_a_failure_without_a_shell() {
        let s = session(&std::env::temp_dir());
        let d = s.diagnose("bash: frobnicate: command not found", "", "frobnicate");
        assert_eq!(d.category, "cmd-not-found");
    }
}
