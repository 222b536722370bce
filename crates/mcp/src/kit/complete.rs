//! `completion/complete` over real data: the arguments of the prompts ([`super::prompts`]) and
//! the parameters of the resource templates, each completed from what is there now — window
//! titles (ids in URIs), the window's buttons, monitors, this client's shell sessions and
//! screenshots, running, installed and skill apps.
//!
//! A value matches when the typed text is, case-insensitively, a prefix of it or of one of its
//! words (`mouse` finds "Untitled - Mousepad", `pad` does not); prefix matches come first. At most 100 values go back, with `total` and `hasMore`. A desktop read
//! runs on the blocking pool with a short deadline: an app that does not answer leaves the
//! list empty, never the client waiting. An unknown prompt, template or argument is invalid
//! params naming it.

use std::collections::HashMap;
use std::time::Duration;

use deskpilot_engine::{KEPT_SHOTS, Session, TreeRequest, WindowRef};
use deskpilot_types::Role;
use rmcp::ErrorData;
use rmcp::model::{CompleteRequestParams, CompleteResult, CompletionInfo, Reference};

use super::prompts::{self, Data};
use super::render;
use super::server::{ProfileSpec, Server};

/// How many screenshot ids before a client's last one are searched for the ones it keeps.
const SEARCHED_IDS: u64 = 4096;

/// How long a completion may wait for the desktop.
const DEADLINE: Duration = Duration::from_secs(3);

/// The resource templates whose parameters complete, and what each parameter holds.
const TEMPLATES: &[(&str, &str, Source)] = &[
    (
        "deskpilot://window/{window}/tree",
        "window",
        Source::WindowId,
    ),
    (
        "deskpilot://window/{window}/outline",
        "window",
        Source::WindowId,
    ),
    ("deskpilot://screenshot/{id}", "id", Source::Screenshot),
    ("deskpilot://skill/{app}", "app", Source::Skill),
];

/// Where an argument's values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// A prompt argument.
    Prompt(Data),
    /// A window id, found by its id or title.
    WindowId,
    /// One of this client's screenshots.
    Screenshot,
    /// A skill id, found by its id, app or match names.
    Skill,
}

/// One value and the texts it is found by.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Choice {
    value: String,
    keys: Vec<String>,
}

impl Choice {
    fn plain(value: impl Into<String>) -> Choice {
        let value = value.into();
        Choice {
            keys: vec![value.clone()],
            value,
        }
    }
}

/// `completion/complete`.
pub(crate) async fn complete<P: ProfileSpec>(
    server: &Server<P>,
    request: CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let source = match &request.r#ref {
        Reference::Prompt(p) => Source::Prompt(prompts::argument_data(
            server,
            &p.name,
            &request.argument.name,
        )?),
        Reference::Resource(r) => template(&r.uri, &request.argument.name)?,
        other => {
            return Err(ErrorData::invalid_params(
                format!(
                    "a {} reference has nothing to complete here",
                    other.reference_type()
                ),
                None,
            ));
        }
    };
    let context = request
        .context
        .and_then(|c| c.arguments)
        .unwrap_or_default();
    let session = server.session();
    let deadline = DEADLINE.min(server.request_timeout());
    let choices = render::blocking(deadline, "completion", move || {
        Ok(choices(&session, source, &context))
    })
    .await
    .unwrap_or_else(|e| {
        tracing::debug!("completion of {} left empty: {e}", request.argument.name);
        Vec::new()
    });
    Ok(CompleteResult::new(filter(
        choices,
        &request.argument.value,
    )))
}

/// What parameter `argument` of template `uri` holds.
fn template(uri: &str, argument: &str) -> Result<Source, ErrorData> {
    let params: Vec<&(&str, &str, Source)> =
        TEMPLATES.iter().filter(|(t, _, _)| *t == uri).collect();
    if params.is_empty() {
        return Err(ErrorData::invalid_params(
            format!("no resource template {uri}: resources/templates/list names those there are"),
            None,
        ));
    }
    params
        .iter()
        .find(|(_, a, _)| *a == argument)
        .map(|(_, _, s)| *s)
        .ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "resource template {uri} has no parameter \"{argument}\"; its parameters: {}",
                    params
                        .iter()
                        .map(|(_, a, _)| *a)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            )
        })
}

