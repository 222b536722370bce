//! The UI context picker (UI Context Protocol): a person points at a window, a control or a region of
//! the desktop, sees what the agent would receive, and approves it — or not.
//!
//! One [`Picker`] per server: an HTTP endpoint on `127.0.0.1` (port `MOUSE_POINTER_HTTP_PORT`,
//! default 49153) serving the control page and its API, started on first use. The page's URL
//! carries a random per-run token that every request must present; `Host` must be the
//! loopback address and port (DNS rebinding), `Origin`, when sent, the page's own (and is
//! required on POST); bodies are capped; there is no CORS. The control window is the installed
//! Chromium in app mode, opened at a one-time address so the token is on no command line; the
//! token itself goes only to that window and to stderr — never into a tool result — so an agent
//! cannot approve its own pick.
//!
//! The desktop side (what is under a point, the facts of a pick, the files) is
//! `deskpilot_engine::pick`.

mod http;
mod page;
pub mod secret_page;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use deskpilot_engine::pick::{self, Pick, PickContext, PickFacts, PickKind};
use deskpilot_engine::pipeline::ImageFormat;
use deskpilot_engine::{CaptureTarget, ScreenshotRequest, Session};
use deskpilot_types::{Point, Rect};
use serde_json::{Value, json};

pub use http::{MAX_BODY, MAX_HEAD};
use http::{Request, Response};

/// The endpoint's port unless `MOUSE_POINTER_HTTP_PORT` says otherwise (UI Context Protocol).
pub const DEFAULT_PORT: u16 = 49153;
/// The variable that moves it.
pub const PORT_VARIABLE: &str = "MOUSE_POINTER_HTTP_PORT";
/// How long a pick waits when the caller does not say (the UI Context Protocol leaves it to the client).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The range the UI Context Protocol allows for `timeoutMs`.
pub const TIMEOUT_RANGE: (u64, u64) = (1_000, 600_000);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A pick's facts as an agent reads them: JSON and Markdown. The MCP kit renders them; the
/// picker shows them on the page and writes them to the pick's directory.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub json: Value,
    pub markdown: String,
}

/// Renders a pick's facts.
pub type Render = fn(&PickFacts) -> Rendered;

/// A pick the person has not approved yet, as it will be written.
#[derive(Debug)]
struct Preview {
    ctx: PickContext,
    shown: Rendered,
}

/// An approved context: its directory and what is in it.
#[derive(Debug, Clone)]
pub struct Approved {
    pub dir: PathBuf,
    pub kind: PickKind,
    pub json: Value,
    pub markdown: String,
    pub files: Vec<String>,
    pub crop_png: Vec<u8>,
}

/// Why a pick returned nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickError {
    /// The person cancelled on the page.
    Cancelled,
    /// Nobody approved within the time.
    TimedOut(Duration),
    /// The person closed the control window.
    WindowClosed,
    /// A newer `ui_context_pick` took over the page.
    Superseded,
}

impl std::fmt::Display for PickError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PickError::Cancelled => write!(f, "the user cancelled the pick"),
            PickError::TimedOut(t) => {
                write!(f, "nobody picked and approved within {} ms", t.as_millis())
            }
            PickError::WindowClosed => {
                write!(f, "the user closed the control window without approving")
            }
            PickError::Superseded => write!(f, "a newer ui_context_pick took over the page"),
        }
    }
}

#[derive(Debug)]
enum Outcome {
    Approved(Approved),
    Cancelled,
    Superseded,
}

#[derive(Debug, Default)]
struct State {
    /// The pick request the page serves now (0: none).
    waiting: u64,
    next: u64,
    preview: Option<Preview>,
    outcomes: Vec<(u64, Outcome)>,
    latest: Option<Approved>,
    /// The page said it is going away (closed window or tab) while a pick waited.
    page_closed: bool,
    /// The session of the client waiting: the pick's element token and screenshots are its.
    requester: Option<Arc<Session>>,
}

/// How the control window was opened.
#[derive(Debug)]
struct Control {
    /// The app-mode browser, when deskpilot started one (its exit closes the window).
    child: Option<Child>,
    /// Its profile directory, removed once its browser is gone.
    profile: Option<PathBuf>,
    how: String,
}

