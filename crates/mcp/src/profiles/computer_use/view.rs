//! What this profile keeps per session, and the tree as computer-use-mcp prints it.
//!
//! For each window the agent read with `get_window_state`: the engine snapshot it saw, which
//! elements of that snapshot got an `element_index` (the visible ones, depth-first), and the
//! window screenshot x/y are read in. An index becomes the engine token of that snapshot; before
//! it is used the window's tree is read again, so a structure that changed since makes the
//! engine refuse the token with what changed (`stale_element`), never resolve it by position.
//!
//! Tree lines: `<tab indent><index> <ControlType> "<name>" value="<value>" <flags>
//! actions=[<actions>]`, control types in UI Automation's vocabulary, flags `disabled` /
//! `focusable` / `FOCUSED` / `required`, and `actions` exactly what `perform_secondary_action`
//! accepts for the element ([`Action`]).

use std::collections::HashMap;

use deskpilot_engine::{Element, ElementRef, Error, ScreenshotId, Session, WindowRef};
use deskpilot_types::{Role, WindowId, WindowInfo};
use serde::Deserialize;

/// Most elements one `get_window_state` reads.
pub(crate) const MAX_ELEMENTS: usize = 2000;
/// Most characters of tree text one answer carries.
pub(crate) const MAX_TREE_CHARS: usize = 60_000;

/// `window: {app, id}`, the Codex form of naming a window.
#[derive(Debug, Default, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WindowSel {
    /// App (process) name, e.g. "mousepad".
    #[serde(default)]
    pub app: String,
    /// Window id.
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub id: u64,
}

/// What one window's latest state gave the agent.
#[derive(Debug, Clone, Default)]
pub(crate) struct View {
    /// The engine snapshot the indexes belong to.
    pub snapshot: Option<u64>,
    /// `element_index` → index in that snapshot.
    pub visible: Vec<usize>,
    /// The window screenshot x/y are read in.
    pub screenshot: Option<ScreenshotId>,
}

/// This session's views, by window.
#[derive(Debug, Default)]
pub(crate) struct Views(HashMap<WindowId, View>);

impl Views {
    pub(crate) fn of(session: &Session, window: WindowId) -> Option<View> {
        session.with_slot(|v: &mut Views| v.0.get(&window).cloned())
    }

    pub(crate) fn update(session: &Session, window: WindowId, f: impl FnOnce(&mut View)) {
        session.with_slot(|v: &mut Views| f(v.0.entry(window).or_default()));
    }
}

/// The window `window_id` or `window: {app, id}` names (one of the two is required; both must
/// agree). `{app}` alone names the app's only window; which window that is, the engine decides.
pub(crate) fn target(window_id: u64, window: Option<&WindowSel>) -> Result<WindowRef, Error> {
    let sel = window.cloned().unwrap_or_default();
    if window_id != 0 && sel.id != 0 && window_id != sel.id {
        return Err(Error::InvalidArgument {
            message: format!(
                "window_id {window_id} and window.id {} name different windows; pass one",
                sel.id
            ),
        });
    }
    let id = if window_id != 0 { window_id } else { sel.id };
    let app = sel.app.trim();
    match (id, app.is_empty()) {
        (0, true) => Err(Error::InvalidArgument {
            message:
                "name the window: window_id (from list_windows or list_apps) or window: {app, id}"
                    .to_string(),
        }),
        (id, true) => Ok(WindowRef::Id(WindowId(id))),
        (id, false) => Ok(WindowRef::App {
            name: app.to_string(),
            id: (id != 0).then_some(WindowId(id)),
        }),
    }
}

