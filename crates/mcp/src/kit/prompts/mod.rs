//! The prompts deskpilot serves, each built from the desktop as it is when the client asks:
//!
//! - `work_in_{skill}`: one per app skill — the skill's text, the app's windows now, and the
//!   tools to start with, taken from what the skill names (its tools, its hotkeys, typing) and
//!   from this server's own tool list (a tool the filter hides is never suggested; each line
//!   carries the tool's own description, so nothing here goes stale when a tool changes);
//! - `work_in`: the same for any app, by name (its skill when it has one);
//! - `inspect_window`: a window's outline (as an embedded `deskpilot://window/{id}/outline`
//!   resource) and its screenshot (an image), with tokens and points taken from them;
//! - `inspect_screen`: the screen or one monitor, and the windows on it;
//! - `fill_form`: a window and values (JSON or `key=value` lines): each field looked up in the
//!   window's controls now, the tool and arguments that set it, and how to check it took;
//! - `shell_task`: a persistent shell session's directory and the shell tools, for a task.
//!
//! Each prompt is built in its own module (`inspect`, `form`, `shell`, `work`); this one declares
//! them, checks arguments, and holds what they share (the window an argument names, the
//! tool suggestions).
//!
//! Arguments are declared with descriptions and `required`; [`argument_data`] tells
//! `completion/complete` what each holds. An unknown prompt, an unknown argument or a missing
//! required one is invalid params naming it; so is a window, monitor or session that does not
//! exist. Desktop reads run on the blocking pool with the request deadline. Nothing here acts
//! on the desktop: a prompt only reads.

mod form;
mod inspect;
pub(crate) mod shell;
mod work;

use std::collections::HashMap;

use deskpilot_engine::{Error, Session, WindowRef};
use deskpilot_skills::Skill;
use deskpilot_types::{ErrorCode, WindowId, WindowInfo};
use rmcp::model::{
    CacheScope, ContentBlock, GetPromptRequestParams, GetPromptResponse, JsonObject,
    ListPromptsResult, Prompt, PromptArgument, PromptMessage,
};
use rmcp::{ErrorData, ServerHandler as _};
use serde_json::Value;

use super::render;
use super::resources::{outline_uri, screenshot_uri, skill_uri};
use super::server::{ProfileSpec, Server};

/// The name of an app skill's prompt: this, then the skill's id.
const SKILL_PREFIX: &str = "work_in_";

/// How long a client may keep `prompts/list`: skills change it (and a listener hears
/// `notifications/prompts/list_changed`); a client that does not listen asks again soon.
const LIST_TTL_MS: u64 = 10_000;

/// At most this many windows are listed in a prompt.
const MAX_WINDOWS: usize = 30;

/// What a prompt argument holds, so that `completion/complete` knows what to offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Data {
    /// A window title (or id).
    Window,
    /// `summary` or `tree`.
    Detail,
    /// A monitor index.
    Monitor,
    /// A button of the window named by the `window` argument.
    Button,
    /// A shell session name.
    ShellSession,
    /// An app: a skill's, a running one's or an installed one's name.
    App,
    /// Free text: nothing to complete.
    Free,
}

/// One declared argument.
#[derive(Debug)]
struct Arg {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    required: bool,
    data: Data,
}

impl Arg {
    fn declared(&self) -> PromptArgument {
        PromptArgument::new(self.name)
            .with_title(self.title)
            .with_description(self.description)
            .with_required(self.required)
    }
}

const WINDOW: Arg = Arg {
    name: "window",
    title: "Window",
    description: "The window: its title (completion lists the open windows), a part of it, or its id from list_windows.",
    required: true,
    data: Data::Window,
};

const TASK: Arg = Arg {
    name: "task",
    title: "Task",
    description: "What to get done there (optional).",
    required: false,
    data: Data::Free,
};

/// The prompts that do not come from a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    InspectWindow,
    InspectScreen,
    FillForm,
    ShellTask,
    WorkIn,
}

