//! The resources deskpilot serves, for any profile that declares `resources` and mounts these
//! hooks:
//!
//! | URI | what | listed |
//! |---|---|---|
//! | `deskpilot://windows` | the window list (JSON), each window with its tree and outline URIs | yes |
//! | `deskpilot://memory/timeline` | memory's action timeline, last [`TIMELINE_ENTRIES`] entries (JSON) | when memory is on |
//! | `deskpilot://skill/{app}` | one app skill (Markdown with its front matter) | one per skill |
//! | `deskpilot://screenshot/{id}` | a screenshot this session was shown, its bytes and geometry | template |
//! | `deskpilot://window/{window}/tree` | the window's accessibility tree, as `get_window_state` words it | template |
//! | `deskpilot://window/{window}/outline` | the window's outline: its controls with tokens and centres | template |
//!
//! A tree or outline is read from the window when the resource is read: that read is this
//! session's newest snapshot of the window, so its tokens work with the element tools, and a
//! window whose structure did not change keeps its snapshot id and tokens. (A cached "last
//! tree" would make the `updated` notices below lie.) A screenshot is the exact image a tool of
//! this session showed (kept by `kit::image`), never another session's.
//!
//! Subscriptions: a watcher task per [`Hub`] polls, only while a client watches something, the
//! window list (every [`WINDOWS_EVERY`]), each watched window's tree ([`TREES_EVERY`]) and the
//! timeline ([`TIMELINE_EVERY`]), and sends `notifications/resources/updated` when what a read
//! would answer changed. Skills are announced by whoever saves them (`kit::skills`), screenshots
//! never change. The watcher learns which URIs to check from the reads and subscriptions that
//! pass through these hooks.
//!
//! Every result is `cacheScope: private` (it is this desktop's); only a screenshot may be cached
//! (`ttlMs` [`SCREENSHOT_TTL`]): everything else is live.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use base64::Engine as _;
use deskpilot_engine::{
    Engine, Error, KeptShot, OutlineMode, Screenshot, Session, TreeRequest, WindowFilter, WindowRef,
};
use deskpilot_types::{ErrorCode, WindowId, WindowInfo};
use rmcp::ErrorData;
use rmcp::model::{
    Annotations, CacheScope, ListResourceTemplatesResult, ListResourcesResult, MetaObject,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role,
};
use serde_json::{Value, json};

use super::hub::Hub;
use super::server::{ProfileSpec, Server};

const SCHEME: &str = "deskpilot://";
/// The window list.
pub(crate) const WINDOWS: &str = "deskpilot://windows";
/// Memory's timeline.
pub(crate) const TIMELINE: &str = "deskpilot://memory/timeline";
/// How many timeline entries the timeline resource holds (the newest).
pub(crate) const TIMELINE_ENTRIES: usize = 200;
/// How long a client may keep a screenshot it read (its bytes never change).
pub(crate) const SCREENSHOT_TTL: u64 = 3_600_000;
/// How often a watched window list is read again.
pub(crate) const WINDOWS_EVERY: Duration = Duration::from_millis(500);
/// How often a watched window's tree is read again.
pub(crate) const TREES_EVERY: Duration = Duration::from_secs(1);
/// How often a watched timeline is read again.
pub(crate) const TIMELINE_EVERY: Duration = Duration::from_secs(2);
/// How often the watcher looks whether anything is watched.
const TICK: Duration = Duration::from_millis(250);
/// URIs the watcher remembers having been read or subscribed (the newest).
const CANDIDATES: usize = 64;

/// A resource URI this module serves.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Named {
    Windows,
    Timeline,
    Screenshot(u64),
    Tree(WindowId),
    Outline(WindowId),
    Skill(String),
}

impl Named {
    fn parse(uri: &str) -> Option<Named> {
        let rest = uri.strip_prefix(SCHEME)?;
        if uri == WINDOWS {
            return Some(Named::Windows);
        }
        if uri == TIMELINE {
            return Some(Named::Timeline);
        }
        if let Some(id) = rest.strip_prefix("screenshot/") {
            return digits(id).map(Named::Screenshot);
        }
        if let Some(app) = rest.strip_prefix("skill/") {
            let app = unescape(app)?;
            return (!app.trim().is_empty()).then_some(Named::Skill(app));
        }
        let window = rest.strip_prefix("window/")?;
        let (id, what) = window.split_once('/')?;
        let id = window_id(id)?;
        match what {
            "tree" => Some(Named::Tree(id)),
            "outline" => Some(Named::Outline(id)),
            _ => None,
        }
    }

    fn uri(&self) -> String {
        match self {
            Named::Windows => WINDOWS.to_string(),
            Named::Timeline => TIMELINE.to_string(),
            Named::Screenshot(id) => format!("{SCHEME}screenshot/{id}"),
            Named::Tree(w) => format!("{SCHEME}window/{w}/tree"),
            Named::Outline(w) => format!("{SCHEME}window/{w}/outline"),
            Named::Skill(app) => format!("{SCHEME}skill/{}", escape(app)),
        }
    }
}

