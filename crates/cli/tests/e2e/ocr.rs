//! OCR through MCP against real pixels: our canvas fixture (English and Chinese strings at
//! known places, dark on light and light on dark, no accessible text at all) and an xterm.
//! The fixture reports its layout and every click, so the tests check where the boxes are
//! and what a click at a returned centre really hit.

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{self, error_code, ok, serve, text, wait_for, window_of};
use crate::safety::ConfigFile;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/ocr_fixture.py");
const TITLE: &str = "deskpilot ocr fixture";

/// The OCR fixture and what it printed.
struct OcrFixture {
    child: std::process::Child,
    lines: Arc<Mutex<Vec<String>>>,
}

/// One string the fixture drew: its text and its box in physical pixels.
#[derive(Debug, Clone)]
struct Drawn {
    text: String,
    rect: (i64, i64, i64, i64),
}

impl OcrFixture {
    fn start(desktop: &deskpilot_x11::VirtualDisplay) -> OcrFixture {
        let mut cmd = std::process::Command::new("/usr/bin/python3");
        cmd.arg(FIXTURE)
            .arg(TITLE)
            .stdin(Stdio::null())
            .stderr(Stdio::null());
        desktop.configure(&mut cmd);
        let (child, lines) = harness::spawn_reporting(cmd);
        OcrFixture { child, lines }
    }

    /// The strings and their physical boxes, once the fixture has drawn and placed itself.
    async fn layout(&self) -> Vec<Drawn> {
        wait_for(Duration::from_secs(20), "the fixture's layout", || async {
            let lines = self.lines.lock().unwrap().clone();
            let (ox, oy) = lines.iter().rev().find_map(|l| {
                let mut p = l.strip_prefix("origin ")?.split(' ');
                Some((
                    p.next()?.parse::<i64>().ok()?,
                    p.next()?.parse::<i64>().ok()?,
                ))
            })?;
            let drawn: Vec<Drawn> = lines
                .iter()
                .filter_map(|l| {
                    let mut p = l.strip_prefix("box ")?.splitn(5, ' ');
                    let n: Vec<i64> = (0..4)
                        .map(|_| p.next()?.parse().ok())
                        .collect::<Option<_>>()?;
                    Some(Drawn {
                        text: p.next()?.to_string(),
                        rect: (ox + n[0], oy + n[1], n[2], n[3]),
                    })
                })
                .collect();
            (drawn.len() == 11).then_some(drawn)
        })
        .await
    }

    async fn saw(&self, line: &str) {
        wait_for(
            Duration::from_secs(5),
            &format!("fixture line {line:?}"),
            || async {
                self.lines
                    .lock()
                    .unwrap()
                    .iter()
                    .any(|l| l == line)
                    .then_some(())
            },
        )
        .await
    }
}

impl Drop for OcrFixture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn squeeze(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase()
}

/// The OCR line holding `text`, from an `ocr` result's structuredContent.
fn line_with<'a>(read: &'a Value, text: &str) -> Option<&'a Value> {
    read["lines"]
        .as_array()?
        .iter()
        .find(|l| squeeze(l["text"].as_str().unwrap_or("")).contains(&squeeze(text)))
}

fn inside(p: &Value, rect: (i64, i64, i64, i64)) -> bool {
    let (x, y) = (p["x"].as_i64().unwrap(), p["y"].as_i64().unwrap());
    let (rx, ry, rw, rh) = rect;
    (rx..rx + rw).contains(&x) && (ry..ry + rh).contains(&y)
}

