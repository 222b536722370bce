//! The `dsh` profile (dsh-computer-use's surface) through rmcp's client: the screenshot envelope with
//! and without its default outline, `ui_element find` and `invoke` by path on the GTK fixture.
//! Its `call` / `timed` (a tool call with its structured result, a warmed-up series) serve the
//! other MCP rows too.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

use crate::Sample;

pub(crate) type Client = rmcp::service::RunningService<rmcp::RoleClient, ()>;

pub(crate) async fn call(
    client: &Client,
    tool: &'static str,
    args: Value,
) -> anyhow::Result<Value> {
    let Value::Object(map) = args else {
        unreachable!("arguments are objects")
    };
    let r = client
        .call_tool(CallToolRequestParams::new(tool).with_arguments(map))
        .await?;
    anyhow::ensure!(r.is_error != Some(true), "{tool} failed: {:?}", r.content);
    Ok(r.structured_content.unwrap_or_default())
}

pub(crate) async fn timed(
    client: &Client,
    n: usize,
    tool: &'static str,
    args: Value,
) -> anyhow::Result<(Vec<Duration>, Value)> {
    let mut times = Vec::with_capacity(n);
    let mut last = Value::Null;
    call(client, tool, args.clone()).await?; // warm-up
    for _ in 0..n {
        let started = Instant::now();
        last = call(client, tool, args.clone()).await?;
        times.push(started.elapsed());
    }
    Ok((times, last))
}

/// The rows, on the main benchmark's desktop with the GTK fixture (`fixture_pid`) running.
pub async fn run(
    binary: &Path,
    env: Vec<(String, String)>,
    n: usize,
    fixture_pid: u32,
) -> anyhow::Result<Vec<Sample>> {
    let command = tokio::process::Command::new(binary).configure(|cmd| {
        cmd.args(["serve", "--profile", "dsh"])
            .env("DESKPILOT_LOG", "warn")
            .env("DESKPILOT_MEMORY_DIR", crate::bench_memory_dir())
            .env("DESKPILOT_CURSOR", "off")
            .stderr(Stdio::null());
        for (k, v) in &env {
            cmd.env(k, v);
        }
    });
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    let listed = call(&client, "app_window", json!({ "action": "list" })).await?;
    let hwnd = listed["windows"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["pid"] == fixture_pid))
        .map(|w| w["hwnd"].clone())
        .ok_or_else(|| anyhow::anyhow!("the GTK fixture is not listed"))?;
    call(
        &client,
        "app_window",
        json!({ "action": "focus", "hwnd": hwnd }),
    )
    .await?;
    let mut rows = Vec::new();
    let (times, shot) = timed(&client, n, "computer", json!({ "action": "screenshot" })).await?;
    rows.push(Sample {
        name: "dsh computer screenshot (default uiSummary summary)".into(),
        times,
        note: format!(
            "primary display + outline of the GTK fixture in front ({} nodes, source {})",
            shot["ui"]["nodes"], shot["ui"]["source"]
        ),
    });
    let (times, _) = timed(
        &client,
        n,
        "computer",
        json!({ "action": "screenshot", "uiSummary": "none" }),
    )
    .await?;
    rows.push(Sample {
        name: "dsh computer screenshot (uiSummary none)".into(),
        times,
        note: "the envelope without the outline".into(),
    });
    let (times, found) = timed(
        &client,
        n,
        "ui_element",
        json!({ "action": "find", "hwnd": hwnd, "description": "Apply button", "annotate": false }),
    )
    .await?;
    let path = found["candidates"][0]["path"].clone();
    rows.push(Sample {
        name: "dsh ui_element find (description, no image)".into(),
        times,
        note: format!("fresh tree read and ranking; best: path {path}"),
    });
    let (times, _) = timed(
        &client,
        n,
        "ui_element",
        json!({ "action": "invoke", "hwnd": hwnd, "path": path }),
    )
    .await?;
    rows.push(Sample {
        name: "dsh ui_element invoke by path".into(),
        times,
        note: "re-read, place check, the button's own action".into(),
    });
    client.cancel().await?;
    Ok(rows)
}
