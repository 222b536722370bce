//! The `window` tool against xterm on openbox: every state change is checked in the X
//! server's own EWMH / ICCCM properties, read by the test, not by deskpilot.

use std::time::Duration;

use serde_json::{Value, json};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};
use x11rb::rust_connection::RustConnection;

use crate::harness::{self, Launched, error_code, ok, serve, text, wait_for};

/// What the X server says about one window.
struct XView {
    conn: RustConnection,
    root: u32,
}

impl XView {
    fn new(display: &str) -> XView {
        let (conn, n) = RustConnection::connect(Some(display)).unwrap();
        let root = conn.setup().roots[n].root;
        XView { conn, root }
    }

    fn atom(&self, name: &str) -> u32 {
        self.conn
            .intern_atom(false, name.as_bytes())
            .unwrap()
            .reply()
            .unwrap()
            .atom
    }

    fn prop32(&self, window: u32, name: &str) -> Vec<u32> {
        let atom = self.atom(name);
        self.conn
            .get_property(false, window, atom, AtomEnum::ANY, 0, 64)
            .unwrap()
            .reply()
            .map(|r| r.value32().map(|v| v.collect()).unwrap_or_default())
            .unwrap_or_default()
    }

    fn net_wm_state(&self, window: u32) -> Vec<String> {
        self.prop32(window, "_NET_WM_STATE")
            .into_iter()
            .map(|a| {
                String::from_utf8(self.conn.get_atom_name(a).unwrap().reply().unwrap().name)
                    .unwrap()
            })
            .collect()
    }

    fn iconic(&self, window: u32) -> bool {
        self.prop32(window, "WM_STATE").first() == Some(&3)
    }

    fn active(&self) -> Option<u32> {
        self.prop32(self.root, "_NET_ACTIVE_WINDOW")
            .first()
            .copied()
    }

    fn exists(&self, window: u32) -> bool {
        self.conn
            .get_window_attributes(window)
            .unwrap()
            .reply()
            .is_ok()
    }

    /// The client's root position and size.
    fn client(&self, window: u32) -> (i64, i64, u64, u64) {
        let t = self
            .conn
            .translate_coordinates(window, self.root, 0, 0)
            .unwrap()
            .reply()
            .unwrap();
        let g = self.conn.get_geometry(window).unwrap().reply().unwrap();
        (
            t.dst_x as i64,
            t.dst_y as i64,
            g.width as u64,
            g.height as u64,
        )
    }
}

