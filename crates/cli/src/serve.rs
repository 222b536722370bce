//! `deskpilot serve`: MCP over stdio until the client hangs up or a signal arrives.

use std::process::ExitCode;
use std::sync::Arc;

use deskpilot_engine::Engine;
use deskpilot_mcp::{Profile, ServerIdentity, Surface, ToolFilter};
use rmcp::ServiceExt;

use crate::args::{DesktopArgs, ToolArgs};

/// The profile `tools` names, or an error listing the profiles that exist; its tool filter is
/// checked too (a name that is neither one of its tools nor one of its groups is an error
/// listing them, never a silently wrong tool list).
pub fn profile(tools: &ToolArgs) -> anyhow::Result<&'static Profile> {
    let profile = deskpilot_mcp::profile(&tools.profile)?;
    secrets_preflight(tools)?;
    profile
        .check_filter(&filter(tools))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(profile)
}

/// Reads the secrets file once before any desktop comes up, so a file others can read (or
/// a value too short to scrub) stops the start at once with its reason.
fn secrets_preflight(tools: &ToolArgs) -> anyhow::Result<()> {
    let mut settings = crate::config::load(tools.config.as_deref()).engine.secrets;
    if let Some(file) = &tools.secrets {
        settings.file = Some(file.clone());
    }
    if settings.file.is_none() {
        return Ok(());
    }
    settings.keyring = false;
    deskpilot_engine::secrets::SecretStore::new(settings)
        .load(Vec::new())
        .map(|_| ())
        .map_err(|e| anyhow::anyhow!("{}: {e}", e.code()))
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

/// Builds the engine on `desktop` with the deployment's configuration, and the identity and
/// tool filter every server of it gets.
pub fn engine(
    desktop: deskpilot_backend::Desktop,
    tools: &ToolArgs,
) -> anyhow::Result<(Arc<Engine>, ServerIdentity, ToolFilter)> {
    let mut config = crate::config::load(tools.config.as_deref());
    if let Some(images) = tools.images {
        config.engine.images.links = images == crate::args::Images::Link;
    }
    if let Some(file) = &tools.secrets {
        config.engine.secrets.file = Some(file.clone());
    }
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
    if let Some(source) = &config.source {
        tracing::info!(file = %source.display(), masks = config.engine.mask_regions.len(), "configuration read");
    }
    let enabled = config.enabled;
    let engine = Arc::new(Engine::new(desktop, config.engine));
    // A secret that cannot be protected stops the start: nobody should believe it is.
    let loaded = engine
        .secrets()
        .load(crate::config::take_env_secrets())
        .map_err(|e| anyhow::anyhow!("{}: {e}", e.code()))?;
    if loaded > 0 {
        tracing::info!(secrets = loaded, "secrets loaded");
    }
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
    Ok((engine, identity, filter))
}

/// Builds the engine on `desktop` and a server of `profile` for one client of it.
pub fn server(
    desktop: deskpilot_backend::Desktop,
    profile: &Profile,
    tools: &ToolArgs,
) -> anyhow::Result<(Arc<Engine>, Surface)> {
    let (engine, identity, filter) = engine(desktop, tools)?;
    let surface = (profile.build)(engine.clone(), identity, &filter);
    Ok((engine, surface))
}

/// `serve --check`: reaches the desktop the server would drive and prints, one line each, the
/// backend, a ping (monitors and window list read back), the targetable windows (shown, not
/// minimized) and whether the active window's accessibility tree reads — computer-use-mcp's
/// `--check`. Exits 1 when the desktop cannot be reached. Nothing is cached, so
/// `CU_HELPER_CACHE_DIR` is accepted and unused (said when set).
pub fn check(desktop: &DesktopArgs, tools: &ToolArgs) -> anyhow::Result<ExitCode> {
    use std::io::Write as _;
    let profile = profile(tools)?;
    let (desktop, _session) = crate::platform::connect(desktop)?;
    let info = desktop.info.clone();
    let (engine, _surface) = server(desktop, profile, tools)?;
    let session = deskpilot_engine::Session::new(engine.clone());
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "backend: {} on {} (capture {}{})",
        info.platform,
        info.display,
        info.capture_method,
        info.window_manager
            .as_deref()
            .map(|wm| format!(", window manager {wm}"))
            .unwrap_or_default()
    )?;
    let started = std::time::Instant::now();
    let status = match session.status() {
        Ok(s) => s,
        Err(e) => {
            writeln!(out, "ping: failed ({}: {e})", e.code())?;
            writeln!(out, "targetable windows: 0")?;
            engine.shutdown();
            return Ok(ExitCode::FAILURE);
        }
    };
    writeln!(
        out,
        "ping: ok ({:.1} ms; {} monitor(s), desktop {})",
        started.elapsed().as_secs_f64() * 1e3,
        status.monitors.len(),
        status.desktop
    )?;
    let windows = session.list_windows(&deskpilot_engine::WindowFilter::default())?;
    let targetable = windows
        .iter()
        .filter(|w| {
            w.state.visible && !w.state.minimized && w.frame.width > 2 && w.frame.height > 2
        })
        .count();
    writeln!(out, "targetable windows: {targetable}")?;
    match &status.active_window {
        Some(w) => {
            let mut request =
                deskpilot_engine::TreeRequest::new(deskpilot_engine::WindowRef::Id(w.id));
            request.include_screenshot = false;
            request.max_elements = 200;
            request.max_chars = 1;
            match session.window_state(&request) {
                Ok(s) if !s.elements.is_empty() => writeln!(
                    out,
                    "accessibility: ok ({} elements of the active window \"{}\" from {})",
                    s.elements.len(),
                    w.title,
                    s.source
                )?,
                Ok(_) => writeln!(
                    out,
                    "accessibility: no elements in the active window \"{}\" (`deskpilot doctor` checks the accessibility bus)",
                    w.title
                )?,
                Err(e) => writeln!(out, "accessibility: failed ({}: {e})", e.code())?,
            }
        }
        None => writeln!(out, "accessibility: not checked (no active window)")?,
    }
    if let Some(dir) = std::env::var_os("CU_HELPER_CACHE_DIR") {
        writeln!(
            out,
            "cache: CU_HELPER_CACHE_DIR={} is accepted and unused (deskpilot caches nothing on disk for this profile)",
            std::path::Path::new(&dir).display()
        )?;
    }
    drop(session);
    engine.shutdown();
    Ok(ExitCode::SUCCESS)
}

pub fn run(desktop: &DesktopArgs, tools: &ToolArgs) -> anyhow::Result<ExitCode> {
    // The virtual display (if any) lives in `_session`, declared before the runtime, so it
    // is torn down after the runtime has stopped.
    let profile = profile(tools)?;
    let (desktop, session) = crate::platform::connect(desktop)?;
    let (engine, surface) = server(desktop, profile, tools)?;
    crate::platform::supervise(&session, &engine);
    tracing::info!(profile = surface.profile, tools = ?surface.tools, "serving MCP on stdio");
    let runtime = crate::runtime()?;
    let outcome = runtime.block_on(async move {
        let service = surface
            .service
            .serve((
                tokio::io::stdin(),
                deskpilot_mcp::ScrubbedWriter::new(tokio::io::stdout()),
            ))
            .await?;
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