/// A decimal number without sign or padding tricks.
fn digits(s: &str) -> Option<u64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// A window id as `list_windows` prints it (`0x1a00003`) or in decimal; never 0.
fn window_id(s: &str) -> Option<WindowId> {
    let n = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            u64::from_str_radix(hex, 16).ok()?
        }
        Some(_) => return None,
        None => digits(s)?,
    };
    (n != 0).then_some(WindowId(n))
}

/// `s` with every byte outside RFC 3986's unreserved set percent-encoded.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// `s` with percent-escapes decoded; `None` when an escape is broken or the text not UTF-8.
fn unescape(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The URI of screenshot `id`.
pub(crate) fn screenshot_uri(id: u64) -> String {
    Named::Screenshot(id).uri()
}

/// The URI of a window's tree.
pub(crate) fn tree_uri(window: WindowId) -> String {
    Named::Tree(window).uri()
}

/// The URI of a window's outline.
pub(crate) fn outline_uri(window: WindowId) -> String {
    Named::Outline(window).uri()
}

/// The URI of the skill with id `app`.
pub(crate) fn skill_uri(app: &str) -> String {
    Named::Skill(app.to_string()).uri()
}

fn audience() -> Annotations {
    Annotations::default().with_audience(vec![Role::User, Role::Assistant])
}

/// What a tool answers in place of a screenshot's image with `images = "link"`.
pub(crate) fn screenshot_link(shot: &Screenshot) -> Resource {
    let v = &shot.view;
    let mut annotations = audience().with_priority(0.9);
    annotations.last_modified = Some(deskpilot_engine::pick::utc_stamp(
        std::time::SystemTime::now(),
    ));
    Resource::new(screenshot_uri(shot.id), format!("screenshot-{}", shot.id))
        .with_title(format!("Screenshot {}", shot.id))
        .with_description(format!(
            "{}x{} image of the physical rectangle {} (scale {:.4})",
            v.width, v.height, v.capture, v.scale
        ))
        .with_mime_type(shot.image.format.mime_type())
        .with_size(shot.image.bytes.len() as u64)
        .with_annotations(annotations)
}

fn windows_resource() -> Resource {
    Resource::new(WINDOWS, "windows")
        .with_title("Windows")
        .with_description(
            "The windows on this desktop, topmost first: id, title, process, pid, class, rects, \
             state, and the URIs of each one's tree and outline.",
        )
        .with_mime_type("application/json")
        .with_annotations(audience().with_priority(0.8))
}

fn timeline_resource() -> Resource {
    Resource::new(TIMELINE, "memory-timeline")
        .with_title("Memory timeline")
        .with_description(format!(
            "What was done on this desktop, oldest first: the newest {TIMELINE_ENTRIES} \
             entries of memory's timeline (tool, window, target, route, effect)."
        ))
        .with_mime_type("application/json")
        .with_annotations(audience().with_priority(0.3))
}

fn skill_resource(skill: &deskpilot_skills::Skill) -> Resource {
    let markdown = skill.to_markdown();
    Resource::new(skill_uri(&skill.id), format!("skill-{}", skill.id))
        .with_title(format!("App skill: {}", skill.app))
        .with_description(if skill.summary.is_empty() {
            format!(
                "How to drive {} ({} skill).",
                skill.app,
                skill.source.as_str()
            )
        } else {
            format!("{} ({} skill)", skill.summary, skill.source.as_str())
        })
        .with_mime_type("text/markdown")
        .with_size(markdown.len() as u64)
        .with_annotations(audience().with_priority(0.5))
}

fn templates_list() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{SCHEME}screenshot/{{id}}"), "screenshot")
            .with_title("Screenshot by id")
            .with_description(
                "A screenshot a tool of this session showed (its screenshot_id), exactly as shown \
                 (image/jpeg or image/png), with its geometry as JSON: the physical rectangle, \
                 scale, monitor and window (physical = origin + image / scale). The newest 16 \
                 are kept.",
            )
            .with_annotations(audience().with_priority(0.9)),
        ResourceTemplate::new(format!("{SCHEME}window/{{window}}/tree"), "window-tree")
            .with_title("Window tree")
            .with_description(
                "A window's accessibility tree read now, one line per element as get_window_state \
                 shows it; its tokens (s<snapshot>:<index>) work with the element tools. {window} \
                 is an id from list_windows (0x… or decimal).",
            )
            .with_mime_type("text/plain")
            .with_annotations(audience().with_priority(0.7)),
        ResourceTemplate::new(
            format!("{SCHEME}window/{{window}}/outline"),
            "window-outline",
        )
        .with_title("Window outline")
        .with_description(
            "A window's controls, one line each: role, name, centre (pixels from the window's \
                 top-left corner) and token; read from its accessibility tree, or from OCR when it \
                 has none.",
        )
        .with_mime_type("text/plain")
        .with_annotations(audience().with_priority(0.7)),
        ResourceTemplate::new(format!("{SCHEME}skill/{{app}}"), "skill")
            .with_title("App skill")
            .with_description(
                "The recipe for driving an app (hotkeys, menus, pitfalls), Markdown with its front \
                 matter; {app} is the skill's name or any name it answers to.",
            )
            .with_mime_type("text/markdown")
            .with_annotations(audience().with_priority(0.5)),
    ]
}

