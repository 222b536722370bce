//! Clipboard round trips with `xclip`, small and large (the INCR protocol both ways).

use std::time::Duration;

use serde_json::json;

use crate::harness::{self, ok, serve, text, xclip_in, xclip_out};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clipboard_round_trips_with_xclip() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;

    let mixed = "Hello é 中文 ÄÖ 😀\nsecond\tline — ñ";
    let r = server
        .call("clipboard_write", json!({ "text": mixed }))
        .await;
    assert_eq!(ok(&r)["length"], mixed.chars().count());
    assert_eq!(
        xclip_out(desktop),
        mixed,
        "xclip pastes exactly what was set"
    );
    // Still pasteable later, after other calls.
    ok(&server.call("status", json!({})).await);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(xclip_out(desktop), mixed, "the text stays on the clipboard");
    let r = server.call("clipboard_read", json!({})).await;
    assert_eq!(ok(&r)["clipboard"], mixed);

    // Another client takes the clipboard: deskpilot reads what it holds.
    xclip_in(desktop, "from xclip: 日本語 ✓");
    let r = server.call("clipboard_read", json!({})).await;
    assert_eq!(ok(&r)["clipboard"], "from xclip: 日本語 ✓", "{}", text(&r));

    // Large texts go through INCR in both directions.
    let big: String = (0..70_000).map(|i| format!("{i:05} 中文😀\n")).collect();
    assert!(big.len() > 1_000_000);
    ok(&server.call("clipboard_write", json!({ "text": big })).await);
    let back = xclip_out(desktop);
    assert!(
        back == big,
        "xclip reads 1 MB back exactly: got {} bytes, first difference at byte {:?}",
        back.len(),
        first_difference(&back, &big)
    );
    let other: String = big.replace("中文", "ab");
    xclip_in(desktop, &other);
    let r = server.call("clipboard_read", json!({})).await;
    let read = ok(&r);
    let got = read["clipboard"].as_str().unwrap_or_default();
    assert!(
        got == other,
        "clipboard_read gives the 1 MB text exactly: got {} bytes, first difference at byte {:?}",
        got.len(),
        first_difference(got, &other)
    );
    assert_eq!(read["length"], other.chars().count());
    assert!(
        text(&r).contains("the first 4000"),
        "a long text is previewed in the text block"
    );
    server.finish().await;
}

/// `deskpilot call clipboard_write` exits at once, yet the text stays pasteable: a detached
/// holder keeps it until something else is copied, then goes away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_clipboard_write_outlives_the_command() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_deskpilot"));
    cmd.args([
        "call",
        "clipboard_write",
        r#"{"text": "kept after exit ✓ 中文"}"#,
    ]);
    desktop.configure(&mut cmd);
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(xclip_out(desktop), "kept after exit ✓ 中文");
    let holders = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("cmdline")).ok())
            .filter(|c| c.contains("__hold-clipboard"))
            .count()
    };
    assert!(holders() >= 1, "a holder runs");
    xclip_in(desktop, "replaced");
    harness::wait_for(Duration::from_secs(5), "the holder to exit", || async {
        (holders() == 0).then_some(())
    })
    .await;
    assert_eq!(xclip_out(desktop), "replaced");
}

/// Where two long texts part, so a failure message stays short.
fn first_difference(a: &str, b: &str) -> Option<usize> {
    a.bytes()
        .zip(b.bytes())
        .position(|(x, y)| x != y)
        .or((a.len() != b.len()).then_some(a.len().min(b.len())))
}
