//! dsh-computer-use's contract as data, checked against the `dsh` profile: its tables (tools, actions
//! and their kind, parameter names and types, defaults, ranges, error codes) written down here
//! and compared with `tools/list` and with calls over an in-process MCP client on a fake
//! desktop. The end-to-end tests (crates/cli/tests/e2e/dsh.rs) drive the same profile on X11.

mod common;

use common::{Client, call, code, ok, quick, text, type_of};
use deskpilot_backend::fake::{FakeElement, FakeWindow, PointerEvent, element};
use deskpilot_backend::{FakeDesktop, RawTree};
use deskpilot_engine::EngineConfig;
use deskpilot_types::{ErrorCode, Rect, Role, WindowId};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Read,
    Mutating,
    Neutral,
    Control,
    /// A mutation whose own checks come before the gates: a secret goes only into a password
    /// field, and the fake desktop shows none.
    Secret,
}
use Kind::*;

/// dsh-computer-use's "Tools": five tools, 38 actions, each with its kind (and deskpilot's
/// type_secret).
const ACTIONS: &[(&str, &[(&str, Kind)])] = &[
    (
        "computer",
        &[
            ("screenshot", Read),
            ("cursor", Read),
            ("status", Read),
            ("move", Mutating),
            ("click", Mutating),
            ("double_click", Mutating),
            ("right_click", Mutating),
            ("middle_click", Mutating),
            ("drag", Mutating),
            ("scroll", Mutating),
            ("type", Mutating),
            ("key", Mutating),
            ("wait", Neutral),
            ("ocr", Read),
            ("wait_for", Read),
            ("resume", Control),
        ],
    ),
    (
        "app_window",
        &[
            ("list", Read),
            ("focus", Read),
            ("launch", Mutating),
            ("minimize", Mutating),
            ("maximize", Mutating),
            ("restore", Mutating),
            ("close", Mutating),
        ],
    ),
    (
        "ui_element",
        &[
            ("tree", Read),
            ("find", Read),
            ("invoke", Mutating),
            ("set_value", Mutating),
            ("focus", Mutating),
            ("expand", Mutating),
            ("collapse", Mutating),
            ("select", Mutating),
            // deskpilot's addition: dsh-computer-use has no way to type a secret.
            ("type_secret", Secret),
        ],
    ),
    ("clipboard", &[("get", Read), ("set", Mutating)]),
    (
        "app_skill",
        &[
            ("list", Read),
            ("get", Read),
            ("save", Mutating),
            ("append", Mutating),
            ("remove", Mutating),
        ],
    ),
];

/// dsh-computer-use's parameter tables: name and JSON type (`enum:` lists the allowed strings).
const PARAMS: &[(&str, &[(&str, &str)])] = &[
    (
        "computer",
        &[
            ("action", "string"),
            ("x", "integer"),
            ("y", "integer"),
            ("toX", "integer"),
            ("toY", "integer"),
            ("button", "enum:left,right,middle"),
            ("count", "integer"),
            ("modifiers", "array"),
            ("text", "string"),
            ("keys", "array"),
            ("dy", "integer"),
            ("dx", "integer"),
            ("seconds", "number"),
            ("screen", "integer"),
            ("hwnd", "integer"),
            ("region", "object:x,y,width,height"),
            ("maxWidth", "integer"),
            ("uiSummary", "enum:none,summary,tree"),
            ("compare", "boolean"),
            ("grid", "boolean"),
            ("gridStep", "integer"),
            ("mark", "object:x,y"),
            ("dim", "object:x,y,width,height"),
            ("verify", "boolean"),
            ("observe", "boolean"),
            ("lang", "string"),
            ("maxLines", "integer"),
            ("waitKind", "enum:stable,window,element,text"),
            ("timeoutMs", "integer"),
            ("stableMs", "integer"),
            ("titleMatch", "string"),
            ("name", "string"),
        ],
    ),
    (
        "app_window",
        &[
            ("action", "string"),
            ("hwnd", "integer"),
            ("titleMatch", "string"),
            ("filter", "string"),
            ("command", "string"),
            ("args", "array"),
            ("observe", "boolean"),
        ],
    ),
    (
        "ui_element",
        &[
            ("action", "string"),
            ("hwnd", "integer"),
            ("path", "string"),
            ("description", "string"),
            ("nameContains", "string"),
            ("role", "string"),
            ("limit", "integer"),
            ("annotate", "boolean"),
            ("value", "string"),
            ("secret", "string"),
            ("maxDepth", "integer"),
            ("maxNodes", "integer"),
            ("observe", "boolean"),
        ],
    ),
    ("clipboard", &[("action", "string"), ("text", "string")]),
    (
        "app_skill",
        &[
            ("action", "string"),
            ("app", "string"),
            ("content", "string"),
            ("summary", "string"),
            ("match", "array"),
            ("overwrite", "boolean"),
            ("refresh", "boolean"),
        ],
    ),
];

