//! Whether an element shows, per application toolkit.
//!
//! Most toolkits set `SHOWING` on everything on screen, and that is the test. Two do not:
//! - GTK 4.8 sets `SHOWING` only on the toplevel; below it everything is `VISIBLE`, and what
//!   is hidden (an unselected notebook page, an unrevealed search entry) has empty extents. For
//!   such an application ([`Shown::VisibleAndPlaced`]) `VISIBLE` admits an element and, once
//!   extents are read, [`drop_unplaced`] takes out those without bounds and nothing placed
//!   below them. Its `Cache.GetItems` keeps a closed popover listed under the button that
//!   opened it (the button reports one child, the cache lists two): `cache` reads such a node's
//!   children directly.
//! - GTK 2 (gail: GIMP 2.10) marks an open menu's items `VISIBLE` and never `SHOWING`; a closed
//!   menu's items are `VISIBLE` too, placed at `i32::MIN` until the menu was first opened and
//!   where it was ever after. What tells an open menu is its container's selection: the menu
//!   bar (or the parent menu) has the open menu selected. So a showing menu whose children
//!   show nothing is open when its container selects it ([`menu_open`]) and, where the
//!   container has no selection interface, when its first visible item is placed; then its
//!   `VISIBLE` children with real extents count as shown ([`open_menu_items`]). This holds for
//!   every toolkit, and a closed menu's items stay hidden.
//!
//! The toolkit is read once per application (`Application.ToolkitName` / `Version`).

use atspi::proxy::application::ApplicationProxy;

use super::*;

/// How an application says an element is on screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shown {
    /// `SHOWING` (GTK 2 and 3, Qt, Gecko, LibreOffice, Chromium).
    Marked,
    /// `VISIBLE` with non-empty extents (GTK 4, which sets `SHOWING` only on its toplevel).
    VisibleAndPlaced,
}

/// The policy for a toolkit as its application names it.
pub(super) fn policy(toolkit: &str, version: &str) -> Shown {
    if toolkit.eq_ignore_ascii_case("gtk") && version.trim().starts_with("4.") {
        Shown::VisibleAndPlaced
    } else {
        Shown::Marked
    }
}

/// Whether an element with `states` may show under `policy` (extents decide the rest).
pub(super) fn shown(states: StateSet, policy: Shown) -> bool {
    if states.contains(State::Defunct) {
        return false;
    }
    match policy {
        Shown::Marked => states.contains(State::Showing),
        Shown::VisibleAndPlaced => {
            states.contains(State::Showing) || states.contains(State::Visible)
        }
    }
}

/// An application's toolkit, as it says.
pub(super) async fn toolkit(conn: &zbus::Connection, app: &str) -> Option<(String, String)> {
    let p = zbus::proxy::Builder::<ApplicationProxy>::new(conn)
        .destination(app.to_string())
        .ok()?
        .path("/org/a11y/atspi/accessible/root")
        .ok()?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .ok()?;
    let (name, version) = futures_lite::future::zip(p.toolkit_name(), p.version()).await;
    Some((name.ok()?, version.unwrap_or_default()))
}

/// Whether a menu's children may hold items that are open but not marked `SHOWING`: the menu
/// shows, none of its children does, and some are `VISIBLE`.
pub(super) fn may_hide_open_items(menu: atspi::Role, states: &[StateSet]) -> bool {
    matches!(menu, atspi::Role::Menu | atspi::Role::PopupMenu)
        && !states.iter().any(|s| s.contains(State::Showing))
        && states.iter().any(|s| s.contains(State::Visible))
}

/// Whether a showing menu whose children show nothing is open (see the module documentation):
/// `container` (its parent, with its interfaces) selects it, or, without a selection
/// interface, `item` (its first visible child) is placed.
pub(super) async fn menu_open(
    conn: &zbus::Connection,
    container: Option<(&ObjectRefOwned, InterfaceSet)>,
    menu: &ObjectRefOwned,
    item: &ObjectRefOwned,
) -> bool {
    if let Some((parent, ifaces)) = container
        && ifaces.contains(Interface::Selection)
    {
        let Ok(s) = proxy_at::<SelectionProxy>(conn, parent).await else {
            return false;
        };
        let n = s.n_selected_children().await.unwrap_or(0).clamp(0, 4);
        let selected = join_all((0..n).map(|i| s.get_selected_child(i))).await;
        if !selected.into_iter().flatten().any(|c| &c == menu) {
            return false;
        }
    }
    screen_bounds(conn, item).await.is_some()
}

/// Of a showing menu's children (with their states), those that are open items: `VISIBLE`
/// with real extents (gail places a closed menu's items at `i32::MIN`).
pub(super) async fn open_menu_items(
    conn: &zbus::Connection,
    children: Vec<(ObjectRefOwned, StateSet)>,
) -> Vec<(ObjectRefOwned, StateSet)> {
    let placed = join_all(children.into_iter().map(|(c, s)| async move {
        if !s.contains(State::Visible) || s.contains(State::Defunct) {
            return None;
        }
        screen_bounds(conn, &c).await.map(|_| (c, s))
    }))
    .await;
    placed.into_iter().flatten().collect()
}