/// Every value `source` has now (a failed read gives none).
fn choices(session: &Session, source: Source, context: &HashMap<String, String>) -> Vec<Choice> {
    let windows = || {
        session
            .list_windows(&Default::default())
            .unwrap_or_default()
    };
    match source {
        Source::Prompt(Data::Window) => windows()
            .into_iter()
            .filter(|w| !w.title.trim().is_empty())
            .map(|w| Choice::plain(w.title))
            .collect(),
        Source::WindowId => windows()
            .into_iter()
            .map(|w| {
                let id = w.id.to_string();
                Choice {
                    keys: vec![id.clone(), w.title],
                    value: id,
                }
            })
            .collect(),
        Source::Prompt(Data::Detail) => ["tree", "summary"].map(Choice::plain).to_vec(),
        Source::Prompt(Data::Monitor) => session
            .status()
            .map(|s| s.monitors)
            .unwrap_or_default()
            .into_iter()
            .map(|m| Choice {
                value: m.index.to_string(),
                keys: vec![m.index.to_string(), m.name],
            })
            .collect(),
        Source::Prompt(Data::Button) => buttons(session, context),
        Source::Prompt(Data::ShellSession) => {
            // The tools' default session first, whether it has run anything yet or not.
            std::iter::once(prompts::shell::MAIN_SESSION.to_string())
                .chain(session.shells().names())
                .map(Choice::plain)
                .collect()
        }
        Source::Prompt(Data::App) => apps(session),
        Source::Prompt(Data::Free) => Vec::new(),
        Source::Screenshot => screenshots(session),
        Source::Skill => session
            .skills()
            .list()
            .into_iter()
            .map(|s| Choice {
                keys: std::iter::once(s.id.clone())
                    .chain(std::iter::once(s.app))
                    .chain(s.matches)
                    .collect(),
                value: s.id,
            })
            .collect(),
    }
}

/// The named buttons of the window the context's `window` argument names (none without one).
fn buttons(session: &Session, context: &HashMap<String, String>) -> Vec<Choice> {
    let Some(asked) = context.get("window").filter(|w| !w.trim().is_empty()) else {
        return Vec::new();
    };
    let Ok(window) = prompts::resolve_window(session, asked) else {
        return Vec::new();
    };
    let request = TreeRequest {
        include_screenshot: false,
        ..TreeRequest::new(WindowRef::Id(window.id))
    };
    let Ok(snapshot) = session.window_state(&request) else {
        return Vec::new();
    };
    snapshot
        .elements
        .into_iter()
        .filter(|e| {
            e.onscreen
                && matches!(e.role, Role::Button | Role::ToggleButton | Role::Link)
                && !e.name.trim().is_empty()
        })
        .map(|e| Choice::plain(e.name.trim()))
        .collect()
}

/// Apps by name: running ones (their process) first, then the skills', then installed ones.
fn apps(session: &Session) -> Vec<Choice> {
    let mut out = Vec::new();
    let list = session.list_apps().ok();
    if let Some(list) = &list {
        out.extend(
            list.running
                .iter()
                .filter_map(|r| r.process.clone())
                .map(Choice::plain),
        );
    }
    out.extend(session.skills().list().into_iter().map(|s| Choice {
        keys: std::iter::once(s.app.clone()).chain(s.matches).collect(),
        value: s.app,
    }));
    if let Some(list) = list {
        out.extend(list.installed.into_iter().map(|a| {
            Choice {
                keys: std::iter::once(a.name.clone())
                    .chain(a.localized.into_values())
                    .collect(),
                value: a.name,
            }
        }));
    }
    out
}

