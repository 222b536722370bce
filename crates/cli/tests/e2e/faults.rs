//! The accessibility bus killed under a running server: tree tools say accessibility is
//! unavailable and how to fix it, pixels keep working, and trees come back once the bus does,
//! without a restart. (The X server killed under `serve --virtual-display` is in `http`.)

use std::process::{Command, Stdio};
use std::time::Duration;

use deskpilot_x11::{VirtualDisplay, VirtualDisplayOptions};
use serde_json::json;

use crate::harness::{self, ok, text};

/// Pids of the processes whose command line contains `needle`.
fn pids_with(needle: &str) -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(needle)
                .then_some(pid)
        })
        .collect()
}

/// A bus launcher the test started, and the bus it runs: both stopped when dropped.
struct Launcher {
    child: std::process::Child,
    bus: String,
}

impl Drop for Launcher {
    fn drop(&mut self) {
        for pid in pids_with(&self.bus) {
            // SAFETY: kill(2) on the bus daemon of this test's own desktop.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_accessibility_bus_is_reported_with_its_fix_and_trees_return_with_it() {
    if harness::desktop().is_none() {
        return;
    }
    // A desktop of this test's own: its bus is the one killed.
    let desktop = VirtualDisplay::start(VirtualDisplayOptions {
        width: 1024,
        height: 768,
        ..Default::default()
    })
    .expect("a private desktop");
    let runtime = desktop
        .env()
        .iter()
        .find(|(k, _)| k == "XDG_RUNTIME_DIR")
        .map(|(_, v)| v.clone())
        .expect("XDG_RUNTIME_DIR");
    let bus = format!("{runtime}/at-spi/bus");
    let server = harness::serve(Some(&desktop), &[], &[]).await;

    // A zenity question titled `title`, once its tree (its Yes button) reads.
    let question_with_a_tree = |title: &'static str| {
        let app = harness::launch(
            &desktop,
            "zenity",
            &["--question", "--title", title, "--text", title],
        );
        let server = &server;
        async move {
            let args = json!({ "title_match": title, "include_screenshot": false });
            harness::wait_for(Duration::from_secs(20), "the tree", || async {
                let r = server.call("get_window_state", args.clone()).await;
                text(&r).contains("Button \"Yes\"").then_some(())
            })
            .await;
            app
        }
    };
    let _before = question_with_a_tree("bus-before").await;

    let killed = pids_with(&bus);
    assert!(!killed.is_empty(), "no accessibility bus found at {bus}");
    for pid in &killed {
        // SAFETY: kill(2) on the bus daemon of this test's own desktop.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    harness::wait_for(Duration::from_secs(5), "the bus gone", || async {
        pids_with(&bus).is_empty().then_some(())
    })
    .await;

    // Tree tools: unavailable, with the fix.
    let _during = harness::launch(
        &desktop,
        "zenity",
        &["--question", "--title", "bus-during", "--text", "during"],
    );
    harness::listed(&server, "bus-during", "bus-during").await;
    let r = server
        .call(
            "get_window_state",
            json!({ "title_match": "bus-during", "include_screenshot": false }),
        )
        .await;
    let t = text(&r);
    assert!(
        t.contains("accessibility bus") && t.contains("at-spi-bus-launcher --launch-immediately"),
        "the tree says the bus is gone and how to bring it back: {t}"
    );
    assert!(!t.contains("Button \"Yes\""), "no tree without a bus: {t}");
    // Pixels keep working.
    let r = server
        .call("screenshot", json!({ "title_match": "bus-during" }))
        .await;
    ok(&r);
    let (w, h, _) = harness::image(&r);
    assert!(w > 50 && h > 50, "{w}x{h}");

    // The fix, as the message gives it; then an app started after it has a tree again.
    let mut cmd = Command::new("/usr/libexec/at-spi-bus-launcher");
    cmd.arg("--launch-immediately")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    desktop.configure(&mut cmd);
    let _launcher = Launcher {
        child: cmd.spawn().expect("at-spi-bus-launcher"),
        bus: bus.clone(),
    };
    harness::wait_for(Duration::from_secs(10), "the bus back", || async {
        (!pids_with(&bus).is_empty()).then_some(())
    })
    .await;
    let _after = question_with_a_tree("bus-after").await;
    server.finish().await;
}
