//! The screenshot answer every profile gives, declared once: the profile's own first lines
//! (size, mapping, what to pass back), then what every image says the same way (the regions
//! privacy masking blacked out and the capture's notes), the image block and the profile's
//! structured fields.
//!
//! A profile that serves resources wraps its tools in [`in_session`]: every image its tools
//! show is then kept in the calling session ([`Session::keep_screenshot`]) so that
//! `deskpilot://screenshot/{id}` reads it back, and with `images = "link"` ([`answer_linkable`])
//! the answer carries a `resource_link` to that URI instead of the image's bytes. A profile that
//! does not wrap its tools (or serves no resources) always inlines, and keeps nothing.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use base64::Engine as _;
use deskpilot_engine::pipeline::ImageFormat;
use deskpilot_engine::{Screenshot, Session};
use rmcp::ErrorData;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use serde_json::Value;

use super::server::{ProfileSpec, Server};

tokio::task_local! {
    /// The session whose tool call is running on this task, for a profile that keeps images.
    static KEEPING: Keeping;
}

/// Where a wrapped tool's images are kept.
#[derive(Clone)]
struct Keeping {
    session: Arc<Session>,
    /// The session outlives the call, so a link to what it keeps can be followed: false for a
    /// stateless 2026-07-28 request over HTTP, whose server and session end with it.
    lasting: bool,
}

/// Whether the call's session outlives it: any call but an HTTP request outside an MCP
/// session (no `Mcp-Session-Id`).
fn lasting(context: &rmcp::service::RequestContext<rmcp::RoleServer>) -> bool {
    context
        .extensions
        .get::<http::request::Parts>()
        .is_none_or(|parts| parts.headers.contains_key("mcp-session-id"))
}

/// A tool call running.
type Running<'s> = Pin<Box<dyn Future<Output = Result<CallToolResponse, ErrorData>> + Send + 's>>;

/// `f` as a tool handler (the bound names the lifetime every handler is generic over).
fn handler<S, F>(f: F) -> F
where
    F: for<'s> Fn(ToolCallContext<'s, S>) -> Running<'s> + Send + Sync + 'static,
{
    f
}

/// `router` with every tool run in its caller's session's keeping: the images the tool shows
/// are kept for `resources/read`, and linked instead of inlined when the deployment says so.
pub(crate) fn in_session<P: ProfileSpec>(
    mut router: ToolRouter<Server<P>>,
) -> ToolRouter<Server<P>> {
    for route in router.map.values_mut() {
        let call = route.call.clone();
        route.call = Arc::new(handler(move |context: ToolCallContext<'_, Server<P>>| {
            let keeping = Keeping {
                session: context.service.session(),
                lasting: lasting(&context.request_context),
            };
            Box::pin(KEEPING.scope(keeping, call(context)))
        }));
    }
    router
}

/// The format as results name it: `png` or `jpeg`.
pub(crate) fn format_name(format: ImageFormat) -> &'static str {
    match format {
        ImageFormat::Jpeg { .. } => "jpeg",
        ImageFormat::Png => "png",
    }
}

/// The screenshot's bytes as an image content block.
pub(crate) fn block(shot: &Screenshot) -> ContentBlock {
    let data = base64::engine::general_purpose::STANDARD.encode(&shot.image.bytes);
    ContentBlock::image(data, shot.image.format.mime_type())
}

/// `head` followed by the masked regions and the capture's notes.
pub(crate) fn text(mut head: String, shot: &Screenshot) -> String {
    super::render::masks_and_notes(&mut head, shot.masked_regions, &shot.notes, |n| {
        format!("{n} privacy-masked regions are blacked out.")
    });
    head
}

/// The whole answer: [`text`] of `head`, the image block and `structured`.
pub(crate) fn answer(head: String, shot: &Screenshot, structured: Value) -> CallToolResult {
    let mut result =
        CallToolResult::success(vec![ContentBlock::text(text(head, shot)), block(shot)]);
    result.structured_content = Some(structured);
    result
}

