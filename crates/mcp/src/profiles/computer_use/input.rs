//! Input: `click`, `perform_secondary_action`, `set_value`, `scroll`, `drag`, `press_key`,
//! `type_text`.
//!
//! computer-use-mcp's input safety: the window is brought to the foreground before any pointer or
//! key input; a point is read in the window's current screenshot (`screenshot_id`, when given,
//! must be that one), must lie inside it (`point_outside_window`), and must not be covered by
//! another app's window (`point_obstructed`, the engine's hit test). Element actions resolve
//! `element_index` through [`view::element`], so a changed window refuses an old index; a scroll
//! or drag on an element hands the engine the element itself, which acts at its centre on screen.

use deskpilot_backend::Button;
use deskpilot_engine::{
    Aim, Check, CoordinateSpace, Element, ElementOp, ElementOutcome, Error, HitTestMode,
    KeyboardNote, KeyboardOutcome, PointerOutcome, PointerTarget, ScreenshotRequest, Session,
    Unsupported, VerifyTarget, WindowAction,
};
use deskpilot_types::{Key, WindowInfo};
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::state::window_json;
use super::view::{self, Action, Views, WindowSel, in_indexes};
use super::wording::WORDING;
use super::{ComputerUseServer, MAX_EDGE, error};
use crate::kit::Parameters;
use crate::kit::report::{self, Body};

/// `up`, `down`, `left` or `right`.
#[derive(Debug, Clone, Copy, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Up,
    #[default]
    Down,
    Left,
    Right,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickArgs {
    /// From list_windows/list_apps; or pass window.
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Codex form {app, id}; one of window_id/window is required.
    #[serde(default)]
    pub window: Option<WindowSel>,
    /// From get_window_state; or x/y.
    #[serde(default)]
    pub element_index: Option<usize>,
    /// Screenshot pixels.
    #[serde(default)]
    pub x: Option<f64>,
    #[serde(default)]
    pub y: Option<f64>,
    /// The screenshot x/y were read in (checked to be the window's current one).
    #[serde(default)]
    pub screenshot_id: Option<u64>,
    /// 1–3 (default 1).
    #[serde(default = "one")]
    pub click_count: u8,
    /// `left`, `right` or `middle`.
    #[serde(default)]
    pub mouse_button: Button,
}

