//! The UI context picker (UI Context Protocol) through the MCP client, with the test playing the person:
//! it reads the page's address from the server's stderr (where a person reaching a headless
//! desktop would) and calls the page's API as the page does. The GTK fixture provides a
//! control with accessibility, an xterm text without any.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{self, error_code, ok, serve, text, wait_for};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/gtk_fixture.py");

/// A scratch output directory, removed at the end.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "deskpilot-e2e-context-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn arg(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One raw HTTP exchange: (status, headers and body as text, body bytes).
fn http(port: u16, request: &str, body: &[u8]) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    s.write_all(body).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let at = out
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(out.len(), |a| a + 4);
    let head = String::from_utf8_lossy(&out[..at]).to_string();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head, out[at..].to_vec())
}

/// The page as the person's browser talks to it.
struct Page {
    port: u16,
    token: String,
}

impl Page {
    fn get(&self, path: &str) -> (u16, Vec<u8>) {
        let (status, _, body) = http(
            self.port,
            &format!(
                "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nX-Pick-Token: {}\r\n\r\n",
                self.port, self.token
            ),
            b"",
        );
        (status, body)
    }

    fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let b = body.to_string();
        let (status, _, out) = http(
            self.port,
            &format!(
                "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{0}\r\nOrigin: http://127.0.0.1:{0}\r\nX-Pick-Token: {1}\r\nContent-Type: application/json\r\nContent-Length: {2}\r\n\r\n",
                self.port,
                self.token,
                b.len()
            ),
            b.as_bytes(),
        );
        (
            status,
            serde_json::from_slice(&out).unwrap_or_else(|_| json!(String::from_utf8_lossy(&out))),
        )
    }
}

impl Page {
    /// Polls the page's state until an agent's pick waits.
    async fn until_waiting(&self, what: &str) {
        wait_for(Duration::from_secs(10), what, || async {
            let (_, s) = self.get("/api/state");
            let s: Value = serde_json::from_slice(&s).ok()?;
            (s["waiting"] == true).then_some(())
        })
        .await;
    }
}

/// The page's address from the server's stderr, once the pick has started.
async fn page_of(server: &harness::Server) -> Page {
    let url = wait_for(
        Duration::from_secs(30),
        "the page's address on stderr",
        || async {
            server
                .stderr()
                .iter()
                .rev()
                .find_map(|l| l.find("http://127.0.0.1:").map(|at| l[at..].to_string()))
        },
    )
    .await;
    let url = url.split_whitespace().next().unwrap().to_string();
    let port = url["http://127.0.0.1:".len()..]
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let token = url.split("?t=").nth(1).unwrap().to_string();
    Page { port, token }
}

/// The agent's `ui_context_pick` with `args`, running while the test plays the person.
fn ask(
    server: &std::sync::Arc<harness::Server>,
    args: Value,
) -> tokio::task::JoinHandle<rmcp::model::CallToolResult> {
    let asking = server.clone();
    tokio::spawn(async move { asking.call("ui_context_pick", args).await })
}

/// An xterm showing a line only OCR can read (a terminal has no accessible text).
fn marked_xterm(desktop: &deskpilot_x11::VirtualDisplay) -> harness::App {
    harness::launch(
        desktop,
        "xterm",
        &[
            "-geometry",
            "40x6+900+600",
            "-fa",
            "Monospace",
            "-fs",
            "16",
            "-e",
            "sh",
            "-c",
            "echo 'PICKME 4711 ZEBRA'; sleep 600",
        ],
    )
}

/// The client rectangle of the test's xterm, once it is listed.
async fn xterm_client(server: &harness::Server) -> Value {
    wait_for(Duration::from_secs(20), "the xterm", || async {
        let r = server
            .call("list_windows", json!({ "filter": "xterm" }))
            .await;
        ok(&r)["windows"]
            .as_array()?
            .iter()
            .find(|w| {
                w["class"]
                    .as_str()
                    .is_some_and(|c| c.eq_ignore_ascii_case("xterm"))
            })
            .map(|w| w["client"].clone())
    })
    .await
}

