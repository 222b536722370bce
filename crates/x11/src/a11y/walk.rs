//! Read strategy two: a concurrent level-by-level walk (Qt, and what the cache left open),
//! dropping hidden children before reading anything else of them, until the limits or the
//! deadline; and the depth-first order the engine expects. Every container's count is looked
//! at before its children are asked for: a huge one is read where it shows (`huge`).

use super::*;

/// Roles whose children are mostly hidden until opened.
pub(super) fn hides_children(r: atspi::Role) -> bool {
    use atspi::Role as A;
    matches!(
        r,
        A::Menu | A::MenuBar | A::ComboBox | A::PopupMenu | A::MenuItem
    )
}

/// Reads one node's basics (its states are known already): its name, description and child
/// count in one `Properties.GetAll` where the toolkit serves it (at-spi2-atk does), then its
/// role and interfaces.
pub(super) async fn describe(
    conn: &zbus::Connection,
    object: ObjectRefOwned,
    states: StateSet,
    parent: usize,
    depth: u32,
) -> Option<Node> {
    let p = accessible(conn, &object).await.ok()?;
    let (basics, (role, ifaces)) = futures_lite::future::zip(
        basics(conn, &object, &p),
        futures_lite::future::zip(p.get_role(), p.get_interfaces()),
    )
    .await;
    let (name, description, children) = basics;
    Some(Node {
        object,
        parent: Some(parent),
        depth,
        role: role.ok()?,
        name,
        description,
        states,
        ifaces: ifaces.unwrap_or_default(),
        summary: None,
        children,
        rank: 0,
        bounds: None,
    })
}

/// Reads a child's states and, when it shows (or has the focus: a sheet's cell cursor stays
/// even scrolled out of view), its basics; `None` for a hidden or vanished child.
pub(super) async fn describe_shown(
    conn: &zbus::Connection,
    object: ObjectRefOwned,
    parent: usize,
    depth: u32,
    policy: Shown,
) -> Option<Node> {
    let p = accessible(conn, &object).await.ok()?;
    let states = p.get_state().await.ok()?;
    (shown(states, policy) || states.contains(State::Focused)).then_some(())?;
    describe(conn, object, states, parent, depth).await
}

/// Applications whose toolkit serves `Properties.GetAll` on its accessible objects (see
/// [`bulk_properties`]); the others are asked one property at a time.
static BULK: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Whether toolkit `name` answers `Properties.GetAll` on accessible objects: at-spi2-atk's
/// (GTK 3, Gecko, Chromium, LibreOffice) and GTK 4's GDBus objects do. Qt's adaptor is left
/// out: asking it closed a Qt 5 application's window.
pub(super) fn bulk_properties(toolkit: &str) -> bool {
    ["gtk", "gail", "gecko", "chromium"]
        .iter()
        .any(|t| toolkit.eq_ignore_ascii_case(t))
}

/// Remembers that `app`'s objects answer `Properties.GetAll`.
pub(super) fn serves_bulk(app: &str) {
    let mut bulk = BULK.lock().unwrap_or_else(|e| e.into_inner());
    if bulk.len() > 256 {
        bulk.clear();
    }
    if !bulk.iter().any(|a| a == app) {
        bulk.push(app.to_string());
    }
}

/// A node's name, and its description and child count when one request gets them all.
pub(super) async fn basics(
    conn: &zbus::Connection,
    object: &ObjectRefOwned,
    p: &AccessibleProxy<'_>,
) -> (String, Option<String>, Option<i32>) {
    let app = object.name_as_str().unwrap_or_default();
    let bulk = BULK
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .any(|a| a == app);
    if bulk && let Some(all) = all_properties(conn, object).await {
        return all;
    }
    (p.name().await.unwrap_or_default(), None, None)
}

/// `Properties.GetAll` of the Accessible interface; `None` when it gives no name (the object
/// is gone, or the answer is not the interface's).
async fn all_properties(
    conn: &zbus::Connection,
    object: &ObjectRefOwned,
) -> Option<(String, Option<String>, Option<i32>)> {
    let props = proxy_at::<zbus::fdo::PropertiesProxy>(conn, object)
        .await
        .ok()?;
    let interface =
        zbus::names::InterfaceName::from_static_str_unchecked("org.a11y.atspi.Accessible");
    let all = props.get_all(interface).await.ok()?;
    let text = |key: &str| {
        all.get(key)
            .and_then(|v| String::try_from(v.try_clone().ok()?).ok())
    };
    let name = text("Name")?;
    let count = all
        .get("ChildCount")
        .and_then(|v| i32::try_from(v.try_clone().ok()?).ok());
    Some((name, text("Description"), count))
}

