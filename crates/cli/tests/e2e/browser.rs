//! The browser channel through the MCP client: Debian's chromium on the virtual desktop, a
//! fixture site served by the test on loopback (a form with English and Chinese labels, a
//! button that changes the DOM, a `<select>`, a slow request, a link, an iframe, a shadow root,
//! a button under a modal); and a documentation-sized page whose accessibility tree is over
//! 16 MiB of DevTools JSON.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{self, error_code, ok, serve, text, wait_for};

/// The fixture site (shared with the benchmark).
const INDEX: &str = include_str!("../../../../fixtures/web/index.html");
const SECOND: &str = include_str!("../../../../fixtures/web/second.html");
const FRAME: &str = include_str!("../../../../fixtures/web/frame.html");
const HUGE: &str = include_str!("../../../../fixtures/web/huge.html");
const PARITY: &str = include_str!("../../../../fixtures/web/parity.html");
/// The document of a frame from another site.
const OOPIF_INNER: &str = "<!doctype html><html><body><button onclick=\"this.textContent='Clicked inside'\">Inner button</button><input aria-label=\"Inner field\"></body></html>";

/// Serves the fixture pages on a loopback port until the test ends.
fn site() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    return;
                }
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some((k, v)) = line.split_once(':')
                        && k.eq_ignore_ascii_case("content-length")
                    {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut sent = vec![0; length];
                let _ = std::io::Read::read_exact(&mut reader, &mut sent);
                let path = first.split_whitespace().nth(1).unwrap_or("/");
                let port = stream.local_addr().map_or(0, |a| a.port());
                if path == "/slow" {
                    // A request that keeps the network busy for a second.
                    std::thread::sleep(Duration::from_millis(1000));
                }
                let api = format!(
                    "{{\"answer\":42,\"echo\":{}}}",
                    String::from_utf8_lossy(&sent)
                );
                // A page on 127.0.0.1 whose frame is on localhost: another site, so Chromium
                // gives it a renderer of its own (an out-of-process frame).
                let oopif = format!(
                    "<!doctype html><html><head><title>Outer</title></head><body><button>Outer button</button><iframe src=\"http://localhost:{port}/oopif-inner\" width=300 height=100></iframe></body></html>"
                );
                let (status, body, kind) = match path {
                    "/oopif" => ("200 OK", oopif.as_str(), "text/html"),
                    "/oopif-inner" => ("200 OK", OOPIF_INNER, "text/html"),
                    "/" => ("200 OK", INDEX, "text/html"),
                    "/second" => ("200 OK", SECOND, "text/html"),
                    "/frame" => ("200 OK", FRAME, "text/html"),
                    "/huge" => ("200 OK", HUGE, "text/html"),
                    "/parity" => ("200 OK", PARITY, "text/html"),
                    "/api" => ("200 OK", api.as_str(), "application/json"),
                    "/slow" => ("200 OK", "slow done", "text/html"),
                    _ => ("404 Not Found", "missing", "text/html"),
                };
                let mut s = &stream;
                let _ = write!(
                    s,
                    "HTTP/1.1 {status}\r\nContent-Type: {kind}; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    port
}

/// The ref on the snapshot line holding `needle`.
fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in:\n{snapshot}"));
    let at = line
        .find("[ref=")
        .unwrap_or_else(|| panic!("no ref on {line:?}"));
    line[at + 5..]
        .trim_end_matches(']')
        .split(']')
        .next()
        .unwrap()
        .to_string()
}

fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

