//! Read strategy one: the application's whole cache in one `Cache.GetItems` call (GTK), with
//! the nodes whose cached child count disagrees (lazily created children) left for the walk.
//! Those containers, and the "suspects" that look empty, are never asked for their children
//! here: the walk looks at each one's count first and reads a huge one only where it shows
//! (`huge`; a Calc sheet is such an unfinished container, 2,147,483,647 children).
//!
//! A container whose count disagrees but is small is asked for its child list here instead:
//! the children the cache holds keep their cached subtrees and only the others are described
//! (LibreOffice fills its cache before it creates the frame's wrappers, so its cached window
//! hangs below objects the cache does not hold; walking it all cost a Calc read 2½ times).

use super::*;

/// What the application's cache says about a frame's subtree.
pub(super) enum FromCache {
    /// The application has no usable cache (Qt's differs from the specification).
    Unusable,
    /// The application serves no cache right now (GTK before it learns a client listens).
    NotNow,
    /// The frame is no longer in the cache, or no longer showing.
    FrameGone,
    /// The subtree (frame first) and the nodes whose children must be read directly.
    Tree(Vec<Node>, Vec<usize>),
}

/// The subtree under `frame` from the application's cache.
pub(super) async fn from_cache(
    conn: &zbus::Connection,
    frame: &Node,
    limits: &TreeLimits,
    policy: Shown,
    deadline: Instant,
) -> FromCache {
    let mut not_now = false;
    match read_cache(conn, frame, limits, policy, deadline, &mut not_now).await {
        None if not_now => FromCache::NotNow,
        None => FromCache::Unusable,
        Some(None) => FromCache::FrameGone,
        Some(Some((nodes, unfinished))) => FromCache::Tree(nodes, unfinished),
    }
}

