//! Hostile bytes at the real binary's two doors: junk lines on stdio (invalid UTF-8,
//! truncated and mistyped JSON-RPC, batches, a megabyte line, unknown methods) between real
//! calls, and junk bodies POSTed to `/mcp`. The real calls are still answered, stdout holds
//! nothing but JSON-RPC, HTTP answers are never 5xx, and a real client works after.
//! `DESKPILOT_FUZZ_ROUNDS` sets how much junk (default 300 lines / bodies).

use std::io::{BufRead as _, Write as _};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn rounds() -> usize {
    std::env::var("DESKPILOT_FUZZ_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300)
}

#[allow(clippy::print_stderr)] // the seed, so a failing run can be replayed
fn seed() -> u64 {
    let s = std::env::var("DESKPILOT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(7, |d| d.as_nanos() as u64)
                | 1
        });
    eprintln!("fuzz: seed {s} (DESKPILOT_FUZZ_SEED replays it)");
    s
}

/// One junk message (no newline inside, so it stays one line on stdio).
fn junk(rng: &mut Rng) -> Vec<u8> {
    let valid_call = json!({"jsonrpc":"2.0","id":"j","method":"tools/call","params":{"name":"list_windows","arguments":{}}}).to_string();
    match rng.below(12) {
        0 => (0..rng.below(200)).map(|_| (rng.next() % 256) as u8).filter(|b| *b != b'\n').collect(),
        1 => valid_call.as_bytes()[..rng.below(valid_call.len())].to_vec(),
        2 => b"[]".to_vec(),
        3 => format!("[{valid_call},{valid_call}]").into_bytes(),
        4 => br#"{"jsonrpc":"2.0","id":{"nested":[1,2]},"method":"tools/call","params":{"name":"click","arguments":{"x":"NaN"}}}"#.to_vec(),
        5 => br#"{"jsonrpc":"1.0","id":1,"method":"tools/list"}"#.to_vec(),
        6 => br#"{"jsonrpc":"2.0","method":"notifications/no_such_thing","params":{"x":1}}"#.to_vec(),
        7 => br#"{"jsonrpc":"2.0","id":99,"method":"no/such/method"}"#.to_vec(),
        8 => format!(r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"type_text","arguments":{{"text":"{}"}}}}}}"#, "x".repeat(rng.below(3) * 300_000)).into_bytes(),
        9 => br#"{"jsonrpc":"2.0","id":null,"result":{}}"#.to_vec(),
        10 => "\u{feff}{\"jsonrpc\":\"2.0\"}".as_bytes().to_vec(),
        _ => br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"screenshot","arguments":[1,2,3]}}"#.to_vec(),
    }
}

#[test]
fn junk_lines_on_stdio_between_real_calls() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let mut rng = Rng(seed());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_deskpilot"));
    cmd.arg("serve")
        .env("DESKPILOT_MEMORY_DIR", harness::fresh_memory_dir())
        .env("DESKPILOT_CURSOR", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    desktop.configure(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let out: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = out.clone();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            match line {
                Ok(l) => sink.lock().unwrap().push(l),
                Err(e) => sink.lock().unwrap().push(format!("NOT UTF-8: {e}")),
            }
        }
    });
    let send = |stdin: &mut std::process::ChildStdin, bytes: &[u8]| {
        stdin.write_all(bytes).unwrap();
        stdin.write_all(b"\n").unwrap();
    };
    send(&mut stdin, json!({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}).to_string().as_bytes());
    send(
        &mut stdin,
        br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    let n = rounds();
    let mut real = Vec::new();
    for i in 0..n {
        // A write may fail only if the server hung up: that is the finding.
        stdin
            .write_all(&junk(&mut rng))
            .and_then(|()| stdin.write_all(b"\n"))
            .unwrap_or_else(|e| panic!("the server stopped reading after {i} junk lines: {e}"));
        if i % 25 == 0 {
            let id = format!("real-{i}");
            send(&mut stdin, json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"list_windows","arguments":{}}}).to_string().as_bytes());
            real.push(id);
        }
    }
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let answered: Vec<Value> = out
            .lock()
            .unwrap()
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect();
        let missing: Vec<&String> = real
            .iter()
            .filter(|id| {
                !answered.iter().any(|v| {
                    v["id"] == id.as_str() && v["result"]["structuredContent"]["windows"].is_array()
                })
            })
            .collect();
        if missing.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "real calls not answered among the junk: {missing:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    for line in out.lock().unwrap().iter() {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line:.200}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line:.200}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn junk_bodies_posted_to_mcp() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let mut rng = Rng(seed());
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_deskpilot"));
    cmd.args(["serve", "--http", "127.0.0.1:0", "--no-auth"])
        .env("DESKPILOT_MEMORY_DIR", harness::fresh_memory_dir())
        .env("DESKPILOT_CURSOR", "off")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    desktop.configure(&mut cmd);
    let mut child = cmd.spawn().unwrap();
    let err = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            if let Some((_, url)) = line.split_once(" at ") {
                let _ = tx.send(url.to_string());
            }
        }
    });
    let url = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the address");
    let http = reqwest::Client::new();
    // A session to aim some junk at.
    let init = http
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}).to_string())
        .send()
        .await
        .unwrap();
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_string();
    drop(init);
    let content_types = [
        "application/json",
        "text/plain",
        "",
        "application/json; charset=utf-16",
    ];
    for i in 0..rounds() {
        let body = junk(&mut rng);
        let mut req = http
            .post(&url)
            .header("accept", "application/json, text/event-stream")
            .timeout(Duration::from_secs(20));
        let ct = content_types[rng.below(content_types.len())];
        if !ct.is_empty() {
            req = req.header("content-type", ct);
        }
        if i % 2 == 0 {
            req = req.header("mcp-session-id", &session);
        }
        let r = match req.body(body.clone()).send().await {
            Ok(r) => r,
            // The server may close a connection on a body it will not read: fine, as long
            // as it still answers.
            Err(_) => {
                let h = http
                    .get(url.replace("/mcp", "/healthz"))
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("the server is gone after junk body {i}: {e}"));
                assert_eq!(h.status().as_u16(), 200);
                continue;
            }
        };
        assert!(
            r.status().as_u16() < 500,
            "{} for {:?}",
            r.status(),
            String::from_utf8_lossy(&body[..body.len().min(200)])
        );
    }
    // Still serving.
    let config =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.clone(),
        );
    let client = rmcp::ServiceExt::serve(
        (),
        rmcp::transport::StreamableHttpClientTransport::from_config(config),
    )
    .await
    .unwrap();
    assert!(!client.list_all_tools().await.unwrap().is_empty());
    drop(client);
    let _ = child.kill();
    let _ = child.wait();
}
