//! Memory and perception through the MCP client: recall after a killed server, minimized and
//! closed windows named as such, a reopened app recognised, the state file whole after
//! `kill -9` at any moment, privacy rules kept on disk, and `perceive`'s verdicts against real
//! windows (minimized, off-screen, 1×1, covered, blank, normal).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{
    self, App, error_code, fresh_memory_dir, launch, ok, serve, text, wait_for, window_of,
};
use crate::paint::{GREEN, MAGENTA, PaintedWindow, RED};

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("deskpilot-e2e-memory-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, "remember me\n").unwrap();
    path
}

fn mousepad(desktop: &deskpilot_x11::VirtualDisplay, file: &Path) -> App {
    launch(
        desktop,
        "mousepad",
        &["--disable-server", file.to_str().unwrap()],
    )
}

/// The state file, parsed, when it exists.
fn state(dir: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(dir.join("memory.json")).ok()?;
    Some(
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("memory.json is not whole JSON ({e}): {text:?}")),
    )
}

/// Ids in the state file's focus history, oldest first.
fn focus_ids(state: &Value) -> Vec<u64> {
    state["focus"]["entries"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["window"].as_u64()).collect())
        .unwrap_or_default()
}

fn kill9(pid: u32) {
    // SAFETY: plain signal delivery to our own child's pid.
    unsafe {
        libc::kill(pid as i32, libc::SIGKILL);
    }
}

async fn recall<H: rmcp::ClientHandler>(
    server: &harness::Server<H>,
    query: &str,
) -> (Value, String) {
    let r = server
        .call("memory_recall", json!({ "query": query }))
        .await;
    (ok(&r).clone(), text(&r))
}

fn first(recalled: &Value) -> &Value {
    &recalled["candidates"][0]
}

async fn focus<H: rmcp::ClientHandler>(server: &harness::Server<H>, id: &Value) {
    ok(&server
        .call("window", json!({ "action": "focus", "window_id": id }))
        .await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::print_stderr)]
