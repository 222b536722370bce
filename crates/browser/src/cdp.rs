//! A thin Chrome DevTools protocol client: one WebSocket to the browser, on a thread of its own
//! running a small tokio runtime, with blocking calls for the engine (whose methods block).
//!
//! Only responses are decoded (by id); events are kept as raw JSON for whoever waits on them,
//! and unknown ones are ignored — so a newer Chromium that changes an event it does not use
//! cannot break it. Sessions are flattened (`Target.attachToTarget { flatten: true }`): every
//! message for a page carries its `sessionId` over the one browser socket.
//!
//! No single response may end the connection. The WebSocket itself reads messages of any size
//! (tokio-tungstenite ends its stream after *any* read error, so a size limit there would kill
//! every later call: a 3,800-link page's accessibility tree is 21 MB, over its 16 MiB frame
//! default). The limit is ours, [`MAX_RESPONSE`], applied once a message is read whole: a larger
//! response, or one that is not JSON, fails its own call ([`Error::TooLarge`],
//! [`Error::Undecodable`]) and the connection goes on.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;

use crate::Error;

/// Events kept for waiters, newest last.
const KEPT_EVENTS: usize = 512;

/// The largest response decoded (256 MiB, Puppeteer's and Playwright's cap for the same
/// socket): its JSON tree would take several times that in memory. A larger one fails its call.
pub const MAX_RESPONSE: usize = 256 << 20;

type Pending = HashMap<u64, mpsc::SyncSender<Result<Value, Error>>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One received event: its method, its session (for page events) and its parameters.
#[derive(Debug, Clone)]
pub struct Event {
    pub method: String,
    pub session: Option<String>,
    pub params: Value,
    pub at: Instant,
}

/// What one page session's network and navigations did, kept as the events arrive (the event
/// ring would overflow on a busy page; these counts never do).
#[derive(Debug, Clone)]
pub struct Activity {
    /// Requests sent and not yet finished or failed.
    pub in_flight: usize,
    /// When a request last started or ended.
    pub last_network: Instant,
    /// Navigations, newest last (at most [`KEPT_NAVIGATIONS`]).
    pub navigations: Vec<Navigation>,
}

/// One navigation of a frame: a new document, or a same-document one (history API, anchor).
#[derive(Debug, Clone)]
pub struct Navigation {
    pub at: Instant,
    pub frame: String,
    /// The frame is known to be a child frame (an `<iframe>`'s document).
    pub child: bool,
    /// A navigation within the document (history API, fragment): same DOM, new URL.
    pub same_document: bool,
    pub url: String,
}

/// Navigations kept per session.
pub const KEPT_NAVIGATIONS: usize = 16;

/// How often a call that may be cut short checks whether it should be.
const STOP_POLL: Duration = Duration::from_millis(25);

/// Console messages and requests kept per session (the oldest go first).
pub const KEPT_LOG: usize = 1000;

/// One console message of a page: `console.*` calls, uncaught exceptions and the browser's
/// own log entries (a failed resource load, a blocked request).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleMessage {
    /// Its place in the session's log: every message and request takes the next number.
    pub seq: u64,
    /// `error`, `warning`, `info`, `log` or `debug`.
    pub level: String,
    pub text: String,
    /// Where it came from: `url:line`, when the browser says.
    pub source: String,
}

/// One request of a page, as its events told it so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub seq: u64,
    /// The browser's request id (for its body).
    pub id: String,
    pub method: String,
    pub url: String,
    /// `Document`, `XHR`, `Fetch`, `Script`, `Image`, …
    pub kind: String,
    pub status: Option<i64>,
    pub mime: String,
    pub request_headers: Value,
    pub response_headers: Value,
    /// The request's body, when it had one the browser kept.
    pub post_data: Option<String>,
    /// Bytes received, once it finished.
    pub size: Option<f64>,
    /// Why it failed (`net::ERR_…`), when it did.
    pub failed: Option<String>,
    pub finished: bool,
}

