//! One persistent shell process: start, run a command with a deadline, recover.
//!
//! The shell runs in a process group of its own. A command that outlives its timeout takes the
//! whole group down (the shell and everything it started); a new shell is started and the
//! session's state replayed — the working directory and every variable set through
//! [`Session::set_env`]. What cannot be replayed (functions, aliases, shell options, variables
//! set by commands) is named in the result. A command that ends the shell (`exit 3`) is
//! reported with its exit code and the shell is restarted the same way. A command whose caller
//! takes it back ([`Session::exec_until`]'s `stop`) is ended the way a timeout ends it.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::framing::{self, Dialect};

/// Bytes of each stream kept from the start of a command's output.
pub const HEAD_BYTES: usize = 32 * 1024;
/// Bytes of each stream kept from the end of a command's output.
pub const TAIL_BYTES: usize = 32 * 1024;
/// Room kept beyond the tail for the end marker (which carries the working directory).
const MARKER_ROOM: usize = 8 * 1024;
/// How long bootstrap and replay commands may take.
const INTERNAL_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a running command's caller is asked whether it still wants the answer.
const STOP_EVERY: Duration = Duration::from_millis(25);

/// What could not be replayed after a restart.
pub const LOST_STATE: &str =
    "shell functions, aliases, shell options and variables that were not set with shell_env_set";

/// How to start a session's shell.
#[derive(Debug, Clone)]
pub struct ShellProgram {
    pub dialect: Dialect,
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl ShellProgram {
    /// bash (else `sh`) on Unix; `pwsh` (else Windows PowerShell) on Windows.
    pub fn detect() -> Option<ShellProgram> {
        let found = |name: &str| which(name);
        if cfg!(windows) {
            let args = ["-NoLogo", "-NoProfile", "-NonInteractive", "-Command", "-"];
            ["pwsh.exe", "powershell.exe"]
                .iter()
                .find_map(|n| found(n))
                .map(|program| ShellProgram {
                    dialect: Dialect::PowerShell,
                    program,
                    args: args.iter().map(|a| a.to_string()).collect(),
                })
        } else if let Some(program) = found("bash") {
            Some(ShellProgram {
                dialect: Dialect::Bash,
                program,
                args: vec!["--noprofile".into(), "--norc".into(), "-s".into()],
            })
        } else {
            found("sh").map(|program| ShellProgram {
                dialect: Dialect::Posix,
                program,
                args: vec!["-s".into()],
            })
        }
    }
}

/// `name` on `PATH` (else in `/bin`, for a server started with an empty `PATH`).
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(cfg!(unix).then(|| PathBuf::from("/bin")))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Why a session call failed.
#[derive(Debug)]
pub enum ShellError {
    /// The shell could not be started (or restarted).
    Start(String),
    /// The command outlived its timeout; the shell was restarted. Carries what it printed.
    Timeout { output: Box<Output> },
    /// The caller took the command back; it was killed with its process group and the shell
    /// restarted. Carries what it printed until then.
    Stopped { output: Box<Output> },
    /// Writing to or reading from the shell failed.
    Io(String),
}

impl std::fmt::Display for ShellError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShellError::Start(m) => write!(f, "cannot start the shell: {m}"),
            ShellError::Timeout { output } => write!(
                f,
                "the command timed out after {} ms and was killed with its process group; {}",
                output.duration.as_millis(),
                output
                    .restart_note
                    .as_deref()
                    .unwrap_or("the shell was restarted")
            ),
            ShellError::Stopped { output } => write!(
                f,
                "the command was stopped after {} ms and killed with its process group; {}",
                output.duration.as_millis(),
                output
                    .restart_note
                    .as_deref()
                    .unwrap_or("the shell was restarted")
            ),
            ShellError::Io(m) => write!(f, "talking to the shell failed: {m}"),
        }
    }
}

impl std::error::Error for ShellError {}

/// One stream of a command's output, possibly cut in the middle.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Captured {
    /// The text (UTF-8; invalid bytes replaced), with a cut marker when cut.
    pub text: String,
    /// Bytes the command wrote.
    pub total_bytes: u64,
    /// Bytes left out of `text` (between head and tail).
    pub cut_bytes: u64,
    /// Whether the bytes were not valid UTF-8 (binary output).
    pub binary: bool,
}

