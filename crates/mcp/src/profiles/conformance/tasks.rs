//! Task-augmented calls (the tasks extension, SEP-2663) as the suite exercises them, on the
//! endpoint hub's [`TaskManager`](rmcp::task_manager::TaskManager) that answers `tasks/get`,
//! `tasks/update` and `tasks/cancel` for every profile.
//!
//! The server decides: a tool that supports tasks answers a client that declared the
//! extension (for the session, or in the request's `_meta`) with a task at once and runs in
//! it; for any other client it runs as an ordinary call (a tool that waits on the user then
//! asks through an input-required result) — or, for a tool registered as task-only
//! (`failing_job`, `test_tool_with_task`), is refused with -32021 before it starts. `greet` never makes a task. A task's tool error settles `completed` with
//! `isError`; a protocol error settles `failed`; `tasks/cancel` settles `cancelled` because
//! each waiting fixture stops when asked.

use std::time::Duration;

use rmcp::handler::server::tool::InputResponses;
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock, CreateTaskResult,
    InputRequests, InputRequiredResult,
};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskContext, TaskExit, TaskOptions};
use rmcp::{ErrorData, RoleServer, tool, tool_router};
use serde::Deserialize;
use serde_json::Value;

use super::{Conformance, mrtr};
use crate::kit::Parameters;
use crate::kit::context::NoArgs;
use crate::kit::server::Server;

/// `greet`'s argument.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GreetArgs {
    /// Who to greet.
    pub name: String,
}

/// `slow_compute`'s arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlowArgs {
    /// How long to work, in seconds (0: at once).
    #[serde(default = "one_second")]
    pub seconds: f64,
    /// A name for the result.
    #[serde(default)]
    pub label: Option<String>,
}

fn one_second() -> f64 {
    1.0
}

/// `confirm_delete`'s argument.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ConfirmArgs {
    /// The file the user is asked about (nothing is deleted).
    #[serde(default)]
    pub filename: Option<String>,
}

/// Whether the request's client declared the tasks extension.
fn tasks_declared(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .is_some_and(|c| c.supports_tasks())
}

/// The -32021 refusal of a tool that can only run as a task.
fn tasks_required() -> ErrorData {
    ErrorData::missing_required_client_capability(
        ClientCapabilities::builder().enable_tasks().build(),
    )
}

fn text(t: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(t)])
}

/// The longest a fixture works: the suite asks for a few seconds; any more (or a value no
/// `Duration` holds) is cut to this, so a call never outlives a client's patience.
const MOST_SECONDS: f64 = 10.0;

/// Sleeps `seconds` (at most [`MOST_SECONDS`]) unless the task is cancelled first.
async fn work(seconds: f64, task: Option<&TaskContext>) -> Result<(), TaskExit> {
    let seconds = if seconds.is_finite() {
        seconds.clamp(0.0, MOST_SECONDS)
    } else {
        0.0
    };
    let sleep = tokio::time::sleep(Duration::from_secs_f64(seconds));
    match task {
        Some(task) => tokio::select! {
            () = task.cancelled() => Err(TaskExit::Cancelled),
            () = sleep => Ok(()),
        },
        None => {
            sleep.await;
            Ok(())
        }
    }
}

/// Whether to delete `filename`, as a form.
fn delete_question(filename: &str) -> rmcp::model::InputRequest {
    mrtr::form_of(
        &format!("Delete {filename}?"),
        serde_json::json!({ "confirm": { "type": "boolean", "description": "Delete it?" } }),
        &["confirm"],
    )
}

/// An elicitation answer's `content.<name>`.
fn content<'a>(answer: &'a Value, name: &str) -> Option<&'a Value> {
    answer.get("content")?.get(name)
}

#[tool_router(router = tasks_router, vis = "pub(crate)")]
impl Server<Conformance> {
    /// Greets `name`; never a task.
    #[tool(name = "greet", annotations(read_only_hint = true))]
    pub async fn greet(&self, Parameters(a): Parameters<GreetArgs>) -> CallToolResult {
        text(format!("Hello, {}!", a.name))
    }

    /// Works `seconds`, then says so; a task for a client that declared tasks, and then
    /// `tasks/cancel` stops it.
    #[tool(name = "slow_compute", annotations(read_only_hint = true))]
    pub async fn slow_compute(
        &self,
        Parameters(a): Parameters<SlowArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let label = a.label.unwrap_or_else(|| "compute".into());
        let seconds = a.seconds;
        let report = move || text(format!("slow_compute({label}) done after {seconds} s"));
        if !tasks_declared(&context) {
            let _ = work(seconds, None).await;
            return Ok(report().into());
        }
        let task = self.hub.tasks.spawn(TaskOptions::default(), move |task| {
            Box::pin(async move {
                work(seconds, Some(&task)).await?;
                Ok(report())
            })
        });
        Ok(CreateTaskResult::new(task).into())
    }

