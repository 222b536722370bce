//! Handshake, tool list, annotations, filtering, bad arguments and the no-display case.

use serde_json::json;

use crate::harness::{self, error_code, ok, serve, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn handshake_names_deskpilot_and_lists_annotated_tools() {
    let server = serve(None, &[], &[]).await;
    let info = server.client.peer_info().expect("initialize result");
    let server_info = info.server_info.as_ref().expect("serverInfo");
    assert_eq!(server_info.name, "deskpilot");
    assert_eq!(server_info.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(info.protocol_version.to_string(), "2025-11-25");
    let tools = server.client.list_all_tools().await.unwrap();
    let mut names: Vec<_> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    let expected = [
        "app_skill",
        "browser_attach",
        "browser_click",
        "browser_close",
        "browser_dialog",
        "browser_emulate",
        "browser_eval",
        "browser_fill",
        "browser_launch",
        "browser_log",
        "browser_navigate",
        "browser_press_key",
        "browser_screenshot",
        "browser_snapshot",
        "browser_tabs",
        "browser_type",
        "browser_wait_for",
        "click",
        "clipboard_read",
        "clipboard_write",
        "diagnose",
        "double_click",
        "drag",
        "find_elements",
        "get_element_text",
        "get_window_state",
        "list_apps",
        "list_windows",
        "memory_clear",
        "memory_recall",
        "memory_stats",
        "memory_timeline",
        "move_cursor",
        "ocr",
        "perceive",
        "perform_action",
        "press_key",
        "resume",
        "right_click",
        "screenshot",
        "scroll",
        "set_value",
        "shell_cd",
        "shell_cwd",
        "shell_env_get",
        "shell_env_set",
        "shell_exec",
        "shell_exec_verified",
        "shell_reset",
        "status",
        "type_secret",
        "type_text",
        "ui_context_clear",
        "ui_context_current",
        "ui_context_pick",
        "wait",
        "wait_for",
        "window",
        "zoom",
    ];
    assert_eq!(names, expected);
    for t in &tools {
        // Without annotations every hint has the protocol's default.
        let a = t.annotations.clone().unwrap_or_default();
        let reads = [
            "list_windows",
            "list_apps",
            "screenshot",
            "status",
            "zoom",
            "ocr",
            "clipboard_read",
            "get_window_state",
            "find_elements",
            "get_element_text",
            "wait",
            "wait_for",
            "shell_cwd",
            "shell_env_get",
            "diagnose",
            "browser_attach",
            "browser_log",
            "browser_snapshot",
            "browser_screenshot",
            "browser_wait_for",
            "ui_context_pick",
            "ui_context_current",
            "perceive",
            "memory_recall",
            "memory_timeline",
            "memory_stats",
        ]
        .contains(&t.name.as_ref());
        // Hints equal to the protocol's defaults are left out (readOnlyHint false,
        // destructiveHint true, idempotentHint false, openWorldHint true).
        assert_eq!(a.read_only_hint.unwrap_or(false), reads, "{}", t.name);
        if reads {
            assert_eq!(
                a.destructive_hint, None,
                "{}: meaningless for a read",
                t.name
            );
        }
        assert!(
            t.description.as_ref().is_some_and(|d| d.len() > 40),
            "{} needs a description",
            t.name
        );
        assert_eq!(
            t.input_schema.get("type").and_then(|v| v.as_str()),
            Some("object")
        );
    }
    let shot = tools.iter().find(|t| t.name == "screenshot").unwrap();
    let props = shot.input_schema["properties"].as_object().unwrap();
    for p in ["window_id", "region", "monitor", "max_width", "format"] {
        assert!(
            props.contains_key(p),
            "screenshot schema lacks {p}: {props:?}"
        );
    }
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_filters_apply_to_list_and_call() {
    // --tools keeps only the named tools.
    let server = serve(None, &["--tools", "status"], &[]).await;
    let names: Vec<_> = server
        .client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(names, ["status"]);
    let refused = server
        .client
        .call_tool(rmcp::model::CallToolRequestParams::new("screenshot"))
        .await
        .expect_err("a hidden tool must be refused");
    assert!(refused.to_string().contains("disabled"), "{refused}");
    server.finish().await;

    // DESKPILOT_TOOLS_EXCLUDE hides one tool from both.
    let server = serve(None, &[], &[("DESKPILOT_TOOLS_EXCLUDE", "list_windows")]).await;
    let names: Vec<_> = server
        .client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(
        !names.contains(&"list_windows".to_string()) && names.len() == 58,
        "{names:?}"
    );
    let refused = server
        .client
        .call_tool(rmcp::model::CallToolRequestParams::new("list_windows"))
        .await;
    assert!(refused.is_err(), "an excluded tool must be refused");
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_display_tools_answer_no_display_with_a_fix() {
    let server = serve(None, &[], &[]).await;
    for tool in ["status", "list_windows", "screenshot"] {
        let r = server.call(tool, json!({})).await;
        assert_eq!(error_code(&r), "NO_DISPLAY", "{tool}");
        assert!(text(&r).contains("--virtual-display"), "{}", text(&r));
    }
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_are_tool_errors_and_the_server_survives() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let server = serve(Some(desktop), &[], &[]).await;
    for args in [
        json!({ "max_width": "wide" }),
        json!({ "window_id": -5 }),
        json!({ "region": { "x": 0 } }),
        json!({ "format": "gif" }),
        json!({ "bogus": 1 }),
        json!({ "window_id": 1, "monitor": 0 }),
        json!({ "monitor": 99 }),
    ] {
        let r = server.call("screenshot", args.clone()).await;
        assert_eq!(r.is_error, Some(true), "{args} should fail: {}", text(&r));
        assert!(!text(&r).is_empty(), "{args}: an error needs a message");
    }
    // Still alive and answering.
    ok(&server.call("status", json!({})).await);
    server.finish().await;
}
