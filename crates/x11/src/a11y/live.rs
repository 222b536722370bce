//! An element as it is now, and the toolkit's own hit test: what acting on a token re-checks.
//!
//! [`X11Desktop::live_element`] asks role, name, states and extents in one concurrent round;
//! the bounds go through the placement the window's last tree read found (GTK 4's window
//! origin, logical → physical scaling), so they compare with the tree's. A defunct element or an
//! unknown object is `ElementGone`.
//!
//! [`X11Desktop::hit_test`] starts at the element's top-level frame and descends with
//! `Component.GetAccessibleAtPoint` until no deeper child answers, then says whether the deepest
//! hit is the element or lies inside it (parents walked up, bounded). Where the toolkit gives
//! no answer, or stops above the element, it is `Unsupported`, so the engine proceeds.

use deskpilot_backend::LiveElement;

use super::*;

/// Path of an application's root object: a frame's parent.
const APP_ROOT: &str = "/org/a11y/atspi/accessible/root";
/// How many parents are walked up at most.
const MAX_UP: usize = 64;
/// How many hit-test levels are descended at most.
const MAX_DOWN: usize = 32;

/// The top-level frame of `o` (itself when it is one) and every object from `o` up to it.
async fn frame_of(
    conn: &zbus::Connection,
    o: &ObjectRefOwned,
) -> Result<(ObjectRefOwned, Vec<ObjectRefOwned>), Error> {
    let mut chain = vec![o.clone()];
    let mut at = o.clone();
    for _ in 0..MAX_UP {
        let parent = accessible(conn, &at)
            .await?
            .parent()
            .await
            .map_err(dbus_err("Parent"))?;
        if parent.is_null() || parent.path_as_str() == APP_ROOT {
            return Ok((at, chain));
        }
        chain.push(parent.clone());
        at = parent;
    }
    Err(unavailable("the element's top-level frame is too far up"))
}

/// Whether `hit` is `element` or lies inside it: parents walked up from `hit`, up to `frame`.
async fn inside(
    conn: &zbus::Connection,
    hit: &ObjectRefOwned,
    element: &ObjectRefOwned,
    frame: &ObjectRefOwned,
) -> bool {
    let mut at = hit.clone();
    for _ in 0..MAX_UP {
        if &at == element {
            return true;
        }
        if &at == frame || at.is_null() || at.path_as_str() == APP_ROOT {
            return false;
        }
        let Ok(p) = accessible(conn, &at).await else {
            return false;
        };
        match p.parent().await {
            Ok(parent) => at = parent,
            Err(_) => return false,
        }
    }
    false
}

/// Whether two objects describe the same thing: a transient one (LibreOffice's cells, made
/// anew for each request) with the same role, name and extents as the element.
async fn same_thing(conn: &zbus::Connection, a: &ObjectRefOwned, b: &ObjectRefOwned) -> bool {
    let describe = |o: &ObjectRefOwned| {
        let o = o.clone();
        async move {
            let p = accessible(conn, &o).await.ok()?;
            let c = proxy_at::<ComponentProxy>(conn, &o).await.ok()?;
            let ((role, name), (states, extents)) = futures_lite::future::zip(
                futures_lite::future::zip(p.get_role(), p.name()),
                futures_lite::future::zip(p.get_state(), c.get_extents(CoordType::Screen)),
            )
            .await;
            Some((role.ok()?, name.ok()?, states.ok()?, extents.ok()?))
        }
    };
    let (a, b) = futures_lite::future::zip(describe(a), describe(b)).await;
    match (a, b) {
        (Some(a), Some(b)) => {
            (a.2.contains(State::Transient) || b.2.contains(State::Transient))
                && (a.0, &a.1, a.3) == (b.0, &b.1, b.3)
        }
        _ => false,
    }
}

/// Whether `above` is an ancestor of `o`: parents walked up from `o`; `None` when a parent
/// link breaks on the way.
async fn ancestor_of(
    conn: &zbus::Connection,
    above: &ObjectRefOwned,
    o: &ObjectRefOwned,
) -> Option<bool> {
    let mut at = o.clone();
    for _ in 0..MAX_UP {
        let parent = accessible(conn, &at).await.ok()?.parent().await.ok()?;
        if &parent == above {
            return Some(true);
        }
        if parent.is_null() || parent.path_as_str() == APP_ROOT {
            return Some(false);
        }
        at = parent;
    }
    None
}

