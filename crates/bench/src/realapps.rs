//! Real apps from the distribution: the accessibility trees of LibreOffice Writer's document
//! window, Calc's sheet window, GIMP's main window and Firefox's own window through MCP
//! (`get_window_state`, cold: `fresh` re-reads the whole tree; warm: the unchanged tree again),
//! beside pyatspi in the system Python walking the same window for the same properties, with
//! the app's CPU time (`/proc/PID/stat` utime + stime) during the reads and in the second after.
//!
//! Each app runs alone, in a process group of its own, with a fresh profile, and is killed
//! afterwards; every read has a deadline, so an app that stops answering (a Calc whose table
//! is enumerated cell by cell) costs a row, not the run.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use serde_json::{Value, json};

use crate::Sample;
use crate::dsh::Client;

/// The goal: deskpilot's p50 at most this share of pyatspi's, and never over [`GOAL_MAX`].
const GOAL_SHARE: f64 = 0.5;
const GOAL_MAX: Duration = Duration::from_secs(1);
/// How long one tree read may take inside the server, and the call around it.
const READ_MS: u64 = 5_000;
const CALL_DEADLINE: Duration = Duration::from_secs(15);
/// How long pyatspi's whole series may take before it is killed.
const PEER_DEADLINE: Duration = Duration::from_secs(150);
/// How long an app may take to show its window.
const START_DEADLINE: Duration = Duration::from_secs(60);

/// One app: what starts it and which of its windows is read.
struct App {
    label: &'static str,
    /// Programs to try, first found wins.
    programs: &'static [&'static str],
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// The window: its class, else a title containing this.
    class: Option<&'static str>,
    title: Option<&'static str>,
}

/// The rows. In `quick` mode one row says they were skipped.
pub async fn run(
    binary: &Path,
    env: Vec<(String, String)>,
    n: usize,
    quick: bool,
    tmp: &Path,
) -> Vec<Sample> {
    if quick {
        return vec![Sample {
            name: "real apps (Writer, Calc, GIMP, Firefox)".into(),
            times: Vec::new(),
            note: "skipped in --quick: scripts/bench without it reads them".into(),
        }];
    }
    let n = n.clamp(1, 10);
    let mut rows = Vec::new();
    for app in apps(tmp) {
        rows.extend(one_app(binary, &env, n, tmp, &app).await);
    }
    rows
}

fn apps(tmp: &Path) -> Vec<App> {
    let lo = |name: &str| {
        let profile = tmp.join(format!("lo-{name}"));
        seed_libreoffice(&profile);
        format!("-env:UserInstallation=file://{}", profile.display())
    };
    let text = tmp.join("gpl-3.txt");
    let _ = std::fs::copy("/usr/share/common-licenses/GPL-3", &text);
    let firefox = tmp.join("firefox-profile");
    let _ = std::fs::create_dir_all(&firefox);
    let _ = std::fs::write(firefox.join("user.js"), FIREFOX_PREFS);
    let gimp = tmp.join("gimp-profile");
    let _ = std::fs::create_dir_all(&gimp);
    let office_env = vec![("SAL_USE_VCLPLUGIN".to_string(), "gtk3".to_string())];
    vec![
        App {
            label: "Writer",
            programs: &["soffice", "libreoffice"],
            args: vec![
                lo("writer"),
                "--writer".into(),
                "--norestore".into(),
                text.display().to_string(),
            ],
            env: office_env.clone(),
            class: Some("libreoffice-writer"),
            title: None,
        },
        App {
            label: "Calc",
            programs: &["soffice", "libreoffice"],
            args: vec![lo("calc"), "--calc".into(), "--norestore".into()],
            env: office_env,
            class: Some("libreoffice-calc"),
            title: None,
        },
        App {
            label: "GIMP",
            programs: &["gimp-2.10", "gimp"],
            args: vec!["--no-splash".into(), "--new-instance".into()],
            env: vec![("GIMP2_DIRECTORY".into(), gimp.display().to_string())],
            class: None,
            title: Some("GNU Image Manipulation Program"),
        },
        App {
            label: "Firefox",
            programs: &["firefox-esr", "firefox"],
            args: vec![
                "--no-remote".into(),
                "--profile".into(),
                firefox.display().to_string(),
                format!("file://{FIXTURE_PAGE}"),
            ],
            env: vec![("GNOME_ACCESSIBILITY".into(), "1".into())],
            class: None,
            // The fixture page's title: the window is listed before the page loads.
            title: Some("Fixture home"),
        },
    ]
}

const FIXTURE_PAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/web/index.html");

