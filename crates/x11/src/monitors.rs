//! Monitors from RandR 1.5 `GetMonitors` and from Xinerama, whichever of the two describes the
//! root window ([`choose`]); the whole root as one monitor when neither lists any.
//!
//! The two disagree on real servers: Xephyr started with `+xinerama` and two `-screen`s has a
//! 2304×800 root that Xinerama splits into 1280×800@0,0 and 1024×768@1280,0 while RandR reports
//! one 1280×800 monitor; a RandR driver with a Xinerama shim reports the same heads in both.
//! Both are asked in one round trip (with the root's geometry), because the hit test asks on
//! every pointer action. The choice is a pure function of plain data so it is unit-tested
//! without a server. Used by the backend ([`Screens`]) and by the overlay process, so the frame
//! a human sees is drawn around the same heads the engine captures and hit-tests.

use std::collections::HashMap;
use std::sync::Mutex;

use deskpilot_backend::{Error, Screens};
use deskpilot_types::{Monitor, Rect};
use x11rb::connection::RequestConnection;
use x11rb::protocol::randr::{self, ConnectionExt as _};
use x11rb::protocol::xinerama::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{ConnectionExt as _, Window};
use x11rb::rust_connection::RustConnection;

use crate::desktop::X11Desktop;
use crate::error::x11_err;

/// Where a monitor list came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    RandR,
    Xinerama,
    /// Neither listed a monitor: the root is the one monitor.
    Root,
}

/// Active monitors, primary first, read on `conn` for `root`. `names` caches monitor-name atoms
/// so a listing costs one round trip once they are known.
pub(crate) fn read(
    conn: &RustConnection,
    root: Window,
    names: &Mutex<HashMap<u32, String>>,
) -> Result<Vec<Monitor>, Error> {
    let has = |name| matches!(conn.extension_information(name), Ok(Some(_)));
    // Every request first, then every reply: one round trip.
    let geometry = conn.get_geometry(root).map_err(x11_err("GetGeometry"))?;
    let randr = if has(randr::X11_EXTENSION_NAME) {
        Some(
            conn.randr_get_monitors(root, true)
                .map_err(x11_err("RRGetMonitors"))?,
        )
    } else {
        None
    };
    let xinerama = if has(xinerama::X11_EXTENSION_NAME) {
        Some((
            conn.xinerama_is_active()
                .map_err(x11_err("XineramaIsActive"))?,
            conn.xinerama_query_screens()
                .map_err(x11_err("XineramaQueryScreens"))?,
        ))
    } else {
        None
    };
    let g = geometry.reply().map_err(x11_err("GetGeometry"))?;
    let root_rect = Rect::new(0, 0, u32::from(g.width), u32::from(g.height));

    // An extension that answers with an error lists nothing; the other one (or the root) stands in.
    let mut from_randr = Vec::new();
    if let Some(Ok(reply)) = randr.map(|c| c.reply()) {
        let mut known = names.lock().unwrap_or_else(|e| e.into_inner());
        let unknown: Vec<_> = reply
            .monitors
            .iter()
            .filter(|m| !known.contains_key(&m.name))
            .map(|m| (m.name, conn.get_atom_name(m.name).ok()))
            .collect();
        for (atom, cookie) in unknown {
            let name = cookie
                .and_then(|cookie| cookie.reply().ok())
                .map(|r| String::from_utf8_lossy(&r.name).into_owned())
                .unwrap_or_default();
            known.insert(atom, name);
        }
        from_randr = reply
            .monitors
            .iter()
            .map(|m| Monitor {
                index: 0,
                name: known.get(&m.name).cloned().unwrap_or_default(),
                rect: Rect::new(
                    i32::from(m.x),
                    i32::from(m.y),
                    u32::from(m.width),
                    u32::from(m.height),
                ),
                primary: m.primary,
                scale: 1.0,
            })
            .collect();
    }
    let mut heads = Vec::new();
    if let Some((active, screens)) = xinerama {
        let active = active.reply().is_ok_and(|r| r.state != 0);
        if let (true, Ok(reply)) = (active, screens.reply()) {
            heads = reply
                .screen_info
                .iter()
                .map(|s| {
                    Rect::new(
                        i32::from(s.x_org),
                        i32::from(s.y_org),
                        u32::from(s.width),
                        u32::from(s.height),
                    )
                })
                .collect();
        }
    }
    let (source, monitors) = choose(root_rect, from_randr, xinerama_monitors(&heads));
    tracing::trace!(?source, count = monitors.len(), "monitors");
    Ok(monitors)
}