fn png_size(bytes: &[u8]) -> (u32, u32) {
    let d = png::Decoder::new(std::io::Cursor::new(bytes));
    let r = d.read_info().unwrap();
    (r.info().width, r.info().height)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_person_picks_a_control_and_a_region_and_the_agent_gets_exactly_that() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let out = Scratch::new("flow");
    std::fs::create_dir_all(out.0.join(".tmp-left-by-a-killed-server")).unwrap();
    let port = free_port();
    let port_s = port.to_string();
    let title = "deskpilot context fixture";
    let _fixture = harness::launch(desktop, "/usr/bin/python3", &[FIXTURE, title]);
    let _xterm = marked_xterm(desktop);
    let server = std::sync::Arc::new(
        serve(
            Some(desktop),
            &[],
            &[
                ("MOUSE_POINTER_HTTP_PORT", &port_s),
                ("DESKPILOT_UI_CONTEXT_DIR", out.arg()),
            ],
        )
        .await,
    );
    // Nothing approved yet: an explicit empty state.
    let r = server.call("ui_context_current", json!({})).await;
    assert_eq!(ok(&r)["empty"], true, "{}", text(&r));

    // The fixture's "Apply" button, where accessibility puts it.
    let window = harness::listed(&server, title, title).await["id"].clone();
    let r = server
        .call(
            "get_window_state",
            json!({ "window_id": window, "include_screenshot": false }),
        )
        .await;
    let apply = harness::element(ok(&r), "Button", "Apply")["bounds"].clone();
    let (bx, by, bw, bh) = (
        apply["x"].as_i64().unwrap(),
        apply["y"].as_i64().unwrap(),
        apply["width"].as_u64().unwrap(),
        apply["height"].as_u64().unwrap(),
    );

    // The agent asks; the person is shown the page.
    let pick = ask(&server, json!({ "timeoutMs": 120000 }));
    let page = page_of(&server).await;
    assert_eq!(page.port, port);

    // Security: every request needs the token, the page's Host and Origin; bodies are capped.
    let (status, _, _) = http(
        port,
        &format!("GET /api/state HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"),
        b"",
    );
    assert_eq!(status, 403, "no token");
    let (status, _, _) = http(
        port,
        &format!("GET /api/state?t=0123 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"),
        b"",
    );
    assert_eq!(status, 403, "a wrong token");
    let (status, _, _) = http(
        port,
        &format!(
            "GET /api/state?t={} HTTP/1.1\r\nHost: attacker.example:{port}\r\n\r\n",
            page.token
        ),
        b"",
    );
    assert_eq!(status, 403, "a foreign Host (DNS rebinding)");
    let (status, _, _) = http(
        port,
        &format!(
            "POST /api/cancel?t={} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://attacker.example\r\nContent-Length: 2\r\n\r\n",
            page.token
        ),
        b"{}",
    );
    assert_eq!(status, 403, "a foreign Origin");
    let (status, _, _) = http(
        port,
        &format!(
            "POST /api/cancel?t={} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: 2\r\n\r\n",
            page.token
        ),
        b"{}",
    );
    assert_eq!(status, 403, "a POST without Origin");
    let big = vec![b'x'; 100_000];
    let (status, _, _) = http(
        port,
        &format!(
            "POST /api/pick?t={} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nOrigin: http://127.0.0.1:{port}\r\nContent-Length: {}\r\n\r\n",
            page.token,
            big.len()
        ),
        &big,
    );
    assert_eq!(status, 413, "an oversized body");
    let (status, _, _) = http(
        port,
        &format!("GET /open/deadbeef HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"),
        b"",
    );
    assert_eq!(status, 403, "a made-up one-time address");
    // Loopback only: nothing listens on the machine's other addresses.
    if let Some(other) = non_loopback_address() {
        assert!(
            TcpStream::connect_timeout(&(other, port).into(), Duration::from_secs(2)).is_err(),
            "the endpoint answers on {other}"
        );
    }
    let (status, html) = page.get("/");
    assert_eq!(status, 200);
    assert!(String::from_utf8_lossy(&html).contains("What the agent will receive"));
    let (status, shot) = page.get("/api/screen");
    assert_eq!(status, 200);
    assert!(shot.starts_with(&[0xFF, 0xD8]), "a JPEG live view");

    // Hover: the control under the pointer, named, from accessibility.
    let (cx, cy) = (bx + bw as i64 / 2, by + bh as i64 / 2);
    let (status, hover) = page.get(&format!("/api/hover?x={cx}&y={cy}"));
    assert_eq!(status, 200);
    let hover: Value = serde_json::from_slice(&hover).unwrap();
    assert!(
        hover["label"].as_str().unwrap().contains("Apply"),
        "{hover}"
    );
    assert_eq!(hover["source"], "atspi", "{hover}");

    // Pick it: the preview names it; nothing reaches the agent before approval.
    let (status, preview) = page.post("/api/pick", &json!({ "kind": "control", "x": cx, "y": cy }));
    assert_eq!(status, 200, "{preview}");
    assert_eq!(preview["json"]["control"]["name"], "Apply", "{preview}");
    assert_eq!(preview["json"]["control"]["source"], "atspi");
    assert!(
        !pick.is_finished(),
        "the agent got something before approval"
    );
    let (status, crop) = page.get("/api/crop");
    assert_eq!(status, 200);
    assert_eq!(
        png_size(&crop),
        (bw as u32, bh as u32),
        "the crop is the button"
    );
    let (status, approved) = page.post("/api/approve", &json!({}));
    assert_eq!(status, 200, "{approved}");
    let r = pick.await.unwrap();
    let got = ok(&r).clone();
    assert_eq!(got["kind"], "control", "{}", text(&r));
    assert_eq!(got["json"]["control"]["name"], "Apply");
    assert_eq!(got["json"]["control"]["role"], "Button");
    assert_eq!(got["json"]["window"]["title"], title);
    assert_eq!(got["json"]["window"]["source"], "x11");
    assert!(got["markdown"].as_str().unwrap().contains("Apply"));
    assert!(
        got["controlWindow"]
            .as_str()
            .unwrap()
            .contains("/usr/bin/chromium"),
        "it says which browser shows the page: {got}"
    );
    // The control's token works in the agent's own element tools.
    let token = got["json"]["control"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    let r = server
        .call("get_element_text", json!({ "element": token }))
        .await;
    assert!(text(&r).contains("Apply"), "{}", text(&r));
    // The agent never sees the page's address or token.
    let all = serde_json::to_string(&got).unwrap() + &text(&r);
    assert!(
        !all.contains(&page.token),
        "the token leaked into the result"
    );
    let dir = std::path::PathBuf::from(got["directory"].as_str().unwrap());
    assert!(dir.starts_with(&out.0), "{dir:?}");
    for f in ["context.json", "context.md", "screenshot.png", "crop.png"] {
        assert!(dir.join(f).is_file(), "{f} missing in {dir:?}");
    }
    assert_eq!(
        png_size(&std::fs::read(dir.join("crop.png")).unwrap()),
        (bw as u32, bh as u32)
    );
    let on_disk: Value =
        serde_json::from_slice(&std::fs::read(dir.join("context.json")).unwrap()).unwrap();
    assert_eq!(on_disk["control"]["name"], "Apply");
    // The half directory a killed server left is gone; only whole picks remain.
    assert!(!out.0.join(".tmp-left-by-a-killed-server").exists());
    let r = server.call("ui_context_current", json!({})).await;
    assert_eq!(ok(&r)["directory"], got["directory"], "{}", text(&r));

    // On the real screen: the page steps aside, the real pointer (moved and clicked through
    // XTEST by the test, not through deskpilot) picks the control under it.
    let pick = ask(&server, json!({ "timeoutMs": 120000 }));
    page.until_waiting("the on-screen pick to wait").await;
    let (port_on, token_on) = (page.port, page.token.clone());
    let on_screen = std::thread::spawn(move || {
        Page {
            port: port_on,
            token: token_on,
        }
        .post("/api/pick-on-screen", &json!({ "kind": "control" }))
    });
    let xdotool = |args: &[&str]| {
        let mut cmd = std::process::Command::new("xdotool");
        cmd.args(args);
        desktop.configure(&mut cmd);
        cmd.output().expect("xdotool")
    };
    wait_for(
        Duration::from_secs(20),
        "the on-screen catcher window",
        || async {
            let found = xdotool(&["search", "--name", "deskpilot pick on screen"]);
            (!found.stdout.is_empty()).then_some(())
        },
    )
    .await;
    xdotool(&["mousemove", &(cx - 3).to_string(), &cy.to_string()]);
    xdotool(&["mousemove", &cx.to_string(), &cy.to_string()]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    xdotool(&["click", "1"]);
    let (status, preview) = on_screen.join().unwrap();
    assert_eq!(status, 200, "{preview}");
    assert_eq!(preview["json"]["control"]["name"], "Apply", "{preview}");
    // The pointer is the person's again: nothing of the pick is left on screen.
    assert!(
        xdotool(&["search", "--name", "deskpilot pick on screen"])
            .stdout
            .is_empty()
    );
    let (status, _) = page.post("/api/approve", &json!({}));
    assert_eq!(status, 200);
    let r = pick.await.unwrap();
    assert_eq!(ok(&r)["json"]["control"]["name"], "Apply", "{}", text(&r));

    // A region over the xterm's text: no accessibility there, so the text is OCR's.
    let pick = ask(&server, json!({ "timeoutMs": 120000 }));
    page.until_waiting("the second pick to wait").await;
    let frame = xterm_client(&server).await;
    let (status, preview) = page.post(
        "/api/pick",
        &json!({
            "kind": "region", "x": frame["x"], "y": frame["y"],
            "width": frame["width"], "height": 60,
        }),
    );
    assert_eq!(status, 200, "{preview}");
    assert_eq!(preview["json"]["text"]["source"], "ocr", "{preview}");
    assert!(
        preview["json"]["text"]["value"]
            .as_str()
            .unwrap()
            .contains("4711"),
        "{preview}"
    );
    assert!(preview["markdown"].as_str().unwrap().contains("`ocr`"));
    let (status, _) = page.post("/api/approve", &json!({}));
    assert_eq!(status, 200);
    let r = pick.await.unwrap();
    assert_eq!(ok(&r)["json"]["region"]["source"], "visual", "{}", text(&r));
    let second = ok(&r)["directory"].clone();

    // Cancel: the call says so, and nothing new is written.
    let pick = ask(&server, json!({}));
    page.until_waiting("the third pick to wait").await;
    let (status, _) = page.post("/api/cancel", &json!({}));
    assert_eq!(status, 200);
    let r = pick.await.unwrap();
    assert_eq!(error_code(&r), "PICK_CANCELLED", "{}", text(&r));
    // Nobody picking: the timeout state.
    let r = server
        .call("ui_context_pick", json!({ "timeoutMs": 1000 }))
        .await;
    assert_eq!(error_code(&r), "PICK_TIMEOUT", "{}", text(&r));
    let r = server
        .call("ui_context_pick", json!({ "timeoutMs": 999 }))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{}", text(&r));
    // Current is still the last approved one; clearing forgets it but leaves the files.
    let r = server.call("ui_context_current", json!({})).await;
    assert_eq!(ok(&r)["directory"], second);
    let r = server.call("ui_context_clear", json!({})).await;
    assert_eq!(ok(&r)["cleared"], true);
    let r = server.call("ui_context_current", json!({})).await;
    assert_eq!(ok(&r)["empty"], true);
    assert!(dir.join("context.json").is_file(), "clear deleted files");
    let picks = std::fs::read_dir(&out.0).unwrap().count();
    assert_eq!(picks, 3, "three approved picks, nothing else");

    // The person closing the control window ends a pick.
    let pick = ask(&server, json!({ "timeoutMs": 30000 }));
    let control = wait_for(
        Duration::from_secs(20),
        "the control window's browser",
        || async { control_window_pid() },
    )
    .await;
    // Closed as a person closes it: through the window manager.
    let window = harness::window_of(&server, control).await;
    let r = server
        .call(
            "window",
            json!({ "action": "close", "window_id": window["id"] }),
        )
        .await;
    ok(&r);
    let r = pick.await.unwrap();
    assert_eq!(error_code(&r), "PICK_WINDOW_CLOSED", "{}", text(&r));
    match std::sync::Arc::try_unwrap(server) {
        Ok(s) => s.finish().await,
        Err(_) => panic!("the server is still shared"),
    }
}

/// The app-mode browser the picker opened, if running.
fn control_window_pid() -> Option<u32> {
    std::fs::read_dir("/proc")
        .ok()?
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                let c = String::from_utf8_lossy(&c);
                // The browser process itself, not its zygote or renderers (`--type=…`).
                c.contains("--app=http://127.0.0.1:")
                    && c.contains("deskpilot-picker-")
                    && !c.contains("--type=")
            }) && std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| !s.contains(") Z "))
        })
}

