//! Picks the backend for this operating system, and the optional virtual display.
//!
//! The one module in the binary that knows which platforms exist. An unreachable desktop
//! is not fatal: the server starts and every tool answers `NO_DISPLAY` with the reason.

use deskpilot_backend::Desktop;

use crate::DesktopArgs;
#[cfg(target_os = "linux")]
use crate::VirtualDisplayMode;

/// Holds whatever must live as long as the desktop is used (a virtual display).
#[derive(Debug, Default)]
pub struct Session {
    #[cfg(target_os = "linux")]
    _virtual: Option<deskpilot_x11::VirtualDisplay>,
}

/// Starts the virtual display when asked, then connects the platform backend.
///
/// # Platform-specific
/// - Linux: X11 through `$DISPLAY`; `--virtual-display` starts Xvfb + openbox + D-Bus + AT-SPI
///   and exports their environment to this process (and so to every app it launches).
/// - Windows: the interactive desktop; `--virtual-display` is refused.
pub fn connect(args: &DesktopArgs) -> anyhow::Result<(Desktop, Session)> {
    #[cfg(target_os = "linux")]
    {
        let needs_virtual = match args.virtual_display {
            None => false,
            Some(VirtualDisplayMode::Always) => true,
            Some(VirtualDisplayMode::Auto) => deskpilot_x11::X11Desktop::connect(None).is_err(),
        };
        let mut session = Session::default();
        if needs_virtual {
            let vd = start_virtual(args.screen)?;
            session._virtual = Some(vd);
        }
        let desktop = match deskpilot_x11::X11Desktop::connect(None) {
            Ok(d) => {
                let desktop = d.into_desktop();
                match std::env::current_exe() {
                    Ok(exe) => desktop
                        .with_ocr(deskpilot_ocr::platform(vec![
                            exe.clone().into(),
                            "__ocr".into(),
                        ]))
                        .with_overlay(std::sync::Arc::new(deskpilot_backend::ProcessOverlay::new(
                            exe,
                        ))),
                    Err(e) => {
                        tracing::warn!(
                            "overlay guard unavailable: cannot find my own executable: {e}"
                        );
                        desktop
                    }
                }
            }
            Err(e) => {
                tracing::warn!("{e}; tools will answer NO_DISPLAY (run `deskpilot doctor`)");
                Desktop::unreachable("x11", e.to_string())
            }
        };
        Ok((desktop, session))
    }
    #[cfg(windows)]
    {
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
        Ok((desktop, Session::default()))
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = args;
        Ok((
            Desktop::unreachable(
                "unsupported",
                format!("deskpilot has no backend for {} yet", std::env::consts::OS),
            ),
            Session::default(),
        ))
    }
}

/// Starts a virtual display and exports its environment into this process.
#[cfg(target_os = "linux")]
pub fn start_virtual(screen: (u32, u32)) -> anyhow::Result<deskpilot_x11::VirtualDisplay> {
    let options = deskpilot_x11::VirtualDisplayOptions {
        width: screen.0,
        height: screen.1,
        ..Default::default()
    };
    let vd = deskpilot_x11::VirtualDisplay::start(options)?;
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
