//! `deskpilot audit-overlap` against real servers started from a client configuration file:
//! deskpilot's own `deskpilot` and `desktopos` profiles and `@playwright/mcp` (Debian's
//! chromium), plus a server whose command does not exist.

use serde_json::Value;

#[test]
#[allow(clippy::print_stderr)]
fn audit_overlap_finds_cross_server_pairs_and_reports_a_server_that_cannot_start() {
    let playwright = std::env::var("DESKPILOT_PLAYWRIGHT_MCP").ok();
    if playwright.is_none() {
        assert!(
            !std::env::var("CI").is_ok_and(|v| v == "true"),
            "CI=true and DESKPILOT_PLAYWRIGHT_MCP is not set (scripts/test installs @playwright/mcp)"
        );
        eprintln!(
            "SKIP audit-overlap: DESKPILOT_PLAYWRIGHT_MCP (the @playwright/mcp cli.js) is not set"
        );
        return;
    }
    let exe = env!("CARGO_BIN_EXE_deskpilot");
    let config = std::env::temp_dir().join(format!("deskpilot-audit-{}.json", std::process::id()));
    let servers = serde_json::json!({ "mcpServers": {
        "deskpilot": { "command": exe, "args": ["serve"] },
        "desktopos": { "command": exe, "args": ["serve", "--profile", "desktopos"] },
        "playwright": { "command": "node", "args": [playwright.unwrap(), "--headless", "--executable-path", "/usr/bin/chromium"] },
        "ghost": { "command": "/nonexistent/mcp-server" },
    }});
    std::fs::write(&config, servers.to_string()).unwrap();
    let out = std::process::Command::new(exe)
        .args(["audit-overlap", "--json", "--top", "500", "--config"])
        .arg(&config)
        .env_remove("DISPLAY")
        .env("XDG_CONFIG_HOME", "/nonexistent/deskpilot-tests")
        .output()
        .expect("run audit-overlap");
    let _ = std::fs::remove_file(&config);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    let server = |name: &str| {
        v["servers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} not reported: {v:#}"))
    };
    assert_eq!(
        server("deskpilot")["tools"],
        deskpilot_mcp::deskpilot_tools_list().len()
    );
    // DesktopOS's 33 and deskpilot's two secret tools.
    assert_eq!(server("desktopos")["tools"], 35);
    assert!(
        server("playwright")["tools"].as_u64().unwrap() > 10,
        "{v:#}"
    );
    let ghost = server("ghost");
    assert!(
        ghost["error"]
            .as_str()
            .is_some_and(|e| e.contains("cannot start")),
        "{ghost}"
    );
    let has = |a: (&str, &str), b: (&str, &str)| {
        v["pairs"].as_array().unwrap().iter().any(|p| {
            let x = (
                p["a"]["server"].as_str().unwrap(),
                p["a"]["tool"].as_str().unwrap(),
            );
            let y = (
                p["b"]["server"].as_str().unwrap(),
                p["b"]["tool"].as_str().unwrap(),
            );
            (x, y) == (a, b) || (x, y) == (b, a)
        })
    };
    assert!(
        has(
            ("deskpilot", "browser_click"),
            ("playwright", "browser_click")
        ),
        "{v:#}"
    );
    assert!(
        has(("deskpilot", "click"), ("desktopos", "desktop_click")),
        "{v:#}"
    );
    assert!(v["note"].as_str().unwrap().contains("not a verdict"));
}
