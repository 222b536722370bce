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

use crate::{DesktopArgs, ToolArgs};

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
    let (_engine, surface) = crate::serve::server(desktop, profile, tools);
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
        hand_over_clipboard(&text);
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

/// This process is about to exit, and with it the clipboard it owns: a detached
/// `deskpilot __hold-clipboard` takes the text over and keeps it pasteable until something
/// else is copied (what `xclip` does by forking).
fn hand_over_clipboard(text: &str) {
    #[cfg(target_os = "linux")]
    {
        use std::io::{BufRead as _, Write as _};
        use std::os::unix::process::CommandExt as _;
        use std::process::{Command, Stdio};
        let Ok(exe) = std::env::current_exe() else {
            return;
        };
        let spawned = Command::new(exe)
            .arg("__hold-clipboard")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!("the clipboard is lost when this command exits: {e}");
                return;
            }
        };
        if let Some(mut stdin) = child.stdin.take() {
            let _ = stdin.write_all(text.as_bytes());
        }
        // Wait for "held" so the text is pasteable the moment this command returns.
        let mut line = String::new();
        if let Some(stdout) = child.stdout.take() {
            let _ = std::io::BufReader::new(stdout).read_line(&mut line);
        }
        if line.trim() != "held" {
            tracing::warn!(
                "the clipboard could not be handed over; it is lost when this command exits"
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = text;
}

/// `deskpilot __hold-clipboard`: owns the clipboard with stdin's text until replaced.
pub fn hold_clipboard() -> anyhow::Result<ExitCode> {
    #[cfg(target_os = "linux")]
    {
        use std::io::Read as _;
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        let display = std::env::var("DISPLAY").unwrap_or_default();
        deskpilot_x11::hold_clipboard(&display, &text, || {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "held");
            let _ = out.flush();
        })?;
        Ok(ExitCode::SUCCESS)
    }
    #[cfg(not(target_os = "linux"))]
    anyhow::bail!("only X11 needs a clipboard holder")
}
