//! Element paths (dsh-computer-use's `ui_element` addressing): a chain of sibling indexes from the
//! window's root element, `0` for the root, `0/2/1` for the second child of its third child.
//!
//! A path names a place, not an element, so it is re-resolved against a fresh read every time;
//! the session remembers what each path it handed out pointed at (role and name), and a path
//! whose place now holds something else is refused (`ELEMENT_NOT_FOUND`, saying what changed)
//! rather than acted on a neighbour.

use std::collections::HashMap;

use deskpilot_types::{Role, WindowId};

use crate::tree::{Element, Snapshot, TreeRequest};
use crate::{error::Error, session::Session};

/// The path of every element of a depth-first list with parent links, by index.
pub fn paths(elements: &[Element]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(elements.len());
    let mut children: HashMap<Option<usize>, usize> = HashMap::new();
    for e in elements {
        let n = children.entry(e.parent).or_insert(0);
        let path = match e.parent.and_then(|p| out.get(p)) {
            Some(parent) => format!("{parent}/{n}"),
            None => n.to_string(),
        };
        *n += 1;
        out.push(path);
    }
    out
}

/// Checks a path's syntax: sibling indexes separated by `/`.
pub fn parse(path: &str) -> Result<Vec<usize>, Error> {
    let parts: Result<Vec<usize>, _> = path.trim().split('/').map(|p| p.trim().parse()).collect();
    parts.ok().filter(|p| !p.is_empty()).ok_or_else(|| Error::InvalidArgument {
        message: format!(
            "path {path:?} is not a chain of sibling indexes like \"0/2/1\" (take it from the tree or find)"
        ),
    })
}

/// What each handed-out path pointed at, per window, and the window handed paths last.
#[derive(Debug, Default)]
struct Issued {
    by_window: HashMap<WindowId, HashMap<String, (Role, String)>>,
    last: Option<WindowId>,
}

impl Session {
    /// The paths of a snapshot's elements, remembered as handed out to this client.
    pub fn issue_paths(&self, snapshot: &Snapshot) -> Vec<String> {
        let all = paths(&snapshot.elements);
        self.with_slot::<Issued, _>(|issued| {
            issued.last = Some(snapshot.window.id);
            let seen = issued.by_window.entry(snapshot.window.id).or_default();
            for (p, e) in all.iter().zip(&snapshot.elements) {
                seen.insert(p.clone(), (e.role, e.name.clone()));
            }
        });
        all
    }

    /// The window this session was last handed paths for
    /// ([`crate::window::WindowRef::PathsWindow`]).
    pub(crate) fn paths_window(&self) -> Option<WindowId> {
        self.with_slot::<Issued, _>(|issued| issued.last)
    }

    /// The element at `path` in a fresh read of the window `tree` names, refused when that place
    /// now holds something other than what the path pointed at when it was handed out.
    pub fn element_at_path(
        &self,
        path: &str,
        tree: TreeRequest,
    ) -> Result<(Snapshot, Element), Error> {
        parse(path)?;
        let path = path.trim().replace(' ', "");
        let snapshot = self.window_state(&TreeRequest {
            include_screenshot: false,
            ..tree
        })?;
        let all = paths(&snapshot.elements);
        let found = all.iter().position(|p| *p == path);
        let was = self.with_slot::<Issued, _>(|issued| {
            issued
                .by_window
                .get(&snapshot.window.id)
                .and_then(|m| m.get(&path).cloned())
        });
        let Some(index) = found else {
            let deepest = (1..path.matches('/').count() + 1)
                .rev()
                .map(|n| {
                    path.splitn(n + 1, '/')
                        .take(n)
                        .collect::<Vec<_>>()
                        .join("/")
                })
                .find(|prefix| all.contains(prefix));
            return Err(Error::ElementNotFound {
                what: format!(
                    "no element at path {path} in {} now{}{}; take the tree again for fresh paths",
                    snapshot.window.label(),
                    was.map_or(String::new(), |(role, name)| format!(
                        " (it was {role} \"{name}\")"
                    )),
                    deepest.map_or(String::new(), |d| format!(
                        "; the deepest part that exists is {d}"
                    ))
                ),
            });
        };
        let element = snapshot.elements[index].clone();
        if let Some((role, name)) = was
            && (role != element.role || name != element.name)
        {
            return Err(Error::ElementNotFound {
                what: format!(
                    "the layout changed: path {path} was {role} \"{name}\" and is now {} \"{}\"; \
                     nothing was done; take the tree again for fresh paths",
                    element.role, element.name
                ),
            });
        }
        Ok((snapshot, element))
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::fake::{FakeWindow, element};
    use deskpilot_backend::{FakeDesktop, RawElement, RawTree};
    use deskpilot_types::{ErrorCode, Rect};

    use super::*;
    use crate::{config::EngineConfig, window::WindowRef};

    fn el(parent: Option<usize>, depth: u32, role: Role, name: &str) -> RawElement {
        element(role, name)
            .parent(parent)
            .depth(depth)
            .actions(&["click"])
            .bounds(Rect::new(10, 10, 40, 20))
            .build()
    }

    fn tree(buttons: &[&str]) -> RawTree {
        let mut elements = vec![
            el(None, 0, Role::Window, "App"),
            el(Some(0), 1, Role::Group, "bar"),
        ];
        for b in buttons {
            elements.push(el(Some(1), 2, Role::Button, b));
        }
        elements.push(el(Some(0), 1, Role::Edit, "Name"));
        deskpilot_backend::fake::tree(elements)
    }

    #[test]
    fn paths_are_sibling_index_chains_and_a_changed_layout_is_refused() {
        let fake = FakeDesktop::new(800, 600);
        let w = fake.add_window(FakeWindow::new("App", Rect::new(0, 0, 400, 300)));
        fake.set_tree(w, tree(&["Open", "Save"]));
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let snap = s.window_state(&TreeRequest::new(WindowRef::Id(w))).unwrap();
        assert_eq!(s.issue_paths(&snap), ["0", "0/0", "0/0/0", "0/0/1", "0/1"]);
        let (_, e) = s
            .element_at_path("0/0/1", TreeRequest::new(WindowRef::Id(w)))
            .unwrap();
        assert_eq!(e.name, "Save");
        // A button appears in front: 0/0/1 is now "Open", not "Save": refused.
        fake.set_tree(w, tree(&["New", "Open", "Save"]));
        let err = s
            .element_at_path("0/0/1", TreeRequest::new(WindowRef::Id(w)))
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::ElementNotFound);
        assert!(
            err.to_string()
                .contains("was Button \"Save\" and is now Button \"Open\""),
            "{err}"
        );
        // Gone entirely: says what was there and the deepest part that exists.
        fake.set_tree(w, tree(&[]));
        let err = s
            .element_at_path("0/0/1", TreeRequest::new(WindowRef::Id(w)))
            .unwrap_err();
        assert!(
            err.to_string().contains("it was Button \"Save\"")
                && err.to_string().contains("deepest part that exists is 0/0"),
            "{err}"
        );
        assert_eq!(
            s.element_at_path("0/x", TreeRequest::new(WindowRef::Id(w)))
                .unwrap_err()
                .code(),
            ErrorCode::InvalidArgument
        );
    }
}
