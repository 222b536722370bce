//! Password fields on the desktop (issue 39): a real GTK password dialog (zenity) is typed into
//! with `type_text`, then everything deskpilot renders of it — the tree, `get_element_text`,
//! `find_elements`, screenshots, zooms and OCR — is searched for the value, its mask characters
//! and its length. The field's place comes from the system's own AT-SPI stack (the probe), and
//! zenity printing the value when the dialog is accepted proves the typing really landed.

use std::time::{Duration, Instant};

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::harness::{self, image, ok, probe_until, serve, text, wait_for, window_of};

/// What is typed: twelve characters, as in the measurement.
const VALUE: &str = "Tr0ub4dor&3x";
const TITLE: &str = "deskpilot password";

/// Every character a toolkit masks a password with.
const MASKS: &[char] = &['●', '•', '∗', '*', '⚫', '◦'];

/// What no text of a password field may hold: the value, a run of mask characters, or its
/// length as the old `get_element_text` worded it.
fn leaks(what: &str, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    if text.contains(VALUE) {
        found.push(format!("{what} holds the value"));
    }
    if MASKS
        .iter()
        .any(|m| text.contains(&m.to_string().repeat(2)))
    {
        found.push(format!("{what} holds a run of mask characters"));
    }
    let count = VALUE.chars().count();
    for phrase in [
        format!("holds {count} characters"),
        format!("{count} characters"),
    ] {
        if text.contains(&phrase) {
            found.push(format!("{what} says \"{phrase}\""));
        }
    }
    found
}

/// A whole answer (its text and its structured content) as one string to search.
fn all_of(r: &CallToolResult) -> String {
    format!(
        "{}\n{}",
        text(r),
        r.structured_content
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default()
    )
}

/// The colours inside the physical rectangle (`x`, `y`, `w`×`h`) of a screenshot, two pixels in
/// from its edges (scaling blends a box's edge with what is around it).
fn solid(shot: &CallToolResult, x: f64, y: f64, w: f64, h: f64) -> Vec<[u8; 3]> {
    let s = ok(shot);
    let (width, _, px) = image(shot);
    let view = &s["view"];
    let scale = view["scale"].as_f64().unwrap();
    let at = |px_: f64, py: f64| {
        (
            ((px_ - view["capture"]["x"].as_f64().unwrap()) * scale) as u32,
            ((py - view["capture"]["y"].as_f64().unwrap()) * scale) as u32,
        )
    };
    let (x0, y0) = at(x, y);
    let (x1, y1) = at(x + w, y + h);
    let mut colours = std::collections::BTreeSet::new();
    for y in y0 + 2..y1.saturating_sub(2) {
        for x in x0 + 2..x1.saturating_sub(2) {
            let i = ((y * width + x) * 3) as usize;
            colours.insert([px[i], px[i + 1], px[i + 2]]);
        }
    }
    colours.into_iter().collect()
}

/// A process stopped (SIGSTOP) until dropped, when it is continued.
struct Stopped(u32);

