//! The conformance suite's tool fixtures that answer at once: content of each kind (text, a
//! real PNG made by the engine's own encoder, a WAV, embedded resources), a tool error, progress
//! and log events, the JSON Schema 2020-12 tool and a parameter mirrored in an HTTP header
//! (`content_router`); and the tools that ask the client something back — sampling and
//! elicitation requests of a 2025-11-25 session (`client_router`).
//!
//! Log events are ordinary `tracing` events inside the call's span: the kit sends them to the
//! client as `notifications/message` at or above the level it asked for, or not at all.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use deskpilot_backend::{Frame, PixelFormat};
use deskpilot_engine::pipeline::{self, ImageFormat};
use deskpilot_engine::{Decorations, coords::ViewGeometry};
use deskpilot_types::Rect;
use rmcp::model::{
    CallToolResult, ClientResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitationSchema, JsonObject, ProgressNotificationParam, ResourceContents, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext};
use rmcp::{ErrorData, RoleServer, tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::Conformance;
use crate::kit::Parameters;
use crate::kit::context::NoArgs;
use crate::kit::server::{ProfileSpec, Server};

/// `test_sampling`'s argument.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SamplingArgs {
    /// The prompt sent to the client's model.
    pub prompt: String,
}

/// `test_elicitation`'s argument.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElicitationArgs {
    /// The message shown to the user.
    pub message: String,
}

/// `json_schema_2020_12_tool`'s arguments, as [`schema_2020_12`] declares them; the tool checks
/// what serde cannot (at least one of them; a street when there is an address).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaArgs {
    pub name: Option<String>,
    pub address: Option<Address>,
}

/// A postal address.
#[derive(Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Address {
    pub street: Option<String>,
    pub city: Option<String>,
}

/// `test_custom_header`'s argument: HTTP clients mirror it in the `Mcp-Param-Value` header
/// (SEP-2243), which the endpoint checks against the body.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HeaderArgs {
    /// Any text; echoed back.
    #[schemars(extend("x-mcp-header" = "Value"))]
    pub value: String,
}

/// The input schema of `json_schema_2020_12_tool`, with the 2020-12 keywords the suite looks
/// for: `$schema`, `$defs` with an `$anchor`, composition, conditionals and
/// `additionalProperties: false`. `tools/list` lists it as declared (kit::schema keeps a
/// schema with conditionals whole).
fn schema_2020_12() -> Arc<JsonObject> {
    let Value::Object(schema) = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "address",
                "type": "object",
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" }
                }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" }
        },
        "allOf": [{ "anyOf": [{ "required": ["name"] }, { "required": ["address"] }] }],
        "if": { "required": ["address"] },
        "then": { "properties": { "address": { "required": ["street"] } } },
        "else": { "required": ["name"] },
        "additionalProperties": false
    }) else {
        unreachable!("an object literal")
    };
    Arc::new(schema)
}

/// What [`schema_2020_12`] refuses beyond the fields' types, as an argument error.
fn check_2020_12(args: &SchemaArgs) -> Result<(), ErrorData> {
    let problem = match (&args.name, &args.address) {
        (_, Some(address)) if address.street.is_none() => {
            "address: a street is required when an address is given"
        }
        (None, None) => "name: required when no address is given",
        _ => return Ok(()),
    };
    Err(ErrorData::invalid_params(
        problem,
        Some(json!({ crate::kit::args::ARGUMENT_ERROR: problem })),
    ))
}