/// `resources/list`.
pub(crate) async fn list<P: ProfileSpec>(
    server: &Server<P>,
) -> Result<ListResourcesResult, ErrorData> {
    watcher(server);
    let session = &server.session;
    let mut resources = vec![windows_resource()];
    if session.memory_on() {
        resources.push(timeline_resource());
    }
    resources.extend(session.skills().list().iter().map(skill_resource));
    Ok(ListResourcesResult::with_all_items(resources)
        .with_ttl_ms(0)
        .with_cache_scope(CacheScope::Private))
}

/// `resources/templates/list`.
pub(crate) async fn templates<P: ProfileSpec>(
    server: &Server<P>,
) -> Result<ListResourceTemplatesResult, ErrorData> {
    watcher(server);
    Ok(
        ListResourceTemplatesResult::with_all_items(templates_list())
            .with_ttl_ms(0)
            .with_cache_scope(CacheScope::Private),
    )
}

fn not_found(uri: &str, why: &str) -> ErrorData {
    ErrorData::resource_not_found(
        format!("no resource {uri}: {why}"),
        Some(json!({ "uri": uri })),
    )
}

/// An engine error while reading `uri`: what names nothing is "not found", the rest a fault.
fn read_error(uri: &str, e: &Error) -> ErrorData {
    match e.code() {
        ErrorCode::WindowNotFound
        | ErrorCode::UnknownScreenshot
        | ErrorCode::ForeignReference
        | ErrorCode::MemoryUnavailable => not_found(uri, &e.to_string()),
        code => ErrorData::internal_error(
            format!("reading {uri} failed: {}: {e}", code.as_str()),
            Some(json!({ "uri": uri, "code": code.as_str() })),
        ),
    }
}

/// `resources/read`: an unknown URI is `resource_not_found`.
pub(crate) async fn read<P: ProfileSpec>(
    server: &Server<P>,
    uri: &str,
) -> Result<ReadResourceResponse, ErrorData> {
    let watch = watcher(server);
    let Some(named) = Named::parse(uri) else {
        return Err(not_found(
            uri,
            "resources/list and resources/templates/list name those there are",
        ));
    };
    let session = server.session();
    let timeout = server.request_timeout();
    let fail = |e: Error| read_error(uri, &e);
    let (contents, ttl) = match &named {
        Named::Windows => {
            let text = super::render::blocking(timeout, "read the window list", move || {
                session.list_windows(&WindowFilter::default())
            })
            .await
            .map(|w| windows_json(&w))
            .map_err(fail)?;
            watch.saw(uri, fingerprint(&text));
            (vec![json_contents(uri, text)], 0)
        }
        Named::Timeline => {
            let text = super::render::blocking(timeout, "read the timeline", move || {
                session.memory_timeline(TIMELINE_ENTRIES, None)
            })
            .await
            .map(|t| timeline_json(&t))
            .map_err(fail)?;
            watch.saw(uri, fingerprint(&text));
            (vec![json_contents(uri, text)], 0)
        }
        Named::Screenshot(id) => {
            let id = *id;
            let shot = super::render::blocking(timeout, "read a screenshot", move || {
                session.kept_screenshot(id)
            })
            .await
            .map_err(fail)?;
            (screenshot_contents(uri, &shot), SCREENSHOT_TTL)
        }
        Named::Tree(window) => {
            let request = tree_request(*window);
            let snapshot = super::render::blocking(timeout, "read a window's tree", move || {
                session.window_state(&request)
            })
            .await
            .map_err(fail)?;
            watch.saw(uri, tree_fingerprint(&snapshot.elements));
            (vec![tree_contents(uri, &snapshot)], 0)
        }
        Named::Outline(window) => {
            let window = *window;
            let mode = match session.config().outline.mode {
                Some(OutlineMode::None) | None => OutlineMode::Summary,
                Some(mode) => mode,
            };
            let config = session.config().outline;
            let (info, outline) =
                super::render::blocking(timeout, "read a window's outline", move || {
                    let info = session.window(window)?;
                    let f = info.frame;
                    let view = deskpilot_engine::coords::ViewGeometry::new(f, f.width, f.height);
                    let outline = session.outline(window, &view, mode, &config)?;
                    Ok((info, outline))
                })
                .await
                .map_err(fail)?;
            (vec![outline_contents(uri, &info, outline.as_ref())], 0)
        }
        Named::Skill(app) => {
            let skill = server
                .session
                .skills()
                .get(app)
                .ok_or_else(|| not_found(uri, &format!("no app skill answers to \"{app}\"")))?;
            let meta = json!({
                "app": skill.app,
                "id": skill.id,
                "source": skill.source.as_str(),
                "matches": skill.matches,
                "truncated": skill.truncated,
            });
            let contents = ResourceContents::text(skill.to_markdown(), uri)
                .with_mime_type("text/markdown")
                .with_meta(meta_of(meta));
            (vec![contents], 0)
        }
    };
    Ok(ReadResourceResult::new(contents)
        .with_ttl_ms(ttl)
        .with_cache_scope(CacheScope::Private)
        .into())
}

