//! The Windows backend, cross-built (`x86_64-pc-windows-gnu`) and run under Wine 8 on the test
//! desktop, driven through the same MCP client.
//!
//! - Notepad: window list, launch, a real BitBlt capture, Unicode typing read back through the
//!   clipboard, window states, the overlay and its Esc.
//! - Our Win32 fixture (`crates/winfixture`, which logs every event it gets): the MSAA
//!   fallback tree (UI Automation is not registered in Wine 8, which must read as
//!   "unsupported here"), clicks, toggles, selections, typed and set Unicode text, the menu,
//!   move and resize, the clipboard both ways, and PrintWindow's blank answer falling back to
//!   a screen grab.
//! - The app catalog: a Start-menu shortcut Wine's own `IShellLink` wrote (through `wscript`)
//!   is listed by `list_apps` with its arguments split back, and its `exec` starts the fixture;
//!   Wine has no Applications folder, which must not lose the shortcuts.
//!
//! `scripts/test` builds `deskpilot.exe` and `winfixture.exe` and names the first in
//! `DESKPILOT_WINE_EXE` (the fixture sits beside it); without it the tests print SKIP (and
//! fail under `CI=true`). The prefix lives in the test's target temp
//! directory and is made once: `wineboot --init`, the `bcryptprimitives.dll` stand-in Rust's std
//! needs (Wine 8 lacks `ProcessPrng`; source in `fixtures/wine/`), and `ShowCrashDialog=0` so an
//! unimplemented function aborts instead of waiting on a dialog.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use deskpilot_x11::VirtualDisplay;
use serde_json::{Value, json};

use crate::harness::{self, Server, element, error_code, ok, text, wait_for};

/// A Wine prefix ready for deskpilot.exe.
struct Wine {
    exe: PathBuf,
    prefix: PathBuf,
}

impl Wine {
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("WINEPREFIX", self.prefix.display().to_string()),
            ("WINEDEBUG", "-all".into()),
            ("WINEDLLOVERRIDES", "mscoree,mshtml=".into()),
        ]
    }

    fn command(&self, desktop: &VirtualDisplay, program: &str) -> Command {
        let mut cmd = Command::new(program);
        desktop.configure(&mut cmd);
        for (k, v) in self.env() {
            cmd.env(k, v);
        }
        cmd
    }
}

/// Runs `cmd` to completion within `limit`, or panics saying what hung.
fn run(mut cmd: Command, what: &str, limit: Duration) {
    let mut child = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "{what} failed: {status}");
            return;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[allow(clippy::print_stderr)]
fn wine(desktop: &VirtualDisplay) -> Option<Wine> {
    let Some(exe) = std::env::var_os("DESKPILOT_WINE_EXE").map(PathBuf::from) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but DESKPILOT_WINE_EXE is not set: scripts/test builds deskpilot.exe and sets it"
        );
        eprintln!(
            "SKIP Wine end-to-end test: DESKPILOT_WINE_EXE is not set (scripts/test sets it)"
        );
        return None;
    };
    assert!(
        exe.is_file(),
        "DESKPILOT_WINE_EXE={} is not a file",
        exe.display()
    );
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wine-prefix");
    let w = Wine { exe, prefix };
    let system32 = w.prefix.join("drive_c/windows/system32");
    if !system32.join("kernel32.dll").exists() {
        let mut boot = w.command(desktop, "wineboot");
        boot.arg("--init");
        run(boot, "wineboot --init", Duration::from_secs(180));
    }
    let shim = system32.join("bcryptprimitives.dll");
    if !shim.exists() {
        let source =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/wine/bcryptprimitives.c");
        let mut cc = Command::new("x86_64-w64-mingw32-gcc");
        cc.args(["-shared", "-O2", "-o"])
            .arg(&shim)
            .arg(&source)
            .arg("-ladvapi32");
        run(
            cc,
            "building the bcryptprimitives.dll stand-in",
            Duration::from_secs(60),
        );
        let mut reg = w.command(desktop, "wine");
        reg.args([
            "reg",
            "add",
            "HKCU\\Software\\Wine\\WineDbg",
            "/v",
            "ShowCrashDialog",
            "/t",
            "REG_DWORD",
            "/d",
            "0",
            "/f",
        ]);
        run(reg, "wine reg add ShowCrashDialog", Duration::from_secs(60));
    }
    Some(w)
}

