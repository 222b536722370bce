//! The `dsh` profile (dsh-computer-use) through the MCP client on the virtual desktop: dsh-computer-use's three
//! Quick-start flows on Linux apps, a path refused after the layout changed, the screenshot
//! envelope (cursor, foreground, outline, skill hint, savedPath), and every Troubleshooting
//! code that can occur on Linux, each with its hint.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::ElicitationAction;
use serde_json::{Value, json};

use crate::elements::Fixture;
use crate::guard::{Human, xdotool_escape};
use crate::harness::{self, Launched, error_code, launch, ok, serve, serve_with, text, wait_for};
use crate::safety::ConfigFile;

const DSH: &[&str] = &["--profile", "dsh"];

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("deskpilot-dsh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    path
}

/// The `_NET_WM_STATE` atoms of an X window, read with xprop.
fn wm_state(display: &str, hwnd: u64) -> String {
    let out = std::process::Command::new("xprop")
        .args(["-id", &hwnd.to_string(), "_NET_WM_STATE"])
        .env("DISPLAY", display)
        .output()
        .expect("xprop");
    String::from_utf8_lossy(&out.stdout).to_string()
}

/// The hint line of an error result.
fn hint(r: &rmcp::model::CallToolResult) -> String {
    r.structured_content.as_ref().unwrap()["error"]["hint"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_start_1_a_note_written_in_mousepad_is_saved_byte_exact() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), DSH, &[]).await;
    let file = scratch("meeting-note.txt");
    let note = "Meeting note 会议纪要: ship dsh on Linux ✓ 😀";

    // 1. launch: the new window's hwnd.
    let r = server
        .call(
            "app_window",
            json!({ "action": "launch", "command": "mousepad", "args": ["--disable-server", file.to_str().unwrap()] }),
        )
        .await;
    let launched = ok(&r).clone();
    let _app = Launched(launched["pid"].as_u64().unwrap() as u32);
    let hwnd = launched["hwnd"].as_u64().expect("a window appeared");
    assert_eq!(launched["window"]["hwnd"], hwnd, "{}", text(&r));
    ok(&server
        .call("app_window", json!({ "action": "focus", "hwnd": hwnd }))
        .await);
    // The editor must be ready for keys: wait until its tree has the text view.
    wait_for(Duration::from_secs(15), "mousepad's editor", || async {
        let r = server
            .call("ui_element", json!({ "action": "tree", "hwnd": hwnd }))
            .await;
        (r.is_error != Some(true) && text(&r).contains("Text")).then_some(())
    })
    .await;

    // 2. type with observe: UTF-16 units counted, a fresh screenshot appended.
    let r = server
        .call(
            "computer",
            json!({ "action": "type", "text": note, "observe": true }),
        )
        .await;
    let typed = ok(&r);
    assert_eq!(typed["chars"], note.encode_utf16().count(), "{}", text(&r));
    assert!(
        r.content.iter().any(|c| c.as_image().is_some()),
        "observe appends an image"
    );
    ok(&server
        .call(
            "computer",
            json!({ "action": "key", "keys": ["ctrl", "s"] }),
        )
        .await);
    wait_for(Duration::from_secs(10), "mousepad to save", || async {
        std::fs::read_to_string(&file)
            .ok()
            .filter(|s| s.trim_end_matches('\n') == note)
    })
    .await;

    // 3. screenshot: the envelope names the mapping, the cursor, the foreground window, the
    //    outline and the built-in mousepad skill.
    let r = server
        .call("computer", json!({ "action": "screenshot" }))
        .await;
    let env = ok(&r).clone();
    let t = text(&r);
    assert!(t.contains("Coordinate mapping: physical = ("), "{t}");
    assert!(t.contains("Cursor: physical ("), "{t}");
    assert_eq!(env["foreground"]["hwnd"], hwnd, "{t}");
    assert!(
        t.contains("UI outline (summary, source: accessibility"),
        "{t}"
    );
    assert!(
        t.contains("App skill available for Mousepad"),
        "the skill hint: {t}"
    );
    assert_eq!(env["skillHint"]["app"], "Mousepad");
    assert!(env["view"]["scale"].as_f64().unwrap() > 0.0);
    assert!(env["cursor"]["x"].is_i64());
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_start_3_a_window_found_by_filter_is_maximized() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), DSH, &[]).await;
    let first = Fixture::start(desktop, "会议纪要 dsh window");
    first.saw("ready").await;
    ok(&server
        .call(
            "computer",
            json!({ "action": "screenshot", "uiSummary": "none" }),
        )
        .await);
    let listing = wait_for(
        Duration::from_secs(20),
        "the window in the list",
        || async {
            let r = server
                .call(
                    "app_window",
                    json!({ "action": "list", "filter": "会议纪要" }),
                )
                .await;
            let v = ok(&r).clone();
            (v["count"] == 1).then_some(v)
        },
    )
    .await;
    let w = &listing["windows"][0];
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
        assert!(w.get(key).is_some(), "{key} missing in {w}");
    }
    let hwnd = w["hwnd"].as_u64().unwrap();
    assert!(!wm_state(desktop.display(), hwnd).contains("MAXIMIZED"));
    let r = server
        .call("app_window", json!({ "action": "maximize", "hwnd": hwnd }))
        .await;
    let v = ok(&r);
    assert_eq!(v["result"]["maximized"], true, "{}", text(&r));
    assert_eq!(v["effect"], "confirmed");
    let state = wm_state(desktop.display(), hwnd);
    assert!(
        state.contains("_NET_WM_STATE_MAXIMIZED_VERT")
            && state.contains("_NET_WM_STATE_MAXIMIZED_HORZ"),
        "{state}"
    );
    let r = server
        .call(
            "computer",
            json!({ "action": "screenshot", "hwnd": hwnd, "uiSummary": "none" }),
        )
        .await;
    let shot = ok(&r);
    assert_eq!(shot["window"]["maximized"], true);

    // A titleMatch that matches two windows names the candidates.
    let twin = Fixture::start(desktop, "会议纪要 dsh twin");
    twin.saw("ready").await;
    wait_for(Duration::from_secs(20), "both windows", || async {
        let r = server
            .call(
                "app_window",
                json!({ "action": "list", "filter": "会议纪要" }),
            )
            .await;
        (ok(&r)["count"] == 2).then_some(())
    })
    .await;
    let r = server
        .call(
            "app_window",
            json!({ "action": "restore", "titleMatch": "会议纪要" }),
        )
        .await;
    assert_eq!(error_code(&r), "AMBIGUOUS_WINDOW", "{}", text(&r));
    assert!(text(&r).contains("dsh twin"), "{}", text(&r));
    assert!(hint(&r).contains("hwnd from app_window"), "{}", hint(&r));
    server.finish().await;
}

