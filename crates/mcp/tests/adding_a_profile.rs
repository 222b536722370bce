//! The tutorial `docs/profiles/adding.md` done for real, so the tutorial cannot drift from the
//! code: this file adds a tiny profile (`example`, one tool over the engine) with the types the
//! tutorial names, serves it to the in-process client the other tests use, lists its tools and
//! calls one on the fake desktop. Every Rust block of the tutorial is a verbatim part of this
//! file, and every kit item the tutorial names for profiles inside the crate is looked up in
//! the crate's sources.
//!
//! The map of the repository, `ARCHITECTURE.md`, is checked here too: its size and line rules,
//! and that every `crates/...` path it names exists.

mod common;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use deskpilot_backend::FakeDesktop;
use deskpilot_backend::fake::FakeWindow;
use deskpilot_engine::{Engine, EngineConfig, Route, Screenshot, WindowFilter};
use deskpilot_mcp::{Parameters, ProfileSpec, Server, ToolFilter, Wording};
use deskpilot_types::{ErrorCode, Rect};
use rmcp::ServiceExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::tool;
use serde::Deserialize;
use serde_json::json;

// tutorial: spec
/// The `example` profile: one tool of its own, `count_windows`, in this profile's words.
#[derive(Debug)]
pub struct Example;

/// The MCP server of the `example` profile: one per connection, over its own session.
pub type ExampleServer = Server<Example>;

impl ProfileSpec for Example {
    const NAME: &'static str = "example";
    const INSTRUCTIONS: &'static str = "count_windows counts this desktop's windows.";
    const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    const SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(30);

    fn wording() -> &'static dyn Wording {
        &WORDING
    }

    fn router() -> ToolRouter<ExampleServer> {
        ToolRouter::new().with_route((count_windows_tool_attr(), count_windows))
    }
}
// end

// tutorial: tool
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountArgs {
    /// Substring of title or process ("mousepad").
    #[serde(default)]
    pub filter: String,
}

/// How many top-level windows match the filter.
#[tool(
    name = "count_windows",
    annotations(
        title = "Count windows",
        read_only_hint = true,
        open_world_hint = false
    )
)]
fn count_windows(
    server: &ExampleServer,
    Parameters(a): Parameters<CountArgs>,
) -> Pin<Box<dyn Future<Output = CallToolResult> + Send + '_>> {
    let session = server.client_session().clone();
    Box::pin(async move {
        let filter = WindowFilter { text: a.filter };
        let listed = tokio::task::spawn_blocking(move || session.list_windows(&filter)).await;
        match listed {
            Ok(Ok(w)) => {
                CallToolResult::success(vec![ContentBlock::text(format!("{} windows", w.len()))])
            }
            Ok(Err(e)) => error(e.code(), &e.to_string()),
            Err(gone) => error(ErrorCode::Internal, &gone.to_string()),
        }
    })
}
// end

// tutorial: wording
#[derive(Debug)]
pub struct ExampleWording;

pub static WORDING: ExampleWording = ExampleWording;

impl Wording for ExampleWording {
    fn hint(&self, code: ErrorCode) -> &'static str {
        match code {
            ErrorCode::NoDisplay => {
                "Start a desktop (deskpilot desktop) and call count_windows again."
            }
            _ => "Read the message; retry once, then report it.",
        }
    }

    fn unverifiable(&self, _route: Route) -> &'static str {
        "nothing checked the effect"
    }

    fn image(&self, kind: &str, shot: &Screenshot, what: &str) -> CallToolResult {
        // This profile returns no screenshots; one that does renders the image here.
        CallToolResult::success(vec![ContentBlock::text(format!(
            "{kind} {} of {what}",
            shot.id
        ))])
    }
}

/// An engine error in this profile's words: its spelling of the code, the message, the hint.
fn error(code: ErrorCode, message: &str) -> CallToolResult {
    let w = Example::wording();
    let text = format!(
        "{}: {message}\nHint: {}",
        w.code_name(w.code(code)),
        w.hint(code)
    );
    CallToolResult::error(vec![ContentBlock::text(text)])
}
// end