/// dsh-computer-use's Troubleshooting codes (plus those its tables name), and whether deskpilot can
/// return them: `BACKEND_MISSING` is a partially copied Node package — a single binary has no
/// such state.
const CODES: &[(&str, bool)] = &[
    ("BACKEND_START_FAILED", true),
    ("BACKEND_MISSING", false),
    ("NO_REFERENCE_SCREENSHOT", true),
    ("STOPPED_BY_HUMAN", true),
    ("RESUME_TOO_SOON", true),
    ("BLOCKED_TARGET", true),
    ("APPROVAL_UNAVAILABLE", true),
    ("APPROVAL_DENIED", true),
    ("PATTERN_UNSUPPORTED", true),
    ("ELEMENT_NOT_FOUND", true),
    ("AMBIGUOUS_WINDOW", true),
    ("TARGET_WINDOW_GONE", true),
    ("TARGET_WINDOW_CHANGED", true),
    ("TARGET_WINDOW_MOVED", true),
    ("POINTER_NOT_LANDED", true),
    ("CLICK_WRONG_WINDOW", true),
    ("OUTSIDE_TARGET_WINDOW", true),
    ("FOCUS_REFUSED", true),
    ("WAIT_TIMEOUT", true),
    ("SKILL_EXISTS", true),
    ("SKILL_TOO_LONG", true),
    ("SKILL_BUILTIN", true),
    ("SKILLS_READ_ONLY", true),
    ("SKILLS_RELOAD_FAILED", true),
];

/// A button `name` of the root, with `actions`.
fn button(name: &str, actions: &[&str]) -> FakeElement {
    element(Role::Button, name)
        .child_of(0, 1)
        .platform_role("push button")
        .actions(actions)
        .bounds(Rect::new(20, 50, 60, 20))
}

/// A window whose tree is a root, `first` and `second` (buttons), and a label without actions.
fn tree(first: &str, second: &str) -> RawTree {
    deskpilot_backend::fake::tree([
        element(Role::Window, "Editor")
            .platform_role("push button")
            .bounds(Rect::new(20, 20, 60, 20)),
        button(first, &["click"]),
        button(second, &["click"]),
        button("Label", &[]),
    ])
}

fn desktop() -> (FakeDesktop, WindowId) {
    let fake = FakeDesktop::new(400, 300);
    let w = fake.add_window(FakeWindow {
        pid: 7,
        ..FakeWindow::new("Editor", Rect::new(0, 0, 400, 300))
    });
    fake.set_tree(w, tree("Save", "Open"));
    (fake, w)
}