/// A JavaScript dialog (alert, confirm, prompt, beforeunload) open on a page: the page waits
/// until it is answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dialog {
    pub seq: u64,
    /// `alert`, `confirm`, `prompt` or `beforeunload`.
    pub kind: String,
    pub message: String,
    pub default_prompt: String,
    pub url: String,
}

#[derive(Debug, Default)]
struct Tracker {
    in_flight: std::collections::HashSet<String>,
    last_network: Option<Instant>,
    navigations: Vec<Navigation>,
    seq: u64,
    console: std::collections::VecDeque<ConsoleMessage>,
    requests: std::collections::VecDeque<Request>,
    dialog: Option<Dialog>,
    /// The page's out-of-process frames attached to it: (frame id, their session).
    frames: Vec<(String, String)>,
}

impl Tracker {
    fn next(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    fn request(&mut self, id: &str) -> Option<&mut Request> {
        self.requests.iter_mut().rev().find(|r| r.id == id)
    }
}

/// A console call's arguments as one line: primitives by value, objects by their description.
fn console_text(args: &Value) -> String {
    args.as_array()
        .map(|a| {
            a.iter()
                .map(|arg| match &arg["value"] {
                    Value::String(s) => s.clone(),
                    Value::Null => arg["description"]
                        .as_str()
                        .or(arg["unserializableValue"].as_str())
                        .unwrap_or(arg["type"].as_str().unwrap_or(""))
                        .to_string(),
                    v => v.to_string(),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// The level a console call's type files under.
fn console_level(kind: &str) -> &'static str {
    match kind {
        "error" | "assert" => "error",
        "warning" => "warning",
        "info" => "info",
        "debug" | "verbose" => "debug",
        _ => "log",
    }
}

fn source_of(url: &Value, line: &Value) -> String {
    match (url.as_str().filter(|u| !u.is_empty()), line.as_i64()) {
        (Some(u), Some(l)) => format!("{u}:{}", l + 1),
        (Some(u), None) => u.to_string(),
        _ => String::new(),
    }
}

#[derive(Debug)]
struct Shared {
    pending: Mutex<Pending>,
    events: Mutex<Vec<Event>>,
    closed: Mutex<Option<String>>,
    activity: Mutex<HashMap<String, Tracker>>,
    opened: Option<Instant>,
    /// [`MAX_RESPONSE`] (smaller in tests).
    max_response: usize,
}

impl Default for Shared {
    fn default() -> Shared {
        Shared {
            pending: Mutex::default(),
            events: Mutex::default(),
            closed: Mutex::default(),
            activity: Mutex::default(),
            opened: None,
            max_response: MAX_RESPONSE,
        }
    }
}

/// A connection to one browser's DevTools endpoint.
#[derive(Debug)]
pub struct Connection {
    url: String,
    next: AtomicU64,
    out: tokio::sync::mpsc::UnboundedSender<String>,
    shared: Arc<Shared>,
}

impl Connection {
    /// Connects to `ws_url` (`ws://127.0.0.1:PORT/devtools/browser/…`) within `timeout`.
    pub fn open(ws_url: &str, timeout: Duration) -> Result<Connection, Error> {
        let (out, mut outgoing) = tokio::sync::mpsc::unbounded_channel::<String>();
        let shared = Arc::new(Shared {
            opened: Some(Instant::now()),
            ..Shared::default()
        });
        let (ready_tx, ready) = mpsc::sync_channel::<Result<(), Error>>(1);
        let url = ws_url.to_string();
        let reader = shared.clone();
        std::thread::Builder::new()
            .name("cdp".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = ready_tx.send(Err(Error::Connect(e.to_string())));
                        return;
                    }
                };
                runtime.block_on(async move {
                    // Unlimited here, limited in `dispatch` (see the module's docs).
                    let config = WebSocketConfig::default()
                        .max_message_size(None)
                        .max_frame_size(None);
                    let socket = match tokio_tungstenite::connect_async_with_config(
                        url.as_str(),
                        Some(config),
                        false,
                    )
                    .await
                    {
                        Ok((s, _)) => s,
                        Err(e) => {
                            let _ = ready_tx.send(Err(Error::Connect(format!("{url}: {e}"))));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(()));
                    let (mut write, mut read) = socket.split();
                    let why = loop {
                        tokio::select! {
                            message = outgoing.recv() => match message {
                                Some(text) => {
                                    if let Err(e) = write.send(Message::Text(text.into())).await {
                                        break format!("send failed: {e}");
                                    }
                                }
                                None => {
                                    let _ = write.send(Message::Close(None)).await;
                                    break "closed by deskpilot".to_string();
                                }
                            },
                            frame = read.next() => match frame {
                                Some(Ok(Message::Text(text))) => dispatch(&reader, text.as_str()),
                                Some(Ok(Message::Close(_))) | None => break "the browser closed the connection".to_string(),
                                Some(Ok(_)) => {}
                                Some(Err(e)) => break format!("receive failed: {e}"),
                            },
                        }
                    };
                    *lock(&reader.closed) = Some(why.clone());
                    for (_, waiter) in lock(&reader.pending).drain() {
                        let _ = waiter.send(Err(Error::Closed(why.clone())));
                    }
                });
            })
            .map_err(|e| Error::Connect(e.to_string()))?;
        match ready.recv_timeout(timeout) {
            Ok(Ok(())) => Ok(Connection {
                url: ws_url.to_string(),
                next: AtomicU64::new(1),
                out,
                shared,
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(Error::Timeout {
                what: format!("connecting to {ws_url}"),
                after: timeout,
            }),
        }
    }

    /// The endpoint this connection talks to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Why the connection ended, once it has.
    pub fn closed(&self) -> Option<String> {
        lock(&self.shared.closed).clone()
    }

    /// Sends `method` (on a page's `session`, or to the browser) and waits up to `timeout` for
    /// its result; a protocol error is [`Error::Protocol`].
    pub fn call(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
        timeout: Duration,
    ) -> Result<Value, Error> {
        self.call_unless(method, params, session, timeout, || false)
    }

    /// Input for page `session`: [`Connection::call`], but done (`Ok(Null)`) as soon as a
    /// JavaScript dialog opens on the page: the browser answers the input only once the
    /// dialog is closed, and the dialog is what the agent must see next.
    pub fn input(&self, method: &str, params: Value, session: &str) -> Result<Value, Error> {
        self.call_unless(method, params, Some(session), crate::CALL, || {
            self.dialog(session).is_some()
        })
    }

    fn call_unless(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
        timeout: Duration,
        stop: impl Fn() -> bool,
    ) -> Result<Value, Error> {
        if let Some(why) = self.closed() {
            return Err(Error::Closed(why));
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut message = json!({ "id": id, "method": method, "params": params });
        if let Some(s) = session {
            message["sessionId"] = json!(s);
        }
        let (tx, rx) = mpsc::sync_channel(1);
        lock(&self.shared.pending).insert(id, tx);
        if self.out.send(message.to_string()).is_err() {
            lock(&self.shared.pending).remove(&id);
            return Err(Error::Closed(
                self.closed()
                    .unwrap_or_else(|| "the connection thread ended".into()),
            ));
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left.min(STOP_POLL)) {
                Ok(result) => return result.map_err(|e| named(e, method)),
                Err(mpsc::RecvTimeoutError::Timeout) if !left.is_zero() => {
                    if stop() {
                        lock(&self.shared.pending).remove(&id);
                        return Ok(Value::Null);
                    }
                }
                Err(_) => {
                    lock(&self.shared.pending).remove(&id);
                    return Err(Error::Timeout {
                        what: method.to_string(),
                        after: timeout,
                    });
                }
            }
        }
    }

    /// The network and navigation activity of page `session` (network events count once
    /// `Network.enable` was sent on it).
    pub fn activity(&self, session: &str) -> Activity {
        let opened = self.shared.opened.unwrap_or_else(Instant::now);
        match lock(&self.shared.activity).get(session) {
            Some(t) => Activity {
                in_flight: t.in_flight.len(),
                last_network: t.last_network.unwrap_or(opened),
                navigations: t.navigations.clone(),
            },
            None => Activity {
                in_flight: 0,
                last_network: opened,
                navigations: Vec::new(),
            },
        }
    }

    /// The console messages of page `session` after number `after` (its `Runtime` and `Log`
    /// events count once [`crate::page::enable`] turned them on).
    pub fn console(&self, session: &str, after: u64) -> Vec<ConsoleMessage> {
        lock(&self.shared.activity)
            .get(session)
            .map(|t| {
                t.console
                    .iter()
                    .filter(|m| m.seq > after)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The requests of page `session` after number `after`.
    pub fn requests(&self, session: &str, after: u64) -> Vec<Request> {
        lock(&self.shared.activity)
            .get(session)
            .map(|t| {
                t.requests
                    .iter()
                    .filter(|r| r.seq > after)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The dialog open on page `session`, if one is.
    pub fn dialog(&self, session: &str) -> Option<Dialog> {
        lock(&self.shared.activity)
            .get(session)
            .and_then(|t| t.dialog.clone())
    }

    /// The session of page `session`'s out-of-process frame `frame` (an `<iframe>` of another
    /// site, in a renderer of its own), once the browser attached it.
    pub fn frame_session(&self, session: &str, frame: &str) -> Option<String> {
        lock(&self.shared.activity).get(session).and_then(|t| {
            t.frames
                .iter()
                .find(|(f, _)| f == frame)
                .map(|(_, s)| s.clone())
        })
    }

    /// Every out-of-process frame of page `session` the browser attached: (frame, session).
    pub fn frame_sessions(&self, session: &str) -> Vec<(String, String)> {
        lock(&self.shared.activity)
            .get(session)
            .map(|t| t.frames.clone())
            .unwrap_or_default()
    }

    /// The number the next console message, request or dialog of `session` will exceed.
    pub fn log_mark(&self, session: &str) -> u64 {
        lock(&self.shared.activity)
            .get(session)
            .map_or(0, |t| t.seq)
    }

    /// Events received since `since` (for a `session`, when given) whose method is `method`.
    pub fn events(&self, method: &str, session: Option<&str>, since: Instant) -> Vec<Event> {
        lock(&self.shared.events)
            .iter()
            .filter(|e| e.at >= since && e.method == method)
            .filter(|e| session.is_none() || e.session.as_deref() == session)
            .cloned()
            .collect()
    }
}

/// `e` with the method of the call it failed (the reader knows only the call's id).
fn named(e: Error, method: &str) -> Error {
    let method = method.to_string();
    match e {
        Error::Protocol { message, .. } => Error::Protocol { method, message },
        Error::TooLarge { size, limit, .. } => Error::TooLarge {
            method,
            size,
            limit,
        },
        Error::Undecodable { message, .. } => Error::Undecodable { method, message },
        other => other,
    }
}

/// Counts a page session's network and navigation events; `true` when the event is used up
/// (network chatter is not kept in the event ring).
fn track(shared: &Shared, session: &str, method: &str, params: &Value) -> bool {
    let network = method.starts_with("Network.");
    let logged = matches!(
        method,
        "Runtime.consoleAPICalled" | "Runtime.exceptionThrown" | "Log.entryAdded"
    );
    let navigation = matches!(
        method,
        "Page.frameNavigated"
            | "Page.navigatedWithinDocument"
            | "Page.javascriptDialogOpening"
            | "Page.javascriptDialogClosed"
            | "Target.attachedToTarget"
            | "Target.detachedFromTarget"
    );
    if !network && !navigation && !logged {
        return false;
    }
    let mut all = lock(&shared.activity);
    let t = all.entry(session.to_string()).or_default();
    let request = params["requestId"].as_str().unwrap_or_default();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    match method {
        "Network.requestWillBeSent" => {
            t.in_flight.insert(request.to_string());
            t.last_network = Some(Instant::now());
            let redirected = params["redirectResponse"]["status"].as_i64();
            if let Some(old) = t.request(request).filter(|_| redirected.is_some()) {
                old.status = redirected;
                old.finished = true;
            }
            let seq = t.next();
            let r = &params["request"];
            t.requests.push_back(Request {
                seq,
                id: request.to_string(),
                method: text(&r["method"]),
                url: text(&r["url"]),
                kind: text(&params["type"]),
                status: None,
                mime: String::new(),
                request_headers: r["headers"].clone(),
                response_headers: Value::Null,
                post_data: r["postData"].as_str().map(str::to_string),
                size: None,
                failed: None,
                finished: false,
            });
            if t.requests.len() > KEPT_LOG {
                t.requests.pop_front();
            }
        }
        "Network.responseReceived" => {
            let response = &params["response"];
            if let Some(r) = t.request(request) {
                r.status = response["status"].as_i64();
                r.mime = text(&response["mimeType"]);
                r.response_headers = response["headers"].clone();
            }
        }
        "Network.loadingFinished" | "Network.loadingFailed" => {
            t.in_flight.remove(request);
            t.last_network = Some(Instant::now());
            if let Some(r) = t.request(request) {
                r.finished = true;
                r.size = params["encodedDataLength"].as_f64();
                r.failed = params["errorText"].as_str().map(str::to_string);
            }
        }
        "Runtime.consoleAPICalled" => {
            let seq = t.next();
            let frame = &params["stackTrace"]["callFrames"][0];
            t.console.push_back(ConsoleMessage {
                seq,
                level: console_level(params["type"].as_str().unwrap_or("log")).to_string(),
                text: console_text(&params["args"]),
                source: source_of(&frame["url"], &frame["lineNumber"]),
            });
        }
        "Runtime.exceptionThrown" => {
            let seq = t.next();
            let d = &params["exceptionDetails"];
            let text = thrown(d).unwrap_or("exception").to_string();
            t.console.push_back(ConsoleMessage {
                seq,
                level: "error".into(),
                text,
                source: source_of(&d["url"], &d["lineNumber"]),
            });
        }
        "Log.entryAdded" => {
            let seq = t.next();
            let e = &params["entry"];
            t.console.push_back(ConsoleMessage {
                seq,
                level: match e["level"].as_str() {
                    Some("verbose") => "debug".into(),
                    Some(l) => l.to_string(),
                    None => "info".into(),
                },
                text: text(&e["text"]),
                source: source_of(&e["url"], &e["lineNumber"]),
            });
        }
        "Page.javascriptDialogOpening" => {
            let seq = t.next();
            t.dialog = Some(Dialog {
                seq,
                kind: text(&params["type"]),
                message: text(&params["message"]),
                default_prompt: text(&params["defaultPrompt"]),
                url: text(&params["url"]),
            });
        }
        "Page.javascriptDialogClosed" => t.dialog = None,
        "Target.attachedToTarget" if params["targetInfo"]["type"] == "iframe" => {
            let frame = text(&params["targetInfo"]["targetId"]);
            let child = text(&params["sessionId"]);
            t.frames.retain(|(f, _)| *f != frame);
            t.frames.push((frame, child));
        }
        "Target.detachedFromTarget" => {
            let child = text(&params["sessionId"]);
            t.frames.retain(|(_, s)| *s != child);
        }
        "Page.frameNavigated" => {
            let frame = &params["frame"];
            let child = frame["parentId"].as_str().is_some();
            if !child {
                // A new document: what the old one had in flight no longer counts.
                t.in_flight.clear();
            }
            t.navigations.push(Navigation {
                at: Instant::now(),
                frame: frame["id"].as_str().unwrap_or_default().to_string(),
                child,
                same_document: false,
                url: frame["url"].as_str().unwrap_or_default().to_string(),
            });
        }
        "Page.navigatedWithinDocument" => t.navigations.push(Navigation {
            at: Instant::now(),
            frame: params["frameId"].as_str().unwrap_or_default().to_string(),
            child: false,
            same_document: true,
            url: params["url"].as_str().unwrap_or_default().to_string(),
        }),
        _ => {}
    }
    if t.navigations.len() > KEPT_NAVIGATIONS {
        t.navigations.remove(0);
    }
    if t.console.len() > KEPT_LOG {
        t.console.pop_front();
    }
    network || logged
}

/// The id of a response, read off its start without decoding the rest: Chromium writes
/// `{"id":N,` first.
/// What a script threw, from the protocol's `exceptionDetails`: the exception's description
/// (`TypeError: x is undefined`), else the browser's text (`Uncaught`).
pub(crate) fn thrown(details: &Value) -> Option<&str> {
    details["exception"]["description"]
        .as_str()
        .or_else(|| details["text"].as_str())
}

fn leading_id(text: &str) -> Option<u64> {
    let rest = text.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest
        .strip_prefix("\"id\"")?
        .trim_start()
        .strip_prefix(':')?;
    let rest = rest.trim_start();
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    rest[..digits].parse().ok()
}

/// Fails the call a response too large or not JSON answers (when its id can be read), so only
/// that call fails; the connection goes on.
fn refuse(shared: &Shared, text: &str, why: Error) {
    match leading_id(text).and_then(|id| lock(&shared.pending).remove(&id)) {
        Some(waiter) => {
            let _ = waiter.send(Err(why));
        }
        None => tracing::debug!("DevTools message dropped: {why}"),
    }
}

/// Hands a received frame to its waiter, or keeps it as an event.
fn dispatch(shared: &Shared, text: &str) {
    if text.len() > shared.max_response {
        let why = Error::TooLarge {
            method: String::new(),
            size: text.len(),
            limit: shared.max_response,
        };
        return refuse(shared, text, why);
    }
    let v = match serde_json::from_str::<Value>(text) {
        Ok(v) => v,
        Err(e) => {
            let why = Error::Undecodable {
                method: String::new(),
                message: e.to_string(),
            };
            return refuse(shared, text, why);
        }
    };
    if let Some(id) = v.get("id").and_then(Value::as_u64) {
        let Some(waiter) = lock(&shared.pending).remove(&id) else {
            return; // its caller gave up
        };
        let result = match v.get("error") {
            Some(e) => Err(Error::Protocol {
                method: String::new(),
                message: e["message"].as_str().unwrap_or("error").to_string(),
            }),
            None => Ok(v.get("result").cloned().unwrap_or(Value::Null)),
        };
        let _ = waiter.send(result);
        return;
    }
    if let Some(method) = v.get("method").and_then(Value::as_str) {
        let session = v.get("sessionId").and_then(Value::as_str);
        if let Some(session) = session
            && track(shared, session, method, &v["params"])
        {
            return;
        }
        let mut events = lock(&shared.events);
        if events.len() == KEPT_EVENTS {
            events.remove(0);
        }
        events.push(Event {
            method: method.to_string(),
            session: session.map(str::to_string),
            params: v.get("params").cloned().unwrap_or(Value::Null),
            at: Instant::now(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(shared: &Shared, id: u64) -> mpsc::Receiver<Result<Value, Error>> {
        let (tx, rx) = mpsc::sync_channel(1);
        lock(&shared.pending).insert(id, tx);
        rx
    }

    #[test]
    fn reads_the_id_off_the_start_of_a_response() {
        assert_eq!(leading_id(r#"{"id":42,"result":{}}"#), Some(42));
        assert_eq!(leading_id(r#" { "id" : 7 , "result""#), Some(7));
        assert_eq!(leading_id(r#"{"method":"X","params":{"id":3}}"#), None);
        assert_eq!(leading_id(r#"{"id":"x"}"#), None);
    }

    // A 21 MB accessibility tree once ended the connection: now only a response over the limit
    // fails, and only its own call.
    #[test]
    fn a_response_over_the_limit_fails_its_call_and_the_next_one_is_answered() {
        let shared = Shared {
            max_response: 64,
            ..Shared::default()
        };
        let big = waiting(&shared, 1);
        let next = waiting(&shared, 2);
        let text = format!(r#"{{"id":1,"result":{{"nodes":"{}"}}}}"#, "x".repeat(100));
        dispatch(&shared, &text);
        match big.try_recv().expect("answered") {
            Err(Error::TooLarge { size, limit, .. }) => {
                assert_eq!((size, limit), (text.len(), 64));
            }
            other => panic!("{other:?}"),
        }
        dispatch(&shared, r#"{"id":2,"result":{"ok":true}}"#);
        assert_eq!(next.try_recv().expect("answered").unwrap()["ok"], true);
        let e = named(
            Error::TooLarge {
                method: String::new(),
                size: 100,
                limit: 64,
            },
            "Accessibility.getFullAXTree",
        );
        assert!(
            e.to_string().starts_with("Accessibility.getFullAXTree: "),
            "{e}"
        );
    }

    #[test]
    fn console_requests_and_dialogs_are_kept_per_page_in_order() {
        let shared = Shared::default();
        let event = |method: &str, params: &str| {
            dispatch(
                &shared,
                &format!(r#"{{"method":"{method}","sessionId":"S","params":{params}}}"#),
            );
        };
        event(
            "Runtime.consoleAPICalled",
            r#"{"type":"warning","args":[{"type":"string","value":"careful"},{"type":"number","value":3},{"type":"object","description":"Object"}],"stackTrace":{"callFrames":[{"url":"http://x/app.js","lineNumber":9}]}}"#,
        );
        event(
            "Network.requestWillBeSent",
            r#"{"requestId":"R1","type":"Fetch","request":{"method":"POST","url":"http://x/api","headers":{"a":"b"},"postData":"{\"q\":1}"}}"#,
        );
        event(
            "Network.responseReceived",
            r#"{"requestId":"R1","response":{"status":201,"mimeType":"application/json","headers":{}}}"#,
        );
        event(
            "Network.loadingFinished",
            r#"{"requestId":"R1","encodedDataLength":120}"#,
        );
        event(
            "Runtime.exceptionThrown",
            r#"{"exceptionDetails":{"text":"Uncaught","exception":{"description":"TypeError: x is undefined"}}}"#,
        );
        event(
            "Page.javascriptDialogOpening",
            r#"{"type":"confirm","message":"Sure?","defaultPrompt":"","url":"http://x/"}"#,
        );
        let t = lock(&shared.activity);
        let t = t.get("S").expect("tracked");
        let console: Vec<_> = t
            .console
            .iter()
            .map(|m| (m.seq, m.level.as_str(), m.text.as_str(), m.source.as_str()))
            .collect();
        assert_eq!(
            console,
            [
                (1, "warning", "careful 3 Object", "http://x/app.js:10"),
                (3, "error", "TypeError: x is undefined", ""),
            ]
        );
        let r = &t.requests[0];
        assert_eq!(
            (r.seq, r.method.as_str(), r.status, r.size, r.finished),
            (2, "POST", Some(201), Some(120.0), true)
        );
        assert_eq!(r.post_data.as_deref(), Some(r#"{"q":1}"#));
        let d = t.dialog.as_ref().expect("open");
        assert_eq!(
            (d.seq, d.kind.as_str(), d.message.as_str()),
            (4, "confirm", "Sure?")
        );
        // Console and network chatter stays out of the event ring (other events stay in it).
        let ring: Vec<_> = lock(&shared.events)
            .iter()
            .map(|e| e.method.clone())
            .collect();
        assert_eq!(ring, ["Page.javascriptDialogOpening"]);
    }

    #[test]
    fn a_response_that_is_not_json_fails_its_call() {
        let shared = Shared::default();
        let rx = waiting(&shared, 9);
        dispatch(&shared, r#"{"id":9,"result":{"nodes":[1,2"#);
        assert!(matches!(
            rx.try_recv().expect("answered"),
            Err(Error::Undecodable { .. })
        ));
        // An undecodable event is dropped; nothing else is disturbed.
        let other = waiting(&shared, 10);
        dispatch(&shared, r#"{"method":"Page.loadEventFired","params":"#);
        assert!(other.try_recv().is_err());
        assert_eq!(lock(&shared.pending).len(), 1);
    }
}