/// No first-run page, no default-browser question, no telemetry notice.
const FIREFOX_PREFS: &str = r#"user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("browser.aboutwelcome.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("toolkit.telemetry.reportingpolicy.firstRun", false);
user_pref("browser.startup.homepage_override.mstone", "ignore");
user_pref("startup.homepage_welcome_url", "");
"#;

/// A fresh LibreOffice profile without the tip-of-the-day dialog.
fn seed_libreoffice(profile: &Path) {
    let user = profile.join("user");
    let _ = std::fs::create_dir_all(&user);
    let _ = std::fs::write(
        user.join("registrymodifications.xcu"),
        r#"<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="ShowTipOfTheDay" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
"#,
    );
}

/// `program` on `PATH`.
fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

fn missing(app: &App, why: String) -> Vec<Sample> {
    vec![Sample {
        name: format!("deskpilot tree of {} via MCP", app.label),
        times: Vec::new(),
        note: format!("missing: {why}"),
    }]
}

async fn one_app(
    binary: &Path,
    env: &[(String, String)],
    n: usize,
    tmp: &Path,
    app: &App,
) -> Vec<Sample> {
    let Some(program) = app.programs.iter().find_map(|p| which(p)) else {
        return missing(
            app,
            format!("{} is not installed", app.programs.join(" / ")),
        );
    };
    let mut cmd = Command::new(&program);
    cmd.args(&app.args)
        .current_dir(tmp)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .env_remove("NO_AT_BRIDGE")
        .envs(env.iter().cloned())
        .envs(app.env.iter().cloned());
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return missing(app, format!("{} did not start: {e}", program.display())),
    };
    let group = child.id();
    let rows = match server(binary, env).await {
        Ok(client) => {
            let rows = measure(&client, env, n, app).await;
            let _ = client.cancel().await;
            rows
        }
        Err(e) => missing(app, format!("no deskpilot server: {e:#}")),
    };
    // Everything the app started (soffice.bin under its launcher, Firefox's content
    // processes) is in its group.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{group}")])
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
    rows
}

async fn server(binary: &Path, env: &[(String, String)]) -> anyhow::Result<Client> {
    let command = tokio::process::Command::new(binary).configure(|cmd| {
        cmd.arg("serve")
            .env("DESKPILOT_LOG", "warn")
            .env("DESKPILOT_MEMORY_DIR", crate::bench_memory_dir())
            .env("DESKPILOT_CURSOR", "off")
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
    });
    Ok(().serve(TokioChildProcess::new(command)?).await?)
}

