//! The `deskpilot` profile's resources through rmcp's client, against the real binary and our
//! GTK fixture: the lists and templates (shaped as the conformance suite checks them), a
//! screenshot read back by id with its geometry, `--images link` answering with a
//! `resource_link` whose read is the same image, a window's tree and outline naming a known
//! control, an `updated` notice when a window opens under a subscription to the window list,
//! and an unknown URI refused with the resource-not-found code.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{
    CallToolResult, ContentBlock, ErrorCode, ReadResourceRequestParams, ReadResourceResult,
    ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams,
};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceError};
use serde_json::{Value, json};

use crate::elements::Fixture;
use crate::harness::{self, Server, launch, ok, serve, serve_with, text, wait_for, window_of};

const TIMEOUT: Duration = Duration::from_secs(30);

/// A client that remembers the `updated` notices it hears.
#[derive(Clone, Default)]
struct Listener {
    updated: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Listener {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.updated.lock().unwrap().push(params.uri);
    }
}

async fn read<H: ClientHandler>(
    server: &Server<H>,
    uri: &str,
) -> Result<ReadResourceResult, ServiceError> {
    server
        .client
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
}

/// The text of the first contents.
fn text_of(r: &ReadResourceResult) -> &str {
    match &r.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => text,
        other => panic!("not text: {other:?}"),
    }
}

/// A screenshot resource's image (width, height) and geometry; the two contents agree.
fn screenshot_of(r: &ReadResourceResult) -> ((u32, u32), Vec<u8>, Value) {
    let ResourceContents::BlobResourceContents {
        blob,
        mime_type,
        meta,
        ..
    } = &r.contents[0]
    else {
        panic!("the image first: {r:?}")
    };
    let mime = mime_type.clone().expect("a mime type");
    let (w, h, _) = harness::image(&CallToolResult::success(vec![ContentBlock::image(
        blob.clone(),
        mime.clone(),
    )]));
    let geometry = meta.as_ref().expect("_meta")["geometry"].clone();
    let ResourceContents::TextResourceContents {
        text, mime_type, ..
    } = &r.contents[1]
    else {
        panic!("the geometry second: {r:?}")
    };
    assert_eq!(mime_type.as_deref(), Some("application/json"));
    assert_eq!(serde_json::from_str::<Value>(text).unwrap(), geometry);
    assert_eq!(geometry["mimeType"], mime);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(blob)
        .unwrap();
    ((w, h), bytes, geometry)
}

