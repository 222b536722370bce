//! Per kept node, concurrently: extents, advertised actions, a value or text excerpt and
//! missing names; bare elements for nodes the deadline left unanswered; logical → physical
//! bounds for scaled apps.

use super::text::{clean, clean_value, excerpt};
use super::*;

/// Extents, actions and a value for every node, all in flight together.
/// Every node with its bounds, actions, value and names, read concurrently. A node whose
/// reads do not finish by `deadline` comes back bare (what the node list knew); the count of
/// those is returned too.
pub(super) async fn enrich(
    conn: &zbus::Connection,
    nodes: &[Node],
    window: &WindowInfo,
    deadline: Instant,
) -> (Vec<RawElement>, usize) {
    let all = join_all(nodes.iter().map(|n| async move {
        match before(deadline, enrich_one(conn, n, window)).await {
            Some(e) => (e, true),
            None => (bare(n, window), false),
        }
    }))
    .await;
    let unanswered = all.iter().filter(|(_, answered)| !answered).count();
    (all.into_iter().map(|(e, _)| e).collect(), unanswered)
}

/// What the node list alone says about a node.
pub(super) fn bare(n: &Node, window: &WindowInfo) -> RawElement {
    RawElement {
        parent: n.parent,
        depth: n.depth,
        role: role(n.role),
        platform_role: n.role.name().to_string(),
        name: clean(&n.name),
        description: with_summary(
            clean(n.description.as_deref().unwrap_or_default()),
            n.summary.as_deref(),
        ),
        value: None,
        states: states(n.states, None, window.frame),
        actions: Vec::new(),
        bounds: None,
        handle: handle(&n.object),
    }
}

pub(super) async fn enrich_one(
    conn: &zbus::Connection,
    n: &Node,
    window: &WindowInfo,
) -> RawElement {
    {
        let o = &n.object;
        let extents = async {
            if !n.ifaces.contains(Interface::Component) {
                return None;
            }
            let c = proxy_at::<ComponentProxy>(conn, o).await.ok()?;
            let (x, y, w, h) = c.get_extents(CoordType::Screen).await.ok()?;
            bounds(x, y, w, h)
        };
        let actions = async {
            if !n.ifaces.contains(Interface::Action) {
                return Vec::new();
            }
            let Ok(a) = proxy_at::<ActionProxy>(conn, o).await else {
                return Vec::new();
            };
            action_names(&a)
                .await
                // Chromium's window lists actions without names: nothing to show or invoke.
                .map(|v| v.into_iter().filter(|n| !n.trim().is_empty()).collect())
                .unwrap_or_default()
        };
        let value = async {
            let label = matches!(n.role, atspi::Role::Label | atspi::Role::Static);
            if n.ifaces.contains(Interface::Text) && !label {
                let t = proxy_at::<TextProxy>(conn, o).await.ok()?;
                let text = excerpt(&t, EXCERPT).await?;
                return (!text.is_empty()).then_some(text);
            }
            if n.ifaces.contains(Interface::Value) {
                let v = proxy_at::<ValueProxy>(conn, o).await.ok()?;
                return v.current_value().await.ok().map(|v| format!("{v}"));
            }
            None
        };
        // Names and descriptions the cache delivered are used as they are. An empty name is
        // asked for again only where one is expected (a control GTK names from its label late);
        // a label without a name is named by its text.
        let name_and_description = async {
            let label = n.ifaces.contains(Interface::Text)
                && matches!(n.role, atspi::Role::Label | atspi::Role::Static);
            let ask_name = n.name.trim().is_empty() && (label || role(n.role).is_interactive());
            if !ask_name && n.description.is_some() {
                return Some((None, n.description.clone()));
            }
            let p = accessible(conn, o).await.ok()?;
            let (name, description) = match (&n.description, ask_name) {
                (Some(d), _) => (p.name().await.ok(), Some(d.clone())),
                (None, true) => {
                    let (name, description) =
                        futures_lite::future::zip(p.name(), p.description()).await;
                    (name.ok(), description.ok())
                }
                (None, false) => (None, p.description().await.ok()),
            };
            let name = match name {
                Some(name) if clean(&name).is_empty() && label => {
                    let t = proxy_at::<TextProxy>(conn, o).await.ok()?;
                    excerpt(&t, EXCERPT).await
                }
                other => other,
            };
            Some((name, description))
        };
        let ((bounds, actions), (value, names)) = futures_lite::future::zip(
            futures_lite::future::zip(extents, actions),
            futures_lite::future::zip(value, name_and_description),
        )
        .await;
        let (better_name, description) = names.unwrap_or_default();
        let name = better_name
            .map(|s| clean(&s))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| clean(&n.name));
        RawElement {
            parent: n.parent,
            depth: n.depth,
            role: role(n.role),
            platform_role: n.role.name().to_string(),
            name,
            description: with_summary(
                clean(description.as_deref().unwrap_or_default()),
                n.summary.as_deref(),
            ),
            value: clean_value(value),
            states: states(n.states, bounds, window.frame),
            actions,
            bounds,
            handle: handle(o),
        }
    }
}

