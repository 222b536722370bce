//! `deskpilot doctor` for X11: is everything deskpilot needs present, and if not, what fixes it.

use x11rb::connection::RequestConnection;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};

use crate::X11Desktop;

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
    let bus = d
        .conn
        .get_property(false, d.root, d.atoms.AT_SPI_BUS, AtomEnum::STRING, 0, 1024)
        .ok()
        .and_then(|c| c.reply().ok())
        .map(|r| String::from_utf8_lossy(&r.value).into_owned())
        .filter(|s| !s.is_empty());
    let session = std::env::var("DBUS_SESSION_BUS_ADDRESS")
        .ok()
        .filter(|s| !s.is_empty());
    checks.push(match (bus, session) {
        (Some(bus), _) => Check { name: "accessibility bus", ok: true, detail: format!("AT_SPI_BUS = {bus}"), fix: None },
        (None, Some(_)) => Check {
            name: "accessibility bus",
            ok: false,
            detail: "a D-Bus session exists but the root property AT_SPI_BUS is unset: Qt apps will not expose their controls".to_string(),
            fix: Some("run /usr/libexec/at-spi-bus-launcher --launch-immediately (apt-get install at-spi2-core) and set AT_SPI_BUS on the root window".to_string()),
        },
        (None, None) => Check {
            name: "accessibility bus",
            ok: false,
            detail: "no D-Bus session (DBUS_SESSION_BUS_ADDRESS unset) and no AT_SPI_BUS".to_string(),
            fix: Some(format!("start a session bus with dbus-launch (apt-get install dbus-x11 at-spi2-core), {VIRTUAL}")),
        },
    });
    checks
}
