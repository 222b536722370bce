//! Finding, launching and attaching to a Chromium-family browser. Never downloads one: it takes
//! an installed Chromium / Chrome / Edge, or a browser (or Electron app) already running with
//! `--remote-debugging-port`.
//!
//! A launched browser gets a throw-away profile directory and is spawned from a keeper thread
//! that lives as long as the process, with `PR_SET_PDEATHSIG` on Linux, so it dies with
//! deskpilot even on SIGKILL; profile directories left by a deskpilot that died are removed
//! by the next launch.
//!
//! What differs by platform (where browsers are installed, how a browser is tied to
//! deskpilot's life and killed whole, what `/proc` tells) lives in `unix.rs` and `windows.rs`,
//! one of which is this module's `platform`; this file calls only what they both define.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::Error;

#[cfg_attr(unix, path = "unix.rs")]
#[cfg_attr(windows, path = "windows.rs")]
mod platform;

pub use platform::debug_port_of;

/// Where installed browsers live, in the order they are tried.
fn candidates() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("DESKPILOT_BROWSER") {
        out.push(PathBuf::from(p));
    }
    out.extend(platform::installed());
    out
}

/// The installed browser deskpilot would launch, or why there is none.
pub fn find_browser() -> Result<PathBuf, Error> {
    candidates()
        .into_iter()
        .find(|p| p.is_file())
        .ok_or_else(|| Error::NoBrowser {
            hint: platform::NO_BROWSER.into(),
        })
}

/// A browser deskpilot started: its process and profile directory, both gone when dropped.
#[derive(Debug)]
pub struct Launched {
    pub child: Child,
    pub profile: PathBuf,
    /// The DevTools endpoint it announced.
    pub ws_url: String,
    /// What ends the browser whole, and with deskpilot.
    hold: platform::Hold,
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
        self.hold.kill(&self.child);
        let _ = self.child.kill();
        let _ = self.child.wait();
        let deadline = Instant::now() + Duration::from_secs(5);
        while platform::group_alive(self.child.id()) && Instant::now() < deadline {
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
        if platform::ended(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
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
                    platform::own(&mut cmd);
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
    platform::sandbox(&mut cmd);
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
    let hold = platform::hold(&child);
    let launched = |ws_url| Launched {
        child,
        profile: profile.clone(),
        ws_url,
        hold,
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
