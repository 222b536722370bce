//! Keyboard tools: `press_key` (chords) and `type_text` (any Unicode).

use crate::kit::Parameters;
use deskpilot_engine::{Check, Error, KeyboardOutcome, MAX_TEXT_CHARS, SecretTarget, VerifyTarget};
use deskpilot_types::Key;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use super::wording::WORDING;
use super::{DeskpilotServer, error};
use crate::kit::report::{self, Body};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PressKeyArgs {
    /// "ctrl+s" or ["ctrl","s"]; key names (esc, pageup, up, f1–f24…) or a character.
    #[serde(deserialize_with = "crate::kit::args::key_list")]
    pub keys: Vec<String>,
    #[serde(default)]
    pub verify: bool,
    #[serde(default)]
    pub observe: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeTextArgs {
    pub text: String,
    #[serde(default)]
    pub verify: bool,
    #[serde(default)]
    pub observe: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeSecretArgs {
    /// Secret name.
    pub name: String,
    /// Password field token.
    #[serde(default)]
    pub element: String,
    /// Or x/y, as click.
    #[serde(default)]
    pub x: Option<f64>,
    #[serde(default)]
    pub y: Option<f64>,
    /// 0: last.
    #[serde(default)]
    pub screenshot_id: u64,
}

/// "into \"Untitled - Mousepad\" (0x1a00003, mousepad)" or "into the focused window".
fn destination(o: &KeyboardOutcome) -> String {
    match &o.active {
        Some(w) => format!(
            "into \"{}\" ({}, {})",
            w.title,
            w.id,
            w.process.as_deref().unwrap_or("?")
        ),
        None => "into the focused window (none is active)".to_string(),
    }
}

/// A keyboard outcome in words, after the tool's own first line.
fn keyboard_body(text: String, o: &KeyboardOutcome, mut structured: serde_json::Value) -> Body {
    let mut text = text;
    for w in &o.warnings {
        text.push_str("\nWarning: ");
        text.push_str(&w.to_string());
    }
    structured["window"] = json!(o.active);
    structured["warnings"] = json!(o.warnings);
    Body::new(text, structured)
}

/// The keys of every entry, each a chord of its own ("ctrl+s", or "+" for the plus key).
fn parse_keys(names: &[String]) -> Result<Vec<Key>, Error> {
    let mut keys = Vec::new();
    for name in names {
        keys.extend(Key::parse_chord(name).map_err(|e| Error::InvalidArgument {
            message: e.unknown().to_string(),
        })?);
    }
    Ok(keys)
}

#[tool_router(router = keyboard_router, vis = "pub(crate)")]
impl DeskpilotServer {
    /// Press a key or chord in the focused window (released in reverse).
    #[tool(
        name = "press_key",
        annotations(
            title = "Press key",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn press_key(&self, Parameters(a): Parameters<PressKeyArgs>) -> CallToolResult {
        let keys = match parse_keys(&a.keys) {
            Ok(k) => k,
            Err(e) => return error(&e),
        };
        let label = a.keys.join("+");
        let names = a.keys;
        report::act(
            self.session(),
            &WORDING,
            report::Step {
                what: "press_key",
                timeout: self.request_timeout(),
                check: Check::new(a.verify, a.observe),
                target: VerifyTarget::Focused,
            },
            move |s| s.press_key(&keys),
            |o| {
                keyboard_body(
                    format!("Pressed {label} {}.", destination(o)),
                    o,
                    json!({ "action": "press_key", "keys": names }),
                )
            },
        )
        .await
    }

    /// Type a named secret into a password field; its value is never shown.
    #[tool(
        name = "type_secret",
        annotations(
            title = "Type secret",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn type_secret(&self, Parameters(a): Parameters<TypeSecretArgs>) -> CallToolResult {
        let target = match (a.element.trim().is_empty(), a.x, a.y) {
            (false, None, None) => SecretTarget::Element(a.element.trim().into()),
            (true, Some(x), Some(y)) => {
                SecretTarget::Point(self.target(x, y, a.screenshot_id, None))
            }
            _ => {
                return error(&Error::InvalidArgument {
                    message: "pass either element (the password field's token, like s3:12) or x and y, not both"
                        .to_string(),
                });
            }
        };
        let name = a.name.trim().to_string();
        report::act(
            self.session(),
            &WORDING,
            report::Step {
                what: "type_secret",
                timeout: self.request_timeout(),
                check: Check::default(),
                target: VerifyTarget::Focused,
            },
            move |s| s.type_secret(&name, target),
            report::secret_body,
        )
        .await
    }

    /// Type into the focused window as real keys: any Unicode, newlines, tabs (≤20000 chars).
    #[tool(
        name = "type_text",
        annotations(
            title = "Type text",
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    pub async fn type_text(&self, Parameters(a): Parameters<TypeTextArgs>) -> CallToolResult {
        let text = a.text;
        // Long texts take a while; give them time in proportion (keyboard input is ~0.1 ms a key).
        let timeout = self
            .request_timeout()
            .max(std::time::Duration::from_millis(text.len() as u64 / 4));
        report::act(
            self.session(),
            &WORDING,
            report::Step {
                what: "type_text",
                timeout,
                check: Check::new(a.verify, a.observe),
                target: VerifyTarget::Focused,
            },
            move |s| s.type_text(&text),
            |o| {
                keyboard_body(
                    format!("Typed {} characters {}.", o.count, destination(o)),
                    o,
                    json!({ "action": "type_text", "characters": o.count, "max_characters": MAX_TEXT_CHARS }),
                )
            },
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chords_parse_from_lists_and_plus_strings() {
        let k = |v: &[&str]| parse_keys(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            k(&["ctrl", "shift", "T"]).unwrap(),
            [Key::Ctrl, Key::Shift, Key::Char('T')]
        );
        assert_eq!(k(&["Ctrl+S"]).unwrap(), [Key::Ctrl, Key::Char('S')]);
        assert_eq!(k(&["+"]).unwrap(), [Key::Char('+')]);
        let err = k(&["ctrl", "hyper"]).unwrap_err().to_string();
        assert!(
            err.contains("unknown key \"hyper\"") && err.contains("valid keys"),
            "{err}"
        );
    }

    #[test]
    fn keys_come_as_a_list_or_one_string() {
        let args = |v: serde_json::Value| {
            serde_json::from_value::<PressKeyArgs>(serde_json::json!({ "keys": v })).map(|a| a.keys)
        };
        assert_eq!(
            args(serde_json::json!("ctrl+shift+f5")).unwrap(),
            ["ctrl+shift+f5"]
        );
        assert_eq!(
            args(serde_json::json!(["ctrl", "s"])).unwrap(),
            ["ctrl", "s"]
        );
        let err = args(serde_json::json!(5)).unwrap_err().to_string();
        assert!(err.contains("a list") && err.contains("a string"), "{err}");
    }
}
