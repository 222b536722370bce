//! Prompts and completions of the `deskpilot` profile through rmcp's client, against our GTK
//! fixture: the inspect prompt carries the window's outline (naming its controls) and a
//! screenshot that decodes; the form prompt's instructions, followed as written, fill the
//! fixture; a saved skill becomes a prompt (and a 2026-07-28 client listening for prompt
//! list changes is told, then again when it is removed); completion
//! offers the open window's title, its buttons, the monitors and the shell sessions; unknown
//! prompts and missing arguments are invalid params naming them.

use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{
    ArgumentInfo, CallToolRequestParams, CompleteRequestParams, CompletionContext, ContentBlock,
    GetPromptRequestParams, GetPromptResult, Prompt, ProtocolVersion, Reference, ResourceContents,
    ServerNotification, SubscriptionFilter,
};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt as _, Peer};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceError};
use serde_json::{Value, json};

use crate::elements::Fixture;
use crate::harness::{self, ok, serve, wait_for, window_of};

async fn get(
    client: &Peer<RoleClient>,
    name: &str,
    args: Value,
) -> Result<GetPromptResult, ServiceError> {
    let mut params = GetPromptRequestParams::new(name);
    if let Value::Object(map) = args {
        params = params.with_arguments(map);
    }
    client.get_prompt(params).await
}

/// The text blocks of a prompt, joined.
fn prompt_text(got: &GetPromptResult) -> String {
    got.messages
        .iter()
        .filter_map(|m| m.content.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The message of a JSON-RPC error, after checking it is invalid params (-32602).
fn invalid_params(r: Result<GetPromptResult, ServiceError>) -> String {
    match r {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code.0, -32602, "{e:?}");
            e.message.to_string()
        }
        other => panic!("expected invalid params, got {other:?}"),
    }
}

async fn complete(
    client: &Peer<RoleClient>,
    r#ref: Reference,
    argument: &str,
    value: &str,
    context: &[(&str, &str)],
) -> rmcp::model::CompletionInfo {
    let mut params = CompleteRequestParams::new(r#ref, ArgumentInfo::new(argument, value));
    if !context.is_empty() {
        params = params.with_context(CompletionContext::with_arguments(
            context
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ));
    }
    client
        .complete(params)
        .await
        .unwrap_or_else(|e| panic!("completion/complete {argument}={value:?}: {e}"))
        .completion
}

fn prompt<'a>(prompts: &'a [Prompt], name: &str) -> &'a Prompt {
    prompts
        .iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no prompt {name} in {prompts:#?}"))
}

/// Waits for the next notice on `stream` and checks it says the prompt list changed.
async fn told(stream: &mut rmcp::service::Subscription) {
    let notice = tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("a prompts list_changed notice within 5 s");
    assert!(
        matches!(
            notice,
            Ok(Some(ServerNotification::PromptListChangedNotification(_)))
        ),
        "{notice:?}"
    );
}

/// `(name, required)` of each declared argument.
fn arguments(p: &Prompt) -> Vec<(String, bool)> {
    p.arguments
        .iter()
        .flatten()
        .map(|a| (a.name.clone(), a.required == Some(true)))
        .collect()
}

