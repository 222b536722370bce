//! The browser channel: `browser_launch`, `browser_attach`, `browser_navigate` (a URL, or
//! back / forward / reload), `browser_snapshot`, `browser_click` (buttons, double clicks,
//! modifiers, hover, drag), `browser_type` (text, or a named secret), `browser_press_key`,
//! `browser_wait_for`, `browser_eval`, `browser_screenshot`, `browser_close` — Chromium or
//! Electron pages through the DevTools protocol, elements by the refs of the latest snapshot
//! (tabs, forms, dialogs, logs and emulation are in `page_tools`). Actions answer briefly; a
//! snapshot comes with them only when asked (`snapshot: true`, or `"diff"` for what changed).

use deskpilot_engine::{
    BrowserInfo, BrowserOutcome, Check, Go, PageInfo, PageSnapshot, SnapshotAfter, SnapshotView,
    Until, VerifyTarget,
};
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use base64::Engine as _;
use deskpilot_engine::pipeline::ImageFormat;

use super::wording::{WORDING, image_result};
use super::{DeskpilotServer, error};
use crate::kit::report::{self, Body};
use crate::kit::{Parameters, render};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchArgs {
    /// Page to open (default about:blank).
    #[serde(default)]
    pub url: String,
    /// No window on the desktop.
    #[serde(default)]
    pub headless: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachArgs {
    /// Its --remote-debugging-port.
    #[serde(default)]
    pub port: Option<u16>,
    /// Or its window (list_windows id).
    #[serde(default, deserialize_with = "crate::kit::args::window_id")]
    pub window_id: u64,
}

/// What an action adds after it: nothing, the page's snapshot, or only what changed since
/// the page's latest snapshot (`"diff"`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum After {
    #[default]
    Nothing,
    Snapshot,
    Diff,
}

impl<'de> Deserialize<'de> for After {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<After, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::Bool(false) | serde_json::Value::Null => Ok(After::Nothing),
            serde_json::Value::Bool(true) => Ok(After::Snapshot),
            serde_json::Value::String(s) if s == "diff" => Ok(After::Diff),
            other => Err(serde::de::Error::custom(format!(
                "snapshot: true, false or \"diff\" (only what changed), not {other}"
            ))),
        }
    }
}

impl From<After> for SnapshotAfter {
    fn from(a: After) -> SnapshotAfter {
        match a {
            After::Nothing => SnapshotAfter::Nothing,
            After::Snapshot => SnapshotAfter::Whole,
            After::Diff => SnapshotAfter::Diff,
        }
    }
}