async fn connect(config: EngineConfig, fake: &FakeDesktop) -> Client {
    common::connect("dsh", config, fake).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_is_dsh_computer_uses_tables() {
    let (fake, _) = desktop();
    let client = connect(quick(), &fake).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "app_skill",
            "app_window",
            "clipboard",
            "computer",
            "ui_element"
        ]
    );
    assert_eq!(ACTIONS.iter().map(|(_, a)| a.len()).sum::<usize>(), 39);
    for (tool, params) in PARAMS {
        let (_, schema) = common::listed(&tools, tool);
        let props = schema["properties"].as_object().unwrap();
        for (name, want) in *params {
            let prop = props
                .get(*name)
                .unwrap_or_else(|| panic!("{tool}.{name} is missing"));
            let got = type_of(&schema, prop);
            if *name == "action" && got.starts_with("enum:") {
                continue; // the action enum is checked against ACTIONS below
            }
            assert_eq!(&got, want, "{tool}.{name}");
        }
        // Nothing beyond dsh-computer-use's names but verify (dsh-computer-use: every mutating call takes it).
        for name in props.keys() {
            assert!(
                params.iter().any(|(n, _)| n == name) || name == "verify",
                "{tool}.{name} is not a dsh-computer-use parameter"
            );
        }
        assert_eq!(schema["required"], json!(["action"]), "{tool}");
    }
    for (tool, actions) in ACTIONS {
        let (_, schema) = common::listed(&tools, tool);
        let listed = type_of(&schema, &schema["properties"]["action"]);
        let want: Vec<&str> = actions.iter().map(|(a, _)| *a).collect();
        // Every tool declares its actions as an enum, in dsh-computer-use's order.
        assert_eq!(listed, format!("enum:{}", want.join(",")), "{tool}.action");
    }
    for (code, possible) in CODES {
        let known = ErrorCode::ALL.iter().any(|c| c.as_str() == *code);
        assert_eq!(known, *possible, "{code}");
    }
    client.cancel().await.ok();
}

