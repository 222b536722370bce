//! Long calls as tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663): a client that
//! declared the extension and calls a tool that may run long — the waits (`wait`, `wait_for`,
//! `browser_wait_for`), OCR of a whole screen or monitor, `shell_exec` and
//! `shell_exec_verified` — gets a task handle at once and polls `tasks/get` for the status,
//! a status message saying how long the call has been at work, and the result.
//!
//! The task runs the call through the server's own `call_tool`, so it is refused, worded,
//! logged and gated exactly as an ordinary call; the request context it gets is the original
//! one, marked [`InTask`] (so that `call_tool` does not make a task of it again and approvals
//! go through the task's input requests), with a cancellation token of its own. `tasks/cancel`
//! cancels that token, gives the tool [`GRACE`] to stop its work and return, and settles the
//! task `cancelled` either way. The long tools run their engine work through [`stoppable`],
//! which turns that token (or a plain `notifications/cancelled`) into the engine's
//! [`Cancel`]: a wait ends at its next pause, a shell command is killed.
//!
//! Which calls become tasks is decided here per call, as SEP-2663 has the server decide (rmcp
//! 3.11's `Tool` carries no `execution.taskSupport`): a shell command cannot be known to be
//! short, so it always becomes one when the client asks for tasks; OCR only when it reads a
//! whole screen or monitor (a window or region is read in a moment).

use std::time::{Duration, Instant};

use deskpilot_engine::Cancel;
use deskpilot_engine::limits::{SHELL_RETRIES, SHELL_TIMEOUT_MS};
use rmcp::model::TaskPayload;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, CreateTaskResult};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskOptions};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::server::{ProfileSpec, Server};

/// How a `tools/call` goes on.
pub(crate) enum Start {
    /// It runs as a task; this is the answer.
    Task(CreateTaskResult),
    /// It cannot run at all (a tool that needs a task, for a client that declared none).
    #[allow(dead_code, reason = "no tool requires a task yet")]
    Refused(ErrorData),
    /// It runs now, as an ordinary call.
    Now(CallToolRequestParams),
}

/// How long a call that became a task is waited for before its handle is answered: one that
/// ends sooner (an `echo`, a wait whose window is already there) answers as an ordinary call,
/// which is also what a client that declared tasks without following them (the Inspector's
/// CLI) can read.
const QUICK: Duration = Duration::from_secs(1);

/// When a tool's calls are worth a task.
#[derive(Debug, Clone, Copy)]
enum Long {
    /// Every call may run long.
    Always,
    /// A call that reads a whole screen or monitor; a window or a region is read in a moment.
    WholeScreen,
}

/// Tools whose calls may run long enough to be worth a task.
const LONG: &[(&str, Long)] = &[
    ("wait", Long::Always),
    ("wait_for", Long::Always),
    ("browser_wait_for", Long::Always),
    ("shell_exec", Long::Always),
    ("shell_exec_verified", Long::Always),
    ("ocr", Long::WholeScreen),
];

/// The arguments by which a read names a window or a region instead of a screen.
const NARROWING: &[&str] = &["window_id", "hwnd", "title_match", "titleMatch", "region"];

/// How often the client is asked to poll.
const POLL_EVERY: Duration = Duration::from_millis(500);
/// How often the status message is brought up to date.
const STATUS_EVERY: Duration = Duration::from_secs(1);
/// How long a cancelled call may take to stop its work before it is dropped.
pub(crate) const GRACE: Duration = Duration::from_secs(3);
/// How long a task lives (and its result is kept once it ends): beyond the longest call a tool
/// accepts, a verified shell run of the most retries at the longest timeout.
const TTL: Duration = Duration::from_millis(SHELL_TIMEOUT_MS.hi * (SHELL_RETRIES.hi + 1) + 600_000);

/// A call running as a task: its context, for the approvals it asks.
#[derive(Clone)]
pub(crate) struct InTask(pub(crate) TaskContext);

