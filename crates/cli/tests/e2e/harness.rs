//! Shared plumbing: the desktop, servers with teed stdout, app processes, polling.

use std::future::Future;
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use deskpilot_x11::{VirtualDisplay, VirtualDisplayOptions};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

/// The shared virtual desktop, or `None` (with a printed SKIP) when it cannot start here.
pub fn desktop() -> Option<&'static VirtualDisplay> {
    static DESKTOP: OnceLock<Option<VirtualDisplay>> = OnceLock::new();
    DESKTOP
        .get_or_init(
            || match VirtualDisplay::start(VirtualDisplayOptions::default()) {
                Ok(vd) => Some(vd),
                Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                    panic!("CI=true and the virtual desktop did not start: {e}")
                }
                Err(e) => {
                    skip(&format!("no virtual desktop ({e})"));
                    None
                }
            },
        )
        .as_ref()
}

/// A desktop of the calling test's own, torn down when dropped: for tests whose input could
/// leave the shared window manager in a state the next test would trip over.
pub fn private_desktop() -> Option<VirtualDisplay> {
    desktop()?;
    Some(
        VirtualDisplay::start(VirtualDisplayOptions {
            accessibility: false,
            ..Default::default()
        })
        .expect("a second virtual desktop"),
    )
}

/// The heads of [`two_heads`]'s desktop, left to right.
pub const HEADS: [(u32, u32); 2] = [(1280, 800), (1024, 768)];

/// A shared two-head Xinerama desktop (Xephyr nested in Xvfb, [`HEADS`] side by side: root
/// 2304x800, RandR reporting only the first head), or `None` (with a printed SKIP) when it
/// cannot start here. Under `CI=true` a desktop that cannot start fails the test.
pub fn two_heads() -> Option<&'static VirtualDisplay> {
    static DESKTOP: OnceLock<Option<VirtualDisplay>> = OnceLock::new();
    DESKTOP
        .get_or_init(|| {
            let options = VirtualDisplayOptions {
                heads: deskpilot_x11::Heads::Xinerama(HEADS.to_vec()),
                // Two X servers start before the rest: give the loaded machine time.
                step_timeout: Duration::from_secs(30),
                ..Default::default()
            };
            match VirtualDisplay::start(options) {
                Ok(vd) => Some(vd),
                Err(e) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                    panic!("CI=true and the two-head desktop did not start: {e}")
                }
                Err(e) => {
                    skip(&format!("no two-head desktop ({e})"));
                    None
                }
            }
        })
        .as_ref()
}

#[allow(clippy::print_stderr)]
fn skip(why: &str) {
    eprintln!("SKIP desktop end-to-end tests: {why}");
}

/// Tests that change the desktop run one at a time, so windows never cover each other by surprise.
pub async fn exclusive() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

/// A running `deskpilot serve` and what it printed on stdout.
pub struct Server<H: ClientHandler = ()> {
    pub client: RunningService<RoleClient, H>,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
    child: tokio::process::Child,
}

/// Starts `deskpilot serve` with `args`, on `desktop` when given (otherwise with no DISPLAY).
pub async fn serve(
    desktop: Option<&VirtualDisplay>,
    args: &[&str],
    env: &[(&str, &str)],
) -> Server {
    serve_with(desktop, args, env, ()).await
}