    /// Works a second, then fails as a tool (`isError`); runs only as a task.
    #[tool(name = "failing_job", annotations(read_only_hint = true))]
    pub async fn failing_job(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !tasks_declared(&context) {
            return Err(tasks_required());
        }
        let task = self.hub.tasks.spawn(TaskOptions::default(), |task| {
            Box::pin(async move {
                work(1.0, Some(&task)).await?;
                Ok(CallToolResult::error(vec![ContentBlock::text(
                    "failing_job: the job failed, as it always does",
                )]))
            })
        });
        Ok(CreateTaskResult::new(task).into())
    }

    /// Works a fifth of a second, then fails with a protocol error (an internal error).
    #[tool(name = "protocol_error_job", annotations(read_only_hint = true))]
    pub async fn protocol_error_job(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let failure = || {
            ErrorData::internal_error("protocol_error_job: an internal failure, on purpose", None)
        };
        if !tasks_declared(&context) {
            let _ = work(0.2, None).await;
            return Err(failure());
        }
        let task = self.hub.tasks.spawn(TaskOptions::default(), move |task| {
            Box::pin(async move {
                work(0.2, Some(&task)).await?;
                Err(TaskExit::Error(failure()))
            })
        });
        Ok(CreateTaskResult::new(task).into())
    }

    /// Asks the user whether to delete `filename` and says what they answered (nothing is
    /// deleted): as a task it waits on `tasks/update`; without tasks it asks through an
    /// input-required result and answers the call that brings the reply.
    #[tool(name = "confirm_delete", annotations(read_only_hint = true))]
    pub async fn confirm_delete(
        &self,
        Parameters(a): Parameters<ConfirmArgs>,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let filename = a.filename.unwrap_or_else(|| "file.txt".into());
        let question = delete_question(&filename);
        let said = move |answer: &Value| {
            let confirmed = content(answer, "confirm").and_then(Value::as_bool) == Some(true);
            text(format!(
                "confirm_delete({filename}): confirmed = {confirmed}"
            ))
        };
        if !tasks_declared(&context) {
            return Ok(match mrtr::answer(responses.as_ref(), "confirm") {
                Some(answer) => said(&Value::Object(answer.clone())).into(),
                None => mrtr::ask_for("confirm", question).into(),
            });
        }
        let task = self.hub.tasks.spawn(TaskOptions::default(), move |task| {
            Box::pin(async move { Ok(said(&task.request_input("confirm", question).await?)) })
        });
        Ok(CreateTaskResult::new(task).into())
    }

    /// Asks the user two things at once and says both answers: as a task it waits until both
    /// came through `tasks/update`; without tasks it asks through an input-required result.
    #[tool(name = "multi_input", annotations(read_only_hint = true))]
    pub async fn multi_input(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let question =
            |which: &str| mrtr::form(&format!("Provide value {which}"), "value", "A value.");
        let said = |a: &Value, b: &Value| {
            let value = |v: &Value| {
                content(v, "value")
                    .and_then(Value::as_str)
                    .unwrap_or("(none)")
                    .to_string()
            };
            text(format!("multi_input: a = {}, b = {}", value(a), value(b)))
        };
        if !tasks_declared(&context) {
            let r = responses.as_ref();
            return Ok(
                match (mrtr::answer(r, "input-a"), mrtr::answer(r, "input-b")) {
                    (Some(a), Some(b)) => {
                        said(&Value::Object(a.clone()), &Value::Object(b.clone())).into()
                    }
                    _ => InputRequiredResult::from_input_requests(InputRequests::from([
                        ("input-a".to_string(), question("A")),
                        ("input-b".to_string(), question("B")),
                    ]))
                    .into(),
                },
            );
        }
        let task = self.hub.tasks.spawn(TaskOptions::default(), move |task| {
            Box::pin(async move {
                let (a, b) = tokio::join!(
                    task.request_input("input-a", question("A")),
                    task.request_input("input-b", question("B")),
                );
                Ok(said(&a?, &b?))
            })
        });
        Ok(CreateTaskResult::new(task).into())
    }

    /// Asks the user's name with an input-required result, then greets them from a task;
    /// runs only for a client that declared tasks.
    #[tool(name = "test_tool_with_task", annotations(read_only_hint = true))]
    pub async fn test_tool_with_task(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !tasks_declared(&context) {
            return Err(tasks_required());
        }
        let Some(answer) = mrtr::answer(responses.as_ref(), "user_name") else {
            return Ok(
                InputRequiredResult::from_input_requests(InputRequests::from([(
                    "user_name".to_string(),
                    mrtr::form("What is your name?", "name", "Your name."),
                )]))
                .into(),
            );
        };
        let name = mrtr::field(answer, "name").unwrap_or("friend").to_string();
        let task = self.hub.tasks.spawn(TaskOptions::default(), move |task| {
            Box::pin(async move {
                work(0.2, Some(&task)).await?;
                Ok(text(format!("Hello, {name}! (from a task)")))
            })
        });
        Ok(CreateTaskResult::new(task).into())
    }
}
