//! Named sessions: one shell per name, created on first use.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::session::{Session, ShellError, ShellProgram};

/// How many sessions may exist at once.
pub const MAX_SESSIONS: usize = 16;

/// Whether `name` is a usable session name: 1–32 of letters, digits, `-`, `_`.
pub fn valid_session_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Every session of the server. Calls to one session run one at a time (its lock); different
/// sessions run in parallel.
pub struct Shells {
    program: Option<ShellProgram>,
    start_dir: PathBuf,
    sessions: Mutex<HashMap<String, Arc<Mutex<Session>>>>,
}

impl std::fmt::Debug for Shells {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shells")
            .field("program", &self.program)
            .field("start_dir", &self.start_dir)
            .finish_non_exhaustive()
    }
}

impl Shells {
    /// Sessions of `program` (none found: every call says so), starting in `start_dir`.
    pub fn new(program: Option<ShellProgram>, start_dir: PathBuf) -> Shells {
        Shells {
            program,
            start_dir,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// The platform's shell, starting in the current directory.
    pub fn detect() -> Shells {
        let start = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        Shells::new(ShellProgram::detect(), start)
    }

    /// Where new sessions start.
    pub fn start_dir(&self) -> &std::path::Path {
        &self.start_dir
    }

    pub fn program(&self) -> Option<&ShellProgram> {
        self.program.as_ref()
    }

    fn map(&self) -> MutexGuard<'_, HashMap<String, Arc<Mutex<Session>>>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The session called `name`, created when `create` and it does not exist yet.
    pub fn session(
        &self,
        name: &str,
        create: bool,
    ) -> Result<Option<Arc<Mutex<Session>>>, ShellError> {
        if !valid_session_name(name) {
            return Err(ShellError::Start(format!(
                "session name {name:?} must be 1–32 letters, digits, '-' or '_'"
            )));
        }
        let mut map = self.map();
        if let Some(s) = map.get(name) {
            return Ok(Some(s.clone()));
        }
        if !create {
            return Ok(None);
        }
        let Some(program) = &self.program else {
            return Err(ShellError::Start(if cfg!(windows) {
                "neither pwsh nor powershell.exe is on PATH".into()
            } else {
                "neither bash nor sh is on PATH".into()
            }));
        };
        if map.len() >= MAX_SESSIONS {
            return Err(ShellError::Start(format!(
                "{MAX_SESSIONS} sessions exist already ({}); reuse one or shell_reset one",
                map.keys().cloned().collect::<Vec<_>>().join(", ")
            )));
        }
        let s = Arc::new(Mutex::new(Session::new(
            program.clone(),
            self.start_dir.clone(),
        )));
        map.insert(name.to_string(), s.clone());
        Ok(Some(s))
    }

    /// Names of the sessions that exist.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.map().keys().cloned().collect();
        v.sort();
        v
    }

    /// Ends every session's shell (and what it started); called when the server stops.
    pub fn shutdown(&self) {
        let sessions: Vec<_> = self.map().drain().map(|(_, s)| s).collect();
        for s in sessions {
            // A call still running holds the lock; its shell ends when the process does.
            if let Ok(mut g) = s.try_lock() {
                g.reset();
            }
        }
    }

    /// Ends and forgets session `name`; whether it existed.
    pub fn remove(&self, name: &str) -> bool {
        self.map().remove(name).is_some()
    }
}
