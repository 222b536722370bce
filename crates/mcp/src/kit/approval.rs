//! `requireApproval: mutating`: the client's human says whether an action may run, and only an
//! explicit accept lets it through. How the question travels depends on the call:
//!
//! - a 2025-11-25 call: server-initiated elicitation (`elicitation/create`), answered within the
//!   engine's approval timeout;
//! - a 2026-07-28 call, which has no server-initiated requests: the call ends with an
//!   `InputRequiredResult` holding the question as an elicitation input request; the client
//!   asks its human and calls again with the answer in `inputResponses` and the `requestState`
//!   it was given; the retried call runs again and its gate finds the answer;
//! - a call running as a task (kit::tasks): the task's input requests (`tasks/get` shows the
//!   question with status `input_required`, `tasks/update` answers it).
//!
//! The engine asks through the session's one [`Approver`] on the blocking thread that runs the
//! call, knowing only the action's label. Which call it belongs to travels with the call:
//! [`begin`] picks the call's [`Asker`], [`Call::scope`] makes it the task-local of the call's
//! future, `render::blocking` carries it to the blocking thread ([`current`], [`within`]).
//! Work that runs without it (or a call begun without approvals on) falls back to elicitation
//! through the session's peer, as a 2025-11-25 session always did.
//!
//! The question a 2026-07-28 round asked stays in this process: `requestState` is a random,
//! single-use handle to it (the label asked, bound to the tool and its arguments, answerable for
//! [`ANSWER_WITHIN`]). A client cannot claim an accept for a question it was never asked, reuse an
//! answer for another call or replay it to run the action twice; a handle that is unknown,
//! expired or spent only means the question is asked again. An accepted label lets exactly one
//! gate through: a call that would need a second approval after acting is refused, since asking
//! again would run the first action twice.
//!
//! Anything but an explicit accept fails closed: a client that declared no elicitation
//! (`APPROVAL_UNAVAILABLE`), a decline, a cancel or no answer in time (`APPROVAL_DENIED`).

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use deskpilot_engine::{Approval, Approver, SecretAnswer, SecretRequest, Session};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientResult, CustomNotification, ElicitRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, InputRequest,
    InputRequests, InputRequiredResult, ServerNotification, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext};
use rmcp::task_manager::{TaskContext, TaskExit};
use rmcp::{ErrorData, RoleServer};
use serde_json::Value;
use tokio::runtime::Handle;

use super::server::{ProfileSpec, Server};
use super::tasks::InTask;

/// How long a 2026-07-28 client has to come back with its human's answer.
pub(crate) const ANSWER_WITHIN: Duration = Duration::from_secs(300);
/// Questions kept waiting for their answer at once; the oldest goes first beyond it.
const MAX_WAITING: usize = 256;

/// Why a client without elicitation gets no question.
const NO_ELICITATION: &str =
    "the MCP client did not declare the elicitation capability, so it cannot ask a human";
/// What a 2026-07-28 gate answers while its question goes back to the client.
const ASKING: &str = "the question goes back to the client as an input request";

/// Makes `peer` the one who asks this session's human when a call carries no asker of its own
/// (on the current runtime).
pub(crate) fn install(session: &Session, peer: Peer<RoleServer>) {
    session.set_approver(Arc::new(SessionApprover {
        peer,
        runtime: Handle::current(),
    }));
}

/// Who asks the human for one call.
#[derive(Clone)]
pub(crate) enum Asker {
    /// Server-initiated elicitation through the call's peer (2025-11-25).
    Elicit {
        peer: Peer<RoleServer>,
        declared: bool,
        runtime: Handle,
    },
    /// Input-required rounds (2026-07-28).
    Inputs(Arc<Mutex<Inputs>>),
    /// The input requests of the task the call runs as.
    Task {
        task: TaskContext,
        declared: bool,
        runtime: Handle,
        asked: Arc<AtomicU32>,
    },
}

impl std::fmt::Debug for Asker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Asker::Elicit { declared, .. } => write!(f, "Elicit(declared: {declared})"),
            Asker::Inputs(_) => f.write_str("Inputs"),
            Asker::Task { task, .. } => write!(f, "Task({})", task.task_id()),
        }
    }
}

tokio::task_local! {
    /// The asker of the call running on this task.
    static CALL: Option<Asker>;
}

