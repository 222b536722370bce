//! EWMH window listing.
//!
//! Reads `_NET_CLIENT_LIST_STACKING` (bottom to top) from the root window and, for every
//! client, its title (`_NET_WM_NAME`, falling back to `WM_NAME`), pid, class, state and
//! geometry. All requests for all windows are sent before any reply is read, so listing 30
//! windows costs about one round trip, not 300. Windows that vanish between the list and the
//! replies are skipped, not reported as errors.

use deskpilot_backend::{Error, Windows};
use deskpilot_types::{Rect, WindowId, WindowInfo, WindowState};
use x11rb::connection::Connection;
use x11rb::cookie::Cookie;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _, GetPropertyReply, MapState, Window};
use x11rb::rust_connection::RustConnection;

use crate::desktop::X11Desktop;
use crate::error::x11_err;

/// ICCCM `WM_STATE` value of an iconified window.
const ICONIC_STATE: u32 = 3;

struct Pending<'c> {
    id: Window,
    net_name: Cookie<'c, RustConnection, GetPropertyReply>,
    wm_name: Cookie<'c, RustConnection, GetPropertyReply>,
    pid: Cookie<'c, RustConnection, GetPropertyReply>,
    class: Cookie<'c, RustConnection, GetPropertyReply>,
    net_state: Cookie<'c, RustConnection, GetPropertyReply>,
    wm_state: Cookie<'c, RustConnection, GetPropertyReply>,
    extents: Cookie<'c, RustConnection, GetPropertyReply>,
    attrs: Cookie<'c, RustConnection, x11rb::protocol::xproto::GetWindowAttributesReply>,
    geometry: Cookie<'c, RustConnection, x11rb::protocol::xproto::GetGeometryReply>,
    origin: Cookie<'c, RustConnection, x11rb::protocol::xproto::TranslateCoordinatesReply>,
}

/// Every managed client window, topmost first.
pub(crate) fn list(d: &X11Desktop) -> Result<Vec<WindowInfo>, Error> {
    let c = &d.conn;
    let a = &d.atoms;
    let prop = |w: Window, atom: u32, ty: u32| c.get_property(false, w, atom, ty, 0, 4096);

    let stacking = prop(d.root, a._NET_CLIENT_LIST_STACKING, AtomEnum::WINDOW.into())
        .map_err(x11_err("GetProperty _NET_CLIENT_LIST_STACKING"))?;
    let plain = prop(d.root, a._NET_CLIENT_LIST, AtomEnum::WINDOW.into())
        .map_err(x11_err("GetProperty _NET_CLIENT_LIST"))?;
    let active = prop(d.root, a._NET_ACTIVE_WINDOW, AtomEnum::WINDOW.into())
        .map_err(x11_err("GetProperty _NET_ACTIVE_WINDOW"))?;
    let stacking = values32(
        stacking
            .reply()
            .map_err(x11_err("GetProperty _NET_CLIENT_LIST_STACKING"))?,
    );
    let plain = values32(
        plain
            .reply()
            .map_err(x11_err("GetProperty _NET_CLIENT_LIST"))?,
    );
    let active = values32(
        active
            .reply()
            .map_err(x11_err("GetProperty _NET_ACTIVE_WINDOW"))?,
    )
    .first()
    .copied();
    // Bottom-to-top; a window manager without the stacking list still gives the plain list.
    let clients = if stacking.is_empty() { plain } else { stacking };

    let mut pending = Vec::with_capacity(clients.len());
    for &id in clients.iter().rev() {
        let send = || -> Result<Pending<'_>, x11rb::errors::ConnectionError> {
            Ok(Pending {
                id,
                net_name: prop(id, a._NET_WM_NAME, a.UTF8_STRING)?,
                wm_name: prop(id, AtomEnum::WM_NAME.into(), AtomEnum::ANY.into())?,
                pid: prop(id, a._NET_WM_PID, AtomEnum::CARDINAL.into())?,
                class: prop(id, AtomEnum::WM_CLASS.into(), AtomEnum::STRING.into())?,
                net_state: prop(id, a._NET_WM_STATE, AtomEnum::ATOM.into())?,
                wm_state: prop(id, a.WM_STATE, a.WM_STATE)?,
                extents: prop(id, a._NET_FRAME_EXTENTS, AtomEnum::CARDINAL.into())?,
                attrs: c.get_window_attributes(id)?,
                geometry: c.get_geometry(id)?,
                origin: c.translate_coordinates(id, d.root, 0, 0)?,
            })
        };
        pending.push(send().map_err(x11_err("window properties"))?);
    }
    c.flush().map_err(x11_err("flush"))?;

    let monitors = crate::monitors::monitors(d).unwrap_or_default();
    let mut out = Vec::with_capacity(pending.len());
    for p in pending {
        let id = p.id;
        // A window destroyed after the list was read answers BadWindow: skip it.
        let Some(info) = collect(p, a, active) else {
            tracing::debug!(window = id, "window vanished while listing");
            continue;
        };
        out.push(info);
    }
    for (z, w) in out.iter_mut().enumerate() {
        w.z = z as u32;
        w.monitor = monitors
            .iter()
            .filter_map(|m| m.rect.intersect(&w.frame).map(|r| (r.area(), m.index)))
            .max()
            .map(|(_, index)| index);
    }
    Ok(out)
}

