//! `verify` samples what the action resolved: a click read off an older screenshot of one
//! window is judged on that window, not on whatever was captured last.

use serde_json::json;

use crate::harness::{self, launch, ok, serve, text};

/// Issue 22: after screenshots of xterm A then xterm B, a click with A's `screenshot_id` and
/// `verify: true` was judged on B ("20.6 % of sampled pixels of the window B differ": B
/// repainted when A was activated, a false confirmation).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_click_is_verified_on_the_window_of_the_screenshot_it_names() {
    let _guard = harness::exclusive().await;
    let Some(own) = harness::private_desktop() else {
        return;
    };
    let desktop = &own;
    let server = serve(Some(desktop), &[], &[]).await;
    let _a = launch(
        desktop,
        "xterm",
        &["-T", "deskpilot verify A", "-geometry", "40x10+40+40"],
    );
    let _b = launch(
        desktop,
        "xterm",
        &["-T", "deskpilot verify B", "-geometry", "40x10+520+40"],
    );
    let a = harness::listed(&server, "deskpilot verify", "deskpilot verify A").await;
    let b = harness::listed(&server, "deskpilot verify", "deskpilot verify B").await;

    let shot_a = server
        .call("screenshot", json!({ "window_id": a["id"] }))
        .await;
    let id_a = ok(&shot_a)["screenshot_id"].clone();
    let shot_b = server
        .call("screenshot", json!({ "window_id": b["id"] }))
        .await;
    assert_ne!(ok(&shot_b)["screenshot_id"], id_a, "{}", text(&shot_b));

    // A point inside A's image, read off A's screenshot.
    let r = server
        .call(
            "click",
            json!({ "x": 60, "y": 40, "screenshot_id": id_a, "verify": true }),
        )
        .await;
    let s = ok(&r);
    assert_eq!(s["window"]["title"], "deskpilot verify A", "{}", text(&r));
    let target = s["verify"]["target"].as_str().unwrap_or_default();
    assert!(
        target.contains("deskpilot verify A") && !target.contains("deskpilot verify B"),
        "verify samples window A: {}",
        text(&r)
    );
    let verdict = text(&r)
        .lines()
        .find(|l| l.starts_with("Screen verdict"))
        .unwrap_or_default()
        .to_string();
    assert!(
        verdict.contains("window \"deskpilot verify A\""),
        "the verdict names window A: {}",
        text(&r)
    );
    server.finish().await;
}