impl Drop for Control {
    fn drop(&mut self) {
        let ended = self
            .child
            .as_mut()
            .is_none_or(|c| !matches!(c.try_wait(), Ok(None)));
        if ended && let Some(p) = &self.profile {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

/// The picker: endpoint, page state, latest approved context.
#[derive(Debug)]
pub struct Picker {
    session: Arc<Session>,
    render: Render,
    port: u16,
    token: String,
    /// The control window's one-time address (spent once the window loads it).
    open_code: Mutex<Option<String>>,
    state: Mutex<State>,
    changed: Condvar,
    root: PathBuf,
    control: Mutex<Option<Control>>,
    /// The live view: the desktop as it was when the pick started (or when the person asked
    /// for a fresh one), taken with the control window out of the way.
    view: Mutex<Option<View>>,
}

#[derive(Debug, Clone)]
struct View {
    jpeg: Vec<u8>,
    origin: (i32, i32),
    scale: f64,
}

fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    if getrandom::fill(&mut b).is_err() {
        // No system randomness: never a guessable token.
        panic!("the system has no random source for the picker's token");
    }
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Where approved contexts go: `DESKPILOT_UI_CONTEXT_DIR`, else the user's data directory.
pub fn default_root() -> PathBuf {
    if let Some(d) = std::env::var_os("DESKPILOT_UI_CONTEXT_DIR") {
        return PathBuf::from(d);
    }
    let data = if cfg!(windows) {
        std::env::var_os("LOCALAPPDATA").map(PathBuf::from)
    } else {
        std::env::var_os("XDG_DATA_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
    };
    data.unwrap_or_else(std::env::temp_dir)
        .join("deskpilot")
        .join("ui-context")
}

/// The port to serve on: `MOUSE_POINTER_HTTP_PORT`, else [`DEFAULT_PORT`].
pub fn port_from_env() -> Result<u16, String> {
    match std::env::var(PORT_VARIABLE) {
        Ok(v) => v
            .trim()
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("{PORT_VARIABLE}={v:?} is not a port (1–65535)")),
        Err(_) => Ok(DEFAULT_PORT),
    }
}

impl Picker {
    /// Binds `127.0.0.1:port` and serves the page and its API from a thread of its own.
    /// `render` turns a pick's facts into what the agent and the page read.
    pub fn start(
        session: Arc<Session>,
        port: u16,
        root: PathBuf,
        render: Render,
    ) -> Result<Arc<Picker>, String> {
        let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| {
            format!(
                "cannot serve the UI context page on 127.0.0.1:{port}: {e}; another program uses the port — set {PORT_VARIABLE} to a free one"
            )
        })?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        pick::clean_partial(&root);
        let picker = Arc::new(Picker {
            session,
            render,
            port,
            token: random_hex(16),
            open_code: Mutex::new(None),
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
            root,
            control: Mutex::new(None),
            view: Mutex::new(None),
        });
        let server = Arc::downgrade(&picker);
        std::thread::Builder::new()
            .name("ui-context-http".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let Some(p) = server.upgrade() else {
                        return;
                    };
                    let _ = std::thread::Builder::new()
                        .name("ui-context-request".into())
                        .spawn(move || p.serve(stream));
                }
            })
            .map_err(|e| e.to_string())?;
        tracing::info!(port, "UI context endpoint listening on 127.0.0.1");
        Ok(picker)
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The page's address with its token: for the person only (stderr, the control window).
    pub fn page_url(&self) -> String {
        format!("http://127.0.0.1:{}/?t={}", self.port, self.token)
    }

    /// How the control window was opened ("an app window of /usr/bin/chromium", "the default
    /// browser (xdg-open)"), once it was.
    pub fn control_window(&self) -> Option<String> {
        lock(&self.control).as_ref().map(|c| c.how.clone())
    }

    /// Where approved contexts are written.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Opens (or brings back) the control window and waits until the person approves a pick,
    /// cancels, closes the window, or `timeout` passes.
    pub fn pick(&self, requester: Arc<Session>, timeout: Duration) -> Result<Approved, PickError> {
        let id = {
            let mut st = lock(&self.state);
            st.next += 1;
            let id = st.next;
            if st.waiting != 0 {
                let old = st.waiting;
                st.outcomes.push((old, Outcome::Superseded));
            }
            st.waiting = id;
            st.preview = None;
            st.page_closed = false;
            st.requester = Some(requester);
            id
        };
        self.changed.notify_all();
        // The view the person picks in: the desktop as the agent sees it now.
        if let Err(e) = self.refresh_view() {
            tracing::warn!("no live view: {e}");
        }
        let how = self.open_control();
        tracing::info!(
            "UI context pick {id}: waiting for the person ({how}); the page is {}",
            self.page_url()
        );
        let deadline = Instant::now() + timeout;
        let mut st = lock(&self.state);
        loop {
            if let Some(i) = st.outcomes.iter().position(|(o, _)| *o == id) {
                let (_, outcome) = st.outcomes.remove(i);
                return match outcome {
                    Outcome::Approved(a) => Ok(a),
                    Outcome::Cancelled => Err(PickError::Cancelled),
                    Outcome::Superseded => Err(PickError::Superseded),
                };
            }
            if st.page_closed || self.control_closed() {
                st.page_closed = false;
                st.waiting = 0;
                st.preview = None;
                return Err(PickError::WindowClosed);
            }
            let now = Instant::now();
            if now >= deadline {
                if st.waiting == id {
                    st.waiting = 0;
                    st.preview = None;
                }
                return Err(PickError::TimedOut(timeout));
            }
            let slice = (deadline - now).min(Duration::from_millis(200));
            st = self
                .changed
                .wait_timeout(st, slice)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
        }
    }

    /// The latest approved context.
    pub fn current(&self) -> Option<Approved> {
        lock(&self.state).latest.clone()
    }

    /// Forgets the latest approved context (its files stay); whether there was one.
    pub fn clear(&self) -> bool {
        lock(&self.state).latest.take().is_some()
    }

    /// Whether deskpilot's control window was open and is gone now: its browser ended and no
    /// window of it is left.
    fn control_closed(&self) -> bool {
        let mut control = lock(&self.control);
        let Some(child) = control.as_mut().and_then(|c| c.child.as_mut()) else {
            return false;
        };
        let pid = child.id();
        let ended = !matches!(child.try_wait(), Ok(None));
        let closed = ended && !self.has_window(pid);
        if closed {
            *control = None;
        }
        closed
    }

    /// Brings the windows of `pid` to the front.
    fn raise(&self, pid: u32) {
        let windows = self
            .session
            .list_windows(&deskpilot_engine::WindowFilter::default())
            .unwrap_or_default();
        for w in windows.iter().filter(|w| w.pid == Some(pid)) {
            let _ = self.session.window_action(
                &deskpilot_engine::WindowRef::Id(w.id),
                deskpilot_engine::WindowAction::Focus,
            );
        }
    }

    /// Whether process `pid` shows a window on the desktop.
    fn has_window(&self, pid: u32) -> bool {
        self.session
            .list_windows(&deskpilot_engine::WindowFilter::default())
            .is_ok_and(|w| w.iter().any(|w| w.pid == Some(pid)))
    }

    /// The pid of the control window's browser, looked through by hit tests.
    fn control_pid(&self) -> Vec<u32> {
        lock(&self.control)
            .as_ref()
            .and_then(|c| c.child.as_ref())
            .map(|c| vec![c.id()])
            .unwrap_or_default()
    }

    /// Opens the control window unless it is open; says how.
    fn open_control(&self) -> String {
        let mut control = lock(&self.control);
        if let Some(c) = control.as_mut() {
            let window = c.child.as_mut().map(|ch| {
                let pid = ch.id();
                (
                    pid,
                    matches!(ch.try_wait(), Ok(None)) || self.has_window(pid),
                )
            });
            match window {
                // Open: bring it to the front.
                Some((pid, true)) => {
                    self.raise(pid);
                    return c.how.clone();
                }
                Some((_, false)) => {}
                // Opened in the default browser: nothing to raise.
                None => return c.how.clone(),
            }
        }
        let code = random_hex(16);
        *lock(&self.open_code) = Some(code.clone());
        let url = format!("http://127.0.0.1:{}/open/{code}", self.port);
        let opened = match deskpilot_browser::launch::find_browser() {
            Ok(program) => {
                let profile = deskpilot_browser::launch::fresh_profile("picker")
                    .unwrap_or_else(|_| std::env::temp_dir().join("deskpilot-picker"));
                let mut cmd = Command::new(&program);
                cmd.arg(format!("--app={url}"))
                    .arg(format!("--user-data-dir={}", profile.display()))
                    .args([
                        "--no-first-run",
                        "--no-default-browser-check",
                        "--password-store=basic",
                        "--window-size=1200,860",
                    ])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                #[cfg(unix)]
                // SAFETY: geteuid has no preconditions.
                if unsafe { libc::geteuid() } == 0 {
                    cmd.arg("--no-sandbox");
                }
                for (k, v) in self.session.launch_env() {
                    cmd.env(k, v);
                }
                match deskpilot_browser::launch::spawn_owned(cmd) {
                    Ok(child) => Control {
                        child: Some(child),
                        profile: Some(profile),
                        how: format!("an app window of {}", program.display()),
                    },
                    Err(e) => Control {
                        child: None,
                        profile: Some(profile),
                        how: format!("no window: {} did not start ({e})", program.display()),
                    },
                }
            }
            Err(_) => {
                let opener = if cfg!(windows) {
                    "explorer"
                } else {
                    "xdg-open"
                };
                let mut cmd = Command::new(opener);
                cmd.arg(&url)
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null());
                for (k, v) in self.session.launch_env() {
                    cmd.env(k, v);
                }
                match cmd.spawn() {
                    Ok(_) => Control {
                        child: None,
                        profile: None,
                        how: format!("the default browser ({opener})"),
                    },
                    Err(e) => Control {
                        child: None,
                        profile: None,
                        how: format!("no window: {opener} failed ({e}); open the page from stderr"),
                    },
                }
            }
        };
        let how = opened.how.clone();
        *control = Some(opened);
        how
    }

