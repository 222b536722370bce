//! Linux: the X11 backend, the virtual display (Xvfb + openbox + D-Bus + AT-SPI), the X
//! clipboard holder, the X11 overlay process and the Tesseract OCR worker.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use deskpilot_backend::{Check, Desktop};

use crate::args::{DesktopArgs, VirtualDisplayMode};

pub use deskpilot_x11::VirtualDisplay;

/// Holds the virtual display, if one was started, for as long as the desktop is used.
#[derive(Debug, Default)]
pub struct Session {
    virtual_display: Option<VirtualDisplay>,
}

pub fn connect(args: &DesktopArgs) -> anyhow::Result<(Desktop, Session)> {
    let needs_virtual = match args.virtual_display {
        None => false,
        Some(VirtualDisplayMode::Always) => true,
        Some(VirtualDisplayMode::Auto) => deskpilot_x11::X11Desktop::connect(None).is_err(),
    };
    let mut session = Session::default();
    if needs_virtual {
        let vd = start_virtual(args.screen, true)?;
        session.virtual_display = Some(vd);
    }
    let desktop = x11_desktop().unwrap_or_else(|e| {
        tracing::warn!("{e}; tools will answer NO_DISPLAY (run `deskpilot doctor`)");
        Desktop::unreachable("x11", e.to_string())
    });
    Ok((desktop, session))
}

/// The desktop `DISPLAY` names, with OCR and the overlay guard.
fn x11_desktop() -> Result<Desktop, deskpilot_backend::Error> {
    let desktop = deskpilot_x11::X11Desktop::connect(None)?.into_desktop();
    Ok(match std::env::current_exe() {
        Ok(exe) => desktop
            .with_ocr(deskpilot_ocr::platform(vec![
                exe.clone().into(),
                "__ocr".into(),
            ]))
            .with_overlay(std::sync::Arc::new(deskpilot_backend::ProcessOverlay::new(
                exe,
            ))),
        Err(e) => {
            tracing::warn!("overlay guard unavailable: cannot find my own executable: {e}");
            desktop
        }
    })
}

pub fn supervise(session: &Session, engine: &std::sync::Arc<deskpilot_engine::Engine>) {
    use deskpilot_x11::Health;
    let Some(vd) = &session.virtual_display else {
        return;
    };
    let watch = vd.health_watch();
    let vd_name = vd.display().to_string();
    let engine = std::sync::Arc::downgrade(engine);
    let spawned = std::thread::Builder::new()
        .name("desktop-supervisor".into())
        .spawn(move || {
            // The generation the engine's desktop belongs to; `None` while a stand-in is.
            let mut current = Some(0);
            let mut told = String::new();
            // Why the desktop served last went away, for the sessions' next calls.
            let mut lost = String::new();
            loop {
                std::thread::sleep(std::time::Duration::from_millis(50));
                let Some(engine) = engine.upgrade() else {
                    return;
                };
                let reason = match watch.health() {
                    Health::Up { generation } if current == Some(generation) => continue,
                    Health::Up { generation } => match x11_desktop() {
                        Ok(desktop) => {
                            let why = if lost.is_empty() {
                                format!("the virtual desktop {vd_name} went away")
                            } else {
                                format!("the virtual desktop {vd_name} went away: {lost}")
                            };
                            engine.restore_desktop(desktop, &why);
                            lost.clear();
                            current = Some(generation);
                            told.clear();
                            tracing::info!(display = %vd_name, generation, "serving the fresh desktop");
                            continue;
                        }
                        Err(e) => format!("the fresh desktop does not answer yet ({e})"),
                    },
                    Health::Restarting { reason } => {
                        if lost.is_empty() {
                            lost = reason.clone();
                        }
                        format!("{reason}; a fresh desktop is starting")
                    }
                    Health::Failed { reason } => format!("{reason}; trying again"),
                };
                if reason != told {
                    engine.replace_desktop(Desktop::restarting(
                        "x11",
                        format!("the virtual desktop {vd_name} went away: {reason}"),
                    ));
                    current = None;
                    told = reason;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot watch the virtual desktop; it is not brought up again: {e}");
    }
}

pub fn doctor(args: &DesktopArgs) -> anyhow::Result<Vec<Check>> {
    let (_desktop, _session) = connect(args)?;
    let mut checks = deskpilot_x11::doctor::run(None);
    checks.push(super::checks::ocr());
    Ok(checks)
}

pub fn start_virtual(screen: (u32, u32), restart: bool) -> anyhow::Result<VirtualDisplay> {
    let options = deskpilot_x11::VirtualDisplayOptions {
        width: screen.0,
        height: screen.1,
        restart,
        ..Default::default()
    };
    let vd = VirtualDisplay::start(options)?;
    // SAFETY: called before the async runtime starts; the only other thread of ours is the
    // virtual display's keeper, which has finished spawning and reads no environment.
    unsafe {
        std::env::remove_var("NO_AT_BRIDGE");
        for (k, v) in vd.env() {
            std::env::set_var(k, v);
        }
    }
    Ok(vd)
}

pub fn stop_child(child: &mut tokio::process::Child) {
    if let Some(pid) = child.id() {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    }
}

pub fn overlay() -> anyhow::Result<ExitCode> {
    Ok(ExitCode::from(deskpilot_x11::overlay::run_child() as u8))
}

pub fn hold_clipboard() -> anyhow::Result<ExitCode> {
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

pub fn hand_over_clipboard(text: &str) {
    use std::io::BufRead as _;
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

pub fn ocr_worker() -> anyhow::Result<ExitCode> {
    Ok(ExitCode::from(deskpilot_ocr::worker::run() as u8))
}

pub async fn shutdown_signal() -> &'static str {
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

/// Keeps glibc from growing one malloc arena per thread and from raising its mmap threshold
/// after the first large frame: without this, idle memory after a few hundred screenshots
/// settles several times higher than the working set.
pub fn tune_allocator() {
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt only tunes the allocator; called first thing in main, before any thread.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}

pub fn config_dir() -> Option<PathBuf> {
    super::xdg_config_dir()
}