/// Xinerama heads as monitors: `xinerama-<n>` in the server's order, the first one primary
/// (Xinerama has no primary flag; its first head is where a desktop puts its panel), identical
/// rectangles (mirrored outputs) once.
pub(crate) fn xinerama_monitors(heads: &[Rect]) -> Vec<Monitor> {
    let mut out: Vec<Monitor> = Vec::new();
    for (n, rect) in heads.iter().enumerate() {
        if rect.is_empty() || out.iter().any(|m| m.rect == *rect) {
            continue;
        }
        out.push(Monitor {
            index: 0,
            name: format!("xinerama-{n}"),
            rect: *rect,
            primary: out.is_empty(),
            scale: 1.0,
        });
    }
    out
}

/// The monitor set that describes `root`, ordered and numbered ([`Monitor::order`]).
///
/// A set describes the root when the smallest rectangle around its monitors covers the root
/// (heads of different heights leave dead corners inside the root; that is still a
/// description). RandR wins when both describe it (it names outputs and knows the primary).
/// When neither does, the set whose bounding rectangle covers more of the root wins, RandR on a
/// tie; when both are empty, the root is the one monitor.
pub(crate) fn choose(
    root: Rect,
    randr: Vec<Monitor>,
    xinerama: Vec<Monitor>,
) -> (Source, Vec<Monitor>) {
    let bounds = |set: &[Monitor]| {
        set.iter()
            .map(|m| m.rect)
            .filter(|r| !r.is_empty())
            .reduce(|a, b| a.union(&b))
    };
    let covers = |set: &[Monitor]| bounds(set).is_some_and(|b| b.intersect(&root) == Some(root));
    let covered = |set: &[Monitor]| {
        bounds(set)
            .and_then(|b| b.intersect(&root))
            .map_or(0, |r| r.area())
    };
    let (source, mut chosen) = if randr.is_empty() && xinerama.is_empty() {
        (
            Source::Root,
            vec![Monitor {
                index: 0,
                name: "screen".to_string(),
                rect: root,
                primary: true,
                scale: 1.0,
            }],
        )
    } else {
        let xinerama_wins = !covers(&randr)
            && (covers(&xinerama) || covered(&xinerama) > covered(&randr) || randr.is_empty());
        if xinerama_wins {
            (Source::Xinerama, xinerama)
        } else {
            (Source::RandR, randr)
        }
    };
    // RandR may flag no monitor as primary; the engine's order still wants one first.
    Monitor::order(&mut chosen);
    (source, chosen)
}

/// Active monitors of this desktop, primary first.
pub(crate) fn monitors(d: &X11Desktop) -> Result<Vec<Monitor>, Error> {
    read(&d.conn, d.root, &d.atom_names)
}

impl Screens for X11Desktop {
    fn monitors(&self) -> Result<Vec<Monitor>, Error> {
        monitors(self)
    }

