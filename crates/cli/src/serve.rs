//! `deskpilot serve`: MCP over stdio until the client hangs up or a signal arrives.

use std::process::ExitCode;
use std::sync::Arc;

use deskpilot_engine::Engine;
use deskpilot_mcp::{Profile, ServerIdentity, Surface, ToolFilter};
use rmcp::ServiceExt;

use crate::{DesktopArgs, ToolArgs};

/// The profile `tools` names, or an error listing the profiles that exist; its tool filter is
/// checked too (a name that is neither one of its tools nor one of its groups is an error
/// listing them, never a silently wrong tool list).
pub fn profile(tools: &ToolArgs) -> anyhow::Result<&'static Profile> {
    let profile = deskpilot_mcp::profile(&tools.profile)?;
    profile
        .check_filter(&filter(tools))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(profile)
}

/// The tool filter of `--tools` / `DESKPILOT_TOOLS`, `--only` / `DESKTOPOS_TOOLS` (DesktopOS's
/// spelling; allow lists add up) and `--exclude-tools` / `DESKPILOT_TOOLS_EXCLUDE` /
/// `DESKTOPOS_TOOLS_EXCLUDE` (excludes add up and win). Groups and names mix.
pub fn filter(tools: &ToolArgs) -> ToolFilter {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let join = |parts: Vec<Option<String>>| {
        let parts: Vec<String> = parts.into_iter().flatten().collect();
        (!parts.is_empty()).then(|| parts.join(","))
    };
    let only = join(vec![
        tools.tools.clone(),
        tools.only.clone(),
        env("DESKTOPOS_TOOLS"),
    ]);
    let exclude = join(vec![
        tools.exclude_tools.clone(),
        env("DESKTOPOS_TOOLS_EXCLUDE"),
    ]);
    ToolFilter::new(only.as_deref(), exclude.as_deref())
}

/// Builds the engine on `desktop` and a server of `profile` for one client of it.
pub fn server(
    desktop: deskpilot_backend::Desktop,
    profile: &Profile,
    tools: &ToolArgs,
) -> (Arc<Engine>, Surface) {
    let config = crate::config::load(tools.config.as_deref());
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
    if let Some(source) = &config.source {
        tracing::info!(file = %source.display(), masks = config.engine.mask_regions.len(), "configuration read");
    }
    let enabled = config.enabled;
    let engine = Arc::new(Engine::new(desktop, config.engine));
    let identity = ServerIdentity {
        name: env!("CARGO_PKG_NAME").to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let filter = if enabled {
        filter(tools)
    } else {
        tracing::warn!("enabled = false in the configuration: no tools are served");
        ToolFilter::none()
    };
    let surface = (profile.build)(engine.clone(), identity, &filter);
    (engine, surface)
}

pub fn run(desktop: &DesktopArgs, tools: &ToolArgs) -> anyhow::Result<ExitCode> {
    // The virtual display (if any) lives in `_session`, declared before the runtime, so it
    // is torn down after the runtime has stopped.
    let profile = profile(tools)?;
    let (desktop, _session) = crate::platform::connect(desktop)?;
    let (engine, surface) = server(desktop, profile, tools);
    tracing::info!(profile = surface.profile, tools = ?surface.tools, "serving MCP on stdio");
    let runtime = crate::runtime()?;
    let outcome = runtime.block_on(async move {
        let service = surface.service.serve(rmcp::transport::stdio()).await?;
        tokio::select! {
            done = service.waiting() => { done?; tracing::info!("client closed the connection"); }
            signal = crate::platform::shutdown_signal() => tracing::info!(signal, "stopping"),
        }
        anyhow::Ok(())
    });
    // Dropping the server ends its session's shells with everything they started; the
    // overlay goes before the display does, so its end is not taken for a death.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    engine.shutdown();
    outcome.map(|()| ExitCode::SUCCESS)
}
