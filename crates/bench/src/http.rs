//! `serve --http` under load, beside the same calls over stdio: one client over each transport
//! calling a mixed round (window screenshot, list_windows, the GTK fixture's tree, a click on
//! its "Apply" by token, `shell_exec echo x`) in turn, then `clients` HTTP clients at once,
//! `calls` mixed calls each. The load must end with no error, and with every client's
//! screenshot ids and element tokens its own: each client finally presents another's
//! screenshot id, which must be refused as `FOREIGN_REFERENCE`. A soak of many mixed calls on
//! each transport states the server's RSS, open descriptors and threads at 0, half way and the
//! end.

use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt as _;

use crate::Sample;
use crate::dsh::{Client, call};

const TOKEN: &str = "bench-token-7f3a";

/// One mixed call: which tool, with what, for the round's `i`.
fn mixed(i: usize, window: &Value, token: &Value) -> (&'static str, Value) {
    match i % 5 {
        0 => ("screenshot", json!({ "window_id": window })),
        1 => ("list_windows", json!({})),
        2 => (
            "get_window_state",
            json!({ "window_id": window, "include_screenshot": false }),
        ),
        3 => ("click", json!({ "element": token })),
        _ => ("shell_exec", json!({ "command": "echo x" })),
    }
}

/// The fixture's window id and its Apply button's token, as `client` sees them.
async fn aim(client: &Client, fixture_pid: u32) -> anyhow::Result<(Value, Value)> {
    let listed = call(client, "list_windows", json!({})).await?;
    let window = listed["windows"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["pid"] == fixture_pid))
        .map(|w| w["id"].clone())
        .ok_or_else(|| anyhow::anyhow!("the GTK fixture is not listed"))?;
    let state = call(
        client,
        "get_window_state",
        json!({ "window_id": window, "include_screenshot": false }),
    )
    .await?;
    let token = state["elements"]
        .as_array()
        .and_then(|e| {
            e.iter()
                .find(|e| e["role"] == "Button" && e["name"] == "Apply")
        })
        .map(|e| e["token"].clone())
        .ok_or_else(|| anyhow::anyhow!("no Apply button in the fixture's state"))?;
    Ok((window, token))
}

/// `rounds` mixed rounds, each call timed.
async fn rounds(
    client: &Client,
    fixture_pid: u32,
    calls: usize,
) -> anyhow::Result<(Vec<Duration>, Vec<u64>)> {
    let (window, token) = aim(client, fixture_pid).await?;
    let mut times = Vec::with_capacity(calls);
    let mut shots = Vec::new();
    for i in 0..calls {
        let (tool, args) = mixed(i, &window, &token);
        let started = Instant::now();
        let v = call(client, tool, args).await?;
        times.push(started.elapsed());
        if let Some(id) = v["screenshot_id"].as_u64() {
            shots.push(id);
        }
    }
    Ok((times, shots))
}

/// RSS (kB), open file descriptors and threads of process `pid`, from /proc.
fn footprint(pid: u32) -> String {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().trim_end_matches(" kB").to_string())
            .unwrap_or_else(|| "?".to_string())
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    format!(
        "RSS {} kB, {fds} fds, {} threads",
        field("VmRSS:"),
        field("Threads:")
    )
}

/// `calls` mixed calls on `client` (server `pid`): the footprint at 0, half way and the end.
async fn soak(
    client: &Client,
    pid: u32,
    fixture_pid: u32,
    calls: usize,
) -> anyhow::Result<(Vec<Duration>, String)> {
    let (window, token) = aim(client, fixture_pid).await?;
    let mut marks = vec![format!("0: {}", footprint(pid))];
    let mut times = Vec::with_capacity(calls);
    for i in 0..calls {
        let (tool, args) = mixed(i, &window, &token);
        let started = Instant::now();
        call(client, tool, args).await?;
        times.push(started.elapsed());
        if i + 1 == calls / 2 || i + 1 == calls {
            marks.push(format!("{}: {}", i + 1, footprint(pid)));
        }
    }
    Ok((times, marks.join("; ")))
}

/// A `serve --http` on loopback and its URL.
struct Served {
    child: tokio::process::Child,
    url: String,
}

async fn start(binary: &Path, env: &[(String, String)]) -> anyhow::Result<Served> {
    let mut cmd = tokio::process::Command::new(binary);
    cmd.args(["serve", "--http", "127.0.0.1:0", "--max-sessions", "64"])
        .env("DESKPILOT_LOG", "info")
        .env("DESKPILOT_TOKEN", TOKEN)
        .env("DESKPILOT_MEMORY_DIR", crate::bench_memory_dir())
        .env("DESKPILOT_CURSOR", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn()?;
    let err = child.stderr.take().expect("piped stderr");
    let mut lines = tokio::io::BufReader::new(err).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some((_, url)) = line.split_once(" at ")
                && url.ends_with("/mcp")
            {
                return Some(url.to_string());
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
    .ok_or_else(|| anyhow::anyhow!("serve --http printed no address"))?;
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    Ok(Served { child, url })
}

async fn http_client(url: &str) -> anyhow::Result<Client> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string()).auth_header(TOKEN);
    Ok(
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await?,
    )
}

