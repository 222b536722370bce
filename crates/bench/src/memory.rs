//! Memory and perception through rmcp's client: `perceive` over the desktop's windows,
//! `memory_recall`, a memory write (the state file saved atomically), the size memory takes on
//! disk after many timeline entries, and the dHash separation of real windows — every window's
//! own pixels hashed by a `screenshot` (as memory does for any client) and read back from the
//! state file, printed as a pairwise Hamming distance matrix.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

use crate::Sample;
use crate::dsh::{call, timed};

/// Extra windows for the hash matrix, killed when dropped.
struct Extra(Vec<Child>);

impl Drop for Extra {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// What the memory part of the benchmark found besides timings: the hash matrix and sizes.
pub struct Report {
    pub lines: Vec<String>,
}

fn hashes(dir: &Path) -> anyhow::Result<Vec<(u64, u64)>> {
    let text = std::fs::read_to_string(dir.join("memory.json"))?;
    let v: Value = serde_json::from_str(&text)?;
    Ok(v["windows"]["windows"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|w| Some((w["id"].as_u64()?, w["dhash"].as_u64()?)))
                .collect()
        })
        .unwrap_or_default())
}

fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok()?.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// The rows and the report, on the main benchmark's desktop (`env`) with its apps running.
pub async fn run(
    binary: &Path,
    env: Vec<(String, String)>,
    n: usize,
    quick: bool,
    tmp: &Path,
) -> anyhow::Result<(Vec<Sample>, Report)> {
    let dir: PathBuf = tmp.join("memory");
    let _ = std::fs::remove_dir_all(&dir);
    // More windows of other kinds: dialogs, a browser, and two xterms showing the same text
    // (identical content in two windows).
    let mut extra = Extra(Vec::new());
    let chrome_profile = tmp.join("chromium-profile");
    let page = "data:text/html,<title>deskpilot bench page</title><h1>Memory bench</h1><p>A paragraph of text, a <a href=%23>link</a> and a <button>button</button>.</p>";
    let same = "printf 'identical content\\nline two\\n'; sleep 1000";
    for (program, argv) in [
        (
            "zenity",
            vec![
                "--info",
                "--title=deskpilot bench info",
                "--text=Nothing to see",
            ],
        ),
        (
            "zenity",
            vec![
                "--entry",
                "--title=deskpilot bench entry",
                "--text=Your name",
            ],
        ),
        (
            "xterm",
            vec![
                "-T",
                "deskpilot twin",
                "-geometry",
                "40x6+40+760",
                "-e",
                "sh",
                "-c",
                same,
            ],
        ),
        (
            "xterm",
            vec![
                "-T",
                "deskpilot twin",
                "-geometry",
                "40x6+420+760",
                "-e",
                "sh",
                "-c",
                same,
            ],
        ),
        (
            "chromium",
            vec![
                "--no-first-run",
                // Root (CI) cannot use Chromium's sandbox.
                "--no-sandbox",
                "--no-default-browser-check",
                // A desktop keyring on the session bus would otherwise hold its start.
                "--password-store=basic",
                "--disable-gpu",
                "--window-size=700,500",
                "--window-position=1100,60",
                &format!("--user-data-dir={}", chrome_profile.display()),
                &format!("--app={page}"),
            ],
        ),
    ] {
        let mut cmd = Command::new(program);
        cmd.args(&argv).stdout(Stdio::null()).stderr(Stdio::null());
        for (k, v) in &env {
            cmd.env(k, v);
        }
        if let Ok(c) = cmd.spawn() {
            extra.0.push(c);
        }
    }

    let command = tokio::process::Command::new(binary).configure(|cmd| {
        cmd.arg("serve")
            .env("DESKPILOT_LOG", "warn")
            .env("DESKPILOT_CURSOR", "off")
            .env("DESKPILOT_MEMORY_DIR", &dir)
            .stderr(Stdio::null());
        for (k, v) in &env {
            cmd.env(k, v);
        }
    });
    let client = ().serve(TokioChildProcess::new(command)?).await?;
    // Wait for the extra windows (the browser takes longest).
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut windows;
    loop {
        windows = call(&client, "list_windows", json!({})).await?["windows"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let titled = |t: &str| {
            windows
                .iter()
                .any(|w| w["title"].as_str().is_some_and(|s| s.contains(t)))
        };
        if (titled("deskpilot bench page")
            && titled("deskpilot bench entry")
            && windows
                .iter()
                .filter(|w| w["title"] == "deskpilot twin")
                .count()
                == 2)
            || Instant::now() > deadline
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let mut rows = Vec::new();
    let mut lines = Vec::new();

    // dHash of every window's own pixels, twice (identical content), through screenshots.
    let visible: Vec<(u64, String)> = windows
        .iter()
        .filter(|w| w["minimized"] != true)
        .filter_map(|w| {
            let title = w["title"].as_str()?;
            let process = w["process"].as_str().unwrap_or("?");
            let label: String = format!("{process}: {title}").chars().take(34).collect();
            Some((w["id"].as_u64()?, label))
        })
        .collect();
    let mut first = Vec::new();
    for round in 0..2 {
        for (id, _) in &visible {
            let _ = call(
                &client,
                "screenshot",
                json!({ "window_id": id, "max_width": 320 }),
            )
            .await;
        }
        call(&client, "memory_stats", json!({})).await?;
        let h = hashes(&dir)?;
        if round == 0 {
            first = h;
        } else {
            let mut self_max = 0;
            let named: Vec<(&(u64, String), u64, u64)> = visible
                .iter()
                .filter_map(|v| {
                    let a = first.iter().find(|(id, _)| *id == v.0)?.1;
                    let b = h.iter().find(|(id, _)| *id == v.0)?.1;
                    Some((v, a, b))
                })
                .collect();
            lines.push(format!(
                "dHash distance matrix, {} windows (own pixels via screenshot; row/column = window):",
                named.len()
            ));
            for (i, (v, a, b)) in named.iter().enumerate() {
                self_max = self_max.max((a ^ b).count_ones());
                let row: Vec<String> = named
                    .iter()
                    .map(|(_, c, _)| format!("{:>3}", (a ^ c).count_ones()))
                    .collect();
                lines.push(format!("  {i:>2} {:<34} {}", v.1, row.join("")));
            }
            let mut twins = Vec::new();
            let mut different = Vec::new();
            for (i, (v, a, _)) in named.iter().enumerate() {
                for (w, c, _) in &named[i + 1..] {
                    let d = (a ^ c).count_ones();
                    if v.1 == w.1 && v.1.contains("deskpilot twin") {
                        twins.push(d);
                    } else if v.1.split(':').next() != w.1.split(':').next() {
                        different.push(d);
                    }
                }
            }
            let min_diff = different.iter().min().copied().unwrap_or(0);
            let over12 = different.iter().filter(|d| **d > 12).count();
            lines.push(format!(
                "  same window captured twice: max distance {self_max}; two xterms with identical text: {twins:?}; \
                 different apps: min {min_diff}, {over12}/{} pairs > 12",
                different.len()
            ));
        }
    }

    let (times, p) = timed(&client, n, "perceive", json!({})).await?;
    rows.push(Sample {
        name: format!("deskpilot perceive ({} windows)", p["total"]),
        times,
        note: format!(
            "one list + one 1920x1080 capture; {} consistent, counts {}",
            p["consistent"], p["counts"]
        ),
    });
    let (times, _) = timed(
        &client,
        n,
        "perceive",
        json!({ "include_screenshot": true }),
    )
    .await?;
    rows.push(Sample {
        name: "deskpilot perceive + screenshot".into(),
        times,
        note: "the same, with the JPEG the verdicts were read from".into(),
    });
    let (times, r) = timed(&client, n, "memory_recall", json!({ "query": "mousepad" })).await?;
    rows.push(Sample {
        name: "deskpilot memory_recall \"mousepad\"".into(),
        times,
        note: format!(
            "fresh window list first; best: {}",
            r["candidates"][0]["title"]
        ),
    });
    let (times, _) = timed(
        &client,
        n,
        "memory_recall",
        json!({ "query": "刚才那个窗口" }),
    )
    .await?;
    rows.push(Sample {
        name: "deskpilot memory_recall 刚才那个窗口".into(),
        times,
        note: "deictic: the window focused last".into(),
    });
    // A memory write: a change (a window moved in memory's view) then the atomic save.
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        call(&client, "perceive", json!({})).await?;
        let started = Instant::now();
        let s = call(&client, "memory_stats", json!({})).await?;
        times.push(started.elapsed());
        if i == 0 {
            lines.push(format!(
                "memory state file: {} bytes for {} windows, {} controls (bound {} bytes)",
                s["state_bytes"], s["windows"], s["elements"], s["bounds"]["state_bytes_max"]
            ));
        }
    }
    rows.push(Sample {
        name: "deskpilot memory write (memory_stats)".into(),
        times,
        note: "state file written: temp + fsync + rename + dir fsync".into(),
    });

    // Disk use after many timeline entries: every list_windows call is one entry.
    let entries = if quick { 1_000 } else { 10_000 };
    let started = Instant::now();
    for _ in 0..entries {
        call(&client, "list_windows", json!({ "filter": "deskpilot" })).await?;
    }
    let spent = started.elapsed();
    let s = call(&client, "memory_stats", json!({})).await?;
    lines.push(format!(
        "after {entries} more timeline entries ({:.1} s of list_windows calls): timeline {} bytes, state {} bytes, \
         directory {} bytes; timeline bound {} bytes (rotated)",
        spent.as_secs_f64(),
        s["timeline_bytes"],
        s["state_bytes"],
        dir_bytes(&dir),
        s["bounds"]["timeline_bytes_max"],
    ));
    client.cancel().await?;
    drop(extra);
    let _ = std::fs::remove_dir_all(&chrome_profile);
    Ok((rows, Report { lines }))
}
