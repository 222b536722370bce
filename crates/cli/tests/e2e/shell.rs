//! Shell sessions through MCP: state that persists, hangs that recover with their state,
//! streams and exit codes kept apart, huge output cut, parallel sessions, verified execution
//! with its retry rules and the one automatic fix, and the gates. No desktop needed.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{self, Server, error_code, ok, serve, text};
use crate::safety::ConfigFile;

/// A scratch directory with a CJK name, removed when dropped.
struct Scratch(std::path::PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("deskpilot 中文 {name} {}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn exec(server: &Server, session: &str, command: &str) -> Value {
    let r = server
        .call(
            "shell_exec",
            json!({ "command": command, "session": session }),
        )
        .await;
    ok(&r).clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn state_persists_streams_stay_apart_and_hangs_recover() {
    // Not for the desktop, but one at a time with the desktop tests: the load of a shell test
    // must not starve an app another test is typing into.
    let _guard = harness::exclusive().await;
    let server = serve(None, &[], &[]).await;
    let dir = Scratch::new("state");
    std::fs::create_dir_all(dir.0.join("子目录")).unwrap();
    let r = server.call("shell_cd", json!({ "path": dir.path() })).await;
    assert_eq!(ok(&r)["cwd"], dir.path(), "{}", text(&r));
    let s = exec(&server, "main", "cd 子目录 && printf '%s' \"$PWD\"").await;
    let inner = format!("{}/子目录", dir.path());
    assert_eq!(s["stdout"]["text"], inner.as_str(), "no newline is added");
    assert_eq!(s["cwd"], inner.as_str());
    let r = server.call("shell_cwd", json!({})).await;
    assert_eq!(ok(&r)["cwd"], inner.as_str());
    // A missing directory: a typed error with a diagnosis, and the session stays where it was.
    let r = server.call("shell_cd", json!({ "path": "不存在" })).await;
    assert_eq!(error_code(&r), "COMMAND_FAILED");
    assert_eq!(
        r.structured_content.as_ref().unwrap()["diagnosis"]["category"],
        "path-not-found"
    );
    ok(&server.call("shell_cd", json!({ "path": ".." })).await);

    // stdout, stderr and the exit code apart.
    let s = exec(&server, "main", "echo out; echo 错误 >&2; (exit 3)").await;
    assert_eq!(
        (&s["stdout"]["text"], &s["stderr"]["text"], &s["exit_code"]),
        (&json!("out\n"), &json!("错误\n"), &json!(3))
    );
    assert!(
        s["diagnosis"]["category"].is_string(),
        "a failed command is diagnosed: {s}"
    );
    let s = exec(&server, "main", "nosuchcommand-deskpilot").await;
    assert_eq!(s["exit_code"], 127);
    assert_eq!(s["diagnosis"]["category"], "cmd-not-found");
    assert_eq!(s["diagnosis"]["retryable"], false);
    // A command that reads stdin gets end-of-file.
    let started = Instant::now();
    let s = exec(&server, "main", "read line; echo \"read:[$line]\"; cat; python3 -c 'import sys; print(len(sys.stdin.read()))'").await;
    assert_eq!(s["stdout"]["text"], "read:[]\n0\n");
    assert!(started.elapsed() < Duration::from_secs(10));

    // Variables and a venv-style activation persist.
    std::fs::create_dir_all(dir.0.join("venv/bin")).unwrap();
    std::fs::write(
        dir.0.join("venv/bin/activate"),
        "export VIRTUAL_ENV=\"$PWD/venv\"\nexport PATH=\"$VIRTUAL_ENV/bin:$PATH\"\ndeactivate() { echo bye; }\n",
    )
    .unwrap();
    std::fs::write(
        dir.0.join("venv/bin/tool-in-venv"),
        "#!/bin/sh\necho venv tool\n",
    )
    .unwrap();
    exec(
        &server,
        "main",
        "chmod +x venv/bin/tool-in-venv; source venv/bin/activate; LOCAL=only-here",
    )
    .await;
    let s = exec(
        &server,
        "main",
        "tool-in-venv; echo \"$VIRTUAL_ENV|$LOCAL\"; deactivate",
    )
    .await;
    assert_eq!(
        s["stdout"]["text"],
        format!("venv tool\n{}/venv|only-here\nbye\n", dir.path()).as_str()
    );
    let r = server
        .call(
            "shell_env_set",
            json!({ "name": "DP_TOKEN", "value": "值 with 'quotes'\nand a newline" }),
        )
        .await;
    assert_eq!(ok(&r)["effect"], "confirmed");
    let r = server
        .call("shell_env_get", json!({ "name": "DP_TOKEN" }))
        .await;
    assert_eq!(ok(&r)["value"], "值 with 'quotes'\nand a newline");
    let r = server
        .call("shell_env_get", json!({ "name": "DP_NEVER_SET" }))
        .await;
    assert_eq!(ok(&r)["set"], false);
    let r = server
        .call("shell_env_get", json!({ "name": "1BAD" }))
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT");

    // A hang: killed at its timeout, the session comes back with its directory and variables.
    let started = Instant::now();
    let r = server
        .call(
            "shell_exec",
            json!({ "command": "echo started; sleep 100", "timeout_ms": 1000 }),
        )
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(error_code(&r), "COMMAND_TIMEOUT");
    let s = r.structured_content.as_ref().unwrap();
    assert_eq!(s["stdout"]["text"], "started\n");
    assert_eq!(s["diagnosis"]["category"], "timeout");
    assert!(
        text(&r).contains("DP_TOKEN") && text(&r).contains("lost"),
        "{}",
        text(&r)
    );
    let s = exec(
        &server,
        "main",
        "printf '%s|%s|%s' \"$PWD\" \"$DP_TOKEN\" \"${LOCAL-gone}\"",
    )
    .await;
    assert_eq!(
        s["stdout"]["text"],
        format!("{}|值 with 'quotes'\nand a newline|gone", dir.path()).as_str()
    );
    // The sleep is gone with its process group.
    let ps = std::process::Command::new("pgrep")
        .args(["-f", "sleep 100"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&ps.stdout).trim().is_empty(),
        "the hung command was killed"
    );
    // A command that ends the shell.
    let s = exec(&server, "main", "exit 4").await;
    assert_eq!(s["exit_code"], 4);
    assert!(
        s["restart_note"]
            .as_str()
            .unwrap()
            .contains("ended the shell")
    );
    assert_eq!(
        exec(&server, "main", "pwd").await["stdout"]["text"],
        format!("{}\n", dir.path()).as_str()
    );

    // Reset: a fresh shell, nothing carried over.
    let r = server.call("shell_reset", json!({})).await;
    ok(&r);
    let r = server
        .call("shell_env_get", json!({ "name": "DP_TOKEN" }))
        .await;
    assert_eq!(ok(&r)["set"], false);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_output_is_cut_and_sessions_run_in_parallel() {
    let _guard = harness::exclusive().await;
    let server = serve(None, &[], &[]).await;
    let s = exec(
        &server,
        "big",
        "head -c 10000000 /dev/zero | tr '\\0' x; echo; echo done",
    )
    .await;
    assert_eq!(s["stdout"]["total_bytes"], 10_000_006);
    assert!(s["stdout"]["cut_bytes"].as_u64().unwrap() > 9_000_000);
    let t = s["stdout"]["text"].as_str().unwrap();
    assert!(t.len() < 70_000 && t.starts_with("xxx") && t.ends_with("x\ndone\n"));
    assert!(t.contains("bytes cut"));
    let s = exec(&server, "big", "head -c 3000 /dev/urandom").await;
    assert_eq!(s["stdout"]["binary"], true);

    // 5 sessions × 10 calls at once: each session's calls run one at a time (its counter
    // counts 1..10 without a lost update), sessions run side by side.
    for i in 0..5 {
        exec(&server, &format!("p{i}"), &format!("n=0; ID=p{i}")).await;
    }
    let started = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..5 {
        for _ in 0..10 {
            let peer = server.client.peer().clone();
            let args = json!({ "command": "sleep 0.2; n=$((n+1)); echo \"$ID $n\"", "session": format!("p{i}") });
            calls.spawn(async move {
                let Value::Object(map) = args else {
                    unreachable!()
                };
                peer.call_tool(
                    rmcp::model::CallToolRequestParams::new("shell_exec").with_arguments(map),
                )
                .await
                .unwrap()
            });
        }
    }
    let results = calls.join_all().await;
    let took = started.elapsed();
    let mut seen: std::collections::BTreeMap<String, Vec<u32>> = Default::default();
    for r in &results {
        let line = ok(r)["stdout"]["text"].as_str().unwrap().trim().to_string();
        let (id, n) = line.split_once(' ').unwrap();
        seen.entry(id.to_string())
            .or_default()
            .push(n.parse().unwrap());
    }
    assert_eq!(seen.len(), 5, "{seen:?}");
    for (id, mut ns) in seen {
        ns.sort();
        assert_eq!(ns, (1..=10).collect::<Vec<_>>(), "session {id}");
    }
    // Serial would be 50 × 0.2 s = 10 s; per session it is 10 × 0.2 s.
    assert!(
        took < Duration::from_secs(8),
        "sessions did not run in parallel: {took:?}"
    );
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verified_execution_retries_only_when_it_can_help() {
    let _guard = harness::exclusive().await;
    let server = serve(None, &[], &[]).await;
    let dir = Scratch::new("verified");
    ok(&server.call("shell_cd", json!({ "path": dir.path() })).await);
    // Passes.
    let r = server
        .call(
            "shell_exec_verified",
            json!({ "command": "mkdir -p 新目录 && printf 'héllo 世界' > 新目录/f.txt",
                    "expect": { "isDir": "新目录", "fileContains": ["新目录/f.txt", "世界"], "cwd": dir.path() } }),
        )
        .await;
    let s = ok(&r);
    assert_eq!(
        (
            s["verified"].clone(),
            s["attempts"].as_array().unwrap().len()
        ),
        (json!(true), 1)
    );
    // A command that says it worked but did not: the check fails.
    let r = server
        .call(
            "shell_exec_verified",
            json!({ "command": "echo created", "expect": { "pathExists": "never-made" }, "retries": 1 }),
        )
        .await;
    assert_eq!(error_code(&r), "VERIFICATION_FAILED", "{}", text(&r));
    let s = r.structured_content.as_ref().unwrap();
    assert_eq!(
        s["attempts"].as_array().unwrap().len(),
        2,
        "retried once: {s}"
    );
    assert_eq!(s["effect"], "suspected_noop");
    // Not retryable: one attempt, however many retries were allowed.
    let r = server
        .call(
            "shell_exec_verified",
            json!({ "command": "ls /nonexistent-deskpilot-dir", "expect": { "isDir": "/nonexistent-deskpilot-dir" }, "retries": 3 }),
        )
        .await;
    assert_eq!(error_code(&r), "VERIFICATION_FAILED");
    let s = r.structured_content.as_ref().unwrap();
    assert_eq!(s["attempts"].as_array().unwrap().len(), 1, "{s}");
    assert_eq!(s["attempts"][0]["diagnosis"]["retryable"], false);
    // Retryable (a busy file): every retry used, with pauses.
    let started = Instant::now();
    let r = server
        .call(
            "shell_exec_verified",
            json!({ "command": "echo 'cp: cannot create regular file: Text file busy' >&2; false",
                    "expect": { "isFile": "busy.txt" }, "retries": 2 }),
        )
        .await;
    let s = r.structured_content.as_ref().unwrap();
    assert_eq!(s["attempts"].as_array().unwrap().len(), 3, "{s}");
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "backoff 200 + 400 ms"
    );
    // Missing parent: created, then the command succeeds.
    let r = server
        .call(
            "shell_exec_verified",
            json!({ "command": "touch 甲/乙/c.txt", "expect": { "isFile": "甲/乙/c.txt" }, "retries": 0 }),
        )
        .await;
    let s = ok(&r);
    assert_eq!(s["attempts"].as_array().unwrap().len(), 2, "{s}");
    assert!(
        s["attempts"][0]["fix_applied"]
            .as_str()
            .unwrap()
            .contains("甲/乙")
    );
    assert!(dir.0.join("甲/乙/c.txt").is_file());
    // …but never for a command that reads.
    let r = server
        .call(
            "shell_exec_verified",
            json!({ "command": "cat 丙/丁/x.txt", "expect": { "isFile": "丙/丁/x.txt" } }),
        )
        .await;
    assert_eq!(error_code(&r), "VERIFICATION_FAILED");
    assert!(
        !dir.0.join("丙").exists(),
        "no directory invented for a read"
    );
    let r = server
        .call(
            "shell_exec_verified",
            json!({ "command": "true", "expect": {} }),
        )
        .await;
    assert_eq!(error_code(&r), "INVALID_ARGUMENT");
    // The diagnoser as a tool.
    let r = server
        .call(
            "diagnose",
            json!({ "error": "无法将“foo”项识别为 cmdlet、函数、脚本文件或可运行程序的名称。" }),
        )
        .await;
    assert_eq!(ok(&r)["category"], "cmd-not-found");
    // Every tool error carries a diagnosis.
    let r = server.call("screenshot", json!({ "window_id": 5 })).await;
    assert!(r.structured_content.as_ref().unwrap()["diagnosis"]["category"].is_string());
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_commands_pass_the_gates() {
    let _guard = harness::exclusive().await;
    let dir = Scratch::new("gates");
    let config = ConfigFile::new("shellgates", "blocklist = [\"rm -rf\"]\ndryRun = true\n");
    let server = serve(None, &["--config", config.arg()], &[]).await;
    let r = server
        .call(
            "shell_exec",
            json!({ "command": format!("rm -rf '{}'", dir.path()) }),
        )
        .await;
    assert_eq!(error_code(&r), "BLOCKED_TARGET", "{}", text(&r));
    assert!(dir.0.exists());
    let marker = dir.0.join("made-by-dry-run");
    let r = server
        .call(
            "shell_exec",
            json!({ "command": format!("touch '{}'", marker.display()) }),
        )
        .await;
    let s = ok(&r);
    assert_eq!(s["dry_run"], true);
    assert!(
        text(&r).starts_with("[dry run] Would run shell command"),
        "{}",
        text(&r)
    );
    assert!(!marker.exists(), "dry run touches nothing");
    server.finish().await;
}