#[tool_router(router = content_router, vis = "pub(crate)")]
impl Server<Conformance> {
    /// Returns one fixed text.
    #[tool(name = "test_simple_text", annotations(read_only_hint = true))]
    pub async fn test_simple_text(&self, Parameters(_a): Parameters<NoArgs>) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(
            "This is a simple text response for testing.",
        )])
    }

    /// Returns a 2×2 red PNG.
    #[tool(name = "test_image_content", annotations(read_only_hint = true))]
    pub async fn test_image_content(&self, Parameters(_a): Parameters<NoArgs>) -> CallToolResult {
        match red_png() {
            Ok(png) => CallToolResult::success(vec![ContentBlock::image(png, "image/png")]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e)]),
        }
    }

    /// Returns a tenth of a second of silence as WAV.
    #[tool(name = "test_audio_content", annotations(read_only_hint = true))]
    pub async fn test_audio_content(&self, Parameters(_a): Parameters<NoArgs>) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::audio(
            base64::engine::general_purpose::STANDARD.encode(silent_wav(800)),
            "audio/wav",
        )])
    }

    /// Returns an embedded text resource.
    #[tool(name = "test_embedded_resource", annotations(read_only_hint = true))]
    pub async fn test_embedded_resource(
        &self,
        Parameters(_a): Parameters<NoArgs>,
    ) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::embedded_text(
            "test://embedded-resource",
            "This is an embedded resource content.",
        )])
    }

    /// Returns a text, an image and an embedded JSON resource.
    #[tool(
        name = "test_multiple_content_types",
        annotations(read_only_hint = true)
    )]
    pub async fn test_multiple_content_types(
        &self,
        Parameters(_a): Parameters<NoArgs>,
    ) -> CallToolResult {
        let png = match red_png() {
            Ok(png) => png,
            Err(e) => return CallToolResult::error(vec![ContentBlock::text(e)]),
        };
        CallToolResult::success(vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(png, "image/png"),
            ContentBlock::resource(ResourceContents::TextResourceContents {
                uri: "test://mixed-content-resource".into(),
                mime_type: Some("application/json".into()),
                text: json!({ "test": "data", "value": 123 }).to_string(),
                meta: None,
            }),
        ])
    }

    /// Always fails, as a tool error (`isError: true`).
    #[tool(name = "test_error_handling", annotations(read_only_hint = true))]
    pub async fn test_error_handling(&self, Parameters(_a): Parameters<NoArgs>) -> CallToolResult {
        CallToolResult::error(vec![ContentBlock::text(
            "This tool intentionally returns an error for testing",
        )])
    }

    /// Reports progress 0, 50 and 100 of 100, 50 ms apart, when the call carries a progress token.
    #[tool(name = "test_tool_with_progress", annotations(read_only_hint = true))]
    pub async fn test_tool_with_progress(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let token = context.meta.get_progress_token();
        for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
            if i > 0 {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if let Some(token) = &token {
                let note = ProgressNotificationParam::new(token.clone(), progress)
                    .with_total(100.0)
                    .with_message(format!("{progress} of 100"));
                if let Err(e) = context.peer.notify_progress(note).await {
                    return CallToolResult::error(vec![ContentBlock::text(format!(
                        "progress notification not sent: {e}"
                    ))]);
                }
            }
        }
        CallToolResult::success(vec![ContentBlock::text(format!(
            "Done; progress {}.",
            if token.is_some() {
                "reported"
            } else {
                "not asked for"
            }
        ))])
    }

    /// Logs three info events, 50 ms apart: started, processing, completed.
    #[tool(name = "test_tool_with_logging", annotations(read_only_hint = true))]
    pub async fn test_tool_with_logging(
        &self,
        Parameters(_a): Parameters<NoArgs>,
    ) -> CallToolResult {
        tracing::info!("Tool execution started");
        tokio::time::sleep(Duration::from_millis(50)).await;
        tracing::info!("Tool processing data");
        tokio::time::sleep(Duration::from_millis(50)).await;
        tracing::info!("Tool execution completed");
        CallToolResult::success(vec![ContentBlock::text("Logged three events.")])
    }

    /// Logs one info event; a 2026-07-28 client hears it only when its request names a log
    /// level.
    #[tool(name = "test_logging_tool", annotations(read_only_hint = true))]
    pub async fn test_logging_tool(&self, Parameters(_a): Parameters<NoArgs>) -> CallToolResult {
        tracing::info!("test_logging_tool ran");
        CallToolResult::success(vec![ContentBlock::text("Logged one event.")])
    }

    /// Greets by name or by address: a name, an address with a street, or both.
    #[tool(
        name = "json_schema_2020_12_tool",
        input_schema = schema_2020_12(),
        annotations(read_only_hint = true)
    )]
    pub async fn json_schema_2020_12_tool(
        &self,
        Parameters(a): Parameters<SchemaArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        check_2020_12(&a)?;
        let who = match (&a.name, a.address.as_ref().and_then(|d| d.street.as_ref())) {
            (Some(name), _) => name.clone(),
            (None, Some(street)) => format!("whoever lives at {street}"),
            (None, None) => unreachable!("check_2020_12 refused it"),
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
            "Hello, {who}!"
        ))]))
    }

    /// Answers after a tenth of a second, on the POST's SSE stream after its priming event
    /// (the suite's SSE polling scenario). The stream is not closed mid-call: rmcp 3.11 gives a
    /// tool no handle on the HTTP stream its request came on.
    #[tool(name = "test_reconnection", annotations(read_only_hint = true))]
    pub async fn test_reconnection(&self, Parameters(_a): Parameters<NoArgs>) -> CallToolResult {
        tokio::time::sleep(Duration::from_millis(100)).await;
        CallToolResult::success(vec![ContentBlock::text("Answered after 100 ms.")])
    }

    /// Echoes `value`, which an HTTP client also sends as the `Mcp-Param-Value` header.
    #[tool(name = "test_custom_header", annotations(read_only_hint = true))]
    pub async fn test_custom_header(
        &self,
        Parameters(a): Parameters<HeaderArgs>,
    ) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(a.value)])
    }
}