/// Whether the call of `name` with `arguments` may run long.
fn runs_long(name: &str, arguments: Option<&Map<String, Value>>) -> bool {
    let given = |key: &&str| {
        arguments
            .and_then(|a| a.get(*key))
            .is_some_and(|v| match v {
                Value::Null | Value::Bool(false) => false,
                Value::Number(n) => n.as_f64() != Some(0.0),
                Value::String(s) => !s.trim().is_empty(),
                _ => true,
            })
    };
    match LONG.iter().find(|(tool, _)| *tool == name) {
        None => false,
        Some((_, Long::Always)) => true,
        Some((_, Long::WholeScreen)) => !NARROWING.iter().any(given),
    }
}

/// Starts `request` as a task of `server`'s hub when the profile offers tasks, the client
/// declared them and the tool may run long; otherwise the call runs now.
pub(crate) fn start<P: ProfileSpec>(
    server: &Server<P>,
    request: CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Start {
    let wanted = context.extensions.get::<InTask>().is_none()
        && P::capabilities().supports_tasks()
        && context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
        && runs_long(&request.name, request.arguments.as_ref())
        && server.get_tool(&request.name).is_some();
    if !wanted {
        return Start::Now(request);
    }
    let name = request.name.to_string();
    let options = TaskOptions::new()
        .with_ttl_ms(TTL.as_millis() as u64)
        .with_poll_interval_ms(POLL_EVERY.as_millis() as u64)
        .with_status_message(format!("{name}: started"));
    let server = server.clone();
    let context = context.clone();
    let task = server.hub.tasks.clone().spawn(options, move |task| {
        Box::pin(run(server, request, context, task))
    });
    tracing::debug!(task = %task.task_id, tool = %name, "the call starts as a task");
    Start::Task(CreateTaskResult::new(task))
}

/// The answer to a call that became `task`: its ordinary result when it ends within [`QUICK`]
/// (or fails), else the task's handle for the client to poll.
pub(crate) async fn answer(
    hub: &super::hub::Hub,
    task: CreateTaskResult,
) -> Result<CallToolResponse, ErrorData> {
    let id = task.task.task_id.clone();
    let deadline = Instant::now() + QUICK;
    loop {
        match hub.tasks.get_task(&id).map(|t| t.payload) {
            Ok(TaskPayload::Completed { result }) => {
                return serde_json::from_value::<CallToolResult>(Value::Object(result))
                    .map(Into::into)
                    .map_err(|e| ErrorData::internal_error(format!("task {id}: {e}"), None));
            }
            Ok(TaskPayload::Failed { error }) => {
                return Err(
                    serde_json::from_value(Value::Object(error)).unwrap_or_else(|e| {
                        ErrorData::internal_error(format!("task {id}: {e}"), None)
                    }),
                );
            }
            // A question for the human is asked through the task: the client needs its handle.
            Ok(TaskPayload::InputRequired { .. }) => break,
            _ => {}
        }
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tracing::info!(task = %id, "the call runs on as a task");
    Ok(task.into())
}

/// Runs blocking engine work `f` on the pool with a deadline (`render::blocking`) as the work
/// of a call its client may take back: once `ct` (the request's token, cancelled by
/// `notifications/cancelled` or, for a task, `tasks/cancel`) is cancelled, the engine's waits end
/// with `CANCELLED` at their next pause and a shell command is killed with what it started.
pub(crate) async fn stoppable<T, F>(
    ct: &CancellationToken,
    timeout: Duration,
    what: &'static str,
    f: F,
) -> Result<T, deskpilot_engine::Error>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, deskpilot_engine::Error> + Send + 'static,
{
    let flag = Cancel::new();
    let work = {
        let flag = flag.clone();
        super::render::blocking(timeout, what, move || flag.scope(f))
    };
    tokio::pin!(work);
    tokio::select! {
        answer = &mut work => answer,
        () = ct.cancelled() => {
            flag.cancel();
            work.await
        }
    }
}

/// Runs the call through `call_tool` until it answers or the task is cancelled.
async fn run<P: ProfileSpec>(
    server: Server<P>,
    request: CallToolRequestParams,
    mut context: RequestContext<RoleServer>,
    task: TaskContext,
) -> Result<CallToolResult, TaskExit> {
    let stop = CancellationToken::new();
    context.ct = stop.clone();
    context.extensions.insert(InTask(task.clone()));
    let name = request.name.to_string();
    let started = Instant::now();
    let call = ServerHandler::call_tool(&server, request, context);
    tokio::pin!(call);
    let mut status =
        tokio::time::interval_at(tokio::time::Instant::now() + STATUS_EVERY, STATUS_EVERY);
    let answer = loop {
        tokio::select! {
            answer = &mut call => break answer,
            () = task.cancelled() => {
                stop.cancel();
                task.set_status_message(format!("{name}: cancelled, stopping"));
                // A tool that watches its token stops its work and returns; one that does
                // not is dropped after the grace.
                if tokio::time::timeout(GRACE, &mut call).await.is_err() {
                    tracing::warn!(task = task.task_id(), tool = %name, "a cancelled call did not stop within {} s", GRACE.as_secs());
                }
                return Err(TaskExit::Cancelled);
            }
            _ = status.tick() => task.set_status_message(format!(
                "{name}: working for {} s",
                started.elapsed().as_secs()
            )),
        }
    };
    match answer {
        Ok(CallToolResponse::Complete(result)) => Ok(result),
        Ok(other) => Err(TaskExit::Error(ErrorData::internal_error(
            format!("{name} answered {other:?} where a result was due"),
            None,
        ))),
        Err(e) => Err(TaskExit::Error(e)),
    }
}

/// In-process clients of the `deskpilot` profile over a fake desktop, for the tests of tasks
/// and approvals.
#[cfg(test)]
pub(crate) mod testing {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use deskpilot_engine::Engine;
    use rmcp::model::{
        CallToolRequestParams, CallToolResponse, ClientCapabilities, ClientConfig,
        ElicitRequestParams, ElicitResult, ElicitationAction, GetTaskParams, GetTaskResult,
        Implementation, ProtocolVersion,
    };
    use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RequestContext, RunningService};
    use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};
    use serde_json::Value;

    use crate::kit::ToolFilter;
    use crate::kit::server::ServerIdentity;
    use crate::profiles::deskpilot::DeskpilotServer;

    /// A client: whether it declares tasks, and what its human answers (none: it declares no
    /// elicitation).
    #[derive(Clone, Default)]
    pub(crate) struct TestClient {
        pub(crate) tasks: bool,
        pub(crate) answer: Option<ElicitationAction>,
        pub(crate) asked: Arc<Mutex<Vec<String>>>,
    }

    impl ClientHandler for TestClient {
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
            ClientConfig::new(capabilities, Implementation::new("deskpilot-kit-test", "1"))
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

    pub(crate) type Client = RunningService<RoleClient, TestClient>;

    /// `client` connected to a `deskpilot` server over `engine`: by `initialize` (2025-11-25) or,
    /// when `modern`, by `server/discover` with every request self-contained (2026-07-28).
    pub(crate) async fn connect(engine: Arc<Engine>, client: TestClient, modern: bool) -> Client {
        let identity = ServerIdentity {
            name: "deskpilot".into(),
            version: "test".into(),
        };
        let server = DeskpilotServer::new(engine, identity, &ToolFilter::default());
        let (server_end, client_end) = tokio::io::duplex(1 << 22);
        tokio::spawn(async move {
            if let Ok(service) = server.serve(server_end).await {
                let _ = service.waiting().await;
            }
        });
        if modern {
            client
                .serve_with_lifecycle(
                    client_end,
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                    },
                )
                .await
                .expect("discover")
        } else {
            client.serve(client_end).await.expect("handshake")
        }
    }

    /// The params of a call of `tool` with the object `args`.
    pub(crate) fn params(tool: &str, args: Value) -> CallToolRequestParams {
        let Value::Object(map) = args else {
            panic!("arguments must be an object")
        };
        CallToolRequestParams::new(tool.to_string()).with_arguments(map)
    }

    /// Calls `tool` once and returns the task id of the task it became.
    pub(crate) async fn start_task(client: &Client, tool: &str, args: Value) -> String {
        match client.call_tool_once(params(tool, args)).await {
            Ok(CallToolResponse::Task(t)) => t.task.task_id,
            other => panic!("{tool} did not become a task: {other:?}"),
        }
    }

    /// Polls `tasks/get` until `done` holds for the task, for at most `within`.
    pub(crate) async fn poll(
        client: &Client,
        id: &str,
        within: Duration,
        done: impl Fn(&GetTaskResult) -> bool,
    ) -> GetTaskResult {
        let deadline = Instant::now() + within;
        loop {
            let got = client
                .get_task(GetTaskParams::new(id.to_string()))
                .await
                .expect("tasks/get");
            if done(&got) {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "task {id} still {:?} after {within:?}",
                got.task
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::testing::{TestClient, connect, poll, start_task};
    use super::*;
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_engine::{Engine, EngineConfig};
    use deskpilot_types::Rect;
    use rmcp::model::{CancelTaskParams, GetTaskParams, TaskPayload, TaskStatus};
    use serde_json::json;

    fn engine(fake: &FakeDesktop) -> Arc<Engine> {
        let mut config = EngineConfig::default();
        config.safety.action_delay = Duration::ZERO;
        Arc::new(Engine::new(fake.desktop(), config))
    }

    fn tasks_client() -> TestClient {
        TestClient {
            tasks: true,
            ..TestClient::default()
        }
    }

    /// The text of a completed task's result.
    fn completed_text(payload: &TaskPayload) -> String {
        match payload {
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

    /// Both revisions: `wait_for` a window that opens only after the call answered is a task
    /// that works, then completes with the match once the window is there.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wait_for_a_window_that_opens_later_completes_as_a_task() {
        let fake = FakeDesktop::new(400, 300);
        let engine = engine(&fake);
        for modern in [false, true] {
            let client = connect(engine.clone(), tasks_client(), modern).await;
            let title = format!("Opens later {modern}");
            let id = start_task(
                &client,
                "wait_for",
                json!({ "wait_kind": "window", "text": title, "timeout_ms": 20000 }),
            )
            .await;
            let now = client
                .get_task(GetTaskParams::new(id.clone()))
                .await
                .unwrap();
            assert_eq!(now.task.status(), TaskStatus::Working, "{:?}", now.task);
            assert_eq!(now.task.task.poll_interval_ms, Some(500));
            fake.add_window(FakeWindow::new(&title, Rect::new(0, 0, 100, 100)));
            let done = poll(&client, &id, Duration::from_secs(15), |t| {
                t.task.status().is_terminal()
            })
            .await;
            let text = completed_text(&done.task.payload);
            assert!(
                text.contains("The window is there") && text.contains(&title),
                "{text}"
            );
            client.cancel().await.ok();
        }
    }

    /// A cancelled `wait` stops at once (it watches its token) and the task says `cancelled`;
    /// while it ran, its status message said for how long.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cancelled_task_stops_and_says_so() {
        let fake = FakeDesktop::new(400, 300);
        let client = connect(engine(&fake), tasks_client(), false).await;
        let id = start_task(&client, "wait", json!({ "seconds": 30 })).await;
        poll(&client, &id, Duration::from_secs(5), |t| {
            t.task
                .task
                .status_message
                .as_deref()
                .is_some_and(|m| m.starts_with("wait: working for"))
        })
        .await;
        let asked = Instant::now();
        client
            .cancel_task(CancelTaskParams::new(id.clone()))
            .await
            .unwrap();
        let done = poll(&client, &id, Duration::from_secs(5), |t| {
            t.task.status().is_terminal()
        })
        .await;
        assert_eq!(done.task.status(), TaskStatus::Cancelled);
        assert!(
            asked.elapsed() < GRACE,
            "the wait stopped on its token, not at the grace: {:?}",
            asked.elapsed()
        );
        client.cancel().await.ok();
    }

    /// A cancelled `wait_for` and a cancelled shell command stop their engine work: the tool
    /// answers (so the task settles) well before the grace that would drop it, and the command
    /// never gets to write its file.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cancelling_stops_the_engine_work() {
        let fake = FakeDesktop::new(400, 300);
        let client = connect(engine(&fake), tasks_client(), true).await;
        let id = start_task(
            &client,
            "wait_for",
            json!({ "wait_kind": "window", "text": "never there", "timeout_ms": 60000 }),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let asked = Instant::now();
        client
            .cancel_task(CancelTaskParams::new(id.clone()))
            .await
            .unwrap();
        let done = poll(&client, &id, Duration::from_secs(10), |t| {
            t.task.status().is_terminal()
        })
        .await;
        assert_eq!(done.task.status(), TaskStatus::Cancelled);
        assert!(asked.elapsed() < GRACE, "{:?}", asked.elapsed());

        let file = std::env::temp_dir().join(format!("dp-task-cancel-{}", std::process::id()));
        let _ = std::fs::remove_file(&file);
        let id = start_task(
            &client,
            "shell_exec",
            json!({
                "command": format!("sleep 1.5; echo late > '{}'", file.display()),
                "session": "cancel"
            }),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let asked = Instant::now();
        client
            .cancel_task(CancelTaskParams::new(id.clone()))
            .await
            .unwrap();
        let done = poll(&client, &id, Duration::from_secs(10), |t| {
            t.task.status().is_terminal()
        })
        .await;
        assert_eq!(done.task.status(), TaskStatus::Cancelled);
        assert!(asked.elapsed() < GRACE, "{:?}", asked.elapsed());
        // Past the moment the command would have written it.
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            assert!(!file.exists(), "the cancelled command went on");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        client.cancel().await.ok();
    }

    /// A client that declared no tasks gets the ordinary answer of the same call; a short call
    /// of a tool that never runs long is ordinary for a client that did.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn without_tasks_the_answer_is_ordinary() {
        let fake = FakeDesktop::new(400, 300);
        let engine = engine(&fake);
        let plain = connect(engine.clone(), TestClient::default(), false).await;
        let r = plain
            .call_tool(testing::params("wait", json!({ "seconds": 0.1 })))
            .await
            .unwrap();
        assert_eq!(r.structured_content.unwrap()["waited_ms"], 100.0);
        plain.cancel().await.ok();
        let tasks = connect(engine, tasks_client(), true).await;
        match tasks
            .call_tool_once(testing::params("list_windows", json!({})))
            .await
            .unwrap()
        {
            CallToolResponse::Complete(r) => assert_ne!(r.is_error, Some(true)),
            other => panic!("list_windows became {other:?}"),
        }
        tasks.cancel().await.ok();
    }

    /// A shell command runs as a task to its output.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_shell_command_completes_as_a_task() {
        let fake = FakeDesktop::new(400, 300);
        let client = connect(engine(&fake), tasks_client(), true).await;
        let id = start_task(
            &client,
            "shell_exec",
            json!({ "command": "sleep 1.5; echo task-output", "session": "tasks" }),
        )
        .await;
        let done = poll(&client, &id, Duration::from_secs(20), |t| {
            t.task.status().is_terminal()
        })
        .await;
        assert!(completed_text(&done.task.payload).contains("task-output"));
        client.cancel().await.ok();
    }

    fn args(v: Value) -> Map<String, Value> {
        let Value::Object(m) = v else { unreachable!() };
        m
    }

    #[test]
    fn long_calls_are_the_waits_the_shell_and_ocr_of_a_screen() {
        for name in [
            "wait",
            "wait_for",
            "browser_wait_for",
            "shell_exec",
            "shell_exec_verified",
        ] {
            assert!(runs_long(name, None), "{name}");
        }
        for name in ["click", "screenshot", "shell_cd", "list_windows"] {
            assert!(!runs_long(name, None), "{name}");
        }
        assert!(runs_long("ocr", None));
        assert!(runs_long(
            "ocr",
            Some(&args(json!({ "monitor": 0, "lang": "eng" })))
        ));
        assert!(runs_long(
            "ocr",
            Some(&args(json!({ "window_id": 0, "title_match": "" })))
        ));
        for a in [
            json!({ "window_id": 12 }),
            json!({ "hwnd": "0x1c00007" }),
            json!({ "title_match": "Editor" }),
            json!({ "titleMatch": "Editor" }),
            json!({ "region": { "x": 0, "y": 0, "width": 10, "height": 10 } }),
        ] {
            assert!(!runs_long("ocr", Some(&args(a.clone()))), "{a}");
        }
    }

    #[test]
    fn a_task_outlives_the_longest_call() {
        let longest = Duration::from_millis(SHELL_TIMEOUT_MS.hi * (SHELL_RETRIES.hi + 1));
        assert!(TTL > longest);
    }
}
