//! Windows: the Win32 backend on the interactive desktop, its overlay process, and the
//! checks `doctor` adds there (the overlay process, the PowerShell the shell tools use). No
//! virtual display, no clipboard holder (the system keeps the clipboard) and no OCR worker
//! (Windows.Media.Ocr reads in process).

use std::path::PathBuf;
use std::process::ExitCode;

use deskpilot_backend::{Check, Desktop};

use crate::args::DesktopArgs;

/// Nothing outlives the connection on Windows.
#[derive(Debug, Default)]
pub struct Session;

/// Windows has no virtual display: no value of this type exists.
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

pub fn connect(args: &DesktopArgs) -> anyhow::Result<(Desktop, Session)> {
    if args.virtual_display.is_some() {
        anyhow::bail!(
            "--virtual-display is for Linux; on Windows deskpilot uses the interactive desktop"
        );
    }
    let desktop = match deskpilot_windows::WindowsDesktop::new() {
        Ok(d) => match std::env::current_exe() {
            Ok(exe) => d
                .into_desktop()
                .with_ocr(deskpilot_ocr::platform(Vec::new()))
                .with_overlay(std::sync::Arc::new(deskpilot_backend::ProcessOverlay::new(
                    exe,
                ))),
            Err(e) => {
                tracing::warn!("overlay guard unavailable: cannot find my own executable: {e}");
                d.into_desktop()
            }
        },
        Err(e) => Desktop::unreachable("windows", e.to_string()),
    };
    Ok((desktop, Session))
}

pub fn doctor(_args: &DesktopArgs) -> anyhow::Result<Vec<Check>> {
    Ok(match deskpilot_windows::WindowsDesktop::new() {
        Ok(desktop) => {
            let mut checks = deskpilot_windows::doctor::run(&desktop);
            checks.push(super::checks::ocr());
            checks.push(overlay_check());
            checks.push(shell_check());
            checks
        }
        Err(e) => vec![Check {
            name: "desktop",
            ok: false,
            detail: e.to_string(),
            fix: Some("run deskpilot in the user's interactive session".to_string()),
        }],
    })
}

pub fn start_virtual(_screen: (u32, u32), _restart: bool) -> anyhow::Result<VirtualDisplay> {
    anyhow::bail!(
        "deskpilot desktop needs Linux (Xvfb); on Windows deskpilot uses the interactive desktop"
    )
}

pub fn stop_child(child: &mut tokio::process::Child) {
    let _ = child.start_kill();
}

pub fn overlay() -> anyhow::Result<ExitCode> {
    Ok(ExitCode::from(deskpilot_windows::overlay::run_child() as u8))
}

pub fn hold_clipboard() -> anyhow::Result<ExitCode> {
    anyhow::bail!("only X11 needs a clipboard holder")
}

pub fn hand_over_clipboard(_text: &str) {}

pub fn ocr_worker() -> anyhow::Result<ExitCode> {
    anyhow::bail!("this platform reads text in process; there is no OCR worker")
}

pub async fn shutdown_signal() -> &'static str {
    let _ = tokio::signal::ctrl_c().await;
    "Ctrl-C"
}

pub fn tune_allocator() {}

pub fn config_dir() -> Option<PathBuf> {
    std::env::var_os("APPDATA").map(PathBuf::from)
}

/// The overlay process started, shown and hidden, as the guard uses it.
fn overlay_check() -> Check {
    use deskpilot_backend::{Overlay, OverlayStyle, ProcessOverlay};
    let outcome = std::env::current_exe()
        .map_err(|e| format!("cannot find my own executable: {e}"))
        .and_then(|exe| {
            let overlay = ProcessOverlay::new(exe);
            let shown = overlay.show(&OverlayStyle {
                message: "deskpilot doctor".to_string(),
                opacity: 0.85,
                esc_stop: false,
                cursor: deskpilot_backend::PointerLook::Halo,
            });
            let hidden = overlay.hide();
            overlay.shutdown();
            shown.and(hidden).map_err(|e| e.to_string())
        });
    match outcome {
        Ok(()) => Check {
            name: "overlay",
            ok: true,
            detail: "the guard's overlay process shows and hides".to_string(),
            fix: None,
        },
        Err(e) => Check {
            name: "overlay",
            ok: false,
            detail: e,
            fix: Some(
                "without the overlay there is no Esc kill switch; actions still run".to_string(),
            ),
        },
    }
}

/// One command in a fresh session of the shell the shell tools would use.
fn shell_check() -> Check {
    use deskpilot_shell::{Session, ShellProgram};
    use std::time::Duration;
    let Some(program) = ShellProgram::detect() else {
        return Check {
            name: "shell",
            ok: false,
            detail: "no pwsh.exe or powershell.exe on PATH".to_string(),
            fix: Some("install PowerShell 7 (pwsh) to use the shell tools".to_string()),
        };
    };
    let name = program.program.display().to_string();
    let mut session = Session::new(program, std::env::temp_dir());
    let check = match session.exec(
        "$PSVersionTable.PSVersion.ToString()",
        Duration::from_secs(20),
    ) {
        Ok(out) if out.exit_code == Some(0) => Check {
            name: "shell",
            ok: true,
            detail: format!("{name}, PowerShell {}", out.stdout.text.trim()),
            fix: None,
        },
        Ok(out) => Check {
            name: "shell",
            ok: false,
            detail: format!(
                "{name} answered with exit code {:?}: {}",
                out.exit_code,
                out.stderr.text.trim()
            ),
            fix: Some("install PowerShell 7 (pwsh) to use the shell tools".to_string()),
        },
        Err(e) => Check {
            name: "shell",
            ok: false,
            detail: e.to_string(),
            fix: Some("install PowerShell 7 (pwsh) to use the shell tools".to_string()),
        },
    };
    // Dropping the session ends its shell.
    drop(session);
    check
}

pub fn supervise(_session: &Session, _engine: &std::sync::Arc<deskpilot_engine::Engine>) {}