#[tool_router(router = client_router, vis = "pub(crate)")]
impl Server<Conformance> {
    /// Asks the client's model (`sampling/createMessage`) and returns its answer.
    #[tool(name = "test_sampling", annotations(read_only_hint = true))]
    pub async fn test_sampling(
        &self,
        Parameters(a): Parameters<SamplingArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let declared = context
            .peer
            .peer_info()
            .is_some_and(|i| i.capabilities.sampling.is_some());
        if !declared {
            return CallToolResult::error(vec![ContentBlock::text(
                "the client did not declare the sampling capability",
            )]);
        }
        sample(&context.peer, a.prompt).await
    }

    /// Asks the user (`elicitation/create`) for a username and an email.
    #[tool(name = "test_elicitation", annotations(read_only_hint = true))]
    pub async fn test_elicitation(
        &self,
        Parameters(a): Parameters<ElicitationArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let schema = json!({
            "type": "object",
            "properties": {
                "username": { "type": "string", "description": "User's response" },
                "email": { "type": "string", "description": "User's email address" }
            },
            "required": ["username", "email"]
        });
        elicit(&context.peer, a.message, schema, "User response").await
    }

    /// Asks the user with a form whose every primitive field has a default (SEP-1034).
    #[tool(
        name = "test_elicitation_sep1034_defaults",
        annotations(read_only_hint = true)
    )]
    pub async fn test_elicitation_sep1034_defaults(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        elicit(
            &context.peer,
            "Confirm or change the defaults".into(),
            sep1034_schema(),
            "Elicitation completed",
        )
        .await
    }

    /// Asks the user with a form of the five enum shapes (SEP-1330).
    #[tool(
        name = "test_elicitation_sep1330_enums",
        annotations(read_only_hint = true)
    )]
    pub async fn test_elicitation_sep1330_enums(
        &self,
        Parameters(_a): Parameters<NoArgs>,
        context: RequestContext<RoleServer>,
    ) -> CallToolResult {
        elicit(
            &context.peer,
            "Pick the options".into(),
            sep1330_schema(),
            "Elicitation completed",
        )
        .await
    }
}