#[tokio::test(flavor = "multi_thread")]
async fn ocr_reads_every_fixture_string_inside_its_box_and_a_click_at_its_centre_hits_it() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let fixture = OcrFixture::start(desktop);
    window_of(&server, fixture.child.id()).await;
    let drawn = fixture.layout().await;
    // The window may still be settling; poll until every string is read.
    let read = wait_for(
        Duration::from_secs(60),
        "OCR to read every fixture string",
        || async {
            let layout = fixture.layout().await;
            let r = server.call("ocr", json!({ "title_match": TITLE })).await;
            let read = ok(&r).clone();
            assert!(text(&r).contains("source: ocr"), "{}", text(&r));
            layout
                .iter()
                .all(|d| {
                    line_with(&read, &d.text).is_some_and(|l| inside(&l["physical_center"], d.rect))
                })
                .then_some(read)
        },
    )
    .await;
    assert_eq!(read["source"], "ocr");
    for d in &drawn {
        let line = line_with(&read, &d.text).unwrap();
        assert!(line["confidence"].as_f64().unwrap() >= 50.0, "{line}");
        assert_eq!(line["source"], "ocr");
    }
    let id = read["screenshot_id"].as_u64().unwrap();
    // Dark on light, light on dark, Chinese, small: each click lands on its own string.
    for d in &drawn {
        let target = d.text.as_str();
        let line = line_with(&read, target).unwrap();
        let r = server
            .call(
                "click",
                json!({ "x": line["center"]["x"], "y": line["center"]["y"], "screenshot_id": id }),
            )
            .await;
        ok(&r);
        fixture.saw(&format!("clicked {target}")).await;
    }
    // An annotated read returns the image too.
    let r = server
        .call(
            "ocr",
            json!({ "title_match": TITLE, "annotate": true, "lang": "eng" }),
        )
        .await;
    assert!(r.content.iter().any(|c| c.as_image().is_some()), "no image");
    assert_eq!(ok(&r)["languages"], json!(["eng"]));
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_masked_string_is_never_read_and_bad_requests_get_clear_errors() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let fixture = OcrFixture::start(desktop);
    let probe = serve(Some(desktop), &[], &[]).await;
    window_of(&probe, fixture.child.id()).await;
    // Let the window manager place it, then read where the secret is.
    wait_for(
        Duration::from_secs(30),
        "the fixture to be readable",
        || async {
            let r = probe
                .call("ocr", json!({ "title_match": TITLE, "lang": "eng" }))
                .await;
            line_with(ok(&r), "Privacy Secret").map(|_| ())
        },
    )
    .await;
    probe.finish().await;
    let drawn = fixture.layout().await;
    let secret = drawn
        .iter()
        .find(|d| d.text.starts_with("Privacy"))
        .unwrap()
        .rect;
    let config = ConfigFile::new(
        "ocr-mask",
        &format!(
            "maskRegions = [{{ x = {}, y = {}, width = {}, height = {} }}]\n",
            secret.0, secret.1, secret.2, secret.3
        ),
    );
    let server = serve(Some(desktop), &["--config", config.arg()], &[]).await;
    let r = server
        .call("ocr", json!({ "title_match": TITLE, "min_confidence": 0 }))
        .await;
    let read = ok(&r);
    assert!(line_with(read, "Status: Ready").is_some(), "{}", text(&r));
    let all: String = read["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["text"].as_str().unwrap())
        .collect();
    assert!(
        !all.contains("Secret") && !all.contains("7731"),
        "masked text was read: {all}"
    );
    assert!(text(&r).contains("privacy-masked"), "{}", text(&r));

    let missing = server.call("ocr", json!({ "lang": "klingon" })).await;
    assert_eq!(error_code(&missing), "OCR_LANGUAGE_MISSING");
    assert!(
        text(&missing).contains("installed: ") && text(&missing).contains("eng"),
        "{}",
        text(&missing)
    );
    let empty = server
        .call(
            "ocr",
            json!({ "region": { "x": 10, "y": 10, "width": 0, "height": 50 } }),
        )
        .await;
    assert_eq!(error_code(&empty), "INVALID_ARGUMENT");
    let off = server
        .call(
            "ocr",
            json!({ "region": { "x": 50000, "y": 10, "width": 100, "height": 50 } }),
        )
        .await;
    assert_eq!(error_code(&off), "REGION_OUTSIDE_SCREEN");
    assert!(text(&off).contains("Hint:"), "{}", text(&off));
    // The server is unharmed: a good read still works.
    let again = server.call("ocr", json!({ "title_match": TITLE })).await;
    assert!(line_with(ok(&again), "Status: Ready").is_some());
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn text_in_an_xterm_is_found_and_waited_for_through_ocr() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let go = std::env::temp_dir().join(format!("deskpilot-ocr-go-{}", std::process::id()));
    let _ = std::fs::remove_file(&go);
    let script = format!(
        "printf 'deskpilot build 4711 finished\\n'; while [ ! -e '{go}' ]; do sleep 0.1; done; \
         sleep 1; printf 'late line ready 9931\\n'; sleep 600",
        go = go.display()
    );
    let term = xterm(desktop, "deskpilot ocr term", &script);
    window_of(&server, term.0.id()).await;
    let found = wait_for(Duration::from_secs(30), "find_elements to read the xterm", || async {
        let r = server
            .call(
                "find_elements",
                json!({ "title_match": "deskpilot ocr term", "description": "build 4711 finished", "include_screenshot": false }),
            )
            .await;
        let v = ok(&r).clone();
        v["candidates"]
            .as_array()?
            .iter()
            .find(|c| c["source"] == "ocr" && c["name"].as_str().unwrap_or("").contains("4711"))
            .cloned()
    })
    .await;
    assert!(
        found["screenshot_id"].as_u64().is_some() && found["image"].is_array(),
        "{found}"
    );
    assert!(found.get("token").is_none_or(|t| t == ""), "{found}");

    std::fs::write(&go, b"go").unwrap();
    let r = server
        .call(
            "wait_for",
            json!({ "wait_kind": "text", "text": "9931", "title_match": "deskpilot ocr term", "timeout_ms": 15000 }),
        )
        .await;
    let v = ok(&r);
    assert_eq!(v["source"], "ocr", "{}", text(&r));
    assert!(
        v["waited_ms"].as_u64().unwrap() >= 500,
        "the line was printed 1 s later: {v}"
    );
    assert!(text(&r).contains("Found by: ocr"), "{}", text(&r));
    let _ = std::fs::remove_file(&go);
    server.finish().await;
}