/// The smallest valid arguments for each action on the fake desktop.
fn args_for(tool: &str, action: &str, w: WindowId) -> Value {
    let hwnd = w.0;
    match (tool, action) {
        ("computer", "click" | "double_click" | "right_click" | "middle_click" | "move") => {
            json!({ "action": action, "x": 30, "y": 30 })
        }
        ("computer", "drag") => json!({ "action": action, "x": 30, "y": 30, "toX": 60, "toY": 60 }),
        ("computer", "scroll") => json!({ "action": action, "x": 30, "y": 30, "dy": 1 }),
        ("computer", "type") => json!({ "action": action, "text": "hi" }),
        ("computer", "key") => json!({ "action": action, "keys": ["ctrl", "s"] }),
        ("computer", "wait") => json!({ "action": action, "seconds": 0 }),
        ("computer", "wait_for") => {
            json!({ "action": action, "waitKind": "window", "titleMatch": "Editor" })
        }
        ("computer", "ocr") => json!({ "action": action, "hwnd": hwnd }),
        ("app_window", "launch") => json!({ "action": action, "command": "true" }),
        ("app_window", "list") => json!({ "action": action }),
        ("app_window", _) => json!({ "action": action, "hwnd": hwnd }),
        ("ui_element", "tree" | "find") => {
            json!({ "action": action, "hwnd": hwnd, "description": "Save" })
        }
        ("ui_element", "set_value") => {
            json!({ "action": action, "hwnd": hwnd, "path": "0/0", "value": "x" })
        }
        ("ui_element", "type_secret") => {
            json!({ "action": action, "hwnd": hwnd, "path": "0/0", "secret": "SOME_PASS" })
        }
        ("ui_element", _) => json!({ "action": action, "hwnd": hwnd, "path": "0/0" }),
        ("clipboard", "set") => json!({ "action": action, "text": "x" }),
        ("app_skill", "save" | "append") => {
            json!({ "action": action, "app": "contract-test", "content": "- ctrl+s saves" })
        }
        ("app_skill", "remove") => json!({ "action": action, "app": "contract-test" }),
        (_, _) => json!({ "action": action }),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mutating_action_passes_the_gates_and_no_read_does() {
    let (fake, w) = desktop();
    let mut config = quick();
    config.safety.dry_run = true;
    let dir = std::env::temp_dir().join(format!("dsh-contract-skills-{}", std::process::id()));
    config.skills.library.dir = Some(dir.clone());
    let client = connect(config, &fake).await;
    ok(&call(
        &client,
        "computer",
        json!({ "action": "screenshot", "hwnd": w.0 }),
    )
    .await);
    for (tool, actions) in ACTIONS {
        for (action, kind) in *actions {
            let r = call(&client, tool, args_for(tool, action, w)).await;
            let dry = text(&r).starts_with("[dry run] Would");
            match kind {
                Mutating => assert!(dry, "{tool} {action} did not pass the gates: {}", text(&r)),
                Secret => {
                    assert!(!dry, "{tool} {action} reached the gates");
                    assert!(
                        text(&r).starts_with("SECRET_NOT_PASSWORD_FIELD"),
                        "{tool} {action}: {}",
                        text(&r)
                    );
                }
                Read | Neutral | Control => {
                    assert!(!dry, "{tool} {action} was gated like a mutation");
                }
            }
        }
    }
    common::assert_no_input(&fake);
    assert!(
        !dir.join("contract-test.md").exists(),
        "dry run wrote a skill"
    );
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defaults_ranges_and_translations_follow_dsh_computer_use() {
    let (fake, w) = desktop();
    let client = connect(quick(), &fake).await;
    // A coordinate action before any screenshot.
    let r = call(
        &client,
        "computer",
        json!({ "action": "click", "x": 5, "y": 5 }),
    )
    .await;
    assert_eq!(code(&r), "NO_REFERENCE_SCREENSHOT", "{}", text(&r));
    let shot = ok(&call(&client, "computer", json!({ "action": "screenshot" })).await);
    assert_eq!(shot["view"]["width"], 400);
    assert!(
        shot["ui"].is_object(),
        "summary is the default outline: {shot}"
    );

    // count is 1–3; seconds 0–30.
    for bad in [0, 4] {
        let r = call(
            &client,
            "computer",
            json!({ "action": "click", "x": 5, "y": 5, "count": bad }),
        )
        .await;
        assert_eq!(code(&r), "INVALID_ARGUMENT", "count {bad}");
    }
    for bad in [-1.0, 30.5] {
        let r = call(
            &client,
            "computer",
            json!({ "action": "wait", "seconds": bad }),
        )
        .await;
        assert_eq!(code(&r), "INVALID_ARGUMENT", "seconds {bad}");
    }

    // x/y omitted: the pointer where it is.
    ok(&call(
        &client,
        "computer",
        json!({ "action": "move", "x": 40, "y": 50 }),
    )
    .await);
    let before = fake.pointer_events().len();
    ok(&call(&client, "computer", json!({ "action": "click" })).await);
    let events = fake.pointer_events();
    assert!(
        events[before..].iter().any(
            |e| matches!(e, PointerEvent::Button { down: true, at, .. } if at.x == 40 && at.y == 50)
        ),
        "{events:?}"
    );

    // scroll: dsh-computer-use's dy > 0 is up; the backend's dy > 0 is down. Answered in wheel units.
    let r = ok(&call(
        &client,
        "computer",
        json!({ "action": "scroll", "x": 40, "y": 50, "dy": 2 }),
    )
    .await);
    assert_eq!(r["dy"], 240);
    let wheel: Vec<i32> = fake
        .pointer_events()
        .iter()
        .filter_map(|e| match e {
            PointerEvent::Wheel { dy, .. } => Some(*dy),
            _ => None,
        })
        .collect();
    assert_eq!(wheel.iter().sum::<i32>(), -2, "{wheel:?}");

    // type counts UTF-16 code units: one emoji is 2.
    let r = ok(&call(
        &client,
        "computer",
        json!({ "action": "type", "text": "héllo😀" }),
    )
    .await);
    assert_eq!(r["chars"], 7);
    assert_eq!(fake.typed(), "héllo😀");

    // Tree: maxDepth clamped 1–20, maxNodes 1–5000; every line ends in path=.
    let r = call(
        &client,
        "ui_element",
        json!({ "action": "tree", "hwnd": w.0, "maxDepth": 0 }),
    )
    .await;
    assert_eq!(ok(&r)["nodes"], 1, "{}", text(&r));
    let r = call(
        &client,
        "ui_element",
        json!({ "action": "tree", "hwnd": w.0, "maxNodes": 0 }),
    )
    .await;
    assert_eq!(ok(&r)["nodes"], 1);
    let r = call(
        &client,
        "ui_element",
        json!({ "action": "tree", "hwnd": w.0 }),
    )
    .await;
    assert_eq!(ok(&r)["nodes"], 4);
    let lines: Vec<String> = text(&r)
        .lines()
        .filter(|l| l.contains(" path="))
        .map(str::to_string)
        .collect();
    assert_eq!(lines.len(), 4, "{}", text(&r));
    assert!(lines.iter().all(|l| l.contains(" path=")), "{lines:?}");
    assert!(lines[1].trim_start().starts_with("Button \"Save\"") && lines[1].ends_with("path=0/0"));

    // Invoke by path: the fake's click toggles the state the next tree shows.
    ok(&call(
        &client,
        "ui_element",
        json!({ "action": "invoke", "hwnd": w.0, "path": "0/0" }),
    )
    .await);
    let r = call(
        &client,
        "ui_element",
        json!({ "action": "tree", "hwnd": w.0 }),
    )
    .await;
    assert!(
        text(&r).contains("Button \"Save\" [checked] path=0/0"),
        "{}",
        text(&r)
    );

    // A control without the pattern; a path with nothing there.
    let r = call(
        &client,
        "ui_element",
        json!({ "action": "invoke", "hwnd": w.0, "path": "0/2" }),
    )
    .await;
    assert_eq!(code(&r), "PATTERN_UNSUPPORTED", "{}", text(&r));
    assert!(
        text(&r).contains("ui_element { \"action\": \"tree\" }"),
        "{}",
        text(&r)
    );
    let r = call(
        &client,
        "ui_element",
        json!({ "action": "invoke", "hwnd": w.0, "path": "0/7" }),
    )
    .await;
    assert_eq!(code(&r), "ELEMENT_NOT_FOUND", "{}", text(&r));
    let r = call(
        &client,
        "ui_element",
        json!({ "action": "invoke", "hwnd": w.0, "path": "zero" }),
    )
    .await;
    assert_eq!(code(&r), "INVALID_ARGUMENT");

    // The layout changes: the path now names another button and is refused, nothing pressed.
    fake.set_tree(w, tree("Open", "Save"));
    let r = call(
        &client,
        "ui_element",
        json!({ "action": "invoke", "hwnd": w.0, "path": "0/0" }),
    )
    .await;
    assert_eq!(code(&r), "ELEMENT_NOT_FOUND", "{}", text(&r));
    assert!(
        text(&r).contains("was Button \"Save\" and is now Button \"Open\""),
        "{}",
        text(&r)
    );
    let r = call(
        &client,
        "ui_element",
        json!({ "action": "tree", "hwnd": w.0 }),
    )
    .await;
    assert!(
        !text(&r).contains("[checked]"),
        "a neighbour was acted on: {}",
        text(&r)
    );

    // find: ranked candidates with paths, scores, reasons.
    let r = ok(&call(
        &client,
        "ui_element",
        json!({ "action": "find", "hwnd": w.0, "description": "save button", "annotate": false }),
    )
    .await);
    assert_eq!(r["candidates"][0]["path"], "0/1", "{r}");
    assert!(r["candidates"][0]["score"].as_f64().unwrap() > 0.0);
    assert!(!r["candidates"][0]["why"].as_str().unwrap().is_empty());

    // Windows: list is foreground first with dsh-computer-use's fields; titleMatch must be unique.
    let r = ok(&call(&client, "app_window", json!({ "action": "list" })).await);
    for key in [
        "hwnd",
        "title",
        "class",
        "pid",
        "process",
        "bounds",
        "clientBounds",
        "minimized",
        "maximized",
        "foreground",
        "visible",
    ] {
        assert!(r["windows"][0].get(key).is_some(), "{key} missing: {r}");
    }
    fake.add_window(FakeWindow::new("Editor 2", Rect::new(10, 10, 100, 100)));
    let r = call(
        &client,
        "app_window",
        json!({ "action": "maximize", "titleMatch": "editor" }),
    )
    .await;
    assert_eq!(code(&r), "AMBIGUOUS_WINDOW", "{}", text(&r));
    assert!(text(&r).contains("app_window { \"action\": \"list\" }"));

    // Clipboard: the 8000/4000 preview.
    let long = "x".repeat(9000);
    ok(&call(
        &client,
        "clipboard",
        json!({ "action": "set", "text": long }),
    )
    .await);
    let r = call(&client, "clipboard", json!({ "action": "get" })).await;
    let v = ok(&r);
    assert_eq!(v["length"], 9000);
    assert_eq!(v["clipboard"].as_str().unwrap().len(), 9000);
    assert!(text(&r).contains("the first 4000"));

    // resume with nothing tripped is a no-op text.
    let r = ok(&call(&client, "computer", json!({ "action": "resume" })).await);
    assert_eq!(r["resumed"], false);
    client.cancel().await.ok();
}