    fn desktop_bounds(&self) -> Result<Rect, Error> {
        let g = self
            .conn
            .get_geometry(self.root)
            .map_err(x11_err("GetGeometry"))?
            .reply()
            .map_err(x11_err("GetGeometry"))?;
        Ok(Rect::new(0, 0, g.width as u32, g.height as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn randr(name: &str, rect: Rect, primary: bool) -> Monitor {
        Monitor {
            index: 0,
            name: name.to_string(),
            rect,
            primary,
            scale: 1.0,
        }
    }

    fn rects(set: &[Monitor]) -> Vec<(u32, Rect, bool)> {
        set.iter().map(|m| (m.index, m.rect, m.primary)).collect()
    }

    /// The defect: on Xephyr `+xinerama -screen 1280x800 -screen 1024x768` RandR reports one
    /// 1280×800 monitor of a 2304×800 root; the second head was invisible.
    #[test]
    fn xinerama_wins_when_randr_describes_only_part_of_the_root() {
        let root = Rect::new(0, 0, 2304, 800);
        let heads = xinerama_monitors(&[Rect::new(0, 0, 1280, 800), Rect::new(1280, 0, 1024, 768)]);
        let (source, set) = choose(
            root,
            vec![randr("default", Rect::new(0, 0, 1280, 800), true)],
            heads,
        );
        assert_eq!(source, Source::Xinerama);
        assert_eq!(
            rects(&set),
            vec![
                (0, Rect::new(0, 0, 1280, 800), true),
                (1, Rect::new(1280, 0, 1024, 768), false),
            ]
        );
        assert_eq!(set[1].name, "xinerama-1");
    }

    #[test]
    fn randr_wins_when_both_describe_the_root() {
        let root = Rect::new(0, 0, 3200, 1080);
        let (source, set) = choose(
            root,
            vec![
                randr("HDMI-1", Rect::new(1920, 0, 1280, 1024), true),
                randr("DP-1", Rect::new(0, 0, 1920, 1080), false),
            ],
            xinerama_monitors(&[Rect::new(0, 0, 1920, 1080), Rect::new(1920, 0, 1280, 1024)]),
        );
        assert_eq!(source, Source::RandR);
        // Primary first, then left to right.
        assert_eq!(
            set.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
            ["HDMI-1", "DP-1"]
        );
        assert_eq!(rects(&set)[0].0, 0);
    }

    #[test]
    fn randr_alone_or_xinerama_alone_is_taken() {
        let root = Rect::new(0, 0, 1920, 1080);
        let (source, set) = choose(root, vec![randr("screen", root, false)], Vec::new());
        assert_eq!((source, set.len()), (Source::RandR, 1));
        let (source, set) = choose(root, Vec::new(), xinerama_monitors(&[root]));
        assert_eq!(
            (source, rects(&set)),
            (Source::Xinerama, vec![(0, root, true)])
        );
    }

    #[test]
    fn neither_set_means_the_root_is_the_one_monitor() {
        let root = Rect::new(0, 0, 1024, 768);
        let (source, set) = choose(root, Vec::new(), Vec::new());
        assert_eq!(source, Source::Root);
        assert_eq!(rects(&set), vec![(0, root, true)]);
        assert_eq!(set[0].name, "screen");
    }

    #[test]
    fn when_neither_covers_the_root_the_larger_cover_wins_randr_on_a_tie() {
        let root = Rect::new(0, 0, 3000, 1000);
        let small = vec![randr("A", Rect::new(0, 0, 1000, 1000), true)];
        let wide =
            xinerama_monitors(&[Rect::new(0, 0, 1000, 1000), Rect::new(1000, 0, 1000, 1000)]);
        assert_eq!(choose(root, small.clone(), wide).0, Source::Xinerama);
        let same = xinerama_monitors(&[Rect::new(0, 0, 1000, 1000)]);
        assert_eq!(choose(root, small, same).0, Source::RandR);
    }

    #[test]
    fn xinerama_mirrors_count_once_and_the_first_head_is_primary() {
        let a = Rect::new(0, 0, 1280, 800);
        let b = Rect::new(1280, 0, 1024, 768);
        let set = xinerama_monitors(&[a, a, b, Rect::new(5, 5, 0, 0)]);
        assert_eq!(
            set.iter()
                .map(|m| (m.name.as_str(), m.rect, m.primary))
                .collect::<Vec<_>>(),
            [("xinerama-0", a, true), ("xinerama-2", b, false)]
        );
    }
}