/// The resource-not-found code (rmcp gives a 2026-07-28 client its revision's code instead).
fn not_found(e: &ServiceError) -> bool {
    matches!(e, ServiceError::McpError(e) if e.code == ErrorCode::RESOURCE_NOT_FOUND)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_list_read_screenshots_trees_and_refuse_unknown_uris() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let fixture = Fixture::start(desktop, "deskpilot resources");
    fixture.saw("ready").await;
    let server = serve(Some(desktop), &[], &[]).await;
    let window = window_of(&server, fixture.pid()).await;
    let id = window["id"].as_u64().unwrap();

    // The lists, as the conformance suite checks them: every entry named, typed, cacheable.
    let listed = server.client.list_resources(None).await.unwrap();
    assert!(listed.ttl_ms.is_some() && listed.cache_scope.is_some());
    assert_eq!(listed.resources[0].uri, "deskpilot://windows");
    assert!(
        listed
            .resources
            .iter()
            .any(|r| r.uri.starts_with("deskpilot://skill/")),
        "a resource per app skill: {listed:?}"
    );
    assert!(
        listed
            .resources
            .iter()
            .any(|r| r.uri == "deskpilot://memory/timeline"),
        "memory is on"
    );
    for r in &listed.resources {
        assert!(
            !r.name.is_empty() && r.mime_type.is_some() && r.annotations.is_some(),
            "{r:?}"
        );
    }
    let templates = server.client.list_resource_templates(None).await.unwrap();
    assert!(templates.ttl_ms.is_some() && templates.cache_scope.is_some());
    let uris: Vec<&str> = templates
        .resource_templates
        .iter()
        .map(|t| t.uri_template.as_str())
        .collect();
    for t in [
        "deskpilot://screenshot/{id}",
        "deskpilot://window/{window}/tree",
        "deskpilot://window/{window}/outline",
        "deskpilot://skill/{app}",
    ] {
        assert!(uris.contains(&t), "{t} in {uris:?}");
    }
    // Every listed resource reads: contents with its URI, a type and a body.
    for r in &listed.resources {
        let read = read(&server, &r.uri).await.unwrap();
        assert!(read.ttl_ms.is_some() && read.cache_scope.is_some());
        match &read.contents[0] {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => {
                assert_eq!(uri, &r.uri);
                assert_eq!(mime_type, &r.mime_type);
                assert!(!text.is_empty(), "{}", r.uri);
            }
            other => panic!("{}: {other:?}", r.uri),
        }
    }
    let windows: Value = serde_json::from_str(text_of(
        &read(&server, "deskpilot://windows").await.unwrap(),
    ))
    .unwrap();
    let listed_window = windows["windows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["id"] == id)
        .expect("the fixture in deskpilot://windows");
    assert_eq!(listed_window["title"], "deskpilot resources");
    let tree_uri = listed_window["tree"].as_str().unwrap().to_string();
    let outline_uri = listed_window["outline"].as_str().unwrap().to_string();

    // The window's tree and outline name the fixture's controls; the tree's tokens act.
    let tree = read(&server, &tree_uri).await.unwrap();
    assert!(
        text_of(&tree).contains("Button \"Apply\""),
        "{}",
        text_of(&tree)
    );
    let outline = read(&server, &outline_uri).await.unwrap();
    assert!(
        text_of(&outline).contains("Button \"Apply\" @ ("),
        "{}",
        text_of(&outline)
    );
    let token = text_of(&outline)
        .lines()
        .find(|l| l.starts_with("Button \"Apply\""))
        .and_then(|l| l.split_whitespace().last())
        .unwrap()
        .to_string();
    assert!(token.starts_with('s') && token.contains(':'), "{token}");
    let clicked = server.call("click", json!({ "element": token })).await;
    ok(&clicked);
    fixture.saw("clicked Apply").await;

    // A screenshot comes back by id, byte for byte, with the geometry the tool gave.
    let shot = server
        .call("screenshot", json!({ "window_id": id, "format": "png" }))
        .await;
    let s = ok(&shot).clone();
    let (iw, ih, _) = harness::image(&shot);
    let shot_id = s["screenshot_id"].as_u64().unwrap();
    let r = read(&server, &format!("deskpilot://screenshot/{shot_id}"))
        .await
        .unwrap();
    let ((w, h), bytes, geometry) = screenshot_of(&r);
    assert_eq!((w, h), (iw, ih));
    let inline = shot
        .content
        .iter()
        .find_map(|c| c.as_image())
        .map(|i| {
            base64::engine::general_purpose::STANDARD
                .decode(&i.data)
                .unwrap()
        })
        .unwrap();
    assert_eq!(bytes, inline, "the same image");
    assert_eq!(geometry["screenshot_id"], shot_id);
    assert_eq!(geometry["capture"], s["view"]["capture"]);
    assert_eq!(geometry["scale"], s["view"]["scale"]);
    assert_eq!(geometry["origin"]["x"], s["view"]["capture"]["x"]);
    assert_eq!(geometry["window"]["id"], id);
    assert_eq!(geometry["monitor"]["index"], 0);
    assert_eq!(geometry["format"], "png");

    // Unknown URIs, ids and windows are not found.
    for uri in [
        "deskpilot://nothing".to_string(),
        "deskpilot://screenshot/987654321".to_string(),
        "deskpilot://window/0x7fffffff/tree".to_string(),
        "deskpilot://skill/no-such-app-42".to_string(),
        "file:///etc/passwd".to_string(),
    ] {
        let e = read(&server, &uri).await.unwrap_err();
        assert!(not_found(&e), "{uri}: {e:?}");
    }
    drop(fixture);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn images_link_answers_with_a_resource_link_to_the_same_image() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let fixture = Fixture::start(desktop, "deskpilot linked");
    fixture.saw("ready").await;
    let server = serve(Some(desktop), &["--images", "link"], &[]).await;
    let window = window_of(&server, fixture.pid()).await;
    let shot = server
        .call("screenshot", json!({ "window_id": window["id"] }))
        .await;
    let s = ok(&shot).clone();
    assert!(
        shot.content.iter().all(|c| c.as_image().is_none()),
        "no image inlined"
    );
    let link = shot
        .content
        .iter()
        .find_map(|c| match c {
            ContentBlock::ResourceLink(link) => Some(link.clone()),
            _ => None,
        })
        .expect("a resource_link");
    assert_eq!(
        link.uri,
        format!("deskpilot://screenshot/{}", s["screenshot_id"])
    );
    assert_eq!(link.mime_type.as_deref(), Some("image/jpeg"));
    assert!(text(&shot).contains(&link.uri), "{}", text(&shot));
    let r = read(&server, &link.uri).await.unwrap();
    let ((w, h), bytes, geometry) = screenshot_of(&r);
    assert_eq!(
        (w as u64, h as u64),
        (
            s["view"]["width"].as_u64().unwrap(),
            s["view"]["height"].as_u64().unwrap()
        )
    );
    assert_eq!(Some(bytes.len() as u64), link.size);
    assert_eq!(geometry["capture"], s["view"]["capture"]);

    // An observation image is linked too.
    let observed = server
        .call("move_cursor", json!({ "x": 5, "y": 5, "observe": true }))
        .await;
    ok(&observed);
    assert!(observed.content.iter().all(|c| c.as_image().is_none()));
    let link = observed
        .content
        .iter()
        .find_map(|c| match c {
            ContentBlock::ResourceLink(link) => Some(link.uri.clone()),
            _ => None,
        })
        .expect("the observation's link");
    screenshot_of(&read(&server, &link).await.unwrap());
    drop(fixture);
    server.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    deprecated,
    reason = "resources/subscribe is the 2025-11-25 way, served here"
)]
async fn a_subscribed_window_list_is_updated_when_a_window_opens() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let listener = Listener::default();
    let server = serve_with(Some(desktop), &[], &[], listener.clone()).await;
    server
        .client
        .subscribe(SubscribeRequestParams::new("deskpilot://windows"))
        .await
        .unwrap();
    let before = read(&server, "deskpilot://windows").await.unwrap();
    assert!(!text_of(&before).contains("deskpilot watched xterm"));
    let e = server
        .client
        .subscribe(SubscribeRequestParams::new("deskpilot://nothing"))
        .await
        .unwrap_err();
    assert!(not_found(&e), "{e:?}");

    let _xterm = launch(
        desktop,
        "xterm",
        &[
            "-T",
            "deskpilot watched xterm",
            "-geometry",
            "40x10+300+300",
        ],
    );
    wait_for(
        TIMEOUT,
        "an updated notice for deskpilot://windows",
        || async {
            listener
                .updated
                .lock()
                .unwrap()
                .iter()
                .any(|u| u == "deskpilot://windows")
                .then_some(())
        },
    )
    .await;
    // The notice meant it: a read lists the new window (it may have mapped in steps).
    wait_for(TIMEOUT, "the xterm in deskpilot://windows", || async {
        let now = read(&server, "deskpilot://windows").await.ok()?;
        text_of(&now)
            .contains("deskpilot watched xterm")
            .then_some(())
    })
    .await;
    server.finish().await;
}
