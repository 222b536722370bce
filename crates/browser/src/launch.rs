//! Finding, launching and attaching to a Chromium-family browser. Never downloads one: it takes
//! an installed Chromium / Chrome / Edge, or a browser (or Electron app) already running with
//! `--remote-debugging-port`.
//!
//! A launched browser gets a throw-away profile directory and is spawned from a keeper thread
//! that lives as long as the process, with `PR_SET_PDEATHSIG` on Linux, so it dies with
//! deskpilot even on SIGKILL; profile directories left by a deskpilot that died are removed
//! by the next launch.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::Error;

/// Where installed browsers live, in the order they are tried.
fn candidates() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("DESKPILOT_BROWSER") {
        out.push(PathBuf::from(p));
    }
    if cfg!(windows) {
        for base in ["ProgramFiles", "ProgramFiles(x86)", "LOCALAPPDATA"] {
            if let Some(dir) = std::env::var_os(base) {
                let dir = PathBuf::from(dir);
                out.push(dir.join("Microsoft/Edge/Application/msedge.exe"));
                out.push(dir.join("Google/Chrome/Application/chrome.exe"));
                out.push(dir.join("Chromium/Application/chrome.exe"));
            }
        }
    } else {
        for name in [
            "chromium",
            "chromium-browser",
            "google-chrome",
            "google-chrome-stable",
            "microsoft-edge",
        ] {
            if let Some(path) = std::env::var_os("PATH") {
                for dir in std::env::split_paths(&path) {
                    out.push(dir.join(name));
                }
            }
        }
    }
    out
}

/// The installed browser deskpilot would launch, or why there is none.
pub fn find_browser() -> Result<PathBuf, Error> {
    candidates()
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| Error::NoBrowser {
            hint: if cfg!(windows) {
                "install Microsoft Edge or Google Chrome, or set DESKPILOT_BROWSER to a Chromium-family browser".into()
            } else {
                "install Debian's chromium (`apt-get install -y chromium`), or set DESKPILOT_BROWSER".into()
            },
        })
}

/// A browser deskpilot started: its process and profile directory, both gone when dropped.
#[derive(Debug)]
pub struct Launched {
    pub child: Child,
    pub profile: PathBuf,
    /// The DevTools endpoint it announced.
    pub ws_url: String,
    /// Windows: the job that ends the browser with deskpilot.
    #[cfg(windows)]
    job: Option<crate::job::Job>,
}

