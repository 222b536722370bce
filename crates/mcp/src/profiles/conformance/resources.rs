//! The conformance suite's resources: static texts and a static PNG, a template whose `{id}`
//! shows in what it reads, and `test://watched-resource`, which changes when
//! `test_change_watched_resource` is called — subscribers hear it through the endpoint's hub, as
//! they would any deskpilot resource.
//!
//! Static results carry a public cache hint of a minute; the watched resource's is zero. An
//! unknown URI is `resource_not_found` with the URI in its data (rmcp gives each revision its
//! code).

use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::{
    CacheScope, CallToolResult, ContentBlock, ListResourceTemplatesResult, ListResourcesResult,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use rmcp::{ErrorData, tool, tool_router};
use serde_json::json;

use super::Conformance;
use crate::kit::Parameters;
use crate::kit::context::NoArgs;
use crate::kit::server::Server;

const STATIC_TEXT: &str = "test://static-text";
const STATIC_BINARY: &str = "test://static-binary";
/// The resource the suite asks `test_prompt_with_embedded_resource` to embed.
const EXAMPLE: &str = "test://example-resource";
pub(super) const WATCHED: &str = "test://watched-resource";
pub(super) const TEMPLATE: &str = "test://template/{id}/data";
/// What comes before and after the `{id}` of [`TEMPLATE`].
const BEFORE_ID: &str = "test://template/";
const AFTER_ID: &str = "/data";
/// What an `{id}` may not contain: it is one path segment.
const SEGMENT_END: char = '/';

/// How long a static result stays fresh.
const STATIC_TTL_MS: u64 = 60_000;

/// The watched resource's revision. The profile serves one endpoint per process (tests start
/// their own server), so process-wide is endpoint-wide.
static REVISION: AtomicU64 = AtomicU64::new(1);

/// The text of `test://static-text`.
const STATIC_TEXT_BODY: &str = "This is the content of the static text resource.";

/// `resources/list`.
pub(super) fn list() -> ListResourcesResult {
    ListResourcesResult::with_all_items(vec![
        Resource::new(STATIC_TEXT, "static-text")
            .with_title("Static Text Resource")
            .with_description("A text that never changes.")
            .with_mime_type("text/plain"),
        Resource::new(STATIC_BINARY, "static-binary")
            .with_title("Static Binary Resource")
            .with_description("A 2×2 red PNG.")
            .with_mime_type("image/png"),
        Resource::new(EXAMPLE, "example-resource")
            .with_title("Example Resource")
            .with_description("A text for prompts to embed.")
            .with_mime_type("text/plain"),
        Resource::new(WATCHED, "watched-resource")
            .with_title("Watched Resource")
            .with_description(
                "Its revision; test_change_watched_resource changes it and tells subscribers.",
            )
            .with_mime_type("text/plain"),
    ])
    .with_ttl_ms(STATIC_TTL_MS)
    .with_cache_scope(CacheScope::Public)
}

/// `resources/templates/list`.
pub(super) fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(TEMPLATE, "template-data")
            .with_title("Dynamic Resource")
            .with_description("JSON naming the id it was read with.")
            .with_mime_type("application/json"),
    ])
    .with_ttl_ms(STATIC_TTL_MS)
    .with_cache_scope(CacheScope::Public)
}

/// The `{id}` of a URI of [`TEMPLATE`].
fn template_id(uri: &str) -> Option<&str> {
    let id = uri.strip_prefix(BEFORE_ID)?.strip_suffix(AFTER_ID)?;
    (!id.is_empty() && !id.contains(SEGMENT_END)).then_some(id)
}

/// Whether `uri` is a resource served here.
pub(super) fn serves(uri: &str) -> bool {
    [STATIC_TEXT, STATIC_BINARY, EXAMPLE, WATCHED].contains(&uri) || template_id(uri).is_some()
}

/// `resources/read`.
pub(super) fn read(uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let text = |mime: &str, text: String| ResourceContents::TextResourceContents {
        uri: uri.into(),
        mime_type: Some(mime.into()),
        text,
        meta: None,
    };
    let (contents, ttl) = match uri {
        STATIC_TEXT => (text("text/plain", STATIC_TEXT_BODY.into()), STATIC_TTL_MS),
        EXAMPLE => (
            text(
                "text/plain",
                "An example resource, for prompts to embed.".into(),
            ),
            STATIC_TTL_MS,
        ),
        STATIC_BINARY => (
            ResourceContents::BlobResourceContents {
                uri: uri.into(),
                mime_type: Some("image/png".into()),
                blob: super::tools::red_png().map_err(|e| ErrorData::internal_error(e, None))?,
                meta: None,
            },
            STATIC_TTL_MS,
        ),
        WATCHED => (
            text(
                "text/plain",
                format!("revision {}", REVISION.load(Ordering::Relaxed)),
            ),
            0,
        ),
        _ => match template_id(uri) {
            Some(id) => (
                text(
                    "application/json",
                    json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") })
                        .to_string(),
                ),
                STATIC_TTL_MS,
            ),
            None => {
                return Err(ErrorData::resource_not_found(
                    format!(
                        "no resource {uri}: resources/list and resources/templates/list name those there are"
                    ),
                    Some(json!({ "uri": uri })),
                ));
            }
        },
    };
    Ok(ReadResourceResult::new(vec![contents])
        .with_ttl_ms(ttl)
        .with_cache_scope(CacheScope::Public))
}

#[tool_router(router = resources_router, vis = "pub(crate)")]
impl Server<Conformance> {
    /// Changes test://watched-resource (its revision goes up); subscribers are told.
    #[tool(name = "test_change_watched_resource")]
    pub async fn test_change_watched_resource(
        &self,
        Parameters(_a): Parameters<NoArgs>,
    ) -> CallToolResult {
        let revision = REVISION.fetch_add(1, Ordering::Relaxed) + 1;
        self.hub.resource_updated(WATCHED);
        CallToolResult::success(vec![ContentBlock::text(format!(
            "{WATCHED} is now at revision {revision}."
        ))])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The template is what [`template_id`] takes apart.
    #[test]
    fn the_template_is_its_parts() {
        assert_eq!(TEMPLATE, format!("{BEFORE_ID}{{id}}{AFTER_ID}"));
        assert_eq!(template_id("test://template/7/data"), Some("7"));
    }

    /// Every listed resource reads, the template's id shows in what it reads, and anything
    /// else is not found with its URI in the data.
    #[test]
    fn what_is_listed_reads_and_nothing_else_does() {
        for r in list().resources {
            assert!(serves(&r.uri), "{}", r.uri);
            let read = read(&r.uri).unwrap();
            assert_eq!(read.contents.len(), 1, "{}", r.uri);
        }
        let ResourceContents::TextResourceContents { text, .. } =
            &read("test://template/123/data").unwrap().contents[0]
        else {
            panic!("not text");
        };
        assert!(text.contains("\"id\":\"123\""), "{text}");
        for unknown in [
            "test://template//data",
            "test://template/1/2/data",
            "test://nope",
        ] {
            assert!(!serves(unknown), "{unknown}");
            let e = read(unknown).unwrap_err();
            assert_eq!(e.data, Some(json!({ "uri": unknown })));
        }
    }
}
