//! The browser channel beside playwright-mcp (npm `@playwright/mcp` with Debian's chromium as
//! its executable) and playwright-core's in-process `page.ariaSnapshot({mode: 'ai'})`, on the
//! test fixture page and a news-portal-sized page (`fixtures/web/large.html`): the bytes a model
//! reads for one snapshot, the refs it can act on, snapshot time, click-by-ref time. Every
//! browser is headless and served from a loopback fixture server.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

use crate::Sample;

type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

const INDEX: &str = include_str!("../../../fixtures/web/index.html");
const SECOND: &str = include_str!("../../../fixtures/web/second.html");
const FRAME: &str = include_str!("../../../fixtures/web/frame.html");
const LARGE: &str = include_str!("../../../fixtures/web/large.html");
/// A reference page of 6,000 links with long names, whose browser accessibility tree is over
/// 16 MiB of JSON (as a real API reference's was).
const HUGE: &str = include_str!("../../../fixtures/web/huge.html");
/// The page of the operations beyond click and type (hover, drag, forms, dialogs, logs).
const PARITY: &str = include_str!("../../../fixtures/web/parity.html");
/// Rounds on the huge page: each snapshot takes most of a second for the peers.
const HUGE_ROUNDS: usize = 8;
const CHROMIUM: &str = "/usr/bin/chromium";

/// Serves the fixture pages on a loopback port for the life of the process.
fn site() -> anyhow::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    return;
                }
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':')
                        && k.eq_ignore_ascii_case("content-length")
                    {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut sent = vec![0; length];
                let _ = std::io::Read::read_exact(&mut reader, &mut sent);
                let body = match first.split_whitespace().nth(1).unwrap_or("/") {
                    "/" => INDEX,
                    "/parity" => PARITY,
                    "/api" => "{\"answer\":42}",
                    "/second" => SECOND,
                    "/frame" => FRAME,
                    "/large" => LARGE,
                    "/huge" => HUGE,
                    "/slow" => "slow done",
                    _ => "missing",
                };
                let mut s = &stream;
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    Ok(port)
}

/// The text blocks of a result, joined: what a model reads.
fn text_of(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn call(client: &Client, tool: &str, args: Value) -> anyhow::Result<CallToolResult> {
    let Value::Object(map) = args else {
        unreachable!("arguments are objects")
    };
    let r = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map))
        .await?;
    anyhow::ensure!(r.is_error != Some(true), "{tool} failed: {}", text_of(&r));
    Ok(r)
}

async fn timed(
    client: &Client,
    n: usize,
    tool: &str,
    args: Value,
) -> anyhow::Result<(Vec<Duration>, String)> {
    let mut last = text_of(&call(client, tool, args.clone()).await?); // warm-up
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        last = text_of(&call(client, tool, args.clone()).await?);
        times.push(started.elapsed());
    }
    Ok((times, last))
}

/// The ref on the first line holding `needle`.
fn ref_of(snapshot: &str, needle: &str) -> Option<String> {
    let line = snapshot.lines().find(|l| l.contains(needle))?;
    let at = line.find("[ref=")?;
    Some(line[at + 5..].split(']').next()?.to_string())
}

fn refs_in(text: &str) -> usize {
    text.matches("[ref=").count()
}

/// Controls a person could act on in the large page: its links, buttons and form fields
/// outside hidden menus (counted from the HTML: 402 links, 84 buttons, 6 fields, minus the
/// 80 links of the hidden menu).
fn actionable_in_large() -> usize {
    let hidden = LARGE
        .split("id=\"megamenu\">")
        .nth(1)
        .and_then(|r| r.split("</ul>").next())
        .map_or(0, |m| m.matches("<a ").count());
    LARGE.matches("<a ").count() - hidden
        + LARGE.matches("<button").count()
        + LARGE.matches("<input").count()
        + LARGE.matches("<select").count()
        + LARGE.matches("<textarea").count()
}

fn row(name: &str, times: Vec<Duration>, note: String) -> Sample {
    Sample {
        name: name.into(),
        times,
        note,
    }
}

