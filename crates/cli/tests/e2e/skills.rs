//! `app_skill` through MCP: built-ins, the user layer on disk, the codes, the hint line in the
//! next screenshot, dry run, and a server killed with SIGKILL in the middle of saves.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::{self, error_code, ok, serve, text, window_of};
use crate::safety::ConfigFile;

/// A skills directory of the test's own, removed when dropped.
struct SkillsDir(PathBuf);

impl SkillsDir {
    fn new(name: &str) -> SkillsDir {
        let dir =
            std::env::temp_dir().join(format!("deskpilot-skills-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        SkillsDir(dir)
    }

    fn arg(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for SkillsDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fixtures/gtk_fixture.py");

#[tokio::test(flavor = "multi_thread")]
async fn skills_are_listed_read_written_and_hinted_in_the_next_screenshot() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let dir = SkillsDir::new("flow");
    let server = serve(Some(desktop), &[], &[("DESKPILOT_SKILLS_DIR", dir.arg())]).await;

    let r = server.call("app_skill", json!({ "action": "list" })).await;
    let list = ok(&r);
    assert_eq!(list["count"], 22, "{}", text(&r));
    assert!(text(&r).contains("- Mousepad [builtin]"), "{}", text(&r));
    let r = server
        .call("app_skill", json!({ "action": "get", "app": "EXCEL.EXE" }))
        .await;
    assert_eq!(
        (ok(&r)["found"].clone(), ok(&r)["source"].clone()),
        (json!(true), json!("builtin"))
    );
    assert!(text(&r).contains("F12"), "{}", text(&r));

    // A skill for our fixture, matched by its title, then hinted in its next screenshot.
    let title = "deskpilot skill fixture";
    let mut cmd = std::process::Command::new("/usr/bin/python3");
    cmd.arg(FIXTURE)
        .arg(title)
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    desktop.configure(&mut cmd);
    let (child, _lines) = harness::spawn_reporting(cmd);
    let fixture = harness::App(child);
    window_of(&server, fixture.0.id()).await;
    let r = server
        .call(
            "app_skill",
            json!({ "action": "save", "app": title, "summary": "test recipe", "content": "- Apply applies.", "match": ["gtkfixture"] }),
        )
        .await;
    let saved = ok(&r);
    assert_eq!(saved["effect"], "confirmed", "{}", text(&r));
    let path = PathBuf::from(saved["path"].as_str().unwrap());
    assert!(
        path.starts_with(&dir.0)
            && std::fs::read_to_string(&path)
                .unwrap()
                .contains("- Apply applies.")
    );
    let r = server
        .call("screenshot", json!({ "title_match": title }))
        .await;
    assert!(
        text(&r).contains(&format!("App skill available for {title} (test recipe)")),
        "{}",
        text(&r)
    );
    assert_eq!(ok(&r)["skill_hint"]["app"], title);
    // get without app: the app of the last screenshot.
    let r = server.call("app_skill", json!({ "action": "get" })).await;
    assert_eq!(ok(&r)["app"], title, "{}", text(&r));

    // The codes.
    let again = server
        .call(
            "app_skill",
            json!({ "action": "save", "app": title, "content": "x" }),
        )
        .await;
    assert_eq!(error_code(&again), "SKILL_EXISTS");
    assert!(text(&again).contains("overwrite"), "{}", text(&again));
    let long = "y".repeat(3990);
    let r = server
        .call(
            "app_skill",
            json!({ "action": "append", "app": title, "content": long }),
        )
        .await;
    assert_eq!(error_code(&r), "SKILL_TOO_LONG");
    assert_eq!(ok_or_error_effect(&r), "refused");
    assert!(
        std::fs::read_to_string(&path)
            .unwrap()
            .ends_with("- Apply applies.\n"),
        "unchanged"
    );
    let r = server
        .call("app_skill", json!({ "action": "remove", "app": "Excel" }))
        .await;
    assert_eq!(error_code(&r), "SKILL_BUILTIN");

    // Override a built-in, then remove the override: the built-in is back.
    ok(&server
        .call(
            "app_skill",
            json!({ "action": "save", "app": "Mousepad", "content": "- mine" }),
        )
        .await);
    let r = server
        .call("app_skill", json!({ "action": "get", "app": "mousepad" }))
        .await;
    assert_eq!(ok(&r)["source"], "user");
    ok(&server
        .call(
            "app_skill",
            json!({ "action": "remove", "app": "mousepad" }),
        )
        .await);
    let r = server
        .call("app_skill", json!({ "action": "get", "app": "mousepad" }))
        .await;
    assert_eq!(ok(&r)["source"], "builtin");

    // A hand edit is seen after refresh.
    std::fs::write(
        dir.0.join("hand.md"),
        "---\napp: HandMade\nsummary: by hand\n---\n- made by hand\n",
    )
    .unwrap();
    let r = server
        .call("app_skill", json!({ "action": "get", "app": "HandMade" }))
        .await;
    assert_eq!(ok(&r)["found"], false);
    let r = server
        .call(
            "app_skill",
            json!({ "action": "get", "app": "handmade", "refresh": true }),
        )
        .await;
    assert_eq!(
        (ok(&r)["found"].clone(), ok(&r)["content"].clone()),
        (json!(true), json!("- made by hand"))
    );
    server.finish().await;
}

fn ok_or_error_effect(r: &rmcp::model::CallToolResult) -> String {
    let s = r.structured_content.clone().unwrap_or_default();
    s["effect"]
        .as_str()
        .or_else(|| s["error"]["effect"].as_str())
        .unwrap_or("")
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dry_run_writes_no_skill() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let dir = SkillsDir::new("dry");
    let config = ConfigFile::new(
        "skills-dry",
        &format!("dryRun = true\nskillsDir = {:?}\n", dir.arg()),
    );
    let server = serve(Some(desktop), &["--config", config.arg()], &[]).await;
    let r = server
        .call(
            "app_skill",
            json!({ "action": "save", "app": "DryApp", "content": "- nothing" }),
        )
        .await;
    assert!(
        text(&r).contains("[dry run] Would save app skill \"DryApp\""),
        "{}",
        text(&r)
    );
    assert!(!dir.0.join("dryapp.md").exists());
    server.finish().await;
}

/// The body of a skill file (after its front matter).
fn body(path: &std::path::Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    Some(text.splitn(3, "---\n").nth(2)?.trim_end().to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_killed_mid_save_leaves_the_old_or_the_new_skill_never_a_torn_one() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let dir = SkillsDir::new("kill");
    let (a, b) = ("a".repeat(3900), "b".repeat(3900));
    let path = dir.0.join("bigapp.md");
    for round in 0..6u64 {
        let server = serve(Some(desktop), &[], &[("DESKPILOT_SKILLS_DIR", dir.arg())]).await;
        let pid = server.pid() as i32;
        // Kill it at a different moment each round, while it saves in a loop.
        let killer = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(15 + round * 23)).await;
            // SAFETY: a plain signal to the server process this test started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        });
        let mut saves = 0;
        for i in 0..10_000 {
            let content = if i % 2 == 0 { &a } else { &b };
            let args =
                json!({ "action": "save", "app": "BigApp", "content": content, "overwrite": true });
            let Value::Object(map) = args else {
                unreachable!()
            };
            let call = server.client.call_tool(
                rmcp::model::CallToolRequestParams::new("app_skill").with_arguments(map),
            );
            match call.await {
                Ok(_) => saves += 1,
                Err(_) => break,
            }
        }
        killer.await.unwrap();
        if path.exists() {
            let got = body(&path).expect("a readable skill file");
            assert!(
                got == a || got == b,
                "round {round} after {saves} saves: a torn file of {} bytes",
                got.len()
            );
        }
        let leftovers: Vec<_> = std::fs::read_dir(&dir.0)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            leftovers
                .iter()
                .all(|n| n == "bigapp.md" || n.ends_with(".tmp")),
            "{leftovers:?}"
        );
    }
    assert!(path.exists(), "at least one save completed in six rounds");
}
