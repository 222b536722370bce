//! Input-required results (SEP-2322, the 2026-07-28 revision's way for a server to ask the
//! client something): a call answers with the requests it needs — elicitation, sampling, roots —
//! and the client calls again with `inputResponses` and the `requestState` it was given.
//!
//! The fixtures ask once, several things at once, over several rounds, only what the client
//! declared it can answer; a tool that needs a capability the request did not declare is refused
//! with -32021. `requestState` is sealed (HMAC, rmcp's [`RequestStateCodec`], a key drawn when
//! the process starts) and bound to the tool that sealed it, so nothing is kept between rounds: a
//! state that was changed, came from another tool or expired is `invalid_params`. An answer that is not an object counts as missing and is asked again.

#![expect(
    deprecated,
    reason = "rmcp marks sampling and roots deprecated (SEP-2577), yet SEP-2322 asks through them"
)]

use std::sync::OnceLock;
use std::time::Duration;

use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::model::{
    CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock, CreateMessageRequest,
    CreateMessageRequestParams, ElicitRequest, ElicitRequestParams, InputRequest, InputRequests,
    InputRequiredResult, JsonObject, ListRootsRequest, RequestStateCodec, SamplingMessage,
    SealOptions,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, tool, tool_router};
use serde_json::{Value, json};

use super::Conformance;
use crate::kit::Parameters;
use crate::kit::context::NoArgs;
use crate::kit::server::Server;

/// How long a sealed state may be echoed back.
const STATE_TTL: Duration = Duration::from_secs(600);

/// The codec, keyed once per process from the OS's random source: a state outlives a request
/// and a session, not the server.
fn codec() -> Result<&'static RequestStateCodec, ErrorData> {
    static CODEC: OnceLock<Option<RequestStateCodec>> = OnceLock::new();
    CODEC
        .get_or_init(|| {
            let mut key = [0u8; RequestStateCodec::MIN_KEY_LENGTH];
            getrandom::fill(&mut key).ok()?;
            RequestStateCodec::try_new(key.to_vec()).ok()
        })
        .as_ref()
        .ok_or_else(|| ErrorData::internal_error("no random key for sealing requestState", None))
}

/// `value` sealed for the tool `tool`: the `requestState` to hand out.
fn seal(tool: &str, value: &Value) -> Result<String, ErrorData> {
    Ok(codec()?.seal_with(
        value.to_string().as_bytes(),
        &SealOptions::new()
            .associated_data(tool.as_bytes())
            .ttl(STATE_TTL),
    ))
}

/// What `state` sealed, when it is a state this server sealed for `tool`, unchanged and not
/// expired.
fn open(tool: &str, state: &str) -> Result<Value, ErrorData> {
    codec()?
        .open_with(state, tool.as_bytes())
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!("{tool}: requestState failed its integrity check (changed, from another call, or expired); call again without it"),
                None,
            )
        })
}

/// An elicitation form asking for one string `field`.
pub(super) fn form(message: &str, field: &str, description: &str) -> InputRequest {
    form_of(
        message,
        json!({ field: { "type": "string", "description": description } }),
        &[field],
    )
}

/// An elicitation form with `properties`, of which `required` must be given.
pub(super) fn form_of(message: &str, properties: Value, required: &[&str]) -> InputRequest {
    let schema = json!({ "type": "object", "properties": properties, "required": required });
    InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.into(),
            requested_schema: serde_json::from_value(schema)
                .unwrap_or_else(|e| unreachable!("a flat form of primitives parses: {e}")),
        },
    ))
}

/// A request for the client's model to answer `prompt`.
fn sampling(prompt: &str) -> InputRequest {
    InputRequest::CreateMessage(CreateMessageRequest::new(CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(prompt)],
        100,
    )))
}

/// A request for the client's roots.
fn roots() -> InputRequest {
    InputRequest::ListRoots(ListRootsRequest::default())
}

/// An input-required result asking `request` under `key`.
pub(super) fn ask_for(key: &str, request: InputRequest) -> InputRequiredResult {
    InputRequiredResult::from_input_requests(InputRequests::from([(key.to_string(), request)]))
}

/// The client's answer under `key`, when it is an object (an elicitation, sampling or roots
/// result); anything else counts as missing.
pub(super) fn answer<'a>(
    responses: Option<&'a rmcp::model::InputResponses>,
    key: &str,
) -> Option<&'a JsonObject> {
    responses?.get(key)?.as_object()
}

/// The string `name` of an answer's `content` (an elicitation's form, a sampling's text).
pub(super) fn field<'a>(answer: &'a JsonObject, name: &str) -> Option<&'a str> {
    answer.get("content")?.get(name)?.as_str()
}

/// The URIs of a roots answer.
fn root_uris(answer: &JsonObject) -> Vec<&str> {
    answer
        .get("roots")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("uri").and_then(Value::as_str))
        .collect()
}

fn done(text: impl Into<String>) -> Result<CallToolResponse, ErrorData> {
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
}