/// A 2×2 red PNG through the engine's encoder, base64-encoded.
pub(super) fn red_png() -> Result<String, String> {
    let rect = Rect::new(0, 0, 2, 2);
    let frame = Frame {
        rect,
        format: PixelFormat::Bgrx,
        data: [0u8, 0, 255, 255].repeat(4),
    };
    let image = pipeline::encode(
        &frame,
        &ViewGeometry::new(rect, 2, 2),
        ImageFormat::Png,
        &mut Vec::new(),
        &Decorations::default(),
    )
    .map_err(|e| format!("encoding the PNG failed: {e}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(&image.bytes))
}

/// `samples` of silence as a WAV file: 8 kHz, mono, 8-bit PCM (128 is silence).
fn silent_wav(samples: u32) -> Vec<u8> {
    let mut wav = Vec::with_capacity(44 + samples as usize);
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // channels
    wav.extend_from_slice(&8000u32.to_le_bytes()); // sample rate
    wav.extend_from_slice(&8000u32.to_le_bytes()); // byte rate
    wav.extend_from_slice(&1u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&samples.to_le_bytes());
    wav.resize(44 + samples as usize, 128);
    wav
}

/// SEP-1034: a default for each primitive type.
fn sep1034_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "default": "John Doe" },
            "age": { "type": "integer", "default": 30 },
            "score": { "type": "number", "default": 95.5 },
            "status": { "type": "string", "enum": ["active", "inactive", "pending"], "default": "active" },
            "verified": { "type": "boolean", "default": true }
        }
    })
}

/// SEP-1330: untitled, titled and legacy single-select; untitled and titled multi-select.
fn sep1330_schema() -> Value {
    let titled = |pairs: [(&str, &str); 3]| -> Vec<Value> {
        pairs
            .iter()
            .map(|(v, t)| json!({ "const": v, "title": t }))
            .collect()
    };
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
            "titledSingle": {
                "type": "string",
                "oneOf": titled([("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")])
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": titled([("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])
                }
            }
        }
    })
}

/// Asks the client's model to answer `prompt` in at most 100 tokens.
///
/// rmcp 3.11 deprecates sampling (SEP-2577); the suite still asks for it, and deskpilot itself
/// never samples, so only this fixture uses it.
#[allow(deprecated)]
async fn sample(peer: &Peer<RoleServer>, prompt: String) -> CallToolResult {
    use rmcp::model::{CreateMessageRequest, CreateMessageRequestParams, SamplingMessage};
    let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 100);
    let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
    match ask(peer, request).await {
        Ok(ClientResult::CreateMessageResult(r)) => {
            let text = r
                .message
                .content
                .first()
                .and_then(|c| c.as_text())
                .map_or_else(String::new, |t| t.text.clone());
            CallToolResult::success(vec![ContentBlock::text(format!("LLM response: {text}"))])
        }
        Ok(other) => unexpected(&other),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e)]),
    }
}

/// Sends `request` to the client and waits for its answer, at most the profile's request
/// timeout.
async fn ask(peer: &Peer<RoleServer>, request: ServerRequest) -> Result<ClientResult, String> {
    let mut options = PeerRequestOptions::no_options();
    options.timeout = Some(Conformance::REQUEST_TIMEOUT);
    let pending = peer
        .send_request_with_option(request, options)
        .await
        .map_err(|e| format!("the request could not be sent: {e}"))?;
    pending
        .await_response()
        .await
        .map_err(|e| format!("the client did not answer: {e}"))
}

