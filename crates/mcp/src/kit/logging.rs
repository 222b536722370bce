//! Logging over MCP: `tracing` events at or above the level a client chose go to it as
//! `notifications/message`, `logger` the event's target, `data` its message and fields as a
//! JSON object.
//!
//! Which client hears an event is decided by the span it happens in: every request of a server
//! runs in [`span`], which carries a [`Sink`] (the connection's peer and the level it wants) in
//! its extensions; the [`layer`] the binary installs beside its stderr one finds the nearest
//! sink above an event and queues the message there. Events outside every request (the
//! desktop coming back, an HTTP connection ending) belong to no client and go to none.
//!
//! The level: a 2025-11-25 connection sets it with `logging/setLevel` (nothing is sent before);
//! a 2026-07-28 request names it in its `_meta` (`io.modelcontextprotocol/logLevel`), and a
//! request that names none hears nothing.
//!
//! Invariant (nothing secret is logged to a client): only deskpilot's own crates' events are
//! forwarded — never rmcp's (they carry requests and their arguments), nor any other library's;
//! never an event of a module that handles payload ([`PRIVATE_MODULES`]: shell commands and their
//! output, typed text and keys, the clipboard, a page's DevTools traffic, OCR'd and accessible
//! text, the person's picks and approvals, the picker's page address with its token); and a
//! field whose name says it holds payload ([`private_field`]: arguments, text, command, output,
//! tokens, …) goes out as `"[redacted]"`. So an event that may carry payload puts it in such a
//! field, never in its message.
//!
//! Invariant (logging never stalls or loops): an event only queues its message (`try_send`;
//! a full queue drops it and says how many were dropped once it drains); one task per request
//! sends the queue in order on the runtime, outside every request span, so what sending logs
//! (rmcp's own events, a failure) is never forwarded, and an event raised while the layer runs
//! is ignored.
#![expect(
    deprecated,
    reason = "rmcp marks MCP logging deprecated (SEP-2577), yet both revisions served here have it"
)]

use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use deskpilot_types::redact;
use rmcp::RoleServer;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, ProtocolVersion};
use rmcp::service::{Peer, RequestContext};
use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, Filter, Layer};
use tracing_subscriber::registry::LookupSpan;

use super::server::{ProfileSpec, Server};

/// The name of a request's span (its target is this module).
const SPAN_NAME: &str = "mcp";

/// How many messages of one request may wait for the client before new ones are dropped.
const QUEUE: usize = 256;

/// How long a call's answer waits for its log messages to be handed to the transport.
const FLUSH_LIMIT: Duration = Duration::from_secs(1);

/// Modules (a path segment of an event's target) that handle what a person or the agent typed,
/// ran or read: their events never reach a client, whatever their fields are named.
pub(crate) const PRIVATE_MODULES: &[&str] = &[
    // Shell sessions: commands, their output, the environment.
    "deskpilot_shell",
    "shell",
    // Typed text and keys.
    "keyboard",
    "input",
    // The clipboard's contents.
    "clipboard",
    // A page's DevTools traffic: scripts, values, cookies.
    "cdp",
    // Text read off the screen (OCR, accessible text), masked regions included.
    "deskpilot_ocr",
    "ocr",
    "text",
    // The person's picks and approvals; the picker's page address carries its token.
    "deskpilot_picker",
    "pick",
    "screen_pick",
    "ui_context",
    "approval",
];

/// Field names that hold payload; names containing these hold secrets.
const PRIVATE_FIELDS: &[&str] = &[
    "arguments",
    "args",
    "params",
    "input",
    "text",
    "value",
    "values",
    "command",
    "cmd",
    "output",
    "stdout",
    "stderr",
    "clipboard",
    "typed",
    "keys",
    "key",
    "url",
    "body",
    "env",
    "content",
];
const SECRET_PARTS: &[&str] = &[
    "password",
    "passphrase",
    "secret",
    "token",
    "credential",
    "cookie",
];

/// Whether events of `target` may reach a client: deskpilot's own crates, outside the
/// [`PRIVATE_MODULES`].
pub(crate) fn forwardable(target: &str) -> bool {
    let mut segments = target.split("::");
    let own = segments
        .next()
        .is_some_and(|c| c == "deskpilot" || c.starts_with("deskpilot_"));
    own && !target.split("::").any(|s| PRIVATE_MODULES.contains(&s))
}

