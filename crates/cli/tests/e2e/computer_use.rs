//! The `computer-use` profile as a computer-use-mcp user drives it: `list_apps` →
//! `get_window_state {window_id}` → `click {window_id, element_index}` → `get_window_state`
//! again, on zenity (its exit code proves the click), our GTK fixture (its event lines prove
//! set_value, secondary actions, and that an index from before a structure change is refused)
//! and mousepad (text read back through the system's own AT-SPI stack); a point under an
//! always-on-top window; launch_app of a desktop entry; and `serve --check`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::elements::Fixture;
use crate::harness::{
    self, Launched, error_code, image, launch, ok, probe, probe_until, serve, text, wait_for,
};
use crate::paint::PaintedWindow;

const PROFILE: &[&str] = &["--profile", "computer-use"];
const MIXED: &str = "Hello é 中文 ÄÖ 😀";

/// The window of process `pid` in this profile's `list_windows`, polled.
async fn window_of(server: &harness::Server, pid: u32) -> Value {
    wait_for(
        Duration::from_secs(30),
        &format!("a window of pid {pid}"),
        || async {
            let r = server.call("list_windows", json!({})).await;
            ok(&r)["windows"]
                .as_array()?
                .iter()
                .find(|w| w["pid"] == pid)
                .cloned()
        },
    )
    .await
}

/// The element with this control type and name in a `get_window_state` result.
fn indexed<'a>(state: &'a Value, control_type: &str, name: &str) -> &'a Value {
    state["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["control_type"] == control_type && e["name"] == name)
        .unwrap_or_else(|| panic!("no {control_type} \"{name}\" in {:#}", state["elements"]))
}

/// `get_window_state` polled until the tree holds `control_type "name"`; the result.
async fn state_with(
    server: &harness::Server,
    window: &Value,
    control_type: &str,
    name: &str,
) -> rmcp::model::CallToolResult {
    wait_for(
        Duration::from_secs(30),
        &format!("{control_type} \"{name}\" in get_window_state"),
        || async {
            let r = server.call("get_window_state", window.clone()).await;
            if r.is_error == Some(true) {
                return None;
            }
            ok(&r)["elements"]
                .as_array()?
                .iter()
                .any(|e| e["control_type"] == control_type && e["name"] == name)
                .then_some(r)
        },
    )
    .await
}

/// Checks one tree line against `<tabs><index> <ControlType> "<name>"[ value="…"][ flags][
/// actions=[…]]` and the structured element of the same index; returns the index.
fn check_line(line: &str, elements: &[Value]) -> usize {
    let depth = line.chars().take_while(|c| *c == '\t').count();
    let rest = &line[depth..];
    let (index, rest) = rest.split_once(' ').expect("index then control type");
    let index: usize = index
        .parse()
        .unwrap_or_else(|_| panic!("no index: {line:?}"));
    let e = &elements[index];
    assert_eq!(e["depth"], depth, "indent is the depth: {line:?}");
    let (control_type, rest) = rest.split_once(' ').expect("control type then name");
    assert_eq!(e["control_type"], control_type, "{line:?}");
    assert!(rest.starts_with('"'), "the name is quoted: {line:?}");
    let mut tail = rest;
    if let Some(v) = e["value"].as_str().filter(|v| !v.contains(['"', '\n'])) {
        assert!(tail.contains(&format!(" value=\"{v}\"")), "{line:?}");
    }
    let flags: Vec<&str> = {
        let after_name = tail.rsplit_once("\" ").map_or("", |(_, f)| f);
        tail = after_name;
        tail.split(' ')
            .take_while(|w| !w.starts_with("actions="))
            .collect()
    };
    assert_eq!(
        flags.contains(&"disabled"),
        e["enabled"] == false,
        "{line:?}"
    );
    assert_eq!(flags.contains(&"FOCUSED"), e["focused"] == true, "{line:?}");
    assert_eq!(
        flags.contains(&"required"),
        e["required"] == true,
        "{line:?}"
    );
    let actions: Vec<String> = e["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    if actions.is_empty() {
        assert!(!line.contains(" actions=["), "{line:?}");
    } else {
        assert!(
            line.ends_with(&format!(" actions=[{}]", actions.join(", "))),
            "the line lists exactly the element's actions: {line:?} vs {actions:?}"
        );
    }
    index
}

