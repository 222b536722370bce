//! Keyboard tools, read back through a real app: xterm running `cat > file` in a UTF-8 locale.

use std::time::Duration;

use serde_json::json;

use crate::harness::{self, error_code, find_window, ok, serve, wait_for};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unicode_text_and_chords_land_exactly() {
    let _guard = harness::exclusive().await;
    let Some(own) = harness::private_desktop() else {
        return;
    };
    let desktop = &own;
    let server = serve(Some(desktop), &[], &[]).await;
    let file = std::env::temp_dir().join(format!("deskpilot-typed-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let script = format!("stty -echo; cat > '{}'", file.display());
    let mut cmd = std::process::Command::new("xterm");
    cmd.args(["-u8", "-T", "deskpilot typing", "-e", "sh", "-c", &script])
        .env("LC_ALL", "C.UTF-8");
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    desktop.configure(&mut cmd);
    let _xterm = harness::App(cmd.spawn().expect("xterm"));
    wait_for(
        Duration::from_secs(20),
        "the xterm to be active",
        || async {
            let r = server
                .call("list_windows", json!({ "filter": "deskpilot typing" }))
                .await;
            find_window(ok(&r), "deskpilot typing")
                .filter(|w| w["active"] == true)
                .map(|_| ())
        },
    )
    .await;
    wait_for(Duration::from_secs(10), "cat to create the file", || {
        let exists = file.exists();
        async move { exists.then_some(()) }
    })
    .await;

    let line = "Hello é 中文 ÄÖ 😀 ß – ñ\tend";
    let mut expected = String::new();
    for i in 0..20 {
        let text = format!("{i:02} {line}\n");
        let r = server.call("type_text", json!({ "text": text })).await;
        assert_eq!(ok(&r)["characters"], text.chars().count());
        expected.push_str(&text);
    }
    // A chord and a named key: ctrl+u kills the typed line, backspace deletes one character.
    ok(&server
        .call("type_text", json!({ "text": "discard me" }))
        .await);
    ok(&server
        .call("press_key", json!({ "keys": ["ctrl", "u"] }))
        .await);
    ok(&server.call("type_text", json!({ "text": "keepX" })).await);
    ok(&server
        .call("press_key", json!({ "keys": ["BackSpace"] }))
        .await);
    ok(&server
        .call("press_key", json!({ "keys": ["Return"] }))
        .await);
    expected.push_str("keep\n");

    let got = wait_for(Duration::from_secs(10), "every line in the file", || {
        let content = std::fs::read_to_string(&file).unwrap_or_default();
        let done = content.len() >= expected.len();
        async move { done.then_some(content) }
    })
    .await;
    let _ = std::fs::remove_file(&file);
    assert_eq!(
        got, expected,
        "typed text must land exactly, 20 lines in a row"
    );

    let r = server
        .call("press_key", json!({ "keys": ["ctrl", "hyper"] }))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT");
    assert!(
        harness::text(&r).contains("valid keys"),
        "{}",
        harness::text(&r)
    );
    let r = server
        .call("type_text", json!({ "text": "x".repeat(20_001) }))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT");
    server.finish().await;
}

/// The (pid, keycode) leases in the root window's `_DESKPILOT_KEYMAP_LEASES`.
fn leases(display: &str) -> Vec<(u32, u32)> {
    let out = std::process::Command::new("xprop")
        .args(["-root", "_DESKPILOT_KEYMAP_LEASES"])
        .env("DISPLAY", display)
        .output()
        .expect("xprop");
    let text = String::from_utf8_lossy(&out.stdout);
    let numbers: Vec<u32> = text
        .split_once('=')
        .map(|(_, v)| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_default();
    numbers.chunks(2).map(|p| (p[0], p[1])).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keycodes_bound_by_a_killed_server_are_reclaimed_by_the_next() {
    let _guard = harness::exclusive().await;
    let Some(own) = harness::private_desktop() else {
        return;
    };
    let desktop = &own;
    // A server binds keycodes for characters the map lacks and is killed before its restore.
    let server = serve(Some(desktop), &[], &[]).await;
    let han: String = (0x6000..0x6000 + 40).filter_map(char::from_u32).collect();
    ok(&server.call("type_text", json!({ "text": han })).await);
    let pid = server.pid();
    // SAFETY: plain signal delivery to the server we started.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
    let left = leases(desktop.display());
    assert!(
        left.iter().any(|(p, _)| *p == pid),
        "the killed server's bindings are leased: {left:?}"
    );
    drop(server);
    // The next server's typing gives those keycodes back before binding its own.
    let server = serve(Some(desktop), &[], &[]).await;
    ok(&server.call("type_text", json!({ "text": "字" })).await);
    let now = leases(desktop.display());
    assert!(now.iter().all(|(p, _)| *p != pid), "{now:?}");
    server.finish().await;
}