/// The app's window (id, pid), polled until [`START_DEADLINE`].
async fn window(client: &Client, app: &App) -> Option<(Value, u32, String)> {
    let deadline = Instant::now() + START_DEADLINE;
    loop {
        let listed = client
            .call_tool(CallToolRequestParams::new("list_windows"))
            .await
            .ok()
            .and_then(|r| r.structured_content)
            .and_then(|s| {
                s["windows"].as_array()?.iter().find_map(|w| {
                    let class = w["class"].as_str().unwrap_or_default();
                    let title = w["title"].as_str().unwrap_or_default();
                    let hit = app.class.is_some_and(|c| c == class)
                        || app.title.is_some_and(|t| title.contains(t));
                    hit.then(|| {
                        (
                            w["id"].clone(),
                            w["pid"].as_u64().unwrap_or(0) as u32,
                            title.to_string(),
                        )
                    })
                })
            });
        if listed.is_some() || Instant::now() > deadline {
            return listed;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The CPU time `pid` has used, in ms (utime + stime of `/proc/PID/stat`).
fn cpu_ms(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: fields count from the last ')'.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks * 1000.0 / clock_ticks())
}

/// The kernel's clock ticks per second (`getconf CLK_TCK`, 100 on every Linux here).
fn clock_ticks() -> f64 {
    static TICKS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// Waits until the app has used under 30 ms of CPU in half a second (it finished starting),
/// at most 30 s.
async fn settle(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut last = cpu_ms(pid);
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = cpu_ms(pid);
        if let (Some(a), Some(b)) = (last, now)
            && b - a < 30.0
        {
            return;
        }
        last = now;
    }
}

/// The app's CPU in the second from now.
async fn cpu_next_second(pid: u32) -> String {
    let before = cpu_ms(pid);
    tokio::time::sleep(Duration::from_secs(1)).await;
    match (before, cpu_ms(pid)) {
        (Some(a), Some(b)) => format!("{:.0} ms", b - a),
        _ => "gone".into(),
    }
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// pyatspi's rows for one window (run first: a deskpilot read that stalls the app must not
/// spoil them), then deskpilot's cold and warm rows, each with the app's CPU.
async fn measure(client: &Client, env: &[(String, String)], n: usize, app: &App) -> Vec<Sample> {
    let Some((id, pid, title)) = window(client, app).await else {
        return missing(
            app,
            format!("no window within {} s", START_DEADLINE.as_secs()),
        );
    };
    settle(pid).await;
    // The title as it is now (a document's name may have come after the window).
    let title = window(client, app).await.map_or(title, |w| w.2);
    let peer = pyatspi(env, app.label, pid, &title, n);
    let mut ours = Vec::new();
    let mut whole = Vec::new();
    let mut stalled = false;
    for cold in [true, false] {
        let kind = if cold { "cold" } else { "warm" };
        let name = format!("deskpilot tree of {} ({kind}) via MCP", app.label);
        if stalled {
            ours.push(Sample {
                name,
                times: Vec::new(),
                note: "not read: the app stopped answering during the cold reads".into(),
            });
            whole.push(false);
            continue;
        }
        let args = json!({
            "window_id": id, "include_screenshot": false, "max_elements": 10000,
            "timeout_ms": READ_MS, "fresh": cold,
        });
        let Value::Object(args) = args else {
            unreachable!("arguments are objects")
        };
        let (mut times, mut cpu, mut count, mut complete) = (Vec::new(), Vec::new(), 0, true);
        let mut failure = None;
        for _ in 0..n {
            let before = cpu_ms(pid);
            let started = Instant::now();
            let r = tokio::time::timeout(
                CALL_DEADLINE,
                client.call_tool(
                    CallToolRequestParams::new("get_window_state").with_arguments(args.clone()),
                ),
            )
            .await;
            let took = started.elapsed();
            if let (Some(a), Some(b)) = (before, cpu_ms(pid)) {
                cpu.push(b - a);
            }
            let s = match r {
                Ok(Ok(r)) if r.is_error != Some(true) => r.structured_content.unwrap_or_default(),
                Ok(Ok(r)) => {
                    failure = Some(format!("failed: {:?}", r.content));
                    break;
                }
                Ok(Err(e)) => {
                    failure = Some(format!("failed: {e}"));
                    break;
                }
                Err(_) => {
                    failure = Some(format!("no answer within {} s", CALL_DEADLINE.as_secs()));
                    break;
                }
            };
            times.push(took);
            count = s["count"].as_u64().unwrap_or(0);
            if s["complete"] == false {
                complete = false;
                break;
            }
        }
        let after = cpu_next_second(pid).await;
        whole.push(complete && failure.is_none());
        let read = if complete && failure.is_none() {
            format!("{count} elements, complete")
        } else {
            stalled = true;
            format!(
                "INCOMPLETE ({}; {count} elements in the last read)",
                failure.as_deref().unwrap_or("the read ran out of time")
            )
        };
        ours.push(Sample {
            name,
            note: format!(
                "{read}; {} CPU {:.0} ms per read, {after} in the second after",
                app.label,
                median(&mut cpu)
            ),
            times,
        });
    }
    // Judged against pyatspi's same kind of walk.
    for ((s, p), whole) in ours.iter_mut().zip(&peer).zip(whole) {
        if s.times.is_empty() || p.times.is_empty() {
            continue;
        }
        let (mine, theirs) = (s.percentile(0.5), p.percentile(0.5));
        let met = mine.as_secs_f64() <= GOAL_SHARE * theirs.as_secs_f64()
            && s.percentile(1.0) <= GOAL_MAX
            && whole;
        s.note = format!(
            "{}; goal ≤ ½ pyatspi and ≤ 1 s: {}",
            s.note,
            if met { "met" } else { "MISSED" }
        );
    }
    ours.extend(peer);
    ours
}

/// pyatspi (the system Python's python3-gi) walking window `title` of `pid`: the cold rows
/// clear its cache first, the warm ones do not. Killed after [`PEER_DEADLINE`]; what it
/// printed by then counts.
fn pyatspi(env: &[(String, String)], app: &str, pid: u32, title: &str, n: usize) -> Vec<Sample> {
    let label = |kind: &str| format!("pyatspi walk of {app} ({kind})");
    let script = PYATSPI_REAL.replace("{MAX_CHILDREN}", &MAX_CHILDREN.to_string());
    let spawned = Command::new("/usr/bin/python3")
        .args(["-c", &script, &pid.to_string(), title, &n.to_string()])
        .env_remove("NO_AT_BRIDGE")
        .envs(env.iter().cloned())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => {
            return vec![Sample {
                name: label("cold"),
                times: Vec::new(),
                note: format!("missing: {e}"),
            }];
        }
    };
    let stdout = child.stdout.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + PEER_DEADLINE;
    let mut lines = Vec::new();
    let mut timed_out = false;
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(l) => lines.push(l),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                timed_out = true;
                break;
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let mut rows = Vec::new();
    for kind in ["cold", "warm"] {
        // "<kind> <seconds> <cpu ms> <elements> <skipped containers>", then
        // "<kind>-after <cpu ms>".
        let mut times = Vec::new();
        let mut cpu = Vec::new();
        let (mut count, mut skipped) = (String::from("?"), String::from("0"));
        let mut after = String::from("?");
        let mut why = None;
        for l in &lines {
            let f: Vec<&str> = l.split_whitespace().collect();
            match f.as_slice() {
                [k, secs, c, n, s] if *k == kind => {
                    if let Ok(secs) = secs.parse::<f64>() {
                        times.push(Duration::from_secs_f64(secs));
                    }
                    cpu.extend(c.parse::<f64>().ok());
                    count = n.to_string();
                    skipped = s.to_string();
                }
                [k, c] if k.strip_suffix("-after") == Some(kind) => after = format!("{c} ms"),
                ["missing:", ..] => why = Some(l.clone()),
                _ => {}
            }
        }
        let note = match (&why, times.is_empty(), timed_out) {
            (Some(w), _, _) => w.clone(),
            (None, true, true) => format!(
                "missing: no walk finished within {} s (killed)",
                PEER_DEADLINE.as_secs()
            ),
            (None, true, false) => "missing: pyatspi printed nothing".into(),
            (None, false, _) => format!(
                "{count} showing elements ({skipped} containers of over {MAX_CHILDREN} children not entered); CPU {:.0} ms per walk, {after} in the second after{}",
                median(&mut cpu),
                if timed_out {
                    "; killed at the deadline"
                } else {
                    ""
                }
            ),
        };
        rows.push(Sample {
            name: label(kind),
            times,
            note,
        });
    }
    rows
}

/// Children of a container with more than this many are not walked (a Calc sheet reports
/// 2^31 - 1 cells).
const MAX_CHILDREN: usize = 300;

/// argv: pid, window title, walks of each kind. Prints one line per walk and one line for the
/// second after each series.
const PYATSPI_REAL: &str = "import os, sys, time, gi
gi.require_version('Atspi', '2.0')
from gi.repository import Atspi
PID, TITLE, N = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
MAX_CHILDREN = {MAX_CHILDREN}
S = Atspi.StateType.SHOWING
TICK = os.sysconf('SC_CLK_TCK')
def cpu():
    with open('/proc/%d/stat' % PID) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000.0 / TICK
d = Atspi.get_desktop(0)
app = None
for i in range(d.get_child_count()):
    a = d.get_child_at_index(i)
    if a is not None and a.get_process_id() == PID:
        app = a
if app is None:
    print('missing: no accessible app with pid %d' % PID); sys.exit(0)
frame = None
for i in range(app.get_child_count()):
    c = app.get_child_at_index(i)
    if c is not None and c.get_name() == TITLE:
        frame = c
if frame is None:
    print('missing: no accessible window titled %r' % TITLE); sys.exit(0)
skipped = [0]
def walk(node, out):
    if not node.get_state_set().contains(S):
        return
    node.get_role_name(); node.get_name(); node.get_description()
    try:
        node.get_extents(Atspi.CoordType.SCREEN)
    except Exception:
        pass
    act = node.get_action_iface()
    if act is not None:
        [act.get_action_name(i) for i in range(act.get_n_actions())]
    out.append(1)
    n = node.get_child_count()
    if n > MAX_CHILDREN:
        skipped[0] += 1
        return
    for i in range(n):
        c = node.get_child_at_index(i)
        if c is not None:
            walk(c, out)
for kind in ('cold', 'warm'):
    for k in range(N):
        if kind == 'cold':
            app.clear_cache()
        c0 = cpu(); t = time.perf_counter()
        out = []
        skipped[0] = 0
        walk(frame, out)
        took = time.perf_counter() - t; c1 = cpu()
        print('%s %.6f %.1f %d %d' % (kind, took, c1 - c0, len(out), skipped[0]), flush=True)
    c0 = cpu(); time.sleep(1)
    print('%s-after %.0f' % (kind, cpu() - c0), flush=True)";
