//! Shell tools, shared by every profile that offers them (`deskpilot`, DesktopOS's surface): a
//! persistent shell per named session (`main` by default) that keeps `cd`, variables and
//! activated virtual environments between calls, verified execution, and the diagnoser.
//! Declared once on every profile's [`Server`]; a profile mounts them with [`tools`], naming the
//! diagnoser as it names it, and words errors through its own [`Wording`].
//!
//! Every tool that changes a session is an engine action (`Session::shell_*` through
//! `Session::act`): the same gates as desktop actions (kill switch, blocklist on the command
//! text, approval, dry run), and an effect the engine judges. The reads (`shell_cwd`,
//! `shell_env_get`, `diagnose`) are engine operations too; this module only words their
//! results. Calls run on the blocking pool; one session's calls queue on its lock, different
//! sessions run in parallel. A `shell_exec` or `shell_exec_verified` whose client cancels the
//! call (`notifications/cancelled`, `tasks/cancel`) kills its command (kit::tasks::stoppable).

use std::time::Duration;

use deskpilot_engine::{
    ActionReport, Captured, Check, Error, Expect, Output, Session as EngineSession, ShellDone,
    ShellOutcome, ShellPlace, VerifiedRun, VerifyTarget,
};
use deskpilot_types::ErrorCode;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::report::{self, Body};
use super::server::{ProfileSpec, Server};
use super::{Parameters, Wording, render};
use deskpilot_engine::limits::{SHELL_RETRIES, SHELL_TIMEOUT_MS};

/// The shell tools for profile `P`'s server, the diagnoser named `diagnose` (for example
/// `desktop_diagnose`).
pub(crate) fn tools<P: ProfileSpec>(diagnose: &'static str) -> ToolRouter<Server<P>> {
    let mut router = Server::<P>::shell_router();
    if diagnose != "diagnose"
        && let Some(mut route) = router.map.remove("diagnose")
    {
        route.attr.name = diagnose.into();
        router.map.insert(diagnose.into(), route);
    }
    router
}

/// The command timeout when a call does not say (its range is the engine's
/// `limits::SHELL_TIMEOUT_MS`).
const DEFAULT_TIMEOUT_MS: u64 = 30_000;

fn main_session() -> String {
    "main".to_string()
}

fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_MS
}