/// Walks the subtrees under `starts` level by level, every level's requests in flight at once.
/// Reads the children of `starts`, level by level, until the limits or `deadline`; returns
/// whether it finished (false: the deadline cut it short, and the levels read are kept).
pub(super) async fn walk(
    conn: &zbus::Connection,
    nodes: &mut Vec<Node>,
    starts: Vec<usize>,
    limits: &TreeLimits,
    deadline: Instant,
    focused: Option<&str>,
    policy: Shown,
) -> bool {
    let mut level = starts;
    while !level.is_empty() && nodes.len() < limits.max_elements {
        // A huge container may fill half of what is left of the budget, no more.
        let cap = (limits.max_elements - nodes.len()) / 2;
        let reading = join_all(level.iter().map(|&at| {
            let node = nodes[at].clone();
            let container = node
                .parent
                .map(|p| (nodes[p].object.clone(), nodes[p].ifaces));
            async move {
                if node.depth >= limits.max_depth {
                    return (at, Vec::new(), None);
                }
                let depth = node.depth;
                let (children, summary, cells) = children(conn, &node, cap, focused).await;
                if !cells.is_empty() {
                    let kids = describe_grid(conn, children, cells, at, depth + 1, policy).await;
                    return (at, kids, summary);
                }
                if !hides_children(node.role) {
                    // Everything in one round: few children here are hidden.
                    let kids = join_all(
                        children
                            .into_iter()
                            .map(|c| describe_shown(conn, c, at, depth + 1, policy)),
                    )
                    .await
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>();
                    return (at, kids, summary);
                }
                // Menus hold many hidden items: states first, then only what is showing.
                let all: Vec<(ObjectRefOwned, StateSet)> =
                    join_all(children.into_iter().map(|c| async move {
                        let p = accessible(conn, &c).await.ok()?;
                        let states = p.get_state().await.ok()?;
                        Some((c, states))
                    }))
                    .await
                    .into_iter()
                    .flatten()
                    .collect();
                let states: Vec<StateSet> = all.iter().map(|(_, s)| *s).collect();
                let first = all
                    .iter()
                    .find(|(_, s)| s.contains(State::Visible))
                    .map(|(c, _)| c.clone());
                let open = match &first {
                    Some(item) if may_hide_open_items(node.role, &states) => {
                        let container = container.as_ref().map(|(o, i)| (o, *i));
                        menu_open(conn, container, &node.object, item).await
                    }
                    _ => false,
                };
                let showing = if open {
                    open_menu_items(conn, all).await
                } else {
                    all.into_iter().filter(|(_, s)| shown(*s, policy)).collect()
                };
                let kids = join_all(
                    showing
                        .into_iter()
                        .map(|(c, states)| describe(conn, c, states, at, depth + 1)),
                )
                .await
                .into_iter()
                .flatten()
                .collect::<Vec<_>>();
                (at, kids, summary)
            }
        }));
        let Some(kids) = before(deadline, reading).await else {
            return false;
        };
        let mut next = Vec::new();
        for (at, batch, summary) in kids {
            nodes[at].summary = summary;
            for node in batch {
                if nodes.len() >= limits.max_elements {
                    break;
                }
                nodes.push(node);
                next.push(nodes.len() - 1);
            }
        }
        level = next;
    }
    true
}

/// A node's children, and for a container too big to enumerate only those on screen with a
/// line about the rest (see `huge`): the count is looked at before anything else is asked.
/// At most `cap` children of a huge container are read, and its child at path `focused`
/// (the application's focus, as events told) wherever it is.
pub(super) async fn children(
    conn: &zbus::Connection,
    node: &Node,
    cap: usize,
    focused: Option<&str>,
) -> (Vec<ObjectRefOwned>, Option<String>, Vec<CellAt>) {
    let Ok(p) = accessible(conn, &node.object).await else {
        return (Vec::new(), None, Vec::new());
    };
    let count = match node.children {
        Some(n) => Ok(n),
        None => p.child_count().await,
    };
    match count {
        Ok(n) if n <= 0 => (Vec::new(), None, Vec::new()),
        Ok(n) if too_many(n, node.states) => {
            let v = read_visible(conn, node, n, cap, focused).await;
            (v.children, Some(v.summary), v.cells)
        }
        Ok(_) => (p.get_children().await.unwrap_or_default(), None, Vec::new()),
        Err(_) => (Vec::new(), None, Vec::new()),
    }
}

/// Puts `nodes` (parents before children, but not necessarily depth-first) in depth-first order.
pub(super) fn depth_first(nodes: Vec<Node>) -> Vec<Node> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        if let Some(p) = n.parent {
            children[p].push(i);
        }
    }
    for siblings in &mut children {
        siblings.sort_by_key(|&i| nodes[i].rank);
    }
    let mut order = Vec::with_capacity(nodes.len());
    let mut stack = vec![0usize];
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(children[i].iter().rev());
    }
    let mut new_index = vec![0usize; nodes.len()];
    for (new, &old) in order.iter().enumerate() {
        new_index[old] = new;
    }
    order
        .iter()
        .map(|&old| {
            let mut n = nodes[old].clone();
            n.parent = n.parent.map(|p| new_index[p]);
            n
        })
        .collect()
}