/// The arguments the text gives `tool` at or after the first line holding `line_has`: the
/// first JSON object after the tool's name on the first line that names it.
fn instruction(text: &str, line_has: &str, tool: &str) -> Value {
    let line = text
        .lines()
        .skip_while(|l| !l.contains(line_has))
        .find(|l| l.find(tool).is_some_and(|at| l[at..].contains('{')))
        .unwrap_or_else(|| panic!("no {tool} step after {line_has:?} in:\n{text}"));
    let at = line.find(tool).unwrap();
    let start = at + line[at..].find('{').unwrap();
    let mut de = serde_json::Deserializer::from_str(&line[start..]).into_iter::<Value>();
    de.next().unwrap().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn prompts_are_built_from_the_desktop_and_their_arguments_complete() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let title = "deskpilot prompts fixture";
    let skills =
        std::env::temp_dir().join(format!("deskpilot-prompts-inspect-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&skills);
    let server = serve(
        Some(desktop),
        &[],
        &[("DESKPILOT_SKILLS_DIR", skills.to_str().unwrap())],
    )
    .await;
    let fixture = Fixture::start(desktop, title);
    let window = window_of(&server, fixture.pid()).await;
    let id = window["id"].as_u64().unwrap();

    // The list: the fixed prompts with their arguments, and one per built-in skill.
    let prompts = server.client.list_all_prompts().await.unwrap();
    assert_eq!(
        arguments(prompt(&prompts, "inspect_window")),
        [("window".to_string(), true), ("detail".to_string(), false)]
    );
    assert_eq!(
        arguments(prompt(&prompts, "fill_form")),
        [
            ("window".to_string(), true),
            ("values".to_string(), true),
            ("submit".to_string(), false)
        ]
    );
    let mousepad = prompt(&prompts, "work_in_mousepad");
    assert_eq!(mousepad.title.as_deref(), Some("Work in Mousepad"));
    assert!(prompts.iter().all(|p| {
        p.description.as_deref().is_some_and(|d| !d.is_empty())
            && p.arguments
                .iter()
                .flatten()
                .all(|a| a.description.is_some())
    }));

    // Completion of the window argument from a prefix in another case: the open window.
    let window_ref = Reference::for_prompt("inspect_window");
    let got = complete(
        &server.client,
        window_ref.clone(),
        "window",
        "DESKPILOT PROMPTS",
        &[],
    )
    .await;
    assert!(
        got.values.iter().any(|v| v == title),
        "{title} not among {got:?}"
    );
    assert!(
        got.total.is_some() && got.has_more == Some(false),
        "{got:?}"
    );
    let none = complete(
        &server.client,
        window_ref.clone(),
        "window",
        "no such window zz",
        &[],
    )
    .await;
    assert!(none.values.is_empty(), "{none:?}");

    // inspect_window: the outline names the fixture's controls, the screenshot decodes.
    let got = get(&server.client, "inspect_window", json!({ "window": title }))
        .await
        .unwrap();
    let words = prompt_text(&got);
    assert!(words.contains(title), "{words}");
    let outline = got
        .messages
        .iter()
        .find_map(|m| match &m.content {
            ContentBlock::Resource(r) => match &r.resource {
                ResourceContents::TextResourceContents { uri, text, .. } => {
                    Some((uri.clone(), text.clone()))
                }
                _ => None,
            },
            _ => None,
        })
        .expect("an embedded outline");
    assert_eq!(outline.0, format!("deskpilot://window/{id:#x}/outline"));
    assert!(
        outline.1.contains("Button \"Apply\"") && outline.1.contains("CheckBox \"Enable logging\""),
        "{}",
        outline.1
    );
    let image = got
        .messages
        .iter()
        .find_map(|m| m.content.as_image())
        .expect("an image");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .unwrap();
    assert_eq!(image.mime_type, "image/jpeg");
    let mut decoder = jpeg_decoder::Decoder::new(std::io::Cursor::new(bytes));
    decoder.decode().expect("the screenshot decodes");
    let info = decoder.info().unwrap();
    let frame = &window["frame"];
    assert!(
        info.width > 100
            && info.height > 100
            && u64::from(info.width) <= frame["width"].as_u64().unwrap(),
        "{}x{} for a {frame} window",
        info.width,
        info.height
    );
    // The prompt's click example is a token of the outline.
    let click = instruction(&words, "- click:", "click");
    assert!(
        outline.1.contains(click["element"].as_str().unwrap()),
        "{click} not in the outline"
    );

    // fill_form: the prompt's steps, followed as written, fill the fixture.
    let completed = complete(
        &server.client,
        Reference::for_prompt("fill_form"),
        "submit",
        "app",
        &[("window", title)],
    )
    .await;
    assert_eq!(completed.values, ["Apply"], "{completed:?}");
    let got = get(
        &server.client,
        "fill_form",
        json!({ "window": title, "values": "{\"Name\": \"Ada Lovelace\", \"Enable logging\": true}", "submit": "Apply" }),
    )
    .await
    .unwrap();
    let steps = prompt_text(&got);
    let set = instruction(&steps, "\"Name\" = ", "set_value");
    assert_eq!(set["value"], "Ada Lovelace", "{steps}");
    ok(&server.call("set_value", set).await);
    fixture.saw("changed Name Ada Lovelace").await;
    let toggle = instruction(&steps, "\"Enable logging\" = true", "click");
    ok(&server.call("click", toggle).await);
    fixture.saw("toggled Enable logging on").await;
    assert!(steps.contains("press \"Apply\""), "{steps}");
    let submit = instruction(&steps, "press \"Apply\"", "click");
    ok(&server.call("click", submit).await);
    fixture.saw("clicked Apply").await;
    // The same values as lines, read after the change: nothing left to do.
    let got = get(
        &server.client,
        "fill_form",
        json!({ "window": title, "values": "Enable logging = yes" }),
    )
    .await
    .unwrap();
    let steps = prompt_text(&got);
    assert!(steps.contains("already checked: leave it"), "{steps}");
    assert!(steps.contains("Do not submit"), "{steps}");

    // The other arguments complete from real data.
    let monitors = complete(
        &server.client,
        Reference::for_prompt("inspect_screen"),
        "monitor",
        "",
        &[],
    )
    .await;
    assert_eq!(monitors.values, ["0"], "{monitors:?}");
    let sessions = complete(
        &server.client,
        Reference::for_prompt("shell_task"),
        "session",
        "M",
        &[],
    )
    .await;
    assert_eq!(sessions.values, ["main"], "{sessions:?}");
    let apps = complete(
        &server.client,
        Reference::for_prompt("work_in"),
        "app",
        "mouse",
        &[],
    )
    .await;
    assert!(apps.values.iter().any(|v| v == "Mousepad"), "{apps:?}");
    let skill_ids = complete(
        &server.client,
        Reference::for_resource("deskpilot://skill/{app}"),
        "app",
        "LibreOffice C",
        &[],
    )
    .await;
    assert_eq!(skill_ids.values, ["libreofficecalc"], "{skill_ids:?}");
    let ids = complete(
        &server.client,
        Reference::for_resource("deskpilot://window/{window}/outline"),
        "window",
        "deskpilot prompts",
        &[],
    )
    .await;
    assert_eq!(ids.values, [format!("{id:#x}")], "{ids:?}");

    // Unknown prompts, missing and unknown arguments, windows that are not there.
    let m = invalid_params(get(&server.client, "no_such_prompt", json!({})).await);
    assert!(m.contains("no_such_prompt"), "{m}");
    let m = invalid_params(get(&server.client, "fill_form", json!({ "window": title })).await);
    assert!(m.contains("\"values\""), "{m}");
    let m = invalid_params(
        get(
            &server.client,
            "inspect_window",
            json!({ "window": title, "colour": "red" }),
        )
        .await,
    );
    assert!(m.contains("\"colour\""), "{m}");
    let m = invalid_params(
        get(
            &server.client,
            "inspect_window",
            json!({ "window": "no such window zz" }),
        )
        .await,
    );
    assert!(
        m.contains("window") && m.contains("no such window zz"),
        "{m}"
    );
    let e = server
        .client
        .complete(CompleteRequestParams::new(
            Reference::for_prompt("no_such_prompt"),
            ArgumentInfo::new("x", ""),
        ))
        .await;
    assert!(
        matches!(&e, Err(ServiceError::McpError(e)) if e.code.0 == -32602 && e.message.contains("no_such_prompt")),
        "{e:?}"
    );

    drop(fixture);
    server.finish().await;
    let _ = std::fs::remove_dir_all(&skills);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_saved_skill_is_a_prompt_and_a_listener_is_told() {
    let Some(desktop) = harness::desktop() else {
        return;
    };
    let _guard = harness::exclusive().await;
    let title = "deskpilot skill prompt fixture";
    let skills =
        std::env::temp_dir().join(format!("deskpilot-prompts-skill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&skills);
    // A 2026-07-28 client, which hears of changes on a subscriptions/listen stream.
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_deskpilot"));
    cmd.arg("serve")
        .env("DESKPILOT_MEMORY_DIR", harness::fresh_memory_dir())
        .env("DESKPILOT_SKILLS_DIR", &skills)
        .env_remove("DESKPILOT_CONFIG")
        .env_remove("DESKPILOT_TOOLS")
        .env_remove("DESKPILOT_TOOLS_EXCLUDE")
        .env("XDG_CONFIG_HOME", "/nonexistent/deskpilot-tests");
    for (k, v) in desktop.env() {
        cmd.env(k, v);
    }
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn deskpilot serve");
    let client = ()
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("server/discover over stdio");
    let fixture = Fixture::start(desktop, title);
    let pid = fixture.pid();
    let id = wait_for(Duration::from_secs(30), "the fixture's window", || async {
        let r = client
            .call_tool(
                CallToolRequestParams::new("list_windows").with_arguments(Default::default()),
            )
            .await
            .ok()?;
        ok(&r)["windows"]
            .as_array()?
            .iter()
            .find(|w| w["pid"] == pid)
            .and_then(|w| w["id"].as_u64())
    })
    .await;
    let mut stream = client
        .peer()
        .listen(SubscriptionFilter::builder().prompts_list_changed().build())
        .await
        .expect("subscriptions/listen for prompts");
    // The list as the client caches it before the save.
    let prompts = client.list_all_prompts().await.unwrap();
    let skill_prompt = "work_in_deskpilotskillpromptfixture";
    assert!(!prompts.iter().any(|p| p.name == skill_prompt));

    // A saved skill is a prompt at once, and the listener is told.
    let save = json!({
        "action": "save", "app": title, "summary": "the test fixture",
        "content": "- Find fields with find_elements; apply with ctrl+s."
    });
    let r = client
        .call_tool(
            CallToolRequestParams::new("app_skill")
                .with_arguments(save.as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    ok(&r);
    told(&mut stream).await;
    let prompts = client.list_all_prompts().await.unwrap();
    assert_eq!(
        prompt(&prompts, skill_prompt).title.as_deref(),
        Some(&*format!("Work in {title}"))
    );
    let got = get(
        &client,
        skill_prompt,
        json!({ "task": "apply the settings" }),
    )
    .await
    .unwrap();
    let words = prompt_text(&got);
    for want in [
        "Task: apply the settings",
        "- Find fields with find_elements; apply with ctrl+s.",
        &format!("\"{title}\" — id {id:#x}"),
        "- find_elements: named in the skill",
        "- press_key: the skill's keys (ctrl+s)",
    ] {
        assert!(words.contains(want), "{want:?} not in:\n{words}");
    }
    let skill_ids = complete(
        &client,
        Reference::for_resource("deskpilot://skill/{app}"),
        "app",
        "deskpilot skill",
        &[],
    )
    .await;
    assert_eq!(
        skill_ids.values,
        ["deskpilotskillpromptfixture"],
        "{skill_ids:?}"
    );

    // Removed: the prompt goes, and the listener is told again.
    let remove = json!({ "action": "remove", "app": title });
    ok(&client
        .call_tool(
            CallToolRequestParams::new("app_skill")
                .with_arguments(remove.as_object().unwrap().clone()),
        )
        .await
        .unwrap());
    told(&mut stream).await;
    let prompts = client.list_all_prompts().await.unwrap();
    assert!(!prompts.iter().any(|p| p.name == skill_prompt));
    let m = invalid_params(get(&client, skill_prompt, json!({})).await);
    assert!(m.contains(skill_prompt), "{m}");

    drop(fixture);
    let _ = client.cancel().await;
    let _ = std::fs::remove_dir_all(&skills);
}