/// The engine's refusals of an app's window, in this profile's words.
pub(crate) fn in_words(e: Error) -> Error {
    match e {
        Error::NoAppWindow { app } => Error::InvalidArgument {
            message: format!(
                "no window of an app called \"{app}\" is open; list_apps shows the running apps"
            ),
        },
        Error::AmbiguousApp { app, windows } => Error::AmbiguousWindow {
            needle: app,
            candidates: windows
                .iter()
                .map(|w| format!("{} \"{}\"", w.id.0, w.title))
                .collect(),
        },
        Error::NotAppWindow { id, app, process } => Error::InvalidArgument {
            message: format!(
                "window {} belongs to {}, not to \"{app}\"",
                id.0,
                process.as_deref().unwrap_or("an unknown process")
            ),
        },
        other => other,
    }
}

/// The window [`target`] names, as it is now.
pub(crate) fn resolve(
    session: &Session,
    window_id: u64,
    window: Option<&WindowSel>,
) -> Result<WindowInfo, Error> {
    session
        .resolve_window(&target(window_id, window)?)
        .map_err(in_words)
}

/// The element indexes of a snapshot: the visible elements depth-first (the root always), each
/// with its depth among visible ancestors.
pub(crate) fn visible(elements: &[Element]) -> Vec<(usize, u32)> {
    let mut depth_of: Vec<Option<u32>> = vec![None; elements.len()];
    let mut out = Vec::new();
    for e in elements {
        // The nearest shown ancestor's depth + 1.
        let mut up = e.parent;
        let mut parent_depth = None;
        while let Some(p) = up {
            if let Some(d) = depth_of[p] {
                parent_depth = Some(d);
                break;
            }
            up = elements[p].parent;
        }
        let shown = e.parent.is_none() || (e.onscreen && e.bounds.is_some());
        if shown {
            let d = parent_depth.map_or(0, |d| d + 1);
            depth_of[e.index] = Some(d);
            out.push((e.index, d));
        }
    }
    out
}

/// UI Automation's name for a role (`Button`, `Edit`, `Hyperlink`, `Pane`, …).
pub(crate) fn control_type(role: Role) -> &'static str {
    match role {
        Role::Application | Role::Window | Role::Dialog | Role::Alert => "Window",
        Role::Button => "Button",
        Role::ToggleButton => "Button",
        Role::CheckBox => "CheckBox",
        Role::RadioButton => "RadioButton",
        Role::ComboBox => "ComboBox",
        Role::Edit => "Edit",
        Role::Text | Role::Heading => "Text",
        Role::Link => "Hyperlink",
        Role::Image => "Image",
        Role::List => "List",
        Role::ListItem => "ListItem",
        Role::Tree => "Tree",
        Role::TreeItem => "TreeItem",
        Role::Table => "Table",
        Role::Row | Role::Cell => "DataItem",
        Role::ColumnHeader => "HeaderItem",
        Role::Menu => "Menu",
        Role::MenuBar => "MenuBar",
        Role::MenuItem | Role::CheckMenuItem | Role::RadioMenuItem => "MenuItem",
        Role::TabList => "Tab",
        Role::Tab => "TabItem",
        Role::TabPanel | Role::Group | Role::ScrollPane | Role::SplitPane => "Pane",
        Role::ToolBar => "ToolBar",
        Role::StatusBar => "StatusBar",
        Role::Slider => "Slider",
        Role::SpinButton => "Spinner",
        Role::ScrollBar => "ScrollBar",
        Role::ProgressBar => "ProgressBar",
        Role::Separator => "Separator",
        Role::ToolTip => "ToolTip",
        Role::Document => "Document",
        _ => "Custom",
    }
}

/// What `perform_secondary_action` can do to an element, named as UI Automation's patterns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Action {
    /// The element's own activation (click / press / activate).
    Invoke,
    Toggle,
    Expand,
    Collapse,
    Select,
    /// Replace the element's text or value (`value` is required).
    SetValue,
    Focus,
    /// Any other action the element advertises, as the platform names it.
    Other(String),
}

impl Action {
    pub(crate) fn name(&self) -> &str {
        match self {
            Action::Invoke => "Invoke",
            Action::Toggle => "Toggle",
            Action::Expand => "Expand",
            Action::Collapse => "Collapse",
            Action::Select => "Select",
            Action::SetValue => "SetValue",
            Action::Focus => "Focus",
            Action::Other(name) => name,
        }
    }
}