/// The tree lines of a `get_window_state` text (between the header and the screenshot line),
/// each checked; the indexes are 0, 1, 2… in order.
fn check_tree(r: &rmcp::model::CallToolResult) {
    let t = text(r);
    let elements = ok(r)["elements"].as_array().unwrap().clone();
    let lines: Vec<&str> = t
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("Screenshot ") && !l.starts_with("Note: "))
        .collect();
    assert_eq!(lines.len(), elements.len(), "one line per element:\n{t}");
    for (n, line) in lines.iter().enumerate() {
        assert_eq!(check_line(line, &elements), n, "depth-first order:\n{t}");
    }
}

/// The target's button events, gathered until `enough` says so (5 s at most).
async fn pressed(
    target: &PaintedWindow,
    enough: impl Fn(&[crate::paint::Press]) -> bool,
) -> Vec<crate::paint::Press> {
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut got = Vec::new();
    loop {
        got.extend(target.presses());
        if enough(&got) {
            return got;
        }
        assert!(Instant::now() < deadline, "only {got:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn exit_of(child: &mut std::process::Child, what: &str) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s.code().expect("an exit code");
        }
        assert!(Instant::now() < deadline, "{what} did not exit");
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_apps_then_state_then_click_by_index_answers_zenity() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), PROFILE, &[]).await;
    let pad = launch(desktop, "mousepad", &["--disable-server"]);
    let pad_pid = pad.0.id();
    let apps = wait_for(Duration::from_secs(30), "mousepad in list_apps", || async {
        let r = server.call("list_apps", json!({})).await;
        let v = ok(&r).clone();
        v["running"]
            .as_array()?
            .iter()
            .any(|a| a["pid"] == pad_pid && !a["windows"].as_array().unwrap().is_empty())
            .then_some((v, text(&r)))
    })
    .await;
    let (v, said) = apps;
    assert!(
        said.contains(&format!("mousepad (pid {pad_pid})")),
        "running apps are named with their pid:\n{said}"
    );
    let installed = v["installed"].as_array().unwrap();
    let xterm = installed
        .iter()
        .find(|a| a["id"] == "debian-xterm.desktop")
        .unwrap_or_else(|| panic!("no xterm entry in {installed:#?}"));
    assert_eq!(xterm["exec"][0], "xterm", "{xterm}");
    assert!(said.contains("debian-xterm.desktop: XTerm"), "{said}");

    // The loop on a zenity question: Yes by its index exits 0.
    let mut zenity = launch(
        desktop,
        "zenity",
        &["--question", "--title=cu question", "--text=Proceed?"],
    );
    let w = window_of(&server, zenity.0.id()).await;
    let by_id = json!({ "window_id": w["window_id"] });
    let r = state_with(&server, &by_id, "Button", "Yes").await;
    check_tree(&r);
    let t = text(&r);
    assert!(
        t.starts_with(&format!(
            "Window {} \"cu question\" (zenity, pid ",
            w["window_id"]
        )),
        "{t}"
    );
    let shot = &ok(&r)["screenshot"];
    let (iw, ih, _) = image(&r);
    assert_eq!(
        (shot["width"].as_u64(), shot["height"].as_u64()),
        (Some(iw as u64), Some(ih as u64))
    );
    assert!(iw.max(ih) <= 1600, "longest edge capped");
    let scale = shot["scale"].as_f64().unwrap();
    let frame = &ok(&r)["window"]["frame"];
    assert!(
        (iw as f64 / frame["width"].as_f64().unwrap() - scale).abs() < 0.05,
        "scale is image pixels / physical pixels: {shot} {frame}"
    );
    let yes = indexed(ok(&r), "Button", "Yes");
    assert_eq!(yes["actions"][0], "Invoke", "{yes}");
    let line = t
        .lines()
        .find(|l| {
            l.trim_start()
                .starts_with(&format!("{} Button \"Yes\"", yes["index"]))
        })
        .unwrap_or_else(|| panic!("no Yes line in\n{t}"));
    assert!(line.ends_with("]"), "{line}");
    let r = server
        .call(
            "click",
            json!({ "window_id": w["window_id"], "element_index": yes["index"] }),
        )
        .await;
    ok(&r);
    assert_eq!(exit_of(&mut zenity.0, "zenity").await, 0, "Yes exits 0");
    // get_window_state again: the window is gone, said in this profile's words.
    let r = server.call("get_window_state", by_id.clone()).await;
    let code = error_code(&r);
    assert!(
        code == "window_not_found" || code == "target_window_gone",
        "{}",
        text(&r)
    );

    // The Codex form, window: {app, id}, works the same: No exits 1.
    let mut zenity = launch(
        desktop,
        "zenity",
        &["--question", "--title=cu question 2", "--text=Proceed?"],
    );
    let w = window_of(&server, zenity.0.id()).await;
    let by_app = json!({ "window": { "app": "zenity", "id": w["window_id"] } });
    let r = state_with(&server, &by_app, "Button", "No").await;
    let no = indexed(ok(&r), "Button", "No")["index"].clone();
    let mut args = by_app.clone();
    args["element_index"] = no;
    ok(&server.call("click", args).await);
    assert_eq!(exit_of(&mut zenity.0, "zenity").await, 1, "No exits 1");
    // window_id and window naming different windows is refused, not guessed.
    let r = server
        .call(
            "get_window",
            json!({ "window_id": w["window_id"], "window": { "id": 1 } }),
        )
        .await;
    assert_eq!(error_code(&r), "invalid_argument", "{}", text(&r));
    drop(pad);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_value_secondary_actions_and_a_stale_index_on_the_fixture() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), PROFILE, &[]).await;
    let fixture = Fixture::start(desktop, "computer-use fixture");
    let w = window_of(&server, fixture.pid()).await;
    let win = json!({ "window_id": w["window_id"] });
    let r = state_with(&server, &win, "Edit", "Name").await;
    check_tree(&r);
    let t = text(&r);
    assert!(
        t.contains("Button \"Disabled action\" disabled"),
        "a disabled button says so:\n{t}"
    );
    assert!(
        !t.contains("Hidden button"),
        "a hidden control gets no index:\n{t}"
    );
    let edit = indexed(ok(&r), "Edit", "Name").clone();
    assert_eq!(edit["value"], "", "{edit}");
    assert!(
        edit["actions"]
            .as_array()
            .unwrap()
            .contains(&json!("SetValue"))
    );

    // set_value, read back by the app and by the next state.
    let mut args = win.clone();
    args["element_index"] = edit["index"].clone();
    args["value"] = json!("Grüße 你好");
    let r = server.call("set_value", args).await;
    ok(&r);
    fixture.saw("changed Name Grüße 你好").await;
    let r = server.call("get_window_state", win.clone()).await;
    assert_eq!(indexed(ok(&r), "Edit", "Name")["value"], "Grüße 你好");
    assert!(
        text(&r).contains("Edit \"Name\" value=\"Grüße 你好\""),
        "{}",
        text(&r)
    );

    // An action from the element's list, and one not in it.
    let apply = indexed(ok(&r), "Button", "Apply").clone();
    let check = indexed(ok(&r), "CheckBox", "Enable logging").clone();
    assert_eq!(check["value"], "Off");
    assert!(
        text(&r).contains("CheckBox \"Enable logging\" value=\"Off\""),
        "{}",
        text(&r)
    );
    let mut args = win.clone();
    args["element_index"] = apply["index"].clone();
    args["action"] = json!("Toggle");
    let r = server.call("perform_secondary_action", args).await;
    assert_eq!(error_code(&r), "action_unsupported", "{}", text(&r));
    let listed: Vec<String> = apply["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    for a in &listed {
        assert!(text(&r).contains(a.as_str()), "lists {a}: {}", text(&r));
    }
    assert!(!fixture.has("clicked Apply"), "nothing was done");
    let mut args = win.clone();
    args["element_index"] = check["index"].clone();
    args["action"] = json!("Toggle");
    ok(&server.call("perform_secondary_action", args).await);
    fixture.saw("toggled Enable logging on").await;

    // "Logging is on" appeared: an index from before is refused, never re-resolved by position.
    let mut args = win.clone();
    args["element_index"] = apply["index"].clone();
    let r = server.call("click", args.clone()).await;
    assert_eq!(error_code(&r), "stale_element", "{}", text(&r));
    assert!(!fixture.has("clicked Apply"));
    let r = state_with(&server, &win, "Text", "Logging is on").await;
    let apply = indexed(ok(&r), "Button", "Apply")["index"].clone();
    args["element_index"] = apply;
    ok(&server.call("click", args).await);
    fixture.saw("clicked Apply").await;
    // An index beyond the tree.
    let mut args = win.clone();
    args["element_index"] = json!(9999);
    let r = server.call("click", args).await;
    assert_eq!(error_code(&r), "element_not_found", "{}", text(&r));
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_point_under_an_always_on_top_window_is_point_obstructed() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), PROFILE, &[]).await;
    let target = PaintedWindow::open(
        desktop.display(),
        "cu target",
        100,
        100,
        600,
        400,
        (0, 0, 1),
    );
    let w = wait_for(Duration::from_secs(30), "cu target listed", || async {
        let r = server
            .call("list_windows", json!({ "filter": "cu target" }))
            .await;
        ok(&r)["windows"].as_array()?.first().cloned()
    })
    .await;
    target.listen();
    // Another app's always-on-top window over part of the target (a window of the target's
    // own app may cover it: menus and dialogs do).
    let cover = launch(
        desktop,
        "xterm",
        &["-T", "cu always on top", "-geometry", "30x8+420+320"],
    );
    let top = wait_for(Duration::from_secs(30), "the cover listed", || async {
        let r = server
            .call("list_windows", json!({ "filter": "cu always on top" }))
            .await;
        ok(&r)["windows"].as_array()?.first().cloned()
    })
    .await;
    // Once managed (a window manager takes the state change of a mapped window).
    let cover_id = top["window_id"].as_u64().unwrap() as u32;
    // Asked again until the window manager has taken it (it may not manage the window yet).
    wait_for(Duration::from_secs(10), "the cover kept above", || async {
        crate::paint::keep_above(desktop.display(), cover_id);
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut cmd = std::process::Command::new("xprop");
        cmd.args(["-id", &cover_id.to_string(), "_NET_WM_STATE"]);
        desktop.configure(&mut cmd);
        let out = cmd.output().expect("run xprop");
        String::from_utf8_lossy(&out.stdout)
            .contains("_NET_WM_STATE_ABOVE")
            .then_some(())
    })
    .await;
    // A window without an accessibility tree still has its state: the screenshot, and a note.
    let r = server
        .call("get_window_state", json!({ "window_id": w["window_id"] }))
        .await;
    assert!(
        ok(&r)["screenshot"]["screenshot_id"].is_u64(),
        "{}",
        text(&r)
    );
    assert!(
        text(&r).contains("Note: no accessibility tree"),
        "{}",
        text(&r)
    );
    let r = server
        .call(
            "get_window_state",
            json!({ "window_id": w["window_id"], "include_text": false }),
        )
        .await;
    let shot = ok(&r)["screenshot"].clone();
    let id = shot["screenshot_id"].clone();
    let origin = (
        shot["origin"]["x"].as_f64().unwrap(),
        shot["origin"]["y"].as_f64().unwrap(),
    );
    let scale = shot["scale"].as_f64().unwrap();
    let to_image = |sx: f64, sy: f64| ((sx - origin.0) * scale, (sy - origin.1) * scale);
    // The middle of the cover, in the target's screenshot.
    let f = &top["frame"];
    let (cx, cy) = to_image(
        f["x"].as_f64().unwrap() + f["width"].as_f64().unwrap() / 2.0,
        f["y"].as_f64().unwrap() + f["height"].as_f64().unwrap() / 2.0,
    );
    let r = server
        .call(
            "click",
            json!({ "window_id": w["window_id"], "x": cx, "y": cy, "screenshot_id": id }),
        )
        .await;
    assert_eq!(error_code(&r), "point_obstructed", "{}", text(&r));
    assert!(
        text(&r).contains("cu always on top"),
        "names the window on top: {}",
        text(&r)
    );
    // Outside the window's screenshot.
    let r = server
        .call(
            "click",
            json!({ "window_id": w["window_id"], "x": shot["width"].as_f64().unwrap() + 5.0, "y": 10, "screenshot_id": id }),
        )
        .await;
    assert_eq!(error_code(&r), "point_outside_window", "{}", text(&r));
    // A screenshot id that is not this window's current one.
    let r = server
        .call(
            "click",
            json!({ "window_id": w["window_id"], "x": 10, "y": 10, "screenshot_id": id.as_u64().unwrap() + 1000 }),
        )
        .await;
    assert_eq!(error_code(&r), "invalid_argument", "{}", text(&r));
    assert!(
        target.presses().is_empty(),
        "no refusal clicked anything: {:?}",
        target.presses()
    );
    // A free point of the same window is clicked where the image says.
    let (cx, cy) = target.client_origin();
    let (ix, iy) = to_image(cx as f64 + 50.0, cy as f64 + 40.0);
    let r = server
        .call(
            "click",
            json!({ "window_id": w["window_id"], "x": ix, "y": iy, "screenshot_id": id }),
        )
        .await;
    ok(&r);
    let presses = pressed(&target, |p| p.iter().any(|p| !p.down)).await;
    let down = presses.iter().find(|p| p.down).expect("a button press");
    assert!(
        (down.x - 50).abs() <= 2 && (down.y - 40).abs() <= 2,
        "landed at {presses:?}"
    );
    // Scroll: three notches down are three presses of wheel button 5 at that point.
    let (ix, iy) = to_image(cx as f64 + 300.0, cy as f64 + 200.0);
    let r = server
        .call(
            "scroll",
            json!({ "window_id": w["window_id"], "x": ix, "y": iy, "screenshot_id": id, "direction": "down", "amount": 3 }),
        )
        .await;
    ok(&r);
    let wheel: Vec<_> = pressed(&target, |p| {
        p.iter().filter(|p| p.down && p.button == 5).count() >= 3
    })
    .await
    .into_iter()
    .filter(|p| p.down && p.button == 5)
    .collect();
    assert_eq!(wheel.len(), 3, "{wheel:?}");
    assert!(
        wheel
            .iter()
            .all(|p| (p.x - 300).abs() <= 2 && (p.y - 200).abs() <= 2),
        "{wheel:?}"
    );
    // Drag: pressed at the start, released at the end.
    let (fx, fy) = to_image(cx as f64 + 60.0, cy as f64 + 60.0);
    let (tx, ty) = to_image(cx as f64 + 250.0, cy as f64 + 150.0);
    let r = server
        .call(
            "drag",
            json!({ "window_id": w["window_id"], "from_x": fx, "from_y": fy, "to_x": tx, "to_y": ty, "screenshot_id": id }),
        )
        .await;
    ok(&r);
    let got = pressed(&target, |p| p.iter().any(|p| !p.down && p.button == 1)).await;
    let down = *got.iter().find(|p| p.down && p.button == 1).unwrap();
    let up = *got.iter().find(|p| !p.down && p.button == 1).unwrap();
    assert!(
        (down.x - 60).abs() <= 2 && (down.y - 60).abs() <= 2,
        "{down:?}"
    );
    assert!((up.x - 250).abs() <= 2 && (up.y - 150).abs() <= 2, "{up:?}");
    drop(cover);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn type_text_and_press_key_into_mousepad_read_back_exactly() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), PROFILE, &[]).await;
    let pad = launch(desktop, "mousepad", &["--disable-server"]);
    let pid = pad.0.id();
    let w = window_of(&server, pid).await;
    let pid_s = pid.to_string();
    probe_until(desktop, &["text", &pid_s]).await;
    let editor_text = || async {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let seen = probe(desktop, &["text", &pid_s])
                .and_then(|v| v["text"].as_str().map(str::to_string))
                .unwrap_or_default();
            if seen == MIXED || Instant::now() > deadline {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
    };
    // The session's last screenshot is of another window, which then closes: keys aimed at
    // mousepad still go there (they re-check mousepad, not that screenshot's window).
    let other = launch(desktop, "xterm", &["-T", "cu other"]);
    let o = window_of(&server, other.0.id()).await;
    ok(&server
        .call("get_window_state", json!({ "window_id": o["window_id"] }))
        .await);
    drop(other);
    wait_for(Duration::from_secs(10), "the other window gone", || async {
        let r = server.call("list_windows", json!({})).await;
        (!ok(&r)["windows"]
            .as_array()?
            .iter()
            .any(|w| w["window_id"] == o["window_id"]))
        .then_some(())
    })
    .await;
    for round in 0..2 {
        let r = server
            .call(
                "press_key",
                json!({ "window_id": w["window_id"], "key": "ctrl+a" }),
            )
            .await;
        ok(&r);
        let r = server
            .call(
                "type_text",
                json!({ "window_id": w["window_id"], "text": MIXED }),
            )
            .await;
        ok(&r);
        assert_eq!(editor_text().await, MIXED, "round {round}");
    }
    drop(pad);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn launch_app_of_a_desktop_entry_reports_its_window() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), PROFILE, &[]).await;
    let r = server
        .call("launch_app", json!({ "app": "debian-xterm.desktop" }))
        .await;
    let v = ok(&r).clone();
    let _xterm = Launched(v["pid"].as_u64().unwrap() as u32);
    assert_eq!(v["app"]["id"], "debian-xterm.desktop", "{v}");
    let id = v["window_id"].clone();
    assert!(id.is_u64(), "reports the window it opened: {}", text(&r));
    assert!(
        text(&r).contains(&format!("window_id {id}")),
        "{}",
        text(&r)
    );
    // That window is the app's, as list_windows says.
    let r = server.call("get_window", json!({ "window_id": id })).await;
    assert_eq!(ok(&r)["window"]["pid"], v["pid"], "{}", text(&r));
    let r = server
        .call("launch_app", json!({ "app": "no-such-app-anywhere" }))
        .await;
    assert_eq!(error_code(&r), "launch_failed", "{}", text(&r));
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_check_reports_the_desktop_and_fails_without_one() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _xterm = launch(desktop, "xterm", &["-T", "cu check"]);
    let check = || {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_deskpilot"));
        cmd.args(["serve", "--profile", "computer-use", "--check"])
            .stdin(std::process::Stdio::null());
        desktop.configure(&mut cmd);
        cmd.env("CU_HELPER_CACHE_DIR", std::env::temp_dir());
        cmd.output().expect("run deskpilot")
    };
    // The xterm counts once it is mapped.
    let said = wait_for(Duration::from_secs(30), "a targetable window", || async {
        let out = check();
        let said = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{said}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let targetable: u32 = said
            .lines()
            .find_map(|l| l.strip_prefix("targetable windows: "))
            .unwrap_or_else(|| panic!("{said}"))
            .parse()
            .unwrap();
        (targetable >= 1).then_some(said)
    })
    .await;
    assert!(said.starts_with("backend: "), "{said}");
    assert!(said.contains("\nping: ok"), "{said}");
    assert!(said.contains("CU_HELPER_CACHE_DIR"), "{said}");

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_deskpilot"))
        .args(["serve", "--profile", "computer-use", "--check"])
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run deskpilot");
    assert!(
        !out.status.success(),
        "no desktop, no success: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}