/// The user-name question of several fixtures.
fn name_form() -> InputRequest {
    form("What is your name?", "name", "Your name.")
}

#[tool_router(router = mrtr_router, vis = "pub(crate)")]
impl Server<Conformance> {
    /// Greets the user by the name it asks for first.
    #[tool(
        name = "test_input_required_result_elicitation",
        annotations(read_only_hint = true)
    )]
    pub async fn test_input_required_result_elicitation(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        match answer(responses.as_ref(), "user_name") {
            Some(a) => done(format!("Hello, {}!", field(a, "name").unwrap_or("friend"))),
            None => Ok(ask_for("user_name", name_form()).into()),
        }
    }

    /// Asks the client's model for the capital of France and returns its answer.
    #[tool(
        name = "test_input_required_result_sampling",
        annotations(read_only_hint = true)
    )]
    pub async fn test_input_required_result_sampling(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        match answer(responses.as_ref(), "capital_question") {
            Some(a) => done(format!(
                "Sampling response: {}",
                field(a, "text").unwrap_or("(no text)")
            )),
            None => Ok(ask_for(
                "capital_question",
                sampling("What is the capital of France?"),
            )
            .into()),
        }
    }

    /// Lists the client's roots, asked for first.
    #[tool(
        name = "test_input_required_result_list_roots",
        annotations(read_only_hint = true)
    )]
    pub async fn test_input_required_result_list_roots(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        match answer(responses.as_ref(), "client_roots") {
            Some(a) => done(format!("Client roots: [{}]", root_uris(a).join(", "))),
            None => Ok(ask_for("client_roots", roots()).into()),
        }
    }

    /// Asks for a confirmation with a sealed state, and goes on only with that state intact.
    #[tool(
        name = "test_input_required_result_request_state",
        annotations(read_only_hint = true)
    )]
    pub async fn test_input_required_result_request_state(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        confirm_with_state("test_input_required_result_request_state", state, responses)
    }

    /// The same as test_input_required_result_request_state; the suite sends it a tampered
    /// state, which is refused.
    #[tool(
        name = "test_input_required_result_tampered_state",
        annotations(read_only_hint = true)
    )]
    pub async fn test_input_required_result_tampered_state(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        confirm_with_state(
            "test_input_required_result_tampered_state",
            state,
            responses,
        )
    }

    /// Asks for a name, a greeting from the client's model and the client's roots in one round.
    #[tool(
        name = "test_input_required_result_multiple_inputs",
        annotations(read_only_hint = true)
    )]
    pub async fn test_input_required_result_multiple_inputs(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        const TOOL: &str = "test_input_required_result_multiple_inputs";
        let sealed = state.as_deref().map(|s| open(TOOL, s)).transpose()?;
        let r = responses.as_ref();
        if let (Some(_), Some(name), Some(greeting), Some(roots)) = (
            sealed,
            answer(r, "user_name"),
            answer(r, "greeting"),
            answer(r, "client_roots"),
        ) {
            return done(format!(
                "All inputs received: name {}, greeting {}, roots [{}]",
                field(name, "name").unwrap_or("(none)"),
                field(greeting, "text").unwrap_or("(none)"),
                root_uris(roots).join(", ")
            ));
        }
        let requests = InputRequests::from([
            ("user_name".to_string(), name_form()),
            ("greeting".to_string(), sampling("Generate a greeting")),
            ("client_roots".to_string(), roots()),
        ]);
        Ok(InputRequiredResult::new(
            Some(requests),
            Some(seal(TOOL, &json!({ "stage": "gather" }))?),
        )
        .into())
    }

    /// Asks for a name, then a favourite colour, in two rounds the sealed state counts.
    #[tool(
        name = "test_input_required_result_multi_round",
        annotations(read_only_hint = true)
    )]
    pub async fn test_input_required_result_multi_round(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        const TOOL: &str = "test_input_required_result_multi_round";
        let step1 = || form("Step 1: What is your name?", "name", "Your name.");
        let step2 = || form("Step 2: What is your favorite color?", "color", "A colour.");
        let ask = |key: &str, request: InputRequest, next: Value| {
            Ok::<CallToolResponse, ErrorData>(
                InputRequiredResult::new(
                    Some(InputRequests::from([(key.to_string(), request)])),
                    Some(seal(TOOL, &next)?),
                )
                .into(),
            )
        };
        let Some(state) = state else {
            return ask("step1", step1(), json!({ "round": 1 }));
        };
        let sealed = open(TOOL, &state)?;
        let r = responses.as_ref();
        match sealed.get("name").and_then(Value::as_str) {
            // Round 1: the name, then the colour; a missing answer is asked again.
            None => match answer(r, "step1").and_then(|a| field(a, "name")) {
                Some(name) => ask("step2", step2(), json!({ "round": 2, "name": name })),
                None => ask("step1", step1(), sealed.clone()),
            },
            Some(name) => match answer(r, "step2").and_then(|a| field(a, "color")) {
                Some(color) => done(format!("Multi-round flow complete: {name} likes {color}")),
                None => ask("step2", step2(), sealed.clone()),
            },
        }
    }

    /// Asks only what the request's client capabilities say the client can answer.
    #[tool(
        name = "test_input_required_result_capabilities",
        annotations(read_only_hint = true)
    )]
    pub async fn test_input_required_result_capabilities(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(given) = responses.filter(|r| !r.is_empty()) {
            let keys: Vec<&str> = given.keys().map(String::as_str).collect();
            return done(format!(
                "Capability-aware flow complete: {}",
                keys.join(", ")
            ));
        }
        let declared = context.client_capabilities().unwrap_or_default();
        let mut requests = InputRequests::new();
        if declared.elicitation.is_some() {
            requests.insert("user_name".into(), name_form());
        }
        let (sampling_declared, roots_declared) =
            (declared.sampling.is_some(), declared.roots.is_some());
        if sampling_declared {
            requests.insert("greeting".into(), sampling("Generate a greeting"));
        }
        if roots_declared {
            requests.insert("client_roots".into(), roots());
        }
        if requests.is_empty() {
            return done("The client declared nothing this tool could ask it.");
        }
        Ok(InputRequiredResult::from_input_requests(requests).into())
    }

    /// Asks the user for a value through the response itself, never as a request of its own
    /// on the response stream.
    #[tool(
        name = "test_streaming_elicitation",
        annotations(read_only_hint = true)
    )]
    pub async fn test_streaming_elicitation(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        InputResponses(responses): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        match answer(responses.as_ref(), "streaming_elicitation") {
            Some(a) => done(format!("Value: {}", field(a, "value").unwrap_or("(none)"))),
            None => Ok(ask_for(
                "streaming_elicitation",
                form("Provide a value", "value", "Any value."),
            )
            .into()),
        }
    }

    /// Needs the client's model: refused with -32021 unless the request declares sampling;
    /// then asks the model to say hello and returns what it said.
    #[tool(name = "test_missing_capability", annotations(read_only_hint = true))]
    pub async fn test_missing_capability(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        InputResponses(responses): InputResponses,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.sampling.is_some());
        if !declared {
            let needed = ClientCapabilities::builder().enable_sampling().build();
            return Err(ErrorData::missing_required_client_capability(needed));
        }
        match answer(responses.as_ref(), "hello") {
            Some(a) => done(format!(
                "The model said: {}",
                field(a, "text").unwrap_or("(nothing)")
            )),
            None => Ok(ask_for("hello", sampling("Say hello.")).into()),
        }
    }
}