/// Whether `uri` names a resource served here now (so that `resources/subscribe` may watch
/// it): the fixed ones, a screenshot this session keeps, any window's tree or outline (a
/// window that is gone reads as not found), a skill that exists.
pub(crate) fn serves<P: ProfileSpec>(server: &Server<P>, uri: &str) -> bool {
    let watch = watcher(server);
    let served = match Named::parse(uri) {
        None => false,
        Some(Named::Windows) | Some(Named::Tree(_)) | Some(Named::Outline(_)) => true,
        Some(Named::Timeline) => server.session.memory_on(),
        Some(Named::Screenshot(id)) => server.session.keeps_screenshot(id),
        Some(Named::Skill(app)) => server.session.skills().get(&app).is_some(),
    };
    if served {
        watch.note(uri);
    }
    served
}

/// Takes what `uri` holds now as the point its changes are measured from, before a
/// subscription is confirmed: a change a client makes right after subscribing is then told
/// (the watcher's first poll would otherwise take the changed content as its starting point).
pub(crate) async fn baseline<P: ProfileSpec>(server: &Server<P>, uri: &str) {
    let watch = watcher(server);
    let Some(named) = Named::parse(uri) else {
        return;
    };
    // A session of its own, as the watcher's: a tree read here moves no client's tokens.
    let session = Arc::new(Session::new(server.session.engine().clone()));
    let timeout = server.request_timeout();
    let now = match named {
        Named::Windows => super::render::blocking(timeout, "read the window list", move || {
            session.list_windows(&WindowFilter::default())
        })
        .await
        .ok()
        .map(|windows| fingerprint(&windows_json(&windows))),
        Named::Tree(window) | Named::Outline(window) => {
            let request = tree_request(window);
            match super::render::blocking(timeout, "read a window's tree", move || {
                session.window_state(&request)
            })
            .await
            {
                Ok(snapshot) => Some(tree_fingerprint(&snapshot.elements)),
                Err(e) if e.code() == ErrorCode::WindowNotFound => Some(0),
                Err(_) => None,
            }
        }
        Named::Timeline => super::render::blocking(timeout, "read the timeline", move || {
            session.memory_timeline(TIMELINE_ENTRIES, None)
        })
        .await
        .ok()
        .map(|read| fingerprint(&timeline_json(&read))),
        Named::Screenshot(_) | Named::Skill(_) => None,
    };
    if let Some(now) = now {
        watch.saw(uri, now);
    }
}

fn meta_of(value: Value) -> MetaObject {
    match value {
        Value::Object(map) => MetaObject(map),
        _ => MetaObject::default(),
    }
}

fn json_contents(uri: &str, text: String) -> ResourceContents {
    ResourceContents::text(text, uri).with_mime_type("application/json")
}

/// The window list as the resource holds it.
fn windows_json(windows: &[WindowInfo]) -> String {
    let listed: Vec<Value> = windows
        .iter()
        .map(|w| {
            let mut v = serde_json::to_value(w).unwrap_or(Value::Null);
            if let Value::Object(map) = &mut v {
                map.insert("tree".into(), tree_uri(w.id).into());
                map.insert("outline".into(), outline_uri(w.id).into());
            }
            v
        })
        .collect();
    json!({ "count": windows.len(), "windows": listed }).to_string()
}

fn timeline_json(read: &deskpilot_memory::TimelineRead) -> String {
    json!({
        "entries": read.entries,
        "skipped_lines": read.skipped_lines,
    })
    .to_string()
}

/// A screenshot's geometry, as its JSON text and `_meta.geometry` say it.
fn geometry(shot: &KeptShot) -> Value {
    let v = &shot.view;
    json!({
        "screenshot_id": shot.id,
        "mimeType": shot.format.mime_type(),
        "format": super::image::format_name(shot.format),
        "width": v.width,
        "height": v.height,
        "bytes": shot.bytes.len(),
        "capture": v.capture,
        "origin": { "x": v.capture.x, "y": v.capture.y },
        "scale": v.scale,
        "scale_y": v.scale_y,
        "mapping": format!(
            "physical = ({}, {}) + image / {:.4}",
            v.capture.x, v.capture.y, v.scale
        ),
        "monitor": shot.monitor,
        "window": shot.window.as_ref().map(|w| json!({
            "id": w.id,
            "title": w.title,
            "pid": w.pid,
            "process": w.process,
        })),
        "taken_at": deskpilot_engine::pick::utc_stamp(shot.taken_at),
    })
}

/// A screenshot's bytes (with its geometry in `_meta`), then the geometry as JSON text.
fn screenshot_contents(uri: &str, shot: &KeptShot) -> Vec<ResourceContents> {
    let geometry = geometry(shot);
    let blob = base64::engine::general_purpose::STANDARD.encode(&shot.bytes);
    vec![
        ResourceContents::blob(blob, uri)
            .with_mime_type(shot.format.mime_type())
            .with_meta(meta_of(json!({ "geometry": geometry }))),
        json_contents(uri, geometry.to_string()),
    ]
}

fn tree_request(window: WindowId) -> TreeRequest {
    TreeRequest {
        include_screenshot: false,
        ..TreeRequest::new(WindowRef::Id(window))
    }
}

fn window_words(w: &WindowInfo) -> String {
    format!(
        "window {} \"{}\" (pid {}, {})",
        w.id,
        w.title,
        w.pid.map_or("?".to_string(), |p| p.to_string()),
        w.process.as_deref().unwrap_or("?")
    )
}

