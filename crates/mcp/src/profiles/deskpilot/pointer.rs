//! Pointer tools: `click`, `double_click`, `right_click`, `move_cursor`, `scroll`, `drag`.
//!
//! Each parses its point(s), runs the engine action (which resolves coordinates, re-checks
//! the pinned window, hit tests and proves the landing) and renders the receipt.

use crate::kit::Parameters;
use deskpilot_backend::Button;
use deskpilot_engine::{
    Check, CoordinateSpace, Error, HitTestMode, PointerOutcome, PointerTarget, Session,
    VerifyTarget,
};
use deskpilot_types::Key;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::wording::WORDING;
use super::{DeskpilotServer, error};
use crate::kit::report::{self, Body};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Coordinates {
    /// x/y are read in the pixel space of the screenshot (the last one, or screenshot_id).
    #[default]
    Image,
    /// x/y are physical screen pixels.
    Physical,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HitTestArg {
    /// Refuse when another app's window is under the point or the point is outside the screenshot's window.
    #[default]
    Fail,
    /// Act anyway and report what is under the point.
    Warn,
    /// Do not check.
    Off,
}

/// A point and how to read it.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PointArgs {
    /// Screenshot pixels.
    pub x: f64,
    pub y: f64,
    /// 0: last.
    #[serde(default)]
    pub screenshot_id: u64,
    /// Default image.
    #[serde(default)]
    pub coordinates: Option<Coordinates>,
    /// Default fail.
    #[serde(default)]
    pub hit_test: Option<HitTestArg>,
    #[serde(default)]
    pub modifiers: Vec<String>,
    #[serde(default)]
    pub verify: bool,
    #[serde(default)]
    pub observe: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickArgs {
    /// Screenshot pixels; omit for an element.
    #[serde(default)]
    pub x: Option<f64>,
    /// Y; omit for an element.
    #[serde(default)]
    pub y: Option<f64>,
    /// Or a token ("s3:12"): its click action, else centre.
    #[serde(default)]
    pub element: String,
    /// 0: last.
    #[serde(default)]
    pub screenshot_id: u64,
    /// Default image.
    #[serde(default)]
    pub coordinates: Option<Coordinates>,
    /// Default fail.
    #[serde(default)]
    pub hit_test: Option<HitTestArg>,
    /// Default left.
    #[serde(default)]
    pub button: Button,
    /// Clicks, 1–3 (default 1).
    #[serde(default = "one")]
    pub count: u8,
    #[serde(default)]
    pub modifiers: Vec<String>,
    #[serde(default)]
    pub verify: bool,
    #[serde(default)]
    pub observe: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScrollArgs {
    /// Screenshot pixels.
    pub x: f64,
    pub y: f64,
    /// Notches down (negative: up).
    #[serde(default)]
    pub dy: i32,
    /// Notches right (negative: left).
    #[serde(default)]
    pub dx: i32,
    /// 0: last.
    #[serde(default)]
    pub screenshot_id: u64,
    /// Default image.
    #[serde(default)]
    pub coordinates: Option<Coordinates>,
    /// Default fail.
    #[serde(default)]
    pub hit_test: Option<HitTestArg>,
    #[serde(default)]
    pub modifiers: Vec<String>,
    #[serde(default)]
    pub verify: bool,
    #[serde(default)]
    pub observe: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DragArgs {
    /// Start X in screenshot pixels.
    pub from_x: f64,
    pub from_y: f64,
    pub to_x: f64,
    pub to_y: f64,
    /// Moves, 1–200 (default 12).
    #[serde(default = "twelve")]
    pub steps: u32,
    /// Default left.
    #[serde(default)]
    pub button: Button,
    /// 0: last.
    #[serde(default)]
    pub screenshot_id: u64,
    /// Default image.
    #[serde(default)]
    pub coordinates: Option<Coordinates>,
    /// Default fail.
    #[serde(default)]
    pub hit_test: Option<HitTestArg>,
    #[serde(default)]
    pub modifiers: Vec<String>,
    #[serde(default)]
    pub verify: bool,
    #[serde(default)]
    pub observe: bool,
}

fn one() -> u8 {
    1
}

fn twelve() -> u32 {
    12
}

impl DeskpilotServer {
    /// A point as the call gives it; without `coordinates`, the deployment's `coordinates`.
    pub(super) fn target(
        &self,
        x: f64,
        y: f64,
        screenshot_id: u64,
        coordinates: Option<Coordinates>,
    ) -> PointerTarget {
        let physical = match coordinates {
            Some(c) => c == Coordinates::Physical,
            None => self.session().config().physical_coordinates,
        };
        let space = if physical {
            CoordinateSpace::Physical
        } else {
            CoordinateSpace::Image {
                screenshot_id: (screenshot_id != 0).then_some(screenshot_id),
            }
        };
        PointerTarget { x, y, space }
    }

    /// The call's hit test, else the deployment's `hitTest`.
    fn mode(&self, h: Option<HitTestArg>) -> HitTestMode {
        match h {
            Some(HitTestArg::Fail) => HitTestMode::Fail,
            Some(HitTestArg::Warn) => HitTestMode::Warn,
            Some(HitTestArg::Off) => HitTestMode::Off,
            None => self.session().config().hit_test,
        }
    }
}

fn modifiers(names: &[String]) -> Result<Vec<Key>, Error> {
    names
        .iter()
        .map(|n| {
            let key: Key =
                n.parse()
                    .map_err(|e: deskpilot_types::UnknownKey| Error::InvalidArgument {
                        message: e.to_string(),
                    })?;
            if key.is_modifier() {
                Ok(key)
            } else {
                Err(Error::InvalidArgument {
                    message: format!(
                        "\"{n}\" is not a modifier; modifiers are ctrl, shift, alt and super"
                    ),
                })
            }
        })
        .collect()
}

/// An action's outcome in words: what was done, where it landed, what is under it.
fn body(label: &str, o: &PointerOutcome) -> Body {
    crate::kit::pointer::body(
        &format!(
            "{label} at physical ({}, {}); pointer ",
            o.point.x, o.point.y
        ),
        o,
        |w| format!("{} {}", w.id, w.label()),
        json!({
            "action": label,
            "point": o.point,
            "receipt": o.receipt,
            "window": o.window,
            "warnings": o.warnings,
        }),
    )
}

impl DeskpilotServer {
    /// Parses the modifier names, then runs `f` with them through the action pipeline.
    async fn run_pointer<F>(
        &self,
        label: &'static str,
        modifier_names: &[String],
        check: Check,
        f: F,
    ) -> CallToolResult
    where
        F: FnOnce(&Session, &[Key]) -> Result<PointerOutcome, Error> + Send + 'static,
    {
        let mods = match modifiers(modifier_names) {
            Ok(k) => k,
            Err(e) => return error(&e),
        };
        report::act(
            self.session(),
            &WORDING,
            report::Step {
                what: label,
                timeout: self.request_timeout(),
                check,
                target: VerifyTarget::Auto,
            },
            move |s| f(s, &mods),
            |o| body(label, o),
        )
        .await
    }
}

#[tool_router(router = pointer_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Click x/y of the last screenshot (or screenshot_id); refused if its window moved, vanished
    /// or is covered.
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
        let (x, y) = match (a.element.trim().is_empty(), a.x, a.y) {
            (false, None, None) => {
                if !a.modifiers.is_empty() {
                    return error(&Error::InvalidArgument {
                        message: "modifiers are for x/y clicks; an element click takes none"
                            .to_string(),
                    });
                }
                let (b, count, m) = (a.button, a.count, self.mode(a.hit_test));
                let check = Check::new(a.verify, a.observe);
                return self
                    .click_element(a.element.trim().to_string(), b, count, m, check)
                    .await;
            }
            (true, Some(x), Some(y)) => (x, y),
            _ => {
                return error(&Error::InvalidArgument {
                    message: "pass either x and y, or element (a token like s3:12), not both"
                        .to_string(),
                });
            }
        };
        let t = self.target(x, y, a.screenshot_id, a.coordinates);
        let (b, count, m) = (a.button, a.count, self.mode(a.hit_test));
        self.run_pointer(
            "click",
            &a.modifiers,
            Check::new(a.verify, a.observe),
            move |e, mods| e.click(t, b, count, mods, m),
        )
        .await
    }

    /// Left double-click at x/y (rules as click).
    #[tool(
        name = "double_click",
        annotations(
            title = "Double-click",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn double_click(&self, Parameters(a): Parameters<PointArgs>) -> CallToolResult {
        let t = self.target(a.x, a.y, a.screenshot_id, a.coordinates);
        let m = self.mode(a.hit_test);
        self.run_pointer(
            "double_click",
            &a.modifiers,
            Check::new(a.verify, a.observe),
            move |e, mods| e.click(t, Button::Left, 2, mods, m),
        )
        .await
    }

    /// Right-click at x/y (rules as click) for a context menu.
    #[tool(
        name = "right_click",
        annotations(
            title = "Right-click",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn right_click(&self, Parameters(a): Parameters<PointArgs>) -> CallToolResult {
        let t = self.target(a.x, a.y, a.screenshot_id, a.coordinates);
        let m = self.mode(a.hit_test);
        self.run_pointer(
            "right_click",
            &a.modifiers,
            Check::new(a.verify, a.observe),
            move |e, mods| e.click(t, Button::Right, 1, mods, m),
        )
        .await
    }

    /// Move the pointer to x/y (hover); says where it landed.
    #[tool(
        name = "move_cursor",
        annotations(
            title = "Move cursor",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn move_cursor(&self, Parameters(a): Parameters<PointArgs>) -> CallToolResult {
        if !a.modifiers.is_empty() {
            return error(&Error::InvalidArgument {
                message: "move_cursor takes no modifiers (nothing is pressed while hovering)"
                    .to_string(),
            });
        }
        let t = self.target(a.x, a.y, a.screenshot_id, a.coordinates);
        self.run_pointer(
            "move_cursor",
            &[],
            Check::new(a.verify, a.observe),
            move |e, _| e.move_cursor(t),
        )
        .await
    }

    /// Turn the mouse wheel at x/y by dy and dx notches.
    #[tool(
        name = "scroll",
        annotations(
            title = "Scroll",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn scroll(&self, Parameters(a): Parameters<ScrollArgs>) -> CallToolResult {
        let t = self.target(a.x, a.y, a.screenshot_id, a.coordinates);
        let (dx, dy, m) = (a.dx, a.dy, self.mode(a.hit_test));
        self.run_pointer(
            "scroll",
            &a.modifiers,
            Check::new(a.verify, a.observe),
            move |e, mods| e.scroll(t, dx, dy, mods, m),
        )
        .await
    }

    /// Press at from_x/from_y, move in steps to to_x/to_y, release.
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
        let from = self.target(a.from_x, a.from_y, a.screenshot_id, a.coordinates);
        let to = self.target(a.to_x, a.to_y, a.screenshot_id, a.coordinates);
        let (b, steps, m) = (a.button, a.steps, self.mode(a.hit_test));
        self.run_pointer(
            "drag",
            &a.modifiers,
            Check::new(a.verify, a.observe),
            move |e, mods| e.drag(from, to, b, steps, mods, m),
        )
        .await
    }
}
