//! Secrets through the browser route: a login page served by the test on loopback receives a
//! secret typed by name (`browser_type` / `browser_fill` with `secret`), and the server's log of
//! the POST is the oracle that the exact value arrived. The refusals (an unknown name, a field
//! that is not a password field, a page of another origin) each have their code and type
//! nothing. Then every MCP response of the test, deskpilot's stderr at `DESKPILOT_LOG=debug` and
//! its memory directory are searched for the value and every 4-character slice of it: no hit.
//! The page's screenshot shows the password field as a solid box.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::harness::{self, error_code, image, ok, serve, text, wait_for};

/// The secret's value: characters a form body percent-encodes (`#`, `!`, `&`), so an encoded
/// copy would show too.
const VALUE: &str = "Qz7#vK9!mP2&xW4";

const LOGIN: &str = "<!doctype html><html><head><title>Sign in</title></head><body>\
<form method=post action=/login>\
<p><label>User <input name=user id=user></label></p>\
<p><label>Password <input type=password name=pass id=pass></label></p>\
<p><button type=submit>Sign in</button></p></form></body></html>";

const WELCOME: &str = "<!doctype html><html><head><title>Welcome</title></head><body><h1>Signed in</h1></body></html>";

/// Serves the login page on a loopback port; every POST body is kept, in order.
fn site() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let posts = Arc::new(Mutex::new(Vec::new()));
    let kept = posts.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let kept = kept.clone();
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
                let mut words = first.split_whitespace();
                let (method, path) = (words.next().unwrap_or(""), words.next().unwrap_or("/"));
                let (status, body) = match (method, path) {
                    ("POST", "/login") => {
                        kept.lock()
                            .unwrap()
                            .push(String::from_utf8_lossy(&sent).into_owned());
                        ("200 OK", WELCOME)
                    }
                    ("GET", "/") => ("200 OK", LOGIN),
                    _ => ("404 Not Found", "missing"),
                };
                let mut s = &stream;
                let _ = write!(
                    s,
                    "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    (port, posts)
}

/// The value of `key` in a form body (`a=1&b=x%40y`), decoded.
fn form_value(body: &str, key: &str) -> Option<String> {
    body.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=')?;
        (k == key).then(|| {
            let bytes = v.replace('+', " ").into_bytes();
            let mut out = Vec::new();
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i] == b'%' && i + 2 < bytes.len() {
                    let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                    out.push(u8::from_str_radix(hex, 16).unwrap());
                    i += 3;
                } else {
                    out.push(bytes[i]);
                    i += 1;
                }
            }
            String::from_utf8(out).unwrap()
        })
    })
}

/// The ref on the snapshot line holding `needle`.
fn ref_of(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no {needle:?} in:\n{snapshot}"));
    let at = line.find("[ref=").expect("a ref");
    line[at + 5..].split(']').next().unwrap().to_string()
}

/// Every text of a result: its text blocks and its structured content.
fn said(r: &CallToolResult) -> String {
    format!(
        "{}\n{}",
        text(r),
        r.structured_content
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default()
    )
}

/// Where `text` holds the value or any 4-character slice of it.
fn leaks(text: &str) -> Vec<&'static str> {
    (0..=VALUE.len() - 4)
        .map(|i| &VALUE[i..i + 4])
        .filter(|slice| text.contains(slice))
        .collect()
}

