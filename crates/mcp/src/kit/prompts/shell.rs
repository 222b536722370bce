//! `shell_task`: a task for a persistent shell session — the session's shell and directory
//! now, this client's other sessions, and the shell tools with the session filled in.

use std::time::Duration;

use deskpilot_types::ErrorCode;
use rmcp::ErrorData;
use rmcp::model::GetPromptResult;
use serde_json::json;

use super::{Args, Toolbox, call_args, failed, user_text};
use crate::kit::render;
use crate::kit::server::{ProfileSpec, Server};

/// The session the shell tools use when a call names none.
pub(crate) const MAIN_SESSION: &str = "main";

pub(super) async fn task<P: ProfileSpec>(
    server: &Server<P>,
    args: &Args,
) -> Result<GetPromptResult, ErrorData> {
    let task = args.need("task").to_string();
    let name = args.get("session").unwrap_or(MAIN_SESSION).to_string();
    let session = server.session();
    let asked = name.clone();
    let (place, program) = render::blocking(
        Duration::from_secs(5).min(server.request_timeout()),
        "prompt shell_task",
        move || {
            let place = session.shell_cwd(&asked)?;
            let program = session
                .shells()
                .program()
                .map(|p| p.dialect.name().to_string());
            Ok((place, program))
        },
    )
    .await
    .map_err(|e| match e.code() {
        // Asking where a session is starts no shell: the one way it fails is the name.
        ErrorCode::ShellUnavailable => ErrorData::invalid_params(format!("session: {e}"), None),
        _ => failed("session", e),
    })?;
    let mut text = format!("Task: {task}\n\n");
    text.push_str(&format!(
        "Work in the persistent shell session \"{name}\" ({}): {} in {}. Directory changes, variables and activated environments stay between commands; stdin is empty, so nothing may wait for input.\n",
        program.as_deref().unwrap_or("no shell found on this machine"),
        if place.started {
            "running"
        } else {
            "it starts with its first command"
        },
        place.cwd
    ));
    let others: Vec<&String> = place.sessions.iter().filter(|s| **s != name).collect();
    if !others.is_empty() {
        text.push_str(&format!(
            "This client's other sessions: {}.\n",
            others
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let mut tools = Toolbox::new(server);
    tools.add(
        "shell_exec",
        format!(
            "run a command ({})",
            call_args(json!({ "session": name, "command": "…" }))
        ),
    );
    tools.add(
        "shell_exec_verified",
        format!(
            "run a command that creates or changes files and check them on disk ({})",
            call_args(json!({ "session": name, "command": "…", "expect": { "file_exists": "…" } }))
        ),
    );
    tools.add("diagnose", "a failure's cause and next step");
    tools.add("shell_cd", "change the session's directory");
    tools.add("shell_env_set", "set a variable for later commands");
    text.push_str("\nTools:\n");
    text.push_str(&tools.render());
    text.push_str(
        "\n\nCheck each step by its exit code and output, and the result itself (the file, the service, the output) before saying the task is done.",
    );
    Ok(GetPromptResult::new(vec![user_text(text)])
        .with_description(format!("A task in shell session {name}")))
}