/// Whether a field named `name` holds payload or a secret (sent as `"[redacted]"`).
pub(crate) fn private_field(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    PRIVATE_FIELDS.contains(&name.as_str()) || SECRET_PARTS.iter().any(|s| name.contains(s))
}

/// The MCP level of a `tracing` level.
pub(crate) fn level_of(level: Level) -> LoggingLevel {
    match level {
        Level::ERROR => LoggingLevel::Error,
        Level::WARN => LoggingLevel::Warning,
        Level::INFO => LoggingLevel::Info,
        _ => LoggingLevel::Debug,
    }
}

/// Severity order of the MCP levels (syslog's, least severe first).
fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// `logging/setLevel`: from now on this connection hears events at `level` and above.
pub(crate) fn set_level<P: ProfileSpec>(
    server: &Server<P>,
    level: LoggingLevel,
    _peer: Peer<RoleServer>,
) {
    *server
        .log_level
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(level);
    tracing::debug!(session = server.session.id(), ?level, "log level set");
}

/// The span a request of `server` runs in: events inside it are this connection's, at the level
/// the request or the connection chose (none when the profile does not declare `logging`).
pub(crate) fn span<P: ProfileSpec>(
    server: &Server<P>,
    context: &RequestContext<RoleServer>,
) -> tracing::Span {
    let span = request_span(server.session.id());
    if P::capabilities().logging.is_none() {
        return span;
    }
    let wanted = if let Some(level) = context.meta.log_level() {
        Wanted::Request(level)
    } else if context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
    {
        // The revision's rule: no level in the request, no log messages.
        return span;
    } else {
        Wanted::Connection(server.log_level.clone())
    };
    attach(&span, wanted, context.peer.clone());
    span
}

/// A request span of engine session `session`, with no sink yet.
fn request_span(session: u64) -> tracing::Span {
    tracing::info_span!(SPAN_NAME, session)
}

/// Makes `span` a request span whose events at the level `wanted` gives go to `peer`.
fn attach(span: &tracing::Span, wanted: Wanted, peer: Peer<RoleServer>) {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let sink = Sink {
        wanted,
        peer,
        runtime,
        outbox: OnceLock::new(),
        progress: Arc::default(),
    };
    with_registry_span(span, |span| {
        span.extensions_mut().insert(sink);
    });
}

