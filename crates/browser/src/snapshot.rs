//! A page's accessibility tree as text with refs: one line per node that says something,
//! `- button "Submit" [ref=e2]`, indented by depth.
//!
//! Rules (the size of playwright-mcp's snapshots is its users' first complaint): ignored nodes
//! and nameless generic wrappers collapse into their children; inline text boxes, list bullets
//! and nameless images never appear; a leaf that repeats its parent's name (a link's text, a
//! button's inner text) or a sibling control's name (a label) is not repeated; a container
//! whose one child is a control is one line (`heading > link "News" [ref=e4]`); a table row of
//! plain cells is one line (`row: link "Q1" [ref=e9] | "1.20"`); refs go only on interactive nodes
//! (controls, links, focusable nodes), are short (`e12`) and are keyed by the frame and DOM node,
//! so an unchanged node keeps its ref across snapshots. Child frames are rendered under their
//! `<iframe>` node. A password field shows as `[password]`, never with its value, mask or
//! length.

use std::collections::HashMap;

use serde_json::Value;

/// Roles that always get a ref.
const INTERACTIVE: &[&str] = &[
    "button",
    "link",
    "textbox",
    "searchbox",
    "checkbox",
    "radio",
    "combobox",
    "listbox",
    "option",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "tab",
    "switch",
    "slider",
    "spinbutton",
    "treeitem",
    "textField",
    "popUpButton",
];

/// Roles that are only wrappers when they have no name.
const WRAPPERS: &[&str] = &[
    "generic",
    "none",
    "presentation",
    "group",
    "LineBreak",
    "paragraph",
    "LabelText",
    "strong",
    "emphasis",
    "mark",
    "rowgroup",
    "Section",
];

/// A ref's identity: the frame and the DOM node (backend id).
pub type NodeKey = (String, i64);

/// Refs handed out for one page, stable across its snapshots.
#[derive(Debug, Default, Clone)]
pub struct RefTable {
    by_node: HashMap<NodeKey, String>,
    next: u64,
}

impl RefTable {
    /// Whether `r` was ever handed out for this page.
    pub fn knows(&self, r: &str) -> bool {
        self.by_node.values().any(|v| v == r)
    }

    fn get(&mut self, key: NodeKey) -> String {
        if let Some(r) = self.by_node.get(&key) {
            return r.clone();
        }
        self.next += 1;
        let r = format!("e{}", self.next);
        self.by_node.insert(key, r.clone());
        r
    }
}

/// One addressable node of a snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub r#ref: String,
    pub frame: String,
    /// The DOM node: the browser's backend node id, or, when `walker`, the in-page walker's
    /// id of the element, which `page::backend_of` turns into the backend id.
    pub backend: i64,
    /// `backend` is the walker's id (the tree came from the in-page walker).
    pub walker: bool,
    pub role: String,
    pub name: String,
    /// The depth of its line in the rendered text (0: the top).
    pub depth: usize,
}

/// A rendered snapshot.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    pub text: String,
    pub targets: Vec<Target>,
    /// Lines written, and lines left out for the budget.
    pub lines: usize,
    pub omitted: usize,
}

/// One frame's nodes, and the DOM node of the `<iframe>` that holds it (none for the top).
#[derive(Debug, Clone)]
pub struct FrameTree {
    pub frame: String,
    pub owner: Option<i64>,
    pub nodes: Vec<Value>,
    /// The nodes came from the in-page walker: their `backendDOMNodeId` is its id.
    pub walker: bool,
}

fn str_of<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut v = v;
    for p in path {
        v = &v[*p];
    }
    v.as_str().unwrap_or("")
}

fn property<'a>(node: &'a Value, name: &str) -> Option<&'a Value> {
    node["properties"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == name)
        .map(|p| &p["value"]["value"])
}

struct Renderer<'a> {
    frames: &'a [FrameTree],
    refs: &'a mut RefTable,
    max_lines: usize,
    out: Rendered,
}