async fn memory_outlives_a_killed_server_and_says_minimized_gone_and_reopened() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let dir = fresh_memory_dir();
    let dir_s = dir.to_str().unwrap().to_string();
    let env = [("DESKPILOT_MEMORY_DIR", dir_s.as_str())];
    let file = scratch("recall.txt");

    let server = serve(Some(desktop), &[], &env).await;
    let pad = mousepad(desktop, &file);
    let term = launch(
        desktop,
        "xterm",
        &[
            "-title",
            "deskpilot memory xterm",
            "-geometry",
            "50x10+900+80",
        ],
    );
    let pw = window_of(&server, pad.0.id()).await;
    let tw = window_of(&server, term.0.id()).await;
    // xterm first (clicked and typed into), then mousepad: mousepad is "that window", xterm
    // "the previous window".
    focus(&server, &tw["id"]).await;
    ok(&server
        .call("screenshot", json!({ "window_id": tw["id"] }))
        .await);
    let c = tw["client"].clone();
    let (cx, cy) = (
        c["x"].as_i64().unwrap() + c["width"].as_i64().unwrap() / 2,
        c["y"].as_i64().unwrap() + c["height"].as_i64().unwrap() / 2,
    );
    ok(&server
        .call(
            "click",
            json!({ "x": cx, "y": cy, "coordinates": "physical" }),
        )
        .await);
    ok(&server.call("type_text", json!({ "text": "x" })).await);
    focus(&server, &pw["id"]).await;
    ok(&server
        .call("screenshot", json!({ "window_id": pw["id"] }))
        .await);
    // Actions enter the timeline with their window and target.
    let r = server.call("memory_timeline", json!({ "limit": 50 })).await;
    let entries = ok(&r)["entries"].as_array().unwrap().clone();
    let click = entries
        .iter()
        .rev()
        .find(|e| e["tool"] == "click")
        .unwrap_or_else(|| panic!("no click in {}", text(&r)));
    assert_eq!(click["window"]["id"], tw["id"], "{click}");
    assert!(
        click["target"].is_object(),
        "the point is recorded: {click}"
    );
    let typed = entries.iter().rev().find(|e| e["tool"] == "type_text");
    assert_eq!(
        typed.map(|e| e["window"]["id"].clone()),
        Some(tw["id"].clone()),
        "{}",
        text(&r)
    );

    // The saver writes within a second of a change: wait for the focus history on disk,
    // then kill the server without a chance to save.
    wait_for(
        Duration::from_secs(10),
        "the focus history on disk",
        || async {
            let ids = state(&dir).map(|s| focus_ids(&s)).unwrap_or_default();
            let (t, p) = (tw["id"].as_u64()?, pw["id"].as_u64()?);
            let at = |id| ids.iter().rposition(|x| *x == id);
            (at(t).is_some() && at(p) > at(t) && ids.last() == Some(&p)).then_some(())
        },
    )
    .await;
    kill9(server.pid());
    drop(server);

    let server = serve(Some(desktop), &[], &env).await;
    let (r, said) = recall(&server, "上一个窗口").await;
    assert_eq!(
        first(&r)["window_id"],
        tw["id"],
        "the previous window: {said}"
    );
    let (r, said) = recall(&server, "刚才那个窗口").await;
    assert_eq!(first(&r)["window_id"], pw["id"], "that window: {said}");
    let (r, said) = recall(&server, "mousepad").await;
    let m = first(&r);
    assert_eq!(m["window_id"], pw["id"], "{said}");
    assert_eq!(m["state"], "present", "{said}");
    let f = &pw["frame"];
    assert_eq!(
        m["center"]["x"].as_i64().unwrap(),
        f["x"].as_i64().unwrap() + f["width"].as_i64().unwrap() / 2,
        "{said}"
    );
    let stats = server.call("memory_stats", json!({})).await;
    assert!(
        ok(&stats)["focus_entries"].as_u64().unwrap() >= 2,
        "{}",
        text(&stats)
    );
    let r = server
        .call("memory_timeline", json!({ "limit": 500 }))
        .await;
    assert!(
        ok(&r)["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["tool"] == "click"),
        "the timeline outlived the kill: {}",
        text(&r)
    );

    // Minimized is not absent.
    ok(&server
        .call(
            "window",
            // The id as the texts print it (0x…) is taken too.
            json!({ "action": "minimize", "window_id": format!("{:#x}", pw["id"].as_u64().unwrap()) }),
        )
        .await);
    let (r, said) = recall(&server, "记事本").await;
    assert_eq!(first(&r)["window_id"], pw["id"], "{said}");
    assert_eq!(first(&r)["state"], "minimized", "{said}");
    let hex = format!("{:#x}", pw["id"].as_u64().unwrap());
    assert!(
        said.contains("exists but minimized") && said.contains(&hex),
        "{said}"
    );

    // Closed is gone, with when it was seen.
    drop(term);
    wait_for(Duration::from_secs(10), "the xterm to close", || async {
        let r = server.call("list_windows", json!({})).await;
        let listed = ok(&r)["windows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["id"] == tw["id"]);
        (!listed).then_some(())
    })
    .await;
    let (r, said) = recall(&server, "终端").await;
    let x = first(&r);
    assert_eq!(x["window_id"], tw["id"], "{said}");
    assert_eq!(x["state"], "gone", "{said}");
    assert!(
        x["gone_at"].is_u64() && said.contains("last seen"),
        "{said}"
    );

    // Reopened: a new window of the same app on the same file is recognised.
    // Focus brings it back from minimized and returns once it is drawn again (a window
    // remapped is black until its app repaints).
    focus(&server, &pw["id"]).await;
    let shot = server
        .call(
            "screenshot",
            json!({ "window_id": pw["id"], "format": "png" }),
        )
        .await;
    ok(&shot);
    let (_, _, px) = harness::image(&shot);
    let white = px
        .chunks_exact(3)
        .filter(|p| p.iter().all(|c| *c > 240))
        .count();
    assert!(
        white > px.len() / 3 / 4,
        "mousepad's white page shows right after focus: {white} white pixels; {}",
        text(&shot)
    );
    drop(pad);
    wait_for(Duration::from_secs(10), "mousepad to close", || async {
        let r = server.call("list_windows", json!({})).await;
        let listed = ok(&r)["windows"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["id"] == pw["id"]);
        (!listed).then_some(())
    })
    .await;
    let pad = mousepad(desktop, &file);
    // A new window; X11 may give it the closed one's id again (ids are recycled).
    let again = window_of(&server, pad.0.id()).await;
    // Its pixels are hashed by every screenshot; it is drawn some time after it is listed.
    let (r, said) = wait_for(
        Duration::from_secs(15),
        "the reopened mousepad recognised by its pixels",
        || async {
            focus(&server, &again["id"]).await;
            ok(&server
                .call("screenshot", json!({ "window_id": again["id"] }))
                .await);
            let (r, said) = recall(&server, "mousepad").await;
            let d = first(&r)["recognized_as"]["hash_distance"].as_u64()?;
            (d <= 6).then_some((r, said))
        },
    )
    .await;
    let m = first(&r);
    assert_eq!(m["window_id"], again["id"], "{said}");
    let seen = &m["recognized_as"];
    assert_eq!(seen["previous"], pw["id"], "{said}");
    assert_eq!(seen["process_agrees"], true, "{said}");
    assert_eq!(seen["confidence"], "high", "{said}");
    assert!(
        said.contains("Reopened") && said.contains("confidence high"),
        "{said}"
    );
    eprintln!("reopened mousepad recognised: {seen}");

    // memory_clear empties it (a gated mutation like any other).
    let r = server.call("memory_clear", json!({})).await;
    assert!(text(&r).contains("Memory cleared"), "{}", text(&r));
    let r = server
        .call("memory_timeline", json!({ "limit": 500 }))
        .await;
    assert!(
        !ok(&r)["entries"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["tool"] == "click" || e["tool"] == "type_text"),
        "{}",
        text(&r)
    );
    drop(pad);
    server.finish().await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_at_any_moment_leaves_a_whole_state_file_and_a_corrupt_one_is_moved_aside() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let dir = fresh_memory_dir();
    let dir_s = dir.to_str().unwrap().to_string();
    let env = [("DESKPILOT_MEMORY_DIR", dir_s.as_str())];
    let moving = PaintedWindow::open(
        desktop.display(),
        "deskpilot memory churn",
        200,
        200,
        300,
        200,
        (10, 10, 20),
    );
    let mut saves = 0;
    // Kill moments spread over the saver's one-second period.
    for (round, ms) in [130u64, 470, 810, 1150, 1390, 1730, 2090, 650]
        .iter()
        .enumerate()
    {
        let server = serve(Some(desktop), &[], &env).await;
        let deadline = Instant::now() + Duration::from_millis(*ms);
        let mut step = 0;
        while Instant::now() < deadline {
            // Every call changes what memory holds: windows move, screenshots hash them.
            moving.move_to(200 + (round as i32 * 37 + step * 11) % 400, 200);
            step += 1;
            let _ = server
                .client
                .call_tool(
                    rmcp::model::CallToolRequestParams::new("perceive")
                        .with_arguments(serde_json::Map::new()),
                )
                .await;
        }
        kill9(server.pid());
        drop(server);
        if let Some(s) = state(&dir) {
            assert!(s.is_object(), "round {round}: {s}");
            saves += 1;
        }
    }
    assert!(saves > 0, "no round ever saved: the test proved nothing");
    // The timeline tolerates a torn last line; the server starts and reads it.
    let server = serve(Some(desktop), &[], &env).await;
    let r = server.call("memory_stats", json!({})).await;
    assert!(ok(&r)["load_warning"].is_null(), "{}", text(&r));
    let r = server
        .call("memory_timeline", json!({ "limit": 500 }))
        .await;
    assert!(
        !ok(&r)["entries"].as_array().unwrap().is_empty(),
        "{}",
        text(&r)
    );
    server.finish().await;

    // A corrupt file is moved aside and reported, never silently emptied.
    std::fs::write(dir.join("memory.json"), "{\"schema\": 1, \"windows\": [tr").unwrap();
    let server = serve(Some(desktop), &[], &env).await;
    let r = server.call("memory_stats", json!({})).await;
    let warning = ok(&r)["load_warning"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(warning.contains("corrupt"), "{}", text(&r));
    assert!(text(&r).contains("At start:"), "{}", text(&r));
    let aside: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("memory.json.corrupt-"))
        .collect();
    assert_eq!(aside.len(), 1, "{aside:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join(&aside[0])).unwrap(),
        "{\"schema\": 1, \"windows\": [tr",
        "moved, not rewritten"
    );
    assert!(
        server.stderr().iter().any(|l| l.contains("corrupt")),
        "the operator is told too"
    );
    server.finish().await;
    drop(moving);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocklisted_never_remembered_and_masked_windows_never_reach_the_files() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let dir = fresh_memory_dir();
    let config = dir.with_extension("toml");
    std::fs::write(
        &config,
        format!(
            "blocklist = [\"deskpilot vault\"]\nmemoryNeverRemember = [\"xterm\"]\nmemoryDir = \"{}\"\n",
            dir.display()
        ),
    )
    .unwrap();
    let config_s = config.to_str().unwrap().to_string();
    // Without DESKPILOT_MEMORY_DIR the harness would choose a directory; the file names one.
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_deskpilot"));
    cmd.arg("serve")
        .env_remove("DISPLAY")
        .env_remove("DESKPILOT_MEMORY")
        .env("XDG_CONFIG_HOME", "/nonexistent/deskpilot-tests")
        .env("DESKPILOT_CONFIG", &config_s)
        .env("DESKPILOT_MEMORY_DIR", &dir);
    for (k, v) in desktop.env() {
        cmd.env(k, v);
    }
    let server = harness::connect(cmd, ()).await;
    let vault = PaintedWindow::open(
        desktop.display(),
        "deskpilot vault 4711",
        100,
        100,
        300,
        200,
        (10, 10, 20),
    );
    // memoryNeverRemember names apps (process or class): an xterm.
    let diary = launch(
        desktop,
        "xterm",
        &[
            "-title",
            "deskpilot diary entry",
            "-geometry",
            "40x8+500+100",
        ],
    );
    let plain = PaintedWindow::open(
        desktop.display(),
        "deskpilot plain page",
        900,
        100,
        300,
        200,
        (10, 10, 20),
    );
    harness::listed(&server, "deskpilot", "deskpilot vault 4711").await;
    harness::listed(&server, "deskpilot", "deskpilot diary entry").await;
    let p = harness::listed(&server, "deskpilot", "deskpilot plain page").await;
    ok(&server.call("perceive", json!({})).await);
    ok(&server
        .call("screenshot", json!({ "window_id": p["id"] }))
        .await);
    let r = server
        .call("memory_recall", json!({ "query": "vault" }))
        .await;
    assert!(!text(&r).contains("4711"), "{}", text(&r));
    ok(&server.call("memory_stats", json!({})).await);
    let mut all = String::new();
    for f in std::fs::read_dir(&dir).unwrap() {
        all.push_str(&std::fs::read_to_string(f.unwrap().path()).unwrap_or_default());
    }
    assert!(
        all.contains("deskpilot plain page"),
        "memory works at all: {all}"
    );
    assert!(!all.contains("vault"), "blocklisted: {all}");
    assert!(!all.contains("diary"), "never remembered: {all}");
    server.finish().await;
    drop((vault, diary, plain));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&config);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_switched_off_says_so() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[("DESKPILOT_MEMORY", "false")]).await;
    for (tool, args) in [
        ("memory_recall", json!({ "query": "that window" })),
        ("memory_timeline", json!({})),
        ("memory_stats", json!({})),
    ] {
        let r = server.call(tool, args).await;
        assert_eq!(error_code(&r), "MEMORY_UNAVAILABLE", "{tool}: {}", text(&r));
        assert!(text(&r).contains("switched off"), "{}", text(&r));
    }
    // Perception works without memory.
    ok(&server.call("perceive", json!({})).await);
    server.finish().await;
}

