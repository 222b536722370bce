//! `deskpilot call <tool> '<json>'`: one tool call through the real MCP path.
//!
//! The call goes through an in-process MCP client and server joined by a pipe, so filtering,
//! argument validation and rendering are exactly what an agent gets. The result is printed
//! as JSON with image data replaced by its size (use `--save-image` to keep the pixels).

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use base64::Engine as _;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;

use crate::args::{DesktopArgs, ToolArgs};

pub fn run(
    tool: &str,
    arguments: &str,
    save_image: Option<&Path>,
    desktop: &DesktopArgs,
    tools: &ToolArgs,
) -> anyhow::Result<ExitCode> {
    let arguments: serde_json::Value = serde_json::from_str(arguments)
        .with_context(|| format!("arguments are not JSON: {arguments}"))?;
    let serde_json::Value::Object(arguments) = arguments else {
        anyhow::bail!("arguments must be a JSON object, e.g. '{{\"filter\": \"xterm\"}}'");
    };
    let clipboard_text = (tool == "clipboard_write")
        .then(|| {
            arguments
                .get("text")
                .and_then(|t| t.as_str())
                .map(str::to_string)
        })
        .flatten();
    let virtual_display = desktop.virtual_display.is_some();
    let profile = crate::serve::profile(tools)?;
    let (desktop, _session) = crate::platform::connect(desktop)?;
    let (_engine, surface) = crate::serve::server(desktop, profile, tools)?;
    let server = surface.service;
    let runtime = crate::runtime()?;
    let result = runtime.block_on(async move {
        let (server_end, client_end) = tokio::io::duplex(1 << 20);
        let serving = tokio::spawn(async move {
            if let Ok(service) = server.serve(server_end).await {
                let _ = service.waiting().await;
            }
        });
        let client =
            ().serve(client_end)
                .await
                .context("MCP handshake with the in-process server")?;
        let result = client
            .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments))
            .await
            .with_context(|| format!("calling {tool}"))?;
        client.cancel().await.ok();
        serving.abort();
        anyhow::Ok(result)
    });
    let result = result?;

    let mut json = serde_json::to_value(&result)?;
    if let Some(content) = json.get_mut("content").and_then(|c| c.as_array_mut()) {
        let mut saved = false;
        for block in content {
            let Some(data) = block
                .get("data")
                .and_then(|d| d.as_str())
                .map(str::to_string)
            else {
                continue;
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&data)
                .context("image data is not base64")?;
            block["data"] = serde_json::Value::from(format!("<{} bytes>", bytes.len()));
            if let (Some(path), false) = (save_image, saved) {
                std::fs::write(path, &bytes)
                    .with_context(|| format!("writing {}", path.display()))?;
                block["savedTo"] = serde_json::Value::from(path.display().to_string());
                saved = true;
            }
        }
    }
    if let (Some(text), false, false) = (
        clipboard_text,
        result.is_error == Some(true),
        virtual_display,
    ) {
        crate::platform::hand_over_clipboard(&text);
    }
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, &json)?;
    writeln!(out)?;
    Ok(if result.is_error == Some(true) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