/// Asks the user through the client with `schema`; the result starts with `intro`.
async fn elicit(
    peer: &Peer<RoleServer>,
    message: String,
    schema: Value,
    intro: &str,
) -> CallToolResult {
    let declared = peer
        .peer_info()
        .is_some_and(|i| i.capabilities.elicitation.is_some());
    if !declared {
        return CallToolResult::error(vec![ContentBlock::text(
            "the client did not declare the elicitation capability",
        )]);
    }
    let requested_schema: ElicitationSchema = match serde_json::from_value(schema) {
        Ok(s) => s,
        Err(e) => {
            return CallToolResult::error(vec![ContentBlock::text(format!(
                "the fixture's schema does not parse: {e}"
            ))]);
        }
    };
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message,
        requested_schema,
    };
    match ask(
        peer,
        ServerRequest::ElicitRequest(ElicitRequest::new(params)),
    )
    .await
    {
        Ok(ClientResult::ElicitResult(r)) => {
            let action = serde_json::to_value(&r.action).unwrap_or(Value::Null);
            let content = r
                .content
                .unwrap_or_else(|| Value::Object(Default::default()));
            CallToolResult::success(vec![ContentBlock::text(format!(
                "{intro}: action={}, content={content}",
                action.as_str().unwrap_or("?")
            ))])
        }
        Ok(other) => unexpected(&other),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(e)]),
    }
}

fn unexpected(answer: &ClientResult) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(format!(
        "the client answered with something else: {answer:?}"
    ))])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The image is a PNG of the size it says.
    #[test]
    fn the_image_is_a_2x2_png() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(red_png().unwrap())
            .unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        // IHDR: width and height, big-endian, right after the chunk's length and type.
        assert_eq!(&bytes[12..16], b"IHDR");
        assert_eq!(&bytes[16..24], &[0, 0, 0, 2, 0, 0, 0, 2]);
    }

    #[test]
    fn the_wav_header_counts_its_samples() {
        let wav = silent_wav(800);
        assert_eq!(wav.len(), 844);
        assert_eq!(&wav[..4], b"RIFF");
        assert_eq!(u32::from_le_bytes(wav[4..8].try_into().unwrap()), 836);
        assert_eq!(u32::from_le_bytes(wav[40..44].try_into().unwrap()), 800);
        assert!(wav[44..].iter().all(|&b| b == 128));
    }

    /// rmcp's typed elicitation schema keeps every keyword the suite checks (defaults,
    /// `enumNames`, `oneOf`, `anyOf`): what is sent is the fixture's schema unchanged.
    #[test]
    fn elicitation_schemas_survive_rmcp_types() {
        for schema in [sep1034_schema(), sep1330_schema()] {
            let typed: ElicitationSchema = serde_json::from_value(schema.clone()).unwrap();
            assert_eq!(serde_json::to_value(&typed).unwrap(), schema);
        }
    }

    /// `tools/list` lists the 2020-12 tool's schema as declared, and the header parameter
    /// keeps its `x-mcp-header`.
    #[test]
    fn schema_keywords_reach_tools_list() {
        let listed = super::super::tools_list();
        let find = |name: &str| listed.iter().find(|t| t.name == name).unwrap();
        assert_eq!(
            *find("json_schema_2020_12_tool").input_schema,
            *schema_2020_12()
        );
        let header = Value::Object((*find("test_custom_header").input_schema).clone());
        assert_eq!(
            header.pointer("/properties/value/x-mcp-header"),
            Some(&json!("Value"))
        );
    }

    /// The tool refuses what its schema refuses beyond types, and takes what it allows.
    #[test]
    fn the_2020_12_rules_hold_in_the_tool() {
        let args = |v: Value| -> SchemaArgs { serde_json::from_value(v).unwrap() };
        assert!(check_2020_12(&args(json!({ "name": "Ada" }))).is_ok());
        assert!(check_2020_12(&args(json!({ "address": { "street": "Main St" } }))).is_ok());
        assert!(check_2020_12(&args(json!({}))).is_err());
        assert!(
            check_2020_12(&args(json!({ "name": "Ada", "address": { "city": "X" } }))).is_err()
        );
        assert!(serde_json::from_value::<SchemaArgs>(json!({ "nickname": "A" })).is_err());
    }
}