impl Stopped {
    fn new(pid: u32) -> Stopped {
        // SAFETY: plain signal delivery to a child of this test.
        unsafe {
            libc::kill(pid as i32, libc::SIGSTOP);
        }
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe {
            libc::kill(self.0 as i32, libc::SIGCONT);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typed_gtk_password_is_never_shown_and_every_capture_paints_its_field_over() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let mut cmd = std::process::Command::new("zenity");
    cmd.args(["--password", "--title", TITLE])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    desktop.configure(&mut cmd);
    let (child, printed) = harness::spawn_reporting(cmd);
    // Killed when the test ends, however it ends.
    let mut zenity = harness::App(child);
    let pid = zenity.0.id();
    let pid_s = pid.to_string();
    let w = window_of(&server, pid).await;
    let id = w["id"].clone();
    ok(&server
        .call("window", json!({ "action": "focus", "window_id": id }))
        .await);
    // The field's place and text as the system's AT-SPI stack tells them (not deskpilot).
    let field =
        probe_until(desktop, &["find", &pid_s, "password text", ""]).await["extents"].clone();
    let typed = ok(&server.call("type_text", json!({ "text": VALUE })).await).clone();
    assert_eq!(typed["characters"], VALUE.chars().count());
    wait_for(
        Duration::from_secs(10),
        "the dialog to hold 12 masked characters",
        || async {
            let t = harness::probe(desktop, &["text", &pid_s])?;
            (t["text"].as_str()?.chars().count() == VALUE.chars().count()).then_some(())
        },
    )
    .await;

    let mut problems = Vec::new();

    // The tree: the field is marked, with no value.
    let state = server
        .call(
            "get_window_state",
            json!({ "window_id": id, "include_screenshot": false }),
        )
        .await;
    problems.extend(leaks("get_window_state", &all_of(&state)));
    let s = ok(&state);
    let password: Vec<&Value> = s["elements"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["password"] == true)
        .collect();
    assert_eq!(password.len(), 1, "{:#}", s["elements"]);
    let entry = password[0];
    assert!(entry.get("value").is_none(), "{entry}");
    let line = text(&state)
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{} ", entry["index"])))
        .unwrap_or_default()
        .to_string();
    assert!(
        line.contains(" password") && !line.contains("value="),
        "the tree line says it is a password field and shows no value: {line:?}"
    );

    // get_element_text: a plain answer that it is a password field, nothing of its text.
    let read = server
        .call("get_element_text", json!({ "element": entry["token"] }))
        .await;
    problems.extend(leaks("get_element_text", &all_of(&read)));
    assert!(
        text(&read).contains("is a password field: its text is never shown"),
        "{}",
        text(&read)
    );
    assert!(ok(&read).get("text").is_none(), "{:?}", ok(&read));
    assert_eq!(ok(&read)["element"]["password"], true);

    // find_elements: never by its text, by its kind it is found and marked.
    for (description, contains) in [(VALUE, ""), ("", "●●"), ("", VALUE)] {
        let r = server
            .call(
                "find_elements",
                json!({ "window_id": id, "description": description, "name_contains": contains,
                        "annotate": false }),
            )
            .await;
        problems.extend(leaks("find_elements by the value", &all_of(&r)));
        let by_tree = ok(&r)["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["source"] == "accessibility" && c["password"] == true)
            .count();
        assert_eq!(by_tree, 0, "matched the field's text: {}", text(&r));
    }
    let r = server
        .call(
            "find_elements",
            json!({ "window_id": id, "description": "password text box", "annotate": false }),
        )
        .await;
    problems.extend(leaks("find_elements", &all_of(&r)));
    assert!(
        ok(&r)["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["password"] == true && c.get("value").is_none()),
        "{}",
        text(&r)
    );

    // A screenshot paints the field solid; the pixels are checked where the probe says it is.
    let shot = server.call("screenshot", json!({ "format": "png" })).await;
    let s = ok(&shot).clone();
    assert!(
        s["masked_regions"].as_u64().unwrap() >= 1,
        "masked_regions {}",
        s["masked_regions"]
    );
    let view = &s["view"];
    let scale = view["scale"].as_f64().unwrap();
    let to_image = |x: f64, y: f64| {
        (
            ((x - view["capture"]["x"].as_f64().unwrap()) * scale) as u32,
            ((y - view["capture"]["y"].as_f64().unwrap()) * scale) as u32,
        )
    };
    let (fx, fy) = (field["x"].as_f64().unwrap(), field["y"].as_f64().unwrap());
    let (fw, fh) = (
        field["width"].as_f64().unwrap(),
        field["height"].as_f64().unwrap(),
    );
    let (x0, y0) = to_image(fx, fy);
    let (x1, y1) = to_image(fx + fw, fy + fh);
    assert_eq!(
        solid(&shot, fx, fy, fw, fh),
        vec![[0, 0, 0]],
        "the field ({fx}, {fy}, {fw}x{fh}) is one solid box in the screenshot"
    );

    // A zoom on it is painted too.
    let zoom = server
        .call(
            "zoom",
            json!({ "x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0, "scale": 1,
                    "format": "png", "screenshot_id": s["screenshot_id"] }),
        )
        .await;
    assert!(ok(&zoom)["masked_regions"].as_u64().unwrap() >= 1);
    let (_, _, zpx) = image(&zoom);
    let dark = zpx.chunks(3).filter(|p| p == &[0, 0, 0]).count();
    assert!(dark * 10 >= zpx.len() / 3 * 8, "the zoom is mostly the box");

    // OCR of the whole screen reads neither the value nor the mask.
    let read = server.call("ocr", json!({})).await;
    problems.extend(leaks("ocr", &all_of(&read)));

    // The other profiles' trees and finds, each in its own words.
    let id_u64 = id.as_u64().unwrap();
    for (profile, tool, args, mark) in [
        (
            "dsh",
            "ui_element",
            json!({ "action": "tree", "hwnd": id_u64 }),
            "password]",
        ),
        (
            "dsh",
            "ui_element",
            json!({ "action": "find", "description": "password box", "hwnd": id_u64,
                    "annotate": false }),
            "[password]",
        ),
        (
            "desktopos",
            "desktop_elements",
            json!({ "handle": id_u64 }),
            " password",
        ),
        (
            "computer-use",
            "get_window_state",
            json!({ "window_id": id_u64 }),
            " password",
        ),
    ] {
        let other = serve(Some(desktop), &["--profile", profile], &[]).await;
        let r = other.call(tool, args).await;
        problems.extend(leaks(&format!("{profile} {tool}"), &all_of(&r)));
        ok(&r);
        let line = text(&r)
            .lines()
            .find(|l| l.contains("Edit") && l.contains(mark))
            .map(str::to_string);
        assert!(
            line.as_ref().is_some_and(|l| !l.contains("value=")),
            "{profile} {tool} marks the password field with {mark:?} and shows no value: {}",
            text(&r)
        );
        other.finish().await;
    }

    assert!(problems.is_empty(), "{}", problems.join("\n"));

    // A hung application holds no capture up, and its field stays painted where its window
    // goes: moved (no event from the app: its last answer moves along) and resized (asked
    // again, no answer in time: the last answer stands).
    let stopped = Stopped::new(pid);
    for (action, args) in [
        ("move", json!({ "x": 60, "y": 80 })),
        ("resize", json!({ "width": 420, "height": 260 })),
    ] {
        let mut call = json!({ "action": action, "window_id": id });
        call.as_object_mut()
            .unwrap()
            .extend(args.as_object().unwrap().clone());
        let r = server.call("window", call).await;
        let now = ok(&r)["window"]["frame"].clone();
        let dx = now["x"].as_f64().unwrap() - w["frame"]["x"].as_f64().unwrap();
        let dy = now["y"].as_f64().unwrap() - w["frame"]["y"].as_f64().unwrap();
        let started = Instant::now();
        let shot = server.call("screenshot", json!({ "format": "png" })).await;
        let took = started.elapsed();
        assert!(took < Duration::from_secs(2), "{action}: {took:?}");
        assert!(
            ok(&shot)["masked_regions"].as_u64().unwrap() >= 1,
            "{action}"
        );
        let colours = solid(&shot, fx + dx, fy + dy, fw, fh);
        assert_eq!(
            colours,
            vec![[0, 0, 0]],
            "{action}: the stopped dialog's field is still one solid box where it went"
        );
    }
    drop(stopped);

    // The value really was in the field: accepted, zenity prints it.
    ok(&server
        .call("press_key", json!({ "keys": ["Return"] }))
        .await);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = zenity.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "zenity did not exit after Return"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status.code(), Some(0));
    wait_for(
        Duration::from_secs(5),
        "zenity to print the value",
        || async {
            printed
                .lock()
                .unwrap()
                .iter()
                .any(|l| l == VALUE)
                .then_some(())
        },
    )
    .await;
    server.finish().await;
}
