//! Per kept node, concurrently: extents, advertised actions, a value or text excerpt and
//! missing names; bare elements for nodes the deadline left unanswered. Where the bounds go
//! on the screen is `placement`'s concern.

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
        states: ElementStates {
            protected: n.role == atspi::Role::PasswordText,
            ..states(n.states, None, window.frame)
        },
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
            if n.bounds.is_some() {
                return n.bounds;
            }
            if !n.ifaces.contains(Interface::Component) {
                return None;
            }
            screen_bounds(conn, o).await
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
            // A password field's text is its mask characters, one per character typed: never
            // read, so not even its length leaves the backend.
            if n.role == atspi::Role::PasswordText {
                return None;
            }
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
                // A control its toolkit left unnamed is called what its label says.
                Some(name) if clean(&name).is_empty() && ask_name => {
                    labelled_by(conn, &p).await.or(Some(name))
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
            states: ElementStates {
                protected: n.role == atspi::Role::PasswordText,
                ..states(n.states, bounds, window.frame)
            },
            actions,
            bounds,
            handle: handle(o),
        }
    }
}

/// What the element that labels `p` (its `LabelledBy` relation) says: the accessible name a
/// toolkit leaves empty on a field whose label sits elsewhere (the label's name, else its text).
async fn labelled_by(conn: &zbus::Connection, p: &AccessibleProxy<'_>) -> Option<String> {
    let relations = p.get_relation_set().await.ok()?;
    let (_, labels) = relations
        .into_iter()
        .find(|(r, _)| *r == atspi::RelationType::LabelledBy)?;
    for label in labels.iter().take(2) {
        let Ok(l) = accessible(conn, label).await else {
            continue;
        };
        if let Some(name) = l.name().await.ok().filter(|n| !clean(n).is_empty()) {
            return Some(name);
        }
        if let Ok(t) = proxy_at::<TextProxy>(conn, label).await
            && let Some(text) = excerpt(&t, EXCERPT).await.filter(|t| !clean(t).is_empty())
        {
            return Some(text);
        }
    }
    None
}

/// A description with the line about a huge container's unread children after it.
fn with_summary(description: String, summary: Option<&str>) -> String {
    match summary {
        Some(s) if description.is_empty() => s.to_string(),
        Some(s) => format!("{description}; {s}"),
        None => description,
    }
}