    fn serve(&self, mut stream: TcpStream) {
        let response = match http::read(&mut stream) {
            Ok(req) => self.respond(&req),
            Err(refusal) => refusal,
        };
        if response.status == 403 || response.status == 413 {
            tracing::warn!(
                status = response.status,
                reason = %String::from_utf8_lossy(&response.body).trim(),
                "UI context endpoint refused a request"
            );
        }
        http::write(&mut stream, &response);
    }

    /// Checks a request's origin and token, then answers it.
    fn respond(&self, req: &Request) -> Response {
        let own = [
            format!("127.0.0.1:{}", self.port),
            format!("localhost:{}", self.port),
        ];
        if !req
            .header("host")
            .is_some_and(|h| own.iter().any(|o| o == h))
        {
            return Response::refuse(403, "foreign Host");
        }
        let origin = req.header("origin");
        if let Some(o) = origin
            && !own.iter().any(|h| o == format!("http://{h}"))
        {
            return Response::refuse(403, "foreign Origin");
        }
        // The page's goodbye beacon may come without an Origin; it can only end a pick.
        if req.method == "POST" && origin.is_none() && req.path != "/api/closed" {
            return Response::refuse(403, "a POST needs the page's Origin");
        }
        if req.method == "GET"
            && let Some(code) = req.path.strip_prefix("/open/")
        {
            let mut open = lock(&self.open_code);
            return match open.as_deref() {
                Some(c) if http::same(c, code) => {
                    *open = None;
                    page::html(&self.token)
                }
                _ => Response::refuse(
                    403,
                    "this address was already used; open the page from stderr",
                ),
            };
        }
        let token = req
            .query
            .get("t")
            .map(String::as_str)
            .or_else(|| req.header("x-pick-token"));
        if !token.is_some_and(|t| http::same(t, &self.token)) {
            return Response::refuse(403, "missing or wrong token");
        }
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/") => page::html(&self.token),
            ("GET", "/api/state") => self.state_json(),
            ("GET", "/api/screen") => self.screen(req),
            ("GET", "/api/hover") => self.hover(req),
            ("GET", "/api/crop") => match &lock(&self.state).preview {
                Some(p) => Response::new(200, "image/png", p.ctx.crop_png.clone()),
                None => Response::refuse(409, "nothing picked yet"),
            },
            ("POST", "/api/pick") => self.take_pick(req),
            ("POST", "/api/pick-on-screen") => self.pick_on_screen(req),
            ("POST", "/api/approve") => self.approve(),
            ("POST", "/api/cancel") => self.cancel(),
            ("POST", "/api/closed") => {
                let mut st = lock(&self.state);
                if st.waiting != 0 {
                    st.page_closed = true;
                }
                drop(st);
                self.changed.notify_all();
                Response::json(200, &json!({ "ok": true }))
            }
            (
                _,
                "/" | "/api/state" | "/api/screen" | "/api/hover" | "/api/crop" | "/api/pick"
                | "/api/approve" | "/api/cancel" | "/api/closed",
            ) => Response::refuse(405, "method not allowed"),
            _ => Response::refuse(404, "not found"),
        }
    }

    fn state_json(&self) -> Response {
        let st = lock(&self.state);
        Response::json(
            200,
            &json!({
                "waiting": st.waiting != 0,
                "preview": st.preview.as_ref().map(|p| json!({ "json": p.shown.json, "markdown": p.shown.markdown })),
            }),
        )
    }

    /// Captures the desktop (masked) with the control window out of the way.
    fn refresh_view(&self) -> Result<View, String> {
        let request = ScreenshotRequest {
            target: CaptureTarget::Screen,
            max_width: Some(1600),
            format: Some(ImageFormat::Jpeg { quality: 75 }),
        };
        let shot = self
            .session
            .without_windows_of(&self.control_pid(), || self.session.screenshot(&request))
            .map_err(|e| e.to_string())?;
        let view = View {
            jpeg: shot.image.bytes,
            origin: (shot.view.capture.x, shot.view.capture.y),
            scale: shot.view.scale,
        };
        *lock(&self.view) = Some(view.clone());
        Ok(view)
    }

    /// The live view, with the mapping back to physical pixels; `refresh=1` takes a new one.
    fn screen(&self, req: &Request) -> Response {
        let cached = lock(&self.view).clone();
        let view = match cached {
            Some(v) if req.query.get("refresh").is_none_or(|r| r != "1") => Ok(v),
            _ => self.refresh_view(),
        };
        match view {
            Ok(v) => Response::new(200, "image/jpeg", v.jpeg)
                .with("X-Origin-X", v.origin.0.to_string())
                .with("X-Origin-Y", v.origin.1.to_string())
                .with("X-Scale", format!("{:.6}", v.scale)),
            Err(e) => Response::refuse(503, &format!("cannot capture the screen: {e}")),
        }
    }

    fn hover(&self, req: &Request) -> Response {
        let n = |k: &str| req.query.get(k).and_then(|v| v.parse::<i32>().ok());
        let (Some(x), Some(y)) = (n("x"), n("y")) else {
            return Response::refuse(400, "x and y (physical pixels) are needed");
        };
        match self
            .session
            .pick_hover(Point::new(x, y), &self.control_pid())
        {
            Ok(h) => Response::json(
                200,
                &json!({
                    "label": h.label, "bounds": h.bounds, "source": h.source,
                    "window": h.window.map(|w| w.frame),
                }),
            ),
            Err(e) => Response::refuse(503, &e.to_string()),
        }
    }

    /// Picks on the real screen (the page steps aside meanwhile), then previews it.
    fn pick_on_screen(&self, req: &Request) -> Response {
        if lock(&self.state).waiting == 0 {
            return Response::refuse(409, "no agent is waiting for a pick");
        }
        let Ok(body) = serde_json::from_slice::<Value>(&req.body) else {
            return Response::refuse(400, "the body must be JSON");
        };
        let kind = match body["kind"].as_str() {
            Some("window") => PickKind::Window,
            Some("region") => PickKind::Region,
            _ => PickKind::Control,
        };
        match self
            .session
            .pick_on_screen(kind, &self.control_pid(), Duration::from_secs(120))
        {
            Ok(Some(pick)) => self.preview(pick),
            Ok(None) => {
                Response::refuse(409, "nothing was picked on screen (cancelled or too slow)")
            }
            Err(e) => Response::refuse(503, &e.to_string()),
        }
    }

    fn take_pick(&self, req: &Request) -> Response {
        if lock(&self.state).waiting == 0 {
            return Response::refuse(409, "no agent is waiting for a pick");
        }
        let Ok(body) = serde_json::from_slice::<Value>(&req.body) else {
            return Response::refuse(400, "the body must be JSON");
        };
        let n = |k: &str| body[k].as_f64().map(|v| v.round() as i32);
        let pick = match (body["kind"].as_str(), n("x"), n("y")) {
            (Some("window"), Some(x), Some(y)) => Pick::Window(Point::new(x, y)),
            (Some("control"), Some(x), Some(y)) => Pick::Control(Point::new(x, y)),
            (Some("region"), Some(x), Some(y)) => {
                let (Some(w), Some(h)) = (n("width"), n("height")) else {
                    return Response::refuse(400, "a region needs width and height");
                };
                if w < 2 || h < 2 {
                    return Response::refuse(400, "drag a region at least 2 pixels wide and high");
                }
                Pick::Region(Rect::new(x, y, w as u32, h as u32))
            }
            _ => {
                return Response::refuse(400, "kind (window, control, region), x and y are needed");
            }
        };
        self.preview(pick)
    }

    /// Reads a pick's context and keeps it as the preview the person approves or not.
    fn preview(&self, pick: Pick) -> Response {
        // Read in the waiting client's session, so the control's token works in its tools.
        let session = lock(&self.state)
            .requester
            .clone()
            .unwrap_or_else(|| self.session.clone());
        match session.pick_context(pick, &self.control_pid()) {
            Ok(ctx) => {
                let shown = (self.render)(&ctx.facts);
                let answer = json!({ "json": shown.json, "markdown": shown.markdown });
                let mut st = lock(&self.state);
                if st.waiting == 0 {
                    return Response::refuse(409, "the agent stopped waiting");
                }
                st.preview = Some(Preview { ctx, shown });
                Response::json(200, &answer)
            }
            Err(e) => Response::refuse(400, &e.to_string()),
        }
    }

    fn approve(&self) -> Response {
        let (id, ctx) = {
            let mut st = lock(&self.state);
            match (st.waiting, st.preview.take()) {
                (0, _) => return Response::refuse(409, "no agent is waiting for a pick"),
                (_, None) => return Response::refuse(409, "pick something first"),
                (id, Some(p)) => (id, p),
            }
        };
        let written = serde_json::to_vec_pretty(&ctx.shown.json)
            .map_err(std::io::Error::other)
            .and_then(|json| pick::write_pick(&self.root, &ctx.ctx, &json, &ctx.shown.markdown));
        let dir = match written {
            Ok(d) => d,
            Err(e) => {
                lock(&self.state).preview = Some(ctx);
                return Response::refuse(500, &format!("cannot write the context: {e}"));
            }
        };
        let approved = Approved {
            files: pick::PICK_FILES.iter().map(|f| f.to_string()).collect(),
            dir: dir.clone(),
            kind: ctx.ctx.facts.kind,
            json: ctx.shown.json,
            markdown: ctx.shown.markdown,
            crop_png: ctx.ctx.crop_png,
        };
        {
            let mut st = lock(&self.state);
            st.latest = Some(approved.clone());
            st.outcomes.push((id, Outcome::Approved(approved)));
            if st.waiting == id {
                st.waiting = 0;
            }
        }
        self.changed.notify_all();
        Response::json(200, &json!({ "approved": true, "dir": dir }))
    }

    fn cancel(&self) -> Response {
        {
            let mut st = lock(&self.state);
            if st.waiting == 0 {
                return Response::refuse(409, "no agent is waiting for a pick");
            }
            let id = st.waiting;
            st.waiting = 0;
            st.preview = None;
            st.outcomes.push((id, Outcome::Cancelled));
        }
        self.changed.notify_all();
        Response::json(200, &json!({ "cancelled": true }))
    }
}