fn one() -> u8 {
    1
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecondaryArgs {
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Codex form {app, id}; one of window_id/window is required.
    #[serde(default)]
    pub window: Option<WindowSel>,
    pub element_index: usize,
    /// One of the element's actions=[…] (Invoke, Toggle, Expand, Collapse, Select, SetValue, Focus…).
    pub action: String,
    /// For SetValue.
    #[serde(default)]
    pub value: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetValueArgs {
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Codex form {app, id}; one of window_id/window is required.
    #[serde(default)]
    pub window: Option<WindowSel>,
    pub element_index: usize,
    /// Replaces the element's text or value; read back.
    pub value: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeSecretArgs {
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Codex form {app, id}; one of window_id/window is required.
    #[serde(default)]
    pub window: Option<WindowSel>,
    /// The password field; omit for the window's only one.
    #[serde(default)]
    pub element_index: Option<usize>,
    /// The secret's name (its value never enters the conversation).
    pub name: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScrollArgs {
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Codex form {app, id}; one of window_id/window is required.
    #[serde(default)]
    pub window: Option<WindowSel>,
    /// Scroll over this element; or x/y; else the window's centre.
    #[serde(default)]
    pub element_index: Option<usize>,
    #[serde(default)]
    pub x: Option<f64>,
    #[serde(default)]
    pub y: Option<f64>,
    #[serde(default)]
    pub screenshot_id: Option<u64>,
    /// Default down.
    #[serde(default)]
    pub direction: Direction,
    /// Wheel notches, 1–50 (default 3).
    #[serde(default = "three")]
    pub amount: u32,
}

fn three() -> u32 {
    3
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DragArgs {
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Codex form {app, id}; one of window_id/window is required.
    #[serde(default)]
    pub window: Option<WindowSel>,
    /// Start: screenshot pixels, or from_element_index.
    #[serde(default)]
    pub from_x: Option<f64>,
    #[serde(default)]
    pub from_y: Option<f64>,
    #[serde(default)]
    pub from_element_index: Option<usize>,
    /// End: screenshot pixels, or to_element_index.
    #[serde(default)]
    pub to_x: Option<f64>,
    #[serde(default)]
    pub to_y: Option<f64>,
    #[serde(default)]
    pub to_element_index: Option<usize>,
    #[serde(default)]
    pub screenshot_id: Option<u64>,
    /// `left`, `right` or `middle`.
    #[serde(default)]
    pub mouse_button: Button,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyArgs {
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Codex form {app, id}; one of window_id/window is required.
    #[serde(default)]
    pub window: Option<WindowSel>,
    /// "Return", "ctrl+s", "shift+Tab", "F5", a character.
    pub key: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeArgs {
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
    /// Codex form {app, id}; one of window_id/window is required.
    #[serde(default)]
    pub window: Option<WindowSel>,
    /// Any Unicode (CJK, emoji), typed exactly.
    pub text: String,
    /// Focus this element first.
    #[serde(default)]
    pub element_index: Option<usize>,
}

/// Brings the window `window_id` / `window` names to the foreground (restoring it when
/// minimized): the one place the tool resolves its window. The window as it is then.
fn foreground(
    s: &Session,
    window_id: u64,
    window: Option<&WindowSel>,
) -> Result<WindowInfo, Error> {
    let target = view::target(window_id, window)?;
    let o = s
        .window_action(&target, WindowAction::Focus)
        .map_err(view::in_words)?;
    Ok(o.after.unwrap_or(o.before))
}

/// The window's current screenshot id: `given` must be it; without one yet, a screenshot is
/// taken now when `take` (the window's centre needs one to be read in), else refused.
fn current_screenshot(
    s: &Session,
    w: &WindowInfo,
    given: Option<u64>,
    take: bool,
) -> Result<u64, Error> {
    let current = Views::of(s, w.id).and_then(|v| v.screenshot);
    match (given, current) {
        (Some(g), Some(c)) if g != c => Err(Error::InvalidArgument {
            message: format!(
                "screenshot_id {g} is not the current screenshot of window {} (that is {c}); read x/y off screenshot {c}, or call get_window_state again",
                w.id.0
            ),
        }),
        (Some(g), None) => Err(Error::InvalidArgument {
            message: format!(
                "screenshot_id {g} is not a screenshot of window {}; call get_window_state {{\"window_id\": {}}} and read x/y off its image",
                w.id.0, w.id.0
            ),
        }),
        (_, Some(c)) => Ok(c),
        (None, None) if take => {
            let shot = s.screenshot_longest_edge(
                &ScreenshotRequest {
                    target: deskpilot_engine::CaptureTarget::Window(w.id),
                    max_width: None,
                    format: None,
                },
                MAX_EDGE,
            )?;
            Views::update(s, w.id, |v| v.screenshot = Some(shot.id));
            Ok(shot.id)
        }
        (None, None) => Err(Error::NoReferenceScreenshot),
    }
}

/// x/y of the window's current screenshot as a pointer target (the engine refuses a point
/// outside the image: [`outside_window`] words it).
fn image_point(
    s: &Session,
    w: &WindowInfo,
    x: f64,
    y: f64,
    given: Option<u64>,
) -> Result<PointerTarget, Error> {
    let id = current_screenshot(s, w, given, false)?;
    Ok(PointerTarget {
        x,
        y,
        space: CoordinateSpace::Image {
            screenshot_id: Some(id),
        },
    })
}

/// A point outside the window screenshot, as computer-use-mcp says it: `point_outside_window`
/// with where the point would be on screen.
fn outside_window(e: Error) -> Error {
    match e {
        Error::OutsideImage { point, capture, .. } => Error::OutsideTargetWindow {
            point,
            window: capture,
        },
        other => other,
    }
}

/// Where a pointer tool acts: an element's centre (the engine finds it on screen), or x/y of
/// the window's current screenshot. The element comes along for [`unplaced`].
fn aim(
    s: &Session,
    w: &WindowInfo,
    element_index: Option<usize>,
    xy: (Option<f64>, Option<f64>),
    screenshot_id: Option<u64>,
    what: &str,
) -> Result<(Aim, Option<(usize, Element)>), Error> {
    match (element_index, xy) {
        (Some(i), (None, None)) => {
            let (token, e) = view::element(s, w, i)?;
            Ok((Aim::Element(token), Some((i, e))))
        }
        (None, (Some(x), Some(y))) => {
            Ok((Aim::Point(image_point(s, w, x, y, screenshot_id)?), None))
        }
        _ => Err(Error::InvalidArgument {
            message: format!("{what}: pass element_index, or both x and y (screenshot pixels)"),
        }),
    }
}

/// The engine's refusal of an element with no position on screen, naming it by its index:
/// the first of `ends` (in the order the engine checks them) that has none.
fn unplaced(e: Error, ends: &[&Option<(usize, Element)>]) -> Error {
    let without = ends
        .iter()
        .filter_map(|end| end.as_ref())
        .find(|(_, el)| el.bounds.is_none());
    match (e, without) {
        (Error::ElementNotFound { .. }, Some((i, _))) => Error::ElementNotFound {
            what: format!("element_index {i} has no position on screen"),
        },
        (other, _) => other,
    }
}

/// What a pointer action did, in words.
fn pointer_body(verb: &str, w: &WindowInfo, o: &PointerOutcome, extra: serde_json::Value) -> Body {
    let mut text = format!(
        "{verb} in window {} \"{}\": the pointer landed at screen ({}, {}){}.",
        w.id.0,
        w.title,
        o.receipt.x,
        o.receipt.y,
        if o.receipt.retried {
            " after one retry"
        } else {
            ""
        }
    );
    for warning in &o.warnings {
        text.push_str(&format!("\nWarning: {warning}"));
    }
    let mut structured = json!({
        "window": window_json(w),
        "point": o.point,
        "receipt": o.receipt,
    });
    if let (Some(s), Some(x)) = (structured.as_object_mut(), extra.as_object()) {
        s.extend(x.clone());
    }
    Body::new(text, structured)
}

/// What an element action did, in words, naming the element by its index.
fn element_body(verb: &str, index: usize, o: &ElementOutcome, value: Option<&str>) -> Body {
    let e = &o.element;
    let mut text = format!(
        "{verb} element {index} {} \"{}\" in window {} \"{}\" via {} ({}).",
        view::control_type(e.role),
        e.name,
        o.window.id.0,
        o.window.title,
        o.route.as_str(),
        o.detail
    );
    if let Some(r) = &o.receipt {
        text.push_str(&format!(
            " The pointer landed at screen ({}, {}).",
            r.x, r.y
        ));
    }
    if let Some(v) = value {
        text.push_str(&format!(" It now reads \"{v}\"."));
    }
    for n in &o.notes {
        text.push_str("\nNote: ");
        text.push_str(&n.to_string());
    }
    Body::new(
        text,
        json!({
            "element_index": index,
            "control_type": view::control_type(e.role),
            "name": e.name,
            "window": window_json(&o.window),
            "detail": o.detail,
            "receipt": o.receipt,
            "value": value,
            "notes": o.notes,
        }),
    )
}

/// What keys did, in words.
fn keyboard_body(first: String, o: &KeyboardOutcome) -> Body {
    let mut text = first;
    // The window was activated on purpose: a screenshot of another window is no warning here.
    for w in o
        .warnings
        .iter()
        .filter(|w| !matches!(w, KeyboardNote::OtherWindow { .. }))
    {
        text.push_str(&format!("\nWarning: {w}"));
    }
    Body::new(
        text,
        json!({ "window": o.active.as_ref().map(window_json), "count": o.count }),
    )
}

/// Parses "ctrl+s" / "Return" / "+" into keys.
fn parse_key(key: &str) -> Result<Vec<Key>, Error> {
    Key::parse_chord(key).map_err(|e| Error::InvalidArgument {
        message: e.unknown().to_string(),
    })
}

fn step(what: &'static str, timeout: std::time::Duration) -> report::Step {
    report::Step {
        what,
        timeout,
        check: Check::default(),
        target: VerifyTarget::Auto,
    }
}

#[tool_router(router = input_router, vis = "pub(crate)")]
impl ComputerUseServer {
    /// Click element_index (its centre or its own action) or x/y of the window screenshot;
    /// the window comes to the front first; a covered point is point_obstructed.
    #[tool(
        name = "click",
        annotations(
            title = "Click",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn click(&self, Parameters(a): Parameters<ClickArgs>) -> CallToolResult {
        let button = a.mouse_button;
        let count = a.click_count;
        match (a.element_index, a.x, a.y) {
            (Some(i), None, None) => {
                report::act(
                    self.session(),
                    &WORDING,
                    step("click", self.request_timeout()),
                    move |s| {
                        let w = foreground(s, a.window_id, a.window.as_ref())?;
                        let (token, _) = view::element(s, &w, i)?;
                        s.click_element(&token, button, count, HitTestMode::Fail)
                            .map_err(|e| in_indexes(e, i))
                    },
                    |o| element_body("Clicked", i, o, None),
                )
                .await
            }
            (None, Some(x), Some(y)) => {
                let shot = a.screenshot_id;
                report::act(
                    self.session(),
                    &WORDING,
                    step("click", self.request_timeout()),
                    move |s| {
                        let w = foreground(s, a.window_id, a.window.as_ref())?;
                        let t = image_point(s, &w, x, y, shot)?;
                        let o = s
                            .click(t, button, count, &[], HitTestMode::Fail)
                            .map_err(outside_window)?;
                        Ok(Pointed(w, o))
                    },
                    |Pointed(w, o)| pointer_body("Clicked", w, o, json!({ "x": x, "y": y })),
                )
                .await
            }
            _ => error(&Error::InvalidArgument {
                message:
                    "click: pass element_index, or both x and y (pixels of the window screenshot)"
                        .to_string(),
            }),
        }
    }

    /// Run one of an element's actions=[…] from get_window_state (value for SetValue).
    #[tool(
        name = "perform_secondary_action",
        annotations(
            title = "Perform secondary action",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn perform_secondary_action(
        &self,
        Parameters(a): Parameters<SecondaryArgs>,
    ) -> CallToolResult {
        let i = a.element_index;
        report::act(
            self.session(),
            &WORDING,
            step("perform_secondary_action", self.request_timeout()),
            move |s| {
                let w = view::resolve(s, a.window_id, a.window.as_ref())?;
                let (token, e) = view::element(s, &w, i)?;
                let offered = view::actions(&e);
                let wanted = a.action.trim();
                let Some(action) = offered
                    .iter()
                    .find(|o| o.name().eq_ignore_ascii_case(wanted))
                    .cloned()
                else {
                    return Err(Error::ActionUnsupported(Box::new(Unsupported {
                        token: format!("element_index {i}"),
                        role: view::control_type(e.role).to_string(),
                        name: e.name.clone(),
                        action: wanted.to_string(),
                        offered: offered.iter().map(|o| o.name().to_string()).collect(),
                        editable: false,
                        reason: "it is not one of the element's actions".to_string(),
                    })));
                };
                let done = match &action {
                    Action::Invoke => s.invoke_element(&token),
                    Action::Toggle => s.element_op(&token, ElementOp::Toggle),
                    Action::Expand => s.element_op(&token, ElementOp::Expand),
                    Action::Collapse => s.element_op(&token, ElementOp::Collapse),
                    Action::Select => s.element_op(&token, ElementOp::Select),
                    Action::Focus => s.focus_element(&token),
                    Action::SetValue => {
                        let Some(v) = a.value.as_deref() else {
                            return Err(Error::InvalidArgument {
                                message: "SetValue needs value".to_string(),
                            });
                        };
                        s.set_element_value(&token, v).map(|(o, _)| o)
                    }
                    Action::Other(name) => s.perform_action(&token, name),
                };
                done.map(|o| (o, action.name().to_string()))
                    .map_err(|e| in_indexes(e, i))
            },
            |(o, name)| element_body(&format!("Performed {name} on"), i, o, None),
        )
        .await
    }

    /// Replace an element's text or value (an Edit, a slider…); the value is read back.
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
        let i = a.element_index;
        report::act(
            self.session(),
            &WORDING,
            step("set_value", self.request_timeout()),
            move |s| {
                let w = view::resolve(s, a.window_id, a.window.as_ref())?;
                let (token, _) = view::element(s, &w, i)?;
                s.set_element_value(&token, &a.value)
                    .map_err(|e| in_indexes(e, i))
            },
            |(o, read)| element_body("Set the value of", i, o, Some(read)),
        )
        .await
    }

    /// Type a named secret into a password field (element_index, or the window's only one);
    /// the value never enters the conversation.
    #[tool(
        name = "type_secret",
        annotations(
            title = "Type secret",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn type_secret(&self, Parameters(a): Parameters<TypeSecretArgs>) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            step("type_secret", self.request_timeout()),
            move |s| {
                let w = view::resolve(s, a.window_id, a.window.as_ref())?;
                let target = match a.element_index {
                    Some(i) => {
                        let (token, _) = view::element(s, &w, i)?;
                        deskpilot_engine::SecretTarget::Element(token)
                    }
                    None => deskpilot_engine::SecretTarget::PasswordFieldOf(
                        deskpilot_engine::WindowRef::Id(w.id),
                    ),
                };
                s.type_secret(a.name.trim(), target)
            },
            report::secret_body,
        )
        .await
    }

    /// Scroll the wheel over element_index, x/y of the window screenshot, or the window's centre.
    #[tool(
        name = "scroll",
        annotations(
            title = "Scroll",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn scroll(&self, Parameters(a): Parameters<ScrollArgs>) -> CallToolResult {
        if !(1..=50).contains(&a.amount) {
            return error(&Error::InvalidArgument {
                message: format!("amount {} must be 1..=50 wheel notches", a.amount),
            });
        }
        let n = a.amount as i32;
        let (dx, dy) = match a.direction {
            Direction::Up => (0, -n),
            Direction::Down => (0, n),
            Direction::Left => (-n, 0),
            Direction::Right => (n, 0),
        };
        report::act(
            self.session(),
            &WORDING,
            step("scroll", self.request_timeout()),
            move |s| {
                let w = foreground(s, a.window_id, a.window.as_ref())?;
                let (t, element) = match (a.element_index, a.x, a.y) {
                    (None, None, None) => {
                        let id = current_screenshot(s, &w, a.screenshot_id, true)?;
                        let v = s.screenshot_record(id)?.view;
                        let centre = PointerTarget {
                            x: (v.width / 2) as f64,
                            y: (v.height / 2) as f64,
                            space: CoordinateSpace::Image {
                                screenshot_id: Some(id),
                            },
                        };
                        (Aim::Point(centre), None)
                    }
                    (e, x, y) => aim(s, &w, e, (x, y), a.screenshot_id, "scroll")?,
                };
                let o = s
                    .scroll(t, dx, dy, &[], HitTestMode::Fail)
                    .map_err(|e| unplaced(outside_window(e), &[&element]))?;
                Ok(Pointed(w, o))
            },
            move |Pointed(w, o)| {
                pointer_body(
                    &format!("Scrolled {n} notches {:?}", a.direction).to_lowercase(),
                    w,
                    o,
                    json!({ "dx": dx, "dy": dy }),
                )
            },
        )
        .await
    }

    /// Press at a point (from_x/from_y or from_element_index), move, release at the other.
    #[tool(
        name = "drag",
        annotations(
            title = "Drag",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn drag(&self, Parameters(a): Parameters<DragArgs>) -> CallToolResult {
        let button = a.mouse_button;
        report::act(
            self.session(),
            &WORDING,
            step("drag", self.request_timeout()),
            move |s| {
                let w = foreground(s, a.window_id, a.window.as_ref())?;
                let (from, from_element) = aim(
                    s,
                    &w,
                    a.from_element_index,
                    (a.from_x, a.from_y),
                    a.screenshot_id,
                    "drag start",
                )?;
                let (to, to_element) = aim(
                    s,
                    &w,
                    a.to_element_index,
                    (a.to_x, a.to_y),
                    a.screenshot_id,
                    "drag end",
                )?;
                // Both ends in the one screenshot the start was read in.
                if let (Aim::Point(a), Aim::Point(b)) = (&from, &to)
                    && a.space != b.space
                {
                    return Err(Error::InvalidArgument {
                        message: "drag: both ends must be read in the same screenshot; call get_window_state again".to_string(),
                    });
                }
                let o = s
                    .drag(from, to, button, 10, &[], HitTestMode::Fail)
                    .map_err(|e| unplaced(outside_window(e), &[&from_element, &to_element]))?;
                Ok(Pointed(w, o))
            },
            |Pointed(w, o)| pointer_body("Dragged", w, o, json!({})),
        )
        .await
    }

    /// Press a key or chord ("Return", "ctrl+s") in the window, brought to the front first.
    #[tool(
        name = "press_key",
        annotations(
            title = "Press key",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn press_key(&self, Parameters(a): Parameters<KeyArgs>) -> CallToolResult {
        let keys = match parse_key(&a.key) {
            Ok(k) => k,
            Err(e) => return error(&e),
        };
        let label = a.key.clone();
        report::act(
            self.session(),
            &WORDING,
            step("press_key", self.request_timeout()),
            move |s| {
                let w = foreground(s, a.window_id, a.window.as_ref())?;
                s.press_key_into(&keys, Some(&w))
            },
            move |o| keyboard_body(format!("Pressed {label}."), o),
        )
        .await
    }

    /// Type Unicode text (CJK, emoji) into the window (into element_index when given).
    #[tool(
        name = "type_text",
        annotations(
            title = "Type text",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn type_text(&self, Parameters(a): Parameters<TypeArgs>) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            step("type_text", self.request_timeout()),
            move |s| {
                let w = foreground(s, a.window_id, a.window.as_ref())?;
                if let Some(i) = a.element_index {
                    let (token, _) = view::element(s, &w, i)?;
                    s.focus_element(&token).map_err(|e| in_indexes(e, i))?;
                }
                s.type_text_into(&a.text, Some(&w))
            },
            |o| keyboard_body(format!("Typed {} characters.", o.count), o),
        )
        .await
    }
}

/// A pointer action's outcome with the window it targeted.
struct Pointed(WindowInfo, PointerOutcome);

impl deskpilot_engine::Outcome for Pointed {
    fn route(&self) -> deskpilot_engine::Route {
        deskpilot_engine::Route::Input
    }
}
