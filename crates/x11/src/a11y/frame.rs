//! Finding a window's frame in its application's accessibility tree (by pid, then extents or
//! title), and re-validating a remembered one; an application not on the bus is told why
//! (`joining`).

use super::*;

/// The applications on the bus (the registry's children), and the bus to ask their pids.
async fn registry_apps(
    conn: &zbus::Connection,
) -> Result<(Vec<ObjectRefOwned>, zbus::fdo::DBusProxy<'_>), Error> {
    let root = AccessibleProxy::builder(conn)
        .destination("org.a11y.atspi.Registry")
        .map_err(dbus_err("registry"))?
        .path("/org/a11y/atspi/accessible/root")
        .map_err(dbus_err("registry"))?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .map_err(dbus_err("registry"))?;
    let apps = root
        .get_children()
        .await
        .map_err(dbus_err("registry children"))?;
    let dbus = zbus::fdo::DBusProxy::new(conn)
        .await
        .map_err(|e| Error::os("DBus proxy", e))?;
    Ok((apps, dbus))
}

/// The pids of the applications on the bus (the registry's children).
pub(super) async fn registry_pids(conn: &zbus::Connection) -> Result<Vec<u32>, Error> {
    let (apps, dbus) = registry_apps(conn).await?;
    let pids = join_all(apps.iter().map(|app| {
        let dbus = &dbus;
        async move {
            let bus = zbus::names::BusName::try_from(app.name_as_str()?.to_string()).ok()?;
            dbus.get_connection_unix_process_id(bus).await.ok()
        }
    }))
    .await;
    Ok(pids.into_iter().flatten().collect())
}

/// Every application on the bus: its bus name and pid.
pub(super) async fn registry_names_and_pids(
    conn: &zbus::Connection,
) -> Result<HashMap<String, u32>, Error> {
    let (apps, dbus) = registry_apps(conn).await?;
    let pids = join_all(apps.iter().map(|app| {
        let dbus = &dbus;
        async move {
            let name = app.name_as_str()?.to_string();
            let bus = zbus::names::BusName::try_from(name.clone()).ok()?;
            Some((name, dbus.get_connection_unix_process_id(bus).await.ok()?))
        }
    }))
    .await;
    Ok(pids.into_iter().flatten().collect())
}

/// The window's frame in its application's tree. `root_bus` reads the root window property
/// `AT_SPI_BUS`, asked only to say why an application is not on the bus.
pub(super) async fn find_frame(
    conn: &zbus::Connection,
    window: &WindowInfo,
    pids: &Mutex<HashMap<String, u32>>,
    root_bus: impl FnOnce() -> Option<String>,
) -> Result<Node, Error> {
    let (apps, dbus) = registry_apps(conn).await?;
    // A bus connection keeps its pid for life: ask the bus once per application.
    let known: HashMap<String, u32> = pids.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let app_pids = join_all(apps.iter().map(|app| {
        let dbus = &dbus;
        let known = &known;
        async move {
            let name = app.name_as_str()?;
            if let Some(pid) = known.get(name) {
                return Some(*pid);
            }
            let bus = zbus::names::BusName::try_from(name.to_string()).ok()?;
            dbus.get_connection_unix_process_id(bus).await.ok()
        }
    }))
    .await;
    {
        let mut cache = pids.lock().unwrap_or_else(|e| e.into_inner());
        for (app, pid) in apps.iter().zip(&app_pids) {
            if let (Some(name), Some(pid)) = (app.name_as_str(), pid) {
                cache.insert(name.to_string(), *pid);
            }
        }
    }
    let pids = app_pids;
    let ours: Vec<&ObjectRefOwned> = apps
        .iter()
        .zip(pids)
        .filter(|(_, pid)| window.pid.is_none() || *pid == window.pid)
        .map(|(app, _)| app)
        .collect();
    if ours.is_empty() {
        let bus = a11y_bus_address().await.ok();
        let facts = joining::Facts::of(window.pid, root_bus(), bus);
        return Err(unavailable(joining::not_on_bus(window, &facts)));
    }
    let mut best: Option<(u32, Node)> = None;
    for app in ours {
        let proxy = accessible(conn, app).await?;
        let frames = proxy.get_children().await.unwrap_or_default();
        let described = join_all(frames.iter().map(|f| async move {
            let p = accessible(conn, f).await.ok()?;
            let (name, role, states, ifaces) = futures_lite::future::zip(
                futures_lite::future::zip(p.name(), p.get_role()),
                futures_lite::future::zip(p.get_state(), p.get_interfaces()),
            )
            .await
            .pipe(|((n, r), (s, i))| (n.ok(), r.ok(), s.ok(), i.ok()));
            let extents = match proxy_at::<ComponentProxy>(conn, f).await {
                Ok(c) => c.get_extents(CoordType::Screen).await.ok(),
                Err(_) => None,
            };
            Some((f.clone(), name?, role?, states?, ifaces?, extents))
        }))
        .await;
        for (object, name, role, states, ifaces, extents) in described.into_iter().flatten() {
            let rect = extents.and_then(|(x, y, w, h)| bounds(x, y, w, h));
            let near = |a: Rect, b: Rect| {
                (a.x - b.x).abs() <= 2
                    && (a.y - b.y).abs() <= 2
                    && (a.width as i64 - b.width as i64).abs() <= 2
                    && (a.height as i64 - b.height as i64).abs() <= 2
            };
            let titled = !window.title.is_empty() && name == window.title;
            let score = frame_score(
                rect.is_some_and(|r| near(r, window.client) || near(r, window.frame)),
                titled,
                states.contains(State::Showing),
            );
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                best = Some((
                    score,
                    Node {
                        object,
                        parent: None,
                        depth: 0,
                        role,
                        name,
                        description: None,
                        states,
                        ifaces,
                        summary: None,
                        children: None,
                        rank: 0,
                        bounds: None,
                    },
                ));
            }
        }
    }
    best.map(|(_, n)| n).ok_or_else(|| {
        unavailable(format!(
            "the application of window {} shows no top-level accessible element",
            window.id
        ))
    })
}

/// How well a top-level element matches the window: extents and title together (two maximized
/// windows of one app share their extents: LibreOffice's Calc and Writer), then extents, then
/// title, then merely showing.
pub(super) fn frame_score(placed: bool, titled: bool, showing: bool) -> u32 {
    match (placed, titled) {
        (true, true) => 4,
        (true, false) => 3,
        (false, true) => 2,
        _ => u32::from(showing),
    }
}

/// A remembered frame, refreshed, if it still exists and shows.
pub(super) async fn still_showing(conn: &zbus::Connection, frame: &Node) -> Option<Node> {
    let p = accessible(conn, &frame.object).await.ok()?;
    let (states, name) = futures_lite::future::zip(p.get_state(), p.name()).await;
    let states = states.ok()?;
    if !states.contains(State::Showing) || states.contains(State::Defunct) {
        return None;
    }
    let mut frame = frame.clone();
    frame.states = states;
    frame.name = name.unwrap_or_default();
    Some(frame)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: a maximized LibreOffice Writer window was read as the Calc window beside it
    /// (both frames at 0,0 1600×1000; the first with matching extents won).
    #[test]
    fn a_frame_matching_extents_and_title_wins() {
        let calc = frame_score(true, false, true);
        let writer = frame_score(true, true, true);
        assert!(writer > calc);
        assert!(frame_score(true, false, false) > frame_score(false, true, true));
        assert!(frame_score(false, true, false) > frame_score(false, false, true));
    }
}
