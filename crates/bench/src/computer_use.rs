//! The `computer-use` profile (computer-use-mcp's surface) through rmcp's client, on the GTK
//! fixture: `get_window_state` with and without its screenshot, and `click` by `element_index`
//! (a re-read of the window, the foreground check and a real click).

use std::path::Path;
use std::process::Stdio;

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::json;

use crate::Sample;
use crate::dsh::{call, timed};

/// The rows, on the main benchmark's desktop with the GTK fixture (`fixture_pid`) running.
pub async fn run(
    binary: &Path,
    env: Vec<(String, String)>,
    n: usize,
    fixture_pid: u32,
) -> anyhow::Result<Vec<Sample>> {
    let command = tokio::process::Command::new(binary).configure(|cmd| {
        cmd.args(["serve", "--profile", "computer-use"])
            .env("DESKPILOT_LOG", "warn")
            .env("DESKPILOT_MEMORY_DIR", crate::bench_memory_dir())
            .env("DESKPILOT_CURSOR", "off")
            .stderr(Stdio::null());
        for (k, v) in &env {
            cmd.env(k, v);
        }
    });
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    let listed = call(&client, "list_windows", json!({})).await?;
    let id = listed["windows"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["pid"] == fixture_pid))
        .map(|w| w["window_id"].clone())
        .ok_or_else(|| anyhow::anyhow!("the GTK fixture is not listed"))?;
    let window = json!({ "window_id": id });
    let mut rows = Vec::new();
    let (times, state) = timed(&client, n, "get_window_state", window.clone()).await?;
    let elements = state["elements"].as_array().cloned().unwrap_or_default();
    rows.push(Sample {
        name: "computer-use get_window_state (tree + screenshot)".into(),
        times,
        note: format!(
            "GTK fixture: {} indexed elements, {}x{} screenshot",
            elements.len(),
            state["screenshot"]["width"],
            state["screenshot"]["height"]
        ),
    });
    let (times, _) = timed(
        &client,
        n,
        "get_window_state",
        json!({ "window_id": id, "include_screenshot": false }),
    )
    .await?;
    rows.push(Sample {
        name: "computer-use get_window_state (tree only)".into(),
        times,
        note: "include_screenshot false".into(),
    });
    let apply = elements
        .iter()
        .find(|e| e["control_type"] == "Button" && e["name"] == "Apply")
        .map(|e| e["index"].clone())
        .ok_or_else(|| anyhow::anyhow!("no Apply button in the fixture's state"))?;
    let (times, _) = timed(
        &client,
        n,
        "click",
        json!({ "window_id": id, "element_index": apply }),
    )
    .await?;
    rows.push(Sample {
        name: "computer-use click by element_index".into(),
        times,
        note: "re-read (snapshot kept), foreground, hit test, pointer click on Apply".into(),
    });
    client.cancel().await?;
    Ok(rows)
}
