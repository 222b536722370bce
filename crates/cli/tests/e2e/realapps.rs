//! Real apps, one real task each, done only through deskpilot's desktop tools and checked by
//! an oracle deskpilot does not own: LibreOffice Calc and Writer (the saved ODF file), Firefox
//! (the request a form posts to the test's own HTTP server), Thunderbird, GIMP, GTK 4 and
//! Qt 5 (the system's own pyatspi stack, `tests/helpers/realapps_probe.py`) and the GTK file
//! chooser (zenity's output and exit code).
//!
//! Each app runs in a process group of its own, killed whole when its test ends, passed or
//! not; a guard fails the test when the group's memory runs away (over [`MEMORY_CAP`], or
//! growing more than [`MEMORY_GROWTH_CAP`] during one tool call). Every call has a deadline,
//! and every call and its answer is printed (`[realapps <test>] …`), so a failure shows what
//! deskpilot said.

use std::collections::HashMap;
use std::io::{BufRead as _, Read as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use deskpilot_x11::VirtualDisplay;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::harness::{self, Server, serve, text, wait_for};

/// How long one tool call may take before the test fails saying which call hung.
const CALL_DEADLINE: Duration = Duration::from_secs(90);
/// How long an app may take to show its window (LibreOffice starts cold in 10–20 s here).
const START_DEADLINE: Duration = Duration::from_secs(90);
/// The most memory an app's whole process group may hold (proportional set size, so pages
/// shared between its processes count once).
const MEMORY_CAP: u64 = 1536 << 20;
/// The most an app's process group may grow during one tool call.
const MEMORY_GROWTH_CAP: u64 = 200 << 20;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/realapps");
const PROBE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/helpers/realapps_probe.py"
);
const ODF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/helpers/odf_read.py"
);

/// A fresh, empty scratch directory for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir()
        .join(format!("deskpilot-realapps-{}", std::process::id()))
        .join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// An app started in a process group of its own; the whole group is killed when dropped.
struct Group {
    name: &'static str,
    child: Mutex<Child>,
    pgid: i32,
    stdout: Arc<Mutex<String>>,
}

impl Group {
    /// Starts `program` on `desktop` with its own XDG directories under `dir`.
    fn start(
        desktop: &VirtualDisplay,
        name: &'static str,
        dir: &Path,
        program: &str,
        args: &[&str],
        env: &[(&str, String)],
    ) -> Group {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        desktop.configure(&mut cmd);
        for sub in ["config", "data", "cache"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        cmd.env("XDG_CONFIG_HOME", dir.join("config"))
            .env("XDG_DATA_HOME", dir.join("data"))
            .env("XDG_CACHE_HOME", dir.join("cache"))
            .env("HOME", dir);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.process_group(0);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("start {program} (scripts/install-deps test): {e}"));
        let pgid = child.id() as i32;
        let stdout = Arc::new(Mutex::new(String::new()));
        let sink = stdout.clone();
        let out = child.stdout.take().expect("piped stdout");
        std::thread::spawn(move || {
            let mut r = std::io::BufReader::new(out);
            let mut line = String::new();
            while r.read_line(&mut line).is_ok_and(|n| n > 0) {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Group {
            name,
            child: Mutex::new(child),
            pgid,
            stdout,
        }
    }

    /// The live processes of the group.
    fn pids(&self) -> Vec<u32> {
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .ok()
                    .and_then(|s| {
                        // pid (comm) state ppid pgrp …: comm may hold spaces, so split after ')'.
                        let rest = &s[s.rfind(')')? + 1..];
                        rest.split_whitespace().nth(2)?.parse::<i32>().ok()
                    })
                    == Some(self.pgid)
            })
            .collect()
    }

    /// The group's memory: the proportional set sizes of its processes added up.
    fn memory(&self) -> u64 {
        self.pids()
            .iter()
            .filter_map(|pid| {
                let s = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
                let line = s.lines().find(|l| l.starts_with("Pss:"))?;
                line.split_whitespace().nth(1)?.parse::<u64>().ok()
            })
            .sum::<u64>()
            * 1024
    }

    fn check_memory(&self, when: &str) {
        let m = self.memory();
        assert!(
            m < MEMORY_CAP,
            "{} holds {} MB {when}: over the {} MB cap",
            self.name,
            m >> 20,
            MEMORY_CAP >> 20
        );
    }

    /// The group leader's exit status, once it has exited.
    fn exited(&self) -> Option<std::process::ExitStatus> {
        self.child.lock().unwrap().try_wait().ok().flatten()
    }

    fn stdout(&self) -> String {
        self.stdout.lock().unwrap().clone()
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        // SAFETY: plain signal delivery to our own process group; at worst it is gone (ESRCH).
        unsafe {
            libc::kill(-self.pgid, libc::SIGCONT);
            libc::kill(-self.pgid, libc::SIGKILL);
        }
        let _ = self
            .child
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .wait();
    }
}

/// A test's calls to deskpilot: each with a deadline and the app's memory watched while it
/// runs, each printed with its answer.
struct Driver<'a> {
    server: &'a Server,
    test: &'static str,
    app: &'a Group,
}