/// The path of the first line of a `tree` text holding `needle`.
fn path_of(tree: &str, needle: &str) -> String {
    let line = tree
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in:\n{tree}"));
    line.rsplit("path=").next().unwrap().trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quick_start_find_by_chinese_description_then_invoke_by_path_and_stale_paths_are_refused() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let title = "deskpilot dsh fixture";
    let fixture = Fixture::start(desktop, title);
    fixture.saw("ready").await;
    let server = serve(Some(desktop), DSH, &[]).await;
    let listing = wait_for(Duration::from_secs(20), "the fixture", || async {
        let r = server
            .call("app_window", json!({ "action": "list", "filter": title }))
            .await;
        let v = ok(&r).clone();
        (v["count"] == 1).then_some(v)
    })
    .await;
    let hwnd = listing["windows"][0]["hwnd"].as_u64().unwrap();
    ok(&server
        .call("app_window", json!({ "action": "focus", "hwnd": hwnd }))
        .await);

    // find by a Chinese description: ranked, with paths, drawn on a screenshot.
    let r = server
        .call(
            "ui_element",
            json!({ "action": "find", "description": "保存并关闭按钮", "hwnd": hwnd, "limit": 3 }),
        )
        .await;
    let found = ok(&r).clone();
    let best = &found["candidates"][0];
    assert_eq!(
        (best["role"].as_str(), best["name"].as_str()),
        (Some("Button"), Some("保存并关闭")),
        "{}",
        text(&r)
    );
    assert!(best["score"].as_f64().unwrap() > 0.0 && !best["why"].as_str().unwrap().is_empty());
    assert!(
        r.content.iter().any(|c| c.as_image().is_some()),
        "annotated"
    );
    let path = best["path"].as_str().unwrap().to_string();
    assert!(text(&r).contains(&format!("path={path}")), "{}", text(&r));
    let r = server
        .call("ui_element", json!({ "action": "invoke", "path": path }))
        .await;
    assert_eq!(ok(&r)["path"], path, "{}", text(&r));
    fixture.saw("clicked 保存并关闭").await;

    // The tree: every line ends in path=.
    let r = server
        .call("ui_element", json!({ "action": "tree", "hwnd": hwnd }))
        .await;
    let tree = text(&r);
    let lines: Vec<&str> = tree
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with("Note: "))
        .collect();
    assert!(lines.len() > 10, "{tree}");
    assert!(lines.iter().all(|l| l.contains(" path=")), "{tree}");
    let check = path_of(&tree, "CheckBox \"Enable logging\"");
    let combo = path_of(&tree, "ComboBox");
    let label = path_of(&tree, "Text \"Name\"");

    // A label has no invoke pattern.
    let r = server
        .call(
            "ui_element",
            json!({ "action": "invoke", "hwnd": hwnd, "path": label }),
        )
        .await;
    assert_eq!(error_code(&r), "PATTERN_UNSUPPORTED", "{}", text(&r));
    assert!(
        hint(&r).contains("ui_element { \"action\": \"tree\" }"),
        "{}",
        hint(&r)
    );

    // Checking the box shows a label before the combo box: the combo's old path now holds
    // the label, and an expand at that path is refused — the popup never opens.
    ok(&server
        .call(
            "ui_element",
            json!({ "action": "invoke", "hwnd": hwnd, "path": check }),
        )
        .await);
    fixture.saw("toggled Enable logging on").await;
    // Wait for the new layout through the system's own AT-SPI stack, not through deskpilot
    // (a tree read would hand out fresh paths; an expand retried until refused would open
    // the popup whenever it ran before the label appeared).
    harness::probe_until(
        desktop,
        &["find", &fixture.pid().to_string(), "label", "Logging is on"],
    )
    .await;
    let r = server
        .call(
            "ui_element",
            json!({ "action": "expand", "hwnd": hwnd, "path": combo }),
        )
        .await;
    assert_eq!(error_code(&r), "ELEMENT_NOT_FOUND", "{}", text(&r));
    assert!(
        text(&r).contains("the layout changed") && text(&r).contains("ComboBox"),
        "{}",
        text(&r)
    );
    assert!(hint(&r).contains("fresh path"), "{}", hint(&r));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!fixture.has("popup shown"), "a neighbour was acted on");
    // A path that leads nowhere.
    let r = server
        .call(
            "ui_element",
            json!({ "action": "focus", "hwnd": hwnd, "path": "0/99/3" }),
        )
        .await;
    assert_eq!(error_code(&r), "ELEMENT_NOT_FOUND", "{}", text(&r));
    // A fresh tree gives the combo's new path, and it works.
    let r = server
        .call("ui_element", json!({ "action": "tree", "hwnd": hwnd }))
        .await;
    let combo_now = path_of(&text(&r), "ComboBox");
    assert_ne!(combo_now, combo);
    ok(&server
        .call(
            "ui_element",
            json!({ "action": "expand", "hwnd": hwnd, "path": combo_now }),
        )
        .await);
    fixture.saw("popup shown").await;
    ok(&server
        .call("computer", json!({ "action": "key", "keys": ["escape"] }))
        .await);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn troubleshooting_codes_that_can_occur_on_linux_carry_their_hints() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;

    // No desktop at all: the host cannot start.
    let server = serve(None, &["--profile", "dsh"], &[]).await;
    let r = server
        .call("computer", json!({ "action": "screenshot" }))
        .await;
    assert_eq!(error_code(&r), "BACKEND_START_FAILED", "{}", text(&r));
    assert!(hint(&r).contains("--virtual-display"), "{}", hint(&r));
    server.finish().await;

    let server = serve(Some(desktop), DSH, &[]).await;
    // A coordinate action before any screenshot.
    let r = server
        .call("computer", json!({ "action": "click", "x": 10, "y": 10 }))
        .await;
    assert_eq!(error_code(&r), "NO_REFERENCE_SCREENSHOT", "{}", text(&r));
    assert!(hint(&r).contains("computer { \"action\": \"screenshot\" }"));

    // Pinned to a window that then moved, then went away.
    let mut term = launch(
        desktop,
        "xterm",
        &["-T", "deskpilot dsh pinned", "-geometry", "40x8+100+100"],
    );
    let hwnd = wait_for(Duration::from_secs(20), "the xterm", || async {
        let r = server
            .call(
                "app_window",
                json!({ "action": "list", "filter": "dsh pinned" }),
            )
            .await;
        ok(&r)["windows"][0]["hwnd"].as_u64()
    })
    .await;
    ok(&server
        .call(
            "computer",
            json!({ "action": "screenshot", "hwnd": hwnd, "uiSummary": "none" }),
        )
        .await);
    let where_now = || async {
        let r = server
            .call(
                "app_window",
                json!({ "action": "list", "filter": "dsh pinned" }),
            )
            .await;
        ok(&r)["windows"][0]["clientBounds"].clone()
    };
    let before = where_now().await;
    let out = std::process::Command::new("xdotool")
        .args(["windowmove", &hwnd.to_string(), "300", "260"])
        .env("DISPLAY", desktop.display())
        .output()
        .expect("xdotool");
    assert!(out.status.success());
    // The window manager moves it when it gets to it: a click before that lands, rightly.
    wait_for(
        Duration::from_secs(10),
        "the window manager to move it",
        || async {
            let now = where_now().await;
            (now["x"] != before["x"] || now["y"] != before["y"]).then_some(())
        },
    )
    .await;
    let r = wait_for(Duration::from_secs(5), "the move to show", || async {
        let r = server
            .call("computer", json!({ "action": "click", "x": 20, "y": 20 }))
            .await;
        (error_code(&r) == "TARGET_WINDOW_MOVED").then_some(r)
    })
    .await;
    assert!(hint(&r).contains("Take a fresh screenshot"), "{}", hint(&r));
    let _ = term.0.kill();
    let _ = term.0.wait();
    let r = wait_for(Duration::from_secs(5), "the window to go", || async {
        let r = server
            .call("computer", json!({ "action": "click", "x": 20, "y": 20 }))
            .await;
        (error_code(&r) == "TARGET_WINDOW_GONE").then_some(r)
    })
    .await;
    assert!(hint(&r).contains("Nothing was performed"), "{}", hint(&r));
    // The X server gives a freed client slot to the next client, so an identical xterm started
    // now usually gets the old window's id: the pin then names another process.
    let mut changed = None;
    for _ in 0..5 {
        let again = launch(
            desktop,
            "xterm",
            &["-T", "deskpilot dsh pinned", "-geometry", "40x8+100+100"],
        );
        let id = wait_for(Duration::from_secs(20), "the new xterm", || async {
            let r = server
                .call(
                    "app_window",
                    json!({ "action": "list", "filter": "dsh pinned" }),
                )
                .await;
            ok(&r)["windows"][0]["hwnd"].as_u64()
        })
        .await;
        if id == hwnd {
            let r = server
                .call("computer", json!({ "action": "click", "x": 20, "y": 20 }))
                .await;
            changed = Some((r, again));
            break;
        }
        drop(again);
        wait_for(Duration::from_secs(10), "the other xterm to go", || async {
            let r = server
                .call(
                    "app_window",
                    json!({ "action": "list", "filter": "dsh pinned" }),
                )
                .await;
            (ok(&r)["count"] == 0).then_some(())
        })
        .await;
    }
    let (r, _again) = changed.expect("no new xterm got the old window id in 5 tries");
    assert_eq!(error_code(&r), "TARGET_WINDOW_CHANGED", "{}", text(&r));
    assert!(
        hint(&r).contains("the old coordinates are meaningless"),
        "{}",
        hint(&r)
    );

    // wait_for that never holds.
    let r = server
        .call(
            "computer",
            json!({ "action": "wait_for", "waitKind": "window", "titleMatch": "no such window 42", "timeoutMs": 300 }),
        )
        .await;
    assert_eq!(error_code(&r), "WAIT_TIMEOUT", "{}", text(&r));
    assert!(hint(&r).contains("timeoutMs"), "{}", hint(&r));

    // Esc while the overlay is up: every mutation stops; resume waits 5 s.
    ok(&server
        .call(
            "computer",
            json!({ "action": "screenshot", "uiSummary": "none" }),
        )
        .await);
    ok(&server
        .call("computer", json!({ "action": "move", "x": 30, "y": 30 }))
        .await);
    let pressed = Instant::now();
    xdotool_escape(desktop.display());
    let r = wait_for(Duration::from_secs(5), "the kill switch", || async {
        let r = server
            .call("computer", json!({ "action": "move", "x": 40, "y": 40 }))
            .await;
        (error_code(&r) == "STOPPED_BY_HUMAN").then_some(r)
    })
    .await;
    assert!(
        hint(&r).contains("computer { \"action\": \"resume\" }"),
        "{}",
        hint(&r)
    );
    let r = server.call("computer", json!({ "action": "status" })).await;
    assert_eq!(ok(&r)["stopped"], "esc", "{}", text(&r));
    assert!(text(&r).contains("Kill switch: TRIPPED"), "{}", text(&r));
    let r = server.call("computer", json!({ "action": "resume" })).await;
    assert_eq!(error_code(&r), "RESUME_TOO_SOON", "{}", text(&r));
    assert!(hint(&r).contains("Ask the human first"));
    tokio::time::sleep(Duration::from_secs(6).saturating_sub(pressed.elapsed())).await;
    let r = server.call("computer", json!({ "action": "resume" })).await;
    assert_eq!(ok(&r)["resumed"], true, "{}", text(&r));
    server.finish().await;

    // The deployment's blocklist, and approval both ways.
    let config = ConfigFile::new(
        "dsh-gates",
        "requireApproval = \"mutating\"\nblocklist = [\"forbidden-tool\"]\n",
    );
    let server = serve(
        Some(desktop),
        &["--profile", "dsh", "--config", config.arg()],
        &[],
    )
    .await;
    let r = server
        .call(
            "app_window",
            json!({ "action": "launch", "command": "forbidden-tool" }),
        )
        .await;
    assert_eq!(error_code(&r), "BLOCKED_TARGET", "{}", text(&r));
    assert!(hint(&r).contains("deployment's decision"));
    let r = server
        .call(
            "clipboard",
            json!({ "action": "set", "text": "not without approval" }),
        )
        .await;
    assert_eq!(error_code(&r), "APPROVAL_UNAVAILABLE", "{}", text(&r));
    assert!(hint(&r).contains("Ask the human to approve"));
    server.finish().await;
    let human = Human {
        answers: Mutex::new(vec![ElicitationAction::Decline]),
        asked: Mutex::new(Vec::new()),
    };
    let server = serve_with(
        Some(desktop),
        &["--profile", "dsh", "--config", config.arg()],
        &[],
        human,
    )
    .await;
    let r = server
        .call("clipboard", json!({ "action": "set", "text": "declined" }))
        .await;
    assert_eq!(error_code(&r), "APPROVAL_DENIED", "{}", text(&r));
    assert_eq!(server.client.service().asked.lock().unwrap().len(), 1);
    assert_ne!(harness::xclip_out(desktop), "declined");
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_image_support_screenshots_are_saved_to_a_private_directory() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), DSH, &[("DESKPILOT_SCREENSHOT_INLINE", "0")]).await;
    let r = server
        .call(
            "computer",
            json!({ "action": "screenshot", "uiSummary": "none" }),
        )
        .await;
    let v = ok(&r).clone();
    assert!(
        r.content.iter().all(|c| c.as_image().is_none()),
        "no image block"
    );
    assert_eq!(v["image"], Value::Null);
    let path = std::path::PathBuf::from(v["savedPath"].as_str().expect("savedPath"));
    assert!(
        text(&r).contains(&path.display().to_string()),
        "{}",
        text(&r)
    );
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..3], &[0xff, 0xd8, 0xff], "a JPEG");
    {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = path.parent().unwrap().parent().unwrap();
        let mode = std::fs::metadata(dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700, "{}", dir.display());
    }
    // The skill library: a saved skill is hinted in the next envelope; dsh-computer-use's codes.
    let dir = scratch("skills");
    let _ = std::fs::remove_dir_all(&dir);
    server.finish().await;
    let server = serve(
        Some(desktop),
        DSH,
        &[("DESKPILOT_SKILLS_DIR", dir.to_str().unwrap())],
    )
    .await;
    // Our fixture (a python3 process: no built-in skill matches it before this one).
    let app = Fixture::start(desktop, "deskpilot dsh skill app");
    app.saw("ready").await;
    let hwnd = wait_for(Duration::from_secs(20), "the xterm", || async {
        let r = server
            .call(
                "app_window",
                json!({ "action": "list", "filter": "dsh skill app" }),
            )
            .await;
        ok(&r)["windows"][0]["hwnd"].as_u64()
    })
    .await;
    ok(&server
        .call(
            "app_skill",
            json!({ "action": "save", "app": "dsh skill app", "content": "- ctrl+shift+c copies", "summary": "copy with ctrl+shift+c" }),
        )
        .await);
    let r = server
        .call(
            "computer",
            json!({ "action": "screenshot", "hwnd": hwnd, "uiSummary": "none" }),
        )
        .await;
    assert_eq!(ok(&r)["skillHint"]["app"], "dsh skill app", "{}", text(&r));
    let r = server
        .call(
            "app_skill",
            json!({ "action": "append", "app": "dsh skill app", "content": "x".repeat(4000) }),
        )
        .await;
    assert_eq!(error_code(&r), "SKILL_TOO_LONG", "{}", text(&r));
    let r = server
        .call("app_skill", json!({ "action": "remove", "app": "xterm" }))
        .await;
    assert_eq!(error_code(&r), "SKILL_BUILTIN", "{}", text(&r));
    drop(app);
    let _ = std::fs::remove_dir_all(&dir);
    server.finish().await;
}
