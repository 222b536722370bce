//! `computer`: dsh-computer-use's 16 actions — screenshot, cursor, status, move, click, double_click,
//! right_click, middle_click, drag, scroll, type, key, wait, ocr, wait_for, resume.
//!
//! Translations from dsh-computer-use to the engine: x/y omitted act at the pointer; `scroll` `dy > 0`
//! is up (the engine's `dy > 0` is down) and answers in wheel units (notches × 120); `type`
//! counts UTF-16 code units; `modifiers` are held during `key` too; `screen` omitted means the
//! primary display.

use std::time::Duration;

use deskpilot_backend::Button;
use deskpilot_engine::limits::PAUSE_SECONDS;
use deskpilot_engine::{
    CaptureTarget, Check, CoordinateSpace, Error, KeyboardOutcome, OcrRequest, OutlineMode,
    PointerOutcome, PointerTarget, ScreenshotRequest, Session, VerifyTarget, WaitKind, WaitRequest,
    WindowRef,
};
use deskpilot_types::{Key, Point, Rect, WindowId};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::envelope;
use super::wording::WORDING;
use super::{DshServer, error};
use crate::kit::capture::{self, Drawing};
use crate::kit::report::{self, Body};
use crate::kit::{Parameters, render};

/// What `computer` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ComputerAction {
    Screenshot,
    Cursor,
    Status,
    Move,
    Click,
    DoubleClick,
    RightClick,
    MiddleClick,
    Drag,
    Scroll,
    Type,
    Key,
    Wait,
    Ocr,
    WaitFor,
    Resume,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UiSummaryArg {
    None,
    Summary,
    Tree,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WaitKindArg {
    Stable,
    Window,
    Element,
    Text,
}

/// A rectangle (all fields required, integers).
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RectArg {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

/// An image-space point.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PointArg {
    pub x: i32,
    pub y: i32,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ComputerArgs {
    /// What to do.
    pub action: ComputerAction,
    /// Target point in the last screenshot's space (omit x and y: the pointer).
    pub x: Option<i32>,
    /// Target point, same space as x.
    pub y: Option<i32>,
    /// drag end point, same space as x/y.
    pub to_x: Option<i32>,
    /// drag end point.
    pub to_y: Option<i32>,
    /// click / drag button, default left.
    pub button: Option<Button>,
    /// click count 1–3.
    pub count: Option<i64>,
    /// Held during click, drag, scroll, key: ctrl, alt, shift, win.
    #[serde(default)]
    pub modifiers: Vec<String>,
    /// type: exact text.
    pub text: Option<String>,
    /// key: chord pressed in order, released in reverse (["ctrl","c"]).
    #[serde(default)]
    pub keys: Vec<String>,
    /// scroll: wheel notches; dy > 0 up/away, dx > 0 right.
    pub dy: Option<i32>,
    /// scroll: notches right (> 0) or left.
    pub dx: Option<i32>,
    /// wait: seconds, 0–30 (default 1).
    pub seconds: Option<f64>,
    /// Display index; omit for the primary display.
    pub screen: Option<u32>,
    /// This window only.
    pub hwnd: Option<u64>,
    /// A physical-pixel rectangle.
    pub region: Option<RectArg>,
    /// Downscale to at most this width.
    pub max_width: Option<u32>,
    /// none / summary (default) / tree: UI outline as text.
    pub ui_summary: Option<UiSummaryArg>,
    /// Diff against the previous capture of the same target.
    #[serde(default)]
    pub compare: bool,
    /// Labelled coordinate grid (image pixels).
    #[serde(default)]
    pub grid: bool,
    /// Grid spacing in image pixels.
    pub grid_step: Option<u32>,
    /// Crosshair at an image point.
    pub mark: Option<PointArg>,
    /// Darken outside this image rectangle.
    pub dim: Option<RectArg>,
    /// Mutating actions: report whether the screen changed.
    #[serde(default)]
    pub verify: bool,
    /// Append a fresh screenshot (implies compare).
    #[serde(default)]
    pub observe: bool,
    /// ocr / wait_for text: languages (eng, chi_sim; "eng+chi_sim").
    pub lang: Option<String>,
    /// ocr: most lines returned.
    pub max_lines: Option<u32>,
    /// wait_for: stable / window / element / text.
    pub wait_kind: Option<WaitKindArg>,
    /// wait_for: deadline (default 10000, at most 60000).
    pub timeout_ms: Option<u64>,
    /// wait_for stable: quiet time (default 500).
    pub stable_ms: Option<u64>,
    /// wait_for: window title / process substring.
    pub title_match: Option<String>,
    /// wait_for element: its name.
    pub name: Option<String>,
}

/// The engine's refusal of a click count, in dsh-computer-use's words (`count: 4 is not 1, 2
/// or 3`).
fn count_words(e: Error) -> Error {
    match e {
        Error::OutOfRange { range, .. } => invalid(format!(
            "count: {} is not {}",
            range.value,
            range.limit.words()
        )),
        other => other,
    }
}

fn invalid(message: impl Into<String>) -> Error {
    Error::InvalidArgument {
        message: message.into(),
    }
}

/// Names to keys (an entry may be a chord of its own, "ctrl+c"); `modifiers_only` refuses
/// anything but ctrl, alt, shift and win.
fn keys(names: &[String], field: &str, modifiers_only: bool) -> Result<Vec<Key>, Error> {
    let mut keys = Vec::new();
    for n in names {
        let chord =
            Key::parse_chord(n).map_err(|e| invalid(format!("{field}: {}", e.unknown())))?;
        if modifiers_only && chord.iter().any(|k| !k.is_modifier()) {
            return Err(invalid(format!(
                "{field}: \"{n}\" is not a modifier; modifiers are ctrl, alt, shift and win"
            )));
        }
        keys.extend(chord);
    }
    Ok(keys)
}

/// The languages of a `lang` string (`eng+chi_sim`, `eng,chi_sim`).
fn languages(lang: &Option<String>) -> Vec<String> {
    lang.as_deref()
        .unwrap_or("")
        .split(['+', ',', ' '])
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

impl ComputerArgs {
    /// The capture target: hwnd, region or screen (at most one); the primary display when none.
    fn capture_target(&self) -> Result<CaptureTarget, Error> {
        let given = [
            self.hwnd.is_some(),
            self.region.is_some(),
            self.screen.is_some(),
        ];
        if given.iter().filter(|g| **g).count() > 1 {
            return Err(invalid("pass at most one of hwnd, region and screen"));
        }
        Ok(match (self.hwnd, self.region, self.screen) {
            (Some(h), _, _) => CaptureTarget::Window(WindowId(h)),
            (_, Some(r), _) => CaptureTarget::Region(Rect::new(r.x, r.y, r.width, r.height)),
            (_, _, Some(s)) => CaptureTarget::Monitor(s),
            // Every backend lists the primary monitor first.
            _ => CaptureTarget::Monitor(0),
        })
    }

    fn check(&self) -> Check {
        Check::new(self.verify, self.observe)
    }
}

impl DshServer {
    /// x/y as dsh-computer-use reads them: the last screenshot's pixels (or physical with
    /// `coordinates: physical`); both omitted: the pointer where it is now.
    fn point(
        &self,
        x: Option<i32>,
        y: Option<i32>,
        names: (&str, &str),
    ) -> Result<Option<PointerTarget>, Error> {
        match (x, y) {
            (Some(x), Some(y)) => {
                let space = if self.session.config().physical_coordinates {
                    CoordinateSpace::Physical
                } else {
                    CoordinateSpace::Image {
                        screenshot_id: None,
                    }
                };
                Ok(Some(PointerTarget {
                    x: x as f64,
                    y: y as f64,
                    space,
                }))
            }
            (None, None) => Ok(None),
            _ => Err(invalid(format!(
                "pass both {} and {} (or neither, to act at the pointer)",
                names.0, names.1
            ))),
        }
    }
}

/// A target that is the pointer's position now, in physical pixels.
fn at_pointer(s: &Session, t: Option<PointerTarget>) -> Result<PointerTarget, Error> {
    match t {
        Some(t) => Ok(t),
        None => {
            let p = s.cursor()?;
            Ok(PointerTarget {
                x: p.x as f64,
                y: p.y as f64,
                space: CoordinateSpace::Physical,
            })
        }
    }
}

/// "image (420,260) = physical (1099,680)" for a pointer action's point.
fn where_words(asked: Option<PointerTarget>, physical: Point) -> String {
    match asked {
        Some(PointerTarget {
            x,
            y,
            space: CoordinateSpace::Image { .. },
        }) => format!("image ({x},{y}) = physical ({},{})", physical.x, physical.y),
        Some(_) => format!("physical ({},{})", physical.x, physical.y),
        None => format!("the pointer, physical ({},{})", physical.x, physical.y),
    }
}

fn pointer_body(verb: String, o: &PointerOutcome, extra: serde_json::Value) -> Body {
    let mut v =
        json!({ "x": o.point.x, "y": o.point.y, "receipt": o.receipt, "warnings": o.warnings });
    if let (Some(obj), serde_json::Value::Object(more)) = (v.as_object_mut(), extra) {
        obj.extend(more);
    }
    crate::kit::pointer::body(
        &format!("{verb}. Pointer receipt: "),
        o,
        envelope::window_words,
        v,
    )
}

fn keyboard_lines(text: &mut String, o: &KeyboardOutcome) {
    if let Some(w) = &o.active {
        text.push_str(&format!("\nFocused window: {}.", envelope::window_words(w)));
    }
    crate::kit::pointer::warnings(text, &o.warnings);
}

#[tool_router(router = computer_router, vis = "pub(crate)")]
impl DshServer {
    /// Screen, mouse and keyboard. x/y are pixels of the last screenshot this tool returned (omit them: the pointer).
    /// screenshot first; observe: true appends a fresh one, verify: true says whether the screen changed.
    #[tool(
        name = "computer",
        annotations(
            title = "Computer",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn computer(&self, Parameters(a): Parameters<ComputerArgs>) -> CallToolResult {
        match a.action {
            ComputerAction::Screenshot => self.screenshot(a).await,
            ComputerAction::Cursor => self.cursor().await,
            ComputerAction::Status => self.status().await,
            ComputerAction::Move
            | ComputerAction::Click
            | ComputerAction::DoubleClick
            | ComputerAction::RightClick
            | ComputerAction::MiddleClick
            | ComputerAction::Drag
            | ComputerAction::Scroll => self.pointer(a).await,
            ComputerAction::Type | ComputerAction::Key => self.keyboard(a).await,
            ComputerAction::Wait => wait(a.seconds).await,
            ComputerAction::Ocr => self.ocr(a).await,
            ComputerAction::WaitFor => self.wait_for(a).await,
            ComputerAction::Resume => self.resume().await,
        }
    }
}

impl DshServer {
    async fn screenshot(&self, a: ComputerArgs) -> CallToolResult {
        let target = match a.capture_target() {
            Ok(t) => t,
            Err(e) => return error(&e),
        };
        let request = ScreenshotRequest {
            target,
            max_width: a.max_width,
            format: None,
        };
        let drawing = Drawing {
            grid: (a.grid || a.grid_step.is_some()).then_some(a.grid_step.unwrap_or(0)),
            mark: a.mark.map(|p| (p.x, p.y)),
            dim: a.dim.map(|r| (r.x, r.y, r.width, r.height)),
        };
        // dsh-computer-use's default outline is "summary"; the deployment's uiSummary overrides it.
        let mode = match a.ui_summary {
            Some(UiSummaryArg::None) => OutlineMode::None,
            Some(UiSummaryArg::Summary) => OutlineMode::Summary,
            Some(UiSummaryArg::Tree) => OutlineMode::Tree,
            None => self
                .session
                .config()
                .outline
                .mode
                .unwrap_or(OutlineMode::Summary),
        };
        let session = self.session();
        let captured = match render::blocking(self.screenshot_timeout(), "screenshot", move || {
            capture::capture(&session, request, None, drawing, mode, true)
        })
        .await
        {
            Ok(c) => c,
            Err(e) => return error(&e),
        };
        let what = match (&captured.shot.window, captured.target) {
            (Some(w), _) => format!("window {}", envelope::window_words(w)),
            (None, CaptureTarget::Monitor(m)) => format!("display {m}"),
            (None, CaptureTarget::Region(_)) => "a region".to_string(),
            _ => "the screen".to_string(),
        };
        let mode_name = match mode {
            OutlineMode::None => "none",
            OutlineMode::Summary => "summary",
            OutlineMode::Tree => "tree",
        };
        envelope::screenshot(
            &captured,
            &what,
            mode_name,
            a.compare || a.observe,
            drawing.any().then(|| drawing.describe()),
            self.session.config().images,
        )
    }

    async fn cursor(&self) -> CallToolResult {
        let session = self.session();
        let found = render::blocking(self.request_timeout(), "cursor", move || {
            let p = session.cursor()?;
            let image = session
                .last_screenshot()
                .and_then(|r| r.view.physical_to_image(p).map(|i| (r.id, i)));
            Ok::<_, Error>((p, image))
        })
        .await;
        match found {
            Err(e) => error(&e),
            Ok((p, image)) => {
                let text = match image {
                    Some((id, (ix, iy))) => format!(
                        "Cursor at physical ({}, {}) = image ({ix}, {iy}) of screenshot {id}.",
                        p.x, p.y
                    ),
                    None => format!(
                        "Cursor at physical ({}, {}); it is not inside the last screenshot (or there is none).",
                        p.x, p.y
                    ),
                };
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(json!({
                    "cursor": { "x": p.x, "y": p.y },
                    "image": image.map(|(id, (x, y))| json!({ "x": x, "y": y, "screenshotId": id })),
                }));
                r
            }
        }
    }

    async fn status(&self) -> CallToolResult {
        let session = self.session();
        let report = match render::blocking(self.request_timeout(), "status", move || {
            session.status()
        })
        .await
        {
            Ok(r) => r,
            Err(e) => return error(&e),
        };
        let g = &report.guard;
        let config = self.session.config();
        let physical = config.physical_coordinates;
        let mut text = format!(
            "Host: ready ({} on {}, capture {}, window manager {}).\nOverlay: {}{}.\nEsc: {}.\nKill switch: {}.\nDry run: {}.\nMutating actions: {}.\nCoordinate space: {}.",
            report.backend.platform,
            report.backend.display,
            report.backend.capture_method,
            report.backend.window_manager.as_deref().unwrap_or("none"),
            if g.overlay_visible {
                "visible"
            } else {
                "hidden"
            },
            g.overlay_error
                .as_ref()
                .map_or(String::new(), |e| format!(" (unavailable: {e})")),
            if g.esc_armed {
                "armed (a human's Esc stops every mutating action)"
            } else {
                "not armed"
            },
            g.stop.as_ref().map_or("clear".to_string(), |s| format!(
                "TRIPPED — {}; call resume only when the human says so",
                s.describe()
            )),
            if config.safety.dry_run { "on" } else { "off" },
            g.mutations,
            match (physical, &report.last_screenshot) {
                (true, _) => "physical screen pixels (coordinates: physical)".to_string(),
                (false, Some(r)) => format!(
                    "image pixels of screenshot {} ({}x{}, scale {:.4})",
                    r.id, r.view.width, r.view.height, r.view.scale
                ),
                (false, None) => "image pixels — none yet: take a screenshot first".to_string(),
            }
        );
        text.push_str("\nScreens:");
        render::monitor_lines(&mut text, &report.monitors);
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = Some(json!({
            "host": "ready",
            "platform": report.backend.platform,
            "overlay": if g.overlay_visible { "visible" } else { "hidden" },
            "overlayError": g.overlay_error,
            "escArmed": g.esc_armed,
            "stopped": g.stop.as_ref().map(|s| s.reason.name()),
            "dryRun": config.safety.dry_run,
            "mutations": g.mutations,
            "coordinates": if physical { "physical" } else { "image" },
            "lastScreenshot": report.last_screenshot.as_ref().map(|r| r.id),
            "screens": report.monitors,
            "cursor": report.cursor,
        }));
        r
    }

    async fn pointer(&self, a: ComputerArgs) -> CallToolResult {
        let prepared = (|| {
            let mods = keys(&a.modifiers, "modifiers", true)?;
            let from = self.point(a.x, a.y, ("x", "y"))?;
            Ok::<_, Error>((mods, from))
        })();
        let (mods, from) = match prepared {
            Ok(p) => p,
            Err(e) => return error(&e),
        };
        let check = a.check();
        let mode = self.session.config().hit_test;
        let b = a.button.unwrap_or_default();
        // The engine checks a click's count (`count_words` says its refusal this profile's way).
        let (what, count): (&'static str, i64) = match a.action {
            ComputerAction::Click => ("click", a.count.unwrap_or(1)),
            ComputerAction::DoubleClick => ("double_click", 2),
            ComputerAction::RightClick => ("right_click", 1),
            ComputerAction::MiddleClick => ("middle_click", 1),
            ComputerAction::Move => ("move", 0),
            ComputerAction::Drag => ("drag", 0),
            _ => ("scroll", 0),
        };
        let b = match a.action {
            ComputerAction::RightClick => Button::Right,
            ComputerAction::MiddleClick => Button::Middle,
            ComputerAction::DoubleClick => a.button.unwrap_or_default(),
            _ => b,
        };
        if a.action == ComputerAction::Move && !mods.is_empty() {
            return error(&invalid("modifiers: move holds no keys"));
        }
        let step = report::Step {
            what,
            timeout: self.request_timeout(),
            check,
            target: VerifyTarget::Auto,
        };
        match a.action {
            ComputerAction::Drag => {
                let to = match self.point(a.to_x, a.to_y, ("toX", "toY")) {
                    Ok(Some(t)) => t,
                    Ok(None) => return error(&invalid("toX, toY: drag needs its end point")),
                    Err(e) => return error(&e),
                };
                report::act(
                    self.session(),
                    &WORDING,
                    step,
                    move |s| {
                        let start = at_pointer(s, from)?;
                        let o = s.drag(start, to, b, 12, &mods, mode)?;
                        Ok(o)
                    },
                    move |o| {
                        pointer_body(
                            format!(
                                "Dragged {} to physical ({},{})",
                                b.name(),
                                o.point.x,
                                o.point.y
                            ),
                            o,
                            json!({ "to": o.point, "button": b.name() }),
                        )
                    },
                )
                .await
            }
            ComputerAction::Scroll => {
                let (dy, dx) = (a.dy.unwrap_or(0), a.dx.unwrap_or(0));
                if dy == 0 && dx == 0 {
                    return error(&invalid("dy, dx: scroll needs a number of notches"));
                }
                let session = self.session();
                report::act(
                    session,
                    &WORDING,
                    step,
                    move |s| {
                        let t = at_pointer(s, from)?;
                        // dsh-computer-use: dy > 0 scrolls up; the engine's dy > 0 scrolls down.
                        s.scroll(t, dx, -dy, &mods, mode)
                    },
                    move |o| {
                        pointer_body(
                            format!(
                                "Scrolled dy {dy} dx {dx} notches ({} / {} wheel units) at physical ({},{})",
                                dy * 120,
                                dx * 120,
                                o.point.x,
                                o.point.y
                            ),
                            o,
                            json!({ "dy": dy * 120, "dx": dx * 120 }),
                        )
                    },
                )
                .await
            }
            ComputerAction::Move => {
                let session = self.session();
                report::act(
                    session,
                    &WORDING,
                    step,
                    move |s| s.move_cursor(at_pointer(s, from)?),
                    move |o| {
                        pointer_body(
                            format!("Moved to {}", where_words(from, o.point)),
                            o,
                            json!({}),
                        )
                    },
                )
                .await
            }
            _ => {
                let session = self.session();
                report::act(
                    session,
                    &WORDING,
                    step,
                    move |s| {
                        s.click(at_pointer(s, from)?, b, count, &mods, mode)
                            .map_err(count_words)
                    },
                    move |o| {
                        pointer_body(
                            format!(
                                "Clicked {}{} at {}",
                                b.name(),
                                match count {
                                    2 => " twice",
                                    3 => " three times",
                                    _ => "",
                                },
                                where_words(from, o.point)
                            ),
                            o,
                            json!({ "count": count, "button": b.name() }),
                        )
                    },
                )
                .await
            }
        }
    }

    async fn keyboard(&self, a: ComputerArgs) -> CallToolResult {
        let step = report::Step {
            what: if a.action == ComputerAction::Type {
                "type"
            } else {
                "key"
            },
            timeout: self.request_timeout(),
            check: a.check(),
            target: VerifyTarget::Auto,
        };
        if a.action == ComputerAction::Type {
            let Some(text) = a.text else {
                return error(&invalid("text: type needs the exact text to type"));
            };
            let units = text.encode_utf16().count();
            return report::act(
                self.session(),
                &WORDING,
                step,
                move |s| s.type_text(&text),
                move |o| {
                    let mut t = format!(
                        "Typed {units} characters (UTF-16 code units; one emoji counts as 2)."
                    );
                    keyboard_lines(&mut t, o);
                    Body::new(t, json!({ "chars": units, "warnings": o.warnings }))
                },
            )
            .await;
        }
        let chord = match (|| {
            let mut chord = keys(&a.modifiers, "modifiers", true)?;
            if a.keys.is_empty() {
                return Err(invalid("keys: key needs a chord, e.g. [\"ctrl\",\"c\"]"));
            }
            chord.extend(keys(&a.keys, "keys", false)?);
            Ok::<_, Error>(chord)
        })() {
            Ok(c) => c,
            Err(e) => return error(&e),
        };
        let names: Vec<String> = a
            .modifiers
            .iter()
            .chain(&a.keys)
            .map(|k| k.trim().to_ascii_lowercase())
            .collect();
        report::act(
            self.session(),
            &WORDING,
            step,
            move |s| s.press_key(&chord),
            move |o| {
                let mut t = format!("Pressed {}.", names.join("+"));
                keyboard_lines(&mut t, o);
                Body::new(t, json!({ "keys": names, "warnings": o.warnings }))
            },
        )
        .await
    }

    async fn ocr(&self, a: ComputerArgs) -> CallToolResult {
        if a.screen.is_some() {
            return error(&invalid(
                "screen: ocr reads hwnd, region or the primary display",
            ));
        }
        let target = match a.capture_target() {
            Ok(t) => t,
            Err(e) => return error(&e),
        };
        let max_lines = a.max_lines.unwrap_or(200).max(1) as usize;
        let request = OcrRequest {
            languages: languages(&a.lang),
            ..OcrRequest::new(target)
        };
        let session = self.session();
        let result = match render::blocking(
            self.screenshot_timeout() + Duration::from_secs(60),
            "ocr",
            move || session.ocr(&request),
        )
        .await
        {
            Ok(r) => r,
            Err(e) => return error(&e),
        };
        let total = result.lines.len();
        let lines: Vec<_> = result.lines.iter().take(max_lines).collect();
        let mut text = format!(
            "OCR ({}, lang {}, {} ms; source: ocr — read off pixels, not accessibility): {} line(s){}.",
            result.engine,
            result.languages.join("+"),
            result.elapsed.as_millis(),
            total,
            if total > lines.len() {
                format!(", the first {} shown (maxLines)", lines.len())
            } else {
                String::new()
            }
        );
        for l in &lines {
            text.push_str(&format!(
                "\n\"{}\" at physical {} (confidence {:.0})",
                l.line.text, l.line.bounds, l.line.confidence
            ));
        }
        let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
        r.structured_content = Some(json!({
            "source": "ocr",
            "lines": lines.iter().map(|l| json!({
                "text": l.line.text,
                "bounds": l.line.bounds,
                "confidence": l.line.confidence,
                "center": l.centre,
            })).collect::<Vec<_>>(),
            "total": total,
            "lang": result.languages.join("+"),
            "engine": result.engine,
            "elapsedMs": result.elapsed.as_millis() as u64,
            "screenshotId": result.screenshot.id,
        }));
        r
    }

    async fn wait_for(&self, a: ComputerArgs) -> CallToolResult {
        let Some(kind) = a.wait_kind else {
            return error(&invalid(
                "waitKind: wait_for needs stable, window, element or text",
            ));
        };
        let timeout = Duration::from_millis(a.timeout_ms.unwrap_or(10_000));
        let window = match (a.hwnd, a.title_match.as_deref().map(str::trim)) {
            (Some(h), _) => Some(WindowRef::Id(WindowId(h))),
            (None, Some(t)) if !t.is_empty() && kind != WaitKindArg::Window => {
                Some(WindowRef::TitleMatch(t.to_string()))
            }
            _ => None,
        };
        let needed = |v: &Option<String>, field: &str| -> Result<String, Error> {
            v.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .ok_or_else(|| {
                    invalid(format!("{field}: wait_for {kind:?} needs it").to_lowercase())
                })
        };
        let wait_kind = match kind {
            WaitKindArg::Stable => Ok(WaitKind::Stable {
                quiet: Duration::from_millis(a.stable_ms.unwrap_or(500)),
            }),
            WaitKindArg::Window => needed(&a.title_match, "titleMatch").map(WaitKind::Window),
            WaitKindArg::Element => needed(&a.name, "name").map(WaitKind::Element),
            WaitKindArg::Text => needed(&a.text, "text").map(WaitKind::Text),
        };
        let wait_kind = match wait_kind {
            Ok(k) => k,
            Err(e) => return error(&e),
        };
        let request = WaitRequest {
            kind: wait_kind,
            languages: languages(&a.lang),
            window,
            timeout,
        };
        let session = self.session();
        match render::blocking(timeout + Duration::from_secs(30), "wait_for", move || {
            session.wait_for(&request)
        })
        .await
        {
            Err(e) => error(&e),
            Ok(o) => {
                let kind_name = format!("{kind:?}").to_lowercase();
                let mut text = format!(
                    "wait_for {kind_name}: satisfied after {} ms ({} frames){}{}.",
                    o.waited.as_millis(),
                    o.frames,
                    o.matched
                        .as_ref()
                        .map_or(String::new(), |m| format!("; matched {m}")),
                    o.source
                        .map_or(String::new(), |s| format!(" (found by {s})"))
                );
                for n in &o.notes {
                    text.push_str("\nNote: ");
                    text.push_str(&n.to_string());
                }
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(json!({
                    "wait": {
                        "kind": kind_name,
                        "waitedMs": o.waited.as_millis() as u64,
                        "frames": o.frames,
                        "ratio": o.ratio,
                        "matched": o.matched,
                        "source": o.source,
                    }
                }));
                r
            }
        }
    }

    async fn resume(&self) -> CallToolResult {
        match self.session.resume() {
            Err(e) => error(&e),
            Ok(None) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(
                    "Nothing to resume: the kill switch is not tripped.",
                )]);
                r.structured_content = Some(json!({ "resumed": false }));
                r
            }
            Ok(Some(stop)) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
                    "Resumed: the kill switch ({}) is cleared; mutating actions run again.",
                    stop.describe()
                ))]);
                r.structured_content = Some(json!({ "resumed": true, "was": stop.reason.name() }));
                r
            }
        }
    }
}