fn files_under(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

#[allow(clippy::print_stderr)]
fn have_chromium() -> bool {
    let found = std::path::Path::new("/usr/bin/chromium").exists();
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but chromium is missing (scripts/install-deps test installs it)"
        );
        eprintln!("SKIP browser secrets test: chromium is not installed");
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_typed_by_name_reaches_the_page_and_nothing_else_holds_it() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    if !have_chromium() {
        return;
    }
    let _guard = harness::exclusive().await;
    let (port, posts) = site();
    let config = crate::safety::ConfigFile::new(
        "browser-secrets",
        "secretsKeyring = false\n[secrets.SITE_PASS]\norigins = [\"http://127.0.0.1:*\"]\n",
    );
    let memory = harness::fresh_memory_dir();
    let server = serve(
        Some(desktop),
        &["--config", config.arg()],
        &[
            ("DESKPILOT_SECRET_SITE_PASS", VALUE),
            ("DESKPILOT_LOG", "debug"),
            ("DESKPILOT_MEMORY_DIR", memory.to_str().unwrap()),
        ],
    )
    .await;
    let transcript = Mutex::new(Vec::<String>::new());
    let call = |tool: &'static str, args: Value| {
        let server = &server;
        let transcript = &transcript;
        async move {
            let r = server.call(tool, args).await;
            transcript
                .lock()
                .unwrap()
                .push(format!("{tool}: {}", said(&r)));
            r
        }
    };

    let r = call(
        "browser_launch",
        json!({ "url": format!("http://127.0.0.1:{port}/"), "headless": true }),
    )
    .await;
    ok(&r);
    let snap = wait_for(Duration::from_secs(20), "the login page", || async {
        let r = call("browser_snapshot", json!({})).await;
        let t = ok(&r)["text"].as_str()?.to_string();
        t.contains("Sign in").then_some(t)
    })
    .await;
    let user = ref_of(&snap, "textbox \"User\"");
    let pass = ref_of(&snap, "textbox \"Password\"");
    assert!(
        snap.contains(&format!("textbox \"Password\" [password] [ref={pass}]")),
        "the password field says it is one:\n{snap}"
    );
    let field = |id: &'static str| {
        let call = &call;
        async move {
            let r = call(
                "browser_eval",
                json!({ "expression": format!("document.getElementById('{id}').value") }),
            )
            .await;
            ok(&r)["value"].as_str().unwrap_or_default().to_string()
        }
    };

    // Refusals, each with its code, and nothing typed.
    let r = call(
        "browser_type",
        json!({ "ref": pass, "secret": "NO_SUCH_SECRET" }),
    )
    .await;
    assert_eq!(error_code(&r), "SECRET_UNKNOWN", "{}", text(&r));
    assert!(
        text(&r).contains("SITE_PASS"),
        "names the known: {}",
        text(&r)
    );
    let r = call(
        "browser_type",
        json!({ "ref": user, "secret": "SITE_PASS" }),
    )
    .await;
    assert_eq!(error_code(&r), "SECRET_NOT_PASSWORD_FIELD", "{}", text(&r));
    assert!(text(&r).contains("textbox \"User\""), "{}", text(&r));
    let r = call(
        "browser_fill",
        json!({ "fields": [{ "ref": user, "secret": "SITE_PASS" }] }),
    )
    .await;
    assert_eq!(error_code(&r), "SECRET_NOT_PASSWORD_FIELD", "{}", text(&r));
    let r = call(
        "browser_type",
        json!({ "ref": pass, "secret": "SITE_PASS", "text": "x" }),
    )
    .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT", "{}", text(&r));
    assert_eq!(field("user").await, "", "the user field took nothing");
    assert_eq!(field("pass").await, "", "the password field took nothing");

    // Text an agent types into a password field itself is not echoed back either; the secret
    // typed next replaces it.
    let r = call(
        "browser_type",
        json!({ "ref": pass, "text": "typed-in-plain" }),
    )
    .await;
    assert!(
        !text(&r).contains("typed-in-plain") && text(&r).contains("(password field, filled)"),
        "{}",
        text(&r)
    );

    // Typed by name: the result names the secret and the field, the page holds the value.
    let r = call(
        "browser_type",
        json!({ "ref": pass, "secret": "SITE_PASS" }),
    )
    .await;
    let typed = text(&r);
    assert!(
        typed.contains(&format!(
            "typed secret SITE_PASS into textbox \"Password\" [ref={pass}]"
        )),
        "{typed}"
    );
    assert_eq!(ok(&r)["changed"], true, "{typed}");
    assert_eq!(ok(&r)["value"], Value::Null, "{typed}");
    // Reading the field back with a script gives the placeholder, not the value.
    assert_eq!(field("pass").await, "<secret SITE_PASS>");
    let r = call(
        "browser_eval",
        json!({ "expression": format!("document.getElementById('pass').value === {}", json!(VALUE)) }),
    )
    .await;
    assert_eq!(ok(&r)["value"], true, "the page holds the exact value");

    // The snapshot shows the field without value, mask or length.
    let r = call("browser_snapshot", json!({})).await;
    let snap = ok(&r)["text"].as_str().unwrap().to_string();
    let line = snap.lines().find(|l| l.contains(&pass)).unwrap();
    assert!(
        line.contains("[password]") && !line.contains("value=") && !snap.contains('•'),
        "{snap}"
    );

    // The screenshot paints the field over: its inside is solid black, the user field's not.
    let r = call(
        "browser_eval",
        json!({ "expression": "JSON.stringify([innerWidth, ...['pass', 'user'].flatMap(id => { const r = document.getElementById(id).getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })])" }),
    )
    .await;
    let geometry: Vec<f64> = serde_json::from_str(ok(&r)["value"].as_str().unwrap()).unwrap();
    let r = call("browser_screenshot", json!({ "format": "png" })).await;
    assert!(ok(&r)["masked_regions"].as_u64() >= Some(1), "{}", text(&r));
    let (w, h, rgb) = image(&r);
    let scale = f64::from(w) / geometry[0];
    let inside = |b: &[f64]| {
        let (l, t) = (
            (b[0] * scale).ceil() as u32 + 2,
            (b[1] * scale).ceil() as u32 + 2,
        );
        let (r, bo) = ((b[2] * scale) as u32 - 2, (b[3] * scale) as u32 - 2);
        assert!(r > l && bo > t && r <= w && bo <= h, "{b:?} in {w}x{h}");
        (t..bo).flat_map(move |y| (l..r).map(move |x| (x, y)))
    };
    let px = |(x, y): (u32, u32)| {
        let i = ((y * w + x) * 3) as usize;
        [rgb[i], rgb[i + 1], rgb[i + 2]]
    };
    let mut black = inside(&geometry[1..5]).map(px);
    assert!(
        black.all(|p| p.iter().all(|c| *c <= 8)),
        "the password field is painted over"
    );
    assert!(
        inside(&geometry[5..9]).map(px).any(|p| p != [0, 0, 0]),
        "the user field is not"
    );

    // A whole form: a user name and the secret in one call; then sign in.
    let r = call(
        "browser_fill",
        json!({ "fields": [{ "ref": user, "value": "ada" }, { "ref": pass, "secret": "SITE_PASS" }] }),
    )
    .await;
    assert!(
        said(&r).contains("\"secret\":\"SITE_PASS\""),
        "{}",
        said(&r)
    );
    let snap = ok(&call("browser_snapshot", json!({})).await)["text"]
        .as_str()
        .unwrap()
        .to_string();
    ok(&call(
        "browser_click",
        json!({ "ref": ref_of(&snap, "button \"Sign in\"") }),
    )
    .await);
    let body = wait_for(Duration::from_secs(10), "the POST", || async {
        posts.lock().unwrap().first().cloned()
    })
    .await;
    assert_eq!(
        form_value(&body, "user").as_deref(),
        Some("ada"),
        "{body:?}"
    );
    assert!(
        form_value(&body, "pass").as_deref() == Some(VALUE),
        "the server received another password"
    );
    // The browser's log of that request shows the placeholder, not the encoded value.
    let r = call(
        "browser_log",
        json!({ "kind": "network", "filter": "/login" }),
    )
    .await;
    let seq = ok(&r)["requests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["method"] == "POST")
        .and_then(|q| q["seq"].as_u64())
        .unwrap_or_else(|| panic!("no POST in {}", text(&r)));
    let r = call("browser_log", json!({ "kind": "network", "request": seq })).await;
    assert!(text(&r).contains("pass=<secret SITE_PASS>"), "{}", text(&r));

    // A page of another origin (localhost, not 127.0.0.1): out of the scope, nothing typed.
    ok(&call(
        "browser_navigate",
        json!({ "url": format!("http://localhost:{port}/") }),
    )
    .await);
    let snap = wait_for(
        Duration::from_secs(20),
        "the login page on localhost",
        || async {
            let r = call("browser_snapshot", json!({})).await;
            let t = ok(&r)["text"].as_str()?.to_string();
            t.contains("Sign in").then_some(t)
        },
    )
    .await;
    let pass = ref_of(&snap, "textbox \"Password\"");
    let r = call(
        "browser_type",
        json!({ "ref": pass, "secret": "SITE_PASS" }),
    )
    .await;
    assert_eq!(error_code(&r), "SECRET_OUT_OF_SCOPE", "{}", text(&r));
    assert!(
        text(&r).contains(&format!("http://localhost:{port}")),
        "{}",
        text(&r)
    );
    assert_eq!(field("pass").await, "");
    assert_eq!(posts.lock().unwrap().len(), 1);

    // The timeline says which secret went where, and who let it.
    let r = call("memory_timeline", json!({ "limit": 200 })).await;
    assert!(
        said(&r).contains("secret SITE_PASS typed (filled; no approval required)"),
        "{}",
        text(&r)
    );

    // Nothing deskpilot said, logged or wrote holds the value or a slice of it.
    let stderr = server.stderr();
    assert!(
        stderr.iter().any(|l| l.contains("DEBUG")),
        "stderr is at debug level"
    );
    server.finish().await;
    for said in transcript.lock().unwrap().iter() {
        assert!(leaks(said).is_empty(), "a response holds {:?}", leaks(said));
    }
    for line in &stderr {
        assert!(leaks(line).is_empty(), "stderr holds {:?}", leaks(line));
    }
    let mut files = Vec::new();
    files_under(&memory, &mut files);
    for f in &files {
        let content = String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned();
        assert!(
            leaks(&content).is_empty(),
            "{} holds {:?}",
            f.display(),
            leaks(&content)
        );
    }
    let _ = std::fs::remove_dir_all(&memory);
}

