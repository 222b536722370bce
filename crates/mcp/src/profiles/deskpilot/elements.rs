//! Element tools: `find_elements`, `set_value`, `perform_action`, `get_element_text`, and the
//! element route of `click`.

use crate::kit::Parameters;
use deskpilot_backend::Button;
use deskpilot_engine::{
    Check, ElementOp, ElementOutcome, FindRequest, HitTestMode, TreeRequest, VerifyTarget,
};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::targets::window_ref;
use super::tree::with_notes_and_screenshot;
use super::wording::WORDING;
use super::{DeskpilotServer, error};
use crate::kit::render;
use crate::kit::report::{self, Body};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindArgs {
    /// Default: last looked at, else active.
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Or title/process.
    #[serde(default, alias = "titleMatch")]
    pub title_match: String,
    /// What to find; kind words (button, box…) prefer that role.
    #[serde(default)]
    pub description: String,
    /// Exact substring filter, not ranking.
    #[serde(default, alias = "nameContains")]
    pub name_contains: String,
    /// Only this role ("Button").
    #[serde(default)]
    pub role: String,
    /// Candidates (default 5, max 50).
    #[serde(default = "five")]
    pub limit: usize,
    /// + screenshot (default true).
    #[serde(default = "yes")]
    pub include_screenshot: bool,
    /// Numbered pins (default true).
    #[serde(default = "yes")]
    pub annotate: bool,
}

fn five() -> usize {
    5
}
fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetValueArgs {
    /// Token ("s3:12").
    pub element: String,
    /// Exact text, or a number for sliders and spinners.
    pub value: String,
    #[serde(default)]
    pub verify: bool,
    #[serde(default)]
    pub observe: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionArgs {
    /// Token ("s3:12").
    pub element: String,
    /// An advertised action, or toggle, expand, collapse, select, focus.
    pub action: String,
    #[serde(default)]
    pub verify: bool,
    #[serde(default)]
    pub observe: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElementArgs {
    /// Token ("s3:12").
    pub element: String,
}

/// An element action's outcome in words.
pub(crate) fn element_body(label: &str, o: &ElementOutcome, extra: serde_json::Value) -> Body {
    let e = &o.element;
    let mut text = format!(
        "{label} {} {} \"{}\" in window {} \"{}\" via {}: {}.",
        e.token,
        e.role,
        e.name,
        o.window.id,
        o.window.title,
        o.route.as_str(),
        o.detail
    );
    if let Some(r) = &o.receipt {
        text.push_str(&format!(
            " Pointer landed at ({}, {}){}.",
            r.x,
            r.y,
            if r.retried { " after one retry" } else { "" }
        ));
    }
    for n in &o.notes {
        text.push_str("\nNote: ");
        text.push_str(&n.to_string());
    }
    let mut structured = json!({
        "action": label,
        "element": e,
        "window": o.window,
        "detail": o.detail,
        "receipt": o.receipt,
        "notes": o.notes,
    });
    if let (Some(s), Some(x)) = (structured.as_object_mut(), extra.as_object()) {
        s.extend(x.clone());
    }
    Body::new(text, structured)
}

impl DeskpilotServer {
    /// `click` with an element token instead of x/y.
    pub(crate) async fn click_element(
        &self,
        token: String,
        button: Button,
        count: u8,
        mode: HitTestMode,
        check: Check,
    ) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            report::Step {
                what: "click",
                timeout: self.request_timeout(),
                check,
                target: VerifyTarget::Auto,
            },
            move |s| s.click_element(&token, button, count, mode),
            |o| element_body("click", o, json!({})),
        )
        .await
    }
}

