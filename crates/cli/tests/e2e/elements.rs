//! Accessibility trees and element actions against our GTK fixture, zenity and mousepad.
//! The fixture prints every event it receives, so the tests read what really happened.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{
    self, element, error_code, image, launch, ok, probe_until, serve, text, wait_for, window_of,
};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/gtk_fixture.py");
const EXPECTED_TREE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../fixtures/gtk_fixture.tree"
);

/// The fixture app and the event lines it has printed so far.
pub(crate) struct Fixture {
    child: std::process::Child,
    events: Arc<Mutex<Vec<String>>>,
}

impl Fixture {
    pub(crate) fn start(desktop: &deskpilot_x11::VirtualDisplay, title: &str) -> Fixture {
        Fixture::launch(desktop, title, &[], &[])
    }

    fn start_with(
        desktop: &deskpilot_x11::VirtualDisplay,
        title: &str,
        env: &[(&str, &str)],
    ) -> Fixture {
        Fixture::launch(desktop, title, &[], env)
    }

    fn start_with_args(
        desktop: &deskpilot_x11::VirtualDisplay,
        title: &str,
        args: &[&str],
    ) -> Fixture {
        Fixture::launch(desktop, title, args, &[])
    }

    fn launch(
        desktop: &deskpilot_x11::VirtualDisplay,
        title: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Fixture {
        let mut cmd = std::process::Command::new("/usr/bin/python3");
        cmd.arg(FIXTURE)
            .arg(title)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null());
        desktop.configure(&mut cmd);
        cmd.envs(env.iter().copied());
        let (child, events) = harness::spawn_reporting(cmd);
        Fixture { child, events }
    }

    /// The fixture's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the fixture has printed `line`.
    pub(crate) fn has(&self, line: &str) -> bool {
        self.events.lock().unwrap().iter().any(|l| l == line)
    }

