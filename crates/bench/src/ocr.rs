//! The OCR rows: `ocr` through MCP on a full 1920×1080 screen and on an 800×600 window, beside
//! the `tesseract` command line run on the same pixels (saved as PNG) in the same run, and the
//! share of the OCR fixture's strings each one found.
//!
//! A desktop of its own keeps the scene fixed: the OCR fixture (English and Chinese, dark on
//! light and light on dark), a terminal full of text and an editor. deskpilot's rows are cold
//! reads (the worker's memory of unchanged bands switched off with `DESKPILOT_OCR_NO_CACHE`),
//! plus one row for a repeated read of the unchanged screen with memory on, as agents use it.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

use crate::Sample;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/ocr_fixture.py");
const TITLE: &str = "deskpilot-bench ocr fixture";
/// What the fixture draws (see fixtures/ocr_fixture.py).
const STRINGS: &[&str] = &[
    "Save",
    "Open Recent Files",
    "Quarterly Report 2026",
    "保存文件",
    "Delete Everything",
    "取消操作",
    "设置中心",
    "Status: Ready",
    "Privacy Secret 7731",
    "网络连接已断开",
    "Export as PDF",
];

fn squeeze(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase()
}

/// How many fixture strings `text` holds.
fn recall(text: &str) -> usize {
    let text = squeeze(text);
    STRINGS
        .iter()
        .filter(|s| text.contains(&squeeze(s)))
        .count()
}