/// A client of the `example` profile over a new engine on `desktop`, served the way
/// `build::<P>` in `profiles/mod.rs` serves every row of the table.
async fn connect(desktop: deskpilot_backend::Desktop) -> common::Client {
    let engine = Arc::new(Engine::new(desktop, EngineConfig::default()));
    // tutorial: serve
    let server = ExampleServer::new(engine, common::identity(), &ToolFilter::default());
    assert_eq!(server.tool_names(), ["count_windows"]);
    let service = server.into_dyn();
    // end
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        if let Ok(running) = service.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    ().serve(client_end).await.expect("handshake")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_added_as_the_tutorial_says_lists_and_answers_its_tool() {
    let fake = FakeDesktop::new(400, 300);
    fake.add_window(FakeWindow::new("Mousepad", Rect::new(0, 0, 200, 150)));
    fake.add_window(FakeWindow::new("Terminal", Rect::new(200, 0, 200, 150)));
    let client = connect(fake.desktop()).await;

    let info = client.peer_info().expect("initialized");
    assert_eq!(
        info.instructions.as_deref(),
        Some(Example::INSTRUCTIONS),
        "the spec's instructions are the handshake's"
    );
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["count_windows"]);
    let count = &tools[0];
    assert_eq!(
        count.description.as_deref(),
        Some("How many top-level windows match the filter.")
    );
    assert_eq!(
        count.annotations.as_ref().and_then(|a| a.read_only_hint),
        Some(true)
    );
    assert!(
        count.input_schema["properties"]["filter"].is_object(),
        "{:?}",
        count.input_schema
    );

    let all = common::call(&client, "count_windows", json!({})).await;
    assert_eq!(common::text(&all), "2 windows");
    let some = common::call(&client, "count_windows", json!({"filter": "mouse"})).await;
    assert_eq!(common::text(&some), "1 windows");

    // The kit's argument errors name the field, in every profile.
    let bad = common::call(&client, "count_windows", json!({"filtre": "x"})).await;
    assert_eq!(bad.is_error, Some(true));
    assert!(
        common::text(&bad).contains("filtre"),
        "{}",
        common::text(&bad)
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_engine_error_is_worded_by_the_profile() {
    let desktop = deskpilot_backend::Desktop::unreachable("test", "no display here".into());
    let client = connect(desktop).await;
    let r = common::call(&client, "count_windows", json!({})).await;
    assert_eq!(r.is_error, Some(true));
    let text = common::text(&r);
    assert!(text.starts_with("NO_DISPLAY: "), "{text}");
    assert!(
        text.ends_with("Hint: Start a desktop (deskpilot desktop) and call count_windows again."),
        "{text}"
    );
    client.cancel().await.ok();
}

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read(relative: &str) -> String {
    let path = root().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The Rust blocks of a Markdown text.
fn rust_blocks(markdown: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_start()) {
            (None, "```rust") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

/// The parts of this file marked `// tutorial: <name>` … `// end`, by name.
fn marked_parts(source: &str) -> Vec<(String, String)> {
    let mut parts = Vec::new();
    let mut current: Option<(String, String, usize)> = None;
    for line in source.lines() {
        let trimmed = line.trim_start();
        if let Some(name) = trimmed.strip_prefix("// tutorial: ") {
            let indent = line.len() - trimmed.len();
            current = Some((name.to_string(), String::new(), indent));
        } else if trimmed == "// end" {
            if let Some((name, text, _)) = current.take() {
                parts.push((name, text));
            }
        } else if let Some((_, text, indent)) = &mut current {
            text.push_str(line.get(*indent..).unwrap_or(line.trim_start()));
            text.push('\n');
        }
    }
    parts
}

/// Every Rust block of the tutorial is one of this file's marked parts, word for word, and
/// every marked part is in the tutorial: what the tutorial shows is what this test compiles.
#[test]
fn the_tutorial_quotes_this_test_word_for_word() {
    let tutorial = read("docs/profiles/adding.md");
    let source = read("crates/mcp/tests/adding_a_profile.rs");
    let blocks = rust_blocks(&tutorial);
    let parts = marked_parts(&source);
    assert_eq!(parts.len(), 4, "{parts:?}");
    for (name, part) in &parts {
        assert!(
            blocks.contains(part),
            "docs/profiles/adding.md lacks the part `{name}` of this test, word for word:\n{part}"
        );
    }
    for block in &blocks {
        assert!(
            parts.iter().any(|(_, p)| p == block),
            "a Rust block of docs/profiles/adding.md is not in this test:\n{block}"
        );
    }
}

/// What the tutorial tells a profile inside the crate to use, with the file that defines it:
/// the tutorial names each, and each is still there.
const INSIDE_THE_CRATE: &[(&str, &str)] = &[
    ("crates/mcp/src/kit/server.rs", "pub trait ProfileSpec"),
    (
        "crates/mcp/src/kit/server.rs",
        "pub(crate) fn session(&self)",
    ),
    (
        "crates/mcp/src/kit/server.rs",
        "pub(crate) fn request_timeout(&self)",
    ),
    ("crates/mcp/src/kit/server.rs", "pub(crate) fn describe<S>"),
    (
        "crates/mcp/src/kit/render.rs",
        "pub(crate) async fn blocking",
    ),
    ("crates/mcp/src/kit/render.rs", "pub(crate) fn error("),
    ("crates/mcp/src/kit/report.rs", "pub(crate) async fn act"),
    (
        "crates/mcp/src/kit/skills.rs",
        "pub(crate) fn tool<P: ProfileSpec>",
    ),
    (
        "crates/mcp/src/kit/context.rs",
        "pub(crate) fn tools<P: ProfileSpec>",
    ),
    (
        "crates/mcp/src/kit/shell.rs",
        "pub(crate) fn tools<P: ProfileSpec>",
    ),
    ("crates/mcp/src/profiles/mod.rs", "pub static PROFILES"),
    ("crates/mcp/src/profiles/mod.rs", "fn build<P: ProfileSpec>"),
    (
        "crates/mcp/src/profiles/mod.rs",
        "fn tools_list_matches_the_checked_in_snapshot",
    ),
    ("crates/mcp/src/profiles/mod.rs", "has no snapshot test"),
    (
        "crates/mcp/src/profiles/mod.rs",
        "fn no_profile_imports_another",
    ),
    (
        "crates/mcp/src/profiles/mod.rs",
        "a new profile? extend this list",
    ),
    ("crates/mcp/src/profiles/mod.rs", "DESKPILOT_BLESS"),
    ("crates/mcp/src/lib.rs", "pub use profiles::dsh::DshServer"),
    ("crates/engine/src/limits.rs", "pub fn words"),
];

#[test]
fn what_the_tutorial_names_inside_the_crate_exists() {
    let tutorial = read("docs/profiles/adding.md");
    for (file, needle) in INSIDE_THE_CRATE {
        assert!(
            read(file).contains(needle),
            "{file} no longer has `{needle}`: update docs/profiles/adding.md and this list"
        );
    }
    for name in [
        "ProfileSpec",
        "Server::<P>::new",
        "self.session()",
        "render::blocking",
        "self.request_timeout()",
        "render::error",
        "kit::report::act",
        "kit::skills::tool",
        "kit::context::tools",
        "kit::shell::tools",
        "PROFILES",
        "build::<",
        "tools_list_matches_the_checked_in_snapshot",
        "no_profile_imports_another",
        "DESKPILOT_BLESS=1",
        "Limit::words",
    ] {
        assert!(
            tutorial.contains(name),
            "docs/profiles/adding.md no longer names `{name}`"
        );
    }
}

/// `crates/...` paths in `text`: each a run of path characters after a backtick, a bracket or a
/// space, trimmed of trailing punctuation.
fn crate_paths(text: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (i, _) in text.match_indices("crates/") {
        let before = text[..i].chars().next_back();
        if !matches!(before, None | Some('`' | '(' | ' ' | '[')) {
            continue;
        }
        let rest = &text[i..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || "/_.-".contains(c)))
            .unwrap_or(rest.len());
        let path = rest[..end].trim_end_matches(['.', '-']);
        // A glob or a placeholder (`crates/*/src`, `profiles/<name>`) names no one path.
        if rest[end..].starts_with(['*', '<', '{']) {
            continue;
        }
        paths.push(path.to_string());
    }
    paths
}

/// `ARCHITECTURE.md` is a map: at most 450 lines, none over 200 characters, and every
/// `crates/...` path it names is in the repository.
#[test]
fn the_architecture_map_is_short_and_names_real_paths() {
    let map = read("ARCHITECTURE.md");
    let lines = map.lines().count();
    assert!(
        lines <= 450,
        "ARCHITECTURE.md has {lines} lines; at most 450"
    );
    for (n, line) in map.lines().enumerate() {
        let chars = line.chars().count();
        assert!(
            chars <= 200,
            "ARCHITECTURE.md:{}: {chars} characters; at most 200",
            n + 1
        );
    }
    let paths = crate_paths(&map);
    assert!(paths.len() > 20, "{paths:?}");
    let missing: Vec<&String> = paths.iter().filter(|p| !root().join(p).exists()).collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md names paths that do not exist: {missing:?}"
    );
    let guide = read("docs/profiles/adding.md");
    let missing: Vec<String> = crate_paths(&guide)
        .into_iter()
        .filter(|p| !p.contains("/example") && !root().join(p).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "docs/profiles/adding.md names paths that do not exist: {missing:?}"
    );
}

#[test]
fn paths_are_read_out_of_prose() {
    let text = "`crates/engine/src/coords.rs`, (crates/mcp/tests/common) and crates/x11. \
                Not x/crates/y, nor `crates/*/src`.";
    assert_eq!(
        crate_paths(text),
        [
            "crates/engine/src/coords.rs",
            "crates/mcp/tests/common",
            "crates/x11"
        ]
    );
}