#[derive(Debug)]
struct Fixed {
    kind: Kind,
    name: &'static str,
    title: &'static str,
    description: &'static str,
    args: &'static [Arg],
    /// Offered only when this tool is exposed: the prompt is about using it.
    needs: Option<&'static str>,
}

const FIXED: &[Fixed] = &[
    Fixed {
        kind: Kind::InspectWindow,
        name: "inspect_window",
        title: "Inspect a window",
        description: "A window as it is now: its outline (controls, their tokens and centres) and its screenshot, and how to act on them.",
        args: &[
            WINDOW,
            Arg {
                name: "detail",
                title: "Outline detail",
                description: "tree (every named control, indented; the default) or summary (the interactive controls and labels).",
                required: false,
                data: Data::Detail,
            },
        ],
        needs: None,
    },
    Fixed {
        kind: Kind::InspectScreen,
        name: "inspect_screen",
        title: "Inspect the screen",
        description: "The screen or one monitor as it is now: a screenshot and the windows on it, topmost first.",
        args: &[Arg {
            name: "monitor",
            title: "Monitor",
            description: "A monitor index (completion lists them); left out: every monitor.",
            required: false,
            data: Data::Monitor,
        }],
        needs: None,
    },
    Fixed {
        kind: Kind::FillForm,
        name: "fill_form",
        title: "Fill a form",
        description: "Fill a form in a window from given values: each field found among the window's controls now, the tool and arguments that set it, and a check that every value took.",
        args: &[
            WINDOW,
            Arg {
                name: "values",
                title: "Values",
                description: "The values by field label: a JSON object ({\"Name\": \"Ada\", \"Subscribe\": true}) or key=value lines.",
                required: true,
                data: Data::Free,
            },
            Arg {
                name: "submit",
                title: "Submit button",
                description: "The button to press once every value is checked (completion lists the window's buttons); left out: nothing is submitted.",
                required: false,
                data: Data::Button,
            },
        ],
        needs: None,
    },
    Fixed {
        kind: Kind::ShellTask,
        name: "shell_task",
        title: "Shell task",
        description: "Get something done in a persistent shell session: where the session is now, the shell tools, and how to check the result.",
        args: &[
            Arg {
                name: "task",
                title: "Task",
                description: "What to get done: a command, or a goal in words.",
                required: true,
                data: Data::Free,
            },
            Arg {
                name: "session",
                title: "Shell session",
                description: "The session's name (completion lists this client's sessions); default main.",
                required: false,
                data: Data::ShellSession,
            },
        ],
        needs: Some("shell_exec"),
    },
    Fixed {
        kind: Kind::WorkIn,
        name: "work_in",
        title: "Work in an app",
        description: "Work in any app: its skill when there is one, its windows now, and the tools to start with.",
        args: &[
            Arg {
                name: "app",
                title: "App",
                description: "The app: a skill's name, a running app's process or an installed app (completion lists them).",
                required: true,
                data: Data::App,
            },
            TASK,
        ],
        needs: None,
    },
];

impl Fixed {
    fn offered<P: ProfileSpec>(&self, server: &Server<P>) -> bool {
        self.needs.is_none_or(|tool| exposed(server, tool))
    }

    fn prompt(&self) -> Prompt {
        Prompt::new(
            self.name,
            Some(self.description),
            Some(self.args.iter().map(Arg::declared).collect()),
        )
        .with_title(self.title)
    }
}

fn skill_prompt(skill: &Skill) -> Prompt {
    let description = if skill.summary.is_empty() {
        format!(
            "Work in {} with its skill, its windows now and the tools to start with.",
            skill.app
        )
    } else {
        format!(
            "Work in {}: {} (its skill, its windows now and the tools to start with).",
            skill.app, skill.summary
        )
    };
    Prompt::new(
        format!("{SKILL_PREFIX}{}", skill.id),
        Some(description),
        Some(vec![TASK.declared()]),
    )
    .with_title(format!("Work in {}", skill.app))
}

/// A prompt this server offers.
enum Which {
    Fixed(&'static Fixed),
    Skill(Skill),
}

impl Which {
    fn args(&self) -> &'static [Arg] {
        match self {
            Which::Fixed(f) => f.args,
            Which::Skill(_) => std::slice::from_ref(&TASK),
        }
    }
}

