//! A client of either MCP revision against the same `deskpilot serve`, over stdio and over
//! HTTP: a 2025-11-25 client (the `initialize` handshake, a session) and a 2026-07-28 client
//! (`server/discover`, then self-contained requests) each list the tools, resources and
//! prompts, call a tool that reads the desktop and read a resource, and get the same answers.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, ProtocolVersion, ReadResourceRequestParams, ResourceContents,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, RunningService};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt as _};
use serde_json::json;

use crate::harness::{self, ok};

type Client = RunningService<RoleClient, ()>;

/// How each client starts its lifecycle.
fn lifecycles() -> [(&'static str, Option<ClientLifecycleMode>); 2] {
    [
        ("2025-11-25", None),
        (
            "2026-07-28",
            Some(ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            }),
        ),
    ]
}

/// What every client must see the same way: the tool, resource and prompt lists, a tool call
/// that read the desktop's windows, and the window list read as a resource naming `title`.
async fn exercise(client: &Client, revision: &str, title: &str) -> (usize, Vec<String>) {
    let tools = client
        .list_all_tools()
        .await
        .unwrap_or_else(|e| panic!("{revision}: tools/list: {e}"));
    assert!(
        tools.iter().any(|t| t.name == "list_windows"),
        "{revision}: list_windows missing"
    );
    let windows = client
        .call_tool(
            CallToolRequestParams::new("list_windows")
                .with_arguments(json!({}).as_object().cloned().expect("an object")),
        )
        .await
        .unwrap_or_else(|e| panic!("{revision}: list_windows: {e}"));
    let listed = ok(&windows).to_string();
    assert!(
        listed.contains(title),
        "{revision}: list_windows does not name {title}: {listed}"
    );
    let resources = client
        .list_all_resources()
        .await
        .unwrap_or_else(|e| panic!("{revision}: resources/list: {e}"));
    let uris: Vec<String> = resources.iter().map(|r| r.uri.clone()).collect();
    assert!(
        uris.iter().any(|u| u == "deskpilot://windows"),
        "{revision}: resources/list lacks deskpilot://windows: {uris:?}"
    );
    let read = client
        .read_resource(ReadResourceRequestParams::new("deskpilot://windows"))
        .await
        .unwrap_or_else(|e| panic!("{revision}: resources/read: {e}"));
    let text: String = read
        .contents
        .iter()
        .filter_map(|c| match c {
            ResourceContents::TextResourceContents { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert!(
        text.contains(title),
        "{revision}: deskpilot://windows does not name {title}: {text}"
    );
    let prompts = client
        .list_all_prompts()
        .await
        .unwrap_or_else(|e| panic!("{revision}: prompts/list: {e}"));
    assert!(!prompts.is_empty(), "{revision}: no prompts");
    let mut prompt_names: Vec<String> = prompts.iter().map(|p| p.name.to_string()).collect();
    prompt_names.sort();
    (tools.len(), prompt_names)
}

/// A window titled `title` on `desktop` until dropped.
fn open_window(desktop: &deskpilot_x11::VirtualDisplay, title: &str) -> harness::App {
    harness::launch(
        desktop,
        "xterm",
        &["-T", title, "-geometry", "40x5+120+120"],
    )
}

#[tokio::test]
async fn both_revisions_work_over_stdio() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let title = format!("rev-stdio-{}", std::process::id());
    let _app = open_window(desktop, &title);
    let mut seen = Vec::new();
    for (revision, lifecycle) in lifecycles() {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_deskpilot"));
        cmd.arg("serve")
            .env("DESKPILOT_MEMORY_DIR", harness::fresh_memory_dir())
            .env("DESKPILOT_CURSOR", "off")
            .env_remove("DESKPILOT_CONFIG")
            .env("XDG_CONFIG_HOME", "/nonexistent/deskpilot-tests");
        for (k, v) in desktop.env() {
            cmd.env(k, v);
        }
        let (transport, _stderr) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn deskpilot serve");
        let client = match lifecycle {
            None => ().serve(transport).await.expect("initialize over stdio"),
            Some(mode) => {
                ().serve_with_lifecycle(transport, mode)
                    .await
                    .expect("server/discover over stdio")
            }
        };
        wait_listed(&client, &title).await;
        seen.push(exercise(&client, revision, &title).await);
        client.cancel().await.expect("a clean close");
    }
    assert_eq!(
        seen[0], seen[1],
        "both revisions see the same tools and prompts"
    );
}

#[tokio::test]
async fn both_revisions_work_over_http() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let title = format!("rev-http-{}", std::process::id());
    let _app = open_window(desktop, &title);
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_deskpilot"));
    cmd.args(["serve", "--http", "127.0.0.1:0", "--no-auth"])
        .env("DESKPILOT_MEMORY_DIR", harness::fresh_memory_dir())
        .env("DESKPILOT_CURSOR", "off")
        .env_remove("DESKPILOT_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    desktop.configure(&mut cmd);
    let mut child = cmd.spawn().expect("start serve --http");
    let url = address(&mut child);
    let mut seen = Vec::new();
    for (revision, lifecycle) in lifecycles() {
        let transport = StreamableHttpClientTransport::from_uri(url.clone());
        let client = match lifecycle {
            None => ().serve(transport).await.expect("initialize over HTTP"),
            Some(mode) => {
                ().serve_with_lifecycle(transport, mode)
                    .await
                    .expect("server/discover over HTTP")
            }
        };
        wait_listed(&client, &title).await;
        seen.push(exercise(&client, revision, &title).await);
        client.cancel().await.expect("a clean close");
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        seen[0], seen[1],
        "both revisions see the same tools and prompts"
    );
}

/// Waits until the window titled `title` is listed (the app maps it a moment after it starts).
async fn wait_listed(client: &Client, title: &str) {
    harness::wait_for(
        Duration::from_secs(20),
        "the window to be listed",
        || async {
            let r = client
                .call_tool(CallToolRequestParams::new("list_windows"))
                .await
                .ok()?;
            ok(&r).to_string().contains(title).then_some(())
        },
    )
    .await;
}

/// The `/mcp` address `serve --http` prints on stderr.
fn address(child: &mut std::process::Child) -> String {
    use std::io::BufRead as _;
    let err = child.stderr.take().expect("stderr piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            if let Some((_, url)) = line.split_once(" at ")
                && url.ends_with("/mcp")
            {
                let _ = tx.send(url.to_string());
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(url) = rx.recv_timeout(Duration::from_millis(100)) {
            return url;
        }
        assert!(Instant::now() < deadline, "serve --http printed no address");
    }
}
