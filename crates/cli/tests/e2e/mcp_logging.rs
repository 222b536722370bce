//! Logging over MCP: the engine's `tracing` events inside a client's calls reach it as
//! `notifications/message` once it chose a level — at that level and above, `logger` the
//! event's target — and never carry what the client passed in (a distinctive argument given to
//! the shell, the keyboard, the clipboard and a lookup is in no message). Over HTTP, a
//! 2026-07-28 request hears its call's messages, before the answer on the same stream, only
//! when its `_meta` names a level.
#![expect(
    deprecated,
    reason = "rmcp marks MCP logging deprecated (SEP-2577), yet both revisions served have it"
)]

use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::RoleClient;
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, SetLevelRequestParams};
use rmcp::service::NotificationContext;
use serde_json::{Value, json};

use crate::harness::{self, Server, ok, serve_with, wait_for};

/// The logger of the engine's capture events (one per screenshot, at debug).
const CAPTURE: &str = "deskpilot_engine::capture";

/// A client that keeps every log message it hears.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<LoggingMessageNotificationParam>>>);

impl ClientHandler for Logs {
    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

impl Logs {
    fn all(&self) -> Vec<LoggingMessageNotificationParam> {
        self.0.lock().unwrap().clone()
    }

    /// Waits for the capture message of screenshot `id`.
    async fn capture_of(&self, id: u64) -> LoggingMessageNotificationParam {
        wait_for(
            Duration::from_secs(10),
            &format!("the log message of screenshot {id}"),
            || async {
                self.all()
                    .into_iter()
                    .find(|m| m.logger.as_deref() == Some(CAPTURE) && m.data["id"] == id)
            },
        )
        .await
    }
}

/// Takes a screenshot of the whole desktop; its id.
async fn screenshot(server: &Server<Logs>) -> u64 {
    let r = server.call("screenshot", json!({})).await;
    ok(&r)["screenshot_id"].as_u64().expect("screenshot_id")
}

async fn set_level(server: &Server<Logs>, level: LoggingLevel) {
    server
        .client
        .set_level(SetLevelRequestParams::new(level))
        .await
        .expect("logging/setLevel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_hears_its_calls_events_at_the_level_it_set() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let logs = Logs::default();
    let server = serve_with(Some(desktop), &[], &[], logs.clone()).await;

    // Nothing before logging/setLevel, nothing below the level set.
    let unasked = screenshot(&server).await;
    set_level(&server, LoggingLevel::Warning).await;
    let below = screenshot(&server).await;
    set_level(&server, LoggingLevel::Debug).await;
    let heard = screenshot(&server).await;

    let message = logs.capture_of(heard).await;
    assert_eq!(
        message.level,
        LoggingLevel::Debug,
        "tracing DEBUG is MCP debug"
    );
    assert_eq!(message.data["message"], "screenshot", "{:#}", message.data);
    assert!(
        message.data["capture_ms"].is_number(),
        "fields go as JSON values: {:#}",
        message.data
    );
    for m in logs.all() {
        let logger = m.logger.as_deref().unwrap_or_default();
        assert!(
            logger.starts_with("deskpilot"),
            "only deskpilot's own events are forwarded, not {logger}: {:#}",
            m.data
        );
        if logger == CAPTURE {
            assert!(
                m.data["id"] != unasked && m.data["id"] != below,
                "a screenshot taken before setLevel or below the level was logged: {:#}",
                m.data
            );
        }
    }
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_argument_a_client_passes_is_in_a_log_message() {
    let Some(desktop) = harness::private_desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let logs = Logs::default();
    let server = serve_with(Some(&desktop), &[], &[], logs.clone()).await;
    set_level(&server, LoggingLevel::Debug).await;

    const CANARY: &str = "zq7-canary-31337";
    let calls = [
        (
            "shell_exec",
            json!({ "command": format!("echo {CANARY}; echo {CANARY} >&2") }),
        ),
        ("type_text", json!({ "text": CANARY })),
        ("clipboard_write", json!({ "text": CANARY })),
        ("clipboard_read", json!({})),
        ("list_windows", json!({ "filter": CANARY })),
        (
            "find_elements",
            json!({ "window_id": 0, "title_match": CANARY, "name_contains": CANARY }),
        ),
    ];
    for (tool, args) in calls {
        // Whether each succeeds does not matter here, only what it logs.
        server.call(tool, args).await;
    }
    // The calls' messages precede this one's on the stream.
    let last = screenshot(&server).await;
    logs.capture_of(last).await;

    let all = logs.all();
    assert!(all.len() > 1, "the calls logged nothing at debug: {all:?}");
    for m in all {
        let wire = serde_json::to_string(&m).unwrap();
        assert!(
            !wire.contains(CANARY),
            "an argument reached a log message: {wire}"
        );
    }
    server.finish().await;
}

/// A `serve --http 127.0.0.1:0 --no-auth` on the shared desktop, killed when dropped.
struct Http {
    child: Child,
    url: String,
}

impl Http {
    fn start(desktop: &deskpilot_x11::VirtualDisplay) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_deskpilot"));
        cmd.args(["serve", "--http", "127.0.0.1:0", "--no-auth"])
            .env("DESKPILOT_MEMORY_DIR", harness::fresh_memory_dir())
            .env("DESKPILOT_CURSOR", "off")
            .env_remove("DESKPILOT_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        desktop.configure(&mut cmd);
        let mut child = cmd.spawn().expect("start deskpilot serve --http");
        let (found, url) = std::sync::mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                if let Some((_, at)) = line.split_once(" at ")
                    && at.ends_with("/mcp")
                {
                    let _ = found.send(at.to_string());
                }
            }
        });
        let url = url
            .recv_timeout(Duration::from_secs(30))
            .expect("serve --http printed its address");
        Http { child, url }
    }

