//! Argument decoding of every tool of every profile under random input: values shaped by
//! each tool's input schema (every property, enum members and strangers, numbers at the
//! edges, long and odd strings) and plain junk, through an in-process MCP client on a fake
//! desktop. Zero panics (the server answers every call after, and no desktop call comes back
//! as the internal error a caught panic becomes), zero hangs (each call within a deadline),
//! and every answer a result or a JSON-RPC error.
//!
//! Two passes per profile: every tool with the deployment in dry run (nothing reaches a shell,
//! a browser or the filesystem), then the tools that only touch the fake desktop for real.
//! The checked-in corpus (`tests/fuzz/corpus/*.json`, `{tool: [args…]}`) runs first.
//! `DESKPILOT_FUZZ_SECS` sets the random phase's time per profile (default 2 s: CI's bounded
//! pass); `DESKPILOT_FUZZ_SEED` replays a run. `scripts/fuzz` runs it longer.

mod common;

use std::time::{Duration, Instant};

use common::Client;
use deskpilot_backend::FakeDesktop;
use deskpilot_backend::fake::FakeWindow;
use deskpilot_engine::EngineConfig;
use deskpilot_mcp::PROFILES;
use deskpilot_types::Rect;
use rmcp::model::{CallToolRequestParams, Tool};
use serde_json::{Map, Value, json};

/// How long one call may take before it counts as a hang.
const DEADLINE: Duration = Duration::from_secs(20);

/// xorshift64*: small, seeded, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

const STRINGS: &[&str] = &[
    "",
    " ",
    "a",
    "保存并关闭",
    "😀",
    "\u{0}",
    "\n\t\r",
    "s1:0",
    "s999999:999999",
    "s:",
    "-1",
    "1e309",
    "NaN",
    "../../etc/passwd",
    "C:\\Windows\\System32",
    "ctrl+alt+delete",
    "https://example.invalid/",
    "{\"nested\":true}",
    "\u{202e}rtl",
    "%s%n%x",
];

fn junk(rng: &mut Rng, depth: u32) -> Value {
    match rng.below(if depth > 2 { 6 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.chance(50)),
        2 => json!([i64::MIN, -1, 0, 1, i64::MAX, u32::MAX as i64 + 1][rng.below(6)]),
        3 => json!([f64::MIN, -0.5, 0.5, 1e300, f64::EPSILON][rng.below(5)]),
        4 => json!(STRINGS[rng.below(STRINGS.len())]),
        5 => json!("x".repeat([0, 1, 100, 5000, 70_000][rng.below(5)])),
        6 => Value::Array((0..rng.below(4)).map(|_| junk(rng, depth + 1)).collect()),
        _ => {
            let mut m = Map::new();
            for _ in 0..rng.below(4) {
                m.insert(
                    STRINGS[rng.below(STRINGS.len())].to_string(),
                    junk(rng, depth + 1),
                );
            }
            Value::Object(m)
        }
    }
}

/// A value for `schema`, usually valid, sometimes not.
fn shaped(rng: &mut Rng, schema: &Value, depth: u32) -> Value {
    if rng.chance(8) || depth > 4 {
        return junk(rng, depth);
    }
    if let Some(values) = schema["enum"].as_array()
        && !values.is_empty()
    {
        return values[rng.below(values.len())].clone();
    }
    let ty = match &schema["type"] {
        Value::String(t) => t.clone(),
        Value::Array(ts) if !ts.is_empty() => ts[rng.below(ts.len())]
            .as_str()
            .unwrap_or("null")
            .to_string(),
        _ => return junk(rng, depth),
    };
    match ty.as_str() {
        "integer" => {
            let min = schema["minimum"].as_i64().unwrap_or(-5);
            let max = schema["maximum"].as_i64().unwrap_or(5000);
            match rng.below(4) {
                0 => json!(min),
                1 => json!(max),
                2 => json!(min.saturating_sub(1)),
                _ => json!(min + (rng.next() % ((max - min).max(1) as u64)) as i64),
            }
        }
        "number" => json!([0.0, 1.5, -3.25, 799.999, 1e9][rng.below(5)]),
        "boolean" => json!(rng.chance(50)),
        "string" => json!(STRINGS[rng.below(STRINGS.len())]),
        "array" => Value::Array(
            (0..rng.below(4))
                .map(|_| shaped(rng, &schema["items"], depth + 1))
                .collect(),
        ),
        "object" => object(rng, schema, depth + 1),
        _ => Value::Null,
    }
}

/// Arguments for an object schema: the required properties, some optional ones, now and then
/// an unknown one or a missing required one.
fn object(rng: &mut Rng, schema: &Value, depth: u32) -> Value {
    let mut m = Map::new();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = schema["properties"].as_object() {
        for (name, prop) in props {
            let wanted = if required.contains(&name.as_str()) {
                !rng.chance(5)
            } else {
                rng.chance(40)
            };
            if wanted {
                m.insert(name.clone(), shaped(rng, prop, depth));
            }
        }
    }
    if rng.chance(5) {
        m.insert("unexpected_field".to_string(), junk(rng, depth));
    }
    Value::Object(m)
}

