//! More of the browser channel: `browser_tabs` (list, new, select, close), `browser_fill`
//! (several fields, file inputs and named secrets in one call), `browser_dialog` (answer an alert, confirm
//! or prompt), `browser_log` (console messages, requests, one request in full) and
//! `browser_emulate` (viewport, colour scheme, reduced motion, print media).

use deskpilot_engine::{ConsoleMessage, Emulation, FormField, Request, RequestDetail};
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::browser::{After, outcome_body, page_line};
use super::wording::WORDING;
use super::{DeskpilotServer, done, error};
use crate::kit::report;
use crate::kit::{Parameters, render};

#[derive(Debug, Clone, Copy, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TabAction {
    #[default]
    List,
    New,
    Select,
    Close,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TabsArgs {
    #[serde(default)]
    pub action: TabAction,
    /// Tab id.
    #[serde(default)]
    pub page: String,
    /// For new.
    #[serde(default)]
    pub url: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FieldArg {
    #[serde(rename = "ref")]
    pub element: String,
    /// Text, true/false, option, date, file path.
    #[serde(default)]
    pub value: Option<String>,
    /// Several options, or files.
    #[serde(default)]
    pub values: Vec<String>,
    /// Secret name.
    #[serde(default)]
    pub secret: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FillArgs {
    pub fields: Vec<FieldArg>,
    #[serde(default)]
    pub snapshot: After,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DialogArgs {
    /// OK (true) or Cancel.
    pub accept: bool,
    /// Prompt answer.
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub page: String,
}

#[derive(Debug, Clone, Copy, Default, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogKind {
    #[default]
    Console,
    Network,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LogArgs {
    #[serde(default)]
    pub kind: LogKind,
    /// error, warning, info, log, debug: and worse.
    #[serde(default)]
    pub level: String,
    /// URL part.
    #[serde(default)]
    pub filter: String,
    /// Newer than this mark.
    #[serde(default)]
    pub since: Option<u64>,
    /// Request # in full.
    #[serde(default)]
    pub request: Option<u64>,
    /// Body cap (default 16000).
    #[serde(default)]
    pub max_bytes: usize,
    #[serde(default)]
    pub page: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EmulateArgs {
    /// Viewport (0: window's).
    #[serde(default)]
    pub width: Option<u32>,
    #[serde(default)]
    pub height: Option<u32>,
    /// light, dark.
    #[serde(default)]
    pub color_scheme: String,
    /// reduce, no-preference.
    #[serde(default)]
    pub reduced_motion: String,
    /// screen, print.
    #[serde(default)]
    pub media: String,
    #[serde(default)]
    pub page: String,
}

/// Body bytes a request's detail shows unless told otherwise.
const DEFAULT_BODY: usize = 16_000;

fn console_line(m: &ConsoleMessage) -> String {
    format!(
        "#{} [{}] {}{}",
        m.seq,
        m.level,
        m.text,
        if m.source.is_empty() {
            String::new()
        } else {
            format!("  ({})", m.source)
        }
    )
}

fn request_line(r: &Request) -> String {
    let status = match (&r.failed, r.status) {
        (Some(f), _) => f.clone(),
        (None, Some(s)) => s.to_string(),
        (None, None) => "pending".into(),
    };
    format!(
        "#{} {} {} → {status}{}{}",
        r.seq,
        r.method,
        r.url,
        if r.kind.is_empty() {
            String::new()
        } else {
            format!(" {}", r.kind)
        },
        r.size.map_or(String::new(), |s| format!(" {s:.0} B"))
    )
}

fn request_json(r: &Request) -> serde_json::Value {
    json!({
        "seq": r.seq, "method": r.method, "url": r.url, "type": r.kind, "status": r.status,
        "mime": r.mime, "size": r.size, "failed": r.failed, "finished": r.finished,
    })
}

fn detail_text(d: &RequestDetail) -> String {
    let r = &d.request;
    let headers = |h: &serde_json::Value| {
        h.as_object()
            .map(|o| {
                o.iter()
                    .map(|(k, v)| format!("  {k}: {}", v.as_str().unwrap_or_default()))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    };
    let mut text = format!(
        "{}\nRequest headers:\n{}",
        request_line(r),
        headers(&r.request_headers)
    );
    if let Some(p) = &r.post_data {
        text.push_str(&format!("\nRequest body: {p}"));
    }
    text.push_str(&format!(
        "\nResponse headers:\n{}",
        headers(&r.response_headers)
    ));
    match &d.body {
        Some(b) => {
            let shown = b.len();
            text.push_str(&format!(
                "\nResponse body ({} bytes{}{}):\n{b}",
                d.body_len,
                if d.base64 { ", base64" } else { "" },
                if shown < d.body_len || (d.base64 && shown < d.body_len * 4 / 3) {
                    format!(", cut at {shown}; max_bytes shows more")
                } else {
                    String::new()
                }
            ));
        }
        None => text.push_str("\nNo response body kept (pending, failed or a redirect)."),
    }
    text
}

#[tool_router(router = page_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// List the browser tabs, or open (url), select or close (page) one.
    #[tool(
        name = "browser_tabs",
        annotations(
            title = "Browser tabs",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn browser_tabs(&self, Parameters(a): Parameters<TabsArgs>) -> CallToolResult {
        if let TabAction::List = a.action {
            let session = self.session();
            return match render::blocking(self.request_timeout(), "browser_tabs", move || {
                session.browser_targets()
            })
            .await
            {
                Ok(pages) => {
                    let mut text = format!("{} tab(s):", pages.len());
                    for p in &pages {
                        text.push('\n');
                        text.push_str(&page_line(p));
                    }
                    done(text, json!({ "pages": pages }))
                }
                Err(e) => error(&e),
            };
        }
        report::act(
            self.session(),
            &WORDING,
            self.browser_step("browser_tabs"),
            move |s| match a.action {
                TabAction::New => s.browser_tab_new(&a.url),
                TabAction::Select => s.browser_tab_select(&a.page),
                _ => s.browser_tab_close((!a.page.trim().is_empty()).then_some(a.page.as_str())),
            },
            outcome_body,
        )
        .await
    }

    /// Fill form fields by ref: text, checkboxes, selects, dates, file uploads.
    #[tool(
        name = "browser_fill",
        annotations(
            title = "Fill form",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = true
        )
    )]
    pub async fn browser_fill(&self, Parameters(a): Parameters<FillArgs>) -> CallToolResult {
        let fields: Vec<FormField> = a
            .fields
            .into_iter()
            .map(|f| FormField {
                r#ref: f.element,
                value: f.value,
                values: f.values,
                secret: f.secret.map(|n| n.trim().to_string()),
            })
            .collect();
        report::act(
            self.session(),
            &WORDING,
            self.browser_step("browser_fill"),
            move |s| s.browser_then(None, a.snapshot.into(), |s| s.browser_fill(&fields)),
            outcome_body,
        )
        .await
    }

    /// Answer the page's open alert, confirm or prompt dialog.
    #[tool(
        name = "browser_dialog",
        annotations(
            title = "Answer dialog",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn browser_dialog(&self, Parameters(a): Parameters<DialogArgs>) -> CallToolResult {
        report::act(
            self.session(),
            &WORDING,
            self.browser_step("browser_dialog"),
            move |s| s.browser_dialog(Some(&a.page), a.accept, a.text.as_deref()),
            outcome_body,
        )
        .await
    }

    /// Console messages or requests of a page (since a mark), or one request in full.
    #[tool(
        name = "browser_log",
        annotations(
            title = "Page log",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn browser_log(&self, Parameters(a): Parameters<LogArgs>) -> CallToolResult {
        let session = self.session();
        let page = a.page.clone();
        let r = render::blocking(self.request_timeout(), "browser_log", move || {
            let page = Some(page.as_str());
            match (a.kind, a.request.unwrap_or(0)) {
                (LogKind::Console, _) => {
                    let (info, list, mark) = session.browser_console(page, &a.level, a.since.unwrap_or(0))?;
                    let mut text = format!(
                        "{} console message(s) of {}; mark {mark} (since: {mark} for newer):",
                        list.len(),
                        page_line(&info)
                    );
                    for m in &list {
                        text.push('\n');
                        text.push_str(&console_line(m));
                    }
                    let messages: Vec<_> = list
                        .iter()
                        .map(|m| json!({ "seq": m.seq, "level": m.level, "text": m.text, "source": m.source }))
                        .collect();
                    Ok(done(text, json!({ "page": info, "mark": mark, "messages": messages })))
                }
                (LogKind::Network, 0) => {
                    let (info, list, mark) = session.browser_requests(page, &a.filter, a.since.unwrap_or(0))?;
                    let mut text = format!(
                        "{} request(s) of {}; mark {mark}; request: <#> for one in full:",
                        list.len(),
                        page_line(&info)
                    );
                    for r in &list {
                        text.push('\n');
                        text.push_str(&request_line(r));
                    }
                    let requests: Vec<_> = list.iter().map(request_json).collect();
                    Ok(done(text, json!({ "page": info, "mark": mark, "requests": requests })))
                }
                (LogKind::Network, n) => {
                    let cap = if a.max_bytes == 0 { DEFAULT_BODY } else { a.max_bytes };
                    let (info, d) = session.browser_request(page, n, cap)?;
                    let mut structured = request_json(&d.request);
                    structured["request_headers"] = d.request.request_headers.clone();
                    structured["response_headers"] = d.request.response_headers.clone();
                    structured["post_data"] = json!(d.request.post_data);
                    structured["body"] = json!(d.body);
                    structured["base64"] = json!(d.base64);
                    structured["body_len"] = json!(d.body_len);
                    structured["page"] = json!(info);
                    Ok(done(detail_text(&d), structured))
                }
            }
        })
        .await;
        match r {
            Ok(r) => r,
            Err(e) => error(&e),
        }
    }

    /// Set a page's viewport, colour scheme, reduced motion or print media.
    #[tool(
        name = "browser_emulate",
        annotations(
            title = "Emulate",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn browser_emulate(&self, Parameters(a): Parameters<EmulateArgs>) -> CallToolResult {
        let e = Emulation {
            viewport: match (a.width.unwrap_or(0), a.height.unwrap_or(0)) {
                (0, 0) => None,
                size => Some(size),
            },
            color_scheme: a.color_scheme.trim().to_ascii_lowercase(),
            reduced_motion: a.reduced_motion.trim().to_ascii_lowercase(),
            media: a.media.trim().to_ascii_lowercase(),
        };
        report::act(
            self.session(),
            &WORDING,
            self.browser_step("browser_emulate"),
            move |s| s.browser_emulate(Some(&a.page), &e),
            outcome_body,
        )
        .await
    }
}
