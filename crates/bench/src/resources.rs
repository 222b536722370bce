//! Screenshots as resources, through rmcp's client on the GTK fixture: the bytes a ten-step
//! task puts in the model's context with images inline (the default) and as `resource_link`s
//! (`serve --images link`), the same steps and so the same screenshots; and the round trip of
//! `resources/read` for a screenshot beside the `screenshot` call that made it.
//!
//! "Bytes in context" is the JSON of every result's `content` (what a host hands the model;
//! `structuredContent` is the same for both and left out). With links, a host that shows the
//! model one image after all (the last) adds that read's bytes; reading every link back would
//! add the inline images again.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ReadResourceRequestParams};
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

use crate::Sample;
use crate::dsh::Client;

/// A `deskpilot` server with `images` (`inline` or `link`).
async fn connect(binary: &Path, env: &[(String, String)], images: &str) -> anyhow::Result<Client> {
    let command = tokio::process::Command::new(binary).configure(|cmd| {
        cmd.args(["serve", "--images", images])
            .env("DESKPILOT_LOG", "warn")
            .env("DESKPILOT_MEMORY_DIR", crate::bench_memory_dir())
            .env("DESKPILOT_CURSOR", "off")
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
    });
    Ok(().serve(TokioChildProcess::new(command)?).await?)
}

async fn call(client: &Client, tool: &str, args: Value) -> anyhow::Result<CallToolResult> {
    let Value::Object(map) = args else {
        unreachable!("arguments are objects")
    };
    let r = client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map))
        .await?;
    anyhow::ensure!(r.is_error != Some(true), "{tool} failed: {:?}", r.content);
    Ok(r)
}

/// The ten steps: looks at the fixture's window and acts on it, eight of them with an image.
fn steps(window: &Value) -> Vec<(&'static str, Value)> {
    let w = window.clone();
    vec![
        ("screenshot", json!({ "window_id": w })),
        ("get_window_state", json!({ "window_id": w })),
        ("move_cursor", json!({ "x": 20, "y": 20, "observe": true })),
        (
            "zoom",
            json!({ "x": 0, "y": 0, "width": 200, "height": 120 }),
        ),
        ("list_windows", json!({})),
        ("screenshot", json!({ "window_id": w, "compare": true })),
        ("move_cursor", json!({ "x": 40, "y": 60, "observe": true })),
        (
            "get_window_state",
            json!({ "window_id": w, "include_screenshot": false }),
        ),
        ("screenshot", json!({})),
        ("screenshot", json!({ "window_id": w })),
    ]
}

/// The JSON bytes of a result's content.
fn content_bytes(r: &CallToolResult) -> usize {
    serde_json::to_string(&r.content).map_or(0, |s| s.len())
}

/// The resource links of a result.
fn links(r: &CallToolResult) -> Vec<String> {
    r.content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::ResourceLink(l) => Some(l.uri.clone()),
            _ => None,
        })
        .collect()
}

/// One run of the task: its wall time, the content bytes, the images inlined and the links.
async fn task(
    client: &Client,
    window: &Value,
) -> anyhow::Result<(Duration, usize, usize, Vec<String>)> {
    let started = Instant::now();
    let (mut bytes, mut images, mut linked) = (0, 0, Vec::new());
    for (tool, args) in steps(window) {
        let r = call(client, tool, args).await?;
        bytes += content_bytes(&r);
        images += r.content.iter().filter(|c| c.as_image().is_some()).count();
        linked.extend(links(&r));
    }
    Ok((started.elapsed(), bytes, images, linked))
}

async fn read_bytes(client: &Client, uri: &str) -> anyhow::Result<usize> {
    let r = client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await?;
    Ok(serde_json::to_string(&r.contents)?.len())
}

fn kb(bytes: usize) -> String {
    format!("{:.1} KB", bytes as f64 / 1024.0)
}

/// The rows, on the main benchmark's desktop with the GTK fixture (`fixture_pid`) running.
pub async fn run(
    binary: &Path,
    env: Vec<(String, String)>,
    n: usize,
    fixture_pid: u32,
) -> anyhow::Result<Vec<Sample>> {
    let runs = n.clamp(1, 10);
    let inline = connect(binary, &env, "inline").await?;
    let linked = connect(binary, &env, "link").await?;
    let listed = crate::dsh::call(&inline, "list_windows", json!({})).await?;
    let window = listed["windows"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["pid"] == fixture_pid))
        .map(|w| w["id"].clone())
        .ok_or_else(|| anyhow::anyhow!("the GTK fixture is not listed"))?;
    let mut rows = Vec::new();

    let (mut inline_times, mut linked_times) = (Vec::new(), Vec::new());
    let (mut inline_bytes, mut inline_images) = (0, 0);
    let (mut linked_bytes, mut linked_uris) = (0, Vec::new());
    task(&inline, &window).await?; // warm-up
    task(&linked, &window).await?;
    for _ in 0..runs {
        let (t, bytes, images, _) = task(&inline, &window).await?;
        inline_times.push(t);
        (inline_bytes, inline_images) = (bytes, images);
        let (t, bytes, _, uris) = task(&linked, &window).await?;
        linked_times.push(t);
        (linked_bytes, linked_uris) = (bytes, uris);
    }
    let last = match linked_uris.last() {
        Some(uri) => read_bytes(&linked, uri).await?,
        None => 0,
    };
    let mut every = 0;
    for uri in &linked_uris {
        every += read_bytes(&linked, uri).await?;
    }
    rows.push(Sample {
        name: "deskpilot ten-step task, images inline".into(),
        times: inline_times,
        note: format!(
            "{} in context ({inline_images} images in 10 results)",
            kb(inline_bytes)
        ),
    });
    rows.push(Sample {
        name: "deskpilot ten-step task, images as links".into(),
        times: linked_times,
        note: format!(
            "{} in context ({:.1} % of inline; {} links), {} with the last image read back, \
             {} reading every link",
            kb(linked_bytes),
            100.0 * linked_bytes as f64 / inline_bytes.max(1) as f64,
            linked_uris.len(),
            kb(linked_bytes + last),
            kb(linked_bytes + every)
        ),
    });

    // The round trip of reading a screenshot beside the call that made it.
    let args = json!({ "window_id": window });
    let (mut shots, mut reads) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut size = 0;
    for i in 0..=n {
        let started = Instant::now();
        let r = call(&linked, "screenshot", args.clone()).await?;
        let shot = started.elapsed();
        let uri = links(&r)
            .pop()
            .ok_or_else(|| anyhow::anyhow!("no resource link in a screenshot answer"))?;
        let started = Instant::now();
        size = read_bytes(&linked, &uri).await?;
        let read = started.elapsed();
        if i > 0 {
            // The first of each is a warm-up.
            shots.push(shot);
            reads.push(read);
        }
    }
    rows.push(Sample {
        name: "deskpilot screenshot (link) of the fixture".into(),
        times: shots,
        note: "the call that makes the image: capture, encode, keep, link".into(),
    });
    rows.push(Sample {
        name: "deskpilot resources/read of that screenshot".into(),
        times: reads,
        note: format!("{} read (image + geometry JSON)", kb(size)),
    });
    inline.cancel().await?;
    linked.cancel().await?;
    Ok(rows)
}
