//! The binary's own commands: `doctor`, and `serve --virtual-display` bring-up and teardown.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::harness::{ok, wait_for};

const BIN: &str = env!("CARGO_BIN_EXE_deskpilot");

fn xvfb_installed() -> bool {
    let found = Path::new("/usr/bin/Xvfb").exists();
    assert!(
        found || std::env::var("CI").as_deref() != Ok("true"),
        "CI=true but Xvfb is not installed"
    );
    found
}

#[test]
fn an_unknown_profile_exits_non_zero_listing_the_profiles() {
    let out = Command::new(BIN)
        .args(["serve", "--profile", "dhs"])
        .env_remove("DISPLAY")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "nothing but JSON-RPC on stdout, and here nothing at all"
    );
    assert!(
        stderr.contains("no profile \"dhs\"") && stderr.contains("deskpilot"),
        "{stderr}"
    );
    // `call` reads the same table.
    let out = Command::new(BIN)
        .args(["call", "status", "--profile", "dhs"])
        .env_remove("DISPLAY")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("profiles: deskpilot"));
}

#[test]
fn doctor_without_a_display_says_what_to_do() {
    let out = Command::new(BIN)
        .arg("doctor")
        .env_remove("DISPLAY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("FAIL  display"), "{stdout}");
    assert!(
        stdout.contains("--virtual-display") && stdout.contains("apt-get install"),
        "{stdout}"
    );
}

#[test]
fn doctor_on_its_own_virtual_display_finds_everything() {
    if !xvfb_installed() {
        return;
    }
    let out = Command::new(BIN)
        .args(["doctor", "--virtual-display"])
        .env_remove("DISPLAY")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for check in [
        "display",
        "XTEST",
        "MIT-SHM",
        "XInputExtension",
        "RANDR",
        "capture",
        "window manager",
        "accessibility bus",
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("ok") && l.contains(check)),
            "{check}: {stdout}"
        );
    }
}

#[test]
fn virtual_display_without_xvfb_names_the_package() {
    let empty = std::env::temp_dir().join(format!("deskpilot-empty-path-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    let out = Command::new(BIN)
        .args(["desktop", "--", "true"])
        .env("PATH", &empty)
        .env_remove("DISPLAY")
        .output()
        .unwrap();
    let _ = std::fs::remove_dir(&empty);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("Xvfb is not installed: apt-get install -y xvfb"),
        "{stderr}"
    );
}

/// `serve --virtual-display` starts a desktop, and SIGTERM (clean) or SIGKILL (no cleanup code
/// runs at all) both take every child process down with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn virtual_display_dies_with_the_server_on_sigterm_and_sigkill() {
    if !xvfb_installed() {
        return;
    }
    for signal in [libc::SIGTERM, libc::SIGKILL] {
        let mut cmd = tokio::process::Command::new(BIN);
        cmd.args(["serve", "--virtual-display"])
            .env_remove("DISPLAY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        cmd.kill_on_drop(true);
        let mut child = cmd.spawn().unwrap();
        let pid = child.id().unwrap() as i32;
        let transport = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
        let client = rmcp::ServiceExt::serve((), transport).await.unwrap();
        let status = client
            .call_tool(
                rmcp::model::CallToolRequestParams::new("status")
                    .with_arguments(json!({}).as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        let display = ok(&status)["display"].as_str().unwrap().to_string();
        let number = display.trim_start_matches(':').to_string();
        let socket = format!("/tmp/.X11-unix/X{number}");
        assert!(Path::new(&socket).exists(), "{socket} exists while serving");
        let children = descendants(pid);
        assert!(
            children.len() >= 4,
            "Xvfb, dbus, at-spi, openbox: {children:?}"
        );

        // SAFETY: kill(2) on the server we spawned.
        unsafe { libc::kill(pid, signal) };
        let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
        wait_for(
            Duration::from_secs(10),
            "the desktop's processes to exit",
            || {
                let alive: Vec<_> = children
                    .iter()
                    .filter(|p| Path::new(&format!("/proc/{p}")).exists() && !zombie(**p))
                    .collect();
                let gone = alive.is_empty() && !Path::new(&socket).exists();
                async move { gone.then_some(()) }
            },
        )
        .await;
        drop(client);
    }
}

/// Every descendant pid of `pid` (from /proc), while it runs.
fn descendants(pid: i32) -> Vec<i32> {
    let mut all = Vec::new();
    let mut frontier = vec![pid];
    while let Some(parent) = frontier.pop() {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            break;
        };
        for e in entries.flatten() {
            let Some(p) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
                continue;
            };
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
            // Field 4 (after the parenthesised name) is the parent pid.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse::<i32>().ok());
            if ppid == Some(parent) {
                all.push(p);
                frontier.push(p);
            }
        }
    }
    all
}

fn zombie(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .is_some_and(|s| s == "Z")
}
