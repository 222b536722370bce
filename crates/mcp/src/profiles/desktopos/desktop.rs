//! DesktopOS's `desktop` group: `desktop_list_windows`, `desktop_screenshot`, `desktop_perceive`,
//! `desktop_cursor`, `desktop_move`, `desktop_click`, `desktop_type`, `desktop_key`,
//! `desktop_scroll`, `desktop_focus_window`.
//!
//! x/y are screen pixels, as DesktopOS's agents compute them from window rects; every pointer
//! action still goes through the engine's gates, pointer receipt and hit test, and names the
//! window under the point. `verify` / `verifyRegion` become the engine's before/after check of
//! the screen or of that rectangle, answered as DesktopOS answers it: `diffRatio`, `changed`
//! and `scope`.

use deskpilot_backend::Button;
use deskpilot_engine::pipeline::ImageFormat;
use deskpilot_engine::{
    CaptureTarget, Check, CoordinateSpace, Error, PerceiveRequest, PointerOutcome, PointerTarget,
    ScreenshotRequest, VerifyTarget, WindowAction, WindowFilter, WindowRef,
};
use deskpilot_types::{ChordErrorKind, Key, Rect, WindowId, WindowInfo};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::{Deserialize, Deserializer};
use serde_json::{Value, json};

use super::wording::{WORDING, image_json, image_result};
use super::{DesktopOsServer, error};
use crate::kit::report::{self, Body, Step};
use crate::kit::{Parameters, perceive, pointer, render};

/// A window handle as DesktopOS hands it out: a number (a numeric or `0x` string is taken too).
pub(crate) fn handle<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    crate::kit::args::window_id(d)
}

/// DesktopOS's rectangle: `{x, y, w, h}` (`width` / `height` are taken too).
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RegionArg {
    pub x: i32,
    pub y: i32,
    #[serde(alias = "width")]
    pub w: u32,
    #[serde(alias = "height")]
    pub h: u32,
}

