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

#[derive(Debug, Default)]
struct Tracker {
    in_flight: std::collections::HashSet<String>,
    last_network: Option<Instant>,
    navigations: Vec<Navigation>,
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
        match rx.recv_timeout(timeout) {
            Ok(result) => result.map_err(|e| named(e, method)),
            Err(_) => {
                lock(&self.shared.pending).remove(&id);
                Err(Error::Timeout {
                    what: method.to_string(),
                    after: timeout,
                })
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
    let navigation = matches!(
        method,
        "Page.frameNavigated" | "Page.navigatedWithinDocument"
    );
    if !network && !navigation {
        return false;
    }
    let mut all = lock(&shared.activity);
    let t = all.entry(session.to_string()).or_default();
    let request = params["requestId"].as_str().unwrap_or_default();
    match method {
        "Network.requestWillBeSent" => {
            t.in_flight.insert(request.to_string());
            t.last_network = Some(Instant::now());
        }
        "Network.loadingFinished" | "Network.loadingFailed" => {
            t.in_flight.remove(request);
            t.last_network = Some(Instant::now());
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
    network
}

/// The id of a response, read off its start without decoding the rest: Chromium writes
/// `{"id":N,` first.
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