fn fake() -> FakeDesktop {
    let fake = FakeDesktop::new(1280, 800);
    fake.add_window(FakeWindow::new("Editor", Rect::new(10, 10, 600, 400)));
    fake.add_window(FakeWindow::new(
        "保存 dialog",
        Rect::new(300, 200, 300, 200),
    ));
    fake
}

async fn connect(profile: &deskpilot_mcp::Profile, dry_run: bool, dir: &std::path::Path) -> Client {
    let mut config = EngineConfig::default();
    config.safety.dry_run = dry_run;
    config.safety.action_delay = Duration::ZERO;
    config.memory.enabled = true;
    config.memory.dir = Some(dir.join("memory"));
    common::connect(profile.name, config, &fake()).await
}

/// Tools that may start processes, open a browser or write files: fuzzed in dry run only.
fn reaches_outside(tool: &str) -> bool {
    [
        "shell",
        "browser",
        "cdp",
        "launch",
        "skill",
        "app_window",
        "computer",
        "clipboard",
        "ui_context",
    ]
    .iter()
    .any(|w| tool.contains(w))
        || tool == "window"
}

/// One call: answered within the deadline, as a result or a JSON-RPC error (both fine); a
/// transport failure means the server died.
async fn one(client: &Client, profile: &str, tool: &str, args: Value) {
    let shown = args.to_string();
    let map = match args {
        Value::Object(m) => Some(m),
        _ => None,
    };
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Some(m) = map {
        params = params.with_arguments(m);
    }
    let answered = tokio::time::timeout(DEADLINE, client.call_tool(params)).await;
    match answered {
        Err(_) => panic!("{profile} {tool}: no answer within {DEADLINE:?}"),
        Ok(Ok(r)) => {
            // A panic inside a desktop call comes back as the internal error: a finding too.
            let code = common::code(&r).to_ascii_uppercase();
            let text = common::text(&r);
            assert!(
                code != "INTERNAL" && !text.contains("panicked"),
                "{profile} {tool} {shown:.300}: {text:.500}"
            );
        }
        Ok(Err(rmcp::ServiceError::McpError(_))) => {}
        Ok(Err(e)) => panic!("{profile} {tool}: the server failed: {e}"),
    }
}

fn corpus() -> Vec<(String, Value)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fuzz/corpus");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let v: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (tool, cases) in v.as_object().expect("{tool: [args…]}") {
            for args in cases.as_array().expect("a list of argument values") {
                out.push((tool.clone(), args.clone()));
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::print_stderr)] // the seed and the count, so a run can be replayed
async fn every_tool_of_every_profile_survives_random_and_junk_arguments() {
    let secs: f64 = std::env::var("DESKPILOT_FUZZ_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let seed: u64 = std::env::var("DESKPILOT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    eprintln!(
        "fuzz: seed {seed} (DESKPILOT_FUZZ_SEED={seed} replays it), {secs} s per profile and pass"
    );
    let dir = std::env::temp_dir().join(format!("deskpilot-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // SAFETY: set before any server of this test reads it; no other thread reads the
    // environment concurrently in this test binary.
    unsafe {
        std::env::set_var("DESKPILOT_SKILLS_DIR", dir.join("skills"));
    }
    let corpus = corpus();
    assert!(!corpus.is_empty(), "the checked-in corpus is missing");
    let mut rng = Rng(seed);
    let mut total = 0usize;
    for profile in PROFILES {
        for dry_run in [true, false] {
            let client = connect(profile, dry_run, &dir).await;
            let tools: Vec<Tool> = client
                .list_all_tools()
                .await
                .unwrap()
                .into_iter()
                .filter(|t| dry_run || !reaches_outside(&t.name))
                .collect();
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
            for (tool, args) in &corpus {
                if names.contains(&tool.as_str()) {
                    one(&client, profile.name, tool, args.clone()).await;
                    total += 1;
                }
            }
            let started = Instant::now();
            while !tools.is_empty() && started.elapsed().as_secs_f64() < secs {
                let tool = &tools[rng.below(tools.len())];
                let schema = Value::Object((*tool.input_schema).clone());
                let args = if rng.chance(10) {
                    junk(&mut rng, 0)
                } else {
                    object(&mut rng, &schema, 0)
                };
                one(&client, profile.name, &tool.name, args).await;
                total += 1;
            }
            // Alive: a plain read still answers.
            assert!(!client.list_all_tools().await.unwrap().is_empty());
            let _ = client.cancel().await;
        }
    }
    eprintln!("fuzz: {total} calls, no panic, no hang");
    let _ = std::fs::remove_dir_all(&dir);
}
