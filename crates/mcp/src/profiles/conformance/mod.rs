//! The `conformance` profile: the fixture tools the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, run by `scripts/conformance`) calls on a server, served
//! by the same [`Server`] and HTTP endpoint every real profile uses. Compiled in only with the
//! `conformance` feature, which the binary's test builds turn on and a release build never does.
//!
//! Each tool does exactly what the suite's scenario asks and nothing more: text, a real PNG (made
//! by the engine's own encoder), a WAV, embedded resources, a tool error, progress through the
//! client's peer, and sampling and elicitation requests back to the client. It never touches the
//! desktop. What deskpilot's server does not offer (logging, completions, resources, prompts) gets
//! no stand-in here: those scenarios fail, and `tests/conformance/expected-failures.txt` says why.

use std::time::Duration;

use base64::Engine as _;
use deskpilot_backend::{Frame, PixelFormat};
use deskpilot_engine::pipeline::{self, ImageFormat};
use deskpilot_engine::{Decorations, coords::ViewGeometry};
use deskpilot_types::{ErrorCode, Rect};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{
    CallToolResult, ClientResult, ContentBlock, ElicitRequest, ElicitRequestParams,
    ElicitationSchema, ProgressNotificationParam, ResourceContents, ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestContext};
use rmcp::{RoleServer, tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::kit::context::NoArgs;
use crate::kit::server::{ProfileSpec, Server};
use crate::kit::{Parameters, Wording};

const INSTRUCTIONS: &str =
    "Fixture tools for the MCP conformance suite; they never touch the desktop.";

/// The `conformance` profile.
#[derive(Debug)]
pub struct Conformance;

/// The MCP server for the `conformance` profile.
pub type ConformanceServer = Server<Conformance>;

/// Errors come from the fixtures themselves; the kit words only argument errors here (no
/// fixture acts on the desktop or takes a screenshot: the kit's defaults say the rest).
#[derive(Debug)]
struct ConformanceWording;

static WORDING: ConformanceWording = ConformanceWording;

impl Wording for ConformanceWording {
    fn hint(&self, code: ErrorCode) -> &'static str {
        match code {
            ErrorCode::InvalidArgument => "Fix the argument named in the message and call again.",
            _ => "Read the message.",
        }
    }
}

impl ProfileSpec for Conformance {
    const NAME: &'static str = "conformance";
    const INSTRUCTIONS: &'static str = INSTRUCTIONS;
    const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    const SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(30);

    fn wording() -> &'static dyn Wording {
        &WORDING
    }

    fn router() -> ToolRouter<ConformanceServer> {
        ConformanceServer::conformance_router()
    }
}

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

/// `json_schema_2020_12_tool`'s arguments. rmcp declares them with `$schema`, an `address`
/// under `$defs` and `additionalProperties: false`, as the suite asks.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchemaArgs {
    pub name: Option<String>,
    pub address: Option<Address>,
}

/// A postal address.
// Named `address` under `$defs`, the name the suite looks for.
#[derive(Debug, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "address")]
pub struct Address {
    pub street: Option<String>,
    pub city: Option<String>,
}

#[tool_router(router = conformance_router, vis = "pub(crate)")]
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
            Ok(png) => CallToolResult::success(vec![png]),
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
            png,
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

    /// Echoes its arguments (a name and an address).
    #[tool(name = "json_schema_2020_12_tool", annotations(read_only_hint = true))]
    pub async fn json_schema_2020_12_tool(
        &self,
        Parameters(a): Parameters<SchemaArgs>,
    ) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(
            json!({ "name": a.name, "address": a.address }).to_string(),
        )])
    }
}

/// A 2×2 red image through the engine's PNG encoder, as an image block.
fn red_png() -> Result<ContentBlock, String> {
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
    Ok(ContentBlock::image(
        base64::engine::general_purpose::STANDARD.encode(&image.bytes),
        ImageFormat::Png.mime_type(),
    ))
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

/// Every tool as the router declares it, before compacting.
#[cfg(test)]
pub(crate) fn tools_list_raw() -> Vec<rmcp::model::Tool> {
    crate::kit::server::tools_list_raw::<Conformance>()
}

/// What `tools/list` answers with every tool exposed.
#[cfg(test)]
pub(crate) fn tools_list() -> Vec<rmcp::model::Tool> {
    crate::kit::server::tools_list::<Conformance>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The image is a PNG of the size it says.
    #[test]
    fn the_image_is_a_2x2_png() {
        let ContentBlock::Image(image) = red_png().unwrap() else {
            panic!("not an image");
        };
        assert_eq!(image.mime_type, "image/png");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&image.data)
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

    /// rmcp declares `$schema`, `$defs` and `additionalProperties: false`; `tools/list` then
    /// inlines the definitions and drops `$schema` (the kit's compaction, see the snapshot).
    #[test]
    fn the_address_definition_is_shared() {
        let raw = tools_list_raw();
        let tool = raw
            .iter()
            .find(|t| t.name == "json_schema_2020_12_tool")
            .unwrap();
        let defs = tool.input_schema.get("$defs").and_then(Value::as_object);
        assert!(defs.is_some_and(|d| d.contains_key("address")), "{tool:?}");
    }
}