/// What a command did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Output {
    pub stdout: Captured,
    pub stderr: Captured,
    /// The exit status; `None` when killed.
    pub exit_code: Option<i32>,
    /// The working directory after the command.
    pub cwd: String,
    #[serde(serialize_with = "millis")]
    pub duration: Duration,
    /// Set when the shell had to be restarted during this call, saying what was replayed and
    /// what was lost.
    pub restart_note: Option<String>,
}

impl Output {
    /// Why `command` failed, when it did (a non-zero exit code): the diagnoser's reading of
    /// its stderr, stdout and exit code in the directory it ended in.
    pub fn diagnosis(&self, command: &str) -> Option<crate::diagnose::Diagnosis> {
        (self.exit_code != Some(0)).then(|| {
            crate::diagnose::diagnose(
                &self.stderr.text,
                &self.stdout.text,
                command,
                self.exit_code,
                Some(std::path::Path::new(&self.cwd)),
            )
        })
    }
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

enum Chunk {
    Out(Vec<u8>),
    Err(Vec<u8>),
    Closed,
}

struct Proc {
    child: Child,
    stdin: ChildStdin,
    chunks: Receiver<Chunk>,
}

impl Proc {
    fn kill(mut self) {
        #[cfg(unix)]
        // SAFETY: killpg only sends a signal; the group id is the shell's own pid (process_group(0)).
        unsafe {
            libc::killpg(self.child.id() as libc::pid_t, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A stream being collected: head, a tail with room for the marker, and a byte count.
#[derive(Default)]
struct Collector {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl Collector {
    fn push(&mut self, bytes: &[u8]) {
        let room = HEAD_BYTES.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..room.min(bytes.len())]);
        self.tail.extend(bytes);
        let keep = TAIL_BYTES + MARKER_ROOM;
        if self.tail.len() > keep {
            self.tail.drain(..self.tail.len() - keep);
        }
        self.total += bytes.len() as u64;
    }

    /// Absolute offset of `needle`, searched among the last `recent + needle` bytes.
    fn find_recent(&mut self, needle: &[u8], recent: usize) -> Option<u64> {
        let tail = self.tail.make_contiguous();
        let from = tail.len().saturating_sub(recent + needle.len());
        let at = framing::find(&tail[from..], needle)? + from;
        Some(self.total - (tail.len() - at) as u64)
    }

    /// The bytes from absolute offset `at` to the end (must lie in the tail).
    fn from(&mut self, at: u64) -> &[u8] {
        let tail = self.tail.make_contiguous();
        let start = tail.len() - (self.total - at) as usize;
        &tail[start..]
    }

    /// The first `len` bytes as text, cut to head + tail when longer.
    fn captured(&mut self, len: u64) -> Captured {
        let tail_start = self.total - self.tail.len() as u64;
        let tail = self.tail.make_contiguous();
        let (bytes, cut): (Vec<u8>, u64) = if len as usize <= self.head.len() {
            (self.head[..len as usize].to_vec(), 0)
        } else if tail_start <= self.head.len() as u64 {
            let mut b = self.head.clone();
            let from = (self.head.len() as u64 - tail_start) as usize;
            let to = (len - tail_start) as usize;
            b.extend_from_slice(&tail[from..to]);
            (b, 0)
        } else {
            let to = (len - tail_start) as usize;
            let from = to.saturating_sub(TAIL_BYTES);
            let cut = len - self.head.len() as u64 - (to - from) as u64;
            let mut b = self.head.clone();
            b.extend_from_slice(format!("\n[… {cut} bytes cut …]\n").as_bytes());
            b.extend_from_slice(&tail[from..to]);
            (b, cut)
        };
        let binary = std::str::from_utf8(&bytes).is_err() && !cut_at_char(&bytes);
        Captured {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            total_bytes: len,
            cut_bytes: cut,
            binary,
        }
    }
}

/// Whether the only invalid UTF-8 is a character split by a cut at either end.
fn cut_at_char(bytes: &[u8]) -> bool {
    let trim = |b: &[u8]| -> bool {
        (0..4).any(|s| {
            (0..4).any(|e| b.len() >= s + e && std::str::from_utf8(&b[s..b.len() - e]).is_ok())
        })
    };
    bytes.len() > 8 && trim(bytes)
}

/// A persistent shell with its remembered state.
pub struct Session {
    program: ShellProgram,
    start_dir: PathBuf,
    proc: Option<Proc>,
    cwd: String,
    /// Variables set through `set_env`, in order, replayed after a restart.
    env: Vec<(String, String)>,
    counter: u64,
    pub restarts: u32,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("program", &self.program.program)
            .field("cwd", &self.cwd)
            .field("env", &self.env.len())
            .field("running", &self.proc.is_some())
            .finish()
    }
}

impl Session {
    /// A session that starts its shell on first use, in `start_dir`.
    pub fn new(program: ShellProgram, start_dir: PathBuf) -> Session {
        Session {
            program,
            cwd: start_dir.to_string_lossy().into_owned(),
            start_dir,
            proc: None,
            env: Vec::new(),
            counter: 0,
            restarts: 0,
        }
    }

    pub fn dialect(&self) -> Dialect {
        self.program.dialect
    }

    /// The working directory as of the last command.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// Variables set through `set_env`.
    pub fn recorded_env(&self) -> &[(String, String)] {
        &self.env
    }

    fn spawn(&self, dir: &str) -> Result<Proc, ShellError> {
        let mut cmd = Command::new(&self.program.program);
        cmd.args(&self.program.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if std::path::Path::new(dir).is_dir() {
            cmd.current_dir(dir);
        } else {
            cmd.current_dir(&self.start_dir);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| ShellError::Start(format!("{}: {e}", self.program.program.display())))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            return Err(ShellError::Start("no pipes to the shell".into()));
        };
        let (tx, chunks) = mpsc::channel();
        for (mut stream, out) in [
            (Box::new(stdout) as Box<dyn Read + Send>, true),
            (Box::new(stderr), false),
        ] {
            let tx = tx.clone();
            std::thread::Builder::new()
                .name("shell-reader".into())
                .spawn(move || {
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        match stream.read(&mut buf) {
                            Ok(0) | Err(_) => {
                                let _ = tx.send(Chunk::Closed);
                                return;
                            }
                            Ok(n) => {
                                let chunk = buf[..n].to_vec();
                                let sent = if out {
                                    tx.send(Chunk::Out(chunk))
                                } else {
                                    tx.send(Chunk::Err(chunk))
                                };
                                if sent.is_err() {
                                    return;
                                }
                            }
                        }
                    }
                })
                .map_err(|e| ShellError::Start(format!("reader thread: {e}")))?;
        }
        let mut proc = Proc {
            child,
            stdin,
            chunks,
        };
        if let Err(e) = proc
            .stdin
            .write_all(self.program.dialect.bootstrap().as_bytes())
        {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Err(ShellError::Start(format!("bootstrap: {e}")));
            }
            // The program ended before it read a line: what it said and its exit code tell
            // why (regression: this used to surface as "bootstrap: Broken pipe").
            let mut said = Vec::new();
            let deadline = Instant::now() + Duration::from_secs(2);
            let mut open = 2;
            while open > 0 {
                let left = deadline.saturating_duration_since(Instant::now());
                match proc.chunks.recv_timeout(left) {
                    Ok(Chunk::Err(c)) => said.extend(c),
                    Ok(Chunk::Out(_)) => {}
                    Ok(Chunk::Closed) => open -= 1,
                    Err(_) => break,
                }
            }
            let code = proc.child.wait().ok().and_then(|s| s.code());
            return Err(self.exited_at_start(code, &String::from_utf8_lossy(&said)));
        }
        Ok(proc)
    }