/// Takes out elements without bounds that have nothing placed below them (GTK 4's hidden
/// widgets have empty extents), keeping the root; parents are re-indexed.
pub(super) fn drop_unplaced(elements: Vec<RawElement>) -> Vec<RawElement> {
    let n = elements.len();
    let mut keep: Vec<bool> = elements
        .iter()
        .enumerate()
        .map(|(i, e)| i == 0 || e.bounds.is_some())
        .collect();
    // Children come after their parents: one backward pass carries "keep" upwards.
    for i in (1..n).rev() {
        if keep[i]
            && let Some(p) = elements[i].parent
        {
            keep[p] = true;
        }
    }
    // An element is dropped with its parent: a placed child of a dropped parent cannot be,
    // as the pass above kept that parent.
    let mut index = vec![None; n];
    let mut out = Vec::with_capacity(n);
    for (i, mut e) in elements.into_iter().enumerate() {
        if !keep[i] {
            continue;
        }
        e.parent = e.parent.and_then(|p| index[p]);
        index[i] = Some(out.len());
        out.push(e);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(parent: Option<usize>, name: &str, bounds: Option<Rect>) -> RawElement {
        RawElement {
            parent,
            depth: 0,
            role: Role::Group,
            platform_role: String::new(),
            name: name.to_string(),
            description: String::new(),
            value: None,
            states: ElementStates::default(),
            actions: Vec::new(),
            bounds,
            handle: ElementHandle(String::new()),
        }
    }

    /// Regression: gtk4-demo (GTK 4.8.3) came out as one element, its frame, because only the
    /// toplevel is `SHOWING`.
    #[test]
    fn gtk4_elements_show_when_visible_and_placed() {
        assert_eq!(policy("GTK", "4.8.3"), Shown::VisibleAndPlaced);
        assert_eq!(policy("GTK", "3.24.38"), Shown::Marked);
        assert_eq!(policy("GAIL", "2.24.33"), Shown::Marked);
        assert_eq!(policy("Qt", "5.15.8"), Shown::Marked);
        let visible = StateSet::new(State::Enabled | State::Visible);
        assert!(shown(visible, Shown::VisibleAndPlaced));
        assert!(!shown(visible, Shown::Marked));
        assert!(!shown(
            StateSet::new(State::Visible | State::Defunct),
            Shown::VisibleAndPlaced
        ));
        // Recorded: the frame (0,0 790×590), the notebook's shown page and a hidden one
        // (no extents; its scroll pane 224,83 0×0), the search entry's unrevealed bar.
        let r = |x, y, w, h| bounds(x, y, w, h);
        let tree = vec![
            el(None, "GTK Demo", r(0, 0, 790, 590)),
            el(Some(0), "page Info", None),
            el(Some(1), "scroll Info", r(224, 83, 566, 507)),
            el(Some(2), "text Info", r(224, 83, 566, 507)),
            el(Some(0), "page Source", None),
            el(Some(4), "scroll Source", r(224, 83, 0, 0)),
            el(Some(5), "text Source", r(224, 83, 0, 0)),
            el(Some(0), "search bar", r(0, 46, 224, 0)),
            el(Some(7), "search entry", r(0, 46, 0, 0)),
            el(Some(0), "Run", r(22, 10, 25, 24)),
        ];
        let kept = drop_unplaced(tree);
        let names: Vec<(&str, Option<usize>)> =
            kept.iter().map(|e| (e.name.as_str(), e.parent)).collect();
        assert_eq!(
            names,
            [
                ("GTK Demo", None),
                ("page Info", Some(0)),
                ("scroll Info", Some(1)),
                ("text Info", Some(2)),
                ("Run", Some(0)),
            ]
        );
    }

    /// Regression: GIMP 2.10's open File menu lost its items (gail marks them `VISIBLE`, never
    /// `SHOWING`); a closed menu's items are `VISIBLE` too, placed at `i32::MIN`.
    #[test]
    fn gtk2_open_menus_are_recognised_by_their_visible_items() {
        let visible = StateSet::new(State::Visible | State::Enabled | State::Sensitive);
        let tearoff = StateSet::new(State::Enabled);
        let showing = StateSet::new(State::Visible | State::Showing);
        assert!(may_hide_open_items(
            atspi::Role::Menu,
            &[tearoff, visible, visible]
        ));
        assert!(!may_hide_open_items(
            atspi::Role::Menu,
            &[tearoff, showing, visible]
        ));
        assert!(!may_hide_open_items(atspi::Role::Panel, &[visible]));
        // Extents decide: the open File menu's "New..." and the closed Edit menu's "Undo".
        assert!(bounds(204, 150, 313, 25).is_some());
        assert!(bounds(i32::MIN, i32::MIN, 1, 1).is_none());
    }
}
