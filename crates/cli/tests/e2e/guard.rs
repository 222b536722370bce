//! The guard on a real desktop: the overlay a human sees, the Esc that stops the agent (the
//! focused app still gets it), resume's cooldown, clicks passing through the overlay, the
//! overlay's death failing closed, and approval through MCP elicitation.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};

use crate::harness::{self, Server, error_code, launch, ok, serve, serve_with, text, wait_for};
use crate::paint::PaintedWindow;
use crate::safety::ConfigFile;

/// The overlay's frame colour (the X11 overlay's `FRAME_RGB`).
const FRAME: [u8; 3] = [0x1e, 0x7b, 0xff];

async fn status<H: ClientHandler>(server: &Server<H>) -> Value {
    let r = server.call("status", json!({})).await;
    ok(&r).clone()
}

pub(crate) fn xdotool_escape(display: &str) {
    let out = std::process::Command::new("xdotool")
        .args(["key", "Escape"])
        .env("DISPLAY", display)
        .output()
        .expect("run xdotool (scripts/install-deps test installs it)");
    assert!(out.status.success(), "xdotool: {:?}", out);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn esc_stops_every_mutation_the_app_still_gets_it_and_resume_waits() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let s = status(&server).await;
    assert_eq!(
        s["overlay"]["visible"], false,
        "not shown before any mutation"
    );
    assert_eq!(s["kill_switch"]["state"], "idle");

    let mut zenity = launch(
        desktop,
        "zenity",
        &[
            "--question",
            "--title",
            "deskpilot esc question",
            "--text",
            "Stop?",
        ],
    );
    let w = harness::window_of(&server, zenity.0.id()).await;
    let r = server
        .call("window", json!({ "action": "focus", "window_id": w["id"] }))
        .await;
    ok(&r);
    // A harmless mutation arms the overlay.
    let (cx, cy) = (
        w["frame"]["x"].as_i64().unwrap() + w["frame"]["width"].as_i64().unwrap() / 2,
        w["frame"]["y"].as_i64().unwrap() + 10,
    );
    let r = server
        .call(
            "move_cursor",
            json!({ "x": cx, "y": cy, "coordinates": "physical" }),
        )
        .await;
    ok(&r);
    let s = status(&server).await;
    assert_eq!(s["overlay"]["visible"], true, "{s}");
    assert_eq!(s["kill_switch"]["state"], "armed", "{s}");
    assert_eq!(s["mutating_actions"], 1);

    // A human presses Esc: zenity (focused) still receives it and closes…
    let pressed = Instant::now();
    xdotool_escape(desktop.display());
    let deadline = Instant::now() + Duration::from_secs(10);
    let exit = loop {
        if let Some(status) = zenity.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "zenity did not get the Esc");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(exit.code(), Some(1), "zenity answers Esc with 1");
    // …and every later mutation is refused.
    wait_for(
        Duration::from_secs(5),
        "the kill switch to trip",
        || async { (status(&server).await["kill_switch"]["state"] == "tripped").then_some(()) },
    )
    .await;
    let s = status(&server).await;
    assert_eq!(s["kill_switch"]["reason"], "esc", "{s}");
    let r = server
        .call(
            "move_cursor",
            json!({ "x": 10, "y": 10, "coordinates": "physical" }),
        )
        .await;
    assert_eq!(error_code(&r), "STOPPED_BY_HUMAN", "{}", text(&r));
    assert_eq!(r.structured_content.as_ref().unwrap()["effect"], "refused");
    assert!(text(&r).contains("a human pressed Esc"), "{}", text(&r));
    let r = server
        .call("type_text", json!({ "text": "must not be typed" }))
        .await;
    assert_eq!(error_code(&r), "STOPPED_BY_HUMAN");
    // Reads keep working.
    ok(&server.call("screenshot", json!({})).await);
    ok(&server.call("list_windows", json!({})).await);

    // Resume is refused during the cooldown, accepted after it.
    tokio::time::sleep(Duration::from_secs(1).saturating_sub(pressed.elapsed())).await;
    let r = server.call("resume", json!({})).await;
    assert_eq!(error_code(&r), "RESUME_TOO_SOON", "{}", text(&r));
    tokio::time::sleep(Duration::from_secs(6).saturating_sub(pressed.elapsed())).await;
    let r = server.call("resume", json!({})).await;
    assert_eq!(ok(&r)["resumed"], true, "{}", text(&r));
    let r = server
        .call(
            "move_cursor",
            json!({ "x": 12, "y": 12, "coordinates": "physical" }),
        )
        .await;
    ok(&r);
    let r = server.call("resume", json!({})).await;
    assert_eq!(ok(&r)["was_stopped"], false);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clicks_pass_through_the_overlay_and_its_death_fails_closed() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot under the overlay",
        0,
        300,
        300,
        200,
        (20, 20, 10),
    );
    painted.listen();
    let server = serve(Some(desktop), &[], &[]).await;
    harness::listed(
        &server,
        "deskpilot under the overlay",
        "deskpilot under the overlay",
    )
    .await;
    painted.raise();
    let (ox, oy) = painted.client_origin();
    assert!(
        ox < 4,
        "the window's client area starts under the frame: {ox}"
    );
    let (x, y) = (3, oy + 100);
    let r = server
        .call(
            "move_cursor",
            json!({ "x": 100, "y": oy + 100, "coordinates": "physical" }),
        )
        .await;
    ok(&r);
    // The overlay's frame covers (x, y) on screen…
    let r = server
        .call(
            "screenshot",
            json!({ "region": { "x": 0, "y": oy, "width": 50, "height": 200 }, "format": "png" }),
        )
        .await;
    let (iw, _, px) = harness::image(&r);
    assert_eq!(ok(&r)["view"]["scale"], 1.0, "a full-size capture");
    let i = (((y - oy) as usize) * iw as usize + x as usize) * 3;
    assert_eq!(
        [px[i], px[i + 1], px[i + 2]],
        FRAME,
        "the overlay frame is painted at ({x}, {y})"
    );
    // …and a click there lands on the window beneath.
    let r = server
        .call(
            "click",
            json!({ "x": x, "y": y, "coordinates": "physical" }),
        )
        .await;
    ok(&r);
    let presses = wait_for(Duration::from_secs(5), "the click to arrive", || async {
        let p = painted.presses();
        (!p.is_empty()).then_some(p)
    })
    .await;
    assert_eq!(
        (
            presses[0].button,
            presses[0].down,
            presses[0].x as i32,
            presses[0].y as i32
        ),
        (1, true, x - ox, y - oy),
        "{presses:?}"
    );

    // deskpilot's own Esc is not a human's: once the overlay has heard it (counted as own),
    // the kill switch is still armed.
    ok(&server
        .call("press_key", json!({ "keys": ["escape"] }))
        .await);
    wait_for(
        Duration::from_secs(5),
        "the overlay to hear deskpilot's Esc",
        || async { (status(&server).await["overlay"]["escapes"]["own"] == 1).then_some(()) },
    )
    .await;
    let s = status(&server).await;
    assert_eq!(s["kill_switch"]["state"], "armed");
    assert_eq!(s["overlay"]["escapes"]["human"], 0);

    // Killing the overlay fails closed.
    let pid = status(&server).await["overlay"]["pid"]
        .as_u64()
        .expect("the overlay's pid");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let killed_at = Instant::now();
    wait_for(Duration::from_secs(5), "guard-exited", || async {
        (status(&server).await["kill_switch"]["reason"] == "guard-exited").then_some(())
    })
    .await;
    let r = server
        .call(
            "click",
            json!({ "x": x, "y": y, "coordinates": "physical" }),
        )
        .await;
    assert_eq!(error_code(&r), "STOPPED_BY_HUMAN", "{}", text(&r));
    assert!(text(&r).contains("guard-exited"), "{}", text(&r));
    assert!(painted.presses().is_empty(), "nothing was clicked");
    ok(&server.call("screenshot", json!({})).await);
    tokio::time::sleep(Duration::from_secs(6).saturating_sub(killed_at.elapsed())).await;
    ok(&server.call("resume", json!({})).await);
    let r = server
        .call(
            "click",
            json!({ "x": x, "y": y, "coordinates": "physical" }),
        )
        .await;
    ok(&r);
    let s = status(&server).await;
    assert_eq!(s["overlay"]["visible"], true, "the overlay came back: {s}");
    assert_ne!(s["overlay"]["pid"].as_u64(), Some(pid));
    server.finish().await;
}