fn perceived<'a>(p: &'a Value, id: &Value) -> &'a Value {
    p["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == *id)
        .unwrap_or_else(|| panic!("{id} not perceived: {p:#}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::print_stderr)]
async fn perceive_tells_minimized_offscreen_tiny_covered_blank_and_normal_windows_apart() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let d = desktop.display();
    let normal = PaintedWindow::open(
        d,
        "deskpilot perceive normal",
        60,
        60,
        300,
        200,
        (20, 20, 30),
    );
    let blank = PaintedWindow::solid(d, "deskpilot perceive blank", (420, 60, 240, 160), GREEN);
    let tiny = PaintedWindow::solid(d, "deskpilot perceive tiny", (720, 60, 1, 1), RED);
    let parked = PaintedWindow::open(
        d,
        "deskpilot perceive parked",
        800,
        400,
        400,
        300,
        (20, 20, 30),
    );
    let minimized = PaintedWindow::open(
        d,
        "deskpilot perceive minimized",
        60,
        700,
        300,
        200,
        (20, 20, 30),
    );
    let under = PaintedWindow::open(
        d,
        "deskpilot perceive under",
        1200,
        60,
        300,
        200,
        (200, 120, 40),
    );
    let over = PaintedWindow::open(
        d,
        "deskpilot perceive over",
        1150,
        20,
        420,
        300,
        (300, 20, 40),
    );
    let id = |title: &'static str| {
        let server = &server;
        async move { harness::listed(server, "deskpilot perceive", title).await["id"].clone() }
    };
    let (n, b, t, p, m, u, o) = (
        id("deskpilot perceive normal").await,
        id("deskpilot perceive blank").await,
        id("deskpilot perceive tiny").await,
        id("deskpilot perceive parked").await,
        id("deskpilot perceive minimized").await,
        id("deskpilot perceive under").await,
        id("deskpilot perceive over").await,
    );
    parked.move_to(1920 - 80, 700);
    over.raise();
    ok(&server
        .call("window", json!({ "action": "minimize", "window_id": m }))
        .await);
    // Wait for the window manager to carry out the move, the raise and the minimize.
    let result = wait_for(Duration::from_secs(10), "the desktop to settle", || async {
        let r = server.call("perceive", json!({ "own_pixels": true })).await;
        let v = ok(&r).clone();
        let verdict = |id: &Value| {
            perceived(&v, id)["verdict"]
                .as_str()
                .unwrap_or("")
                .to_string()
        };
        (verdict(&p) == "offscreen" && verdict(&u) == "covered" && verdict(&m) == "minimized")
            .then_some(r)
    })
    .await;
    let v = ok(&result).clone();
    let said = text(&result);
    eprintln!("{said}");
    let verdict = |id: &Value| perceived(&v, id)["verdict"].clone();
    assert_eq!(verdict(&n), "consistent", "{said}");
    assert_eq!(verdict(&b), "blank", "{said}");
    assert_eq!(verdict(&t), "hidden", "{said}");
    assert_eq!(verdict(&p), "offscreen", "{said}");
    assert_eq!(verdict(&m), "minimized", "{said}");
    assert_eq!(verdict(&u), "covered", "{said}");
    assert_eq!(verdict(&o), "consistent", "{said}");
    let parked_off = perceived(&v, &p)["offscreen"].as_f64().unwrap();
    assert!(parked_off > 0.7, "{parked_off}: {said}");
    let covered = perceived(&v, &u);
    assert_eq!(covered["covered"], 1.0, "{said}");
    assert_eq!(covered["covered_by"][0]["id"], o, "{said}");
    assert_eq!(covered["own_pixels"]["result"], "read", "{said}");
    assert_eq!(covered["own_pixels"]["method"], "composite", "{said}");
    assert!(
        covered["own_pixels"]["stddev"].as_f64().unwrap() > 3.0,
        "{said}"
    );
    // Totals add up.
    let total = v["total"].as_u64().unwrap();
    assert_eq!(
        v["consistent"].as_u64().unwrap() + v["inconsistent"].as_u64().unwrap(),
        total
    );
    let counted: u64 = v["counts"]
        .as_object()
        .unwrap()
        .values()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(counted, total);
    assert!(said.contains("minimized — restore it with"), "{said}");

    // The covered window's screenshot is its own drawing: its magenta marker, not the cover.
    let shot = server
        .call("screenshot", json!({ "window_id": u, "format": "png" }))
        .await;
    ok(&shot);
    let img = harness::image(&shot);
    let magenta = img
        .2
        .chunks_exact(3)
        .filter(|px| px[0] > 200 && px[1] < 60 && px[2] > 200)
        .count();
    assert!(
        magenta >= 30 * 30,
        "{magenta} magenta pixels; {}",
        text(&shot)
    );
    // With the screenshot the verdicts were read from.
    let r = server
        .call(
            "perceive",
            json!({ "include_screenshot": true, "max_width": 640 }),
        )
        .await;
    let (w, _, _) = harness::image(&r);
    assert_eq!(w, 640);
    assert!(ok(&r)["screenshot_id"].is_string() || ok(&r)["screenshot_id"].is_u64());
    drop((normal, blank, tiny, parked, minimized, under, over));
    let _ = MAGENTA;
    server.finish().await;
}