fn exposed<P: ProfileSpec>(server: &Server<P>, tool: &str) -> bool {
    server.get_tool(tool).is_some()
}

/// The prompt `name`, or invalid params naming it.
fn which<P: ProfileSpec>(server: &Server<P>, name: &str) -> Result<Which, ErrorData> {
    if let Some(f) = FIXED.iter().find(|f| f.name == name && f.offered(server)) {
        return Ok(Which::Fixed(f));
    }
    if let Some(id) = name.strip_prefix(SKILL_PREFIX)
        && let Some(skill) = server
            .session
            .skills()
            .list()
            .into_iter()
            .find(|s| s.id == id)
    {
        return Ok(Which::Skill(skill));
    }
    Err(ErrorData::invalid_params(
        format!("no prompt named \"{name}\": prompts/list names the prompts there are"),
        None,
    ))
}

/// What the argument `argument` of prompt `prompt` holds; invalid params when the prompt or
/// the argument does not exist.
pub(crate) fn argument_data<P: ProfileSpec>(
    server: &Server<P>,
    prompt: &str,
    argument: &str,
) -> Result<Data, ErrorData> {
    let which = which(server, prompt)?;
    which
        .args()
        .iter()
        .find(|a| a.name == argument)
        .map(|a| a.data)
        .ok_or_else(|| unknown_argument(prompt, argument, which.args()))
}

fn unknown_argument(prompt: &str, argument: &str, args: &[Arg]) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "prompt {prompt} has no argument \"{argument}\"; its arguments: {}",
            args.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
        ),
        None,
    )
}

/// `prompts/list`: the fixed prompts this server's tools serve, then one per app skill.
pub(crate) async fn list<P: ProfileSpec>(
    server: &Server<P>,
) -> Result<ListPromptsResult, ErrorData> {
    let mut prompts: Vec<Prompt> = FIXED
        .iter()
        .filter(|f| f.offered(server))
        .map(Fixed::prompt)
        .collect();
    prompts.extend(server.session.skills().list().iter().map(skill_prompt));
    Ok(ListPromptsResult::with_all_items(prompts)
        .with_ttl_ms(LIST_TTL_MS)
        .with_cache_scope(CacheScope::Private))
}

/// `prompts/get`.
pub(crate) async fn get<P: ProfileSpec>(
    server: &Server<P>,
    request: GetPromptRequestParams,
) -> Result<GetPromptResponse, ErrorData> {
    let which = which(server, &request.name)?;
    let args = Args::check(&request.name, which.args(), request.arguments)?;
    let result = match which {
        Which::Skill(skill) => {
            let app = skill.app.clone();
            work::work_in(server, Some(skill), app, &args).await?
        }
        Which::Fixed(f) => match f.kind {
            Kind::InspectWindow => inspect::window(server, &args).await?,
            Kind::InspectScreen => inspect::screen(server, &args).await?,
            Kind::FillForm => form::fill(server, &args).await?,
            Kind::ShellTask => shell::task(server, &args).await?,
            Kind::WorkIn => {
                let app = args.need("app").to_string();
                let skill = server.session.skills().get(&app);
                work::work_in(server, skill, app, &args).await?
            }
        },
    };
    Ok(result.into())
}

/// The arguments a `prompts/get` gave, checked against the prompt's declaration.
#[derive(Debug, Default)]
struct Args(HashMap<String, String>);

impl Args {
    /// Every given argument is declared and every required one is given (not blank); a
    /// value that is not a string is kept as its JSON text.
    fn check(prompt: &str, declared: &[Arg], given: Option<JsonObject>) -> Result<Args, ErrorData> {
        let mut args = HashMap::new();
        for (name, value) in given.unwrap_or_default() {
            if !declared.iter().any(|a| a.name == name) {
                return Err(unknown_argument(prompt, &name, declared));
            }
            let text = match value {
                Value::String(s) => s,
                Value::Null => continue,
                other => other.to_string(),
            };
            args.insert(name, text);
        }
        for a in declared.iter().filter(|a| a.required) {
            if args.get(a.name).is_none_or(|v| v.trim().is_empty()) {
                return Err(ErrorData::invalid_params(
                    format!(
                        "prompt {prompt} needs the argument \"{}\": {}",
                        a.name, a.description
                    ),
                    None,
                ));
            }
        }
        Ok(Args(args))
    }