fn collect(p: Pending<'_>, a: &crate::atoms::Atoms, active: Option<u32>) -> Option<WindowInfo> {
    let net_name = p.net_name.reply().ok()?;
    let wm_name = p.wm_name.reply().ok()?;
    let pid = values32(p.pid.reply().ok()?).first().copied();
    let class = p.class.reply().ok()?;
    let net_state = values32(p.net_state.reply().ok()?);
    let wm_state = values32(p.wm_state.reply().ok()?).first().copied();
    let extents = values32(p.extents.reply().ok()?);
    let attrs = p.attrs.reply().ok()?;
    let geometry = p.geometry.reply().ok()?;
    let origin = p.origin.reply().ok()?;

    let title = if net_name.value.is_empty() {
        latin1_or_utf8(&wm_name.value)
    } else {
        String::from_utf8_lossy(&net_name.value).into_owned()
    };
    // WM_CLASS is "instance\0class\0".
    let mut parts = class.value.split(|b| *b == 0).filter(|s| !s.is_empty());
    let instance = parts.next().map(latin1_or_utf8).unwrap_or_default();
    let class = parts
        .next()
        .map(latin1_or_utf8)
        .unwrap_or_else(|| instance.clone());

    let client = Rect::new(
        origin.dst_x as i32,
        origin.dst_y as i32,
        geometry.width as u32,
        geometry.height as u32,
    );
    let frame = match extents.as_slice() {
        [left, right, top, bottom] => Rect::new(
            client.x - *left as i32,
            client.y - *top as i32,
            client.width + left + right,
            client.height + top + bottom,
        ),
        _ => client,
    };
    let has = |atom: u32| net_state.contains(&atom);
    let minimized = has(a._NET_WM_STATE_HIDDEN) || wm_state == Some(ICONIC_STATE);
    let maximized = (has(a._NET_WM_STATE_MAXIMIZED_VERT) && has(a._NET_WM_STATE_MAXIMIZED_HORZ))
        || has(a._NET_WM_STATE_FULLSCREEN);
    let mapped = attrs.map_state == MapState::VIEWABLE;
    Some(WindowInfo {
        id: WindowId(p.id as u64),
        title,
        class,
        process: pid.and_then(process_name),
        pid,
        frame,
        client,
        state: WindowState {
            minimized,
            maximized,
            active: active == Some(p.id),
            visible: mapped && !minimized,
        },
        z: 0,
        monitor: None,
    })
}

fn values32(reply: GetPropertyReply) -> Vec<u32> {
    reply.value32().map(|v| v.collect()).unwrap_or_default()
}

/// `WM_NAME` / `WM_CLASS` are Latin-1 by the ICCCM, but many clients put UTF-8 there.
fn latin1_or_utf8(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| b as char).collect(),
    }
}

/// The executable name of a local process (`/proc/<pid>/comm`).
fn process_name(pid: u32) -> Option<String> {
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(comm.trim_end().to_string())
}

/// The EWMH window manager's name, `None` when no EWMH window manager runs.
pub(crate) fn window_manager_name(d: &X11Desktop) -> Option<String> {
    let check = d
        .conn
        .get_property(
            false,
            d.root,
            d.atoms._NET_SUPPORTING_WM_CHECK,
            AtomEnum::WINDOW,
            0,
            1,
        )
        .ok()?
        .reply()
        .ok()?;
    let wm = values32(check).first().copied()?;
    let name = d
        .conn
        .get_property(false, wm, d.atoms._NET_WM_NAME, d.atoms.UTF8_STRING, 0, 256)
        .ok()?
        .reply()
        .ok()?;
    Some(if name.value.is_empty() {
        "unnamed EWMH window manager".to_string()
    } else {
        String::from_utf8_lossy(&name.value).into_owned()
    })
}

impl Windows for X11Desktop {
    fn list_windows(&self) -> Result<Vec<WindowInfo>, Error> {
        list(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_titles_decode_as_utf8_or_latin1() {
        assert_eq!(latin1_or_utf8("xterm — ü".as_bytes()), "xterm — ü");
        assert_eq!(latin1_or_utf8(&[0x63, 0x61, 0x66, 0xe9]), "café");
    }
}