async fn serve_wine(desktop: &VirtualDisplay, w: &Wine) -> Server {
    serve_wine_with(desktop, w, &[]).await
}

async fn serve_wine_with(desktop: &VirtualDisplay, w: &Wine, args: &[&str]) -> Server {
    let mut cmd = tokio::process::Command::new("wine");
    cmd.arg(&w.exe).arg("serve").args(args);
    for (k, v) in desktop.env() {
        cmd.env(k, v);
    }
    for (k, v) in w.env() {
        cmd.env(k, v);
    }
    harness::connect(cmd, ()).await
}

fn white_share(img: &(u32, u32, Vec<u8>)) -> f64 {
    let white = img
        .2
        .chunks_exact(3)
        .filter(|p| p.iter().all(|c| *c > 240))
        .count();
    white as f64 / (img.0 * img.1) as f64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_windows_backend_works_under_wine() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let Some(w) = wine(desktop) else { return };
    let server = serve_wine(desktop, &w).await;
    let r = server.call("status", json!({})).await;
    assert_eq!(ok(&r)["platform"], "windows", "{}", text(&r));
    // Wine's powershell.exe is a stub that exits at once: said plainly, not as a hang or a
    // vague I/O failure.
    let r = server
        .call(
            "shell_exec",
            json!({ "command": "Get-Date", "timeout_ms": 10000 }),
        )
        .await;
    assert_eq!(error_code(&r), "SHELL_UNAVAILABLE", "{}", text(&r));
    assert!(
        text(&r).contains("not a working PowerShell"),
        "{}",
        text(&r)
    );
    // Wine has no Windows.Media.Ocr: OCR says so, and the server carries on.
    let r = server.call("ocr", json!({})).await;
    assert_eq!(error_code(&r), "OCR_UNAVAILABLE", "{}", text(&r));
    assert!(text(&r).contains("Windows.Media.Ocr"), "{}", text(&r));

    // Launched through deskpilot (CreateProcess, no shell), found by its pid.
    let r = server
        .call(
            "window",
            json!({ "action": "launch", "command": "notepad", "wait_ms": 20000 }),
        )
        .await;
    let launched = ok(&r).clone();
    let note = launched["window"].clone();
    assert!(
        note["title"]
            .as_str()
            .is_some_and(|t| t.contains("Notepad")),
        "{}",
        text(&r)
    );
    assert_eq!(note["process"], "notepad.exe");
    let id = note["id"].clone();

    // A real capture: Notepad's edit area is white.
    ok(&server
        .call("window", json!({ "action": "focus", "window_id": id }))
        .await);
    let shot = server
        .call("screenshot", json!({ "window_id": id, "format": "png" }))
        .await;
    let img = harness::image(&shot);
    assert!(
        white_share(&img) > 0.3,
        "mostly white: {:.2}",
        white_share(&img)
    );

    // Unicode typed with KEYEVENTF_UNICODE, read back through the clipboard Wine shares with X.
    let typed = "héllo 中文 😀 Zoë";
    let r = server.call("type_text", json!({ "text": typed })).await;
    assert_eq!(ok(&r)["window"]["process"], "notepad.exe", "{}", text(&r));
    ok(&server
        .call("press_key", json!({ "keys": ["ctrl", "a"] }))
        .await);
    ok(&server
        .call("press_key", json!({ "keys": ["ctrl", "c"] }))
        .await);
    let read = wait_for(Duration::from_secs(10), "the copied text", || async {
        let r = server.call("clipboard_read", json!({})).await;
        let s: Value = ok(&r).clone();
        (s["clipboard"] == typed).then_some(s)
    })
    .await;
    assert_eq!(read["clipboard"], typed);
    // The X side sees the same text.
    let x = harness::xclip_out(desktop);
    assert_eq!(x, typed);

    // Window states, verified by the backend against the real window.
    let r = server
        .call("window", json!({ "action": "maximize", "window_id": id }))
        .await;
    assert_eq!(ok(&r)["window"]["maximized"], true, "{}", text(&r));
    let r = server
        .call("window", json!({ "action": "restore", "window_id": id }))
        .await;
    assert_eq!(ok(&r)["window"]["maximized"], false, "{}", text(&r));
    // A window that is not there.
    let r = server
        .call("screenshot", json!({ "window_id": 4242 }))
        .await;
    assert_eq!(error_code(&r), "WINDOW_NOT_FOUND");

    // The Windows overlay (a layered topmost window cut to a frame + label, in its own
    // process) is up since the first mutation, drawn on screen, and Esc stops the agent.
    let s = ok(&server.call("status", json!({})).await).clone();
    assert_eq!(s["overlay"]["visible"], true, "{s}");
    assert!(s["overlay"]["pid"].is_u64(), "{s}");
    let r = server
        .call(
            "screenshot",
            json!({ "region": { "x": 0, "y": 200, "width": 20, "height": 20 }, "format": "png" }),
        )
        .await;
    let img = harness::image(&r);
    let at = |x: usize, y: usize| {
        let i = (y * img.0 as usize + x) * 3;
        [img.2[i], img.2[i + 1], img.2[i + 2]]
    };
    assert_eq!(at(2, 10), [0x1e, 0x7b, 0xff], "the overlay's frame");
    ok(&server
        .call("window", json!({ "action": "focus", "window_id": id }))
        .await);
    let esc = Command::new("xdotool")
        .args(["key", "Escape"])
        .env("DISPLAY", desktop.display())
        .status()
        .unwrap();
    assert!(esc.success());
    wait_for(Duration::from_secs(5), "the kill switch", || async {
        let s = ok(&server.call("status", json!({})).await).clone();
        (s["kill_switch"]["state"] == "tripped").then_some(())
    })
    .await;
    let r = server.call("type_text", json!({ "text": "no" })).await;
    assert_eq!(error_code(&r), "STOPPED_BY_HUMAN", "{}", text(&r));
    server.finish().await;
    let mut kill = w.command(desktop, "wineserver");
    kill.arg("-k");
    let _ = kill.status();
}