/// Waits (at most [`FLUSH_LIMIT`]) until every message logged so far in `span` was handed to the
/// transport, so that a call's messages precede its answer (a 2026-07-28 response stream ends
/// with the answer).
pub(crate) async fn flush(span: &tracing::Span) {
    let Some(progress) = with_registry_span(span, |span| {
        span.extensions()
            .get::<Sink>()
            .map(|sink| sink.progress.clone())
    })
    .flatten() else {
        return;
    };
    let drained = async {
        loop {
            let idle = progress.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if progress.pending.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    };
    if tokio::time::timeout(FLUSH_LIMIT, drained).await.is_err() {
        tracing::debug!("log messages still queued when the answer went out");
    }
}

/// Runs `f` on `span`'s data in the registry, when the subscriber is built on one.
fn with_registry_span<T>(
    span: &tracing::Span,
    f: impl FnOnce(tracing_subscriber::registry::SpanRef<'_, tracing_subscriber::Registry>) -> T,
) -> Option<T> {
    span.with_subscriber(|(id, dispatch)| {
        let registry = dispatch.downcast_ref::<tracing_subscriber::Registry>()?;
        registry.span(id).map(f)
    })
    .flatten()
}

/// Where the level a request's events are measured against comes from.
enum Wanted {
    /// The request named it (2026-07-28).
    Request(LoggingLevel),
    /// The connection's `logging/setLevel`, read at each event (it may change mid-call).
    Connection(Arc<Mutex<Option<LoggingLevel>>>),
}

impl Wanted {
    fn allows(&self, level: LoggingLevel) -> bool {
        let wanted = match self {
            Wanted::Request(wanted) => Some(*wanted),
            Wanted::Connection(cell) => *cell.lock().unwrap_or_else(|p| p.into_inner()),
        };
        wanted.is_some_and(|wanted| rank(level) >= rank(wanted))
    }
}

/// A request's way to its client: kept in the request span's extensions, dropped (ending its
/// sending task once the queue is sent) when the span closes.
struct Sink {
    wanted: Wanted,
    peer: Peer<RoleServer>,
    runtime: tokio::runtime::Handle,
    /// The queue, and the task sending it, made at the first message.
    outbox: OnceLock<tokio::sync::mpsc::Sender<LoggingMessageNotificationParam>>,
    progress: Arc<Progress>,
}

/// How far a request's sending task is.
#[derive(Default)]
struct Progress {
    /// Messages queued and not yet handed to the transport.
    pending: AtomicUsize,
    /// Messages dropped because the queue was full, not yet reported.
    dropped: AtomicUsize,
    /// Woken when `pending` reaches zero.
    idle: tokio::sync::Notify,
}

impl Sink {
    /// Queues `message` without waiting; a full or closed queue drops it.
    fn send(&self, message: LoggingMessageNotificationParam) {
        let queue = self.outbox.get_or_init(|| {
            let (queue, messages) = tokio::sync::mpsc::channel(QUEUE);
            self.runtime
                .spawn(deliver(messages, self.peer.clone(), self.progress.clone()));
            queue
        });
        self.progress.pending.fetch_add(1, Ordering::SeqCst);
        if let Err(e) = queue.try_send(message) {
            if matches!(e, tokio::sync::mpsc::error::TrySendError::Full(_)) {
                self.progress.dropped.fetch_add(1, Ordering::SeqCst);
            }
            if self.progress.pending.fetch_sub(1, Ordering::SeqCst) == 1 {
                self.progress.idle.notify_waiters();
            }
        }
    }
}

/// Sends a request's queued messages in order until the request's span closes; after the
/// transport closed, the rest are dropped.
async fn deliver(
    mut messages: tokio::sync::mpsc::Receiver<LoggingMessageNotificationParam>,
    peer: Peer<RoleServer>,
    progress: Arc<Progress>,
) {
    let mut open = true;
    while let Some(message) = messages.recv().await {
        open = open && peer.notify_logging_message(message).await.is_ok();
        if progress.pending.load(Ordering::SeqCst) == 1 {
            let dropped = progress.dropped.swap(0, Ordering::SeqCst);
            if open && dropped > 0 {
                let note = LoggingMessageNotificationParam::new(
                    LoggingLevel::Warning,
                    serde_json::json!({
                        "message": format!("{dropped} log messages dropped: the client read them slower than they came"),
                    }),
                )
                .with_logger(module_path!());
                open = peer.notify_logging_message(note).await.is_ok();
            }
        }
        if progress.pending.fetch_sub(1, Ordering::SeqCst) == 1 {
            progress.idle.notify_waiters();
        }
    }
}

thread_local! {
    /// Set while the layer handles an event on this thread: events raised meanwhile are ignored.
    static FORWARDING: Cell<bool> = const { Cell::new(false) };
}

/// The layer that sends `tracing` events to the MCP clients whose requests raised them (the
/// binary adds it beside its stderr layer; it filters on its own).
pub fn layer<S>() -> impl Layer<S>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    Forward.with_filter(Gate)
}

/// Sends an event to the sink of the request it happened in.
struct Forward;

/// Lets through request spans, and events of [`forwardable`] targets inside a request whose
/// client wants their level, so an event nobody hears is not even built for this layer.
struct Gate;

/// Whether `meta` is the span of [`span`].
fn is_request_span(meta: &Metadata<'_>) -> bool {
    meta.is_span() && meta.name() == SPAN_NAME && meta.target() == module_path!()
}

/// The sink of the nearest request span from `span` up, and whether it wants `level`.
fn wants<S>(span: tracing_subscriber::registry::SpanRef<'_, S>, level: LoggingLevel) -> bool
where
    S: for<'a> LookupSpan<'a>,
{
    span.scope()
        .find_map(|s| {
            s.extensions()
                .get::<Sink>()
                .map(|sink| sink.wanted.allows(level))
        })
        .unwrap_or(false)
}

impl<S> Filter<S> for Gate
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn enabled(&self, meta: &Metadata<'_>, cx: &Context<'_, S>) -> bool {
        if meta.is_span() {
            return is_request_span(meta);
        }
        if FORWARDING.get() || !forwardable(meta.target()) {
            return false;
        }
        cx.lookup_current()
            .is_some_and(|span| wants(span, level_of(*meta.level())))
    }

    fn callsite_enabled(&self, meta: &'static Metadata<'static>) -> Interest {
        if is_request_span(meta) {
            Interest::always()
        } else if meta.is_event() && forwardable(meta.target()) {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::TRACE)
    }
}

impl<S> Layer<S> for Forward
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        if FORWARDING.replace(true) {
            return;
        }
        let level = level_of(*event.metadata().level());
        if let Some(scope) = ctx.event_scope(event) {
            for span in scope {
                let extensions = span.extensions();
                if let Some(sink) = extensions.get::<Sink>() {
                    if sink.wanted.allows(level) {
                        sink.send(message(event));
                    }
                    break;
                }
            }
        }
        FORWARDING.set(false);
    }
}