fn rect(v: &Value) -> (i64, i64, u64, u64) {
    (
        v["x"].as_i64().unwrap(),
        v["y"].as_i64().unwrap(),
        v["width"].as_u64().unwrap(),
        v["height"].as_u64().unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_actions_show_in_ewmh_state() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let x = XView::new(desktop.display());

    let r = server
        .call(
            "window",
            json!({ "action": "launch", "command": "xterm",
                    "args": ["-T", "deskpilot managed", "-geometry", "80x24+30+40"] }),
        )
        .await;
    let launched = ok(&r).clone();
    let pid = launched["pid"].as_u64().unwrap() as u32;
    let _kill = Launched(pid);
    let w = &launched["windows"][0];
    assert_eq!(w["pid"], pid, "{launched}");
    assert_eq!(w["title"], "deskpilot managed");
    assert_eq!(launched["effect"], "confirmed");
    let id = w["id"].as_u64().unwrap();
    let xid = id as u32;
    assert!(x.exists(xid));

    let act = |action: &'static str, extra: Value| {
        let server = &server;
        async move {
            let mut args = json!({ "action": action, "window_id": id });
            if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
                a.extend(e.clone());
            }
            server.call("window", args).await
        }
    };

    let r = act("maximize", json!({})).await;
    assert_eq!(ok(&r)["window"]["maximized"], true, "{}", text(&r));
    let state = x.net_wm_state(xid);
    assert!(
        state.contains(&"_NET_WM_STATE_MAXIMIZED_VERT".to_string())
            && state.contains(&"_NET_WM_STATE_MAXIMIZED_HORZ".to_string()),
        "{state:?}"
    );

    let r = act("restore", json!({})).await;
    assert_eq!(ok(&r)["window"]["maximized"], false, "{}", text(&r));
    assert!(
        !x.net_wm_state(xid)
            .iter()
            .any(|s| s.starts_with("_NET_WM_STATE_MAXIMIZED")),
        "{:?}",
        x.net_wm_state(xid)
    );

    let r = act("move", json!({ "x": 200, "y": 150 })).await;
    let moved = ok(&r)["window"].clone();
    assert_eq!(rect(&moved["frame"]).0, 200, "{}", text(&r));
    assert_eq!(rect(&moved["frame"]).1, 150);
    let (cx, cy, cw, ch) = x.client(xid);
    assert_eq!(
        (cx, cy, cw, ch),
        rect(&moved["client"]),
        "the reported client rect is the X server's"
    );
    assert!(cx >= 200 && cy >= 150, "the client sits inside the frame");

    // xterm resizes in character cells: the window manager rounds, and the tool says so.
    let r = act("resize", json!({ "width": 640, "height": 400 })).await;
    let resized = ok(&r)["window"].clone();
    let (_, _, fw, fh) = rect(&resized["frame"]);
    assert!(
        (620..=640).contains(&fw) && (380..=400).contains(&fh),
        "{}",
        text(&r)
    );
    let (_, _, cw2, ch2) = x.client(xid);
    assert_eq!(
        (cw2, ch2),
        (rect(&resized["client"]).2, rect(&resized["client"]).3)
    );
    assert!(cw2 > cw || ch2 != ch, "the client really changed size");

    let r = act("minimize", json!({})).await;
    assert_eq!(ok(&r)["window"]["minimized"], true, "{}", text(&r));
    assert!(x.iconic(xid), "WM_STATE is IconicState");

    let r = act("focus", json!({})).await;
    assert_eq!(ok(&r)["window"]["active"], true, "{}", text(&r));
    assert!(!x.iconic(xid), "focus de-iconified it");
    assert_eq!(x.active(), Some(xid), "_NET_ACTIVE_WINDOW");

    // Two windows matching one title_match: refused, both named.
    let r = server
        .call(
            "window",
            json!({ "action": "launch", "command": "xterm", "args": ["-T", "deskpilot managed twin"] }),
        )
        .await;
    let twin = ok(&r)["pid"].as_u64().unwrap() as u32;
    let _kill_twin = Launched(twin);
    let r = server
        .call(
            "window",
            json!({ "action": "focus", "title_match": "DESKPILOT MANAGED" }),
        )
        .await;
    assert_eq!(error_code(&r), "AMBIGUOUS_WINDOW");
    let t = text(&r);
    assert!(
        t.contains(&format!("{id:#x}")) && t.contains("deskpilot managed twin"),
        "{t}"
    );
    let r = server
        .call(
            "window",
            json!({ "action": "close", "titleMatch": "managed twin" }),
        )
        .await;
    assert_eq!(ok(&r)["closed"], true, "{}", text(&r));

    let r = act("close", json!({})).await;
    assert_eq!(ok(&r)["closed"], true, "{}", text(&r));
    assert!(!x.exists(xid), "the X window is destroyed");
    wait_for(Duration::from_secs(10), "xterm to exit", || async {
        (!std::path::Path::new(&format!("/proc/{pid}")).exists()).then_some(())
    })
    .await;

    // Errors an agent can act on.
    let r = server
        .call("window", json!({ "action": "focus", "window_id": id }))
        .await;
    assert_eq!(error_code(&r), "WINDOW_NOT_FOUND");
    let r = server
        .call(
            "window",
            json!({ "action": "move", "window_id": twin as u64 }),
        )
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT");
    assert!(text(&r).contains("x and y"), "{}", text(&r));
    let r = server
        .call(
            "window",
            json!({ "action": "launch", "command": "deskpilot-no-such-program" }),
        )
        .await;
    assert_eq!(error_code(&r), "LAUNCH_FAILED");
    let r = server
        .call(
            "window",
            json!({ "action": "launch", "command": "sh", "args": ["-c", "echo broken >&2; exit 4"] }),
        )
        .await;
    assert_eq!(error_code(&r), "LAUNCH_FAILED");
    assert!(
        text(&r).contains("code 4") && text(&r).contains("broken"),
        "{}",
        text(&r)
    );
    let r = server
        .call(
            "window",
            json!({ "action": "launch", "command": "sleep", "args": ["30"], "wait_ms": 300 }),
        )
        .await;
    let quiet = ok(&r);
    let _kill_sleep = Launched(quiet["pid"].as_u64().unwrap() as u32);
    assert!(
        text(&r).contains("No window appeared within 300 ms"),
        "{}",
        text(&r)
    );
    server.finish().await;
}