fn tree_contents(uri: &str, s: &deskpilot_engine::Snapshot) -> ResourceContents {
    let mut text = format!(
        "Tree of {}: snapshot {}, {} of {} elements shown, from {}{}. Tokens s{}:<index> work with \
         the element tools while the window's structure is unchanged.\n",
        window_words(&s.window),
        s.id,
        s.shown,
        s.elements.len(),
        s.source,
        if s.complete { "" } else { " (incomplete)" },
        s.id,
    );
    text.push_str(&s.text);
    for n in &s.notes {
        text.push_str(&format!("\nNote: {n}"));
    }
    ResourceContents::text(text, uri).with_meta(meta_of(json!({
        "snapshot_id": s.id,
        "window": s.window.id,
        "source": s.source,
        "complete": s.complete,
        "elements": s.elements.len(),
        "shown": s.shown,
    })))
}

fn outline_contents(
    uri: &str,
    w: &WindowInfo,
    outline: Option<&deskpilot_engine::Outline>,
) -> ResourceContents {
    let f = w.frame;
    let Some(o) = outline else {
        return ResourceContents::text(format!("Outline of {}: nothing.", window_words(w)), uri);
    };
    let text = format!(
        "Outline of {} from {}: {} controls{}. @ (x, y) are pixels from the window's top-left \
         corner at ({}, {}): physical = ({} + x, {} + y); tokens work with the element tools.\n{}",
        window_words(w),
        o.source,
        o.items.len(),
        if o.omitted > 0 {
            format!(", {} more left out for the budget", o.omitted)
        } else {
            String::new()
        },
        f.x,
        f.y,
        f.x,
        f.y,
        o.text
    );
    ResourceContents::text(text, uri).with_meta(meta_of(json!({
        "window": w.id,
        "source": o.source,
        "origin": { "x": f.x, "y": f.y },
        "items": o.items.len(),
        "omitted": o.omitted,
    })))
}

fn fingerprint(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// What a tree's content is, apart from whose snapshot it is: each element's depth and line.
fn tree_fingerprint(elements: &[deskpilot_engine::Element]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for e in elements {
        e.depth.hash(&mut h);
        deskpilot_engine::tree_line(e).hash(&mut h);
    }
    h.finish()
}

/// The watcher of one hub: which URIs may be watched, and what each watched one held when it
/// was last seen.
struct Watch {
    hub: Weak<Hub>,
    /// URIs read or subscribed through this hub's servers, newest last.
    candidates: Mutex<Vec<String>>,
    /// The fingerprint of each watched URI's content when it was last seen.
    seen: Mutex<HashMap<String, u64>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Watch {
    /// `uri` may be watched from now on.
    fn note(&self, uri: &str) {
        let mut c = lock(&self.candidates);
        c.retain(|u| u != uri);
        c.push(uri.to_string());
        if c.len() > CANDIDATES {
            c.remove(0);
        }
    }

    /// A client just saw `uri` hold `fingerprint`: changes are measured from here.
    fn saw(&self, uri: &str, fingerprint: u64) {
        self.note(uri);
        lock(&self.seen).insert(uri.to_string(), fingerprint);
    }

    /// `uri` holds `fingerprint` now: true when that differs from what was seen before.
    fn changed(&self, uri: &str, fingerprint: Option<u64>) -> bool {
        let fingerprint = fingerprint.unwrap_or(0);
        lock(&self.seen)
            .insert(uri.to_string(), fingerprint)
            .is_some_and(|before| before != fingerprint)
    }
}

/// The watchers running, one per hub.
static WATCHES: Mutex<Vec<Arc<Watch>>> = Mutex::new(Vec::new());

/// The watcher of `server`'s hub, started on first use.
fn watcher<P: ProfileSpec>(server: &Server<P>) -> Arc<Watch> {
    let mut watches = lock(&WATCHES);
    watches.retain(|w| w.hub.strong_count() > 0);
    let hub = Arc::downgrade(&server.hub);
    if let Some(w) = watches.iter().find(|w| Weak::ptr_eq(&w.hub, &hub)) {
        return w.clone();
    }
    let watch = Arc::new(Watch {
        hub,
        candidates: Mutex::new(vec![WINDOWS.to_string(), TIMELINE.to_string()]),
        seen: Mutex::default(),
    });
    watches.push(watch.clone());
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(run(
                watch.clone(),
                server.session.engine().clone(),
                server.request_timeout(),
            ));
        }
        Err(_) => tracing::debug!("no runtime: resource changes are not watched"),
    }
    watch
}

/// When each kind of URI was last checked.
#[derive(Default)]
struct Due {
    windows: Option<Instant>,
    trees: Option<Instant>,
    timeline: Option<Instant>,
}

fn due(last: &mut Option<Instant>, every: Duration) -> bool {
    if last.is_some_and(|t| t.elapsed() < every) {
        return false;
    }
    *last = Some(Instant::now());
    true
}

