//! DesktopOS's contract as data, checked against the `desktopos` profile: its 33 tools, their
//! groups, each parameter's name and JSON type, written down here and compared with
//! `tools/list`; and, over an in-process MCP client on a fake desktop in dry-run mode, every
//! mutating tool proven gated (nothing reaches the desktop or the filesystem) and no read
//! refused. The end-to-end tests (crates/cli/tests/e2e/desktopos.rs) drive it on X11.

mod common;

use common::{call, connect, text, type_of};
use deskpilot_backend::FakeDesktop;
use deskpilot_backend::fake::{FakeWindow, element, tree};
use deskpilot_engine::{EngineConfig, MemorySettings};
use deskpilot_types::{Rect, Role, WindowId};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Reads: never refused by the gates.
    Read,
    /// Changes the desktop, a shell, memory or a browser: passes every gate.
    Mutating,
}
use Kind::*;

/// DesktopOS's tools: name, group, kind, and parameters with their JSON types (`enum:` lists the
/// strings, `object:` the required keys). Parameters marked `+` are deskpilot's additions.
#[allow(clippy::type_complexity)]
const TOOLS: &[(&str, &str, Kind, &[(&str, &str)])] = &[
    (
        "shell_exec",
        "shell",
        Mutating,
        &[
            ("command", "string"),
            ("timeout", "integer"),
            ("+session", "string"),
        ],
    ),
    (
        "shell_cd",
        "shell",
        Mutating,
        &[("path", "string"), ("+session", "string")],
    ),
    ("shell_cwd", "shell", Read, &[("+session", "string")]),
    (
        "shell_env_set",
        "shell",
        Mutating,
        &[
            ("name", "string"),
            ("value", "string"),
            ("+session", "string"),
        ],
    ),
    (
        "shell_env_get",
        "shell",
        Read,
        &[("name", "string"), ("+session", "string")],
    ),
    (
        "shell_exec_verified",
        "shell",
        Mutating,
        &[
            ("command", "string"),
            ("expect", "object"),
            ("retries", "integer"),
            ("timeout", "integer"),
            ("autoFix", "boolean"),
            ("+session", "string"),
        ],
    ),
    ("shell_reset", "shell", Mutating, &[("+session", "string")]),
    ("desktop_list_windows", "desktop", Read, &[]),
    (
        "desktop_screenshot",
        "desktop",
        Read,
        &[
            ("format", "enum:png,jpeg"),
            ("maxWidth", "integer"),
            ("includePng", "boolean"),
        ],
    ),
    (
        "desktop_perceive",
        "desktop",
        Read,
        &[
            ("format", "enum:png,jpeg"),
            ("maxWidth", "integer"),
            ("includePng", "boolean"),
        ],
    ),
    ("desktop_cursor", "desktop", Read, &[]),
    (
        "desktop_move",
        "desktop",
        Mutating,
        &[("x", "integer"), ("y", "integer"), ("verify", "boolean")],
    ),
    (
        "desktop_click",
        "desktop",
        Mutating,
        &[
            ("x", "integer"),
            ("y", "integer"),
            ("count", "integer"),
            ("button", "enum:left,right,middle"),
            ("verify", "boolean"),
            ("verifyRegion", "object:x,y,w,h"),
        ],
    ),
    (
        "desktop_type",
        "desktop",
        Mutating,
        &[
            ("text", "string"),
            ("verify", "boolean"),
            ("verifyRegion", "object:x,y,w,h"),
        ],
    ),
    // deskpilot's addition: DesktopOS has no way to type a secret.
    (
        "desktop_type_secret",
        "desktop",
        Mutating,
        &[
            ("secret", "string"),
            ("handle", "integer"),
            ("name", "string"),
        ],
    ),
    (
        "desktop_key",
        "desktop",
        Mutating,
        &[
            ("combo", "string"),
            ("verify", "boolean"),
            ("verifyRegion", "object:x,y,w,h"),
        ],
    ),
    (
        "desktop_scroll",
        "desktop",
        Mutating,
        &[
            ("x", "integer"),
            ("y", "integer"),
            ("delta", "integer"),
            ("verify", "boolean"),
            ("verifyRegion", "object:x,y,w,h"),
        ],
    ),
    // Focus changes what is shown, not any app: a read in deskpilot's safety model (as in
    // every profile), so it is not refused by a dry run.
    (
        "desktop_focus_window",
        "desktop",
        Read,
        &[("handle", "integer"), ("verify", "boolean")],
    ),
    (
        "desktop_elements",
        "elements",
        Read,
        &[("handle", "integer"), ("maxElements", "integer")],
    ),
    (
        "desktop_click_element",
        "elements",
        Mutating,
        &[
            ("name", "string"),
            ("handle", "integer"),
            ("verify", "boolean"),
            ("verifyRegion", "object:x,y,w,h"),
        ],
    ),
    ("memory_recall", "memory", Read, &[("query", "string")]),
    (
        "memory_timeline",
        "memory",
        Read,
        &[("limit", "integer"), ("+since", "integer")],
    ),
    ("memory_stats", "memory", Read, &[]),
    ("memory_clear", "memory", Mutating, &[]),
    (
        "desktop_browser_launch",
        "cdp",
        Mutating,
        &[
            ("url", "string"),
            ("waitMs", "integer"),
            ("headless", "boolean"),
            ("browserPath", "string"),
            ("port", "integer"),
        ],
    ),
    ("desktop_cdp_targets", "cdp", Read, &[]),
    (
        "desktop_cdp_open",
        "cdp",
        Mutating,
        &[
            ("url", "string"),
            ("port", "integer"),
            ("index", "integer"),
            ("title", "string"),
            ("navigate", "boolean"),
        ],
    ),
    (
        "desktop_cdp_elements",
        "cdp",
        Read,
        &[
            ("role", "string"),
            ("limit", "integer"),
            ("session", "string"),
        ],
    ),
    (
        "desktop_cdp_click",
        "cdp",
        Mutating,
        &[
            ("name", "string"),
            ("role", "string"),
            ("session", "string"),
        ],
    ),
    (
        "desktop_cdp_type",
        "cdp",
        Mutating,
        &[
            ("text", "string"),
            ("clear", "boolean"),
            ("target", "string"),
            ("session", "string"),
        ],
    ),
    // deskpilot's addition: DesktopOS has no way to type a secret.
    (
        "desktop_cdp_type_secret",
        "cdp",
        Mutating,
        &[
            ("secret", "string"),
            ("target", "string"),
            ("session", "string"),
        ],
    ),
    (
        "desktop_cdp_eval",
        "cdp",
        Mutating,
        &[
            ("expression", "string"),
            ("session", "string"),
            ("awaitPromise", "boolean"),
        ],
    ),
    (
        "desktop_cdp_screenshot",
        "cdp",
        Read,
        &[("session", "string")],
    ),
    (
        "desktop_cdp_close",
        "cdp",
        Mutating,
        &[("session", "string"), ("killBrowser", "boolean")],
    ),
    (
        "desktop_diagnose",
        "diagnose",
        Read,
        &[
            ("error", "string"),
            ("output", "string"),
            ("command", "string"),
        ],
    ),
];