#[allow(clippy::print_stderr)]
fn have_chromium() -> bool {
    let found = std::path::Path::new("/usr/bin/chromium").exists();
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but chromium is missing (scripts/install-deps test installs it)"
        );
        eprintln!("SKIP browser test: chromium is not installed");
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launched_chromium_is_snapshotted_and_driven_by_ref() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    if !have_chromium() {
        return;
    }
    let _guard = harness::exclusive().await;
    let port = site();
    let server = serve(Some(desktop), &[], &[]).await;
    let r = server
        .call(
            "browser_launch",
            json!({ "url": format!("http://127.0.0.1:{port}/") }),
        )
        .await;
    let launched = ok(&r)["browser"].clone();
    let pid = launched["pid"].as_u64().expect("a pid");
    assert!(alive(pid));
    // The launch URL's own document request is logged, with its status.
    let r = server
        .call("browser_log", json!({ "kind": "network" }))
        .await;
    assert!(
        ok(&r)["requests"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["url"] == json!(format!("http://127.0.0.1:{port}/"))
                && q["method"] == "GET"
                && q["status"] == 200),
        "no document request of the launch URL: {}",
        text(&r)
    );
    // It opened a window on the desktop, and said which.
    let window = launched["window"]["id"]
        .as_u64()
        .unwrap_or_else(|| panic!("no window in {}", text(&r)));
    assert_eq!(launched["window"]["pid"], json!(pid));
    wait_for(Duration::from_secs(20), "chromium's window", || async {
        let r = server.call("list_windows", json!({})).await;
        ok(&r)["windows"]
            .as_array()?
            .iter()
            .any(|w| {
                w["id"] == json!(window)
                    && w["title"]
                        .as_str()
                        .is_some_and(|t| t.contains("Fixture home"))
            })
            .then_some(())
    })
    .await;

    // Every control has a ref, the iframe's and the shadow root's included.
    let snap = wait_for(
        Duration::from_secs(20),
        "the fixture page's snapshot",
        || async {
            let r = server.call("browser_snapshot", json!({})).await;
            let t = ok(&r)["text"].as_str()?.to_string();
            (t.contains("Inner button") && t.contains("Shadow button")).then_some(t)
        },
    )
    .await;
    for needle in [
        "textbox \"Name 名前\"",
        "button \"Add item\"",
        "link \"Second page\"",
        "button \"Inner button\"",
        "button \"Shadow button\"",
        "button \"Covered\"",
    ] {
        ref_of(&snap, needle);
    }
    // A query keeps only matching lines and their ancestors; the refs are the same.
    let r = server
        .call("browser_snapshot", json!({ "query": "inner button" }))
        .await;
    let q = ok(&r)["text"].as_str().unwrap().to_string();
    assert!(q.contains("button \"Inner button\""), "{q}");
    assert!(
        !q.contains("Add item") && q.lines().count() < snap.lines().count(),
        "{q}"
    );
    assert_eq!(
        ref_of(&q, "button \"Inner button\""),
        ref_of(&snap, "button \"Inner button\"")
    );
    let eval = |expr: &str| {
        let expr = expr.to_string();
        let server = &server;
        async move {
            let r = server
                .call("browser_eval", json!({ "expression": expr }))
                .await;
            ok(&r)["value"].clone()
        }
    };

    // A click by ref changes the DOM, and says so; asked for, the new snapshot comes with it.
    let r = server
        .call(
            "browser_click",
            json!({ "ref": ref_of(&snap, "button \"Add item\""), "snapshot": true }),
        )
        .await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    assert_eq!(
        eval("document.querySelectorAll('#list li').length").await,
        json!(1)
    );
    let after = ok(&r)["snapshot"]["text"].as_str().unwrap().to_string();
    assert!(after.contains("listitem"), "{after}");
    assert_eq!(
        ref_of(&after, "button \"Add item\""),
        ref_of(&snap, "button \"Add item\""),
        "an unchanged node keeps its ref"
    );
    // Without asking, an action answers briefly.
    let r = server
        .call(
            "browser_click",
            json!({ "ref": ref_of(&snap, "button \"Add item\"") }),
        )
        .await;
    assert!(ok(&r)["snapshot"].is_null(), "{}", text(&r));
    assert!(text(&r).len() < 600, "{}", text(&r));

    // Scoping: one ref's subtree, and a depth limit.
    let size = ref_of(&snap, "combobox \"Size\"");
    let r = server
        .call("browser_snapshot", json!({ "scope": size }))
        .await;
    let scoped = ok(&r)["text"].as_str().unwrap().to_string();
    assert!(scoped.starts_with("- combobox \"Size\""), "{scoped}");
    assert!(scoped.contains("option \"Large\""), "{scoped}");
    assert!(!scoped.contains("Add item"), "{scoped}");
    let r = server
        .call("browser_snapshot", json!({ "scope": size, "depth": 1 }))
        .await;
    let shallow = ok(&r)["text"].as_str().unwrap().to_string();
    assert_eq!(shallow.lines().count(), 1, "{shallow}");
    assert!(shallow.trim_end().ends_with('…'), "{shallow}");
    let r = server
        .call("browser_snapshot", json!({ "scope": "e9999" }))
        .await;
    assert_eq!(error_code(&r), "ELEMENT_NOT_FOUND", "{}", text(&r));

    // A <select> is set by label, as a person would: its change handler runs.
    let r = server
        .call(
            "browser_fill",
            json!({ "fields": [{ "ref": size, "value": "Large" }] }),
        )
        .await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    assert_eq!(
        eval("document.getElementById('size').value").await,
        json!("l")
    );
    assert_eq!(
        eval("document.getElementById('picked').textContent").await,
        json!("Size: Large")
    );
    let r = server
        .call(
            "browser_fill",
            json!({ "fields": [{ "ref": size, "value": "Huge" }] }),
        )
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{}", text(&r));
    assert!(text(&r).contains("\"Small\""), "{}", text(&r));
    let r = server
        .call(
            "browser_fill",
            json!({ "fields": [{ "ref": ref_of(&snap, "button \"Add item\""), "value": "x" }] }),
        )
        .await;
    assert_eq!(error_code(&r), "ACTION_UNSUPPORTED", "{}", text(&r));

    // The network goes quiet only once the slow request is answered.
    let r = server
        .call(
            "browser_click",
            json!({ "ref": ref_of(&snap, "button \"Load slowly\"") }),
        )
        .await;
    ok(&r);
    let r = server
        .call("browser_wait_for", json!({ "until": "network_idle" }))
        .await;
    ok(&r);
    assert_eq!(
        eval("document.getElementById('slow').textContent").await,
        json!("slow done"),
        "network idle came before the slow request ended: {}",
        text(&r)
    );

    // The page's screenshot is placed where it shows: its x/y work with the desktop click.
    let r = server.call("browser_screenshot", json!({})).await;
    let shot = ok(&r);
    let id = shot["screenshot_id"]
        .as_u64()
        .expect("registered on the desktop");
    let scale = shot["view"]["scale"].as_f64().unwrap();
    let centre = eval(
        "(() => { const b = document.getElementById('add').getBoundingClientRect(); return [b.x + b.width / 2, b.y + b.height / 2]; })()",
    )
    .await;
    let (cx, cy) = (
        centre[0].as_f64().unwrap() * scale,
        centre[1].as_f64().unwrap() * scale,
    );
    let r = server
        .call("click", json!({ "x": cx, "y": cy, "screenshot_id": id }))
        .await;
    ok(&r);
    wait_for(
        Duration::from_secs(5),
        "the desktop click to add an item",
        || async {
            (eval("document.querySelectorAll('#list li').length").await == json!(3)).then_some(())
        },
    )
    .await;
    // One element's picture.
    let r = server
        .call(
            "browser_screenshot",
            json!({ "ref": size, "format": "png" }),
        )
        .await;
    let w = ok(&r)["view"]["width"].as_u64().unwrap();
    assert!((20..400).contains(&w), "the select alone: {}", text(&r));
    // Typing lands exactly.
    let r = server.call("browser_snapshot", json!({})).await;
    let before = ok(&r)["snapshot"].as_u64().expect("a snapshot number");
    let typed = "héllo 中文 😀";
    let r = server
        .call(
            "browser_type",
            json!({ "ref": ref_of(&snap, "textbox \"Name 名前\""), "text": typed }),
        )
        .await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    assert_eq!(
        eval("document.getElementById('name').value").await,
        json!(typed)
    );
    // What changed since the snapshot before typing: that field, not the rest of the page.
    let r = server
        .call("browser_snapshot", json!({ "since": before }))
        .await;
    let diff = ok(&r)["text"].as_str().unwrap().to_string();
    assert_eq!(ok(&r)["since"], json!(before), "{}", text(&r));
    assert!(
        diff.contains("textbox \"Name 名前\"") && diff.contains(typed),
        "the typed field is in the changes: {diff}"
    );
    assert!(
        !diff.contains("Add item") && !diff.contains("Second page"),
        "nothing else is: {diff}"
    );
    // Paged by bytes with a cursor: every line once, in order, so no ref is lost.
    let r = server.call("browser_snapshot", json!({})).await;
    let whole = ok(&r)["text"].as_str().unwrap().to_string();
    let (mut parts, mut joined, mut cursor) = (0, String::new(), String::new());
    loop {
        let r = server
            .call(
                "browser_snapshot",
                json!({ "max_bytes": 300, "cursor": cursor }),
            )
            .await;
        let part = ok(&r)["text"].as_str().unwrap();
        assert!(
            part.len() <= 300 || part.lines().count() == 1,
            "over the budget: {part}"
        );
        joined.push_str(part);
        parts += 1;
        match ok(&r)["next_cursor"].as_str() {
            Some(next) => {
                assert!(text(&r).contains(next), "the cut says how to go on");
                cursor = next.to_string();
            }
            None => break,
        }
        assert!(parts < 100, "the cursor does not move on");
    }
    assert!(parts > 2, "{parts} parts");
    assert_eq!(joined, whole);
    // The shadow root's button is clickable by ref too.
    ok(&server
        .call(
            "browser_click",
            json!({ "ref": ref_of(&snap, "button \"Shadow button\"") }),
        )
        .await);
    // The covered button is refused, naming what covers it.
    let r = server
        .call(
            "browser_click",
            json!({ "ref": ref_of(&snap, "button \"Covered\"") }),
        )
        .await;
    assert_eq!(error_code(&r), "ELEMENT_COVERED", "{}", text(&r));
    assert!(text(&r).contains("div#modal"), "{}", text(&r));
    // A ref from before a navigation is refused.
    let add = ref_of(&snap, "button \"Add item\"");
    ok(&server
        .call(
            "browser_click",
            json!({ "ref": ref_of(&snap, "link \"Second page\"") }),
        )
        .await);
    let r = server
        .call("browser_wait_for", json!({ "until": "navigation" }))
        .await;
    assert!(
        ok(&r)["url"].as_str().unwrap().ends_with("/second"),
        "{}",
        text(&r)
    );
    assert_eq!(ok(&r)["page"]["title"], "Second", "{}", text(&r));
    // Before any new snapshot: the old page's ref is refused, saying why.
    let r = server.call("browser_click", json!({ "ref": add })).await;
    assert_eq!(error_code(&r), "STALE_ELEMENT", "{}", text(&r));
    assert!(text(&r).contains("navigated"), "{}", text(&r));
    let r = server.call("browser_snapshot", json!({})).await;
    assert!(ok(&r)["text"].as_str().unwrap().contains("The second page"));
    let r = server.call("browser_click", json!({ "ref": add })).await;
    assert!(
        matches!(
            error_code(&r).as_str(),
            "STALE_ELEMENT" | "ELEMENT_NOT_FOUND"
        ),
        "{}",
        text(&r)
    );
    // Closing takes the browser and its profile away.
    let r = server.call("browser_close", json!({})).await;
    assert_eq!(ok(&r)["closed"], json!([launched["id"]]));
    wait_for(Duration::from_secs(10), "chromium to exit", || async {
        (!alive(pid)).then_some(())
    })
    .await;
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_chromium_is_driven_and_left_running() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    if !have_chromium() {
        return;
    }
    let _guard = harness::exclusive().await;
    let port = site();
    let debug = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let profile =
        std::env::temp_dir().join(format!("deskpilot-attach-test-{}", std::process::id()));
    let mut cmd = std::process::Command::new("/usr/bin/chromium");
    cmd.args([
        "--headless=new",
        "--no-sandbox",
        "--no-first-run",
        // A desktop keyring on the session bus would otherwise hold Chromium's start.
        "--password-store=basic",
        &format!("--remote-debugging-port={debug}"),
        &format!("--user-data-dir={}", profile.display()),
        &format!("http://127.0.0.1:{port}/second"),
    ])
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    desktop.configure(&mut cmd);
    let mut chromium = harness::App(cmd.spawn().expect("chromium"));
    let server = serve(Some(desktop), &[], &[]).await;
    let attached: Value = wait_for(Duration::from_secs(20), "the debug port", || async {
        let r = server
            .call("browser_attach", json!({ "port": debug }))
            .await;
        (r.is_error != Some(true)).then(|| ok(&r)["browser"].clone())
    })
    .await;
    assert_eq!(attached["launched"], false);
    let snap = wait_for(Duration::from_secs(10), "the page", || async {
        let r = server.call("browser_snapshot", json!({})).await;
        let t = ok(&r)["text"].as_str()?.to_string();
        t.contains("The second page").then_some(t)
    })
    .await;
    assert!(snap.contains("Second"), "{snap}");
    let r = server.call("browser_close", json!({})).await;
    assert_eq!(ok(&r)["detached"], json!([attached["id"]]));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        chromium.0.try_wait().unwrap().is_none(),
        "an attached browser is left running"
    );
    let _ = chromium.0.kill();
    let _ = std::fs::remove_dir_all(&profile);
    server.finish().await;
}

