//! Any target deskpilot has no backend for: the server still starts (every tool answers
//! `NO_DISPLAY`), and everything else answers with the one message of [`unsupported`].

use std::path::PathBuf;
use std::process::ExitCode;

use deskpilot_backend::{Check, Desktop};

use crate::args::DesktopArgs;

/// Why nothing platform-specific works here.
fn unsupported() -> String {
    format!(
        "deskpilot has no backend for {} yet (it runs on Linux with X11 and on Windows)",
        std::env::consts::OS
    )
}

/// Nothing outlives the connection here.
#[derive(Debug, Default)]
pub struct Session;

/// No virtual display here: no value of this type exists.
#[derive(Debug)]
pub enum VirtualDisplay {}

impl VirtualDisplay {
    pub fn env(&self) -> &[(String, String)] {
        match *self {}
    }

    pub fn display(&self) -> &str {
        match *self {}
    }
}

pub fn connect(_args: &DesktopArgs) -> anyhow::Result<(Desktop, Session)> {
    Ok((Desktop::unreachable("unsupported", unsupported()), Session))
}

pub fn doctor(_args: &DesktopArgs) -> anyhow::Result<Vec<Check>> {
    Ok(vec![Check {
        name: "desktop",
        ok: false,
        detail: unsupported(),
        fix: None,
    }])
}

pub fn start_virtual(_screen: (u32, u32), _restart: bool) -> anyhow::Result<VirtualDisplay> {
    anyhow::bail!(unsupported())
}

pub fn stop_child(child: &mut tokio::process::Child) {
    let _ = child.start_kill();
}

pub fn overlay() -> anyhow::Result<ExitCode> {
    anyhow::bail!(unsupported())
}

pub fn hold_clipboard() -> anyhow::Result<ExitCode> {
    anyhow::bail!(unsupported())
}

pub fn hand_over_clipboard(_text: &str) {}

pub fn ocr_worker() -> anyhow::Result<ExitCode> {
    anyhow::bail!(unsupported())
}

pub async fn shutdown_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}

pub fn tune_allocator() {}

pub fn config_dir() -> Option<PathBuf> {
    super::xdg_config_dir()
}

pub fn supervise(_session: &Session, _engine: &std::sync::Arc<deskpilot_engine::Engine>) {}
