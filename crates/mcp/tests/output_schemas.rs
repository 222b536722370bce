//! Structured output's contract, checked on every profile over an in-process MCP client on a fake
//! desktop: every tool is called with valid arguments (and again in dry run, and with none), and
//! each answer's `structuredContent` is validated with a JSON Schema 2020-12 validator against
//! the `outputSchema` the tool lists — error answers (`isError: true`) too, since the MCP
//! revisions ask every structured result of a tool with an output schema to conform.
//!
//! It fails when a tool answers with `structuredContent` and lists no `outputSchema`; when an
//! answer that worked has no `structuredContent` though the tool lists one (the TypeScript and
//! Python SDK clients refuse it); when an answer has a top-level key its schema does not name
//! (the schemas are open on the wire so that a client never drops a good answer; this test holds
//! them complete); and when a tool never answered without an error, so that every schema is
//! checked against the tool's real answer, not only its errors.
//!
//! Also: every tool name is 1–64 characters of `[A-Za-z0-9_.-]`. The browser tools run against a
//! headless Chromium when one is installed; without one they are said to be skipped and their
//! error answers are still checked.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::Client;
use deskpilot_backend::FakeDesktop;
use deskpilot_backend::fake::{FakeWindow, element, tree};
use deskpilot_types::{Rect, Role, WindowId};
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use serde_json::{Value, json};

/// Keys any tool's answer may carry beside its own: a failure (`error`, `diagnosis`, `effect`)
/// and a dry run (`dry_run`, `would`, `effect`), rendered the same way by the kit for every tool.
const ANY_TOOL: &[&str] = &["error", "diagnosis", "effect", "dry_run", "would"];

/// How long one call may take.
const DEADLINE: Duration = Duration::from_secs(60);