impl RegionArg {
    fn rect(self) -> Rect {
        Rect::new(self.x, self.y, self.w, self.h)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FormatArg {
    Png,
    Jpeg,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShotArgs {
    /// png (default) or jpeg.
    #[serde(default)]
    pub format: Option<FormatArg>,
    /// Widest image in pixels (e.g. 1280).
    #[serde(default, rename = "maxWidth")]
    pub max_width: Option<u32>,
    /// Include the image (screenshot: default true; perceive: default false).
    #[serde(default, rename = "includePng")]
    pub include_png: Option<bool>,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeSecretArgs {
    /// The secret's name (its value is never shown).
    pub secret: String,
    /// The window, from desktop_list_windows.
    pub handle: u64,
    /// The password field's name; omit for the window's only one.
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveArgs {
    /// Screen pixels.
    pub x: i32,
    pub y: i32,
    /// Compare the screen before and after (diffRatio).
    #[serde(default)]
    pub verify: bool,
}

fn one() -> u8 {
    1
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickArgs {
    /// Screen pixels (e.g. a window rect's centre).
    pub x: i32,
    pub y: i32,
    /// 1 (default), 2 = double click, 3.
    #[serde(default = "one")]
    pub count: u8,
    /// left (default), right, middle.
    #[serde(default)]
    pub button: Button,
    /// Compare before and after: diffRatio, scope.
    #[serde(default)]
    pub verify: bool,
    /// {x, y, w, h}: only this rectangle counts for verify (usually the target window's rect).
    #[serde(default, rename = "verifyRegion")]
    pub verify_region: Option<RegionArg>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeArgs {
    /// Any Unicode text (中文, emoji).
    pub text: String,
    #[serde(default)]
    pub verify: bool,
    #[serde(default, rename = "verifyRegion")]
    pub verify_region: Option<RegionArg>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyArgs {
    /// ctrl+c, alt+tab, enter, f5 …
    pub combo: String,
    #[serde(default)]
    pub verify: bool,
    #[serde(default, rename = "verifyRegion")]
    pub verify_region: Option<RegionArg>,
}

fn notch_down() -> i32 {
    -120
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScrollArgs {
    /// Screen pixels.
    pub x: i32,
    pub y: i32,
    /// Wheel units: negative scrolls down, positive up, 120 a notch (default -120).
    #[serde(default = "notch_down")]
    pub delta: i32,
    #[serde(default)]
    pub verify: bool,
    #[serde(default, rename = "verifyRegion")]
    pub verify_region: Option<RegionArg>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FocusArgs {
    /// From desktop_list_windows / desktop_perceive.
    #[serde(deserialize_with = "handle")]
    pub handle: u64,
    #[serde(default)]
    pub verify: bool,
}

/// `{x, y, w, h}` of a rectangle, DesktopOS's way.
pub(crate) fn rect_json(r: Rect) -> Value {
    json!({ "x": r.x, "y": r.y, "w": r.width, "h": r.height })
}

/// A window as DesktopOS lists it.
pub(crate) fn window_json(w: &WindowInfo) -> Value {
    json!({
        "handle": w.id.0,
        "title": w.title,
        "processName": w.process,
        "pid": w.pid,
        "class": w.class,
        "rect": rect_json(w.frame),
        "focused": w.state.active,
        "minimized": w.state.minimized,
        "visible": w.state.visible,
    })
}

/// `handle=854182 "Untitled - Mousepad" (mousepad, pid 4242) rect 0,0 800x600 [focused]`.
pub(crate) fn window_line(w: &WindowInfo) -> String {
    let mut flags = Vec::new();
    if w.state.active {
        flags.push("focused");
    }
    if w.state.minimized {
        flags.push("minimized");
    }
    format!(
        "handle={} \"{}\" ({}, pid {}) rect {},{} {}x{}{}",
        w.id.0,
        w.title,
        w.process.as_deref().unwrap_or("?"),
        w.pid.map_or("?".to_string(), |p| p.to_string()),
        w.frame.x,
        w.frame.y,
        w.frame.width,
        w.frame.height,
        if flags.is_empty() {
            String::new()
        } else {
            format!(" [{}]", flags.join(", "))
        }
    )
}

/// What `verify` / `verifyRegion` sample (DesktopOS's `scope` beside the verdict is the
/// wording's, from the target).
pub(crate) fn verify_target(verify: bool, region: Option<RegionArg>) -> (Check, VerifyTarget) {
    match region {
        Some(r) => (Check::new(true, false), VerifyTarget::Region(r.rect())),
        None => (Check::new(verify, false), VerifyTarget::Screen),
    }
}

fn physical(x: i32, y: i32) -> PointerTarget {
    PointerTarget {
        x: f64::from(x),
        y: f64::from(y),
        space: CoordinateSpace::Physical,
    }
}

fn pointer_body(verb: String, o: &PointerOutcome) -> Body {
    pointer::body(
        &format!(
            "{verb} at ({}, {}). Pointer receipt: ",
            o.point.x, o.point.y
        ),
        o,
        window_line,
        json!({
            "x": o.point.x,
            "y": o.point.y,
            "receipt": o.receipt,
            "window": o.window.as_ref().map(window_json),
            "warnings": o.warnings,
        }),
    )
}

/// The combo's keys, or its bad part in DesktopOS's words.
fn parse_combo(combo: &str) -> Result<Vec<Key>, Error> {
    Key::parse_chord(combo).map_err(|e| Error::InvalidArgument {
        message: match e.kind {
            ChordErrorKind::Empty => {
                format!("combo \"{combo}\" has an empty key; write keys as ctrl+c, alt+tab, enter")
            }
            ChordErrorKind::Unknown(u) => format!("combo \"{combo}\": {u}"),
        },
    })
}

/// DesktopOS's wheel `delta` as engine notches (positive = down): negative delta scrolls down.
pub(crate) fn notches(delta: i32) -> Result<i32, Error> {
    if delta == 0 {
        return Err(Error::InvalidArgument {
            message: "delta 0 scrolls nothing: negative scrolls down, positive up, 120 a notch"
                .to_string(),
        });
    }
    let n = ((delta.unsigned_abs() as f64) / 120.0).round().max(1.0) as i32;
    Ok(if delta < 0 { n } else { -n })
}

#[tool_router(router = desktop_router, vis = "pub(crate)")]
impl DesktopOsServer {
    /// 结构通道:枚举窗口 / List the windows: handle, title, processName, pid, rect, focused, minimized.
    #[tool(
        name = "desktop_list_windows",
        annotations(
            title = "List windows",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn desktop_list_windows(&self, Parameters(_): Parameters<NoArgs>) -> CallToolResult {
        let session = self.session();
        match render::blocking(self.request_timeout(), "list windows", move || {
            session.list_windows(&WindowFilter::default())
        })
        .await
        {
            Ok(windows) => {
                let mut text = format!("{} window(s), topmost first:", windows.len());
                for w in &windows {
                    text.push('\n');
                    text.push_str(&window_line(w));
                }
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(json!({
                    "count": windows.len(),
                    "windows": windows.iter().map(window_json).collect::<Vec<_>>(),
                }));
                r
            }
            Err(e) => error(&e),
        }
    }

    /// 视觉通道:截取主屏幕 / Screenshot of the primary screen: PNG (or jpeg) with its size; maxWidth + format jpeg keep it small.
    #[tool(
        name = "desktop_screenshot",
        annotations(
            title = "Screenshot",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn desktop_screenshot(&self, Parameters(a): Parameters<ShotArgs>) -> CallToolResult {
        let session = self.session();
        let request = ScreenshotRequest {
            // Monitors are numbered primary first.
            target: CaptureTarget::Monitor(0),
            max_width: a.max_width,
            format: Some(format(a.format)),
        };
        match render::blocking(self.screenshot_timeout(), "screenshot", move || {
            session.screenshot(&request)
        })
        .await
        {
            Ok(shot) => {
                let mut r = image_result("Screenshot", &shot, "the primary screen");
                if a.include_png == Some(false) {
                    r.content.retain(|c| c.as_image().is_none());
                }
                r
            }
            Err(e) => error(&e),
        }
    }

    /// 双通道感知 + 交叉验证 / Window list checked against the pixels: per window consistent, minimized, offscreen, covered, hidden or blank, with handle and rect; totals add up; written to memory.
    #[tool(
        name = "desktop_perceive",
        annotations(
            title = "Perceive",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn desktop_perceive(&self, Parameters(a): Parameters<ShotArgs>) -> CallToolResult {
        let session = self.session();
        let include = a.include_png == Some(true);
        let request = PerceiveRequest {
            include_screenshot: include,
            max_width: a.max_width,
            format: Some(format(a.format)),
            own_pixels: false,
        };
        match render::blocking(self.screenshot_timeout(), "perceive", move || {
            session.perceive(&request)
        })
        .await
        {
            Ok(p) => {
                let (text, mut structured) = perceive::perception_with(
                    &p,
                    "desktop_focus_window",
                    |id| format!("handle={}", id.0),
                    |w| json!({ "handle": w.id.0, "rect": rect_json(w.frame) }),
                );
                let mut r = match &p.screenshot {
                    Some(shot) => {
                        structured["screenshot"] = image_json(shot);
                        image_result("Screenshot", shot, "the screen")
                    }
                    None => CallToolResult::success(vec![]),
                };
                r.content.insert(0, ContentBlock::text(text));
                r.structured_content = Some(structured);
                r
            }
            Err(e) => error(&e),
        }
    }

    /// 读鼠标坐标(只读)/ The pointer's screen position.
    #[tool(
        name = "desktop_cursor",
        annotations(
            title = "Cursor position",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn desktop_cursor(&self, Parameters(_): Parameters<NoArgs>) -> CallToolResult {
        let session = self.session();
        match render::blocking(self.request_timeout(), "cursor", move || session.cursor()).await {
            Ok(p) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
                    "Pointer at ({}, {}).",
                    p.x, p.y
                ))]);
                r.structured_content = Some(json!({ "x": p.x, "y": p.y }));
                r
            }
            Err(e) => error(&e),
        }
    }

    /// 移动鼠标(不点击)/ Move the pointer to screen x/y without clicking.
    #[tool(
        name = "desktop_move",
        annotations(
            title = "Move pointer",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    pub async fn desktop_move(&self, Parameters(a): Parameters<MoveArgs>) -> CallToolResult {
        let (check, target) = verify_target(a.verify, None);
        let to = physical(a.x, a.y);
        report::act(
            self.session(),
            &WORDING,
            Step {
                what: "desktop_move",
                timeout: self.request_timeout(),
                check,
                target,
            },
            move |s| s.move_cursor(to),
            |o| pointer_body("Moved the pointer".to_string(), o),
        )
        .await
    }

    /// 点击 / 双击 / 右键 / Click at screen x/y (count 2: double, button right); passes the gates and the hit test and names the window it landed on. verify/verifyRegion: diffRatio, scope.
    #[tool(
        name = "desktop_click",
        annotations(
            title = "Click",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_click(&self, Parameters(a): Parameters<ClickArgs>) -> CallToolResult {
        let (check, target) = verify_target(a.verify, a.verify_region);
        let button = a.button;
        let (count, at) = (a.count, physical(a.x, a.y));
        let mode = self.session.config().hit_test;
        report::act(
            self.session(),
            &WORDING,
            Step {
                what: "desktop_click",
                timeout: self.request_timeout(),
                check,
                target,
            },
            move |s| s.click(at, button, count, &[], mode),
            move |o| {
                let verb = match count {
                    1 => format!("Clicked {}", button.name()),
                    n => format!("Clicked {} {n} times", button.name()),
                };
                pointer_body(verb, o)
            },
        )
        .await
    }

    /// 输入文本,支持中文 / Type text into the focused window. Unicode (中文, emoji) is typed directly; unlike DesktopOS on Windows the clipboard is left alone.
    #[tool(
        name = "desktop_type",
        annotations(
            title = "Type text",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_type(&self, Parameters(a): Parameters<TypeArgs>) -> CallToolResult {
        let (check, target) = verify_target(a.verify, a.verify_region);
        let text = a.text.clone();
        report::act(
            self.session(),
            &WORDING,
            Step {
                what: "desktop_type",
                timeout: self.request_timeout(),
                check,
                target,
            },
            move |s| s.type_text(&text),
            |o| {
                let mut text = format!("Typed {} character(s).", o.count);
                if let Some(w) = &o.active {
                    text.push_str(&format!("\nFocused window: {}.", window_line(w)));
                }
                for w in &o.warnings {
                    text.push_str(&format!("\nWarning: {w}"));
                }
                Body::new(
                    text,
                    json!({
                        "characters": o.count,
                        "window": o.active.as_ref().map(window_json),
                        "warnings": o.warnings,
                    }),
                )
            },
        )
        .await
    }

    /// 输入密钥 / Type a named secret into a window's password field; the value never enters the conversation.
    #[tool(
        name = "desktop_type_secret",
        annotations(
            title = "Type secret",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_type_secret(
        &self,
        Parameters(a): Parameters<TypeSecretArgs>,
    ) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            Step {
                what: "desktop_type_secret",
                timeout: self.request_timeout(),
                check: Check::default(),
                target: VerifyTarget::Focused,
            },
            move |s| {
                let window = WindowRef::Id(WindowId(a.handle));
                let target = match a.name.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
                    None => deskpilot_engine::SecretTarget::PasswordFieldOf(window),
                    Some(name) => {
                        let tree = deskpilot_engine::TreeRequest {
                            max_elements: 2000,
                            ..deskpilot_engine::TreeRequest::new(window)
                        };
                        match s.element_named(&tree, name)? {
                            deskpilot_engine::ByName::One(e) => {
                                deskpilot_engine::SecretTarget::Element(e.token.as_str().into())
                            }
                            _ => {
                                return Err(Error::Coded {
                                    code: deskpilot_types::ErrorCode::ElementNotFound,
                                    message: format!(
                                        "no single control named \"{name}\" in window {}; omit name for the window's only password field",
                                        a.handle
                                    ),
                                });
                            }
                        }
                    }
                };
                s.type_secret(a.secret.trim(), target)
            },
            report::secret_body,
        )
        .await
    }

    /// 组合键 / Press a key combination in the focused window: ctrl+c, alt+tab, enter, tab, f5.
    #[tool(
        name = "desktop_key",
        annotations(
            title = "Key combination",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_key(&self, Parameters(a): Parameters<KeyArgs>) -> CallToolResult {
        let keys = match parse_combo(&a.combo) {
            Ok(k) => k,
            Err(e) => return error(&e),
        };
        let (check, target) = verify_target(a.verify, a.verify_region);
        let combo = a.combo.clone();
        report::act(
            self.session(),
            &WORDING,
            Step {
                what: "desktop_key",
                timeout: self.request_timeout(),
                check,
                target,
            },
            move |s| s.press_key(&keys),
            move |o| {
                let mut text = format!("Pressed {combo}.");
                if let Some(w) = &o.active {
                    text.push_str(&format!("\nFocused window: {}.", window_line(w)));
                }
                Body::new(
                    text,
                    json!({
                        "combo": combo,
                        "window": o.active.as_ref().map(window_json),
                        "warnings": o.warnings,
                    }),
                )
            },
        )
        .await
    }

    /// 滚轮滚动 / Scroll at screen x/y: delta negative scrolls down, positive up, 120 a notch.
    #[tool(
        name = "desktop_scroll",
        annotations(
            title = "Scroll",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_scroll(&self, Parameters(a): Parameters<ScrollArgs>) -> CallToolResult {
        let dy = match notches(a.delta) {
            Ok(n) => n,
            Err(e) => return error(&e),
        };
        let (check, target) = verify_target(a.verify, a.verify_region);
        let at = physical(a.x, a.y);
        let mode = self.session.config().hit_test;
        let delta = a.delta;
        report::act(
            self.session(),
            &WORDING,
            Step {
                what: "desktop_scroll",
                timeout: self.request_timeout(),
                check,
                target,
            },
            move |s| s.scroll(at, 0, dy, &[], mode),
            move |o| {
                let mut b = pointer_body(
                    format!(
                        "Scrolled {} {} notch(es) (delta {delta})",
                        if dy > 0 { "down" } else { "up" },
                        dy.abs()
                    ),
                    o,
                );
                b.structured["delta"] = json!(delta);
                b
            },
        )
        .await
    }

    /// 把窗口切到前台(最小化时先还原)/ Bring a window to the front by handle, restoring it when minimized.
    #[tool(
        name = "desktop_focus_window",
        annotations(
            title = "Focus window",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn desktop_focus_window(
        &self,
        Parameters(a): Parameters<FocusArgs>,
    ) -> CallToolResult {
        let (check, target) = verify_target(a.verify, None);
        let id = WindowId(a.handle);
        report::act(
            self.session(),
            &WORDING,
            Step {
                what: "desktop_focus_window",
                timeout: self.request_timeout(),
                check,
                target,
            },
            move |s| s.window_action(&WindowRef::Id(id), WindowAction::Focus),
            |o| {
                let w = o.after.as_ref().unwrap_or(&o.before);
                let mut text = format!("Focused {}.", window_line(w));
                if o.before.state.minimized {
                    text.push_str(" It was minimized and is restored.");
                }
                for n in &o.notes {
                    text.push_str(&format!("\nNote: {n}."));
                }
                Body::new(
                    text,
                    json!({
                        "window": window_json(w),
                        "restored": o.before.state.minimized,
                        "notes": o.notes.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
                    }),
                )
            },
        )
        .await
    }
}

fn format(f: Option<FormatArg>) -> ImageFormat {
    match f {
        Some(FormatArg::Jpeg) => ImageFormat::Jpeg { quality: 80 },
        _ => ImageFormat::Png,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheel_delta_becomes_notches_with_desktoposs_sign() {
        assert_eq!(notches(-120).unwrap(), 1, "negative scrolls down");
        assert_eq!(notches(240).unwrap(), -2);
        assert_eq!(notches(-30).unwrap(), 1, "less than a notch is one notch");
        assert!(notches(0).is_err());
    }

    #[test]
    fn handles_are_numbers_or_numeric_strings() {
        #[derive(Deserialize)]
        struct H {
            #[serde(deserialize_with = "handle")]
            handle: u64,
        }
        for (v, want) in [
            (json!({ "handle": 854182 }), 854182),
            (json!({ "handle": "854182" }), 854182),
            (json!({ "handle": "0xd08a6" }), 0xd08a6),
        ] {
            assert_eq!(serde_json::from_value::<H>(v).unwrap().handle, want);
        }
        assert!(serde_json::from_value::<H>(json!({ "handle": "desk" })).is_err());
    }

    #[test]
    fn combos_split_on_plus_and_plus_alone_is_a_key() {
        assert_eq!(parse_combo("ctrl+c").unwrap().len(), 2);
        assert_eq!(parse_combo("+").unwrap().len(), 1);
        assert!(parse_combo("ctrl+").is_err());
    }
}