/// [`serve`] with a client that answers the server's requests through `handler`.
pub async fn serve_with<H: ClientHandler>(
    desktop: Option<&VirtualDisplay>,
    args: &[&str],
    env: &[(&str, &str)],
    handler: H,
) -> Server<H> {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_deskpilot"));
    cmd.arg("serve").args(args);
    // A developer's own configuration must not change what the tests see.
    cmd.env_remove("DISPLAY")
        .env_remove("DESKPILOT_TOOLS")
        .env_remove("DESKPILOT_TOOLS_EXCLUDE")
        .env_remove("DESKTOPOS_TOOLS")
        .env_remove("DESKTOPOS_TOOLS_EXCLUDE")
        .env_remove("DESKPILOT_CONFIG")
        .env_remove("DESKPILOT_SCREENSHOT_MAX_WIDTH")
        .env_remove("DESKPILOT_SCREENSHOT_MAX_PIXELS")
        .env_remove("DESKPILOT_SCREENSHOT_FORMAT")
        .env_remove("DESKPILOT_SCREENSHOT_JPEG_QUALITY")
        .env_remove("DESKPILOT_MEMORY")
        .env("XDG_CONFIG_HOME", "/nonexistent/deskpilot-tests");
    if let Some(d) = desktop {
        for (k, v) in d.env() {
            cmd.env(k, v);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    connect(cmd, handler).await
}

/// A new, empty directory under the system temp dir for one server's memory.
pub fn fresh_memory_dir() -> std::path::PathBuf {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("deskpilot-e2e-memory-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Starts `cmd` (a `deskpilot serve`, however it is run) and connects an MCP client to it,
/// teeing its stdout.
pub async fn connect<H: ClientHandler>(mut cmd: tokio::process::Command, handler: H) -> Server<H> {
    // Each server remembers into a directory of its own unless the test names one, so no test
    // recalls another's windows (and none writes into the developer's state directory).
    if !cmd
        .as_std()
        .get_envs()
        .any(|(k, _)| k == "DESKPILOT_MEMORY_DIR")
    {
        cmd.env("DESKPILOT_MEMORY_DIR", fresh_memory_dir());
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().expect("spawn deskpilot serve");
    // Tee stderr too: kept for tests that read the server's diagnostics, passed on to ours.
    let stderr = Arc::new(Mutex::new(Vec::new()));
    let errors = stderr.clone();
    let child_err = child.stderr.take().unwrap();
    tokio::spawn(async move {
        let mut lines = BufReader::new(child_err).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            pass_on(&line);
            errors.lock().unwrap().push(line);
        }
    });
    let child_out = child.stdout.take().unwrap();
    let child_in = child.stdin.take().unwrap();
    // Tee stdout: record every line, forward it to the MCP client.
    let (mut tee_in, tee_out) = tokio::io::duplex(1 << 22);
    let stdout = Arc::new(Mutex::new(Vec::new()));
    let record = stdout.clone();
    tokio::spawn(async move {
        let mut lines = BufReader::new(child_out).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            record.lock().unwrap().push(line.clone());
            if tee_in.write_all(line.as_bytes()).await.is_err()
                || tee_in.write_all(b"\n").await.is_err()
            {
                break;
            }
        }
    });
    let client = handler
        .serve((tee_out, child_in))
        .await
        .expect("MCP handshake with deskpilot");
    Server {
        client,
        stdout,
        stderr,
        child,
    }
}

#[allow(clippy::print_stderr)]
fn pass_on(line: &str) {
    eprintln!("{line}");
}

impl<H: ClientHandler> Server<H> {
    /// Every JSON-RPC line the server wrote on stdout so far.
    pub fn stdout_lines(&self) -> Vec<String> {
        self.stdout.lock().unwrap().clone()
    }

    /// What the server wrote on stderr so far, line by line.
    pub fn stderr(&self) -> Vec<String> {
        self.stderr.lock().unwrap().clone()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the server is running")
    }

    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let Value::Object(map) = args else {
            panic!("arguments must be an object")
        };
        self.client
            .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map))
            .await
            .unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"))
    }

    /// Ends the session and asserts stdout carried only JSON-RPC 2.0 messages.
    pub async fn finish(mut self) {
        let _ = self.client.cancel().await;
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        let _ = self.child.start_kill();
        let lines = self.stdout.lock().unwrap().clone();
        assert!(!lines.is_empty(), "the server wrote nothing at all");
        for line in &lines {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|_| panic!("stdout line is not JSON: {line:?}"));
            assert_eq!(v["jsonrpc"], "2.0", "stdout line is not JSON-RPC: {line}");
        }
    }
}

/// The structured content of a successful result.
pub fn ok(result: &CallToolResult) -> &Value {
    assert_ne!(
        result.is_error,
        Some(true),
        "tool failed: {:?}",
        text(result)
    );
    result
        .structured_content
        .as_ref()
        .expect("structuredContent")
}

/// The error code of a failed result (and checks the text carries code and hint).
pub fn error_code(result: &CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected an error, got {:?}",
        text(result)
    );
    let s = result
        .structured_content
        .as_ref()
        .expect("structured error");
    let code = s["error"]["code"].as_str().expect("error.code").to_string();
    let t = text(result);
    assert!(
        t.starts_with(&code) && t.contains("Hint: "),
        "error text lacks code or hint: {t}"
    );
    code
}

/// All text content joined.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Polls `probe` until it returns `Some`, or panics with `what` after `timeout`.
pub async fn wait_for<T, F, Fut>(timeout: Duration, what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// An app on the desktop, killed when dropped.
pub struct App(pub std::process::Child);

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `cmd` (stdout piped) and collects every line it prints, for fixtures that report
/// what happened to them.
pub fn spawn_reporting(
    mut cmd: std::process::Command,
) -> (std::process::Child, Arc<Mutex<Vec<String>>>) {
    use std::io::BufRead as _;
    cmd.stdout(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("start {cmd:?}: {e}"));
    let lines: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = lines.clone();
    let out = child.stdout.take().expect("piped stdout");
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            sink.lock().unwrap().push(line);
        }
    });
    (child, lines)
}

/// Launches a program on `desktop`.
pub fn launch(desktop: &VirtualDisplay, program: &str, args: &[&str]) -> App {
    let mut cmd = std::process::Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    desktop.configure(&mut cmd);
    App(cmd
        .spawn()
        .unwrap_or_else(|e| panic!("launch {program}: {e}")))
}

