//! The memory tools — `memory_recall`, `memory_timeline`, `memory_stats`, `memory_clear` — and
//! the rendering of memory's typed facts (a recall, the timeline, the statistics) into text and
//! structured content. Declared once, on every profile's [`Server`]; a profile that offers them
//! implements [`MemoryProfile`] (its descriptions, argument wording, and how its hints name a
//! window and the tool that focuses one) and mounts them with [`tools`].
//!
//! Nothing is invented: a minimized window says so with the id to focus, a closed one says when
//! it was last seen, a query that matched nothing says so and lists only the closest records.

use deskpilot_engine::{Check, LiveToken, MemoryReport, Recollection, ScreenshotId, VerifyTarget};
use deskpilot_memory::{
    Confidence, Deixis, Field, MAX_STATE_BYTES, Presence, Recall, RecallCandidate, Recalled,
    Recognition, TIMELINE_ROTATE_BYTES, TimelineEntry, TimelineRead, TimelineTarget, UnixMillis,
    Why, now_millis,
};
use deskpilot_types::WindowId;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::report::{self, Body, Step};
use super::server::describe_param;
use super::server::{ProfileSpec, Server, describe};
use super::{Parameters, render};

/// How a profile words the memory tools.
#[derive(Debug, Clone, Copy)]
pub struct MemoryWording {
    /// `memory_recall`'s description and title.
    pub recall: &'static str,
    pub recall_title: &'static str,
    /// Its `query` argument.
    pub query: &'static str,
    /// `memory_timeline`'s description and title.
    pub timeline: &'static str,
    pub timeline_title: &'static str,
    /// Its `limit` and `since` arguments.
    pub limit: &'static str,
    pub since: &'static str,
    /// `memory_stats`' and `memory_clear`'s descriptions.
    pub stats: &'static str,
    pub clear: &'static str,
    /// The call that brings a minimized window back, as a recall's hint says it (`window focus`).
    pub focus: &'static str,
    /// A window as the profile's hints name it (`0x1a00003`, `handle=…`).
    pub window: fn(WindowId) -> String,
    /// A key under which each recall candidate repeats its `window_id`, for a profile whose
    /// tools take a window under another name.
    pub window_key: Option<&'static str>,
}

/// A profile that offers the memory tools, in its words (public only because the tools' generated
/// items are; the kit is private to the crate).
pub trait MemoryProfile: ProfileSpec {
    const MEMORY: MemoryWording;
}

/// The memory tools for profile `P`'s server, in `P::MEMORY`'s words.
pub(crate) fn tools<P: MemoryProfile>() -> ToolRouter<Server<P>> {
    let w = P::MEMORY;
    let mut router = Server::<P>::memory_tools_router();
    describe(&mut router, "memory_recall", w.recall);
    describe(&mut router, "memory_timeline", w.timeline);
    describe(&mut router, "memory_stats", w.stats);
    describe(&mut router, "memory_clear", w.clear);
    entitle(&mut router, "memory_recall", w.recall_title);
    entitle(&mut router, "memory_timeline", w.timeline_title);
    describe_param(&mut router, "memory_recall", "query", w.query);
    describe_param(&mut router, "memory_timeline", "limit", w.limit);
    describe_param(&mut router, "memory_timeline", "since", w.since);
    router
}

/// Gives the shared tool `name` the profile's `title`.
fn entitle<S>(router: &mut ToolRouter<S>, name: &str, title: &'static str) {
    if let Some(a) = router
        .map
        .get_mut(name)
        .and_then(|route| route.attr.annotations.as_mut())
    {
        a.title = Some(title.to_string());
    }
}

