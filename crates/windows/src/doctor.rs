//! `deskpilot doctor` for the Windows backend: the desktop and its monitors, DPI awareness, a
//! real capture, and whether UI Automation is there (else trees come from MSAA).

use deskpilot_backend::{Capture, Check, Screens};
use deskpilot_types::Rect;

use crate::desktop::{Dpi, WindowsDesktop};

/// Runs every backend check.
pub fn run(desktop: &WindowsDesktop) -> Vec<Check> {
    let mut checks = Vec::new();
    let monitors = desktop.monitors();
    checks.push(match &monitors {
        Ok(list) if !list.is_empty() => Check {
            name: "desktop",
            ok: true,
            detail: format!(
                "{} monitor(s): {}",
                list.len(),
                list.iter()
                    .map(|m| format!(
                        "{} {}{}",
                        m.name,
                        m.rect,
                        if m.primary { " primary" } else { "" }
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            fix: None,
        },
        Ok(_) => Check {
            name: "desktop",
            ok: false,
            detail: "no monitor is active".to_string(),
            fix: Some("run deskpilot in an interactive, unlocked session".to_string()),
        },
        Err(e) => Check {
            name: "desktop",
            ok: false,
            detail: e.to_string(),
            fix: Some(
                "run deskpilot in the user's interactive session, not as a service".to_string(),
            ),
        },
    });
    let several = monitors.as_ref().is_ok_and(|m| m.len() > 1);
    checks.push(match desktop.dpi() {
        Dpi::PerMonitorV2 => Check {
            name: "dpi",
            ok: true,
            detail: "per-monitor-v2 aware: physical pixels on every monitor".to_string(),
            fix: None,
        },
        Dpi::System(why) => Check {
            name: "dpi",
            ok: !several,
            detail: format!("system aware only (per-monitor-v2 refused: {why})"),
            fix: several.then(|| {
                "monitors with different scales need per-monitor-v2 (Windows 10 1703 or later); \
                 until then coordinates on the others are scaled"
                    .to_string()
            }),
        },
        Dpi::Unaware(why) => Check {
            name: "dpi",
            ok: false,
            detail: format!("DPI unaware ({why})"),
            fix: Some(
                "at a display scale other than 100 % coordinates are scaled: set the scale to \
                 100 % or use Windows 10 1703 or later"
                    .to_string(),
            ),
        },
    });
    checks.push(match desktop.capture(Rect::new(0, 0, 1, 1)) {
        Ok(_) => Check {
            name: "capture",
            ok: true,
            detail: "BitBlt of the screen works".to_string(),
            fix: None,
        },
        Err(e) => Check {
            name: "capture",
            ok: false,
            detail: e.to_string(),
            fix: Some("the session must be unlocked and shown (not minimized RDP)".to_string()),
        },
    });
    checks.push(match desktop.ui_automation() {
        Ok(()) => Check {
            name: "accessibility",
            ok: true,
            detail: "UI Automation".to_string(),
            fix: None,
        },
        Err(why) => Check {
            name: "accessibility",
            ok: false,
            detail: format!("UI Automation unavailable ({why}); trees come from MSAA"),
            fix: Some(
                "MSAA trees have fewer actions; UI Automation ships with Windows 7 and later \
                 (UIAutomationCore.dll; Wine has none)"
                    .to_string(),
            ),
        },
    });
    checks
}