/// The fixture's event log: one line per event, appended and flushed by the app.
struct EventLog(PathBuf);

impl EventLog {
    fn lines(&self) -> Vec<String> {
        std::fs::read_to_string(&self.0)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Waits for `line` to be logged after the first `after` lines.
    async fn wait(&self, after: usize, line: &str) -> usize {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let lines = self.lines();
            if let Some(i) = lines.iter().skip(after).position(|l| l == line) {
                return after + i + 1;
            }
            assert!(
                Instant::now() < deadline,
                "the fixture never logged {line:?}; it logged {:?}",
                &lines[after.min(lines.len())..]
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// `path` as Wine's Z: drive names it.
fn z(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

async fn snapshot(server: &Server, id: &Value) -> Value {
    let r = server
        .call("get_window_state", json!({ "window_id": id }))
        .await;
    ok(&r).clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_win32_fixture_is_read_and_driven_under_wine() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let Some(w) = wine(desktop) else { return };
    let fixture = w.exe.with_file_name("winfixture.exe");
    assert!(
        fixture.is_file(),
        "{} is missing: scripts/test cross-builds it beside deskpilot.exe",
        fixture.display()
    );
    let log = EventLog(
        Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("winfixture-{}.log", std::process::id())),
    );
    let _ = std::fs::remove_file(&log.0);
    let server = serve_wine(desktop, &w).await;

    // Launched through deskpilot with an argument, reported with its window.
    let r = server
        .call(
            "window",
            json!({ "action": "launch", "command": z(&fixture), "args": [z(&log.0)], "wait_ms": 20000 }),
        )
        .await;
    let launched = ok(&r)["window"].clone();
    assert_eq!(launched["title"], "deskpilot Win32 fixture", "{}", text(&r));
    assert_eq!(launched["process"], "winfixture.exe");
    let id = launched["id"].clone();
    let mut seen = log.wait(0, "ready").await;

    // Move and resize, checked against the window list.
    ok(&server
        .call(
            "window",
            json!({ "action": "move", "window_id": id, "x": 60, "y": 40 }),
        )
        .await);
    ok(&server
        .call(
            "window",
            json!({ "action": "resize", "window_id": id, "width": 520, "height": 380 }),
        )
        .await);
    let listing = ok(&server.call("list_windows", json!({})).await).clone();
    let listed = harness::find_window(&listing, "deskpilot Win32 fixture").expect("listed");
    assert_eq!(
        (
            &listed["frame"]["x"],
            &listed["frame"]["y"],
            &listed["frame"]["width"],
            &listed["frame"]["height"]
        ),
        (&json!(60), &json!(40), &json!(520), &json!(380)),
        "{listed}"
    );
    ok(&server
        .call("window", json!({ "action": "focus", "window_id": id }))
        .await);

    // The tree: UI Automation is not registered in Wine 8, so MSAA answers, and says so.
    let s = snapshot(&server, &id).await;
    assert_eq!(s["source"], "msaa", "{s:#}");
    let notes = s["notes"].to_string();
    assert!(
        notes.contains("UI Automation is unsupported here"),
        "{notes}"
    );
    for (role, name) in [
        ("Button", "OK"),
        ("Button", "确定"),
        ("CheckBox", "Enable logging"),
        ("Edit", "Name:"),
        ("ListItem", "Apple"),
        ("ListItem", "Banana"),
        ("ListItem", "Green"),
    ] {
        element(&s, role, name);
    }
    assert!(
        s["elements"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["role"] == "List")
            && s["elements"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["role"] == "ComboBox"),
        "{s:#}"
    );

    // A click on a button by element goes through the control (BM_CLICK), a click on the CJK
    // button by its position through SendInput; the fixture sees both.
    let r = server
        .call(
            "click",
            json!({ "element": element(&s, "Button", "OK")["token"] }),
        )
        .await;
    assert_eq!(ok(&r)["route"], "accessibility", "{}", text(&r));
    seen = log.wait(seen, "click OK").await;
    let b = &element(&s, "Button", "确定")["bounds"];
    let (x, y) = (
        b["x"].as_i64().unwrap() + b["width"].as_i64().unwrap() / 2,
        b["y"].as_i64().unwrap() + b["height"].as_i64().unwrap() / 2,
    );
    let r = server
        .call(
            "click",
            json!({ "x": x, "y": y, "coordinates": "physical" }),
        )
        .await;
    let receipt = &ok(&r)["receipt"];
    assert_eq!(receipt["landed"], true, "{}", text(&r));
    assert_eq!(receipt["x"].as_f64(), Some(x as f64), "{receipt}");
    seen = log.wait(seen, "click 确定").await;

    // Toggle, confirmed by the element's state and by the app.
    let check = element(&s, "CheckBox", "Enable logging")["token"].clone();
    let r = server
        .call(
            "perform_action",
            json!({ "element": check, "action": "toggle" }),
        )
        .await;
    assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
    seen = log.wait(seen, "check Enable logging on").await;
    let s = snapshot(&server, &id).await;
    assert_eq!(element(&s, "CheckBox", "Enable logging")["checked"], true);

    // Unicode typed with KEYEVENTF_UNICODE (CJK and an emoji's surrogate pair), seen by the
    // app and read back through MSAA.
    let edit = element(&s, "Edit", "Name:")["token"].clone();
    ok(&server.call("click", json!({ "element": edit })).await);
    let typed = "héllo 中文 😀";
    ok(&server.call("type_text", json!({ "text": typed })).await);
    seen = log.wait(seen, &format!("edit {typed}")).await;
    let r = server
        .call("get_element_text", json!({ "element": edit }))
        .await;
    assert_eq!(ok(&r)["text"], typed, "{}", text(&r));
    // put_accValue replaces it; the app sees the change.
    let set = "Zoë 字 ✓";
    let r = server
        .call("set_value", json!({ "element": edit, "value": set }))
        .await;
    assert_eq!(ok(&r)["value"], set, "{}", text(&r));
    seen = log.wait(seen, &format!("edit {set}")).await;

    // Selections in the list box and the combo box, through the controls.
    for (item, event) in [("Banana", "list Banana"), ("Green", "combo Green")] {
        let token = element(&s, "ListItem", item)["token"].clone();
        let r = server
            .call(
                "perform_action",
                json!({ "element": token, "action": "select" }),
            )
            .await;
        assert_eq!(ok(&r)["effect"], "confirmed", "{}", text(&r));
        seen = log.wait(seen, event).await;
    }

    // Finding by description works on the MSAA tree as on AT-SPI.
    let r = server
        .call(
            "find_elements",
            json!({ "window_id": id, "name_contains": "anana" }),
        )
        .await;
    let found = ok(&r).to_string();
    assert!(found.contains("\"Banana\""), "{}", text(&r));

    // The menu: a pointer click on "File" in the menu bar, then Down and Enter choose "New".
    let client = &listed["client"];
    let (mx, my) = (
        client["x"].as_i64().unwrap() + 18,
        client["y"].as_i64().unwrap() - 10,
    );
    ok(&server
        .call(
            "click",
            json!({ "x": mx, "y": my, "coordinates": "physical" }),
        )
        .await);
    ok(&server.call("press_key", json!({ "keys": ["down"] })).await);
    ok(&server.call("press_key", json!({ "keys": ["enter"] })).await);
    seen = log.wait(seen, "menu New").await;

    // A drag on the window's background and both wheels, in client coordinates.
    let (cx, cy) = (client["x"].as_i64().unwrap(), client["y"].as_i64().unwrap());
    ok(&server
        .call(
            "drag",
            json!({ "from_x": cx + 380, "from_y": cy + 50, "to_x": cx + 460, "to_y": cy + 62,
                    "coordinates": "physical" }),
        )
        .await);
    seen = log.wait(seen, "mouse 380 50").await;
    seen = log.wait(seen, "up 460 62").await;
    ok(&server
        .call(
            "scroll",
            json!({ "x": cx + 420, "y": cy + 60, "dy": 2, "coordinates": "physical" }),
        )
        .await);
    seen = log.wait(seen, "wheel -240").await;
    ok(&server
        .call(
            "scroll",
            json!({ "x": cx + 420, "y": cy + 60, "dx": 1, "coordinates": "physical" }),
        )
        .await);
    seen = log.wait(seen, "hwheel 120").await;

    // The clipboard both ways, shared with X.
    let clip = "剪贴板 ✓ 😀";
    ok(&server
        .call("clipboard_write", json!({ "text": clip }))
        .await);
    let r = server.call("clipboard_read", json!({})).await;
    assert_eq!(ok(&r)["clipboard"], clip);
    assert_eq!(harness::xclip_out(desktop), clip);
    harness::xclip_in(desktop, "from X 中");
    wait_for(Duration::from_secs(5), "the X clipboard", || async {
        let r = server.call("clipboard_read", json!({})).await;
        (ok(&r)["clipboard"] == "from X 中").then_some(())
    })
    .await;

    // Covered by Notepad: PrintWindow answers blank under Wine, which is detected, and the
    // screenshot falls back to the screen, saying so.
    let r = server
        .call(
            "window",
            json!({ "action": "launch", "command": "notepad", "wait_ms": 20000 }),
        )
        .await;
    let notepad = ok(&r)["window"]["id"].clone();
    ok(&server
        .call(
            "window",
            json!({ "action": "move", "window_id": notepad, "x": 100, "y": 80 }),
        )
        .await);
    let r = server.call("screenshot", json!({ "window_id": id })).await;
    let notes = text(&r);
    assert!(
        notes.contains("partly covered") && notes.contains("blank image"),
        "{notes}"
    );
    // The hit test (WindowFromPoint) sees Notepad over the fixture and refuses the click;
    // the fixture gets nothing.
    let r = server
        .call(
            "click",
            json!({ "x": 100, "y": 100, "screenshot_id": ok(&r)["screenshot_id"] }),
        )
        .await;
    assert_eq!(error_code(&r), "CLICK_WRONG_WINDOW", "{}", text(&r));
    assert!(text(&r).contains("notepad.exe"), "{}", text(&r));

    // A stuck app: the tree read gives up at its limit while the app is still hung instead of
    // hanging the server; screenshots keep working; once the app answers, so does the tree.
    let s = snapshot(&server, &id).await;
    let hang = element(&s, "Button", "Hang 5 s")["token"].clone();
    ok(&server.call("click", json!({ "element": hang })).await);
    seen = log.wait(seen, "hang start").await;
    let r = server
        .call(
            "get_window_state",
            json!({ "window_id": id, "timeout_ms": 1000 }),
        )
        .await;
    assert!(
        !log.lines().iter().any(|l| l == "hang end"),
        "get_window_state waited for the hung app: {}",
        text(&r)
    );
    assert!(
        r.is_error == Some(true) || ok(&r)["complete"] == false,
        "{}",
        text(&r)
    );
    let shot = server.call("screenshot", json!({ "window_id": id })).await;
    assert!(harness::image(&shot).0 > 0);
    seen = log.wait(seen, "hang end").await;
    let s = snapshot(&server, &id).await;
    element(&s, "Button", "OK");

    // Closing asks the app, which logs it, and nothing else reached it.
    assert_eq!(log.lines().len(), seen, "{:?}", &log.lines()[seen..]);
    ok(&server
        .call("window", json!({ "action": "close", "window_id": id }))
        .await);
    log.wait(seen, "closed").await;

    // The overlay process killed from outside (TerminateProcess through Wine's taskkill): the
    // guard fails closed, reads keep working.
    let s = ok(&server.call("status", json!({})).await).clone();
    assert_eq!(s["overlay"]["visible"], true, "{s}");
    let pid = s["overlay"]["pid"].as_u64().expect("the overlay's pid");
    let mut kill = w.command(desktop, "wine");
    kill.args(["taskkill", "/F", "/PID", &pid.to_string()]);
    run(
        kill,
        "wine taskkill of the overlay",
        Duration::from_secs(30),
    );
    wait_for(Duration::from_secs(5), "guard-exited", || async {
        let s = ok(&server.call("status", json!({})).await).clone();
        (s["kill_switch"]["reason"] == "guard-exited").then_some(())
    })
    .await;
    let r = server
        .call(
            "move_cursor",
            json!({ "x": 5, "y": 5, "coordinates": "physical" }),
        )
        .await;
    assert_eq!(error_code(&r), "STOPPED_BY_HUMAN", "{}", text(&r));
    assert!(text(&r).contains("guard-exited"), "{}", text(&r));
    ok(&server.call("list_windows", json!({})).await);
    server.finish().await;
    let mut kill = w.command(desktop, "wineserver");
    kill.arg("-k");
    let _ = kill.status();
    let _ = std::fs::remove_file(&log.0);
}

/// `deskpilot doctor` on Windows names what works and what does not here, with fixes, and
/// fails (exit code 1) because something does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_under_wine_says_what_is_missing() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let Some(w) = wine(desktop) else { return };
    let mut cmd = w.command(desktop, "wine");
    cmd.arg(&w.exe).arg("doctor");
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .expect("run deskpilot.exe doctor");
    let report = String::from_utf8_lossy(&out.stdout).to_string();
    for (line, what) in [
        ("ok    desktop            1 monitor(s)", "the monitor"),
        ("ok    capture            BitBlt", "a real capture"),
        (
            "FAIL  accessibility      UI Automation unavailable",
            "no UI Automation in Wine",
        ),
        ("trees come from MSAA", "the fallback"),
        ("ok    overlay", "the overlay process"),
        ("FAIL  shell", "Wine's powershell.exe stub"),
        ("not a working PowerShell", "why"),
        ("fix: install PowerShell 7", "the fix"),
        ("FAIL  ocr", "no Windows.Media.Ocr in Wine"),
        ("Windows.Media.Ocr cannot be used here", "why"),
    ] {
        assert!(report.contains(line), "{what}: no {line:?} in\n{report}");
    }
    assert_eq!(out.status.code(), Some(1), "{report}");
    let mut kill = w.command(desktop, "wineserver");
    kill.arg("-k");
    let _ = kill.status();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dsh_profile_lists_windows_and_invokes_the_win32_fixture_by_path_under_wine() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let Some(w) = wine(desktop) else { return };
    let fixture = w.exe.with_file_name("winfixture.exe");
    let log = EventLog(
        Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("winfixture-dsh-{}.log", std::process::id())),
    );
    let _ = std::fs::remove_file(&log.0);
    let server = serve_wine_with(desktop, &w, &["--profile", "dsh"]).await;
    let r = server
        .call(
            "app_window",
            json!({ "action": "launch", "command": z(&fixture), "args": [z(&log.0)] }),
        )
        .await;
    let launched = ok(&r).clone();
    assert_eq!(launched["process"], "winfixture.exe", "{}", text(&r));
    let mut seen = log.wait(0, "ready").await;
    let listing = ok(&server
        .call(
            "app_window",
            json!({ "action": "list", "filter": "Win32 fixture" }),
        )
        .await)
    .clone();
    assert_eq!(listing["count"], 1, "{listing}");
    let hwnd = listing["windows"][0]["hwnd"].clone();
    assert_eq!(hwnd, launched["hwnd"]);
    assert_eq!(listing["windows"][0]["process"], "winfixture.exe");
    ok(&server
        .call("app_window", json!({ "action": "focus", "hwnd": hwnd }))
        .await);

    // The tree's lines end in paths; the OK button is invoked by its path.
    let r = server
        .call("ui_element", json!({ "action": "tree", "hwnd": hwnd }))
        .await;
    let tree = text(&r);
    assert_eq!(ok(&r)["source"], "msaa", "{tree}");
    let line = tree
        .lines()
        .find(|l| l.trim_start().starts_with("Button \"OK\""))
        .unwrap_or_else(|| panic!("no OK button in:\n{tree}"));
    let path = line.rsplit("path=").next().unwrap().trim().to_string();
    let r = server
        .call(
            "ui_element",
            json!({ "action": "invoke", "hwnd": hwnd, "path": path }),
        )
        .await;
    assert_eq!(ok(&r)["path"], path.as_str(), "{}", text(&r));
    seen = log.wait(seen, "click OK").await;
    // And by find, with a Chinese description.
    let r = server
        .call(
            "ui_element",
            json!({ "action": "find", "hwnd": hwnd, "description": "确定", "annotate": false }),
        )
        .await;
    let best = ok(&r)["candidates"][0].clone();
    assert_eq!(best["name"], "确定", "{}", text(&r));
    ok(&server
        .call(
            "ui_element",
            json!({ "action": "invoke", "hwnd": hwnd, "path": best["path"] }),
        )
        .await);
    log.wait(seen, "click 确定").await;
    ok(&server
        .call("app_window", json!({ "action": "close", "hwnd": hwnd }))
        .await);
    server.finish().await;
}

/// Makes a Start-menu shortcut the way an installer's script would: Wine's own `IShellLink`
/// behind `WScript.Shell.CreateShortcut`, in the all-users `Programs` folder.
const MAKE_SHORTCUT_JS: &str = r#"
var shell = WScript.CreateObject("WScript.Shell");
var files = WScript.CreateObject("Scripting.FileSystemObject");
var dir = shell.SpecialFolders("AllUsersPrograms") + "\\Deskpilot Tests";
if (!files.FolderExists(dir)) files.CreateFolder(dir);
var link = shell.CreateShortcut(dir + "\\Win32 Fixture.lnk");
link.TargetPath = WScript.Arguments(0);
link.Arguments = "\"" + WScript.Arguments(1) + "\"";
link.Description = "deskpilot test fixture";
link.Save();
"#;

/// The fixture's Start-menu shortcut ("Win32 Fixture", logging to `log`).
fn make_shortcut(desktop: &VirtualDisplay, w: &Wine, fixture: &Path, log: &EventLog) {
    let script = Path::new(env!("CARGO_TARGET_TMPDIR")).join("make-shortcut.js");
    std::fs::write(&script, MAKE_SHORTCUT_JS).unwrap();
    let mut make = w.command(desktop, "wine");
    make.arg("wscript.exe")
        .arg(z(&script))
        .arg(z(fixture))
        .arg(z(&log.0));
    run(
        make,
        "wscript making a Start-menu shortcut",
        Duration::from_secs(60),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_menu_shortcut_is_listed_and_its_exec_starts_the_app_under_wine() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let Some(w) = wine(desktop) else { return };
    let fixture = w.exe.with_file_name("winfixture.exe");
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let log = EventLog(tmp.join(format!("winfixture-lnk {}.log", std::process::id())));
    let _ = std::fs::remove_file(&log.0);
    make_shortcut(desktop, &w, &fixture, &log);

    // Wine has no Applications folder: the shortcuts are listed anyway.
    let server = serve_wine(desktop, &w).await;
    let r = server
        .call("list_apps", json!({ "filter": "Win32 Fixture" }))
        .await;
    let v = ok(&r).clone();
    let installed = v["installed"].as_array().unwrap();
    let app = installed
        .iter()
        .find(|a| a["id"] == r"Deskpilot Tests\Win32 Fixture.lnk")
        .unwrap_or_else(|| panic!("no shortcut in {v:#}\n{}", text(&r)));
    assert_eq!(app["name"], "Win32 Fixture", "{app}");
    let exec: Vec<String> = app["exec"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    assert_eq!(exec.len(), 2, "{app}");
    assert!(exec[0].eq_ignore_ascii_case(&z(&fixture)), "{app}");
    // The quoted argument with a space in it is one argument again.
    assert_eq!(exec[1], z(&log.0), "{app}");
    let keywords = app["keywords"].to_string();
    assert!(
        keywords.contains("winfixture.exe") && keywords.contains("deskpilot test fixture"),
        "{app}"
    );

    // What the catalog says to run starts the app.
    let r = server
        .call(
            "window",
            json!({ "action": "launch", "command": exec[0], "args": &exec[1..], "wait_ms": 20000 }),
        )
        .await;
    let launched = ok(&r)["window"].clone();
    assert_eq!(launched["process"], "winfixture.exe", "{}", text(&r));
    log.wait(0, "ready").await;
    ok(&server
        .call(
            "window",
            json!({ "action": "close", "window_id": launched["id"] }),
        )
        .await);
    server.finish().await;
    let _ = std::fs::remove_dir_all(
        w.prefix
            .join("drive_c/ProgramData/Microsoft/Windows/Start Menu/Programs/Deskpilot Tests"),
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_computer_use_profile_lists_launches_and_clicks_the_win32_fixture_by_index_under_wine()
{
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let Some(w) = wine(desktop) else { return };
    let fixture = w.exe.with_file_name("winfixture.exe");
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let log = EventLog(tmp.join(format!("winfixture-cu {}.log", std::process::id())));
    let _ = std::fs::remove_file(&log.0);
    make_shortcut(desktop, &w, &fixture, &log);
    let server = serve_wine_with(desktop, &w, &["--profile", "computer-use"]).await;
    let r = server
        .call("list_apps", json!({ "filter": "Win32 Fixture" }))
        .await;
    assert!(
        text(&r).contains(r"Deskpilot Tests\Win32 Fixture.lnk: Win32 Fixture"),
        "{}",
        text(&r)
    );
    // launch_app by the shortcut's name reports the window it opened.
    let r = server
        .call(
            "launch_app",
            json!({ "app": "Win32 Fixture", "wait_ms": 20000 }),
        )
        .await;
    let launched = ok(&r).clone();
    assert_eq!(
        launched["windows"][0]["app"],
        "winfixture.exe",
        "{}",
        text(&r)
    );
    let seen = log.wait(0, "ready").await;
    let window = json!({ "window_id": launched["window_id"] });
    let r = server.call("get_window_state", window.clone()).await;
    let state = text(&r);
    assert_eq!(ok(&r)["source"], "msaa", "{state}");
    let ok_button = ok(&r)["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["control_type"] == "Button" && e["name"] == "OK")
        .unwrap_or_else(|| panic!("no OK button in:\n{state}"))
        .clone();
    let index = ok_button["index"].as_u64().unwrap();
    assert!(
        state.lines().any(|l| l
            .trim_start()
            .starts_with(&format!("{index} Button \"OK\""))),
        "{state}"
    );
    let mut args = window.clone();
    args["element_index"] = json!(index);
    let r = server.call("click", args).await;
    ok(&r);
    log.wait(seen, "click OK").await;
    let mut kill = w.command(desktop, "wineserver");
    kill.arg("-k");
    let _ = kill.status();
    server.finish().await;
    let _ = std::fs::remove_dir_all(
        w.prefix
            .join("drive_c/ProgramData/Microsoft/Windows/Start Menu/Programs/Deskpilot Tests"),
    );
}
