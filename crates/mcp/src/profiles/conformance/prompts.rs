//! The conformance suite's prompts and their completions: a plain prompt, one with arguments,
//! one embedding a resource this profile serves (read through `resources`), one with an image,
//! one that first asks the user through an input-required result (SEP-2322), and one that
//! `test_trigger_prompt_change` adds and removes — the change reaches listeners through the
//! endpoint's hub.
//!
//! Arguments are checked: a missing required one or one the prompt does not take is
//! `invalid_params` naming those it takes. `completion/complete` suggests values by prefix from
//! each argument's own list (for `resourceUri`, the resources served here).

use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    CacheScope, CallToolResult, CompleteRequestParams, CompleteResult, CompletionInfo,
    ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult, ListPromptsResult,
    Prompt, PromptArgument, PromptMessage, Reference, Role,
};
use rmcp::{ErrorData, tool, tool_router};

use super::{Conformance, mrtr, resources};
use crate::kit::Parameters;
use crate::kit::context::NoArgs;
use crate::kit::server::Server;

const SIMPLE: &str = "test_simple_prompt";
const WITH_ARGUMENTS: &str = "test_prompt_with_arguments";
const WITH_RESOURCE: &str = "test_prompt_with_embedded_resource";
const WITH_IMAGE: &str = "test_prompt_with_image";
const INPUT_REQUIRED: &str = "test_input_required_result_prompt";
const DYNAMIC: &str = "test_dynamic_prompt";

/// Whether [`DYNAMIC`] is listed now. The profile serves one endpoint per process, so
/// process-wide is endpoint-wide.
static DYNAMIC_LISTED: AtomicBool = AtomicBool::new(false);

/// The values `completion/complete` suggests for `arg1` and `arg2`.
const ARG1_VALUES: &[&str] = &["paris", "park", "party", "test-alpha", "test-beta"];
const ARG2_VALUES: &[&str] = &["casual", "formal", "friendly"];
/// Ids the template's completion suggests (any id reads).
const TEMPLATE_IDS: &[&str] = &["1", "2", "3", "123"];

/// Every prompt listed now.
fn prompts() -> Vec<Prompt> {
    let arg = |name: &str, description: &str, required: bool| {
        PromptArgument::new(name)
            .with_description(description)
            .with_required(required)
    };
    let mut prompts = vec![
        Prompt::new(SIMPLE, Some("A prompt without arguments."), None),
        Prompt::new(
            WITH_ARGUMENTS,
            Some("A prompt that says its two arguments."),
            Some(vec![
                arg("arg1", "First argument.", true),
                arg("arg2", "Second argument.", false),
            ]),
        ),
        Prompt::new(
            WITH_RESOURCE,
            Some("A prompt embedding a resource served here."),
            Some(vec![arg(
                "resourceUri",
                "The resource to embed (default test://static-text).",
                false,
            )]),
        ),
        Prompt::new(WITH_IMAGE, Some("A prompt with an image."), None),
        Prompt::new(
            INPUT_REQUIRED,
            Some("A prompt built from context the user gives first (an input-required result)."),
            None,
        ),
    ];
    if DYNAMIC_LISTED.load(Ordering::Relaxed) {
        prompts.push(Prompt::new(
            DYNAMIC,
            Some("Listed while test_trigger_prompt_change has added it."),
            None,
        ));
    }
    prompts
}

/// `prompts/list`: the list changes with `test_trigger_prompt_change`, so it is fresh for no
/// time.
pub(super) fn list() -> ListPromptsResult {
    ListPromptsResult::with_all_items(prompts())
        .with_ttl_ms(0)
        .with_cache_scope(CacheScope::Public)
}

