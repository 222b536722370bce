//! `work_in` and `work_in_{skill}`: an app's windows now (or how to start it), its skill, and
//! the tools to start with — the opening moves for its window, then the tools the skill's text
//! names, its key chords (`press_key`) and typing (`type_text`), and `app_skill` to keep what is
//! learned. Only tools this server exposes are suggested.

use std::time::Duration;

use deskpilot_engine::{Error, Session};
use deskpilot_skills::Skill;
use deskpilot_types::{Key, WindowInfo};
use rmcp::ErrorData;
use rmcp::model::GetPromptResult;
use serde_json::json;

use super::{Args, MAX_WINDOWS, Toolbox, call_args, skill_uri, user_text, window_line};
use crate::kit::render;
use crate::kit::server::{ProfileSpec, Server};

/// The keys a skill's text names for `press_key`, in order, at most `max`: each word that
/// parses as a chord with a modifier (`ctrl+s`, `alt+F4`, `shift+insert`), or a function key
/// (`F5`).
fn chords(body: &str, max: usize) -> Vec<String> {
    let modifier = |k: &Key| matches!(k, Key::Ctrl | Key::Alt | Key::Shift | Key::Super);
    let mut found: Vec<String> = Vec::new();
    for word in body.split_whitespace() {
        let word = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '+'));
        let Ok(keys) = Key::parse_chord(word) else {
            continue;
        };
        let chord = match keys.as_slice() {
            [Key::F(_)] => true,
            [mods @ .., last] => !mods.is_empty() && mods.iter().all(modifier) && !modifier(last),
            [] => false,
        };
        if chord && !found.iter().any(|f| f.eq_ignore_ascii_case(word)) {
            found.push(word.to_string());
            if found.len() == max {
                break;
            }
        }
    }
    found
}

/// Where `word` first occurs in `text` as a whole word (no letter, digit or `_` beside it).
fn word_at(text: &str, word: &str) -> Option<usize> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(i) = text[from..].find(word) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

/// The tools of this server a skill's text names, in order of first mention.
fn named_tools(body: &str, tools: &[String]) -> Vec<String> {
    let mut at: Vec<(usize, &String)> = tools
        .iter()
        .filter_map(|t| word_at(body, t).map(|i| (i, t)))
        .collect();
    at.sort();
    at.into_iter().map(|(_, t)| t.clone()).collect()
}

/// What the desktop says about an app now.
struct AppNow {
    windows: Vec<WindowInfo>,
    installed: Option<deskpilot_backend::apps::InstalledApp>,
}

fn app_now(session: &Session, skill: Option<&Skill>, app: &str) -> Result<AppNow, Error> {
    let apps = session.list_apps()?;
    let names: Vec<String> = match skill {
        Some(s) => std::iter::once(s.app.clone())
            .chain(s.matches.iter().cloned())
            .collect(),
        None => vec![app.to_string()],
    };
    let windows: Vec<WindowInfo> = match skill {
        // The windows the skill is for: the rule screenshots use for their hint.
        Some(s) => apps
            .running
            .iter()
            .flat_map(|r| r.windows.iter())
            .filter(|w| {
                session
                    .skills()
                    .for_window(w.process.as_deref(), &w.class, &w.title)
                    .is_some_and(|found| found.id == s.id)
            })
            .cloned()
            .collect(),
        None => apps
            .clone()
            .matching(app)
            .running
            .into_iter()
            .flat_map(|r| r.windows)
            .collect(),
    };
    let key = |s: &str| deskpilot_skills::normalize(s);
    let installed = names.iter().find_map(|n| {
        let want = key(n);
        apps.installed
            .iter()
            .find(|a| key(&a.name) == want || a.keywords.iter().any(|k| key(k) == want))
            .cloned()
    });
    Ok(AppNow { windows, installed })
}

