//! A thin Chrome DevTools protocol client: one WebSocket to the browser, on a thread of its own
//! running a small tokio runtime, with blocking calls for the engine (whose methods block).
//!
//! Only responses are decoded (by id); events are kept as raw JSON for whoever waits on them,
//! and unknown ones are ignored — so a newer Chromium that changes an event it does not use
//! cannot break it. Sessions are flattened (`Target.attachToTarget { flatten: true }`): every
//! message for a page carries its `sessionId` over the one browser socket.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use crate::Error;

/// Events kept for waiters, newest last.
const KEPT_EVENTS: usize = 512;

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

#[derive(Debug, Default)]
struct Shared {
    pending: Mutex<Pending>,
    events: Mutex<Vec<Event>>,
    closed: Mutex<Option<String>>,
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
        let shared = Arc::new(Shared::default());
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
                    let socket = match tokio_tungstenite::connect_async(url.as_str()).await {
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
            Ok(result) => result.map_err(|e| match e {
                Error::Protocol { message, .. } => Error::Protocol {
                    method: method.to_string(),
                    message,
                },
                other => other,
            }),
            Err(_) => {
                lock(&self.shared.pending).remove(&id);
                Err(Error::Timeout {
                    what: method.to_string(),
                    after: timeout,
                })
            }
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

/// Hands a received frame to its waiter, or keeps it as an event.
fn dispatch(shared: &Shared, text: &str) {
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        tracing::debug!("undecodable DevTools frame ignored");
        return;
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
        let mut events = lock(&shared.events);
        if events.len() == KEPT_EVENTS {
            events.remove(0);
        }
        events.push(Event {
            method: method.to_string(),
            session: v
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string),
            params: v.get("params").cloned().unwrap_or(Value::Null),
            at: Instant::now(),
        });
    }
}
