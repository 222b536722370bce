//! Filling a form in one call: text typed over what a field held, boxes checked or cleared,
//! options chosen, dates and colours set, files given to an `<input type=file>`, a named secret
//! typed into a password field ([`super::secret`]'s checks and typing) — each value read back
//! from the page, except a password field's, which is only said to be filled.

use std::path::Path;

use deskpilot_browser::dom::{self, Field, Selection};
use deskpilot_browser::input::{self, Key};
use deskpilot_types::ErrorCode;
use serde_json::{Value, json};

use super::effects::dialog_after;
use super::{BrowserOutcome, coded, unavailable};
use crate::secret_input::SecretEffect;
use crate::{error::Error, safety::Mutation, session::Session};

/// One field to fill: its ref and what goes in it.
#[derive(Debug, Clone, Default)]
pub struct FormField {
    pub r#ref: String,
    /// Text for a text field, `true`/`false` for a checkbox, radio or switch, an option's
    /// value or label for a `<select>`, the value of a date, time, colour or range input, a
    /// file's path for an `<input type=file>`.
    pub value: Option<String>,
    /// Several: the options of a multiple `<select>`, or files (paths on this machine).
    pub values: Vec<String>,
    /// A secret's name, typed instead of a value (a password field, within its scope).
    pub secret: Option<String>,
}

