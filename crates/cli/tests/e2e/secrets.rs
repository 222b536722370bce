//! Secrets end to end: a GTK password form and a terminal's `read -s` prompt receive secrets
//! by name from a dotenv file; the apps themselves are the oracles (zenity prints what was
//! entered, the prompt writes what it read to a file). Then every MCP message of the session,
//! deskpilot's stderr at `DESKPILOT_LOG=debug`, its memory directory and the OCR text of the
//! screen are searched for each value and every 4-character slice of it: no hit.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{self, error_code, ok, serve, text, wait_for, window_of};

/// Values with no 4-character slice any text of a session could hold by chance.
const FORM_VALUE: &str = "Qz7!vK2#mP9x";
const TERM_VALUE: &str = "Wj4%tY8@rN3q";
const STRICT_VALUE: &str = "Hb6^uL1*sD5z";

/// A directory with the secrets file (mode 600), the configuration and the prompt's output.
struct Setup {
    dir: PathBuf,
}

impl Setup {
    fn new(tag: &str) -> Setup {
        let dir =
            std::env::temp_dir().join(format!("deskpilot-secrets-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("secrets.env");
        std::fs::write(
            &file,
            format!(
                "# the test's secrets\nFORM_PASS='{FORM_VALUE}'\nTERM_PASS='{TERM_VALUE}'\nTERM_STRICT='{STRICT_VALUE}'\nNARROW='{FORM_VALUE}-narrow'\n"
            ),
        )
        .unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(
            dir.join("config.toml"),
            r#"
[secrets.FORM_PASS]
windows = ["deskpilot secret form"]

[secrets.TERM_PASS]
windows = ["deskpilot secret term"]
anyField = true

[secrets.TERM_STRICT]
windows = ["deskpilot secret term"]

[secrets.NARROW]
windows = ["no window has this title"]
"#,
        )
        .unwrap();
        Setup { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn args(&self) -> Vec<String> {
        vec![
            "--secrets".into(),
            self.path("secrets.env").display().to_string(),
            "--config".into(),
            self.path("config.toml").display().to_string(),
        ]
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Every place `value` or a 4-character slice of it occurs in `haystack`.
fn leaks(value: &str, haystack: &str) -> Vec<String> {
    let chars: Vec<char> = value.chars().collect();
    chars
        .windows(4)
        .map(|w| w.iter().collect::<String>())
        .filter(|slice| haystack.contains(slice.as_str()))
        .collect()
}

/// Every file under `dir`, as text.
fn files_text(dir: &Path) -> String {
    let mut all = String::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return all;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            all.push_str(&files_text(&p));
        } else if let Ok(bytes) = std::fs::read(&p) {
            all.push_str(&String::from_utf8_lossy(&bytes));
        }
    }
    all
}

/// The edit fields of a window's tree, in tree order.
async fn edits<H: rmcp::ClientHandler>(server: &harness::Server<H>, title: &str) -> Vec<Value> {
    wait_for(
        Duration::from_secs(20),
        "two edit fields in the form",
        || async {
            let r = server
                .call(
                    "get_window_state",
                    json!({ "title_match": title, "include_screenshot": false }),
                )
                .await;
            let edits: Vec<Value> = ok(&r)["elements"]
                .as_array()?
                .iter()
                .filter(|e| e["role"] == "Edit")
                .cloned()
                .collect();
            (edits.len() >= 2).then_some(edits)
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_form_gets_its_secret_by_name_and_nothing_ever_shows_it() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let setup = Setup::new("form");
    let memory = harness::fresh_memory_dir();
    let args = setup.args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let memory_dir = memory.display().to_string();
    let server = serve(
        Some(desktop),
        &args,
        &[
            ("DESKPILOT_LOG", "debug"),
            ("DESKPILOT_MEMORY", "true"),
            ("DESKPILOT_MEMORY_DIR", &memory_dir),
        ],
    )
    .await;

    let mut cmd = std::process::Command::new("zenity");
    cmd.args([
        "--forms",
        "--title",
        "deskpilot secret form",
        "--text",
        "Sign in",
        "--add-entry",
        "User",
        "--add-password",
        "Pass",
    ])
    .stdin(std::process::Stdio::null())
    .stderr(std::process::Stdio::null());
    desktop.configure(&mut cmd);
    let (mut zenity, printed) = harness::spawn_reporting(cmd);
    window_of(&server, zenity.id()).await;
    let fields = edits(&server, "deskpilot secret form").await;
    let pass = fields
        .iter()
        .find(|e| e["password"] == true)
        .unwrap_or_else(|| panic!("no field marked password: {fields:?}"));
    let user = fields
        .iter()
        .find(|e| e["password"] != true)
        .unwrap_or_else(|| panic!("no plain field: {fields:?}"));

    // Refusals first, each with its own code and nothing typed.
    let r = server
        .call(
            "type_secret",
            json!({ "name": "NO_SUCH", "element": pass["token"] }),
        )
        .await;
    assert_eq!(error_code(&r), "SECRET_UNKNOWN", "{}", text(&r));
    assert!(
        text(&r).contains("FORM_PASS"),
        "the known names are listed: {}",
        text(&r)
    );
    let r = server
        .call(
            "type_secret",
            json!({ "name": "NARROW", "element": pass["token"] }),
        )
        .await;
    assert_eq!(error_code(&r), "SECRET_OUT_OF_SCOPE", "{}", text(&r));
    let r = server
        .call(
            "type_secret",
            json!({ "name": "FORM_PASS", "element": user["token"] }),
        )
        .await;
    assert_eq!(error_code(&r), "SECRET_NOT_PASSWORD_FIELD", "{}", text(&r));

    let r = server
        .call(
            "set_value",
            json!({ "element": user["token"], "value": "alice" }),
        )
        .await;
    ok(&r);
    let r = server
        .call(
            "type_secret",
            json!({ "name": "FORM_PASS", "element": pass["token"] }),
        )
        .await;
    let typed = ok(&r).clone();
    assert_eq!(typed["secret"], "FORM_PASS", "{typed}");
    assert_eq!(typed["field"], "filled", "{}", text(&r));
    assert_eq!(typed["effect"], "confirmed", "{}", text(&r));
    assert!(
        text(&r).starts_with("Typed secret FORM_PASS into"),
        "{}",
        text(&r)
    );
    assert!(
        !text(&r).contains(&FORM_VALUE.len().to_string()),
        "no length: {}",
        text(&r)
    );

    // What an agent may look at afterwards: the tree, the field's text, the screen and its OCR.
    let r = server
        .call(
            "get_window_state",
            json!({ "title_match": "deskpilot secret form", "include_screenshot": true }),
        )
        .await;
    ok(&r);
    let r = server
        .call("get_element_text", json!({ "element": pass["token"] }))
        .await;
    let _ = text(&r);
    let r = server.call("ocr", json!({})).await;
    let ocr = text(&r);
    // The shell's output: the secrets file read back reads the names, not the values.
    let r = server
        .call(
            "shell_exec",
            json!({ "command": format!("cat {}", setup.path("secrets.env").display()) }),
        )
        .await;
    let shell = text(&r);
    assert!(shell.contains("FORM_PASS='<secret FORM_PASS>'"), "{shell}");

    // Submit: the form prints "user|password" — the value arrived.
    let r = server
        .call(
            "get_window_state",
            json!({ "title_match": "deskpilot secret form", "include_screenshot": false }),
        )
        .await;
    let submit = harness::element(ok(&r), "Button", "OK")["token"].clone();
    let r = server.call("click", json!({ "element": submit })).await;
    ok(&r);
    let deadline = Instant::now() + Duration::from_secs(10);
    while zenity.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "zenity did not close after Return"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let got = wait_for(Duration::from_secs(5), "zenity's answer", || async {
        printed.lock().unwrap().first().cloned()
    })
    .await;
    assert_eq!(got, format!("alice|{FORM_VALUE}"));

    // The audit line: the timeline says which secret went where, never its value.
    let r = server.call("memory_timeline", json!({ "limit": 20 })).await;
    let timeline = text(&r);
    assert!(
        timeline.contains("type_secret") && timeline.contains("secret FORM_PASS typed"),
        "{timeline}"
    );

    let stdout = server.stdout_lines().join("\n");
    let stderr = server.stderr().join("\n");
    let memory_text = files_text(&memory);
    server.finish().await;
    for (what, haystack) in [
        ("an MCP message", &stdout),
        ("stderr", &stderr),
        ("the memory directory", &memory_text),
        ("the OCR text", &ocr),
    ] {
        for value in [FORM_VALUE, TERM_VALUE, STRICT_VALUE] {
            let found = leaks(value, haystack);
            assert!(
                found.is_empty(),
                "{what} holds slices {found:?} of a secret"
            );
        }
    }
    assert!(
        stderr.contains("secrets loaded"),
        "the load is logged (without values)"
    );
    let _ = std::fs::remove_dir_all(&memory);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_prompt_gets_a_secret_only_when_its_scope_allows_any_field() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let setup = Setup::new("term");
    let args = setup.args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = serve(Some(desktop), &args, &[("DESKPILOT_LOG", "debug")]).await;
    let out = setup.path("read.out");
    let script = format!(
        "printf 'Password: '; stty -echo; read P; stty echo; printf '%s' \"$P\" > {}; sleep 60",
        out.display()
    );
    let term = harness::launch(
        desktop,
        "xterm",
        &[
            "-title",
            "deskpilot secret term",
            "-geometry",
            "60x8+40+40",
            "-e",
            "sh",
            "-c",
            &script,
        ],
    );
    let window = window_of(&server, term.0.id()).await;
    let id = window["id"].clone();
    let r = server.call("screenshot", json!({ "window_id": id })).await;
    let shot = ok(&r).clone();
    let (w, h) = (
        shot["width"].as_f64().unwrap_or(200.0),
        shot["height"].as_f64().unwrap_or(100.0),
    );
    let at = json!({ "x": w / 2.0, "y": h / 2.0 });
    let point = |name: &str| {
        let mut a = at.clone();
        a["name"] = json!(name);
        a
    };
    // A terminal is no password field: a secret without anyField is refused there, and one
    // scoped to another window is refused before that.
    let r = server.call("type_secret", point("TERM_STRICT")).await;
    assert_eq!(error_code(&r), "SECRET_NOT_PASSWORD_FIELD", "{}", text(&r));
    let r = server.call("type_secret", point("FORM_PASS")).await;
    assert_eq!(error_code(&r), "SECRET_OUT_OF_SCOPE", "{}", text(&r));
    let r = server.call("type_secret", point("TERM_PASS")).await;
    let typed = ok(&r).clone();
    assert_eq!(typed["password_field"], false, "{typed}");
    assert!(text(&r).contains("not a password field"), "{}", text(&r));
    let r = server.call("press_key", json!({ "keys": "Return" })).await;
    ok(&r);
    let got = wait_for(Duration::from_secs(10), "the prompt's file", || async {
        std::fs::read_to_string(&out).ok().filter(|s| !s.is_empty())
    })
    .await;
    assert_eq!(got, TERM_VALUE);

    let stdout = server.stdout_lines().join("\n");
    let stderr = server.stderr().join("\n");
    server.finish().await;
    for value in [FORM_VALUE, TERM_VALUE, STRICT_VALUE] {
        for (what, haystack) in [("an MCP message", &stdout), ("stderr", &stderr)] {
            let found = leaks(value, haystack);
            assert!(
                found.is_empty(),
                "{what} holds slices {found:?} of a secret"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secrets_file_others_can_read_stops_the_start() {
    let setup = Setup::new("perm");
    let file = setup.path("secrets.env");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_deskpilot"))
        .args(["serve", "--secrets"])
        .arg(&file)
        .env_remove("DISPLAY")
        .env("XDG_CONFIG_HOME", "/nonexistent/deskpilot-tests")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("SECRETS_FILE_PERMISSIONS") && stderr.contains("chmod 600"),
        "{stderr}"
    );
    assert!(leaks(FORM_VALUE, &stderr).is_empty(), "{stderr}");
    assert!(out.stdout.is_empty(), "nothing but JSON-RPC on stdout");
}

/// A client whose person answers URL-mode elicitation: it opens the page (GET), types `value`
/// and submits it (POST with the page's Origin), as a browser would.
#[derive(Clone)]
struct Person {
    value: &'static str,
    asked: Arc<Mutex<Vec<(String, String, String)>>>,
    completed: Arc<Mutex<Vec<Value>>>,
}

impl rmcp::ClientHandler for Person {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        capabilities.elicitation = Some(
            rmcp::model::ElicitationCapability::new()
                .with_url(rmcp::model::UrlElicitationCapability::new()),
        );
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("deskpilot-e2e-person", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let rmcp::model::ElicitRequestParams::UrlElicitationParams {
            message,
            url,
            elicitation_id,
            ..
        } = request
        else {
            return Ok(rmcp::model::ElicitResult::new(
                rmcp::model::ElicitationAction::Decline,
            ));
        };
        self.asked
            .lock()
            .unwrap()
            .push((message, url.clone(), elicitation_id));
        let value = self.value;
        // The person opens the page after the client said yes.
        tokio::spawn(async move {
            let http = reqwest::Client::new();
            let page = http.get(&url).send().await.expect("GET the page");
            assert_eq!(page.status().as_u16(), 200);
            let html = page.text().await.unwrap();
            assert!(html.contains("type=\"password\""), "{html}");
            let origin = url.split("/secret/").next().unwrap().to_string();
            let posted = http
                .post(&url)
                .header("origin", origin)
                .header("content-type", "application/x-www-form-urlencoded")
                .body(format!(
                    "value={}",
                    value.replace('!', "%21").replace('#', "%23")
                ))
                .send()
                .await
                .expect("POST the value");
            assert_eq!(posted.status().as_u16(), 200);
        });
        Ok(rmcp::model::ElicitResult::new(
            rmcp::model::ElicitationAction::Accept,
        ))
    }

    async fn on_custom_notification(
        &self,
        notification: rmcp::model::CustomNotification,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        if notification.method == "notifications/elicitation/complete" {
            self.completed
                .lock()
                .unwrap()
                .push(notification.params.unwrap_or_default());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_nobody_configured_is_asked_of_the_person_on_deskpilots_page() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    const ASKED_VALUE: &str = "Ux3!kR8#wE2m";
    let person = Person {
        value: ASKED_VALUE,
        asked: Arc::default(),
        completed: Arc::default(),
    };
    let server = harness::serve_with(
        Some(desktop),
        &[],
        &[
            ("DESKPILOT_LOG", "debug"),
            ("DESKPILOT_SECRETS_KEYRING", "false"),
        ],
        person.clone(),
    )
    .await;
    let mut cmd = std::process::Command::new("zenity");
    cmd.args(["--password", "--title", "deskpilot secret asked"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    desktop.configure(&mut cmd);
    let (mut zenity, printed) = harness::spawn_reporting(cmd);
    window_of(&server, zenity.id()).await;
    let pass = wait_for(Duration::from_secs(20), "the password field", || async {
        let r = server
            .call(
                "get_window_state",
                json!({ "title_match": "deskpilot secret asked", "include_screenshot": false }),
            )
            .await;
        ok(&r)["elements"]
            .as_array()?
            .iter()
            .find(|e| e["password"] == true)
            .cloned()
    })
    .await;
    let r = server
        .call(
            "type_secret",
            json!({ "name": "ASKED_PASS", "element": pass["token"] }),
        )
        .await;
    let typed = ok(&r).clone();
    assert_eq!(typed["source"], "given by the person", "{typed}");
    assert_eq!(typed["field"], "filled", "{}", text(&r));
    {
        let asked = person.asked.lock().unwrap();
        assert_eq!(asked.len(), 1, "{asked:?}");
        let (message, url, id) = &asked[0];
        assert!(message.contains("ASKED_PASS"), "{message}");
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        let done = person.completed.lock().unwrap();
        assert_eq!(done.len(), 1, "elicitation/complete was sent: {done:?}");
        assert_eq!(done[0]["elicitationId"], json!(id));
    }
    // Known for the rest of the session: no second question.
    let r = server
        .call(
            "type_secret",
            json!({ "name": "ASKED_PASS", "element": pass["token"] }),
        )
        .await;
    ok(&r);
    assert_eq!(person.asked.lock().unwrap().len(), 1);
    let r = server
        .call(
            "get_window_state",
            json!({ "title_match": "deskpilot secret asked", "include_screenshot": false }),
        )
        .await;
    let submit = harness::element(ok(&r), "Button", "OK")["token"].clone();
    ok(&server.call("click", json!({ "element": submit })).await);
    let deadline = Instant::now() + Duration::from_secs(10);
    while zenity.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "zenity did not close after OK");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let got = wait_for(Duration::from_secs(5), "zenity's answer", || async {
        printed.lock().unwrap().first().cloned()
    })
    .await;
    assert_eq!(got, ASKED_VALUE);
    let stdout = server.stdout_lines().join("\n");
    let stderr = server.stderr().join("\n");
    server.finish().await;
    for (what, haystack) in [("an MCP message", &stdout), ("stderr", &stderr)] {
        let found = leaks(ASKED_VALUE, haystack);
        assert!(
            found.is_empty(),
            "{what} holds slices {found:?} of the secret"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_secret_is_refused_when_the_client_cannot_open_a_page() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let server = serve(
        Some(desktop),
        &[],
        &[("DESKPILOT_SECRETS_KEYRING", "false")],
    )
    .await;
    let zenity = harness::launch(
        desktop,
        "zenity",
        &["--password", "--title", "deskpilot secret refused"],
    );
    window_of(&server, zenity.0.id()).await;
    let pass = wait_for(Duration::from_secs(20), "the password field", || async {
        let r = server
            .call(
                "get_window_state",
                json!({ "title_match": "deskpilot secret refused", "include_screenshot": false }),
            )
            .await;
        ok(&r)["elements"]
            .as_array()?
            .iter()
            .find(|e| e["password"] == true)
            .cloned()
    })
    .await;
    let r = server
        .call(
            "type_secret",
            json!({ "name": "NEVER_GIVEN", "element": pass["token"] }),
        )
        .await;
    assert_eq!(error_code(&r), "SECRET_UNKNOWN", "{}", text(&r));
    assert!(
        text(&r).contains("cannot open a page for the person"),
        "{}",
        text(&r)
    );
    server.finish().await;
}

/// A client whose person answers every approval question with `answer`.
#[derive(Clone)]
struct Approver {
    answer: rmcp::model::ElicitationAction,
    asked: Arc<Mutex<Vec<String>>>,
}

impl rmcp::ClientHandler for Approver {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        rmcp::model::ClientConfig::new(
            rmcp::model::ClientCapabilities::builder()
                .enable_elicitation()
                .build(),
            rmcp::model::Implementation::new("deskpilot-e2e-approver", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        if let rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } = request {
            self.asked.lock().unwrap().push(message);
        }
        Ok(rmcp::model::ElicitResult::new(self.answer.clone()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_whose_scope_wants_approval_is_typed_only_once_the_person_says_yes() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    const APPROVED_VALUE: &str = "Gt5$hM7&cV1p";
    let setup = Setup::new("approval");
    std::fs::write(
        setup.path("approval.toml"),
        "[secrets.APPROVED_PASS]\nwindows = [\"deskpilot secret approved\"]\napproval = true\n",
    )
    .unwrap();
    let config = setup.path("approval.toml").display().to_string();
    let zenity = harness::launch(
        desktop,
        "zenity",
        &["--password", "--title", "deskpilot secret approved"],
    );
    for (answer, want) in [
        (rmcp::model::ElicitationAction::Decline, "APPROVAL_DENIED"),
        (rmcp::model::ElicitationAction::Accept, ""),
    ] {
        let person = Approver {
            answer,
            asked: Arc::default(),
        };
        let server = harness::serve_with(
            Some(desktop),
            &["--config", &config],
            &[
                ("DESKPILOT_SECRET_APPROVED_PASS", APPROVED_VALUE),
                ("DESKPILOT_SECRETS_KEYRING", "false"),
            ],
            person.clone(),
        )
        .await;
        window_of(&server, zenity.0.id()).await;
        let pass = wait_for(Duration::from_secs(20), "the password field", || async {
            let r = server
                .call(
                    "get_window_state",
                    json!({ "title_match": "deskpilot secret approved", "include_screenshot": false }),
                )
                .await;
            ok(&r)["elements"]
                .as_array()?
                .iter()
                .find(|e| e["password"] == true)
                .cloned()
        })
        .await;
        let r = server
            .call(
                "type_secret",
                json!({ "name": "APPROVED_PASS", "element": pass["token"] }),
            )
            .await;
        {
            let asked = person.asked.lock().unwrap();
            assert_eq!(asked.len(), 1, "the person was asked once: {asked:?}");
            assert!(
                asked[0].contains("type secret APPROVED_PASS"),
                "{}",
                asked[0]
            );
        }
        if want.is_empty() {
            let typed = ok(&r).clone();
            assert_eq!(typed["approval"], "approved by the person", "{typed}");
            assert_eq!(typed["field"], "filled", "{}", text(&r));
        } else {
            assert_eq!(error_code(&r), want, "{}", text(&r));
        }
        let stdout = server.stdout_lines().join("\n");
        server.finish().await;
        assert!(leaks(APPROVED_VALUE, &stdout).is_empty());
    }
}