fn lines_text(v: &Value) -> String {
    v["lines"]
        .as_array()
        .map(|ls| {
            ls.iter()
                .filter_map(|l| l["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

pub fn run(
    binary: &Path,
    runtime: &tokio::runtime::Runtime,
    quick: bool,
) -> anyhow::Result<Vec<Sample>> {
    let n = if quick { 2 } else { 6 };
    let peer_n = if quick { 1 } else { 3 };
    let vd = deskpilot_x11::VirtualDisplay::start(deskpilot_x11::VirtualDisplayOptions::default())?;
    let tmp = std::env::temp_dir().join(format!("deskpilot-bench-ocr-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let mut apps = Vec::new();
    for (program, argv) in [
        (
            "xterm",
            vec![
                "-geometry",
                "110x45+0+0",
                "-e",
                "sh",
                "-c",
                "ls -l /usr/bin | head -60; sleep 1000",
            ],
        ),
        ("mousepad", vec!["--disable-server", "/etc/services"]),
        ("/usr/bin/python3", vec![FIXTURE, TITLE, "800", "600"]),
    ] {
        let mut cmd = Command::new(program);
        cmd.args(&argv).stdout(Stdio::null()).stderr(Stdio::null());
        vd.configure(&mut cmd);
        if let Ok(child) = cmd.spawn() {
            apps.push(child);
        }
    }
    std::thread::sleep(Duration::from_secs(3));
    let result = runtime.block_on(measure(binary, &vd, &tmp, n, peer_n));
    for mut app in apps {
        let _ = app.kill();
        let _ = app.wait();
    }
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

async fn measure(
    binary: &Path,
    vd: &deskpilot_x11::VirtualDisplay,
    tmp: &Path,
    n: usize,
    peer_n: usize,
) -> anyhow::Result<Vec<Sample>> {
    let command = |cold: bool| {
        tokio::process::Command::new(binary).configure(|cmd| {
            cmd.arg("serve")
                .env("DESKPILOT_LOG", "warn")
                .env("DESKPILOT_MEMORY_DIR", crate::bench_memory_dir())
                .stderr(Stdio::null());
            if cold {
                cmd.env("DESKPILOT_OCR_NO_CACHE", "1");
            }
            for (k, v) in vd.env() {
                cmd.env(k, v);
            }
        })
    };
    let call = |args: Value| {
        let Value::Object(map) = args else {
            unreachable!("arguments are objects")
        };
        CallToolRequestParams::new("ocr").with_arguments(map)
    };
    let mut samples = Vec::new();
    let client = ().serve(TokioChildProcess::new(command(true))?).await?;
    // The fixture in front, so both reads see all of it.
    let listed = client
        .call_tool(
            CallToolRequestParams::new("window").with_arguments(
                json!({ "action": "focus", "title_match": TITLE })
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await?;
    let window = listed
        .structured_content
        .as_ref()
        .and_then(|s| s["window"]["id"].as_u64());
    // Warm-up: starts the worker and its engines.
    client.call_tool(call(json!({}))).await?;
    for (label, args) in [
        ("screen 1920x1080", json!({})),
        ("window 800x600", json!({ "title_match": TITLE })),
    ] {
        let mut times = Vec::new();
        let mut found = 0;
        let mut lines = 0;
        let mut reported = 0.0;
        for _ in 0..n {
            let started = Instant::now();
            let r = client.call_tool(call(args.clone())).await?;
            times.push(started.elapsed());
            anyhow::ensure!(r.is_error != Some(true), "ocr failed: {r:?}");
            let v = r.structured_content.unwrap_or_default();
            found = recall(&lines_text(&v));
            lines = v["lines"].as_array().map_or(0, Vec::len);
            reported = v["elapsed_ms"].as_f64().unwrap_or(0.0);
        }
        samples.push(Sample {
            name: format!("deskpilot ocr {label} via MCP (cold)"),
            times,
            note: format!(
                "eng+chi_sim; found {found}/{} fixture strings, {lines} lines; engine {reported:.0} ms of it",
                STRINGS.len()
            ),
        });
    }
    client.cancel().await?;

    // Memory on: a repeated read of an unchanged screen.
    let client = ().serve(TokioChildProcess::new(command(false))?).await?;
    client.call_tool(call(json!({}))).await?;
    let mut times = Vec::new();
    let mut found = 0;
    for _ in 0..n {
        let started = Instant::now();
        let r = client.call_tool(call(json!({}))).await?;
        times.push(started.elapsed());
        found = recall(&lines_text(&r.structured_content.unwrap_or_default()));
    }
    samples.push(Sample {
        name: "deskpilot ocr screen, unchanged (memory on)".into(),
        times,
        note: format!(
            "bands whose pixels did not change are not read again; found {found}/{}",
            STRINGS.len()
        ),
    });
    client.cancel().await?;

    // The same pixels for the command line: the screen, and the fixture window.
    let screen = tmp.join("screen.png");
    let win = tmp.join("window.png");
    let grab = |target: &str, out: &Path| -> anyhow::Result<()> {
        let mut cmd = Command::new("import");
        cmd.args(["-window", target])
            .arg(out)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        vd.configure(&mut cmd);
        anyhow::ensure!(cmd.status()?.success(), "import -window {target} failed");
        Ok(())
    };
    let images = grab("root", &screen).and_then(|_| {
        let id = window.ok_or_else(|| anyhow::anyhow!("the fixture window was not found"))?;
        grab(&format!("0x{id:x}"), &win)
    });
    for (label, image) in [("screen 1920x1080", &screen), ("window 800x600", &win)] {
        for (variant, threads) in [("default threads", None), ("OMP_THREAD_LIMIT=1", Some("1"))] {
            let name = format!("tesseract CLI {label} ({variant})");
            if let Err(e) = &images {
                samples.push(Sample {
                    name,
                    times: Vec::new(),
                    note: format!("missing: {e:#}"),
                });
                continue;
            }
            let run = || -> anyhow::Result<(Duration, String)> {
                let mut cmd = Command::new("tesseract");
                cmd.arg(image)
                    .arg("-")
                    .args(["-l", "eng+chi_sim"])
                    .stderr(Stdio::null());
                if let Some(t) = threads {
                    cmd.env("OMP_THREAD_LIMIT", t);
                }
                let started = Instant::now();
                let out = cmd.output()?;
                anyhow::ensure!(out.status.success(), "tesseract failed");
                Ok((
                    started.elapsed(),
                    String::from_utf8_lossy(&out.stdout).into_owned(),
                ))
            };
            let mut times = Vec::new();
            let mut found = 0;
            let mut failure = None;
            for _ in 0..peer_n {
                match run() {
                    Ok((t, text)) => {
                        times.push(t);
                        found = recall(&text);
                    }
                    Err(e) => {
                        failure = Some(e);
                        break;
                    }
                }
            }
            samples.push(match failure {
                Some(e) => Sample {
                    name,
                    times: Vec::new(),
                    note: format!("missing: {e:#}"),
                },
                None => Sample {
                    name,
                    times,
                    note: format!(
                        "eng+chi_sim, PNG from import; found {found}/{} fixture strings",
                        STRINGS.len()
                    ),
                },
            });
        }
    }
    Ok(samples)
}