#[tool_router(router = memory_tools_router, vis = "pub(crate)")]
impl<P: MemoryProfile> Server<P> {
    /// Find a window or control seen before.
    #[tool(
        name = "memory_recall",
        annotations(
            title = "Recall",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn memory_recall(&self, Parameters(a): Parameters<RecallArgs>) -> CallToolResult {
        let session = self.session();
        let query = a.query.clone();
        match render::blocking(self.request_timeout(), "memory recall", move || {
            session.memory_recall(&query)
        })
        .await
        {
            Ok(r) => {
                let w = P::MEMORY;
                let (text, mut structured) = recall(&a.query, &r, w.focus, w.window);
                if let Some(key) = w.window_key
                    && let Some(items) = structured["candidates"].as_array_mut()
                {
                    for c in items {
                        c[key] = c["window_id"].clone();
                    }
                }
                done(text, structured)
            }
            Err(e) => render::error(&e, P::wording()),
        }
    }

    /// What was seen and done, oldest first.
    #[tool(
        name = "memory_timeline",
        annotations(
            title = "Timeline",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn memory_timeline(&self, Parameters(a): Parameters<TimelineArgs>) -> CallToolResult {
        let session = self.session();
        let since = (a.since > 0).then_some(a.since);
        match render::blocking(self.request_timeout(), "memory timeline", move || {
            session.memory_timeline(a.limit, since)
        })
        .await
        {
            Ok(read) => {
                let (text, structured) = timeline(&read);
                done(text, structured)
            }
            Err(e) => render::error(&e, P::wording()),
        }
    }

    /// Memory's counts, size on disk and path.
    #[tool(
        name = "memory_stats",
        annotations(
            title = "Memory statistics",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn memory_stats(&self, Parameters(_): Parameters<NoArgs>) -> CallToolResult {
        let session = self.session();
        match render::blocking(self.request_timeout(), "memory stats", move || {
            session.memory_stats()
        })
        .await
        {
            Ok(r) => {
                let (text, structured) = stats(&r);
                done(text, structured)
            }
            Err(e) => render::error(&e, P::wording()),
        }
    }

    /// Forget what memory holds.
    #[tool(
        name = "memory_clear",
        annotations(
            title = "Clear memory",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn memory_clear(&self, Parameters(_): Parameters<NoArgs>) -> CallToolResult {
        report::act(
            self.session(),
            P::wording(),
            Step {
                what: "memory clear",
                timeout: self.request_timeout(),
                check: Check::default(),
                target: VerifyTarget::Screen,
            },
            |s| s.memory_clear(),
            |o| {
                let b = &o.before;
                Body::new(
                    format!(
                        "Memory cleared: forgot {} window(s), {} control(s), {} focus change(s) and {} bytes of timeline.",
                        b.windows, b.elements, b.focus_entries, b.timeline_bytes
                    ),
                    json!({
                        "forgot": {
                            "windows": b.windows,
                            "elements": b.elements,
                            "focus_entries": b.focus_entries,
                            "timeline_bytes": b.timeline_bytes,
                        },
                        "dir": b.dir.display().to_string(),
                    }),
                )
            },
        )
        .await
    }
}

// `memory_recall`'s argument; its description is the profile's (no doc on the struct: it would
// show in the schema).
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecallArgs {
    /// What to recall.
    pub query: String,
}

fn default_limit() -> usize {
    20
}

// `memory_timeline`'s arguments; their descriptions are the profile's.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimelineArgs {
    /// Newest entries (default 20, at most 500).
    #[serde(default = "default_limit")]
    pub limit: usize,
    /// Only entries at or after this Unix time in ms.
    #[serde(default)]
    pub since: u64,
}

#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

fn done(text: String, structured: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(structured);
    r
}

/// `19:40:12 UTC (3 min ago)`.
fn when(at: UnixMillis, now: UnixMillis) -> String {
    format!("{} UTC ({})", clock(at), ago(at, now))
}

/// The UTC time of day of a Unix millisecond time: `19:40:12`.
fn clock(at: UnixMillis) -> String {
    let s = (at / 1000) % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn ago(at: UnixMillis, now: UnixMillis) -> String {
    let s = now.saturating_sub(at) / 1000;
    match s {
        0..=1 => "just now".to_string(),
        2..=119 => format!("{s} s ago"),
        120..=7199 => format!("{} min ago", s / 60),
        7200..=172_799 => format!("{} h ago", s / 3600),
        _ => format!("{} days ago", s / 86_400),
    }
}

fn field(f: Field) -> &'static str {
    match f {
        Field::Title => "title",
        Field::Process => "process",
        Field::Class => "class",
        Field::Name => "name",
    }
}

fn deixis(d: Deixis) -> String {
    match d {
        Deixis::LastWindow => "the window focused last".to_string(),
        Deixis::PreviousWindow => "the window focused before it".to_string(),
        Deixis::LastElement(role) => format!("the {role} acted on (else seen) last"),
        Deixis::LastActed => "the control acted on last".to_string(),
    }
}

/// "the same app's window as 0x1a00003 (closed), confidence high: same process, same title,
/// pixels 3 bits apart".
fn recognition(r: &Recognition, id: fn(WindowId) -> String) -> String {
    let mut evidence = Vec::new();
    if r.process_agrees {
        evidence.push("same process".to_string());
    }
    if r.title_agrees {
        evidence.push("same title".to_string());
    }
    if let Some(d) = r.hash_distance {
        evidence.push(format!("pixels {d} of 64 bits apart"));
    }
    let confidence = match r.confidence {
        Confidence::High => "high",
        Confidence::Medium => "medium",
        Confidence::Low => "low",
    };
    format!(
        "the same app's window as {} \"{}\" (closed), confidence {confidence}: {}",
        id(r.previous),
        r.previous_title,
        evidence.join(", ")
    )
}

/// One reason, in words.
fn why(w: &Why) -> String {
    match w {
        Why::Deictic { phrase, deixis: d } => format!("\"{phrase}\" means {}", deixis(*d)),
        Why::Alias {
            said,
            matched,
            field: f,
        } => format!("\"{said}\" names the app \"{matched}\" ({})", field(*f)),
        Why::Keyword { word, field: f } => format!("\"{word}\" is in its {}", field(*f)),
        Why::Closest { similarity: 0 } => "no match; only the most recent".to_string(),
        Why::Closest { similarity } => format!("no match; closest ({similarity} % similar)"),
    }
}

fn why_json(w: &Why) -> Value {
    match w {
        Why::Deictic { phrase, deixis: d } => {
            json!({ "kind": "deictic", "phrase": phrase, "means": deixis(*d) })
        }
        Why::Alias {
            said,
            matched,
            field: f,
        } => json!({ "kind": "alias", "said": said, "matched": matched, "field": field(*f) }),
        Why::Keyword { word, field: f } => {
            json!({ "kind": "keyword", "word": word, "field": field(*f) })
        }
        Why::Closest { similarity } => json!({ "kind": "closest", "similarity": similarity }),
    }
}

/// What state a recalled thing is in, as a word and a sentence; `focus` names the tool call
/// that brings a window back (the profile's own words).
fn presence(p: Presence, window: &str, now: UnixMillis, focus: &str) -> (&'static str, String) {
    match p {
        Presence::Present => ("present", "present".to_string()),
        Presence::Minimized => (
            "minimized",
            format!("exists but minimized — focus it first ({focus} {window})"),
        ),
        Presence::Gone { last_seen, gone_at } => (
            "gone",
            format!(
                "gone: closed; last seen {}, missing since {}",
                when(last_seen, now),
                clock(gone_at)
            ),
        ),
        Presence::WindowUnknown => (
            "window_unknown",
            "its window is no longer in memory".to_string(),
        ),
    }
}

/// A recall as text and structured content. `focus` is how the profile says "focus window X"
/// (e.g. `window focus`).
fn recall(
    query: &str,
    r: &Recollection,
    focus: &str,
    id: fn(WindowId) -> String,
) -> (String, Value) {
    let now = now_millis();
    let candidates = r.recall.candidates();
    let matched = matches!(r.recall, Recall::Matched(_));
    let mut text = match (matched, candidates.len()) {
        (true, n) => format!(
            "{n} candidate{} for \"{query}\", best first:",
            if n == 1 { "" } else { "s" }
        ),
        (false, 0) => {
            format!("Nothing in memory matches \"{query}\", and memory holds nothing yet.")
        }
        (false, _) => {
            format!("Nothing in memory matches \"{query}\". The closest records (NOT matches):")
        }
    };
    let mut items = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let shot = r.in_screenshot.get(i).copied().flatten();
        let live = r.live_tokens.get(i).cloned().flatten();
        let (line, item) = candidate(c, shot, live, now, (focus, id));
        text.push_str(&format!("\n{}. {line}", i + 1));
        items.push(item);
    }
    let structured = json!({
        "query": query,
        "matched": matched,
        "candidates": items,
    });
    (text, structured)
}

fn candidate(
    c: &RecallCandidate,
    shot: Option<(ScreenshotId, u32, u32)>,
    live: Option<LiveToken>,
    now: UnixMillis,
    (focus, id_of): (&str, fn(WindowId) -> String),
) -> (String, Value) {
    let reasons: Vec<String> = c.why.iter().map(why).collect();
    let in_shot = shot
        .map(|(id, x, y)| format!(", ({x}, {y}) in screenshot {id}"))
        .unwrap_or_default();
    let shot_json =
        shot.map(|(id, x, y)| json!({ "screenshot_id": id.to_string(), "x": x, "y": y }));
    match &c.target {
        Recalled::Window {
            id,
            title,
            process,
            class,
            frame,
            center,
            presence: p,
            last_seen,
            recognized_as,
        } => {
            let (state, said) = presence(*p, &id_of(*id), now, focus);
            let reopened = recognized_as
                .as_ref()
                .map(|r| format!(" Reopened: {}.", recognition(r, id_of)))
                .unwrap_or_default();
            let line = format!(
                "window {} \"{title}\" ({}) — {said}; centre ({}, {}) physical{in_shot}; frame {frame}. Why: {}.{reopened}",
                id_of(*id),
                process.as_deref().unwrap_or("?"),
                center.x,
                center.y,
                reasons.join("; ")
            );
            let item = json!({
                "kind": "window",
                "window_id": id.0,
                "title": title,
                "process": process,
                "class": class,
                "frame": frame,
                "center": { "x": center.x, "y": center.y },
                "in_screenshot": shot_json,
                "state": state,
                "last_seen": last_seen,
                "gone_at": match p { Presence::Gone { gone_at, .. } => Some(*gone_at), _ => None },
                "score": c.score,
                "why": c.why.iter().map(why_json).collect::<Vec<_>>(),
                "recognized_as": recognized_as.as_ref().map(|r| json!({
                    "previous": r.previous.0,
                    "previous_title": r.previous_title,
                    "confidence": r.confidence,
                    "process_agrees": r.process_agrees,
                    "title_agrees": r.title_agrees,
                    "hash_distance": r.hash_distance,
                })),
            });
            (line, item)
        }
        Recalled::Element {
            window,
            role,
            name: label,
            bounds,
            center,
            path,
            token,
            presence: p,
            last_seen,
            acted_on,
        } => {
            let (state, said) = presence(*p, &id_of(*window), now, focus);
            let token_said = match (&live, token) {
                (Some(l), _) if l.kept => format!("token {} (still valid)", l.token),
                (Some(l), _) => format!("token {} (found again in a fresh read)", l.token),
                (None, Some(t)) => format!("old token {t} no longer valid: read the window again"),
                (None, None) => "no token".to_string(),
            };
            let acted = acted_on
                .map(|t| format!("; acted on {}", when(t, now)))
                .unwrap_or_default();
            let line = format!(
                "{role} \"{label}\" in window {} — {said}; centre ({}, {}) physical{in_shot}; {token_said}{acted}. Why: {}.",
                id_of(*window),
                center.x,
                center.y,
                reasons.join("; ")
            );
            let item = json!({
                "kind": "element",
                "window_id": window.0,
                "role": role.as_str(),
                "name": label,
                "bounds": bounds,
                "center": { "x": center.x, "y": center.y },
                "in_screenshot": shot_json,
                "path": path,
                "token": live.as_ref().map(|l| l.token.clone()),
                "token_kept": live.as_ref().map(|l| l.kept),
                "state": state,
                "last_seen": last_seen,
                "acted_on": acted_on,
                "score": c.score,
                "why": c.why.iter().map(why_json).collect::<Vec<_>>(),
            });
            (line, item)
        }
    }
}

/// One timeline line: `19:40:12 click on 0x1a00003 "Untitled" (mousepad) at (640, 400) → input, confirmed`.
fn entry_line(e: &TimelineEntry) -> String {
    let mut s = format!("{} {}", clock(e.at), e.tool);
    if let Some(w) = &e.window {
        s.push_str(&format!(
            " on {} \"{}\" ({})",
            w.id,
            w.title,
            w.process.as_deref().unwrap_or("?")
        ));
    }
    match &e.target {
        Some(TimelineTarget::Point { at }) => s.push_str(&format!(" at ({}, {})", at.x, at.y)),
        Some(TimelineTarget::Element {
            role, name, path, ..
        }) => s.push_str(&format!(" → {role} \"{name}\" (path {path})")),
        None => {}
    }
    match (&e.route, &e.effect) {
        (Some(r), Some(f)) => s.push_str(&format!(" → {r}, {f}")),
        (None, Some(f)) => s.push_str(&format!(" → {f}")),
        (Some(r), None) => s.push_str(&format!(" → {r}")),
        (None, None) => {}
    }
    if let Some(d) = &e.detail {
        s.push_str(&format!(" — {d}"));
    }
    s
}

/// The timeline as text and structured content.
fn timeline(read: &TimelineRead) -> (String, Value) {
    let n = read.entries.len();
    let mut text = if n == 0 {
        "The timeline is empty for that range.".to_string()
    } else {
        format!(
            "{n} timeline entr{} (oldest first, times UTC):",
            if n == 1 { "y" } else { "ies" }
        )
    };
    for e in &read.entries {
        text.push('\n');
        text.push_str(&entry_line(e));
    }
    if read.skipped_lines > 0 {
        text.push_str(&format!(
            "\n{} unreadable line(s) skipped (a write cut short by a crash).",
            read.skipped_lines
        ));
    }
    let structured = json!({
        "entries": read.entries,
        "skipped_lines": read.skipped_lines,
    });
    (text, structured)
}

/// `memory_stats` as text and structured content.
fn stats(r: &MemoryReport) -> (String, Value) {
    let s = &r.stats;
    let now = now_millis();
    let mut text = format!(
        "Memory at {}: {} window(s) ({} closed), {} control(s), {} focus change(s); state file {} bytes, timeline {} bytes; last update {}.",
        s.dir.display(),
        s.windows,
        s.windows_gone,
        s.elements,
        s.focus_entries,
        s.state_bytes,
        s.timeline_bytes,
        s.last_update.map_or("never".to_string(), |t| when(t, now)),
    );
    if let Some(e) = &r.save_error {
        text.push_str(&format!("\nNOT SAVED: {e}"));
    }
    if let Some(w) = &r.load_warning {
        text.push_str(&format!("\nAt start: {w}"));
    }
    let structured = json!({
        "dir": s.dir.display().to_string(),
        "windows": s.windows,
        "windows_gone": s.windows_gone,
        "elements": s.elements,
        "focus_entries": s.focus_entries,
        "state_bytes": s.state_bytes,
        "timeline_bytes": s.timeline_bytes,
        "last_update": s.last_update,
        "save_error": r.save_error,
        "load_warning": r.load_warning,
        "bounds": {
            "state_bytes_max": MAX_STATE_BYTES,
            "timeline_bytes_max": 2 * TIMELINE_ROTATE_BYTES,
        },
    });
    (text, structured)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_and_ago_read_as_a_person_would() {
        assert_eq!(clock(0), "00:00:00");
        assert_eq!(clock((19 * 3600 + 40 * 60 + 12) * 1000 + 345), "19:40:12");
        assert_eq!(ago(1_000, 1_500), "just now");
        assert_eq!(ago(0, 90_000), "90 s ago");
        assert_eq!(ago(0, 600_000), "10 min ago");
        assert_eq!(ago(0, 3 * 86_400_000), "3 days ago");
    }
}
