//! Two MCP clients on one engine at once, each over its own in-process duplex transport and
//! its own session: screenshot ids and element tokens do not cross, approvals go to the
//! client that made the call, and one Esc stops both.

mod common;

use std::sync::{Arc, Mutex};

use common::{Client, call, code, ok};
use deskpilot_backend::FakeDesktop;
use deskpilot_backend::fake::{FakeWindow, element, tree};
use deskpilot_engine::{Engine, EngineConfig};
use deskpilot_types::{Rect, Role};
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    Implementation,
};
use rmcp::service::RequestContext;
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::json;

/// A client whose human accepts every question and remembers it.
#[derive(Clone, Default)]
struct Human {
    asked: Arc<Mutex<Vec<String>>>,
}

impl ClientHandler for Human {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_elicitation().build(),
            Implementation::new("two-clients-test", "1"),
        )
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let message = match request {
            ElicitRequestParams::FormElicitationParams { message, .. } => message,
            other => format!("{other:?}"),
        };
        self.asked.lock().unwrap().push(message);
        Ok(ElicitResult::new(ElicitationAction::Accept))
    }
}

/// `human`'s client of the deskpilot profile over `engine`.
async fn connect(engine: Arc<Engine>, human: Human) -> Client<Human> {
    common::connect_to("deskpilot", engine, human).await
}

fn desktop() -> FakeDesktop {
    let fake = FakeDesktop::new(400, 300);
    let w = fake.add_window(FakeWindow {
        pid: 7,
        ..FakeWindow::new("Editor", Rect::new(0, 0, 400, 300))
    });
    let button = element(Role::Button, "OK")
        .platform_role("push button")
        .actions(&["click"])
        .bounds(Rect::new(10, 10, 50, 20))
        .handle("ok");
    fake.set_tree(w, tree([button]));
    fake
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_keep_their_own_ids_tokens_and_approvals_and_one_esc_stops_both() {
    let fake = desktop();
    let mut config = EngineConfig::default();
    config.safety.require_approval = true;
    config.safety.action_delay = std::time::Duration::ZERO;
    let engine = Arc::new(Engine::new(fake.desktop(), config));
    let (human_a, human_b) = (Human::default(), Human::default());
    let a = connect(engine.clone(), human_a.clone()).await;
    let b = connect(engine.clone(), human_b.clone()).await;

    // A looks; B has looked at nothing.
    let shot = ok(&call(&a, "screenshot", json!({})).await);
    let id = shot["screenshot_id"].as_u64().unwrap();
    let r = call(&b, "click", json!({ "x": 5, "y": 5 })).await;
    assert_eq!(code(&r), "NO_REFERENCE_SCREENSHOT", "{:?}", r.content);
    let r = call(&b, "click", json!({ "x": 5, "y": 5, "screenshot_id": id })).await;
    assert_eq!(code(&r), "FOREIGN_REFERENCE", "{:?}", r.content);
    let r = call(
        &b,
        "zoom",
        json!({ "x": 0, "y": 0, "width": 10, "height": 10, "screenshot_id": id }),
    )
    .await;
    assert_eq!(code(&r), "FOREIGN_REFERENCE", "{:?}", r.content);

    // A's element token is A's alone.
    let state = ok(&call(
        &a,
        "get_window_state",
        json!({ "include_screenshot": false }),
    )
    .await);
    let token = state["elements"][0]["token"].as_str().unwrap().to_string();
    let r = call(&b, "click", json!({ "element": token })).await;
    assert_eq!(code(&r), "FOREIGN_REFERENCE", "{:?}", r.content);
    assert!(
        human_b.asked.lock().unwrap().is_empty(),
        "refused before asking"
    );

    // A's click asks A's human, and only A's.
    let r = call(&a, "click", json!({ "x": 5, "y": 5 })).await;
    ok(&r);
    assert_eq!(human_a.asked.lock().unwrap().len(), 1);
    assert!(human_b.asked.lock().unwrap().is_empty());
    // B's own screenshot and click ask B.
    ok(&call(&b, "screenshot", json!({})).await);
    ok(&call(&b, "click", json!({ "x": 6, "y": 6 })).await);
    assert_eq!(human_a.asked.lock().unwrap().len(), 1);
    assert_eq!(human_b.asked.lock().unwrap().len(), 1);

    // One Esc (the overlay is up after the clicks) stops both clients.
    fake.overlay().press_escape();
    for client in [&a, &b] {
        let r = call(client, "click", json!({ "x": 5, "y": 5 })).await;
        assert_eq!(code(&r), "STOPPED_BY_HUMAN", "{:?}", r.content);
    }
    a.cancel().await.ok();
    b.cancel().await.ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn argument_errors_name_the_field_and_list_the_parameters() {
    let engine = Arc::new(Engine::new(desktop().desktop(), EngineConfig::default()));
    let a = connect(engine, Human::default()).await;
    let r = call(&a, "click", json!({ "x": "ten", "y": 1 })).await;
    assert_eq!(code(&r), "INVALID_ARGUMENT");
    let s = r.structured_content.as_ref().unwrap();
    assert_eq!(
        s["error"]["message"],
        "x: expected a number, got the string \"ten\""
    );
    let hint = s["error"]["hint"].as_str().unwrap();
    assert!(
        hint.contains("Parameters of click:") && hint.contains("screenshot_id"),
        "{hint}"
    );
    let r = call(&a, "screenshot", json!({ "bogus": 1 })).await;
    assert_eq!(code(&r), "INVALID_ARGUMENT");
    let message = r.structured_content.as_ref().unwrap()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.starts_with("bogus: unknown field; valid fields:") && message.contains("window_id"),
        "{message}"
    );
    a.cancel().await.ok();
}
