//! `app_skill` (dsh-computer-use's actions list, get, save, append, remove), shared by every profile
//! that offers it: reads come straight from the library; writes are mutating actions through
//! the engine's pipeline. Declared once, on every profile's [`Server`]; a profile mounts it
//! with [`tool`] and its own description.
//!
//! A write (or a refresh that finds the files changed) is told to the endpoint's clients
//! through the [`Hub`]: `notifications/resources/updated` for the skill's
//! `deskpilot://skill/{id}`, and — when a skill came, went or was replaced — the prompts and
//! resources lists changed (each skill is a prompt and a resource).

use std::sync::Arc;
use std::time::Duration;

use deskpilot_engine::{Check, Error, Session, SkillWrite, VerifyTarget, WindowRef};
use deskpilot_skills::Skill;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::hub::Hub;
use super::report::{self, Body};
use super::server::{ProfileSpec, Server, describe};
use super::{Parameters, Wording, render};

/// `app_skill` for profile `P`'s server, described as `description`.
pub(crate) fn tool<P: ProfileSpec>(description: &'static str) -> ToolRouter<Server<P>> {
    let mut router = Server::<P>::skill_router();
    describe(&mut router, "app_skill", description);
    router
}

#[tool_router(router = skill_router, vis = "pub(crate)")]
impl<P: ProfileSpec> Server<P> {
    /// Per-app recipes: list, get, save, append, remove.
    #[tool(
        name = "app_skill",
        annotations(
            title = "App skills",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn app_skill(&self, Parameters(a): Parameters<AppSkillArgs>) -> CallToolResult {
        app_skill(
            self.session(),
            self.hub.clone(),
            P::wording(),
            self.request_timeout(),
            a,
        )
        .await
    }
}

/// dsh-computer-use's five `app_skill` actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SkillAction {
    List,
    Get,
    Save,
    Append,
    Remove,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppSkillArgs {
    /// list, get, save, append or remove.
    pub action: SkillAction,
    /// App or exe (Excel); get without it: the last screenshot's app.
    #[serde(default)]
    pub app: String,
    /// save/append: markdown, ≤4000 chars.
    #[serde(default)]
    pub content: String,
    /// save: one line for the catalog and screenshot hint.
    #[serde(default)]
    pub summary: String,
    /// save: more process/window names that select it.
    #[serde(default, rename = "match")]
    pub matches: Vec<String>,
    /// save: replace an existing user skill.
    #[serde(default)]
    pub overwrite: bool,
    /// Re-read skill directories first.
    #[serde(default)]
    pub refresh: bool,
}

fn skill_json(s: &Skill, with_content: bool) -> serde_json::Value {
    let mut v = json!({
        "app": s.app,
        "id": s.id,
        "match": s.matches,
        "summary": s.summary,
        "chars": s.body.chars().count(),
        "source": s.source.as_str(),
        "path": s.path,
    });
    if with_content {
        v["content"] = json!(s.body);
        v["truncated"] = json!(s.truncated);
    }
    v
}

fn need_app(action: &str, app: &str) -> Result<(), Error> {
    if app.trim().is_empty() {
        return Err(Error::InvalidArgument {
            message: format!(
                "app: {action} needs the app's name (e.g. \"mousepad\", \"EXCEL.EXE\")"
            ),
        });
    }
    Ok(())
}

/// Tells the endpoint's clients what `action` wrote: the skill's resource changed and, unless
/// it only appended to a skill, the lists of prompts and resources.
fn written(hub: &Hub, action: SkillAction, o: &SkillWrite) {
    hub.resource_updated(&super::resources::skill_uri(&o.written.id));
    if action != SkillAction::Append {
        hub.prompts_list_changed();
        hub.resources_list_changed();
    }
}

/// Re-reads the skill directories and tells the endpoint's clients what the files changed.
fn refresh(session: &Session, hub: &Hub) -> Result<(), Error> {
    let before = session.skills().list();
    let result = session.skills().refresh().map_err(Error::from);
    let after = session.skills().list();
    if before != after {
        let ids = before.iter().chain(&after).map(|s| s.id.as_str());
        let mut told: Vec<&str> = Vec::new();
        for id in ids {
            let was = before.iter().find(|s| s.id == id);
            let is = after.iter().find(|s| s.id == id);
            if was != is && !told.contains(&id) {
                told.push(id);
                hub.resource_updated(&super::resources::skill_uri(id));
            }
        }
        hub.prompts_list_changed();
        hub.resources_list_changed();
    }
    result
}

/// Runs one `app_skill` call.
pub(crate) async fn app_skill(
    session: Arc<Session>,
    hub: Arc<Hub>,
    wording: &dyn Wording,
    timeout: Duration,
    a: AppSkillArgs,
) -> CallToolResult {
    if a.refresh
        && let Err(e) = refresh(&session, &hub)
    {
        return render::error(&e, wording);
    }
    let action = a.action;
    let (what, verb) = match a.action {
        SkillAction::List => return list(&session),
        SkillAction::Get => return get(session, wording, timeout, a.app).await,
        SkillAction::Save => ("app_skill save", "save"),
        SkillAction::Append => ("app_skill append", "append"),
        SkillAction::Remove => ("app_skill remove", "remove"),
    };
    if let Err(e) = need_app(verb, &a.app) {
        return render::error(&e, wording);
    }
    report::act(
        session,
        wording,
        report::Step {
            what,
            timeout,
            check: Check::default(),
            target: VerifyTarget::Screen,
        },
        move |s| match a.action {
            SkillAction::Save => s.skill_save(&a.app, &a.content, &a.summary, &a.matches, a.overwrite),
            SkillAction::Append => s.skill_append(&a.app, &a.content),
            _ => s.skill_remove(&a.app),
        },
        move |o| {
            written(&hub, action, o);
            let w = &o.written;
            let text = match o.action {
                "remove" => format!(
                    "Removed the user skill for \"{}\" ({}); a built-in of the same app, if any, applies again.",
                    w.app,
                    w.path.display()
                ),
                verb => format!(
                    "{} the skill for \"{}\" (id {}, {} characters) in {}; the next screenshot of the app carries its hint.",
                    if verb == "save" { "Saved" } else { "Appended to" },
                    w.app,
                    w.id,
                    w.chars,
                    w.path.display()
                ),
            };
            Body::new(
                text,
                json!({ "action": o.action, "app": w.app, "id": w.id, "path": w.path, "chars": w.chars }),
            )
        },
    )
    .await
}

fn list(session: &Session) -> CallToolResult {
    let library = session.skills();
    if !library.enabled() {
        let mut r = CallToolResult::success(vec![ContentBlock::text(
            "App skills are switched off in this deployment (skills: false).",
        )]);
        r.structured_content = Some(json!({ "enabled": false, "count": 0, "skills": [] }));
        return r;
    }
    let all = library.list();
    let mut text = format!(
        "{} app skills (built-ins ship in deskpilot; user layer: {}). Get one with app_skill get before driving that app.\n",
        all.len(),
        library
            .user_dir()
            .map_or("none".to_string(), |d| d.display().to_string())
    );
    for s in &all {
        text.push_str(&format!(
            "- {} [{}]{}\n",
            s.app,
            s.source.as_str(),
            if s.summary.is_empty() {
                String::new()
            } else {
                format!(": {}", s.summary)
            }
        ));
    }
    let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
    r.structured_content = Some(json!({
        "enabled": true,
        "count": all.len(),
        "skills": all.iter().map(|s| skill_json(s, false)).collect::<Vec<_>>(),
        "user_dir": library.user_dir(),
    }));
    r
}

async fn get(
    session: Arc<Session>,
    wording: &dyn Wording,
    timeout: Duration,
    app: String,
) -> CallToolResult {
    let found = render::blocking(timeout, "app_skill get", move || {
        if !app.trim().is_empty() {
            return Ok((app.clone(), session.skills().get(&app)));
        }
        // No app: the window of the last screenshot, else the one in front.
        let w = session.resolve_window(&WindowRef::Current)?;
        let skill = session
            .skills()
            .for_window(w.process.as_deref(), &w.class, &w.title);
        Ok::<_, Error>((w.label(), skill))
    })
    .await;
    match found {
        Err(e) => render::error(&e, wording),
        Ok((asked, None)) => {
            let mut r = CallToolResult::success(vec![ContentBlock::text(format!(
                "No skill for {asked}. app_skill list shows the skills there are; save one once you know the app's hotkeys."
            ))]);
            r.structured_content = Some(json!({ "found": false, "app": asked }));
            r
        }
        Ok((_, Some(s))) => {
            let text = format!(
                "Skill for {} ({}{}):\n{}",
                s.app,
                s.source.as_str(),
                if s.truncated { ", truncated" } else { "" },
                s.body
            );
            let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
            let mut v = skill_json(&s, true);
            v["found"] = json!(true);
            r.structured_content = Some(v);
            r
        }
    }
}