    pub(crate) async fn saw(&self, line: &str) {
        wait_for(
            Duration::from_secs(5),
            &format!("fixture event {line:?}"),
            || async {
                self.events
                    .lock()
                    .unwrap()
                    .iter()
                    .any(|l| l == line)
                    .then_some(())
            },
        )
        .await
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        // SAFETY: plain signal delivery; a stopped fixture must be resumed before it can die.
        unsafe {
            libc::kill(self.child.id() as i32, libc::SIGCONT);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The tree text of a get_window_state result (the lines after the header).
fn tree_lines(r: &rmcp::model::CallToolResult) -> Vec<String> {
    text(r)
        .lines()
        .skip_while(|l| !l.starts_with("0 "))
        .take_while(|l| !l.starts_with("Note: ") && !l.starts_with("Screenshot "))
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_tree_matches_its_snapshot_and_elements_act() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let fixture = Fixture::start(desktop, "deskpilot fixture");
    fixture.saw("ready").await;
    let pid = fixture.child.id();
    window_of(&server, pid).await;
    let args = json!({ "title_match": "deskpilot fixture", "include_screenshot": false });

    // The tree, line for line (GTK fills its accessibility cache lazily: poll until stable).
    let expected: Vec<String> = std::fs::read_to_string(EXPECTED_TREE)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let mut last = Vec::new();
    let mut source = Value::Null;
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        let r = server.call("get_window_state", args.clone()).await;
        source = ok(&r)["source"].clone();
        last = tree_lines(&r);
        if last == expected && source == "atspi-cache" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        last, expected,
        "fixture tree differs from fixtures/gtk_fixture.tree"
    );
    // GTK serves its bulk cache once it knows a client listens: the fast path is in use.
    assert_eq!(source, "atspi-cache");
    // A forced full read gives the same tree.
    let mut fresh = args.clone();
    fresh["fresh"] = json!(true);
    let r = server.call("get_window_state", fresh).await;
    assert_eq!(tree_lines(&r), expected, "fresh: true");

    let r = server
        .call(
            "get_window_state",
            json!({ "title_match": "deskpilot fixture" }),
        )
        .await;
    let state = ok(&r).clone();
    assert!(
        r.content.iter().any(|c| c.as_image().is_some()),
        "the screenshot comes along"
    );
    // Bounds agree with the system's own AT-SPI stack.
    let apply = element(&state, "Button", "Apply");
    let probe = probe_until(desktop, &["find", &pid.to_string(), "push button", "Apply"]).await;
    for k in ["x", "y", "width", "height"] {
        assert_eq!(apply["bounds"][k], probe["extents"][k], "Apply {k}");
    }
    assert_eq!(
        element(&state, "Button", "Disabled action")["enabled"],
        false
    );
    assert!(
        !text(&r).contains("Hidden button"),
        "a widget that is never shown is not listed"
    );

    // query keeps the full tree's indexes and the ancestors.
    let r = server
        .call(
            "get_window_state",
            json!({ "title_match": "deskpilot fixture", "include_screenshot": false, "query": "apply" }),
        )
        .await;
    let projected = tree_lines(&r);
    let apply_line = expected
        .iter()
        .find(|l| l.contains("Button \"Apply\""))
        .unwrap();
    assert_eq!(projected.last(), Some(apply_line), "{projected:?}");
    assert!(projected.len() < expected.len() && projected[0] == expected[0]);

    // find: "保存" ranks "保存并关闭" first; clicking its token fires the handler through the
    // accessibility route.
    let r = server
        .call(
            "find_elements",
            json!({ "title_match": "deskpilot fixture", "description": "保存" }),
        )
        .await;
    let found = ok(&r).clone();
    let first = &found["candidates"][0];
    assert_eq!(first["name"], "保存并关闭", "{}", text(&r));
    assert!(
        first["image"].is_array(),
        "image coordinates of the centre: {first}"
    );
    // The candidates are pinned on the screenshot (the fixture itself has no pin red);
    // annotate: false leaves the pixels alone.
    let pin_red = |r: &rmcp::model::CallToolResult| {
        let (_, _, px) = image(r);
        px.chunks_exact(3)
            .filter(|p| p[0] > 180 && p[1] < 90 && p[2] < 120)
            .count()
    };
    assert_eq!(found["annotated"], true);
    assert!(pin_red(&r) > 200, "pins drawn: {} red pixels", pin_red(&r));
    let plain = server
        .call(
            "find_elements",
            json!({ "title_match": "deskpilot fixture", "description": "保存", "annotate": false }),
        )
        .await;
    assert_eq!(ok(&plain)["annotated"], false);
    assert!(pin_red(&plain) < 20, "{} red pixels", pin_red(&plain));
    let first = ok(&plain)["candidates"][0].clone();
    let r = server
        .call("click", json!({ "element": first["token"] }))
        .await;
    assert_eq!(ok(&r)["route"], "accessibility", "{}", text(&r));
    fixture.saw("clicked 保存并关闭").await;

    // set_value on the entry (CJK included) reads back, in the app and through the tool.
    let r = server
        .call(
            "find_elements",
            json!({ "title_match": "deskpilot fixture", "description": "name field", "include_screenshot": false }),
        )
        .await;
    let entry = ok(&r)["candidates"][0].clone();
    assert_eq!(entry["role"], "Edit", "{}", text(&r));
    let value = "张三 Zoë ✓";
    let r = server
        .call(
            "set_value",
            json!({ "element": entry["token"], "value": value }),
        )
        .await;
    assert_eq!(ok(&r)["value"], value);
    assert_eq!(ok(&r)["effect"], "confirmed");
    fixture.saw(&format!("changed Name {value}")).await;
    let r = server
        .call("get_element_text", json!({ "element": entry["token"] }))
        .await;
    assert_eq!(ok(&r)["text"], value);
    // set_value on a label is refused with its own code, naming the role and what it offers
    // (regression: it used to be PLATFORM_ERROR "accessibility tree is not supported here").
    let state = ok(&server.call("get_window_state", args.clone()).await).clone();
    let label = state["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["role"] == "Text" && e["name"] == "Name")
        .expect("the Name label")["token"]
        .clone();
    let r = server
        .call("set_value", json!({ "element": label, "value": "x" }))
        .await;
    assert_eq!(error_code(&r), "ACTION_UNSUPPORTED", "{}", text(&r));
    assert!(
        text(&r).contains("Text \"Name\"") && text(&r).contains("set_value"),
        "{}",
        text(&r)
    );
    // wait_for finds the text in the tree, and the element by name.
    let r = server
        .call(
            "wait_for",
            json!({ "wait_kind": "text", "text": "张三", "title_match": "deskpilot fixture", "timeout_ms": 5000 }),
        )
        .await;
    assert!(
        ok(&r)["matched"]
            .as_str()
            .unwrap()
            .contains("Edit \"Name\""),
        "{}",
        text(&r)
    );
    let r = server
        .call(
            "wait_for",
            json!({ "wait_kind": "element", "name": "Deep button", "title_match": "deskpilot fixture", "timeout_ms": 5000 }),
        )
        .await;
    assert!(
        ok(&r)["matched"]
            .as_str()
            .unwrap()
            .contains("Button \"Deep button\"")
    );
    let r = server
        .call(
            "wait_for",
            json!({ "wait_kind": "element", "name": "No such control", "title_match": "deskpilot fixture", "timeout_ms": 600 }),
        )
        .await;
    assert_eq!(error_code(&r), "WAIT_TIMEOUT", "{}", text(&r));

    // perform_action with an advertised action; an unknown one lists the real ones.
    let r = server
        .call(
            "find_elements",
            json!({ "title_match": "deskpilot fixture", "description": "enable logging checkbox", "include_screenshot": false }),
        )
        .await;
    let check = ok(&r)["candidates"][0].clone();
    assert_eq!(check["role"], "CheckBox", "{}", text(&r));
    let r = server
        .call(
            "perform_action",
            json!({ "element": check["token"], "action": "fly" }),
        )
        .await;
    // An action the element does not offer: its own code, naming the role and what it offers.
    assert_eq!(error_code(&r), "ACTION_UNSUPPORTED", "{}", text(&r));
    assert!(
        text(&r).contains("CheckBox") && text(&r).contains("[Click]"),
        "{}",
        text(&r)
    );
    ok(&server
        .call(
            "perform_action",
            json!({ "element": check["token"], "action": "click" }),
        )
        .await);
    fixture.saw("toggled Enable logging on").await;

    // Re-reading a window whose structure did not change keeps the snapshot and its tokens
    // (regression: every re-read used to make every earlier token STALE_ELEMENT). The
    // "Logging is on" label appeared with the check above, so one more read shows it under a
    // new snapshot, and a token of the old one is refused, saying what changed.
    let shown = ok(&server.call("get_window_state", args.clone()).await).clone();
    let again = ok(&server.call("get_window_state", args.clone()).await).clone();
    assert_eq!(
        again["snapshot_id"], shown["snapshot_id"],
        "unchanged: same id"
    );
    assert!(
        shown["elements"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "Logging is on"),
        "the label that appeared is in the tree"
    );
    let old_snapshot = first["token"].as_str().unwrap().split(':').next().unwrap()[1..].to_string();
    assert_ne!(
        shown["snapshot_id"].to_string(),
        old_snapshot,
        "a structural change: a new id"
    );
    let apply = |snap: &Value| {
        snap["elements"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "Apply")
            .unwrap()["token"]
            .clone()
    };
    let r = server
        .call("get_element_text", json!({ "element": apply(&shown) }))
        .await;
    ok(&r);
    let r = server
        .call("click", json!({ "element": first["token"] }))
        .await;
    assert_eq!(error_code(&r), "STALE_ELEMENT", "{}", text(&r));
    assert!(text(&r).contains("1 elements appeared"), "{}", text(&r));
    let r = server.call("click", json!({ "element": "s9999:1" })).await;
    assert_eq!(error_code(&r), "ELEMENT_NOT_FOUND");
    server.finish().await;
}

/// toggle / expand / collapse / select by token, each seen by the fixture itself and each
/// reported as confirmed; asking for what already holds does nothing and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_operations_toggle_expand_collapse_and_select() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let fixture = Fixture::start(desktop, "deskpilot ops fixture");
    fixture.saw("ready").await;
    window_of(&server, fixture.child.id()).await;
    let state = || async {
        wait_for(Duration::from_secs(15), "the fixture's tree", || async {
            let r = server
                .call(
                    "get_window_state",
                    json!({ "title_match": "deskpilot ops fixture", "include_screenshot": false }),
                )
                .await;
            let s = ok(&r).clone();
            s["elements"]
                .as_array()?
                .iter()
                .any(|e| e["name"] == "Enable logging")
                .then_some(s)
        })
        .await
    };
    let op = |token: Value, action: &'static str| {
        let server = &server;
        async move {
            server
                .call(
                    "perform_action",
                    json!({ "element": token, "action": action }),
                )
                .await
        }
    };

    let s = state().await;
    let check = element(&s, "CheckBox", "Enable logging")["token"].clone();
    let r = op(check.clone(), "toggle").await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    fixture.saw("toggled Enable logging on").await;
    // A fresh read shows the change (trees are reused only while the app sends no events).
    let s = state().await;
    let check = element(&s, "CheckBox", "Enable logging");
    assert_eq!(check["checked"], true);
    let r = op(check["token"].clone(), "toggle").await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    fixture.saw("toggled Enable logging off").await;
    let s = state().await;
    assert_eq!(element(&s, "CheckBox", "Enable logging")["checked"], false);

    // The File menu opened: its items join the tree; closed again, they leave it.
    let file = element(&s, "Menu", "File")["token"].clone();
    let r = op(file, "expand").await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    let s = state().await;
    let quit = element(&s, "MenuItem", "Quit")["token"].clone();
    assert!(quit.is_string());
    let file = element(&s, "Menu", "File")["token"].clone();
    let r = op(file, "collapse").await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    let s = state().await;
    assert!(
        !s["elements"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "Quit"),
        "closed menu items are hidden again"
    );

    let combo = element(&s, "ComboBox", "Small")["token"].clone();
    let r = op(combo.clone(), "collapse").await;
    assert!(
        text(&r).contains("already collapsed"),
        "a closed combo box is left alone: {}",
        text(&r)
    );
    let r = op(combo.clone(), "expand").await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    fixture.saw("popup shown").await;
    let r = op(combo.clone(), "expand").await;
    assert!(text(&r).contains("already expanded"), "{}", text(&r));
    let r = op(combo, "collapse").await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    fixture.saw("popup hidden").await;

    // The list row holding "Beta" is selected through its list's selection interface.
    let s = state().await;
    let elements = s["elements"].as_array().unwrap();
    let beta = elements
        .iter()
        .find(|e| e["role"] == "Text" && e["name"] == "Beta")
        .expect("Beta in the tree");
    let row = &elements[beta["parent"].as_u64().unwrap() as usize];
    assert_eq!(row["role"], "ListItem");
    let r = op(row["token"].clone(), "select").await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    fixture.saw("selected Beta").await;

    // A plain button cannot be expanded: a typed error naming its real actions.
    let apply = element(&s, "Button", "Apply")["token"].clone();
    let r = op(apply, "expand").await;
    assert_eq!(error_code(&r), "ACTION_UNSUPPORTED", "{}", text(&r));
    assert!(text(&r).contains("not expandable") && text(&r).contains("[Click]"));
    server.finish().await;
}

/// One app, two windows: each window's tree is its own frame's, and a token acts in the
/// window it came from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_app_two_windows_each_get_their_own_tree() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let fixture = Fixture::start_with_args(desktop, "deskpilot two windows", &["--dialog"]);
    fixture.saw("ready").await;
    let pid = fixture.child.id();
    let windows = wait_for(Duration::from_secs(15), "both windows listed", || async {
        let r = server.call("list_windows", json!({})).await;
        let ws: Vec<Value> = ok(&r)["windows"]
            .as_array()?
            .iter()
            .filter(|w| w["pid"] == pid)
            .cloned()
            .collect();
        (ws.len() == 2).then_some(ws)
    })
    .await;
    let by_title = |t: &str| {
        windows
            .iter()
            .find(|w| w["title"] == t)
            .unwrap_or_else(|| panic!("no window {t}: {windows:?}"))["id"]
            .clone()
    };
    let (main, dialog) = (
        by_title("deskpilot two windows"),
        by_title("deskpilot two windows dialog"),
    );
    let names = |s: &Value| -> Vec<String> {
        s["elements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    let read = |id: Value, want: &'static str| {
        let server = &server;
        async move {
            wait_for(Duration::from_secs(15), want, || async {
                let r = server
                    .call(
                        "get_window_state",
                        json!({ "window_id": id, "include_screenshot": false }),
                    )
                    .await;
                let s = ok(&r).clone();
                names(&s).iter().any(|n| n == want).then_some(s)
            })
            .await
        }
    };
    let d = read(dialog, "Dialog OK").await;
    assert!(
        !names(&d).iter().any(|n| n == "Apply"),
        "the dialog's tree holds only the dialog: {:?}",
        names(&d)
    );
    let m = read(main, "Apply").await;
    assert!(
        !names(&m).iter().any(|n| n == "Dialog OK"),
        "the main window's tree holds only the main window: {:?}",
        names(&m)
    );
    // The dialog's token still resolves (its window's newest snapshot) and acts there.
    let ok_button = element(&d, "Button", "Dialog OK")["token"].clone();
    let r = server.call("click", json!({ "element": ok_button })).await;
    assert_eq!(ok(&r)["route"], "accessibility", "{}", text(&r));
    fixture.saw("clicked Dialog OK").await;
    server.finish().await;
}

/// An app drawn at twice the scale reports logical coordinates; its element bounds come back
/// physical, so a click read off find_elements' image coordinates lands on the button.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scaled_app_gets_physical_bounds() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let fixture = Fixture::start_with(desktop, "deskpilot scaled fixture", &[("GDK_SCALE", "2")]);
    fixture.saw("ready").await;
    let window = window_of(&server, fixture.child.id()).await;
    let found = wait_for(
        Duration::from_secs(15),
        "Apply in the scaled fixture",
        || async {
            let r = server
                .call(
                    "find_elements",
                    json!({ "window_id": window["id"], "description": "Apply button", "limit": 1 }),
                )
                .await;
            let s = ok(&r).clone();
            (s["candidates"][0]["name"] == "Apply").then_some((s, text(&r)))
        },
    )
    .await;
    let (found, said) = found;
    assert!(said.contains("logical coordinates (scale 2.00)"), "{said}");
    let apply = &found["candidates"][0];
    let b = &apply["bounds"];
    let client = &window["client"];
    let inside = |v: &Value, lo: &Value, len: &Value| {
        v.as_i64().unwrap() >= lo.as_i64().unwrap()
            && v.as_i64().unwrap() < lo.as_i64().unwrap() + len.as_i64().unwrap()
    };
    assert!(
        inside(&b["x"], &client["x"], &client["width"])
            && inside(&b["y"], &client["y"], &client["height"])
            && b["height"].as_i64().unwrap() >= 40,
        "physical bounds {b} inside the client {client}"
    );
    let (x, y) = (&apply["image"][0], &apply["image"][1]);
    let r = server.call("click", json!({ "x": x, "y": y })).await;
    ok(&r);
    fixture.saw("clicked Apply").await;
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zenity_yes_by_token_and_a_stopped_app_does_not_stall() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let mut zenity = launch(
        desktop,
        "zenity",
        &[
            "--question",
            "--title",
            "deskpilot token question",
            "--text",
            "Proceed?",
        ],
    );
    window_of(&server, zenity.0.id()).await;
    let state = wait_for(
        Duration::from_secs(15),
        "zenity's Yes button in the tree",
        || async {
            let r = server
            .call(
                "get_window_state",
                json!({ "title_match": "deskpilot token question", "include_screenshot": false }),
            )
            .await;
            let s = ok(&r).clone();
            s["elements"]
                .as_array()?
                .iter()
                .any(|e| e["role"] == "Button" && e["name"] == "Yes")
                .then_some(s)
        },
    )
    .await;
    let yes = element(&state, "Button", "Yes")["token"].clone();
    let r = server.call("click", json!({ "element": yes })).await;
    assert_eq!(ok(&r)["route"], "accessibility", "{}", text(&r));
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = zenity.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "zenity did not exit after Yes");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status.code(), Some(0));

    // A stopped app: the call returns within its timeout, with the screenshot and a note.
    let fixture = Fixture::start(desktop, "deskpilot stopped fixture");
    fixture.saw("ready").await;
    window_of(&server, fixture.child.id()).await;
    // First the app answers (it has joined the accessibility bus), then it stops.
    wait_for(
        Duration::from_secs(15),
        "the fixture's tree before it is stopped",
        || async {
            let r = server
                .call(
                    "get_window_state",
                    json!({ "title_match": "deskpilot stopped fixture", "include_screenshot": false }),
                )
                .await;
            ok(&r)["elements"]
                .as_array()?
                .iter()
                .any(|e| e["name"] == "Apply")
                .then_some(())
        },
    )
    .await;
    // SAFETY: plain signal delivery to our own child.
    unsafe {
        libc::kill(fixture.child.id() as i32, libc::SIGSTOP);
    }
    // This server read the tree before: it answers with that tree, plainly marked, in time.
    let started = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(20),
        server.call(
            "get_window_state",
            json!({ "title_match": "deskpilot stopped fixture", "timeout_ms": 1500 }),
        ),
    )
    .await
    .expect("get_window_state stalled on a stopped app");
    let took = started.elapsed();
    let s = ok(&r).clone();
    assert!(took < Duration::from_secs(6), "took {took:?}");
    assert!(
        text(&r).contains("no fresh accessibility tree")
            && text(&r).contains("1500 ms")
            && text(&r).contains("may be out of date"),
        "{}",
        text(&r)
    );
    assert_eq!(s["source"], "previous-snapshot");
    assert!(
        s["elements"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "Apply"),
        "what is known is returned"
    );
    assert!(
        r.content.iter().any(|c| c.as_image().is_some()),
        "the screenshot still comes"
    );
    // A server that never saw the app: no tree, the screenshot, and a note, in time.
    let fresh = serve(Some(desktop), &[], &[]).await;
    let started = Instant::now();
    let r = tokio::time::timeout(
        Duration::from_secs(20),
        fresh.call(
            "get_window_state",
            json!({ "title_match": "deskpilot stopped fixture", "timeout_ms": 1500 }),
        ),
    )
    .await
    .expect("get_window_state stalled on a stopped app");
    let took = started.elapsed();
    ok(&r);
    assert!(took < Duration::from_secs(6), "took {took:?}");
    assert!(
        text(&r).contains("no accessibility tree") && text(&r).contains("1500 ms"),
        "{}",
        text(&r)
    );
    assert!(
        r.content.iter().any(|c| c.as_image().is_some()),
        "the screenshot still comes"
    );
    fresh.finish().await;
    // SAFETY: as above.
    unsafe {
        libc::kill(fixture.child.id() as i32, libc::SIGCONT);
    }
    // The server is fine afterwards.
    ok(&server.call("status", json!({})).await);
    server.finish().await;
}

