//! `screenshot`: pixels, geometry and the image→physical mapping, checked against a window
//! whose content the test painted, plus the error paths.

use std::time::Duration;

use serde_json::json;

use crate::harness::{self, error_code, find_window, image, ok, serve, text, wait_for};
use crate::paint::{BLUE, GREEN, MAGENTA, PaintedWindow, RED, YELLOW};

fn rgb_at(img: &(u32, u32, Vec<u8>), x: u32, y: u32) -> [u8; 3] {
    let i = ((y * img.0 + x) * 3) as usize;
    [img.2[i], img.2[i + 1], img.2[i + 2]]
}

fn close(a: [u8; 3], b: [u8; 3], tolerance: i32) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| (*x as i32 - y as i32).abs() <= tolerance)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn window_screenshot_has_the_painted_pixels_at_the_returned_geometry() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot pixels",
        400,
        300,
        400,
        300,
        (20, 20, 10),
    );
    let w = harness::listed(&server, "deskpilot pixels", "deskpilot pixels").await;
    painted.raise();
    let id = w["id"].as_u64().unwrap();

    for format in ["png", "jpeg"] {
        let r = server
            .call("screenshot", json!({ "window_id": id, "format": format }))
            .await;
        let s = ok(&r).clone();
        let img = image(&r);
        let view = &s["view"];
        assert_eq!(
            (img.0 as u64, img.1 as u64),
            (
                view["width"].as_u64().unwrap(),
                view["height"].as_u64().unwrap()
            )
        );
        assert_eq!(
            view["capture"], w["frame"],
            "a window screenshot shows the window's frame"
        );
        assert_eq!(
            view["scale"], 1.0,
            "a 400x300 window fits the budget unscaled"
        );
        assert_eq!(s["window"]["id"], id);
        assert_eq!(s["format"], format);
        // Quadrant centres, located through the returned geometry.
        let (cx, cy) = painted.client_origin();
        let (ox, oy) = (
            view["capture"]["x"].as_i64().unwrap(),
            view["capture"]["y"].as_i64().unwrap(),
        );
        let tolerance = if format == "png" { 0 } else { 12 };
        for (qx, qy, want) in [
            (100, 75, RED),
            (300, 75, GREEN),
            (100, 225, BLUE),
            (300, 225, YELLOW),
            (25, 25, MAGENTA),
        ] {
            let ix = (cx as i64 + qx - ox) as u32;
            let iy = (cy as i64 + qy - oy) as u32;
            let got = rgb_at(&img, ix, iy);
            assert!(
                close(got, want, tolerance),
                "{format} at window ({qx},{qy}) = image ({ix},{iy}): {got:?} != {want:?}"
            );
        }
    }

    // A region equal to the client area gives exactly the painted picture.
    let (cx, cy) = painted.client_origin();
    let r = server
        .call(
            "screenshot",
            json!({ "region": { "x": cx, "y": cy, "width": 400, "height": 300 }, "format": "png" }),
        )
        .await;
    let img = image(&r);
    assert_eq!((img.0, img.1), (400, 300));
    assert_eq!(rgb_at(&img, 0, 0), RED);
    assert_eq!(rgb_at(&img, 399, 0), GREEN);
    assert_eq!(rgb_at(&img, 0, 299), BLUE);
    assert_eq!(rgb_at(&img, 399, 299), YELLOW);
    assert_eq!(rgb_at(&img, 20, 20), MAGENTA);
    assert_eq!(rgb_at(&img, 19, 20), RED);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_width_800_maps_a_known_point_back_within_one_pixel() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let marker = (211, 97, 40);
    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot marker",
        900,
        500,
        500,
        400,
        marker,
    );
    harness::listed(&server, "deskpilot marker", "deskpilot marker").await;
    painted.raise();

    // The window manager raises the window a little after the request: poll until the marker
    // shows (a screenshot taken before that is no failure of the mapping under test).
    let (r, img, sx, sy, n) = wait_for(Duration::from_secs(5), "the marker on screen", || async {
        let r = server.call("screenshot", json!({ "maxWidth": 800 })).await;
        let img = image(&r);
        let (mut sx, mut sy, mut n) = (0.0, 0.0, 0.0);
        for y in 0..img.1 {
            for x in 0..img.0 {
                let [r, g, b] = rgb_at(&img, x, y);
                if r > 200 && g < 90 && b > 200 {
                    sx += x as f64 + 0.5;
                    sy += y as f64 + 0.5;
                    n += 1.0;
                }
            }
        }
        (n > 100.0).then_some((r, img, sx, sy, n))
    })
    .await;
    let s = ok(&r).clone();
    let view = &s["view"];
    assert_eq!(img.0, 800);
    assert_eq!(
        (img.0 as u64, img.1 as u64),
        (
            view["width"].as_u64().unwrap(),
            view["height"].as_u64().unwrap()
        )
    );
    let scale = view["scale"].as_f64().unwrap();
    let scale_y = view["scale_y"].as_f64().unwrap();
    assert!((scale - 800.0 / 1920.0).abs() < 1e-9, "{scale}");
    assert!(text(&r).contains(&format!("screenshot_id {}", s["screenshot_id"])));
    assert!(
        n > 100.0,
        "the marker must be visible in the scaled image ({n} pixels)"
    );
    let (ox, oy) = (
        view["capture"]["x"].as_f64().unwrap(),
        view["capture"]["y"].as_f64().unwrap(),
    );
    let mapped = (ox + (sx / n) / scale, oy + (sy / n) / scale_y);
    let (cx, cy) = painted.client_origin();
    let truth = (
        cx as f64 + marker.0 as f64 + marker.2 as f64 / 2.0,
        cy as f64 + marker.1 as f64 + marker.2 as f64 / 2.0,
    );
    assert!(
        (mapped.0 - truth.0).abs() <= 1.0 && (mapped.1 - truth.1).abs() <= 1.0,
        "mapped {mapped:?}, marker centre {truth:?}"
    );
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_targets_get_typed_errors_and_clamps_are_said() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;

    let r = server
        .call("screenshot", json!({ "window_id": 0x7fff_fff1u64 }))
        .await;
    assert_eq!(error_code(&r), "WINDOW_NOT_FOUND");
    assert!(
        text(&r).contains("list_windows"),
        "the hint names the way out: {}",
        text(&r)
    );

    let r = server
        .call(
            "screenshot",
            json!({ "region": { "x": 5000, "y": 5000, "width": 10, "height": 10 } }),
        )
        .await;
    assert_eq!(error_code(&r), "REGION_OUTSIDE_SCREEN");

    let r = server
        .call(
            "screenshot",
            json!({ "region": { "x": 1900, "y": 1070, "width": 100, "height": 100 } }),
        )
        .await;
    assert_eq!(
        ok(&r)["view"]["capture"],
        json!({ "x": 1900, "y": 1070, "width": 20, "height": 10 })
    );
    assert!(text(&r).contains("clipped"), "{}", text(&r));

    let r = server.call("screenshot", json!({ "max_width": 10 })).await;
    assert_eq!(ok(&r)["view"]["width"], 64);
    assert!(text(&r).contains("max_width 10"), "{}", text(&r));
    let r = server
        .call("screenshot", json!({ "max_width": 100000 }))
        .await;
    assert!(ok(&r)["view"]["width"].as_u64().unwrap() <= 1280);

    // A minimized window has no pixels: say so instead of returning whatever covers it.
    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot minimized",
        50,
        50,
        200,
        100,
        (0, 0, 1),
    );
    let w = harness::listed(&server, "deskpilot minimized", "deskpilot minimized").await;
    iconify(&painted);
    wait_for(
        Duration::from_secs(10),
        "the window to be minimized",
        || async {
            let r = server
                .call("list_windows", json!({ "filter": "deskpilot minimized" }))
                .await;
            find_window(ok(&r), "deskpilot minimized")
                .filter(|w| w["minimized"] == true)
                .map(|_| ())
        },
    )
    .await;
    let r = server
        .call("screenshot", json!({ "window_id": w["id"] }))
        .await;
    assert_eq!(error_code(&r), "WINDOW_MINIMIZED");

    // The screenshot registry shows up in status.
    let st = server.call("status", json!({})).await;
    let st = ok(&st);
    assert_eq!(st["platform"], "x11");
    assert_eq!(st["capture_method"], "mit-shm");
    assert_eq!(
        st["desktop"],
        json!({ "x": 0, "y": 0, "width": 1920, "height": 1080 })
    );
    assert!(st["last_screenshot"]["screenshot_id"].as_u64().unwrap() >= 3);
    server.finish().await;
}