/// A client whose human answers approval questions from a script.
pub(crate) struct Human {
    pub(crate) answers: Mutex<Vec<ElicitationAction>>,
    pub(crate) asked: Mutex<Vec<String>>,
}

impl ClientHandler for Human {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("deskpilot-e2e-human", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match request {
            ElicitRequestParams::FormElicitationParams { message, .. } => message,
            other => format!("{other:?}"),
        };
        self.asked.lock().unwrap().push(message);
        let action = self.answers.lock().unwrap().remove(0);
        Ok(ElicitResult::new(action))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_asks_the_human_and_only_accept_proceeds() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot approval target",
        400,
        300,
        300,
        200,
        (20, 20, 10),
    );
    painted.listen();
    let config = ConfigFile::new("approval", "requireApproval = \"mutating\"\n");
    let human = Human {
        answers: Mutex::new(vec![ElicitationAction::Decline, ElicitationAction::Accept]),
        asked: Mutex::new(Vec::new()),
    };
    let server = serve_with(Some(desktop), &["--config", config.arg()], &[], human).await;
    harness::listed(
        &server,
        "deskpilot approval target",
        "deskpilot approval target",
    )
    .await;
    painted.raise();
    let (ox, oy) = painted.client_origin();
    let click = json!({ "x": ox + 150, "y": oy + 100, "coordinates": "physical" });
    let r = server.call("click", click.clone()).await;
    assert_eq!(error_code(&r), "APPROVAL_DENIED", "{}", text(&r));
    assert_eq!(r.structured_content.as_ref().unwrap()["effect"], "refused");
    let r = server.call("click", click.clone()).await;
    ok(&r);
    let presses = wait_for(Duration::from_secs(5), "the approved click", || async {
        let p = painted.presses();
        (!p.is_empty()).then_some(p)
    })
    .await;
    assert_eq!(presses.iter().filter(|p| p.down).count(), 1, "{presses:?}");
    {
        let asked = server.client.service().asked.lock().unwrap().clone();
        assert_eq!(asked.len(), 2, "{asked:?}");
        assert!(
            asked[0].contains("click at (") && asked[0].contains("\"deskpilot approval target\""),
            "{asked:?}"
        );
    }
    assert_eq!(status(&server).await["require_approval"], true);
    server.finish().await;