/// The screenshots this client keeps (those `deskpilot://screenshot/{id}` reads), newest
/// first.
fn screenshots(session: &Session) -> Vec<Choice> {
    let Some(last) = session.last_screenshot() else {
        return Vec::new();
    };
    // Ids are issued process-wide, one after the other; this client keeps its last few, none
    // newer than its last screenshot, and another client's ids in between are not its own.
    (last.id.saturating_sub(SEARCHED_IDS)..=last.id)
        .rev()
        .filter(|id| session.keeps_screenshot(*id))
        .take(KEPT_SHOTS)
        .map(|id| Choice::plain(id.to_string()))
        .collect()
}

/// Where `typed` matches `key`: 0 for a prefix, 1 for a word's start, none otherwise.
fn rank(key: &str, typed: &str) -> Option<u8> {
    let key = key.to_lowercase();
    if key.starts_with(typed) {
        return Some(0);
    }
    let mut start = true;
    for (i, c) in key.char_indices() {
        if start && c.is_alphanumeric() && key[i..].starts_with(typed) {
            return Some(1);
        }
        start = !c.is_alphanumeric();
    }
    None
}

/// The choices `typed` matches, prefixes first, each value once, at most 100.
fn filter(choices: Vec<Choice>, typed: &str) -> CompletionInfo {
    let typed = typed.trim_start().to_lowercase();
    let mut ranked: Vec<(u8, usize, String)> = Vec::new();
    for (order, c) in choices.into_iter().enumerate() {
        let Some(r) = c.keys.iter().filter_map(|k| rank(k, &typed)).min() else {
            continue;
        };
        match ranked
            .iter_mut()
            .find(|(_, _, v)| v.eq_ignore_ascii_case(&c.value))
        {
            Some(seen) if seen.0 > r => seen.0 = r,
            Some(_) => {}
            None => ranked.push((r, order, c.value)),
        }
    }
    ranked.sort_by_key(|(r, order, _)| (*r, *order));
    let total = ranked.len();
    let values: Vec<String> = ranked
        .into_iter()
        .take(CompletionInfo::MAX_VALUES)
        .map(|(_, _, v)| v)
        .collect();
    CompletionInfo::with_pagination(
        values,
        Some(u32::try_from(total).unwrap_or(u32::MAX)),
        total > CompletionInfo::MAX_VALUES,
    )
    .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(choices: &[&str], typed: &str) -> (Vec<String>, Option<u32>, Option<bool>) {
        let info = filter(choices.iter().map(|c| Choice::plain(*c)).collect(), typed);
        (info.values, info.total, info.has_more)
    }

    #[test]
    fn prefixes_of_the_value_then_of_its_words_case_insensitive() {
        let titles = ["Untitled - Mousepad", "mousepad prefs", "Terminal", "MOUSE"];
        assert_eq!(
            values(&titles, "mouse").0,
            ["mousepad prefs", "MOUSE", "Untitled - Mousepad"]
        );
        assert_eq!(values(&titles, "pad").0, Vec::<String>::new());
        assert_eq!(values(&titles, "").0.len(), 4);
        assert_eq!(values(&["A", "a", "b"], "A").0, ["A"], "each value once");
    }

    #[test]
    fn at_most_a_hundred_with_total_and_has_more() {
        let many: Vec<String> = (0..150).map(|i| format!("w{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let (v, total, more) = values(&refs, "w");
        assert_eq!((v.len(), total, more), (100, Some(150), Some(true)));
        let (v, total, more) = values(&refs, "w14");
        assert_eq!((v.len(), total, more), (11, Some(11), Some(false)));
    }

    #[test]
    fn a_choice_is_found_by_any_of_its_keys() {
        let info = filter(
            vec![Choice {
                value: "0x1a00003".into(),
                keys: vec!["0x1a00003".into(), "Untitled - Mousepad".into()],
            }],
            "mousep",
        );
        assert_eq!(info.values, ["0x1a00003"]);
    }

    #[test]
    fn unknown_templates_and_parameters_are_named() {
        assert_eq!(
            template("deskpilot://skill/{app}", "app").unwrap(),
            Source::Skill
        );
        let e = template("deskpilot://nope/{x}", "x").unwrap_err();
        assert!(e.message.contains("deskpilot://nope/{x}"), "{}", e.message);
        let e = template("deskpilot://window/{window}/tree", "id").unwrap_err();
        assert!(
            e.message.contains("\"id\"") && e.message.contains("window"),
            "{}",
            e.message
        );
    }

    async fn values_of(
        server: &crate::profiles::deskpilot::DeskpilotServer,
        r#ref: Reference,
        argument: &str,
        typed: &str,
        context: &[(&str, &str)],
    ) -> Result<Vec<String>, ErrorData> {
        let mut request =
            CompleteRequestParams::new(r#ref, rmcp::model::ArgumentInfo::new(argument, typed));
        if !context.is_empty() {
            request = request.with_context(rmcp::model::CompletionContext::with_arguments(
                context
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ));
        }
        Ok(complete(server, request).await?.completion.values)
    }

    #[tokio::test]
    async fn every_argument_completes_from_the_desktop_now() {
        use crate::kit::ToolFilter;
        use crate::kit::prompts::tests::{form_desktop, server};

        let (fake, w) = form_desktop();
        let s = server(&fake, &ToolFilter::default());
        let prompt = |name: &str| Reference::for_prompt(name);
        let got =
            |r, a: &'static str, t: &'static str, c: &'static [(&'static str, &'static str)]| {
                values_of(&s, r, a, t, c)
            };
        assert_eq!(
            got(prompt("inspect_window"), "window", "SIGN", &[])
                .await
                .unwrap(),
            ["Sign up"]
        );
        assert_eq!(
            got(prompt("fill_form"), "window", "up", &[]).await.unwrap(),
            ["Sign up"],
            "a word of the title"
        );
        assert_eq!(
            got(prompt("fill_form"), "submit", "", &[("window", "Sign up")])
                .await
                .unwrap(),
            ["Save"],
            "the buttons of the window in the context"
        );
        assert!(
            got(prompt("fill_form"), "submit", "", &[])
                .await
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            got(prompt("inspect_window"), "detail", "", &[])
                .await
                .unwrap(),
            ["tree", "summary"]
        );
        assert_eq!(
            got(prompt("inspect_screen"), "monitor", "", &[])
                .await
                .unwrap(),
            ["0"]
        );
        assert_eq!(
            got(prompt("shell_task"), "session", "", &[]).await.unwrap(),
            ["main"]
        );
        assert!(
            got(prompt("work_in"), "app", "mouse", &[])
                .await
                .unwrap()
                .contains(&"Mousepad".to_string())
        );
        assert!(
            got(prompt("work_in_gimp"), "task", "", &[])
                .await
                .unwrap()
                .is_empty()
        );
        // Resource templates: ids for windows, ids for skills, this client's screenshots.
        let template = |uri: &str| Reference::for_resource(uri);
        assert_eq!(
            got(
                template("deskpilot://window/{window}/tree"),
                "window",
                "sign",
                &[]
            )
            .await
            .unwrap(),
            [w.to_string()]
        );
        assert_eq!(
            got(template("deskpilot://skill/{app}"), "app", "GNU Image", &[])
                .await
                .unwrap(),
            ["gimp"]
        );
        assert!(
            got(template("deskpilot://screenshot/{id}"), "id", "", &[])
                .await
                .unwrap()
                .is_empty()
        );
        let shot = s
            .session
            .screenshot(&deskpilot_engine::ScreenshotRequest {
                target: deskpilot_engine::CaptureTarget::Screen,
                max_width: None,
                format: None,
            })
            .unwrap();
        s.session.keep_screenshot(&shot);
        assert_eq!(
            got(template("deskpilot://screenshot/{id}"), "id", "", &[])
                .await
                .unwrap(),
            [shot.id.to_string()]
        );
        // What is not there is named.
        for (r, a, want) in [
            (prompt("nope"), "window", "\"nope\""),
            (prompt("fill_form"), "colour", "\"colour\""),
            (
                template("deskpilot://nope/{x}"),
                "x",
                "deskpilot://nope/{x}",
            ),
        ] {
            let e = got(r, a, "", &[]).await.unwrap_err();
            assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains(want), "{}", e.message);
        }
    }
}