/// `prompts/get`.
pub(super) fn get(request: GetPromptRequestParams) -> Result<GetPromptResponse, ErrorData> {
    let prompt = prompts()
        .into_iter()
        .find(|p| p.name == request.name)
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "no prompt {}: prompts/list names those there are",
                    request.name
                ),
                None,
            )
        })?;
    let args = request.arguments.unwrap_or_default();
    let declared: Vec<&PromptArgument> = prompt.arguments.iter().flatten().collect();
    let names = || {
        let n: Vec<&str> = declared.iter().map(|a| a.name.as_str()).collect();
        if n.is_empty() {
            "none".to_string()
        } else {
            n.join(", ")
        }
    };
    for given in args.keys() {
        if !declared.iter().any(|a| &a.name == given) {
            return Err(ErrorData::invalid_params(
                format!("{}: no argument {given}; it takes {}", prompt.name, names()),
                None,
            ));
        }
    }
    let text = |name: &str| args.get(name).and_then(|v| v.as_str());
    for a in &declared {
        if a.required == Some(true) && text(&a.name).is_none() {
            return Err(ErrorData::invalid_params(
                format!(
                    "{}: argument {} is required (a string)",
                    prompt.name, a.name
                ),
                None,
            ));
        }
    }
    let user = |t: String| PromptMessage::new_text(Role::User, t);
    let (description, messages) = match prompt.name.as_str() {
        SIMPLE => (
            "A simple prompt",
            vec![user("This is a simple test prompt.".into())],
        ),
        WITH_ARGUMENTS => (
            "A prompt with arguments",
            vec![user(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                text("arg1").unwrap_or_default(),
                text("arg2").unwrap_or_default()
            ))],
        ),
        WITH_RESOURCE => {
            let uri = text("resourceUri").unwrap_or("test://static-text");
            let read = resources::read(uri)?;
            let mut messages = vec![user(format!("Here is {uri}:"))];
            for contents in read.contents {
                messages.push(PromptMessage::new(
                    Role::User,
                    ContentBlock::resource(contents),
                ));
            }
            ("A prompt with an embedded resource", messages)
        }
        WITH_IMAGE => {
            let png = super::tools::red_png().map_err(|e| ErrorData::internal_error(e, None))?;
            (
                "A prompt with an image",
                vec![
                    user("Here is an image:".into()),
                    PromptMessage::new(Role::User, ContentBlock::image(png, "image/png")),
                ],
            )
        }
        INPUT_REQUIRED => {
            let Some(answer) = mrtr::answer(request.input_responses.as_ref(), "user_context")
            else {
                return Ok(mrtr::ask_for(
                    "user_context",
                    mrtr::form(
                        "What context should the prompt use?",
                        "context",
                        "The context.",
                    ),
                )
                .into());
            };
            let context = mrtr::field(answer, "context").unwrap_or("(none given)");
            (
                "A prompt built from elicited context",
                vec![user(format!("Prompt with elicited context: {context}"))],
            )
        }
        _ => (
            "Listed while added",
            vec![user("This prompt comes and goes.".into())],
        ),
    };
    Ok(GetPromptResult::new(messages)
        .with_description(description)
        .into())
}

/// `completion/complete`: the values of the argument's list that start with what was typed
/// (case-insensitive).
pub(super) fn complete(request: &CompleteRequestParams) -> Result<CompleteResult, ErrorData> {
    let argument = request.argument.name.as_str();
    let owned = |values: &[&str]| values.iter().map(|v| v.to_string()).collect::<Vec<_>>();
    let values: Vec<String> = match (&request.r#ref, argument) {
        (Reference::Prompt(p), "arg1") if p.name == WITH_ARGUMENTS => owned(ARG1_VALUES),
        (Reference::Prompt(p), "arg2") if p.name == WITH_ARGUMENTS => owned(ARG2_VALUES),
        (Reference::Prompt(p), "resourceUri") if p.name == WITH_RESOURCE => resources::list()
            .resources
            .into_iter()
            .map(|r| r.uri)
            .collect(),
        (Reference::Resource(r), "id") if r.uri == resources::TEMPLATE => owned(TEMPLATE_IDS),
        (reference, _) => {
            return Err(ErrorData::invalid_params(
                format!("nothing to complete for argument {argument} of {reference:?}"),
                None,
            ));
        }
    };
    let typed = request.argument.value.to_lowercase();
    let matching: Vec<String> = values
        .into_iter()
        .filter(|v| v.to_lowercase().starts_with(&typed))
        .collect();
    CompletionInfo::with_all_values(matching)
        .map(CompleteResult::new)
        .map_err(|e| ErrorData::internal_error(e, None))
}

