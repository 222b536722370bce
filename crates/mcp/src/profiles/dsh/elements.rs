//! `ui_element`: dsh-computer-use's tree, find, invoke, set_value, focus, expand, collapse, select —
//! controls addressed by path (`0/2/1`, sibling indexes from the window's root).
//!
//! A path names a place, so every acting call re-reads the window and resolves the path there
//! (`Session::element_at_path`): a place that now holds another control than the one the path
//! was handed out for is `ELEMENT_NOT_FOUND`, a control without the needed pattern
//! `PATTERN_UNSUPPORTED` — never an action on a neighbour. Without `hwnd`, an acting call uses
//! the window this client's last `tree` / `find` read (the one its paths came from), else the
//! foreground window.

use deskpilot_engine::{
    Check, ElementOp, ElementOutcome, Error, FindRequest, Note, TreeRequest, VerifyTarget,
    WindowRef,
};
use deskpilot_types::WindowId;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::envelope;
use super::wording::WORDING;
use super::{DshServer, error};
use crate::kit::report::{self, Body};
use crate::kit::{Parameters, render};

/// Elements read per window: dsh-computer-use's largest `maxNodes`, so a path from any tree resolves
/// in the same read.
const READ_NODES: usize = 5000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum UiElementAction {
    Tree,
    Find,
    Invoke,
    SetValue,
    Focus,
    Expand,
    Collapse,
    Select,
    /// deskpilot's addition: a named secret into a password field.
    TypeSecret,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UiElementArgs {
    /// What to do.
    pub action: UiElementAction,
    /// Target window; omit for the foreground window.
    pub hwnd: Option<u64>,
    /// Element path from tree / find ("0/2/1"); required by every acting action.
    pub path: Option<String>,
    /// find: a description ("保存", "the search box"), ranked.
    pub description: Option<String>,
    /// find: case-insensitive substring over name, value and id (up to 20 hits).
    pub name_contains: Option<String>,
    /// find: role filter (Button, Edit, MenuItem, ListItem, …).
    pub role: Option<String>,
    /// find: candidates returned (default 5).
    pub limit: Option<u32>,
    /// find: draw the candidates 1..N on a screenshot (default true).
    pub annotate: Option<bool>,
    /// set_value: the exact text.
    pub value: Option<String>,
    /// type_secret: the secret's name (its value never enters the conversation).
    pub secret: Option<String>,
    /// tree: depth, default 8 (clamped 1–20).
    pub max_depth: Option<i64>,
    /// tree: node budget, default 1200 (clamped 1–5000).
    pub max_nodes: Option<i64>,
    /// Report whether the screen changed.
    #[serde(default)]
    pub verify: bool,
    /// Append a fresh screenshot.
    #[serde(default)]
    pub observe: bool,
}

/// `hwnd`, else (for acting calls) the window the client's paths came from, else the
/// foreground window; the engine resolves which window that is.
fn window(hwnd: Option<u64>, acting: bool) -> WindowRef {
    match (hwnd, acting) {
        (Some(h), _) => WindowRef::Id(WindowId(h)),
        (None, true) => WindowRef::PathsWindow,
        (None, false) => WindowRef::Active,
    }
}

fn read(window: WindowRef, screenshot: bool) -> TreeRequest {
    TreeRequest {
        include_screenshot: screenshot,
        max_elements: READ_NODES,
        ..TreeRequest::new(window)
    }
}

fn clamp(v: Option<i64>, default: i64, lo: i64, hi: i64) -> usize {
    v.unwrap_or(default).clamp(lo, hi) as usize
}

/// One outline line: `Role "name" value="…" [states] path=0/2/1`.
fn line(e: &deskpilot_engine::Element, path: &str) -> String {
    let mut l = format!("{} \"{}\"", e.role, e.name);
    if let Some(v) = e.value.as_ref().filter(|v| !v.is_empty()) {
        let v: String = v.chars().take(80).collect();
        l.push_str(&format!(" value=\"{v}\""));
    }
    let flags: Vec<&str> = [
        (!e.enabled).then_some("disabled"),
        e.focused.then_some("focused"),
        e.selected.then_some("selected"),
        e.checked.then_some("checked"),
        e.expanded.then_some("expanded"),
        // A password field: never a value, nor its length (the element carries none).
        e.password.then_some("password"),
        (!e.onscreen).then_some("offscreen"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !flags.is_empty() {
        l.push_str(&format!(" [{}]", flags.join(",")));
    }
    l.push_str(&format!(" path={path}"));
    l
}

fn centre(b: Option<deskpilot_types::Rect>) -> Value {
    b.map_or(
        Value::Null,
        |b| json!({ "x": b.x + b.width as i32 / 2, "y": b.y + b.height as i32 / 2 }),
    )
}

#[tool_router(router = elements_router, vis = "pub(crate)")]
impl DshServer {
    /// Controls by accessibility path: tree (lines end in path=0/2/1), find (by description or nameContains;
    /// ranked, drawn 1..N on a screenshot), then invoke / set_value / focus / expand / collapse / select by path.
    #[tool(
        name = "ui_element",
        annotations(
            title = "UI elements",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn ui_element(&self, Parameters(a): Parameters<UiElementArgs>) -> CallToolResult {
        match a.action {
            UiElementAction::Tree => self.tree(a).await,
            UiElementAction::Find => self.find(a).await,
            _ => self.act_on_path(a).await,
        }
    }
}

impl DshServer {
    async fn tree(&self, a: UiElementArgs) -> CallToolResult {
        let max_depth = clamp(a.max_depth, 8, 1, 20);
        let max_nodes = clamp(a.max_nodes, 1200, 1, 5000);
        let session = self.session();
        let hwnd = a.hwnd;
        let read = render::blocking(self.request_timeout(), "ui_element tree", move || {
            let snapshot = session.window_state(&read(window(hwnd, false), false))?;
            let paths = session.issue_paths(&snapshot);
            Ok::<_, Error>((snapshot, paths))
        })
        .await;
        let (snapshot, paths) = match read {
            Ok(r) => r,
            Err(e) => return error(&e),
        };
        let mut text = format!(
            "UI tree of {} (source: {}; paths are valid while the layout stays):",
            envelope::window_words(&snapshot.window),
            snapshot.source
        );
        let mut nodes = 0usize;
        let mut deeper = 0usize;
        for (e, p) in snapshot.elements.iter().zip(&paths) {
            if e.depth as usize >= max_depth {
                deeper += 1;
                continue;
            }
            if nodes == max_nodes {
                break;
            }
            text.push('\n');
            text.push_str(&"  ".repeat(e.depth as usize));
            text.push_str(&line(e, p));
            nodes += 1;
        }
        let left = snapshot.elements.len() - nodes;
        let truncated = left > 0 || !snapshot.complete;
        if left > 0 {
            text.push_str(&format!(
                "\n… {left} more element(s) left out (maxDepth {max_depth}: {deeper} deeper; maxNodes {max_nodes})."
            ));
        }
        // Notes about snapshot tokens are the deskpilot profile's business; paths are re-read.
        for n in snapshot
            .notes
            .iter()
            .filter(|n| !matches!(n, Note::TokensKept { .. }))
        {
            text.push_str("\nNote: ");
            text.push_str(&n.to_string());
        }
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = Some(json!({
            "hwnd": snapshot.window.id.0,
            "window": envelope::window_json(&snapshot.window),
            "source": snapshot.source,
            "nodes": nodes,
            "total": snapshot.elements.len(),
            "truncated": truncated,
        }));
        r
    }

    async fn find(&self, a: UiElementArgs) -> CallToolResult {
        let description = a.description.clone().unwrap_or_default();
        let name_contains = a.name_contains.clone().unwrap_or_default();
        if description.trim().is_empty() && name_contains.trim().is_empty() {
            return error(&Error::InvalidArgument {
                message: "description: find needs a description or nameContains".to_string(),
            });
        }
        let limit = if name_contains.trim().is_empty() {
            a.limit.unwrap_or(5).clamp(1, 50) as usize
        } else {
            a.limit.unwrap_or(20).clamp(1, 20) as usize
        };
        let annotate = a.annotate.unwrap_or(true);
        let role = a.role.clone().unwrap_or_default();
        let session = self.session();
        let hwnd = a.hwnd;
        let found = render::blocking(self.request_timeout(), "ui_element find", move || {
            let (snapshot, candidates) = session.find_elements(&FindRequest {
                tree: read(window(hwnd, false), annotate),
                description,
                name_contains,
                role,
                limit,
                annotate,
            })?;
            let paths = session.issue_paths(&snapshot);
            Ok::<_, Error>((snapshot, candidates, paths))
        })
        .await;
        let (snapshot, candidates, paths) = match found {
            Ok(f) => f,
            Err(e) => return error(&e),
        };
        let mut text = format!(
            "{} candidate(s) in {}:",
            candidates.len(),
            envelope::window_words(&snapshot.window)
        );
        let mut list = Vec::new();
        for (n, c) in candidates.iter().enumerate() {
            let path = (c.source == "accessibility")
                .then(|| paths.get(c.index).cloned())
                .flatten();
            text.push_str(&format!(
                "\n{}. {} \"{}\"{}{} score={:.2} - {}{}",
                n + 1,
                c.role,
                c.name,
                if c.password { " [password]" } else { "" },
                path.as_ref()
                    .map_or(" (read off pixels: source ocr, no path)".to_string(), |p| {
                        format!(" path={p}")
                    }),
                c.score,
                c.why,
                c.image
                    .map_or(String::new(), |(x, y)| format!("; image=({x},{y})"))
            ));
            let mut item = json!({
                "path": path,
                "role": c.role,
                "name": c.name,
                "value": c.value,
                "automationId": Value::Null,
                "bounds": c.bounds,
                "center": centre(c.bounds),
                "image": c.image.map(|(x, y)| json!({ "x": x, "y": y })),
                "score": c.score,
                "why": c.why,
                "source": c.source,
                "enabled": c.enabled,
            });
            if c.password {
                item["isPassword"] = json!(true);
            }
            list.push(item);
        }
        if candidates.is_empty() {
            text.push_str("\nNothing matched; try other words, or ui_element tree.");
        } else {
            text.push_str(
                "\nAct on one by path (ui_element invoke), or click its image coordinates; pin numbers match this list.",
            );
        }
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        let mut v = json!({
            "found": candidates.len(),
            "candidates": list,
            "hwnd": snapshot.window.id.0,
        });
        if let Some(shot) = &snapshot.screenshot {
            let image = envelope::image_result(
                "Annotated screenshot",
                shot,
                &format!("window {}", envelope::window_words(&snapshot.window)),
                self.session.config().images,
            );
            v["screenshot"] = image.structured_content.unwrap_or_default();
            let mut blocks = image.content.into_iter();
            if let Some(ContentBlock::Text(t)) = blocks.next() {
                render::append_text(&mut r, &t.text);
            }
            r.content.extend(blocks);
        }
        r.structured_content = Some(v);
        r
    }

    async fn act_on_path(&self, a: UiElementArgs) -> CallToolResult {
        let Some(path) = a.path.clone().filter(|p| !p.trim().is_empty()) else {
            return error(&Error::InvalidArgument {
                message: format!(
                    "path: {:?} needs a path from ui_element tree or find, e.g. \"0/2/1\"",
                    a.action
                )
                .to_lowercase(),
            });
        };
        if let Err(e) = deskpilot_engine::paths::parse(&path) {
            return error(&e);
        }
        let action = a.action;
        if action == UiElementAction::TypeSecret {
            let Some(secret) = a.secret.clone().filter(|n| !n.trim().is_empty()) else {
                return error(&Error::InvalidArgument {
                    message: "secret: type_secret needs the secret's name".to_string(),
                });
            };
            let hwnd = a.hwnd;
            return report::act(
                self.session(),
                &WORDING,
                report::Step {
                    what: "ui_element type_secret",
                    timeout: self.request_timeout(),
                    check: Check::default(),
                    target: VerifyTarget::Focused,
                },
                move |s| {
                    let (_, element) = s.element_at_path(&path, read(window(hwnd, true), false))?;
                    s.type_secret(
                        secret.trim(),
                        deskpilot_engine::SecretTarget::Element(element.token.as_str().into()),
                    )
                },
                report::secret_body,
            )
            .await;
        }
        let value = match (action, a.value.clone()) {
            (UiElementAction::SetValue, None) => {
                return error(&Error::InvalidArgument {
                    message: "value: set_value needs the exact text".to_string(),
                });
            }
            (_, v) => v.unwrap_or_default(),
        };
        let what = match action {
            UiElementAction::Invoke => "ui_element invoke",
            UiElementAction::SetValue => "ui_element set_value",
            UiElementAction::Focus => "ui_element focus",
            UiElementAction::Expand => "ui_element expand",
            UiElementAction::Collapse => "ui_element collapse",
            _ => "ui_element select",
        };
        let hwnd = a.hwnd;
        let shown_path = path.trim().to_string();
        report::act(
            self.session(),
            &WORDING,
            report::Step {
                what,
                timeout: self.request_timeout(),
                check: Check::new(a.verify, a.observe),
                target: VerifyTarget::Auto,
            },
            move |s| {
                let (_, element) = s.element_at_path(&path, read(window(hwnd, true), false))?;
                let token = element.token.clone();
                let done: ElementOutcome = match action {
                    UiElementAction::Invoke => s.invoke_element(&token)?,
                    UiElementAction::SetValue => {
                        let (o, read_back) = s.set_element_value(&token, &value)?;
                        return Ok((o, read_back));
                    }
                    UiElementAction::Focus => s.focus_element(&token)?,
                    UiElementAction::Expand => s.element_op(&token, ElementOp::Expand)?,
                    UiElementAction::Collapse => s.element_op(&token, ElementOp::Collapse)?,
                    _ => s.element_op(&token, ElementOp::Select)?,
                };
                Ok((done, String::new()))
            },
            move |(o, read_back)| {
                let e = &o.element;
                let mut text = format!(
                    "{what} on {} \"{}\" at path={shown_path} in {} ({}).",
                    e.role,
                    e.name,
                    envelope::window_words(&o.window),
                    o.detail
                );
                if action == UiElementAction::SetValue {
                    text.push_str(&format!("\nRead back: \"{read_back}\"."));
                }
                for n in &o.notes {
                    text.push_str("\nNote: ");
                    text.push_str(&n.to_string());
                }
                Body::new(
                    text,
                    json!({
                        "path": shown_path,
                        "hwnd": o.window.id.0,
                        "role": e.role,
                        "name": e.name,
                        "result": { "bounds": e.bounds, "detail": o.detail },
                        "value": (action == UiElementAction::SetValue).then_some(read_back),
                    }),
                )
            },
        )
        .await
    }
}
