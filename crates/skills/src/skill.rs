//! One skill: its front matter, its body, and the names it answers to.

use std::path::PathBuf;

use crate::MAX_SKILL_CHARS;

/// Which layer a skill comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Builtin,
    User,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Builtin => "builtin",
            Source::User => "user",
        }
    }
}

/// A recipe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// The normalised app name: the file name in the user layer and the key overrides use.
    pub id: String,
    /// The display name.
    pub app: String,
    /// Extra process / exe / window names that select it.
    pub matches: Vec<String>,
    /// One line for the catalog and the screenshot hint.
    pub summary: String,
    pub body: String,
    pub source: Source,
    /// The file it was read from or written to (user layer).
    pub path: Option<PathBuf>,
    /// The file's body was longer than the cap and was cut (with a marker).
    pub truncated: bool,
}

/// Case-insensitive, without `.exe`, spaces, `_` and `-`: `EXCEL.EXE`, `Excel` and `excel` are one
/// name. Path separators and dots go too, so a name is always a safe file name.
pub fn normalize(name: &str) -> String {
    let lower = name.trim().to_lowercase();
    let lower = lower.strip_suffix(".exe").unwrap_or(&lower);
    lower
        .chars()
        .filter(|c| !c.is_whitespace() && !matches!(c, '_' | '-' | '.' | '/' | '\\' | ':' | '\0'))
        .collect()
}

/// What is left of a body past the cap.
const TRUNCATED: &str = "\n… [truncated at 4000 characters]";

impl Skill {
    /// Every normalised name the skill answers to: its id, its app name and its `match` names.
    pub fn keys(&self) -> impl Iterator<Item = String> + '_ {
        std::iter::once(self.id.clone())
            .chain(std::iter::once(normalize(&self.app)))
            .chain(self.matches.iter().map(|m| normalize(m)))
            .filter(|k| !k.is_empty())
    }

    /// The file a user skill is stored as.
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("---\n");
        out.push_str(&format!("app: {}\n", one_line(&self.app)));
        if !self.matches.is_empty() {
            out.push_str(&format!(
                "match: {}\n",
                self.matches
                    .iter()
                    .map(|m| one_line(m))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !self.summary.is_empty() {
            out.push_str(&format!("summary: {}\n", one_line(&self.summary)));
        }
        out.push_str("---\n");
        out.push_str(self.body.trim_end());
        out.push('\n');
        out
    }

    /// The line a screenshot envelope carries when this app is in front.
    pub fn hint(&self) -> String {
        format!(
            "App skill available for {}{}: call app_skill with action \"get\" and app \"{}\" BEFORE driving this app.",
            self.app,
            if self.summary.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.summary)
            },
            self.app
        )
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Parses a skill file: optional front matter between `---` lines (`app`, `match` — comma
/// separated or a `[a, b]` list —, `summary`), then the body. Without an `app` the file name
/// (`stem`) is the app. A body over the cap is cut with a marker.
pub fn parse(stem: &str, text: &str, source: Source) -> Skill {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (mut app, mut matches, mut summary) = (String::new(), Vec::new(), String::new());
    let mut body = text;
    let mut lines = text.split_inclusive('\n');
    if lines.next().is_some_and(|l| l.trim() == "---") {
        let mut consumed = text.split_inclusive('\n').next().map_or(0, str::len);
        let mut closed = false;
        for line in lines {
            consumed += line.len();
            let l = line.trim();
            if l == "---" {
                closed = true;
                break;
            }
            let Some((key, value)) = l.split_once(':') else {
                continue;
            };
            let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
            match key.trim().to_ascii_lowercase().as_str() {
                "app" => app = value.to_string(),
                "summary" => summary = value.to_string(),
                "match" => {
                    matches = value
                        .trim_start_matches('[')
                        .trim_end_matches(']')
                        .split(',')
                        .map(|m| m.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
                        .filter(|m| !m.is_empty())
                        .collect()
                }
                _ => {}
            }
        }
        if closed {
            body = &text[consumed..];
        }
    }
    if app.is_empty() {
        app = stem.to_string();
    }
    let body = body.trim_matches('\n').trim_end();
    let truncated = body.chars().count() > MAX_SKILL_CHARS;
    let body = if truncated {
        let cut: String = body.chars().take(MAX_SKILL_CHARS).collect();
        format!("{cut}{TRUNCATED}")
    } else {
        body.to_string()
    };
    Skill {
        // The app name is the default id, so a dropped-in file overrides the built-in for its app
        // whatever the file is called.
        id: normalize(&app),
        app,
        matches,
        summary,
        body,
        source,
        path: None,
        truncated,
    }
}