    /// A stateless 2026-07-28 `tools/call` of `tool`, `_meta` naming `level` when given; every
    /// message of the answer's stream, in order.
    async fn call(&self, tool: &str, level: Option<&str>) -> Vec<Value> {
        let mut meta = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": { "name": "deskpilot-e2e", "version": "1" },
            "io.modelcontextprotocol/clientCapabilities": {},
        });
        if let Some(level) = level {
            meta["io.modelcontextprotocol/logLevel"] = json!(level);
        }
        let body = json!({
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": { "name": tool, "arguments": {}, "_meta": meta },
        });
        let response = reqwest::Client::new()
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", tool)
            .json(&body)
            .send()
            .await
            .expect("POST tools/call");
        assert!(response.status().is_success(), "{}", response.status());
        let text = response.text().await.expect("the answer's body");
        // A JSON answer, or an SSE stream of `data:` lines.
        match serde_json::from_str::<Value>(&text) {
            Ok(single) => vec![single],
            Err(_) => text
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str(d.trim()).ok())
                .collect(),
        }
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_request_hears_its_messages_before_its_answer_only_when_it_names_a_level() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let server = Http::start(desktop);

    let quiet = server.call("screenshot", None).await;
    assert!(
        quiet
            .last()
            .is_some_and(|m| m["id"] == 1 && m.get("result").is_some()),
        "the call answered: {quiet:#?}"
    );
    assert!(
        !quiet.iter().any(|m| m["method"] == "notifications/message"),
        "a request that names no level heard log messages: {quiet:#?}"
    );

    let heard = server.call("screenshot", Some("debug")).await;
    let answer = heard
        .iter()
        .position(|m| m["id"] == 1 && m.get("result").is_some())
        .unwrap_or_else(|| panic!("no answer: {heard:#?}"));
    let capture = heard
        .iter()
        .position(|m| m["method"] == "notifications/message" && m["params"]["logger"] == CAPTURE)
        .unwrap_or_else(|| panic!("no capture message on the stream: {heard:#?}"));
    assert!(
        capture < answer,
        "the message came after the answer: {heard:#?}"
    );
    assert_eq!(heard[capture]["params"]["level"], "debug");
}