impl Launched {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Launched {
    /// Kills the browser's whole process group (its zygote and renderers outlive a killed main
    /// process for a moment and keep writing into the profile), then removes the profile once
    /// nothing writes there any more — polled, with a deadline.
    fn drop(&mut self) {
        #[cfg(windows)]
        if let Some(job) = &self.job {
            job.kill();
        }
        #[cfg(unix)]
        // SAFETY: killpg only sends a signal; the group id is the browser's own pid
        // (process_group(0) at spawn).
        unsafe {
            libc::killpg(self.child.id() as libc::pid_t, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let deadline = Instant::now() + Duration::from_secs(5);
        while group_alive(self.child.id()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        while std::fs::remove_dir_all(&self.profile).is_err()
            && self.profile.exists()
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// What to launch.
#[derive(Debug, Clone)]
pub struct LaunchOptions {
    pub url: String,
    pub headless: bool,
    /// The browser to start (default: the installed Chromium, see [`find_browser`]).
    pub program: Option<PathBuf>,
    /// The DevTools port (default 0: one the system picks).
    pub port: u16,
    /// Environment for the browser (the desktop's DISPLAY and the like).
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
}

/// The names of the browser profiles deskpilot makes in the temporary directory: launched
/// browsers' and the context picker's control window's, each followed by `<pid>-<nanos>`.
const PROFILE_PREFIXES: [&str; 2] = ["deskpilot-browser-", "deskpilot-picker-"];

/// A fresh, empty browser profile directory for `use_` (`"browser"` or `"picker"`), named after
/// this process so that a later deskpilot removes it once this one is gone (a browser's profile
/// grows to hundreds of MB of metrics and caches).
pub fn fresh_profile(use_: &str) -> std::io::Result<PathBuf> {
    clean_stale_profiles();
    let profile = std::env::temp_dir().join(format!(
        "deskpilot-{use_}-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&profile)?;
    Ok(profile)
}

/// Removes profile directories whose deskpilot (the pid in the name) no longer runs.
fn clean_stale_profiles() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(rest) = PROFILE_PREFIXES.iter().find_map(|p| name.strip_prefix(p)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if cfg!(target_os = "linux") && !running(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Whether a live (not zombie) process is left in process group `pgid`. Zombies count as gone:
/// where pid 1 does not reap (containers), the browser's orphans stay zombies forever.
fn group_alive(pgid: u32) -> bool {
    if !cfg!(target_os = "linux") {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        std::fs::read_to_string(e.path().join("stat")).is_ok_and(|s| {
            // After the command name: state, ppid, pgrp, …
            let mut rest = s.rsplit_once(')').map_or("", |(_, r)| r).split_whitespace();
            let state = rest.next();
            let pgrp = rest.nth(1).and_then(|g| g.parse::<u32>().ok());
            pgrp == Some(pgid) && !matches!(state, Some("Z" | "X"))
        })
    })
}

/// Whether process `pid` runs (a zombie does not: it is dead, only not yet reaped).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

/// Starts `cmd` tied to deskpilot's life: spawned from a thread that lives as long as the
/// process (so `PR_SET_PDEATHSIG`, which is tied to the spawning thread, fires only when
/// deskpilot itself dies), in a process group of its own (Unix).
pub fn spawn_owned(cmd: Command) -> std::io::Result<Child> {
    use std::sync::OnceLock;
    type Request = (Command, mpsc::SyncSender<std::io::Result<Child>>);
    static KEEPER: OnceLock<std::sync::Mutex<mpsc::Sender<Request>>> = OnceLock::new();
    let keeper = KEEPER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Request>();
        let _ = std::thread::Builder::new()
            .name("browser-keeper".into())
            .spawn(move || {
                for (mut cmd, reply) in rx {
                    #[cfg(unix)]
                    {
                        use std::os::unix::process::CommandExt as _;
                        // Its own group, so the whole browser can be killed at once.
                        cmd.process_group(0);
                    }
                    #[cfg(target_os = "linux")]
                    {
                        use std::os::unix::process::CommandExt as _;
                        // SAFETY: prctl is async-signal-safe; nothing else runs between fork
                        // and exec.
                        unsafe {
                            cmd.pre_exec(|| {
                                if libc::prctl(
                                    libc::PR_SET_PDEATHSIG,
                                    libc::SIGKILL as libc::c_ulong,
                                ) != 0
                                {
                                    return Err(std::io::Error::last_os_error());
                                }
                                Ok(())
                            });
                        }
                    }
                    let _ = reply.send(cmd.spawn());
                }
            });
        std::sync::Mutex::new(tx)
    });
    let (tx, rx) = mpsc::sync_channel(1);
    keeper
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((cmd, tx))
        .map_err(|_| std::io::Error::other("the browser keeper thread is gone"))?;
    rx.recv()
        .map_err(|_| std::io::Error::other("the browser keeper thread is gone"))?
}

/// Launches the installed browser on `options.url` with a fresh profile and waits for its
/// "DevTools listening on ws://…" line.
pub fn launch(options: &LaunchOptions) -> Result<Launched, Error> {
    let program = match &options.program {
        Some(p) if p.is_file() => p.clone(),
        Some(p) => {
            return Err(Error::Launch(format!(
                "no browser at {}; leave browserPath out to use the installed Chromium",
                p.display()
            )));
        }
        None => find_browser()?,
    };
    let profile = fresh_profile("browser").map_err(|e| Error::Launch(e.to_string()))?;
    let mut cmd = Command::new(&program);
    cmd.arg(format!("--remote-debugging-port={}", options.port))
        .arg(format!("--user-data-dir={}", profile.display()))
        .args([
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-sync",
            "--disable-component-update",
            "--password-store=basic",
            "--force-renderer-accessibility",
        ]);
    if options.headless {
        cmd.arg("--headless=new");
    }
    #[cfg(unix)]
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        // Chromium refuses to run its sandbox as root (CI runs as root).
        cmd.arg("--no-sandbox");
    }
    cmd.arg(&options.url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for (k, v) in &options.env {
        cmd.env(k, v);
    }
    let mut child = spawn_owned(cmd)
        .map_err(|e| Error::Launch(format!("cannot start {}: {e}", program.display())))?;
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut sent = false;
        let mut tail = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if !sent && let Some(at) = line.find("ws://") {
                let _ = tx.send(line[at..].trim().to_string());
                sent = true;
            } else if !sent {
                tail.push(line);
                if tail.len() > 20 {
                    tail.remove(0);
                }
            }
        }
        if !sent {
            let _ = tx.send(format!("exited: {}", tail.join("\n")));
        }
    });
    #[cfg(windows)]
    let job = crate::job::Job::hold(&child)
        .inspect_err(|e| {
            tracing::warn!("the browser is not in a job; it may outlive deskpilot: {e}")
        })
        .ok();
    let launched = |ws_url| Launched {
        child,
        profile: profile.clone(),
        ws_url,
        #[cfg(windows)]
        job,
    };
    match rx.recv_timeout(options.timeout) {
        Ok(line) if line.starts_with("ws://") => Ok(launched(line)),
        Ok(tail) => {
            drop(launched(String::new()));
            Err(Error::Launch(format!(
                "{} ended before it listened: {}",
                program.display(),
                tail.trim_start_matches("exited: ")
            )))
        }
        Err(_) => {
            drop(launched(String::new()));
            Err(Error::Timeout {
                what: format!("{} to start", program.display()),
                after: options.timeout,
            })
        }
    }
}

/// The DevTools endpoint of a browser listening on `port` (`/json/version`). Chromium keeps
/// the socket open, so the body is read by its Content-Length.
pub fn endpoint(port: u16, timeout: Duration) -> Result<String, Error> {
    let started = Instant::now();
    let mut stream =
        TcpStream::connect_timeout(&std::net::SocketAddr::from(([127, 0, 0, 1], port)), timeout)
            .map_err(|e| Error::Connect(format!("127.0.0.1:{port}: {e}")))?;
    stream
        .set_read_timeout(Some(timeout))
        .map_err(|e| Error::Connect(e.to_string()))?;
    stream
        .write_all(
            format!(
                "GET /json/version HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
            )
            .as_bytes(),
        )
        .map_err(|e| Error::Connect(e.to_string()))?;
    let mut reader = BufReader::new(stream);
    let mut length = None;
    loop {
        let mut line = String::new();
        let n = reader
            .read_line(&mut line)
            .map_err(|e| Error::Connect(format!("127.0.0.1:{port}: {e}")))?;
        if n == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse::<usize>().ok();
        }
        if started.elapsed() > timeout {
            break;
        }
    }
    let mut body = vec![0; length.unwrap_or(0).min(1 << 20)];
    reader
        .read_exact(&mut body)
        .map_err(|e| Error::Connect(format!("127.0.0.1:{port}: {e}")))?;
    let v: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| Error::Connect(format!("127.0.0.1:{port} is not a DevTools endpoint: {e}")))?;
    v["webSocketDebuggerUrl"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| Error::Connect(format!("127.0.0.1:{port} named no webSocketDebuggerUrl")))
}

/// The `--remote-debugging-port` on a process's command line, when it has one (Linux).
pub fn debug_port_of(pid: u32) -> Option<u16> {
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    // Chromium rewrites its command line into one space-separated string.
    let args: Vec<&str> = cmdline
        .split(|b| *b == 0)
        .filter_map(|a| std::str::from_utf8(a).ok())
        .flat_map(|a| a.split(' '))
        .collect();
    let flag = |name: &str| args.iter().find_map(|a| a.strip_prefix(name));
    let port = flag("--remote-debugging-port=")?;
    match port.parse::<u16>().ok().filter(|p| *p != 0) {
        Some(p) => Some(p),
        // Port 0: the browser picked one and wrote it into its profile directory.
        None => std::fs::read_to_string(
            std::path::Path::new(flag("--user-data-dir=")?).join("DevToolsActivePort"),
        )
        .ok()?
        .lines()
        .next()?
        .trim()
        .parse()
        .ok(),
    }
}