/// Asks the window manager to iconify the window (ICCCM WM_CHANGE_STATE).
fn iconify(w: &PaintedWindow) {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt as _, EventMask};
    let root = w.conn.setup().roots[0].root;
    let atom = w
        .conn
        .intern_atom(false, b"WM_CHANGE_STATE")
        .unwrap()
        .reply()
        .unwrap()
        .atom;
    let event = ClientMessageEvent::new(32, w.id, atom, [3u32, 0, 0, 0, 0]);
    w.conn
        .send_event(
            false,
            root,
            EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
            event,
        )
        .unwrap();
    w.conn.flush().unwrap();
}

/// The deployment's configuration file: a privacy mask is painted black in every capture and
/// said, and screenshot defaults come from it; a bad file never stops the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configured_masks_and_defaults_apply_and_bad_values_only_warn() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot masked",
        400,
        300,
        400,
        300,
        (20, 20, 10),
    );
    // The window is placed by the window manager: wait until it is listed, then read where.
    let probe = serve(Some(desktop), &[], &[]).await;
    let w = harness::listed(&probe, "deskpilot masked", "deskpilot masked").await;
    probe.finish().await;
    painted.raise();
    let (cx, cy) = painted.client_origin();
    let dir = std::env::temp_dir().join(format!("deskpilot-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("config.toml");
    std::fs::write(
        &config,
        format!(
            "maskRegions = [{{ x = {}, y = {}, width = 100, height = 80 }}]\n\
             [screenshot]\nmaxWidth = 640\nformat = \"png\"\n",
            cx + 10,
            cy + 10
        ),
    )
    .unwrap();
    let server = serve(Some(desktop), &["--config", config.to_str().unwrap()], &[]).await;
    let r = server
        .call("screenshot", json!({ "window_id": w["id"] }))
        .await;
    let s = ok(&r).clone();
    assert_eq!(s["format"], "png", "the configured default format");
    assert_eq!(s["masked_regions"], 1);
    assert!(
        text(&r).contains("1 privacy-masked regions are blacked out"),
        "{}",
        text(&r)
    );
    let (iw, _, px) = image(&r);
    let (ox, oy) = (
        s["view"]["capture"]["x"].as_i64().unwrap(),
        s["view"]["capture"]["y"].as_i64().unwrap(),
    );
    let at = |x: i64, y: i64| {
        let i = (((y - oy) * iw as i64 + (x - ox)) * 3) as usize;
        [px[i], px[i + 1], px[i + 2]]
    };
    let (cx, cy) = (cx as i64, cy as i64);
    assert_eq!(at(cx + 50, cy + 40), [0, 0, 0], "inside the mask: black");
    assert_eq!(
        at(cx + 150, cy + 40),
        RED,
        "outside the mask: the window's red"
    );
    // The configured width budget applies to a full-screen shot.
    let r = server.call("screenshot", json!({})).await;
    assert_eq!(ok(&r)["view"]["width"], 640);
    server.finish().await;

    // Bad values: the server still answers, stderr names each problem.
    std::fs::write(
        &config,
        "cursor = \"ring\"\noverlay = \"sometimes\"\n[screenshot]\nmaxWidth = 10\n",
    )
    .unwrap();
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_deskpilot"));
    cmd.args(["call", "status", "{}", "--config", config.to_str().unwrap()]);
    desktop.configure(&mut cmd);
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("screenshot.maxWidth = 10 is outside 64..=8192")
            && stderr.contains("cursor = ring is not one of agent, halo, off")
            && stderr.contains("overlay = sometimes is not one of auto, always, never"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grid_labels_are_clickable_and_decorations_never_count_as_change() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot grid",
        500,
        200,
        400,
        300,
        (300, 200, 20),
    );
    painted.listen();
    let w = harness::listed(&server, "deskpilot grid", "deskpilot grid").await;
    painted.raise();
    // The reference must be the window as it stays: let the raise and its repaint settle.
    let settled = server
        .call(
            "wait_for",
            json!({ "wait_kind": "stable", "window_id": w["id"], "stable_ms": 300, "timeout_ms": 10000 }),
        )
        .await;
    ok(&settled);
    let plain = server
        .call(
            "screenshot",
            json!({ "window_id": w["id"], "format": "png", "compare": true }),
        )
        .await;
    let s = ok(&plain).clone();
    let scale = s["view"]["scale"].as_f64().unwrap();
    assert_eq!(scale, 1.0);
    // Window pixel (100, 100) of the client area, in this image's space.
    let (ox, oy) = painted.client_origin();
    let cap = &s["view"]["capture"];
    let (gx, gy) = (
        ox as i64 + 100 - cap["x"].as_i64().unwrap(),
        oy as i64 + 100 - cap["y"].as_i64().unwrap(),
    );
    // A grid whose lines pass through that point; the mark sits on it; the rest is dimmed.
    let r = server
        .call(
            "screenshot",
            json!({
                "window_id": w["id"], "format": "png", "compare": true,
                "grid_step": gx, "mark": { "x": gx + 60, "y": gy + 40 },
                "dim": { "x": 0, "y": 0, "width": gx + 120, "height": gy + 120 },
            }),
        )
        .await;
    let d = ok(&r).clone();
    assert_eq!(
        d["change"]["changed"],
        false,
        "the decorations are not a change: {}",
        text(&r)
    );
    let img = image(&r);
    let base = image(&plain);
    assert_eq!(
        rgb_at(&img, gx as u32, gy as u32 + 30),
        [0, 200, 255],
        "grid line"
    );
    assert_eq!(
        rgb_at(&img, gx as u32 + 60, gy as u32 + 40),
        [255, 0, 200],
        "mark"
    );
    let far = (img.0 - 5, img.1 - 5);
    let dark = rgb_at(&img, far.0, far.1);
    let orig = rgb_at(&base, far.0, far.1);
    assert!(
        dark.iter()
            .zip(orig)
            .all(|(d, o)| *d as u32 <= o as u32 * 40 / 100 + 1),
        "dimmed outside: {dark:?} vs {orig:?}"
    );
    // The grid's coordinates are the image's: click where two lines cross.
    let r = server
        .call(
            "click",
            json!({ "x": gx, "y": gy, "screenshot_id": d["screenshot_id"] }),
        )
        .await;
    ok(&r);
    let presses = wait_for(Duration::from_secs(5), "the click", || async {
        let p = painted.presses();
        (!p.is_empty()).then_some(p)
    })
    .await;
    assert_eq!((presses[0].x, presses[0].y), (100, 100), "{presses:?}");
    // A real change is one.
    painted.move_to(520, 220);
    wait_for(Duration::from_secs(5), "the window to move", || async {
        (painted.client_origin() != (ox, oy)).then_some(())
    })
    .await;
    let r = server
        .call(
            "screenshot",
            json!({ "region": { "x": 480, "y": 180, "width": 480, "height": 380 }, "compare": true }),
        )
        .await;
    assert!(ok(&r)["change"].is_null(), "a new area has no reference");
    painted.move_to(500, 200);
    let r = wait_for(Duration::from_secs(5), "a visible change", || async {
        let r = server
            .call(
                "screenshot",
                json!({ "region": { "x": 480, "y": 180, "width": 480, "height": 380 }, "compare": true }),
            )
            .await;
        (ok(&r)["change"]["changed"] == true).then_some(r)
    })
    .await;
    assert!(text(&r).contains("changed"), "{}", text(&r));
    server.finish().await;
}
