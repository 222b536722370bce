//! `deskpilot doctor`: every check, its outcome, and the fix for each miss.
//!
//! The platform's own checks (X11: display, extensions, window manager, accessibility bus;
//! Windows: monitors, DPI awareness, capture, UI Automation) come from its backend; the
//! overlay guard and the shell are checked here the way the server uses them: the overlay
//! process shown and hidden, one command run in a fresh shell session.

use std::io::Write as _;
use std::process::ExitCode;

use deskpilot_backend::Check;

use crate::DesktopArgs;

pub fn run(args: &DesktopArgs) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "deskpilot {} on {}",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS
    )?;
    #[cfg(target_os = "linux")]
    let checks = {
        let (_desktop, _session) = crate::platform::connect(args)?;
        let mut checks = deskpilot_x11::doctor::run(None);
        checks.push(ocr());
        checks
    };
    #[cfg(windows)]
    let checks = {
        let _ = args;
        match deskpilot_windows::WindowsDesktop::new() {
            Ok(desktop) => {
                let mut checks = deskpilot_windows::doctor::run(&desktop);
                checks.push(ocr());
                checks.push(overlay());
                checks.push(shell());
                checks
            }
            Err(e) => vec![Check {
                name: "desktop",
                ok: false,
                detail: e.to_string(),
                fix: Some("run deskpilot in the user's interactive session".to_string()),
            }],
        }
    };
    #[cfg(not(any(target_os = "linux", windows)))]
    let checks = {
        let (desktop, _session) = crate::platform::connect(args)?;
        vec![Check {
            name: "desktop",
            ok: desktop.screens.monitors().is_ok(),
            detail: desktop.info.display.clone(),
            fix: None,
        }]
    };
    let mut failed = 0;
    for c in &checks {
        writeln!(
            out,
            "{:4}  {:18} {}",
            if c.ok { "ok" } else { "FAIL" },
            c.name,
            c.detail
        )?;
        if let Some(fix) = &c.fix {
            writeln!(out, "      {:18} fix: {fix}", "")?;
        }
        if !c.ok {
            failed += 1;
        }
    }
    writeln!(
        out,
        "{}",
        if failed == 0 {
            "everything deskpilot needs is here".to_string()
        } else {
            format!("{failed} problem(s)")
        }
    )?;
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The OCR engine as the server starts it (on Linux its worker process), and its languages.
#[cfg(any(target_os = "linux", windows))]
fn ocr() -> Check {
    let worker = match std::env::current_exe() {
        Ok(exe) => vec![exe.into(), "__ocr".into()],
        Err(_) => Vec::new(),
    };
    let info = deskpilot_ocr::platform(worker).info();
    match info.languages {
        Ok(languages) => {
            let wanted = ["eng", "chi_sim"];
            let complete = wanted.iter().all(|l| languages.iter().any(|i| i == l));
            Check {
                name: "ocr",
                ok: complete,
                detail: format!(
                    "{}; languages: {}; default {}",
                    info.engine,
                    languages.join(", "),
                    info.default_languages.join("+")
                ),
                fix: if complete { None } else { info.fix },
            }
        }
        Err(why) => Check {
            name: "ocr",
            ok: false,
            detail: format!("{}: {why}", info.engine),
            fix: info.fix,
        },
    }
}

/// The overlay process started, shown and hidden, as the guard uses it.
#[cfg(windows)]
fn overlay() -> Check {
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
#[cfg(windows)]
fn shell() -> Check {
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