impl<'a> Renderer<'a> {
    fn frame_under(&self, backend: i64) -> Option<&'a FrameTree> {
        self.frames.iter().find(|f| f.owner == Some(backend))
    }

    fn render_frame(&mut self, frame: &FrameTree, depth: usize) {
        let index: HashMap<&str, &Value> = frame
            .nodes
            .iter()
            .filter_map(|n| n["nodeId"].as_str().map(|id| (id, n)))
            .collect();
        let roots: Vec<&Value> = frame
            .nodes
            .iter()
            .filter(|n| {
                n["parentId"]
                    .as_str()
                    .is_none_or(|p| !index.contains_key(p))
            })
            .collect();
        for root in roots {
            self.node(frame, &index, root, depth, "", "");
        }
    }

    /// The node's children that exist in this frame's tree.
    fn children<'v>(&self, index: &HashMap<&str, &'v Value>, node: &Value) -> Vec<&'v Value> {
        node["childIds"]
            .as_array()
            .map(|c| {
                c.iter()
                    .filter_map(|id| id.as_str().and_then(|id| index.get(id).copied()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A line for `node` (without indentation) at `depth`: role, name, flags, value; its ref
    /// when it is interactive (recorded as a target).
    fn line(&mut self, frame: &FrameTree, node: &Value, depth: usize) -> String {
        let role = str_of(node, &["role", "value"]);
        let name = str_of(node, &["name", "value"]).trim();
        let mut line = String::new();
        if role == "StaticText" {
            line.push_str(&format!("text: \"{name}\""));
            return line;
        }
        line.push_str(role);
        if !name.is_empty() {
            line.push_str(&format!(" \"{name}\""));
        }
        for flag in ["checked", "disabled", "expanded", "selected", "pressed"] {
            match property(node, flag) {
                Some(Value::Bool(true)) => line.push_str(&format!(" [{flag}]")),
                Some(Value::String(s)) if s == "true" => line.push_str(&format!(" [{flag}]")),
                _ => {}
            }
        }
        if is_password(node) {
            // Never a value, a mask or a length: only that it is one.
            line.push_str(" [password]");
        } else if let Some(v) = node["value"]["value"].as_str().filter(|v| !v.is_empty()) {
            let v: String = v.chars().take(120).collect();
            line.push_str(&format!(" value=\"{v}\""));
        }
        if is_interactive(node)
            && let Some(b) = node["backendDOMNodeId"].as_i64()
        {
            let r = self.refs.get((frame.frame.clone(), b));
            line.push_str(&format!(" [ref={r}]"));
            self.out.targets.push(Target {
                r#ref: r,
                frame: frame.frame.clone(),
                backend: b,
                walker: frame.walker,
                role: role.to_string(),
                name: name.to_string(),
                depth,
            });
        }
        line
    }

    fn emit(&mut self, depth: usize, line: &str) {
        if self.out.lines >= self.max_lines {
            self.out.omitted += 1;
            return;
        }
        self.out.text.push_str(&"  ".repeat(depth));
        self.out.text.push_str("- ");
        self.out.text.push_str(line);
        self.out.text.push('\n');
        self.out.lines += 1;
    }

    /// A table row of plain cells on one line at `depth`: `row: "Q47" link "Q47" [ref=e3] |
    /// "1.20"`; `None` when a cell holds more than its text or one control.
    fn inline_row(
        &mut self,
        frame: &FrameTree,
        index: &HashMap<&str, &Value>,
        row: &Value,
        depth: usize,
    ) -> Option<String> {
        let cells = self.children(index, row);
        if cells.is_empty() {
            return None;
        }
        let mut parts: Vec<(Option<&Value>, String)> = Vec::new();
        for cell in &cells {
            let role = str_of(cell, &["role", "value"]);
            if !matches!(role, "cell" | "gridcell" | "columnheader" | "rowheader") {
                return None;
            }
            let name = str_of(cell, &["name", "value"]).trim().to_string();
            let inner: Vec<&Value> = self
                .children(index, cell)
                .into_iter()
                .filter(|c| !skipped_outright(c))
                .collect();
            let texts_only = inner.iter().all(|c| {
                str_of(c, &["role", "value"]) == "StaticText"
                    && name.contains(str_of(c, &["name", "value"]).trim())
            });
            if texts_only {
                parts.push((None, format!("\"{name}\"")));
                continue;
            }
            let [control] = inner.as_slice() else {
                return None;
            };
            let grandchildren = self.children(index, control);
            if !is_interactive(control)
                || !grandchildren
                    .iter()
                    .all(|g| skipped_outright(g) || str_of(g, &["role", "value"]) == "StaticText")
            {
                return None;
            }
            parts.push((Some(*control), String::new()));
        }
        let mut line = "row:".to_string();
        for (i, (control, text)) in parts.into_iter().enumerate() {
            line.push_str(if i == 0 { " " } else { " | " });
            match control {
                Some(c) => line.push_str(&self.line(frame, c, depth)),
                None => line.push_str(&text),
            }
        }
        Some(line)
    }

    fn node(
        &mut self,
        frame: &FrameTree,
        index: &HashMap<&str, &Value>,
        node: &Value,
        depth: usize,
        parent_name: &str,
        prefix: &str,
    ) {
        let role = str_of(node, &["role", "value"]);
        let name = str_of(node, &["name", "value"]).trim();
        let children = self.children(index, node);
        let backend = node["backendDOMNodeId"].as_i64();
        // A leaf that only repeats its parent's name (a link's text or image) says nothing.
        let repeats = !name.is_empty()
            && parent_name.contains(name)
            && !is_interactive(node)
            && children.iter().all(|c| skipped_outright(c));
        let skip = skipped_outright(node)
            || role == "RootWebArea" && depth > 0
            || (WRAPPERS.contains(&role) && name.is_empty())
            || (role == "StaticText" && name.is_empty())
            || repeats;
        let mut next_depth = depth;
        let mut own_name = parent_name;
        if !skip {
            // A named node whose one child is a control of the same name is one line:
            // `heading > link "News" [ref=e4]`.
            let visible: Vec<&Value> = children
                .iter()
                .copied()
                .filter(|c| !skipped_outright(c))
                .collect();
            if !is_interactive(node)
                && let [only] = visible.as_slice()
                && is_interactive(only)
                && (name.is_empty() || str_of(only, &["name", "value"]).trim() == name)
            {
                self.node(
                    frame,
                    index,
                    only,
                    depth,
                    parent_name,
                    &format!("{prefix}{role} > "),
                );
                return;
            }
            if matches!(role, "row")
                && name.is_empty()
                && let Some(line) = self.inline_row(frame, index, node, depth)
            {
                self.emit(depth, &format!("{prefix}{line}"));
                return;
            }
            let line = self.line(frame, node, depth);
            self.emit(depth, &format!("{prefix}{line}"));
            if is_password(node) {
                // Its inner text is the mask (`•` times the length in Chromium's tree).
                return;
            }
            next_depth = depth + 1;
            own_name = name;
        }
        // A text that repeats a sibling control's name is that control's label.
        let sibling_names: Vec<&str> = children
            .iter()
            .filter(|c| str_of(c, &["role", "value"]) != "StaticText")
            .map(|c| str_of(c, &["name", "value"]).trim())
            .filter(|n| !n.is_empty())
            .collect();
        for child in children {
            if str_of(child, &["role", "value"]) == "StaticText"
                && sibling_names.contains(&str_of(child, &["name", "value"]).trim())
            {
                continue;
            }
            let prefix = if skip { prefix } else { "" };
            self.node(frame, index, child, next_depth, own_name, prefix);
        }
        if role == "Iframe"
            && let Some(b) = backend
            && let Some(inner) = self.frame_under(b)
        {
            self.render_frame(inner, next_depth);
        }
    }
}

/// Nodes that never show, nor their place: ignored ones, inline text boxes, list bullets,
/// images without a name.
fn skipped_outright(node: &Value) -> bool {
    let role = str_of(node, &["role", "value"]);
    node["ignored"].as_bool().unwrap_or(false)
        || role == "InlineTextBox"
        || role == "ListMarker"
        || (role == "image" && str_of(node, &["name", "value"]).trim().is_empty())
}

/// A password field: the walker's `protected` property, or Chromium's own tree showing the
/// value as mask characters (`•` times its length; it has no property that says so).
fn is_password(node: &Value) -> bool {
    matches!(property(node, "protected"), Some(Value::Bool(true)))
        || node["value"]["value"]
            .as_str()
            .is_some_and(|v| !v.is_empty() && v.chars().all(|c| matches!(c, '•' | '●')))
}

/// Controls, links and focusable nodes: the ones that get a ref.
fn is_interactive(node: &Value) -> bool {
    let role = str_of(node, &["role", "value"]);
    let focusable = matches!(property(node, "focusable"), Some(Value::Bool(true)));
    INTERACTIVE.contains(&role)
        || (focusable && !matches!(role, "RootWebArea" | "WebArea" | "Iframe"))
}

/// Renders the top frame (the first of `frames`, `owner: None`) with its child frames nested.
pub fn render(frames: &[FrameTree], refs: &mut RefTable, max_lines: usize) -> Rendered {
    let mut r = Renderer {
        frames,
        refs,
        max_lines,
        out: Rendered::default(),
    };
    if let Some(top) = frames.iter().find(|f| f.owner.is_none()) {
        r.render_frame(top, 0);
    }
    r.out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(
        id: &str,
        parent: Option<&str>,
        role: &str,
        name: &str,
        children: &[&str],
        backend: i64,
    ) -> Value {
        json!({
            "nodeId": id,
            "parentId": parent,
            "ignored": false,
            "role": { "type": "role", "value": role },
            "name": { "type": "computedString", "value": name },
            "childIds": children,
            "backendDOMNodeId": backend,
        })
    }

    fn page() -> Vec<FrameTree> {
        vec![
            FrameTree {
                frame: "top".into(),
                owner: None,
                walker: false,
                nodes: vec![
                    node("1", None, "RootWebArea", "Fixture", &["2", "5", "7"], 1),
                    node("2", Some("1"), "generic", "", &["3"], 2),
                    node("3", Some("2"), "button", "Submit", &["4"], 3),
                    node("4", Some("3"), "StaticText", "Submit", &[], 4),
                    node("5", Some("1"), "textbox", "名前", &[], 5),
                    node("7", Some("1"), "Iframe", "", &[], 9),
                ],
            },
            FrameTree {
                frame: "child".into(),
                owner: Some(9),
                walker: false,
                nodes: vec![
                    node("1", None, "RootWebArea", "Inner", &["2"], 1),
                    node("2", Some("1"), "link", "Next page", &[], 2),
                ],
            },
        ]
    }

    #[test]
    fn wrappers_collapse_text_is_not_repeated_frames_nest_and_refs_stay() {
        let mut refs = RefTable::default();
        let r = render(&page(), &mut refs, 100);
        assert_eq!(
            r.text,
            "- RootWebArea \"Fixture\"\n  - button \"Submit\" [ref=e1]\n  - textbox \"名前\" [ref=e2]\n  - Iframe\n    - link \"Next page\" [ref=e3]\n"
        );
        assert_eq!(r.targets.len(), 3);
        assert_eq!(r.targets[2].frame, "child");
        let depths: Vec<usize> = r.targets.iter().map(|t| t.depth).collect();
        assert_eq!(depths, [1, 1, 2], "the depth of each ref's line");
        // The same nodes keep their refs; a new node gets a new one.
        let mut again = page();
        again[0]
            .nodes
            .push(node("8", Some("1"), "button", "New", &[], 20));
        again[0].nodes[0]["childIds"] = json!(["8", "2", "5", "7"]);
        let r = render(&again, &mut refs, 100);
        assert!(r.text.contains("button \"New\" [ref=e4]"), "{}", r.text);
        assert!(r.text.contains("button \"Submit\" [ref=e1]"), "{}", r.text);
    }

    #[test]
    fn repetition_is_said_once() {
        let frames = vec![FrameTree {
            frame: "top".into(),
            owner: None,
            walker: false,
            nodes: vec![
                node(
                    "1",
                    None,
                    "RootWebArea",
                    "News",
                    &["2", "5", "8", "12", "20"],
                    1,
                ),
                // heading > link of the same name; the link's text is not repeated.
                node("2", Some("1"), "heading", "Story", &["3"], 2),
                node("3", Some("2"), "link", "Story", &["4"], 3),
                node("4", Some("3"), "StaticText", "Story", &[], 4),
                // A label's text beside its field; a bullet.
                node("5", Some("1"), "LabelText", "", &["6", "7"], 5),
                node("6", Some("5"), "StaticText", "Search", &[], 6),
                node("7", Some("5"), "searchbox", "Search", &[], 7),
                node("8", Some("1"), "listitem", "", &["9", "10"], 8),
                node("9", Some("8"), "ListMarker", "•", &[], 9),
                node("10", Some("8"), "link", "Home", &[], 10),
                // A table row of plain cells.
                node("12", Some("1"), "row", "", &["13", "15"], 12),
                node("13", Some("12"), "cell", "Q1", &["14"], 13),
                node("14", Some("13"), "link", "Q1", &[], 14),
                node("15", Some("12"), "cell", "1.20", &["16"], 15),
                node("16", Some("15"), "StaticText", "1.20", &[], 16),
                // A button named by aria-label keeps its name, not its inner text.
                node("20", Some("1"), "button", "Save story 3", &["21"], 20),
                node("21", Some("20"), "StaticText", "Save", &[], 21),
            ],
        }];
        let mut refs = RefTable::default();
        let r = render(&frames, &mut refs, 100);
        assert_eq!(
            r.text,
            "- RootWebArea \"News\"\n  - heading > link \"Story\" [ref=e1]\n  - searchbox \"Search\" [ref=e2]\n  - listitem > link \"Home\" [ref=e3]\n  - row: link \"Q1\" [ref=e4] | \"1.20\"\n  - button \"Save story 3\" [ref=e5]\n"
        );
        assert_eq!(r.targets.len(), 5);
        assert_eq!(r.targets[3].backend, 14);
        let link = &r.targets[0];
        assert_eq!(
            (link.role.as_str(), link.name.as_str(), link.depth),
            ("link", "Story", 1)
        );
    }

    #[test]
    fn a_password_field_shows_no_value_mask_or_length() {
        let mut walker = node("2", Some("1"), "textbox", "Password", &[], 2);
        walker["properties"] = json!([{ "name": "protected", "value": { "value": true } }]);
        let mut chromium = node("3", Some("1"), "textbox", "PIN", &["5"], 3);
        chromium["value"] = json!({ "type": "string", "value": "••••••••••" });
        let mask = node("5", Some("3"), "StaticText", "••••••••••", &[], 5);
        let mut plain = node("4", Some("1"), "textbox", "Name", &[], 4);
        plain["value"] = json!({ "type": "string", "value": "Ada" });
        let frames = vec![FrameTree {
            frame: "top".into(),
            owner: None,
            walker: false,
            nodes: vec![
                node("1", None, "RootWebArea", "Sign in", &["2", "3", "4"], 1),
                walker,
                chromium,
                plain,
                mask,
            ],
        }];
        let r = render(&frames, &mut RefTable::default(), 100);
        assert_eq!(
            r.text,
            "- RootWebArea \"Sign in\"\n  - textbox \"Password\" [password] [ref=e1]\n  - textbox \"PIN\" [password] [ref=e2]\n  - textbox \"Name\" value=\"Ada\" [ref=e3]\n"
        );
    }

    #[test]
    fn the_budget_is_counted() {
        let mut refs = RefTable::default();
        let r = render(&page(), &mut refs, 2);
        assert_eq!((r.lines, r.omitted), (2, 3));
    }
}