/// `wait`: 0–30 s (default 1), a pause that touches nothing.
async fn wait(seconds: Option<f64>) -> CallToolResult {
    let s = seconds.unwrap_or(1.0);
    if !PAUSE_SECONDS.contains_f64(s) {
        return error(&invalid(format!(
            "seconds: {s} is outside {}",
            PAUSE_SECONDS.words()
        )));
    }
    tokio::time::sleep(Duration::from_secs_f64(s)).await;
    let mut r = CallToolResult::success(vec![ContentBlock::text(format!("Waited {s} s."))]);
    r.structured_content = Some(json!({ "waited": s }));
    r
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_engine::{EngineConfig, HitTestMode};

    use super::*;

    #[test]
    fn the_engine_refuses_a_click_count_and_this_profile_words_it() {
        let fake = FakeDesktop::new(800, 600);
        let s = Session::standalone(fake.desktop(), EngineConfig::default());
        let at = PointerTarget {
            x: 10.0,
            y: 10.0,
            space: CoordinateSpace::Physical,
        };
        for (count, words) in [
            (4, "count: 4 is not 1, 2 or 3"),
            (-1, "count: -1 is not 1, 2 or 3"),
            (300, "count: 300 is not 1, 2 or 3"),
        ] {
            let e = s
                .click(at, Button::Left, count, &[], HitTestMode::Fail)
                .map_err(count_words)
                .unwrap_err();
            assert_eq!(e.code(), deskpilot_types::ErrorCode::InvalidArgument);
            assert_eq!(e.to_string(), words);
        }
        assert!(fake.pointer_events().is_empty(), "nothing reached the OS");
    }
}