    // A client that cannot ask anyone: fail closed.
    let server = serve(Some(desktop), &["--config", config.arg()], &[]).await;
    let r = server.call("click", click).await;
    assert_eq!(error_code(&r), "APPROVAL_UNAVAILABLE", "{}", text(&r));
    assert!(text(&r).contains("elicitation"), "{}", text(&r));
    assert!(painted.presses().is_empty());
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overlay_hides_when_idle_and_esc_counts_only_while_it_is_up() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let config = ConfigFile::new("idle", "idleDisarmMs = 1500\n");
    let server = serve(Some(desktop), &["--config", config.arg()], &[]).await;
    let r = server
        .call(
            "move_cursor",
            json!({ "x": 30, "y": 30, "coordinates": "physical" }),
        )
        .await;
    ok(&r);
    let shown = Instant::now();
    assert_eq!(status(&server).await["overlay"]["visible"], true);
    wait_for(Duration::from_secs(10), "the overlay to hide", || async {
        (status(&server).await["overlay"]["visible"] == false).then_some(())
    })
    .await;
    assert!(
        shown.elapsed() >= Duration::from_millis(1400),
        "hidden after idleDisarmMs, not before: {:?}",
        shown.elapsed()
    );
    assert_eq!(status(&server).await["kill_switch"]["state"], "idle");
    // Esc while the overlay is down is nobody's business. A second Esc once it is up again
    // trips the switch; by then the first has been delivered too, and only one was counted.
    xdotool_escape(desktop.display());
    assert_eq!(status(&server).await["kill_switch"]["state"], "idle");
    ok(&server
        .call(
            "move_cursor",
            json!({ "x": 40, "y": 40, "coordinates": "physical" }),
        )
        .await);
    assert_eq!(
        status(&server).await["overlay"]["visible"],
        true,
        "shown again"
    );
    xdotool_escape(desktop.display());
    wait_for(Duration::from_secs(5), "the second Esc to stop", || async {
        (status(&server).await["kill_switch"]["state"] == "tripped").then_some(())
    })
    .await;
    assert_eq!(
        status(&server).await["overlay"]["escapes"]["human"],
        1,
        "the Esc pressed while the overlay was down did not count"
    );
    server.finish().await;

    // overlay = "never": nothing shown, so no Esc either.
    let config = ConfigFile::new("never", "overlay = \"never\"\n");
    let server = serve(Some(desktop), &["--config", config.arg()], &[]).await;
    ok(&server
        .call(
            "move_cursor",
            json!({ "x": 50, "y": 50, "coordinates": "physical" }),
        )
        .await);
    let s = status(&server).await;
    assert_eq!(
        (s["overlay"]["visible"].clone(), s["overlay"]["pid"].clone()),
        (json!(false), Value::Null)
    );
    xdotool_escape(desktop.display());
    tokio::time::sleep(Duration::from_millis(500)).await;
    ok(&server
        .call(
            "move_cursor",
            json!({ "x": 60, "y": 60, "coordinates": "physical" }),
        )
        .await);
    server.finish().await;
}