thread_local! {
    /// The asker of the call whose blocking work runs on this thread.
    static ON_THREAD: RefCell<Option<Asker>> = const { RefCell::new(None) };
}

/// The asker of the call running on this task, for `render::blocking` to carry to its thread.
pub(crate) fn current() -> Option<Asker> {
    CALL.try_with(Clone::clone).ok().flatten()
}

/// Runs `f` with `asker` as the asker of this thread's work.
pub(crate) fn within<T>(asker: Option<Asker>, f: impl FnOnce() -> T) -> T {
    let Some(asker) = asker else {
        return f();
    };
    struct Restore(Option<Asker>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ON_THREAD.with(|t| *t.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(ON_THREAD.with(|t| t.replace(Some(asker))));
    f()
}

/// The approvals of one `tools/call`: [`begin`] it, run the tool inside [`Call::scope`], pass the
/// answer through [`Call::finish`].
#[derive(Debug)]
pub(crate) struct Call {
    asker: Option<Asker>,
}

/// Who asks for the call `request` of `server`'s client, when the deployment requires approval.
/// A retry's `requestState` is redeemed here; one issued for another tool or other arguments is
/// refused (-32602).
pub(crate) fn begin<P: ProfileSpec>(
    server: &Server<P>,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<Call, ErrorData> {
    if !server.session.config().safety.require_approval {
        return Ok(Call { asker: None });
    }
    let declared = context
        .client_capabilities()
        .is_some_and(|c| c.elicitation.is_some());
    let runtime = Handle::current();
    let asker = if let Some(InTask(task)) = context.extensions.get::<InTask>() {
        Asker::Task {
            task: task.clone(),
            declared,
            runtime,
            asked: Arc::default(),
        }
    } else if context
        .protocol_version()
        .is_some_and(|v| !v.has_initialize())
    {
        Asker::Inputs(Arc::new(Mutex::new(Inputs::from_retry(request, declared)?)))
    } else {
        Asker::Elicit {
            peer: context.peer.clone(),
            declared,
            runtime,
        }
    };
    Ok(Call { asker: Some(asker) })
}

impl Call {
    /// `work` (the tool's future) with this call's asker.
    pub(crate) fn scope<F: Future>(
        &self,
        work: F,
    ) -> tokio::task::futures::TaskLocalFuture<Option<Asker>, F> {
        CALL.scope(self.asker.clone(), work)
    }

    /// The call's answer, or the next input-required round when its gate had a question it could
    /// not ask.
    pub(crate) fn finish(
        self,
        answer: Result<CallToolResponse, ErrorData>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(Asker::Inputs(inputs)) = &self.asker
            && let Some(round) = lock(inputs).next_round()
        {
            return Ok(round.into());
        }
        answer
    }
}

/// The session's approver: the asker of the call whose work runs on this thread, else
/// elicitation through the session's peer.
struct SessionApprover {
    peer: Peer<RoleServer>,
    runtime: Handle,
}

impl Approver for SessionApprover {
    fn approve(&self, label: &str, timeout: Duration) -> Approval {
        match ON_THREAD.with(|t| t.borrow().clone()) {
            Some(Asker::Inputs(inputs)) => lock(&inputs).approve(label),
            Some(Asker::Task {
                task,
                declared,
                runtime,
                asked,
            }) => in_task(&task, declared, &runtime, &asked, label, timeout),
            Some(Asker::Elicit {
                peer,
                declared,
                runtime,
            }) => elicit(&peer, declared, &runtime, label, timeout),
            None => {
                let declared = self
                    .peer
                    .peer_info()
                    .is_some_and(|info| info.capabilities.elicitation.is_some());
                elicit(&self.peer, declared, &self.runtime, label, timeout)
            }
        }
    }

    fn ask_secret(&self, request: &SecretRequest, timeout: Duration) -> SecretAnswer {
        match ON_THREAD.with(|t| t.borrow().clone()) {
            Some(Asker::Elicit { peer, runtime, .. }) => by_url(&peer, &runtime, request, timeout),
            None => by_url(&self.peer, &self.runtime, request, timeout),
            Some(Asker::Inputs(_)) => SecretAnswer::Unavailable(
                "a 2026-07-28 request cannot open a page for the person; configure the secret \
                 (file, environment or keyring), or call over a 2025-11-25 session"
                    .to_string(),
            ),
            Some(Asker::Task { .. }) => SecretAnswer::Unavailable(
                "a call running as a task cannot open a page for the person; call type_secret \
                 without a task"
                    .to_string(),
            ),
        }
    }
}

/// Asks the person for a secret on deskpilot's own page, which the client opens for them
/// (URL-mode elicitation, 2025-11-25): the client's `accept` means the person agreed to
/// open it; the value arrives from their browser, and `notifications/elicitation/complete`
/// tells the client the page is done. The value never crosses the MCP channel.
fn by_url(
    peer: &Peer<RoleServer>,
    runtime: &Handle,
    request: &SecretRequest,
    timeout: Duration,
) -> SecretAnswer {
    let declared = peer.peer_info().is_some_and(|info| {
        info.capabilities
            .elicitation
            .as_ref()
            .is_some_and(|e| e.url.is_some())
    });
    if !declared {
        return SecretAnswer::Unavailable(
            "the client cannot open a page for the person (it did not declare URL-mode \
             elicitation), and a password is never asked for through a form"
                .to_string(),
        );
    }
    let page =
        match deskpilot_picker::secret_page::SecretPage::open(&request.name, &request.purpose) {
            Ok(p) => p,
            Err(e) => {
                return SecretAnswer::Unavailable(format!("the page could not be opened: {e}"));
            }
        };
    static ASKED: AtomicU64 = AtomicU64::new(0);
    let id = format!(
        "deskpilot-secret-{}-{}",
        std::process::id(),
        ASKED.fetch_add(1, Ordering::Relaxed) + 1
    );
    let params = ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: format!(
            "deskpilot needs the secret {} to type it into {}. Open the page and enter it there; \
             the agent never sees it.",
            request.name, request.purpose
        ),
        url: page.url(),
        elicitation_id: id.clone(),
    };
    let deadline = Instant::now() + timeout;
    let mut options = PeerRequestOptions::no_options();
    options.timeout = Some(timeout);
    let asking = peer.clone();
    let answer = runtime.block_on(async move {
        let pending = asking
            .send_request_with_option(
                ServerRequest::ElicitRequest(ElicitRequest::new(params)),
                options,
            )
            .await
            .map_err(|e| format!("the question could not be sent: {e}"))?;
        pending
            .await_response()
            .await
            .map_err(|e| format!("no answer within {} s ({e})", timeout.as_secs()))
    });
    let action = match answer {
        Ok(ClientResult::ElicitResult(r)) => r.action,
        Ok(other) => return SecretAnswer::Declined(format!("unexpected answer {other:?}")),
        Err(why) => return SecretAnswer::Declined(why),
    };
    if action != ElicitationAction::Accept {
        return SecretAnswer::Declined(match verdict(action) {
            Approval::Declined(why) => why,
            _ => "not accepted".to_string(),
        });
    }
    let given = page.wait(deadline, &|| false);
    let done = peer.clone();
    let note = ServerNotification::CustomNotification(CustomNotification::new(
        "notifications/elicitation/complete",
        Some(serde_json::json!({ "elicitationId": id })),
    ));
    runtime.block_on(async move {
        if let Err(e) = done.send_notification(note).await {
            tracing::debug!("elicitation/complete not sent: {e}");
        }
    });
    match given {
        Ok(g) => SecretAnswer::Given {
            value: g.value,
            keep: g.keep,
        },
        Err(why) => SecretAnswer::Declined(why),
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The question for the action `label`: a form with nothing to fill, accept or decline.
fn question(label: &str) -> ElicitRequestParams {
    let mut schema = ElicitationSchema::new(BTreeMap::new());
    schema.title = Some("Allow this desktop action?".into());
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!(
            "deskpilot wants to {label}. Accept to allow this one action; decline to refuse it."
        ),
        requested_schema: schema,
    }
}

/// What an elicitation answer means for the action.
fn verdict(action: ElicitationAction) -> Approval {
    match action {
        ElicitationAction::Accept => Approval::Accepted,
        ElicitationAction::Decline => Approval::Declined("declined".to_string()),
        ElicitationAction::Cancel => Approval::Declined("cancelled".to_string()),
        #[allow(unreachable_patterns, reason = "the enum may grow")]
        other => Approval::Declined(format!("{other:?}")),
    }
}

/// The action of an elicitation answer given as JSON (an `inputResponses` value).
fn action_of(value: &Value) -> Option<ElicitationAction> {
    serde_json::from_value::<ElicitResult>(value.clone())
        .ok()
        .map(|r| r.action)
}

/// Asks through `peer` with `elicitation/create` and waits up to `timeout` (on a blocking
/// thread).
fn elicit(
    peer: &Peer<RoleServer>,
    declared: bool,
    runtime: &Handle,
    label: &str,
    timeout: Duration,
) -> Approval {
    if !declared {
        return Approval::Unavailable(NO_ELICITATION.to_string());
    }
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(question(label)));
    let mut options = PeerRequestOptions::no_options();
    options.timeout = Some(timeout);
    let peer = peer.clone();
    let answer = runtime.block_on(async move {
        // A request that cannot even be sent (a closed client) means nobody can be asked; one
        // sent but not answered in time is a "no".
        let pending = match peer.send_request_with_option(request, options).await {
            Ok(p) => p,
            Err(e) => {
                return Err(Approval::Unavailable(format!(
                    "the question could not be sent: {e}"
                )));
            }
        };
        pending.await_response().await.map_err(|e| {
            Approval::Declined(format!("no answer within {} s ({e})", timeout.as_secs()))
        })
    });
    match answer {
        Err(outcome) => outcome,
        Ok(ClientResult::ElicitResult(r)) => verdict(r.action),
        Ok(other) => Approval::Declined(format!("unexpected answer {other:?}")),
    }
}

/// Asks through the task's input requests and waits up to `timeout` for `tasks/update` (on a
/// blocking thread).
fn in_task(
    task: &TaskContext,
    declared: bool,
    runtime: &Handle,
    asked: &AtomicU32,
    label: &str,
    timeout: Duration,
) -> Approval {
    if !declared {
        return Approval::Unavailable(NO_ELICITATION.to_string());
    }
    let key = format!("approval-{}", asked.fetch_add(1, Ordering::Relaxed) + 1);
    let request = InputRequest::Elicitation(ElicitRequest::new(question(label)));
    let task = task.clone();
    let answer = runtime.block_on(async move {
        tokio::time::timeout(timeout, task.request_input(key, request)).await
    });
    match answer {
        Err(_) => Approval::Declined(format!("no answer within {} s", timeout.as_secs())),
        Ok(Err(TaskExit::Cancelled)) => Approval::Declined("the task was cancelled".to_string()),
        Ok(Err(TaskExit::Error(e))) => Approval::Unavailable(e.message.to_string()),
        Ok(Ok(value)) => match action_of(&value) {
            Some(action) => verdict(action),
            None => Approval::Declined(format!("not an elicitation answer: {value}")),
        },
    }
}

/// What one call of a 2026-07-28 client knows about its approvals.
#[derive(Debug, Default)]
pub(crate) struct Inputs {
    /// Whether the request declared elicitation.
    declared: bool,
    /// The tool and its arguments: a question is answered only for the call that asked it.
    binding: String,
    /// The round the answers came from (0: the first call).
    round: u32,
    /// Labels the human accepted in the previous round, each good for one gate.
    granted: Vec<String>,
    /// Labels the human declined or cancelled, with the answer.
    declined: Vec<(String, String)>,
    /// Whether an accepted action went through in this call.
    acted: bool,
    /// Questions this call could not ask: the next round's.
    asked: Vec<String>,
}

impl Inputs {
    /// The approvals of `request`: none on a first call, the previous round's answers on a
    /// retry that brings a live `requestState`.
    fn from_retry(request: &CallToolRequestParams, declared: bool) -> Result<Inputs, ErrorData> {
        let binding = binding(request);
        let mut inputs = Inputs {
            declared,
            ..Inputs::default()
        };
        if let Some(state) = request.request_state.as_deref() {
            match waiting().redeem(state) {
                None => tracing::debug!(
                    "a requestState that is unknown, expired or spent: its questions are asked again"
                ),
                Some(asked) if asked.binding != binding => {
                    return Err(ErrorData::invalid_params(
                        "requestState belongs to another tools/call (another tool or other \
                         arguments): call again without it",
                        None,
                    ));
                }
                Some(asked) => {
                    inputs.round = asked.round;
                    let responses = request.input_responses.as_ref();
                    for (key, label) in asked.asks {
                        match responses.and_then(|r| r.get(&key)).and_then(action_of) {
                            Some(ElicitationAction::Accept) => inputs.granted.push(label),
                            Some(other) => {
                                if let Approval::Declined(answer) = verdict(other) {
                                    inputs.declined.push((label, answer));
                                }
                            }
                            // Not answered: asked again when the action comes to it.
                            None => {}
                        }
                    }
                }
            }
        }
        inputs.binding = binding;
        Ok(inputs)
    }

    /// The gate's answer for `label`.
    fn approve(&mut self, label: &str) -> Approval {
        if !self.declared {
            return Approval::Unavailable(NO_ELICITATION.to_string());
        }
        if let Some(i) = self.granted.iter().position(|l| l == label) {
            self.granted.remove(i);
            self.acted = true;
            return Approval::Accepted;
        }
        if let Some((_, answer)) = self.declined.iter().find(|(l, _)| l == label) {
            return Approval::Declined(answer.clone());
        }
        if self.acted {
            return Approval::Unavailable(
                "this call already ran one approved action; over a 2026-07-28 request a second \
                 approval would run the first action again, so make the second action its own call"
                    .to_string(),
            );
        }
        if !self.asked.iter().any(|l| l == label) {
            self.asked.push(label.to_string());
        }
        Approval::Unavailable(ASKING.to_string())
    }

    /// The input-required round for the questions this call could not ask, if any.
    fn next_round(&mut self) -> Option<InputRequiredResult> {
        if self.asked.is_empty() {
            return None;
        }
        let round = self.round + 1;
        let asks: Vec<(String, String)> = self
            .asked
            .drain(..)
            .enumerate()
            .map(|(i, label)| (format!("approval-{round}-{}", i + 1), label))
            .collect();
        let requests: InputRequests = asks
            .iter()
            .map(|(key, label)| {
                (
                    key.clone(),
                    InputRequest::Elicitation(ElicitRequest::new(question(label))),
                )
            })
            .collect();
        let handle = waiting().keep(Asked {
            binding: self.binding.clone(),
            round,
            asks,
            at: Instant::now(),
        });
        Some(InputRequiredResult::new(Some(requests), Some(handle)))
    }
}

/// `tools/call`'s tool and arguments as one string, object keys sorted.
fn binding(request: &CallToolRequestParams) -> String {
    fn canonical(v: &Value, out: &mut String) {
        match v {
            Value::Object(map) => {
                let sorted: BTreeMap<&String, &Value> = map.iter().collect();
                out.push('{');
                for (i, (k, v)) in sorted.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::from(k.as_str()).to_string());
                    out.push(':');
                    canonical(v, out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    canonical(v, out);
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = format!("{}\n", request.name);
    canonical(
        &Value::Object(request.arguments.clone().unwrap_or_default()),
        &mut out,
    );
    out
}

/// Questions a 2026-07-28 round asked, waiting for the client to come back with the answers.
struct Asked {
    binding: String,
    round: u32,
    /// Input request key and the label it asks about.
    asks: Vec<(String, String)>,
    at: Instant,
}

#[derive(Default)]
struct Waiting {
    by_handle: Mutex<HashMap<String, Asked>>,
}

fn waiting() -> &'static Waiting {
    static WAITING: OnceLock<Waiting> = OnceLock::new();
    WAITING.get_or_init(Waiting::default)
}

impl Waiting {
    /// Keeps `asked` and returns the handle the client echoes back.
    fn keep(&self, asked: Asked) -> String {
        let handle = fresh_handle();
        let mut map = lock(&self.by_handle);
        map.retain(|_, a| a.at.elapsed() < ANSWER_WITHIN);
        while map.len() >= MAX_WAITING {
            let Some(oldest) = map.iter().min_by_key(|(_, a)| a.at).map(|(h, _)| h.clone()) else {
                break;
            };
            map.remove(&oldest);
        }
        map.insert(handle.clone(), asked);
        handle
    }

    /// The questions behind `handle`, once: none when unknown, expired or already redeemed.
    fn redeem(&self, handle: &str) -> Option<Asked> {
        lock(&self.by_handle)
            .remove(handle)
            .filter(|a| a.at.elapsed() < ANSWER_WITHIN)
    }
}

/// 128 unpredictable bits as hex: SipHash under the process's random keys, over a counter and
/// the clock (the standard library's keyed hasher, as the shell's frame nonces use).
fn fresh_handle() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let half = |salt: u8| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u8(salt);
        h.write_u64(n);
        h.write_u128(now);
        h.write_u32(std::process::id());
        h.finish()
    };
    format!("dpa1-{:016x}{:016x}", half(1), half(2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kit::tasks::testing::{TestClient, connect, params, poll, start_task};
    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::FakeWindow;
    use deskpilot_engine::{Engine, EngineConfig};
    use deskpilot_types::Rect;
    use rmcp::model::{GetTaskParams, TaskPayload, TaskStatus, UpdateTaskParams};
    use serde_json::json;

    /// A desktop with one window under (50, 60), and an engine over it that wants approvals.
    fn approving() -> (FakeDesktop, Arc<Engine>) {
        let fake = FakeDesktop::new(400, 300);
        fake.add_window(FakeWindow::new("Editor", Rect::new(0, 0, 400, 300)));
        let mut config = EngineConfig::default();
        config.safety.require_approval = true;
        config.safety.action_delay = Duration::ZERO;
        let engine = Arc::new(Engine::new(fake.desktop(), config));
        (fake, engine)
    }

    fn human(answer: Option<ElicitationAction>, tasks: bool) -> TestClient {
        TestClient {
            tasks,
            answer,
            ..TestClient::default()
        }
    }

    fn click() -> Value {
        json!({ "x": 50, "y": 60, "coordinates": "physical" })
    }

    fn code(r: &rmcp::model::CallToolResult) -> String {
        r.structured_content
            .as_ref()
            .and_then(|s| s["error"]["code"].as_str())
            .unwrap_or("")
            .to_string()
    }

    /// 2026-07-28: the click's question comes back as an input request; the human's accept on
    /// the retry clicks, a decline refuses and nothing reaches the desktop. 2025-11-25 asks the
    /// same question by elicitation.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_revision_asks_the_human_and_only_an_accept_acts() {
        for modern in [true, false] {
            for (answer, acts) in [
                (ElicitationAction::Accept, true),
                (ElicitationAction::Decline, false),
            ] {
                let (fake, engine) = approving();
                let client = connect(engine, human(Some(answer), false), modern).await;
                let r = client.call_tool(params("click", click())).await.unwrap();
                let asked = client.service().asked.lock().unwrap().clone();
                assert_eq!(asked.len(), 1, "{asked:?}");
                assert!(asked[0].contains("click at (50, 60)"), "{asked:?}");
                if acts {
                    assert_ne!(r.is_error, Some(true), "{r:?}");
                    assert!(!fake.pointer_events().is_empty());
                } else {
                    assert_eq!(code(&r), "APPROVAL_DENIED", "{r:?}");
                    assert!(fake.pointer_events().is_empty());
                }
                client.cancel().await.ok();
            }
        }
    }

    /// The round itself: an input request and a handle; the handle does not answer a call with
    /// other arguments (-32602), and a client without elicitation is refused, not asked.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_round_is_bound_to_its_call_and_needs_elicitation() {
        let (fake, engine) = approving();
        let client = connect(
            engine.clone(),
            human(Some(ElicitationAction::Accept), false),
            true,
        )
        .await;
        let round = match client
            .call_tool_once(params("click", click()))
            .await
            .unwrap()
        {
            CallToolResponse::InputRequired(round) => round,
            other => panic!("no input-required round: {other:?}"),
        };
        let requests = round.input_requests.clone().unwrap();
        let key = requests.keys().next().unwrap().clone();
        let moved = params(
            "click",
            json!({ "x": 51, "y": 60, "coordinates": "physical" }),
        )
        .with_request_state(round.request_state.clone().unwrap())
        .with_input_responses([(key, json!({ "action": "accept" }))].into());
        let e = client.call_tool_once(moved).await.unwrap_err();
        assert!(e.to_string().contains("another tools/call"), "{e}");
        assert!(fake.pointer_events().is_empty());
        client.cancel().await.ok();

        let deaf = connect(engine, human(None, false), true).await;
        let r = deaf.call_tool(params("click", click())).await.unwrap();
        assert_eq!(code(&r), "APPROVAL_UNAVAILABLE", "{r:?}");
        assert!(fake.pointer_events().is_empty());
        deaf.cancel().await.ok();
    }

    /// A task asks through its input requests: `tasks/get` shows the question, `tasks/update`
    /// answers it, and only an accept runs the command.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_task_asks_through_its_input_requests() {
        for (action, runs) in [("accept", true), ("decline", false)] {
            let (_fake, engine) = approving();
            let client = connect(engine, human(Some(ElicitationAction::Accept), true), true).await;
            let id = start_task(
                &client,
                "shell_exec",
                json!({ "command": "echo approved-in-task", "session": "approval" }),
            )
            .await;
            let waiting = poll(&client, &id, Duration::from_secs(10), |t| {
                t.task.status() == TaskStatus::InputRequired
            })
            .await;
            let TaskPayload::InputRequired { input_requests } = &waiting.task.payload else {
                unreachable!()
            };
            let (key, question) = input_requests.iter().next().unwrap();
            let q = serde_json::to_value(question).unwrap();
            assert!(
                q["params"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("run shell command"),
                "{q}"
            );
            let answer = [(key.clone(), json!({ "action": action }))].into();
            client
                .update_task(UpdateTaskParams::new(id.clone(), answer))
                .await
                .unwrap();
            let done = poll(&client, &id, Duration::from_secs(20), |t| {
                t.task.status().is_terminal()
            })
            .await;
            let TaskPayload::Completed { result } = &done.task.payload else {
                panic!("{:?}", done.task)
            };
            let text = result["content"][0]["text"].as_str().unwrap_or_default();
            if runs {
                assert!(text.contains("approved-in-task"), "{text}");
            } else {
                assert_eq!(
                    result["structuredContent"]["error"]["code"],
                    "APPROVAL_DENIED"
                );
            }
            assert!(client.service().asked.lock().unwrap().is_empty());
            let again = client.get_task(GetTaskParams::new(id)).await.unwrap();
            assert!(again.task.status().is_terminal());
            client.cancel().await.ok();
        }
    }

    fn call(args: Value) -> CallToolRequestParams {
        let Value::Object(map) = args else {
            unreachable!()
        };
        CallToolRequestParams::new("shell_exec").with_arguments(map)
    }

    fn answer(action: &str) -> Value {
        json!({ "action": action })
    }

    /// A first call asks; the retry with an accept lets exactly that label through once.
    #[test]
    fn a_round_asks_and_an_accept_lets_the_same_action_through_once() {
        let request = call(json!({ "command": "touch /tmp/x" }));
        let mut first = Inputs::from_retry(&request, true).unwrap();
        assert_eq!(
            first.approve("run shell command \"touch /tmp/x\""),
            Approval::Unavailable(ASKING.into())
        );
        let round = first.next_round().expect("a round with the question");
        let requests = round.input_requests.expect("input requests");
        assert_eq!(requests.len(), 1);
        let (key, question) = requests.iter().next().unwrap();
        let q = serde_json::to_value(question).unwrap();
        assert_eq!(q["method"], "elicitation/create");
        assert!(
            q["params"]["message"]
                .as_str()
                .unwrap()
                .contains("run shell command \"touch /tmp/x\""),
            "{q}"
        );
        let state = round.request_state.expect("a handle");

        let retry = request
            .clone()
            .with_request_state(state.clone())
            .with_input_responses([(key.clone(), answer("accept"))].into());
        let mut second = Inputs::from_retry(&retry, true).unwrap();
        assert_eq!(
            second.approve("run shell command \"touch /tmp/x\""),
            Approval::Accepted
        );
        // A second action in the same call is refused rather than asked: asking would run the
        // first one again.
        assert!(matches!(
            second.approve("run shell command \"rm /tmp/x\""),
            Approval::Unavailable(_)
        ));
        assert!(second.next_round().is_none());

        // The handle is spent: the same retry again asks anew instead of running twice.
        let mut replay = Inputs::from_retry(&retry, true).unwrap();
        assert_eq!(
            replay.approve("run shell command \"touch /tmp/x\""),
            Approval::Unavailable(ASKING.into())
        );
    }

    #[test]
    fn a_decline_or_cancel_refuses_and_a_missing_answer_asks_again() {
        let request = call(json!({ "command": "a" }));
        for (action, expect) in [
            ("decline", Some("declined")),
            ("cancel", Some("cancelled")),
            ("bogus", None),
        ] {
            let mut first = Inputs::from_retry(&request, true).unwrap();
            first.approve("act");
            let round = first.next_round().unwrap();
            let key = round.input_requests.unwrap().keys().next().unwrap().clone();
            let retry = request
                .clone()
                .with_request_state(round.request_state.unwrap())
                .with_input_responses([(key, answer(action))].into());
            let mut second = Inputs::from_retry(&retry, true).unwrap();
            match expect {
                Some(text) => assert_eq!(second.approve("act"), Approval::Declined(text.into())),
                None => {
                    assert_eq!(second.approve("act"), Approval::Unavailable(ASKING.into()));
                    let again = second.next_round().unwrap();
                    assert!(
                        again
                            .input_requests
                            .unwrap()
                            .keys()
                            .all(|k| k.starts_with("approval-2-")),
                        "the second round's keys are its own"
                    );
                }
            }
        }
    }

    /// A handle answers only the call that asked: other arguments are refused, a made-up handle
    /// grants nothing, and a label the human was not asked about is asked.
    #[test]
    fn answers_count_only_for_the_question_and_call_they_belong_to() {
        let request = call(json!({ "command": "a", "session": "main" }));
        let mut first = Inputs::from_retry(&request, true).unwrap();
        first.approve("act on A");
        let round = first.next_round().unwrap();
        let key = round.input_requests.unwrap().keys().next().unwrap().clone();
        let state = round.request_state.unwrap();
        let accept = [(key.clone(), answer("accept"))];

        let other = call(json!({ "command": "b", "session": "main" }))
            .with_request_state(state.clone())
            .with_input_responses(accept.clone().into());
        let e = Inputs::from_retry(&other, true).unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);

        // The refused handle was spent too; a forged one is simply unknown.
        let forged = request
            .clone()
            .with_request_state(format!("{state}0"))
            .with_input_responses(accept.clone().into());
        let mut f = Inputs::from_retry(&forged, true).unwrap();
        assert_eq!(f.approve("act on A"), Approval::Unavailable(ASKING.into()));

        // Same call, keys in another order: still the same call.
        let mut first = Inputs::from_retry(&request, true).unwrap();
        first.approve("act on A");
        let round = first.next_round().unwrap();
        let key = round.input_requests.unwrap().keys().next().unwrap().clone();
        let reordered = call(json!({ "session": "main", "command": "a" }))
            .with_request_state(round.request_state.unwrap())
            .with_input_responses([(key, answer("accept"))].into());
        let mut second = Inputs::from_retry(&reordered, true).unwrap();
        assert_eq!(
            second.approve("act on B"),
            Approval::Unavailable(ASKING.into()),
            "an accept for A is no accept for B"
        );
        assert_eq!(second.approve("act on A"), Approval::Accepted);
    }

    #[test]
    fn without_elicitation_nobody_is_asked() {
        let request = call(json!({}));
        let mut inputs = Inputs::from_retry(&request, false).unwrap();
        assert_eq!(
            inputs.approve("act"),
            Approval::Unavailable(NO_ELICITATION.into())
        );
        assert!(inputs.next_round().is_none());
    }

    #[test]
    fn an_expired_question_is_not_answered() {
        let handle = waiting().keep(Asked {
            binding: "x".into(),
            round: 1,
            asks: Vec::new(),
            at: Instant::now() - ANSWER_WITHIN - Duration::from_secs(1),
        });
        assert!(waiting().redeem(&handle).is_none());
    }

    #[test]
    fn handles_do_not_repeat() {
        let a = fresh_handle();
        let b = fresh_handle();
        assert_ne!(a, b);
        assert_eq!(a.len(), "dpa1-".len() + 32);
    }

    /// The asker travels from the call's task to the thread that runs its blocking work.
    #[tokio::test]
    async fn the_asker_reaches_the_blocking_thread() {
        let inputs = Arc::new(Mutex::new(Inputs {
            declared: true,
            ..Inputs::default()
        }));
        let call = Call {
            asker: Some(Asker::Inputs(inputs.clone())),
        };
        let seen = call
            .scope(async {
                let asker = current();
                tokio::task::spawn_blocking(move || {
                    within(asker, || ON_THREAD.with(|t| t.borrow().is_some()))
                })
                .await
                .unwrap()
            })
            .await;
        assert!(seen);
        assert!(ON_THREAD.with(|t| t.borrow().is_none()));
        assert!(current().is_none(), "outside the call there is none");
    }
}
