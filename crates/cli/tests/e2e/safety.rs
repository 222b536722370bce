//! The deployment's gates on mutating actions: policy switches, the blocklist and dry run,
//! each checked against what really happened on the desktop (window state, button events the
//! target window received, the clipboard's content).

use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{self, error_code, ok, serve, text, xclip_in, xclip_out};
use crate::paint::PaintedWindow;

/// A configuration file for one test; removed when dropped.
pub struct ConfigFile(std::path::PathBuf);

impl ConfigFile {
    pub fn new(name: &str, body: &str) -> ConfigFile {
        let dir = std::env::temp_dir().join(format!("deskpilot-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("config.toml");
        std::fs::write(&path, body).unwrap();
        ConfigFile(path)
    }

    pub fn arg(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for ConfigFile {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn window<'a>(listing: &'a Value, title: &str) -> &'a Value {
    listing["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["title"] == title)
        .unwrap_or_else(|| panic!("no window {title}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocklist_and_policy_switches_refuse_before_anything_happens() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let config = ConfigFile::new(
        "blocklist",
        "blocklist = [\"SAFE-TARGET\"]\nallowCloseWindow = false\n",
    );
    let server = serve(Some(desktop), &["--config", config.arg()], &[]).await;
    // Launching it through deskpilot is refused: the launch label names it.
    let r = server
        .call(
            "window",
            json!({ "action": "launch", "command": "xterm", "args": ["-T", "deskpilot safe-target"] }),
        )
        .await;
    assert_eq!(error_code(&r), "BLOCKED_TARGET", "{}", text(&r));
    let _app = harness::launch(desktop, "xterm", &["-T", "deskpilot safe-target"]);
    harness::listed(&server, "deskpilot safe-target", "deskpilot safe-target").await;

    // Closing is switched off: refused by policy, the window stays.
    let r = server
        .call(
            "window",
            json!({ "action": "close", "title_match": "deskpilot safe-target" }),
        )
        .await;
    assert_eq!(error_code(&r), "ACTION_DISABLED", "{}", text(&r));
    assert!(
        text(&r).contains("allowCloseWindow = false"),
        "{}",
        text(&r)
    );
    // The blocklist matches the label (it names the window) whatever the case.
    let r = server
        .call(
            "window",
            json!({ "action": "minimize", "title_match": "deskpilot safe-target" }),
        )
        .await;
    assert_eq!(error_code(&r), "BLOCKED_TARGET", "{}", text(&r));
    assert!(text(&r).contains("do not try to reach the same target another way"));
    let listing = ok(&server.call("list_windows", json!({})).await).clone();
    let w = window(&listing, "deskpilot safe-target");
    assert_eq!(w["minimized"], false, "nothing was performed: {w}");
    // Keys sent while it has the focus are refused too: their label names the focused window.
    ok(&server
        .call(
            "window",
            json!({ "action": "focus", "title_match": "deskpilot safe-target" }),
        )
        .await);
    let r = server
        .call("type_text", json!({ "text": "echo should-not-type" }))
        .await;
    assert_eq!(error_code(&r), "BLOCKED_TARGET", "{}", text(&r));
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dry_run_reports_what_it_would_do_and_touches_nothing() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot dry run",
        300,
        200,
        500,
        300,
        (20, 20, 10),
    );
    painted.listen();
    let config = ConfigFile::new("dryrun", "dryRun = true\nallowLaunch = false\n");
    let server = serve(Some(desktop), &["--config", config.arg()], &[]).await;
    let w = harness::listed(&server, "deskpilot dry run", "deskpilot dry run").await;
    painted.raise();
    let r = server
        .call(
            "screenshot",
            json!({ "window_id": w["id"], "format": "png" }),
        )
        .await;
    ok(&r);
    let r = server.call("click", json!({ "x": 40, "y": 40 })).await;
    let s = ok(&r).clone();
    assert_eq!(s["dry_run"], true);
    assert!(
        text(&r).starts_with("[dry run] Would left click at (")
            && text(&r).contains("\"deskpilot dry run\""),
        "{}",
        text(&r)
    );
    // Nothing reached the window: a marker click sent after the dry run (another client's
    // XTEST press) is the first press the window sees. deskpilot's calls end with a round trip,
    // so a press it had sent would have come before the marker.
    let (ox, oy) = painted.client_origin();
    let (mx, my) = (ox + 400, oy + 200);
    let marker = std::process::Command::new("xdotool")
        .args(["mousemove", &mx.to_string(), &my.to_string(), "click", "1"])
        .env("DISPLAY", desktop.display())
        .status()
        .expect("xdotool");
    assert!(marker.success());
    let presses = harness::wait_for(Duration::from_secs(5), "the marker click", || async {
        let p: Vec<_> = painted.presses().into_iter().filter(|p| p.down).collect();
        (!p.is_empty()).then_some(p)
    })
    .await;
    assert_eq!(
        (presses[0].x as i32, presses[0].y as i32),
        (400, 200),
        "the first press is the marker, so the dry-run click was never delivered: {presses:?}"
    );
    // Reads still work; the clipboard is not written.
    xclip_in(desktop, "kept by xclip");
    let r = server
        .call("clipboard_write", json!({ "text": "dry" }))
        .await;
    assert_eq!(ok(&r)["dry_run"], true);
    assert_eq!(xclip_out(desktop), "kept by xclip");
    // status says so, for the agent and for the human reading along.
    let r = server.call("status", json!({})).await;
    assert_eq!(ok(&r)["dry_run"], true);
    assert!(text(&r).contains("dry run ON"), "{}", text(&r));
    // Policy comes before dry run: launch is refused outright.
    let r = server
        .call("window", json!({ "action": "launch", "command": "xterm" }))
        .await;
    assert_eq!(error_code(&r), "ACTION_DISABLED", "{}", text(&r));
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deployment_defaults_for_coordinates_and_the_master_switch_apply() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    // enabled = false: no tool at all, and a call by name is refused.
    let off = ConfigFile::new("disabled", "enabled = false\n");
    let server = serve(Some(desktop), &["--config", off.arg()], &[]).await;
    assert!(server.client.list_all_tools().await.unwrap().is_empty());
    let refused = server
        .client
        .call_tool(rmcp::model::CallToolRequestParams::new("status"))
        .await;
    assert!(refused.is_err(), "a tool was served with enabled = false");
    server.finish().await;

    // Without a screenshot, x/y have no image space: refused ...
    let server = serve(Some(desktop), &[], &[]).await;
    let r = server
        .call("move_cursor", json!({ "x": 321, "y": 234 }))
        .await;
    assert_eq!(error_code(&r), "NO_REFERENCE_SCREENSHOT", "{}", text(&r));
    server.finish().await;
    // ... unless the deployment says coordinates are physical.
    let physical = ConfigFile::new(
        "physical",
        "coordinates = \"physical\"\nhitTest = \"off\"\n",
    );
    let server = serve(Some(desktop), &["--config", physical.arg()], &[]).await;
    let r = server
        .call("move_cursor", json!({ "x": 321, "y": 234 }))
        .await;
    let s = ok(&r);
    assert_eq!(s["receipt"]["landed"], true, "{s}");
    let status = server.call("status", json!({})).await;
    assert_eq!(
        ok(&status)["cursor"],
        json!({ "x": 321, "y": 234 }),
        "{}",
        text(&status)
    );
    server.finish().await;
}
