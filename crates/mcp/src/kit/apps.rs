//! `list_apps`: the running apps with their windows, then the installed apps a profile can
//! start. Declared once, on every profile's [`Server`]; a profile that offers it implements
//! [`AppsProfile`] (its description, its `filter` argument, how it lists a running app and
//! names the tool that starts an installed one) and mounts it with [`tool`].

use deskpilot_engine::{AppList, RunningApp};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};

use super::server::{ProfileSpec, Server, describe, describe_param};
use super::{Parameters, render};

/// How a profile words `list_apps`.
#[derive(Debug, Clone, Copy)]
pub struct AppsWording {
    /// The tool's description.
    pub description: &'static str,
    /// Its `filter` argument.
    pub filter: &'static str,
    /// What a timeout or a panic names the call.
    pub label: &'static str,
    /// The line above the running apps, given their count.
    pub running: fn(usize) -> String,
    /// One running app's lines, each starting with a line break.
    pub app: fn(&RunningApp) -> String,
    /// One running app in `structuredContent.running`.
    pub app_json: fn(&RunningApp) -> Value,
    /// The line above the installed apps, given their count (it says how to start one).
    pub installed: fn(usize) -> String,
    /// Whether an installed app's line ends with its command line (` — exec args`).
    pub exec: bool,
}

/// A profile that offers `list_apps`, in its words (public only because the tool's generated
/// items are; the kit is private to the crate).
pub trait AppsProfile: ProfileSpec {
    const APPS: AppsWording;
}

/// `list_apps` for profile `P`'s server, in `P::APPS`' words.
pub(crate) fn tool<P: AppsProfile>() -> ToolRouter<Server<P>> {
    let mut router = Server::<P>::apps_tool_router();
    describe(&mut router, "list_apps", P::APPS.description);
    describe_param(&mut router, "list_apps", "filter", P::APPS.filter);
    router
}

/// `list_apps`' argument.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListAppsArgs {
    /// Only apps whose name, window title or id contains this.
    #[serde(default)]
    pub filter: String,
}

#[tool_router(router = apps_tool_router, vis = "pub(crate)")]
impl<P: AppsProfile> Server<P> {
    /// Running apps with their windows, then installed apps.
    #[tool(
        name = "list_apps",
        annotations(
            title = "List apps",
            read_only_hint = true,
            destructive_hint = false,
            open_world_hint = false
        )
    )]
    pub async fn list_apps(&self, Parameters(a): Parameters<ListAppsArgs>) -> CallToolResult {
        let session = self.session();
        match render::blocking(self.request_timeout(), P::APPS.label, move || {
            session.list_apps()
        })
        .await
        {
            Ok(list) => answer(&list.matching(&a.filter), &P::APPS),
            Err(e) => render::error(&e, P::wording()),
        }
    }
}

/// The text and structured answer for `list`, in `w`'s words.
fn answer(list: &AppList, w: &AppsWording) -> CallToolResult {
    let (running, installed) = (list.running.as_slice(), list.installed.as_slice());
    let mut text = (w.running)(running.len());
    for app in running {
        text.push_str(&(w.app)(app));
    }
    text.push_str(&(w.installed)(installed.len()));
    for i in installed {
        let local: Vec<&str> = i.localized.values().map(String::as_str).collect();
        text.push_str(&format!("\n{}: {}", i.id, i.name));
        if !local.is_empty() {
            text.push_str(&format!(" ({})", local.join(", ")));
        }
        if w.exec {
            text.push_str(&format!(" — {}", i.exec.join(" ")));
        }
    }
    if let Some(e) = &list.catalog_error {
        text.push_str(&format!("\nThe installed apps could not be read: {e}"));
    }
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json!({
        "running": running.iter().map(w.app_json).collect::<Vec<_>>(),
        "installed": installed.iter().map(|i| json!({
            "id": i.id,
            "name": i.name,
            "localized": i.localized,
            "exec": i.exec,
            "icon": i.icon,
            "keywords": i.keywords,
            "source": i.source,
        })).collect::<Vec<_>>(),
        "catalog_error": list.catalog_error,
    }));
    result
}