#[tool_router(router = elements_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Rank controls by description ("save button", "保存"): tokens and centres; OCR where the
    /// tree has no text.
    #[tool(
        name = "find_elements",
        annotations(
            title = "Find elements",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn find_elements(&self, Parameters(a): Parameters<FindArgs>) -> CallToolResult {
        let window = window_ref(a.window_id, &a.title_match);
        let request = FindRequest {
            tree: TreeRequest {
                include_screenshot: a.include_screenshot,
                max_elements: 2000,
                ..TreeRequest::new(window)
            },
            description: a.description,
            name_contains: a.name_contains,
            role: a.role,
            limit: a.limit,
            annotate: a.annotate,
        };
        let engine = self.session();
        let (snapshot, candidates) =
            match render::blocking(self.request_timeout(), "find_elements", move || {
                engine.find_elements(&request)
            })
            .await
            {
                Ok(r) => r,
                Err(e) => return error(&e),
            };
        let pinned = a.annotate && snapshot.screenshot.is_some() && !candidates.is_empty();
        let mut text = format!(
            "{} candidates in window {} \"{}\" (snapshot s{}, {} elements){}:\n",
            candidates.len(),
            snapshot.window.id,
            snapshot.window.title,
            snapshot.id,
            snapshot.elements.len(),
            if pinned {
                "; the screenshot shows them as numbered pins"
            } else {
                ""
            }
        );
        for (i, c) in candidates.iter().enumerate() {
            if c.source == "ocr" {
                // No token: OCR text is pixels, clicked by coordinates in its own screenshot.
                text.push_str(&format!(
                    "{}. [source: ocr] \"{}\" score={:.2} confidence={:.0} — {}{}\n",
                    i + 1,
                    c.name,
                    c.score,
                    c.confidence.unwrap_or(0.0),
                    c.why,
                    match (c.image, c.screenshot_id) {
                        (Some((x, y)), Some(id)) =>
                            format!("; click x={x} y={y} screenshot_id={id}"),
                        _ => String::new(),
                    }
                ));
                continue;
            }
            text.push_str(&format!(
                "{}. {} {} \"{}\"{} score={:.2} — {}{}\n",
                i + 1,
                c.token,
                c.role,
                c.name,
                if c.password { " password" } else { "" },
                c.score,
                c.why,
                c.image
                    .map(|(x, y)| format!("; image=({x},{y})"))
                    .unwrap_or_default()
            ));
        }
        if candidates.is_empty() {
            text.push_str("Nothing matched. Try other words, name_contains, or get_window_state to read the whole tree.\n");
        }
        let (content, screenshot) = with_notes_and_screenshot(text, &snapshot);
        let mut r = CallToolResult::success(content);
        r.structured_content = Some(json!({
            "snapshot_id": snapshot.id,
            "window": snapshot.window,
            "found": candidates.len(),
            "annotated": pinned,
            "candidates": candidates,
            "notes": snapshot.notes,
            "screenshot": screenshot,
        }));
        r
    }

    /// Set an element's text or number via accessibility, then read it back.
    #[tool(
        name = "set_value",
        annotations(
            title = "Set value",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    pub async fn set_value(&self, Parameters(a): Parameters<SetValueArgs>) -> CallToolResult {
        let (token, value) = (a.element, a.value);
        report::act(
            self.session(),
            &WORDING,
            report::Step {
                what: "set_value",
                timeout: self.request_timeout(),
                check: Check::new(a.verify, a.observe),
                target: VerifyTarget::Auto,
            },
            move |s| s.set_element_value(&token, &value),
            |(o, read)| element_body("set_value", o, json!({ "value": read })),
        )
        .await
    }

    /// Run an element's action; effect checked in its states.
    #[tool(
        name = "perform_action",
        annotations(
            title = "Perform action",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn perform_action(&self, Parameters(a): Parameters<ActionArgs>) -> CallToolResult {
        let (token, action) = (a.element, a.action);
        report::act(
            self.session(),
            &WORDING,
            report::Step {
                what: "perform_action",
                timeout: self.request_timeout(),
                check: Check::new(a.verify, a.observe),
                target: VerifyTarget::Auto,
            },
            move |s| {
                if action.trim().eq_ignore_ascii_case("focus") {
                    s.focus_element(&token)
                } else if let Some(op) = ElementOp::parse(&action) {
                    s.element_op(&token, op)
                } else {
                    s.perform_action(&token, &action)
                }
            },
            |o| element_body("perform_action", o, json!({})),
        )
        .await
    }

    /// An element's full text (or value) as it is now.
    #[tool(
        name = "get_element_text",
        annotations(
            title = "Get element text",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn get_element_text(&self, Parameters(a): Parameters<ElementArgs>) -> CallToolResult {
        let engine = self.session();
        let token = a.element;
        match render::blocking(self.request_timeout(), "get_element_text", move || {
            engine.element_text(&token)
        })
        .await
        {
            Ok((e, Some(text))) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
                    "{} {} \"{}\" holds {} characters:\n{text}",
                    e.token,
                    e.role,
                    e.name,
                    text.chars().count()
                ))]);
                r.structured_content = Some(json!({ "element": e, "text": text }));
                r
            }
            // A password field: no text, no count, no mask characters; `element.password` says why.
            Ok((e, None)) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
                    "{} {} \"{}\" is a password field: its text is never shown",
                    e.token, e.role, e.name,
                ))]);
                r.structured_content = Some(json!({ "element": e }));
                r
            }
            Err(e) => error(&e),
        }
    }
}
