//! `deskpilot doctor` for X11: is everything deskpilot needs present, and if not, what fixes it.
//! The accessibility checks say what is actually missing: the root property `AT_SPI_BUS`
//! against the bus deskpilot uses, and, per window whose application is not on the bus, what
//! its environment lacks (`a11y::joining`).

use x11rb::connection::RequestConnection;

use crate::a11y::joining;
use crate::desktop::X11Desktop;

pub use deskpilot_backend::Check;

const VIRTUAL: &str =
    "or run `deskpilot serve --virtual-display` for a headless desktop of its own";

/// Runs every check against `display` (or `$DISPLAY`).
pub fn run(display: Option<&str>) -> Vec<Check> {
    let mut checks = Vec::new();
    let d = match X11Desktop::connect(display) {
        Ok(d) => {
            checks.push(Check {
                name: "display",
                ok: true,
                detail: format!("connected to {}", d.display),
                fix: None,
            });
            d
        }
        Err(e) => {
            checks.push(Check {
                name: "display",
                ok: false,
                detail: e.to_string(),
                fix: Some(format!("start deskpilot inside an X session with DISPLAY set, {VIRTUAL} (needs: apt-get install xvfb openbox dbus-x11 at-spi2-core)")),
            });
            return checks;
        }
    };
    for (ext, why, fix) in [
        (
            "XTEST",
            "synthetic mouse and keyboard input",
            "start the X server with +extension XTEST",
        ),
        (
            "MIT-SHM",
            "fast screen capture (falls back to GetImage)",
            "run deskpilot on the same machine as the X server; start it with +extension MIT-SHM",
        ),
        (
            "XInputExtension",
            "the Esc kill switch (raw key events)",
            "start the X server with +extension XInputExtension",
        ),
        (
            "RANDR",
            "monitor layout",
            "start the X server with +extension RANDR",
        ),
    ] {
        let present = matches!(d.conn.extension_information(ext), Ok(Some(_)));
        checks.push(Check {
            name: ext,
            ok: present,
            detail: if present {
                format!("present ({why})")
            } else {
                format!("missing: no {why}")
            },
            fix: (!present).then(|| fix.to_string()),
        });
    }
    let probe = <X11Desktop as deskpilot_backend::Capture>::capture(
        &d,
        deskpilot_types::Rect::new(0, 0, 1, 1),
    );
    checks.push(match probe {
        Ok(_) => Check {
            name: "capture",
            ok: true,
            detail: format!("works ({})", d.info().capture_method),
            fix: None,
        },
        Err(e) => Check {
            name: "capture",
            ok: false,
            detail: e.to_string(),
            fix: Some(
                "start the X server with a 24-bit TrueColor screen (Xvfb -screen 0 1920x1080x24)"
                    .to_string(),
            ),
        },
    });
    match crate::windows::window_manager_name(&d) {
        Some(name) => checks.push(Check {
            name: "window manager",
            ok: true,
            detail: format!("EWMH: {name}"),
            fix: None,
        }),
        None => checks.push(Check {
            name: "window manager",
            ok: false,
            detail:
                "no EWMH window manager (_NET_SUPPORTING_WM_CHECK unset): windows cannot be listed"
                    .to_string(),
            fix: Some(format!(
                "start one, e.g. `openbox &` (apt-get install openbox), {VIRTUAL}"
            )),
        }),
    }
    let session = std::env::var("DBUS_SESSION_BUS_ADDRESS")
        .ok()
        .filter(|s| !s.is_empty());
    let root = d.root_bus_property();
    let bus = joining::bus_address();
    let set_root = |addr: &str| {
        format!("xprop -root -f AT_SPI_BUS 8s -set AT_SPI_BUS '{addr}', then restart the Qt apps")
    };
    checks.push(match (&bus, &root) {
        (Ok(bus), Some(root)) if joining::same_bus(bus, root) => Check {
            name: "accessibility bus",
            ok: true,
            detail: format!("{bus}, named by the root property AT_SPI_BUS too"),
            fix: None,
        },
        (Ok(bus), Some(root)) => Check {
            name: "accessibility bus",
            ok: false,
            detail: format!("the root property AT_SPI_BUS names {root}, but the accessibility bus is {bus}: Qt apps started now join a bus nobody reads"),
            fix: Some(set_root(bus)),
        },
        (Ok(bus), None) => Check {
            name: "accessibility bus",
            ok: false,
            detail: format!("{bus}, but the root property AT_SPI_BUS is unset: Qt 5 apps started without this session bus find the accessibility bus only through it and will not expose their controls"),
            fix: Some(set_root(bus)),
        },
        (Err(e), _) if session.is_some() => Check {
            name: "accessibility bus",
            ok: false,
            detail: format!("a D-Bus session exists but no accessibility bus answers: {e}"),
            fix: Some("run /usr/libexec/at-spi-bus-launcher --launch-immediately (apt-get install at-spi2-core) and set AT_SPI_BUS on the root window".to_string()),
        },
        (Err(_), _) => Check {
            name: "accessibility bus",
            ok: false,
            detail: "no D-Bus session (DBUS_SESSION_BUS_ADDRESS unset) and no AT_SPI_BUS_ADDRESS".to_string(),
            fix: Some(format!("start a session bus with dbus-launch (apt-get install dbus-x11 at-spi2-core), {VIRTUAL}")),
        },
    });
    if bus.is_ok() {
        checks.push(match d.windows_off_the_bus() {
            Ok(off) if off.is_empty() => Check {
                name: "applications on the accessibility bus",
                ok: true,
                detail: "every listed window's application is on the bus".to_string(),
                fix: None,
            },
            Ok(off) => {
                let detail = off
                    .iter()
                    .map(|(w, why)| {
                        let who = format!(
                            "{} \"{}\" ({}, pid {})",
                            w.id,
                            w.title,
                            w.process.as_deref().unwrap_or("?"),
                            w.pid.unwrap_or(0)
                        );
                        if why.is_empty() { who } else { format!("{who}: {why}") }
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                Check {
                    name: "applications on the accessibility bus",
                    ok: false,
                    detail: format!("{} window(s) without an accessibility tree: {detail}", off.len()),
                    fix: Some("start those apps again with what is named (GTK 2 apps need GTK_MODULES=gail:atk-bridge, Qt apps QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 and the root property AT_SPI_BUS, both before they start)".to_string()),
                }
            }
            Err(e) => Check {
                name: "applications on the accessibility bus",
                ok: false,
                detail: format!("cannot list them: {e}"),
                fix: None,
            },
        });
    }
    checks
}
