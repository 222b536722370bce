//! Pointer tools against a window that reports the button events it receives.

use std::time::Duration;

use serde_json::json;

use crate::harness::{self, error_code, find_window, launch, ok, serve, text, wait_for};
use crate::paint::{PaintedWindow, Press};

#[allow(clippy::print_stderr)]
fn note(s: &str) {
    eprintln!("list_windows while waiting: {s}");
}

async fn presses(w: &PaintedWindow, n: usize) -> Vec<Press> {
    let mut got = Vec::new();
    let what = format!("{n} button events");
    wait_for(Duration::from_secs(5), &what, || {
        if got.len() < n {
            note(&format!("{what}: so far {got:?}"));
        }
        got.extend(w.presses());
        let done = got.len() >= n;
        async move { done.then_some(()) }
    })
    .await;
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clicks_read_off_a_scaled_screenshot_land_where_aimed() {
    let _guard = harness::exclusive().await;
    let Some(own) = harness::private_desktop() else {
        return;
    };
    let desktop = &own;
    let server = serve(Some(desktop), &[], &[]).await;

    let r = server.call("click", json!({ "x": 10, "y": 10 })).await;
    assert_eq!(error_code(&r), "NO_REFERENCE_SCREENSHOT");

    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot clicks",
        500,
        300,
        400,
        300,
        (0, 0, 1),
    );
    harness::listed(&server, "deskpilot clicks", "deskpilot clicks").await;
    painted.raise();
    painted.listen();
    let (cx, cy) = painted.client_origin();

    let shot = server.call("screenshot", json!({ "max_width": 800 })).await;
    let view = ok(&shot)["view"].clone();
    let scale = view["scale"].as_f64().unwrap();
    // Aim at window point (200, 150), read as the model would: image = physical * scale.
    let (ix, iy) = ((cx + 200) as f64 * scale, (cy + 150) as f64 * scale);
    let r = server
        .call("click", json!({ "x": ix.floor(), "y": iy.floor() }))
        .await;
    let s = ok(&r);
    assert_eq!(s["receipt"]["landed"], true, "{s}");
    assert_eq!(s["route"], "input");
    assert_eq!(s["window"]["title"], "deskpilot clicks");
    let got = presses(&painted, 2).await;
    assert_eq!(
        (got[0].button, got[0].down, got[1].down),
        (1, true, false),
        "{got:?}"
    );
    let tolerance = (1.0 / scale).ceil() as i16 + 1;
    assert!(
        (got[0].x - 200).abs() <= tolerance && (got[0].y - 150).abs() <= tolerance,
        "landed at {got:?}"
    );

    // Physical coordinates, a double click and a right click.
    let r = server
        .call(
            "double_click",
            json!({ "x": cx + 30, "y": cy + 40, "coordinates": "physical" }),
        )
        .await;
    ok(&r);
    let got = presses(&painted, 4).await;
    assert!(
        got.iter().all(|p| p.button == 1 && (p.x, p.y) == (30, 40)),
        "{got:?}"
    );
    ok(&server
        .call(
            "right_click",
            json!({ "x": cx + 5, "y": cy + 6, "coordinates": "physical" }),
        )
        .await);
    let got = presses(&painted, 2).await;
    assert_eq!(
        got[0],
        Press {
            button: 3,
            down: true,
            x: 5,
            y: 6,
            mods: 0,
        }
    );

    // Scroll: 3 notches down are 3 presses of button 5.
    ok(&server
        .call(
            "scroll",
            json!({ "x": cx + 100, "y": cy + 100, "dy": 3, "coordinates": "physical" }),
        )
        .await);
    let got = presses(&painted, 6).await;
    assert_eq!(
        got.iter().filter(|p| p.down && p.button == 5).count(),
        3,
        "{got:?}"
    );
    // dx: 2 notches right are 2 presses of button 7; dy -1 is button 4.
    ok(&server
        .call(
            "scroll",
            json!({ "x": cx + 100, "y": cy + 100, "dx": 2, "dy": -1, "coordinates": "physical" }),
        )
        .await);
    let got = presses(&painted, 6).await;
    let downs: Vec<u8> = got.iter().filter(|p| p.down).map(|p| p.button).collect();
    assert_eq!(downs, [4, 7, 7], "{got:?}");

    // Drag: pressed at the start, released at the end.
    let r = server
        .call("drag", json!({ "from_x": cx + 50, "from_y": cy + 60, "to_x": cx + 250, "to_y": cy + 160, "coordinates": "physical" }))
        .await;
    ok(&r);
    let got = presses(&painted, 2).await;
    assert_eq!(
        got[0],
        Press {
            button: 1,
            down: true,
            x: 50,
            y: 60,
            mods: 0,
        }
    );
    assert_eq!(
        got[1],
        Press {
            button: 1,
            down: false,
            x: 250,
            y: 160,
            mods: 0,
        }
    );

    // status reports the cursor where the drag ended.
    let st = server.call("status", json!({})).await;
    assert_eq!(ok(&st)["cursor"], json!({ "x": cx + 250, "y": cy + 160 }));

    // Out-of-range points are refused before anything is sent.
    let r = server.call("click", json!({ "x": 5000, "y": 10 })).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT");
    let r = server
        .call(
            "click",
            json!({ "x": 5000, "y": 10, "coordinates": "physical" }),
        )
        .await;
    assert_eq!(error_code(&r), "POINT_OFF_SCREEN");
    assert!(
        painted.presses().is_empty(),
        "refused clicks reached the window"
    );

    // Modifiers are held during the action and released after it.
    ok(&server
        .call(
            "click",
            json!({ "x": cx + 20, "y": cy + 20, "coordinates": "physical", "modifiers": ["ctrl", "shift"] }),
        )
        .await);
    let got = presses(&painted, 2).await;
    assert_eq!((got[0].down, got[0].mods), (true, 4 | 1), "{got:?}");
    ok(&server
        .call(
            "scroll",
            json!({ "x": cx + 20, "y": cy + 20, "dy": -1, "coordinates": "physical", "modifiers": ["ctrl"] }),
        )
        .await);
    let got = presses(&painted, 2).await;
    // (alt would not do here: openbox binds alt+wheel to switching desktops.)
    assert_eq!((got[0].button, got[0].mods), (4, 4), "{got:?}");
    ok(&server
        .call(
            "click",
            json!({ "x": cx + 21, "y": cy + 21, "coordinates": "physical" }),
        )
        .await);
    let got = presses(&painted, 2).await;
    assert_eq!(got[0].mods, 0, "no modifier left held: {got:?}");
    let r = server
        .call(
            "click",
            json!({ "x": cx + 21, "y": cy + 21, "coordinates": "physical", "modifiers": ["a"] }),
        )
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT");

    // zoom: a closer look whose own pixel space clicks map back exactly (scale 2 here).
    let shot = server.call("screenshot", json!({ "max_width": 800 })).await;
    let s800 = ok(&shot)["view"]["scale"].as_f64().unwrap();
    let (zx, zy) = (
        ((cx + 180) as f64 * s800).floor(),
        ((cy + 130) as f64 * s800).floor(),
    );
    let z = server
        .call(
            "zoom",
            json!({ "x": zx, "y": zy, "width": 40, "height": 30, "scale": 2, "format": "png" }),
        )
        .await;
    let zview = ok(&z)["view"].clone();
    assert_eq!(zview["scale"], 2.0, "{}", text(&z));
    let (zw, zh, _) = harness::image(&z);
    assert_eq!(
        (zw as u64, zh as u64),
        (
            zview["width"].as_u64().unwrap(),
            zview["height"].as_u64().unwrap()
        )
    );
    let zcap = &zview["capture"];
    let target = (cx + 200, cy + 150);
    let ix = (target.0 as i64 - zcap["x"].as_i64().unwrap()) * 2;
    let iy = (target.1 as i64 - zcap["y"].as_i64().unwrap()) * 2;
    let r = server.call("click", json!({ "x": ix, "y": iy })).await;
    ok(&r);
    let got = presses(&painted, 2).await;
    assert_eq!(
        (got[0].x, got[0].y),
        (200, 150),
        "a click read off the zoom is exact: {got:?}"
    );
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn covered_points_and_moved_windows_are_refused() {
    let _guard = harness::exclusive().await;
    let Some(own) = harness::private_desktop() else {
        return;
    };
    let desktop = &own;
    let server = serve(Some(desktop), &[], &[]).await;
    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot target",
        100,
        100,
        600,
        400,
        (0, 0, 1),
    );
    let w = harness::listed(&server, "deskpilot target", "deskpilot target").await;
    painted.raise();
    painted.listen();
    let (cx, cy) = painted.client_origin();

    // Another app opens on top of part of the target.
    let _xterm = launch(
        desktop,
        "xterm",
        &["-T", "deskpilot cover", "-geometry", "40x10+400+300"],
    );
    let cover = harness::listed(&server, "deskpilot cover", "deskpilot cover").await;
    let shot = server
        .call(
            "screenshot",
            json!({ "window_id": w["id"], "format": "png" }),
        )
        .await;
    let origin = ok(&shot)["view"]["capture"].clone();
    let (ox, oy) = (origin["x"].as_i64().unwrap(), origin["y"].as_i64().unwrap());
    // A point inside the cover (image space == physical - origin at scale 1).
    let (px, py) = (
        cover["client"]["x"].as_i64().unwrap() + 20,
        cover["client"]["y"].as_i64().unwrap() + 20,
    );
    assert!(
        px < cx as i64 + 600 && py < cy as i64 + 400,
        "the cover overlaps the target"
    );
    let r = server
        .call("click", json!({ "x": px - ox, "y": py - oy }))
        .await;
    assert_eq!(error_code(&r), "CLICK_WRONG_WINDOW");
    assert!(
        text(&r).contains("deskpilot cover"),
        "names the covering app: {}",
        text(&r)
    );
    let r = server
        .call(
            "click",
            json!({ "x": px - ox, "y": py - oy, "hit_test": "warn" }),
        )
        .await;
    let warnings = ok(&r)["warnings"].to_string();
    assert!(
        warnings.contains("CLICK_WRONG_WINDOW"),
        "warn mode acts and says so: {warnings}"
    );
    assert!(
        text(&r).contains("Warning: CLICK_WRONG_WINDOW"),
        "{}",
        text(&r)
    );

    // A free point of the target works; then the window moves and the old screenshot is stale.
    let r = server
        .call(
            "click",
            json!({ "x": cx as i64 + 10 - ox, "y": cy as i64 + 10 - oy }),
        )
        .await;
    ok(&r);
    assert!(
        presses(&painted, 2)
            .await
            .iter()
            .any(|p| (p.x, p.y) == (10, 10))
    );
    painted.move_to(150, 120);
    wait_for(Duration::from_secs(10), "the window to move", || async {
        let r = server
            .call("list_windows", json!({ "filter": "deskpilot target" }))
            .await;
        find_window(ok(&r), "deskpilot target")
            .filter(|n| n["frame"] != w["frame"])
            .map(|_| ())
    })
    .await;
    let r = server.call("click", json!({ "x": 50, "y": 50 })).await;
    assert_eq!(error_code(&r), "TARGET_WINDOW_MOVED");
    assert!(
        painted.presses().is_empty(),
        "refused clicks reached the window"
    );

    server.finish().await;
}