/// The lines of an `ocr` result as text and box, for comparing two reads.
fn read_lines(read: &Value) -> Vec<String> {
    read["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| format!("{} {}", l["text"], l["bounds"]))
        .collect()
}

/// Regression (issue 22, OCR after the screen changed): an xterm showed `Invoice 4711 TOTAL
/// 98.50`; after an `ocr` and a `find_elements` of it, it printed `LATER 9271 READY`, and
/// `wait_for` text "LATER 9271" timed out after 15 s while `ocr` read "LATER 927 1 READY".
/// The OCR worker answered bands from memory that had been read beside rows changed since,
/// and the match took OCR's spacing literally. The same sequence on a real xterm; then a
/// fresh server (a cold OCR worker) reads the window, and the warm one must read the same.
#[tokio::test(flavor = "multi_thread")]
async fn after_the_screen_changed_wait_for_finds_the_new_line_and_ocr_reads_it_as_cold() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let go = std::env::temp_dir().join(format!("deskpilot-ocr-later-{}", std::process::id()));
    let _ = std::fs::remove_file(&go);
    let script = format!(
        "printf 'Invoice 4711 TOTAL 98.50\\n'; while [ ! -e '{go}' ]; do sleep 0.1; done; \
         printf 'LATER 9271 READY\\n'; sleep 600",
        go = go.display()
    );
    const TERM: &str = "deskpilot ocr later";
    let term = xterm(desktop, TERM, &script);
    window_of(&server, term.0.id()).await;
    wait_for(
        Duration::from_secs(30),
        "ocr to read the invoice",
        || async {
            let r = server.call("ocr", json!({ "title_match": TERM })).await;
            line_with(ok(&r), "4711 TOTAL").map(|_| ())
        },
    )
    .await;
    let r = server
        .call(
            "find_elements",
            json!({ "title_match": TERM, "description": "Invoice 4711", "include_screenshot": false }),
        )
        .await;
    let found = ok(&r)["candidates"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["source"] == "ocr" && c["name"].as_str().unwrap_or("").contains("4711"));
    assert!(found, "{}", text(&r));

    std::fs::write(&go, b"go").unwrap();
    let r = server
        .call(
            "wait_for",
            json!({ "wait_kind": "text", "text": "LATER 9271", "title_match": TERM, "timeout_ms": 15000 }),
        )
        .await;
    let v = ok(&r);
    assert_eq!(v["source"], "ocr", "{}", text(&r));
    let r = server.call("ocr", json!({ "title_match": TERM })).await;
    let warm = ok(&r).clone();
    assert!(
        line_with(&warm, "LATER 9271 READY").is_some(),
        "{}",
        text(&r)
    );
    // A cold worker reads the same pixels the same.
    reads_as_cold(desktop, TERM, &warm).await;
    let _ = std::fs::remove_file(&go);
    server.finish().await;
}