/// [`answer`] for a tool wrapped in [`in_session`]: the image is kept in the caller's session,
/// and with `images = "link"` the answer carries a `resource_link` to
/// `deskpilot://screenshot/{id}` (and says so) in place of the image block — unless the session
/// ends with the call (a stateless HTTP request), where a link could never be followed. Outside
/// a wrapped tool it is [`answer`].
pub(crate) fn answer_linkable(
    head: String,
    shot: &Screenshot,
    structured: Value,
) -> CallToolResult {
    let Ok(keeping) = KEEPING.try_with(Keeping::clone) else {
        return answer(head, shot, structured);
    };
    keeping.session.keep_screenshot(shot);
    if !keeping.session.config().images.links || !keeping.lasting {
        return answer(head, shot, structured);
    }
    let link = super::resources::screenshot_link(shot);
    let head = format!(
        "{head}\nThe image is not inlined: read the resource {} (resources/read) to see it.",
        link.uri
    );
    let mut result = CallToolResult::success(vec![
        ContentBlock::text(text(head, shot)),
        ContentBlock::resource_link(link),
    ]);
    result.structured_content = Some(structured);
    result
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use deskpilot_backend::FakeDesktop;
    use deskpilot_engine::{CaptureTarget, Engine, EngineConfig, ScreenshotRequest};
    use rmcp::handler::server::router::tool::ToolRouter;
    use rmcp::model::CallToolRequestParams;
    use rmcp::{ServiceExt, tool, tool_router};

    use super::*;
    use crate::kit::server::{ProfileSpec, ServerIdentity};
    use crate::kit::{ToolFilter, Wording};

    /// A profile with one tool that shows the screen, its router wrapped as a profile that
    /// serves resources wraps its own.
    struct Shows;

    impl ProfileSpec for Shows {
        const NAME: &'static str = "shows";
        const INSTRUCTIONS: &'static str = "";
        const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
        const SCREENSHOT_TIMEOUT: Duration = Duration::from_secs(5);

        fn wording() -> &'static dyn Wording {
            &crate::profiles::deskpilot::wording::WORDING
        }

        fn router() -> ToolRouter<Server<Self>> {
            in_session(Server::<Self>::shows_router())
        }
    }

    #[tool_router(router = shows_router)]
    impl Server<Shows> {
        /// The screen.
        #[tool(name = "show")]
        async fn show(&self) -> CallToolResult {
            let shot = self
                .session()
                .screenshot(&ScreenshotRequest {
                    target: CaptureTarget::Screen,
                    max_width: None,
                    format: None,
                })
                .unwrap();
            answer_linkable(
                format!("Screenshot {}", shot.id),
                &shot,
                serde_json::json!({ "screenshot_id": shot.id }),
            )
        }
    }

    /// What `show` answers with `images.links` set to `links`, and whether the session kept it.
    async fn show(links: bool) -> (CallToolResult, bool) {
        let mut config = EngineConfig::default();
        config.images.links = links;
        let engine = Arc::new(Engine::new(FakeDesktop::new(64, 48).desktop(), config));
        let identity = ServerIdentity {
            name: "deskpilot".into(),
            version: "test".into(),
        };
        let server = Server::<Shows>::new(engine, identity, &ToolFilter::default());
        let session = server.client_session().clone();
        let (server_end, client_end) = tokio::io::duplex(1 << 20);
        tokio::spawn(async move {
            if let Ok(service) = server.serve(server_end).await {
                let _ = service.waiting().await;
            }
        });
        let client = ().serve(client_end).await.unwrap();
        let result = client
            .call_tool(CallToolRequestParams::new("show"))
            .await
            .unwrap();
        client.cancel().await.unwrap();
        let id = session.last_screenshot().unwrap().id;
        (result, session.keeps_screenshot(id))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wrapped_tool_keeps_its_image_and_links_it_when_told() {
        let (inline, kept) = show(false).await;
        assert!(kept, "kept for resources/read");
        assert!(
            inline.content.iter().any(|c| c.as_image().is_some()),
            "{inline:?}"
        );
        let (linked, kept) = show(true).await;
        assert!(kept);
        let Some(link) = linked.content.iter().find_map(|c| match c {
            ContentBlock::ResourceLink(link) => Some(link),
            _ => None,
        }) else {
            panic!("a resource link: {linked:?}")
        };
        assert!(link.uri.starts_with("deskpilot://screenshot/"), "{link:?}");
        assert_eq!(link.mime_type.as_deref(), Some("image/jpeg"));
        assert!(
            linked.content[0]
                .as_text()
                .unwrap()
                .text
                .contains(&link.uri),
            "the text names the URI"
        );
        assert!(linked.content.iter().all(|c| c.as_image().is_none()));
    }
}