/// `"a", "b"`.
fn quoted(v: &[String]) -> String {
    v.iter()
        .map(|m| format!("{m:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `true`/`false` as a person may write it.
fn truth(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "checked" | "on" | "yes" | "1" => Some(true),
        "false" | "unchecked" | "off" | "no" | "0" | "" => Some(false),
        _ => None,
    }
}

impl Session {
    /// Fills every field of `fields` (refs of one page's latest snapshot), after checking them
    /// all: a ref that is not a field, a value of the wrong kind or a file that does not
    /// exist refuses the whole call before anything is typed. One gate for the whole form.
    pub fn browser_fill(&self, fields: &[FormField]) -> Result<BrowserOutcome, Error> {
        if fields.is_empty() {
            return Err(Error::InvalidArgument {
                message: "fields: give at least one {ref, value} (or {ref, values})".into(),
            });
        }
        let mut planned = Vec::new();
        let mut page = None;
        for f in fields {
            if f.secret.is_some() && (f.value.is_some() || !f.values.is_empty()) {
                return Err(Error::InvalidArgument {
                    message: format!("{}: give value or secret, not both", f.r#ref),
                });
            }
            // A secret's name resolves before anything is looked up in the page.
            let secret = match &f.secret {
                Some(name) => {
                    self.secrets().resolve(name)?;
                    Some((name.clone(), self.secrets().scope(name)))
                }
                None => None,
            };
            let (cdp, session, info, t) = self.resolve_ref(&f.r#ref)?;
            if page
                .as_ref()
                .is_some_and(|(_, s, _): &(_, String, _)| *s != session)
            {
                return Err(Error::InvalidArgument {
                    message: format!("{}: fill the fields of one page per call", f.r#ref),
                });
            }
            let kind = dom::field(&cdp, &session, t.backend).map_err(|e| Error::StaleElement {
                token: t.r#ref.clone(),
                why: format!(
                    "the element is gone from the page ({e}); take browser_snapshot again"
                ),
            })?;
            let what = format!("{} \"{}\"", t.role, t.name);
            if let Some((name, scope)) = &secret {
                super::secret::check_target(&cdp, &session, &info, &t, name, scope)?;
                planned.push((t, kind, String::new(), Vec::new(), Vec::new(), what, secret));
                page.get_or_insert((cdp, session, info));
                continue;
            }
            let value = f.value.clone().unwrap_or_default();
            // Several values, or the one.
            let values: Vec<String> = if f.values.is_empty() {
                f.value.iter().cloned().collect()
            } else {
                f.values.clone()
            };
            match kind {
                Field::Other => {
                    return Err(coded(
                        ErrorCode::ActionUnsupported,
                        format!(
                            "{} ({what}) is not a form field; use browser_click or browser_type",
                            f.r#ref
                        ),
                    ));
                }
                Field::File | Field::Select if values.is_empty() => {
                    return Err(Error::InvalidArgument {
                        message: format!(
                            "{} ({what}): give value (or values: several options or files)",
                            f.r#ref
                        ),
                    });
                }
                Field::File | Field::Select => {}
                _ if values.len() != 1 => {
                    return Err(Error::InvalidArgument {
                        message: format!(
                            "{} ({what}): give one value, not {}",
                            f.r#ref,
                            values.len()
                        ),
                    });
                }
                Field::Check if truth(&value).is_none() => {
                    return Err(Error::InvalidArgument {
                        message: format!(
                            "{} ({what}) is checked or not: value \"true\" or \"false\", not {value:?}",
                            f.r#ref
                        ),
                    });
                }
                _ => {}
            }
            let value = values.first().cloned().unwrap_or(value);
            let files = values
                .iter()
                .filter(|_| kind == Field::File)
                .map(|p| {
                    let path = Path::new(p);
                    match std::fs::canonicalize(path) {
                        Ok(abs) if abs.is_file() => Ok(abs.display().to_string()),
                        Ok(_) => Err(Error::InvalidArgument {
                            message: format!("values: {p} is not a regular file"),
                        }),
                        Err(e) => Err(Error::InvalidArgument {
                            message: format!("values: no file at {p} ({e}); give a path on the machine deskpilot runs on"),
                        }),
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            planned.push((t, kind, value, files, values, what, None));
            page.get_or_insert((cdp, session, info));
        }
        let (cdp, session, info) = page.expect("one field at least");
        let label = planned
            .iter()
            .map(
                |(_, kind, value, files, values, what, secret)| match (kind, secret) {
                    (_, Some((name, _))) => format!("{what} = secret {name}"),
                    (Field::File, _) => format!("upload {} to {what}", files.join(", ")),
                    // What goes into a password field is not repeated, not even to the approver.
                    (Field::Password, _) => format!("{what} = (a password, not shown)"),
                    (Field::Select, _) => {
                        format!("{what} = {}", crate::safety::quoted(&values.join(", ")))
                    }
                    _ => format!("{what} = {}", crate::safety::quoted(value)),
                },
            )
            .collect::<Vec<_>>()
            .join("; ");
        let label = format!("fill {label} in \"{}\" ({})", info.title, info.url);
        // With a secret among the fields, its scope may ask the person to approve.
        let approve = planned
            .iter()
            .any(|p| p.6.as_ref().is_some_and(|(_, scope)| scope.approval));
        let approval = if planned.iter().any(|p| p.6.is_some()) {
            self.browser_secret_gate(
                &crate::secrets::SecretScope {
                    approval: approve,
                    ..Default::default()
                },
                &label,
            )?
        } else {
            self.gate(Mutation::Other, &label)?;
            ""
        };
        let mark = cdp.log_mark(&session);
        let mut done = Vec::new();
        let mut changed = false;
        for (t, kind, value, files, values, what, secret) in &planned {
            let stale = |e: deskpilot_browser::Error| Error::StaleElement {
                token: t.r#ref.clone(),
                why: format!(
                    "the element is gone from the page ({e}); take browser_snapshot again"
                ),
            };
            let before = dom::read_value(&cdp, &session, t.backend);
            if let Some((name, _)) = secret {
                self.type_secret_into(&cdp, &session, t, name)?;
                self.note_secret(name, SecretEffect::Filled, approval);
                changed = true;
                done.push(json!({ "ref": t.r#ref, "field": what, "secret": name, "filled": true }));
                continue;
            }
            let now: Value = match kind {
                Field::Text | Field::Password => {
                    dom::select_all(&cdp, &session, t.backend).map_err(stale)?;
                    if value.is_empty() {
                        let key = Key::named("Backspace").expect("a named key");
                        input::press(&cdp, &session, &key, 0).map_err(unavailable)?;
                    } else {
                        input::insert_text(&cdp, &session, value).map_err(unavailable)?;
                    }
                    json!(
                        dom::read_value(&cdp, &session, t.backend)
                            .map(|v| v.shown())
                            .unwrap_or_default()
                    )
                }
                Field::Check => {
                    let want = truth(value).unwrap_or(false);
                    let mut now = dom::checked(&cdp, &session, t.backend).map_err(stale)?;
                    if now != want {
                        now = dom::toggle(&cdp, &session, t.backend).map_err(stale)?;
                        changed = true;
                    }
                    if now != want {
                        return Err(coded(
                            ErrorCode::ActionUnsupported,
                            format!(
                                "{what} stays {} (a radio is cleared by checking another of its group); the fields before it were filled",
                                if now { "checked" } else { "unchecked" }
                            ),
                        ));
                    }
                    json!(now)
                }
                Field::Select => match dom::select_options(&cdp, &session, t.backend, values)
                    .map_err(unavailable)?
                {
                    Selection::Selected {
                        selected,
                        changed: c,
                    } => {
                        changed |= c;
                        json!(selected)
                    }
                    Selection::Missing { missing, options } => {
                        return Err(Error::InvalidArgument {
                            message: format!(
                                "{what} has no option {}; its options: {}; the fields before it were filled",
                                quoted(&missing),
                                quoted(&options)
                            ),
                        });
                    }
                    Selection::Single => {
                        return Err(Error::InvalidArgument {
                            message: format!(
                                "{what} takes one option, not {}; the fields before it were filled",
                                values.len()
                            ),
                        });
                    }
                    _ => {
                        return Err(stale(deskpilot_browser::Error::Closed(
                            "the select went".into(),
                        )));
                    }
                },
                Field::Value => {
                    json!(dom::set_value(&cdp, &session, t.backend, value).map_err(stale)?)
                }
                Field::File => {
                    let names = dom::set_files(&cdp, &session, t.backend, files).map_err(stale)?;
                    changed |= !names.is_empty();
                    json!(names)
                }
                Field::Other => Value::Null,
            };
            let after = dom::read_value(&cdp, &session, t.backend);
            changed |= after != before;
            done.push(json!({ "ref": t.r#ref, "field": what, "value": now }));
        }
        let mut o = BrowserOutcome {
            detail: format!("filled {} field(s): {label}", planned.len()),
            page: info,
            changed: Some(changed),
            value: Some(json!(done)),
            snapshot: None,
            mutation: true,
        };
        dialog_after(&cdp, &session, mark, &mut o);
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn reads_truth_as_people_write_it() {
        assert_eq!(super::truth("True"), Some(true));
        assert_eq!(super::truth("off"), Some(false));
        assert_eq!(super::truth("maybe"), None);
    }
}
