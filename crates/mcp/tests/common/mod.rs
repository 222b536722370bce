//! What every in-process MCP test of this crate does the same way: serve a profile over a
//! duplex transport to a client, call a tool, read a result's text, code and structured body,
//! and check a tool's listed schema against a contract written down as data.
//!
//! Each test binary includes this module (`mod common;`) and uses part of it, hence the
//! `dead_code` allowance. It holds no contract of its own: the tables and the fake desktops
//! stay in the test files that state them.

#![allow(dead_code)]

use std::sync::Arc;

use deskpilot_backend::FakeDesktop;
use deskpilot_engine::{Engine, EngineConfig};
use deskpilot_mcp::{ServerIdentity, ToolFilter};
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::Value;

/// A client connected to one server.
pub type Client<H = ()> = RunningService<RoleClient, H>;

/// The engine settings of a test that acts: no pause before each action.
pub fn quick() -> EngineConfig {
    let mut c = EngineConfig::default();
    c.safety.action_delay = std::time::Duration::ZERO;
    c
}

/// The server identity every test serves under.
pub fn identity() -> ServerIdentity {
    ServerIdentity {
        name: "deskpilot".into(),
        version: "test".into(),
    }
}

/// A client of the profile `profile` over a new engine on `fake` with `config`.
pub async fn connect(profile: &str, config: EngineConfig, fake: &FakeDesktop) -> Client {
    let engine = Arc::new(Engine::new(fake.desktop(), config));
    connect_to(profile, engine, ()).await
}

/// `handler`'s connection to the profile `profile` over `engine` (one engine may serve
/// several clients, each its own session).
pub async fn connect_to<H: ClientHandler>(
    profile: &str,
    engine: Arc<Engine>,
    handler: H,
) -> Client<H> {
    let profile = deskpilot_mcp::profile(profile).expect("a known profile");
    let surface = (profile.build)(engine, identity(), &ToolFilter::default());
    let (server_end, client_end) = tokio::io::duplex(1 << 22);
    tokio::spawn(async move {
        if let Ok(service) = surface.service.serve(server_end).await {
            let _ = service.waiting().await;
        }
    });
    handler.serve(client_end).await.expect("handshake")
}

/// Calls `tool` with the object `args`; a protocol error fails the test.
pub async fn call<H: ClientHandler>(client: &Client<H>, tool: &str, args: Value) -> CallToolResult {
    let Value::Object(map) = args else {
        panic!("{tool}: arguments must be an object")
    };
    client
        .call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(map))
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e}"))
}

/// The result's text blocks, one a line.
pub fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The error code in the structured result, `""` when there is none.
pub fn code(r: &CallToolResult) -> String {
    r.structured_content
        .as_ref()
        .and_then(|s| s["error"]["code"].as_str())
        .unwrap_or("")
        .to_string()
}

/// The structured result of a call that must have succeeded.
pub fn ok(r: &CallToolResult) -> Value {
    assert_ne!(r.is_error, Some(true), "{}", text(r));
    r.structured_content.clone().unwrap_or_default()
}

/// A call the dry run stopped: flagged in the structured result and worded "Would …".
pub fn assert_dry_run(what: &str, r: &CallToolResult) {
    let s = r.structured_content.clone().unwrap_or_default();
    assert_eq!(
        s["dry_run"],
        true,
        "{what} was not stopped by the dry run: {}",
        text(r)
    );
    assert!(
        text(r).starts_with("[dry run] Would "),
        "{what}: {}",
        text(r)
    );
}

/// No pointer, key or text input reached `fake`.
pub fn assert_no_input(fake: &FakeDesktop) {
    assert!(
        fake.pointer_events().is_empty(),
        "input reached the desktop: {:?}",
        fake.pointer_events()
    );
    assert!(fake.key_events().is_empty(), "{:?}", fake.key_events());
    assert_eq!(fake.typed(), "", "text reached the desktop");
}

/// The listed tool `name` and its input schema.
pub fn listed<'a>(tools: &'a [Tool], name: &str) -> (&'a Tool, Value) {
    let t = tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{name} is missing"));
    (t, Value::Object((*t.input_schema).clone()))
}

/// The schema's parameter names, sorted.
pub fn param_names(schema: &Value) -> Vec<String> {
    let mut names: Vec<String> = schema["properties"]
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    names.sort();
    names
}

/// Whether the tool says it only reads (`readOnlyHint`).
pub fn read_only(t: &Tool) -> bool {
    t.annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false)
}

/// Every tool tells an agent what it does in more than a few words.
pub fn assert_described(t: &Tool) {
    assert!(
        t.description.as_ref().is_some_and(|d| d.len() > 20),
        "{} needs a description",
        t.name
    );
}

/// The property's schema with a `$ref` into `$defs` followed (also the first of an `anyOf`,
/// how an optional reference is written).
pub fn resolve<'a>(schema: &'a Value, prop: &'a Value) -> &'a Value {
    let direct = prop.get("$ref").or_else(|| {
        prop.get("anyOf")
            .and_then(|a| a.get(0))
            .and_then(|v| v.get("$ref"))
    });
    match direct.and_then(Value::as_str) {
        Some(r) => &schema["$defs"][r.trim_start_matches("#/$defs/")],
        None => prop,
    }
}

/// A property's JSON type as the contract tables write it: `enum:a,b` for string choices,
/// `object:k1,k2` for an object with required keys (a region's in x, y, w/width, h/height
/// order), the one type besides `null` of an optional value.
pub fn type_of(schema: &Value, prop: &Value) -> String {
    let p = resolve(schema, prop);
    if let Some(e) = p.get("enum").and_then(Value::as_array) {
        let names: Vec<&str> = e.iter().filter_map(Value::as_str).collect();
        return format!("enum:{}", names.join(","));
    }
    if let Some(one) = p.get("oneOf").and_then(Value::as_array) {
        let names: Vec<&str> = one
            .iter()
            .filter_map(|v| {
                v.get("const")
                    .or_else(|| v.get("enum").and_then(|e| e.get(0)))
            })
            .filter_map(Value::as_str)
            .collect();
        return format!("enum:{}", names.join(","));
    }
    let ty = match &p["type"] {
        Value::String(s) => s.clone(),
        // Optional: ["integer", "null"].
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null")
            .unwrap_or("?")
            .to_string(),
        _ => "?".to_string(),
    };
    if ty == "object"
        && let Some(required) = p["required"].as_array().filter(|r| !r.is_empty())
    {
        let mut required: Vec<&str> = required.iter().filter_map(Value::as_str).collect();
        let order = ["x", "y", "w", "width", "h", "height"];
        required.sort_by_key(|k| order.iter().position(|o| o == k));
        return format!("object:{}", required.join(","));
    }
    ty
}
