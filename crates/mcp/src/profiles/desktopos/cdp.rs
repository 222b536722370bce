//! DesktopOS's `cdp` group: `desktop_browser_launch`, `desktop_cdp_targets`, `desktop_cdp_open`
//! (a page becomes a session `s1`, `s2`, …), `desktop_cdp_elements`, `desktop_cdp_click`,
//! `desktop_cdp_type`, `desktop_cdp_eval`, `desktop_cdp_screenshot`, `desktop_cdp_close`, over
//! the engine's browser channel (every action gated as any other).
//!
//! Controls are named as DesktopOS names them — role and accessible name, deduplicated (a
//! button's own text is not a second control) — and clicked by name: an ambiguous name lists
//! the candidates and clicks nothing.

use std::time::Duration;

use base64::Engine as _;
use deskpilot_engine::limits::PAGE_LOAD_MS;
use deskpilot_engine::pipeline::ImageFormat;
use deskpilot_engine::{BrowserOutcome, Error, PageControl, PageInfo, Session};
use deskpilot_types::ErrorCode;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::desktop::NoArgs;
use super::{DesktopOsServer, error};
use crate::kit::{Parameters, render};

/// This connection's CDP sessions: `s1` → a page of one of its browsers.
#[derive(Debug, Default)]
struct Sessions {
    next: u32,
    open: Vec<CdpSession>,
    /// The session tools use when none is named: the last opened.
    current: Option<String>,
}

#[derive(Debug, Clone)]
struct CdpSession {
    id: String,
    browser: u32,
    page: String,
}

