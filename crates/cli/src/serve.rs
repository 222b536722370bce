//! `deskpilot serve`: MCP over stdio until the client hangs up or a signal arrives.

use std::process::ExitCode;
use std::sync::Arc;

use deskpilot_engine::Engine;
use deskpilot_mcp::{DeskpilotServer, ServerIdentity, ToolFilter};
use rmcp::ServiceExt;

use crate::{DesktopArgs, ToolArgs};

/// Builds the server for `tools` over an engine on `desktop`.
pub fn server(desktop: deskpilot_backend::Desktop, tools: &ToolArgs) -> DeskpilotServer {
    let config = crate::config::load(tools.config.as_deref());
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
    if let Some(source) = &config.source {
        tracing::info!(file = %source.display(), masks = config.engine.mask_regions.len(), "configuration read");
    }
    let engine = Arc::new(Engine::new(desktop, config.engine));
    let identity = ServerIdentity {
        name: env!("CARGO_PKG_NAME").to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let filter = ToolFilter::new(tools.tools.as_deref(), tools.exclude_tools.as_deref());
    DeskpilotServer::new(engine, identity, &filter)
}

pub fn run(desktop: &DesktopArgs, tools: &ToolArgs) -> anyhow::Result<ExitCode> {
    // The virtual display (if any) lives in `_session`, declared before the runtime, so it
    // is torn down after the runtime has stopped.
    let (desktop, _session) = crate::platform::connect(desktop)?;
    let server = server(desktop, tools);
    let stopper = server.clone();
    tracing::info!(tools = ?server.tool_names(), "serving MCP on stdio");
    let runtime = crate::runtime()?;
    let outcome = runtime.block_on(async move {
        let service = server.serve(rmcp::transport::stdio()).await?;
        tokio::select! {
            done = service.waiting() => { done?; tracing::info!("client closed the connection"); }
            signal = shutdown_signal() => tracing::info!(signal, "stopping"),
        }
        anyhow::Ok(())
    });
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    // The overlay goes before the display does, so its end is not taken for a death; shells
    // go with everything they started.
    stopper.shutdown();
    outcome.map(|()| ExitCode::SUCCESS)
}

/// Resolves on SIGINT, SIGTERM or SIGHUP (Unix) or Ctrl-C (elsewhere).
pub async fn shutdown_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            let _ = tokio::signal::ctrl_c().await;
            return "SIGINT";
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => "SIGINT",
            _ = term.recv() => "SIGTERM",
            _ = hup.recv() => "SIGHUP",
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}
