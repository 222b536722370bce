//! What an agent does to a page through a ref or the focus: clicking (any button, double,
//! with modifiers), typing into an element or whatever has the focus, choosing a
//! `<select>`'s options, pressing a key or chord, and running its own script. Each is gated
//! with the page's title and URL, and says what it changed.

use deskpilot_browser::dom::{self, FieldValue, Selection};
use deskpilot_browser::input::{self, Click, Key, modifier};
use deskpilot_browser::script::{self, Evaluated};
use deskpilot_types::ErrorCode;
use serde_json::{Value, json};

use super::effects::{SETTLE, dialog_after, judged};
use super::refs::hit_point;
use super::{BrowserOutcome, coded, unavailable};
use crate::{error::Error, safety::Mutation, session::Session};

impl Session {
    /// Clicks the element `r` names: scrolled into view, then real mouse events at its visible
    /// centre, once the point is known to hit it.
    pub fn browser_click(&self, r: &str) -> Result<BrowserOutcome, Error> {
        self.browser_click_with(r, &Click::default())
    }

    /// [`Session::browser_click`] with a button, a count (2: a double click) and modifiers.
    pub fn browser_click_with(&self, r: &str, how: &Click) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info, t) = self.resolve_ref(r)?;
        let what = click_words(how);
        self.gate(
            Mutation::Other,
            &format!(
                "{what} {} \"{}\" in \"{}\" ({})",
                t.role, t.name, info.title, info.url
            ),
        )?;
        let (x, y) = hit_point(&cdp, &session, &t, &what)?;
        judged(
            &cdp,
            &session,
            SETTLE,
            || input::click_with(&cdp, &session, x, y, how),
            |changed| BrowserOutcome {
                // `click` → `clicked`, `ctrl+double-click` → `ctrl+double-clicked`.
                detail: format!("{what}ed {} \"{}\" at ({x:.0}, {y:.0})", t.role, t.name),
                page: self.page_any(Some(&info.id)).map(|p| p.2).unwrap_or(info),
                changed,
                value: None,
                snapshot: None,
                mutation: true,
            },
        )
    }

    /// Types `text` into the element `r` names (focus, then `insertText`), optionally pressing
    /// Enter after it; the element's value is read back.
    pub fn browser_type(&self, r: &str, text: &str, submit: bool) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info, t) = self.resolve_ref(r)?;
        // What goes into a password field is not repeated, not even to the approver.
        let password = matches!(
            dom::field(&cdp, &session, t.backend),
            Ok(dom::Field::Password)
        );
        self.gate(
            Mutation::Other,
            &format!(
                "type {} into {} \"{}\" in \"{}\" ({})",
                if password {
                    "a password (not shown)".to_string()
                } else {
                    crate::safety::quoted(text)
                },
                t.role,
                t.name,
                info.title,
                info.url
            ),
        )?;
        let stale = |e: deskpilot_browser::Error| Error::StaleElement {
            token: t.r#ref.clone(),
            why: format!("the element is gone from the page ({e}); take browser_snapshot again"),
        };
        dom::focus(&cdp, &session, t.backend).map_err(stale)?;
        let mark = cdp.log_mark(&session);
        input::insert_text(&cdp, &session, text).map_err(unavailable)?;
        let value = dom::read_value(&cdp, &session, t.backend);
        if submit && let Some(enter) = Key::named("Enter") {
            input::press(&cdp, &session, &enter, 0).map_err(unavailable)?;
        }
        let mut o = BrowserOutcome {
            changed: value.as_ref().map(|v| match v {
                FieldValue::Text(now) => now.contains(text),
                FieldValue::Password { filled } => *filled,
            }),
            detail: format!("typed into {} \"{}\"", t.role, t.name),
            page: info,
            // A password field's value is not echoed, only whether it is filled.
            value: value.map(|v| Value::from(v.shown())),
            snapshot: None,
            mutation: true,
        };
        dialog_after(&cdp, &session, mark, &mut o);
        Ok(o)
    }

    /// Types `text` into whatever has the focus in `page` (`insertText`: no keyboard layout,
    /// any Unicode).
    pub fn browser_insert_text(
        &self,
        page: Option<&str>,
        text: &str,
    ) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info) = self.page(page)?;
        self.gate(
            Mutation::Other,
            &format!(
                "type {} into the focused element of \"{}\" ({})",
                crate::safety::quoted(text),
                info.title,
                info.url
            ),
        )?;
        judged(
            &cdp,
            &session,
            SETTLE,
            || input::insert_text(&cdp, &session, text),
            |changed| BrowserOutcome {
                changed,
                detail: "typed into the focused element".into(),
                page: info,
                value: None,
                snapshot: None,
                mutation: true,
            },
        )
    }

    /// Chooses the options of the `<select>` that `r` names whose value or label is in
    /// `values` (one, or several for a multiple select), as a person picking them would:
    /// `input` and `change` fire. What is selected afterwards is read back.
    pub fn browser_select(&self, r: &str, values: &[String]) -> Result<BrowserOutcome, Error> {
        if values.is_empty() {
            return Err(Error::InvalidArgument {
                message: "values: name at least one option (its value or its label)".into(),
            });
        }
        let (cdp, session, info, t) = self.resolve_ref(r)?;
        self.gate(
            Mutation::Other,
            &format!(
                "select {} in {} \"{}\" in \"{}\" ({})",
                crate::safety::quoted(&values.join(", ")),
                t.role,
                t.name,
                info.title,
                info.url
            ),
        )?;
        let quoted = |v: &[String]| {
            v.iter()
                .map(|m| format!("{m:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (selected, changed) = match dom::select_options(&cdp, &session, t.backend, values)
            .map_err(unavailable)?
        {
            Selection::Gone => {
                return Err(Error::StaleElement {
                    token: t.r#ref.clone(),
                    why: "the element is gone from the page; take browser_snapshot again".into(),
                });
            }
            Selection::NotSelect => {
                return Err(coded(
                    ErrorCode::ActionUnsupported,
                    format!(
                        "{} \"{}\" is not a <select>; open it with browser_click and click the option's ref",
                        t.role, t.name
                    ),
                ));
            }
            Selection::Missing { missing, options } => {
                return Err(Error::InvalidArgument {
                    message: format!(
                        "{} \"{}\" has no option {}; its options: {}",
                        t.role,
                        t.name,
                        quoted(&missing),
                        quoted(&options)
                    ),
                });
            }
            Selection::Single => {
                return Err(Error::InvalidArgument {
                    message: format!(
                        "{} \"{}\" takes one option, not {}",
                        t.role,
                        t.name,
                        values.len()
                    ),
                });
            }
            Selection::Selected { selected, changed } => (selected, changed),
        };
        Ok(BrowserOutcome {
            changed: Some(changed),
            detail: format!(
                "selected {} in {} \"{}\"",
                quoted(&selected),
                t.role,
                t.name
            ),
            page: info,
            value: Some(json!(selected)),
            snapshot: None,
            mutation: true,
        })
    }

    /// Presses a key or chord (`Enter`, `ctrl+a`, `Shift+Tab`) in the page's focused element.
    pub fn browser_press_key(
        &self,
        page: Option<&str>,
        keys: &str,
    ) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info) = self.page(page)?;
        let parts: Vec<&str> = keys
            .split('+')
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .collect();
        let Some((key, mods)) = parts.split_last() else {
            return Err(Error::InvalidArgument {
                message: "keys: name a key, e.g. \"Enter\" or \"ctrl+a\"".into(),
            });
        };
        let mut modifiers = 0;
        for m in mods {
            modifiers |= modifier::named(m).ok_or_else(|| Error::InvalidArgument {
                message: format!(
                    "keys: {:?} is not a modifier (ctrl, alt, shift, meta)",
                    m.to_ascii_lowercase()
                ),
            })?;
        }
        let key = Key::named(key).ok_or_else(|| Error::InvalidArgument {
            message: format!(
                "keys: unknown key {key:?}; use Enter, Tab, Escape, Backspace, Delete, Arrow keys, Home, End, PageUp, PageDown, Space or one character"
            ),
        })?;
        self.gate(
            Mutation::Other,
            &format!("press {keys} in \"{}\" ({})", info.title, info.url),
        )?;
        judged(
            &cdp,
            &session,
            SETTLE,
            || input::press(&cdp, &session, &key, modifiers),
            |changed| BrowserOutcome {
                changed,
                detail: format!("pressed {keys}"),
                page: info,
                value: None,
                snapshot: None,
                mutation: true,
            },
        )
    }

    /// Evaluates `expression` in the page (promises awaited) and returns its JSON value.
    pub fn browser_eval(
        &self,
        page: Option<&str>,
        expression: &str,
    ) -> Result<BrowserOutcome, Error> {
        self.browser_eval_with(page, expression, true)
    }

    /// [`Session::browser_eval`], a promise the expression returns awaited only when
    /// `await_promise` (else its value is the text `[object Promise]`).
    pub fn browser_eval_with(
        &self,
        page: Option<&str>,
        expression: &str,
        await_promise: bool,
    ) -> Result<BrowserOutcome, Error> {
        let (cdp, session, info) = self.page(page)?;
        self.gate(
            Mutation::Other,
            &format!("run a script in \"{}\" ({})", info.title, info.url),
        )?;
        let evaluated = script::evaluate_with(&cdp, &session, expression, await_promise)
            .map_err(unavailable)?;
        // A known secret's value reads `<secret NAME>` here already, whatever else scrubs.
        let value = match evaluated {
            Evaluated::Value(v) => super::scrubbed(v),
            Evaluated::Threw(message) => {
                return Err(coded(
                    ErrorCode::ScriptFailed,
                    deskpilot_types::redact::scrub(&message),
                ));
            }
        };
        Ok(BrowserOutcome {
            page: info,
            detail: "evaluated".into(),
            changed: None,
            value: Some(value),
            snapshot: None,
            mutation: true,
        })
    }
}

/// A click's verb: `click`, `double-click`, `right-click`, with its modifiers (`ctrl+click`).
fn click_words(how: &Click) -> String {
    let mut mods = Vec::new();
    for (bit, name) in [
        (modifier::CTRL, "ctrl"),
        (modifier::ALT, "alt"),
        (modifier::SHIFT, "shift"),
        (modifier::META, "meta"),
    ] {
        if how.modifiers & bit != 0 {
            mods.push(name);
        }
    }
    let verb = match (how.button, how.count) {
        ("right", _) => "right-click",
        ("middle", _) => "middle-click",
        (_, 2) => "double-click",
        _ => "click",
    };
    mods.push(verb);
    mods.join("+")
}
