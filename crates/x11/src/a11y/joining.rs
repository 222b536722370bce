//! Why an application is not on the accessibility bus, said from what is actually missing.
//!
//! What decides whether an app joins, measured on Debian 12: Qt 5 finds the bus through the
//! root window property `AT_SPI_BUS` (it must hold the bus address when the app starts) or,
//! failing that, by asking its session bus (kcalc without a session bus and without the
//! property stays off; with deskpilot's session bus it joins), and registers only with
//! `QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1` (or a screen reader flag on the bus); GTK 2 needs `GTK_MODULES=gail:atk-bridge`; any toolkit stays off with
//! `NO_AT_BRIDGE=1` or when it talks to another bus than deskpilot's; LibreOffice's own X11
//! plugin (`vclplug_gen`) has no accessibility at all. The facts come from the root property,
//! the bus deskpilot uses, and the app's `/proc/PID/environ` and `/proc/PID/maps` where
//! readable ([`Facts::of`]); [`missing`] (pure, unit-tested) turns them into sentences.
//! `frame` words its "not on the bus" failure with them, `doctor` its check of the windows.

use std::collections::HashMap;

use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};

use crate::desktop::X11Desktop;

/// The toolkit an application links, from its memory map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kit {
    Qt,
    Gtk2,
    Gtk3,
    Gtk4,
    /// LibreOffice on its own X11 plugin, which has no accessibility.
    LibreOfficeX11,
    Unknown,
}

impl Kit {
    /// The toolkit from the names of the libraries mapped into the process.
    pub(crate) fn from_maps(maps: &str) -> Kit {
        let has = |lib: &str| maps.contains(lib);
        if has("libvclplug_gen") && !has("libvclplug_gtk") {
            Kit::LibreOfficeX11
        } else if has("libQt5Gui") || has("libQt6Gui") {
            Kit::Qt
        } else if has("libgtk-4") {
            Kit::Gtk4
        } else if has("libgtk-3") {
            Kit::Gtk3
        } else if has("libgtk-x11-2.0") {
            Kit::Gtk2
        } else {
            Kit::Unknown
        }
    }
}

/// What decides whether one application joins the accessibility bus.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    /// The root window property `AT_SPI_BUS`, now.
    pub root_bus: Option<String>,
    /// The accessibility bus deskpilot uses.
    pub bus: Option<String>,
    /// deskpilot's own session bus (where the accessibility bus launcher answers).
    pub session: Option<String>,
    /// The application's environment, when readable.
    pub env: Option<HashMap<String, String>>,
    /// Its toolkit, when its memory map is readable.
    pub kit: Option<Kit>,
}

