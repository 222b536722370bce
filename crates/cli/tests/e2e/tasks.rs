//! Long calls as tasks and approvals over 2026-07-28, against the real binary: a `wait_for`
//! whose window opens only after the call answered completes as a task (over stdio with
//! `initialize`, and over stateless HTTP where every poll is a request of its own); a cancelled
//! `shell_exec` never does what its command would have done after its sleep, a cancelled
//! `wait_for` settles `cancelled` at once; a client without tasks gets the ordinary answer; and
//! `requireApproval` over stateless HTTP asks through an input-required round — accept runs the
//! command, decline refuses it.

use std::io::BufRead as _;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    ElicitRequestParams, ElicitResult, ElicitationAction, GetTaskParams, GetTaskResult,
    Implementation, ProtocolVersion, TaskPayload, TaskStatus,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::{Value, json};

use crate::harness::{self, launch};
use crate::safety::ConfigFile;

const TOKEN: &str = "e2e-tasks-token-0123456789abcdef";

/// A client that may declare tasks and whose human (if it has one) answers every question
/// the same way.
#[derive(Clone, Default)]
struct Client {
    tasks: bool,
    answer: Option<ElicitationAction>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let capabilities = match (self.tasks, self.answer.is_some()) {
            (true, true) => ClientCapabilities::builder()
                .enable_elicitation()
                .enable_tasks()
                .build(),
            (true, false) => ClientCapabilities::builder().enable_tasks().build(),
            (false, true) => ClientCapabilities::builder().enable_elicitation().build(),
            (false, false) => ClientCapabilities::default(),
        };
        ClientConfig::new(
            capabilities,
            Implementation::new("deskpilot-e2e-tasks", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match request {
            ElicitRequestParams::FormElicitationParams { message, .. } => message,
            other => format!("{other:?}"),
        };
        self.asked.lock().unwrap().push(message);
        Ok(ElicitResult::new(
            self.answer.clone().unwrap_or(ElicitationAction::Decline),
        ))
    }
}

fn tasks() -> Client {
    Client {
        tasks: true,
        ..Client::default()
    }
}

type Running = RunningService<RoleClient, Client>;

fn params(tool: &str, args: Value) -> CallToolRequestParams {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    CallToolRequestParams::new(tool.to_string()).with_arguments(map)
}

/// Calls `tool` once; the id of the task it became.
async fn start_task(client: &Running, tool: &str, args: Value) -> String {
    match client.call_tool_once(params(tool, args)).await {
        Ok(CallToolResponse::Task(t)) => t.task.task_id,
        other => panic!("{tool} did not become a task: {other:?}"),
    }
}

/// Polls `tasks/get` until `done` holds, for at most `within`.
async fn poll(
    client: &Running,
    id: &str,
    within: Duration,
    done: impl Fn(&GetTaskResult) -> bool,
) -> GetTaskResult {
    harness::wait_for(within, &format!("task {id}"), || async {
        let got = client
            .get_task(GetTaskParams::new(id.to_string()))
            .await
            .expect("tasks/get");
        done(&got).then_some(got)
    })
    .await
}

/// The text of a completed task's result.
fn completed_text(got: &GetTaskResult) -> String {
    match &got.task.payload {
        TaskPayload::Completed { result } => result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("not completed: {other:?}"),
    }
}

/// A `serve --http 127.0.0.1:0` process on the desktop, killed when dropped.
struct Http {
    child: Child,
    url: String,
}

impl Http {
    fn start(desktop: &deskpilot_x11::VirtualDisplay, args: &[&str]) -> Http {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_deskpilot"));
        cmd.args(["serve", "--http", "127.0.0.1:0"])
            .args(args)
            .env("DESKPILOT_TOKEN", TOKEN)
            .env("DESKPILOT_MEMORY_DIR", harness::fresh_memory_dir())
            .env("DESKPILOT_CURSOR", "off")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        desktop.configure(&mut cmd);
        let mut child = cmd.spawn().expect("start deskpilot serve --http");
        let lines: Arc<Mutex<Vec<String>>> = Arc::default();
        let sink = lines.clone();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
                sink.lock().unwrap().push(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let url = loop {
            let found = lines.lock().unwrap().iter().find_map(|l| {
                l.split_once(" at ")
                    .map(|(_, url)| url.trim().to_string())
                    .filter(|url| url.ends_with("/mcp"))
            });
            if let Some(url) = found {
                break url;
            }
            assert!(
                child.try_wait().unwrap().is_none() && Instant::now() < deadline,
                "serve --http printed no address: {:?}",
                lines.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Http { child, url }
    }

    /// `client` over stateless 2026-07-28 requests (`server/discover`, no session).
    async fn modern(&self, client: Client) -> Running {
        let config =
            StreamableHttpClientTransportConfig::with_uri(self.url.clone()).auth_header(TOKEN);
        client
            .serve_with_lifecycle(
                StreamableHttpClientTransport::from_config(config),
                ClientLifecycleMode::Discover {
                    preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                },
            )
            .await
            .expect("a 2026-07-28 client over HTTP")
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A path under the temp dir that does not exist yet, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("deskpilot-e2e-{name}-{}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        Scratch(p)
    }

    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// `wait_for` a window that opens only once the task is working: the task completes with the
/// match. `title` names the window.
async fn window_opened_later(
    desktop: &deskpilot_x11::VirtualDisplay,
    client: &Running,
    title: &str,
) {
    let id = start_task(
        client,
        "wait_for",
        json!({ "wait_kind": "window", "text": title, "timeout_ms": 30000 }),
    )
    .await;
    let now = client
        .get_task(GetTaskParams::new(id.clone()))
        .await
        .unwrap();
    assert_eq!(now.task.status(), TaskStatus::Working, "{:?}", now.task);
    let _app = launch(desktop, "xterm", &["-T", title]);
    let done = poll(client, &id, Duration::from_secs(30), |t| {
        t.task.status().is_terminal()
    })
    .await;
    let text = completed_text(&done);
    assert!(
        text.contains("The window is there") && text.contains(title),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_for_a_window_opened_later_completes_as_a_task_over_stdio_and_stateless_http() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;

    // 2025-11-25 over stdio, the tasks extension declared at initialize.
    let server = harness::serve_with(Some(desktop), &[], &[], tasks()).await;
    window_opened_later(desktop, &server.client, "deskpilot task window stdio").await;
    server.finish().await;

    // 2026-07-28 over HTTP: the call, every tasks/get and the answer are separate requests.
    let http = Http::start(desktop, &[]);
    let client = http.modern(tasks()).await;
    window_opened_later(desktop, &client, "deskpilot task window http").await;
    client.cancel().await.ok();

    // The same call from a client that declared no tasks is answered the ordinary way.
    let plain = http.modern(Client::default()).await;
    let _app = launch(desktop, "xterm", &["-T", "deskpilot plain window"]);
    let r = plain
        .call_tool_once(params(
            "wait_for",
            json!({ "wait_kind": "window", "text": "deskpilot plain window", "timeout_ms": 30000 }),
        ))
        .await
        .unwrap();
    match r {
        CallToolResponse::Complete(r) => {
            let s = harness::ok(&r);
            assert!(
                s["matched"]
                    .as_str()
                    .unwrap()
                    .contains("deskpilot plain window"),
                "{s}"
            );
        }
        other => panic!("a client without tasks got {other:?}"),
    }
    plain.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_tasks_stop_their_work() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let server = harness::serve_with(Some(desktop), &[], &[], tasks()).await;
    let client = &server.client;

    // The command would write its file after a sleep; cancelled first, it never does.
    let file = Scratch::new("cancelled-shell");
    let id = start_task(
        client,
        "shell_exec",
        json!({
            "command": format!("sleep 2; echo too-late > {}", file.path()),
            "session": "cancel",
            "timeout_ms": 60000
        }),
    )
    .await;
    poll(client, &id, Duration::from_secs(10), |t| {
        t.task.status() == TaskStatus::Working
    })
    .await;
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let done = poll(client, &id, Duration::from_secs(10), |t| {
        t.task.status().is_terminal()
    })
    .await;
    assert_eq!(done.task.status(), TaskStatus::Cancelled, "{:?}", done.task);
    // Past the moment the command would have written it, the file is still not there.
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        assert!(
            !file.0.exists(),
            "the cancelled command went on and wrote its file"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The session works on: the next command runs, and as it ends within a moment it answers
    // as an ordinary call although this client declared tasks.
    match client
        .call_tool_once(params(
            "shell_exec",
            json!({ "command": "echo after", "session": "cancel" }),
        ))
        .await
    {
        Ok(CallToolResponse::Complete(result)) => {
            let text = serde_json::to_string(&result.content).unwrap();
            assert!(text.contains("after"), "{text}");
        }
        other => panic!("a quick command should answer at once: {other:?}"),
    }

    // A wait for a window that never comes settles `cancelled` at once, not at its timeout.
    let id = start_task(
        client,
        "wait_for",
        json!({ "wait_kind": "window", "text": "deskpilot never there", "timeout_ms": 60000 }),
    )
    .await;
    let asked = Instant::now();
    client
        .cancel_task(CancelTaskParams::new(id.clone()))
        .await
        .unwrap();
    let done = poll(client, &id, Duration::from_secs(10), |t| {
        t.task.status().is_terminal()
    })
    .await;
    assert_eq!(done.task.status(), TaskStatus::Cancelled);
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "{:?}",
        asked.elapsed()
    );
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_over_stateless_http_goes_through_an_input_required_round() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let config = ConfigFile::new("tasks-approval", "requireApproval = \"mutating\"\n");
    let http = Http::start(desktop, &["--config", config.arg()]);

    // The round on the wire: one elicitation input request and a requestState.
    let file = Scratch::new("approval-round");
    let command =
        json!({ "command": format!("echo approved > {}", file.path()), "session": "e2e" });
    let human = Client {
        answer: Some(ElicitationAction::Accept),
        ..Client::default()
    };
    let client = http.modern(human.clone()).await;
    match client
        .call_tool_once(params("shell_exec", command.clone()))
        .await
        .unwrap()
    {
        CallToolResponse::InputRequired(round) => {
            let requests = round.input_requests.expect("input requests");
            assert_eq!(requests.len(), 1, "{requests:?}");
            let q = serde_json::to_value(requests.values().next().unwrap()).unwrap();
            assert_eq!(q["method"], "elicitation/create", "{q}");
            assert!(
                q["params"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("run shell command"),
                "{q}"
            );
            assert!(round.request_state.is_some());
        }
        other => panic!("no input-required round: {other:?}"),
    }
    assert!(!file.0.exists(), "nothing ran before the answer");

    // Accept: rmcp's client asks its human and retries; the command runs once.
    let r = client
        .call_tool(params("shell_exec", command))
        .await
        .unwrap();
    harness::ok(&r);
    assert_eq!(std::fs::read_to_string(&file.0).unwrap().trim(), "approved");
    assert_eq!(human.asked.lock().unwrap().len(), 1);
    client.cancel().await.ok();

    // Decline: refused, and the command never ran.
    let declined = Scratch::new("approval-declined");
    let human = Client {
        answer: Some(ElicitationAction::Decline),
        ..Client::default()
    };
    let client = http.modern(human.clone()).await;
    let r = client
        .call_tool(params(
            "shell_exec",
            json!({ "command": format!("echo ran > {}", declined.path()), "session": "e2e" }),
        ))
        .await
        .unwrap();
    assert_eq!(harness::error_code(&r), "APPROVAL_DENIED");
    assert_eq!(human.asked.lock().unwrap().len(), 1);
    assert!(!declined.0.exists(), "a declined command ran");
    client.cancel().await.ok();
}