/// The request-state fixtures: a confirmation asked with a sealed state; the call completes
/// once both come back, the state intact.
fn confirm_with_state(
    tool: &str,
    state: Option<String>,
    responses: Option<rmcp::model::InputResponses>,
) -> Result<CallToolResponse, ErrorData> {
    let confirm = || {
        form_of(
            "Please confirm",
            json!({ "ok": { "type": "boolean", "description": "Go on?" } }),
            &["ok"],
        )
    };
    let Some(state) = state else {
        return Ok(InputRequiredResult::new(
            Some(InputRequests::from([("confirm".to_string(), confirm())])),
            Some(seal(tool, &json!({ "stage": "confirm" }))?),
        )
        .into());
    };
    open(tool, &state)?;
    match answer(responses.as_ref(), "confirm") {
        Some(a) => {
            let ok = a
                .get("content")
                .and_then(|c| c.get("ok"))
                .and_then(Value::as_bool);
            done(format!(
                "Confirmed: state-ok ({})",
                match ok {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "no answer",
                }
            ))
        }
        None => Ok(InputRequiredResult::new(
            Some(InputRequests::from([("confirm".to_string(), confirm())])),
            Some(state),
        )
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sealed state opens for the tool that sealed it and for no other, and not once a
    /// character changed.
    #[test]
    fn sealed_state_opens_only_untouched_and_for_its_tool() {
        let state = seal("a", &json!({ "round": 1 })).unwrap();
        assert_eq!(open("a", &state).unwrap(), json!({ "round": 1 }));
        assert!(open("b", &state).is_err());
        let mut tampered = state.clone().into_bytes();
        let last = tampered.len() - 1;
        tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
        assert!(open("a", &String::from_utf8(tampered).unwrap()).is_err());
        assert!(open("a", "not a state").is_err());
    }

    /// An answer that is not an object is missing.
    #[test]
    fn only_object_answers_count() {
        let responses = rmcp::model::InputResponses::from([
            ("n".to_string(), json!(12345)),
            ("o".to_string(), json!({ "content": { "name": "Ada" } })),
        ]);
        assert!(answer(Some(&responses), "n").is_none());
        assert_eq!(
            field(answer(Some(&responses), "o").unwrap(), "name"),
            Some("Ada")
        );
    }
}