/// Processes whose command line mentions `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .filter(|pid| alive(u64::from(*pid)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launched_browser_dies_with_a_killed_server_and_the_gates_apply() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    if !have_chromium() {
        return;
    }
    let _guard = harness::exclusive().await;
    let port = site();
    let config = crate::safety::ConfigFile::new(
        "browser-gates",
        "blocklist = [\"Second page\", \"forbidden.example\", \"名前\"]\n",
    );
    let server = serve(Some(desktop), &["--config", config.arg()], &[]).await;
    let r = server
        .call(
            "browser_launch",
            json!({ "url": format!("http://127.0.0.1:{port}/"), "headless": true }),
        )
        .await;
    let pid = ok(&r)["browser"]["pid"].as_u64().unwrap();
    let snap = wait_for(Duration::from_secs(20), "the page", || async {
        let r = server.call("browser_snapshot", json!({})).await;
        let t = ok(&r)["text"].as_str()?.to_string();
        t.contains("Second page").then_some(t)
    })
    .await;
    // The label names the element: the blocklist refuses it.
    let r = server
        .call(
            "browser_click",
            json!({ "ref": ref_of(&snap, "link \"Second page\"") }),
        )
        .await;
    assert_eq!(error_code(&r), "BLOCKED_TARGET", "{}", text(&r));
    // So do hovering, filling and opening a tab: their labels name the element or the URL,
    // and nothing happens.
    let r = server
        .call(
            "browser_click",
            json!({ "ref": ref_of(&snap, "link \"Second page\""), "hover": true }),
        )
        .await;
    assert_eq!(error_code(&r), "BLOCKED_TARGET", "{}", text(&r));
    let r = server
        .call(
            "browser_fill",
            json!({ "fields": [{ "ref": ref_of(&snap, "textbox \"Name 名前\""), "value": "x" }] }),
        )
        .await;
    assert_eq!(error_code(&r), "BLOCKED_TARGET", "{}", text(&r));
    let r = server
        .call(
            "browser_eval",
            json!({ "expression": "document.getElementById('name').value" }),
        )
        .await;
    assert_eq!(ok(&r)["value"], json!(""));
    let tabs = server.call("browser_tabs", json!({})).await;
    let r = server
        .call(
            "browser_tabs",
            json!({ "action": "new", "url": "http://forbidden.example/" }),
        )
        .await;
    assert_eq!(error_code(&r), "BLOCKED_TARGET", "{}", text(&r));
    assert_eq!(
        ok(&server.call("browser_tabs", json!({})).await)["pages"],
        ok(&tabs)["pages"]
    );
    // The profile directory is in the browser's command line.
    let cmdline = String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap())
        .to_string();
    // Chromium rewrites its command line into one space-separated string.
    let profile = cmdline
        .split(['\0', ' '])
        .find_map(|a| a.strip_prefix("--user-data-dir="))
        .expect("a profile directory")
        .to_string();
    // SAFETY: plain signal delivery to the server we started.
    unsafe {
        libc::kill(server.pid() as i32, libc::SIGKILL);
    }
    wait_for(
        Duration::from_secs(10),
        "every chromium process of that profile to exit",
        || async { processes_with(&profile).is_empty().then_some(()) },
    )
    .await;
    // The next launch removes the dead server's profile directory.
    let server = serve(Some(desktop), &[], &[]).await;
    let r = server
        .call(
            "browser_launch",
            json!({ "url": "about:blank", "headless": true }),
        )
        .await;
    ok(&r);
    assert!(
        !std::path::Path::new(&profile).exists(),
        "{profile} is left behind"
    );
    ok(&server.call("browser_close", json!({})).await);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chromium_window_without_accessibility_points_at_browser_attach() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    if !have_chromium() {
        return;
    }
    let _guard = harness::exclusive().await;
    let port = site();
    let debug = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let profile = std::env::temp_dir().join(format!("deskpilot-hint-test-{}", std::process::id()));
    // On the desktop, started the way people start it: no accessibility flags.
    let mut cmd = std::process::Command::new("/usr/bin/chromium");
    cmd.args([
        "--no-sandbox",
        "--no-first-run",
        "--no-default-browser-check",
        // A desktop keyring on the session bus would otherwise hold Chromium's start.
        "--password-store=basic",
        "--window-size=1000,700",
        &format!("--remote-debugging-port={debug}"),
        &format!("--user-data-dir={}", profile.display()),
        &format!("http://127.0.0.1:{port}/second"),
    ])
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    desktop.configure(&mut cmd);
    let mut chromium = harness::App(cmd.spawn().expect("chromium"));
    let server = serve(Some(desktop), &[], &[]).await;
    let window = wait_for(Duration::from_secs(30), "chromium's window", || async {
        let r = server.call("list_windows", json!({})).await;
        ok(&r)["windows"]
            .as_array()?
            .iter()
            .find(|w| w["title"].as_str().is_some_and(|t| t.starts_with("Second")))
            .and_then(|w| w["id"].as_u64())
    })
    .await;
    let r = server
        .call(
            "get_window_state",
            json!({ "window_id": window, "include_screenshot": false }),
        )
        .await;
    let t = text(&r);
    assert!(
        t.contains("browser_attach") && t.contains(&format!("port {debug}")),
        "{t}"
    );
    // The hint works: attached by that window, its page is read by ref.
    let r = server
        .call("browser_attach", json!({ "window_id": window }))
        .await;
    assert_eq!(ok(&r)["browser"]["port"], json!(debug), "{}", text(&r));
    let r = server.call("browser_snapshot", json!({})).await;
    assert!(
        ok(&r)["text"].as_str().unwrap().contains("The second page"),
        "{}",
        text(&r)
    );
    ok(&server.call("browser_close", json!({})).await);
    let _ = chromium.0.kill();
    let _ = chromium.0.wait();
    let _ = std::fs::remove_dir_all(&profile);
    server.finish().await;
}