/// Polls what clients of `watch`'s hub watch, while they watch it, until the hub is gone.
async fn run(watch: Arc<Watch>, engine: Arc<Engine>, timeout: Duration) {
    // A session of the watcher's own: its reads never move a client's snapshots or keys.
    let session = Arc::new(Session::new(engine));
    let mut last = Due::default();
    loop {
        tokio::time::sleep(TICK).await;
        let Some(hub) = watch.hub.upgrade() else {
            break;
        };
        let candidates = lock(&watch.candidates).clone();
        let watched: Vec<(String, Named)> = candidates
            .into_iter()
            .filter(|u| hub.watched(u))
            .filter_map(|u| Named::parse(&u).map(|n| (u, n)))
            .collect();
        lock(&watch.seen).retain(|u, _| watched.iter().any(|(w, _)| w == u));
        if watched.is_empty() {
            continue;
        }
        if watched.iter().any(|(_, n)| *n == Named::Windows)
            && due(&mut last.windows, WINDOWS_EVERY)
        {
            let s = session.clone();
            let listed = super::render::blocking(timeout, "watch the window list", move || {
                s.list_windows(&WindowFilter::default())
            })
            .await;
            if let Ok(windows) = listed
                && watch.changed(WINDOWS, Some(fingerprint(&windows_json(&windows))))
            {
                hub.resource_updated(WINDOWS);
            }
        }
        let mut windows: Vec<WindowId> = watched
            .iter()
            .filter_map(|(_, n)| match n {
                Named::Tree(w) | Named::Outline(w) => Some(*w),
                _ => None,
            })
            .collect();
        windows.sort_by_key(|w| w.0);
        windows.dedup();
        if !windows.is_empty() && due(&mut last.trees, TREES_EVERY) {
            for window in windows {
                let s = session.clone();
                let request = tree_request(window);
                let read = super::render::blocking(timeout, "watch a window's tree", move || {
                    s.window_state(&request)
                })
                .await;
                let now = match read {
                    Ok(snapshot) => Some(tree_fingerprint(&snapshot.elements)),
                    Err(e) if e.code() == ErrorCode::WindowNotFound => None,
                    // A read that failed for another reason says nothing about a change.
                    Err(_) => continue,
                };
                for uri in [tree_uri(window), outline_uri(window)] {
                    if watched.iter().any(|(u, _)| *u == uri) && watch.changed(&uri, now) {
                        hub.resource_updated(&uri);
                    }
                }
            }
        }
        if watched.iter().any(|(_, n)| *n == Named::Timeline)
            && due(&mut last.timeline, TIMELINE_EVERY)
        {
            let s = session.clone();
            let read = super::render::blocking(timeout, "watch the timeline", move || {
                s.memory_timeline(TIMELINE_ENTRIES, None)
            })
            .await;
            if let Ok(read) = read
                && watch.changed(TIMELINE, Some(fingerprint(&timeline_json(&read))))
            {
                hub.resource_updated(TIMELINE);
            }
        }
    }
    tracing::debug!("resource watcher ends with its endpoint");
}

#[cfg(test)]
mod tests {
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::{FakeWindow, element, tree};
    use deskpilot_engine::{CaptureTarget, EngineConfig, ScreenshotRequest};
    use deskpilot_types::Rect;
    use rmcp::model::{
        ReadResourceRequestParams, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    };
    use rmcp::service::{NotificationContext, RunningService};
    use rmcp::{ClientHandler, RoleClient, ServiceExt};

    use super::*;
    use crate::kit::ToolFilter;
    use crate::kit::server::ServerIdentity;
    use crate::profiles::deskpilot::DeskpilotServer;

    /// A client that remembers the `updated` notices it hears.
    #[derive(Clone, Default)]
    struct Listener {
        updated: Arc<Mutex<Vec<String>>>,
    }

    impl ClientHandler for Listener {
        async fn on_resource_updated(
            &self,
            params: ResourceUpdatedNotificationParam,
            _context: NotificationContext<RoleClient>,
        ) {
            self.updated.lock().unwrap().push(params.uri);
        }
    }

    fn desktop() -> (FakeDesktop, WindowId) {
        let fake = FakeDesktop::new(400, 300);
        let w = fake.add_window(FakeWindow {
            pid: 7,
            ..FakeWindow::new("Editor", Rect::new(20, 10, 300, 200))
        });
        let button = element(deskpilot_types::Role::Button, "Apply")
            .actions(&["click"])
            .bounds(Rect::new(40, 30, 60, 20))
            .handle("apply");
        fake.set_tree(w, tree([button]));
        (fake, w)
    }

    /// A `deskpilot` client over `engine`, and its server's session.
    async fn connect(
        engine: Arc<Engine>,
        listener: Listener,
    ) -> (RunningService<RoleClient, Listener>, Arc<Session>) {
        let identity = ServerIdentity {
            name: "deskpilot".into(),
            version: "test".into(),
        };
        let server = DeskpilotServer::new(engine, identity, &ToolFilter::default());
        let session = server.client_session().clone();
        let (server_end, client_end) = tokio::io::duplex(1 << 22);
        tokio::spawn(async move {
            if let Ok(service) = server.serve(server_end).await {
                let _ = service.waiting().await;
            }
        });
        (
            listener.serve(client_end).await.expect("handshake"),
            session,
        )
    }

    async fn read(
        client: &RunningService<RoleClient, Listener>,
        uri: &str,
    ) -> Result<ReadResourceResult, rmcp::ServiceError> {
        client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
    }