/// The first characters of `s`, on a character boundary.
fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}… ({} more chars)", &s[..i], s.len() - i),
        None => s.to_string(),
    }
}

#[allow(clippy::print_stderr)]
fn say(test: &str, line: &str) {
    eprintln!("[realapps {test}] {line}");
}

impl Driver<'_> {
    async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        say(self.test, &format!("→ {tool} {args}"));
        let before = self.app.memory();
        let started = Instant::now();
        let mut peak = before;
        let call = self.server.call(tool, args.clone());
        tokio::pin!(call);
        let r = loop {
            tokio::select! {
                r = &mut call => break r,
                _ = tokio::time::sleep(Duration::from_millis(250)) => {
                    let now = self.app.memory();
                    peak = peak.max(now);
                    assert!(
                        now < MEMORY_CAP && now.saturating_sub(before) < MEMORY_GROWTH_CAP,
                        "[{}] {} ran away during {tool} {args}: {} MB → {} MB after {:?}",
                        self.test, self.app.name, before >> 20, now >> 20, started.elapsed()
                    );
                    assert!(
                        started.elapsed() < CALL_DEADLINE,
                        "[{}] {tool} {args} did not answer within {CALL_DEADLINE:?} ({} at {} MB)",
                        self.test, self.app.name, now >> 20
                    );
                }
            }
        };
        let after = self.app.memory();
        let shown = text(&r);
        say(
            self.test,
            &format!(
                "← {} in {} ms{}: {}",
                if r.is_error == Some(true) {
                    "ERROR"
                } else {
                    "ok"
                },
                started.elapsed().as_millis(),
                if after.max(peak) > before + (20 << 20) {
                    format!(
                        " ({} grew {} → {} MB)",
                        self.app.name,
                        before >> 20,
                        after >> 20
                    )
                } else {
                    String::new()
                },
                if r.is_error == Some(true) {
                    shown
                } else {
                    cut(&shown, 1500)
                }
            ),
        );
        assert!(
            after.max(peak).saturating_sub(before) < MEMORY_GROWTH_CAP,
            "[{}] {} grew {} MB → {} MB during {tool} {args}",
            self.test,
            self.app.name,
            before >> 20,
            after.max(peak) >> 20
        );
        self.app.check_memory(&format!("after {tool}"));
        r
    }

    /// A call that must succeed: its structured content.
    async fn ok(&self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone()).await;
        assert_ne!(
            r.is_error,
            Some(true),
            "[{}] {tool} {args} failed: {}",
            self.test,
            text(&r)
        );
        r.structured_content.clone().unwrap_or(Value::Null)
    }

    /// The group's top-level window whose title contains `title`, polled without logging.
    async fn window(&self, title: &str) -> Value {
        let w = wait_for(
            START_DEADLINE,
            &format!("a window of {} titled *{title}*", self.app.name),
            || async {
                let pids = self.app.pids();
                let r = self.server.call("list_windows", json!({})).await;
                r.structured_content.as_ref()?["windows"]
                    .as_array()?
                    .iter()
                    .find(|w| {
                        w["pid"]
                            .as_u64()
                            .is_some_and(|p| pids.contains(&(p as u32)))
                            && w["title"].as_str().is_some_and(|t| t.contains(title))
                    })
                    .cloned()
            },
        )
        .await;
        say(self.test, &format!("window {} \"{}\"", w["id"], w["title"]));
        w
    }

    /// Polls `get_window_state` (logged) until `pick` finds an element in it.
    async fn element_in_tree(
        &self,
        window: &Value,
        what: &str,
        pick: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let r = self
                .call(
                    "get_window_state",
                    json!({ "window_id": window["id"], "include_screenshot": false, "max_elements": 3000 }),
                )
                .await;
            let s = r.structured_content.clone().unwrap_or(Value::Null);
            if let Some(e) = s["elements"]
                .as_array()
                .and_then(|es| es.iter().find(|e| pick(e)))
            {
                say(self.test, &format!("found {what}: {e}"));
                return e.clone();
            }
            assert!(
                Instant::now() < deadline,
                "[{}] no {what} in {} \"{}\" within 30 s; the last tree: {}",
                self.test,
                window["id"],
                window["title"],
                cut(&text(&r), 8000)
            );
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }

    /// `find_elements` in `window`; the first candidate `pick` accepts, polled for up to 30 s.
    async fn find(
        &self,
        window: &Value,
        description: &str,
        what: &str,
        pick: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let r = self
                .call(
                    "find_elements",
                    json!({ "window_id": window["id"], "description": description, "include_screenshot": false, "limit": 10 }),
                )
                .await;
            let s = r.structured_content.clone().unwrap_or(Value::Null);
            if r.is_error != Some(true)
                && let Some(c) = s["candidates"]
                    .as_array()
                    .and_then(|cs| cs.iter().find(|c| pick(c)))
            {
                say(self.test, &format!("chose {c}"));
                return c.clone();
            }
            if Instant::now() >= deadline {
                let tree = self
                    .server
                    .call(
                        "get_window_state",
                        json!({ "window_id": window["id"], "include_screenshot": false }),
                    )
                    .await;
                panic!(
                    "[{}] find_elements \"{description}\" gave no {what} within 30 s: {}\nthe tree: {}",
                    self.test,
                    text(&r),
                    cut(&text(&tree), 8000)
                );
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

fn role_is(e: &Value, roles: &[&str]) -> bool {
    roles.iter().any(|r| e["role"] == *r)
}

/// Asks the system's own pyatspi stack (not deskpilot) about app `pid`.
fn probe(desktop: &VirtualDisplay, args: &[&str]) -> Option<Value> {
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg(PROBE).args(args).stdin(Stdio::null());
    desktop.configure(&mut cmd);
    let out = cmd
        .output()
        .expect("run the pyatspi probe (python3-pyatspi)");
    let v: Value = serde_json::from_slice(&out.stdout).ok()?;
    v.get("error").is_none().then_some(v)
}

/// Polls the pyatspi probe's answer about any process of `app` until `check` accepts it.
async fn oracle<T>(
    desktop: &VirtualDisplay,
    app: &Group,
    command: &str,
    what: &str,
    check: impl Fn(&Value) -> Option<T>,
) -> T {
    let mut last = Value::Null;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        for pid in app.pids() {
            if let Some(v) = probe(desktop, &[command, &pid.to_string()]) {
                if let Some(t) = check(&v) {
                    return t;
                }
                last = v;
            }
        }
        assert!(
            Instant::now() < deadline,
            "pyatspi never saw {what} in {}: last answer {}",
            app.name,
            cut(&last.to_string(), 4000)
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The text pyatspi reads in the showing editable field named `name` of any process of `app`.
fn field_text(desktop: &VirtualDisplay, app: &Group, name: &str) -> Option<String> {
    app.pids().iter().find_map(|pid| {
        let v = probe(desktop, &["fields", &pid.to_string()])?;
        v["fields"]
            .as_array()?
            .iter()
            .find(|f| f["name"] == name)
            .and_then(|f| f["text"].as_str().map(str::to_string))
    })
}

/// What `tests/helpers/odf_read.py` reads from a saved ODF file, once it is complete.
async fn odf(path: &Path, command: &str) -> Value {
    wait_for(
        Duration::from_secs(30),
        &format!("{} to be saved", path.display()),
        || async {
            if !path.exists() {
                return None;
            }
            let out = Command::new("/usr/bin/python3")
                .arg(ODF)
                .arg(command)
                .arg(path)
                .output()
                .ok()?;
            serde_json::from_slice::<Value>(&out.stdout).ok()
        },
    )
    .await
}

/// LibreOffice in `dir` with a profile of its own (no first-run dialogs, no recovery).
fn libreoffice(desktop: &VirtualDisplay, name: &'static str, dir: &Path, module: &str) -> Group {
    let profile = format!("-env:UserInstallation=file://{}", dir.join("lo").display());
    Group::start(
        desktop,
        name,
        dir,
        "soffice",
        &[module, "--norestore", "--nologo", "--nolockcheck", &profile],
        &[("SAL_USE_VCLPLUGIN", "gtk3".into())],
    )
}

/// Saves the focused LibreOffice document as `path` through its Save dialog (Ctrl+S, the file
/// name field, the Save button), everything through deskpilot.
async fn save_through_dialog(d: &Driver<'_>, path: &Path) {
    d.ok("press_key", json!({ "keys": ["ctrl", "s"] })).await;
    let dialog = d.window("Save").await;
    let field = d
        .find(&dialog, "file name field", "an edit field", |c| {
            role_is(c, &["Edit", "ComboBox"])
        })
        .await;
    let r = d
        .ok(
            "set_value",
            json!({ "element": field["token"], "value": path.to_str().unwrap() }),
        )
        .await;
    assert_eq!(
        r["value"],
        path.to_str().unwrap(),
        "set_value reads back what it set"
    );
    let save = d
        .find(&dialog, "Save button", "a Save button", |c| {
            role_is(c, &["Button"]) && c["name"] == "Save" && c["enabled"] == true
        })
        .await;
    d.ok("click", json!({ "element": save["token"] })).await;
}

/// Calc: C3 reached through the Name Box, `=2*21` typed into it, saved as .ods; the file's
/// content.xml holds the formula and 42 in C3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calc_formula_through_the_name_box_saved_as_ods() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let dir = scratch("calc");
    let app = libreoffice(desktop, "calc", &dir, "--calc");
    let d = Driver {
        server: &server,
        test: "calc",
        app: &app,
    };
    let w = d.window("LibreOffice Calc").await;
    // A whole tree read of a window whose sheet reports 2^31 cells answers and stays small.
    d.ok(
        "get_window_state",
        json!({ "window_id": w["id"], "include_screenshot": false, "timeout_ms": 10000 }),
    )
    .await;
    // The Name Box: the edit field showing the current cell's address.
    let name_box = d
        .element_in_tree(&w, "the Name Box (an edit reading A1)", |e| {
            role_is(e, &["Edit", "ComboBox"]) && e["value"] == "A1"
        })
        .await;
    d.ok("click", json!({ "element": name_box["token"] })).await;
    d.ok("press_key", json!({ "keys": ["ctrl", "a"] })).await;
    d.ok("type_text", json!({ "text": "C3\n" })).await;
    oracle(desktop, &app, "dump", "the Name Box reading C3", |v| {
        v["nodes"]
            .as_array()?
            .iter()
            .any(|n| n["role"] == "text" && n["text"] == "C3" && n["showing"] == true)
            .then_some(())
    })
    .await;
    d.ok("type_text", json!({ "text": "=2*21\n" })).await;
    let file = dir.join("formula.ods");
    save_through_dialog(&d, &file).await;
    let cells = odf(&file, "cells").await;
    let c3 = cells["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["row"] == 3 && c["col"] == 3)
        .unwrap_or_else(|| panic!("no C3 in the saved sheet: {cells}"));
    assert_eq!(c3["formula"], "of:=2*21", "{cells}");
    assert_eq!(c3["value"], "42", "{cells}");
    assert_eq!(
        cells["cells"].as_array().unwrap().len(),
        1,
        "only C3 was written: {cells}"
    );
    drop(app);
    server.finish().await;
}

/// Writer's Bold toolbar button, found by its name.
async fn bold_button(d: &Driver<'_>, w: &Value) -> Value {
    d.find(w, "Bold button", "the Bold toolbar button", |c| {
        role_is(c, &["Button", "ToggleButton"]) && c["name"] == "Bold"
    })
    .await
}

/// Writer: text typed with the Bold toolbar button toggled by token around two words, saved
/// as .odt; content.xml shows exactly those words in a bold span.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writer_bold_words_saved_as_odt() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let dir = scratch("writer");
    let app = libreoffice(desktop, "writer", &dir, "--writer");
    let d = Driver {
        server: &server,
        test: "writer",
        app: &app,
    };
    let w = d.window("LibreOffice Writer").await;
    d.ok("window", json!({ "action": "focus", "window_id": w["id"] }))
        .await;
    // The document has the keyboard focus once its paragraph is there.
    oracle(
        desktop,
        &app,
        "dump",
        "the document's focused paragraph",
        |v| {
            v["nodes"]
                .as_array()?
                .iter()
                .any(|n| n["role"] == "paragraph" && n["focused"] == true)
                .then_some(())
        },
    )
    .await;
    d.ok("type_text", json!({ "text": "Plain start " })).await;
    let b = bold_button(&d, &w).await;
    let r = d.ok("click", json!({ "element": b["token"] })).await;
    say("writer", &format!("Bold on: route {}", r["route"]));
    d.ok("type_text", json!({ "text": "bold words" })).await;
    let b = bold_button(&d, &w).await;
    d.ok("click", json!({ "element": b["token"] })).await;
    d.ok("type_text", json!({ "text": " plain end" })).await;
    let file = dir.join("bold.odt");
    save_through_dialog(&d, &file).await;
    let spans = odf(&file, "spans").await;
    let runs: Vec<(String, bool)> = spans["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["text"].as_str().unwrap().to_string(), s["bold"] == true))
        .collect();
    let bold_text: String = runs.iter().filter(|r| r.1).map(|r| r.0.as_str()).collect();
    let all: String = runs.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(all, "Plain start bold words plain end", "{spans}");
    assert_eq!(bold_text, "bold words", "{spans}");
    drop(app);
    server.finish().await;
}

/// LibreOffice Writer with a text file open: its paragraphs are in the tree. Writer's cache
/// lists the document with no children (the paragraphs come after the cache was filled); a
/// read that trusted the cached count showed the window without a line of the text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writer_paragraphs_of_an_opened_file_are_in_the_tree() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let dir = scratch("writer-open");
    let file = dir.join("lines.txt");
    let lines: Vec<String> = (1..=12)
        .map(|n| format!("Line {n} of the opened file"))
        .collect();
    std::fs::write(&file, lines.join("\n")).unwrap();
    let profile = format!("-env:UserInstallation=file://{}", dir.join("lo").display());
    let app = Group::start(
        desktop,
        "writer-open",
        &dir,
        "soffice",
        &[
            "--writer",
            "--norestore",
            "--nologo",
            "--nolockcheck",
            &profile,
            file.to_str().unwrap(),
        ],
        &[("SAL_USE_VCLPLUGIN", "gtk3".into())],
    );
    let d = Driver {
        server: &server,
        test: "writer-open",
        app: &app,
    };
    let w = d.window("lines.txt").await;
    let shown = wait_for(
        START_DEADLINE,
        "the file's lines in a fresh tree",
        || async {
            let r = server
                .call(
                    "get_window_state",
                    json!({ "window_id": w["id"], "include_screenshot": false, "fresh": true }),
                )
                .await;
            let elements = r.structured_content.as_ref()?["elements"]
                .as_array()?
                .clone();
            let values: Vec<&str> = elements
                .iter()
                .filter_map(|e| e["value"].as_str())
                .collect();
            lines
                .iter()
                .all(|l| values.contains(&l.as_str()))
                .then_some(values.len())
        },
    )
    .await;
    say(
        "writer-open",
        &format!("{shown} elements with a value, every line among them"),
    );
    drop(app);
    server.finish().await;
}

/// The test's own HTTP server on 127.0.0.1: `GET /` is the form, every `POST` body is kept.
struct FormServer {
    url: String,
    posts: Arc<Mutex<Vec<String>>>,
}

impl FormServer {
    fn start() -> FormServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let posts: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = posts.clone();
        let form = std::fs::read_to_string(format!("{FIXTURES}/form.html")).unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut request = String::new();
                if reader.read_line(&mut request).is_err() {
                    continue;
                }
                let mut length = 0usize;
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) == 0 || header.trim().is_empty() {
                        break;
                    }
                    let lower = header.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let (status, page) = if request.starts_with("POST ") {
                    sink.lock()
                        .unwrap()
                        .push(String::from_utf8_lossy(&body).into_owned());
                    (
                        "200 OK",
                        "<!doctype html><title>Order placed</title><p>Thanks</p>".to_string(),
                    )
                } else if request.starts_with("GET / ") {
                    ("200 OK", form.clone())
                } else {
                    ("404 Not Found", String::new())
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                    page.len()
                );
            }
        });
        FormServer { url, posts }
    }
}

