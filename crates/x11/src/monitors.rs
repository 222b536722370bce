//! Monitors through RandR 1.5 `GetMonitors`; the whole root window when RandR is absent.

use deskpilot_backend::{Error, Screens};
use deskpilot_types::{Monitor, Rect};
use x11rb::connection::RequestConnection;
use x11rb::protocol::randr::{self, ConnectionExt as _};
use x11rb::protocol::xproto::ConnectionExt as _;

use crate::X11Desktop;
use crate::error::x11_err;

/// Active monitors, primary first.
pub(crate) fn monitors(d: &X11Desktop) -> Result<Vec<Monitor>, Error> {
    let c = &d.conn;
    let has_randr = matches!(
        c.extension_information(randr::X11_EXTENSION_NAME),
        Ok(Some(_))
    );
    let mut out = Vec::new();
    if has_randr
        && let Ok(reply) = c
            .randr_get_monitors(d.root, true)
            .map_err(x11_err("RRGetMonitors"))?
            .reply()
    {
        // Monitor names are atoms: resolve unknown ones (once), so a listing is one round trip.
        let mut known = d.atom_names.lock().unwrap_or_else(|e| e.into_inner());
        let unknown: Vec<_> = reply
            .monitors
            .iter()
            .filter(|m| !known.contains_key(&m.name))
            .map(|m| (m.name, c.get_atom_name(m.name).ok()))
            .collect();
        for (atom, cookie) in unknown {
            let name = cookie
                .and_then(|cookie| cookie.reply().ok())
                .map(|r| String::from_utf8_lossy(&r.name).into_owned())
                .unwrap_or_default();
            known.insert(atom, name);
        }
        for m in &reply.monitors {
            out.push(Monitor {
                index: 0,
                name: known.get(&m.name).cloned().unwrap_or_default(),
                rect: Rect::new(m.x as i32, m.y as i32, m.width as u32, m.height as u32),
                primary: m.primary,
                scale: 1.0,
            });
        }
    }
    if out.is_empty() {
        let g = c
            .get_geometry(d.root)
            .map_err(x11_err("GetGeometry"))?
            .reply()
            .map_err(x11_err("GetGeometry"))?;
        out.push(Monitor {
            index: 0,
            name: "screen".to_string(),
            rect: Rect::new(0, 0, g.width as u32, g.height as u32),
            primary: true,
            scale: 1.0,
        });
    }
    Monitor::order(&mut out);
    Ok(out)
}

impl Screens for X11Desktop {
    fn monitors(&self) -> Result<Vec<Monitor>, Error> {
        monitors(self)
    }

    fn desktop_bounds(&self) -> Result<Rect, Error> {
        use x11rb::protocol::xproto::ConnectionExt as _;
        let g = self
            .conn
            .get_geometry(self.root)
            .map_err(x11_err("GetGeometry"))?
            .reply()
            .map_err(x11_err("GetGeometry"))?;
        Ok(Rect::new(0, 0, g.width as u32, g.height as u32))
    }
}