/// Exactly what `perform_secondary_action` accepts for `e`, in a fixed order: the engine's
/// [`Affordance`](deskpilot_types::Affordance) in UI Automation's pattern names, then what the
/// application advertises beyond it, as it names it. A disabled element accepts nothing.
pub(crate) fn actions(e: &Element) -> Vec<Action> {
    let mut out = Vec::new();
    if !e.enabled {
        return out;
    }
    let a = e.affordance();
    for (on, action) in [
        (a.toggle, Action::Toggle),
        (a.invoke, Action::Invoke),
        (a.expand && !e.expanded, Action::Expand),
        (a.expand && e.expanded, Action::Collapse),
        (a.select, Action::Select),
        (a.edit, Action::SetValue),
        (a.focus, Action::Focus),
    ] {
        if on {
            out.push(action);
        }
    }
    for raw in e.unclassified_actions() {
        if !out.iter().any(|a| a.name().eq_ignore_ascii_case(raw)) {
            out.push(Action::Other(raw.to_string()));
        }
    }
    out
}

/// Escapes a name or value for a quoted field, cut at `max` characters.
fn quote(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' | '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// The value a line shows: the element's value, an empty one for editable text without any,
/// a toggle's state as UI Automation's Toggle pattern says it.
pub(crate) fn shown_value(e: &Element) -> Option<String> {
    // A password field shows none, not even an empty one: its line says `password` instead.
    if e.password {
        return None;
    }
    if let Some(v) = &e.value {
        return Some(v.clone());
    }
    if e.editable || e.role == Role::Edit {
        return Some(String::new());
    }
    let two_state = matches!(
        e.role,
        Role::CheckBox
            | Role::ToggleButton
            | Role::RadioButton
            | Role::CheckMenuItem
            | Role::RadioMenuItem
    );
    two_state.then(|| if e.checked { "On" } else { "Off" }.to_string())
}

/// One tree line without its indent: `4 Edit "Text Editor" value="" focusable FOCUSED
/// actions=[SetValue]`.
pub(crate) fn line(index: usize, e: &Element) -> String {
    let mut l = format!(
        "{index} {} \"{}\"",
        control_type(e.role),
        quote(&e.name, 160)
    );
    if let Some(v) = shown_value(e) {
        l.push_str(&format!(" value=\"{}\"", quote(&v, 200)));
    }
    for (on, flag) in [
        (!e.enabled, "disabled"),
        (e.focusable, "focusable"),
        (e.focused, "FOCUSED"),
        (e.states.required, "required"),
        (e.password, "password"),
    ] {
        if on {
            l.push(' ');
            l.push_str(flag);
        }
    }
    let acts = actions(e);
    if !acts.is_empty() {
        let names: Vec<&str> = acts.iter().map(Action::name).collect();
        l.push_str(&format!(" actions=[{}]", names.join(", ")));
    }
    l
}

/// The tree text of `elements` (tab-indented lines) and how many lines it holds, within
/// `max_chars`.
pub(crate) fn render(
    elements: &[Element],
    shown: &[(usize, u32)],
    max_chars: usize,
) -> (String, usize) {
    let mut text = String::new();
    let mut count = 0;
    for (index, (i, depth)) in shown.iter().enumerate() {
        let l = format!(
            "{}{}\n",
            "\t".repeat(*depth as usize),
            line(index, &elements[*i])
        );
        if text.len() + l.len() > max_chars {
            break;
        }
        text.push_str(&l);
        count += 1;
    }
    (text, count)
}

/// The element `element_index` names in the window's latest state, as it is now: the engine
/// reads the window's tree again first, so a structure that changed since is refused with
/// what changed.
pub(crate) fn element(
    session: &Session,
    window: &WindowInfo,
    index: usize,
) -> Result<(ElementRef, Element), Error> {
    let view = Views::of(session, window.id).filter(|v| v.snapshot.is_some());
    let Some(view) = view else {
        return Err(Error::ElementNotFound {
            what: format!(
                "element_index {index}: window {} has no state yet in this session; call get_window_state {{\"window_id\": {}}} first",
                window.id.0, window.id.0
            ),
        });
    };
    let Some(&at) = view.visible.get(index) else {
        return Err(Error::ElementNotFound {
            what: format!(
                "element_index {index}: the window's latest state has indexes 0 to {}",
                view.visible.len().saturating_sub(1)
            ),
        });
    };
    let snapshot = view.snapshot.unwrap_or_default();
    match session.element_at(snapshot, at) {
        Ok((_, e)) => Ok((
            ElementRef::At {
                snapshot,
                index: at,
            },
            e,
        )),
        Err(e) => Err(in_indexes(e, index)),
    }
}

/// An engine error about a token, naming the `element_index` instead.
pub(crate) fn in_indexes(e: Error, index: usize) -> Error {
    match e {
        Error::StaleElement { why, .. } => Error::StaleElement {
            token: format!("element_index {index}"),
            why,
        },
        Error::ActionUnsupported(mut u) => {
            u.token = format!("element_index {index}");
            Error::ActionUnsupported(u)
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::fake::element;
    use deskpilot_types::Rect;

    use super::*;

    fn el(index: usize, parent: Option<usize>, role: Role, name: &str) -> Element {
        let raw = element(role, name)
            .parent(parent)
            .bounds(Rect::new(0, 0, 10, 10))
            .handle(&index.to_string())
            .build();
        Element {
            token: format!("s1:{index}"),
            ..Element::from_raw(index, raw)
        }
    }

    #[test]
    fn offscreen_elements_get_no_index_and_their_children_move_up() {
        let mut e = vec![
            el(0, None, Role::Window, "w"),
            el(1, Some(0), Role::Group, "scrolled"),
            el(2, Some(1), Role::Button, "a"),
            el(3, Some(0), Role::Button, "b"),
        ];
        e[1].onscreen = false;
        e[0].onscreen = false;
        assert_eq!(visible(&e), [(0, 0), (2, 1), (3, 1)]);
    }

    #[test]
    fn actions_are_what_perform_secondary_action_takes() {
        let mut b = el(0, None, Role::Button, "OK");
        b.actions = vec!["click".into()];
        b.focusable = true;
        assert_eq!(actions(&b), [Action::Invoke, Action::Focus]);
        let mut c = el(0, None, Role::CheckBox, "Wrap");
        c.actions = vec!["click".into()];
        assert_eq!(actions(&c), [Action::Toggle]);
        let mut combo = el(0, None, Role::ComboBox, "Font");
        combo.actions = vec!["press".into(), "showmenu".into()];
        combo.states.expandable = true;
        assert_eq!(
            actions(&combo),
            [
                Action::Invoke,
                Action::Expand,
                Action::Other("showmenu".into())
            ]
        );
        let mut off = el(0, None, Role::Button, "Off");
        off.enabled = false;
        off.actions = vec!["click".into()];
        assert!(actions(&off).is_empty());
    }

    /// Regression (issue 39): a password field's line showed its mask characters, one per
    /// character typed; an Edit without a value still shows `value=""`, a password field none.
    #[test]
    fn a_password_field_line_shows_no_value_and_says_password() {
        let raw = element(Role::Edit, "Password")
            .bounds(Rect::new(0, 0, 10, 10))
            .password("hunter2hunter")
            .build();
        let field = Element::from_raw(3, raw);
        assert_eq!(shown_value(&field), None);
        assert_eq!(
            line(3, &field),
            "3 Edit \"Password\" focusable password actions=[SetValue, Focus]"
        );
        let plain = Element::from_raw(4, element(Role::Edit, "User").build());
        assert!(line(4, &plain).starts_with("4 Edit \"User\" value=\"\""));
    }
}