/// What a hit test found, before it is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hit {
    /// The deepest hit is the element or inside it.
    Inside,
    /// The deepest hit is elsewhere (another control covers the point, or the point is off
    /// the element).
    Elsewhere,
    /// The deepest hit is an ancestor of the element: the toolkit's hit test stops above it.
    Above,
    /// The frame names no child at the point.
    Nothing,
    /// The deepest hit is not inside the element, and the element's parents break off before
    /// telling whether the hit is above it.
    Unknown,
}

/// The answer `hits` gives for a hit test's outcome; `None` means the toolkit cannot tell.
pub(super) fn judged(hit: Hit, point_in_frame: bool) -> Option<bool> {
    match hit {
        Hit::Inside => Some(true),
        Hit::Elsewhere => Some(false),
        Hit::Above | Hit::Unknown => None,
        // Off the frame a click reaches another window; on it, the toolkit said nothing.
        Hit::Nothing => (!point_in_frame).then_some(false),
    }
}

/// The deepest object the toolkit's hit test names at `(x, y)` (the app's own coordinates),
/// descending from `frame`; `None` when the frame names nothing there.
async fn descend(
    conn: &zbus::Connection,
    frame: &ObjectRefOwned,
    (x, y): (i32, i32),
) -> Result<Option<ObjectRefOwned>, Error> {
    let mut deepest: Option<ObjectRefOwned> = None;
    let mut here = frame.clone();
    for _ in 0..MAX_DOWN {
        let c = proxy_at::<ComponentProxy>(conn, &here).await?;
        match c.get_accessible_at_point(x, y, CoordType::Screen).await {
            Ok(hit) if !hit.is_null() && hit != here => {
                deepest = Some(hit.clone());
                here = hit;
            }
            Ok(_) => break,
            Err(e) if deepest.is_none() => {
                return Err(Error::Unsupported {
                    what: "hit-testing elements",
                    reason: format!("the toolkit's hit test failed: {e}"),
                });
            }
            Err(_) => break,
        }
    }
    Ok(deepest)
}

impl X11Desktop {
    /// Where `o`'s bounds go: its window's remembered placement (found by walking up to its
    /// frame only when its application has windows placed differently).
    async fn placement_of(&self, conn: &zbus::Connection, o: &ObjectRefOwned) -> Placement {
        let known = self.a11y.placements(o.name_as_str().unwrap_or_default());
        let mut all = known.values();
        match all.next() {
            None => Placement::default(),
            Some(first) if all.all(|p| p == first) => *first,
            Some(_) => match frame_of(conn, o).await {
                Ok((frame, _)) => known.get(frame.path_as_str()).copied().unwrap_or_default(),
                Err(_) => Placement::default(),
            },
        }
    }

    /// The showing top-level frame of `o`'s application that contains `at` (each frame's point
    /// converted by its remembered placement).
    async fn frame_at(
        &self,
        conn: &zbus::Connection,
        o: &ObjectRefOwned,
        at: Point,
    ) -> Option<ObjectRefOwned> {
        let app = o.name_as_str()?;
        let root = ObjectRefOwned::new(atspi::ObjectRef::Owned {
            name: zbus::names::UniqueName::try_from(app.to_string()).ok()?,
            path: zbus::zvariant::ObjectPath::try_from(APP_ROOT).ok()?,
        });
        let frames = accessible(conn, &root)
            .await
            .ok()?
            .get_children()
            .await
            .ok()?;
        let placements = self.a11y.placements(app);
        let found = join_all(frames.into_iter().map(|f| {
            let placement = placements.get(f.path_as_str()).copied().unwrap_or_default();
            async move {
                let (x, y) = placement.in_app(at);
                let p = accessible(conn, &f).await.ok()?;
                let c = proxy_at::<ComponentProxy>(conn, &f).await.ok()?;
                let (states, inside) =
                    futures_lite::future::zip(p.get_state(), c.contains(x, y, CoordType::Screen))
                        .await;
                (states.ok()?.contains(State::Showing) && inside.ok()?).then_some(f)
            }
        }))
        .await;
        found.into_iter().flatten().next()
    }