/// The RGB pixel at (x, y) of a PNG region screenshot.
fn pixel(shot: &(u32, u32, Vec<u8>), x: u32, y: u32) -> [u8; 3] {
    let i = ((y * shot.0 + x) * 3) as usize;
    [shot.2[i], shot.2[i + 1], shot.2[i + 2]]
}

/// A region of 100×100 physical pixels around `(cx, cy)`, lossless.
async fn around<H: ClientHandler>(server: &Server<H>, cx: i64, cy: i64) -> (u32, u32, Vec<u8>) {
    let r = server
        .call(
            "screenshot",
            json!({ "region": { "x": cx - 50, "y": cy - 50, "width": 100, "height": 100 }, "format": "png" }),
        )
        .await;
    harness::image(&r)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pointer_mark_follows_the_pointer_takes_no_click_and_never_counts_as_a_change() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let painted = PaintedWindow::open(
        desktop.display(),
        "deskpilot pointer mark target",
        500,
        360,
        400,
        300,
        (390, 290, 4),
    );
    painted.listen();
    let server = serve(Some(desktop), &[], &[]).await;
    harness::listed(
        &server,
        "deskpilot pointer mark target",
        "deskpilot pointer mark target",
    )
    .await;
    painted.raise();
    let (ox, oy) = painted.client_origin();
    // The middle of the red quadrant.
    let (cx, cy) = (i64::from(ox) + 100, i64::from(oy) + 75);
    ok(&server
        .call(
            "move_cursor",
            json!({ "x": cx, "y": cy, "coordinates": "physical" }),
        )
        .await);
    // agent (the default): the ring at radius 19, the arrow below-right of the tip, the pixel
    // 10 px to the right untouched.
    let shot = wait_for(
        Duration::from_secs(5),
        "the ring around the pointer",
        || async {
            let s = around(&server, cx, cy).await;
            (pixel(&s, 50 + 19, 50) == FRAME).then_some(s)
        },
    )
    .await;
    assert_eq!(pixel(&shot, 50 - 19, 50), FRAME);
    assert_eq!(pixel(&shot, 50, 50 + 19), FRAME);
    assert_eq!(pixel(&shot, 52, 60), FRAME, "the arrow");
    assert_eq!(pixel(&shot, 50 + 10, 50 - 8), crate::paint::RED);
    // It follows the pointer.
    ok(&server
        .call(
            "move_cursor",
            json!({ "x": cx + 60, "y": cy, "coordinates": "physical" }),
        )
        .await);
    wait_for(Duration::from_secs(5), "the ring to follow", || async {
        let s = around(&server, cx + 60, cy).await;
        (pixel(&s, 50 + 19, 50) == FRAME).then_some(())
    })
    .await;
    // Moving over a still window is no change: the mark is left out of the comparison.
    ok(&server
        .call("screenshot", json!({ "window_id": painted.id }))
        .await);
    let r = server
        .call(
            "move_cursor",
            json!({ "x": cx - 40, "y": cy + 20, "coordinates": "physical", "verify": true }),
        )
        .await;
    assert_eq!(ok(&r)["verify"]["changed"], false, "{}", text(&r));
    // A click at the pointer goes through the mark to the window.
    let r = server
        .call(
            "click",
            json!({ "x": cx - 40, "y": cy + 20, "coordinates": "physical" }),
        )
        .await;
    ok(&r);
    let presses = wait_for(Duration::from_secs(5), "the click", || async {
        let p = painted.presses();
        (!p.is_empty()).then_some(p)
    })
    .await;
    assert_eq!(presses.iter().filter(|p| p.down).count(), 1, "{presses:?}");
    server.finish().await;

    // cursor = off: no mark.
    let config = ConfigFile::new("cursor-off", "cursor = \"off\"\n");
    let server = serve(Some(desktop), &["--config", config.arg()], &[]).await;
    ok(&server
        .call(
            "move_cursor",
            json!({ "x": cx, "y": cy, "coordinates": "physical" }),
        )
        .await);
    wait_for(Duration::from_secs(5), "the overlay", || async {
        (status(&server).await["overlay"]["visible"] == true).then_some(())
    })
    .await;
    let s = around(&server, cx, cy).await;
    assert_ne!(pixel(&s, 50 + 19, 50), FRAME);
    server.finish().await;
}