/// The rows, on the main benchmark's desktop with the GTK fixture (`fixture_pid`) running.
pub async fn run(
    binary: &Path,
    env: Vec<(String, String)>,
    n: usize,
    fixture_pid: u32,
    clients: usize,
    calls: usize,
    soak_calls: usize,
) -> anyhow::Result<Vec<Sample>> {
    let mut rows = Vec::new();
    // One client over stdio, then one over HTTP: the transport's own cost.
    let command = tokio::process::Command::new(binary).configure(|cmd| {
        cmd.args(["serve"])
            .env("DESKPILOT_LOG", "warn")
            .env("DESKPILOT_MEMORY_DIR", crate::bench_memory_dir())
            .env("DESKPILOT_CURSOR", "off")
            .stderr(Stdio::null());
        for (k, v) in &env {
            cmd.env(k, v);
        }
    });
    let child = TokioChildProcess::new(command)?;
    let stdio_pid = child.id().unwrap_or_default();
    let stdio = ().serve(child).await?;
    let (times, _) = rounds(&stdio, fixture_pid, n.max(5)).await?;
    rows.push(Sample {
        name: "deskpilot mixed calls over stdio, one client".into(),
        times,
        note: "window screenshot, list_windows, tree, click by token, shell_exec in turn".into(),
    });
    let (times, marks) = soak(&stdio, stdio_pid, fixture_pid, soak_calls).await?;
    rows.push(Sample {
        name: format!("deskpilot soak over stdio: {soak_calls} calls"),
        times,
        note: marks,
    });
    stdio.cancel().await?;

    let mut served = start(binary, &env).await?;
    let one = http_client(&served.url).await?;
    let (times, _) = rounds(&one, fixture_pid, n.max(5)).await?;
    rows.push(Sample {
        name: "deskpilot mixed calls over HTTP, one client".into(),
        times,
        note: "the same calls through rmcp's Streamable HTTP client, bearer token, loopback".into(),
    });
    one.cancel().await?;

    let one = http_client(&served.url).await?;
    let http_pid = served.child.id().unwrap_or_default();
    let (times, marks) = soak(&one, http_pid, fixture_pid, soak_calls).await?;
    rows.push(Sample {
        name: format!("deskpilot soak over HTTP: {soak_calls} calls"),
        times,
        note: marks,
    });
    one.cancel().await?;

    // The load: every client at once.
    let mut sessions = Vec::with_capacity(clients);
    for _ in 0..clients {
        sessions.push(Arc::new(http_client(&served.url).await?));
    }
    let started = Instant::now();
    let mut tasks = Vec::new();
    for client in &sessions {
        let client = client.clone();
        tasks.push(tokio::spawn(async move {
            rounds(&client, fixture_pid, calls).await
        }));
    }
    let mut times = Vec::new();
    let mut shots: Vec<Vec<u64>> = Vec::new();
    let mut errors = Vec::new();
    for t in tasks {
        match t.await? {
            Ok((t, s)) => {
                times.extend(t);
                shots.push(s);
            }
            Err(e) => errors.push(format!("{e:#}")),
        }
    }
    let wall = started.elapsed();
    // No leak: ids are each client's own, and another's is refused.
    let mut seen = std::collections::HashSet::new();
    let shared = shots
        .iter()
        .flatten()
        .filter(|id| !seen.insert(**id))
        .count();
    let refused = Mutex::new(0usize);
    for (i, client) in sessions.iter().enumerate() {
        let Some(other) = shots
            .get((i + 1) % shots.len().max(1))
            .and_then(|s| s.first())
        else {
            continue;
        };
        let r = client
            .call_tool(
                CallToolRequestParams::new("click").with_arguments(
                    json!({ "x": 1, "y": 1, "screenshot_id": other })
                        .as_object()
                        .cloned()
                        .unwrap_or_default(),
                ),
            )
            .await?;
        let code = r
            .structured_content
            .as_ref()
            .and_then(|s| s["error"]["code"].as_str())
            .unwrap_or_default()
            .to_string();
        if code == "FOREIGN_REFERENCE" {
            *refused.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        }
    }
    let refused = refused.into_inner().unwrap_or_else(|e| e.into_inner());
    let total = times.len();
    rows.push(Sample {
        name: format!("deskpilot HTTP load: {clients} clients x {calls} calls"),
        times,
        note: format!(
            "{total} calls in {:.1} s ({:.0}/s); errors {}{}; shared screenshot ids {shared}; foreign ids refused {refused}/{}",
            wall.as_secs_f64(),
            total as f64 / wall.as_secs_f64().max(1e-9),
            errors.len(),
            errors.first().map(|e| format!(" (first: {e})")).unwrap_or_default(),
            sessions.len()
        ),
    });
    for client in sessions {
        if let Ok(c) = Arc::try_unwrap(client) {
            let _ = c.cancel().await;
        }
    }
    let _ = served.child.start_kill();
    let _ = served.child.wait().await;
    Ok(rows)
}