/// An xterm titled `title` running `script` in `sh` (DejaVu Sans Mono 12, 70x12).
fn xterm(desktop: &deskpilot_x11::VirtualDisplay, title: &str, script: &str) -> harness::App {
    let mut cmd = std::process::Command::new("xterm");
    cmd.args([
        "-T",
        title,
        "-fa",
        "DejaVu Sans Mono",
        "-fs",
        "12",
        "-geometry",
        "70x12",
        "-e",
        "sh",
        "-c",
        script,
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    desktop.configure(&mut cmd);
    harness::App(cmd.spawn().expect("xterm"))
}

/// Asserts that a fresh server (a cold OCR worker) reads `title`'s window as `warm` says.
async fn reads_as_cold(desktop: &deskpilot_x11::VirtualDisplay, title: &str, warm: &Value) {
    let fresh = serve(Some(desktop), &[], &[]).await;
    let r = fresh.call("ocr", json!({ "title_match": title })).await;
    let cold = ok(&r).clone();
    assert_eq!(
        read_lines(warm),
        read_lines(&cold),
        "warm and cold reads differ"
    );
    fresh.finish().await;
}

/// The band memory across a line rewritten in place (a progress line, a status): the line
/// above it keeps its pixels while the rows read around it change, and must be read again.
/// Before the fix, the warm server kept the invoice line as read beside the cursor.
#[tokio::test(flavor = "multi_thread")]
async fn a_line_rewritten_in_place_reads_through_the_band_memory_as_cold() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let go =
        |n: u32| std::env::temp_dir().join(format!("deskpilot-ocr-step{n}-{}", std::process::id()));
    let _ = std::fs::remove_file(go(1));
    let _ = std::fs::remove_file(go(2));
    let script = format!(
        "printf 'Invoice 4711 TOTAL 98.50\\n'; while [ ! -e '{one}' ]; do sleep 0.1; done; \
         printf 'WAITING FOR 0000 NOW'; while [ ! -e '{two}' ]; do sleep 0.1; done; \
         printf '\\r\\033[KLATER 9271 READY\\n'; sleep 600",
        one = go(1).display(),
        two = go(2).display()
    );
    const TERM: &str = "deskpilot ocr rewrite";
    let term = xterm(desktop, TERM, &script);
    window_of(&server, term.0.id()).await;
    wait_for(
        Duration::from_secs(30),
        "ocr to read the invoice",
        || async {
            let r = server.call("ocr", json!({ "title_match": TERM })).await;
            line_with(ok(&r), "4711 TOTAL").map(|_| ())
        },
    )
    .await;
    for (step, shows) in [(1, "WAITING FOR"), (2, "LATER 9271")] {
        std::fs::write(go(step), b"go").unwrap();
        let r = server
            .call(
                "wait_for",
                json!({ "wait_kind": "text", "text": shows, "title_match": TERM, "timeout_ms": 15000 }),
            )
            .await;
        assert_eq!(ok(&r)["source"], "ocr", "{}", text(&r));
        let r = server.call("ocr", json!({ "title_match": TERM })).await;
        reads_as_cold(desktop, TERM, ok(&r)).await;
    }
    let _ = std::fs::remove_file(go(1));
    let _ = std::fs::remove_file(go(2));
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_screenshot_outline_of_a_canvas_comes_from_ocr_and_its_points_click() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let fixture = OcrFixture::start(desktop);
    window_of(&server, fixture.child.id()).await;
    fixture.layout().await;
    let outline = wait_for(
        Duration::from_secs(30),
        "an outline naming Delete Everything",
        || async {
            let r = server
                .call(
                    "screenshot",
                    json!({ "title_match": TITLE, "summary": "summary" }),
                )
                .await;
            let v = ok(&r).clone();
            v["outline"]["items"]
                .as_array()?
                .iter()
                .any(|i| i["name"] == "Delete Everything")
                .then_some((v, text(&r)))
        },
    )
    .await;
    let (v, said) = outline;
    assert_eq!(v["outline"]["source"], "ocr", "{said}");
    assert!(
        said.contains("source: ocr") && said.contains("Text \"Delete Everything\" @ ("),
        "{said}"
    );
    let item = v["outline"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "Delete Everything")
        .unwrap();
    let r = server
        .call(
            "click",
            json!({ "x": item["x"], "y": item["y"], "screenshot_id": v["screenshot_id"] }),
        )
        .await;
    ok(&r);
    fixture.saw("clicked Delete Everything").await;
    // Without the argument the deskpilot profile adds no outline.
    let r = server
        .call("screenshot", json!({ "title_match": TITLE }))
        .await;
    assert!(
        ok(&r).get("outline").is_none() && !text(&r).contains("Outline"),
        "{}",
        text(&r)
    );
    let bad = server
        .call("screenshot", json!({ "summary": "everything" }))
        .await;
    assert_eq!(error_code(&bad), "INVALID_ARGUMENT");
    server.finish().await;
}

/// The OCR worker processes whose parent is `server`.
fn workers(server: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // Field 4 of stat, after the parenthesised command name, is the parent pid.
        let parent = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split(' ').nth(1)?.parse::<u32>().ok());
        if parent == Some(server) && cmdline.split(|b| *b == 0).any(|a| a == b"__ocr") {
            out.push(pid);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn one_warm_worker_serves_every_read_and_an_idle_one_gives_its_memory_back() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let server = serve(Some(desktop), &[], &[("DESKPILOT_OCR_IDLE_S", "2")]).await;
    let region = json!({ "region": { "x": 0, "y": 0, "width": 400, "height": 200 } });
    ok(&server.call("ocr", region.clone()).await);
    let first = workers(server.pid());
    assert_eq!(first.len(), 1, "one worker after the first read: {first:?}");
    ok(&server.call("ocr", region.clone()).await);
    assert_eq!(
        workers(server.pid()),
        first,
        "the same warm worker reads again"
    );
    wait_for(
        Duration::from_secs(20),
        "the idle worker to exit",
        || async { workers(server.pid()).is_empty().then_some(()) },
    )
    .await;
    // The next read starts a new one, transparently.
    ok(&server.call("ocr", region).await);
    let second = workers(server.pid());
    assert!(
        second.len() == 1 && second != first,
        "{first:?} then {second:?}"
    );
    server.finish().await;
}
