//! `wait_for` against real windows: one that appears late, one that never does, a still
//! window, a window that never stops changing, and an element that appears in a tree.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::harness::{self, error_code, launch, ok, serve, text};
use crate::paint::PaintedWindow;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_for_windows_stillness_and_change() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;

    // A window that appears a second from now: waited for, not slept for.
    let _late = launch(
        desktop,
        "sh",
        &["-c", "sleep 1; exec xterm -T 'deskpilot late window'"],
    );
    let r = server
        .call(
            "wait_for",
            json!({ "wait_kind": "window", "text": "deskpilot late window", "timeout_ms": 20000 }),
        )
        .await;
    let s = ok(&r).clone();
    assert!(s["waited_ms"].as_u64().unwrap() >= 500, "{s}");
    assert!(
        s["matched"]
            .as_str()
            .unwrap()
            .contains("deskpilot late window")
    );

    // One that never appears: WAIT_TIMEOUT on time, naming what is there.
    let started = Instant::now();
    let r = server
        .call(
            "wait_for",
            json!({ "wait_kind": "window", "text": "deskpilot never", "timeout_ms": 400 }),
        )
        .await;
    assert_eq!(error_code(&r), "WAIT_TIMEOUT");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(text(&r).contains("deskpilot late window"), "{}", text(&r));

    // A still window is stable; a window printing nonstop never is.
    let _painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot still",
        300,
        200,
        100,
        100,
        (20, 20, 10),
    );
    let still = harness::listed(&server, "deskpilot still", "deskpilot still").await;
    let r = server
        .call(
            "wait_for",
            json!({ "wait_kind": "stable", "window_id": still["id"], "stable_ms": 300, "timeout_ms": 5000 }),
        )
        .await;
    let s = ok(&r).clone();
    assert!(s["frames"].as_u64().unwrap() >= 3, "{s}");
    let _busy = launch(
        desktop,
        "xterm",
        &[
            "-T",
            "deskpilot busy",
            "-geometry",
            "80x24+900+100",
            "-e",
            "sh",
            "-c",
            "while :; do date +%N; done",
        ],
    );
    let busy = harness::listed(&server, "deskpilot busy", "deskpilot busy").await;
    let r = server
        .call(
            "wait_for",
            json!({ "wait_kind": "stable", "window_id": busy["id"], "stable_ms": 300, "timeout_ms": 1500 }),
        )
        .await;
    assert_eq!(error_code(&r), "WAIT_TIMEOUT", "{}", text(&r));
    assert!(text(&r).contains("kept changing"), "{}", text(&r));

    // Bad arguments are typed errors.
    let r = server
        .call("wait_for", json!({ "wait_kind": "element" }))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT");
    let r = server.call("wait", json!({ "seconds": 31 })).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT");
    server.finish().await;
}

/// A client that records the progress notifications it receives.
#[derive(Default)]
struct Progress(std::sync::Mutex<Vec<rmcp::model::ProgressNotificationParam>>);

impl rmcp::ClientHandler for Progress {
    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_waits_report_progress() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = harness::serve_with(Some(desktop), &[], &[], Progress::default()).await;
    // rmcp's client puts a progress token on every request it sends.
    let r = server
        .call(
            "wait_for",
            json!({ "wait_kind": "window", "text": "deskpilot never shows", "timeout_ms": 2600 }),
        )
        .await;
    assert_eq!(error_code(&r), "WAIT_TIMEOUT");
    let seen = server.client.service().0.lock().unwrap().clone();
    assert!(seen.len() >= 2, "one notification a second: {seen:?}");
    assert!(
        seen.iter()
            .all(|p| p.progress_token == seen[0].progress_token
                && p.total == Some(2600.0)
                && p.message.as_deref().is_some_and(|m| m.contains("window"))),
        "{seen:?}"
    );
    assert!(
        seen.windows(2).all(|w| w[0].progress < w[1].progress),
        "progress grows: {seen:?}"
    );
    server.client.service().0.lock().unwrap().clear();
    ok(&server.call("wait", json!({ "seconds": 1.5 })).await);
    let seen = server.client.service().0.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].total, Some(1500.0));
    server.finish().await;
}