// On a documentation page of ~3,800 links browser_snapshot answered BROWSER_UNAVAILABLE
// "Message too long: 20919796 > 16777216", and so did every later call on that browser.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[allow(clippy::print_stderr)]
async fn a_page_too_big_for_one_websocket_frame_is_snapshotted_and_still_driven() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    if !have_chromium() {
        return;
    }
    let _guard = harness::exclusive().await;
    let port = site();
    let server = serve(Some(desktop), &[], &[]).await;
    let r = server
        .call(
            "browser_launch",
            json!({ "url": format!("http://127.0.0.1:{port}/huge"), "headless": true }),
        )
        .await;
    ok(&r);
    let r = server
        .call(
            "browser_wait_for",
            json!({ "selector": "#index li:nth-child(6000)", "timeout_ms": 30000 }),
        )
        .await;
    ok(&r);
    let started = std::time::Instant::now();
    let r = server
        .call(
            "browser_snapshot",
            json!({ "query": "Mark done", "max_lines": 20 }),
        )
        .await;
    let took = started.elapsed();
    let snap = ok(&r)["text"].as_str().unwrap_or_default().to_string();
    eprintln!(
        "browser_snapshot of the huge page: {took:?}, {} refs",
        ok(&r)["refs"]
    );
    assert!(
        ok(&r)["refs"].as_u64().unwrap_or(0) > 6000,
        "every link has a ref: {}",
        text(&r)
    );
    let button = ref_of(&snap, "button \"Mark done\"");
    // The same browser still answers: the click lands, and its effect is read back.
    let r = server.call("browser_click", json!({ "ref": button })).await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    let r = server
        .call(
            "browser_eval",
            json!({ "expression": "document.getElementById('status').textContent" }),
        )
        .await;
    assert_eq!(ok(&r)["value"], json!("Marked done"), "{}", text(&r));
    let r = server.call("browser_close", json!({})).await;
    ok(&r);
    server.finish().await;
}