#[tool_router(router = prompts_router, vis = "pub(crate)")]
impl Server<Conformance> {
    /// Adds test_dynamic_prompt to the prompt list, or removes it; listeners are told.
    #[tool(name = "test_trigger_prompt_change")]
    pub async fn test_trigger_prompt_change(
        &self,
        Parameters(_a): Parameters<NoArgs>,
    ) -> CallToolResult {
        let listed = !DYNAMIC_LISTED.fetch_xor(true, Ordering::Relaxed);
        self.hub.prompts_list_changed();
        CallToolResult::success(vec![ContentBlock::text(format!(
            "{DYNAMIC} {} the prompt list.",
            if listed { "joined" } else { "left" }
        ))])
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ArgumentInfo, GetPromptRequestParams};
    use serde_json::json;

    use super::*;

    fn get_with(name: &str, args: serde_json::Value) -> Result<GetPromptResponse, ErrorData> {
        let serde_json::Value::Object(args) = args else {
            panic!("not an object")
        };
        get(GetPromptRequestParams::new(name).with_arguments(args))
    }

    /// Arguments are substituted; a missing required one, one the prompt does not take and an
    /// unknown prompt are refused with what there is.
    #[test]
    fn arguments_are_checked_and_substituted() {
        let Ok(GetPromptResponse::Complete(r)) =
            get_with(WITH_ARGUMENTS, json!({ "arg1": "a1", "arg2": "a2" }))
        else {
            panic!("not a prompt");
        };
        let text = serde_json::to_string(&r.messages).unwrap();
        assert!(text.contains("a1") && text.contains("a2"), "{text}");
        let e = get_with(WITH_ARGUMENTS, json!({ "arg2": "a2" })).unwrap_err();
        assert!(e.message.contains("arg1 is required"), "{}", e.message);
        let e = get_with(SIMPLE, json!({ "x": "1" })).unwrap_err();
        assert!(e.message.contains("it takes none"), "{}", e.message);
        assert!(get_with("nope", json!({})).is_err());
    }

    /// The embedded resource is what `resources/read` gives for it; an unknown one is refused.
    #[test]
    fn the_embedded_resource_is_read() {
        let Ok(GetPromptResponse::Complete(r)) = get_with(
            WITH_RESOURCE,
            json!({ "resourceUri": "test://static-text" }),
        ) else {
            panic!("not a prompt");
        };
        let ContentBlock::Resource(embedded) = &r.messages[1].content else {
            panic!("no resource");
        };
        assert_eq!(
            embedded.resource,
            resources::read("test://static-text").unwrap().contents[0]
        );
        assert!(get_with(WITH_RESOURCE, json!({ "resourceUri": "test://nope" })).is_err());
    }

    /// Completion keeps the values starting with what was typed, whatever the case; the
    /// embedded-resource prompt completes the URIs served; an argument without a list is refused.
    #[test]
    fn completion_filters_by_prefix() {
        let complete_for = |reference: Reference, name: &str, value: &str| {
            complete(&CompleteRequestParams::new(
                reference,
                ArgumentInfo::new(name, value),
            ))
        };
        let values = |r: Result<CompleteResult, ErrorData>| r.unwrap().completion.values;
        assert_eq!(
            values(complete_for(
                Reference::for_prompt(WITH_ARGUMENTS),
                "arg1",
                "PAR"
            )),
            ["paris", "park", "party"]
        );
        assert_eq!(
            values(complete_for(
                Reference::for_prompt(WITH_RESOURCE),
                "resourceUri",
                "test://static-"
            )),
            ["test://static-text", "test://static-binary"]
        );
        assert_eq!(
            values(complete_for(
                Reference::for_resource(resources::TEMPLATE),
                "id",
                "1"
            )),
            ["1", "123"]
        );
        assert!(complete_for(Reference::for_prompt(SIMPLE), "arg1", "").is_err());
    }
}