    fn text_of(r: &ReadResourceResult) -> &str {
        match &r.contents[0] {
            ResourceContents::TextResourceContents { text, .. } => text,
            other => panic!("not text: {other:?}"),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lists_templates_and_reads_what_is_on_the_desktop() {
        let (fake, w) = desktop();
        let engine = Arc::new(Engine::new(fake.desktop(), EngineConfig::default()));
        let (client, session) = connect(engine.clone(), Listener::default()).await;
        let (other, _) = connect(engine, Listener::default()).await;

        let listed = client.list_resources(None).await.unwrap();
        assert_eq!(listed.resources[0].uri, WINDOWS);
        assert_eq!(
            (listed.ttl_ms, listed.cache_scope),
            (Some(0), Some(CacheScope::Private))
        );
        for r in &listed.resources {
            assert!(r.mime_type.is_some() && r.title.is_some(), "{r:?}");
            assert!(Named::parse(&r.uri).is_some(), "{r:?}");
        }
        let templates = client.list_resource_templates(None).await.unwrap();
        let uris: Vec<&str> = templates
            .resource_templates
            .iter()
            .map(|t| t.uri_template.as_str())
            .collect();
        assert_eq!(
            uris,
            [
                "deskpilot://screenshot/{id}",
                "deskpilot://window/{window}/tree",
                "deskpilot://window/{window}/outline",
                "deskpilot://skill/{app}"
            ]
        );

        let windows = read(&client, WINDOWS).await.unwrap();
        let listing: Value = serde_json::from_str(text_of(&windows)).unwrap();
        assert_eq!(listing["windows"][0]["title"], "Editor");
        assert_eq!(listing["windows"][0]["tree"], tree_uri(w));

        let t = read(&client, &tree_uri(w)).await.unwrap();
        assert!(text_of(&t).contains("Button \"Apply\""), "{}", text_of(&t));
        let snapshot = t.contents[0].clone();
        let ResourceContents::TextResourceContents {
            meta: Some(meta), ..
        } = snapshot
        else {
            panic!("the tree's meta")
        };
        assert!(meta.0["snapshot_id"].as_u64().is_some());
        let o = read(&client, &outline_uri(w)).await.unwrap();
        // The button's centre (70, 40) is (50, 30) from the window's corner at (20, 10).
        assert!(
            text_of(&o).contains("Button \"Apply\" @ (50, 30)"),
            "{}",
            text_of(&o)
        );

        // A screenshot this session was shown reads back as it was, to this session only.
        let shot = session
            .screenshot(&ScreenshotRequest {
                target: CaptureTarget::Window(w),
                max_width: None,
                format: None,
            })
            .unwrap();
        session.keep_screenshot(&shot);
        let uri = screenshot_uri(shot.id);
        let r = read(&client, &uri).await.unwrap();
        assert_eq!(r.ttl_ms, Some(SCREENSHOT_TTL));
        let ResourceContents::BlobResourceContents {
            blob,
            mime_type,
            meta,
            ..
        } = &r.contents[0]
        else {
            panic!("a blob first")
        };
        assert_eq!(mime_type.as_deref(), Some("image/jpeg"));
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(blob)
            .unwrap();
        assert_eq!(bytes, shot.image.bytes);
        let geometry = &meta.as_ref().unwrap().0["geometry"];
        assert_eq!(geometry["capture"]["x"], 20);
        assert_eq!(geometry["monitor"]["index"], 0);
        let text: Value = serde_json::from_str(match &r.contents[1] {
            ResourceContents::TextResourceContents { text, .. } => text,
            other => panic!("{other:?}"),
        })
        .unwrap();
        assert_eq!(&text, geometry);
        let foreign = read(&other, &uri).await.unwrap_err();
        assert!(
            matches!(&foreign, rmcp::ServiceError::McpError(e) if e.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND),
            "{foreign:?}"
        );

        for unknown in [
            "deskpilot://nothing",
            "deskpilot://screenshot/999999",
            "deskpilot://skill/nosuchapp",
        ] {
            let e = read(&client, unknown).await.unwrap_err();
            assert!(
                matches!(&e, rmcp::ServiceError::McpError(e) if e.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND),
                "{unknown}: {e:?}"
            );
        }
        let gone = read(&client, "deskpilot://window/0x7777/tree")
            .await
            .unwrap_err();
        assert!(
            matches!(&gone, rmcp::ServiceError::McpError(e) if e.code == rmcp::model::ErrorCode::RESOURCE_NOT_FOUND),
            "{gone:?}"
        );
        client.cancel().await.unwrap();
        other.cancel().await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_listen_stream_of_2026_07_28_hears_the_window_list_change() {
        use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
        use rmcp::service::{ClientLifecycleMode, ClientServiceExt};

        let (fake, _) = desktop();
        let engine = Arc::new(Engine::new(fake.desktop(), EngineConfig::default()));
        let identity = ServerIdentity {
            name: "deskpilot".into(),
            version: "test".into(),
        };
        let server = DeskpilotServer::new(engine, identity, &ToolFilter::default());
        let (server_end, client_end) = tokio::io::duplex(1 << 22);
        tokio::spawn(async move {
            if let Ok(service) = server.serve(server_end).await {
                let _ = service.waiting().await;
            }
        });
        let client = ()
            .serve_with_lifecycle(
                client_end,
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("discover");
        let mut stream = client
            .listen(
                SubscriptionFilter::builder()
                    .resource_subscription(WINDOWS)
                    .build(),
            )
            .await
            .unwrap();
        client
            .read_resource(ReadResourceRequestParams::new(WINDOWS))
            .await
            .unwrap();
        fake.add_window(FakeWindow::new("Second", Rect::new(0, 0, 50, 50)));
        let heard = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                match stream.next().await {
                    Ok(Some(ServerNotification::ResourceUpdatedNotification(n))) => {
                        return n.params.uri;
                    }
                    Ok(Some(_)) => continue,
                    other => panic!("the stream ended: {other:?}"),
                }
            }
        })
        .await
        .expect("an updated notice within 10 s");
        assert_eq!(heard, WINDOWS);
        client.cancel().await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[expect(
        deprecated,
        reason = "resources/subscribe is the 2025-11-25 way, served here"
    )]
    async fn a_watched_window_list_and_tree_tell_their_changes() {
        let (fake, w) = desktop();
        let engine = Arc::new(Engine::new(fake.desktop(), EngineConfig::default()));
        let listener = Listener::default();
        let (client, _) = connect(engine, listener.clone()).await;
        for uri in [WINDOWS.to_string(), tree_uri(w)] {
            client
                .subscribe(SubscribeRequestParams::new(uri.clone()))
                .await
                .unwrap();
            read(&client, &uri).await.unwrap();
        }
        let e = client
            .subscribe(SubscribeRequestParams::new("deskpilot://nothing"))
            .await
            .unwrap_err();
        assert!(format!("{e:?}").contains("no resource"), "{e:?}");

        let heard = |uri: String| {
            let updated = listener.updated.clone();
            async move {
                let deadline = Instant::now() + Duration::from_secs(10);
                while Instant::now() < deadline {
                    if updated.lock().unwrap().contains(&uri) {
                        return true;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                false
            }
        };
        fake.add_window(FakeWindow::new("Second", Rect::new(0, 0, 50, 50)));
        assert!(
            heard(WINDOWS.to_string()).await,
            "no update of the window list"
        );
        assert!(
            !listener.updated.lock().unwrap().contains(&tree_uri(w)),
            "the tree did not change"
        );
        let cancel = element(deskpilot_types::Role::Button, "Cancel")
            .actions(&["click"])
            .bounds(Rect::new(110, 30, 60, 20))
            .handle("cancel");
        let apply = element(deskpilot_types::Role::Button, "Apply")
            .actions(&["click"])
            .bounds(Rect::new(40, 30, 60, 20))
            .handle("apply");
        fake.set_tree(w, tree([apply, cancel]));
        assert!(heard(tree_uri(w)).await, "no update of the tree");
        client.cancel().await.unwrap();
    }

    #[test]
    fn uris_parse_back_to_what_made_them() {
        for named in [
            Named::Windows,
            Named::Timeline,
            Named::Screenshot(42),
            Named::Tree(WindowId(0x1a00003)),
            Named::Outline(WindowId(7)),
            Named::Skill("mousepad".into()),
            Named::Skill("记事本 x/y".into()),
        ] {
            assert_eq!(Named::parse(&named.uri()), Some(named.clone()), "{named:?}");
        }
        assert_eq!(
            Named::Tree(WindowId(0x1a00003)).uri(),
            "deskpilot://window/0x1a00003/tree"
        );
        assert_eq!(
            Named::parse("deskpilot://window/27262979/outline"),
            Some(Named::Outline(WindowId(27262979)))
        );
        assert_eq!(
            skill_uri("记事本"),
            "deskpilot://skill/%E8%AE%B0%E4%BA%8B%E6%9C%AC"
        );
        for bad in [
            "deskpilot://nothing",
            "deskpilot://screenshot/",
            "deskpilot://screenshot/-1",
            "deskpilot://screenshot/1x",
            "deskpilot://window/0/tree",
            "deskpilot://window/0x/tree",
            "deskpilot://window/12/leaves",
            "deskpilot://window/12",
            "deskpilot://skill/",
            "deskpilot://skill/%E8",
            "file:///etc/passwd",
            "deskpilot://windows/",
        ] {
            assert_eq!(Named::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_change_is_told_only_against_what_was_seen() {
        let watch = Watch {
            hub: Weak::new(),
            candidates: Mutex::default(),
            seen: Mutex::default(),
        };
        assert!(
            !watch.changed(WINDOWS, Some(1)),
            "the first look is the baseline"
        );
        assert!(!watch.changed(WINDOWS, Some(1)));
        assert!(watch.changed(WINDOWS, Some(2)));
        watch.saw(WINDOWS, 3);
        assert!(
            !watch.changed(WINDOWS, Some(3)),
            "a client read it as it is"
        );
        assert!(
            watch.changed(WINDOWS, None),
            "a window that went away changed"
        );
        for i in 0..CANDIDATES + 5 {
            watch.note(&format!("deskpilot://screenshot/{i}"));
        }
        let c = lock(&watch.candidates);
        assert_eq!(c.len(), CANDIDATES);
        assert_eq!(
            c.last().map(String::as_str),
            Some("deskpilot://screenshot/68")
        );
    }
}