/// deskpilot's rows, through its own MCP server.
async fn deskpilot(
    binary: &Path,
    env: &[(String, String)],
    port: u16,
    n: usize,
) -> anyhow::Result<Vec<Sample>> {
    let command = tokio::process::Command::new(binary).configure(|cmd| {
        cmd.arg("serve")
            .env("DESKPILOT_LOG", "warn")
            .env("DESKPILOT_MEMORY_DIR", crate::bench_memory_dir())
            .env("DESKPILOT_CURSOR", "off")
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
    });
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    let mut rows = Vec::new();
    call(
        &client,
        "browser_launch",
        json!({ "url": format!("http://127.0.0.1:{port}/"), "headless": true }),
    )
    .await?;
    call(
        &client,
        "browser_wait_for",
        json!({ "text": "Inner button", "timeout_ms": 20000 }),
    )
    .await
    .ok();
    let (times, snap) = timed(&client, n, "browser_snapshot", json!({})).await?;
    rows.push(row(
        "deskpilot browser_snapshot fixture",
        times,
        format!("{} bytes, {} refs", snap.len(), refs_in(&snap)),
    ));
    let add = ref_of(&snap, "button \"Add item\"")
        .ok_or_else(|| anyhow::anyhow!("no Add item ref in:\n{snap}"))?;
    let (times, _) = timed(&client, n, "browser_click", json!({ "ref": add })).await?;
    rows.push(row(
        "deskpilot browser_click by ref",
        times,
        "hit check, real mouse events, change seen".into(),
    ));
    call(
        &client,
        "browser_navigate",
        json!({ "url": format!("http://127.0.0.1:{port}/large") }),
    )
    .await?;
    let (times, snap) = timed(&client, n, "browser_snapshot", json!({})).await?;
    rows.push(row(
        "deskpilot browser_snapshot large page",
        times,
        format!(
            "{} bytes, {} refs for {} actionable controls",
            snap.len(),
            refs_in(&snap),
            actionable_in_large()
        ),
    ));
    call(
        &client,
        "browser_navigate",
        json!({ "url": format!("http://127.0.0.1:{port}/huge") }),
    )
    .await?;
    let rounds = n.min(HUGE_ROUNDS);
    let (times, snap) = timed(&client, rounds, "browser_snapshot", json!({})).await?;
    // What the answer says was cut: "N more line(s) cut by the budget: …".
    let cut = snap
        .lines()
        .find(|l| l.contains("cut by the budget"))
        .and_then(|l| l.split(':').next())
        .map_or("nothing said to be cut".to_string(), str::to_string);
    rows.push(row(
        "deskpilot browser_snapshot huge page (default budget)",
        times,
        format!("{} bytes, {} refs; {cut}", snap.len(), refs_in(&snap)),
    ));
    let (times, snap) = timed(
        &client,
        rounds,
        "browser_snapshot",
        json!({ "max_lines": 100_000 }),
    )
    .await?;
    rows.push(row(
        "deskpilot browser_snapshot huge page (whole)",
        times,
        format!("{} bytes, {} refs", snap.len(), refs_in(&snap)),
    ));
    rows.extend(parity(&client, port, n, Peer::Deskpilot).await?);
    call(&client, "browser_close", json!({})).await?;
    client.cancel().await?;
    Ok(rows)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Peer {
    Deskpilot,
    PlaywrightMcp,
}

/// The operations beyond snapshot and click, on the parity page, as each server names them:
/// (row, tool, arguments) for deskpilot and for playwright-mcp.
async fn parity(client: &Client, port: u16, n: usize, peer: Peer) -> anyhow::Result<Vec<Sample>> {
    let who = match peer {
        Peer::Deskpilot => "deskpilot",
        Peer::PlaywrightMcp => "playwright-mcp",
    };
    call(
        client,
        "browser_navigate",
        json!({ "url": format!("http://127.0.0.1:{port}/parity") }),
    )
    .await?;
    let snap = text_of(&call(client, "browser_snapshot", json!({})).await?);
    let r = |needle: &str| {
        ref_of(&snap, needle).ok_or_else(|| anyhow::anyhow!("no {needle} ref in:\n{snap}"))
    };
    let (hover, card, zone, email, agree, api) = (
        r("button \"Hover me\"")?,
        r("button \"Card\"")?,
        r("button \"Drop zone\"")?,
        r("textbox \"Email\"")?,
        r("checkbox \"Agree\"")?,
        r("button \"Call API\"")?,
    );
    // Some requests for the network rows.
    for _ in 0..3 {
        let args = match peer {
            Peer::Deskpilot => json!({ "ref": api }),
            Peer::PlaywrightMcp => json!({ "element": "Call API", "target": api }),
        };
        call(client, "browser_click", args).await?;
    }
    let ops: Vec<(&str, &str, Value)> = match peer {
        Peer::Deskpilot => vec![
            (
                "hover",
                "browser_click",
                json!({ "ref": hover, "hover": true }),
            ),
            (
                "drag ref to ref",
                "browser_click",
                json!({ "ref": card, "to": zone }),
            ),
            (
                "fill form (text + checkbox)",
                "browser_fill",
                json!({ "fields": [{ "ref": email, "value": "a@example.org" }, { "ref": agree, "value": "true" }] }),
            ),
            (
                "type + diff snapshot",
                "browser_type",
                json!({ "ref": email, "text": "x", "snapshot": "diff" }),
            ),
            ("console messages", "browser_log", json!({})),
            (
                "network requests",
                "browser_log",
                json!({ "kind": "network" }),
            ),
            ("tabs list", "browser_tabs", json!({})),
        ],
        Peer::PlaywrightMcp => vec![
            (
                "hover",
                "browser_hover",
                json!({ "element": "Hover me", "target": hover }),
            ),
            (
                "drag ref to ref",
                "browser_drag",
                json!({ "startElement": "Card", "startTarget": card, "endElement": "Drop zone", "endTarget": zone }),
            ),
            (
                "fill form (text + checkbox)",
                "browser_fill_form",
                json!({ "fields": [
                    { "target": email, "name": "Email", "type": "textbox", "value": "a@example.org" },
                    { "target": agree, "name": "Agree", "type": "checkbox", "value": "true" },
                ] }),
            ),
            (
                "type + diff snapshot",
                "browser_type",
                json!({ "element": "Email", "target": email, "text": "x" }),
            ),
            (
                "console messages",
                "browser_console_messages",
                json!({ "level": "info" }),
            ),
            (
                "network requests",
                "browser_network_requests",
                json!({ "static": false }),
            ),
            ("tabs list", "browser_tabs", json!({ "action": "list" })),
        ],
    };
    let mut rows = Vec::new();
    for (what, tool, args) in ops {
        let (times, answer) = timed(client, n, tool, args).await?;
        rows.push(row(
            &format!("{who} {what}"),
            times,
            format!("{tool}; answers with {} bytes", answer.len()),
        ));
    }
    Ok(rows)
}

/// playwright-mcp's rows, through the same MCP client.
async fn playwright_mcp(node_modules: &Path, port: u16, n: usize) -> anyhow::Result<Vec<Sample>> {
    let cli = node_modules.join("@playwright/mcp/cli.js");
    anyhow::ensure!(cli.is_file(), "{} is missing", cli.display());
    let output = std::env::temp_dir().join(format!("deskpilot-bench-pw-{}", std::process::id()));
    let command = tokio::process::Command::new("node").configure(|cmd| {
        cmd.arg(&cli)
            .args([
                "--headless",
                "--isolated",
                "--no-sandbox",
                "--executable-path",
            ])
            .arg(CHROMIUM)
            .arg("--output-dir")
            .arg(&output)
            .stderr(Stdio::null());
    });
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    let mut rows = Vec::new();
    call(
        &client,
        "browser_navigate",
        json!({ "url": format!("http://127.0.0.1:{port}/") }),
    )
    .await?;
    let (times, snap) = timed(&client, n, "browser_snapshot", json!({})).await?;
    rows.push(row(
        "playwright-mcp browser_snapshot fixture",
        times,
        format!("{} bytes, {} refs", snap.len(), refs_in(&snap)),
    ));
    let add = ref_of(&snap, "button \"Add item\"")
        .ok_or_else(|| anyhow::anyhow!("no Add item ref in:\n{snap}"))?;
    let (times, answer) = timed(
        &client,
        n,
        "browser_click",
        json!({ "element": "Add item button", "target": add }),
    )
    .await?;
    rows.push(row(
        "playwright-mcp browser_click by ref",
        times,
        format!("answers with {} bytes", answer.len()),
    ));
    call(
        &client,
        "browser_navigate",
        json!({ "url": format!("http://127.0.0.1:{port}/large") }),
    )
    .await?;
    let (times, snap) = timed(&client, n, "browser_snapshot", json!({})).await?;
    rows.push(row(
        "playwright-mcp browser_snapshot large page",
        times,
        format!("{} bytes, {} refs", snap.len(), refs_in(&snap)),
    ));
    call(
        &client,
        "browser_navigate",
        json!({ "url": format!("http://127.0.0.1:{port}/huge") }),
    )
    .await?;
    let (times, snap) = timed(&client, n.min(HUGE_ROUNDS), "browser_snapshot", json!({})).await?;
    rows.push(row(
        "playwright-mcp browser_snapshot huge page",
        times,
        format!("{} bytes, {} refs", snap.len(), refs_in(&snap)),
    ));
    rows.extend(parity(&client, port, n, Peer::PlaywrightMcp).await?);
    let _ = call(&client, "browser_close", json!({})).await;
    client.cancel().await?;
    let _ = std::fs::remove_dir_all(&output);
    Ok(rows)
}

/// playwright-core in-process: `page.ariaSnapshot({mode: 'ai'})` timed by a node script.
fn aria_snapshot(
    node_modules: &Path,
    url: &str,
    n: usize,
) -> anyhow::Result<(Vec<Duration>, usize, usize)> {
    let script = format!(
        "const {{ chromium }} = require({core:?});
(async () => {{
  const browser = await chromium.launch({{ executablePath: {exe:?}, headless: true, args: ['--no-sandbox'] }});
  const page = await browser.newPage();
  await page.goto({url:?});
  let text = await page.ariaSnapshot({{ mode: 'ai' }});
  const times = [];
  for (let i = 0; i < {n}; i++) {{
    const t = process.hrtime.bigint();
    text = await page.ariaSnapshot({{ mode: 'ai' }});
    times.push(Number(process.hrtime.bigint() - t) / 1e9);
  }}
  console.log(JSON.stringify({{ times, bytes: Buffer.byteLength(text), refs: (text.match(/\\[ref=/g) || []).length }}));
  await browser.close();
}})().catch(e => {{ console.error(e); process.exit(1); }});",
        core = node_modules.join("playwright-core").display().to_string(),
        exe = CHROMIUM,
    );
    let out = std::process::Command::new("node")
        .arg("-e")
        .arg(script)
        .stderr(Stdio::piped())
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "node: {}",
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    let v: Value = serde_json::from_slice(&out.stdout)?;
    let times = v["times"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(Value::as_f64)
                .map(Duration::from_secs_f64)
                .collect()
        })
        .unwrap_or_default();
    Ok((
        times,
        v["bytes"].as_u64().unwrap_or(0) as usize,
        v["refs"].as_u64().unwrap_or(0) as usize,
    ))
}

/// Every browser row; a peer that cannot run is a row saying why.
pub async fn run(
    binary: &Path,
    env: Vec<(String, String)>,
    n: usize,
    node_modules: Option<PathBuf>,
) -> Vec<Sample> {
    if !Path::new(CHROMIUM).exists() {
        return vec![row(
            "deskpilot browser_snapshot",
            Vec::new(),
            "skipped: chromium is not installed (scripts/install-deps bench)".into(),
        )];
    }
    let port = match site() {
        Ok(p) => p,
        Err(e) => {
            return vec![row(
                "browser fixture site",
                Vec::new(),
                format!("failed: {e}"),
            )];
        }
    };
    let mut rows = match deskpilot(binary, &env, port, n).await {
        Ok(r) => r,
        Err(e) => vec![row(
            "deskpilot browser channel",
            Vec::new(),
            format!("failed: {e:#}"),
        )],
    };
    let Some(modules) = node_modules.and_then(|m| m.canonicalize().ok()) else {
        rows.push(row(
            "playwright-mcp",
            Vec::new(),
            "missing: no --node-modules directory (scripts/bench installs @playwright/mcp)".into(),
        ));
        return rows;
    };
    match playwright_mcp(&modules, port, n).await {
        Ok(r) => rows.extend(r),
        Err(e) => rows.push(row("playwright-mcp", Vec::new(), format!("failed: {e:#}"))),
    }
    for (name, path, rounds) in [
        ("playwright-core ariaSnapshot ai fixture", "/", n),
        ("playwright-core ariaSnapshot ai large page", "/large", n),
        (
            "playwright-core ariaSnapshot ai huge page",
            "/huge",
            n.min(HUGE_ROUNDS),
        ),
    ] {
        let url = format!("http://127.0.0.1:{port}{path}");
        rows.push(match aria_snapshot(&modules, &url, rounds) {
            Ok((times, bytes, refs)) => row(
                name,
                times,
                format!("in-process, no MCP; {bytes} bytes, {refs} refs"),
            ),
            Err(e) => row(name, Vec::new(), format!("failed: {e:#}")),
        });
    }
    rows
}