/// Every operation playwright-mcp users reach for, on `fixtures/web/parity.html`, each
/// checked in the page's DOM through `browser_eval`: hover, double / right / ctrl click, an
/// HTML drag and drop, a form filled in one call (a file uploaded and read back by the page),
/// dialogs raised by clicks and answered, console messages by level and mark, a request's
/// body, a diff snapshot after typing, history, tabs and emulation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_parity_tool_acts_on_the_fixture_page_and_the_page_shows_it() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    if !have_chromium() {
        return;
    }
    let _guard = harness::exclusive().await;
    let port = site();
    let server = serve(Some(desktop), &[], &[]).await;
    let url = format!("http://127.0.0.1:{port}/parity");
    let r = server
        .call("browser_launch", json!({ "url": url, "headless": true }))
        .await;
    ok(&r);
    // The launched page's own document request is in the network log, answered.
    let r = server
        .call("browser_log", json!({ "kind": "network" }))
        .await;
    let requests = ok(&r)["requests"].as_array().unwrap().clone();
    assert!(
        requests.iter().any(|q| q["url"] == json!(url)
            && q["method"] == "GET"
            && q["status"] == 200
            && q["type"] == "Document"),
        "no document request of {url}: {}",
        text(&r)
    );
    let eval = |expr: &str| {
        let expr = expr.to_string();
        let server = &server;
        async move {
            let r = server
                .call("browser_eval", json!({ "expression": expr }))
                .await;
            ok(&r)["value"].clone()
        }
    };
    let snapshot = || async {
        wait_for(
            Duration::from_secs(20),
            "the parity page's snapshot",
            || async {
                let r = server.call("browser_snapshot", json!({})).await;
                let t = ok(&r)["text"].as_str()?.to_string();
                t.contains("Call API").then_some(t)
            },
        )
        .await
    };
    let snap = snapshot().await;
    let click = |args: Value| {
        let server = &server;
        async move { server.call("browser_click", args).await }
    };

    // Pointing, double, right and modified clicks.
    let me = ref_of(&snap, "button \"Click me\"");
    let r = click(json!({ "ref": ref_of(&snap, "button \"Hover me\""), "hover": true })).await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    assert_eq!(
        eval("document.getElementById('hovered').textContent").await,
        json!("hovered")
    );
    for (args, want) in [
        (json!({ "ref": me, "count": 2 }), "double"),
        (json!({ "ref": me, "button": "right" }), "right"),
        (json!({ "ref": me, "modifiers": ["ctrl"] }), "ctrl"),
    ] {
        let r = click(args.clone()).await;
        ok(&r);
        assert_eq!(
            eval("document.getElementById('clicks').textContent").await,
            json!(want),
            "{args}: {}",
            text(&r)
        );
    }
    let r = click(json!({ "ref": me, "count": 3 })).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{}", text(&r));
    let r = click(json!({ "ref": me, "modifiers": ["hyper"] })).await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{}", text(&r));

    // An HTML drag and drop, carried by the browser's drag events.
    let r = click(json!({
        "ref": ref_of(&snap, "button \"Card\""),
        "to": ref_of(&snap, "button \"Drop zone\""),
    }))
    .await;
    ok(&r);
    assert_eq!(
        eval("document.getElementById('dropped').textContent").await,
        json!("dropped card"),
        "{}",
        text(&r)
    );

    // A form in one call, a file among its fields; the page reads the file back.
    let file = std::env::temp_dir().join(format!("deskpilot-upload-{}.txt", std::process::id()));
    std::fs::write(&file, "hello upload").unwrap();
    let r = server
        .call(
            "browser_fill",
            json!({ "fields": [
                { "ref": ref_of(&snap, "textbox \"Email\""), "value": "a@example.org" },
                { "ref": ref_of(&snap, "checkbox \"Agree\""), "value": "true" },
                { "ref": ref_of(&snap, "listbox \"Languages\""), "values": ["Rust", "C"] },
                { "ref": ref_of(&snap, "\"When\""), "value": "2026-12-03" },
                { "ref": ref_of(&snap, "\"Upload\""), "value": file.display().to_string() },
            ] }),
        )
        .await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    assert_eq!(
        eval("['email', 'agree', 'langs', 'when'].map(id => document.getElementById(id)).map(e => e.type === 'checkbox' ? e.checked : e.multiple ? Array.from(e.selectedOptions).map(o => o.text).join() : e.value)").await,
        json!(["a@example.org", true, "Rust,C", "2026-12-03"]),
        "{}\n{snap}",
        text(&r)
    );
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    wait_for(
        Duration::from_secs(5),
        "the page to read the file",
        || async {
            (eval("document.getElementById('uploaded').textContent").await
                == json!(format!("{name}: hello upload")))
            .then_some(())
        },
    )
    .await;
    // A missing file refuses the whole form before anything is typed.
    let r = server
        .call(
            "browser_fill",
            json!({ "fields": [
                { "ref": ref_of(&snap, "textbox \"Email\""), "value": "changed@example.org" },
                { "ref": ref_of(&snap, "\"Upload\""), "value": "/nonexistent/deskpilot.txt" },
            ] }),
        )
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{}", text(&r));
    assert!(
        text(&r).contains("/nonexistent/deskpilot.txt"),
        "{}",
        text(&r)
    );
    assert_eq!(eval("email.value").await, json!("a@example.org"));
    let _ = std::fs::remove_file(&file);

    // A dialog is reported by the click that raised it; the page waits until it is answered.
    let r = click(json!({ "ref": ref_of(&snap, "button \"Ask name\"") })).await;
    assert!(
        text(&r).contains("prompt dialog \"Your name?\"") && text(&r).contains("browser_dialog"),
        "{}",
        text(&r)
    );
    assert_eq!(ok(&r)["value"]["dialog"]["type"], "prompt", "{}", text(&r));
    let r = server.call("browser_snapshot", json!({})).await;
    assert_eq!(error_code(&r), "ELEMENT_COVERED", "{}", text(&r));
    assert!(text(&r).contains("browser_dialog"), "{}", text(&r));
    let r = server
        .call("browser_dialog", json!({ "accept": true, "text": "Ada" }))
        .await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    assert_eq!(
        eval("document.getElementById('said').textContent").await,
        json!("Ada")
    );
    let r = click(json!({ "ref": ref_of(&snap, "button \"Confirm\"") })).await;
    assert!(
        text(&r).contains("confirm dialog \"Sure?\""),
        "{}",
        text(&r)
    );
    let r = server
        .call("browser_dialog", json!({ "accept": false }))
        .await;
    ok(&r);
    assert_eq!(
        eval("document.getElementById('said').textContent").await,
        json!("not sure")
    );
    let r = server
        .call("browser_dialog", json!({ "accept": true }))
        .await;
    assert_eq!(error_code(&r), "ELEMENT_NOT_FOUND", "{}", text(&r));

    // Console messages: by level, and only those after a mark.
    let r = server.call("browser_log", json!({})).await;
    let all = ok(&r)["messages"].as_array().unwrap().clone();
    assert!(
        all.iter()
            .any(|m| m["level"] == "warning" && m["text"] == "parity loaded"),
        "{}",
        text(&r)
    );
    let mark = ok(&r)["mark"].as_u64().unwrap();
    click(json!({ "ref": ref_of(&snap, "button \"Log\"") })).await;
    let r = wait_for(Duration::from_secs(5), "the console error", || async {
        let r = server
            .call("browser_log", json!({ "since": mark, "level": "error" }))
            .await;
        (!ok(&r)["messages"].as_array()?.is_empty()).then_some(r)
    })
    .await;
    let errors = ok(&r)["messages"].as_array().unwrap().clone();
    assert_eq!(errors.len(), 1, "{}", text(&r));
    assert_eq!(errors[0]["text"], "boom 42");
    let r = server.call("browser_log", json!({ "since": mark })).await;
    assert!(text(&r).contains("hello"), "{}", text(&r));
    assert!(!text(&r).contains("parity loaded"), "{}", text(&r));

    // A request, then its body and what was sent, within a cap.
    click(json!({ "ref": ref_of(&snap, "button \"Call API\"") })).await;
    wait_for(Duration::from_secs(10), "the API's answer", || async {
        (eval("document.getElementById('api').textContent").await == json!("answer 42"))
            .then_some(())
    })
    .await;
    let r = server
        .call(
            "browser_log",
            json!({ "kind": "network", "filter": "/api" }),
        )
        .await;
    let requests = ok(&r)["requests"].as_array().unwrap().clone();
    assert_eq!(requests.len(), 1, "{}", text(&r));
    assert_eq!(
        (&requests[0]["method"], &requests[0]["status"]),
        (&json!("POST"), &json!(200))
    );
    let n = requests[0]["seq"].as_u64().unwrap();
    let r = server
        .call("browser_log", json!({ "kind": "network", "request": n }))
        .await;
    assert!(
        ok(&r)["post_data"].as_str().unwrap().contains("life"),
        "{}",
        text(&r)
    );
    let body = ok(&r)["body"].as_str().unwrap().to_string();
    assert!(
        body.contains("\"answer\":42") && body.contains("life"),
        "{body}"
    );
    let r = server
        .call(
            "browser_log",
            json!({ "kind": "network", "request": n, "max_bytes": 5 }),
        )
        .await;
    assert_eq!(ok(&r)["body"].as_str().unwrap().len(), 5, "{}", text(&r));
    assert!(text(&r).contains("cut at 5"), "{}", text(&r));

    // After typing in one field, a diff snapshot holds that field, not the rest of the page.
    let snap = snapshot().await;
    let r = server
        .call(
            "browser_type",
            json!({ "ref": ref_of(&snap, "textbox \"Email\""), "text": "x", "snapshot": "diff" }),
        )
        .await;
    let diff = ok(&r)["snapshot"].clone();
    assert!(diff["since"].as_u64().is_some(), "{}", text(&r));
    let diff = diff["text"].as_str().unwrap().to_string();
    assert!(diff.contains("a@example.orgx"), "{diff}");
    assert!(
        !diff.contains("Hover me") && !diff.contains("Call API"),
        "{diff}"
    );

    // History: away, back, forward.
    let second = format!("http://127.0.0.1:{port}/second");
    ok(&server
        .call("browser_navigate", json!({ "url": second }))
        .await);
    let r = server
        .call("browser_navigate", json!({ "go": "back" }))
        .await;
    assert_eq!(ok(&r)["page"]["url"], json!(url), "{}", text(&r));
    assert_eq!(eval("location.pathname").await, json!("/parity"));
    let r = server
        .call("browser_navigate", json!({ "go": "forward" }))
        .await;
    assert_eq!(ok(&r)["page"]["url"], json!(second), "{}", text(&r));
    let r = server
        .call("browser_navigate", json!({ "go": "forward" }))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{}", text(&r));

    // Tabs: one opened and closed leaves no target behind.
    let tabs = |r: &rmcp::model::CallToolResult| -> Vec<String> {
        ok(r)["pages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap().to_string())
            .collect()
    };
    let before = tabs(&server.call("browser_tabs", json!({})).await);
    let r = server
        .call("browser_tabs", json!({ "action": "new", "url": url }))
        .await;
    let opened = ok(&r)["page"]["id"].as_str().unwrap().to_string();
    let during = tabs(&server.call("browser_tabs", json!({})).await);
    assert_eq!(during.len(), before.len() + 1, "{during:?}");
    assert!(during.contains(&opened));
    assert_eq!(
        eval("location.pathname").await,
        json!("/parity"),
        "the new tab is current"
    );
    ok(&server
        .call(
            "browser_tabs",
            json!({ "action": "select", "page": before[0] }),
        )
        .await);
    assert_eq!(eval("location.pathname").await, json!("/second"));
    let r = server
        .call("browser_tabs", json!({ "action": "close", "page": opened }))
        .await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    assert_eq!(tabs(&server.call("browser_tabs", json!({})).await), before);

    // Emulation, read back by the page itself.
    let r = server
        .call(
            "browser_emulate",
            json!({ "width": 500, "height": 400, "color_scheme": "dark" }),
        )
        .await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    assert_eq!(
        eval("[innerWidth, innerHeight, matchMedia('(prefers-color-scheme: dark)').matches]").await,
        json!([500, 400, true])
    );
    let r = server
        .call("browser_emulate", json!({ "color_scheme": "sepia" }))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{}", text(&r));
    ok(&server.call("browser_close", json!({})).await);
}