    /// The argument `name`, trimmed, when given and not blank.
    fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
    }

    /// A required argument ([`Args::check`] made sure it is there).
    fn need(&self, name: &str) -> &str {
        self.get(name).unwrap_or_default()
    }
}

/// An engine failure while building a prompt: invalid params when an argument named something
/// that is not there, else an internal error; both carry the code and message.
fn failed(argument: &str, e: Error) -> ErrorData {
    let message = format!("{argument}: {}: {e}", e.code());
    match e.code() {
        ErrorCode::InvalidArgument | ErrorCode::WindowNotFound | ErrorCode::AmbiguousWindow => {
            ErrorData::invalid_params(message, None)
        }
        _ => ErrorData::internal_error(message, None),
    }
}

/// The window `arg` names: an id (`0x1a00003` or decimal) of a window that is there, else the
/// window titled exactly that (case-insensitive; several so titled are ambiguous), else the
/// one window whose title or process contains it.
pub(crate) fn resolve_window(session: &Session, arg: &str) -> Result<WindowInfo, Error> {
    let arg = arg.trim();
    let windows = session.list_windows(&Default::default())?;
    // An id as the tools take it (`0x1a00003` or decimal).
    let id = super::args::window_id(Value::String(arg.to_string())).ok();
    if let Some(w) = id.and_then(|id| windows.iter().find(|w| w.id == WindowId(id))) {
        return Ok(w.clone());
    }
    let folded = arg.to_lowercase();
    let exact: Vec<&WindowInfo> = windows
        .iter()
        .filter(|w| w.title.trim().to_lowercase() == folded)
        .collect();
    match exact.as_slice() {
        [one] => Ok((*one).clone()),
        [] => session.resolve_window(&WindowRef::TitleMatch(arg.to_string())),
        many => Err(Error::AmbiguousWindow {
            needle: arg.to_string(),
            candidates: many
                .iter()
                .map(|w| format!("{} {}", w.id, w.label()))
                .collect(),
        }),
    }
}

/// How a prompt suggests a tool: `- name: why — the tool's own description`, only when this
/// server exposes the tool.
struct Toolbox<'a, P: ProfileSpec> {
    server: &'a Server<P>,
    lines: Vec<String>,
    named: Vec<String>,
}

impl<'a, P: ProfileSpec> Toolbox<'a, P> {
    fn new(server: &'a Server<P>) -> Self {
        Toolbox {
            server,
            lines: Vec::new(),
            named: Vec::new(),
        }
    }

    fn has(&self, tool: &str) -> bool {
        exposed(self.server, tool)
    }

    /// Suggests `tool` for `why` (once; nothing when the tool is not exposed).
    fn add(&mut self, tool: &str, why: impl AsRef<str>) -> &mut Self {
        if self.named.iter().any(|n| n == tool) {
            return self;
        }
        let Some(t) = self.server.get_tool(tool) else {
            return self;
        };
        let description = t
            .description
            .as_deref()
            .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
            .unwrap_or_default();
        self.named.push(tool.to_string());
        self.lines.push(if description.is_empty() {
            format!("- {tool}: {}", why.as_ref())
        } else {
            format!("- {tool}: {} — {description}", why.as_ref())
        });
        self
    }

    fn render(&self) -> String {
        self.lines.join("\n")
    }
}

/// `{"a":1}` as one line of JSON.
fn call_args(v: Value) -> String {
    v.to_string()
}

fn window_line(w: &WindowInfo) -> String {
    let flags = render::state_flags(&w.state, "active");
    format!(
        "\"{}\" — id {}, {} (pid {}), {}x{} at ({}, {}){}",
        w.title,
        w.id,
        w.process.as_deref().unwrap_or("?"),
        w.pid.map_or("?".to_string(), |p| p.to_string()),
        w.frame.width,
        w.frame.height,
        w.frame.x,
        w.frame.y,
        if flags.is_empty() {
            String::new()
        } else {
            format!(", {}", flags.join(", "))
        }
    )
}

