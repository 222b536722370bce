//! Two monitors for real: a Xinerama desktop of two heads side by side (Xephyr nested in Xvfb,
//! [`harness::HEADS`]: 1280x800@0,0 and 1024x768@1280,0, root 2304x800, RandR reporting only
//! the first head). `status` lists both heads; a monitor screenshot shows its head; clicks land
//! on either side of the seam and through each head's image mapping; an xterm on the second
//! head takes a click and the typing; windows move across the seam and maximize on their head;
//! a dialog's accessibility tree on the second head matches its pixels; the overlay frames
//! both heads. Regression: the second head was invisible (one
//! 1280x800 monitor, `screenshot {monitor: 1}` refused, a click at x=1500 `POINT_OFF_SCREEN`).

use std::time::{Duration, Instant};

use deskpilot_x11::VirtualDisplay;
use serde_json::{Value, json};

use crate::harness::{
    self, HEADS, Server, error_code, find_window, image, ok, serve, text, wait_for,
};
use crate::paint::{BLUE, GREEN, MAGENTA, PaintedWindow, Press, RED, YELLOW};

/// The overlay's frame colour (the X11 overlay's `FRAME_RGB`).
const FRAME: [u8; 3] = [0x1e, 0x7b, 0xff];

/// The heads as `{x, y, width, height}`, left to right.
fn heads() -> [Value; 2] {
    let (w0, h0) = HEADS[0];
    let (w1, h1) = HEADS[1];
    [
        json!({ "x": 0, "y": 0, "width": w0, "height": h0 }),
        json!({ "x": w0, "y": 0, "width": w1, "height": h1 }),
    ]
}

/// The x of the seam: the first column of the second head.
const SEAM: i32 = HEADS[0].0 as i32;

/// Tests on the two-head desktop run one at a time (they share its window manager).
async fn one_at_a_time() -> tokio::sync::MutexGuard<'static, ()> {
    static LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    LOCK.lock().await
}

fn rgb_at(img: &(u32, u32, Vec<u8>), x: u32, y: u32) -> [u8; 3] {
    let i = ((y * img.0 + x) * 3) as usize;
    [img.2[i], img.2[i + 1], img.2[i + 2]]
}

fn close(a: [u8; 3], b: [u8; 3], tolerance: i32) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| (*x as i32 - y as i32).abs() <= tolerance)
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// A painted window at `(x, y)` (400x300, its marker at `marker`) that reports its button
/// events, listed and raised.
async fn painted(
    desktop: &VirtualDisplay,
    server: &Server,
    title: &str,
    x: i16,
    y: i16,
    marker: (i16, i16),
) -> (PaintedWindow, Value) {
    let p = PaintedWindow::open(
        desktop.display(),
        title,
        x,
        y,
        400,
        300,
        (marker.0, marker.1, 20),
    );
    p.listen();
    harness::listed(server, title, title).await;
    p.raise();
    // The window manager places a new window a moment after it is listed (more so on a
    // loaded machine): wait until its position is the same twice in a row, as the X server
    // and deskpilot both see it.
    let win = &p;
    let w = wait_for(Duration::from_secs(10), "the window to be placed", || {
        let before = win.client_origin();
        async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let now = win.client_origin();
            let listed = harness::listed(server, title, title).await;
            let c = &listed["client"];
            let seen = (int(&c["x"]) as i32, int(&c["y"]) as i32);
            (before == now && seen == now).then_some(listed)
        }
    })
    .await;
    (p, w)
}

/// Waits for `n` button events of `w`.
async fn presses(w: &PaintedWindow, n: usize) -> Vec<Press> {
    let mut got = Vec::new();
    wait_for(
        Duration::from_secs(10),
        &format!("{n} button events"),
        || {
            got.extend(w.presses());
            let done = got.len() >= n;
            async move { done.then_some(()) }
        },
    )
    .await;
    got
}

