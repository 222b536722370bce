//! computer-use-mcp's contract as data, checked against the `computer-use` profile: its 13
//! tools, each parameter's name, JSON type and whether it is required, written down here and
//! compared with `tools/list`; the tree line format golden-tested on a fake window; every
//! mutating tool proven gated (nothing reaches the fake desktop under a dry run or an approval
//! nobody can give); and the errors an agent meets with indexes (stale, unknown, an action the
//! element does not list, two window names that disagree), in this profile's lower-case codes.
//! Everything runs over an in-process MCP client on the fake desktop; the end-to-end tests
//! (crates/cli/tests/e2e/computer_use.rs) drive the same profile on X11.

mod common;

use common::{Client, call, code, ok, quick, text};
use deskpilot_backend::fake::{FakeElement, FakeWindow, element, tree};
use deskpilot_backend::{FakeDesktop, RawElement};
use deskpilot_engine::EngineConfig;
use deskpilot_types::{Rect, Role, WindowId};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Reads: `readOnlyHint`, never refused by the gates.
    Read,
    /// Brings a window to the front: not read-only, yet a read in deskpilot's safety model
    /// (focus changes what is shown, not any app), as in every profile.
    Focus,
    /// Acts on an app or starts one: passes every gate.
    Mutating,
}
use Kind::*;

/// `window_id` and `window: {app, id}`: how every window tool names its window.
const WINDOW: &[(&str, &str)] = &[
    ("window_id", "integer"),
    ("window", "object{app:string,id:integer}"),
];

/// computer-use-mcp's tools: name, kind, the parameters besides [`WINDOW`] with their JSON
/// types (`enum:` lists the strings), the required ones, and whether the tool names a window.
#[allow(clippy::type_complexity)]
const TOOLS: &[(&str, Kind, &[(&str, &str)], &[&str], bool)] = &[
    ("list_apps", Read, &[("filter", "string")], &[], false),
    ("list_windows", Read, &[("filter", "string")], &[], false),
    ("get_window", Read, &[], &[], true),
    (
        "launch_app",
        Mutating,
        &[("app", "string"), ("wait_ms", "integer")],
        &["app"],
        false,
    ),
    ("activate_window", Focus, &[], &[], true),
    (
        "get_window_state",
        Read,
        &[
            ("include_screenshot", "boolean"),
            ("include_text", "boolean"),
        ],
        &[],
        true,
    ),
    (
        "click",
        Mutating,
        &[
            ("element_index", "integer"),
            ("x", "number"),
            ("y", "number"),
            ("screenshot_id", "integer"),
            ("click_count", "integer"),
            ("mouse_button", "enum:left,right,middle"),
        ],
        &[],
        true,
    ),
    (
        "perform_secondary_action",
        Mutating,
        &[
            ("element_index", "integer"),
            ("action", "string"),
            ("value", "string"),
        ],
        &["element_index", "action"],
        true,
    ),
    (
        "set_value",
        Mutating,
        &[("element_index", "integer"), ("value", "string")],
        &["element_index", "value"],
        true,
    ),
    (
        "scroll",
        Mutating,
        &[
            ("element_index", "integer"),
            ("x", "number"),
            ("y", "number"),
            ("screenshot_id", "integer"),
            ("direction", "enum:up,down,left,right"),
            ("amount", "integer"),
        ],
        &[],
        true,
    ),
    (
        "drag",
        Mutating,
        &[
            ("from_x", "number"),
            ("from_y", "number"),
            ("from_element_index", "integer"),
            ("to_x", "number"),
            ("to_y", "number"),
            ("to_element_index", "integer"),
            ("screenshot_id", "integer"),
            ("mouse_button", "enum:left,right,middle"),
        ],
        &[],
        true,
    ),
    ("press_key", Mutating, &[("key", "string")], &["key"], true),
    (
        "type_text",
        Mutating,
        &[("text", "string"), ("element_index", "integer")],
        &["text"],
        true,
    ),
    // deskpilot's addition: computer-use-mcp has no way to type a secret.
    (
        "type_secret",
        Mutating,
        &[("name", "string"), ("element_index", "integer")],
        &["name"],
        true,
    ),
];

