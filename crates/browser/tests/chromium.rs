//! The client against Debian's real chromium, headless: launch, attach to the page, read its
//! accessibility tree into a snapshot with refs, evaluate, and the browser gone with its
//! profile once dropped. Skips (visibly) without a browser, except under `CI=true`.

use std::time::Duration;

use deskpilot_browser::cdp::Connection;
use deskpilot_browser::launch::{self, LaunchOptions};
use deskpilot_browser::snapshot::{self, FrameTree, RefTable};
use serde_json::json;

const T: Duration = Duration::from_secs(20);

#[test]
#[allow(clippy::print_stderr)]
fn a_launched_chromium_is_read_into_a_snapshot_with_refs() {
    if launch::find_browser().is_err() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but no chromium is installed (scripts/install-deps installs it)"
        );
        eprintln!("SKIP: no Chromium-family browser installed");
        return;
    }
    let page = "data:text/html;charset=utf-8,<title>probe</title><button>Press 中文</button><input aria-label=Name>";
    let launched = launch::launch(&LaunchOptions {
        url: page.into(),
        headless: true,
        env: Vec::new(),
        timeout: T,
    })
    .expect("launch");
    let profile = launched.profile.clone();
    let cdp = Connection::open(&launched.ws_url, T).expect("connect");
    let targets = cdp
        .call("Target.getTargets", json!({}), None, T)
        .expect("targets");
    let page_target = targets["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "page")
        .expect("a page")
        .clone();
    let attached = cdp
        .call(
            "Target.attachToTarget",
            json!({ "targetId": page_target["targetId"], "flatten": true }),
            None,
            T,
        )
        .expect("attach");
    let session = attached["sessionId"].as_str().unwrap().to_string();
    // Wait for the page's content.
    let deadline = std::time::Instant::now() + T;
    let nodes = loop {
        let tree = cdp
            .call("Accessibility.getFullAXTree", json!({}), Some(&session), T)
            .expect("ax tree");
        let nodes = tree["nodes"].as_array().cloned().unwrap_or_default();
        if nodes.iter().any(|n| n["role"]["value"] == "button") {
            break nodes;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no button in {nodes:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut refs = RefTable::default();
    let r = snapshot::render(
        &[FrameTree {
            frame: "top".into(),
            owner: None,
            nodes,
        }],
        &mut refs,
        500,
    );
    assert!(
        r.text.contains("button \"Press 中文\" [ref=e"),
        "{}",
        r.text
    );
    assert!(r.text.contains("textbox \"Name\" [ref=e"), "{}", r.text);
    let v = cdp
        .call(
            "Runtime.evaluate",
            json!({ "expression": "document.title", "returnByValue": true }),
            Some(&session),
            T,
        )
        .expect("eval");
    assert_eq!(v["result"]["value"], "probe");
    let pid = launched.pid();
    drop(cdp);
    drop(launched);
    assert!(!profile.exists(), "the profile directory is removed");
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z ")),
        "the browser is gone"
    );
}
