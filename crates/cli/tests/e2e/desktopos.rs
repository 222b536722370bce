//! The `desktopos` profile as a DesktopOS user drives it: 33 tools (and deskpilot's type secret), group filters (refused at
//! call time too), DesktopOS's loops on real windows — perceive → click with a region verify on
//! the GTK fixture, elements → click by a Chinese name, a shell in a Chinese directory,
//! verified execution with its auto-fix, the CDP loop on a headless Chromium, and recall.

use std::time::Duration;

use serde_json::{Value, json};

use crate::elements::Fixture;
use crate::harness::{self, error_code, ok, serve, text, wait_for};

async fn listed(server: &harness::Server) -> Vec<String> {
    let mut names: Vec<String> = server
        .client
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thirty_three_tools_and_group_filters_hold_at_list_and_call_time() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    // Actions show the overlay: nothing else may be capturing the screen meanwhile.
    let _guard = harness::exclusive().await;
    let all = serve(Some(desktop), &["--profile", "desktopos"], &[]).await;
    let names = listed(&all).await;
    // DesktopOS's 33, and desktop_type_secret and desktop_cdp_type_secret.
    assert_eq!(names.len(), 35, "{names:?}");
    assert!(names.contains(&"desktop_type_secret".to_string()));
    assert!(names.contains(&"desktop_cdp_type_secret".to_string()));
    all.finish().await;

    let only = serve(
        Some(desktop),
        &["--profile", "desktopos"],
        &[("DESKTOPOS_TOOLS", "shell,diagnose")],
    )
    .await;
    let names = listed(&only).await;
    assert_eq!(names.len(), 8, "{names:?}");
    assert!(names.contains(&"desktop_diagnose".to_string()));
    // Refused at call time too: a client's cached list must not get around the filter.
    let refused = only
        .client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("desktop_click")
                .with_arguments(json!({ "x": 10, "y": 10 }).as_object().unwrap().clone()),
        )
        .await;
    let said = match refused {
        Err(e) => e.to_string(),
        Ok(r) => format!("{r:?}"),
    };
    assert!(said.contains("disabled"), "{said}");
    only.finish().await;

    let mixed = serve(
        Some(desktop),
        &["--profile", "desktopos"],
        &[
            ("DESKTOPOS_TOOLS", "shell,desktop"),
            ("DESKTOPOS_TOOLS_EXCLUDE", "desktop_screenshot"),
        ],
    )
    .await;
    let names = listed(&mixed).await;
    // The desktop group holds desktop_type_secret too.
    assert_eq!(names.len(), 17, "{names:?}");
    assert!(!names.contains(&"desktop_screenshot".to_string()));
    mixed.finish().await;

    // --only, DesktopOS's command-line spelling.
    let cli = serve(
        Some(desktop),
        &["--profile", "desktopos", "--only=memory,desktop_cursor"],
        &[],
    )
    .await;
    assert_eq!(listed(&cli).await.len(), 5);
    cli.finish().await;

    // An unknown group or name stops the start, listing what exists.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_deskpilot"))
        .args(["serve", "--profile", "desktopos"])
        .env("DESKTOPOS_TOOLS", "shell,dekstop")
        .env_remove("DISPLAY")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run deskpilot");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("\"dekstop\"") && err.contains("desktop (11)") && err.contains("cdp (10)"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing but JSON-RPC on stdout");
}