/// The desktop route into the same login page: Chromium on the desktop (deskpilot starts it
/// with its accessibility on), the password field found in the window's tree, `type_secret`
/// by token, Enter — and the POST holds the value.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desktop_route_types_a_secret_into_a_web_login_page() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    if !have_chromium() {
        return;
    }
    let _guard = harness::exclusive().await;
    let (port, posts) = site();
    let config = crate::safety::ConfigFile::new(
        "browser-secrets-desktop",
        "secretsKeyring = false\n[secrets.DESK_PASS]\nwindows = [\"Sign in\"]\n",
    );
    let server = serve(
        Some(desktop),
        &["--config", config.arg()],
        &[
            ("DESKPILOT_SECRET_DESK_PASS", VALUE),
            ("DESKPILOT_LOG", "debug"),
        ],
    )
    .await;
    let r = server
        .call(
            "browser_launch",
            json!({ "url": format!("http://127.0.0.1:{port}/"), "headless": false }),
        )
        .await;
    ok(&r);
    let pass = wait_for(
        Duration::from_secs(30),
        "the password field in Chromium's tree",
        || async {
            let r = server
                .call(
                    "get_window_state",
                    json!({ "title_match": "Sign in", "include_screenshot": false }),
                )
                .await;
            if r.is_error == Some(true) {
                return None;
            }
            ok(&r)["elements"]
                .as_array()?
                .iter()
                .find(|e| e["password"] == true)
                .cloned()
        },
    )
    .await;
    let r = server
        .call(
            "type_secret",
            json!({ "name": "DESK_PASS", "element": pass["token"] }),
        )
        .await;
    let typed = ok(&r).clone();
    assert_eq!(typed["password_field"], true, "{typed}");
    assert!(
        text(&r).starts_with("Typed secret DESK_PASS into"),
        "{}",
        text(&r)
    );
    ok(&server.call("press_key", json!({ "keys": "Return" })).await);
    let body = wait_for(Duration::from_secs(10), "the login POST", || async {
        posts.lock().unwrap().first().cloned()
    })
    .await;
    assert_eq!(form_value(&body, "pass").as_deref(), Some(VALUE), "{body}");
    let stdout = server.stdout_lines().join("\n");
    let stderr = server.stderr().join("\n");
    let _ = server.call("browser_close", json!({})).await;
    server.finish().await;
    assert!(
        leaks(&stdout).is_empty(),
        "an MCP message holds {:?}",
        leaks(&stdout)
    );
    assert!(
        leaks(&stderr).is_empty(),
        "stderr holds {:?}",
        leaks(&stderr)
    );
}