/// A description with the line about a huge container's unread children after it.
fn with_summary(description: String, summary: Option<&str>) -> String {
    match summary {
        Some(s) if description.is_empty() => s.to_string(),
        Some(s) => format!("{description}; {s}"),
        None => description,
    }
}

/// Whether an application reports extents relative to its window rather than the screen
/// (GTK 4, also on X11): its frame sits at the origin at the window's size while the window
/// does not. `None` when the window's place cannot tell (it is at the screen's origin) or the
/// sizes differ (a scaled app: `to_physical` maps it from its frame).
pub(super) fn window_relative(frame: Rect, window: &WindowInfo) -> Option<bool> {
    let near = |a: i32, b: i32, slack: i32| (a - b).abs() <= slack;
    let c = window.client;
    let sized = [window.client, window.frame].iter().any(|r| {
        near(r.width as i32, frame.width as i32, 24)
            && near(r.height as i32, frame.height as i32, 24)
    });
    if !sized || (near(c.x, 0, 24) && near(c.y, 0, 24)) {
        return None;
    }
    if near(frame.x, 0, 2) && near(frame.y, 0, 2) {
        return Some(true);
    }
    let placed = [window.client, window.frame]
        .iter()
        .any(|r| near(frame.x, r.x, 24) && near(frame.y, r.y, 24));
    placed.then_some(false)
}

/// Moves window-relative bounds onto the screen: by the window's client origin (the X
/// window the toolkit draws in).
pub(super) fn to_window(elements: &mut [RawElement], window: &WindowInfo) {
    let (dx, dy) = (window.client.x, window.client.y);
    for e in elements.iter_mut() {
        e.bounds = e
            .bounds
            .map(|b| Rect::new(b.x + dx, b.y + dy, b.width, b.height));
        e.states.onscreen = e
            .bounds
            .is_some_and(|b| b.intersect(&window.frame).is_some());
    }
}

/// Converts element bounds from logical to physical pixels when the app reports its frame
/// smaller than its X window by a common factor (GTK with `GDK_SCALE=2`, Qt with a scale
/// factor): each point is mapped relative to the frame, so odd physical origins stay exact.
/// Returns the horizontal scale when bounds were converted.
pub(super) fn to_physical(elements: &mut [RawElement], window: &WindowInfo) -> Option<f64> {
    let frame = elements.first()?.bounds?;
    let (target, sx, sy) = [window.client, window.frame].into_iter().find_map(|r| {
        let sx = r.width as f64 / frame.width.max(1) as f64;
        let sy = r.height as f64 / frame.height.max(1) as f64;
        let same = (sx - sy).abs() <= 0.03 * sx;
        (same && (1.1..=4.0).contains(&sx)).then_some((r, sx, sy))
    })?;
    // Toolkits scale by quarter steps (GTK by whole ones); the frame's size is rounded to
    // logical pixels, so snap a measured 1.99 to 2.
    let snap = |s: f64| {
        let q = (s * 4.0).round() / 4.0;
        if (q - s).abs() <= 0.02 * s { q } else { s }
    };
    let (sx, sy) = (snap(sx), snap(sy));
    let map = |b: Rect| {
        let x = target.x as f64 + (b.x - frame.x) as f64 * sx;
        let y = target.y as f64 + (b.y - frame.y) as f64 * sy;
        Rect::new(
            x.round() as i32,
            y.round() as i32,
            (b.width as f64 * sx).round().max(1.0) as u32,
            (b.height as f64 * sy).round().max(1.0) as u32,
        )
    };
    for e in elements.iter_mut() {
        e.bounds = e.bounds.map(map);
        e.states.onscreen = e
            .bounds
            .is_some_and(|b| b.intersect(&window.frame).is_some());
    }
    Some(sx)
}