/// The one control named `name` (and of `role`, when given): exact (case-insensitive) names
/// win over containing ones; several is `AMBIGUOUS_ELEMENT` listing them.
fn by_name<'a>(
    all: &'a [PageControl],
    name: &str,
    role: Option<&str>,
) -> Result<&'a PageControl, Error> {
    let want = name.trim().to_lowercase();
    if want.is_empty() {
        return Err(Error::InvalidArgument {
            message: "name is empty: pass the control's visible text".into(),
        });
    }
    let of_role = |e: &&PageControl| role.is_none_or(|r| e.role.eq_ignore_ascii_case(r.trim()));
    let exact: Vec<&PageControl> = all
        .iter()
        .filter(of_role)
        .filter(|e| e.name.trim().to_lowercase() == want)
        .collect();
    let found = if exact.is_empty() {
        all.iter()
            .filter(of_role)
            .filter(|e| e.name.to_lowercase().contains(&want))
            .collect()
    } else {
        exact
    };
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(Error::Coded {
            code: ErrorCode::ElementNotFound,
            message: format!(
                "no control named \"{name}\"{} on the page; controls: {}",
                role.map(|r| format!(" with role {r}")).unwrap_or_default(),
                all.iter()
                    .filter(|e| !e.name.is_empty())
                    .take(20)
                    .map(|e| format!("[{}] {}", e.role, e.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
        many => Err(Error::Coded {
            code: ErrorCode::AmbiguousElement,
            message: format!(
                "{} controls are named \"{name}\"; nothing was done. Candidates: {} — pass role, or a more exact name",
                many.len(),
                many.iter()
                    .take(10)
                    .map(|e| format!("[{}] {}", e.role, e.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }),
    }
}

fn no_session(named: Option<&str>) -> Error {
    Error::Coded {
        code: ErrorCode::PageNotFound,
        message: match named {
            Some(s) => format!("no CDP session \"{s}\" on this connection; desktop_cdp_open makes one"),
            None => "no CDP session yet: desktop_cdp_open a page first (desktop_browser_launch starts a browser)".into(),
        },
    }
}

/// The page of session `named` (else the current one).
fn page_of(s: &Session, named: &str) -> Result<CdpSession, Error> {
    let named = Some(named.trim()).filter(|n| !n.is_empty());
    s.with_slot(|sessions: &mut Sessions| {
        let id = named
            .map(str::to_string)
            .or_else(|| sessions.current.clone());
        id.and_then(|id| sessions.open.iter().find(|x| x.id == id).cloned())
    })
    .ok_or_else(|| no_session(named))
}

/// The page's controls, from a fresh snapshot.
fn read_elements(s: &Session, page: &str) -> Result<(PageInfo, Vec<PageControl>), Error> {
    s.browser_controls(Some(page))
}

fn page_json(p: &PageInfo) -> Value {
    json!({ "title": p.title, "url": p.url })
}

fn done(text: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

fn outcome_result(what: String, o: &BrowserOutcome, session: &str) -> CallToolResult {
    let changed = match o.changed {
        Some(true) => " The page changed.",
        Some(false) => " Nothing on the page changed (URL, title and DOM are as before).",
        None => "",
    };
    done(
        format!("{what} in \"{}\" ({}).{changed}", o.page.title, o.page.url),
        json!({
            "session": session,
            "page": page_json(&o.page),
            "detail": o.detail,
            "changed": o.changed,
            "value": o.value,
        }),
    )
}

fn one_thousand_five_hundred() -> u64 {
    1500
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LaunchArgs {
    /// Page to open (default about:blank).
    #[serde(default)]
    pub url: String,
    /// Wait up to this long for the page to finish loading (default 1500).
    #[serde(default = "one_thousand_five_hundred", rename = "waitMs")]
    pub wait_ms: u64,
    /// No window (for automation). Default false: a window opens and takes the focus.
    #[serde(default)]
    pub headless: bool,
    /// A Chromium-family browser to start (default: the installed Chromium).
    #[serde(default, rename = "browserPath")]
    pub browser_path: Option<String>,
    /// DevTools port (default: any free one).
    #[serde(default)]
    pub port: u16,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OpenArgs {
    /// Navigate here (with navigate, default true), or pick the page whose URL contains it.
    #[serde(default)]
    pub url: String,
    /// A browser's DevTools port (one launched here, or any started with --remote-debugging-port).
    #[serde(default)]
    pub port: Option<u16>,
    /// The page's position in desktop_cdp_targets (0 first).
    #[serde(default)]
    pub index: Option<usize>,
    /// Pick the page whose title contains this.
    #[serde(default)]
    pub title: String,
    /// With url: navigate the page there (default true).
    #[serde(default)]
    pub navigate: Option<bool>,
}

fn hundred() -> usize {
    100
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElementsArgs {
    /// Only this role (button, link, textbox…).
    #[serde(default)]
    pub role: String,
    /// At most this many (default 100).
    #[serde(default = "hundred")]
    pub limit: usize,
    /// CDP session (default: the last opened).
    #[serde(default)]
    pub session: String,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClickArgs {
    /// The control's accessible name.
    pub name: String,
    /// Only controls of this role.
    #[serde(default)]
    pub role: String,
    #[serde(default)]
    pub session: String,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeArgs {
    /// Any Unicode text (Input.insertText).
    pub text: String,
    /// Replace what the field holds.
    #[serde(default)]
    pub clear: bool,
    /// Focus the control with this name first (default: what has the focus).
    #[serde(default)]
    pub target: String,
    #[serde(default)]
    pub session: String,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeSecretArgs {
    /// The secret's name (its value is never shown).
    pub secret: String,
    /// The password control's name.
    pub target: String,
    #[serde(default)]
    pub session: String,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalArgs {
    /// JavaScript; its value comes back as JSON.
    pub expression: String,
    #[serde(default)]
    pub session: String,
    /// Wait for a returned promise (default true).
    #[serde(default = "yes", rename = "awaitPromise")]
    pub await_promise: bool,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    #[serde(default)]
    pub session: String,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CloseArgs {
    #[serde(default)]
    pub session: String,
    /// Also end the browser desktop_browser_launch started (default true).
    #[serde(default = "yes", rename = "killBrowser")]
    pub kill_browser: bool,
}

/// How long a CDP tool may take beyond the profile's request timeout.
const SLACK: Duration = Duration::from_secs(10);

#[tool_router(router = cdp_router, vis = "pub(crate)")]
impl DesktopOsServer {
    /// 启动可被 CDP 调试的浏览器 / Start a Chromium-family browser with a DevTools port (127.0.0.1 only) and a throw-away profile; returns the port for desktop_cdp_open. headless: true for automation.
    #[tool(
        name = "desktop_browser_launch",
        annotations(
            title = "Launch browser",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_browser_launch(
        &self,
        Parameters(a): Parameters<LaunchArgs>,
    ) -> CallToolResult {
        let session = self.session();
        let wait = Duration::from_millis(PAGE_LOAD_MS.clamp(a.wait_ms));
        let (url, headless, path, port) = (a.url.clone(), a.headless, a.browser_path, a.port);
        let run = render::blocking(
            self.request_timeout() + wait + SLACK,
            "desktop_browser_launch",
            move || {
                let program = path.as_deref().map(std::path::Path::new);
                let info = session.browser_launch_with(&url, headless, program, port)?;
                // Until the first page has loaded (its URL, not the blank page before it), or
                // waitMs.
                let page = info.pages.first().map(|p| p.id.as_str());
                let blank = url.trim().is_empty() || url.trim() == "about:blank";
                session.browser_wait_loaded(page, wait, !blank);
                Ok::<_, Error>(info)
            },
        )
        .await;
        match run {
            Ok(info) => done(
                format!(
                    "Launched {}browser {} (pid {}) with DevTools on port {}: {} page(s). Next: desktop_cdp_open {{ port: {} }}.",
                    if headless { "a headless " } else { "a " },
                    info.id,
                    info.pid.map_or("?".into(), |p| p.to_string()),
                    info.port.map_or("?".into(), |p| p.to_string()),
                    info.pages.len(),
                    info.port.map_or("…".into(), |p| p.to_string()),
                ),
                json!({
                    "port": info.port,
                    "pid": info.pid,
                    "browser": info.id,
                    "pages": info.pages.iter().map(page_json).collect::<Vec<_>>(),
                    "window": info.window.as_ref().map(|w| w.id.0),
                }),
            ),
            Err(e) => error(&e),
        }
    }

    /// 只读:扫描可连的 CDP 页面 / Read-only: the pages of the browsers this connection launched or opened, and DevTools ports open on 127.0.0.1 (9222–9229). Empty: desktop_browser_launch one.
    #[tool(
        name = "desktop_cdp_targets",
        annotations(
            title = "CDP targets",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn desktop_cdp_targets(&self, Parameters(_): Parameters<NoArgs>) -> CallToolResult {
        let session = self.session();
        let run = render::blocking(self.request_timeout(), "desktop_cdp_targets", move || {
            let pages = session.browser_targets().unwrap_or_default();
            let ports = deskpilot_engine::devtools_ports(9222..=9229);
            Ok::<_, Error>((pages, ports))
        })
        .await;
        match run {
            Ok((pages, ports)) => {
                let mut text = format!(
                    "{} page(s) in this connection's browsers; DevTools ports open on 127.0.0.1 (9222-9229): {}.",
                    pages.len(),
                    if ports.is_empty() {
                        "none".to_string()
                    } else {
                        ports
                            .iter()
                            .map(u16::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                );
                for (i, p) in pages.iter().enumerate() {
                    text.push_str(&format!("\n{i}. \"{}\" {}", p.title, p.url));
                }
                if pages.is_empty() && ports.is_empty() {
                    text.push_str(
                        "\nNo browser has a debugging port: desktop_browser_launch starts one.",
                    );
                }
                done(
                    text,
                    json!({
                        "pages": pages.iter().enumerate().map(|(i, p)| json!({
                            "index": i, "title": p.title, "url": p.url, "browser": p.browser,
                        })).collect::<Vec<_>>(),
                        "ports": ports,
                    }),
                )
            }
            Err(e) => error(&e),
        }
    }

    /// 连上页面建立 CDP 会话 / Open a session on a page (by title/url substring or index; with url it navigates there first); later desktop_cdp_* calls use it (session "s1"…).
    #[tool(
        name = "desktop_cdp_open",
        annotations(
            title = "Open CDP session",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_cdp_open(&self, Parameters(a): Parameters<OpenArgs>) -> CallToolResult {
        let session = self.session();
        let run = render::blocking(self.request_timeout() + SLACK, "desktop_cdp_open", move || {
            let mut pages = session.browser_targets().unwrap_or_default();
            if let Some(port) = a.port {
                let ours = session.browser_on_port(port);
                let browser = match ours {
                    Some(id) => id,
                    None => session.browser_attach(Some(port), None)?.id,
                };
                pages = session.browser_targets()?;
                pages.retain(|p| p.browser == browser);
            }
            let navigate = !a.url.trim().is_empty() && a.navigate.unwrap_or(true);
            let title = a.title.trim().to_lowercase();
            let url = a.url.trim().to_lowercase();
            let chosen = if let Some(i) = a.index {
                pages.get(i).cloned()
            } else if !title.is_empty() {
                pages.iter().find(|p| p.title.to_lowercase().contains(&title)).cloned()
            } else if !url.is_empty() && !navigate {
                pages.iter().find(|p| p.url.to_lowercase().contains(&url)).cloned()
            } else {
                pages.first().cloned()
            };
            let Some(page) = chosen else {
                return Err(Error::Coded {
                    code: ErrorCode::PageNotFound,
                    message: format!(
                        "no page matches (pages: {}); desktop_browser_launch starts a browser, desktop_cdp_targets lists pages",
                        if pages.is_empty() {
                            "none".to_string()
                        } else {
                            pages.iter().map(|p| format!("\"{}\" {}", p.title, p.url)).collect::<Vec<_>>().join(", ")
                        }
                    ),
                });
            };
            let page = if navigate {
                session.browser_navigate(Some(&page.id), a.url.trim())?.page
            } else {
                page
            };
            let id = session.with_slot(|s: &mut Sessions| {
                s.next += 1;
                let id = format!("s{}", s.next);
                s.open.push(CdpSession {
                    id: id.clone(),
                    browser: page.browser,
                    page: page.id.clone(),
                });
                s.current = Some(id.clone());
                id
            });
            Ok((id, page))
        })
        .await;
        match run {
            Ok((id, page)) => done(
                format!("Session {id} on \"{}\" ({}).", page.title, page.url),
                json!({ "session": id, "page": page_json(&page), "browser": page.browser }),
            ),
            Err(e) => error(&e),
        }
    }

    /// 列页面内控件(已去重)/ The page's controls: role, name, depth; deduplicated (a button's own text is not another control). Chinese names kept whole.
    #[tool(
        name = "desktop_cdp_elements",
        annotations(
            title = "Page controls",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn desktop_cdp_elements(
        &self,
        Parameters(a): Parameters<ElementsArgs>,
    ) -> CallToolResult {
        let session = self.session();
        let name = a.session.clone();
        let run = render::blocking(
            self.request_timeout() + SLACK,
            "desktop_cdp_elements",
            move || {
                let cdp = page_of(&session, &name)?;
                let (page, all) = read_elements(&session, &cdp.page)?;
                Ok((cdp.id, page, all))
            },
        )
        .await;
        match run {
            Ok((sid, page, all)) => {
                let role = a.role.trim().to_lowercase();
                let shown: Vec<&PageControl> = all
                    .iter()
                    .filter(|e| role.is_empty() || e.role.to_lowercase() == role)
                    .take(a.limit.max(1))
                    .collect();
                let mut text = format!(
                    "{} control(s) on \"{}\" (session {sid}){}:",
                    shown.len(),
                    page.title,
                    if shown.len() < all.len() && role.is_empty() {
                        format!(", {} more beyond limit", all.len() - shown.len())
                    } else {
                        String::new()
                    }
                );
                for e in &shown {
                    text.push_str(&format!(
                        "\n{:indent$}[{}] {}",
                        "",
                        e.role,
                        e.name,
                        indent = e.depth.min(12) * 2
                    ));
                }
                done(
                    text,
                    json!({
                        "session": sid,
                        "page": page_json(&page),
                        "count": shown.len(),
                        "elements": shown.iter().map(|e| json!({
                            "role": e.role, "name": e.name, "depth": e.depth, "ref": e.r#ref,
                        })).collect::<Vec<_>>(),
                    }),
                )
            }
            Err(e) => error(&e),
        }
    }

    /// 按名称点击页面控件 / Click a page control by name (real mouse events at its centre); several with that name: an error listing them, nothing clicked.
    #[tool(
        name = "desktop_cdp_click",
        annotations(
            title = "Click page control",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_cdp_click(&self, Parameters(a): Parameters<ClickArgs>) -> CallToolResult {
        let session = self.session();
        let run = render::blocking(
            self.request_timeout() + SLACK,
            "desktop_cdp_click",
            move || {
                let cdp = page_of(&session, &a.session)?;
                let (_, all) = read_elements(&session, &cdp.page)?;
                let role = Some(a.role.as_str()).filter(|r| !r.trim().is_empty());
                let target = by_name(&all, &a.name, role)?.clone();
                let o = session.browser_click(&target.r#ref)?;
                Ok((cdp.id, target, o))
            },
        )
        .await;
        match run {
            Ok((sid, t, o)) => outcome_result(format!("Clicked [{}] {}", t.role, t.name), &o, &sid),
            Err(e) => error(&e),
        }
    }

    /// 向页面输入文本(Input.insertText,中文无损)/ Type into the page without the keyboard layout (中文, emoji intact); target focuses the control with that name first; clear replaces its text.
    #[tool(
        name = "desktop_cdp_type",
        annotations(
            title = "Type into page",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_cdp_type(&self, Parameters(a): Parameters<TypeArgs>) -> CallToolResult {
        let session = self.session();
        let run = render::blocking(
            self.request_timeout() + SLACK,
            "desktop_cdp_type",
            move || {
                let cdp = page_of(&session, &a.session)?;
                let target = if a.target.trim().is_empty() {
                    None
                } else {
                    let (_, all) = read_elements(&session, &cdp.page)?;
                    Some(by_name(&all, &a.target, None)?.clone())
                };
                let o = match (&target, a.clear) {
                    (Some(t), false) => session.browser_type(&t.r#ref, &a.text, false)?,
                    (Some(t), true) => {
                        session.browser_type(&t.r#ref, "", false)?;
                        session.browser_press_key(Some(&cdp.page), "Control+a")?;
                        session.browser_insert_text(Some(&cdp.page), &a.text)?
                    }
                    (None, clear) => {
                        if clear {
                            session.browser_press_key(Some(&cdp.page), "Control+a")?;
                        }
                        session.browser_insert_text(Some(&cdp.page), &a.text)?
                    }
                };
                Ok((cdp.id, target, o))
            },
        )
        .await;
        match run {
            Ok((sid, t, o)) => {
                let into = t.map_or("the focused control".to_string(), |t| {
                    format!("[{}] {}", t.role, t.name)
                });
                outcome_result(format!("Typed into {into}"), &o, &sid)
            }
            Err(e) => error(&e),
        }
    }

    /// 输入密钥 / Type a named secret into the page's password field; the value never enters the conversation.
    #[tool(
        name = "desktop_cdp_type_secret",
        annotations(
            title = "Type secret into page",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_cdp_type_secret(
        &self,
        Parameters(a): Parameters<TypeSecretArgs>,
    ) -> CallToolResult {
        let session = self.session();
        let run = render::blocking(
            self.request_timeout() + SLACK,
            "desktop_cdp_type_secret",
            move || {
                let cdp = page_of(&session, &a.session)?;
                let (_, all) = read_elements(&session, &cdp.page)?;
                let target = by_name(&all, &a.target, None)?.clone();
                let o = session.browser_type_secret(&target.r#ref, a.secret.trim(), false)?;
                Ok((cdp.id, target, o))
            },
        )
        .await;
        match run {
            Ok((sid, t, o)) => outcome_result(
                format!("Typed a secret into [{}] {}", t.role, t.name),
                &o,
                &sid,
            ),
            Err(e) => error(&e),
        }
    }

    /// 在页面里执行 JS / Evaluate JavaScript in the page and return its JSON value (promises awaited).
    #[tool(
        name = "desktop_cdp_eval",
        annotations(
            title = "Evaluate in page",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn desktop_cdp_eval(&self, Parameters(a): Parameters<EvalArgs>) -> CallToolResult {
        let session = self.session();
        let await_promise = a.await_promise;
        let run = render::blocking(
            self.request_timeout() + SLACK,
            "desktop_cdp_eval",
            move || {
                let cdp = page_of(&session, &a.session)?;
                let o = session.browser_eval_with(Some(&cdp.page), &a.expression, await_promise)?;
                Ok((cdp.id, o))
            },
        )
        .await;
        match run {
            Ok((sid, o)) => {
                let value = o.value.clone().unwrap_or(Value::Null);
                let mut shown = value.to_string();
                if shown.len() > 4000 {
                    let cut = (0..=4000)
                        .rev()
                        .find(|i| shown.is_char_boundary(*i))
                        .unwrap_or(0);
                    shown.truncate(cut);
                    shown.push_str(" …");
                }
                done(
                    format!("Result (session {sid}): {shown}"),
                    json!({ "session": sid, "result": value, "page": page_json(&o.page) }),
                )
            }
            Err(e) => error(&e),
        }
    }

    /// 页面级截图 / Screenshot of the page (not the screen), PNG.
    #[tool(
        name = "desktop_cdp_screenshot",
        annotations(
            title = "Page screenshot",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn desktop_cdp_screenshot(
        &self,
        Parameters(a): Parameters<SessionArgs>,
    ) -> CallToolResult {
        let session = self.session();
        let run = render::blocking(
            self.screenshot_timeout() + SLACK,
            "desktop_cdp_screenshot",
            move || {
                let cdp = page_of(&session, &a.session)?;
                let shot = session.browser_screenshot(
                    Some(&cdp.page),
                    "",
                    Some(ImageFormat::Png),
                    None,
                )?;
                Ok((cdp.id, shot))
            },
        )
        .await;
        match run {
            Ok((sid, shot)) => {
                let s = &shot.screenshot;
                let data = base64::engine::general_purpose::STANDARD.encode(&s.image.bytes);
                let mut r = CallToolResult::success(vec![
                    ContentBlock::text(format!(
                        "Page screenshot (session {sid}): {}x{} PNG of \"{}\" ({}).",
                        s.view.width, s.view.height, shot.page.title, shot.page.url
                    )),
                    ContentBlock::image(data, s.image.format.mime_type()),
                ]);
                r.structured_content = Some(json!({
                    "session": sid,
                    "width": s.view.width,
                    "height": s.view.height,
                    "format": "png",
                    "page": page_json(&shot.page),
                }));
                r
            }
            Err(e) => error(&e),
        }
    }

    /// 关闭会话并结束自己启动的浏览器 / Close the session and end the browser desktop_browser_launch started (killBrowser, default true); call it when done, or a headless browser stays behind.
    #[tool(
        name = "desktop_cdp_close",
        annotations(
            title = "Close CDP session",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn desktop_cdp_close(&self, Parameters(a): Parameters<CloseArgs>) -> CallToolResult {
        let session = self.session();
        let run = render::blocking(
            self.request_timeout() + SLACK,
            "desktop_cdp_close",
            move || {
                let cdp = page_of(&session, &a.session)?;
                let closed = if a.kill_browser {
                    session.browser_close(Some(cdp.browser))?
                } else {
                    Vec::new()
                };
                session.with_slot(|s: &mut Sessions| {
                    // Sessions on the closed browser go with it.
                    s.open
                        .retain(|x| x.id != cdp.id && !closed.iter().any(|(b, _)| *b == x.browser));
                    if s.current
                        .as_ref()
                        .is_some_and(|c| !s.open.iter().any(|x| &x.id == c))
                    {
                        s.current = s.open.last().map(|x| x.id.clone());
                    }
                });
                Ok((cdp.id, closed))
            },
        )
        .await;
        match run {
            Ok((sid, closed)) => {
                let ended: Vec<u32> = closed
                    .iter()
                    .filter(|(_, killed)| *killed)
                    .map(|(b, _)| *b)
                    .collect();
                done(
                    format!(
                        "Session {sid} closed.{}",
                        if ended.is_empty() {
                            " No browser was ended.".to_string()
                        } else {
                            format!(" Browser {ended:?} ended, its profile removed.")
                        }
                    ),
                    json!({ "session": sid, "browsersEnded": ended }),
                )
            }
            Err(e) => error(&e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_exactly_first_and_never_guess() {
        let c = |r: &str, role: &str, name: &str| PageControl {
            r#ref: r.into(),
            role: role.into(),
            name: name.into(),
            depth: 1,
        };
        let all = [
            c("e1", "button", "搜索"),
            c("e2", "link", "搜索结果"),
            c("e3", "button", "Save"),
            c("e4", "link", "Save"),
        ];
        assert_eq!(by_name(&all, "搜索", None).unwrap().r#ref, "e1");
        assert_eq!(by_name(&all, "结果", None).unwrap().r#ref, "e2");
        let e = by_name(&all, "save", None).unwrap_err();
        assert_eq!(e.code(), ErrorCode::AmbiguousElement);
        assert!(e.to_string().contains("[button] Save") && e.to_string().contains("[link] Save"));
        assert_eq!(by_name(&all, "Save", Some("link")).unwrap().r#ref, "e4");
        assert_eq!(
            by_name(&all, "nothing", None).unwrap_err().code(),
            ErrorCode::ElementNotFound
        );
    }
}