/// A lossless region screenshot at full size.
async fn region(server: &Server, x: i32, y: i32, width: u32, height: u32) -> (u32, u32, Vec<u8>) {
    let r = server
        .call(
            "screenshot",
            json!({ "region": { "x": x, "y": y, "width": width, "height": height }, "format": "png" }),
        )
        .await;
    assert_eq!(ok(&r)["view"]["scale"], 1.0, "{}", text(&r));
    image(&r)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_lists_both_heads_and_each_monitor_screenshot_shows_its_head() {
    let Some(desktop) = harness::two_heads() else {
        return;
    };
    let _guard = one_at_a_time().await;
    let server = serve(Some(desktop), &[], &[]).await;

    let r = server.call("status", json!({})).await;
    let s = ok(&r).clone();
    assert_eq!(
        s["desktop"],
        json!({ "x": 0, "y": 0, "width": 2304, "height": 800 }),
        "{s}"
    );
    let monitors = s["monitors"].as_array().expect("monitors");
    assert_eq!(monitors.len(), 2, "both heads: {s}");
    for (i, m) in monitors.iter().enumerate() {
        assert_eq!(m["index"], i, "{m}");
        assert_eq!(m["rect"], heads()[i], "{m}");
        assert_eq!(m["primary"], i == 0, "{m}");
    }
    assert!(
        text(&r).contains("with 2 monitor(s)") && text(&r).contains("1024x768+1280+0"),
        "{}",
        text(&r)
    );

    // One window on each head, the marker at a different place in each.
    let (a, _) = painted(desktop, &server, "deskpilot head one", 200, 150, (20, 20)).await;
    let (b, _) = painted(
        desktop,
        &server,
        "deskpilot head two",
        1500,
        200,
        (340, 240),
    )
    .await;
    for (index, window, marker) in [(0usize, &a, (20, 20)), (1, &b, (340, 240))] {
        let r = server
            .call("screenshot", json!({ "monitor": index, "format": "png" }))
            .await;
        let view = ok(&r)["view"].clone();
        assert_eq!(view["capture"], heads()[index], "monitor {index}: {view}");
        let img = image(&r);
        assert_eq!(
            (u64::from(img.0), u64::from(img.1)),
            (
                view["width"].as_u64().unwrap(),
                view["height"].as_u64().unwrap()
            ),
            "monitor {index}: the image is the size the view says"
        );
        // The default budget (<= 1280 wide, <= 600 000 px) scales both heads down, keeping
        // their aspect.
        let scale = view["scale"].as_f64().unwrap();
        let (hw, hh) = HEADS[index];
        assert!(scale < 1.0 && img.0 * img.1 <= 600_000, "{view}");
        assert!(
            (f64::from(img.0) - f64::from(hw) * scale).abs() <= 1.0
                && (f64::from(img.1) - f64::from(hh) * scale).abs() <= 1.0,
            "monitor {index}: {}x{} is not {hw}x{hh} at scale {scale}",
            img.0,
            img.1
        );
        // The painted quadrants and marker, found through the view: image = (physical - capture) * scale.
        let (cx, cy) = window.client_origin();
        let (ox, oy) = (int(&view["capture"]["x"]), int(&view["capture"]["y"]));
        for (qx, qy, want) in [
            (100, 75, RED),
            (300, 75, GREEN),
            (100, 225, BLUE),
            (300, 225, YELLOW),
            (i64::from(marker.0) + 10, i64::from(marker.1) + 10, MAGENTA),
        ] {
            let ix = ((i64::from(cx) + qx - ox) as f64 * scale) as u32;
            let iy = ((i64::from(cy) + qy - oy) as f64 * scale) as u32;
            assert!(
                close(rgb_at(&img, ix, iy), want, 8),
                "monitor {index}: window point ({qx}, {qy}) at image ({ix}, {iy}) is {:?}, want {want:?}",
                rgb_at(&img, ix, iy)
            );
        }
    }
    let r = server.call("screenshot", json!({ "monitor": 2 })).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT");
    assert!(text(&r).contains("1024x768+1280+0"), "{}", text(&r));
    // The whole desktop spans both heads.
    let r = server.call("screenshot", json!({})).await;
    assert_eq!(
        ok(&r)["view"]["capture"],
        json!({ "x": 0, "y": 0, "width": 2304, "height": 800 })
    );
    drop((a, b));
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clicks_land_on_either_side_of_the_seam_and_through_each_heads_image() {
    let Some(desktop) = harness::two_heads() else {
        return;
    };
    let _guard = one_at_a_time().await;
    let server = serve(Some(desktop), &[], &[]).await;

    // A window straddling the seam: its columns SEAM-1 and SEAM are on different heads.
    let (s, _) = painted(desktop, &server, "deskpilot on the seam", 1130, 300, (0, 0)).await;
    let (sx, sy) = s.client_origin();
    assert!(
        sx < SEAM - 1 && sx + 400 > SEAM,
        "the window spans the seam: {sx}"
    );
    for x in [SEAM - 1, SEAM] {
        let r = server
            .call(
                "click",
                json!({ "x": x, "y": sy + 100, "coordinates": "physical" }),
            )
            .await;
        let o = ok(&r);
        assert_eq!(o["receipt"]["landed"], true, "{o}");
        assert_eq!(o["window"]["title"], "deskpilot on the seam", "{o}");
        let got = presses(&s, 2).await;
        assert_eq!(
            (
                got[0].button,
                got[0].down,
                i32::from(got[0].x),
                i32::from(got[0].y)
            ),
            (1, true, x - sx, 100),
            "the click at x={x}: {got:?}"
        );
    }
    // A drag across the seam: pressed on the first head, released on the second.
    let (from, to) = (SEAM - 60, SEAM + 70);
    let r = server
        .call(
            "drag",
            json!({ "from_x": from, "from_y": sy + 50, "to_x": to, "to_y": sy + 150, "coordinates": "physical" }),
        )
        .await;
    ok(&r);
    let got = presses(&s, 2).await;
    assert_eq!(
        got.iter()
            .map(|p| (p.button, p.down, i32::from(p.x), i32::from(p.y)))
            .collect::<Vec<_>>(),
        [(1, true, from - sx, 50), (1, false, to - sx, 150)],
        "{got:?}"
    );
    drop(s);

    // Read off each head's screenshot: the image point maps to the head's physical point.
    let (a, _) = painted(desktop, &server, "deskpilot aim one", 300, 200, (0, 0)).await;
    let (b, _) = painted(desktop, &server, "deskpilot aim two", 1700, 250, (0, 0)).await;
    for (index, window, title) in [(0, &a, "deskpilot aim one"), (1, &b, "deskpilot aim two")] {
        let shot = server.call("screenshot", json!({ "monitor": index })).await;
        let view = ok(&shot)["view"].clone();
        let id = ok(&shot)["screenshot_id"].clone();
        let scale = view["scale"].as_f64().unwrap();
        let (cx, cy) = window.client_origin();
        let (ox, oy) = (int(&view["capture"]["x"]), int(&view["capture"]["y"]));
        // Aim at window point (250, 120), as a model reading this image would.
        let ix = ((i64::from(cx) + 250 - ox) as f64 * scale).floor();
        let iy = ((i64::from(cy) + 120 - oy) as f64 * scale).floor();
        let r = server
            .call("click", json!({ "x": ix, "y": iy, "screenshot_id": id }))
            .await;
        let o = ok(&r);
        assert_eq!(o["receipt"]["landed"], true, "{o}");
        assert_eq!(o["window"]["title"], title, "{o}");
        let got = presses(window, 2).await;
        let tolerance = (1.0 / scale).ceil() as i16 + 1;
        assert!(
            got[0].down
                && (got[0].x - 250).abs() <= tolerance
                && (got[0].y - 120).abs() <= tolerance,
            "monitor {index}: image ({ix}, {iy}) landed at {got:?}, aimed at (250, 120)"
        );
    }

    // Below the shorter second head is no monitor at all; beyond the root neither.
    for (x, y) in [(1500, 790), (2400, 10)] {
        let r = server
            .call(
                "click",
                json!({ "x": x, "y": y, "coordinates": "physical" }),
            )
            .await;
        assert_eq!(
            error_code(&r),
            "POINT_OFF_SCREEN",
            "({x}, {y}): {}",
            text(&r)
        );
    }
    drop((a, b));
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_xterm_on_the_second_head_takes_the_click_and_the_typing() {
    let Some(desktop) = harness::two_heads() else {
        return;
    };
    let _guard = one_at_a_time().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let file = std::env::temp_dir().join(format!("deskpilot-head-two-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&file);
    // The xterm of the defect: on the second head, covering x=1500, y=150.
    let script = format!("stty -echo; cat > '{}'", file.display());
    let mut cmd = std::process::Command::new("xterm");
    cmd.args([
        "-geometry",
        "60x10+1450+100",
        "-T",
        "deskpilot xterm two",
        "-e",
        "sh",
        "-c",
        &script,
    ])
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    desktop.configure(&mut cmd);
    let _xterm = harness::App(cmd.spawn().expect("xterm"));
    let xterm = harness::listed(&server, "deskpilot xterm two", "deskpilot xterm two").await;
    assert_eq!(xterm["monitor"], 1, "{xterm}");
    wait_for(Duration::from_secs(10), "cat to create the file", || {
        let exists = file.exists();
        async move { exists.then_some(()) }
    })
    .await;
    // Something else on the first head has the focus.
    let (other, w) = painted(desktop, &server, "deskpilot focus one", 100, 100, (0, 0)).await;
    ok(&server
        .call("window", json!({ "action": "focus", "window_id": w["id"] }))
        .await);
    let active = |title: &'static str| {
        let server = &server;
        async move {
            let r = server.call("list_windows", json!({})).await;
            find_window(ok(&r), title)
                .filter(|w| w["active"] == true)
                .map(|_| ())
        }
    };
    wait_for(
        Duration::from_secs(10),
        "the first head's window to be active",
        || active("deskpilot focus one"),
    )
    .await;

    let r = server
        .call(
            "click",
            json!({ "x": 1500, "y": 150, "coordinates": "physical" }),
        )
        .await;
    let o = ok(&r);
    assert_eq!(o["receipt"]["landed"], true, "{o}");
    assert_eq!(o["window"]["title"], "deskpilot xterm two", "{o}");
    wait_for(
        Duration::from_secs(10),
        "the clicked xterm to be active",
        || active("deskpilot xterm two"),
    )
    .await;
    let typed = "typed on head two\n";
    ok(&server.call("type_text", json!({ "text": typed })).await);
    let got = wait_for(
        Duration::from_secs(10),
        "the typed line in the file",
        || {
            let content = std::fs::read_to_string(&file).unwrap_or_default();
            async move { (content == typed).then_some(content) }
        },
    )
    .await;
    assert_eq!(got, typed);
    let _ = std::fs::remove_file(&file);
    drop(other);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn windows_move_across_the_seam_and_maximize_on_their_own_head() {
    let Some(desktop) = harness::two_heads() else {
        return;
    };
    let _guard = one_at_a_time().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let (p, w) = painted(desktop, &server, "deskpilot traveller", 150, 150, (20, 20)).await;
    let id = w["id"].clone();
    assert_eq!(w["monitor"], 0, "{w}");
    let act = |action: &'static str, extra: Value| {
        let server = &server;
        let id = id.clone();
        async move {
            let mut args = json!({ "action": action, "window_id": id });
            args.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            server.call("window", args).await
        }
    };

    // To the second head: the window manager puts it there, the X server agrees, and its
    // pixels show up in the second head's screenshot.
    let r = act("move", json!({ "x": 1600, "y": 120 })).await;
    let moved = ok(&r)["window"].clone();
    assert_eq!(
        (int(&moved["frame"]["x"]), int(&moved["frame"]["y"])),
        (1600, 120),
        "{}",
        text(&r)
    );
    assert_eq!(moved["monitor"], 1, "{moved}");
    let (cx, cy) = p.client_origin();
    assert!(
        cx >= 1600 && cy >= 120,
        "the X server has it at ({cx}, {cy})"
    );
    let r = server
        .call("screenshot", json!({ "monitor": 1, "format": "png" }))
        .await;
    let scale = ok(&r)["view"]["scale"].as_f64().unwrap();
    let img = image(&r);
    let (ix, iy) = (
        ((i64::from(cx) + 100 - i64::from(SEAM)) as f64 * scale) as u32,
        ((i64::from(cy) + 75) as f64 * scale) as u32,
    );
    assert!(
        close(rgb_at(&img, ix, iy), RED, 8),
        "{:?}",
        rgb_at(&img, ix, iy)
    );

    // Back across the seam, straddling it: the head holding most of it is the first.
    let r = act("move", json!({ "x": 1000, "y": 120 })).await;
    let back = ok(&r)["window"].clone();
    assert_eq!(int(&back["frame"]["x"]), 1000, "{}", text(&r));
    assert_eq!(back["monitor"], 0, "{back}");
    // Off every head is refused.
    let r = act("move", json!({ "x": 3000, "y": 120 })).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{}", text(&r));

    // Maximized on the second head, it fills that head only (the window manager sees both).
    let r = act("move", json!({ "x": 1600, "y": 120 })).await;
    ok(&r);
    let r = act("maximize", json!({})).await;
    let big = ok(&r)["window"].clone();
    let f = &big["frame"];
    let (fx, fy, fw, fh) = (
        int(&f["x"]),
        int(&f["y"]),
        int(&f["width"]),
        int(&f["height"]),
    );
    // openbox may hang a maximized window's border (1 px) just over the head's edges: seen
    // as {x: 1279, y: -1, width: 1026, height: 774} on a loaded machine.
    const BORDER: i64 = 4;
    assert!(
        fx >= i64::from(SEAM) - BORDER
            && fy >= -BORDER
            && fx + fw <= 2304 + BORDER
            && fy + fh <= i64::from(HEADS[1].1) + BORDER
            && fx + fw / 2 > i64::from(SEAM)
            && fw >= 1000
            && fh >= 700,
        "maximized on the second head: {f}"
    );
    drop(p);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overlay_frames_both_heads_while_an_action_runs() {
    let Some(desktop) = harness::two_heads() else {
        return;
    };
    let _guard = one_at_a_time().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let h0 = HEADS[0].1 as i32;
    let (w1, h1) = (HEADS[1].0 as i32, HEADS[1].1 as i32);
    // Strips across the heads' edges, lossless at full size: (region, points of the frame in
    // it, points that are not the frame). The frame is 5 px wide, just inside each head.
    type Strip = (
        (i32, i32, u32, u32),
        &'static [(u32, u32)],
        &'static [(u32, u32)],
    );
    let edges: [Strip; 6] = [
        // The first head's left edge.
        ((0, 400, 12, 1), &[(0, 0), (4, 0)], &[(6, 0)]),
        // The seam: the first head's right edge (x 1275..1280), the second's left (1280..1285).
        (
            (SEAM - 10, 400, 20, 1),
            &[(5, 0), (9, 0), (10, 0), (14, 0)],
            &[(3, 0), (16, 0)],
        ),
        // The second head's right edge, at the root's.
        ((SEAM + w1 - 12, 300, 12, 1), &[(7, 0), (11, 0)], &[(5, 0)]),
        // The second head's top edge.
        ((SEAM + 500, 0, 1, 12), &[(0, 0), (0, 4)], &[(0, 6)]),
        // The bottom edges: the first head's at 800, the second's at 768 (a frame around the
        // root ran through the dead area below the second head, leaving its bottom bare).
        ((600, h0 - 12, 1, 12), &[(0, 7), (0, 11)], &[(0, 5)]),
        ((SEAM + 400, h1 - 12, 1, 12), &[(0, 7), (0, 11)], &[(0, 5)]),
    ];
    // Polled (the machine may be slow to paint): each round re-arms the overlay with a harmless
    // mutation, whose frame is up before it returns, and reads every strip.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        ok(&server
            .call(
                "move_cursor",
                json!({ "x": 640, "y": 400, "coordinates": "physical" }),
            )
            .await);
        let mut wrong = None;
        for ((x, y, w, h), frame, outside) in edges {
            let shot = region(&server, x, y, w, h).await;
            let bad_frame = frame
                .iter()
                .find(|&&(fx, fy)| rgb_at(&shot, fx, fy) != FRAME);
            let bad_outside = outside
                .iter()
                .find(|&&(fx, fy)| rgb_at(&shot, fx, fy) == FRAME);
            if let Some(&(fx, fy)) = bad_frame.or(bad_outside) {
                wrong = Some(format!(
                    "physical ({}, {}) is {:?}; the frame {} there",
                    x + fx as i32,
                    y + fy as i32,
                    rgb_at(&shot, fx, fy),
                    if bad_frame.is_some() {
                        "belongs"
                    } else {
                        "does not belong"
                    }
                ));
                break;
            }
        }
        let Some(wrong) = wrong else { break };
        assert!(
            Instant::now() < deadline,
            "the overlay's frame on both heads, after 20 s: {wrong}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let s = ok(&server.call("status", json!({})).await).clone();
    assert_eq!(s["overlay"]["visible"], true, "{s}");

    // The pointer mark follows the pointer onto the second head and back (its ring, radius 19).
    for (x, y) in [(SEAM + 400, 400), (640, 300)] {
        ok(&server
            .call(
                "move_cursor",
                json!({ "x": x, "y": y, "coordinates": "physical" }),
            )
            .await);
        wait_for(
            Duration::from_secs(10),
            &format!("the pointer mark's ring around ({x}, {y})"),
            || async {
                let shot = region(&server, x - 50, y - 50, 100, 100).await;
                (rgb_at(&shot, 50 + 19, 50) == FRAME && rgb_at(&shot, 50 - 19, 50) == FRAME)
                    .then_some(())
            },
        )
        .await;
    }
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dialog_on_the_second_head_has_its_tree_and_a_click_on_its_bounds_answers_it() {
    let Some(desktop) = harness::two_heads() else {
        return;
    };
    let _guard = one_at_a_time().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let title = "deskpilot question on head two";
    let mut zenity = harness::launch(
        desktop,
        "zenity",
        &["--question", "--title", title, "--text", "Second head?"],
    );
    let w = harness::window_of(&server, zenity.0.id()).await;
    let r = server
        .call(
            "window",
            json!({ "action": "move", "window_id": w["id"], "x": 1600, "y": 200 }),
        )
        .await;
    assert_eq!(ok(&r)["window"]["monitor"], 1, "{}", text(&r));
    // The accessibility bus of the nested desktop serves the tree, in the root's coordinates.
    let yes = wait_for(
        Duration::from_secs(20),
        "zenity's Yes button on the second head",
        || async {
            let r = server
                .call(
                    "get_window_state",
                    json!({ "title_match": title, "include_screenshot": false }),
                )
                .await;
            let s = ok(&r).clone();
            s["elements"]
                .as_array()?
                .iter()
                .find(|e| {
                    e["role"] == "Button"
                        && e["name"] == "Yes"
                        && e["bounds"]["x"]
                            .as_i64()
                            .is_some_and(|x| x >= i64::from(SEAM))
                })
                .cloned()
        },
    )
    .await;
    let b = &yes["bounds"];
    let (x, y) = (
        int(&b["x"]) + int(&b["width"]) / 2,
        int(&b["y"]) + int(&b["height"]) / 2,
    );
    // A pixel click on the button's bounds: the input route, not the accessibility action.
    let r = server
        .call(
            "click",
            json!({ "x": x, "y": y, "coordinates": "physical" }),
        )
        .await;
    assert_eq!(ok(&r)["route"], "input", "{}", text(&r));
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = zenity.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "zenity did not answer the click at ({x}, {y})"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(status.code(), Some(0), "Yes answers 0");
    server.finish().await;
}