fn two() -> u32 {
    2
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExecArgs {
    /// bash on Linux, PowerShell on Windows; multi-line OK.
    pub command: String,
    /// Kill after ms (default 30000, max 600000).
    #[serde(default = "default_timeout", alias = "timeout")]
    pub timeout_ms: u64,
    /// Default main; each its own shell.
    #[serde(default = "main_session")]
    pub session: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CdArgs {
    /// Absolute or relative.
    pub path: String,
    #[serde(default = "main_session")]
    pub session: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    #[serde(default = "main_session")]
    pub session: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvGetArgs {
    /// Letters, digits, _.
    pub name: String,
    #[serde(default = "main_session")]
    pub session: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvSetArgs {
    /// Letters, digits, _.
    pub name: String,
    /// Exact; any Unicode, newlines too.
    pub value: String,
    #[serde(default = "main_session")]
    pub session: String,
}

/// What must hold after the command, checked through the filesystem (never through the shell);
/// relative paths start at the session's directory.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExpectArg {
    #[serde(default)]
    pub path_exists: Option<String>,
    #[serde(default)]
    pub path_not_exists: Option<String>,
    #[serde(default)]
    pub is_dir: Option<String>,
    /// A regular file.
    #[serde(default)]
    pub is_file: Option<String>,
    /// [path, text]: file contains text.
    #[serde(default)]
    pub file_contains: Option<(String, String)>,
    /// The session's directory afterwards.
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifiedArgs {
    /// In the session's shell language.
    pub command: String,
    /// What must hold afterwards (at least one key).
    pub expect: ExpectArg,
    /// Extra tries when retrying helps (default 2, max 5).
    #[serde(default = "two")]
    pub retries: u32,
    /// ms per attempt (default 30000, max 600000).
    #[serde(default = "default_timeout", alias = "timeout")]
    pub timeout_ms: u64,
    #[serde(default = "main_session")]
    pub session: String,
    /// Create a missing parent dir and rerun (default true; additive).
    #[serde(default = "yes", alias = "autoFix")]
    pub auto_fix: bool,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiagnoseArgs {
    /// Error text (message, code line, stderr).
    pub error: String,
    /// Output around it.
    #[serde(default)]
    pub output: String,
    /// The failed command.
    #[serde(default)]
    pub command: String,
}

fn coded(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::Coded {
        code,
        message: message.into(),
    }
}

fn timeout(ms: u64) -> Result<Duration, Error> {
    let value = i64::try_from(ms).unwrap_or(i64::MAX);
    match SHELL_TIMEOUT_MS.check(value) {
        Ok(ms) => Ok(Duration::from_millis(ms)),
        Err(e) => Err(coded(
            ErrorCode::InvalidArgument,
            format!("timeout_ms {ms} must be {}", e.limit.words()),
        )),
    }
}

/// One stream for the text block.
fn stream(name: &str, c: &Captured) -> String {
    if c.total_bytes == 0 {
        return String::new();
    }
    let mut head = format!("--- {name}");
    if c.cut_bytes > 0 {
        head.push_str(&format!(
            " ({} bytes, {} cut from the middle)",
            c.total_bytes, c.cut_bytes
        ));
    }
    if c.binary {
        head.push_str(" (not UTF-8: shown with replacement characters)");
    }
    format!("\n{head} ---\n{}", c.text)
}

/// The text and structured content of a command's output.
fn output_body(session: &str, command: &str, out: &Output) -> Body {
    let mut text = format!(
        "Exit code {} in {} ({} ms, session {session}).",
        out.exit_code
            .map_or("none (killed)".to_string(), |c| c.to_string()),
        out.cwd,
        out.duration.as_millis()
    );
    if let Some(note) = &out.restart_note {
        text.push_str(&format!("\nNote: {note}."));
    }
    text.push_str(&stream("stdout", &out.stdout));
    text.push_str(&stream("stderr", &out.stderr));
    let mut structured = json!({
        "session": session,
        "exit_code": out.exit_code,
        "cwd": out.cwd,
        "duration_ms": out.duration.as_millis() as u64,
        "stdout": out.stdout,
        "stderr": out.stderr,
        "restart_note": out.restart_note,
    });
    if let Some(d) = out.diagnosis(command) {
        text.push_str(&format!(
            "\nDiagnosis: {} — {}. Retrying as is {}. Next: {}",
            d.category,
            d.reason,
            if d.retryable {
                "may help"
            } else {
                "will not help"
            },
            d.suggestion
        ));
        structured["diagnosis"] = json!(d);
    }
    Body::new(text, structured)
}

/// An error of a shell tool; a timeout still shows what the command printed.
fn shell_failure(session: &str, e: &Error, wording: &dyn Wording) -> CallToolResult {
    let mut r = render::error(e, wording);
    let Error::ShellTimeout { output, .. } = e else {
        return r;
    };
    if let Some(t) = render::text_mut(&mut r) {
        t.push_str(&stream("stdout so far", &output.stdout));
        t.push_str(&stream("stderr so far", &output.stderr));
    }
    if let Some(Value::Object(s)) = r.structured_content.as_mut() {
        s.insert("session".into(), json!(session));
        s.insert("stdout".into(), json!(output.stdout));
        s.insert("stderr".into(), json!(output.stderr));
        s.insert("restart_note".into(), json!(output.restart_note));
        s.insert("cwd".into(), json!(output.cwd));
    }
    r
}

impl<P: ProfileSpec> Server<P> {
    /// Runs a shell action of this client's session through the action pipeline on the
    /// blocking pool (the gates may wait for a human's approval). With `stop` (the request's
    /// token), a cancelled call kills the command (`CANCELLED`).
    async fn shell_report<F>(
        &self,
        what: &'static str,
        budget: Duration,
        stop: Option<&CancellationToken>,
        f: F,
    ) -> Result<ActionReport<ShellOutcome>, Error>
    where
        F: FnOnce(&EngineSession) -> Result<ShellOutcome, Error> + Send + 'static,
    {
        let session = self.session();
        let budget = budget + deskpilot_engine::APPROVAL_TIMEOUT + Duration::from_secs(15);
        let work = move || session.act(Check::default(), VerifyTarget::Screen, f);
        match stop {
            Some(ct) => super::tasks::stoppable(ct, budget, what, work).await,
            None => render::blocking(budget, what, work).await,
        }
    }

    /// [`Self::shell_report`] rendered: `body` words the outcome, a failure of session
    /// `session` is rendered with what it printed.
    async fn shell_action<F>(
        &self,
        what: &'static str,
        budget: Duration,
        stop: Option<&CancellationToken>,
        session: &str,
        f: F,
        body: impl FnOnce(&ShellDone) -> Body,
    ) -> CallToolResult
    where
        F: FnOnce(&EngineSession) -> Result<ShellOutcome, Error> + Send + 'static,
    {
        match self.shell_report(what, budget, stop, f).await {
            Ok(report) => {
                let body = body(&report.outcome.done);
                report::render(report, body, P::wording(), VerifyTarget::Screen)
            }
            Err(e) => shell_failure(session, &e, P::wording()),
        }
    }
}

#[tool_router(router = shell_router, vis = "pub(crate)")]
impl<P: ProfileSpec> Server<P> {
    /// Run in a persistent shell (cd, variables, venvs stay; stdin empty); long output keeps head +
    /// tail; diagnosis on failure.
    #[tool(
        name = "shell_exec",
        annotations(
            title = "Run shell command",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn shell_exec(
        &self,
        Parameters(a): Parameters<ExecArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let t = match timeout(a.timeout_ms) {
            Ok(t) => t,
            Err(e) => return render::error(&e, P::wording()),
        };
        let (name, command) = (a.session.clone(), a.command.clone());
        self.shell_action(
            "shell_exec",
            t,
            Some(&context.ct),
            &a.session,
            move |s| s.shell_exec(&name, &command, t),
            |done| match done {
                ShellDone::Exec(out) => output_body(&a.session, &a.command, out),
                _ => Body::new(String::new(), json!({})),
            },
        )
        .await
    }

    /// Set a session's working directory for later commands.
    #[tool(
        name = "shell_cd",
        annotations(
            title = "Change shell directory",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn shell_cd(&self, Parameters(a): Parameters<CdArgs>) -> CallToolResult {
        let (name, path) = (a.session.clone(), a.path.clone());
        self.shell_action(
            "shell_cd",
            Duration::from_secs(10),
            None,
            &a.session,
            move |s| s.shell_cd(&name, &path),
            |done| {
                let cwd = match done {
                    ShellDone::Cd(out) => out.cwd.as_str(),
                    _ => "",
                };
                Body::new(
                    format!("Session {} is now in {cwd}.", a.session),
                    json!({ "session": a.session, "cwd": cwd }),
                )
            },
        )
        .await
    }

    /// A session's working directory, and all sessions.
    #[tool(
        name = "shell_cwd",
        annotations(
            title = "Shell directory",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn shell_cwd(&self, Parameters(a): Parameters<SessionArgs>) -> CallToolResult {
        let session = self.session();
        let name = a.session.clone();
        let found = render::blocking(Duration::from_secs(5), "shell_cwd", move || {
            session.shell_cwd(&name)
        })
        .await;
        match found {
            Ok(place) => cwd_result(&place),
            Err(e) => render::error(&e, P::wording()),
        }
    }

    /// A variable as the session's shell sees it (null when unset).
    #[tool(
        name = "shell_env_get",
        annotations(
            title = "Get shell variable",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn shell_env_get(&self, Parameters(a): Parameters<EnvGetArgs>) -> CallToolResult {
        let (session, name, var) = (self.session(), a.session.clone(), a.name.clone());
        let result = render::blocking(Duration::from_secs(25), "shell", move || {
            session.shell_env_get(&name, &var)
        })
        .await;
        match result {
            Ok(value) => {
                let text = match &value {
                    Some(v) => format!("{}={v}", a.name),
                    None => format!("{} is not set in session {}.", a.name, a.session),
                };
                let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
                r.structured_content = Some(
                    json!({ "session": a.session, "name": a.name, "value": value, "set": value.is_some() }),
                );
                r
            }
            Err(e) => render::error(&e, P::wording()),
        }
    }

    /// Set and export a session variable (kept if a timeout restarts the shell).
    #[tool(
        name = "shell_env_set",
        annotations(
            title = "Set shell variable",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn shell_env_set(&self, Parameters(a): Parameters<EnvSetArgs>) -> CallToolResult {
        let (name, var, value) = (a.session.clone(), a.name.clone(), a.value.clone());
        self.shell_action(
            "shell_env_set",
            Duration::from_secs(20),
            None,
            &a.session,
            move |s| s.shell_env_set(&name, &var, &value),
            |_| {
                Body::new(
                    format!(
                        "{} is set in session {} (read back; kept across restarts).",
                        a.name, a.session
                    ),
                    json!({ "session": a.session, "name": a.name }),
                )
            },
        )
        .await
    }

    /// Restart a session's shell (start directory, no variables).
    #[tool(
        name = "shell_reset",
        annotations(
            title = "Reset shell session",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn shell_reset(&self, Parameters(a): Parameters<SessionArgs>) -> CallToolResult {
        let name = a.session.clone();
        self.shell_action(
            "shell_reset",
            Duration::from_secs(10),
            None,
            &a.session,
            move |s| s.shell_reset(&name),
            |done| {
                let cwd = match done {
                    ShellDone::Reset { cwd } => cwd.as_str(),
                    _ => "",
                };
                Body::new(
                    format!(
                        "Session {} restarted: a new shell in {cwd}, no variables carried over.",
                        a.session
                    ),
                    json!({ "session": a.session, "cwd": cwd }),
                )
            },
        )
        .await
    }

    /// Run a command, then check expect on the filesystem; a failure is diagnosed: stop, retry, or
    /// fix and rerun.
    #[tool(
        name = "shell_exec_verified",
        annotations(
            title = "Run and verify",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn shell_exec_verified(
        &self,
        Parameters(a): Parameters<VerifiedArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let t = match timeout(a.timeout_ms) {
            Ok(t) => t,
            Err(e) => return render::error(&e, P::wording()),
        };
        if let Err(e) = SHELL_RETRIES.check(i64::from(a.retries)) {
            return render::error(
                &coded(
                    ErrorCode::InvalidArgument,
                    format!("retries {} is more than {}", a.retries, e.limit.hi),
                ),
                P::wording(),
            );
        }
        let e = &a.expect;
        let expect = Expect {
            path_exists: e.path_exists.clone(),
            path_not_exists: e.path_not_exists.clone(),
            is_dir: e.is_dir.clone(),
            is_file: e.is_file.clone(),
            file_contains: e.file_contains.clone(),
            cwd: e.cwd.clone(),
        };
        if expect.is_empty() {
            return render::error(
                &coded(
                    ErrorCode::InvalidArgument,
                    "expect needs at least one of pathExists, pathNotExists, isDir, isFile, fileContains, cwd",
                ),
                P::wording(),
            );
        }
        let (name, command, retries, fix) =
            (a.session.clone(), a.command.clone(), a.retries, a.auto_fix);
        let budget = t * (retries + 1) + Duration::from_secs(2 * u64::from(retries + 1));
        let report = self
            .shell_report("shell_exec_verified", budget, Some(&context.ct), move |s| {
                s.shell_exec_verified(&name, &command, &expect, retries, t, fix)
            })
            .await;
        match report {
            Ok(report) => match &report.outcome.done {
                ShellDone::Verified(run) if run.passed => {
                    let body = verified_body(run, &a.session, &a.command);
                    report::render(report, body, P::wording(), VerifyTarget::Screen)
                }
                ShellDone::Verified(run) => {
                    render_verified_failure(run, &a.session, &a.command, P::wording())
                }
                _ => render::error(
                    &coded(ErrorCode::Internal, "not a verified run"),
                    P::wording(),
                ),
            },
            Err(e) => shell_failure(&a.session, &e, P::wording()),
        }
    }

    /// Explain an error (bash, PowerShell, English, Chinese, deskpilot codes): cause, next step, if
    /// a retry helps, a safe fix.
    #[tool(
        name = "diagnose",
        annotations(
            title = "Diagnose an error",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    pub async fn diagnose(&self, Parameters(a): Parameters<DiagnoseArgs>) -> CallToolResult {
        let d = self.session.diagnose(&a.error, &a.output, &a.command);
        let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
            "{}: {}.\nHint: {}.\nNext: {}\nRetrying as is {}.{}",
            d.category,
            d.reason,
            d.hint,
            d.suggestion,
            if d.retryable {
                "may help"
            } else {
                "will not help"
            },
            d.fix
                .as_ref()
                .map(|f| format!("\nAutomatic fix: {f:?}"))
                .unwrap_or_default()
        ))]);
        r.structured_content = Some(json!(d));
        r
    }
}

/// `shell_cwd`'s answer.
fn cwd_result(p: &ShellPlace) -> CallToolResult {
    if p.started {
        let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
            "Session {} is in {} ({} variable(s) set with shell_env_set). Sessions: {}.",
            p.session,
            p.cwd,
            p.recorded_vars,
            p.sessions.join(", ")
        ))]);
        r.structured_content =
            Some(json!({ "session": p.session, "cwd": p.cwd, "sessions": p.sessions }));
        r
    } else {
        let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
            "Session {} has not run anything yet; it will start in {}. Sessions: {}.",
            p.session,
            p.cwd,
            if p.sessions.is_empty() {
                "none".to_string()
            } else {
                p.sessions.join(", ")
            }
        ))]);
        r.structured_content = Some(
            json!({ "session": p.session, "cwd": p.cwd, "started": false, "sessions": p.sessions }),
        );
        r
    }
}

/// A verified run that passed.
fn verified_body(run: &VerifiedRun, session: &str, command: &str) -> Body {
    let n = run.attempts.len();
    let fixes: Vec<&str> = run
        .attempts
        .iter()
        .filter_map(|a| a.fix_applied.as_deref())
        .collect();
    let mut body = match &run.last {
        Some(out) => output_body(session, command, out),
        None => Body::new(String::new(), json!({ "session": session })),
    };
    body.text = format!(
        "Verified after {n} attempt(s){}: every expectation holds.\n{}",
        if fixes.is_empty() {
            String::new()
        } else {
            format!(" ({})", fixes.join("; "))
        },
        body.text
    );
    body.structured["verified"] = json!(true);
    body.structured["attempts"] = json!(run.attempts);
    body
}

/// A verified run whose expectations still fail: `VERIFICATION_FAILED` with every attempt.
fn render_verified_failure(
    run: &VerifiedRun,
    session: &str,
    command: &str,
    wording: &dyn Wording,
) -> CallToolResult {
    let n = run.attempts.len();
    let failed: Vec<String> = run
        .attempts
        .last()
        .map(|a| a.checks.as_slice())
        .unwrap_or_default()
        .iter()
        .filter(|c| !c.ok)
        .map(|c| format!("{} {}: {}", c.key, c.path, c.detail))
        .collect();
    let e = coded(
        ErrorCode::VerificationFailed,
        format!(
            "{} ran {n} time(s) and the expectations still fail ({}); stopped because {}",
            deskpilot_engine::quoted_command(command),
            if failed.is_empty() {
                "the shell failed".to_string()
            } else {
                failed.join("; ")
            },
            run.stopped
        ),
    );
    let mut r = render::error(&e, wording);
    if let Some(Value::Object(s)) = r.structured_content.as_mut() {
        s.insert("verified".into(), json!(false));
        s.insert("attempts".into(), json!(run.attempts));
        s.insert("effect".into(), json!("suspected_noop"));
        s.insert("session".into(), json!(session));
    }
    r
}