/// Calls of one tool: its name and arguments, in order.
type Cases = Vec<(&'static str, Value)>;

/// The page the browser tools work on: a button, a text box and a select.
const PAGE: &str = "data:text/html,<title>T</title><button onclick=\"document.title='clicked'\">Go</button><input id=q aria-label=Query><select aria-label=Pick><option>a</option><option>b</option></select><input type=password aria-label=Pin>";

/// A window "Editor" (a button "Save" and an editable "Name") and a window "Terminal".
fn desktop() -> (FakeDesktop, WindowId) {
    let fake = FakeDesktop::new(1280, 800);
    let w = fake.add_window(FakeWindow {
        pid: 7,
        process: "editor".into(),
        ..FakeWindow::new("Editor", Rect::new(0, 0, 640, 480))
    });
    fake.set_tree(
        w,
        tree([
            element(Role::Window, "Editor").bounds(Rect::new(0, 0, 640, 480)),
            element(Role::Button, "Save")
                .child_of(0, 1)
                .actions(&["click"])
                .bounds(Rect::new(20, 50, 60, 20)),
            element(Role::Edit, "Name")
                .child_of(0, 1)
                .value("Ada")
                .actions(&["focus"])
                .states(|s| {
                    s.editable = true;
                    s.focusable = true;
                })
                .bounds(Rect::new(20, 80, 200, 20)),
            element(Role::Edit, "Password")
                .child_of(0, 1)
                .password("")
                .bounds(Rect::new(20, 110, 200, 20)),
        ]),
    );
    fake.add_window(FakeWindow::new("Terminal", Rect::new(700, 0, 400, 300)));
    (fake, w)
}

/// The browser tools of the `deskpilot` profile, in an order that works: launch, read, act,
/// close.
fn deskpilot_browser() -> Cases {
    vec![
        ("browser_launch", json!({ "headless": true, "url": PAGE })),
        ("browser_tabs", json!({})),
        ("browser_snapshot", json!({})),
        ("browser_snapshot", json!({ "query": "Go", "max_lines": 3 })),
        ("browser_click", json!({ "ref": "e1" })),
        ("browser_click", json!({ "ref": "e1", "snapshot": "diff" })),
        ("browser_click", json!({ "ref": "e1", "hover": true })),
        ("browser_type", json!({ "ref": "e2", "text": "hello" })),
        (
            "browser_type",
            json!({ "ref": "e2", "text": "x", "snapshot": true }),
        ),
        (
            "browser_fill",
            json!({ "fields": [{ "ref": "e2", "value": "abc" }, { "ref": "e3", "value": "b" }] }),
        ),
        ("browser_press_key", json!({ "keys": "Tab" })),
        ("browser_eval", json!({ "expression": "document.title" })),
        (
            "browser_eval",
            json!({ "expression": "({ a: 1, b: [2] })" }),
        ),
        ("browser_screenshot", json!({})),
        (
            "browser_screenshot",
            json!({ "ref": "e1", "format": "png" }),
        ),
        ("browser_log", json!({})),
        ("browser_log", json!({ "kind": "network" })),
        ("browser_log", json!({ "kind": "network", "request": 1 })),
        (
            "browser_wait_for",
            json!({ "text": "Go", "timeout_ms": 5000 }),
        ),
        (
            "browser_wait_for",
            json!({ "selector": "#q", "timeout_ms": 5000 }),
        ),
        ("browser_emulate", json!({ "width": 800, "height": 600 })),
        ("browser_emulate", json!({ "color_scheme": "dark" })),
        // A dialog to answer.
        (
            "browser_eval",
            json!({ "expression": "setTimeout(() => confirm('Sure?'), 0); 1" }),
        ),
        ("browser_dialog", json!({ "accept": true })),
        ("browser_navigate", json!({ "url": PAGE })),
        ("browser_navigate", json!({ "go": "reload" })),
        (
            "browser_tabs",
            json!({ "action": "new", "url": "about:blank" }),
        ),
        ("browser_tabs", json!({ "action": "close" })),
        ("browser_attach", json!({ "port": "$PORT" })),
        ("browser_close", json!({})),
    ]
}

/// Every other tool of the `deskpilot` profile, each with arguments that work on [`desktop`]
/// (`$WIN` is the Editor's id); the window is closed last.
fn deskpilot() -> Cases {
    vec![
        ("status", json!({})),
        ("list_apps", json!({})),
        ("list_windows", json!({})),
        ("get_window_state", json!({ "window_id": "$WIN" })),
        (
            "get_window_state",
            json!({ "window_id": "$WIN", "include_screenshot": true, "query": "Save" }),
        ),
        ("find_elements", json!({ "name_contains": "Save" })),
        (
            "find_elements",
            json!({ "name_contains": "Save", "include_screenshot": true }),
        ),
        ("get_element_text", json!({ "element": "s1:2" })),
        ("screenshot", json!({})),
        (
            "screenshot",
            json!({ "window_id": "$WIN", "grid": true, "summary": "tree" }),
        ),
        ("screenshot", json!({ "compare": true })),
        (
            "zoom",
            json!({ "x": 10, "y": 10, "width": 100, "height": 80 }),
        ),
        (
            "screenshot",
            json!({ "region": { "x": 0, "y": 0, "width": 10, "height": 10 }, "mark": { "x": 2, "y": 2 } }),
        ),
        ("perceive", json!({})),
        ("perceive", json!({ "include_screenshot": true })),
        ("ocr", json!({})),
        ("click", json!({ "x": 30, "y": 60 })),
        (
            "click",
            json!({ "x": 30, "y": 60, "verify": true, "observe": true }),
        ),
        ("click", json!({ "element": "s1:1" })),
        ("double_click", json!({ "x": 30, "y": 60 })),
        ("right_click", json!({ "x": 30, "y": 60 })),
        ("move_cursor", json!({ "x": 30, "y": 60 })),
        ("scroll", json!({ "x": 30, "y": 60, "dy": 2 })),
        (
            "drag",
            json!({ "from_x": 30, "from_y": 60, "to_x": 100, "to_y": 100 }),
        ),
        ("type_text", json!({ "text": "hi" })),
        (
            "type_secret",
            json!({ "name": "SCHEMA_PASS", "element": "s1:3" }),
        ),
        (
            "type_secret",
            json!({ "name": "SCHEMA_PASS", "x": 30, "y": 115 }),
        ),
        ("press_key", json!({ "keys": "ctrl+a", "verify": true })),
        ("set_value", json!({ "element": "s1:2", "value": "Bob" })),
        (
            "perform_action",
            json!({ "element": "s1:1", "action": "click" }),
        ),
        ("clipboard_write", json!({ "text": "x" })),
        ("clipboard_read", json!({})),
        ("wait", json!({ "seconds": 0.01 })),
        (
            "wait_for",
            json!({ "wait_kind": "window", "text": "Editor", "timeout_ms": 2000 }),
        ),
        (
            "wait_for",
            json!({ "wait_kind": "stable", "timeout_ms": 2000, "stable_ms": 50 }),
        ),
        (
            "wait_for",
            json!({ "wait_kind": "element", "name": "Save", "window_id": "$WIN", "timeout_ms": 2000 }),
        ),
        (
            "wait_for",
            json!({ "wait_kind": "text", "text": "zzz", "timeout_ms": 200 }),
        ),
        ("window", json!({ "action": "focus", "window_id": "$WIN" })),
        (
            "window",
            json!({ "action": "move", "window_id": "$WIN", "x": 5, "y": 5 }),
        ),
        (
            "window",
            json!({ "action": "resize", "window_id": "$WIN", "width": 500, "height": 400 }),
        ),
        (
            "window",
            json!({ "action": "minimize", "window_id": "$WIN" }),
        ),
        (
            "window",
            json!({ "action": "restore", "window_id": "$WIN" }),
        ),
        (
            "window",
            json!({ "action": "maximize", "window_id": "$WIN", "verify": true, "observe": true }),
        ),
        ("window", json!({ "action": "launch", "command": "true" })),
        ("shell_exec", json!({ "command": "echo hi" })),
        ("shell_exec", json!({ "command": "nosuchprogram-x" })),
        ("shell_cwd", json!({})),
        ("shell_cd", json!({ "path": "/tmp" })),
        ("shell_env_set", json!({ "name": "A", "value": "b" })),
        ("shell_env_get", json!({ "name": "A" })),
        (
            "shell_exec_verified",
            json!({ "command": "cd /tmp", "expect": { "cwd": "/tmp" } }),
        ),
        (
            "shell_exec_verified",
            json!({ "command": "true", "expect": { "path_exists": "/nonexistent-x" }, "retries": 0 }),
        ),
        (
            "shell_exec",
            json!({ "command": "sleep 5", "timeout_ms": 200 }),
        ),
        ("shell_reset", json!({})),
        (
            "diagnose",
            json!({ "error": "bash: foo: command not found" }),
        ),
        ("memory_stats", json!({})),
        ("memory_timeline", json!({})),
        ("memory_recall", json!({ "query": "Editor" })),
        ("memory_recall", json!({ "query": "the save button" })),
        ("memory_clear", json!({})),
        (
            "app_skill",
            json!({ "action": "save", "app": "editor", "content": "# Editor\nUse ctrl+s." }),
        ),
        ("app_skill", json!({ "action": "list" })),
        ("app_skill", json!({ "action": "get", "app": "editor" })),
        (
            "app_skill",
            json!({ "action": "get", "app": "nothing-here" }),
        ),
        (
            "app_skill",
            json!({ "action": "append", "app": "editor", "content": "more" }),
        ),
        ("app_skill", json!({ "action": "remove", "app": "editor" })),
        ("ui_context_current", json!({})),
        ("ui_context_clear", json!({})),
        ("ui_context_pick", json!({ "timeoutMs": 1000 })),
        ("resume", json!({})),
        ("window", json!({ "action": "close", "window_id": "$WIN" })),
    ]
}

fn dsh() -> Cases {
    let mut cases: Cases = ["screenshot", "cursor", "status", "resume"]
        .iter()
        .map(|a| ("computer", json!({ "action": a })))
        .collect();
    cases.extend([
        (
            "computer",
            json!({ "action": "screenshot", "hwnd": "$WIN", "uiSummary": "tree", "grid": true }),
        ),
        (
            "computer",
            json!({ "action": "screenshot", "compare": true }),
        ),
        ("computer", json!({ "action": "move", "x": 30, "y": 60 })),
        (
            "computer",
            json!({ "action": "click", "x": 30, "y": 60, "verify": true, "observe": true }),
        ),
        (
            "computer",
            json!({ "action": "double_click", "x": 30, "y": 60 }),
        ),
        (
            "computer",
            json!({ "action": "right_click", "x": 30, "y": 60 }),
        ),
        (
            "computer",
            json!({ "action": "middle_click", "x": 30, "y": 60 }),
        ),
        (
            "computer",
            json!({ "action": "drag", "x": 30, "y": 60, "toX": 90, "toY": 90 }),
        ),
        (
            "computer",
            json!({ "action": "scroll", "x": 30, "y": 60, "dy": 1 }),
        ),
        ("computer", json!({ "action": "type", "text": "hi" })),
        ("computer", json!({ "action": "key", "keys": ["ctrl", "a"] })),
        ("computer", json!({ "action": "wait", "seconds": 0.01 })),
        ("computer", json!({ "action": "ocr" })),
        (
            "computer",
            json!({ "action": "wait_for", "waitKind": "stable", "timeoutMs": 2000, "stableMs": 50 }),
        ),
        (
            "computer",
            json!({ "action": "wait_for", "waitKind": "window", "titleMatch": "Editor", "timeoutMs": 2000 }),
        ),
        (
            "computer",
            json!({ "action": "wait_for", "waitKind": "text", "text": "zzz", "timeoutMs": 200 }),
        ),
        ("app_window", json!({ "action": "list" })),
        ("app_window", json!({ "action": "focus", "hwnd": "$WIN" })),
        (
            "app_window",
            json!({ "action": "minimize", "hwnd": "$WIN" }),
        ),
        ("app_window", json!({ "action": "restore", "hwnd": "$WIN" })),
        (
            "app_window",
            json!({ "action": "maximize", "hwnd": "$WIN", "verify": true, "observe": true }),
        ),
        ("app_window", json!({ "action": "launch", "command": "true" })),
        ("ui_element", json!({ "action": "tree", "hwnd": "$WIN" })),
        (
            "ui_element",
            json!({ "action": "find", "hwnd": "$WIN", "nameContains": "Save" }),
        ),
        (
            "ui_element",
            json!({ "action": "invoke", "hwnd": "$WIN", "path": "0/0" }),
        ),
        (
            "ui_element",
            json!({ "action": "set_value", "hwnd": "$WIN", "path": "0/1", "value": "Bob" }),
        ),
        (
            "ui_element",
            json!({ "action": "type_secret", "hwnd": "$WIN", "path": "0/2", "secret": "SCHEMA_PASS" }),
        ),
        (
            "ui_element",
            json!({ "action": "focus", "hwnd": "$WIN", "path": "0/1" }),
        ),
        (
            "ui_element",
            json!({ "action": "expand", "hwnd": "$WIN", "path": "0/0" }),
        ),
        ("clipboard", json!({ "action": "set", "text": "x" })),
        ("clipboard", json!({ "action": "get" })),
        (
            "app_skill",
            json!({ "action": "save", "app": "editor", "content": "# Editor\nUse ctrl+s." }),
        ),
        ("app_skill", json!({ "action": "list" })),
        ("app_skill", json!({ "action": "get", "app": "editor" })),
        ("app_skill", json!({ "action": "remove", "app": "editor" })),
        ("app_window", json!({ "action": "close", "hwnd": "$WIN" })),
    ]);
    cases
}

fn desktopos_browser() -> Cases {
    vec![
        (
            "desktop_browser_launch",
            json!({ "headless": true, "url": PAGE }),
        ),
        ("desktop_cdp_targets", json!({})),
        ("desktop_cdp_open", json!({ "index": 0 })),
        ("desktop_cdp_elements", json!({})),
        ("desktop_cdp_click", json!({ "name": "Go" })),
        (
            "desktop_cdp_type",
            json!({ "text": "hi", "target": "Query" }),
        ),
        (
            "desktop_cdp_type_secret",
            json!({ "secret": "SCHEMA_PASS", "target": "Pin" }),
        ),
        (
            "desktop_cdp_eval",
            json!({ "expression": "document.title" }),
        ),
        ("desktop_cdp_screenshot", json!({})),
        ("desktop_cdp_close", json!({ "killBrowser": true })),
    ]
}

fn desktopos() -> Cases {
    vec![
        ("desktop_list_windows", json!({})),
        ("desktop_cursor", json!({})),
        ("desktop_perceive", json!({})),
        ("desktop_perceive", json!({ "includePng": true })),
        ("desktop_screenshot", json!({})),
        (
            "desktop_screenshot",
            json!({ "includePng": true, "format": "jpeg" }),
        ),
        ("desktop_elements", json!({ "handle": "$WIN" })),
        (
            "desktop_focus_window",
            json!({ "handle": "$WIN", "verify": true }),
        ),
        ("desktop_click", json!({ "x": 30, "y": 60 })),
        ("desktop_click", json!({ "x": 30, "y": 60, "verify": true })),
        (
            "desktop_click_element",
            json!({ "name": "Save", "handle": "$WIN" }),
        ),
        ("desktop_key", json!({ "combo": "ctrl+a" })),
        ("desktop_type", json!({ "text": "hi" })),
        (
            "desktop_type_secret",
            json!({ "secret": "SCHEMA_PASS", "handle": "$WIN" }),
        ),
        ("desktop_move", json!({ "x": 3, "y": 4 })),
        ("desktop_scroll", json!({ "x": 30, "y": 60, "delta": -120 })),
        (
            "desktop_diagnose",
            json!({ "error": "bash: foo: command not found" }),
        ),
        ("shell_exec", json!({ "command": "echo hi" })),
        ("shell_cwd", json!({})),
        ("shell_cd", json!({ "path": "/tmp" })),
        ("shell_env_set", json!({ "name": "A", "value": "b" })),
        ("shell_env_get", json!({ "name": "A" })),
        (
            "shell_exec_verified",
            json!({ "command": "cd /tmp", "expect": { "cwd": "/tmp" } }),
        ),
        ("shell_reset", json!({})),
        ("memory_stats", json!({})),
        ("memory_timeline", json!({})),
        ("memory_recall", json!({ "query": "Editor" })),
        ("memory_clear", json!({})),
    ]
}

fn computer_use() -> Cases {
    vec![
        ("list_apps", json!({})),
        ("list_windows", json!({})),
        ("get_window", json!({ "window_id": "$WIN" })),
        ("get_window_state", json!({ "window_id": "$WIN" })),
        (
            "get_window_state",
            json!({ "window_id": "$WIN", "include_screenshot": false }),
        ),
        ("activate_window", json!({ "window_id": "$WIN" })),
        ("click", json!({ "window_id": "$WIN", "element_index": 1 })),
        ("click", json!({ "window_id": "$WIN", "x": 30, "y": 60 })),
        (
            "perform_secondary_action",
            json!({ "window_id": "$WIN", "element_index": 1, "action": "Invoke" }),
        ),
        (
            "set_value",
            json!({ "window_id": "$WIN", "element_index": 2, "value": "Bob" }),
        ),
        ("type_text", json!({ "window_id": "$WIN", "text": "hi" })),
        (
            "type_secret",
            json!({ "window_id": "$WIN", "name": "SCHEMA_PASS" }),
        ),
        ("press_key", json!({ "window_id": "$WIN", "key": "ctrl+a" })),
        (
            "scroll",
            json!({ "window_id": "$WIN", "direction": "down" }),
        ),
        (
            "drag",
            json!({ "window_id": "$WIN", "from_x": 30, "from_y": 60, "to_x": 90, "to_y": 90 }),
        ),
        ("launch_app", json!({ "app": "true", "wait_ms": 100 })),
    ]
}

fn ui_context() -> Cases {
    vec![
        ("ui_context_current", json!({})),
        ("ui_context_clear", json!({})),
        ("ui_context_pick", json!({ "timeoutMs": 1000 })),
    ]
}

/// Tools called again (within a deadline) until they answer without an error: a dialog is
/// answered once the page has opened it.
const POLLED: &[&str] = &["browser_dialog"];

/// Tools that cannot answer without an error on a fake desktop: a pick needs a person.
const NEVER_OK: &[&str] = &["ui_context_pick"];

/// What one profile's calls showed: per tool, how many answers were checked and how many of them
/// were not errors.
#[derive(Default)]
struct Seen {
    checked: BTreeMap<String, (usize, usize)>,
    /// The DevTools port of the browser a call launched (`$PORT` in arguments).
    port: Option<u64>,
    /// Every mismatch, reported together at the end.
    failures: Vec<String>,
}

/// Checks one answer of `tool` against its listed `outputSchema`.
fn check(profile: &str, tool: &Tool, args: &Value, r: &CallToolResult, seen: &mut Seen) {
    let Some(structured) = &r.structured_content else {
        // The SDK clients that validate (TypeScript, Python) refuse an answer that worked and
        // has no structuredContent when the tool lists an outputSchema.
        if tool.output_schema.is_some() && r.is_error != Some(true) {
            seen.failures.push(format!(
                "{profile} {} {args}: answers without structuredContent though it lists an outputSchema",
                tool.name
            ));
        }
        return;
    };
    let name = &tool.name;
    let shown = format!("{profile} {name} {args}");
    let Some(schema) = &tool.output_schema else {
        seen.failures.push(format!(
            "{shown}: answers with structuredContent but lists no outputSchema"
        ));
        return;
    };
    let schema = Value::Object((**schema).clone());
    assert_eq!(
        schema["type"], "object",
        "{shown}: outputSchema must be an object schema"
    );
    // A JSON Schema 2020-12 validator (MCP's default dialect when `$schema` is absent).
    let mut schemas = boon::Schemas::new();
    let mut compiler = boon::Compiler::new();
    compiler.set_default_draft(boon::Draft::V2020_12);
    let url = format!("urn:deskpilot:{profile}:{name}");
    compiler
        .add_resource(&url, schema.clone())
        .unwrap_or_else(|e| panic!("{shown}: {e}"));
    let index = compiler
        .compile(&url, &mut schemas)
        .unwrap_or_else(|e| panic!("{shown}: the outputSchema does not compile: {e:#}"));
    if let Err(e) = schemas.validate(structured, index) {
        seen.failures.push(format!(
            "{shown}: structuredContent does not match the outputSchema: {e:#}\n  answer: {structured:.1500}\n  schema: {schema}"
        ));
    }
    // Complete: every top-level key is named by the schema or is one every tool may carry.
    let named = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Value::Object(map) = structured {
        for (key, value) in map {
            if !named.contains_key(key) && !ANY_TOOL.contains(&key.as_str()) {
                seen.failures.push(format!(
                    "{shown}: answers with key {key:?} (here {value:.200}) that its outputSchema does not name (kit/output.rs)"
                ));
            }
        }
    }
    let entry = seen.checked.entry(tool.name.to_string()).or_default();
    entry.0 += 1;
    if r.is_error != Some(true) {
        entry.1 += 1;
    }
}

/// A client of `profile` over a fresh fake desktop (memory and skills in `dir`), and the
/// Editor's id.
async fn connect(profile: &str, dir: &std::path::Path, dry_run: bool) -> (Client, WindowId) {
    let (fake, w) = desktop();
    let mut config = common::quick();
    config.safety.dry_run = dry_run;
    config.memory.enabled = true;
    config.memory.dir = Some(dir.join("memory"));
    config.skills.library.dir = Some(dir.join("skills"));
    config.secrets.keyring = false;
    let engine = std::sync::Arc::new(deskpilot_engine::Engine::new(fake.desktop(), config));
    engine
        .secrets()
        .insert(
            "SCHEMA_PASS",
            "schema-secret-0123".to_string(),
            deskpilot_engine::secrets::SecretSource::File,
        )
        .unwrap();
    (common::connect_to(profile, engine, ()).await, w)
}

/// Calls `tool` with `args` (`$WIN` read as `w`) and checks the answer; a JSON-RPC error (bad
/// arguments) has no structured content and is not counted.
async fn call(
    client: &Client,
    profile: &str,
    tools: &[Tool],
    w: WindowId,
    (tool, args): (&str, Value),
    seen: &mut Seen,
) -> Option<CallToolResult> {
    let t = tools
        .iter()
        .find(|t| t.name == tool)
        .unwrap_or_else(|| panic!("{profile} has no tool {tool}"));
    let port = seen.port.unwrap_or(0).to_string();
    let args: Value = serde_json::from_str(
        &args
            .to_string()
            .replace("\"$WIN\"", &w.0.to_string())
            .replace("\"$PORT\"", &port),
    )
    .unwrap();
    let Value::Object(map) = args.clone() else {
        panic!("{tool}: arguments must be an object")
    };
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(map);
    let answer = tokio::time::timeout(DEADLINE, client.call_tool(params))
        .await
        .unwrap_or_else(|_| panic!("{profile} {tool} {args}: no answer within {DEADLINE:?}"));
    match answer {
        Ok(r) => {
            check(profile, t, &args, &r, seen);
            if let Some(p) = r
                .structured_content
                .as_ref()
                .and_then(|s| s["browser"]["port"].as_u64())
            {
                seen.port = Some(p);
            }
            Some(r)
        }
        Err(rmcp::ServiceError::McpError(_)) => None,
        Err(e) => panic!("{profile} {tool}: the server failed: {e}"),
    }
}

/// The cases of `profile`, the browser's apart (they need Chromium).
fn cases(profile: &str) -> (Cases, Cases) {
    match profile {
        "deskpilot" => (deskpilot(), deskpilot_browser()),
        "dsh" => (dsh(), Vec::new()),
        "desktopos" => (desktopos(), desktopos_browser()),
        "computer-use" => (computer_use(), Vec::new()),
        "ui-context" => (ui_context(), Vec::new()),
        other => panic!("profile {other} has no cases here: add them"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::print_stderr)] // says which browser tools were skipped and why
async fn every_tools_structured_content_matches_its_output_schema() {
    let dir = Scratch::new();
    let dir = dir.0.as_path();
    for profile in deskpilot_mcp::PROFILES {
        // The conformance profile's fixtures are the MCP suite's, checked by the suite.
        if profile.name == "conformance" {
            continue;
        }
        let (mut own, browser) = cases(profile.name);
        let mut seen = Seen::default();
        let (client, w) = connect(profile.name, dir, false).await;
        let tools = client.list_all_tools().await.unwrap();
        let mut browser_ok = browser.is_empty();
        if let Some((first, args)) = browser.first().cloned() {
            let launched = call(&client, profile.name, &tools, w, (first, args), &mut seen).await;
            match launched.filter(|r| r.is_error != Some(true)) {
                Some(_) => {
                    browser_ok = true;
                    own.splice(0..0, browser[1..].iter().cloned());
                }
                None => eprintln!(
                    "{}: no browser could be launched here (install chromium): the browser tools' answers are checked as errors only",
                    profile.name
                ),
            }
        }
        for case in own {
            if POLLED.contains(&case.0) {
                // It answers without an error once the page shows what it waits for.
                let deadline = std::time::Instant::now() + Duration::from_secs(10);
                loop {
                    let r = call(&client, profile.name, &tools, w, case.clone(), &mut seen).await;
                    if r.is_some_and(|r| r.is_error != Some(true))
                        || std::time::Instant::now() > deadline
                    {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                continue;
            }
            call(&client, profile.name, &tools, w, case, &mut seen).await;
        }
        let _ = client.cancel().await;
        // The same tools with the deployment in dry run, then with no arguments at all: the
        // answers that stop before the desktop and the errors have to match too.
        let (client, w) = connect(profile.name, dir, true).await;
        let (own, browser) = cases(profile.name);
        for case in browser.into_iter().chain(own) {
            call(&client, profile.name, &tools, w, case, &mut seen).await;
        }
        for t in &tools {
            call(
                &client,
                profile.name,
                &tools,
                w,
                (&t.name, json!({})),
                &mut seen,
            )
            .await;
        }
        let _ = client.cancel().await;
        assert!(
            seen.failures.is_empty(),
            "{}: {} answers do not match their outputSchema:\n{}",
            profile.name,
            seen.failures.len(),
            seen.failures.join("\n")
        );
        let (answers, ok): (usize, usize) = seen
            .checked
            .values()
            .fold((0, 0), |(a, o), (c, k)| (a + c, o + k));
        eprintln!(
            "{}: {} tools, {answers} structured answers checked ({ok} without an error)",
            profile.name,
            tools.len()
        );
        for t in &tools {
            let (checked, ok) = seen
                .checked
                .get(t.name.as_ref())
                .copied()
                .unwrap_or_default();
            assert!(
                checked > 0,
                "{} {}: no answer was checked",
                profile.name,
                t.name
            );
            let browser_tool = cases(profile.name).1.iter().any(|(n, _)| *n == t.name);
            if NEVER_OK.contains(&t.name.as_ref()) || (browser_tool && !browser_ok) {
                continue;
            }
            assert!(
                ok > 0,
                "{} {}: no call answered without an error, so its real answer was never checked: give it arguments that work",
                profile.name,
                t.name
            );
        }
    }
}

/// A scratch directory for memory and skills, removed when the test ends, failed or not.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("deskpilot-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether `name` is 1–64 characters of `[A-Za-z0-9_.-]`.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

#[test]
fn every_tool_name_is_1_to_64_characters_of_letters_digits_and_dot_dash_underscore() {
    for good in [
        "a",
        "get_window_state",
        "admin.tools.list",
        "DATA_EXPORT-v2",
    ] {
        assert!(valid_name(good), "{good}");
    }
    for bad in [
        "",
        "has space",
        "comma,",
        "ünïcode",
        "slash/x",
        &"x".repeat(65),
    ] {
        assert!(!valid_name(bad), "{bad}");
    }
    for profile in deskpilot_mcp::PROFILES {
        let names = (profile.tools)();
        assert!(!names.is_empty(), "{}", profile.name);
        for name in names {
            assert!(
                valid_name(&name),
                "{}: tool name {name:?} is not 1–64 characters of [A-Za-z0-9_.-]",
                profile.name
            );
        }
    }
}