/// `application/x-www-form-urlencoded` decoded.
fn form_fields(body: &str) -> HashMap<String, String> {
    let decode = |s: &str| {
        let b = s.as_bytes();
        let mut out = Vec::with_capacity(b.len());
        let mut i = 0;
        while i < b.len() {
            let hex = (b[i] == b'%')
                .then(|| s.get(i + 1..i + 3))
                .flatten()
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match (b[i], hex) {
                (_, Some(v)) => {
                    out.push(v);
                    i += 3;
                }
                (b'+', None) => {
                    out.push(b' ');
                    i += 1;
                }
                (c, None) => {
                    out.push(c);
                    i += 1;
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    };
    body.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// Firefox's own window (no CDP): a form on 127.0.0.1 filled field by field and submitted
/// with its button; the POST the test's server received is the oracle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn firefox_form_filled_and_submitted_through_the_desktop() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let dir = scratch("firefox");
    let profile = dir.join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::copy(
        format!("{FIXTURES}/firefox-user.js"),
        profile.join("user.js"),
    )
    .unwrap();
    let site = FormServer::start();
    let app = Group::start(
        desktop,
        "firefox",
        &dir,
        "firefox-esr",
        &[
            "-profile",
            profile.to_str().unwrap(),
            "-no-remote",
            "-new-instance",
            &site.url,
        ],
        &[("GNOME_ACCESSIBILITY", "1".into())],
    );
    let d = Driver {
        server: &server,
        test: "firefox",
        app: &app,
    };
    let w = d.window("deskpilot order form").await;
    let edit = |c: &Value| role_is(c, &["Edit"]);
    let fill = [
        ("Full name field", "Full name", "Grace Hopper"),
        ("Email field", "Email", "grace@example.invalid"),
        ("Notes field", "Notes", "Zoë's first order"),
    ];
    for (description, name, value) in fill {
        let field = d
            .find(&w, description, &format!("the \"{name}\" edit"), |c| {
                edit(c) && c["name"] == name
            })
            .await;
        let r = d
            .ok(
                "set_value",
                json!({ "element": field["token"], "value": value }),
            )
            .await;
        assert_eq!(
            r["value"],
            value,
            "set_value reads back what it set; pyatspi reads the field as {:?}",
            field_text(desktop, &app, name)
        );
    }
    let gift = d
        .find(&w, "Gift wrap checkbox", "the Gift wrap check box", |c| {
            role_is(c, &["CheckBox"]) && c["name"] == "Gift wrap"
        })
        .await;
    d.ok("click", json!({ "element": gift["token"] })).await;
    let order = d
        .find(&w, "Place order button", "the Place order button", |c| {
            role_is(c, &["Button"]) && c["name"] == "Place order"
        })
        .await;
    d.ok("click", json!({ "element": order["token"] })).await;
    let body = wait_for(
        Duration::from_secs(20),
        "the form's POST at the test's server",
        || async { site.posts.lock().unwrap().first().cloned() },
    )
    .await;
    say("firefox", &format!("POST body: {body}"));
    let got = form_fields(&body);
    let want: HashMap<String, String> = [
        ("name", "Grace Hopper"),
        ("email", "grace@example.invalid"),
        ("notes", "Zoë's first order"),
        ("gift", "yes"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(got, want, "the posted form: {body}");
    assert_eq!(site.posts.lock().unwrap().len(), 1, "submitted once");
    drop(app);
    server.finish().await;
}

/// Thunderbird's account setup with no network: name and address set by their labels, on to
/// the manual server settings, the host name set there; pyatspi reads every field back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thunderbird_account_setup_fields_filled() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let dir = scratch("thunderbird");
    let profile = dir.join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::copy(
        format!("{FIXTURES}/thunderbird-user.js"),
        profile.join("user.js"),
    )
    .unwrap();
    let app = Group::start(
        desktop,
        "thunderbird",
        &dir,
        "thunderbird",
        &["-profile", profile.to_str().unwrap(), "-no-remote"],
        &[("GNOME_ACCESSIBILITY", "1".into())],
    );
    let d = Driver {
        server: &server,
        test: "thunderbird",
        app: &app,
    };
    let w = d.window("Thunderbird").await;
    let field_value = |name: &'static str, want: &'static str| {
        move |v: &Value| {
            v["fields"]
                .as_array()?
                .iter()
                .any(|f| f["name"] == name && f["text"] == want)
                .then_some(())
        }
    };
    for (description, name, value) in [
        ("Full name field", "Full name*", "Ada Lovelace"),
        (
            "Email address field",
            "Email address*",
            "ada@example.invalid",
        ),
    ] {
        let field = d
            .find(&w, description, &format!("the \"{name}\" edit"), |c| {
                role_is(c, &["Edit"])
                    && c["name"]
                        .as_str()
                        .is_some_and(|n| n.starts_with(&name[..name.len() - 1]))
            })
            .await;
        let r = d
            .ok(
                "set_value",
                json!({ "element": field["token"], "value": value }),
            )
            .await;
        assert_eq!(r["value"], value, "set_value reads back what it set");
        oracle(
            desktop,
            &app,
            "fields",
            &format!("{name} reading {value:?}"),
            field_value(name, value),
        )
        .await;
    }
    let next = d
        .find(&w, "Continue button", "the Continue button", |c| {
            role_is(c, &["Button"]) && c["name"] == "Continue"
        })
        .await;
    d.ok("click", json!({ "element": next["token"] })).await;
    // No network: the wizard goes on to the manual incoming-server settings.
    let host = d
        .find(&w, "Hostname field", "the Hostname edit", |c| {
            role_is(c, &["Edit"])
                && c["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("Hostname"))
        })
        .await;
    let r = d
        .ok(
            "set_value",
            json!({ "element": host["token"], "value": "imap.example.invalid" }),
        )
        .await;
    assert_eq!(r["value"], "imap.example.invalid");
    oracle(
        desktop,
        &app,
        "fields",
        "Hostname* reading imap.example.invalid",
        field_value("Hostname*", "imap.example.invalid"),
    )
    .await;
    oracle(
        desktop,
        &app,
        "fields",
        "Username* carried over from the address",
        field_value("Username*", "ada@example.invalid"),
    )
    .await;
    drop(app);
    server.finish().await;
}

/// GIMP (GTK 2): File opened by token, then its "New..." item chosen by token; the
/// "Create a New Image" dialog appears in GIMP's own accessibility tree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gimp_menu_item_chosen_by_token() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let dir = scratch("gimp");
    let app = Group::start(
        desktop,
        "gimp",
        &dir,
        "gimp",
        &["-n", "-s", "-d", "-f"],
        &[("GIMP2_DIRECTORY", dir.join("gimp").to_str().unwrap().into())],
    );
    let d = Driver {
        server: &server,
        test: "gimp",
        app: &app,
    };
    let w = d.window("GNU Image Manipulation Program").await;
    let file = d
        .element_in_tree(&w, "the File menu", |e| {
            role_is(e, &["Menu", "MenuItem"]) && e["name"] == "File"
        })
        .await;
    d.ok("click", json!({ "element": file["token"] })).await;
    let new = d
        .element_in_tree(&w, "the open File menu's \"New...\" item", |e| {
            role_is(e, &["MenuItem"]) && e["name"] == "New..."
        })
        .await;
    d.ok("click", json!({ "element": new["token"] })).await;
    oracle(
        desktop,
        &app,
        "windows",
        "the Create a New Image dialog",
        |v| {
            v["windows"]
                .as_array()?
                .iter()
                .any(|w| w["name"] == "Create a New Image")
                .then_some(())
        },
    )
    .await;
    drop(app);
    server.finish().await;
}

/// GTK 4 (gtk4-demo): the "Assistant" demo selected and its Run button clicked, both by
/// token; the demo's window joins the app's own accessibility tree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk4_demo_run_button_clicked_by_token() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let dir = scratch("gtk4");
    let app = Group::start(desktop, "gtk4-demo", &dir, "gtk4-demo", &[], &[]);
    let d = Driver {
        server: &server,
        test: "gtk4",
        app: &app,
    };
    let w = d.window("GTK Demo").await;
    let windows = |v: &Value| v["windows"].as_array().map(Vec::len);
    let before = oracle(desktop, &app, "windows", "the demo's window", windows).await;
    let row = d
        .find(&w, "Assistant", "the Assistant demo's row", |c| {
            c["name"] == "Assistant" || c["described_as"] == "Assistant"
        })
        .await;
    d.ok("click", json!({ "element": row["token"] })).await;
    let run = d
        .find(&w, "Run button", "the Run button", |c| {
            role_is(c, &["Button"]) && c["name"] == "Run"
        })
        .await;
    assert_eq!(
        run["enabled"], true,
        "Run is enabled once a demo is selected: {run}"
    );
    d.ok("click", json!({ "element": run["token"] })).await;
    oracle(
        desktop,
        &app,
        "windows",
        "the Assistant demo's window",
        |v| (windows(v)? > before).then_some(()),
    )
    .await;
    drop(app);
    server.finish().await;
}

/// Qt 5 (FeatherPad): the editor found as an edit field, its text set with set_value; pyatspi
/// reads the same text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qt_text_field_set_and_read_back() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let dir = scratch("qt");
    let app = Group::start(desktop, "featherpad", &dir, "featherpad", &["-s"], &[]);
    let d = Driver {
        server: &server,
        test: "qt",
        app: &app,
    };
    // FeatherPad's window is titled after its (unsaved) document.
    let w = d.window("Untitled").await;
    // The editor has no name and no label: it is the window's editable text area.
    let editor = d
        .element_in_tree(&w, "the editable text area", |e| {
            role_is(e, &["Edit", "Document"]) && e["editable"] == true
        })
        .await;
    let value = "Qt value: Zoë 中文 ✓";
    let r = d
        .ok(
            "set_value",
            json!({ "element": editor["token"], "value": value }),
        )
        .await;
    assert_eq!(r["value"], value, "set_value reads back what it set");
    assert_eq!(r["effect"], "confirmed");
    oracle(desktop, &app, "fields", "the editor's text", |v| {
        v["fields"]
            .as_array()?
            .iter()
            .any(|f| f["text"] == value)
            .then_some(())
    })
    .await;
    let r = d
        .ok("get_element_text", json!({ "element": editor["token"] }))
        .await;
    assert_eq!(r["text"], value);
    drop(app);
    server.finish().await;
}

/// The GTK 3 file chooser (zenity --file-selection --save): the name field found by its
/// label, set, and OK pressed by token; zenity prints the chosen path and exits 0.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gtk_file_chooser_file_chosen_by_its_name_field() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &[], &[]).await;
    let dir = scratch("chooser");
    let files = dir.join("files");
    std::fs::create_dir_all(&files).unwrap();
    for f in ["alpha.txt", "beta.txt"] {
        std::fs::write(files.join(f), f).unwrap();
    }
    let start_in = format!("{}/", files.display());
    let app = Group::start(
        desktop,
        "zenity",
        &dir,
        "zenity",
        &[
            "--file-selection",
            "--save",
            "--title=deskpilot save",
            &format!("--filename={start_in}"),
        ],
        &[],
    );
    let d = Driver {
        server: &server,
        test: "chooser",
        app: &app,
    };
    let w = d.window("deskpilot save").await;
    let field = d
        .find(&w, "file name field", "the Name edit", |c| {
            role_is(c, &["Edit"])
        })
        .await;
    let r = d
        .ok(
            "set_value",
            json!({ "element": field["token"], "value": "chosen.txt" }),
        )
        .await;
    assert_eq!(r["value"], "chosen.txt");
    // GTK makes OK sensitive a moment after the name changes: wait for it, as a person would.
    let ok_button = d
        .find(&w, "OK button", "an enabled OK button", |c| {
            role_is(c, &["Button"]) && c["name"] == "OK" && c["enabled"] == true
        })
        .await;
    d.ok("click", json!({ "element": ok_button["token"] }))
        .await;
    let status = wait_for(Duration::from_secs(20), "zenity to exit", || async {
        app.exited()
    })
    .await;
    // zenity's reader thread may still be draining the pipe.
    let out = wait_for(Duration::from_secs(5), "zenity's output", || async {
        let s = app.stdout();
        s.ends_with('\n').then_some(s)
    })
    .await;
    assert!(status.success(), "zenity exited {status:?}: {out:?}");
    assert_eq!(out.trim_end(), files.join("chosen.txt").to_str().unwrap());
    drop(app);
    server.finish().await;
}