pub(super) async fn work_in<P: ProfileSpec>(
    server: &Server<P>,
    skill: Option<Skill>,
    app: String,
    args: &Args,
) -> Result<GetPromptResult, ErrorData> {
    let session = server.session();
    let (s2, a2) = (skill.clone(), app.clone());
    let now = render::blocking(
        Duration::from_secs(10).min(server.request_timeout()),
        "prompt work_in",
        move || app_now(&session, s2.as_ref(), &a2),
    )
    .await;
    let mut text = format!("Work in {app}.");
    if let Some(task) = args.get("task") {
        text.push_str(&format!("\nTask: {task}"));
    }
    let mut tools = Toolbox::new(server);
    match &now {
        Ok(now) if !now.windows.is_empty() => {
            text.push_str("\n\nIts windows now, topmost first:");
            for w in now.windows.iter().take(MAX_WINDOWS) {
                text.push_str("\n- ");
                text.push_str(&window_line(w));
            }
            let w = &now.windows[0];
            let id = w.id.to_string();
            if !w.state.active {
                tools.add(
                    "window",
                    format!(
                        "bring it to the front ({})",
                        call_args(json!({ "action": "focus", "window_id": id }))
                    ),
                );
            }
            tools.add(
                "get_window_state",
                format!(
                    "its controls and their tokens ({})",
                    call_args(json!({ "window_id": id }))
                ),
            );
            tools.add(
                "screenshot",
                format!("what it shows ({})", call_args(json!({ "window_id": id }))),
            );
        }
        Ok(now) => {
            text.push_str("\n\nIt has no window open now.");
            match &now.installed {
                Some(a) if !a.exec.is_empty() => {
                    text.push_str(&format!(" It is installed as \"{}\" ({}).", a.name, a.id));
                    tools.add(
                        "window",
                        format!(
                            "start it and get its window ({})",
                            call_args(json!({ "action": "launch", "command": a.exec[0], "args": a.exec[1..] }))
                        ),
                    );
                }
                _ => {
                    tools.add(
                        "list_apps",
                        format!(
                            "find how to start it ({})",
                            call_args(json!({ "filter": app }))
                        ),
                    );
                    tools.add("window", "start it (action launch) and get its window");
                }
            }
            tools.add(
                "get_window_state",
                "its controls and their tokens, once it is open",
            );
            tools.add("screenshot", "what it shows, once it is open");
        }
        Err(e) => {
            text.push_str(&format!(
                "\n\nIts windows could not be listed now ({}: {e}).",
                e.code()
            ));
            tools.add("list_windows", "find its window");
            tools.add("get_window_state", "its controls and their tokens");
        }
    }
    match &skill {
        Some(s) => {
            text.push_str(&format!(
                "\n\nIts skill ({}{}; resource {}):\n{}",
                s.source.as_str(),
                if s.truncated { ", truncated" } else { "" },
                skill_uri(&s.id),
                s.body.trim_end()
            ));
            // The tools the skill itself names, then what its text asks for.
            let names = server.tool_names();
            for t in named_tools(&s.body, &names) {
                tools.add(&t, "named in the skill");
            }
            let keys = chords(&s.body, 6);
            if !keys.is_empty() {
                tools.add(
                    "press_key",
                    format!("the skill's keys ({})", keys.join(", ")),
                );
            }
            if word_at(&s.body.to_lowercase(), "type").is_some()
                || word_at(&s.body.to_lowercase(), "typing").is_some()
            {
                tools.add("type_text", "the skill has you type");
            }
            tools.add(
                "app_skill",
                format!(
                    "add what you learn to the skill ({})",
                    call_args(json!({ "action": "append", "app": s.app, "content": "- …" }))
                ),
            );
        }
        None => {
            text.push_str(&format!(
                "\n\nThere is no skill for {app} yet: learn its layout from its controls and a screenshot, prefer its keyboard shortcuts, and once something works save it so the next session starts from it."
            ));
            tools.add("find_elements", "a control by what it says");
            tools.add("press_key", "its shortcuts");
            tools.add(
                "app_skill",
                format!(
                    "save what you learned ({})",
                    call_args(
                        json!({ "action": "save", "app": app, "summary": "…", "content": "- …" })
                    )
                ),
            );
        }
    }
    text.push_str("\n\nTools to start with:\n");
    text.push_str(&tools.render());
    text.push_str("\n\nLook again after each step that changes the window, and check each action's effect before the next.");
    Ok(GetPromptResult::new(vec![user_text(text)]).with_description(format!("Work in {app}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_skill_names_tools_as_words_and_keys_as_chords() {
        let tools: Vec<String> = ["click", "find_elements", "set_value", "ocr", "zoom"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let body =
            "- Use find_elements, then click.\n- set_value works; zoomed is not zoom.\n- clicks";
        assert_eq!(
            named_tools(body, &tools),
            ["find_elements", "click", "set_value", "zoom"]
        );
        assert_eq!(
            chords(
                "Save: ctrl+s. Save As: ctrl+shift+s; (alt+f) F5, a+b, Ctrl+S, ctrl+1…8, shift+ctrl, the end",
                6
            ),
            ["ctrl+s", "ctrl+shift+s", "alt+f", "F5"]
        );
    }
}