pub(super) async fn read_cache(
    conn: &zbus::Connection,
    frame: &Node,
    limits: &TreeLimits,
    policy: Shown,
    deadline: Instant,
    not_now: &mut bool,
) -> Option<Option<(Vec<Node>, Vec<usize>)>> {
    let items = get_items(conn, frame.object.name_as_str()?, not_now).await?;
    let items = items.as_slice();
    let mut children: HashMap<String, Vec<&atspi::CacheItem>> = HashMap::new();
    for item in items {
        children
            .entry(item.parent.path_as_str().to_string())
            .or_default()
            .push(item);
    }
    for list in children.values_mut() {
        list.sort_by_key(|i| i.index);
    }
    let by_path: HashMap<&str, &atspi::CacheItem> =
        items.iter().map(|i| (i.object.path_as_str(), i)).collect();
    // The frame as the cache sees it now: a remembered frame that is gone or hidden is stale.
    let Some(now) = by_path
        .get(frame.object.path_as_str())
        .filter(|i| shown(i.states, policy))
    else {
        return Some(None);
    };
    let mut frame = frame.clone();
    frame.name = now.short_name.clone();
    frame.description = Some(now.name.clone());
    frame.states = now.states;
    let mut nodes = vec![frame];
    // Nodes whose cached children are fewer than they report: walk them.
    let mut unfinished = Vec::new();
    // Showing menus whose children show nothing: open ones (gail) are read directly.
    let mut menus: Vec<(usize, ObjectRefOwned)> = Vec::new();
    // Containers whose child list is asked for, and listed children the cache does not hold.
    let mut partial: Vec<usize> = Vec::new();
    let mut uncached: Vec<(ObjectRefOwned, usize, u32, u32)> = Vec::new();
    let mut stack = vec![0usize];
    // Once a count disagreed, the cache is known to lag behind the application (LibreOffice's
    // says its document holds the one paragraph that had the focus): from then on, containers
    // that create children lazily are asked their count as the traversal reaches them.
    let mut lagging = false;
    loop {
        let wave = std::mem::take(&mut stack);
        let live: HashMap<usize, i32> = if lagging {
            let nodes = &nodes;
            join_all(
                wave.iter()
                    .filter(|&&at| {
                        let n = &nodes[at];
                        n.children.is_none() && n.depth < limits.max_depth && lazy_container(n)
                    })
                    .map(|&at| async move {
                        let p = accessible(conn, &nodes[at].object).await.ok()?;
                        Some((at, p.child_count().await.ok()?))
                    }),
            )
            .await
            .into_iter()
            .flatten()
            .collect()
        } else {
            HashMap::new()
        };
        for at in wave {
            let node = &nodes[at];
            if node.depth >= limits.max_depth {
                continue;
            }
            let path = node.object.path_as_str();
            let kids = children.get(path).map(Vec::as_slice).unwrap_or_default();
            // A node the cache does not hold itself reports the count read with its name.
            let Some(reported) = live
                .get(&at)
                .copied()
                .or_else(|| by_path.get(path).map(|i| i.children))
                .or(node.children)
            else {
                unfinished.push(at);
                continue;
            };
            if read_directly(kids.len(), reported) {
                lagging = true;
                // The count disagrees (LibreOffice creates a frame's wrappers after filling its
                // cache): the child list is asked for, and the children the cache holds keep
                // their cached subtrees. Menus and huge containers are the walk's.
                if too_many(reported, node.states)
                    || hides_children(node.role)
                    || Instant::now() >= deadline
                {
                    unfinished.push(at);
                } else {
                    partial.push(at);
                }
                continue;
            }
            let states: Vec<StateSet> = kids.iter().map(|i| i.states).collect();
            if may_hide_open_items(node.role, &states)
                && let Some(first) = kids.iter().find(|i| i.states.contains(State::Visible))
            {
                menus.push((at, first.object.clone()));
                continue;
            }
            let depth = node.depth + 1;
            let mut pushed = Vec::new();
            for item in kids {
                if nodes.len() >= limits.max_elements {
                    break;
                }
                if !shown(item.states, policy) {
                    continue;
                }
                nodes.push(cached_node(item, at, depth));
                pushed.push(nodes.len() - 1);
            }
            stack.extend(pushed.into_iter().rev());
        }
        if partial.is_empty() {
            if stack.is_empty() {
                break;
            }
            continue;
        }
        // Every partly cached container's child list at once.
        let listed = join_all(partial.iter().map(|&at| {
            let object = nodes[at].object.clone();
            async move { (at, listed_children(conn, &object).await) }
        }))
        .await;
        partial.clear();
        for (at, listed) in listed {
            let Some(listed) = listed else {
                unfinished.push(at);
                continue;
            };
            let depth = nodes[at].depth + 1;
            for (rank, object) in (0u32..).zip(listed) {
                match by_path.get(object.path_as_str()) {
                    Some(item)
                        if shown(item.states, policy) && nodes.len() < limits.max_elements =>
                    {
                        nodes.push(Node {
                            rank,
                            ..cached_node(item, at, depth)
                        });
                        stack.push(nodes.len() - 1);
                    }
                    Some(_) => {}
                    None => uncached.push((object, at, depth, rank)),
                }
            }
        }
        // The listed children the cache does not hold, described together; the cache may still
        // hold their children, so the traversal carries on from each.
        let described = join_all(uncached.drain(..).map(
            |(object, parent, depth, rank)| async move {
                let node = describe_shown(conn, object, parent, depth, policy).await?;
                Some(Node { rank, ..node })
            },
        ))
        .await;
        for node in described.into_iter().flatten() {
            if nodes.len() >= limits.max_elements {
                break;
            }
            nodes.push(node);
            stack.push(nodes.len() - 1);
        }
    }
    // Menus whose items show nothing may be open all the same (gail): see `shown`.
    let open = join_all(menus.iter().map(|(at, item)| {
        let menu = &nodes[*at];
        let container = menu.parent.map(|p| (&nodes[p].object, nodes[p].ifaces));
        menu_open(conn, container, &menu.object, item)
    }))
    .await;
    for ((at, _), open) in menus.iter().zip(open) {
        if open {
            unfinished.push(*at);
        }
    }
    // Toolkits create some children lazily (GTK list boxes, tables, menus): the cache lists
    // such a container with no children at all. Ask the containers that look empty.
    let mut has_children = vec![false; nodes.len()];
    for n in &nodes {
        if let Some(p) = n.parent {
            has_children[p] = true;
        }
    }
    let suspects: Vec<usize> = (0..nodes.len())
        .filter(|&i| !has_children[i] && !unfinished.contains(&i))
        .filter(|&i| nodes[i].depth < limits.max_depth && lazy_container(&nodes[i]))
        .collect();
    let t = Instant::now();
    let n_suspects = suspects.len();
    let counts = join_all(suspects.iter().map(|&i| {
        let object = nodes[i].object.clone();
        async move {
            let p = accessible(conn, &object).await.ok()?;
            p.child_count().await.ok()
        }
    }))
    .await;
    tracing::debug!(
        suspects = n_suspects,
        ms = t.elapsed().as_secs_f64() * 1e3,
        "child counts"
    );
    for (i, count) in suspects.into_iter().zip(counts) {
        if count.unwrap_or(0) > 0 {
            unfinished.push(i);
        }
    }
    Some(Some((nodes, unfinished)))
}

