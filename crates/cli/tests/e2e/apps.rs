//! Real apps driven by pixels and keys, effects read back through the system's own AT-SPI
//! stack (`tests/helpers/atspi_probe.py`), through files and through process exit codes.

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{
    self, App, error_code, launch, ok, probe, probe_until, serve, text, wait_for, window_of,
    xclip_out,
};

const MIXED: &str = "Hello é 中文 ÄÖ 😀";

/// A mousepad of our own (no D-Bus hand-off to another instance) on `file`.
fn mousepad(desktop: &deskpilot_x11::VirtualDisplay, file: &std::path::Path) -> App {
    launch(
        desktop,
        "mousepad",
        &["--disable-server", file.to_str().unwrap()],
    )
}

fn scratch(name: &str, content: Option<&str>) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("deskpilot-e2e-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    if let Some(c) = content {
        std::fs::write(&path, c).unwrap();
    }
    path
}

/// Text of mousepad's editor as AT-SPI reports it, once it equals `want` (or the last seen).
async fn editor_text(desktop: &deskpilot_x11::VirtualDisplay, pid: &str, want: &str) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let seen = probe(desktop, &["text", pid])
            .and_then(|v| v["text"].as_str().map(str::to_string))
            .unwrap_or_default();
        if seen == want || std::time::Instant::now() > deadline {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

fn center(extents: &Value) -> (f64, f64) {
    (
        extents["x"].as_f64().unwrap() + extents["width"].as_f64().unwrap() / 2.0,
        extents["y"].as_f64().unwrap() + extents["height"].as_f64().unwrap() / 2.0,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mixed_text_typed_into_mousepad_reads_back_twenty_times() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let file = scratch("typed.txt", None);
    let app = mousepad(desktop, &file);
    let pid = app.0.id();
    let w = window_of(&server, pid).await;
    ok(&server
        .call("window", json!({ "action": "focus", "window_id": w["id"] }))
        .await);
    let pid_s = pid.to_string();
    probe_until(desktop, &["text", &pid_s]).await;

    for round in 0..20 {
        ok(&server
            .call("press_key", json!({ "keys": ["ctrl", "a"] }))
            .await);
        let r = server.call("type_text", json!({ "text": MIXED })).await;
        assert_eq!(ok(&r)["characters"], MIXED.chars().count());
        assert_eq!(ok(&r)["window"]["pid"], pid, "the keys went to mousepad");
        assert_eq!(
            editor_text(desktop, &pid_s, MIXED).await,
            MIXED,
            "round {round}"
        );
    }
    // Texts with more distinct unmapped characters than there are spare keycodes, and calls
    // that each need different ones: bindings are reused, replaced and settled in between.
    let han =
        |from: u32, n: u32| -> String { (from..from + n).filter_map(char::from_u32).collect() };
    let long = format!("{} end", han(0x4e00, 120));
    for text in [
        long.as_str(),
        &han(0x5000, 30),
        &han(0x5100, 30),
        &format!("{}😀{}", han(0x5000, 10), han(0x5200, 25)),
    ] {
        ok(&server
            .call("press_key", json!({ "keys": ["ctrl", "a"] }))
            .await);
        ok(&server.call("type_text", json!({ "text": text })).await);
        assert_eq!(editor_text(desktop, &pid_s, text).await, text);
    }
    ok(&server
        .call("press_key", json!({ "keys": ["ctrl", "a"] }))
        .await);
    ok(&server.call("type_text", json!({ "text": MIXED })).await);
    assert_eq!(editor_text(desktop, &pid_s, MIXED).await, MIXED);

    // Saved to disk, byte for byte.
    ok(&server
        .call("press_key", json!({ "keys": ["ctrl", "s"] }))
        .await);
    wait_for(Duration::from_secs(10), "mousepad to save", || async {
        std::fs::read_to_string(&file)
            .ok()
            .filter(|s| s.trim_end_matches('\n') == MIXED)
    })
    .await;

    // What clipboard_write sets pastes into the app.
    ok(&server
        .call("clipboard_write", json!({ "text": "pasted 中文 ✓" }))
        .await);
    ok(&server
        .call("press_key", json!({ "keys": ["ctrl", "a"] }))
        .await);
    ok(&server
        .call("press_key", json!({ "keys": ["ctrl+v"] }))
        .await);
    assert_eq!(
        editor_text(desktop, &pid_s, "pasted 中文 ✓").await,
        "pasted 中文 ✓"
    );

    // An unknown key names the valid ones; nothing is typed.
    let r = server
        .call("press_key", json!({ "keys": ["ctrl", "hyperspace"] }))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT");
    assert!(text(&r).contains("valid keys"), "{}", text(&r));
    assert_eq!(
        editor_text(desktop, &pid_s, "pasted 中文 ✓").await,
        "pasted 中文 ✓"
    );
    drop(app);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drag_selects_text_and_scroll_moves_a_long_document() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let body: String = (1..=400)
        .map(|i| format!("line {i:03} alpha beta\n"))
        .collect();
    let file = scratch("long.txt", Some(&body));
    let app = mousepad(desktop, &file);
    let pid = app.0.id();
    let pid_s = pid.to_string();
    let w = window_of(&server, pid).await;
    ok(&server
        .call("window", json!({ "action": "focus", "window_id": w["id"] }))
        .await);
    let editor = probe_until(desktop, &["text", &pid_s]).await;
    assert_eq!(editor["text"], body.as_str());

    // Drag from the left edge of character 0 to the left edge of character 8: "line 001".
    let chars = probe_until(desktop, &["chars", &pid_s, "0", "8"]).await;
    let (a, b) = (&chars["chars"][0], &chars["chars"][1]);
    let y = center(a).1;
    let from_x = a["x"].as_f64().unwrap() + 1.0;
    let to_x = b["x"].as_f64().unwrap();
    // Pinned screenshot of the window, then a drag in its image space.
    let shot = server
        .call(
            "screenshot",
            json!({ "window_id": w["id"], "max_width": 800 }),
        )
        .await;
    ok(&shot);
    // Physical coordinates keep the selection boundary exact; the pinned window still guards it.
    let r = server
        .call(
            "drag",
            json!({ "from_x": from_x, "from_y": y, "to_x": to_x, "to_y": y, "coordinates": "physical" }),
        )
        .await;
    assert_eq!(ok(&r)["receipt"]["landed"], true, "{}", text(&r));
    ok(&server
        .call("press_key", json!({ "keys": ["ctrl", "c"] }))
        .await);
    let copied = wait_for(Duration::from_secs(5), "the copied selection", || async {
        let s = xclip_out(desktop);
        (s == "line 001").then_some(s)
    })
    .await;
    assert_eq!(copied, "line 001");
    let r = server.call("clipboard_read", json!({})).await;
    assert_eq!(ok(&r)["clipboard"], "line 001");

    // Scroll: the character at the editor's top-left corner moves down the document.
    let top_left = |e: &Value| {
        (
            (e["x"].as_i64().unwrap() + 4).to_string(),
            (e["y"].as_i64().unwrap() + 4).to_string(),
        )
    };
    let (tx, ty) = top_left(&editor["extents"]);
    let offset =
        |desktop| probe(desktop, &["offset", &pid_s, &tx, &ty]).and_then(|v| v["offset"].as_i64());
    assert_eq!(offset(desktop), Some(0), "the document starts at the top");
    let (cx, cy) = center(&editor["extents"]);
    let r = server
        .call(
            "scroll",
            json!({ "x": cx, "y": cy, "dy": 5, "coordinates": "physical" }),
        )
        .await;
    assert_eq!(ok(&r)["receipt"]["landed"], true, "{}", text(&r));
    let line = "line 001 alpha beta\n".len() as i64;
    let scrolled = wait_for(Duration::from_secs(5), "the document to scroll", || async {
        offset(desktop).filter(|o| *o >= 5 * line)
    })
    .await;
    let r = server
        .call(
            "scroll",
            json!({ "x": cx, "y": cy, "dy": -5, "coordinates": "physical" }),
        )
        .await;
    ok(&r);
    wait_for(
        Duration::from_secs(5),
        "the document to scroll back",
        || async { offset(desktop).filter(|o| *o < scrolled) },
    )
    .await;
    drop(app);
    server.finish().await;
}

/// Answers a zenity question by clicking a button whose position the test learns from AT-SPI,
/// converted into the pixel space of a maxWidth-800 screenshot, and checks zenity's exit code.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zenity_question_answered_by_clicking_image_coordinates() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    for (button, code) in [("Yes", 0), ("No", 1)] {
        let mut app = launch(
            desktop,
            "zenity",
            &[
                "--question",
                "--title",
                "deskpilot question",
                "--text",
                "Proceed with the test?",
            ],
        );
        let pid = app.0.id();
        let pid_s = pid.to_string();
        let w = window_of(&server, pid).await;
        ok(&server
            .call("window", json!({ "action": "focus", "window_id": w["id"] }))
            .await);
        let found = probe_until(desktop, &["find", &pid_s, "push button", button]).await;
        let (px, py) = center(&found["extents"]);
        let shot = server.call("screenshot", json!({ "maxWidth": 800 })).await;
        let view = ok(&shot)["view"].clone();
        assert_eq!(view["width"], 800);
        let s = view["scale"].as_f64().unwrap();
        let ix = ((px - view["capture"]["x"].as_f64().unwrap()) * s).floor();
        let iy = ((py - view["capture"]["y"].as_f64().unwrap()) * s).floor();
        let r = server
            .call(
                "click",
                json!({ "x": ix, "y": iy, "screenshot_id": ok(&shot)["screenshot_id"] }),
            )
            .await;
        let receipt = &ok(&r)["receipt"];
        assert_eq!(receipt["landed"], true);
        assert!(
            (receipt["x"].as_f64().unwrap() - px).abs() <= 3.0
                && (receipt["y"].as_f64().unwrap() - py).abs() <= 3.0,
            "the click landed within 3 px of the button centre: {receipt} vs ({px}, {py})"
        );
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = app.0.try_wait().unwrap() {
                break status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "zenity did not exit after the click on {button}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        assert_eq!(status.code(), Some(code), "clicking {button}");
    }
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_sees_typing_and_no_change_from_a_click_on_empty_desktop() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;

    // A click on bare desktop changes nothing. (The overlay appears with this first mutation;
    // its own pixels are not counted.)
    let shot = server.call("screenshot", json!({})).await;
    let desk = ok(&shot)["view"]["capture"].clone();
    let (x, y) = (
        desk["x"].as_i64().unwrap() + desk["width"].as_i64().unwrap() - 40,
        desk["y"].as_i64().unwrap() + desk["height"].as_i64().unwrap() - 40,
    );
    let listing = server.call("list_windows", json!({})).await;
    for w in ok(&listing)["windows"].as_array().unwrap() {
        let f = &w["frame"];
        let inside = |v: i64, o: &str, l: &str| {
            v >= f[o].as_i64().unwrap() && v < f[o].as_i64().unwrap() + f[l].as_i64().unwrap()
        };
        assert!(
            !(inside(x, "x", "width") && inside(y, "y", "height")),
            "({x}, {y}) is not bare desktop: {w}"
        );
    }
    let r = server
        .call(
            "click",
            json!({ "x": x, "y": y, "coordinates": "physical", "verify": true }),
        )
        .await;
    let s = ok(&r);
    assert_eq!(s["verify"]["changed"], false, "{}", text(&r));
    assert_eq!(s["effect"], "suspected_noop", "{}", text(&r));
    assert!(text(&r).contains("NO visible change"), "{}", text(&r));
    assert_eq!(r.content.len(), 1, "verify attaches no image");

    // Typing into mousepad changes its window.
    let file = scratch("verified.txt", None);
    let app = mousepad(desktop, &file);
    let pid = app.0.id();
    let w = window_of(&server, pid).await;
    ok(&server
        .call("window", json!({ "action": "focus", "window_id": w["id"] }))
        .await);
    let pid_s = pid.to_string();
    probe_until(desktop, &["text", &pid_s]).await;
    ok(&server
        .call("screenshot", json!({ "window_id": w["id"] }))
        .await);
    let r = server
        .call(
            "type_text",
            json!({ "text": "verified words", "verify": true }),
        )
        .await;
    let s = ok(&r);
    assert_eq!(s["verify"]["changed"], true, "{}", text(&r));
    assert_eq!(s["effect"], "confirmed");
    assert!(
        s["verify"]["target"].as_str().unwrap().contains("Mousepad"),
        "the screenshot's window is the target: {s}"
    );
    assert!(text(&r).contains("Effect: confirmed"), "{}", text(&r));
    assert_eq!(
        editor_text(desktop, &pid_s, "verified words").await,
        "verified words"
    );
    // observe: the same verdict plus a fresh screenshot of the window.
    let r = server
        .call("type_text", json!({ "text": " seen", "observe": true }))
        .await;
    let s = ok(&r);
    assert_eq!(s["verify"]["changed"], true, "{}", text(&r));
    assert_eq!(s["observation"]["window"]["id"], w["id"]);
    assert!(s["observation"]["screenshot_id"].as_u64().is_some());
    assert!(
        r.content.iter().any(|c| c.as_image().is_some()),
        "observe attaches the screenshot"
    );
    server.finish().await;
}
