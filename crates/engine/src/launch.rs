//! `launch`: start a program directly (no shell) and report the window(s) it opened.
//!
//! The child gets no stdin, its stdout is discarded (this process's stdout is the MCP
//! channel) and the tail of its stderr is kept, so a program that dies at once is reported
//! with its own words. It runs in its own process group: stopping deskpilot (Ctrl-C in a
//! terminal) does not take launched apps with it. A reaper thread waits for it, so no
//! zombie is left behind.

use crate::action::{Effect, Outcome, Route};
use std::collections::HashSet;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deskpilot_types::WindowInfo;

use crate::{error::Error, safety::Mutation, session::Session};

pub use crate::limits::MAX_LAUNCH_WAIT;
/// How much of a launched program's stderr is kept.
const STDERR_TAIL: usize = 2000;
const POLL: Duration = Duration::from_millis(25);
/// After the first window shows, how long to wait for its siblings (splash + main, dialogs).
const SETTLE: Duration = Duration::from_millis(300);

/// What `launch` found.
#[derive(Debug, Clone)]
pub struct LaunchOutcome {
    pub command: String,
    pub pid: u32,
    /// Windows of the launched process that appeared, topmost first.
    pub windows: Vec<WindowInfo>,
    /// New windows of other processes (an app that hands off to a running instance).
    pub other_windows: Vec<WindowInfo>,
    /// The exit code when the process already ended (`None` inside: killed by a signal).
    pub exited: Option<Option<i32>>,
    /// The end of its stderr, when it exited.
    pub stderr_tail: String,
    pub waited: Duration,
}

impl Outcome for LaunchOutcome {
    fn route(&self) -> Route {
        Route::Process
    }

    fn judged(&self) -> Option<(Effect, &'static str)> {
        (!self.windows.is_empty() || !self.other_windows.is_empty())
            .then_some((Effect::Confirmed, "the windows that appeared"))
    }
}

#[derive(Debug, Default)]
struct Child {
    exited: Option<Option<i32>>,
    stderr: Vec<u8>,
}

impl Session {
    /// Starts `command` with `args` and waits up to `wait` for its window.
    pub fn launch(
        &self,
        command: &str,
        args: &[String],
        wait: Duration,
    ) -> Result<LaunchOutcome, Error> {
        if command.trim().is_empty() {
            return Err(Error::InvalidArgument {
                message: "command is empty".to_string(),
            });
        }
        if wait > MAX_LAUNCH_WAIT {
            return Err(Error::InvalidArgument {
                message: format!(
                    "wait of {} ms is beyond the {} ms maximum",
                    wait.as_millis(),
                    MAX_LAUNCH_WAIT.as_millis()
                ),
            });
        }
        let mut line = command.to_string();
        for a in args {
            line.push(' ');
            line.push_str(a);
        }
        self.gate(
            Mutation::Launch,
            &format!("launch {}", crate::safety::quoted(&line)),
        )?;
        let before: HashSet<_> = self
            .desktop()
            .windows
            .list_windows()?
            .into_iter()
            .map(|w| w.id)
            .collect();
        let mut cmd = Command::new(command);
        cmd.args(args)
            .envs(self.desktop().window_control.launch_env())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt as _;
            cmd.process_group(0);
        }
        let mut child = cmd.spawn().map_err(|e| Error::LaunchFailed {
            command: command.to_string(),
            message: match e.kind() {
                std::io::ErrorKind::NotFound => {
                    "no such program (not a path, and not found on PATH)".to_string()
                }
                std::io::ErrorKind::PermissionDenied => {
                    "permission denied (is it executable?)".to_string()
                }
                _ => e.to_string(),
            },
        })?;
        let pid = child.id();
        let state: Arc<Mutex<Child>> = Arc::default();
        let mut stderr = child.stderr.take();
        let reaper_state = state.clone();
        std::thread::Builder::new()
            .name(format!("deskpilot-reap-{pid}"))
            .spawn(move || {
                if let Some(err) = stderr.as_mut() {
                    let mut buf = [0u8; 4096];
                    while let Ok(n) = err.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        let mut s = reaper_state.lock().unwrap_or_else(|e| e.into_inner());
                        s.stderr.extend_from_slice(&buf[..n]);
                        let excess = s.stderr.len().saturating_sub(STDERR_TAIL);
                        s.stderr.drain(..excess);
                    }
                }
                let code = child.wait().ok().map(|s| s.code());
                reaper_state
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .exited = Some(code.flatten());
            })
            .map_err(|e| Error::Internal {
                message: format!("cannot start the reaper thread: {e}"),
            })?;

        let started = Instant::now();
        let deadline = started + wait;
        let mut first_seen: Option<Instant> = None;
        let (windows, other_windows) = loop {
            let all = self.desktop().windows.list_windows()?;
            let (ours, others): (Vec<_>, Vec<_>) = all
                .into_iter()
                .filter(|w| !before.contains(&w.id))
                .partition(|w| w.pid == Some(pid));
            let exited = state.lock().unwrap_or_else(|e| e.into_inner()).exited;
            let now = Instant::now();
            if !ours.is_empty() || (exited.is_some() && !others.is_empty()) {
                let seen = *first_seen.get_or_insert(now);
                if now >= seen + SETTLE || now >= deadline {
                    break (ours, others);
                }
            } else if exited.is_some() {
                // Give a hand-off a moment to show its window in the running instance.
                let seen = *first_seen.get_or_insert(now);
                if now >= seen + SETTLE * 3 || now >= deadline {
                    break (ours, others);
                }
            }
            if now >= deadline {
                break (ours, others);
            }
            std::thread::sleep(POLL);
        };
        let s = state.lock().unwrap_or_else(|e| e.into_inner());
        let stderr_tail = String::from_utf8_lossy(&s.stderr).trim().to_string();
        let exited = s.exited;
        drop(s);
        if let (Some(code), true, true) = (exited, windows.is_empty(), other_windows.is_empty())
            && code != Some(0)
        {
            return Err(Error::LaunchFailed {
                command: command.to_string(),
                message: format!(
                    "it exited with {} before showing a window{}",
                    code.map_or("a signal".to_string(), |c| format!("code {c}")),
                    if stderr_tail.is_empty() {
                        String::new()
                    } else {
                        format!("; its stderr ends with:\n{stderr_tail}")
                    }
                ),
            });
        }
        // The app's window is where the agent's keys go next.
        if let Some(w) = windows.first().or(other_windows.first()) {
            self.aim_keys(crate::registry::KeyTarget::Window(
                crate::registry::Pin::of(w),
            ));
        }
        Ok(LaunchOutcome {
            command: command.to_string(),
            pid,
            windows,
            other_windows,
            exited,
            stderr_tail,
            waited: started.elapsed(),
        })
    }
}