/// One element of the form: 120×20 at (20, `y`), with its platform role name.
fn at(role: Role, name: &str, y: i32) -> FakeElement {
    element(role, name)
        .platform_role(&role.as_str().to_lowercase())
        .bounds(Rect::new(20, y, 120, 20))
}

/// A form with every flag, a disabled button, an off-screen group whose check box is still
/// shown, a nested combo box, an off-screen button and a list item.
fn form() -> Vec<RawElement> {
    vec![
        at(Role::Window, "Form", 0).bounds(Rect::new(0, 0, 400, 300)),
        at(Role::Edit, "Name", 30)
            .child_of(0, 1)
            .value("Ada \"L\"")
            .states(|s| {
                s.editable = true;
                s.focusable = true;
                s.focused = true;
                s.required = true;
            }),
        at(Role::Button, "OK", 60)
            .child_of(0, 1)
            .actions(&["click"])
            .states(|s| s.focusable = true),
        at(Role::Button, "Apply", 90)
            .child_of(0, 1)
            .actions(&["click"])
            .states(|s| s.enabled = false),
        at(Role::Group, "Options", 400)
            .child_of(0, 1)
            .states(|s| s.onscreen = false),
        at(Role::CheckBox, "Wrap", 120)
            .child_of(4, 2)
            .actions(&["click"]),
        at(Role::Group, "Font", 150).child_of(0, 1),
        at(Role::ComboBox, "Size", 150)
            .child_of(6, 2)
            .actions(&["press"])
            .value("12")
            .states(|s| s.expandable = true),
        at(Role::Button, "Hidden", 500)
            .child_of(6, 2)
            .actions(&["click"])
            .states(|s| s.onscreen = false),
        at(Role::ListItem, "Recent", 180).child_of(0, 1),
    ]
    .into_iter()
    .map(FakeElement::build)
    .collect()
}

/// The tree lines `get_window_state` prints for [`form`] (after its `Window …` line).
const FORM_LINES: &str = "0 Window \"Form\"
\t1 Edit \"Name\" value=\"Ada \\\"L\\\"\" focusable FOCUSED required actions=[SetValue]
\t2 Button \"OK\" focusable actions=[Invoke, Focus]
\t3 Button \"Apply\" disabled
\t4 CheckBox \"Wrap\" value=\"Off\" actions=[Toggle]
\t5 Pane \"Font\"
\t\t6 ComboBox \"Size\" value=\"12\" actions=[Invoke, Expand]
\t7 ListItem \"Recent\" actions=[Select]";

fn desktop() -> (FakeDesktop, WindowId) {
    let fake = FakeDesktop::new(400, 300);
    let w = fake.add_window(FakeWindow {
        pid: 7,
        process: "formapp".into(),
        ..FakeWindow::new("Form", Rect::new(0, 0, 400, 300))
    });
    fake.set_tree(w, tree(form()));
    (fake, w)
}

async fn connect(config: EngineConfig, fake: &FakeDesktop) -> Client {
    common::connect("computer-use", config, fake).await
}

/// A property's JSON type: `enum:a,b` for string enums, `object{key:type,…}` for objects.
fn type_of(prop: &Value) -> String {
    if let Some(e) = prop.get("enum").and_then(Value::as_array) {
        let names: Vec<&str> = e.iter().filter_map(Value::as_str).collect();
        return format!("enum:{}", names.join(","));
    }
    let ty = prop["type"].as_str().unwrap_or("?");
    if ty == "object" {
        let keys: Vec<String> = prop["properties"]
            .as_object()
            .map(|p| {
                p.iter()
                    .map(|(k, v)| format!("{k}:{}", type_of(v)))
                    .collect()
            })
            .unwrap_or_default();
        return format!("object{{{}}}", keys.join(","));
    }
    ty.to_string()
}