/// A node as the cache describes it.
fn cached_node(item: &atspi::CacheItem, parent: usize, depth: u32) -> Node {
    Node {
        object: item.object.clone(),
        parent: Some(parent),
        depth,
        role: item.role,
        // atspi's field names are shifted: `short_name` carries the accessible name, `name`
        // the description.
        name: item.short_name.clone(),
        description: Some(item.name.clone()),
        states: item.states,
        ifaces: item.ifaces,
        summary: None,
        // A cached count may be stale: a node walked from here asks again.
        children: None,
        rank: u32::try_from(item.index).unwrap_or(0),
        bounds: None,
    }
}

/// A container's children as it lists them now.
async fn listed_children(
    conn: &zbus::Connection,
    object: &ObjectRefOwned,
) -> Option<Vec<ObjectRefOwned>> {
    let p = accessible(conn, object).await.ok()?;
    let children = p.get_children().await.ok()?;
    Some(children.into_iter().filter(|o| !o.is_null()).collect())
}

/// Whether a node's children must be read directly rather than from the cache: fewer cached
/// than it reports were created lazily; more means the cache still lists some that left (GTK
/// 4.8 keeps a closed popover under the button that opened it). A count of -1 says nothing
/// (LibreOffice's menus): the cache is taken as it is.
pub(super) fn read_directly(cached: usize, reported: i32) -> bool {
    reported >= 0 && cached as i64 != i64::from(reported)
}

/// One application's whole cache; `None` when it serves none (`not_now` when it may later).
pub(super) async fn get_items(
    conn: &zbus::Connection,
    app: &str,
    not_now: &mut bool,
) -> Option<Vec<atspi::CacheItem>> {
    let cache = zbus::proxy::Builder::<CacheProxy>::new(conn)
        .destination(app.to_string())
        .ok()?
        .path("/org/a11y/atspi/cache")
        .ok()?
        .cache_properties(zbus::proxy::CacheProperties::No)
        .build()
        .await
        .ok()?;
    let t = Instant::now();
    let items = match cache.get_items().await {
        Ok(items) => items,
        Err(e) => {
            tracing::debug!(error = %e, "Cache.GetItems unusable");
            *not_now = matches!(
                &e,
                zbus::Error::MethodError(name, _, _)
                    if name.as_str() == "org.freedesktop.DBus.Error.UnknownMethod"
                        || name.as_str() == "org.freedesktop.DBus.Error.UnknownObject"
            );
            return None;
        }
    };
    tracing::debug!(
        items = items.len(),
        ms = t.elapsed().as_secs_f64() * 1e3,
        "Cache.GetItems"
    );
    Some(items)
}

/// Containers whose children a toolkit may create only when asked (a LibreOffice document's
/// cached item says 0 children while it shows dozens of paragraphs). Menus and combo boxes
/// count only while open: a closed one's items are hidden anyway.
pub(super) fn lazy_container(n: &Node) -> bool {
    use atspi::Role as A;
    match n.role {
        A::Menu | A::ComboBox => n.states.contains(State::Expanded),
        r => matches!(
            r,
            A::List
                | A::ListBox
                | A::Table
                | A::TreeTable
                | A::Tree
                | A::PageTabList
                | A::ScrollPane
                | A::Viewport
                | A::Panel
                | A::Filler
                | A::DocumentFrame
                | A::DocumentText
                | A::DocumentSpreadsheet
                | A::DocumentPresentation
                | A::DocumentWeb
                | A::DocumentEmail
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Regression: gtk4-demo's primary menu stayed in the tree after it closed: its cache
    /// listed the popover under the button (reported 1 child, cached 2).
    #[test]
    fn a_cache_that_disagrees_with_the_count_is_not_trusted() {
        assert!(read_directly(2, 1));
        // GTK list boxes create rows lazily; a Calc sheet reports i32::MAX.
        assert!(read_directly(0, 117));
        assert!(read_directly(0, i32::MAX));
        assert!(!read_directly(29, 29));
        assert!(!read_directly(0, 0));
        // LibreOffice 7.4's menus report -1 children with their items cached.
        assert!(!read_directly(29, -1));
    }
}