/// Qt through the concurrent walk: kcalc's 7 and 3 pressed by token make its display read 73.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcalc_buttons_by_token_make_73() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let kcalc = launch(desktop, "kcalc", &[]);
    let window = window_of(&server, kcalc.0.id()).await;
    let args = json!({ "window_id": window["id"], "include_screenshot": false });
    let state = wait_for(
        Duration::from_secs(30),
        "kcalc's buttons in the tree",
        || async {
            let r = server.call("get_window_state", args.clone()).await;
            let s = ok(&r).clone();
            s["elements"]
                .as_array()?
                .iter()
                .any(|e| e["role"] == "Button" && e["name"] == "7")
                .then_some(s)
        },
    )
    .await;
    assert_eq!(state["source"], "atspi-walk", "Qt has no usable cache");
    // 7 by token, 3 by its bare index in the newest snapshot.
    let seven = element(&state, "Button", "7")["token"].clone();
    let three = element(&state, "Button", "3")["index"].to_string();
    for target in [seven, json!(three)] {
        let r = server.call("click", json!({ "element": target })).await;
        assert_eq!(ok(&r)["route"], "accessibility", "{}", text(&r));
    }
    wait_for(
        Duration::from_secs(10),
        "kcalc's display to read 73",
        || async {
            let r = server.call("get_window_state", args.clone()).await;
            ok(&r)["elements"]
                .as_array()?
                .iter()
                .find(|e| e["description"] == "Result Display")
                .filter(|e| e["name"] == "73")
                .map(|_| ())
        },
    )
    .await;
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_screenshot_outline_lists_controls_from_the_tree_and_its_points_click() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let fixture = Fixture::start(desktop, "deskpilot outline fixture");
    fixture.saw("ready").await;
    window_of(&server, fixture.child.id()).await;
    let (v, said) = wait_for(Duration::from_secs(20), "an outline with Apply", || async {
        let r = server
            .call(
                "screenshot",
                json!({ "title_match": "deskpilot outline fixture", "summary": "summary" }),
            )
            .await;
        // Listed is not yet mapped: WINDOW_NOT_VISIBLE until the window manager shows it.
        if r.is_error == Some(true) {
            return None;
        }
        let v = ok(&r).clone();
        v["outline"]["items"]
            .as_array()?
            .iter()
            .any(|i| i["name"] == "Apply")
            .then_some((v, text(&r)))
    })
    .await;
    assert_eq!(v["outline"]["source"], "accessibility", "{said}");
    assert!(said.contains("Button \"Apply\" @ ("), "{said}");
    // Controls only: the disabled-state flags stay in get_window_state; hidden ones are absent.
    assert!(!said.contains("Hidden button"), "{said}");
    let apply = v["outline"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "Apply")
        .unwrap();
    assert!(apply["token"].as_str().unwrap().starts_with('s'), "{apply}");
    let r = server
        .call(
            "click",
            json!({ "x": apply["x"], "y": apply["y"], "screenshot_id": v["screenshot_id"] }),
        )
        .await;
    ok(&r);
    fixture.saw("clicked Apply").await;
    server.finish().await;
}
