//! `deskpilot serve --http` through rmcp's Streamable HTTP client, on loopback: two sessions
//! with their own engine sessions (a screenshot id of one is foreign to the other), every
//! profile over HTTP, the bearer token (401 with `WWW-Authenticate: Bearer`), Host and Origin
//! checks, the session cap, the body cap, `/healthz` and `/readyz`, TLS, `--no-auth` refused
//! off loopback, and a clean exit on SIGTERM with a session open.

use std::io::BufRead as _;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::harness::{self, ok, text};

const TOKEN: &str = "e2e-token-0123456789abcdef";

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

/// A `serve --http 127.0.0.1:0` process and the address it printed.
struct HttpServer {
    child: Child,
    base: String,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl HttpServer {
    fn start(desktop: &deskpilot_x11::VirtualDisplay, args: &[&str], token: Option<&str>) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_deskpilot"));
        cmd.args(["serve", "--http", "127.0.0.1:0"])
            .args(args)
            .env("DESKPILOT_MEMORY_DIR", harness::fresh_memory_dir())
            .env("DESKPILOT_CURSOR", "off")
            .env_remove("DESKPILOT_TOKEN");
        if let Some(t) = token {
            cmd.env("DESKPILOT_TOKEN", t);
        }
        Self::start_with(desktop, cmd)
    }

    /// Starts `cmd` (a `serve --http 127.0.0.1:0` command) on `desktop`.
    fn start_with(desktop: &deskpilot_x11::VirtualDisplay, mut cmd: Command) -> Self {
        desktop.configure(&mut cmd);
        Self::start_command(cmd)
    }

    /// Starts `cmd` (a `serve --http 127.0.0.1:0` command) as it is.
    fn start_command(mut cmd: Command) -> Self {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start deskpilot serve --http");
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = lines.clone();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let base = loop {
            let found = lines.lock().unwrap().iter().find_map(|l| {
                l.split_once(" at ")
                    .and_then(|(_, url)| url.strip_suffix("/mcp"))
                    .map(str::to_string)
            });
            if let Some(b) = found {
                break b;
            }
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "serve --http exited ({status}): {:?}",
                    lines.lock().unwrap()
                );
            }
            assert!(
                Instant::now() < deadline,
                "no address printed: {:?}",
                lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        HttpServer {
            child,
            base,
            stderr: lines,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The port the server bound (its printed address ends with it).
    fn port(&self) -> u16 {
        let (_, port) = self.base.rsplit_once(':').expect("an address with a port");
        port.parse().expect("a port number")
    }

    async fn client(&self, token: &str) -> Client {
        let config =
            StreamableHttpClientTransportConfig::with_uri(self.url("/mcp")).auth_header(token);
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .expect("an MCP session over HTTP")
    }

    /// Sends SIGTERM and waits for the exit status.
    fn terminate(mut self) -> std::process::ExitStatus {
        // SAFETY: plain signal delivery to our own child.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGTERM);
        }
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(Instant::now() < deadline, "no exit within 15 s of SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn call(client: &Client, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else {
        unreachable!()
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

fn initialize_body() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": { "name": "e2e", "version": "1" }
        }
    })
    .to_string()
}