    /// The element's role, name, states and bounds as they are now.
    pub(super) fn live_element(&self, element: &ElementHandle) -> Result<LiveElement, Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "re-reading the element", async {
            let p = accessible(conn, &o).await?;
            let c = proxy_at::<ComponentProxy>(conn, &o).await?;
            let (((r, name), states), (extents, placement)) = futures_lite::future::zip(
                futures_lite::future::zip(
                    futures_lite::future::zip(p.get_role(), p.name()),
                    p.get_state(),
                ),
                futures_lite::future::zip(
                    c.get_extents(CoordType::Screen),
                    self.placement_of(conn, &o),
                ),
            )
            .await;
            let states = states.map_err(dbus_err("GetState"))?;
            if states.contains(State::Defunct) {
                return Err(Error::ElementGone {
                    reason: "the application reports the element defunct".to_string(),
                });
            }
            let r = r.map_err(dbus_err("GetRole"))?;
            let name = name.map_err(dbus_err("Name"))?;
            // No component interface: an element without bounds.
            let bounds = extents
                .ok()
                .and_then(|(x, y, w, h)| bounds(x, y, w, h))
                .map(|b| placement.on_screen(b));
            let mut flags = super::states(states, None, Rect::new(0, 0, 0, 0));
            // No window at hand: placed is as near to "on screen" as this read can say.
            flags.onscreen = bounds.is_some();
            Ok(LiveElement {
                role: role(r),
                name: text::clean(&name),
                states: flags,
                bounds,
            })
        })
    }

    /// Whether the toolkit's hit test at `at` lands on the element or inside it.
    pub(super) fn hit_test(&self, element: &ElementHandle, at: Point) -> Result<bool, Error> {
        let o = object(element)?;
        let conn = &self.a11y.connection()?;
        run(OPERATION_TIMEOUT, "hit-testing the element", async {
            // Up the parents to the frame; where a toolkit's parent links break on the way
            // (LibreOffice: a root pane whose parent is not the panel that holds it), the
            // application's showing frame that contains the point.
            let (frame, chain) = match frame_of(conn, &o).await {
                Ok((frame, chain)) => (frame, Some(chain)),
                Err(e) => match self.frame_at(conn, &o, at).await {
                    Some(frame) => (frame, None),
                    None => return Err(e),
                },
            };
            let placement = self
                .a11y
                .placements(o.name_as_str().unwrap_or_default())
                .get(frame.path_as_str())
                .copied()
                .unwrap_or_default();
            let (x, y) = placement.in_app(at);
            let mut deepest = descend(conn, &frame, (x, y)).await?;
            if deepest.is_none() {
                // Gecko's first hit test into a page it has not hit-tested yet names nothing:
                // once more, a moment later.
                async_io::Timer::after(Duration::from_millis(50)).await;
                deepest = descend(conn, &frame, (x, y)).await?;
            }
            let hit = match &deepest {
                None => Hit::Nothing,
                Some(d) if inside(conn, d, &o, &frame).await => Hit::Inside,
                // LibreOffice hands out a new object for a cell on every hit test.
                Some(d) if same_thing(conn, d, &o).await => Hit::Inside,
                Some(d) => match &chain {
                    Some(chain) if chain.contains(d) => Hit::Above,
                    Some(_) => Hit::Elsewhere,
                    None => match ancestor_of(conn, d, &o).await {
                        Some(true) => Hit::Above,
                        Some(false) => Hit::Elsewhere,
                        None => Hit::Unknown,
                    },
                },
            };
            let in_frame = match proxy_at::<ComponentProxy>(conn, &frame).await {
                Ok(c) => c.contains(x, y, CoordType::Screen).await.unwrap_or(true),
                Err(_) => true,
            };
            tracing::debug!(?hit, in_frame, deepest = ?deepest.as_ref().map(|d| d.path_as_str().to_string()), "hit test");
            judged(hit, in_frame).ok_or_else(|| Error::Unsupported {
                what: "hit-testing elements",
                reason: match hit {
                    Hit::Above => "the toolkit's hit test stops above the element".to_string(),
                    Hit::Unknown => {
                        "the element's parents cannot be followed up to what the toolkit names there"
                            .to_string()
                    }
                    _ => "the toolkit names nothing at that point".to_string(),
                },
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hit_test_says_yes_no_or_cannot_tell() {
        assert_eq!(judged(Hit::Inside, true), Some(true));
        assert_eq!(judged(Hit::Elsewhere, true), Some(false));
        // A toolkit whose hit test stops at a container cannot tell about what is inside.
        assert_eq!(judged(Hit::Above, true), None);
        assert_eq!(judged(Hit::Nothing, true), None);
        assert_eq!(judged(Hit::Nothing, false), Some(false));
        // LibreOffice 7.4: a root pane's parent is not the panel that holds it.
        assert_eq!(judged(Hit::Unknown, true), None);
    }
}
