//! `list_windows` against real apps (xterm, mousepad, zenity) and a window the test owns.

use std::time::Duration;

use serde_json::json;

use crate::harness::{self, launch, ok, serve, wait_for};
use crate::paint::PaintedWindow;

const APP_TIMEOUT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_apps_are_listed_with_pid_title_and_rect() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;

    let xterm = launch(
        desktop,
        "xterm",
        &["-T", "deskpilot xterm", "-geometry", "80x20+40+60"],
    );
    let zenity = launch(
        desktop,
        "zenity",
        &[
            "--info",
            "--title",
            "deskpilot zenity",
            "--text",
            "hello from the test",
        ],
    );
    let mousepad = launch(desktop, "mousepad", &[]);

    let w = harness::listed(&server, "xterm", "deskpilot xterm").await;
    assert_eq!(w["pid"], xterm.0.id(), "xterm pid");
    assert_eq!(w["process"], "xterm");
    assert_eq!(w["class"], "XTerm");
    // xterm sets only WM_NAME: the title came through the fallback.
    let z = harness::listed(&server, "zenity", "deskpilot zenity").await;
    assert_eq!(z["pid"], zenity.0.id(), "zenity pid");
    let m = wait_for(APP_TIMEOUT, "a mousepad window", || async {
        let r = server
            .call("list_windows", json!({ "filter": "mousepad" }))
            .await;
        ok(&r)["windows"]
            .as_array()
            .and_then(|ws| ws.first().cloned())
    })
    .await;
    assert_eq!(m["pid"], mousepad.0.id(), "mousepad pid");
    assert!(m["title"].as_str().unwrap().contains("Mousepad"), "{m}");

    // Rectangles agree with the X server's own answer, asked independently.
    for w in [&w, &z, &m] {
        let frame = &w["frame"];
        let client = &w["client"];
        let (fx, fy) = (frame["x"].as_i64().unwrap(), frame["y"].as_i64().unwrap());
        let (cx, cy) = (client["x"].as_i64().unwrap(), client["y"].as_i64().unwrap());
        assert!(fx <= cx && fy <= cy, "the frame contains the client: {w}");
        assert!(frame["width"].as_u64() >= client["width"].as_u64(), "{w}");
        let (ex, ey, ew, eh) = x_geometry(desktop.display(), w["id"].as_u64().unwrap() as u32);
        assert_eq!(
            (
                cx,
                cy,
                client["width"].as_u64().unwrap(),
                client["height"].as_u64().unwrap()
            ),
            (ex, ey, ew, eh),
            "{w}"
        );
    }
    // Exactly one window is active once the window manager has settled (on a loaded machine
    // openbox activates the newest app a moment after it maps, and until then none is).
    let windows = wait_for(APP_TIMEOUT, "exactly one active window", || async {
        let all = server.call("list_windows", json!({})).await;
        let windows = ok(&all)["windows"].as_array()?.clone();
        (windows.iter().filter(|w| w["active"] == true).count() == 1).then_some(windows)
    })
    .await;
    assert!(
        windows
            .iter()
            .all(|w| w["visible"] == true && w["minimized"] == false)
    );
    let zs: Vec<_> = windows.iter().map(|w| w["z"].as_u64().unwrap()).collect();
    assert_eq!(zs, (0..windows.len() as u64).collect::<Vec<_>>());

    // A filter that matches nothing says so.
    let none = server
        .call("list_windows", json!({ "filter": "no such window 42" }))
        .await;
    assert_eq!(ok(&none)["count"], 0);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn own_window_is_listed_with_our_pid_and_exact_client_rect() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot 画布 ✓",
        300,
        200,
        320,
        240,
        (10, 10, 16),
    );
    let w = harness::listed(&server, "画布", "deskpilot 画布 ✓").await;
    assert_eq!(w["pid"], std::process::id());
    assert_eq!(w["class"], "DeskpilotPaint");
    let (x, y) = painted.client_origin();
    assert_eq!(
        (
            w["client"]["x"].as_i64().unwrap(),
            w["client"]["y"].as_i64().unwrap()
        ),
        (x as i64, y as i64)
    );
    assert_eq!(
        (
            w["client"]["width"].as_u64().unwrap(),
            w["client"]["height"].as_u64().unwrap()
        ),
        (320, 240)
    );
    server.finish().await;
}

/// The client rectangle of `window` in root coordinates, asked of the X server by the test.
fn x_geometry(display: &str, window: u32) -> (i64, i64, u64, u64) {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::ConnectionExt as _;
    let (conn, n) = x11rb::rust_connection::RustConnection::connect(Some(display)).unwrap();
    let root = conn.setup().roots[n].root;
    let t = conn
        .translate_coordinates(window, root, 0, 0)
        .unwrap()
        .reply()
        .unwrap();
    let g = conn.get_geometry(window).unwrap().reply().unwrap();
    (
        t.dst_x as i64,
        t.dst_y as i64,
        g.width as u64,
        g.height as u64,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_apps_shows_running_apps_with_their_windows_and_the_desktop_entries() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let server = serve(Some(desktop), &[], &[]).await;
    let pad = launch(desktop, "mousepad", &["--disable-server"]);
    let pid = pad.0.id();
    let v = wait_for(Duration::from_secs(30), "mousepad in list_apps", || async {
        let r = server.call("list_apps", json!({})).await;
        let v = ok(&r).clone();
        v["running"]
            .as_array()?
            .iter()
            .any(|a| a["pid"] == pid && !a["windows"].as_array().unwrap().is_empty())
            .then_some(v)
    })
    .await;
    let installed = v["installed"].as_array().unwrap();
    // Debian's xterm package installs a desktop entry; its Exec loses no argument but the
    // field codes.
    let xterm = installed
        .iter()
        .find(|a| a["id"] == "debian-xterm.desktop")
        .unwrap_or_else(|| panic!("no xterm entry in {installed:#?}"));
    assert_eq!(xterm["exec"][0], "xterm", "{xterm}");
    assert!(
        installed
            .iter()
            .any(|a| a["id"] == "org.xfce.mousepad.desktop")
    );
    let r = server
        .call("list_apps", json!({ "filter": "mousepad" }))
        .await;
    let v = ok(&r);
    assert!(
        v["installed"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["id"].as_str().unwrap().contains("mousepad")),
        "{v}"
    );
    assert!(!v["running"].as_array().unwrap().is_empty());
    assert!(
        harness::text(&r).contains(&format!("(pid {pid})")),
        "{}",
        harness::text(&r)
    );
    drop(pad);
    server.finish().await;
}