/// An address of this machine that is not loopback, when it has one.
fn non_loopback_address() -> Option<std::net::IpAddr> {
    // The address the default route would use (no packet is sent by connecting UDP).
    let s = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    s.connect("192.0.2.1:9").ok()?;
    let ip = s.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_port_is_a_clear_error_naming_the_variable() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = Scratch::new("taken");
    let server = serve(
        Some(desktop),
        &[],
        &[
            ("MOUSE_POINTER_HTTP_PORT", &port),
            ("DESKPILOT_UI_CONTEXT_DIR", out.arg()),
        ],
    )
    .await;
    let r = server
        .call("ui_context_pick", json!({ "timeoutMs": 1000 }))
        .await;
    assert_eq!(error_code(&r), "PICKER_UNAVAILABLE", "{}", text(&r));
    assert!(text(&r).contains("MOUSE_POINTER_HTTP_PORT"), "{}", text(&r));
    server.finish().await;
}

/// playwright-core's directory: `DESKPILOT_PLAYWRIGHT_CORE`, else where `scripts/test` installs it.
fn playwright_core() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("DESKPILOT_PLAYWRIGHT_CORE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/test-node/node_modules/playwright-core")
        });
    dir.join("package.json").is_file().then_some(dir)
}

#[allow(clippy::print_stderr)]
fn have_playwright() -> Option<std::path::PathBuf> {
    let node = std::process::Command::new("node").arg("--version").output();
    let found = node.is_ok_and(|o| o.status.success())
        && std::path::Path::new("/usr/bin/chromium").exists();
    match (found, playwright_core()) {
        (true, Some(dir)) => Some(dir),
        _ => {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true but node, chromium or playwright-core is missing (scripts/test installs them)"
            );
            eprintln!("SKIP control page test: node, chromium or playwright-core is missing");
            None
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_control_page_hovers_picks_and_approves_in_a_real_browser() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let Some(core) = have_playwright() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let out = Scratch::new("page");
    let port = free_port().to_string();
    let title = "deskpilot page fixture";
    let _fixture = harness::launch(desktop, "/usr/bin/python3", &[FIXTURE, title]);
    let _xterm = marked_xterm(desktop);
    let server = std::sync::Arc::new(
        serve(
            Some(desktop),
            &[],
            &[
                ("MOUSE_POINTER_HTTP_PORT", &port),
                ("DESKPILOT_UI_CONTEXT_DIR", out.arg()),
            ],
        )
        .await,
    );
    let window = harness::listed(&server, title, title).await["id"].clone();
    let r = server
        .call(
            "get_window_state",
            json!({ "window_id": window, "include_screenshot": false }),
        )
        .await;
    let apply = harness::element(ok(&r), "Button", "Apply")["bounds"].clone();
    let (bw, bh) = (
        apply["width"].as_u64().unwrap() as u32,
        apply["height"].as_u64().unwrap() as u32,
    );
    let cx = apply["x"].as_i64().unwrap() + i64::from(bw) / 2;
    let cy = apply["y"].as_i64().unwrap() + i64::from(bh) / 2;
    let pick = ask(&server, json!({ "timeoutMs": 120000 }));
    let page = page_of(&server).await;
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/picker/page.test.mjs");
    let node = |step: &'static str, extra: Vec<(&'static str, String)>| {
        let mut cmd = tokio::process::Command::new("node");
        cmd.arg("--test")
            .arg(&script)
            .env(
                "PAGE_URL",
                format!("http://127.0.0.1:{}/?t={}", page.port, page.token),
            )
            .env("STEP", step)
            .env("TARGET_X", cx.to_string())
            .env("TARGET_Y", cy.to_string())
            .env("PLAYWRIGHT_CORE", &core);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        async move {
            let run = cmd.output().await.expect("node");
            let report = String::from_utf8_lossy(&run.stdout).to_string()
                + &String::from_utf8_lossy(&run.stderr);
            assert!(
                run.status.success(),
                "node --test ({step}) failed:\n{report}"
            );
            assert!(report.contains("# pass 1"), "{report}");
        }
    };
    node("control", Vec::new()).await;
    let r = tokio::time::timeout(Duration::from_secs(30), pick)
        .await
        .expect("the pick to return after approval")
        .unwrap();
    let got = ok(&r);
    assert_eq!(got["json"]["control"]["name"], "Apply", "{}", text(&r));
    assert_eq!(got["json"]["control"]["source"], "atspi");
    let dir = std::path::PathBuf::from(got["directory"].as_str().unwrap());
    assert_eq!(
        png_size(&std::fs::read(dir.join("crop.png")).unwrap()),
        (bw, bh)
    );

    // A region dragged over the xterm's text: OCR'd, approved.
    let frame = xterm_client(&server).await;
    let pick = ask(&server, json!({ "timeoutMs": 120000 }));
    page.until_waiting("the region pick to wait").await;
    let region = format!("{},{},{},60", frame["x"], frame["y"], frame["width"]);
    node(
        "region",
        vec![("REGION", region), ("EXPECT_TEXT", "4711".to_string())],
    )
    .await;
    let r = pick.await.unwrap();
    assert_eq!(ok(&r)["json"]["text"]["source"], "ocr", "{}", text(&r));
    assert!(
        ok(&r)["json"]["text"]["value"]
            .as_str()
            .unwrap()
            .contains("4711")
    );

    // Cancel on the page: the agent gets the cancelled state, nothing else.
    let pick = ask(&server, json!({ "timeoutMs": 120000 }));
    page.until_waiting("the third pick to wait").await;
    node("cancel", Vec::new()).await;
    let r = pick.await.unwrap();
    assert_eq!(error_code(&r), "PICK_CANCELLED", "{}", text(&r));
    assert_eq!(std::fs::read_dir(&out.0).unwrap().count(), 2);
    match std::sync::Arc::try_unwrap(server) {
        Ok(s) => s.finish().await,
        Err(_) => panic!("the server is still shared"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ui_context_profile_is_exactly_ui_context_protocols_three_tools() {
    let out = Scratch::new("profile");
    let server = serve(
        None,
        &["--profile", "ui-context"],
        &[("DESKPILOT_UI_CONTEXT_DIR", out.arg())],
    )
    .await;
    let tools = server.client.list_all_tools().await.unwrap();
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        ["ui_context_clear", "ui_context_current", "ui_context_pick"]
    );
    let pick = tools.iter().find(|t| t.name == "ui_context_pick").unwrap();
    assert!(
        pick.input_schema["properties"]
            .as_object()
            .unwrap()
            .contains_key("timeoutMs"),
        "{:?}",
        pick.input_schema
    );
    let r = server.call("ui_context_current", json!({})).await;
    assert_eq!(ok(&r)["empty"], true, "{}", text(&r));
    let r = server
        .call("ui_context_pick", json!({ "timeoutMs": 600001 }))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{}", text(&r));
    let Value::Object(args) = json!({ "x": 1, "y": 1 }) else {
        unreachable!()
    };
    let refused = server
        .client
        .call_tool(rmcp::model::CallToolRequestParams::new("click").with_arguments(args))
        .await;
    assert!(refused.is_err(), "the profile has no click");
    server.finish().await;
}