/// The `notifications/message` for `event`: its level, its target as the logger, its message
/// and fields (payload redacted) as `data`.
pub(crate) fn message(event: &Event<'_>) -> LoggingMessageNotificationParam {
    let mut data = Map::new();
    event.record(&mut Fields(&mut data));
    LoggingMessageNotificationParam::new(level_of(*event.metadata().level()), Value::Object(data))
        .with_logger(event.metadata().target())
}

/// An event's fields as JSON, payload redacted.
struct Fields<'a>(&'a mut Map<String, Value>);

impl Fields<'_> {
    fn put(&mut self, field: &Field, value: impl FnOnce() -> Value) {
        let value = if private_field(field.name()) {
            Value::from("[redacted]")
        } else {
            value()
        };
        self.0.insert(field.name().to_string(), value);
    }
}

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.put(field, || {
            Value::from(redact::scrub(&format!("{value:?}")).into_owned())
        });
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.put(field, || Value::from(redact::scrub(value).into_owned()));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.put(field, || Value::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.put(field, || Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.put(field, || Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.put(field, || Value::from(value));
    }
    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.put(field, || {
            Value::from(redact::scrub(&value.to_string()).into_owned())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_deskpilots_own_non_private_modules_are_forwarded() {
        for target in [
            "deskpilot_engine::capture",
            "deskpilot_x11::a11y::tree",
            "deskpilot_mcp::profiles::conformance",
            "deskpilot::serve",
        ] {
            assert!(forwardable(target), "{target}");
        }
        for target in [
            // rmcp logs requests with their arguments.
            "rmcp::service",
            "rmcp",
            "hyper::proto",
            "deskpilotish",
            "deskpilot_shell::session",
            "deskpilot_engine::shell",
            "deskpilot_mcp::kit::shell",
            "deskpilot_x11::keyboard",
            "deskpilot_browser::input",
            "deskpilot_x11::clipboard",
            "deskpilot_browser::cdp",
            "deskpilot_picker",
            "deskpilot_picker::http",
            "deskpilot_engine::pick",
            "deskpilot_x11::a11y::text",
            "deskpilot_mcp::kit::approval",
            "deskpilot_mcp::profiles::ui_context",
        ] {
            assert!(!forwardable(target), "{target}");
        }
    }

    #[test]
    fn payload_fields_are_private() {
        for name in [
            "arguments",
            "text",
            "command",
            "output",
            "auth_token",
            "Password",
            "url",
        ] {
            assert!(private_field(name), "{name}");
        }
        for name in [
            "message",
            "ms",
            "window",
            "count",
            "error",
            "generation",
            "id",
        ] {
            assert!(!private_field(name), "{name}");
        }
    }

    #[test]
    fn levels_map_to_syslog_levels_and_compare_by_severity() {
        assert_eq!(level_of(Level::TRACE), LoggingLevel::Debug);
        assert_eq!(level_of(Level::DEBUG), LoggingLevel::Debug);
        assert_eq!(level_of(Level::INFO), LoggingLevel::Info);
        assert_eq!(level_of(Level::WARN), LoggingLevel::Warning);
        assert_eq!(level_of(Level::ERROR), LoggingLevel::Error);
        let info = Wanted::Request(LoggingLevel::Info);
        assert!(!info.allows(LoggingLevel::Debug));
        assert!(info.allows(LoggingLevel::Info));
        assert!(info.allows(LoggingLevel::Error));
        let error = Wanted::Request(LoggingLevel::Error);
        assert!(!error.allows(LoggingLevel::Warning));
        let unset = Wanted::Connection(Arc::default());
        assert!(!unset.allows(LoggingLevel::Emergency));
    }

    /// A client that hands every log message it hears to the test.
    struct Listener(tokio::sync::mpsc::UnboundedSender<LoggingMessageNotificationParam>);

    impl rmcp::ClientHandler for Listener {
        async fn on_logging_message(
            &self,
            params: LoggingMessageNotificationParam,
            _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
        ) {
            let _ = self.0.send(params);
        }
    }

    /// A server that only gives the test its peer.
    struct Quiet;

    impl rmcp::ServerHandler for Quiet {}

    #[tokio::test]
    async fn a_request_span_sends_its_clients_level_and_nothing_private_in_order() {
        use rmcp::ServiceExt as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        let _default =
            tracing::subscriber::set_default(tracing_subscriber::registry().with(layer()));
        let (heard, mut hear) = tokio::sync::mpsc::unbounded_channel();
        let (server_io, client_io) = tokio::io::duplex(1 << 16);
        let (server, client) =
            tokio::join!(Quiet.serve(server_io), Listener(heard).serve(client_io));
        let (server, _client) = (server.unwrap(), client.unwrap());

        tracing::info!(target: "deskpilot_engine::wait", "outside every request");
        let span = request_span(1);
        attach(
            &span,
            Wanted::Request(LoggingLevel::Info),
            server.peer().clone(),
        );
        span.in_scope(|| {
            tracing::debug!(target: "deskpilot_engine::capture", id = 1u64, "below the level");
            tracing::info!(target: "rmcp::service", arguments = "canary", "a library's");
            tracing::warn!(target: "deskpilot_shell::session", "ran canary");
            tracing::info!(target: "deskpilot_x11::keyboard", "typed canary");
            tracing::info!(target: "deskpilot_engine::wait", text = "canary", n = 2u64, "first");
            tracing::error!(target: "deskpilot_engine::wait", "second");
        });
        flush(&span).await;

        let mut next = async || {
            tokio::time::timeout(Duration::from_secs(5), hear.recv())
                .await
                .expect("a message within 5 s")
                .expect("the client is listening")
        };
        let first = next().await;
        assert_eq!(first.level, LoggingLevel::Info);
        assert_eq!(first.logger.as_deref(), Some("deskpilot_engine::wait"));
        assert_eq!(
            first.data,
            serde_json::json!({ "message": "first", "text": "[redacted]", "n": 2 })
        );
        let second = next().await;
        assert_eq!(second.level, LoggingLevel::Error);
        assert_eq!(second.data["message"], "second");
        drop(span);
        tracing::info!(target: "deskpilot_engine::wait", "after the request");
        tokio::task::yield_now().await;
        assert!(hear.try_recv().is_err(), "nothing else was sent");
    }

    /// Records what [`message`] makes of each event.
    struct Record(Arc<Mutex<Vec<LoggingMessageNotificationParam>>>);

    impl<S: Subscriber> Layer<S> for Record {
        fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
            self.0.lock().unwrap().push(message(event));
        }
    }

    #[test]
    fn a_message_carries_target_level_message_and_fields_with_payload_redacted() {
        use tracing_subscriber::layer::SubscriberExt as _;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let subscriber = tracing_subscriber::registry().with(Record(seen.clone()));
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(
                window = 7u64,
                ms = 1.5,
                text = "hunter2",
                "window {} moved",
                7
            );
        });
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].level, LoggingLevel::Warning);
        assert_eq!(seen[0].logger.as_deref(), Some(module_path!()));
        assert_eq!(
            seen[0].data,
            serde_json::json!({
                "message": "window 7 moved",
                "window": 7,
                "ms": 1.5,
                "text": "[redacted]",
            })
        );
    }
}