/// What a window tool's schema says about naming the window, in one string.
fn window_wording(schema: &Value) -> String {
    ["window_id", "window"]
        .iter()
        .filter_map(|p| schema["properties"][p]["description"].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_is_computer_use_mcps_table() {
    let (fake, _) = desktop();
    let client = connect(quick(), &fake).await;
    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    names.sort();
    let mut want: Vec<&str> = TOOLS.iter().map(|(n, ..)| *n).collect();
    want.sort();
    assert_eq!(names, want);
    assert_eq!(
        want,
        [
            "activate_window",
            "click",
            "drag",
            "get_window",
            "get_window_state",
            "launch_app",
            "list_apps",
            "list_windows",
            "perform_secondary_action",
            "press_key",
            "scroll",
            "set_value",
            "type_secret",
            "type_text",
        ]
    );
    for (name, kind, params, required, windowed) in TOOLS {
        let (t, schema) = common::listed(&tools, name);
        let all: Vec<(&str, &str)> = params
            .iter()
            .chain(if *windowed { WINDOW } else { &[] })
            .copied()
            .collect();
        let mut want: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
        want.sort();
        assert_eq!(common::param_names(&schema), want, "{name}: parameters");
        for (p, ty) in &all {
            assert_eq!(&type_of(&schema["properties"][*p]), ty, "{name}.{p}");
        }
        let mut listed: Vec<&str> = schema["required"]
            .as_array()
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        listed.sort();
        let mut required = required.to_vec();
        required.sort();
        assert_eq!(listed, required, "{name}: required");
        // Neither window_id nor window is required by the schema (either will do): the
        // description says one of them is.
        if *windowed {
            assert!(
                window_wording(&schema).contains("one of window_id/window is required"),
                "{name} does not say that one of window_id / window is required: {}",
                window_wording(&schema)
            );
        }
        assert_eq!(common::read_only(t), *kind == Read, "{name}: readOnlyHint");
        common::assert_described(t);
    }
    // The server answers what the profile exports (and the checked-in snapshot holds).
    let exported = serde_json::to_value(deskpilot_mcp::computer_use_tools_list()).unwrap();
    let mut served = serde_json::to_value(&tools).unwrap();
    let by_name = |v: &mut Value| {
        if let Some(a) = v.as_array_mut() {
            a.sort_by_key(|t| t["name"].as_str().unwrap_or("").to_string());
        }
    };
    let mut exported = exported;
    by_name(&mut exported);
    by_name(&mut served);
    assert_eq!(served, exported);
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tree_prints_computer_use_mcps_lines() {
    let (fake, w) = desktop();
    let client = connect(quick(), &fake).await;
    let r = call(
        &client,
        "get_window_state",
        json!({ "window_id": w.0, "include_screenshot": false }),
    )
    .await;
    let s = ok(&r);
    assert_eq!(
        text(&r),
        format!(
            "Window {} \"Form\" (formapp, pid 7) 400x300+0+0 active\n{FORM_LINES}",
            w.0
        )
    );
    assert!(s.get("screenshot").is_none(), "{s}");
    assert_eq!(r.content.len(), 1, "no image without include_screenshot");
    // The structured elements are the lines: index, depth among shown ancestors, flags, actions.
    let elements = s["elements"].as_array().unwrap();
    assert_eq!(elements.len(), 8);
    let summary: Vec<(u64, u64, &str, &str)> = elements
        .iter()
        .map(|e| {
            (
                e["index"].as_u64().unwrap(),
                e["depth"].as_u64().unwrap(),
                e["control_type"].as_str().unwrap(),
                e["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (0, 0, "Window", "Form"),
            (1, 1, "Edit", "Name"),
            (2, 1, "Button", "OK"),
            (3, 1, "Button", "Apply"),
            (4, 1, "CheckBox", "Wrap"),
            (5, 1, "Pane", "Font"),
            (6, 2, "ComboBox", "Size"),
            (7, 1, "ListItem", "Recent"),
        ]
    );
    assert_eq!(elements[1]["required"], true);
    assert_eq!(elements[1]["focused"], true);
    assert_eq!(elements[1]["value"], "Ada \"L\"");
    assert_eq!(elements[3]["enabled"], false);
    assert_eq!(elements[3]["actions"], json!([]));
    assert_eq!(elements[4]["value"], "Off");
    assert_eq!(elements[6]["actions"], json!(["Invoke", "Expand"]));
    // window: {app, id} names the same window; the same tree.
    let r = call(
        &client,
        "get_window_state",
        json!({ "window": { "app": "formapp", "id": w.0 }, "include_screenshot": false }),
    )
    .await;
    assert!(text(&r).ends_with(FORM_LINES), "{}", text(&r));
    // include_text false: the window line and the screenshot, no tree.
    let r = call(
        &client,
        "get_window_state",
        json!({ "window_id": w.0, "include_text": false }),
    )
    .await;
    let s = ok(&r);
    assert!(!text(&r).contains("0 Window \"Form\""), "{}", text(&r));
    assert!(s["screenshot"]["screenshot_id"].is_u64(), "{s}");
    assert!(s.get("elements").is_none(), "{s}");
    client.cancel().await.ok();
}

/// Each mutating tool's smallest valid call on the [`form`] window, with the window
/// screenshot `shot` x/y are read in.
fn mutations(w: WindowId, shot: &Value) -> Vec<(&'static str, Value)> {
    let id = w.0;
    vec![
        ("click", json!({ "window_id": id, "element_index": 2 })),
        (
            "click",
            json!({ "window": { "app": "formapp", "id": id }, "x": 60, "y": 70, "screenshot_id": shot }),
        ),
        (
            "perform_secondary_action",
            json!({ "window_id": id, "element_index": 4, "action": "Toggle" }),
        ),
        (
            "set_value",
            json!({ "window_id": id, "element_index": 1, "value": "Grace" }),
        ),
        ("scroll", json!({ "window_id": id, "element_index": 7 })),
        ("scroll", json!({ "window_id": id, "direction": "up" })),
        (
            "drag",
            json!({ "window_id": id, "from_x": 30, "from_y": 40, "to_x": 200, "to_y": 200, "screenshot_id": shot }),
        ),
        (
            "drag",
            json!({ "window_id": id, "from_element_index": 2, "to_element_index": 7 }),
        ),
        ("press_key", json!({ "window_id": id, "key": "ctrl+s" })),
        (
            "type_text",
            json!({ "window_id": id, "text": "héllo 你好😀", "element_index": 1 }),
        ),
        (
            "launch_app",
            json!({ "app": "deskpilot-contract-no-such-program", "wait_ms": 0 }),
        ),
    ]
}

/// Nothing reached the fake desktop: no pointer, key or text input, and the form's state is
/// what it was (nothing toggled, no value set, no window added).
async fn nothing_happened(client: &Client, fake: &FakeDesktop, w: WindowId) {
    assert!(
        fake.input_log().is_empty(),
        "input reached the desktop: {:?}",
        fake.input_log()
    );
    common::assert_no_input(fake);
    let r = call(
        client,
        "get_window_state",
        json!({ "window_id": w.0, "include_screenshot": false }),
    )
    .await;
    assert!(text(&r).ends_with(FORM_LINES), "{}", text(&r));
    // The fake's accessibility actions flip these; the lines do not show them all.
    for e in ok(&r)["elements"].as_array().unwrap() {
        for state in ["checked", "expanded", "selected"] {
            assert_eq!(e[state], false, "{state}: {e}");
        }
    }
    let r = ok(&call(client, "list_windows", json!({})).await);
    assert_eq!(r["windows"].as_array().unwrap().len(), 1, "{r}");
}

/// The screenshot id `get_window_state` gave for `w` (recording the window's state).
async fn state(client: &Client, w: WindowId) -> Value {
    let s = ok(&call(client, "get_window_state", json!({ "window_id": w.0 })).await);
    assert!(s["screenshot"]["screenshot_id"].is_u64(), "{s}");
    s["screenshot"]["screenshot_id"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mutating_tool_stops_at_the_dry_run() {
    let (fake, w) = desktop();
    let mut config = quick();
    config.safety.dry_run = true;
    let client = connect(config, &fake).await;
    let shot = state(&client, w).await;
    for (tool, args) in mutations(w, &shot) {
        let r = call(&client, tool, args.clone()).await;
        common::assert_dry_run(&format!("{tool} {args}"), &r);
        assert_eq!(r.structured_content.unwrap()["effect"], "refused", "{tool}");
    }
    nothing_happened(&client, &fake, w).await;
    // Bringing a window to the front is answered in a dry run: it changes what is shown, not
    // any app (deskpilot's rule in every profile), and sends no input.
    let r = call(&client, "activate_window", json!({ "window_id": w.0 })).await;
    let s = ok(&r);
    assert_ne!(s["dry_run"], true, "{}", text(&r));
    assert!(text(&r).starts_with("Activated window"), "{}", text(&r));
    // Reads answer in a dry run.
    for (tool, args) in [
        ("list_apps", json!({})),
        ("list_windows", json!({ "filter": "Form" })),
        ("get_window", json!({ "window_id": w.0 })),
        ("get_window_state", json!({ "window_id": w.0 })),
    ] {
        let r = call(&client, tool, args).await;
        let s = ok(&r);
        assert_ne!(s["dry_run"], true, "{tool} is a read: {}", text(&r));
    }
    nothing_happened(&client, &fake, w).await;
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mutating_tool_waits_for_an_approval_nobody_can_give() {
    let (fake, w) = desktop();
    let mut config = quick();
    config.safety.require_approval = true;
    let client = connect(config, &fake).await;
    let shot = state(&client, w).await;
    for (tool, args) in mutations(w, &shot) {
        let r = call(&client, tool, args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{tool} {args}: {}", text(&r));
        assert_eq!(code(&r), "approval_unavailable", "{tool}: {}", text(&r));
        let s = r.structured_content.clone().unwrap();
        assert_eq!(s["effect"], "refused", "{tool}");
        assert!(
            text(&r).starts_with("approval_unavailable: "),
            "{tool}: {}",
            text(&r)
        );
    }
    // Focus asks nobody (see the dry run above).
    ok(&call(&client, "activate_window", json!({ "window_id": w.0 })).await);
    nothing_happened(&client, &fake, w).await;
    client.cancel().await.ok();
}

/// The gate tests above are not vacuous: without a gate, each of the same calls reaches the
/// fake desktop — input, or an element's state the next state shows. Not the launch, which
/// would start a program, nor set_value, which the fake's accessibility cannot do (nor focus
/// an element, so text is typed without element_index).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_gate_the_same_calls_act() {
    let (fake, w) = desktop();
    let client = connect(quick(), &fake).await;
    let shot = state(&client, w).await;
    for (tool, mut args) in mutations(w, &shot) {
        if matches!(tool, "launch_app" | "set_value") {
            continue;
        }
        if tool == "type_text" {
            args.as_object_mut().unwrap().remove("element_index");
        }
        let before = fake.input_log().len();
        let tree = call(
            &client,
            "get_window_state",
            json!({ "window_id": w.0, "include_screenshot": false }),
        )
        .await;
        let r = call(&client, tool, args.clone()).await;
        let s = ok(&r);
        assert_ne!(s["dry_run"], true, "{tool}");
        let after = call(
            &client,
            "get_window_state",
            json!({ "window_id": w.0, "include_screenshot": false }),
        )
        .await;
        assert!(
            fake.input_log().len() > before || ok(&after)["elements"] != ok(&tree)["elements"],
            "{tool} {args} did nothing: {}",
            text(&r)
        );
    }
    client.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn indexes_and_windows_are_refused_in_computer_use_mcps_words() {
    let (fake, w) = desktop();
    let client = connect(quick(), &fake).await;
    let id = w.0;

    // An index before any state of the window: say to read it first.
    let r = call(
        &client,
        "click",
        json!({ "window_id": id, "element_index": 2 }),
    )
    .await;
    assert_eq!(code(&r), "element_not_found", "{}", text(&r));
    assert!(
        text(&r).contains("get_window_state"),
        "names the tool to call: {}",
        text(&r)
    );
    state(&client, w).await;

    // An index beyond the latest state: the valid range.
    let r = call(
        &client,
        "click",
        json!({ "window_id": id, "element_index": 8 }),
    )
    .await;
    assert_eq!(code(&r), "element_not_found", "{}", text(&r));
    assert!(
        text(&r).contains("element_index 8") && text(&r).contains("indexes 0 to 7"),
        "{}",
        text(&r)
    );

    // An action the element does not list: refused with the ones it does.
    let r = call(
        &client,
        "perform_secondary_action",
        json!({ "window_id": id, "element_index": 2, "action": "Toggle" }),
    )
    .await;
    assert_eq!(code(&r), "action_unsupported", "{}", text(&r));
    assert!(
        text(&r).contains("element_index 2") && text(&r).contains("[Invoke, Focus]"),
        "lists the valid actions: {}",
        text(&r)
    );
    // A disabled element lists none.
    let r = call(
        &client,
        "perform_secondary_action",
        json!({ "window_id": id, "element_index": 3, "action": "Invoke" }),
    )
    .await;
    assert_eq!(code(&r), "action_unsupported", "{}", text(&r));
    assert!(text(&r).contains("offers []"), "{}", text(&r));

    // window_id and window naming different windows; a window of another app; no window.
    let r = call(
        &client,
        "get_window_state",
        json!({ "window_id": id, "window": { "app": "formapp", "id": id + 1 } }),
    )
    .await;
    assert_eq!(code(&r), "invalid_argument", "{}", text(&r));
    assert!(text(&r).contains("name different windows"), "{}", text(&r));
    let r = call(
        &client,
        "click",
        json!({ "window_id": id, "window": { "id": id + 1 }, "element_index": 2 }),
    )
    .await;
    assert_eq!(code(&r), "invalid_argument", "{}", text(&r));
    let r = call(
        &client,
        "get_window",
        json!({ "window": { "app": "mousepad", "id": id } }),
    )
    .await;
    assert_eq!(code(&r), "invalid_argument", "{}", text(&r));
    let r = call(&client, "press_key", json!({ "key": "Return" })).await;
    assert_eq!(code(&r), "invalid_argument", "{}", text(&r));
    assert!(text(&r).contains("window_id"), "{}", text(&r));
    // The same window named both ways is taken.
    ok(&call(
        &client,
        "get_window",
        json!({ "window_id": id, "window": { "app": "formapp", "id": id } }),
    )
    .await);

    // The window's structure changes (a line appears above "Recent"): an index from before
    // is refused as stale, never re-resolved by position, and nothing is clicked.
    let mut changed = form();
    changed.insert(9, at(Role::Text, "Saved", 170).child_of(0, 1).build());
    fake.set_tree(w, tree(changed));
    let r = call(
        &client,
        "click",
        json!({ "window_id": id, "element_index": 7 }),
    )
    .await;
    assert_eq!(code(&r), "stale_element", "{}", text(&r));
    assert!(
        text(&r).contains("element_index 7") && text(&r).contains("structure changed"),
        "{}",
        text(&r)
    );
    assert!(
        text(&r).contains("get_window_state"),
        "the hint names the tool to call: {}",
        text(&r)
    );
    assert_eq!(r.structured_content.unwrap()["effect"], "refused");
    assert!(fake.input_log().is_empty(), "{:?}", fake.input_log());
    // Every index tool refuses the same way.
    let r = call(
        &client,
        "set_value",
        json!({ "window_id": id, "element_index": 1, "value": "x" }),
    )
    .await;
    assert_eq!(code(&r), "stale_element", "{}", text(&r));
    // The new state indexes the new line; its indexes work.
    let r = call(
        &client,
        "get_window_state",
        json!({ "window_id": id, "include_screenshot": false }),
    )
    .await;
    assert!(
        text(&r).contains("\t7 Text \"Saved\"\n\t8 ListItem \"Recent\" actions=[Select]"),
        "{}",
        text(&r)
    );
    let r = call(
        &client,
        "perform_secondary_action",
        json!({ "window_id": id, "element_index": 4, "action": "toggle" }),
    )
    .await;
    ok(&r);
    let r = call(
        &client,
        "get_window_state",
        json!({ "window_id": id, "include_screenshot": false }),
    )
    .await;
    assert!(
        text(&r).contains("\t4 CheckBox \"Wrap\" value=\"On\" actions=[Toggle]"),
        "{}",
        text(&r)
    );
    client.cancel().await.ok();
}