/// A frame from another site runs in a renderer of its own: the walker reads it through the
/// frame's own session, and its refs are clicked and typed into there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_out_of_process_frame_is_snapshotted_and_driven_through_its_own_session() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    if !have_chromium() {
        return;
    }
    let _guard = harness::exclusive().await;
    let port = site();
    let server = serve(Some(desktop), &[], &[]).await;
    let r = server
        .call(
            "browser_launch",
            json!({ "url": format!("http://127.0.0.1:{port}/oopif"), "headless": true }),
        )
        .await;
    ok(&r);
    let snap = wait_for(Duration::from_secs(20), "the frame's controls", || async {
        let r = server.call("browser_snapshot", json!({})).await;
        let t = ok(&r)["text"].as_str()?.to_string();
        t.contains("Inner field").then_some(t)
    })
    .await;
    // The page's scripts cannot reach into the frame: it is another site's.
    let r = server
        .call(
            "browser_eval",
            json!({ "expression": "document.querySelector('iframe').contentDocument === null" }),
        )
        .await;
    assert_eq!(ok(&r)["value"], json!(true));
    let r = server
        .call(
            "browser_click",
            json!({ "ref": ref_of(&snap, "button \"Inner button\""), "snapshot": true }),
        )
        .await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    let after = ok(&r)["snapshot"]["text"].as_str().unwrap().to_string();
    assert!(after.contains("button \"Clicked inside\""), "{after}");
    let r = server
        .call(
            "browser_type",
            json!({ "ref": ref_of(&snap, "textbox \"Inner field\""), "text": "hi there", "snapshot": true }),
        )
        .await;
    assert_eq!(ok(&r)["value"], json!("hi there"), "{}", text(&r));
    let after = ok(&r)["snapshot"]["text"].as_str().unwrap().to_string();
    assert!(after.contains("value=\"hi there\""), "{after}");
    ok(&server.call("browser_close", json!({})).await);
}