/// A window "Editor" whose one button is "保存并关闭".
fn desktop() -> (FakeDesktop, WindowId) {
    let fake = FakeDesktop::new(400, 300);
    let w = fake.add_window(FakeWindow {
        pid: 7,
        ..FakeWindow::new("Editor", Rect::new(0, 0, 400, 300))
    });
    fake.set_tree(
        w,
        tree([
            element(Role::Window, "Editor")
                .platform_role("push button")
                .bounds(Rect::new(20, 20, 60, 20)),
            element(Role::Button, "保存并关闭")
                .child_of(0, 1)
                .platform_role("push button")
                .actions(&["click"])
                .bounds(Rect::new(20, 50, 60, 20)),
        ]),
    );
    (fake, w)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_is_desktoposs_table() {
    let (fake, _) = desktop();
    let client = connect("desktopos", EngineConfig::default(), &fake).await;
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 35);
    assert_eq!(TOOLS.len(), 35);
    for (name, _, kind, params) in TOOLS {
        let (t, schema) = common::listed(&tools, name);
        let mut want: Vec<&str> = params
            .iter()
            .map(|(n, _)| n.trim_start_matches('+'))
            .collect();
        want.sort();
        assert_eq!(common::param_names(&schema), want, "{name}: parameters");
        for (p, ty) in *params {
            let p = p.trim_start_matches('+');
            assert_eq!(
                &type_of(&schema, &schema["properties"][p]),
                ty,
                "{name}.{p}"
            );
        }
        assert_eq!(
            common::read_only(t),
            *kind == Read && *name != "desktop_focus_window",
            "{name}: readOnlyHint"
        );
        common::assert_described(t);
    }
    // The groups are DesktopOS's table.
    let groups = deskpilot_mcp::profile("desktopos").unwrap().groups;
    for (name, group, _, _) in TOOLS {
        let (g, _) = groups
            .iter()
            .find(|(_, tools)| tools.contains(name))
            .unwrap_or_else(|| panic!("{name} is in no group"));
        assert_eq!(g, group, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mutating_tool_passes_the_gates_and_no_read_is_refused() {
    let (fake, w) = desktop();
    let dir = std::env::temp_dir().join(format!(
        "deskpilot-desktopos-contract-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let mut config = EngineConfig {
        memory: MemorySettings {
            enabled: true,
            dir: Some(dir.join("memory")),
            ..MemorySettings::default()
        },
        ..EngineConfig::default()
    };
    config.safety.dry_run = true;
    config.safety.action_delay = std::time::Duration::ZERO;
    let client = connect("desktopos", config, &fake).await;
    let touched = dir.join("touched");
    let region = json!({ "x": 0, "y": 0, "w": 100, "h": 100 });
    let calls: &[(&str, Value)] = &[
        (
            "shell_exec",
            json!({ "command": format!("mkdir -p '{}'", touched.display()) }),
        ),
        ("shell_cd", json!({ "path": "/" })),
        ("shell_env_set", json!({ "name": "DP_X", "value": "1" })),
        (
            "shell_exec_verified",
            json!({ "command": format!("mkdir -p '{}'", touched.display()), "expect": { "isDir": touched.to_str().unwrap() } }),
        ),
        ("shell_reset", json!({})),
        ("desktop_move", json!({ "x": 50, "y": 50 })),
        (
            "desktop_click",
            json!({ "x": 50, "y": 50, "verify": true, "verifyRegion": region }),
        ),
        ("desktop_type", json!({ "text": "中文" })),
        ("desktop_key", json!({ "combo": "ctrl+s" })),
        ("desktop_scroll", json!({ "x": 50, "y": 50, "delta": -240 })),
        (
            "desktop_click_element",
            json!({ "handle": w.0, "name": "保存并关闭" }),
        ),
        ("memory_clear", json!({})),
        ("desktop_browser_launch", json!({ "headless": true })),
    ];
    for (tool, args) in calls {
        let r = call(&client, tool, args.clone()).await;
        common::assert_dry_run(tool, &r);
    }
    common::assert_no_input(&fake);
    assert!(!touched.exists(), "a shell command ran in a dry run");
    // Reads answer in a dry run.
    let reads: &[(&str, Value)] = &[
        ("shell_cwd", json!({})),
        ("desktop_list_windows", json!({})),
        (
            "desktop_screenshot",
            json!({ "format": "jpeg", "maxWidth": 200 }),
        ),
        ("desktop_perceive", json!({})),
        ("desktop_cursor", json!({})),
        ("desktop_focus_window", json!({ "handle": w.0 })),
        ("desktop_elements", json!({ "handle": w.0 })),
        ("memory_recall", json!({ "query": "Editor" })),
        ("memory_timeline", json!({ "limit": 5 })),
        ("memory_stats", json!({})),
        ("desktop_cdp_targets", json!({})),
        ("desktop_diagnose", json!({ "error": "Access is denied" })),
    ];
    for (tool, args) in reads {
        let r = call(&client, tool, args.clone()).await;
        assert_ne!(r.is_error, Some(true), "{tool}: {}", text(&r));
        let s = r.structured_content.clone().unwrap_or_default();
        assert_ne!(s["dry_run"], true, "{tool} is a read: {}", text(&r));
    }
    let r = call(&client, "desktop_elements", json!({ "handle": w.0 })).await;
    let s = r.structured_content.unwrap();
    assert_eq!(s["elements"][0]["name"], "保存并关闭");
    assert_eq!(s["elements"][0]["invokable"], true);
    // A handle passed as text is taken; a wrong one is a typed error with a diagnosis.
    let r = call(
        &client,
        "desktop_focus_window",
        json!({ "handle": format!("{}", w.0) }),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let r = call(&client, "desktop_focus_window", json!({ "handle": 12345 })).await;
    assert_eq!(r.is_error, Some(true));
    let s = r.structured_content.clone().unwrap();
    assert_eq!(s["error"]["code"], "WINDOW_NOT_FOUND");
    assert!(s["diagnosis"]["category"].is_string(), "{s}");
    assert!(
        text(&r).contains("desktop_list_windows"),
        "the hint names this profile's tools"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