fn user_text(text: String) -> PromptMessage {
    PromptMessage::new_text(rmcp::model::Role::User, text)
}

fn user(content: ContentBlock) -> PromptMessage {
    PromptMessage::new(rmcp::model::Role::User, content)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::sync::Arc;

    use deskpilot_backend::FakeDesktop;
    use deskpilot_backend::fake::{FakeWindow, element, tree};
    use deskpilot_engine::{Engine, EngineConfig};
    use deskpilot_types::{Rect, Role};
    use rmcp::model::{GetPromptResult, ResourceContents};
    use serde_json::json;

    use super::*;
    use crate::kit::ToolFilter;
    use crate::kit::server::ServerIdentity;
    use crate::profiles::deskpilot::DeskpilotServer;

    /// A desktop with one form window, "Sign up": an Edit "Name", a checked CheckBox
    /// "Subscribe" and a Button "Save".
    pub(crate) fn form_desktop() -> (FakeDesktop, WindowId) {
        let fake = FakeDesktop::new(400, 300);
        let w = fake.add_window(FakeWindow {
            pid: 7,
            ..FakeWindow::new("Sign up", Rect::new(0, 0, 400, 300))
        });
        fake.set_tree(
            w,
            tree([
                element(Role::Window, "Sign up").bounds(Rect::new(0, 0, 400, 300)),
                element(Role::Edit, "Name")
                    .child_of(0, 1)
                    .bounds(Rect::new(10, 10, 200, 24))
                    .value("")
                    .states(|s| s.editable = true),
                element(Role::CheckBox, "Subscribe")
                    .child_of(0, 1)
                    .bounds(Rect::new(10, 50, 120, 24))
                    .actions(&["click"])
                    .states(|s| s.checked = true),
                element(Role::Button, "Save")
                    .child_of(0, 1)
                    .bounds(Rect::new(10, 90, 80, 30))
                    .actions(&["click"]),
            ]),
        );
        (fake, w)
    }

    /// A `deskpilot` server over `fake` exposing what `filter` allows, with no user skills.
    pub(crate) fn server(fake: &FakeDesktop, filter: &ToolFilter) -> DeskpilotServer {
        let mut config = EngineConfig::default();
        config.skills.library.dir = Some(std::path::PathBuf::from(
            "/nonexistent/deskpilot-prompt-tests",
        ));
        DeskpilotServer::new(
            Arc::new(Engine::new(fake.desktop(), config)),
            ServerIdentity {
                name: "deskpilot".into(),
                version: "test".into(),
            },
            filter,
        )
    }

    async fn prompt(
        server: &DeskpilotServer,
        name: &str,
        args: Value,
    ) -> Result<GetPromptResult, ErrorData> {
        let mut request = GetPromptRequestParams::new(name);
        if let Value::Object(map) = args {
            request = request.with_arguments(map);
        }
        match get(server, request).await? {
            GetPromptResponse::Complete(r) => Ok(r),
            other => panic!("{other:?}"),
        }
    }

    fn words(r: &GetPromptResult) -> String {
        r.messages
            .iter()
            .filter_map(|m| m.content.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn refused(r: Result<GetPromptResult, ErrorData>) -> String {
        let e = r.expect_err("invalid params");
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS, "{e:?}");
        e.message.to_string()
    }

    #[tokio::test]
    async fn the_list_has_the_fixed_prompts_and_one_per_skill_and_follows_the_filter() {
        let (fake, _) = form_desktop();
        let all = list(&server(&fake, &ToolFilter::default())).await.unwrap();
        let names: Vec<&str> = all.prompts.iter().map(|p| p.name.as_str()).collect();
        for want in [
            "inspect_window",
            "inspect_screen",
            "fill_form",
            "shell_task",
            "work_in",
            "work_in_mousepad",
            "work_in_libreofficecalc",
        ] {
            assert!(names.contains(&want), "{want} not in {names:?}");
        }
        let s = server(&fake, &ToolFilter::default());
        assert_eq!(names.len(), FIXED.len() + s.session.skills().list().len());
        assert!(all.ttl_ms.is_some() && all.cache_scope.is_some());
        let fill = all.prompts.iter().find(|p| p.name == "fill_form").unwrap();
        let required: Vec<(&str, Option<bool>)> = fill
            .arguments
            .iter()
            .flatten()
            .map(|a| (a.name.as_str(), a.required))
            .collect();
        assert_eq!(
            required,
            [
                ("window", Some(true)),
                ("values", Some(true)),
                ("submit", Some(false))
            ]
        );
        // Without the shell tools there is no shell prompt.
        let trimmed = list(&server(&fake, &ToolFilter::new(None, Some("shell"))))
            .await
            .unwrap();
        assert!(!trimmed.prompts.iter().any(|p| p.name == "shell_task"));
    }

    #[tokio::test]
    async fn unknown_prompts_and_arguments_and_missing_ones_are_named() {
        let (fake, _) = form_desktop();
        let s = server(&fake, &ToolFilter::default());
        let m = refused(prompt(&s, "nope", json!({})).await);
        assert!(m.contains("\"nope\""), "{m}");
        let m = refused(prompt(&s, "fill_form", json!({ "window": "Sign up" })).await);
        assert!(m.contains("\"values\"") && m.contains("fill_form"), "{m}");
        let m = refused(prompt(&s, "fill_form", json!({ "window": " ", "values": "a=b" })).await);
        assert!(m.contains("\"window\""), "{m}");
        let m = refused(
            prompt(
                &s,
                "inspect_window",
                json!({ "window": "Sign up", "colour": "red" }),
            )
            .await,
        );
        assert!(
            m.contains("\"colour\"") && m.contains("window, detail"),
            "{m}"
        );
        let m = refused(
            prompt(
                &s,
                "inspect_window",
                json!({ "window": "Sign up", "detail": "all" }),
            )
            .await,
        );
        assert!(m.starts_with("detail:"), "{m}");
        let m = refused(prompt(&s, "inspect_window", json!({ "window": "Nowhere" })).await);
        assert!(
            m.starts_with("window: WINDOW_NOT_FOUND") && m.contains("Nowhere"),
            "{m}"
        );
        let m = refused(
            prompt(
                &s,
                "fill_form",
                json!({ "window": "Sign up", "values": "not a pair" }),
            )
            .await,
        );
        assert!(m.starts_with("values:"), "{m}");
        let m = refused(prompt(&s, "inspect_screen", json!({ "monitor": "left" })).await);
        assert!(m.starts_with("monitor:"), "{m}");
        let m = refused(prompt(&s, "inspect_screen", json!({ "monitor": "7" })).await);
        assert!(m.contains("no monitor 7"), "{m}");
        let m = refused(prompt(&s, "shell_task", json!({ "task": "x", "session": "a b" })).await);
        assert!(m.starts_with("session:"), "{m}");
    }

    #[tokio::test]
    async fn the_form_prompt_gives_each_field_its_step_from_the_window_now() {
        let (fake, w) = form_desktop();
        let s = server(&fake, &ToolFilter::default());
        let got = prompt(
            &s,
            "fill_form",
            json!({
                "window": "sign UP",
                "values": "{\"Name\": \"Ada\", \"Subscribe\": false, \"Phone\": \"123\"}",
                "submit": "Save"
            }),
        )
        .await
        .unwrap();
        let text = words(&got);
        let at = |s: &str| {
            text.find(s)
                .unwrap_or_else(|| panic!("{s:?} not in:\n{text}"))
        };
        // In the order given, each with what sets it.
        assert!(at("1. \"Name\" = \"Ada\"") < at("2. \"Subscribe\" = false"));
        assert!(at("2. \"Subscribe\" = false") < at("3. \"Phone\" = \"123\""));
        at(&format!("window \"Sign up\" — id {w}"));
        at("→ set_value {\"element\":\"s1:1\",\"value\":\"Ada\"}");
        at("→ now checked: click {\"element\":\"s1:2\"} to uncheck it");
        at("Not found among the window's controls or text");
        at("press \"Save\": click {\"element\":\"s1:3\"} (Button \"Save\")");
        // Tools named with their own descriptions.
        let described = s.get_tool("set_value").unwrap().description.unwrap();
        at(&format!(
            "- set_value: set a field's text or number and read it back — {described}"
        ));
        // The values as lines; already so: leave it. No submit: none.
        let got = prompt(
            &s,
            "fill_form",
            json!({ "window": format!("{w}"), "values": "Subscribe = yes" }),
        )
        .await
        .unwrap();
        let text = words(&got);
        assert!(text.contains("already checked: leave it"), "{text}");
        assert!(text.contains("Do not submit"), "{text}");
        // Without set_value, the field is clicked and typed into.
        let s = server(&fake, &ToolFilter::new(None, Some("set_value")));
        let got = prompt(
            &s,
            "fill_form",
            json!({ "window": "Sign up", "values": "Name=Ada" }),
        )
        .await
        .unwrap();
        let text = words(&got);
        assert!(
            text.contains("→ click {\"element\":\"s1:1\"}, press_key ctrl+a, then type_text {\"text\":\"Ada\"}")
                && !text.contains("set_value"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn the_inspect_prompt_embeds_the_outline_and_the_screenshot() {
        let (fake, w) = form_desktop();
        let s = server(&fake, &ToolFilter::default());
        let got = prompt(&s, "inspect_window", json!({ "window": "Sign" }))
            .await
            .unwrap();
        assert_eq!(got.messages.len(), 3);
        let text = words(&got);
        assert!(text.contains("Inspect the window \"Sign up\""), "{text}");
        // The click example is the outline's button.
        assert!(
            text.contains("{\"element\":\"s1:3\"} for Button \"Save\""),
            "{text}"
        );
        let ContentBlock::Resource(r) = &got.messages[1].content else {
            panic!("{:?}", got.messages[1])
        };
        let ResourceContents::TextResourceContents { uri, text, .. } = &r.resource else {
            panic!("{r:?}")
        };
        assert_eq!(uri, &format!("deskpilot://window/{w}/outline"));
        assert!(
            text.contains("Edit \"Name\"") && text.contains("Button \"Save\""),
            "{text}"
        );
        let image = got.messages[2].content.as_image().expect("an image");
        assert!(image.mime_type.starts_with("image/"));
        // The image stays readable by id.
        let id: u64 = words(&got)
            .split("screenshot ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("a screenshot id");
        assert!(s.session.keeps_screenshot(id));
    }

    #[tokio::test]
    async fn a_skill_prompt_suggests_the_tools_its_text_names() {
        let (fake, _) = form_desktop();
        let s = server(&fake, &ToolFilter::default());
        let got = prompt(&s, "work_in_gimp", json!({ "task": "crop it" }))
            .await
            .unwrap();
        let text = words(&got);
        for want in [
            "Work in GIMP.\nTask: crop it",
            "It has no window open now.",
            "Its skill (builtin; resource deskpilot://skill/gimp):",
            "- find_elements: named in the skill",
            "- set_value: named in the skill",
            "- press_key: the skill's keys (shift+C, shift+T",
            "- app_skill: add what you learn",
        ] {
            assert!(text.contains(want), "{want:?} not in:\n{text}");
        }
        // A hidden tool is never suggested.
        let s = server(
            &fake,
            &ToolFilter::new(None, Some("find_elements,app_skill")),
        );
        let text = words(&prompt(&s, "work_in_gimp", json!({})).await.unwrap());
        assert!(
            !text.contains("- find_elements") && !text.contains("- app_skill"),
            "{text}"
        );
        // Any app by name: its windows now, no skill.
        let text = words(
            &prompt(&s, "work_in", json!({ "app": "Sign up" }))
                .await
                .unwrap(),
        );
        assert!(
            text.contains("Its windows now") && text.contains("There is no skill for Sign up"),
            "{text}"
        );
    }
}
