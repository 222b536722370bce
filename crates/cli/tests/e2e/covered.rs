//! A covered window's `screenshot` on X11: the window's own pixels through the Composite
//! extension (not what covers it), the method stated, and nothing on screen changed.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{self, image, ok, serve, text, wait_for};
use crate::paint::{GREEN, PaintedWindow, RED};

fn rgb_at(img: &(u32, u32, Vec<u8>), x: u32, y: u32) -> [u8; 3] {
    let i = ((y * img.0 + x) * 3) as usize;
    [img.2[i], img.2[i + 1], img.2[i + 2]]
}

/// Points well inside the client area of a window screenshot (away from the frame).
fn inner_points(img: &(u32, u32, Vec<u8>)) -> Vec<(u32, u32)> {
    let (w, h) = (img.0, img.1);
    vec![
        (w / 2, h / 2),
        (w / 4, h / 2),
        (3 * w / 4, h / 2),
        (w / 2, h / 4),
        (w / 2, 3 * h / 4),
    ]
}

fn rect(v: &Value) -> (i64, i64, i64, i64) {
    let n = |k: &str| v[k].as_i64().unwrap();
    (n("x"), n("y"), n("width"), n("height"))
}

fn contains(outer: (i64, i64, i64, i64), inner: (i64, i64, i64, i64)) -> bool {
    outer.0 <= inner.0
        && outer.1 <= inner.1
        && outer.0 + outer.2 >= inner.0 + inner.2
        && outer.1 + outer.3 >= inner.1 + inner.3
}

/// Median wall time of `n` calls of `tool` with `args`, in milliseconds.
async fn median_ms<H: rmcp::ClientHandler>(
    server: &harness::Server<H>,
    tool: &str,
    args: Value,
    n: usize,
) -> f64 {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        ok(&server.call(tool, args.clone()).await);
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    times[n / 2]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::print_stderr)]
async fn a_covered_window_screenshot_is_its_own_drawing_through_composite() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let below = PaintedWindow::solid(
        desktop.display(),
        "deskpilot covered below",
        (120, 120, 800, 600),
        GREEN,
    );
    harness::listed(&server, "deskpilot covered", "deskpilot covered below").await;
    let above = PaintedWindow::solid(
        desktop.display(),
        "deskpilot covered above",
        (60, 60, 960, 760),
        RED,
    );
    harness::listed(&server, "deskpilot covered", "deskpilot covered above").await;
    above.raise();
    // Wait until the window manager has the cover on top and over all of the window below.
    let (b, a) = wait_for(
        Duration::from_secs(10),
        "the cover over the window",
        || async {
            let r = server
                .call("list_windows", json!({ "filter": "deskpilot covered" }))
                .await;
            let l = ok(&r);
            let b = harness::find_window(l, "deskpilot covered below")?.clone();
            let a = harness::find_window(l, "deskpilot covered above")?.clone();
            (a["z"].as_u64() < b["z"].as_u64() && contains(rect(&a["frame"]), rect(&b["frame"])))
                .then_some((b, a))
        },
    )
    .await;
    let id = b["id"].as_u64().unwrap();
    let frame = rect(&b["frame"]);
    let region = json!({
        "region": { "x": frame.0, "y": frame.1, "width": frame.2, "height": frame.3 },
        "format": "png",
    });

    // The screen there shows the cover.
    let r = server.call("screenshot", region.clone()).await;
    ok(&r);
    let before = image(&r);
    for (x, y) in inner_points(&before) {
        assert_eq!(rgb_at(&before, x, y), RED, "the screen at ({x}, {y})");
    }

    // The covered window's screenshot is its own colour, and says how it was got.
    let r = server
        .call("screenshot", json!({ "window_id": id, "format": "png" }))
        .await;
    let s = ok(&r).clone();
    let notes = text(&r);
    let img = image(&r);
    for (x, y) in inner_points(&img) {
        assert_eq!(
            rgb_at(&img, x, y),
            GREEN,
            "the window's own pixel at ({x}, {y}): {notes}"
        );
    }
    assert!(
        notes.contains("partly covered by \"deskpilot covered above\"")
            && notes.contains("own drawing (composite)"),
        "{notes}"
    );
    assert_eq!(s["view"]["capture"], b["frame"], "{s}");

    // Nothing changed on screen: same pixels, the cover still on top.
    let r = server.call("screenshot", region.clone()).await;
    ok(&r);
    let after = image(&r);
    assert!(after == before, "the screen changed under the capture");
    let r = server
        .call("list_windows", json!({ "filter": "deskpilot covered" }))
        .await;
    let l = ok(&r);
    let (b2, a2) = (
        harness::find_window(l, "deskpilot covered below").unwrap(),
        harness::find_window(l, "deskpilot covered above").unwrap(),
    );
    assert!(a2["z"].as_u64() < b2["z"].as_u64(), "{l}");
    assert_eq!(a2["frame"], a["frame"]);

    // The cost: the covered window through composite against a screen grab of its rectangle.
    let own = median_ms(
        &server,
        "screenshot",
        json!({ "window_id": id, "format": "png" }),
        7,
    )
    .await;
    let screen = median_ms(&server, "screenshot", region, 7).await;
    eprintln!(
        "covered {}x{} window: composite screenshot {own:.1} ms, screen screenshot {screen:.1} ms (medians of 7, through MCP)",
        frame.2, frame.3
    );
    drop(above);
    drop(below);
    // Gone before the next test places its windows.
    wait_for(
        Duration::from_secs(10),
        "the painted windows gone",
        || async {
            let r = server
                .call("list_windows", json!({ "filter": "deskpilot covered" }))
                .await;
            let l = ok(&r);
            (harness::find_window(l, "deskpilot covered below").is_none()
                && harness::find_window(l, "deskpilot covered above").is_none())
            .then_some(())
        },
    )
    .await;
}