    /// Starts the shell when none runs, replaying the remembered state. Returns a note when it
    /// replayed anything.
    fn ensure_started(&mut self) -> Result<Option<String>, ShellError> {
        if self.proc.is_some() {
            return Ok(None);
        }
        let first = self.counter == 0 && self.restarts == 0;
        let cwd = self.cwd.clone();
        self.proc = Some(self.spawn(&cwd)?);
        if first {
            // Learn the real starting directory.
            let out = self.run_raw("", INTERNAL_TIMEOUT, &|| false)?;
            self.died_at_start(&out)?;
            self.cwd = out.cwd;
            return Ok(None);
        }
        self.restarts += 1;
        let mut replayed = vec![];
        let cd = self.program.dialect.cd(&cwd);
        let out = self.run_raw(&cd, INTERNAL_TIMEOUT, &|| false)?;
        self.died_at_start(&out)?;
        let cwd_ok = out.exit_code == Some(0);
        if cwd_ok {
            replayed.push(format!("working directory {cwd}"));
        }
        for (name, value) in self.env.clone() {
            let line = self.program.dialect.set_env(&name, &value);
            self.run_raw(&line, INTERNAL_TIMEOUT, &|| false)?;
        }
        if !self.env.is_empty() {
            replayed.push(format!(
                "{} variable(s) set with shell_env_set ({})",
                self.env.len(),
                self.env
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let mut note = format!(
            "a new shell was started{}; lost: {LOST_STATE}",
            if replayed.is_empty() {
                String::new()
            } else {
                format!(" and given back its {}", replayed.join(" and "))
            }
        );
        if !cwd_ok {
            note.push_str(&format!(
                "; the working directory {cwd} no longer exists, the shell is in {}",
                self.cwd
            ));
        }
        Ok(Some(note))
    }

    /// Fails with a clear `Start` error when the shell ended while answering deskpilot's own
    /// first command: the program is no working shell here (Wine's `powershell.exe` is a stub
    /// that exits at once).
    fn died_at_start(&self, out: &Output) -> Result<(), ShellError> {
        if self.proc.is_some() {
            return Ok(());
        }
        Err(self.exited_at_start(out.exit_code, &out.stderr.text))
    }

    /// "<program> exited as soon as it started (exit code N) saying …".
    fn exited_at_start(&self, code: Option<i32>, said: &str) -> ShellError {
        let said = said.trim();
        ShellError::Start(format!(
            "{} exited as soon as it started (exit code {}){}, so it is not a working {} here",
            self.program.program.display(),
            code.map_or("unknown".into(), |c| c.to_string()),
            if said.is_empty() {
                String::new()
            } else {
                format!(" saying \"{}\"", said.chars().take(200).collect::<String>())
            },
            self.program.dialect.name(),
        ))
    }

    /// Runs one framed command and collects its output, without any recovery; `stop` is asked
    /// while it runs and ends it when true.
    fn run_raw(
        &mut self,
        command: &str,
        timeout: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<Output, ShellError> {
        let started = Instant::now();
        let deadline = started + timeout;
        self.counter += 1;
        let nonce = format!("{:x}{:08x}", nonce_seed(), self.counter);
        let dialect = self.program.dialect;
        let Some(proc) = self.proc.as_mut() else {
            return Err(ShellError::Io("the shell is not running".into()));
        };
        // Whatever background jobs printed since the last command is not this command's; a pipe
        // that closed meanwhile still counts (regression: a shell that died before its first
        // command was reported as "timed out after 0 ms").
        let mut closed = 0;
        while let Ok(chunk) = proc.chunks.try_recv() {
            if matches!(chunk, Chunk::Closed) {
                closed += 1;
            }
        }
        let line = dialect.command_line(command, &nonce);
        if let Err(e) = proc
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| proc.stdin.flush())
        {
            // The shell is gone (a previous command ended it): report, restart later.
            return Err(ShellError::Io(format!(
                "the shell did not take the command: {e}"
            )));
        }
        let (out_marker, err_marker) = (framing::out_marker(&nonce), framing::err_marker(&nonce));
        let (mut out, mut err) = (Collector::default(), Collector::default());
        let mut out_end: Option<(u64, i32, String)> = None;
        let mut err_end: Option<u64> = None;
        loop {
            if out_end.is_some() && err_end.is_some() {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match proc.chunks.recv_timeout(left.min(STOP_EVERY)) {
                Ok(Chunk::Out(b)) => {
                    out.push(&b);
                    if out_end.is_none()
                        && let Some(at) = out.find_recent(&out_marker, b.len() + MARKER_ROOM)
                        && let Some((code, cwd)) = framing::parse_end(out.from(at), &nonce)
                    {
                        out_end = Some((at, code, cwd));
                    }
                }
                Ok(Chunk::Err(b)) => {
                    err.push(&b);
                    if err_end.is_none() {
                        err_end = err.find_recent(&err_marker, b.len());
                    }
                }
                // Both readers are gone only after both sent `Closed`.
                Ok(Chunk::Closed) | Err(RecvTimeoutError::Disconnected) => {
                    closed += 1;
                    if closed >= 2 {
                        // The shell ended (the command ran `exit`, or killed it).
                        let status = proc.child.wait().ok();
                        let code = status.and_then(exit_code);
                        if let Some(p) = self.proc.take() {
                            p.kill();
                        }
                        let (ol, el) = (out.total, err.total);
                        return Ok(Output {
                            stdout: out.captured(ol),
                            stderr: err.captured(el),
                            exit_code: code,
                            cwd: self.cwd.clone(),
                            duration: started.elapsed(),
                            restart_note: Some("the command ended the shell".into()),
                        });
                    }
                }
                // Still within its time and still wanted: keep reading.
                Err(RecvTimeoutError::Timeout) if Instant::now() < deadline && !stop() => {}
                Err(e) => {
                    // Out of time, stopped by its caller, or the shell's pipes are gone.
                    let stopped =
                        matches!(e, RecvTimeoutError::Timeout) && Instant::now() < deadline;
                    if let Some(p) = self.proc.take() {
                        p.kill();
                    }
                    let ol = out_end.as_ref().map_or(out.total, |e| e.0);
                    let el = err_end.unwrap_or(err.total);
                    let output = Box::new(Output {
                        stdout: out.captured(ol),
                        stderr: err.captured(el),
                        exit_code: None,
                        cwd: self.cwd.clone(),
                        duration: started.elapsed(),
                        restart_note: None,
                    });
                    return Err(if stopped {
                        ShellError::Stopped { output }
                    } else {
                        ShellError::Timeout { output }
                    });
                }
            }
        }
        let Some((out_len, code, cwd)) = out_end else {
            return Err(ShellError::Io("no end marker".into()));
        };
        let err_len = err_end.unwrap_or(err.total);
        self.cwd = cwd.clone();
        Ok(Output {
            stdout: out.captured(out_len),
            stderr: err.captured(err_len),
            exit_code: Some(code),
            cwd,
            duration: started.elapsed(),
            restart_note: None,
        })
    }

    /// Runs `command`; restarts and replays when it times out or ends the shell.
    pub fn exec(&mut self, command: &str, timeout: Duration) -> Result<Output, ShellError> {
        self.exec_until(command, timeout, &|| false)
    }

    /// [`Session::exec`], asking `stop` every few milliseconds while the command runs: when it
    /// says so, the command is ended as a timeout ends it (`ShellError::Stopped`).
    pub fn exec_until(
        &mut self,
        command: &str,
        timeout: Duration,
        stop: &dyn Fn() -> bool,
    ) -> Result<Output, ShellError> {
        let before = self.ensure_started()?;
        let result = match self.run_raw(command, timeout, stop) {
            Err(ShellError::Io(_))
                if self
                    .proc
                    .as_mut()
                    .is_some_and(|p| !matches!(p.child.try_wait(), Ok(None))) =>
            {
                // The shell had died between calls: start it again and run the command there.
                if let Some(p) = self.proc.take() {
                    p.kill();
                }
                let note = self.ensure_started()?;
                let mut out = self.run_raw(command, timeout, stop)?;
                out.restart_note = note;
                return Ok(out);
            }
            other => other,
        };
        match result {
            Ok(mut out) => {
                if out.restart_note.is_some() {
                    // The command ended the shell: bring it back now, so the next call finds it.
                    let note = self.ensure_started()?;
                    out.restart_note = Some(format!(
                        "the command ended the shell (exit code {}); {}",
                        out.exit_code.map_or("unknown".into(), |c| c.to_string()),
                        note.unwrap_or_default()
                    ));
                } else if let Some(note) = before {
                    out.restart_note = Some(note);
                }
                Ok(out)
            }
            Err(ShellError::Timeout { mut output }) => {
                let note = self.ensure_started()?;
                output.restart_note = note;
                Err(ShellError::Timeout { output })
            }
            Err(ShellError::Stopped { mut output }) => {
                let note = self.ensure_started()?;
                output.restart_note = note;
                Err(ShellError::Stopped { output })
            }
            Err(e) => Err(e),
        }
    }

    /// Changes directory; the result's exit code says whether it worked.
    pub fn cd(&mut self, path: &str, timeout: Duration) -> Result<Output, ShellError> {
        let line = self.program.dialect.cd(path);
        self.exec(&line, timeout)
    }

    /// Sets and exports a variable, remembering it for replay.
    pub fn set_env(
        &mut self,
        name: &str,
        value: &str,
        timeout: Duration,
    ) -> Result<Output, ShellError> {
        let line = self.program.dialect.set_env(name, value);
        let out = self.exec(&line, timeout)?;
        if out.exit_code == Some(0) {
            self.env.retain(|(n, _)| n != name);
            self.env.push((name.to_string(), value.to_string()));
        }
        Ok(out)
    }

    /// The variable's value in the shell, `None` when unset.
    pub fn get_env(&mut self, name: &str, timeout: Duration) -> Result<Option<String>, ShellError> {
        let line = self.program.dialect.get_env(name);
        let out = self.exec(&line, timeout)?;
        let text = out.stdout.text;
        Ok(text.strip_prefix('1').map(str::to_string))
    }

    /// Ends the shell and forgets the session's state; the next call starts afresh in the
    /// session's starting directory.
    pub fn reset(&mut self) {
        if let Some(p) = self.proc.take() {
            p.kill();
        }
        self.cwd = self.start_dir.to_string_lossy().into_owned();
        self.env.clear();
        self.counter = 0;
        self.restarts = 0;
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(p) = self.proc.take() {
            p.kill();
        }
    }
}

/// An exit status as a number: the code, or 128 + the signal that ended it (as shells say).
fn exit_code(status: std::process::ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        status
            .code()
            .or_else(|| status.signal().map(|sig| 128 + sig))
    }
    #[cfg(not(unix))]
    {
        status.code()
    }
}

/// Per-process randomness for nonces (no dependency: the std hasher is randomly keyed).
fn nonce_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    h.finish()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[allow(clippy::print_stderr)]
    fn session() -> Option<Session> {
        let Some(program) = ShellProgram::detect() else {
            assert!(std::env::var("CI").is_err(), "CI has bash");
            eprintln!("SKIP: no bash or sh");
            return None;
        };
        Some(Session::new(program, std::env::temp_dir()))
    }

    const T: Duration = Duration::from_secs(10);

    #[test]
    fn state_persists_streams_stay_apart_and_output_is_exact() {
        let Some(mut s) = session() else { return };
        let dir = std::env::temp_dir().join(format!("dp-shell-中文 {}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = s.cd(dir.to_str().unwrap(), T).unwrap();
        assert_eq!(out.exit_code, Some(0), "{out:?}");
        assert_eq!(s.cwd(), dir.to_str().unwrap());
        let out = s.exec("printf '%s' \"$PWD\"", T).unwrap();
        assert_eq!(
            out.stdout.text,
            dir.to_str().unwrap(),
            "no trailing newline added"
        );
        let out = s.exec("echo out; echo err >&2; (exit 3)", T).unwrap();
        assert_eq!(
            (
                out.stdout.text.as_str(),
                out.stderr.text.as_str(),
                out.exit_code
            ),
            ("out\n", "err\n", Some(3))
        );
        // Output cannot fake the end marker.
        let out = s
            .exec("printf '\\036DP-END fake 0\\036'; echo after", T)
            .unwrap();
        assert!(out.stdout.text.ends_with("after\n"), "{out:?}");
        // stdin is end-of-file.
        let out = s.exec("read x; echo \"got:$x\"; cat", T).unwrap();
        assert_eq!(out.stdout.text, "got:\n");
        // Variables, functions and sourced activation stay.
        std::fs::write(
            dir.join("activate"),
            "export VENV_ON=yes\nvenv_fn() { echo inside; }\n",
        )
        .unwrap();
        s.exec("source ./activate; PLAIN=1", T).unwrap();
        let out = s.exec("echo \"$VENV_ON $PLAIN\"; venv_fn", T).unwrap();
        assert_eq!(out.stdout.text, "yes 1\ninside\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    #[cfg(unix)]
    fn a_program_that_is_no_working_shell_is_said_to_be_one() {
        // What Wine's powershell.exe stub does: prints something and exits at once.
        let program = ShellProgram {
            dialect: Dialect::PowerShell,
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".into(), "echo 'not implemented' >&2; exit 3".into()],
        };
        let mut s = Session::new(program, std::env::temp_dir());
        let err = s.exec("Get-Date", T).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ShellError::Start(_)), "{text}");
        assert!(
            text.contains("exited as soon as it started (exit code 3)")
                && text.contains("not implemented")
                && text.contains("not a working PowerShell"),
            "{text}"
        );
    }

    #[test]
    fn a_timeout_restarts_and_replays_and_exit_is_survived() {
        let Some(mut s) = session() else { return };
        let dir = std::env::temp_dir();
        s.cd(dir.to_str().unwrap(), T).unwrap();
        s.set_env("DP_KEEP", "kept value 'quoted'", T).unwrap();
        s.exec("DP_LOST=1; dp_fn() { :; }", T).unwrap();
        let started = Instant::now();
        let err = s
            .exec("echo before; sleep 100", Duration::from_secs(1))
            .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        let ShellError::Timeout { output } = err else {
            panic!("{err}")
        };
        assert_eq!(output.stdout.text, "before\n");
        let note = output.restart_note.unwrap();
        assert!(note.contains("DP_KEEP") && note.contains("lost"), "{note}");
        let out = s
            .exec(
                "echo \"$PWD|$DP_KEEP|${DP_LOST-unset}\"; type dp_fn >/dev/null 2>&1 || echo nofn",
                T,
            )
            .unwrap();
        assert_eq!(
            out.stdout.text,
            format!("{}|kept value 'quoted'|unset\nnofn\n", dir.display())
        );
        let out = s.exec("exit 7", T).unwrap();
        assert_eq!(out.exit_code, Some(7));
        assert!(out.restart_note.unwrap().contains("ended the shell"));
        assert_eq!(
            s.exec("echo \"$DP_KEEP\"", T).unwrap().stdout.text,
            "kept value 'quoted'\n"
        );
    }

    /// A command its caller takes back is killed at once with what it started (its file never
    /// appears) and the shell comes back with its state.
    #[test]
    fn a_stopped_command_is_killed_and_the_shell_comes_back() {
        let Some(mut s) = session() else { return };
        s.set_env("DP_KEEP", "kept", T).unwrap();
        let file = std::env::temp_dir().join(format!("dp-stopped-{}", std::process::id()));
        let _ = std::fs::remove_file(&file);
        let started = Instant::now();
        let stop_at = started + Duration::from_millis(300);
        let err = s
            .exec_until(
                &format!("echo before; sleep 2; echo late > '{}'", file.display()),
                Duration::from_secs(30),
                &|| Instant::now() >= stop_at,
            )
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
        let ShellError::Stopped { output } = err else {
            panic!("{err}")
        };
        assert_eq!(output.stdout.text, "before\n");
        assert!(output.restart_note.unwrap().contains("DP_KEEP"));
        std::thread::sleep(Duration::from_millis(2500));
        assert!(!file.exists(), "the stopped command went on");
        assert_eq!(
            s.exec("echo \"$DP_KEEP\"", T).unwrap().stdout.text,
            "kept\n"
        );
    }

    #[test]
    fn the_sh_fallback_speaks_the_same_protocol() {
        let sh = std::path::Path::new("/bin/sh");
        if !sh.is_file() {
            return;
        }
        let program = ShellProgram {
            dialect: Dialect::Posix,
            program: sh.to_path_buf(),
            args: vec!["-s".into()],
        };
        let mut s = Session::new(program, std::env::temp_dir());
        let out = s.exec("printf '%s|' 中文; echo err >&2; false", T).unwrap();
        assert_eq!(
            (
                out.stdout.text.as_str(),
                out.stderr.text.as_str(),
                out.exit_code
            ),
            ("中文|", "err\n", Some(1))
        );
        s.set_env("DP_SH", "a b", T).unwrap();
        assert_eq!(s.get_env("DP_SH", T).unwrap().as_deref(), Some("a b"));
    }

    #[test]
    fn huge_and_binary_output_is_cut_not_crashed() {
        let Some(mut s) = session() else { return };
        let out = s
            .exec("head -c 10000000 /dev/zero | tr '\\0' a; echo; echo end", T)
            .unwrap();
        assert_eq!(out.stdout.total_bytes, 10_000_000 + 5);
        assert!(out.stdout.cut_bytes > 9_000_000);
        assert!(out.stdout.text.len() < HEAD_BYTES + TAIL_BYTES + 100);
        assert!(out.stdout.text.starts_with("aaaa") && out.stdout.text.ends_with("a\nend\n"));
        let out = s.exec("printf '\\377\\376\\000bin'", T).unwrap();
        assert!(out.stdout.binary);
        assert_eq!(out.stdout.total_bytes, 6);
    }
}
