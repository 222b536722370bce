//! DesktopOS's `elements` group: `desktop_elements` (a window's controls: name, control type,
//! rect, whether it can be invoked) and `desktop_click_element` (by visible name: the control's
//! own invoke action first, then the centre of its rect; an ambiguous name lists the candidates
//! and acts on none).

use deskpilot_backend::Button;
use deskpilot_engine::{ByName, Error, TreeRequest, WindowRef};
use deskpilot_types::{ErrorCode, WindowId};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::desktop::{RegionArg, handle, rect_json, verify_target, window_line};
use super::wording::WORDING;
use super::{DesktopOsServer, error};
use crate::kit::report::{self, Body, Step};
use crate::kit::{Parameters, render};

fn two_hundred() -> usize {
    200
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElementsArgs {
    /// From desktop_list_windows / desktop_perceive.
    #[serde(deserialize_with = "handle")]
    pub handle: u64,
    /// At most this many controls (default 200).
    #[serde(default = "two_hundred", rename = "maxElements")]
    pub max_elements: usize,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickElementArgs {
    /// The control's visible name (exact match first, else contains).
    pub name: String,
    /// The window, from desktop_list_windows / desktop_perceive.
    #[serde(deserialize_with = "handle")]
    pub handle: u64,
    #[serde(default)]
    pub verify: bool,
    #[serde(default, rename = "verifyRegion")]
    pub verify_region: Option<RegionArg>,
}

/// Whether a control runs by its own action (the engine's [`Affordance`]).
///
/// [`Affordance`]: deskpilot_types::Affordance
fn invokable(e: &deskpilot_engine::Element) -> bool {
    e.affordance().activates()
}

/// The token of the one control of a fresh read of `window` named `name` (the engine picks
/// it); none or several are refused in DesktopOS's words.
fn pick(s: &deskpilot_engine::Session, window: WindowId, name: &str) -> Result<String, Error> {
    let tree = TreeRequest {
        max_elements: 2000,
        ..TreeRequest::new(WindowRef::Id(window))
    };
    match s.element_named(&tree, name)? {
        ByName::One(e) => Ok(e.token),
        ByName::Missing {
            window,
            activatable,
        } => {
            let names: Vec<String> = activatable
                .iter()
                .take(15)
                .map(|e| format!("\"{}\"", e.name.trim()))
                .collect();
            Err(Error::Coded {
                code: ErrorCode::ElementNotFound,
                message: format!(
                    "no control named \"{name}\" in {}; controls that can be invoked there: {}",
                    window_line(&window),
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            })
        }
        ByName::Several(many) => Err(Error::Coded {
            code: ErrorCode::AmbiguousElement,
            message: format!(
                "{} controls are named \"{name}\"; none was clicked. Candidates: {}",
                many.len(),
                many.iter()
                    .take(10)
                    .map(|e| format!(
                        "{} \"{}\" at {}",
                        e.role.as_str(),
                        e.name.trim(),
                        e.bounds.map_or("?".to_string(), |b| b.to_string())
                    ))
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        }),
    }
}

#[tool_router(router = elements_router, vis = "pub(crate)")]
impl DesktopOsServer {
    /// 元素级:枚举窗口内控件 / A window's controls: name, controlType (Button, Edit…), rect, invokable. Apps that expose no tree (Electron/Chromium) say so: use desktop_cdp_* there.
    #[tool(
        name = "desktop_elements",
        annotations(
            title = "Window controls",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn desktop_elements(
        &self,
        Parameters(a): Parameters<ElementsArgs>,
    ) -> CallToolResult {
        let session = self.session();
        let max = a.max_elements.clamp(1, 10_000);
        let request = TreeRequest {
            max_elements: max,
            ..TreeRequest::new(WindowRef::Id(WindowId(a.handle)))
        };
        let deadline = request.read_timeout() + self.request_timeout();
        match render::blocking(deadline, "desktop_elements", move || {
            session.window_state(&request)
        })
        .await
        {
            Ok(snap) => {
                let controls: Vec<_> = snap
                    .elements
                    .iter()
                    .filter(|e| e.onscreen && e.depth > 0)
                    .take(max)
                    .collect();
                let mut text = format!(
                    "{} control(s) in {} (source {}{}):",
                    controls.len(),
                    window_line(&snap.window),
                    snap.source,
                    if snap.complete { "" } else { ", incomplete" }
                );
                if controls.is_empty() {
                    text.push_str(
                        "\nThis app exposes no accessible control tree (common for Electron/Chromium apps): use desktop_cdp_* for Chromium pages, or desktop_click by coordinates.",
                    );
                }
                for e in &controls {
                    text.push_str(&format!(
                        "\n{:indent$}{} \"{}\"{}{}{}",
                        "",
                        e.role.as_str(),
                        e.name.trim(),
                        e.bounds
                            .map(|b| format!(" rect {},{} {}x{}", b.x, b.y, b.width, b.height))
                            .unwrap_or_default(),
                        if invokable(e) { " invokable" } else { "" },
                        if e.password { " password" } else { "" },
                        indent = (e.depth.saturating_sub(1) as usize).min(12) * 2
                    ));
                }
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(json!({
                    "handle": snap.window.id.0,
                    "count": controls.len(),
                    "source": snap.source,
                    "complete": snap.complete,
                    "elements": controls.iter().map(|e| {
                        let mut c = json!({
                        "name": e.name.trim(),
                        "controlType": e.role.as_str(),
                        "automationId": e.platform_role,
                        "rect": e.bounds.map(rect_json),
                        "invokable": invokable(e),
                        "enabled": e.enabled,
                        "depth": e.depth,
                        });
                        if e.password {
                            c["isPassword"] = json!(true);
                        }
                        c
                    }).collect::<Vec<_>>(),
                }));
                r
            }
            Err(e) => error(&e),
        }
    }

    /// 元素级执行:按名称点控件 / Click a control by its visible name: its own invoke action first, else the centre of its rect; an ambiguous name lists the candidates and clicks nothing.
    #[tool(
        name = "desktop_click_element",
        annotations(
            title = "Click control",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_click_element(
        &self,
        Parameters(a): Parameters<ClickElementArgs>,
    ) -> CallToolResult {
        let (check, target) = verify_target(a.verify, a.verify_region);
        let (window, name) = (WindowId(a.handle), a.name.clone());
        let mode = self.session.config().hit_test;
        report::act(
            self.session(),
            &WORDING,
            Step {
                what: "desktop_click_element",
                timeout: self.request_timeout() * 2,
                check,
                target,
            },
            move |s| {
                let token = pick(s, window, &name)?;
                s.click_element(&token, Button::Left, 1, mode)
            },
            |o| {
                let e = &o.element;
                let how = match o.route {
                    deskpilot_engine::Route::Accessibility => "its own invoke action",
                    _ => "a click at the centre of its rect",
                };
                let mut text = format!(
                    "Clicked {} \"{}\" in {} through {how} ({}).",
                    e.role.as_str(),
                    e.name.trim(),
                    window_line(&o.window),
                    o.detail
                );
                for n in &o.notes {
                    text.push_str(&format!("\nNote: {n}"));
                }
                Body::new(
                    text,
                    json!({
                        "name": e.name.trim(),
                        "controlType": e.role.as_str(),
                        "rect": e.bounds.map(rect_json),
                        "handle": o.window.id.0,
                        "invoked": o.route == deskpilot_engine::Route::Accessibility,
                        "receipt": o.receipt,
                    }),
                )
            },
        )
        .await
    }
}