fn rect(v: &Value) -> (i64, i64, i64, i64) {
    let n = |k: &str| v[k].as_i64().unwrap();
    (n("x"), n("y"), n("w"), n("h"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn perceive_click_with_region_verify_elements_and_recall_on_the_fixture() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &["--profile", "desktopos"], &[]).await;
    let fixture = Fixture::start(desktop, "desktopos fixture");
    let handle = wait_for(
        Duration::from_secs(30),
        "the fixture in desktop_perceive",
        || async {
            let r = server.call("desktop_perceive", json!({})).await;
            ok(&r)["windows"]
                .as_array()?
                .iter()
                .find(|w| w["title"] == "desktopos fixture" && w["verdict"] == "consistent")
                .map(|w| w["handle"].clone())
        },
    )
    .await;
    let r = server
        .call("desktop_focus_window", json!({ "handle": handle }))
        .await;
    ok(&r);
    // The "Apply" button's rect from desktop_elements, clicked by screen coordinates.
    let els = server
        .call("desktop_elements", json!({ "handle": handle }))
        .await;
    let apply = ok(&els)["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "Apply" && e["controlType"] == "Button")
        .unwrap_or_else(|| panic!("no Apply in {}", text(&els)))
        .clone();
    assert_eq!(apply["invokable"], true);
    let (x, y, w, h) = rect(&apply["rect"]);
    let win = server.call("desktop_list_windows", json!({})).await;
    let frame = ok(&win)["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["handle"] == handle)
        .unwrap()["rect"]
        .clone();
    let click = server
        .call(
            "desktop_click",
            json!({ "x": x + w / 2, "y": y + h / 2, "verify": true, "verifyRegion": frame }),
        )
        .await;
    let v = ok(&click);
    assert_eq!(v["scope"], "region", "{}", text(&click));
    assert!(v["diffRatio"].is_number(), "{}", text(&click));
    assert_eq!(v["window"]["handle"], handle, "it says where it landed");
    fixture.saw("clicked Apply").await;

    // By name, Chinese, through the control's own action.
    let r = server
        .call(
            "desktop_click_element",
            json!({ "handle": handle, "name": "保存并关闭" }),
        )
        .await;
    assert_eq!(ok(&r)["invoked"], true, "{}", text(&r));
    fixture.saw("clicked 保存并关闭").await;
    // "保存" names two buttons: the candidates are listed, nothing is clicked.
    let r = server
        .call(
            "desktop_click_element",
            json!({ "handle": handle, "name": "保存" }),
        )
        .await;
    assert_eq!(error_code(&r), "AMBIGUOUS_ELEMENT", "{}", text(&r));
    assert!(text(&r).contains("保存设置说明"), "{}", text(&r));
    assert!(!fixture.has("clicked 保存设置说明"));
    // Every error carries the diagnosis.
    assert!(
        r.structured_content.as_ref().unwrap()["diagnosis"]["category"].is_string(),
        "{:?}",
        r.structured_content
    );

    let r = server
        .call("memory_recall", json!({ "query": "刚才那个窗口" }))
        .await;
    assert_eq!(ok(&r)["candidates"][0]["handle"], handle, "{}", text(&r));
    assert!(
        text(&r).contains(&format!("handle={handle}")),
        "{}",
        text(&r)
    );
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_in_a_chinese_directory_and_verified_execution_fixes_a_missing_parent() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    // Actions show the overlay: nothing else may be capturing the screen meanwhile.
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &["--profile", "desktopos"], &[]).await;
    let base = std::env::temp_dir().join(format!("deskpilot-desktopos-{}", std::process::id()));
    let dir = base.join("代码").join("桌面");
    std::fs::create_dir_all(&dir).unwrap();
    let r = server
        .call("shell_cd", json!({ "path": dir.to_str().unwrap() }))
        .await;
    ok(&r);
    let r = server.call("shell_exec", json!({ "command": "pwd" })).await;
    assert_eq!(
        ok(&r)["stdout"]["text"].as_str().unwrap().trim(),
        dir.to_str().unwrap(),
        "{}",
        text(&r)
    );
    let target = base.join("新目录").join("子目录").join("x.txt");
    let r = server
        .call(
            "shell_exec_verified",
            json!({
                "command": format!("touch '{}'", target.display()),
                "expect": { "isFile": target.to_str().unwrap() },
                "retries": 2,
            }),
        )
        .await;
    assert_eq!(ok(&r)["verified"], true, "{}", text(&r));
    assert!(target.is_file());
    assert!(
        text(&r).contains("created the missing directory"),
        "{}",
        text(&r)
    );
    // isDir, DesktopOS's own example: mkdir under a missing parent.
    let made = base.join("新目录2").join("子目录");
    let r = server
        .call(
            "shell_exec_verified",
            json!({
                "command": format!("mkdir '{}'", made.display()),
                "expect": { "isDir": made.to_str().unwrap() },
                "retries": 2,
            }),
        )
        .await;
    assert_eq!(ok(&r)["verified"], true, "{}", text(&r));
    assert!(made.is_dir());
    assert_eq!(
        ok(&r)["attempts"][0]["diagnosis"]["category"],
        "missing-parent",
        "{}",
        text(&r)
    );
    // autoFix: false leaves it alone and says why it stopped.
    let other = base.join("别的").join("y.txt");
    let r = server
        .call(
            "shell_exec_verified",
            json!({
                "command": format!("touch '{}'", other.display()),
                "expect": { "isFile": other.to_str().unwrap() },
                "autoFix": false,
            }),
        )
        .await;
    assert_eq!(error_code(&r), "VERIFICATION_FAILED", "{}", text(&r));
    assert!(text(&r).contains("autoFix false"), "{}", text(&r));
    assert!(!other.parent().unwrap().exists());
    let r = server
        .call(
            "desktop_diagnose",
            json!({ "error": "bash: foo: command not found" }),
        )
        .await;
    assert_eq!(ok(&r)["category"], "cmd-not-found", "{}", text(&r));
    server.finish().await;
    let _ = std::fs::remove_dir_all(&base);
}

/// Whether process `pid` still runs (a zombie does not count).
fn alive(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cdp_loop_types_chinese_clicks_by_name_reads_the_dom_and_leaves_no_browser() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    // Actions show the overlay: nothing else may be capturing the screen meanwhile.
    let _guard = harness::exclusive().await;
    let server = serve(Some(desktop), &["--profile", "desktopos"], &[]).await;
    let page = "data:text/html;charset=utf-8,<title>搜索页</title><input aria-label='请输入' id=q>\
        <button onclick=\"document.title='找到 '+document.getElementById('q').value\">搜索</button>\
        <button>搜索设置</button>";
    let r = server
        .call(
            "desktop_browser_launch",
            json!({ "url": page, "headless": true }),
        )
        .await;
    let port = ok(&r)["port"].clone();
    assert!(port.is_u64(), "{}", text(&r));
    let pid = ok(&r)["pid"].as_u64().expect("the launched browser's pid");
    let r = server
        .call("desktop_cdp_open", json!({ "port": port }))
        .await;
    assert_eq!(ok(&r)["session"], "s1", "{}", text(&r));
    let r = server.call("desktop_cdp_elements", json!({})).await;
    let els = ok(&r)["elements"].as_array().unwrap().clone();
    let names: Vec<&str> = els.iter().filter_map(|e| e["name"].as_str()).collect();
    assert!(
        names.contains(&"搜索") && names.contains(&"请输入"),
        "{}",
        text(&r)
    );
    // Deduplicated: the button's own text is not listed as another control.
    assert_eq!(
        els.iter().filter(|e| e["name"] == "搜索").count(),
        1,
        "{}",
        text(&r)
    );
    let r = server
        .call(
            "desktop_cdp_type",
            json!({ "text": "中文关键词", "target": "请输入" }),
        )
        .await;
    ok(&r);
    let r = server
        .call("desktop_cdp_click", json!({ "name": "搜索" }))
        .await;
    ok(&r);
    let title = wait_for(Duration::from_secs(5), "the page's title", || async {
        let r = server
            .call(
                "desktop_cdp_eval",
                json!({ "expression": "document.title" }),
            )
            .await;
        let t = ok(&r)["result"].as_str()?.to_string();
        (t != "搜索页").then_some(t)
    })
    .await;
    assert_eq!(title, "找到 中文关键词");
    let r = server
        .call("desktop_cdp_click", json!({ "name": "搜索 设置" }))
        .await;
    assert_eq!(error_code(&r), "ELEMENT_NOT_FOUND", "{}", text(&r));
    let r = server.call("desktop_cdp_screenshot", json!({})).await;
    let (w, h, _) = harness::image(&r);
    assert!(w > 100 && h > 100);
    assert!(alive(pid));
    let r = server.call("desktop_cdp_close", json!({})).await;
    assert!(
        ok(&r)["browsersEnded"]
            .as_array()
            .is_some_and(|b| b.len() == 1),
        "{}",
        text(&r)
    );
    wait_for(Duration::from_secs(10), "the browser to end", || async {
        (!alive(pid)).then_some(())
    })
    .await;
    server.finish().await;
}