/// A D-Bus address without its `guid=` key, for comparing two spellings of one bus.
fn bus_key(address: &str) -> String {
    address
        .split(';')
        .map(|one| {
            let (transport, keys) = one.split_once(':').unwrap_or((one, ""));
            let mut keys: Vec<&str> = keys
                .split(',')
                .filter(|k| !k.is_empty() && !k.starts_with("guid="))
                .collect();
            keys.sort_unstable();
            format!("{transport}:{}", keys.join(","))
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// What keeps the application off the bus, one sentence each; empty when nothing found
/// explains it.
pub(crate) fn missing(f: &Facts) -> Vec<String> {
    let mut out = Vec::new();
    let env = f.env.as_ref();
    let var = |k: &str| env.and_then(|e| e.get(k)).map(String::as_str);
    if f.kit == Some(Kit::LibreOfficeX11) {
        out.push(
            "it is LibreOffice on its own X11 plugin, which has no accessibility: start it with SAL_USE_VCLPLUGIN=gtk3 (package libreoffice-gtk3)"
                .to_string(),
        );
    }
    if var("NO_AT_BRIDGE").is_some_and(|v| v.trim() == "1") {
        out.push("it was started with NO_AT_BRIDGE=1: start it without".to_string());
    }
    if let (Some(theirs), Some(ours)) = (var("AT_SPI_BUS_ADDRESS"), f.bus.as_deref())
        && !theirs.trim().is_empty()
        && bus_key(theirs) != bus_key(ours)
    {
        out.push(format!(
            "it was started on another accessibility bus (AT_SPI_BUS_ADDRESS={theirs}) than deskpilot's ({ours})"
        ));
    }
    match f.kit {
        Some(Kit::Qt) => {
            let on = ["QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "QT_ACCESSIBILITY"]
                .iter()
                .any(|k| var(k).is_some_and(|v| v.trim() == "1"));
            if env.is_some() && !on {
                out.push(
                    "it is a Qt app started without QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1".to_string(),
                );
            }
            let their_session = var("DBUS_SESSION_BUS_ADDRESS").filter(|s| !s.trim().is_empty());
            let shares_session = match (their_session, f.session.as_deref()) {
                (Some(theirs), Some(ours)) => bus_key(theirs) == bus_key(ours),
                _ => false,
            };
            match (&f.root_bus, &f.bus) {
                (None, _) if !shares_session => out.push(format!(
                    "the root window property AT_SPI_BUS is unset and {}, so Qt cannot find the accessibility bus: set the property to the bus address (xprop -root -f AT_SPI_BUS 8s -set AT_SPI_BUS <address>) and restart the app",
                    match their_session {
                        None if env.is_some() => "the app has no session bus".to_string(),
                        None => "its session bus is unknown".to_string(),
                        Some(s) => format!("its session bus ({s}) is not deskpilot's"),
                    }
                )),
                (None, _) => {}
                (Some(root), Some(bus)) if bus_key(root) != bus_key(bus) => out.push(format!(
                    "the root window property AT_SPI_BUS names {root}, not the accessibility bus {bus}: correct it and restart the app"
                )),
                (Some(_), _) if out.is_empty() => out.push(
                    "the root window property AT_SPI_BUS is set now; a Qt app reads it only when it starts, so if it was set later, restart the app"
                        .to_string(),
                ),
                _ => {}
            }
        }
        Some(Kit::Gtk2) => {
            let modules = var("GTK_MODULES").unwrap_or_default();
            if env.is_some() && !modules.split(':').any(|m| m == "atk-bridge") {
                out.push(format!(
                    "it is a GTK 2 app started without GTK_MODULES=gail:atk-bridge (it has {})",
                    if modules.is_empty() { "none" } else { modules }
                ));
            }
        }
        _ => {}
    }
    out
}

impl Facts {
    /// The facts about process `pid` (what of `/proc` is readable), the root property and the
    /// bus deskpilot uses.
    pub(crate) fn of(pid: Option<u32>, root_bus: Option<String>, bus: Option<String>) -> Facts {
        let session = std::env::var("DBUS_SESSION_BUS_ADDRESS")
            .ok()
            .filter(|s| !s.trim().is_empty());
        let env = pid
            .and_then(|p| std::fs::read(format!("/proc/{p}/environ")).ok())
            .map(|raw| {
                raw.split(|b| *b == 0)
                    .filter_map(|kv| {
                        let kv = String::from_utf8_lossy(kv);
                        let (k, v) = kv.split_once('=')?;
                        Some((k.to_string(), v.to_string()))
                    })
                    .collect()
            });
        let kit = pid
            .and_then(|p| std::fs::read_to_string(format!("/proc/{p}/maps")).ok())
            .map(|m| Kit::from_maps(&m));
        Facts {
            root_bus,
            bus,
            session,
            env,
            kit,
        }
    }
}

/// The accessibility bus deskpilot uses (`AT_SPI_BUS_ADDRESS`, else what the session bus's
/// launcher says), or why there is none.
pub(crate) fn bus_address() -> Result<String, String> {
    super::run(
        std::time::Duration::from_secs(3),
        "asking for the accessibility bus",
        async {
            super::a11y_bus_address()
                .await
                .map_err(|e| deskpilot_backend::Error::os("org.a11y.Bus.GetAddress", e))
        },
    )
    .map_err(|e| e.to_string())
}

/// Whether two addresses name the same bus (their `guid=` keys aside).
pub(crate) fn same_bus(a: &str, b: &str) -> bool {
    bus_key(a) == bus_key(b)
}

/// Why the application of `window` (pid) is not on the bus, in one sentence for a failure.
pub(crate) fn not_on_bus(window: &deskpilot_types::WindowInfo, facts: &Facts) -> String {
    let pid = window.pid.map_or("?".to_string(), |p| p.to_string());
    let reasons = missing(facts);
    if reasons.is_empty() {
        return format!(
            "the application of window {} (pid {pid}) is not on the accessibility bus; nothing found in its environment explains it (GTK 2 apps need GTK_MODULES=gail:atk-bridge, Qt apps QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1 and the root property AT_SPI_BUS, set before they start)",
            window.id
        );
    }
    format!(
        "the application of window {} (pid {pid}) is not on the accessibility bus: {}",
        window.id,
        reasons.join("; ")
    )
}

impl X11Desktop {
    /// The listed windows whose application is not on the accessibility bus, each with why
    /// (for `doctor`).
    pub(crate) fn windows_off_the_bus(
        &self,
    ) -> Result<Vec<(deskpilot_types::WindowInfo, String)>, deskpilot_backend::Error> {
        use deskpilot_backend::Windows as _;
        let windows = self.list_windows()?;
        let conn = self.a11y.connection()?;
        let (pids, bus) = super::run(
            super::OPERATION_TIMEOUT,
            "listing the applications on the accessibility bus",
            async {
                let pids = super::frame::registry_pids(&conn).await?;
                Ok((pids, super::a11y_bus_address().await.ok()))
            },
        )?;
        let root_bus = self.root_bus_property();
        Ok(windows
            .into_iter()
            .filter(|w| w.pid.is_some_and(|p| !pids.contains(&p)))
            .map(|w| {
                let facts = Facts::of(w.pid, root_bus.clone(), bus.clone());
                let why = missing(&facts).join("; ");
                (w, why)
            })
            .collect())
    }

    /// The root window property `AT_SPI_BUS`, if set.
    pub(crate) fn root_bus_property(&self) -> Option<String> {
        self.conn
            .get_property(
                false,
                self.root,
                self.atoms.AT_SPI_BUS,
                AtomEnum::STRING,
                0,
                1024,
            )
            .ok()?
            .reply()
            .ok()
            .map(|r| String::from_utf8_lossy(&r.value).into_owned())
            .filter(|s| !s.trim().is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Option<HashMap<String, String>> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    const BUS: &str = "unix:path=/tmp/d/runtime/at-spi/bus_91";
    const SESSION: &str = "unix:path=/tmp/d/runtime/bus";

    /// Regression: the hint named QT_LINUX_ACCESSIBILITY_ALWAYS_ON for a kcalc started with it,
    /// when what was missing was the root property AT_SPI_BUS.
    #[test]
    fn a_qt_app_is_told_what_it_actually_lacks() {
        // Recorded: kcalc started with the variable, without DBUS_SESSION_BUS_ADDRESS, and
        // with the root property removed: it stayed off the bus.
        let qt_env = env(&[
            ("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1"),
            ("DISPLAY", ":91"),
        ]);
        let no_root = Facts {
            root_bus: None,
            bus: Some(BUS.into()),
            session: Some(SESSION.into()),
            env: qt_env.clone(),
            kit: Some(Kit::Qt),
        };
        let said = missing(&no_root);
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(said[0].starts_with(
            "the root window property AT_SPI_BUS is unset and the app has no session bus"
        ));
        // With deskpilot's session bus it finds the bus there (it joined when measured).
        let shared = Facts {
            env: env(&[
                ("QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "1"),
                ("DBUS_SESSION_BUS_ADDRESS", SESSION),
            ]),
            ..no_root.clone()
        };
        assert!(missing(&shared).is_empty(), "{:?}", missing(&shared));
        // The property names the same bus with its guid: fine, so the app started too early.
        let set = Facts {
            root_bus: Some(format!("{BUS},guid=0123abcd")),
            ..no_root.clone()
        };
        assert!(missing(&set)[0].contains("if it was set later, restart the app"));
        // A stale property from an earlier bus.
        let stale = Facts {
            root_bus: Some("unix:path=/tmp/old/bus_91".into()),
            ..no_root.clone()
        };
        assert!(missing(&stale)[0].contains("not the accessibility bus"));
        // Without the variable both are said.
        let bare = Facts {
            env: env(&[("DISPLAY", ":91")]),
            ..no_root
        };
        let said = missing(&bare);
        assert!(
            said[0].contains("without QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1"),
            "{said:?}"
        );
        assert_eq!(said.len(), 2);
    }

    #[test]
    fn other_toolkits_are_told_their_own_cause() {
        let gtk2 = Facts {
            root_bus: None,
            bus: Some(BUS.into()),
            session: None,
            env: env(&[("GTK_MODULES", "canberra-gtk-module")]),
            kit: Some(Kit::Gtk2),
        };
        assert!(
            missing(&gtk2)[0].contains("GTK_MODULES=gail:atk-bridge (it has canberra-gtk-module)")
        );
        let off = Facts {
            env: env(&[
                ("NO_AT_BRIDGE", "1"),
                ("AT_SPI_BUS_ADDRESS", "unix:path=/other"),
            ]),
            kit: Some(Kit::Gtk3),
            ..gtk2.clone()
        };
        let said = missing(&off);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[1].contains("another accessibility bus"));
        let lo = Facts {
            kit: Some(Kit::LibreOfficeX11),
            env: env(&[]),
            ..gtk2
        };
        assert!(missing(&lo)[0].contains("SAL_USE_VCLPLUGIN=gtk3"));
        assert_eq!(
            Kit::from_maps("7f00 r-xp /usr/lib/x86_64-linux-gnu/libQt5Gui.so.5.15.8\n"),
            Kit::Qt
        );
        assert_eq!(
            Kit::from_maps("/usr/lib/libreoffice/program/libvclplug_genlo.so\n"),
            Kit::LibreOfficeX11
        );
        assert_eq!(bus_key(&format!("{BUS},guid=99")), bus_key(BUS));
    }
}