/// A raw POST /mcp with `headers`; the status and the headers of the answer.
async fn post(
    server: &HttpServer,
    headers: &[(&str, &str)],
    body: String,
) -> (u16, reqwest::header::HeaderMap, String) {
    let mut req = reqwest::Client::new()
        .post(server.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.expect("POST /mcp");
    let status = r.status().as_u16();
    let h = r.headers().clone();
    // An initialize answers with an SSE stream that stays open: read only its head.
    let body = tokio::time::timeout(Duration::from_millis(500), r.text())
        .await
        .unwrap_or(Ok(String::new()))
        .unwrap_or_default();
    (status, h, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_http_sessions_have_their_own_engine_sessions_and_sigterm_exits_cleanly() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let server = HttpServer::start(desktop, &[], Some(TOKEN));
    let a = server.client(TOKEN).await;
    let b = server.client(TOKEN).await;
    let listed = a.list_all_tools().await.unwrap();
    assert!(listed.iter().any(|t| t.name == "screenshot"));
    let r = call(&a, "list_windows", json!({})).await;
    assert!(ok(&r)["windows"].is_array(), "{}", text(&r));
    let shot = call(&a, "screenshot", json!({})).await;
    let id = ok(&shot)["screenshot_id"].clone();
    assert!(id.is_u64(), "{}", text(&shot));
    let (w, h, _) = harness::image(&shot);
    assert!(w > 0 && h > 0);
    // B never saw A's screenshot: its id is another session's.
    let r = call(&b, "click", json!({ "x": 5, "y": 5, "screenshot_id": id })).await;
    assert_eq!(harness::error_code(&r), "FOREIGN_REFERENCE", "{}", text(&r));
    let r = call(&b, "click", json!({ "x": 5, "y": 5 })).await;
    assert_eq!(
        harness::error_code(&r),
        "NO_REFERENCE_SCREENSHOT",
        "{}",
        text(&r)
    );
    // The token is never in a result or a log line (it was given, so never printed).
    let logs = server.stderr.lock().unwrap().join("\n");
    assert!(!logs.contains(TOKEN), "{logs}");
    assert!(!text(&shot).contains(TOKEN));

    // A session is open (A's, B's): SIGTERM still ends the process at once, with 0.
    let status = server.terminate();
    assert_eq!(status.code(), Some(0), "SIGTERM exits 0");
    drop((a, b));
}

/// A 2025-11-25 client whose response stream drops while a call runs reconnects with
/// `Last-Event-ID` and still gets the answer the server produced while it was away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_response_stream_resumes_with_last_event_id() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let server = HttpServer::start(desktop, &[], Some(TOKEN));
    let bearer = format!("Bearer {TOKEN}");
    let (status, h, body) = post(&server, &[("authorization", &bearer)], initialize_body()).await;
    assert_eq!(status, 200, "{body}");
    let sid = h["mcp-session-id"].to_str().unwrap().to_string();
    let headers = [
        ("authorization", bearer.as_str()),
        ("mcp-session-id", sid.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let note = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }).to_string();
    let (status, _, body) = post(&server, &headers, note).await;
    assert_eq!(status, 202, "{body}");

    let http = reqwest::Client::new();
    let call = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "shell_exec",
                    "arguments": { "command": "sleep 2; echo answer-after-the-drop" } }
    });
    let mut req = http
        .post(server.url("/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(call.to_string());
    for (k, v) in headers {
        req = req.header(k, v);
    }
    let mut r = req.send().await.expect("POST tools/call");
    assert_eq!(r.status().as_u16(), 200);
    // Read up to the first event id (the stream's priming event), then hang up.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut seen = String::new();
    let event_id = loop {
        if let Some(id) = seen
            .lines()
            .find_map(|l| l.strip_prefix("id:").map(|v| v.trim().to_string()))
        {
            break id;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let chunk = tokio::time::timeout(left, r.chunk())
            .await
            .expect("no event id within 10 s")
            .expect("stream");
        seen.push_str(&String::from_utf8_lossy(
            &chunk.expect("stream ended early"),
        ));
    };
    assert!(!seen.contains("answer-after-the-drop"), "{seen}");
    drop(r);

    let mut req = http
        .get(server.url("/mcp"))
        .header("accept", "text/event-stream")
        .header("last-event-id", &event_id);
    for (k, v) in headers {
        req = req.header(k, v);
    }
    let mut r = req.send().await.expect("GET with Last-Event-ID");
    assert_eq!(r.status().as_u16(), 200, "{event_id}");
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut replayed = String::new();
    while !replayed.contains("answer-after-the-drop") {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, r.chunk()).await {
            Ok(Ok(Some(chunk))) => replayed.push_str(&String::from_utf8_lossy(&chunk)),
            other => panic!("resumed stream ended without the answer ({other:?}): {replayed}"),
        }
    }
    let data = replayed
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .find(|d| d.contains("answer-after-the-drop"))
        .unwrap();
    let msg: Value = serde_json::from_str(data.trim()).unwrap();
    assert_eq!(msg["id"], 2, "{msg}");
    assert_eq!(msg["result"]["isError"], false, "{msg}");
}

/// A page served from the server's own origin (any of its loopback names at its port) may
/// call it without `--allow-origin`; another site may not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_servers_own_origin_is_accepted_without_being_listed() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let server = HttpServer::start(desktop, &[], Some(TOKEN));
    let port = server.port();
    let bearer = format!("Bearer {TOKEN}");
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
    ] {
        let (status, h, body) = post(
            &server,
            &[("authorization", &bearer), ("origin", &origin)],
            initialize_body(),
        )
        .await;
        assert_eq!(status, 200, "{origin}: {body}");
        assert!(h.contains_key("mcp-session-id"), "{origin}: {h:?}");
    }
    for origin in [
        "http://evil.example".to_string(),
        format!("https://127.0.0.1:{port}"),
        format!("http://127.0.0.1:{}", port + 1),
    ] {
        let (status, _, body) = post(
            &server,
            &[("authorization", &bearer), ("origin", &origin)],
            initialize_body(),
        )
        .await;
        assert_eq!(status, 403, "{origin}: {body}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_host_origin_and_limits_are_enforced_and_health_answers() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let server = HttpServer::start(
        desktop,
        &[
            "--max-sessions",
            "1",
            "--max-body-bytes",
            "65536",
            "--allow-origin",
            "http://app.example:8080",
        ],
        Some(TOKEN),
    );
    // Health without a token, saying nothing else.
    let r = reqwest::get(server.url("/healthz")).await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let r = reqwest::get(server.url("/readyz")).await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["ready"], true, "{v}");
    assert!(
        v["accessibility"].is_string() && v["ocr"].is_string(),
        "{v}"
    );
    assert_eq!(v.as_object().unwrap().len(), 3, "nothing else: {v}");

    // No token, a wrong one, the right one under another scheme: all refused.
    let basic = format!("Basic {TOKEN}");
    for auth in [None, Some("Bearer nope"), Some(basic.as_str())] {
        let headers: Vec<(&str, &str)> = auth.iter().map(|a| ("authorization", *a)).collect();
        let (status, h, body) = post(&server, &headers, initialize_body()).await;
        assert_eq!(status, 401, "{auth:?}: {body}");
        assert!(
            h.get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("Bearer")),
            "{h:?}"
        );
        let v: Value = serde_json::from_str(&body).expect("a JSON-RPC error body");
        assert_eq!(v["error"]["code"], -32001, "{v}");
    }
    let bearer = format!("Bearer {TOKEN}");
    // DNS rebinding: a foreign Host; a cross-site Origin; the allowed Origin passes.
    let (status, _, _) = post(
        &server,
        &[("authorization", &bearer), ("host", "evil.example")],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 403);
    let (status, _, _) = post(
        &server,
        &[
            ("authorization", &bearer),
            ("origin", "http://evil.example"),
        ],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 403);
    // The server's own origin at another port is another site.
    let port = server.port();
    let (status, _, _) = post(
        &server,
        &[
            ("authorization", &bearer),
            ("origin", &format!("http://127.0.0.1:{}", port + 1)),
        ],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 403);
    // Too large a body.
    let (status, _, _) = post(&server, &[("authorization", &bearer)], "x".repeat(70_000)).await;
    assert_eq!(status, 413);
    // One session may be open: the first takes it, the next is refused with a JSON-RPC error.
    let (status, h, _) = post(
        &server,
        &[
            ("authorization", &bearer),
            ("origin", "http://app.example:8080"),
        ],
        initialize_body(),
    )
    .await;
    assert_eq!(status, 200);
    assert!(h.contains_key("mcp-session-id"), "{h:?}");
    let (status, _, body) = post(&server, &[("authorization", &bearer)], initialize_body()).await;
    assert_eq!(status, 503, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Too many MCP sessions"),
        "{v}"
    );
    // Everything else is not found.
    let r = reqwest::get(server.url("/")).await.unwrap();
    assert_eq!(r.status().as_u16(), 404);
    assert_eq!(server.terminate().code(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_profile_answers_over_http() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    for (profile, tool, args) in [
        ("dsh", "app_window", json!({ "action": "list" })),
        ("computer-use", "list_windows", json!({})),
        ("desktopos", "desktop_list_windows", json!({})),
        ("ui-context", "ui_context_current", json!({})),
    ] {
        let server = HttpServer::start(desktop, &["--profile", profile], Some(TOKEN));
        let client = server.client(TOKEN).await;
        let tools = client.list_all_tools().await.unwrap();
        assert!(tools.iter().any(|t| t.name == tool), "{profile}: no {tool}");
        let r = call(&client, tool, args).await;
        assert!(
            r.is_error != Some(true) || profile == "ui-context",
            "{profile} {tool}: {}",
            text(&r)
        );
        drop(client);
        assert_eq!(server.terminate().code(), Some(0), "{profile}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generated_token_is_printed_once_and_no_auth_is_loopback_only() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let server = HttpServer::start(desktop, &[], None);
    let token = server
        .stderr
        .lock()
        .unwrap()
        .iter()
        .find_map(|l| {
            l.strip_prefix("deskpilot: bearer token (generated): ")
                .map(str::to_string)
        })
        .expect("the generated token on stderr");
    assert_eq!(token.len(), 64, "{token}");
    let client = server.client(&token).await;
    assert!(!client.list_all_tools().await.unwrap().is_empty());
    drop(client);
    let lines = server.stderr.lock().unwrap().clone();
    assert_eq!(
        lines.iter().filter(|l| l.contains(&token)).count(),
        1,
        "printed once: {lines:?}"
    );
    assert_eq!(server.terminate().code(), Some(0));

    // Off loopback without a token: refused before anything listens.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_deskpilot"));
    cmd.args(["serve", "--http", "0.0.0.0:0", "--no-auth"])
        .stdin(Stdio::null());
    desktop.configure(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--no-auth only binds a loopback address"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_serves_mcp_with_a_certificate_and_key() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let dir = std::env::temp_dir().join(format!("deskpilot-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
        ])
        .args(["-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run openssl (apt-get install openssl)");
    assert!(made.success());
    let server = HttpServer::start(
        desktop,
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
        Some(TOKEN),
    );
    assert!(server.base.starts_with("https://"), "{}", server.base);
    // curl (an HTTP client nobody here wrote) over TLS, trusting the self-signed certificate.
    let out = Command::new("curl")
        .args(["-sS", "--cacert"])
        .arg(&cert)
        .args(["-H", &format!("Authorization: Bearer {TOKEN}")])
        .args(["-H", "content-type: application/json"])
        .args(["-H", "accept: application/json, text/event-stream"])
        .args(["--max-time", "3", "-d", &initialize_body()])
        .arg(server.url("/mcp"))
        .output()
        .expect("run curl (apt-get install curl)");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("\"protocolVersion\":\"2025-11-25\""),
        "{said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("curl")
        .args(["-sS", "--cacert"])
        .arg(&cert)
        .arg(server.url("/healthz"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n");
    assert_eq!(server.terminate().code(), Some(0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_that_never_read_or_never_finish_do_not_block_the_others() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    use std::io::Write as _;
    let server = HttpServer::start(desktop, &["--shutdown-grace-secs", "2"], Some(TOKEN));
    let authority = server.base.trim_start_matches("http://").to_string();
    let body = initialize_body();
    let mut stuck = Vec::new();
    // Sessions opened by clients that never read a byte of their answers…
    for _ in 0..5 {
        let mut s = std::net::TcpStream::connect(&authority).unwrap();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        stuck.push(s);
    }
    // …and requests that never finish their headers or their body.
    for partial in [
        format!("POST /mcp HTTP/1.1\r\nHost: {authority}\r\n"),
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\""
        ),
    ] {
        let mut s = std::net::TcpStream::connect(&authority).unwrap();
        s.write_all(partial.as_bytes()).unwrap();
        stuck.push(s);
    }
    // Another client is served as if they were not there.
    let started = Instant::now();
    let client = tokio::time::timeout(Duration::from_secs(10), server.client(TOKEN))
        .await
        .expect("a new session despite the stuck clients");
    for _ in 0..5 {
        let r = call(&client, "list_windows", json!({})).await;
        assert!(ok(&r)["windows"].is_array());
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "served in {:?}",
        started.elapsed()
    );
    let r = reqwest::get(server.url("/healthz")).await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    drop(client);
    // Shutdown does not wait on them beyond the grace period.
    let stopping = Instant::now();
    assert_eq!(server.terminate().code(), Some(0));
    assert!(
        stopping.elapsed() < Duration::from_secs(5),
        "{:?}",
        stopping.elapsed()
    );
    drop(stuck);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_while_writing_skills_and_memory_never_leaves_a_torn_file() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let memory = harness::fresh_memory_dir();
    let skills =
        std::env::temp_dir().join(format!("deskpilot-kill9-skills-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&skills);
    let memory_s = memory.to_str().unwrap().to_string();
    let skills_s = skills.to_str().unwrap().to_string();
    // A recipe near the size limit, with its round in every line, so a torn or mixed file
    // shows.
    let recipe = |round: usize| {
        (0..60)
            .map(|i| format!("- round {round} step {i}: Apply, read status."))
            .collect::<Vec<_>>()
            .join("\n")
    };
    for round in 0..12 {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_deskpilot"));
        cmd.args(["serve", "--http", "127.0.0.1:0"])
            .env("DESKPILOT_MEMORY_DIR", &memory_s)
            .env("DESKPILOT_SKILLS_DIR", &skills_s)
            .env("DESKPILOT_TOKEN", TOKEN)
            .env("DESKPILOT_CURSOR", "off");
        let server = HttpServer::start_with(desktop, cmd);
        let client = server.client(TOKEN).await;
        if round == 0 {
            // Saving works at all (else the loop below would prove nothing).
            let r = call(
                &client,
                "app_skill",
                json!({ "action": "save", "app": "Kill Nine", "summary": "first", "content": recipe(0) }),
            )
            .await;
            ok(&r);
        }
        let writer = {
            let content = recipe(round);
            tokio::spawn(async move {
                for i in 0.. {
                    let Value::Object(save) = json!({ "action": "save", "app": "Kill Nine", "summary": format!("round {round} save {i}"), "content": content })
                    else {
                        unreachable!()
                    };
                    let _ = client
                        .call_tool(CallToolRequestParams::new("app_skill").with_arguments(save))
                        .await;
                    let _ = client
                        .call_tool(CallToolRequestParams::new("list_windows"))
                        .await;
                    let _ = client
                        .call_tool(CallToolRequestParams::new("memory_stats"))
                        .await;
                }
            })
        };
        // Killed at a different moment each round, mid-write or not.
        tokio::time::sleep(Duration::from_millis(40 + 37 * round as u64)).await;
        let mut server = server;
        // SAFETY: plain signal delivery to our own child.
        unsafe {
            libc::kill(server.child.id() as i32, libc::SIGKILL);
        }
        let _ = server.child.wait();
        writer.abort();
        // What is on disk is whole: the memory state parses, each recipe is one round's.
        if let Ok(state) = std::fs::read_to_string(memory.join("memory.json")) {
            serde_json::from_str::<Value>(&state)
                .unwrap_or_else(|e| panic!("round {round}: torn memory.json ({e}): {state:.200}"));
        }
        for entry in std::fs::read_dir(&skills).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if !name.ends_with(".md") || name.starts_with('.') {
                continue;
            }
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let rounds: std::collections::BTreeSet<&str> = text
                .lines()
                .filter_map(|l| l.strip_prefix("- round "))
                .filter_map(|l| l.split(' ').next())
                .collect();
            let steps = text.lines().filter(|l| l.starts_with("- round ")).count();
            assert!(
                rounds.len() == 1 && steps == 60,
                "round {round}: {name} is torn or mixed: rounds {rounds:?}, {steps} steps"
            );
        }
    }
    // The next server reads everything back without a complaint.
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_deskpilot"));
    cmd.args(["serve", "--http", "127.0.0.1:0"])
        .env("DESKPILOT_MEMORY_DIR", &memory_s)
        .env("DESKPILOT_SKILLS_DIR", &skills_s)
        .env("DESKPILOT_TOKEN", TOKEN)
        .env("DESKPILOT_CURSOR", "off");
    let server = HttpServer::start_with(desktop, cmd);
    let client = server.client(TOKEN).await;
    let r = call(&client, "memory_stats", json!({})).await;
    ok(&r);
    let r = call(&client, "memory_timeline", json!({})).await;
    ok(&r);
    let r = call(&client, "app_skill", json!({ "action": "list" })).await;
    assert!(text(&r).contains("Kill Nine"), "{}", text(&r));
    drop(client);
    assert_eq!(server.terminate().code(), Some(0));
    let _ = std::fs::remove_dir_all(&skills);
}

/// Starts an xterm titled `title` from the session's shell and waits until it is listed.
async fn xterm_from_the_shell(client: &Client, title: &str) -> Value {
    let r = call(
        client,
        "shell_exec",
        json!({ "command": format!("xterm -title {title} >/dev/null 2>&1 &") }),
    )
    .await;
    ok(&r);
    harness::wait_for(Duration::from_secs(20), "the xterm listed", || async {
        let r = call(client, "list_windows", json!({})).await;
        ok(&r)["windows"]
            .as_array()?
            .iter()
            .find(|w| w["title"] == title)
            .cloned()
    })
    .await
}

/// The pid of `parent`'s child process named `name`, once there is one.
fn child_named(parent: u32, name: &str) -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .find_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // pid (comm) state ppid …; comm may hold spaces, so split after its ')'.
            let (head, rest) = stat.rsplit_once(')')?;
            let comm = head.split_once('(')?.1;
            let ppid: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
            (ppid == parent && comm == name).then_some(pid)
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_x_server_killed_under_serve_virtual_display_is_replaced_without_a_restart() {
    // The server brings up a desktop of its own; the shared one only proves Xvfb runs here.
    if harness::desktop().is_none() {
        return;
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_deskpilot"));
    cmd.args([
        "serve",
        "--http",
        "127.0.0.1:0",
        "--virtual-display",
        "--screen",
        "1024x768",
    ])
    .env("DESKPILOT_MEMORY_DIR", harness::fresh_memory_dir())
    .env("DESKPILOT_CURSOR", "off")
    .env("DESKPILOT_TOKEN", TOKEN)
    .env_remove("DISPLAY")
    .env("XDG_CONFIG_HOME", "/nonexistent/deskpilot-tests");
    let server = HttpServer::start_command(cmd);
    let client = server.client(TOKEN).await;
    let http = reqwest::Client::new();

    // An app on the first desktop, and a screenshot of it.
    let window = xterm_from_the_shell(&client, "before-the-crash").await;
    let r = call(&client, "screenshot", json!({ "window_id": window["id"] })).await;
    let before_shot = ok(&r)["screenshot_id"].clone();

    let xvfb = harness::wait_for(Duration::from_secs(5), "the server's Xvfb", || async {
        child_named(server.child.id(), "Xvfb")
    })
    .await;
    // SAFETY: kill(2) on the Xvfb our server started.
    assert_eq!(unsafe { libc::kill(xvfb as i32, libc::SIGKILL) }, 0);

    // At once: a clear error with a hint, never a hang.
    let r = tokio::time::timeout(
        Duration::from_secs(5),
        call(&client, "list_windows", json!({})),
    )
    .await
    .expect("an answer within 5 s of the X server's death");
    let code = harness::error_code(&r);
    assert!(
        code == "NO_DISPLAY" || code == "DESKTOP_RESTARTING",
        "{code}: {}",
        text(&r)
    );
    assert!(
        text(&r).contains("fresh"),
        "the hint says what happens: {}",
        text(&r)
    );

    // Then the same session, on the same server process, works on a fresh desktop, and its
    // first answer there says that its apps went with the old one.
    let first = harness::wait_for(
        Duration::from_secs(30),
        "a working desktop again",
        || async {
            let r = call(&client, "status", json!({})).await;
            (r.is_error != Some(true)).then_some(r)
        },
    )
    .await;
    assert!(
        text(&first).starts_with("The desktop was restarted at ")
            && text(&first).contains("Every app and window that ran on it is gone"),
        "{}",
        text(&first)
    );
    let ready = http.get(server.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200, "{:?}", ready.text().await);
    let r = call(&client, "list_windows", json!({})).await;
    assert!(
        !text(&r).contains("The desktop was restarted"),
        "said once: {}",
        text(&r)
    );
    let titles: Vec<String> = ok(&r)["windows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["title"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(
        !titles.iter().any(|t| t == "before-the-crash"),
        "the old desktop's windows are gone: {titles:?}"
    );
    // What was issued on the old desktop is refused, not applied to the new one.
    let r = call(
        &client,
        "click",
        json!({ "x": 10, "y": 10, "screenshot_id": before_shot }),
    )
    .await;
    assert_eq!(
        harness::error_code(&r),
        "UNKNOWN_SCREENSHOT",
        "{}",
        text(&r)
    );
    // The session's shell kept its environment: what it starts lands on the fresh desktop.
    let window = xterm_from_the_shell(&client, "after-the-crash").await;
    let r = call(&client, "screenshot", json!({ "window_id": window["id"] })).await;
    ok(&r);
    let (w, h, _) = harness::image(&r);
    assert!(w > 100 && h > 100, "{w}x{h}");
    // Mutations work again: the overlay's death went with the old desktop.
    let r = call(
        &client,
        "window",
        json!({ "action": "close", "window_id": window["id"] }),
    )
    .await;
    ok(&r);
    client.cancel().await.ok();
    let status = server.terminate();
    assert!(status.success(), "{status}");
}

/// The MCP Inspector's CLI (`node launcher --cli …`) from `DESKPILOT_INSPECTOR` (its launcher
/// script) and `DESKPILOT_NODE22` (a Node ≥ 22.19), as scripts/test installs them; `None`
/// (with a printed SKIP) without them, a failure under `CI=true`.
fn inspector() -> Option<(String, String)> {
    let node = std::env::var("DESKPILOT_NODE22").ok();
    let cli = std::env::var("DESKPILOT_INSPECTOR").ok();
    match (node, cli) {
        (Some(node), Some(cli)) => Some((node, cli)),
        _ => {
            assert_ne!(
                std::env::var("CI").as_deref(),
                Ok("true"),
                "CI=true: DESKPILOT_NODE22 and DESKPILOT_INSPECTOR must be set (scripts/test installs them)"
            );
            #[allow(clippy::print_stderr, reason = "a skipped test says so")]
            {
                eprintln!("SKIP: the MCP Inspector is not installed (run scripts/test)");
            }
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mcp_inspector_cli_lists_and_calls_tools_over_http() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let Some((node, cli)) = inspector() else {
        return;
    };
    let server = HttpServer::start(desktop, &[], Some(TOKEN));
    let catalog =
        std::env::temp_dir().join(format!("deskpilot-inspector-{}.json", std::process::id()));
    let inspect = |token: &str, args: &[&str]| {
        let mut cmd = tokio::process::Command::new(&node);
        cmd.arg(&cli)
            .args(["--cli", &server.url("/mcp"), "--transport", "http"])
            .args(["--header", &format!("Authorization: Bearer {token}")])
            .args(args)
            .env("MCP_CATALOG_PATH", &catalog)
            .stdin(Stdio::null())
            .kill_on_drop(true);
        async move {
            let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
                .await
                .expect("the Inspector answers within 60 s")
                .expect("run the Inspector");
            (
                out.status,
                String::from_utf8_lossy(&out.stdout).into_owned(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
    };

    let (status, out, err) = inspect(TOKEN, &["--method", "tools/list"]).await;
    assert!(status.success(), "{status}: {out} {err}");
    let listed: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for want in ["screenshot", "list_windows", "shell_exec", "click"] {
        assert!(names.contains(&want), "{want} missing: {names:?}");
    }

    let (status, out, err) = inspect(
        TOKEN,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "shell_exec",
            "--tool-arg",
            "command=echo inspected-$((6*7))",
        ],
    )
    .await;
    assert!(status.success(), "{status}: {out} {err}");
    let called: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(called["isError"], false, "{out}");
    assert_eq!(
        called["structuredContent"]["stdout"]["text"], "inspected-42\n",
        "{out}"
    );

    let (status, out, err) = inspect(
        TOKEN,
        &["--method", "tools/call", "--tool-name", "screenshot"],
    )
    .await;
    assert!(status.success(), "{status}: {out} {err}");
    let shot: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let image = shot["content"]
        .as_array()
        .expect("content")
        .iter()
        .find(|c| c["type"] == "image")
        .unwrap_or_else(|| panic!("no image: {out}"));
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(image["data"].as_str().unwrap())
        .unwrap();
    assert!(bytes.len() > 1000, "{} bytes", bytes.len());
    assert!(shot["structuredContent"]["screenshot_id"].is_u64(), "{out}");

    // A wrong token gets nothing: the Inspector reports that it needs authorization.
    let (_, out, err) = inspect("wrong-token", &["--method", "tools/list"]).await;
    assert!(!out.contains("\"tools\""), "{out}");
    assert!(
        format!("{out}{err}").contains("auth"),
        "the Inspector says why: {out} {err}"
    );
    let _ = std::fs::remove_file(&catalog);
}