impl schemars::JsonSchema for After {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "After".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "enum": [true, false, "diff"] })
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NavigateArgs {
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub go: Option<GoArg>,
    #[serde(default)]
    pub page: String,
    #[serde(default)]
    pub snapshot: After,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum GoArg {
    Back,
    Forward,
    Reload,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotArgs {
    #[serde(default)]
    pub page: String,
    /// Most lines (default 2000).
    #[serde(default)]
    pub max_lines: usize,
    /// Find: matching lines + ancestors.
    #[serde(default)]
    pub query: String,
    /// Only this ref's subtree.
    #[serde(default)]
    pub scope: String,
    /// Levels shown (0: all).
    #[serde(default)]
    pub depth: usize,
    /// Changes since snapshot #.
    #[serde(default)]
    pub since: Option<u64>,
    /// Byte cap (then a cursor).
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// Continue a cut one.
    #[serde(default)]
    pub cursor: String,
}

/// `"<snapshot>:<line>"`, as a cut snapshot names where it goes on.
fn parse_cursor(cursor: &str) -> Option<Option<(u64, usize)>> {
    let cursor = cursor.trim();
    if cursor.is_empty() {
        return Some(None);
    }
    let (n, line) = cursor.split_once(':')?;
    Some(Some((n.parse().ok()?, line.parse().ok()?)))
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickArgs {
    /// Ref (e12).
    #[serde(rename = "ref")]
    pub element: String,
    #[serde(default)]
    pub button: Option<deskpilot_types::MouseButton>,
    /// 2: double.
    #[serde(default)]
    pub count: Option<u32>,
    /// ctrl, shift, alt, meta.
    #[serde(default)]
    pub modifiers: Vec<String>,
    /// Only point at it.
    #[serde(default)]
    pub hover: bool,
    /// Drag onto this ref.
    #[serde(default)]
    pub to: String,
    #[serde(default)]
    pub snapshot: After,
}

impl ClickArgs {
    /// The click these arguments ask for, or what is wrong with them.
    fn click(&self) -> Result<deskpilot_engine::Click, deskpilot_engine::Error> {
        let bad = |message: String| deskpilot_engine::Error::InvalidArgument { message };
        let count = match self.count.unwrap_or(1) {
            0 | 1 => 1,
            2 => 2,
            n => return Err(bad(format!("count: 1 or 2 (a double click), not {n}"))),
        };
        let mut modifiers = 0;
        for m in &self.modifiers {
            modifiers |= deskpilot_engine::browser_modifier(m)
                .ok_or_else(|| bad(format!("modifiers: {m:?} is not ctrl, shift, alt or meta")))?;
        }
        let pointer_only = self.hover || !self.to.trim().is_empty();
        if pointer_only && (count != 1 || modifiers != 0 || self.button.is_some()) {
            return Err(bad(
                "hover and to (drag) take no button, count or modifiers".to_string(),
            ));
        }
        if self.hover && !self.to.trim().is_empty() {
            return Err(bad("hover or to (drag), not both".to_string()));
        }
        Ok(deskpilot_engine::Click {
            button: self.button.unwrap_or_default().name(),
            count,
            modifiers,
        })
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShotArgs {
    #[serde(default)]
    pub page: String,
    /// Only this ref.
    #[serde(rename = "ref", default)]
    pub element: String,
    #[serde(default)]
    pub format: Option<ImageKind>,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImageKind {
    Jpeg,
    Png,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WaitUntil {
    Navigation,
    NetworkIdle,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeArgs {
    /// Ref (e12).
    #[serde(rename = "ref")]
    pub element: String,
    #[serde(default)]
    pub text: Option<String>,
    /// Secret name.
    #[serde(default)]
    pub secret: Option<String>,
    /// Press Enter after.
    #[serde(default)]
    pub submit: bool,
    #[serde(default)]
    pub snapshot: After,
}

/// What `browser_type` types: the caller's text, or a named secret's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Typed {
    Text(String),
    Secret(String),
}

impl TypeArgs {
    /// `text` or `secret`, exactly one of them.
    fn typed(&self) -> Result<Typed, deskpilot_engine::Error> {
        match (&self.text, &self.secret) {
            (Some(text), None) => Ok(Typed::Text(text.clone())),
            (None, Some(name)) if !name.trim().is_empty() => Ok(Typed::Secret(name.trim().into())),
            (None, Some(_)) => Err(deskpilot_engine::Error::InvalidArgument {
                message: "secret: name the secret (its name, never its value)".into(),
            }),
            (Some(_), Some(_)) => Err(deskpilot_engine::Error::InvalidArgument {
                message: "give text or secret, not both: secret types a named secret's value"
                    .into(),
            }),
            (None, None) => Err(deskpilot_engine::Error::InvalidArgument {
                message: "give text (what to type) or secret (a secret's name)".into(),
            }),
        }
    }
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyArgs {
    /// Enter, Tab, Escape, ctrl+a, …
    pub keys: String,
    #[serde(default)]
    pub page: String,
    #[serde(default)]
    pub snapshot: After,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitArgs {
    /// Text to appear.
    #[serde(default)]
    pub text: String,
    /// Or a CSS selector.
    #[serde(default)]
    pub selector: String,
    /// navigation: since the last snapshot.
    #[serde(default)]
    pub until: Option<WaitUntil>,
    /// Default 10000, at most 60000.
    #[serde(default)]
    pub timeout_ms: u64,
    #[serde(default)]
    pub page: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalArgs {
    /// Promises are awaited.
    pub expression: String,
    #[serde(default)]
    pub page: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseArgs {
    /// Browser id (default all).
    #[serde(default)]
    pub browser: u32,
}

pub(super) fn page_line(p: &PageInfo) -> String {
    format!("page {} \"{}\" {}", p.id, p.title, p.url)
}

fn browser_body(verb: &str, b: &BrowserInfo) -> Body {
    let mut text = format!(
        "{verb} browser {}{}{}.",
        b.id,
        b.pid.map_or(String::new(), |p| format!(" (pid {p})")),
        b.port.map_or(String::new(), |p| format!(" on port {p}"))
    );
    if let Some(w) = &b.window {
        text.push_str(&format!(
            "\nWindow {} \"{}\" at {}.",
            w.id, w.title, w.frame
        ));
    }
    for p in &b.pages {
        text.push('\n');
        text.push_str(&page_line(p));
    }
    text.push_str("\nNext: browser_snapshot for refs.");
    Body::new(text, json!({ "browser": b }))
}

/// The lines a snapshot result shows.
fn snapshot_text(s: &PageSnapshot) -> String {
    let v = &s.shown;
    let what = match (v.since, &v.whole_because) {
        (Some(since), _) if v.text.trim().is_empty() => {
            format!(", nothing changed since snapshot {since}")
        }
        (Some(since), _) => format!(
            ", only what changed since snapshot {since} (with the lines that place it; {} line(s) of it gone)",
            v.gone
        ),
        (None, Some(why)) => format!(", the whole page: {why}"),
        (None, None) => String::new(),
    };
    let cut = match v.next {
        Some((n, line)) => format!(
            "\n{} more line(s) cut by the budget: browser_snapshot {{cursor: \"{n}:{line}\"}} (same other arguments) goes on.",
            v.omitted
        ),
        None => String::new(),
    };
    let cut = if v.shortened > 0 {
        format!(
            "{cut}\n{} long text(s) shortened to {} characters (…); scope or query shows them whole.",
            v.shortened,
            deskpilot_engine::PROSE_CHARS
        )
    } else {
        cut
    };
    format!(
        "Snapshot {} of {} — {} refs{what}:\n{}{cut}\nRefs hold until the page changes; act with browser_click / browser_type.",
        v.snapshot,
        page_line(&s.page),
        s.refs,
        v.text.trim_end()
    )
}

fn snapshot_json(s: &PageSnapshot) -> serde_json::Value {
    let v = &s.shown;
    json!({
        "page": s.page, "snapshot": v.snapshot, "refs": s.refs,
        "lines": v.lines, "omitted": v.omitted, "text": v.text,
        "next_cursor": v.next.map(|(n, line)| format!("{n}:{line}")),
        "since": v.since, "gone": v.gone, "whole_because": v.whole_because,
        "shortened": v.shortened,
    })
}

pub(super) fn outcome_body(o: &BrowserOutcome) -> Body {
    let mut text = format!("{} — {}.", o.detail, page_line(&o.page));
    if let Some(v) = &o.value {
        text.push_str(&format!("\nValue: {v}"));
    }
    if let Some(s) = &o.snapshot {
        text.push('\n');
        text.push_str(&snapshot_text(s));
    }
    Body::new(
        text,
        json!({
            "page": o.page, "detail": o.detail, "changed": o.changed, "value": o.value,
            "snapshot": o.snapshot.as_ref().map(snapshot_json),
        }),
    )
}

/// Lines a snapshot shows unless told otherwise.
const DEFAULT_LINES: usize = deskpilot_engine::SNAPSHOT_LINES;

impl DeskpilotServer {
    pub(super) fn browser_step(&self, what: &'static str) -> report::Step {
        report::Step {
            what,
            timeout: self.request_timeout(),
            check: Check::default(),
            target: VerifyTarget::Screen,
        }
    }
}

#[tool_router(router = browser_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Start the installed Chromium (throw-away profile).
    #[tool(
        name = "browser_launch",
        annotations(
            title = "Launch browser",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn browser_launch(&self, Parameters(a): Parameters<LaunchArgs>) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            self.browser_step("browser_launch"),
            move |s| s.browser_launch(&a.url, a.headless),
            |b| browser_body("Launched", b),
        )
        .await
    }

    /// Attach to a browser or Electron app by its DevTools port or window.
    #[tool(
        name = "browser_attach",
        annotations(
            title = "Attach browser",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn browser_attach(&self, Parameters(a): Parameters<AttachArgs>) -> CallToolResult {
        let session = self.session();
        let r = render::blocking(self.request_timeout(), "browser_attach", move || {
            let pid = if a.window_id != 0 {
                session.window(deskpilot_types::WindowId(a.window_id))?.pid
            } else {
                None
            };
            session.browser_attach(a.port.filter(|p| *p != 0), pid)
        })
        .await;
        match r {
            Ok(b) => {
                let body = browser_body("Attached to", &b);
                let mut r = CallToolResult::success(vec![ContentBlock::text(body.text)]);
                r.structured_content = Some(body.structured);
                r
            }
            Err(e) => error(&e),
        }
    }

    /// Load a URL, or go back/forward/reload, in a page; waits for the load.
    #[tool(
        name = "browser_navigate",
        annotations(
            title = "Navigate",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn browser_navigate(
        &self,
        Parameters(a): Parameters<NavigateArgs>,
    ) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            self.browser_step("browser_navigate"),
            move |s| {
                s.browser_then(Some(&a.page), a.snapshot.into(), |s| {
                    match (a.go, a.url.trim().is_empty()) {
                        (Some(go), true) => s.browser_go(
                            Some(&a.page),
                            match go {
                                GoArg::Back => Go::Back,
                                GoArg::Forward => Go::Forward,
                                GoArg::Reload => Go::Reload,
                            },
                        ),
                        (None, false) => s.browser_navigate(Some(&a.page), &a.url),
                        _ => Err(deskpilot_engine::Error::InvalidArgument {
                            message: "give url or go (back, forward, reload), one of them".into(),
                        }),
                    }
                })
            },
            outcome_body,
        )
        .await
    }

    /// A page's accessibility tree as lines with refs, frames included.
    #[tool(
        name = "browser_snapshot",
        annotations(
            title = "Page snapshot",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn browser_snapshot(
        &self,
        Parameters(a): Parameters<SnapshotArgs>,
    ) -> CallToolResult {
        let session = self.session();
        let Some(cursor) = parse_cursor(&a.cursor) else {
            return error(&deskpilot_engine::Error::InvalidArgument {
                message: format!(
                    "cursor {:?}: pass next_cursor of a cut snapshot as it was (\"<snapshot>:<line>\")",
                    a.cursor
                ),
            });
        };
        let view = SnapshotView {
            scope: a.scope,
            depth: (a.depth != 0).then_some(a.depth),
            query: a.query,
            max_lines: if a.max_lines == 0 {
                DEFAULT_LINES
            } else {
                a.max_lines
            },
            max_bytes: a.max_bytes.filter(|b| *b != 0),
            since: a.since.filter(|s| *s != 0),
            cursor,
        };
        match render::blocking(self.request_timeout(), "browser_snapshot", move || {
            session.browser_snapshot(Some(&a.page), &view)
        })
        .await
        {
            Ok(s) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(snapshot_text(&s))]);
                r.structured_content = Some(snapshot_json(&s));
                r
            }
            Err(e) => error(&e),
        }
    }

    /// Click (right, double, modifiers), hover or drag a ref: real mouse events at its centre; refused if covered.
    #[tool(
        name = "browser_click",
        annotations(
            title = "Click in page",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn browser_click(&self, Parameters(a): Parameters<ClickArgs>) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            self.browser_step("browser_click"),
            move |s| {
                s.browser_then(None, a.snapshot.into(), |s| {
                    let how = a.click()?;
                    if a.hover {
                        s.browser_hover(&a.element)
                    } else if !a.to.trim().is_empty() {
                        s.browser_drag(&a.element, &a.to)
                    } else {
                        s.browser_click_with(&a.element, &how)
                    }
                })
            },
            outcome_body,
        )
        .await
    }

    /// Type text (any Unicode) or a named secret into an element by ref.
    #[tool(
        name = "browser_type",
        annotations(
            title = "Type in page",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn browser_type(&self, Parameters(a): Parameters<TypeArgs>) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            self.browser_step("browser_type"),
            move |s| {
                s.browser_then(None, a.snapshot.into(), |s| match a.typed()? {
                    Typed::Text(text) => s.browser_type(&a.element, &text, a.submit),
                    Typed::Secret(name) => s.browser_type_secret(&a.element, &name, a.submit),
                })
            },
            outcome_body,
        )
        .await
    }

    /// The page (or one element) as the browser draws it; on the desktop its x/y work with click.
    #[tool(
        name = "browser_screenshot",
        annotations(
            title = "Page screenshot",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn browser_screenshot(&self, Parameters(a): Parameters<ShotArgs>) -> CallToolResult {
        let session = self.session();
        let format = a.format.map(|f| match f {
            ImageKind::Png => ImageFormat::Png,
            ImageKind::Jpeg => ImageFormat::Jpeg { quality: 80 },
        });
        match render::blocking(self.request_timeout(), "browser_screenshot", move || {
            session.browser_screenshot(Some(&a.page), &a.element, format, None)
        })
        .await
        {
            Ok(shot) => {
                let what = format!("\"{}\" ({})", shot.page.title, shot.page.url);
                if shot.on_screen.is_some() {
                    image_result("Page screenshot", &shot.screenshot, &what)
                } else {
                    let s = &shot.screenshot;
                    let mut text =
                        format!("Page image {}x{} of {what}.", s.view.width, s.view.height);
                    render::masks_and_notes(&mut text, s.masked_regions, &s.notes, |_| {
                        String::new()
                    });
                    let mut r = CallToolResult::success(vec![
                        ContentBlock::text(text),
                        ContentBlock::image(
                            base64::engine::general_purpose::STANDARD.encode(&s.image.bytes),
                            s.image.format.mime_type(),
                        ),
                    ]);
                    r.structured_content = Some(json!({
                        "page": shot.page, "screenshot_id": null, "width": s.view.width,
                        "height": s.view.height, "notes": s.notes,
                        "masked_regions": s.masked_regions,
                    }));
                    r
                }
            }
            Err(e) => error(&e),
        }
    }

    /// Press a key or chord in the page's focused element.
    #[tool(
        name = "browser_press_key",
        annotations(
            title = "Key in page",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn browser_press_key(&self, Parameters(a): Parameters<KeyArgs>) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            self.browser_step("browser_press_key"),
            move |s| {
                s.browser_then(Some(&a.page), a.snapshot.into(), |s| {
                    s.browser_press_key(Some(&a.page), &a.keys)
                })
            },
            outcome_body,
        )
        .await
    }

    /// Wait for text, a selector, a navigation or network idle in a page.
    #[tool(
        name = "browser_wait_for",
        annotations(
            title = "Wait in page",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn browser_wait_for(
        &self,
        Parameters(a): Parameters<WaitArgs>,
        context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> CallToolResult {
        let timeout = std::time::Duration::from_millis(match a.timeout_ms {
            0 => 10_000,
            t => deskpilot_engine::limits::PAGE_WAIT_MS.clamp(t),
        });
        let until = match (a.text.is_empty(), a.selector.is_empty(), a.until) {
            (false, true, None) => Until::Text(a.text),
            (true, false, None) => Until::Selector(a.selector),
            (true, true, Some(WaitUntil::Navigation)) => Until::Navigation,
            (true, true, Some(WaitUntil::NetworkIdle)) => Until::NetworkIdle,
            _ => {
                return error(&deskpilot_engine::Error::InvalidArgument {
                    message: "pass one of text, selector or until".into(),
                });
            }
        };
        let session = self.session();
        // A cancelled call ends the page wait (`CANCELLED`).
        match crate::kit::tasks::stoppable(
            &context.ct,
            timeout + self.request_timeout(),
            "browser_wait_for",
            move || session.browser_wait_for(Some(&a.page), &until, timeout),
        )
        .await
        {
            Ok(w) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
                    "Done after {} ms{} — {}.",
                    w.waited.as_millis(),
                    w.url
                        .as_ref()
                        .map_or(String::new(), |u| format!(": navigated to {u}")),
                    page_line(&w.page)
                ))]);
                r.structured_content = Some(json!({
                    "page": w.page, "waited_ms": w.waited.as_millis() as u64, "url": w.url,
                }));
                r
            }
            Err(e) => error(&e),
        }
    }

    /// Evaluate JavaScript in a page; returns its JSON value.
    #[tool(
        name = "browser_eval",
        annotations(
            title = "Evaluate",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn browser_eval(&self, Parameters(a): Parameters<EvalArgs>) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            self.browser_step("browser_eval"),
            move |s| s.browser_eval(Some(&a.page), &a.expression),
            outcome_body,
        )
        .await
    }

    /// Close a browser deskpilot launched, or detach from an attached one.
    #[tool(
        name = "browser_close",
        annotations(
            title = "Close browser",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn browser_close(&self, Parameters(a): Parameters<CloseArgs>) -> CallToolResult {
        let session = self.session();
        match render::blocking(self.request_timeout(), "browser_close", move || {
            session.browser_close((a.browser != 0).then_some(a.browser))
        })
        .await
        {
            Ok(done) => {
                let text = done
                    .iter()
                    .map(|(id, launched)| {
                        if *launched {
                            format!("Closed browser {id} (its process and profile are gone).")
                        } else {
                            format!("Detached from browser {id} (left running).")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(json!({
                    "closed": done.iter().filter(|d| d.1).map(|d| d.0).collect::<Vec<_>>(),
                    "detached": done.iter().filter(|d| !d.1).map(|d| d.0).collect::<Vec<_>>(),
                }));
                r
            }
            Err(e) => error(&e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{After, ClickArgs, TypeArgs, Typed};
    use crate::kit::args::parse;
    use serde_json::json;

    #[test]
    fn snapshot_after_an_action_is_true_false_or_diff() {
        #[derive(Debug, serde::Deserialize)]
        struct A {
            #[serde(default)]
            snapshot: After,
        }
        for (v, want) in [
            (json!({}), After::Nothing),
            (json!({ "snapshot": false }), After::Nothing),
            (json!({ "snapshot": true }), After::Snapshot),
            (json!({ "snapshot": "diff" }), After::Diff),
        ] {
            assert_eq!(parse::<A>(v).unwrap().snapshot, want);
        }
        let e = parse::<A>(json!({ "snapshot": "full" })).unwrap_err();
        assert!(e.contains("\"diff\""), "{e}");
    }

    #[test]
    fn browser_type_takes_text_or_a_secret_name_exactly_one() {
        let typed = |v| parse::<TypeArgs>(v).unwrap().typed();
        assert_eq!(
            typed(json!({ "ref": "e1", "text": "Ada" })).unwrap(),
            Typed::Text("Ada".into())
        );
        assert_eq!(
            typed(json!({ "ref": "e1", "text": "" })).unwrap(),
            Typed::Text(String::new())
        );
        assert_eq!(
            typed(json!({ "ref": "e1", "secret": " SITE_PASS " })).unwrap(),
            Typed::Secret("SITE_PASS".into())
        );
        for (bad, says) in [
            (
                json!({ "ref": "e1", "text": "x", "secret": "SITE_PASS" }),
                "not both",
            ),
            (json!({ "ref": "e1" }), "give text"),
            (json!({ "ref": "e1", "secret": "  " }), "name the secret"),
        ] {
            let e = typed(bad.clone()).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn click_arguments_become_one_click_or_a_clear_refusal() {
        let click = |v| parse::<ClickArgs>(v).unwrap().click();
        let c = click(
            json!({ "ref": "e1", "button": "right", "count": 2, "modifiers": ["Ctrl", "shift"] }),
        )
        .unwrap();
        assert_eq!((c.button, c.count, c.modifiers), ("right", 2, 2 | 8));
        assert_eq!(click(json!({ "ref": "e1" })).unwrap().count, 1);
        for bad in [
            json!({ "ref": "e1", "count": 3 }),
            json!({ "ref": "e1", "modifiers": ["hyper"] }),
            json!({ "ref": "e1", "hover": true, "count": 2 }),
            json!({ "ref": "e1", "hover": true, "to": "e2" }),
            json!({ "ref": "e1", "to": "e2", "button": "right" }),
        ] {
            assert!(click(bad.clone()).is_err(), "{bad}");
        }
    }
}