/// Waits until `list_windows { filter }` lists a window titled exactly `title`; returns it.
pub async fn listed<H: ClientHandler>(server: &Server<H>, filter: &str, title: &str) -> Value {
    wait_for(
        Duration::from_secs(30),
        &format!("window \"{title}\" in list_windows"),
        || async {
            let r = server
                .call("list_windows", serde_json::json!({ "filter": filter }))
                .await;
            find_window(ok(&r), title).cloned()
        },
    )
    .await
}

/// Finds one window in a list_windows result by exact title.
pub fn find_window<'a>(listing: &'a Value, title: &str) -> Option<&'a Value> {
    listing["windows"]
        .as_array()?
        .iter()
        .find(|w| w["title"] == title)
}

/// Decodes a result's image: (width, height, RGB bytes).
pub fn image(result: &CallToolResult) -> (u32, u32, Vec<u8>) {
    use base64::Engine as _;
    let img = result
        .content
        .iter()
        .find_map(|c| c.as_image())
        .expect("an image block");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&img.data)
        .expect("base64");
    match img.mime_type.as_str() {
        "image/png" => {
            let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
                .read_info()
                .unwrap();
            let mut buf = vec![0; reader.output_buffer_size().unwrap()];
            let info = reader.next_frame(&mut buf).unwrap();
            assert_eq!(info.color_type, png::ColorType::Rgb);
            buf.truncate(info.buffer_size());
            (info.width, info.height, buf)
        }
        "image/jpeg" => {
            let mut d = jpeg_decoder::Decoder::new(std::io::Cursor::new(bytes));
            let px = d.decode().unwrap();
            let info = d.info().unwrap();
            (info.width as u32, info.height as u32, px)
        }
        other => panic!("unexpected mime type {other}"),
    }
}

/// Asks the system's own AT-SPI stack (python3-gi, not deskpilot) about app `pid`; see
/// `tests/helpers/atspi_probe.py`. Returns its JSON answer, `None` while the app is not
/// (yet) accessible or the node is not found.
pub fn probe(desktop: &VirtualDisplay, args: &[&str]) -> Option<Value> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/helpers/atspi_probe.py"
    );
    let mut cmd = std::process::Command::new("/usr/bin/python3");
    cmd.arg(script).args(args).stdin(Stdio::null());
    desktop.configure(&mut cmd);
    let out = cmd.output().expect("run the AT-SPI probe (python3-gi)");
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    if v.get("error").is_some() {
        None
    } else {
        Some(v)
    }
}

/// Waits for the probe to answer.
pub async fn probe_until(desktop: &VirtualDisplay, args: &[&str]) -> Value {
    wait_for(
        Duration::from_secs(30),
        &format!("AT-SPI probe {args:?}"),
        || async { probe(desktop, args) },
    )
    .await
}

/// The CLIPBOARD selection as `xclip` reads it.
pub fn xclip_out(desktop: &VirtualDisplay) -> String {
    let mut cmd = std::process::Command::new("xclip");
    cmd.args(["-o", "-selection", "clipboard"]);
    desktop.configure(&mut cmd);
    let out = cmd.output().expect("run xclip (apt-get install xclip)");
    String::from_utf8(out.stdout).expect("UTF-8 from xclip")
}

/// Makes `xclip` own the CLIPBOARD with `text` (it forks and serves until replaced).
pub fn xclip_in(desktop: &VirtualDisplay, text: &str) {
    use std::io::Write as _;
    let mut cmd = std::process::Command::new("xclip");
    cmd.args(["-i", "-selection", "clipboard"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    desktop.configure(&mut cmd);
    let mut child = cmd.spawn().expect("run xclip");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success(), "xclip -i failed");
    // xclip's parent exits before its background child has flushed the ownership request:
    // wait until the selection really answers with `text`.
    let deadline = Instant::now() + Duration::from_secs(10);
    while xclip_out(desktop) != text {
        assert!(
            Instant::now() < deadline,
            "xclip did not take the clipboard within 10 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The first window of process `pid` in list_windows, polled.
pub async fn window_of<H: ClientHandler>(server: &Server<H>, pid: u32) -> Value {
    wait_for(
        Duration::from_secs(30),
        &format!("a window of pid {pid}"),
        || async {
            let r = server.call("list_windows", serde_json::json!({})).await;
            ok(&r)["windows"]
                .as_array()?
                .iter()
                .find(|w| w["pid"] == pid)
                .cloned()
        },
    )
    .await
}

/// Kills a process deskpilot launched (it is not our child) when dropped.
pub struct Launched(pub u32);

impl Drop for Launched {
    fn drop(&mut self) {
        // SAFETY: plain signal delivery to a pid; at worst the pid is gone (ESRCH).
        unsafe {
            libc::kill(self.0 as i32, libc::SIGKILL);
        }
    }
}

/// The element with this role and name in a `get_window_state` (or `find_elements`) result.
pub fn element<'a>(state: &'a Value, role: &str, name: &str) -> &'a Value {
    state["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["role"] == role && e["name"] == name)
        .unwrap_or_else(|| panic!("no {role} \"{name}\" in {:#}", state["elements"]))
}
